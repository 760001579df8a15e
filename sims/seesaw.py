"""Simulations behind the Seesaw figures (Meterez et al., ICLR 2026, arXiv 2510.14717).

Experiments (``paper_configs/seesaw_*.yaml``):

- ``equivalence``: excess risk against samples for SGD and NSGD phase schedules (alpha, beta) on noisy
  Gaussian linear regression; the exact recursion (``theory.seesaw.expected_risk``) as curves and
  Monte Carlo SGD over sharded seeds as points with standard errors.
- ``large_batch``: final-risk gap of Seesaw and of the fixed-lr ramp over cosine decay against the batch
  size, in the variance- and mean-dominated regimes (Figure 3's message), from the exact NSGD recursion.
- ``lm``: Figure 1 at small scale: a character-level transformer (flax + optax AdamW) on the Python
  standard library's source read at run time; cosine vs Seesaw (and the fixed-lr ramp) at equal tokens,
  validation loss against tokens and steps, with the measured gradient noise scale.
- ``adam_line``: Figure 2 at small scale: the same model under phase schedules (alpha, beta) on the
  switch points where the reference cosine halves, members on the alpha*sqrt(beta) = 2 line and off it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from sims import cli, runtime
from sims.config import param
from sims.data import stdlib_text
from theory import seesaw as th

# ---------------------------------------------------------------------------------------------------
# equivalence
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class EquivalenceParams:
    """Noisy linear regression, phase schedules at equal samples per phase."""

    d: int = param(64, ge=1)
    exponent: float = param(1.5, gt=0)
    noise_var: float = param(1.0, ge=0)
    b0: int = param(8, ge=1)
    samples_per_phase: int = param(4096, ge=1)
    n_phases: int = param(4, ge=1)
    sgd_eta0: float = param(0.5, gt=0)
    nsgd_eta0: float = param(0.05, gt=0)
    n_seeds: int = param(256, ge=2, le=runtime.MAX_SEEDS, doc="Monte Carlo seeds of the SGD members")
    nsgd_n_seeds: int = param(256, ge=2, le=runtime.MAX_SEEDS, doc="Monte Carlo seeds of the NSGD members")
    curve_points: int = param(200, ge=2)


SGD_MEMBERS = ((2.0, 1.0), (th.SQRT2, th.SQRT2), (1.0, 2.0), (1 / th.SQRT2, 2.0))
NSGD_MEMBERS = tuple(th.NSGD_LINE) + ((1 / th.SQRT2, 2.0), (1.0, 2.0))


def _nsgd_effective_lrs(eigs, m0, p, lrs, bs):
    """Deterministic NSGD step sizes lr_t / sqrt(E||g_t||^2) from the exact second moments."""
    _, eff = th.expected_risk(eigs, m0, p.noise_var, lrs, bs, normalized=True, return_lrs=True)
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
            exact = th.expected_risk(eigs, e0**2, p.noise_var, lrs, bs, normalized=family == "nsgd")
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


# ---------------------------------------------------------------------------------------------------
# large_batch
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LargeBatchParams:
    """NSGD recursion, cosine vs Seesaw vs fixed-lr ramp at equal samples, over initial batch sizes."""

    d: int = param(256, ge=1)
    exponent: float = param(1.5, gt=0)
    noise_vars: tuple[float, ...] = param((1.0, 0.01), ge=0)
    batch_sizes: tuple[int, ...] = param((4, 8, 16, 32, 64, 128, 256), ge=1)
    total_samples: int = param(2**20, ge=1)
    eta0: float = param(0.05, gt=0)
    gamma: float = param(2.0, gt=1)
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)


def warmup_ramp(t: np.ndarray, warmup_frac: float) -> np.ndarray:
    """lr multiplier of the linear warmup 0.1 -> 1 at training fraction ``t`` (tokens or samples)."""
    return 0.1 + 0.9 * t / warmup_frac if warmup_frac > 0 else np.ones_like(t)


def cosine_lrs(n_steps: int, warmup_frac: float, final_lr_frac: float) -> np.ndarray:
    """``[n_steps]`` lr multipliers: linear warmup 0.1 -> 1, then cosine to ``final_lr_frac``."""
    t = np.arange(n_steps) / n_steps
    post = np.clip((t - warmup_frac) / (1 - warmup_frac), 0, 1)
    cos = final_lr_frac + (1 - final_lr_frac) * 0.5 * (1 + np.cos(np.pi * post))
    return np.where(t < warmup_frac, warmup_ramp(t, warmup_frac), cos)


def seesaw_schedule(total, b0, gamma, warmup_frac, final_lr_frac, unit=1, fixed_lr=False, integer=True):
    """Per-step (lr multiplier, batch) of Seesaw in sample units; warmup lr as in :func:`cosine_lrs`.

    ``fixed_lr=True`` gives the fixed-lr ramp (same batch ramp, no lr decay after warmup)."""
    batches, mults = th.seesaw_batches(total, unit, b0, warmup_frac=warmup_frac,
                                       final_lr_frac=final_lr_frac, gamma=gamma, integer=integer)
    t = np.r_[0, np.cumsum(batches[:-1])] * unit / total
    lr = np.where(t < warmup_frac, warmup_ramp(t, warmup_frac), 1.0 if fixed_lr else mults)
    return lr, batches.astype(np.float64)


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
            out["cosine"][i, j] = th.expected_risk(eigs, 1.0, s2, lr_c, np.full(n, float(b0)),
                                                   normalized=True)[-1]
            for key, fixed in (("seesaw", False), ("fixed_lr", True)):
                m, b = seesaw_schedule(p.total_samples, b0, p.gamma, p.warmup_frac, p.final_lr_frac,
                                       fixed_lr=fixed, integer=False)
                out[key][i, j] = th.expected_risk(eigs, 1.0, s2, p.eta0 * m, b, normalized=True)[-1]
                out["seesaw_steps"][i, j] = b.size
            out["cosine_steps"][i, j] = n
    bar.close()
    return out


# ---------------------------------------------------------------------------------------------------
# lm
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LMParams:
    """Character-level transformer LM, AdamW, cosine vs Seesaw at equal tokens."""

    n_chars: int = param(2_000_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    seq_len: int = param(64, ge=8)
    d_model: int = param(64, ge=8)
    n_heads: int = param(4, ge=1)
    n_layers: int = param(2, ge=1)
    batch_sizes: tuple[int, ...] = param((8, 32), ge=1, doc="B0 in sequences")
    micro_batch: int = param(8, ge=1, doc="sequences per accumulated micro-batch (a speed knob only)")
    total_tokens: int = param(1_000_000, ge=1000)
    lr: float = param(3e-3, gt=0)
    gamma: float = param(1.1, gt=1)
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)
    schedules: tuple[Literal["cosine", "seesaw", "fixed_lr"], ...] = param(("cosine", "seesaw", "fixed_lr"))
    n_seeds: int = param(2, ge=1, le=runtime.MAX_SEEDS)
    n_evals: int = param(20, ge=2)
    val_windows: int = param(256, ge=1)
    noise_scale_batches: int = param(64, ge=2, doc="micro-batches averaged to estimate the noise scale")

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")


def _model(p: LMParams):
    """The character-level transformer (flax): byte embedding (256 symbols, width ``p.d_model``) plus a
    learned position embedding, ``p.n_layers`` pre-LayerNorm blocks (causal multi-head attention with
    ``p.n_heads`` heads, GELU MLP of width ``4 d_model``), a final LayerNorm and a 256-way readout.
    Applied to ``[batch, p.seq_len]`` int tokens it gives ``[batch, p.seq_len, 256]`` next-byte logits."""

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x):
            mask = nn.make_causal_mask(jnp.ones(x.shape[:-1], jnp.int32))
            h = nn.MultiHeadDotProductAttention(num_heads=p.n_heads, dtype=jnp.float32,
                                                param_dtype=jnp.float32)(
                nn.LayerNorm(param_dtype=jnp.float32)(x), mask=mask)
            x = x + h
            h = nn.LayerNorm(param_dtype=jnp.float32)(x)
            h = nn.Dense(4 * p.d_model, param_dtype=jnp.float32)(h)
            return x + nn.Dense(p.d_model, param_dtype=jnp.float32)(nn.gelu(h))

    class CharLM(nn.Module):
        @nn.compact
        def __call__(self, tokens):
            x = nn.Embed(256, p.d_model, param_dtype=jnp.float32)(tokens)
            x = x + self.param("pos", nn.initializers.normal(0.02), (p.seq_len, p.d_model), jnp.float32)
            for _ in range(p.n_layers):
                x = Block()(x)
            return nn.Dense(256, param_dtype=jnp.float32)(nn.LayerNorm(param_dtype=jnp.float32)(x))

    return CharLM()


def lm_schedule(p: LMParams, b0: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-step (lr, batch in sequences) for ``kind`` in cosine / seesaw / fixed_lr at ``p.total_tokens``.

    Seesaw batches are the released scheduler's floored batches."""
    if kind == "cosine":
        n = int(math.ceil(p.total_tokens / (p.seq_len * b0)))
        return p.lr * cosine_lrs(n, p.warmup_frac, p.final_lr_frac), np.full(n, b0, np.int64)
    m, b = seesaw_schedule(p.total_tokens, b0, p.gamma, p.warmup_frac, p.final_lr_frac, unit=p.seq_len,
                           fixed_lr=kind == "fixed_lr")
    return p.lr * m, b.astype(np.int64)


