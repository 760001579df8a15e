"""Seesaw experiments on noisy Gaussian linear regression: ``equivalence`` (SGD and NSGD phase schedules,
exact recursion and Monte Carlo) and ``large_batch`` (the exact NSGD recursion over initial batch sizes)."""

from __future__ import annotations

import dataclasses
import math

import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.seesaw.schedules import cosine_lrs, seesaw_schedule
from theory import numerics
from theory import seesaw as th
from theory.numerics import check_real


@dataclasses.dataclass(frozen=True)
class EquivalenceParams:
    """Noisy linear regression, phase schedules at equal samples per phase."""

    d: int = param(16, ge=1)
    exponent: float = param(1.5, gt=0)
    noise_var: float = param(1.0, ge=0)
    b0: int = param(8, ge=1)
    samples_per_phase: int = param(2048, ge=1, smoke=4096)
    n_phases: int = param(4, ge=1, smoke=2)
    sgd_eta0: float = param(0.5, gt=0)
    nsgd_eta0: float = param(0.05, gt=0)
    n_seeds: int = param(16384, ge=2, le=runtime.MAX_SEEDS, doc="Monte Carlo seeds of the SGD members")
    nsgd_n_seeds: int = param(256, ge=2, le=runtime.MAX_SEEDS, doc="Monte Carlo seeds of the NSGD members",
                               smoke=2)
    curve_points: int = param(200, ge=2)


SGD_MEMBERS = ((2.0, 1.0), (th.SQRT2, th.SQRT2), (1.0, 2.0), (1 / th.SQRT2, 2.0))
NSGD_MEMBERS = tuple(th.NSGD_LINE) + ((1 / th.SQRT2, 2.0), (1.0, 2.0))


# The compiled recursion of theory.seesaw.expected_risk as a runtime.jit (a Plannable: `python -m sims plan`
# costs it instead of running it; a normal run calls the same function, so results are unchanged).
_recursion = runtime.jit(th.risk_recursion, static_argnames="normalized", name="expected_risk")


def expected_risk(eigs, m0, noise_var, lrs, batch_sizes, *, normalized=False, return_lrs=False):
    """:func:`theory.seesaw.expected_risk` (the exact second-moment recursion behind Seesaw Theorem 1 and
    Corollary 1): the same checks and the same compiled recursion, called through :func:`sims.runtime.jit`.

    Returns ``[steps + 1]`` float64 risks (and the ``[steps]`` effective rates when ``return_lrs``).
    Raises ValueError / TypeError as :func:`theory.seesaw.expected_risk`.
    """
    eigs, m0, lrs, bs = th.check_schedule(eigs, m0, lrs, batch_sizes)
    noise_var = check_real(noise_var, "noise_var", ge=0)
    with numerics.float64():
        risk, eff = _recursion(eigs, m0, noise_var, lrs, bs, bool(normalized))
        risk, eff = np.asarray(risk), np.asarray(eff)
    return (risk, eff) if return_lrs else risk


def _nsgd_effective_lrs(eigs, m0, p, lrs, bs):
    """Deterministic NSGD step sizes lr_t / sqrt(E||g_t||^2) from the exact second moments."""
    _, eff = expected_risk(eigs, m0, p.noise_var, lrs, bs, normalized=True, return_lrs=True)
    return eff


