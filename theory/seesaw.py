"""Seesaw: batch-size ramps against learning-rate decay (Meterez et al., ICLR 2026, arXiv 2510.14717).

Setting (the paper's, from its companion analysis arXiv 2506.15535): x ~ N(0, H), H = diag(eigs) in its
eigenbasis, y = <w*, x> + eps with eps ~ N(0, noise_var); online mini-batch SGD
``w <- w - lr * (1/B) sum_i x_i (x_i^T w - y_i)`` with fresh samples at every step. The excess risk is
``R = 0.5 * sum_j eigs_j * m_j`` with ``m_j = E[(w - w*)_j^2]``.

The reference is the exact second-moment recursion, closed on the diagonal in the eigenbasis (Gaussian
fourth moment ``E[x x^T A x x^T] = 2 H A H + tr(HA) H``)::

    m'_j = [1 - 2 lr l_j + lr^2 l_j^2 (1 + 1/B)] m_j + (lr^2 / B) l_j (sum_i l_i m_i + noise_var)

exact for real-valued B. Normalized SGD (the paper's proxy for Adam, Corollary 1) uses the step
``lr_t / sqrt(E||g_t||^2)`` with ``E||g||^2 = (1 + 1/B) sum l^2 m + (tr H / B)(sum l m + noise_var)``,
the expectation over the batch and the iterate given the current second moments, so the scale is
deterministic and the recursion stays exact. Monte Carlo runs of NSGD use the same deterministic scale.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

from theory import numerics
from theory.numerics import check_int, check_limit, check_real

# Work limits: every loop of this module is bounded by one of these, checked before it starts.
MAX_MILESTONES = 10**6  # batch switches of a Seesaw schedule (gamma -> 1 needs log(1/f) / log(gamma))
MAX_STEPS = 10**8  # steps of a per-step schedule array (two float64 arrays of this length: 1.6 GB)
MAX_PHASES = 10**5  # phases of a phase schedule


# ---------------------------------------------------------------------------------------------------
# Exact expected-risk recursion
# ---------------------------------------------------------------------------------------------------


def check_schedule(eigs, m0, lrs, batch_sizes):
    """The checked inputs of :func:`expected_risk` as float64: ``eigs`` ``[d]`` (finite, > 0), ``m0`` ``[d]``
    (a scalar broadcast; finite, >= 0), ``lrs`` and ``batch_sizes`` ``[steps]`` (finite; lrs >= 0, batch
    sizes > 0). Raises ValueError naming the first input that fails."""
    eigs, m0 = np.asarray(eigs, np.float64), np.asarray(m0, np.float64)
    lrs, bs = np.asarray(lrs, np.float64), np.asarray(batch_sizes, np.float64)
    if eigs.ndim != 1 or eigs.size == 0 or not np.all(np.isfinite(eigs) & (eigs > 0)):
        raise ValueError("eigs must be a non-empty 1-D array of finite positive eigenvalues")
    if m0.shape not in ((), eigs.shape) or not np.all(np.isfinite(m0) & (m0 >= 0)):
        raise ValueError(f"m0 must be a finite non-negative scalar or shaped like eigs {eigs.shape}")
    if lrs.ndim != 1 or lrs.shape != bs.shape:
        raise ValueError(f"lrs and batch_sizes must be 1-D of equal length, got {lrs.shape}, {bs.shape}")
    if not np.all(np.isfinite(bs) & (bs > 0)):
        raise ValueError("batch sizes must be finite and > 0")
    if not np.all(np.isfinite(lrs) & (lrs >= 0)):
        raise ValueError("learning rates must be finite and >= 0")
    return eigs, np.broadcast_to(m0, eigs.shape).copy(), lrs, bs


def _eigs(eigs) -> np.ndarray:
    eigs = np.asarray(eigs, np.float64)
    if eigs.ndim != 1 or eigs.size == 0 or not np.all(np.isfinite(eigs) & (eigs > 0)):
        raise ValueError("eigs must be a non-empty 1-D array of finite positive eigenvalues")
    return eigs


def grad_second_moment(eigs, m, noise_var, batch_size):
    """``E||g||^2`` of a mini-batch gradient given second moments ``m`` (shape ``[d]``).

    Mean part ``(1 + 1/B) sum l^2 m`` plus variance part ``(tr H / B)(sum l m + noise_var)``.
    JAX-traceable (it runs inside the recursion's scan), so it checks nothing: callers validate.
    Source: the Gaussian fourth moment of arXiv 2506.15535 (Seesaw Corollary 1's NSGD scale).
    """
    return ((1.0 + 1.0 / batch_size) * jnp.sum(eigs**2 * m)
            + jnp.sum(eigs) / batch_size * (jnp.sum(eigs * m) + noise_var))


def risk_recursion(eigs, m0, noise_var, lrs, bs, normalized):
    """The exact second-moment recursion of :func:`expected_risk` on checked inputs (:func:`check_schedule`):
    returns risks ``[steps + 1]`` and the step sizes taken ``[steps]``. JAX-traceable, not compiled here
    (``expected_risk`` compiles it; ``normalized`` must then be static)."""
    def step(m, lr_b):
        lr, b = lr_b
        if normalized:  # a zero gradient (m = 0, no noise) takes no step
            g2 = grad_second_moment(eigs, m, noise_var, b)
            lr = jnp.where(g2 > 0, lr / jnp.sqrt(jnp.where(g2 > 0, g2, 1.0)), 0.0)
        contraction = 1.0 - 2.0 * lr * eigs + lr**2 * eigs**2 * (1.0 + 1.0 / b)
        m_new = contraction * m + lr**2 / b * eigs * (jnp.sum(eigs * m) + noise_var)
        return m_new, (0.5 * jnp.sum(eigs * m_new), lr)

    _, (risks, eff) = jax.lax.scan(step, m0, (lrs, bs))
    return jnp.concatenate([jnp.array([0.5 * jnp.sum(eigs * m0)]), risks]), eff


_recursion_jit = numerics.loop_jit(risk_recursion, static_argnames="normalized")


def expected_risk(eigs, m0, noise_var, lrs, batch_sizes, *, normalized=False, return_lrs=False):
    """Exact expected excess risk of mini-batch SGD (or normalized SGD) along a schedule.

    Args:
      eigs: ``[d]`` positive eigenvalues of the input covariance H.
      m0: ``[d]`` (or scalar) ``E[(w0 - w*)_j^2]`` per eigen-direction.
      noise_var: label-noise variance sigma^2 >= 0.
      lrs: ``[steps]`` learning rates (for NSGD the nominal rates before normalisation).
      batch_sizes: ``[steps]`` batch sizes, real values allowed.
      normalized: use ``lr_t / sqrt(E||g_t||^2)`` (Corollary 1's NSGD).
      return_lrs: also return the ``[steps]`` effective learning rates actually applied.
    Returns:
      ``[steps + 1]`` float64 risks ``0.5 sum eigs * m_t`` (t = 0 .. steps), and optionally the rates.
    Raises:
      ValueError: shapes of the inputs are wrong, or a value is NaN, infinite or of the wrong sign.
      TypeError: ``noise_var`` is not a real number.
    Computed in float64 (:func:`theory.numerics.float64`), whatever the process-wide setting.
    Source: the diagonal second-moment recursion of arXiv 2506.15535 used by Seesaw's Theorem 1.
    """
    eigs, m0, lrs, bs = check_schedule(eigs, m0, lrs, batch_sizes)
    noise_var = check_real(noise_var, "noise_var", ge=0)
    with numerics.float64():  # float64 here whatever the process-wide setting
        risk, eff = _recursion_jit(eigs, m0, noise_var, lrs, bs, bool(normalized))
        risk, eff = np.asarray(risk), np.asarray(eff)
    assert risk.dtype == np.float64
    return (risk, eff) if return_lrs else risk


def stability_radius(eigs, lr, batch_size):
    """Spectral radius of the linear map ``m -> m'`` at constant (lr, B); the recursion is stable iff < 1.

    Args: eigs ``[d]`` positive eigenvalues; lr >= 0; batch_size > 0 (real). Returns a float.
    Raises: ValueError / TypeError: a non-finite, non-real or out-of-range argument.
    """
    eigs = _eigs(eigs)
    lr = check_real(lr, "lr", ge=0)
    batch_size = check_real(batch_size, "batch_size", gt=0)
    a = np.diag(1 - 2 * lr * eigs + lr**2 * eigs**2 * (1 + 1 / batch_size)) + lr**2 / batch_size * np.outer(
        eigs, eigs)
    return float(np.max(np.abs(np.linalg.eigvals(a))))


def power_law_eigs(d: int, exponent: float = 1.5, trace: float = 1.0) -> np.ndarray:
    """``[d]`` eigenvalues ``l_j ∝ j^-exponent`` scaled to ``sum l = trace`` (our reference spectrum).

    Raises: TypeError (``d`` not an integer) / ValueError (``d < 1``, ``exponent`` or ``trace`` not > 0 or
    not finite)."""
    d = check_int(d, "d", ge=1)
    exponent = check_real(exponent, "exponent", gt=0)
    trace = check_real(trace, "trace", gt=0)
    lam = np.arange(1, d + 1, dtype=np.float64) ** -exponent
    return lam * (trace / lam.sum())


def noise_scale(eigs, m, noise_var) -> float:
    """Gradient-noise-scale proxy ``B_noise = tr H (sum l m + sigma^2) / sum l^2 m``: the batch size where
    the variance term of ``E||g||^2`` equals the mean term (Assumption 3 holds for ``B << B_noise``).

    Args: eigs, m ``[d]`` (eigenvalues > 0, second moments >= 0, finite); noise_var >= 0.
    Raises: ValueError / TypeError: non-finite or out-of-range values."""
    eigs, m = _eigs(eigs), np.asarray(m, np.float64)
    if m.shape not in ((), eigs.shape) or not np.all(np.isfinite(m) & (m >= 0)):
        raise ValueError(f"m must be finite, >= 0 and shaped like eigs {eigs.shape}")
    noise_var = check_real(noise_var, "noise_var", ge=0)
    return float(eigs.sum() * (np.sum(eigs * m) + noise_var) / np.sum(eigs**2 * m))


# ---------------------------------------------------------------------------------------------------
# Schedules
# ---------------------------------------------------------------------------------------------------


def phase_schedule(eta0, b0, alpha, beta, samples_per_phase, n_phases):
    """Per-step ``(lrs, batch_sizes)`` of the phase process (alpha, beta) at equal samples per phase.

    Phase k = 0..n_phases-1 uses lr ``eta0 * alpha^-k`` and nominal batch ``b0 * beta^k`` for
    ``round(samples_per_phase / (b0 beta^k))`` steps; the batch is then set to
    ``samples_per_phase / steps`` so that every phase consumes exactly ``samples_per_phase`` samples
    (a real-valued batch; integer whenever the nominal batch divides the phase budget).

    Args:
      eta0, b0, alpha, beta, samples_per_phase: finite reals > 0; n_phases: an integer >= 1.
    Returns:
      ``(lrs, batch_sizes)``: float64 arrays of shape ``[total_steps]``.
    Raises:
      TypeError: ``n_phases`` not an integer, or a non-real argument.
      ValueError: non-positive or non-finite arguments, a phase whose nominal batch exceeds its sample
        budget, more than ``MAX_PHASES`` phases or more than ``MAX_STEPS`` steps (refused before any
        array is allocated).
    Source: the (alpha, beta) process family of Seesaw Theorem 1 / Corollary 1.
    """
    for name, v in (("eta0", eta0), ("b0", b0), ("alpha", alpha), ("beta", beta),
                    ("samples_per_phase", samples_per_phase)):
        check_real(v, name, gt=0)
    n_phases = check_int(n_phases, "n_phases", ge=1)
    check_limit(n_phases, MAX_PHASES, "MAX_PHASES", "n_phases")
    steps, total = [], 0
    for k in range(n_phases):
        b_nom = b0 * beta**k
        n = int(round(samples_per_phase / b_nom))
        if n < 1:
            raise ValueError(f"phase {k}: batch {b_nom:g} exceeds the phase budget {samples_per_phase}")
        total += n
        check_limit(total, MAX_STEPS, "MAX_STEPS", f"the number of steps of the first {k + 1} phases")
        steps.append(n)
    lrs = np.repeat(np.array([eta0 * alpha ** (-k) for k in range(n_phases)], np.float64), steps)
    bss = np.repeat(np.array([samples_per_phase / n for n in steps], np.float64), steps)
    return lrs, bss


def _check_gamma(gamma, floor: float, floor_name: str) -> None:
    """Refuse gamma <= 1, non-finite, or so close to 1 that ``floor`` takes over MAX_MILESTONES switches."""
    gamma = check_real(gamma, "gamma", gt=1)
    count = math.log(floor) / -math.log(gamma)
    check_limit(count, MAX_MILESTONES, "MAX_MILESTONES",
                f"the number of batch switches before the lr reaches {floor_name}={floor:g} at gamma={gamma!r}")


def _seesaw_milestones(total_tokens, warmup_tokens, final_lr_frac, gamma):
    """Token counts where the post-warmup cosine (to ``final_lr_frac``) crosses ``gamma^-k``; the caller
    has bounded their number by ``MAX_MILESTONES`` (:func:`_check_gamma`)."""
    k_max = int(math.log(final_lr_frac) / math.log(1.0 / gamma) + 1e-12)
    out = []
    for k in range(1, k_max + 1):
        c = 2.0 * (gamma ** (-k) - final_lr_frac) / (1.0 - final_lr_frac) - 1.0
        theta = math.acos(max(-1.0, min(1.0, c)))
        out.append(warmup_tokens + int(round((total_tokens - warmup_tokens) * theta / math.pi)))
    return out


def _check_seesaw_args(total_tokens, seq_len, b0, warmup_frac, final_lr_frac, gamma):
    check_real(total_tokens, "total_tokens", gt=0)
    seq_len = check_int(seq_len, "seq_len", ge=1)
    b0 = check_int(b0, "b0", ge=1)
    check_real(warmup_frac, "warmup_frac", ge=0, lt=1)
    check_real(final_lr_frac, "final_lr_frac", gt=0, lt=1)
    _check_gamma(gamma, final_lr_frac, "final_lr_frac")
    return seq_len, b0


def _seesaw_runs(total_tokens, seq_len: int, b0: int, warmup_frac, final_lr_frac, gamma,
                 integer: bool) -> list[tuple]:
    """The Seesaw schedule as runs ``(batch, lr_mult, n_steps)`` of constant batch, in order.

    Same semantics as stepping one batch at a time (a switch is checked at the start of each step, at most
    one per step), but each run's length is computed at once: exactly, in integer arithmetic, for integer
    batches; for real batches by the same left-to-right float additions of ``batch * seq_len`` as a
    step-by-step loop (``np.cumsum``), so the result is bit-identical to it. At most
    ``MAX_MILESTONES + 1`` runs.
    """
    ms = _seesaw_milestones(total_tokens, warmup_frac * total_tokens, final_lr_frac, gamma)
    cur_f, cur, mult, i, tokens = float(b0), int(b0), 1.0, 0, 0
    runs = []
    while tokens < total_tokens:
        if i < len(ms) and tokens >= ms[i]:
            cur_f *= gamma
            cur = int(math.floor(cur_f)) if integer else cur_f
            mult /= math.sqrt(gamma)
            i += 1
        target = min(ms[i], total_tokens) if i < len(ms) else total_tokens
        step = cur * seq_len  # one step's tokens; the run ends at the first step reaching ``target``
        if integer:
            n = max(1, math.ceil((Fraction(target) - tokens) / step))
            tokens += n * step
        else:
            n = max(1, math.ceil((target - tokens) / step))
            while True:
                acc = np.cumsum(np.r_[tokens, np.full(n + 2, step)])[1:]  # tokens after 1, 2, ... steps
                hit = np.flatnonzero(acc >= target)
                if hit.size:
                    n = int(hit[0]) + 1
                    tokens = float(acc[n - 1])
                    break
                n *= 2
        runs.append((cur, mult, n))
    return runs


def seesaw_batches(total_tokens, seq_len, b0, *, warmup_frac=0.1, final_lr_frac=0.1, gamma=1.1,
                   integer=True):
    """The per-step batch sizes (in sequences) and lr multipliers of the paper's Seesaw scheduler.

    Algorithm 1 as released: warmup at ``b0``; at each token count where the reference cosine (in tokens,
    after warmup, to ``final_lr_frac`` of the peak) crosses ``gamma^-k``, the lr is multiplied by
    ``gamma^-1/2`` and the running batch by ``gamma`` (floored to an integer); at most one switch per
    step. Steps continue until ``total_tokens`` are consumed.

    Args:
      total_tokens: finite real > 0; seq_len, b0: integers >= 1; warmup_frac in [0, 1);
      final_lr_frac in (0, 1); gamma: finite real > 1.
    Returns:
      ``(batches, lr_mult)``: arrays of shape ``[seesaw_steps]``; batches are int64, or the unfloored
      float64 running values when ``integer=False`` (for the recursion, which takes real batches).
    Raises:
      TypeError: ``seq_len`` or ``b0`` not an integer (``1.5`` would be one batch here and another in the
        cosine baseline), or a non-real argument.
      ValueError: non-positive or non-finite sizes, ``gamma <= 1``, fractions outside their ranges, more
        than ``MAX_MILESTONES`` batch switches (gamma too close to 1), or more than ``MAX_STEPS`` steps.
    Source: Seesaw Algorithm 1 (arXiv 2510.14717) and its released ``FastBSScheduler``.
    """
    seq_len, b0 = _check_seesaw_args(total_tokens, seq_len, b0, warmup_frac, final_lr_frac, gamma)
    if not integer:  # bound the float run lengths before np.cumsum allocates them
        check_limit(math.ceil(total_tokens / (seq_len * b0)), MAX_STEPS, "MAX_STEPS",
                    "the step count bound ceil(total_tokens / (seq_len * b0))")
    runs = _seesaw_runs(total_tokens, seq_len, b0, warmup_frac, final_lr_frac, gamma, bool(integer))
    counts = [n for _, _, n in runs]
    check_limit(sum(counts), MAX_STEPS, "MAX_STEPS", "the number of Seesaw steps")
    batches = np.repeat(np.array([b for b, _, _ in runs], np.int64 if integer else np.float64), counts)
    return batches, np.repeat(np.array([m for _, m, _ in runs], np.float64), counts)


def paper_step_counts(total_tokens, seq_len, b0, *, warmup_frac=0.1, final_lr_frac=0.1, gamma=1.1):
    """Serial steps of the cosine baseline (constant batch ``b0``) and of Seesaw on the same tokens.

    Counted run by run (one run per batch size, :func:`seesaw_batches` semantics), never step by step, so
    the time is ``O(number of batch switches)`` whatever ``total_tokens``.

    Args: as :func:`seesaw_batches` (``seq_len`` and ``b0`` integers).
    Returns:
      ``(cosine_steps, seesaw_steps)`` as ints; cosine is ``ceil(total / (seq_len * b0))``.
    Raises:
      TypeError, ValueError: as :func:`seesaw_batches` (except that there is no step limit).
    Source: Seesaw Algorithm 1 and the released scheduler (``StepCosineHalfWithWarmup``,
    ``FastBSScheduler``); paper: 12589 vs 7756 steps at b0 = 256 on 3.3e9 tokens of 1024.
    """
    seq_len, b0 = _check_seesaw_args(total_tokens, seq_len, b0, warmup_frac, final_lr_frac, gamma)
    runs = _seesaw_runs(total_tokens, seq_len, b0, warmup_frac, final_lr_frac, gamma, True)
    return int(math.ceil(total_tokens / (seq_len * b0))), sum(n for _, _, n in runs)


_SHAPES = ("quarter_cosine", "half_cosine")


def _shape_expr(shape: str, u):
    if shape == "quarter_cosine":
        return sp.cos(sp.pi * u / 2)
    if shape == "half_cosine":
        return (1 + sp.cos(sp.pi * u)) / 2
    raise ValueError(f"shape must be one of {_SHAPES}, got {shape!r}")


def serial_step_reduction_limit(shape: str, final_lr_frac=0, warmup_frac=0) -> sp.Expr:
    """Exact limit (gamma -> 1) of the serial-step reduction of the most aggressive ramp (sympy).

    The lr ``eta(u) = eta0 [f + (1 - f) s(u)]`` on the post-warmup fraction u of samples (s the
    ``shape``) is replaced by batch ``B0 eta0 / eta(u)``, so the steps are the sample-mean of
    ``eta / eta0``; warmup is run at ``B0``. Returns ``1 - (w + (1 - w) * int_0^1 eta/eta0 du)``.
    Args:
      shape: ``"quarter_cosine"`` or ``"half_cosine"``; final_lr_frac, warmup_frac: reals in [0, 1)
        (ints, floats, ``Fraction`` or sympy Rationals; floats are read with ``nsimplify``).
    Returns:
      A sympy expression (exact).
    Raises:
      ValueError: unknown shape, or a fraction outside [0, 1) or not finite. TypeError: not a real.
    Source: Seesaw Lemma 1 (quarter cosine to 0 gives ``1 - 2/pi``).
    """
    check_real(final_lr_frac, "final_lr_frac", ge=0, lt=1)
    check_real(warmup_frac, "warmup_frac", ge=0, lt=1)
    u = sp.symbols("u", real=True)
    f, w = sp.nsimplify(final_lr_frac), sp.nsimplify(warmup_frac)
    mean = sp.integrate(f + (1 - f) * _shape_expr(shape, u), (u, 0, 1))
    return sp.simplify(1 - (w + (1 - w) * mean))


def discrete_serial_step_reduction(shape: str, gamma: float, *, final_lr_frac=0.0, warmup_frac=0.0,
                                   lr_cut=1e-9) -> float:
    """Serial-step reduction of the discrete Seesaw scheduler with real-valued batches.

    Switch k happens where the base lr ``f + (1 - f) s(u)`` crosses ``gamma^-k`` (``u`` in post-warmup
    sample fraction); the batch is ``B0 gamma^k`` after it. Steps are counted in units of B0-steps.
    For a base decaying to 0 the switches stop once ``gamma^-k < lr_cut`` (the remaining samples are run
    at that batch; their contribution is below ``lr_cut``).
    Returns ``1 - seesaw_steps / base_steps``; tends to :func:`serial_step_reduction_limit` as gamma -> 1.

    Args:
      shape: as :func:`serial_step_reduction_limit`; gamma: finite real > 1; final_lr_frac, warmup_frac
        in [0, 1); lr_cut in (0, 1).
    Raises:
      ValueError: an argument out of range or not finite, an unknown shape, or more than
        ``MAX_MILESTONES`` switches (``log(floor) / log(1 / gamma)``, floor = final_lr_frac or lr_cut).
      TypeError: a non-real argument.
    Source: Seesaw Algorithm 1 and Lemma 1 (the discrete scheduler before its continuum limit).
    """
    if shape not in _SHAPES:
        raise ValueError(f"shape must be one of {_SHAPES}, got {shape!r}")
    final_lr_frac = check_real(final_lr_frac, "final_lr_frac", ge=0, lt=1)
    warmup_frac = check_real(warmup_frac, "warmup_frac", ge=0, lt=1)
    lr_cut = check_real(lr_cut, "lr_cut", gt=0, lt=1)
    _check_gamma(gamma, final_lr_frac if final_lr_frac > 0 else lr_cut,
                 "final_lr_frac" if final_lr_frac > 0 else "lr_cut")
    # Inverse of the shape s(u) on [0, 1]: the sample fraction where the base lr reaches v.
    s_inv = {"quarter_cosine": lambda v: 2 / math.pi * math.acos(v),
             "half_cosine": lambda v: math.acos(2 * v - 1) / math.pi}[shape]
    floor = final_lr_frac if final_lr_frac > 0 else lr_cut
    k_max = int(math.log(floor) / math.log(1.0 / gamma) + 1e-12)
    points = [0.0]
    for k in range(1, k_max + 1):
        # s < 1 since gamma^-k < 1 (k >= 1); s < 0 (a switch below the floor) is clipped to the end, u = 1
        s = (gamma ** (-k) - final_lr_frac) / (1 - final_lr_frac)
        points.append(s_inv(max(0.0, s)))
    points.append(1.0)
    seg = np.diff(np.asarray(points))
    steps = np.sum(seg * gamma ** -np.arange(len(seg), dtype=np.float64))
    return 1.0 - (warmup_frac + (1 - warmup_frac) * steps)


# ---------------------------------------------------------------------------------------------------
# Monte Carlo SGD on the same model (the runtime shards seeds; see sims/seesaw/recursion.py)
# ---------------------------------------------------------------------------------------------------


def _segments(batch_sizes) -> list[tuple[int, int, int]]:
    """Runs of equal batch size as (start, stop, batch) with integer batch (ValueError otherwise)."""
    bs = np.asarray(batch_sizes, np.float64)
    if not np.all((bs == np.round(bs)) & (bs >= 1)):
        raise ValueError("Monte Carlo SGD needs integer batch sizes >= 1")
    cuts = np.flatnonzero(np.diff(bs)) + 1
    starts, stops = np.r_[0, cuts], np.r_[cuts, bs.size]
    return [(int(a), int(b), int(bs[a])) for a, b in zip(starts, stops)]


def sgd_step(key, eigs, e, noise_var, lr, batch_size: int):
    """One step of online mini-batch SGD in the eigenbasis, ``e' = e - (lr / B) sum_i x_i (x_i^T e - eps_i)``
    with ``x_i ~ N(0, H)``, ``eps_i ~ N(0, noise_var)``, drawn exactly in law from ``2 B + d`` standard
    normals instead of the batch's ``B (d + 1)``.

    Gaussian conditioning: with ``q = e^T H e``, ``x_i = H e s_i / q + z_i`` where ``s_i = x_i^T e ~ N(0, q)``
    and ``z_i ~ N(0, H - H e e^T H / q)`` is independent of ``s_i``. With ``r_i = s_i - eps_i``,

        sum_i x_i r_i = H e (s . r) / q + ||r|| z,   z ~ N(0, H - H e e^T H / q) independent of (s, eps),

    since ``sum_i z_i r_i`` given ``r`` is ``N(0, ||r||^2 Cov z)``; ``z = y - H e (e^T y) / q`` with
    ``y = H^1/2 g``, ``g ~ N(0, I_d)``, has that covariance. At ``q = 0`` (``e = 0``) the ``H e`` terms vanish
    and ``z = y``, exact too. JAX-traceable; it checks nothing (:func:`sgd_risk_path` validates).

    Args:
      key: a ``jax.random.key``, split into three: ``s / sqrt(q)`` ``[B]``, ``eps / sqrt(noise_var)`` ``[B]``
        and ``g`` ``[d]`` are standard normals from them, in that order.
      eigs: ``[d]`` eigenvalues of H; e: ``[d]`` error ``w - w*`` in the eigenbasis.
      noise_var: label-noise variance; lr: learning rate; batch_size: B, a Python int.
    Returns:
      ``[d]`` the error after the step, in the dtype of ``eigs``.
    Source: the online SGD of Seesaw Theorem 1 (the model of arXiv 2506.15535); the decomposition is ours,
    and tests/test_seesaw.py checks the step's first two moments against the Gaussian fourth-moment formula.
    """
    ks, kn, kg = jax.random.split(key, 3)
    dt = eigs.dtype
    he = eigs * e
    q = jnp.sum(he * e)
    q_or_1 = jnp.where(q > 0, q, 1)  # at q = 0, he = 0: the he / q terms are 0
    s = jax.random.normal(ks, (batch_size,), dt) * jnp.sqrt(q)
    r = s - jax.random.normal(kn, (batch_size,), dt) * jnp.sqrt(noise_var)
    y = jax.random.normal(kg, eigs.shape, dt) * jnp.sqrt(eigs)
    z = y - he * (jnp.dot(e, y) / q_or_1)
    return e - lr / batch_size * (he * (jnp.dot(s, r) / q_or_1) + z * jnp.sqrt(jnp.dot(r, r)))


def sgd_risk_path(key, eigs, w0_minus_wstar, noise_var, lrs, batch_sizes):
    """One Monte Carlo run of online mini-batch SGD; returns the ``[steps + 1]`` excess risks ``0.5 sum l e^2``.

    Args:
      key: a ``jax.random.key``; step t is :func:`sgd_step` on ``fold_in(key, t)``.
      eigs: ``[d]`` eigenvalues; w0_minus_wstar: ``[d]`` initial error in the eigenbasis.
      noise_var: label-noise variance.
      lrs, batch_sizes: ``[steps]`` numpy arrays (static: the schedule is compiled in); batch sizes must be
        integers. Each run of equal batch size is one ``lax.scan``.
    Raises:
      ValueError: a batch size that is not an integer >= 1, a learning rate that is negative or not
        finite, or a concrete ``noise_var`` that is negative or not finite (a traced one is not checked).
    Source: the online SGD of Seesaw Theorem 1 (the model of arXiv 2506.15535).
    """
    dt = eigs.dtype
    lrs = np.asarray(lrs, np.float64)
    if not np.all(np.isfinite(lrs) & (lrs >= 0)):
        raise ValueError("learning rates must be finite and >= 0")
    if isinstance(noise_var, (numbers.Real, np.ndarray)):
        check_real(noise_var, "noise_var", ge=0)

    def run_segment(e, start, stop, b):
        def step(e, inp):
            t, lr = inp
            e = sgd_step(jax.random.fold_in(key, t), eigs, e, noise_var, lr, b)
            return e, 0.5 * jnp.sum(eigs * e * e)

        return jax.lax.scan(step, e, (jnp.arange(start, stop), jnp.asarray(lrs[start:stop], dt)))

    e, paths = w0_minus_wstar, [jnp.reshape(0.5 * jnp.sum(eigs * w0_minus_wstar**2), (1,))]
    for start, stop, b in _segments(batch_sizes):
        e, risks = run_segment(e, start, stop, b)
        paths.append(risks)
    return jnp.concatenate(paths)


# ---------------------------------------------------------------------------------------------------
# Shared by the simulations and the claims
# ---------------------------------------------------------------------------------------------------

# Our reference problem: d = 256, l_j ∝ j^-1.5 with tr H = 1, sigma^2 = 1, m0 = 1, B0 = 8,
# phases of 2^16 samples. SGD at eta0 = 0.5, NSGD at nominal eta0 = 0.05.
REF = dict(d=256, exponent=1.5, noise_var=1.0, m0=1.0, b0=8, samples_per_phase=2**16)


SQRT2 = math.sqrt(2.0)


def final_risk_ratio(members, base, *, eta0, n_phases, normalized, b0=REF["b0"],
                     samples_per_phase=REF["samples_per_phase"], noise_var=REF["noise_var"],
                     eigs=None, m0=REF["m0"]):
    """Final expected risk of each (alpha, beta) member divided by that of ``base``, and step counts.

    Returns ``({member: ratio}, {member: steps})``. Raises: as :func:`phase_schedule` and
    :func:`expected_risk`. Source: Seesaw Theorem 1 / Corollary 1 (equivalent members end alike)."""
    eigs = power_law_eigs(REF["d"], REF["exponent"]) if eigs is None else eigs

    def final(ab):
        lrs, bs = phase_schedule(eta0, b0, ab[0], ab[1], samples_per_phase, n_phases)
        return float(expected_risk(eigs, m0, noise_var, lrs, bs, normalized=normalized)[-1]), lrs.size

    r0, _ = final(base)
    out = {ab: final(ab) for ab in members}
    return {ab: r / r0 for ab, (r, _) in out.items()}, {ab: n for ab, (_, n) in out.items()}


def member_name(ab) -> str:
    """``(alpha,beta)`` rendered for tables: ``"(1.414,2)"``."""
    return f"({ab[0]:.4g},{ab[1]:.4g})"


NSGD_LINE = [(2.0, 1.0), (2 ** 0.75, 2 ** 0.5), (SQRT2, 2.0), (2 ** 0.25, 2 ** 1.5), (1.0, 4.0)]


MEAN_DOMINATED_B0 = (4, 16, 64, 256)


def seesaw_vs_step_by_batch(noise_var, b0s=MEAN_DOMINATED_B0, *, n_phases=4, samples_per_phase=2**18,
                            eta0=0.05):
    """NSGD final risk of Seesaw (sqrt2, 2) over step decay (2, 1) for each initial batch in ``b0s``, and
    the gradient-noise-scale proxy at initialisation. Source: Seesaw Section 5 / Figure 3.

    Returns ``({b0: ratio}, B_noise)``. Raises: as :func:`phase_schedule` and :func:`expected_risk`."""
    eigs = power_law_eigs(REF["d"])
    out = {}
    for b0 in b0s:
        r, _ = final_risk_ratio([(SQRT2, 2.0)], (2.0, 1.0), eta0=eta0, n_phases=n_phases, normalized=True,
                                b0=b0, samples_per_phase=samples_per_phase, noise_var=noise_var, eigs=eigs)
        out[b0] = r[(SQRT2, 2.0)]
    return out, noise_scale(eigs, np.full(REF["d"], REF["m0"]), noise_var)