def _lm_functions(p: LMParams):
    """Model, optimizer and pure step functions; data arrays are arguments (not compiled-in constants)."""
    model = _model(p)
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.inject_hyperparams(optax.adamw)(learning_rate=p.lr, b1=0.9, b2=0.95, eps=1e-8,
                                                            weight_decay=0.0))

    def loss_fn(params, tokens, weights=None):
        """Mean next-character cross-entropy (nats); ``weights`` ``[n]`` weighs whole sequences."""
        logits = model.apply(params, tokens[:, :-1])
        per_seq = optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean(axis=1)
        return per_seq.mean() if weights is None else jnp.sum(weights * per_seq)

    def windows(train, key, n):
        starts = jax.random.randint(key, (n,), 0, train.shape[0] - p.seq_len - 1)
        return jax.vmap(lambda s: jax.lax.dynamic_slice(train, (s,), (p.seq_len + 1,)))(starts)

    def init(key):
        params = model.init(key, jnp.zeros((1, p.seq_len), jnp.int32))
        return params, opt.init(params)

    def train_step(state, train, key, lr, n_seq, active):
        """One AdamW step on exactly ``n_seq`` sequences: ceil(n_seq / micro_batch) micro-batches, the
        last one masked, gradients accumulated (one compiled step serves every batch size)."""
        params, opt_state = state
        slots = jnp.arange(p.micro_batch)

        def body(i, g):
            toks = windows(train, jax.random.fold_in(key, i), p.micro_batch).astype(jnp.int32)
            w = (i * p.micro_batch + slots < n_seq).astype(jnp.float32) / jnp.maximum(n_seq, 1)
            return jax.tree.map(jnp.add, g, jax.grad(loss_fn)(params, toks, w))

        zeros = jax.tree.map(jnp.zeros_like, params)
        grads = jax.lax.fori_loop(0, (n_seq + p.micro_batch - 1) // p.micro_batch, body, zeros)
        hp = opt_state[1].hyperparams
        hp["learning_rate"] = jnp.asarray(lr, hp["learning_rate"].dtype)
        updates, new_opt = opt.update(grads, opt_state, params)
        new_params = optax.apply_updates(params, updates)
        keep = lambda new, old: jnp.where(active, new, old)  # noqa: E731 - padded steps change nothing
        return (jax.tree.map(keep, new_params, params), jax.tree.map(keep, new_opt, opt_state))

    def val_loss(params, val_toks):
        return loss_fn(params, val_toks.astype(jnp.int32))

    def noise_scale(params, train, key):
        """McCandlish et al. B_simple from micro-batch (b) and averaged (K b) gradient norms."""
        k = p.noise_scale_batches
        gs = jax.vmap(lambda i: jax.grad(loss_fn)(params, windows(
            train, jax.random.fold_in(key, i), p.micro_batch).astype(jnp.int32)))(
            jnp.arange(k))
        flat = jax.vmap(lambda g: jnp.concatenate([x.ravel() for x in jax.tree.leaves(g)]))(gs)
        small = jnp.mean(jnp.sum(flat**2, axis=1))
        big = jnp.sum(jnp.mean(flat, axis=0) ** 2)
        b_s, b_b = p.micro_batch, p.micro_batch * k
        g2 = (b_b * big - b_s * small) / (b_b - b_s)
        trace = (small - big) / (1 / b_s - 1 / b_b)
        return trace / g2

    return init, train_step, val_loss, noise_scale


CHUNK = 32  # training steps per compiled call


def train_lm(p: LMParams, b0: int, kind: str, seed: int, mesh, data, schedule=None) -> dict[str, np.ndarray]:
    """Train ``p.n_seeds`` seeds (a sharded leading axis) with one schedule; validation loss recorded
    ``p.n_evals`` times at equal token counts.

    ``kind`` is ``cosine``, ``seesaw`` or ``fixed_lr`` (:func:`lm_schedule` at initial batch ``b0``
    sequences), unless ``schedule`` gives the per-step ``(lrs, batches)`` itself (``kind`` is then only
    the progress label); ``data`` is ``(train, val)``, 1-D uint8 character arrays. Evaluation
    ``e = 1..n_evals`` is at the first step where ``e / n_evals`` of ``p.total_tokens`` is reached.
    Seed ``i`` starts from the same initialisation whatever the schedule (and step t draws its data
    from the same key), so runs of one seed are paired across schedules.

    Returns:
      tokens [n_evals + 1]: tokens consumed at each evaluation (0 first).
      steps [n_evals + 1]: optimisation step of each evaluation (0 first).
      val_loss [n_seeds, n_evals + 1]: validation next-character cross-entropy (nats per character), mean
        over ``p.val_windows`` evenly spaced windows of the validation split.
      noise_scale [n_seeds, 2]: gradient noise scale B_simple (sequences) after evaluation
        ``n_evals // 2`` and after the last one.
      total_steps []: optimisation steps of the whole schedule.
      batches [total_steps]: the batch of each step (sequences).
    """
    train, val = data
    n_val = val.shape[0] - p.seq_len - 1
    val_toks = np.stack([np.asarray(val[s:s + p.seq_len + 1])
                         for s in np.linspace(0, n_val, p.val_windows).astype(np.int64)])
    lrs, batches = lm_schedule(p, b0, kind) if schedule is None else schedule
    tokens = np.r_[0, np.cumsum(batches)] * p.seq_len
    init, train_step, val_loss, noise_scale = _lm_functions(p)
    # Eval points: the first step at which each 1/n_evals of the tokens is reached.
    marks = np.minimum(np.searchsorted(tokens, p.total_tokens * np.arange(1, p.n_evals + 1) / p.n_evals),
                       lrs.size)
    n_seeds = p.n_seeds
    idx, _ = runtime.seed_indices(n_seeds, mesh)

    @jax.jit
    def init_all(idx):
        return jax.vmap(lambda i: init(runtime.seed_key(seed, i)))(idx)

    # Fixed-length chunks (padded with inactive steps): one compilation serves every schedule and batch.
    @jax.jit
    def run_chunk(state, train, idx, start, lr_c, nseq_c, act_c):
        def one(state, i):
            def step(st, inp):
                t, lr, nseq, act = inp
                key = jax.random.fold_in(jax.random.fold_in(runtime.seed_key(seed, i), 1), t)
                return train_step(st, train, key, lr, nseq, act), None

            return jax.lax.scan(step, state, (start + jnp.arange(CHUNK), lr_c, nseq_c, act_c))[0]

        return jax.vmap(one)(state, idx)

    evaluate = jax.jit(jax.vmap(lambda st, v: val_loss(st[0], v), in_axes=(0, None)))

    @jax.jit
    def measure_noise(state, train, idx, salt):
        return jax.vmap(lambda st, i: noise_scale(st[0], train, jax.random.fold_in(
            runtime.seed_key(seed, i), salt)))(state, idx)

    state = init_all(idx)
    losses, noise = [runtime.to_host(evaluate(state, val_toks))], []
    done = 0
    with runtime.progress(lrs.size, f"lm B0={b0} {kind}") as bar:
        for e, m in enumerate(marks):
            while done < m:
                n = min(CHUNK, m - done)
                pad = CHUNK - n
                lr_c = np.r_[lrs[done:done + n], np.zeros(pad)]
                nseq_c = np.r_[batches[done:done + n], np.zeros(pad, np.int64)].astype(np.int32)
                act_c = np.r_[np.ones(n, bool), np.zeros(pad, bool)]
                state = run_chunk(state, train, idx, done, lr_c, nseq_c, act_c)
                done += n
                bar.update(n)
            losses.append(runtime.to_host(evaluate(state, val_toks)))
            if e in (p.n_evals // 2 - 1, p.n_evals - 1):
                noise.append(runtime.to_host(measure_noise(state, train, idx, 7 + e)))
    val_loss_arr = np.stack(losses, axis=1)[:n_seeds]
    return {"tokens": tokens[np.r_[0, marks]], "steps": np.r_[0, marks], "val_loss": val_loss_arr,
            "noise_scale": np.stack(noise, axis=1)[:n_seeds], "total_steps": np.asarray(lrs.size),
            "batches": batches}


def run_lm(p: LMParams, ctx: cli.Context) -> dict:
    """Character-level transformer LM (AdamW), cosine vs Seesaw (and the fixed-lr ramp) at equal tokens.

    Source: Seesaw Fig. 1 / Table 1 at small scale, ``paper_configs/seesaw_lm.yaml``. The first
    ``p.n_chars`` characters of the Python standard library (:func:`stdlib_text`), the last ``p.val_frac``
    held out for validation; one :func:`train_lm` per (B0, schedule), each a resumable part.

    Returns (``n_b0 = len(p.batch_sizes)``, ``n_sched = len(p.schedules)``, ``n_evals = p.n_evals``),
    indexed ``[b, s]`` by ``batch_sizes[b]`` and ``schedules[s]`` (the arrays of :func:`train_lm`, stacked):
      batch_sizes [n_b0]: initial batch sizes B0 (sequences of ``p.seq_len`` tokens).
      schedules [n_sched]: schedule names (strings: cosine, seesaw, fixed_lr).
      tokens [n_b0, n_sched, n_evals + 1]: tokens consumed at each evaluation (0 first).
      steps [n_b0, n_sched, n_evals + 1]: optimisation step of each evaluation (0 first).
      val_loss [n_b0, n_sched, n_seeds, n_evals + 1]: validation cross-entropy (nats per character);
        seed axis 2, seed i shares its initialisation and data keys across schedules (paired).
      noise_scale [n_b0, n_sched, n_seeds, 2]: gradient noise scale B_simple (sequences) after evaluation
        ``n_evals // 2`` and at the end; seed axis 2.
      total_steps [n_b0, n_sched]: optimisation steps of each schedule.
      b{b0}_{kind}_batches [total_steps]: per-step batch (sequences), one array per (B0, schedule).

    ``ctx.summary``: ``noise_scale_cosine_mid_and_end_mean``, ``{B0: mean of the cosine run's
    noise_scale over seeds and both measurements}`` (empty when ``cosine`` is not among ``p.schedules``).
    """
    text = stdlib_text(p.n_chars)
    cut = int(len(text) * (1 - p.val_frac))
    data = (jnp.asarray(text[:cut]), jnp.asarray(text[cut:]))
    out = {"batch_sizes": np.asarray(p.batch_sizes), "schedules": np.asarray(p.schedules)}
    runs = [[ctx.parts.get(f"b{b0}_{kind}", lambda b0=b0, kind=kind: train_lm(p, b0, kind, ctx.config.seed,
                                                                              ctx.mesh, data))
             for kind in p.schedules] for b0 in p.batch_sizes]
    for key in ("tokens", "steps", "val_loss", "noise_scale", "total_steps"):
        out[key] = np.stack([np.stack([np.asarray(r[key]) for r in row]) for row in runs])
    for b0, row in zip(p.batch_sizes, runs):
        for kind, r in zip(p.schedules, row):
            out[f"b{b0}_{kind}_batches"] = r["batches"]
    if "cosine" in p.schedules:
        c = list(p.schedules).index("cosine")
        ctx.summary["noise_scale_cosine_mid_and_end_mean"] = {
            int(b0): float(np.mean(out["noise_scale"][b, c])) for b, b0 in enumerate(p.batch_sizes)}
    else:
        ctx.summary["noise_scale_cosine_mid_and_end_mean"] = {}
    return out


# ---------------------------------------------------------------------------------------------------
# adam_line
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class AdamLineParams:
    """Character-level transformer LM, AdamW, phase schedules (alpha, beta) at equal tokens (Fig. 2)."""

    n_chars: int = param(1_000_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    seq_len: int = param(32, ge=8)
    d_model: int = param(32, ge=8)
    n_heads: int = param(2, ge=1)
    n_layers: int = param(2, ge=1)
    b0: int = param(8, ge=1, doc="initial batch in sequences")
    micro_batch: int = param(8, ge=1, doc="sequences per accumulated micro-batch (a speed knob only)")
    total_tokens: int = param(200_000, ge=1000)
    lr: float = param(1e-2, gt=0)
    gamma: float = param(2.0, gt=1, doc="switch k where the reference cosine crosses gamma^-k")
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)
    log2_alphas: tuple[float, ...] = param((1.0, 0.75, 0.5), doc="member i divides the lr by 2^a_i per switch")
    log2_betas: tuple[float, ...] = param((0.0, 0.5, 1.0), ge=0, doc="and multiplies the batch by 2^b_i")
    n_seeds: int = param(4, ge=1, le=runtime.MAX_SEEDS)
    n_evals: int = param(10, ge=2)
    val_windows: int = param(256, ge=1)
    noise_scale_batches: int = param(32, ge=2, doc="micro-batches averaged to estimate the noise scale")

    def __post_init__(self):
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) must be divisible by n_heads ({self.n_heads})")
        if len(self.log2_alphas) != len(self.log2_betas):
            raise ValueError(f"log2_alphas ({len(self.log2_alphas)}) and log2_betas ({len(self.log2_betas)}) "
                             "must have one entry per member")

    def lm_params(self) -> LMParams:
        """The :class:`LMParams` of the shared model, data and optimizer (schedule fields unused)."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(LMParams) if hasattr(self, f.name)}
        return LMParams(**shared, batch_sizes=(self.b0,), schedules=("cosine",))


def switch_tokens(total_tokens, warmup_frac, final_lr_frac, gamma) -> list[int]:
    """Token counts where the post-warmup reference cosine (to ``final_lr_frac``) crosses ``gamma^-k``,
    k = 1..floor(ln final_lr_frac / ln(1/gamma)): the switch points of Seesaw Algorithm 1 (the same formula
    as ``theory.seesaw._seesaw_milestones``, which is private; for gamma = 2 they are the points where the
    cosine halves, Fig. 2: 53.54%, 73.23%, 89.34% of the post-warmup tokens)."""
    warm = warmup_frac * total_tokens
    k_max = int(math.log(final_lr_frac) / math.log(1.0 / gamma) + 1e-12)
    out = []
    for k in range(1, k_max + 1):
        c = 2.0 * (gamma ** (-k) - final_lr_frac) / (1.0 - final_lr_frac) - 1.0
        out.append(int(warm + round((total_tokens - warm) * math.acos(max(-1.0, min(1.0, c))) / math.pi)))
    return out


def line_schedule(total_tokens, seq_len, b0, alpha, beta, *, gamma, warmup_frac, final_lr_frac):
    """Per-step (lr multiplier, batch in sequences) of the phase process (alpha, beta) on the switch
    points of :func:`switch_tokens`: warmup at ``b0`` with the lr ramp 0.1 -> 1 of :func:`cosine_lrs`; at
    switch k the lr multiplier is ``alpha^-k`` and the batch ``floor(b0 beta^k)`` (the running float
    value floored, as in the released scheduler). Steps continue until ``total_tokens`` are consumed.

    Source: Seesaw Fig. 2 (150M, equivalence line alpha sqrt(beta) = 2, switch points where cosine
    halves). ``(sqrt(gamma), gamma)`` is Seesaw (:func:`theory.seesaw.seesaw_batches`); ``(gamma, 1)`` the
    step-decay base.
    Returns ``(lr_mult [steps], batches [steps] int64)``.
    Raises ValueError: ``alpha <= 0``, ``beta < 1`` or ``b0 < 1``.
    """
    if alpha <= 0 or beta < 1 or b0 < 1:
        raise ValueError(f"need alpha > 0, beta >= 1, b0 >= 1; got {alpha}, {beta}, {b0}")
    ms = switch_tokens(total_tokens, warmup_frac, final_lr_frac, gamma)
    cur_f, k, tokens = float(b0), 0, 0
    lrs, batches = [], []
    while tokens < total_tokens:
        if k < len(ms) and tokens >= ms[k]:
            k += 1
            cur_f *= beta
        b = math.floor(cur_f + 1e-9)
        t = tokens / total_tokens
        lrs.append(float(warmup_ramp(np.asarray(t), warmup_frac)) if t < warmup_frac else alpha ** (-k))
        batches.append(b)
        tokens += b * seq_len
    return np.asarray(lrs), np.asarray(batches, np.int64)


def run_adam_line(p: AdamLineParams, ctx: cli.Context) -> dict:
    """Character-level transformer LM (AdamW) under phase schedules (alpha, beta) at equal tokens.

    Source: Seesaw Fig. 2 at small scale, ``paper_configs/seesaw_adam_line.yaml``: schedules with equal
    ``alpha sqrt(beta)`` (Corollary 1's invariant for normalized SGD, the paper's proxy for Adam) should
    reach the same loss; off-line members (e.g. ``alpha beta = 2``, SGD's invariant) should not. Model,
    data, optimizer and training loop are those of the ``lm`` experiment (:func:`train_lm` with
    ``p.lm_params()``); member i uses :func:`line_schedule` with ``alpha = 2^log2_alphas[i]``,
    ``beta = 2^log2_betas[i]`` at initial batch ``p.b0``, each a resumable part; seed i has the same
    initialisation in every member (paired comparisons).

    Returns (``n_members = len(p.log2_alphas)``, ``n_evals = p.n_evals``):
      alphas [n_members], betas [n_members]: each member's lr divisor and batch multiplier per switch.
      final_val_loss [n_members, n_seeds]: validation loss (nats/char) at the end of training.
      val_loss [n_members, n_seeds, n_evals + 1]: validation loss at each evaluation (0 first).
      tokens [n_members, n_evals + 1]: tokens consumed at each evaluation.
      steps [n_members, n_evals + 1]: optimisation step of each evaluation.
      total_steps [n_members]: optimisation steps of each schedule.
      noise_scale [n_members, n_seeds, 2]: gradient noise scale B_simple (sequences) after evaluation
        ``n_evals // 2`` and at the end.
      b0 []: the initial batch (sequences).

    ``ctx.summary``: ``noise_scale_base_mean`` (member 0, mean over seeds and both measurements),
    ``final_loss_mean`` (per member, mean over seeds).
    """
    lp = p.lm_params()
    text = stdlib_text(p.n_chars)
    cut = int(len(text) * (1 - p.val_frac))
    data = (jnp.asarray(text[:cut]), jnp.asarray(text[cut:]))
    alphas = 2.0 ** np.asarray(p.log2_alphas)
    betas = 2.0 ** np.asarray(p.log2_betas)
    runs = []
    for i, (a, b) in enumerate(zip(alphas, betas)):
        m, bs = line_schedule(p.total_tokens, p.seq_len, p.b0, float(a), float(b), gamma=p.gamma,
                              warmup_frac=p.warmup_frac, final_lr_frac=p.final_lr_frac)
        runs.append(ctx.parts.get(f"member{i}", lambda m=m, bs=bs, i=i: train_lm(
            lp, p.b0, f"member{i}", ctx.config.seed, ctx.mesh, data, schedule=(p.lr * m, bs))))
    out = {"alphas": alphas, "betas": betas, "b0": np.asarray(p.b0),
           "val_loss": np.stack([r["val_loss"] for r in runs]),
           "tokens": np.stack([r["tokens"] for r in runs]), "steps": np.stack([r["steps"] for r in runs]),
           "total_steps": np.asarray([int(r["total_steps"]) for r in runs]),
           "noise_scale": np.stack([r["noise_scale"] for r in runs])}
    out["final_val_loss"] = out["val_loss"][:, :, -1]
    ctx.summary["noise_scale_base_mean"] = float(np.mean(out["noise_scale"][0]))
    ctx.summary["final_loss_mean"] = out["final_val_loss"].mean(axis=1).tolist()
    return out


EXPERIMENTS = {
    "equivalence": cli.Experiment(EquivalenceParams, run_equivalence, seed_axes={
        **{f"sgd{i}_mc": 0 for i in range(len(SGD_MEMBERS))},
        **{f"nsgd{i}_mc": 0 for i in range(len(NSGD_MEMBERS))}}),
    "large_batch": cli.Experiment(LargeBatchParams, run_large_batch),  # the exact recursion: no seeds
    "lm": cli.Experiment(LMParams, run_lm, seed_axes={"val_loss": 2, "noise_scale": 2}),
    "adam_line": cli.Experiment(AdamLineParams, run_adam_line,
                                seed_axes={"val_loss": 1, "final_val_loss": 1, "noise_scale": 1}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
