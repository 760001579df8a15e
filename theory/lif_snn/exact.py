"""Exact single-neuron results (float64, scipy, python-flint): flip probabilities at t = 1 and over T steps for a static sIF / IF neuron (beta = 1), expected level weights by Krawtchouk inversion, the exponents of the bounds."""

from __future__ import annotations

import functools
import math

import flint
import jax.numpy as jnp
import numpy as np
from scipy import special, stats

from theory import boolean
from theory.lif_snn.models import _check_kind, Kind, MAX_EXACT_N, PMF_FLOOR, static_neuron_spikes
from theory.numerics import check_int, check_real, float64

# ---------------------------------------------------------------------------------------------------
# Exact single-neuron flip probabilities (t = 1)
# ---------------------------------------------------------------------------------------------------


def _owen_t(h, a):
    """Owen's T(h, a) with ``a = inf`` allowed: ``T(h, inf) = Q(|h|) / 2``."""
    h, a = np.broadcast_arrays(np.asarray(h, np.float64), np.asarray(a, np.float64))
    out = np.where(np.isinf(a), 0.5 * stats.norm.sf(np.abs(h)), 0.0)
    fin = ~np.isinf(a)
    out[fin] = special.owens_t(h[fin], a[fin])
    return out


def flip_probability_at_distance(n, d, theta):
    """Exact ``P_w[s_1(x) != s_1(y)]`` for one sLIF neuron (``w ~ N(0, I_n / n)``) and fixed inputs at
    Hamming distance ``d``: ``2[Q(theta) - P(X > theta, Y > theta; rho)] = 4 T(theta, sqrt(d/(n - d)))``,
    ``rho = 1 - 2d/n`` (``arccos(rho)/pi`` at ``theta = 0``).

    Args:
      n: input dimension (>= 1). d: an int or an integer array in ``[0, n]``. theta: threshold (real).
    Returns:
      A float for scalar ``d``, else float64 ``[*d.shape]``.
    Raises:
      TypeError, ValueError: ``n`` or ``d`` not integers in range, ``theta`` not finite.
    Source: Araya et al., Theorem 1's base case (proof for t = 1); Owen (1956) for Phi_2(h, h; rho).
    """
    n = check_int(n, "n", ge=1)
    theta = check_real(theta, "theta")
    d_arr = np.asarray(d)
    if d_arr.ndim == 0:
        d_arr = np.asarray(check_int(d, "d", ge=0, le=n))
    elif not np.issubdtype(d_arr.dtype, np.integer) or np.any(d_arr < 0) or np.any(d_arr > n):
        raise ValueError(f"d must hold integers in [0, {n}]")
    d64 = d_arr.astype(np.float64)
    with np.errstate(divide="ignore"):
        a = np.sqrt(d64 / (n - d64))
    out = 4.0 * _owen_t(theta, a)
    return float(out) if d_arr.ndim == 0 else out


def _binomial_support(n: int, nu: float) -> tuple[np.ndarray, np.ndarray]:
    """Outcomes ``d`` of ``Bin(n, nu)`` with probability above :data:`PMF_FLOOR`, and their probabilities."""
    d = np.arange(n + 1)
    pmf = stats.binom.pmf(d, n, nu)
    keep = pmf > PMF_FLOOR
    return d[keep], pmf[keep]


def single_neuron_flip_probability(n, theta, nu) -> float:
    """Exact t = 1 flip probability of one random sLIF neuron under the paper's noise model: ``x``
    uniform on {-1,1}^n (it does not matter: ``w.x ~ N(0, 1)`` for every ``x``), each bit flipped
    independently with probability ``nu``, ``w ~ N(0, I_n / n)``. It is the ``Bin(n, nu)`` mixture of
    :func:`flip_probability_at_distance` (outcomes below probability 1e-20 left out); the plug-in
    ``rho = 1 - 2 nu`` (:func:`plugin_flip_probability`) is only its large-n limit (+1.1% at n = 100,
    nu = 0.1).

    Args:
      n: input dimension (int >= 1). theta: threshold (real). nu: flip probability in [0, 1].
    Returns:
      The probability, a float.
    Raises:
      TypeError, ValueError: ``n`` not an integer >= 1, ``theta`` not finite, ``nu`` outside [0, 1].
    Source: Araya et al., Theorem 1 (t = 1, static input); the exact mixture is derived here
    (correlation ``1 - 2 d / n`` at distance ``d``).
    """
    n = check_int(n, "n", ge=1)
    theta = check_real(theta, "theta")
    nu = check_real(nu, "nu", ge=0.0, le=1.0)
    d, pmf = _binomial_support(n, nu)
    return float(np.sum(pmf * flip_probability_at_distance(n, d, theta)))