def run_equivalence(p: EquivalenceParams, ctx: cli.Context) -> dict:
    """Excess risk against samples of the (alpha, beta) phase schedules, SGD and NSGD.

    Source: Seesaw Theorem 1 (SGD) and Corollary 1 (NSGD), ``paper_configs/seesaw_equivalence.yaml``.
    Noisy Gaussian linear regression with power-law spectrum ``th.power_law_eigs(p.d, p.exponent)``
    (trace 1), ``w0 - w* = 1`` in every eigen-direction, label-noise variance ``p.noise_var``. Member
    ``(alpha, beta)`` runs ``p.n_phases`` phases of ``p.samples_per_phase`` samples each; phase k uses lr
    ``eta0 alpha^-k`` and nominal batch ``p.b0 beta^k`` (:func:`theory.seesaw.phase_schedule`; ``eta0`` is
    ``p.sgd_eta0`` or ``p.nsgd_eta0``). Curves come from the exact recursion
    (:func:`theory.seesaw.expected_risk`); points are Monte Carlo SGD at the phase ends over ``p.n_seeds``
    seeds (SGD members; ``seesaw.sgd_equivalence`` decides on them) and ``p.nsgd_n_seeds`` seeds (NSGD
    members, with the recursion's deterministic normalised step sizes, :func:`_nsgd_effective_lrs`).

    Returns, for ``tag = f"{family}{i}"`` with family ``sgd`` (``i < len(SGD_MEMBERS)`` = 4) and ``nsgd``
    (``i < len(NSGD_MEMBERS)`` = 7), members in the order of ``SGD_MEMBERS`` / ``NSGD_MEMBERS``:
      {tag}_ab [2]: the member's (alpha, beta): lr divisor and batch multiplier per phase.
      {tag}_samples [n_curve]: samples consumed at the curve points; ``n_curve <= p.curve_points`` is the
        number of distinct steps in ``linspace(0, steps, p.curve_points)`` (first point 0, last the end).
      {tag}_risk [n_curve]: exact expected excess risk ``E[0.5 sum_j l_j (w - w*)_j^2]`` at those points.
      {tag}_mc_samples [p.n_phases]: samples consumed at the end of each phase (``k p.samples_per_phase``).
      {tag}_mc [n_mc, p.n_phases]: Monte Carlo excess risk of each seed at the phase ends (seed axis 0;
        ``n_mc`` is ``p.n_seeds`` for SGD, ``p.nsgd_n_seeds`` for NSGD; seed i draws from
        ``runtime.seed_key(seed, i)`` in every member of a family); NaN when the member's batches are not
        integers (real-valued batches exist only in the recursion).
      {tag}_mc_mean [p.n_phases]: mean of ``{tag}_mc`` over the seeds (NaN likewise).
      {tag}_mc_se [p.n_phases]: its standard error, sample sd / sqrt(n_mc) (NaN likewise).
      {tag}_exact_at_mc [p.n_phases]: the exact expected excess risk at the phase ends.
      {tag}_steps []: total optimisation steps of the member's schedule.
      sgd_count [], nsgd_count []: the number of members of each family (4 and 7).

    ``ctx.summary``: ``max_abs_z_mc_vs_recursion``, the largest ``|mc_mean - exact_at_mc| / mc_se`` over
    all members and phase ends (NaN entries skipped).
    """
    eigs = th.power_law_eigs(p.d, p.exponent)
    e0 = np.ones(p.d)
    out: dict[str, np.ndarray] = {}
    bar = runtime.progress(len(SGD_MEMBERS) + len(NSGD_MEMBERS), "equivalence", unit="schedule")
    for family, members, eta0, n_mc in (("sgd", SGD_MEMBERS, p.sgd_eta0, p.n_seeds),
                                        ("nsgd", NSGD_MEMBERS, p.nsgd_eta0, p.nsgd_n_seeds)):
        for i, ab in enumerate(members):
            bar.update(1)
            lrs, bs = th.phase_schedule(eta0, p.b0, ab[0], ab[1], p.samples_per_phase, p.n_phases)
            exact = expected_risk(eigs, e0**2, p.noise_var, lrs, bs, normalized=family == "nsgd")
            samples = np.r_[0.0, np.cumsum(bs)]
            idx = np.unique(np.linspace(0, lrs.size, p.curve_points).astype(int))
            # Monte Carlo at phase ends; NSGD uses the exact deterministic normalisation.
            step_lrs = _nsgd_effective_lrs(eigs, e0**2, p, lrs, bs) if family == "nsgd" else lrs
            phase_end = np.searchsorted(samples, p.samples_per_phase * np.arange(1, p.n_phases + 1) - 1e-6)

            def piece(lrs=step_lrs, bs=bs, phase_end=phase_end, n_mc=n_mc):
                return {"mc": runtime.map_seeds(
                    lambda k: th.sgd_risk_path(k, jnp.asarray(eigs), jnp.asarray(e0), p.noise_var, lrs,
                                               bs)[phase_end], ctx.config.seed, n_mc, mesh=ctx.mesh)}

            if np.all(bs == np.round(bs)):
                per_seed = np.asarray(ctx.parts.get(f"{family}{i}", piece)["mc"], np.float64)
                mc = {"mean": per_seed.mean(axis=0), "se": per_seed.std(axis=0, ddof=1) / math.sqrt(n_mc)}
            else:  # real-valued batches (e.g. B0 * sqrt2^k) exist only in the recursion
                per_seed = np.full((n_mc, phase_end.size), np.nan)
                mc = {"mean": np.full(phase_end.shape, np.nan), "se": np.full(phase_end.shape, np.nan)}
            tag = f"{family}{i}"
            out[f"{tag}_mc"] = per_seed
            out[f"{tag}_ab"] = np.asarray(ab)
            out[f"{tag}_samples"] = samples[idx]
            out[f"{tag}_risk"] = exact[idx]
            out[f"{tag}_mc_samples"] = samples[phase_end]
            out[f"{tag}_mc_mean"], out[f"{tag}_mc_se"] = mc["mean"], mc["se"]
            out[f"{tag}_exact_at_mc"] = exact[phase_end]
            out[f"{tag}_steps"] = np.asarray(lrs.size)
        out[f"{family}_count"] = np.asarray(len(members))
    bar.close()
    z = [(out[f"{f}{i}_mc_mean"] - out[f"{f}{i}_exact_at_mc"]) / out[f"{f}{i}_mc_se"]
         for f, n in (("sgd", len(SGD_MEMBERS)), ("nsgd", len(NSGD_MEMBERS))) for i in range(n)]
    ctx.summary["max_abs_z_mc_vs_recursion"] = float(np.nanmax(np.abs(np.concatenate(z))))
    return out


