"""Fourier analysis of Boolean functions on the hypercube {-1, 1}^n (O'Donnell, *Analysis of Boolean
Functions*, 2014): the Walsh–Hadamard transform, level weights, noise stability and sensitivity, total
influence, exact values of the classical functions, and Monte-Carlo estimators for n too large to tabulate.
General purpose: nothing here knows about neural networks.

Conventions (used by every function):

* A function ``f: {-1,1}^n -> R`` is a *table* of length ``2^n``: entry ``k`` is ``f(x)`` where bit ``i`` of
  ``k`` is 1 iff ``x_i = -1`` (so ``x = 1 - 2 * bits(k)``; :func:`cube` lists the points in this order).
  Tables may carry leading batch axes, ``[..., 2^n]``: every function maps over them.
* The Fourier coefficient of the subset ``S`` (a bitmask, bit ``i`` set iff ``i in S``) is
  ``fhat(S) = E_x[f(x) chi_S(x)]`` with ``chi_S(x) = prod_{i in S} x_i = (-1)^popcount(S & k)``;
  :func:`walsh_hadamard` returns them indexed by ``S``.
* Level-``k`` weight ``W^k[f] = sum_{|S| = k} fhat(S)^2``; Parseval: ``sum_k W^k = E[f^2]`` (= 1 when
  ``f`` is Boolean, i.e. takes values in {-1, 1}).
* Noise: ``y = x * xi`` with each ``xi_i = -1`` independently with probability ``delta`` (the paper's
  ``nu``); ``rho = 1 - 2 delta`` is the correlation of ``x_i`` and ``y_i``.
  ``Stab_rho[f] = E[f(x) f(y)] = sum_k rho^k W^k`` and, for Boolean ``f``,
  ``NS_delta[f] = P[f(x) != f(y)] = 1/2 - 1/2 Stab_{1 - 2 delta}[f]`` (O'Donnell Thm 2.49, Prop. 2.51).
* Computation is float64 (a local ``jax.enable_x64`` scope, :func:`theory.numerics.float64`). For a
  Boolean table the transform is exact: the unnormalised sums are integers below ``2^53`` and the
  division by ``2^n`` is exact.

Bad input is refused: a last axis whose length is not a power of two, non-finite values, and (where the
function must be Boolean) values outside {-1, 1}, each with a ``ValueError`` naming the problem.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from theory.numerics import binomial_se, check_int, check_limit, check_real, float64

MAX_N = 26  # tables built here hold 2^n float64 values: 2^26 is 512 MiB
BRIDGE_CONSTANT = 2.0 / (1.0 - math.exp(-2.0))  # 2.3130..., O'Donnell Prop. 3.3 (sharp: parity on 1/delta bits)

# ---------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------


def as_table(table, *, boolean: bool, name: str = "table") -> tuple[np.ndarray, int]:
    """``table`` as a float64 array ``[..., 2^n]`` and ``n``: the check every function here applies to a
    table (with ``boolean``, values in {-1, 1}).

    Raises:
      TypeError: not numeric (strings, objects, complex).
      ValueError: a 0-d array, a last axis whose length is not a power of two, a non-finite value, or,
        with ``boolean``, a value outside {-1, 1}.
    """
    a = np.asarray(table)
    if a.dtype == np.bool_ or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise TypeError(f"{name} must hold real numbers (ints or floats), got dtype {a.dtype}")
    if a.ndim == 0:
        raise ValueError(f"{name} must be an array [..., 2^n], got a scalar")
    size = a.shape[-1]
    if size < 1 or size & (size - 1):
        raise ValueError(f"{name} length must be a power of two (2^n entries, one per point of "
                         f"{{-1,1}}^n), got {size}")
    a = a.astype(np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got NaN or infinity")
    if boolean and not np.all(np.abs(a) == 1.0):
        bad = a[np.abs(a) != 1.0].ravel()[0]
        raise ValueError(f"{name} must be Boolean (values in {{-1, 1}}), got the value {bad!r}")
    return a, size.bit_length() - 1


def _check_n(n, name: str = "n") -> int:
    n = check_int(n, name, ge=0)
    check_limit(n, MAX_N, "theory.boolean.MAX_N", f"{name} (tables of 2^{name} entries)")
    return n


def _check_boolean_values(values, name: str) -> np.ndarray:
    """Outputs of a function handed to a Monte-Carlo estimator, checked to lie in {-1, 1}."""
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.abs(v) == 1.0):
        raise ValueError(f"{name} must return Boolean values in {{-1, 1}}")
    return v


# ---------------------------------------------------------------------------------------------------
# The transform and what the spectrum gives
# ---------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def subset_sizes(n: int) -> np.ndarray:
    """``|S|`` for every subset bitmask ``S < 2^n`` (int32 ``[2^n]``)."""
    return np.bitwise_count(np.arange(2**n, dtype=np.uint64)).astype(np.int32)


@functools.partial(jax.jit, static_argnums=1)
def fwht(a: jax.Array, n: int) -> jax.Array:
    """The compiled transform behind :func:`walsh_hadamard`, on an already checked float array ``a``
    ``[..., 2^n]`` (:func:`as_table`): returns ``[..., 2^n]``, entry ``S`` = ``fhat(S)``. ``n`` is static.
    One butterfly per coordinate: entries k with bit i = 0 and 1 become (a0 + a1, a0 - a1); then / 2^n."""
    batch = a.shape[:-1]
    for i in range(n):
        a = a.reshape(batch + (2 ** (n - 1 - i), 2, 2**i))
        lo, hi = a[..., 0, :], a[..., 1, :]
        a = jnp.stack([lo + hi, lo - hi], axis=-2)
    return a.reshape(batch + (2**n,)) / 2.0**n


@functools.partial(jax.jit, static_argnums=1)
def level_sums(coeffs: jax.Array, n: int, pop: jax.Array) -> jax.Array:
    """``[..., n + 1]``: the squares of ``coeffs`` ``[..., 2^n]`` summed by level, ``pop`` ``[2^n]`` the
    level of each subset (:func:`subset_sizes`); the compiled step of :func:`level_weights`."""
    batch = coeffs.shape[:-1]
    return jnp.zeros(batch + (n + 1,), coeffs.dtype).at[..., pop].add(coeffs * coeffs)


def walsh_hadamard(table) -> np.ndarray:
    """Fourier–Walsh coefficients ``fhat(S) = E_x[f(x) chi_S(x)]`` of a function on {-1, 1}^n.

    Fast Walsh–Hadamard transform, ``O(n 2^n)``, jit-compiled, float64.

    Args:
      table: ``[..., 2^n]`` real values, entry ``k`` = ``f(x)`` with ``x_i = -1`` iff bit ``i`` of ``k``
        is set (module docstring).
    Returns:
      ``[..., 2^n]`` float64, entry ``S`` = ``fhat(S)`` for the subset bitmask ``S``.
    Raises:
      TypeError: a non-numeric table. ValueError: the length is not a power of two, or a non-finite value.
    Source: O'Donnell, Analysis of Boolean Functions, Thm 1.1 / Prop. 1.8 (the Fourier expansion).
    """
    a, n = as_table(table, boolean=False)
    with float64():
        return np.asarray(fwht(jnp.asarray(a), n))


def _level_weights_of(a: np.ndarray, n: int) -> np.ndarray:
    with float64():
        return np.asarray(level_sums(fwht(jnp.asarray(a), n), n, jnp.asarray(subset_sizes(n))))


def level_weights(table) -> np.ndarray:
    """Fourier weight at each level, ``W^k[f] = sum_{|S| = k} fhat(S)^2`` for ``k = 0..n``.

    Args:
      table: ``[..., 2^n]`` real values (module docstring); Boolean tables have weights summing to 1.
    Returns:
      ``[..., n + 1]`` float64.
    Raises:
      TypeError, ValueError: as :func:`walsh_hadamard`.
    Source: O'Donnell Def. 1.27 (Fourier weight at degree k).
    """
    a, n = as_table(table, boolean=False)
    return _level_weights_of(a, n)


def _stability_factor(n: int, rho: np.ndarray) -> np.ndarray:
    """``rho^k`` for ``k = 0..n``, shape ``rho.shape + (n + 1,)`` (``0^0 = 1``)."""
    k = np.arange(n + 1, dtype=np.float64)
    return np.power(rho[..., None], k)


def _sensitivity_factor(n: int, delta: np.ndarray) -> np.ndarray:
    """``(1 - (1 - 2 delta)^k) / 2`` for ``k = 0..n``, without cancellation at small ``delta``."""
    k = np.arange(n + 1, dtype=np.float64)
    d = delta[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        small = -np.expm1(k * np.log1p(-2.0 * np.minimum(d, 0.5)))
    return 0.5 * np.where(d < 0.5, small, 1.0 - np.power(1.0 - 2.0 * d, k))


def _apply(weights: np.ndarray, factor: np.ndarray, scalar: bool):
    """``sum_k factor[..., k] * weights[..., k]``: batch axes of the table first, then the parameter's."""
    wb = weights.reshape(weights.shape[:-1] + (1,) * (factor.ndim - 1) + weights.shape[-1:])
    out = np.sum(wb * factor, axis=-1)
    return float(out) if scalar else out