def plugin_flip_probability(theta, nu) -> float:
    """The large-n limit of :func:`single_neuron_flip_probability`: ``rho = 1 - 2 nu`` plugged into the
    t = 1 formula, ``4 T(theta, sqrt(nu / (1 - nu)))``; about ``(2/pi) exp(-theta^2/2) sqrt(nu)`` for
    small ``nu``. Raises ValueError: ``nu`` outside [0, 1]. Source: derived here (Theorem 1's t = 1 step)."""
    theta = check_real(theta, "theta")
    nu = check_real(nu, "nu", ge=0.0, le=1.0)
    a = math.inf if nu == 1.0 else math.sqrt(nu / (1.0 - nu))
    return float(4.0 * _owen_t(theta, a))


def if_plugin_flip_probability(theta, nu) -> float:
    """Large-n limit of the t = 1 flip probability of one IF/LIF neuron reading a uniform {0, 1} input
    (``x_i = +1 -> 1``) with each bit flipped with probability ``nu``: ``w.x`` and ``w.y`` tend to normals
    of variance 1/2 with correlation ``1 - nu`` (``|x| ~ n/2``, ``|x and y| ~ n (1 - nu)/2``), so
    ``P = 4 T(theta sqrt2, sqrt(nu / (2 - nu)))``. Raises ValueError: ``nu`` outside [0, 1].
    Source: ours (the paper's IF baseline has no formula); the {0, 1} analogue of the sLIF plug-in."""
    theta = check_real(theta, "theta")
    nu = check_real(nu, "nu", ge=0.0, le=1.0)
    return float(4.0 * _owen_t(theta * math.sqrt(2.0), math.sqrt(nu / (2.0 - nu))))


# ---------------------------------------------------------------------------------------------------
# Exact expected level weights of one random neuron (Krawtchouk inversion in ball arithmetic)
# ---------------------------------------------------------------------------------------------------


def _owen_t_arb(h: float, num: int, den: int):
    """Owen's ``T(h, sqrt(num/den))`` as a python-flint ``arb`` at the current precision (``den = 0``:
    ``a = inf``). ``h`` is a float (converted exactly)."""
    harb = flint.arb(h)
    if den == 0:
        return (flint.arb(abs(h)) / flint.arb(2).sqrt()).erfc() / 4
    a = (flint.arb(num) / flint.arb(den)).sqrt()
    if h == 0.0:
        return a.atan() / (2 * flint.arb.pi())
    h2 = harb * harb

    def f(x, _analytic):  # meromorphic (poles at +-i), so the analytic flag needs no handling
        one_x2 = 1 + x * x
        return (-(h2 * one_x2) / 2).exp() / one_x2

    return flint.acb.integral(f, 0, a).real / (2 * flint.arb.pi())


def distance_kernel(n, theta, prec: int | None = None) -> list:
    """``G(d) = E_w[f(x) f(y)] = 1 - 8 T(theta, sqrt(d/(n - d)))`` for one random sLIF neuron at t = 1
    and inputs at Hamming distance ``d = 0..n``, as python-flint ``arb`` balls at ``prec`` bits
    (default ``2n + 64``). Source: derived here, Owen's T function (Owen 1956)."""
    n = check_int(n, "n", ge=1)
    theta = check_real(theta, "theta")
    prec = 2 * n + 64 if prec is None else check_int(prec, "prec", ge=53)
    with flint.ctx.workprec(prec):
        return [1 - 8 * _owen_t_arb(theta, d, n - d) for d in range(n + 1)]