@dataclasses.dataclass(frozen=True)
class LargeBatchParams:
    """NSGD recursion, cosine vs Seesaw vs fixed-lr ramp at equal samples, over initial batch sizes."""

    d: int = param(64, ge=1)
    exponent: float = param(1.5, gt=0)
    noise_vars: tuple[float, ...] = param((1.0, 0.01), ge=0)
    batch_sizes: tuple[int, ...] = param((4, 16, 64, 256), ge=1, smoke=2)
    total_samples: int = param(2**21, ge=1, smoke=2**16)
    eta0: float = param(0.05, gt=0)
    gamma: float = param(1.1, gt=1)
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)


def run_large_batch(p: LargeBatchParams, ctx: cli.Context) -> dict:
    """Final expected risk of NSGD under cosine, Seesaw and the fixed-lr ramp at equal samples, against
    the initial batch size, in the variance- and mean-dominated regimes.

    Source: Seesaw Section 5 / Fig. 3 (beyond the critical batch size),
    ``paper_configs/seesaw_large_batch.yaml``. Exact NSGD recursion (:func:`theory.seesaw.expected_risk`,
    ``normalized=True``) on the spectrum ``th.power_law_eigs(p.d, p.exponent)`` with ``m0 = 1``, nominal
    peak lr ``p.eta0``, ``p.total_samples`` samples per run. Cosine: constant batch B0, linear warmup then
    cosine to ``p.final_lr_frac`` (:func:`cosine_lrs`); Seesaw: real-valued batch ramp ``x p.gamma`` and lr
    ``x p.gamma^-1/2`` at each milestone (:func:`seesaw_schedule`, ``integer=False``); fixed_lr: the same
    batch ramp without lr decay after warmup.

    Returns (``n_noise = len(p.noise_vars)``, ``n_batch = len(p.batch_sizes)``):
      batch_sizes [n_batch]: initial batch size B0 (samples).
      noise_vars [n_noise]: label-noise variance sigma^2 of each row.
      cosine [n_noise, n_batch]: final expected excess risk of the cosine schedule.
      seesaw [n_noise, n_batch]: final expected excess risk of Seesaw.
      fixed_lr [n_noise, n_batch]: final expected excess risk of the fixed-lr batch ramp.
      cosine_steps [n_noise, n_batch]: optimisation steps of the cosine run, ``ceil(total_samples / B0)``
        (float; the same in every row).
      seesaw_steps [n_noise, n_batch]: optimisation steps of the Seesaw (= fixed-lr) ramp (float; the same
        in every row).
      b_noise [n_noise, n_batch]: noise-scale proxy :func:`theory.seesaw.noise_scale` at initialisation
        (batch size, samples); constant along the batch axis.

    ``ctx.summary``: no keys set.
    """
    eigs = th.power_law_eigs(p.d, p.exponent)
    out = {"batch_sizes": np.asarray(p.batch_sizes), "noise_vars": np.asarray(p.noise_vars)}
    shape = (len(p.noise_vars), len(p.batch_sizes))
    for name in ("cosine", "seesaw", "fixed_lr", "cosine_steps", "seesaw_steps", "b_noise"):
        out[name] = np.zeros(shape)
    bar = runtime.progress(len(p.noise_vars) * len(p.batch_sizes), "large batch", unit="case")
    for i, s2 in enumerate(p.noise_vars):
        out["b_noise"][i, :] = th.noise_scale(eigs, np.ones(p.d), s2)
        for j, b0 in enumerate(p.batch_sizes):
            bar.update(1)
            n = int(math.ceil(p.total_samples / b0))
            lr_c = p.eta0 * cosine_lrs(n, p.warmup_frac, p.final_lr_frac)
            out["cosine"][i, j] = expected_risk(eigs, 1.0, s2, lr_c, np.full(n, float(b0)),
                                                   normalized=True)[-1]
            for key, fixed in (("seesaw", False), ("fixed_lr", True)):
                m, b = seesaw_schedule(p.total_samples, b0, p.gamma, p.warmup_frac, p.final_lr_frac,
                                       fixed_lr=fixed, integer=False)
                out[key][i, j] = expected_risk(eigs, 1.0, s2, p.eta0 * m, b, normalized=True)[-1]
                out["seesaw_steps"][i, j] = b.size
            out["cosine_steps"][i, j] = n
    bar.close()
    return out
