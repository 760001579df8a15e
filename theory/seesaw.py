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
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import sympy as sp

from theory import ledger

# ---------------------------------------------------------------------------------------------------
# Exact expected-risk recursion
# ---------------------------------------------------------------------------------------------------


def _check_schedule(eigs, m0, lrs, batch_sizes):
    eigs, m0 = np.asarray(eigs, np.float64), np.asarray(m0, np.float64)
    lrs, bs = np.asarray(lrs, np.float64), np.asarray(batch_sizes, np.float64)
    if eigs.ndim != 1 or eigs.size == 0 or np.any(eigs <= 0):
        raise ValueError("eigs must be a non-empty 1-D array of positive eigenvalues")
    if m0.shape not in ((), eigs.shape) or np.any(m0 < 0):
        raise ValueError(f"m0 must be a non-negative scalar or shaped like eigs {eigs.shape}")
    if lrs.ndim != 1 or lrs.shape != bs.shape:
        raise ValueError(f"lrs and batch_sizes must be 1-D of equal length, got {lrs.shape}, {bs.shape}")
    if np.any(bs <= 0) or np.any(lrs < 0):
        raise ValueError("batch sizes must be > 0 and learning rates >= 0")
    return eigs, np.broadcast_to(m0, eigs.shape).copy(), lrs, bs


def grad_second_moment(eigs, m, noise_var, batch_size):
    """``E||g||^2`` of a mini-batch gradient given second moments ``m`` (shape ``[d]``).

    Mean part ``(1 + 1/B) sum l^2 m`` plus variance part ``(tr H / B)(sum l m + noise_var)``.
    """
    return ((1.0 + 1.0 / batch_size) * jnp.sum(eigs**2 * m)
            + jnp.sum(eigs) / batch_size * (jnp.sum(eigs * m) + noise_var))


def _recursion(eigs, m0, noise_var, lrs, bs, normalized):
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


_recursion_jit = jax.jit(_recursion, static_argnames="normalized")


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
      ValueError: shapes or signs of the inputs are wrong.
    Computed in float64 (a local ``jax.enable_x64``), whatever the process-wide setting.
    Source: the diagonal second-moment recursion of arXiv 2506.15535 used by Seesaw's Theorem 1.
    """
    eigs, m0, lrs, bs = _check_schedule(eigs, m0, lrs, batch_sizes)
    if noise_var < 0:
        raise ValueError(f"noise_var must be >= 0, got {noise_var}")
    with jax.enable_x64(True):  # float64 here whatever the process-wide setting
        risk, eff = _recursion_jit(eigs, m0, float(noise_var), lrs, bs, bool(normalized))
        risk, eff = np.asarray(risk), np.asarray(eff)
    assert risk.dtype == np.float64
    return (risk, eff) if return_lrs else risk


def stability_radius(eigs, lr, batch_size):
    """Spectral radius of the linear map ``m -> m'`` at constant (lr, B); the recursion is stable iff < 1."""
    eigs = np.asarray(eigs, np.float64)
    a = np.diag(1 - 2 * lr * eigs + lr**2 * eigs**2 * (1 + 1 / batch_size)) + lr**2 / batch_size * np.outer(
        eigs, eigs)
    return float(np.max(np.abs(np.linalg.eigvals(a))))


def power_law_eigs(d: int, exponent: float = 1.5, trace: float = 1.0) -> np.ndarray:
    """``[d]`` eigenvalues ``l_j ∝ j^-exponent`` scaled to ``sum l = trace`` (the brief's test spectrum)."""
    if d < 1 or exponent <= 0 or trace <= 0:
        raise ValueError("need d >= 1, exponent > 0, trace > 0")
    lam = np.arange(1, d + 1, dtype=np.float64) ** -exponent
    return lam * (trace / lam.sum())