def expected_level_weights(n, theta) -> np.ndarray:
    """Exact expected level weights ``E_w W^k[f_w]``, ``k = 0..n``, of one random sLIF neuron at t = 1,
    ``f_w(x) = sign(w.x - theta)``, ``w ~ N(0, I_n / n)``.

    By symmetry ``E_w fhat(S)^2`` depends on ``|S|`` only, and ``E W^k = 2^-n sum_d C(n, d) K_k(d) G(d)``
    with the distance kernel ``G`` (:func:`distance_kernel`) and Krawtchouk polynomials ``K_k``
    (:func:`theory.boolean.level_weights_from_kernel`). The sum cancels about ``n`` bits, so it runs in
    python-flint ball arithmetic at ``2n + 64`` bits (float64 is wrong beyond n ~ 40); every returned
    value is certified to 1e-15 absolute.

    Args:
      n: input dimension, an int in [1, MAX_EXACT_N]. theta: threshold (real).
    Returns:
      ``[n + 1]`` float64, summing to 1 (Parseval); only odd levels are non-zero at ``theta = 0`` (a ball
      that contains 0 is returned as exactly 0).
    Raises:
      TypeError, ValueError: ``n`` not an integer in range, ``theta`` not finite.
      ArithmeticError: a ball wider than 1e-15 (cannot happen at the precision used; never silent).
    Source: derived here by Krawtchouk inversion (the paper's spectral-simplicity setting,
    Corollary 1, for L = 1, T = 1).
    """
    n = check_int(n, "n", ge=1, le=MAX_EXACT_N)
    theta = check_real(theta, "theta")
    prec = 2 * n + 64
    with flint.ctx.workprec(prec):
        weights = boolean.level_weights_from_kernel(distance_kernel(n, theta, prec), n)
        # A ball containing 0 is an exact zero (the even levels at theta = 0) to within its radius.
        out = np.array([0.0 if abs(float(w.mid())) <= float(w.rad()) else float(w.mid()) for w in weights])
        worst = max(float(w.rad()) for w in weights)
    if not worst < 1e-15:
        raise ArithmeticError(f"expected_level_weights: ball radius {worst:.2e} at n = {n}")
    return out


# ---------------------------------------------------------------------------------------------------
# Exact multi-step flip probabilities of a static sIF / IF neuron (beta = 1)
# ---------------------------------------------------------------------------------------------------


def spike_set(theta, t, kind: Kind = "slif") -> tuple[np.ndarray, np.ndarray]:
    """The set of constant currents ``X`` at which a ``beta = 1`` neuron spikes at step ``t``, as a
    step function ``1[spike_t(X)] = sum_i c_i 1[X > b_i]``.

    For ``beta = 1`` the potential is ``u_t = t X - theta N_{t-1}`` (``N``: spikes so far), so the spike at
    ``t`` is the event ``X > theta (N_{t-1} + 1) / t`` and, by induction, ``spike_t`` is constant between
    consecutive points ``theta m / j`` (``1 <= j <= t``). The jumps are read off the model itself
    (:func:`static_neuron_spikes`, float64) at the midpoints.

    Args:
      theta: threshold > 0. t: step (>= 1). kind: ``"slif"`` or ``"lif"`` (identical spike times).
    Returns:
      ``(b [m], c [m])``: increasing breakpoints and jumps in {-1, +1}.
    Raises:
      TypeError, ValueError: ``theta <= 0``, ``t < 1`` or a bad kind.
    Source: derived here (``N_t = min(t, floor(t X / theta))`` for ``X > 0``; switch points ``theta k / t``).
    """
    theta = check_real(theta, "theta", gt=0.0)
    t = check_int(t, "t", ge=1)
    b, c = _spike_set(theta, t, _check_kind(kind))
    return b.copy(), c.copy()


