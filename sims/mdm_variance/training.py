"""The ``training`` experiment: the transformer denoiser trained with each estimator (Sec. 5, Tables 1 and 2 on the CPU proxy)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sims import cli, runtime
from sims.config import param
from sims.data import stdlib_text
from sims.mdm_variance import chain as salts
from sims.models import TransformerParams
from theory import mdm_variance as th

# ---------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TrainingParams(TransformerParams):
    seq_len: int = param(16, ge=4, doc="tokens per training window")
    n_chars: int = param(400_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    batch: int = param(4, ge=1, smoke=4, doc="windows per step (a vmapped loop: a smoke run cuts it)")
    steps: int = param(160, ge=2, smoke=4)
    lr: float = param(3e-3, gt=0)
    eps: float = param(1e-3, gt=0, lt=1)
    n_seeds: int = param(12, ge=2, le=runtime.MAX_SEEDS - 1)
    n_evals: int = param(2, ge=1, smoke=1)
    val_windows: int = param(48, ge=3, smoke=8)
    val_draws: int = param(4, ge=1, doc="fixed (t, mask) draws per validation window", smoke=2)
    n_bins: int = param(16, ge=4, doc="P-POTS bins")
    n_per_bin: int = param(128, ge=2, smoke=4)
    grad_samples: int = param(32, ge=3, doc="single-sample gradients per seed for the gradient variance",
                              smoke=4)

    def __post_init__(self):
        super().__post_init__()
        if self.steps % self.n_evals:
            raise ValueError(f"steps must be a multiple of n_evals (evaluations at equal intervals), got "
                             f"steps = {self.steps}, n_evals = {self.n_evals}")


MASK = 256  # the mask token; bytes are 0..255
# fold_in salts below a key, each naming the draw it keeps apart from the key's own draw (the times,
# the first mask) and from the other salts of the same key.
VALIDATION_MASK_SALT = 1  # validation key: the masks (its own draw: the times)
THINNING_SALT = 1  # a sample's mask key: the thinned estimator's keep-or-drop coins
SECOND_MASK_SALT = 2  # a sample's mask key: multisample2's second, independent mask
INIT_SALT = 0  # a training seed's key: the initialisation
STEPS_SALT = 1  # a training seed's key: the per-step minibatch keys, fold_in(., step)


def _model_loss_fn(model, params) -> th.LossFn:
    """``loss_fn(x0 [L], t, mask [L])`` of the denoiser with ``params`` (the MDM loss, float32 logits)."""
    def loss_fn(x0, t, mask):
        return th.mdm_loss(_model_token_logp(model, params, x0, mask), t, mask)
    return loss_fn


def _model_token_logp(model, params, x0, mask) -> jax.Array:
    """``log p(x0_i | x0 masked by mask)`` per position ``[L]`` (float32 logits)."""
    logits = model.apply(params, jnp.where(mask, MASK, x0)[None])[0]
    return jnp.take_along_axis(jax.nn.log_softmax(logits), x0[:, None], 1)[:, 0]


# The trained estimators (Sec. 4.1, 4.2, 5; Table 1 and Table 2 rank the first four):
#   standard: t ~ U[eps, 1], one mask; pots: t from the P-POTS density (weight u / p(t)), one mask;
#   mirror: t ~ U[eps, 1], MIRROR's complementary pair (two forward passes); pots_mirror: both;
#   multisample2: t ~ U[eps, 1] and two independent masks averaged, two forward passes: the compute-matched
#     baseline of MIRROR's pair (at equal cost the fair baseline draws the second mask independently);
#   thinned: the standard estimator with each masked token's term kept with probability 1/2 and doubled
#     (unbiased, one forward pass, its variance above the standard one's by the added thinning noise): the
#     case just outside "lowers the variance" that the ordering and variance checks must reject.
# Every method sees the same windows, the same first uniform per token and (uniform-t methods) the same t.
VAL_CHUNK = 64  # validation windows evaluated at once (x val_draws sequences): bounds the validation's memory

METHODS_TRAIN = ("standard", "pots", "mirror", "pots_mirror", "multisample2", "thinned")
# Estimators whose one-sample gradient variance is measured: all of them.
GRAD_METHODS = METHODS_TRAIN
# Each estimator as (forward passes, switches) of one_sample_loss. The switches are passed to the compiled
# training and gradient-variance programs as traced booleans, so that the estimators of one pass share one
# program of each and those of two passes another (four programs, compiled once each, not twelve).
# pots: t from the P-POTS density, weight u / p(t); mirror (two passes): the second mask is MIRROR's
# complement of the first, else an independent one; thinned (one pass): each masked token's term kept with
# probability 1/2 and doubled.
SWITCHES = ("pots", "mirror", "thinned")
PASSES = {1: "one pass", 2: "two passes"}  # forward passes per sample: each its own compiled program
ESTIMATORS = {
    "standard": (1, ()),
    "pots": (1, ("pots",)),
    "thinned": (1, ("thinned",)),
    "mirror": (2, ("mirror",)),
    "pots_mirror": (2, ("pots", "mirror")),
    "multisample2": (2, ()),
}


def estimator_switches(method: str) -> tuple[int, dict[str, np.ndarray]]:
    """``(passes, {switch: bool []})`` of ``method`` (one of :data:`METHODS_TRAIN`): its forward passes per
    sample (1 or 2, static) and its :data:`SWITCHES`. Raises KeyError for an unknown method."""
    passes, on = ESTIMATORS[method]
    return passes, {s: np.asarray(s in on) for s in SWITCHES}


def one_sample_loss(token_logp, x0, t_key, mask_key, passes: int, sw, tables, eps: float) -> jax.Array:
    """One-sample MDM loss estimate (float64 ``[]``) of the estimator ``(passes, sw)``
    (:func:`estimator_switches`) on the window ``x0`` ``[L]``.

    ``token_logp(x0, mask) -> [L]``: the denoiser's log-probability of each true token with ``mask`` applied.
    ``t_key`` draws t: U[eps, 1] (weight 1), or under ``sw["pots"]`` from the density of ``tables``
    (:func:`th.binned_tables`; weight u / p(t), Sec. 4.1). ``mask_key`` draws the first mask ``{U < t}``,
    one uniform per token, the same under every estimator; with ``passes`` = 2 the loss is the mean over it
    and a second mask: MIRROR's ``{U > 1 - t}`` under ``sw["mirror"]`` (Sec. 4.2), else an independent draw
    (MultiSample-2, at MIRROR's cost). With one pass under ``sw["thinned"]``, each masked token's term is
    kept with probability 1/2 and doubled (unbiased, noisier). Source: Sec. 4.1, 4.2 and 5."""
    L = x0.shape[0]
    t_pots, w_pots = th.binned_sample(tables, t_key, ())
    t = jnp.where(sw["pots"], t_pots, th.uniform_t(t_key, (), eps))
    w = jnp.where(sw["pots"], w_pots, 1.0)
    u = jax.random.uniform(mask_key, (L,))
    m1 = u < t
    if passes == 1:
        keep = (jax.random.uniform(jax.random.fold_in(mask_key, THINNING_SALT), (L,)) < 0.5) | ~sw["thinned"]
        return w * jnp.where(sw["thinned"], 2.0, 1.0) * th.mdm_loss(token_logp(x0, m1), t, m1 & keep)
    m2 = jnp.where(sw["mirror"], u > 1.0 - t,
                   jax.random.uniform(jax.random.fold_in(mask_key, SECOND_MASK_SALT), (L,)) < t)
    return w * 0.5 * (th.mdm_loss(token_logp(x0, m1), t, m1) + th.mdm_loss(token_logp(x0, m2), t, m2))


def run_training(p: TrainingParams, ctx: cli.Context) -> dict:
    """Seeds x {standard, P-POTS, MIRROR, P-POTS + MIRROR, MultiSample-2, thinned} small MDMs on stdlib
    source; validation NELBO and gradient variance.

    Source: Sec. 4.1, 4.2 and 5 (the methods Table 1 and Table 2 rank, at CPU scale),
    ``paper_configs/mdm_variance_training.yaml``. Data: :func:`stdlib_text`, the last ``p.val_frac`` held
    out; random windows of ``p.seq_len`` characters. AdamW (lr ``p.lr``, clip 1.0, linear decay to 0),
    batch ``p.batch`` windows, ``p.steps`` steps; seed i starts from the same init and sees the same
    windows under every method (paired). The estimators (:data:`METHODS_TRAIN`): ``standard``: t ~ U[eps,
    1], one mask. ``pots``: t from the P-POTS bin density (weights u/p(t)), one mask. ``mirror``: t ~
    U[eps, 1], MIRROR's complementary pair (two forward passes). ``pots_mirror``: P-POTS t and MIRROR's
    pair. ``multisample2``: t ~ U[eps, 1], the mean over two independent masks (two forward passes,
    MIRROR's cost). ``thinned``: one mask, each masked token's term kept with probability 1/2 and doubled
    (the control: unbiased, more variance). The P-POTS density is estimated once, before its runs (as the
    paper fits it once from the model it fine-tunes), from the final model of one more standard run, seed
    index ``p.n_seeds`` (the calibration seed), disjoint from the seeds 0..n_seeds-1 that are compared.
    Validation: the MDM loss on ``p.val_windows`` windows with ``p.val_draws`` fixed (t, mask) draws each
    (common random numbers across runs).

    Returns (``s = p.n_seeds``, ``e = p.n_evals``, ``b = p.n_bins``, ``k = len(METHODS_TRAIN)`` = 6):
      methods [k]; steps [e + 1]: step of each evaluation (0 first).
      {method}_val_loss [s, e + 1]: validation MDM loss (nats per character).
      grad_var_{m} [s] for m in GRAD_METHODS (= METHODS_TRAIN): trace of the
        covariance of the one-sample gradient estimator, at the final standard model of each seed (same
        parameters and the same (x0, t, first mask) draws across methods: paired, common random numbers).
      loss_var_{m} [s]: variance of the one-sample loss value, same setting.
      pots_edges [b + 1], pots_probs [b], pots_m2 [b]: the P-POTS density used (calibration seed).
      learned_A, learned_B, learned_C, learned_total and ``_se`` []: decomposition of the calibration
        seed's final standard model's loss on the validation windows.
    """
    seed = ctx.config.seed
    text = stdlib_text(p.n_chars)
    cut = int(len(text) * (1 - p.val_frac))
    train = jnp.asarray(text[:cut].astype(np.int32))
    val = text[cut:].astype(np.int32)
    starts = np.linspace(0, val.size - p.seq_len - 1, p.val_windows).astype(np.int64)
    val_toks = jnp.asarray(np.stack([val[s:s + p.seq_len] for s in starts]))
    model = p.model(vocab=MASK + 1, n_out=256, causal=False)  # bytes + the mask token in, byte logits out
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(optax.linear_schedule(p.lr, 0.0, p.steps), b1=0.9, b2=0.95, weight_decay=0.0))
    L = p.seq_len
    vkey = jax.random.fold_in(jax.random.key(seed), salts.VALIDATION_SALT)
    vt = th.uniform_t(vkey, (p.val_windows, p.val_draws), p.eps)
    vm = jax.random.uniform(jax.random.fold_in(vkey, VALIDATION_MASK_SALT), (p.val_windows, p.val_draws, L)) < vt[..., None]

    def windows(key, n):
        s = jax.random.randint(key, (n,), 0, train.shape[0] - L)
        return jax.vmap(lambda a: jax.lax.dynamic_slice(train, (a,), (L,)))(s)

    def val_loss(params):
        # VAL_CHUNK windows at a time (all at once, the paper-scale validation of 1024 windows x 16 draws
        # held about 69 GB of activations per seed: python -m sims plan mdm_variance_training)
        fn = _model_loss_fn(model, params)
        per_window = jax.lax.map(lambda xtm: jax.vmap(lambda t, m: fn(xtm[0], t, m))(xtm[1], xtm[2]),
                                 (val_toks, vt, vm), batch_size=VAL_CHUNK)
        return jnp.mean(per_window)

    def estimator(params, key, passes, sw, tables):
        """One-sample loss of the estimator ``(passes, sw)`` on one random window (:func:`one_sample_loss`)."""
        kx, kt, km = jax.random.split(key, 3)
        return one_sample_loss(lambda x, m: _model_token_logp(model, params, x, m), windows(kx, 1)[0], kt, km,
                               passes, sw, tables, p.eps)

    def training_program(passes):
        def train(i, sw, tables):
            """Seed index ``i``'s run of the estimator ``(passes, sw)``: its final parameters and the
            validation loss ``[n_evals + 1]`` before training and after each segment."""
            k = runtime.seed_key(seed, i)
            params = model.init(jax.random.fold_in(k, INIT_SALT), jnp.zeros((1, L), jnp.int32))
            state = (params, opt.init(params))

            def step(st, s):
                params, os = st
                ks = jax.random.split(jax.random.fold_in(jax.random.fold_in(k, STEPS_SALT), s), p.batch)
                loss = lambda pr: jnp.mean(jax.vmap(lambda kk: estimator(pr, kk, passes, sw, tables))(ks))  # noqa: E731
                g = jax.grad(loss)(params)
                upd, os = opt.update(g, os, params)
                return (optax.apply_updates(params, upd), os), None

            seg = p.steps // p.n_evals

            def segment(st, a):  # steps a..a+seg-1, then the validation loss
                st, _ = jax.lax.scan(step, st, a + jnp.arange(seg))
                return st, val_loss(st[0])

            # One scan over the evaluation segments (of a static length: the plan counts its steps), so that
            # the training step is compiled once and the validation twice (written out per segment, they
            # were compiled n_evals and n_evals + 1 times).
            state, later = jax.lax.scan(segment, state, seg * jnp.arange(p.n_evals))
            return state[0], jnp.concatenate([val_loss(params)[None], later])

        train.__qualname__ = f"train ({PASSES[passes]})"  # its name in the plan
        return train

    def grad_var_program(passes):
        def grad_var(b, sw, tables):
            """Trace of the covariance of the one-sample gradient, and the variance of the one-sample loss,
            of the estimator ``(passes, sw)`` at a standard model's parameters ``b[0]``, seed index ``b[1]``."""
            params, key = b[0], jax.random.fold_in(gkey, b[1])

            def one(k):
                return jax.value_and_grad(lambda pr: estimator(pr, k, passes, sw, tables))(params)
            ls, gs = jax.vmap(one)(jax.random.split(key, p.grad_samples))
            flat = jnp.concatenate([g.reshape(p.grad_samples, -1) for g in jax.tree.leaves(gs)], 1)
            dev = flat - flat.mean(0)
            return jnp.sum(dev * dev) / (p.grad_samples - 1), jnp.var(ls, ddof=1)

        grad_var.__qualname__ = f"gradient variance ({PASSES[passes]})"  # its name in the plan
        return grad_var

    # One function object per pass count, so that map_batch compiles each once for all its estimators.
    train_runs = {n: training_program(n) for n in PASSES}
    grad_vars = {n: grad_var_program(n) for n in PASSES}

    def train_method(m, n, tables):
        passes, sw = estimator_switches(m)
        return runtime.map_batch(train_runs[passes], np.arange(n, dtype=np.int32), sw, tables, mesh=ctx.mesh)

    gkey = jax.random.fold_in(jax.random.key(seed), salts.GRAD_VAR_SALT)
    edges = th.t_bin_edges(p.eps, p.n_bins)
    # The standard runs come first (their calibration seed fits P-POTS): they pass a flat density, unread.
    std_params, std_vals = train_method("standard", p.n_seeds + 1, th.binned_tables(edges, np.ones(p.n_bins)))
    p0 = jax.tree.map(lambda a: a[p.n_seeds], std_params)  # the last: the calibration seed
    std_params, std_vals = jax.tree.map(lambda a: a[:p.n_seeds], std_params), std_vals[:p.n_seeds]
    fn0 = _model_loss_fn(model, p0)
    tr_windows = windows(jax.random.fold_in(jax.random.key(seed), salts.TRAIN_WINDOWS_SALT), 1024)
    with runtime.planned_theory_jits("P-POTS calibration"):
        mom = th.binned_moments(fn0, tr_windows, jax.random.fold_in(jax.random.key(seed), salts.MOMENTS_SALT), edges,
                                p.n_per_bin)
    if runtime.is_planning():  # the planner's zero draws give the density 0/0: plan with a flat one instead
        mom = {**th.binned_summary(np.ones_like(mom["losses"])), "losses": mom["losses"]}
    probs = th.pots_bin_probs(edges, mom["m2"])
    tables = th.binned_tables(edges, probs)
    vals = {"standard": std_vals, **{m: train_method(m, p.n_seeds, tables)[1] for m in METHODS_TRAIN[1:]}}
    seeds = (std_params, np.arange(p.n_seeds, dtype=np.int32))
    gv = {}
    for m in GRAD_METHODS:
        passes, sw = estimator_switches(m)
        gv[m] = runtime.map_batch(grad_vars[passes], seeds, sw, tables, mesh=ctx.mesh)
    with runtime.planned_theory_jits("learned decomposition"):
        dec = th.decompose(fn0, np.asarray(val_toks), jax.random.fold_in(jax.random.key(seed), salts.TRAINED_DECOMPOSITION_SALT), n_t=4,
                           n_masks=4, eps=p.eps)
    out = {"methods": np.asarray(METHODS_TRAIN), "steps": np.linspace(0, p.steps, p.n_evals + 1).astype(int),
           **{f"{m}_val_loss": vals[m] for m in METHODS_TRAIN},
           "pots_edges": edges, "pots_probs": probs, "pots_m2": mom["m2"]}
    for m in GRAD_METHODS:
        out[f"grad_var_{m}"] = np.asarray(gv[m][0])
        out[f"loss_var_{m}"] = np.asarray(gv[m][1])
    for k in ("A", "B", "C", "total"):
        out[f"learned_{k}"], out[f"learned_{k}_se"] = np.asarray(dec[k]), np.asarray(dec[f"{k}_se"])
    ctx.summary["final_val_sd"] = {m: float(np.std(out[f"{m}_val_loss"][:, -1], ddof=1)) for m in METHODS_TRAIN}
    return out
