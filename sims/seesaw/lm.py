"""Seesaw experiments with a character-level transformer (:class:`sims.models.Transformer`, causal) on the
Python standard library's source, trained with AdamW: ``lm`` (cosine vs Seesaw vs the fixed-lr ramp at
equal tokens, Figure 1) and ``adam_line`` (phase schedules on and off the alpha sqrt(beta) = 2 line,
Figure 2)."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sims import cli, runtime
from sims.config import param
from sims.data import stdlib_text
from sims.models import TransformerParams
from sims.seesaw.schedules import cosine_lrs, line_schedule, seesaw_schedule


@dataclasses.dataclass(frozen=True)
class LMParams(TransformerParams):
    """Character-level transformer LM (the :class:`TransformerParams` fields), AdamW, cosine vs Seesaw at
    equal tokens."""

    n_chars: int = param(1_000_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    batch_sizes: tuple[int, ...] = param((8, 32), ge=1, doc="B0 in sequences", smoke=1)
    micro_batch: int = param(8, ge=1, doc="sequences per accumulated micro-batch (a speed knob only)")
    total_tokens: int = param(200_000, ge=1000, smoke=2**15)
    lr: float = param(1e-2, gt=0)
    gamma: float = param(1.1, gt=1)
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)
    schedules: tuple[Literal["cosine", "seesaw", "fixed_lr"], ...] = param(("cosine", "seesaw", "fixed_lr"))
    n_seeds: int = param(2, ge=1, le=runtime.MAX_SEEDS)
    n_evals: int = param(10, ge=2, smoke=2)
    val_windows: int = param(256, ge=1, smoke=8)
    noise_scale_batches: int = param(32, ge=2, doc="micro-batches averaged to estimate the noise scale",
                                     smoke=2)


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
    model = p.model(vocab=256, n_out=256, causal=True)  # bytes in, next-byte logits out
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
        """Mean loss over the windows, ``VAL_CHUNK`` at a time (memory: one chunk's activations per seed)."""
        per_seq = jax.lax.map(lambda toks: loss_fn(params, toks[None].astype(jnp.int32)), val_toks,
                              batch_size=VAL_CHUNK)
        return per_seq.mean()

    def noise_scale(params, train, key):
        """McCandlish et al. B_simple from micro-batch (b) and averaged (K b) gradient norms; the K gradients
        are summed one at a time (memory: one gradient per seed, not K)."""
        k = p.noise_scale_batches

        def add(acc, i):
            toks = windows(train, jax.random.fold_in(key, i), p.micro_batch).astype(jnp.int32)
            g = jax.grad(loss_fn)(params, toks)
            flat = jnp.concatenate([x.ravel() for x in jax.tree.leaves(g)])
            return (acc[0] + flat, acc[1] + jnp.sum(flat**2)), None

        leaves = jax.tree.leaves(params)
        zero = (jnp.zeros(sum(x.size for x in leaves), leaves[0].dtype), jnp.zeros((), leaves[0].dtype))
        (g_sum, sq_sum), _ = jax.lax.scan(add, zero, jnp.arange(k))
        small = sq_sum / k
        big = jnp.sum((g_sum / k) ** 2)
        b_s, b_b = p.micro_batch, p.micro_batch * k
        g2 = (b_b * big - b_s * small) / (b_b - b_s)
        trace = (small - big) / (1 / b_s - 1 / b_b)
        return trace / g2

    return init, train_step, val_loss, noise_scale


CHUNK = 32  # training steps per compiled call
VAL_CHUNK = 128  # validation windows evaluated at once (per seed)
STEPS_SALT = 1  # fold_in salt of a seed's training-step keys, fold_in(., step), apart from its initialisation


@functools.lru_cache(maxsize=8)
def _compiled_lm(p: LMParams, seed: int):
    """The compiled functions of :func:`train_lm` for the model, data sizes and optimiser of ``p`` and the root
    ``seed``: ``(init_all, run_chunk, evaluate, measure_noise)``. Made once per ``(p, seed)`` and shared by
    every schedule trained with them (each schedule had traced and lowered its own, 4 programs each)."""
    init, train_step, val_loss, noise_scale = _lm_functions(p)

    @runtime.jit(name="init_all")
    def init_all(idx):
        return jax.vmap(lambda i: init(runtime.seed_key(seed, i)))(idx)

    # Fixed-length chunks (padded with inactive steps): one compilation serves every schedule and batch.
    @runtime.jit(name="run_chunk")
    def run_chunk(state, train, idx, start, lr_c, nseq_c, act_c):
        def one(state, i):
            def step(st, inp):
                t, lr, nseq, act = inp
                key = jax.random.fold_in(jax.random.fold_in(runtime.seed_key(seed, i), STEPS_SALT), t)
                return train_step(st, train, key, lr, nseq, act), None

            return jax.lax.scan(step, state, (start + jnp.arange(CHUNK), lr_c, nseq_c, act_c))[0]

        return jax.vmap(one)(state, idx)

    evaluate = runtime.jit(jax.vmap(lambda st, v: val_loss(st[0], v), in_axes=(0, None)), name="evaluate")

    @runtime.jit(name="measure_noise")
    def measure_noise(state, train, idx, salt):
        return jax.vmap(lambda st, i: noise_scale(st[0], train, jax.random.fold_in(
            runtime.seed_key(seed, i), salt)))(state, idx)

    return init_all, run_chunk, evaluate, measure_noise


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
    # Eval points: the first step at which each 1/n_evals of the tokens is reached.
    marks = np.minimum(np.searchsorted(tokens, p.total_tokens * np.arange(1, p.n_evals + 1) / p.n_evals),
                       lrs.size)
    n_seeds = p.n_seeds
    init_all, run_chunk, evaluate, measure_noise = _compiled_lm(p, seed)

    # Seeds in calls of runtime.chunk_size per device, each device running the one-device programs on its
    # own seeds (as runtime.map_batch does): the same bits on 1 or many devices. While planning, one call
    # over the mesh stands for the devices' calls.
    if runtime.is_planning():
        local, k = [(0, None)], 0
        chunks = [runtime.shard_rows(r.astype(np.int32), mesh) for r in runtime.batch_chunks(n_seeds, mesh)]
        data_on = {0: (train, val_toks)}
    else:
        local, k = runtime.local_devices(mesh), runtime.chunk_size(n_seeds)
        chunks = runtime.batch_chunks(n_seeds, mesh)
        data_on = {d: runtime.on_device((train, val_toks), dev) for d, dev in local}
    losses_c, noise_c = [], []
    with runtime.progress(lrs.size * len(chunks), f"lm B0={b0} {kind}") as bar:
        for rows in chunks:
            idx = {d: rows if dev is None else jax.device_put(rows[d * k:(d + 1) * k].astype(np.int32), dev)
                   for d, dev in local}
            state = {d: init_all(idx[d]) for d, _ in local}
            losses = [runtime.gather([evaluate(state[d], data_on[d][1]) for d, _ in local])]
            noise = []
            done = 0
            for e, m in enumerate(marks):
                while done < m:
                    n = min(CHUNK, m - done)
                    pad = CHUNK - n
                    lr_c = np.r_[lrs[done:done + n], np.zeros(pad)]
                    nseq_c = np.r_[batches[done:done + n], np.zeros(pad, np.int64)].astype(np.int32)
                    act_c = np.r_[np.ones(n, bool), np.zeros(pad, bool)]
                    # start and salt as 0-d arrays (values, not Python constants): one signature for every
                    # chunk in the paper-scale plan, as it is one compilation in the run
                    state = {d: run_chunk(state[d], data_on[d][0], idx[d], np.int64(done), lr_c, nseq_c, act_c)
                             for d, _ in local}
                    done += n
                    bar.update(n)
                losses.append(runtime.gather([evaluate(state[d], data_on[d][1]) for d, _ in local]))
                if e in (p.n_evals // 2 - 1, p.n_evals - 1):
                    noise.append(runtime.gather([measure_noise(state[d], data_on[d][0], idx[d], np.int64(7 + e))
                                                 for d, _ in local]))
            losses_c.append(np.stack(losses, axis=1))
            noise_c.append(np.stack(noise, axis=1))
    return {"tokens": tokens[np.r_[0, marks]], "steps": np.r_[0, marks],
            "val_loss": np.concatenate(losses_c)[:n_seeds], "noise_scale": np.concatenate(noise_c)[:n_seeds],
            "total_steps": np.asarray(lrs.size), "batches": batches}


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


@dataclasses.dataclass(frozen=True)
class AdamLineParams(TransformerParams):
    """Character-level transformer LM (the :class:`TransformerParams` fields), AdamW, phase schedules
    (alpha, beta) at equal tokens (Fig. 2)."""

    n_chars: int = param(1_000_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    b0: int = param(8, ge=1, doc="initial batch in sequences")
    micro_batch: int = param(8, ge=1, doc="sequences per accumulated micro-batch (a speed knob only)")
    total_tokens: int = param(200_000, ge=1000, smoke=2**15)
    lr: float = param(1e-2, gt=0)
    gamma: float = param(2.0, gt=1, doc="switch k where the reference cosine crosses gamma^-k")
    warmup_frac: float = param(0.1, ge=0, lt=1)
    final_lr_frac: float = param(0.1, gt=0, lt=1)
    log2_alphas: tuple[float, ...] = param((1.0, 0.75, 0.5, 0.0, 1.0),
                                         doc="member i divides the lr by 2^a_i per switch",
                                         smoke=2)
    log2_betas: tuple[float, ...] = param((0.0, 0.5, 1.0, 1.0, 1.0), ge=0, doc="and multiplies the batch by 2^b_i",
                                          smoke=2)
    n_seeds: int = param(3, ge=1, le=runtime.MAX_SEEDS)
    n_evals: int = param(10, ge=2, smoke=2)
    val_windows: int = param(256, ge=1, smoke=8)
    noise_scale_batches: int = param(32, ge=2, doc="micro-batches averaged to estimate the noise scale",
                                     smoke=2)

    def __post_init__(self):
        super().__post_init__()
        if len(self.log2_alphas) != len(self.log2_betas):
            raise ValueError(f"log2_alphas ({len(self.log2_alphas)}) and log2_betas ({len(self.log2_betas)}) "
                             "must have one entry per member")

    def lm_params(self) -> LMParams:
        """The :class:`LMParams` of the shared model, data and optimizer (schedule fields unused)."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(LMParams) if hasattr(self, f.name)}
        return LMParams(**shared, batch_sizes=(self.b0,), schedules=("cosine",))


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