def noise_scale(eigs, m, noise_var) -> float:
    """Gradient-noise-scale proxy ``B_noise = tr H (sum l m + sigma^2) / sum l^2 m``: the batch size where
    the variance term of ``E||g||^2`` equals the mean term (Assumption 3 holds for ``B << B_noise``)."""
    eigs, m = np.asarray(eigs, np.float64), np.asarray(m, np.float64)
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

    Returns:
      ``(lrs, batch_sizes)``: float64 arrays of shape ``[total_steps]``.
    Raises:
      ValueError: non-positive arguments, or a phase whose nominal batch exceeds its sample budget.
    Source: the (alpha, beta) process family of Seesaw Theorem 1 / Corollary 1.
    """
    if min(eta0, b0, alpha, beta, samples_per_phase) <= 0 or n_phases < 1:
        raise ValueError("eta0, b0, alpha, beta, samples_per_phase must be > 0 and n_phases >= 1")
    lrs, bss = [], []
    for k in range(int(n_phases)):
        b_nom = b0 * beta**k
        steps = int(round(samples_per_phase / b_nom))
        if steps < 1:
            raise ValueError(f"phase {k}: batch {b_nom:g} exceeds the phase budget {samples_per_phase}")
        lrs.append(np.full(steps, eta0 * alpha ** (-k)))
        bss.append(np.full(steps, samples_per_phase / steps))
    return np.concatenate(lrs), np.concatenate(bss)


def _seesaw_milestones(total_tokens, warmup_tokens, final_lr_frac, gamma):
    """Token counts where the post-warmup cosine (to ``final_lr_frac``) crosses ``gamma^-k``."""
    k_max = int(math.log(final_lr_frac) / math.log(1.0 / gamma) + 1e-12)
    out = []
    for k in range(1, k_max + 1):
        c = 2.0 * (gamma ** (-k) - final_lr_frac) / (1.0 - final_lr_frac) - 1.0
        theta = math.acos(max(-1.0, min(1.0, c)))
        out.append(warmup_tokens + int(round((total_tokens - warmup_tokens) * theta / math.pi)))
    return out


def seesaw_batches(total_tokens, seq_len, b0, *, warmup_frac=0.1, final_lr_frac=0.1, gamma=1.1,
                   integer=True):
    """The per-step batch sizes (in sequences) and lr multipliers of the paper's Seesaw scheduler.

    Algorithm 1 as released: warmup at ``b0``; at each token count where the reference cosine (in tokens,
    after warmup, to ``final_lr_frac`` of the peak) crosses ``gamma^-k``, the lr is multiplied by
    ``gamma^-1/2`` and the running batch by ``gamma`` (floored to an integer); at most one switch per
    step. Steps continue until ``total_tokens`` are consumed.

    Returns:
      ``(batches, lr_mult)``: arrays of shape ``[seesaw_steps]``; batches are int64, or the unfloored
      float64 running values when ``integer=False`` (for the recursion, which takes real batches).
    Raises:
      ValueError: non-positive sizes, ``gamma <= 1``, or fractions outside [0, 1).
    """
    if total_tokens <= 0 or seq_len < 1 or b0 < 1 or gamma <= 1:
        raise ValueError("need total_tokens > 0, seq_len >= 1, b0 >= 1, gamma > 1")
    if not (0 <= warmup_frac < 1 and 0 < final_lr_frac < 1):
        raise ValueError("need 0 <= warmup_frac < 1 and 0 < final_lr_frac < 1")
    ms = _seesaw_milestones(total_tokens, warmup_frac * total_tokens, final_lr_frac, gamma)
    cur_f, cur, mult, i, tokens = float(b0), int(b0), 1.0, 0, 0
    batches, mults = [], []
    while tokens < total_tokens:
        if i < len(ms) and tokens >= ms[i]:
            cur_f *= gamma
            cur = int(math.floor(cur_f)) if integer else cur_f
            mult /= math.sqrt(gamma)
            i += 1
        batches.append(cur)
        mults.append(mult)
        tokens += cur * seq_len
    return np.asarray(batches, np.int64 if integer else np.float64), np.asarray(mults)


def paper_step_counts(total_tokens, seq_len, b0, *, warmup_frac=0.1, final_lr_frac=0.1, gamma=1.1):
    """Serial steps of the cosine baseline (constant batch ``b0``) and of Seesaw on the same tokens.

    Returns:
      ``(cosine_steps, seesaw_steps)`` as ints; cosine is ``ceil(total / (seq_len * b0))``.
    Source: Seesaw Algorithm 1 and the released scheduler (``StepCosineHalfWithWarmup``,
    ``FastBSScheduler``); paper: 12589 vs 7756 steps at b0 = 256 on 3.3e9 tokens of 1024.
    """
    batches, _ = seesaw_batches(total_tokens, seq_len, b0, warmup_frac=warmup_frac,
                                final_lr_frac=final_lr_frac, gamma=gamma)
    return int(math.ceil(total_tokens / (seq_len * b0))), int(batches.size)


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
    Source: Seesaw Lemma 1 (quarter cosine to 0 gives ``1 - 2/pi``).
    """
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
    """
    if gamma <= 1:
        raise ValueError(f"gamma must be > 1, got {gamma}")
    if shape not in _SHAPES:
        raise ValueError(f"shape must be one of {_SHAPES}, got {shape!r}")
    # Inverse of the shape s(u) on [0, 1]: the sample fraction where the base lr reaches v.
    s_inv = {"quarter_cosine": lambda v: 2 / math.pi * math.acos(v),
             "half_cosine": lambda v: math.acos(2 * v - 1) / math.pi}[shape]
    floor = final_lr_frac if final_lr_frac > 0 else lr_cut
    k_max = int(math.log(floor) / math.log(1.0 / gamma) + 1e-12)
    points = [0.0]
    for k in range(1, k_max + 1):
        s = (gamma ** (-k) - final_lr_frac) / (1 - final_lr_frac)
        points.append(s_inv(min(1.0, max(0.0, s))))
    points.append(1.0)
    seg = np.diff(np.asarray(points))
    steps = np.sum(seg * gamma ** -np.arange(len(seg), dtype=np.float64))
    return 1.0 - (warmup_frac + (1 - warmup_frac) * steps)


# ---------------------------------------------------------------------------------------------------
# Monte Carlo SGD on the same model (the runtime shards seeds; see sims/seesaw.py)
# ---------------------------------------------------------------------------------------------------


def _segments(batch_sizes) -> list[tuple[int, int, int]]:
    """Runs of equal batch size as (start, stop, batch) with integer batch (ValueError otherwise)."""
    bs = np.asarray(batch_sizes, np.float64)
    if np.any(bs != np.round(bs)) or np.any(bs < 1):
        raise ValueError("Monte Carlo SGD needs integer batch sizes >= 1")
    cuts = np.flatnonzero(np.diff(bs)) + 1
    starts, stops = np.r_[0, cuts], np.r_[cuts, bs.size]
    return [(int(a), int(b), int(bs[a])) for a, b in zip(starts, stops)]


def sgd_risk_path(key, eigs, w0_minus_wstar, noise_var, lrs, batch_sizes):
    """One Monte Carlo run of online mini-batch SGD; returns the ``[steps + 1]`` excess risks ``0.5 sum l e^2``.

    Args:
      key: a ``jax.random.key``; step t draws from ``fold_in(key, t)``.
      eigs: ``[d]`` eigenvalues; w0_minus_wstar: ``[d]`` initial error in the eigenbasis.
      noise_var: label-noise variance.
      lrs, batch_sizes: ``[steps]`` numpy arrays (static: the schedule is compiled in); batch sizes must be
        integers. Each run of equal batch size is one ``lax.scan`` drawing exactly B samples per step.
    """
    sqrt_l = jnp.sqrt(eigs)
    dt = eigs.dtype
    lrs = np.asarray(lrs, np.float64)

    def run_segment(e, start, stop, b):
        def step(e, inp):
            t, lr = inp
            kx, kn = jax.random.split(jax.random.fold_in(key, t))
            x = jax.random.normal(kx, (b, eigs.shape[0]), dt) * sqrt_l
            eps = jax.random.normal(kn, (b,), dt) * jnp.sqrt(noise_var)
            e = e - lr / b * (x.T @ (x @ e - eps))
            return e, 0.5 * jnp.sum(eigs * e * e)

        return jax.lax.scan(step, e, (jnp.arange(start, stop), jnp.asarray(lrs[start:stop], dt)))

    e, paths = w0_minus_wstar, [jnp.reshape(0.5 * jnp.sum(eigs * w0_minus_wstar**2), (1,))]
    for start, stop, b in _segments(batch_sizes):
        e, risks = run_segment(e, start, stop, b)
        paths.append(risks)
    return jnp.concatenate(paths)


# ---------------------------------------------------------------------------------------------------
# Claims
# ---------------------------------------------------------------------------------------------------

# The brief's reference problem: d = 256, l_j ∝ j^-1.5 with tr H = 1, sigma^2 = 1, m0 = 1, B0 = 8,
# phases of 2^16 samples. SGD at eta0 = 0.5, NSGD at nominal eta0 = 0.05.
REF = dict(d=256, exponent=1.5, noise_var=1.0, m0=1.0, b0=8, samples_per_phase=2**16)
SQRT2 = math.sqrt(2.0)


def final_risk_ratio(members, base, *, eta0, n_phases, normalized, b0=REF["b0"],
                     samples_per_phase=REF["samples_per_phase"], noise_var=REF["noise_var"],
                     eigs=None, m0=REF["m0"]):
    """Final expected risk of each (alpha, beta) member divided by that of ``base``, and step counts."""
    eigs = power_law_eigs(REF["d"], REF["exponent"]) if eigs is None else eigs

    def final(ab):
        lrs, bs = phase_schedule(eta0, b0, ab[0], ab[1], samples_per_phase, n_phases)
        return float(expected_risk(eigs, m0, noise_var, lrs, bs, normalized=normalized)[-1]), lrs.size

    r0, _ = final(base)
    out = {ab: final(ab) for ab in members}
    return {ab: r / r0 for ab, (r, _) in out.items()}, {ab: n for ab, (_, n) in out.items()}


def _name(ab) -> str:
    return f"({ab[0]:.4g},{ab[1]:.4g})"


@ledger.claim("seesaw.sgd_equivalence", source="Seesaw Theorem 1 (SGD, noisy linear regression)",
              statement="SGD schedules (eta0 alpha^-k, B0 beta^k) with equal samples per phase and the "
                        "same alpha*beta (alpha >= 1) end within a few percent of each other's excess risk.")
def _check_sgd_equivalence() -> ledger.Evidence:
    members = [(2.0, 1.0), (SQRT2, SQRT2), (1.0, 2.0)]
    ratios, steps = final_risk_ratio(members, (2.0, 1.0), eta0=0.5, n_phases=4, normalized=False)
    spread = max(ratios.values()) / min(ratios.values()) - 1
    # Monte Carlo cross-check of the recursion on a smaller problem, seeds sharded over all devices.
    mc = monte_carlo_check(n_seeds=256)
    ok = spread <= 0.05 and mc["max_abs_z"] <= 3.0
    return ledger.Evidence(
        measured={"final_risk_ratio": {_name(k): v for k, v in ratios.items()}, "spread": spread,
                  "steps": {_name(k): v for k, v in steps.items()},
                  "mc_vs_recursion_max_z": mc["max_abs_z"]},
        predicted={"spread": "<= 5% (equal up to constant factors)", "mc_vs_recursion_max_z": "<= 3"},
        tolerance="spread <= 5% (Theorem 1 holds up to constants); MC within 3 SE of the exact recursion",
        verdict=ledger.verdict(ok),
        stderr={"mc_rel_se": mc["rel_se"]},
        notes=f"d=256, l_j∝j^-1.5, trH=1, sigma²=1, B0=8, 4 phases of 2^16 samples, eta0=0.5. MC: "
              f"{mc['setting']}; MC/recursion ratios {mc['ratios']}.")


def monte_carlo_check(n_seeds=256, d=32, samples_per_phase=2**12, n_phases=4, eta0=0.5, b0=8, seed=0,
                      mesh=None):
    """Monte Carlo SGD (sharded seeds) against :func:`expected_risk` for the members (2,1), (1,2).

    Returns a dict with the z-scores ``(mc - exact) / se`` of the final risk, their max, the relative
    standard errors and MC/exact ratios.
    """
    from sims import runtime

    eigs = power_law_eigs(d)
    e0 = np.ones(d)
    out = {"z": {}, "rel_se": {}, "ratios": {}}
    for ab in [(2.0, 1.0), (1.0, 2.0)]:
        lrs, bs = phase_schedule(eta0, b0, ab[0], ab[1], samples_per_phase, n_phases)
        exact = expected_risk(eigs, e0**2, 1.0, lrs, bs)[-1]
        mean, se = runtime.mean_over_seeds(
            lambda k: sgd_risk_path(k, eigs, e0, 1.0, lrs, bs)[-1], seed, n_seeds, mesh=mesh)
        out["z"][_name(ab)] = float((mean - exact) / se)
        out["rel_se"][_name(ab)] = float(se / mean)
        out["ratios"][_name(ab)] = round(float(mean / exact), 4)
    out["max_abs_z"] = max(abs(z) for z in out["z"].values())
    out["setting"] = (f"d={d}, {n_seeds} seeds, {n_phases} phases of {samples_per_phase} samples, "
                      f"eta0={eta0}, B0={b0}")
    return out


NSGD_LINE = [(2.0, 1.0), (2 ** 0.75, 2 ** 0.5), (SQRT2, 2.0), (2 ** 0.25, 2 ** 1.5), (1.0, 4.0)]


@ledger.claim("seesaw.nsgd_equivalence", source="Seesaw Corollary 1 (NSGD under Assumption 3)",
              statement="Normalized SGD in the variance-dominated regime: schedules with equal alpha*sqrt(beta)"
                        " = 2, from (2,1) to (1,4), end within 2% of each other.")
def _check_nsgd_equivalence() -> ledger.Evidence:
    ratios, steps = final_risk_ratio(NSGD_LINE, (2.0, 1.0), eta0=0.05, n_phases=4, normalized=True)
    spread = max(ratios.values()) / min(ratios.values()) - 1
    eigs = power_law_eigs(REF["d"])
    bn = noise_scale(eigs, np.full(REF["d"], REF["m0"]), REF["noise_var"])
    return ledger.Evidence(
        measured={"final_risk_ratio": {_name(k): v for k, v in ratios.items()}, "spread": spread,
                  "steps": {_name(k): v for k, v in steps.items()}, "B_noise_at_init": bn},
        predicted={"spread": "< 2%"},
        tolerance="max/min final risk - 1 <= 2%",
        verdict=ledger.verdict(spread <= 0.02),
        notes="Same problem as sgd_equivalence, NSGD nominal eta0=0.05; largest batch 8*4^3=512. "
              "B_noise is the variance/mean crossover of E||g||^2 at initialisation.")


@ledger.claim("seesaw.aggressive_ramp_fails", source="Seesaw Lemma 4 / Remark 1",
              statement="Ramps with alpha < sqrt(beta) (lr x sqrt2 with batch x2) are clearly worse: NSGD "
                        "plateaus, and SGD with alpha < 1 diverges over long horizons.")
def _check_aggressive_ramp() -> ledger.Evidence:
    members = [(SQRT2, 2.0), (1 / SQRT2, 2.0)]
    horizons = {}
    for k in (4, 8, 12):
        n = 2**16 if k <= 8 else 2**18
        r, _ = final_risk_ratio(members, (2.0, 1.0), eta0=0.05, n_phases=k, normalized=True,
                                samples_per_phase=n)
        horizons[k] = r
    nsgd_merrill = {k: v[(1 / SQRT2, 2.0)] for k, v in horizons.items()}
    nsgd_seesaw = {k: v[(SQRT2, 2.0)] for k, v in horizons.items()}
    sgd, _ = final_risk_ratio([(1 / SQRT2, 2.0), (1.0, 2.0)], (2.0, 1.0), eta0=0.5, n_phases=10,
                              normalized=False, samples_per_phase=2**18)
    sgd_bad = sgd[(1 / SQRT2, 2.0)]
    ok = (nsgd_merrill[12] > 10 and nsgd_merrill[12] > nsgd_merrill[8] > 1.5
          and max(abs(v - 1) for v in nsgd_seesaw.values()) < 0.02
          and (not np.isfinite(sgd_bad) or sgd_bad > 1e6))
    return ledger.Evidence(
        measured={"nsgd_(1/sqrt2,2)_vs_step_by_phases": nsgd_merrill,
                  "nsgd_seesaw_vs_step_by_phases": nsgd_seesaw,
                  "sgd_(1/sqrt2,2)_vs_step_10_phases": sgd_bad,
                  "sgd_(1,2)_vs_step_10_phases": sgd[(1.0, 2.0)]},
        predicted={"nsgd_(1/sqrt2,2)": "grows with the horizon (plateau)", "sgd_(1/sqrt2,2)": "diverges"},
        tolerance="NSGD aggressive/step > 1.5 at 8 phases, > 10 at 12; Seesaw within 2%; SGD ratio > 1e6 "
                  "or non-finite",
        verdict=ledger.verdict(ok),
        notes="Over 4 phases the aggressive ramp is not yet worse; the failure is a long-horizon effect. "
              "Exact normalisation keeps NSGD finite, so it plateaus instead of blowing up.")


MEAN_DOMINATED_B0 = (4, 16, 64, 256)


def seesaw_vs_step_by_batch(noise_var, b0s=MEAN_DOMINATED_B0, *, n_phases=4, samples_per_phase=2**18,
                            eta0=0.05):
    """NSGD final risk of Seesaw (sqrt2, 2) over step decay (2, 1) for each initial batch in ``b0s``, and
    the gradient-noise-scale proxy at initialisation. Source: Seesaw Section 5 / Figure 3."""
    eigs = power_law_eigs(REF["d"])
    out = {}
    for b0 in b0s:
        r, _ = final_risk_ratio([(SQRT2, 2.0)], (2.0, 1.0), eta0=eta0, n_phases=n_phases, normalized=True,
                                b0=b0, samples_per_phase=samples_per_phase, noise_var=noise_var, eigs=eigs)
        out[b0] = r[(SQRT2, 2.0)]
    return out, noise_scale(eigs, np.full(REF["d"], REF["m0"]), noise_var)


@ledger.claim("seesaw.mean_dominated_gap", source="Seesaw Section 5 (beyond the critical batch size), Fig. 3",
              statement="When the gradient mean dominates the noise (small label noise, large batch) Seesaw "
                        "falls behind step decay, and the gap opens as the batch grows.")
def _check_mean_dominated() -> ledger.Evidence:
    low, bn_low = seesaw_vs_step_by_batch(1e-2)
    high, bn_high = seesaw_vs_step_by_batch(1.0)
    gaps = [low[b] for b in MEAN_DOMINATED_B0]
    ok = (all(b > a for a, b in zip(gaps, gaps[1:])) and gaps[-1] >= 1.2
          and abs(high[MEAN_DOMINATED_B0[0]] - 1) < 0.02)
    return ledger.Evidence(
        measured={"seesaw/step, sigma²=0.01, by B0": low, "seesaw/step, sigma²=1, by B0": high,
                  "B_noise_init sigma²=0.01": bn_low, "B_noise_init sigma²=1": bn_high},
        predicted={"sigma²=0.01": "increasing in B0, >= 1.2 at the largest", "sigma²=1, B0=4": "~1"},
        tolerance="strictly increasing gap; >= 20% at B0=256; variance-dominated control within 2%",
        verdict=ledger.verdict(ok),
        notes="NSGD, 4 phases of 2^18 samples, nominal eta0=0.05, d=256. B_noise = tr H (sum l m + "
              "sigma²)/sum l² m at initialisation; it shrinks further as the risk falls.")


LIMITS = {  # (shape, final_lr_frac, warmup_frac) -> the brief's value of the limit
    ("quarter_cosine", 0, 0): 1 - 2 / sp.pi,
    ("half_cosine", 0, 0): sp.Rational(1, 2),
    ("half_cosine", sp.Rational(1, 10), 0): sp.Rational(45, 100),
    ("half_cosine", sp.Rational(1, 10), sp.Rational(1, 10)): sp.Rational(405, 1000),
}


@ledger.claim("seesaw.serial_step_limit", source="Seesaw Lemma 1",
              statement="The serial-step reduction of the most aggressive ramp tends to 1 - 2/pi for a "
                        "quarter-cosine schedule, and to 50%, 45%, 40.5% for half-cosine to 0, to a 0.1 floor, "
                        "and with 10% warmup; analytically and from the discrete scheduler as gamma -> 1.")
def _check_serial_step_limit() -> ledger.Evidence:
    exact, discrete, errors, ok = {}, {}, {}, True
    for (shape, f, w), want in LIMITS.items():
        key = f"{shape},floor={f},warmup={w}"
        got = serial_step_reduction_limit(shape, f, w)
        ok &= sp.simplify(got - want) == 0
        exact[key] = str(got)
        errs = [abs(discrete_serial_step_reduction(shape, g, final_lr_frac=float(f), warmup_frac=float(w))
                    - float(want)) for g in (1.1, 1.01, 1.001)]
        ok &= errs[-1] < 1e-3 and errs[0] > errs[1] > errs[2]
        discrete[key] = discrete_serial_step_reduction(shape, 1.001, final_lr_frac=float(f),
                                                       warmup_frac=float(w))
        errors[key] = errs
    return ledger.Evidence(
        measured={"sympy_limit": exact, "discrete_gamma_1.001": discrete,
                  "abs_error_gamma_1.1_1.01_1.001": errors},
        predicted={k: str(v) for k, v in LIMITS.items()},
        tolerance="sympy limit equal exactly; discrete error < 1e-3 at gamma=1.001 and decreasing in gamma",
        verdict=ledger.verdict(ok),
        notes="Steps of the ramp = sample-mean of eta/eta0 (batch B0 eta0/eta); warmup runs at B0.")


PAPER_STEPS = {256: (12589, 7756), 128: (25178, 15524)}


@ledger.claim("seesaw.paper_step_counts", source="Seesaw Table 1 / Fig. 1, released scheduler",
              statement="The paper's scheduler (10% warmup at B0, cosine in tokens to 0.1, gamma = 1.1, batch "
                        "floored) on 3.3e9 tokens of 1024-token sequences gives 12589 vs 7756 steps at B0 = 256 "
                        "and 25178 vs 15524 at B0 = 128.")
def _check_paper_step_counts() -> ledger.Evidence:
    got = {b0: paper_step_counts(3.3e9, 1024, b0) for b0 in PAPER_STEPS}
    red = {b0: 1 - s / c for b0, (c, s) in got.items()}
    return ledger.Evidence(
        measured={f"B0={b}": list(v) for b, v in got.items()} | {"reduction": red},
        predicted={f"B0={b}": list(v) for b, v in PAPER_STEPS.items()},
        tolerance="exact integer equality",
        verdict=ledger.verdict(got == PAPER_STEPS),
        notes="Reductions ~38.4%, two points short of the gamma -> 1 limit of 40.5% (switch lag at gamma=1.1).")


LM_CONFIG = str(Path(__file__).resolve().parent.parent / "paper_configs" / "seesaw_lm.yaml")


def lm_comparison(arrays) -> dict:
    """Final validation loss (mean over seeds, nats/char), serial steps and noise scale per B0 and schedule
    from a ``seesaw_lm`` result (``sims.seesaw.run_lm``)."""
    out = {}
    for b0 in arrays["batch_sizes"].tolist():
        row = {}
        for kind in arrays["schedules"].tolist():
            vl = arrays[f"b{b0}_{kind}_val_loss"][:, -1]
            row[kind] = {"loss": float(vl.mean()), "loss_se": float(vl.std(ddof=1) / np.sqrt(vl.size))
                         if vl.size > 1 else 0.0, "steps": int(arrays[f"b{b0}_{kind}_total_steps"]),
                         "per_seed": vl.tolist()}
        if "cosine" in row:
            row["noise_scale"] = float(np.mean(arrays[f"b{b0}_cosine_noise_scale"]))
            for kind in ("seesaw", "fixed_lr"):  # paired over seeds: same init, same seed
                if kind in row:
                    rel = (arrays[f"b{b0}_{kind}_val_loss"][:, -1] / arrays[f"b{b0}_cosine_val_loss"][:, -1]) - 1
                    row[kind]["paired_rel_diff"] = float(rel.mean())
                    row[kind]["paired_rel_se"] = float(rel.std(ddof=1) / np.sqrt(rel.size)) if rel.size > 1 else 0.0
        out[int(b0)] = row
    return out


@ledger.claim("seesaw.adam_lm_match", source="Seesaw Fig. 1 / Table 1 (AdamW language models)",
              statement="A small transformer LM trained with AdamW: cosine vs Seesaw at equal tokens reach final "
                        "validation losses within 1% at batch sizes below the measured noise scale, with about "
                        "0.6x the serial steps; a batch ramp at constant lr is worse.",
              expected="inconclusive",
              why="at quick CPU scale (2 seeds, about 5 tokens per parameter, loss still falling steeply), with "
                  "the best cosine lr of a 3e-3/1e-2/3e-2 sweep, Seesaw trails cosine by about 1% (0.9 +- 0.2% "
                  "at B0=8, 1.2 +- 0.5% at B0=32, seed-paired, when this was written): too close to the 1% "
                  "bound to decide, and the fixed-lr ramp is not resolvably worse than Seesaw; the step ratio "
                  "(0.63) holds. At lr=3e-2 (B0=8) all three parts held (+0.2%, ramp 0.7% worse). The paper "
                  "trains at about 20 tokens per parameter, which the quick scale cannot afford.")
def _check_adam_lm_match() -> ledger.Evidence:
    from sims import cli

    arrays, meta = cli.run_config(LM_CONFIG, "quick", quiet=True)
    cmp = lm_comparison(arrays)
    rows, parts = {}, []
    for b0, r in cmp.items():
        if r["noise_scale"] <= b0:
            rows[b0] = {"noise_scale": r["noise_scale"], "note": "above the noise scale: not tested"}
            continue
        rel, se = r["seesaw"]["paired_rel_diff"], r["seesaw"]["paired_rel_se"]
        step_ratio = r["seesaw"]["steps"] / r["cosine"]["steps"]
        # Fixed-lr ramp minus Seesaw, seed-paired, relative to cosine's loss.
        gap = r["fixed_lr"]["paired_rel_diff"] - rel if "fixed_lr" in r else float("nan")
        gap_se = math.hypot(r["fixed_lr"]["paired_rel_se"], se) if "fixed_lr" in r else float("nan")
        # Each comparison is decided when it is 2 paired SE from its threshold, else inconclusive.
        for value, bound, err in ((0.01 - abs(rel), 0.0, se), (gap, 0.0, gap_se)):
            parts.append("holds" if value - 2 * err > bound else "fails" if value + 2 * err < bound
                         else "inconclusive")
        parts.append(ledger.verdict(0.55 <= step_ratio <= 0.7))
        rows[b0] = {"noise_scale": r["noise_scale"], "cosine_loss": r["cosine"]["loss"],
                    "seesaw_loss": r["seesaw"]["loss"], "rel_diff": rel, "rel_diff_paired_se": se,
                    "step_ratio": step_ratio, "fixed_lr_loss": r.get("fixed_lr", {}).get("loss", float("nan")),
                    "fixed_minus_seesaw_rel": gap, "fixed_minus_seesaw_se": gap_se}
    verdict = ("fails" if not parts or "fails" in parts else "inconclusive" if "inconclusive" in parts
               else "holds")
    return ledger.Evidence(
        measured={f"B0={b}": v for b, v in rows.items()},
        predicted={"rel_diff": "|.| <= 1%", "step_ratio": "~0.6 (paper 0.62)", "fixed_lr_loss": "> seesaw"},
        tolerance="|seesaw/cosine - 1| <= 1% and fixed-lr ramp worse than Seesaw, each decided at 2 seed-paired "
                  "SE (else inconclusive); step ratio in [0.55, 0.7]; every B0 below the measured noise scale",
        verdict=verdict,
        stderr={f"B0={b}": {k: r[k]["loss_se"] for k in r if isinstance(r[k], dict)} for b, r in cmp.items()},
        # rel_diff is the seed-paired mean of seesaw/cosine - 1; its SE is the paired one, much smaller than
        # the unpaired loss SEs because both schedules share the initialisation.
        notes=f"{LM_CONFIG} at quick scale ({meta['config']['n_seeds']} seeds, "
              f"{meta['config']['total_tokens']} tokens, d_model {meta['config']['d_model']}); noise scale "
              "= McCandlish B_simple in sequences, mean over seeds at mid and end of the cosine run.")