@functools.lru_cache(maxsize=256)
def _spike_set(theta: float, t: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    cand = np.unique(np.array([theta * m / j for j in range(1, t + 1) for m in range(j + 2)]))
    probe = np.concatenate([[cand[0] - 1.0], (cand[:-1] + cand[1:]) / 2, [cand[-1] + 1.0]])
    with float64():
        fired = np.asarray(static_neuron_spikes(jnp.asarray(probe), theta, 1.0, t, kind))[t - 1]
    fired = (fired > 0).astype(np.int64) if kind == "slif" else fired.astype(np.int64)
    jumps = np.diff(fired)
    keep = jumps != 0
    if fired[0] != 0:
        raise AssertionError("a beta = 1 neuron with theta > 0 cannot fire at a negative current")
    return cand[keep], jumps[keep].astype(np.float64)


def _upper_orthant(h: np.ndarray, k: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P(X > h, Y > k)`` for standard normals with correlation ``rho``, for ``h, k > 0`` (broadcast),
    ``-1 <= rho <= 1``; Owen's formula with both T terms (hk > 0, so no half-correction)."""
    r = np.sqrt(np.maximum(1.0 - rho * rho, 0.0))
    q = 0.5 * (stats.norm.sf(h) + stats.norm.sf(k))
    with np.errstate(divide="ignore", invalid="ignore"):
        a1, a2 = (k - rho * h) / (h * r), (h - rho * k) / (k * r)
        general = q - _owen_t(h, a1) - _owen_t(k, a2)
    # rho = 1: Y = X, so P = Q(max(h, k)); rho = -1: Y = -X, and X > h > 0 excludes -X > k > 0.
    degenerate = np.where(rho > 0, stats.norm.sf(np.maximum(h, k)), 0.0)
    return np.where(r == 0, degenerate, general)


def _flip_given_set(b: np.ndarray, c: np.ndarray, rho: np.ndarray) -> np.ndarray:
    """``P[1_A(X) != 1_A(Y)] = 2 (P(X in A) - P(X in A, Y in A))`` for ``1_A = sum_i c_i 1[. > b_i]``,
    vectorised over ``rho [D]``."""
    p_a = float(np.sum(c * stats.norm.sf(b)))
    both = np.einsum("i,j,dij->d", c, c, _upper_orthant(b[None, :, None], b[None, None, :],
                                                         rho[:, None, None]))
    return 2.0 * (p_a - both)


def static_flip_probabilities(n, theta, nu, T, kind: Kind = "slif") -> np.ndarray:
    """Exact ``P[s_t(x) != s_t(y)]``, ``t = 1..T``, for one random ``beta = 1`` neuron (sIF, or IF on
    +-1 input, whose spike times are the same) with static input, ``w ~ N(0, I_n/n)``, each input bit
    flipped with probability ``nu``: the ``Bin(n, nu)`` mixture over the distance ``d`` of
    ``P[1_{A_t}(X) != 1_{A_t}(Y)]``, ``A_t`` from :func:`spike_set`, ``rho = 1 - 2d/n``.

    Args:
      n: input dimension (>= 1). theta: threshold (>= 0; at 0 every step spikes iff X > 0). nu: flip
        probability in [0, 1]. T: steps (>= 1). kind: ``"slif"`` | ``"lif"``.
    Returns:
      ``[T]`` float64; entry ``t - 1`` is the flip probability at step ``t`` (entry 0 equals
      :func:`single_neuron_flip_probability`).
    Raises:
      TypeError, ValueError: an argument out of range.
    Source: Araya et al., Theorem 1 (beta = 1, static input): the quantity it bounds, computed exactly.
    """
    n = check_int(n, "n", ge=1)
    theta = check_real(theta, "theta", ge=0.0)
    nu = check_real(nu, "nu", ge=0.0, le=1.0)
    T = check_int(T, "T", ge=1)
    _check_kind(kind)
    d, pmf = _binomial_support(n, nu)
    if theta == 0.0:
        return np.full(T, float(np.sum(pmf * flip_probability_at_distance(n, d, 0.0))))
    rho = 1.0 - 2.0 * d / n
    out = np.empty(T)
    for t in range(1, T + 1):
        b, c = spike_set(theta, t, kind)
        out[t - 1] = float(np.sum(pmf * _flip_given_set(b, c, rho)))
    return out


def static_plugin_flip_probabilities(theta, nu, T, kind: Kind = "slif") -> np.ndarray:
    """The large-n limit of :func:`static_flip_probabilities` at a fixed per-bit rate ``nu``: the correlation
    ``rho = 1 - 2 nu`` plugged in for the ``Bin(n, nu)`` mixture (the mixture's relative deviation from it is
    O(1/(n nu)), so at ``nu = 1/sqrt(n)`` it is the exact curve's large-n limit). ``t = 1`` equals
    :func:`plugin_flip_probability`.

    Args:
      theta: threshold > 0. nu: flip probability in [0, 1]. T: steps (>= 1). kind: ``"slif"`` | ``"lif"``.
    Returns:
      ``[T]`` float64: ``P[1_{A_t}(X) != 1_{A_t}(Y)]`` for standard normals with correlation ``1 - 2 nu``.
    Raises:
      TypeError, ValueError: an argument out of range.
    Source: Araya et al., Theorem 1 (beta = 1, static input); ``rho = 1 - 2 nu`` derived here.
    """
    theta = check_real(theta, "theta", gt=0.0)
    nu = check_real(nu, "nu", ge=0.0, le=1.0)
    T = check_int(T, "T", ge=1)
    _check_kind(kind)
    rho = np.array([1.0 - 2.0 * nu])
    return np.asarray([float(_flip_given_set(*spike_set(theta, t, kind), rho)[0]) for t in range(1, T + 1)])


def static_firing_rates(theta, T, kind: Kind = "slif") -> np.ndarray:
    """``P[neuron spikes at step t]``, ``t = 1..T``, for ``beta = 1``, static input, ``X ~ N(0, 1)``:
    ``sum_i c_i Q(b_i)`` (``Q(theta) = 0.309`` at ``t = 1``, ``theta = 0.5``). Returns ``[T]``.
    Source: derived here from :func:`spike_set`."""
    T = check_int(T, "T", ge=1)
    out = []
    for t in range(1, T + 1):
        b, c = spike_set(theta, t, kind)
        out.append(float(np.sum(c * stats.norm.sf(b))))
    return np.asarray(out)


def small_noise_constants(theta, T, kind: Kind = "slif") -> np.ndarray:
    """``lim_{nu -> 0} P_t / sqrt(nu)`` for the plug-in (large-n) static ``beta = 1`` neuron, ``t = 1..T``:
    a flip needs a breakpoint between ``X`` and ``Y``, ``E|X - Y| = 2 sqrt(nu) sqrt(2/pi)``, so the limit is
    ``2 sqrt(2/pi) sum_i phi(b_i)`` over the breakpoints of :func:`spike_set` (0.562 at t = 1, theta = 0.5,
    ``= (2/pi) exp(-theta^2/2)``). Returns ``[T]``. Source: derived here (0.56, 0.62, 1.85, ..., 10.4)."""
    T = check_int(T, "T", ge=1)
    return np.asarray([2.0 * math.sqrt(2.0 / math.pi) * float(np.sum(stats.norm.pdf(spike_set(theta, t, kind)[0])))
                       for t in range(1, T + 1)])


def theorem2_width_exponent(L) -> float:
    """The exponent of ``n`` in Theorem 2's bound at ``nu = c / sqrt(n)``: the bound is
    ``~ nu^(1 / 2^(2L+1))`` up to polylog factors, i.e. ``n^(-1 / 2^(2L+2))`` (-1/16, -1/64, -1/256 for
    L = 1, 2, 3). Raises ValueError: ``L < 1``. Source: Araya et al., Theorem 2."""
    L = check_int(L, "L", ge=1)
    return -1.0 / 2 ** (2 * L + 2)


def theorem1_width_exponent(widths, static: bool) -> float:
    """The power of ``n`` of Theorem 1's bound ``C (1 + theta) t^2 sqrt(nu) log n`` at ``nu = c / sqrt(n)``,
    fitted over ``widths`` as a least-squares slope of its logarithm on ``log n`` (the constants drop out):
    ``-1/4`` exactly for static input (the log n factor dropped), and the slope of ``n^(-1/4) ln n`` over
    ``widths`` for input sequences (``-1/4 + 1/ln n`` locally; about -0.10 over n = 10^2..10^4).

    Args: widths: ``[W]`` input dimensions, at least two distinct values, each ``>= 2``; static: bool.
    Raises: ValueError: fewer than two distinct widths or a width < 2.
    Source: Araya et al., Theorem 1 (input sequences; the log n factor dropped for static input)."""
    n = np.asarray(widths, np.float64)
    if n.ndim != 1 or np.unique(n).size < 2 or np.any(n < 2):
        raise ValueError(f"widths must hold at least two distinct values >= 2, got {widths}")
    ln = np.log(n)
    y = -0.25 * ln + (0.0 if static else np.log(ln))
    return float(np.polyfit(ln, y, 1)[0])