def _param(x, name: str, lo: float, hi: float) -> tuple[np.ndarray, bool]:
    arr = np.asarray(x)
    if arr.ndim == 0:
        return np.asarray(check_real(x, name, ge=lo, le=hi)), True
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must be real numbers, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < lo) or np.any(arr > hi):
        raise ValueError(f"{name} must be finite and in [{lo}, {hi}], got {arr}")
    return arr, False


def noise_stability(table, rho):
    """Noise stability ``Stab_rho[f] = E[f(x) f(y)] = sum_k rho^k W^k[f]`` (y rho-correlated with x).

    Args:
      table: ``[..., 2^n]`` real values (module docstring).
      rho: correlation in ``[-1, 1]``, a scalar or an array of any shape.
    Returns:
      A float for a single table and scalar ``rho``; else ``[...table batch, ...rho shape]`` float64.
    Raises:
      TypeError, ValueError: a bad table (as :func:`walsh_hadamard`), ``rho`` outside [-1, 1] or not finite.
    Source: O'Donnell Def. 2.40 and Thm 2.49.
    """
    a, n = as_table(table, boolean=False)
    r, scalar = _param(rho, "rho", -1.0, 1.0)
    return _apply(_level_weights_of(a, n), _stability_factor(n, r), scalar and a.ndim == 1)


def noise_sensitivity(table, delta):
    """Noise sensitivity ``NS_delta[f] = P[f(x) != f(y)]``: ``x`` uniform, each bit of ``y = x * xi``
    flipped independently with probability ``delta``; computed exactly from the spectrum as
    ``NS_delta = sum_k (1 - (1 - 2 delta)^k) / 2 * W^k[f]``.

    Args:
      table: ``[..., 2^n]`` Boolean values (in {-1, 1}).
      delta: flip probability in ``[0, 1]`` (the paper's ``nu``), a scalar or an array of any shape.
    Returns:
      A float for a single table and scalar ``delta``; else ``[...table batch, ...delta shape]`` float64.
    Raises:
      TypeError, ValueError: a bad table (as :func:`walsh_hadamard`), a value outside {-1, 1}, or
        ``delta`` outside [0, 1] or not finite.
    Source: O'Donnell Def. 2.42 and Prop. 2.51; the paper's Eq. for NS_nu (Araya et al., ICLR 2026, §2).
    """
    a, n = as_table(table, boolean=True)
    d, scalar = _param(delta, "delta", 0.0, 1.0)
    return _apply(_level_weights_of(a, n), _sensitivity_factor(n, d), scalar and a.ndim == 1)


def total_influence(table):
    """Total influence ``I[f] = sum_k k W^k[f]`` (for Boolean ``f``: the expected number of pivotal
    coordinates, ``sum_i P[f(x) != f(x^{(i)})]``).

    Args:
      table: ``[..., 2^n]`` real values (module docstring).
    Returns:
      A float for a single table, else ``[...]`` float64.
    Raises:
      TypeError, ValueError: as :func:`walsh_hadamard`.
    Source: O'Donnell Def. 2.27 and Thm 2.38.
    """
    a, n = as_table(table, boolean=False)
    out = _level_weights_of(a, n) @ np.arange(n + 1, dtype=np.float64)
    return float(out) if a.ndim == 1 else out


def tail_weight(weights, k) -> np.ndarray | float:
    """``W^{>=k}[f] = sum_{j >= k} W^j[f]`` from level weights (``k`` real: levels ``j >= ceil(k)``).

    Args:
      weights: ``[..., n + 1]`` level weights (:func:`level_weights`). k: a real number.
    Returns:
      A float for 1-D ``weights``, else ``[...]``.
    Raises:
      ValueError: ``k`` not finite, or ``weights`` 0-d.
    Source: O'Donnell §3.1 (spectral concentration).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 0:
        raise ValueError("weights must be an array [..., n + 1]")
    k = check_real(k, "k")
    j0 = max(0, math.ceil(k))
    out = w[..., j0:].sum(axis=-1)
    return float(out) if w.ndim == 1 else out


# ---------------------------------------------------------------------------------------------------
# Tables of the classical functions, and their exact values
# ---------------------------------------------------------------------------------------------------


def cube(n) -> np.ndarray:
    """The points of {-1, 1}^n in table order: row ``k`` has ``x_i = -1`` iff bit ``i`` of ``k`` is set.

    Returns: ``[2^n, n]`` int8. Raises: TypeError, ValueError: ``n`` not an integer in [0, MAX_N].
    """
    n = _check_n(n)
    k = np.arange(2**n, dtype=np.int64)[:, None]
    return (1 - 2 * ((k >> np.arange(n)) & 1)).astype(np.int8)


def dictator(n, i: int = 0) -> np.ndarray:
    """``f(x) = x_i`` as a table ``[2^n]``. NS_delta = delta, W^1 = 1 (O'Donnell Ex. 2.44)."""
    n = _check_n(n)
    i = check_int(i, "i", ge=0, le=n - 1)
    return cube(n)[:, i].astype(np.float64)


def parity(n, subset=None) -> np.ndarray:
    """``chi_S(x) = prod_{i in S} x_i`` as a table ``[2^n]``; ``subset``: an iterable of coordinates
    (default: all ``n``). NS_delta = 1/2 - 1/2 (1 - 2 delta)^|S| (O'Donnell Ex. 2.44).

    Raises: ValueError: a coordinate outside ``[0, n)``."""
    n = _check_n(n)
    idx = list(range(n)) if subset is None else [check_int(i, "subset element", ge=0, le=n - 1) for i in subset]
    mask = sum(1 << i for i in set(idx))
    k = np.arange(2**n, dtype=np.uint64)
    return (1.0 - 2.0 * (np.bitwise_count(k & np.uint64(mask)) & 1)).astype(np.float64)


def majority(n) -> np.ndarray:
    """``Maj_n(x) = sign(sum_i x_i)`` for odd ``n``, a table ``[2^n]``.

    Raises: ValueError: ``n`` even (ties) or out of range."""
    n = _check_n(n)
    if n % 2 == 0:
        raise ValueError(f"majority needs an odd n (no ties), got {n}")
    return np.where(subset_sizes(n) < n / 2, 1.0, -1.0)


def random_function(key: jax.Array, n) -> np.ndarray:
    """A uniformly random Boolean function: ``[2^n]`` i.i.d. fair +-1 values drawn from ``key``."""
    n = _check_n(n)
    return np.asarray(jax.random.rademacher(key, (2**n,), dtype=jnp.int8)).astype(np.float64)


def random_functions(keys: jax.Array, n) -> np.ndarray:
    """Uniformly random Boolean functions, one per key: ``keys [K]`` -> ``[K, 2^n]`` float64 +-1; row ``k`` is
    :func:`random_function` ``(keys[k], n)``, the same draws, made in one compiled call (480 functions at
    n = 16: 2.5 s one by one). Raises ValueError: ``keys`` not 1-d, or a bad ``n``."""
    n = _check_n(n)
    if jnp.ndim(keys) != 1:
        raise ValueError(f"keys must be a 1-d array of jax.random keys, got shape {jnp.shape(keys)}")
    return np.asarray(_rademacher_rows(keys, 2**n)).astype(np.float64)


@functools.partial(jax.jit, static_argnums=1)
def _rademacher_rows(keys, size):
    return jax.vmap(lambda k: jax.random.rademacher(k, (size,), dtype=jnp.int8))(keys)


def majority_noise_sensitivity(n, delta) -> float:
    """Exact ``NS_delta[Maj_n]`` for odd ``n`` by summing over the number ``a`` of -1 inputs and the
    numbers of flipped -1s and +1s (O(n^3) terms in exact binomials, float64 probabilities).

    Raises: ValueError: ``n`` even or < 1, ``delta`` outside [0, 1].
    Source: the definition (O'Donnell Def. 2.42), independent of any transform.
    """
    n = check_int(n, "n", ge=1)
    if n % 2 == 0:
        raise ValueError(f"majority needs an odd n, got {n}")
    delta = check_real(delta, "delta", ge=0.0, le=1.0)
    a = np.arange(n + 1)
    total = 0.0
    for na in range(n + 1):  # na = number of -1 coordinates of x
        p_a = math.comb(n, na) / 2.0**n
        fx = 1 if na < n / 2 else -1
        j = stats.binom.pmf(a[: na + 1], na, delta)  # -1s flipped to +1
        m = stats.binom.pmf(a[: n - na + 1], n - na, delta)  # +1s flipped to -1
        new = na - a[: na + 1, None] + a[None, : n - na + 1]
        fy = np.where(new < n / 2, 1, -1)
        total += p_a * float(np.sum(np.outer(j, m) * (fy != fx)))
    return total


def majority_noise_sensitivity_limit(delta) -> float:
    """``lim_{n -> inf} NS_delta[Maj_n] = arccos(1 - 2 delta) / pi`` (Sheppard's formula; about
    ``(2/pi) sqrt(delta)`` for small delta, 1.7% below it at delta = 0.1).

    Source: O'Donnell Thm 5.18 / Ex. 2.45 (the exact limit is the arccos; the sqrt is only its
    small-delta form)."""
    delta = check_real(delta, "delta", ge=0.0, le=1.0)
    return math.acos(1.0 - 2.0 * delta) / math.pi


def majority_level_weights(n) -> np.ndarray:
    """Exact level weights of ``Maj_n`` (odd ``n``) from the closed form of its coefficients:
    for odd ``k``, ``fhat(S) = (-1)^((k-1)/2) C((n-1)/2, (k-1)/2) / C(n-1, k-1) * C(n-1, (n-1)/2) / 2^(n-1)``
    for ``|S| = k``, and 0 for even ``k``; computed in exact rationals.

    Returns: ``[n + 1]`` float64. Raises: ValueError: ``n`` even or < 1.
    Source: O'Donnell Thm 5.19.
    """
    n = check_int(n, "n", ge=1)
    if n % 2 == 0:
        raise ValueError(f"majority needs an odd n, got {n}")
    m = (n - 1) // 2
    base = Fraction(math.comb(n - 1, m), 2 ** (n - 1))
    out = []
    for k in range(n + 1):
        if k % 2 == 0:
            out.append(0.0)
            continue
        c = base * Fraction(math.comb(m, (k - 1) // 2), math.comb(n - 1, k - 1))
        out.append(float(math.comb(n, k) * c * c))
    return np.asarray(out)


def random_function_level_weights(n) -> np.ndarray:
    """``E W^k = C(n, k) / 2^n`` for a uniformly random Boolean function (each ``fhat(S)^2`` has mean
    ``2^-n``). Returns ``[n + 1]`` float64. Source: O'Donnell Ex. 1.9 / §5.1."""
    n = check_int(n, "n", ge=0)
    return np.asarray([float(Fraction(math.comb(n, k), 2**n)) for k in range(n + 1)])


def random_function_noise_sensitivity(n, delta) -> float:
    """``E NS_delta = 1/2 - 1/2 (1 - delta)^n`` for a uniformly random Boolean function (x and y differ
    with probability ``1 - (1 - delta)^n``, and then agree with probability 1/2)."""
    n = check_int(n, "n", ge=0)
    delta = check_real(delta, "delta", ge=0.0, le=1.0)
    return 0.5 - 0.5 * (1.0 - delta) ** n


# ---------------------------------------------------------------------------------------------------
# Expected level weights of a random function from its distance kernel (Krawtchouk inversion)
# ---------------------------------------------------------------------------------------------------


def krawtchouk_table(n) -> list[list[int]]:
    """Exact Krawtchouk values ``K[k][d] = sum_j (-1)^j C(d, j) C(n - d, k - j)`` for ``k, d = 0..n``
    (the coefficient of ``z^k`` in ``(1 - z)^d (1 + z)^(n - d)``), as Python ints.

    Uses ``K_k(d + 1) = K_k(d) - K_{k-1}(d) - K_{k-1}(d + 1)``, from ``(1 + z) P_{d+1} = (1 - z) P_d``.
    Raises: ValueError: ``n < 0``. Source: MacWilliams & Sloane, ch. 5 §7.
    """
    n = check_int(n, "n", ge=0)
    cols = [[math.comb(n, k) for k in range(n + 1)]]  # d = 0: (1 + z)^n
    for d in range(n):
        prev, cur = cols[-1], [0] * (n + 1)
        for k in range(n + 1):
            cur[k] = prev[k] - (prev[k - 1] if k else 0) - (cur[k - 1] if k else 0)
        cols.append(cur)
    return [[cols[d][k] for d in range(n + 1)] for k in range(n + 1)]


def level_weights_from_kernel(kernel, n) -> list:
    """Expected level weights ``E W^k[f]`` of a random function whose correlation
    ``G(d) = E[f(x) f(y)]`` depends only on the Hamming distance ``d = d_H(x, y)``:
    ``E W^k = 2^-n sum_d C(n, d) K_k(d) G(d)``.

    The Krawtchouk integers are exact and the sum has alternating signs whose terms reach about
    ``C(n, k)`` times ``max |G|``: in float64 it loses about ``n`` bits (useless beyond n ~ 40). So the sum
    is carried out in the arithmetic of ``kernel``'s entries: ``Fraction`` or ints (exact), python-flint
    ``arb`` (ball arithmetic at the caller's precision), or floats (each converted to its exact
    ``Fraction``: exact for the floats given, but their own rounding is amplified as above).

    Args:
      kernel: ``n + 1`` values ``G(0), ..., G(n)``.
      n: the dimension.
    Returns:
      A list of ``n + 1`` values in the arithmetic used (``Fraction`` or ``arb``).
    Raises:
      ValueError: ``kernel`` does not have ``n + 1`` entries, or a float entry is not finite.
    Source: Delsarte (1973); the Krawtchouk inversion used for the expected level weights of a random
    sLIF neuron (derived here for Araya et al., Corollary 1).
    """
    n = check_int(n, "n", ge=0)
    g = list(kernel)
    if len(g) != n + 1:
        raise ValueError(f"kernel must have n + 1 = {n + 1} entries, got {len(g)}")
    vals = []
    for v in g:
        if isinstance(v, (float, np.floating)):
            if not math.isfinite(v):
                raise ValueError(f"kernel values must be finite, got {v!r}")
            vals.append(Fraction(float(v)))
        elif isinstance(v, (int, np.integer)):
            vals.append(Fraction(int(v)))
        else:
            vals.append(v)
    kt = krawtchouk_table(n)
    binom = [math.comb(n, d) for d in range(n + 1)]
    out = []
    for k in range(n + 1):
        acc = 0
        for d in range(n + 1):
            c = binom[d] * kt[k][d]
            if c:
                acc = acc + vals[d] * c
        out.append(acc / 2**n)
    return out


# ---------------------------------------------------------------------------------------------------
# Monte-Carlo estimators (n too large to tabulate)
# ---------------------------------------------------------------------------------------------------


def _chunks(n_samples: int, chunk: int):
    done = 0
    while done < n_samples:
        m = min(chunk, n_samples - done)
        yield done, m
        done += m


def _pairs(key, n: int, m: int, flip_prob: float) -> tuple[np.ndarray, np.ndarray]:
    kx, kf = jax.random.split(key)
    x = np.asarray(jax.random.rademacher(kx, (m, n), dtype=jnp.int8))
    flips = np.asarray(jax.random.bernoulli(kf, flip_prob, (m, n)))
    return x, np.where(flips, -x, x).astype(np.int8)


def noise_sensitivity_mc(f: Callable[[np.ndarray], np.ndarray], n, delta, key: jax.Array, n_samples,
                         chunk: int = 4096) -> tuple[float, float]:
    """Monte-Carlo ``NS_delta[f] = P[f(x) != f(y)]`` with its binomial standard error.

    Args:
      f: maps ``[m, n]`` points (int8, +-1) to ``[m]`` outputs of any alphabet (a class label works:
        the estimate is the disagreement probability).
      n: dimension; delta: flip probability in [0, 1]; key: a ``jax.random`` key; n_samples: pairs (>= 1).
      chunk: pairs per call of ``f``.
    Returns:
      ``(estimate, standard error)``; the standard error is ``sqrt(p (1 - p) / n_samples)``.
    Raises:
      ValueError: bad ``n``, ``delta`` or ``n_samples``, or ``f`` returns the wrong shape.
    Source: O'Donnell Def. 2.42.
    """
    n = check_int(n, "n", ge=1)
    delta = check_real(delta, "delta", ge=0.0, le=1.0)
    n_samples = check_int(n_samples, "n_samples", ge=1)
    hits = 0
    for i, (_, m) in enumerate(_chunks(n_samples, chunk)):
        x, y = _pairs(jax.random.fold_in(key, i), n, m, delta)
        fx, fy = np.asarray(f(x)), np.asarray(f(y))
        if fx.shape != (m,) or fy.shape != (m,):
            raise ValueError(f"f must return one value per point, shape ({m},), got {fx.shape}")
        hits += int(np.sum(fx != fy))
    p = hits / n_samples
    return p, binomial_se(p, n_samples)


def noise_stability_mc(f: Callable[[np.ndarray], np.ndarray], n, rho, key: jax.Array, n_samples,
                       chunk: int = 4096) -> tuple[float, float]:
    """Monte-Carlo ``Stab_rho[f] = E[f(x) f(y)]`` (each bit of ``y`` equal to ``x``'s with probability
    ``(1 + rho) / 2``) and its standard error (sample standard deviation / sqrt(n_samples)).

    ``f`` maps ``[m, n]`` +-1 points to ``[m]`` real values. Raises ValueError: bad arguments or shapes.
    Source: O'Donnell Def. 2.40."""
    n = check_int(n, "n", ge=1)
    rho = check_real(rho, "rho", ge=-1.0, le=1.0)
    n_samples = check_int(n_samples, "n_samples", ge=1)
    count, mean, m2 = 0, 0.0, 0.0
    for i, (_, m) in enumerate(_chunks(n_samples, chunk)):
        x, y = _pairs(jax.random.fold_in(key, i), n, m, (1.0 - rho) / 2.0)
        prod = np.asarray(f(x), np.float64) * np.asarray(f(y), np.float64)
        if prod.shape != (m,):
            raise ValueError(f"f must return one value per point, shape ({m},), got {prod.shape}")
        # chunks merged by Chan, Golub & LeVeque's pairwise update of (count, mean, sum of squared
        # deviations): E[prod^2] - mean^2 cancels when the spread is small beside the mean
        c_mean = float(prod.mean())
        c_m2 = float(np.sum((prod - c_mean) ** 2))
        total = count + m
        d = c_mean - mean
        mean += d * m / total
        m2 += c_m2 + d * d * count * m / total
        count = total
    return mean, math.sqrt(m2 / max(n_samples - 1, 1) / n_samples)


def total_influence_mc(f: Callable[[np.ndarray], np.ndarray], n, key: jax.Array, n_samples,
                       chunk: int = 4096) -> tuple[float, float]:
    """Monte-Carlo total influence of a Boolean ``f``: ``I[f] = n P[f(x) != f(x^{(i)})]`` for ``x``
    uniform and ``i`` a uniform coordinate, with its standard error ``n sqrt(p (1 - p) / n_samples)``.

    Raises: ValueError: bad arguments, wrong shapes, or outputs outside {-1, 1}.
    Source: O'Donnell Def. 2.27."""
    n = check_int(n, "n", ge=1)
    n_samples = check_int(n_samples, "n_samples", ge=1)
    hits = 0
    for i, (_, m) in enumerate(_chunks(n_samples, chunk)):
        kx, ki = jax.random.split(jax.random.fold_in(key, i))
        x = np.asarray(jax.random.rademacher(kx, (m, n), dtype=jnp.int8))
        coord = np.asarray(jax.random.randint(ki, (m,), 0, n))
        y = x.copy()
        y[np.arange(m), coord] *= -1
        fx = _check_boolean_values(f(x), "f")
        fy = _check_boolean_values(f(y), "f")
        if fx.shape != (m,) or fy.shape != (m,):
            raise ValueError(f"f must return one value per point, shape ({m},), got {fx.shape}")
        hits += int(np.sum(fx != fy))
    p = hits / n_samples
    return n * p, n * binomial_se(p, n_samples)
