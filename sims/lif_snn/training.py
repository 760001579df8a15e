"""The ``training`` experiment (Figure 3): noise sensitivity of SNNs before and after training on digits and parity."""

from __future__ import annotations

import dataclasses
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax
from sklearn.datasets import load_digits

from sims import cli, runtime
from sims.config import param
from sims.lif_snn.neuron import _check_kinds, _signs, KindName, uniform_parts
from theory import lif_snn as th

# ---------------------------------------------------------------------------------------------------
# training (Figure 3)
# ---------------------------------------------------------------------------------------------------

TaskName = Literal["digits2", "digits10", "parity"]


@dataclasses.dataclass(frozen=True)
class NetworkTraining:
    """Settings every training experiment shares (:class:`TrainingParams`, and the label-noise levels of
    :class:`sims.lif_snn.accuracy.AccuracyParams`): the data, the L-layer SNN, the surrogate-gradient
    optimiser and the NS estimate. Defaults are the paper configs' values."""

    digit_pair: tuple[int, ...] = param((3, 8), ge=0, le=9, doc="the two classes of digits2")
    binarize_at: int = param(8, ge=1, le=16, doc="pixel (0..16) >= this is +1, else -1")
    test_fraction: float = param(0.3, gt=0, lt=1)
    parity_n: int = param(16, ge=1, doc="input dimension of the parity task (inputs uniform on {-1,1}^n)")
    parity_bits: int = param(3, ge=1, doc="parity target: product of the first k input bits")
    hidden: int = param(64, ge=1)
    depth: int = param(3, ge=1, doc="layers including the output layer")
    T: int = param(5, ge=1, le=64)
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    steps: int = param(300, ge=1, smoke=20)
    batch: int = param(256, ge=1)
    lr: float = param(0.03, gt=0)
    logit_scale: float = param(1.0, gt=0, doc="softmax logits = logit_scale * spike counts")
    ns_pairs: int = param(2048, ge=1, doc="(x, y) pairs per nu for each NS estimate", smoke=1024)
    per_device: int | None = param(None, ge=1, doc="networks trained per device per compiled call (null: "
                                   "runtime.chunk_size's rule); it bounds the memory, and either way the "
                                   "numbers do not depend on the device count (runtime.map_batch)")
    # On the CPU a block's spikes stay in the cache instead of passing through memory: one call of digits10
    # training (4 seeds, 2 cores, 2026-12-05) evaluated in 0.23 s in blocks of 512 against 0.41 s at once
    # (blocks of 2048: 0.245 s), the whole call 1.25 -> 1.0 s, the same bits. An accelerator wants one batch.
    eval_rows: int | None = param(512, ge=1, doc="inputs classified per step of the evaluation loop after "
                                  "training (jax.lax.map's batch_size; null: all at once). Each input is "
                                  "classified alone, so the numbers do not depend on it")

    def __post_init__(self):
        if self.parity_bits > self.parity_n:
            raise ValueError(f"parity_bits must be <= parity_n, got {self.parity_bits} > {self.parity_n}")
        if len(self.digit_pair) != 2 or self.digit_pair[0] == self.digit_pair[1]:
            raise ValueError(f"digit_pair must be two different digits, got {self.digit_pair}")


@dataclasses.dataclass(frozen=True)
class TrainingParams(NetworkTraining):
    """Surrogate-gradient training of L-layer SNN classifiers; NS against nu before and after."""

    tasks: tuple[TaskName, ...] = param(("digits2", "digits10", "parity"))
    kinds: tuple[KindName, ...] = param(("slif", "lif"))
    parity_kinds: tuple[KindName, ...] = param(("slif", "lif"), doc="kinds trained on the parity control")
    n_seeds: int = param(32, ge=2, le=runtime.MAX_SEEDS)
    nus: tuple[float, ...] = param((0.01, 0.03, 0.0625, 0.125, 0.25, 0.4), gt=0, le=0.5)
    log_every: int = param(10, ge=1)

    def __post_init__(self):
        super().__post_init__()
        _check_kinds(self.kinds)
        _check_kinds(self.parity_kinds)
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"tasks must be distinct, got {self.tasks}")


def digits_data(p: TrainingParams, task: str, seed: int):
    """scikit-learn's bundled 8x8 digits (no download), binarised to {-1, 1}^64 (pixel >= binarize_at is
    +1), for ``"digits2"`` (labels 0/1 for ``digit_pair``) or ``"digits10"``; a seeded split.
    Returns ``(x_train, y_train, x_test, y_test)`` float32 / int32 numpy arrays."""
    d = load_digits()
    x = np.where(d.data >= p.binarize_at, 1.0, -1.0).astype(np.float32)
    y = d.target.astype(np.int32)
    if task == "digits2":
        keep = np.isin(y, p.digit_pair)
        x, y = x[keep], (y[keep] == p.digit_pair[1]).astype(np.int32)
    perm = np.random.default_rng(seed).permutation(y.size)
    n_test = round(p.test_fraction * y.size)
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], y[tr], x[te], y[te]


def parity_placeholder(p: TrainingParams):
    """Stand-in data arrays for the parity task (its inputs are drawn fresh; only the width is read)."""
    x, y = np.zeros((1, p.parity_n), np.float32), np.zeros((1,), np.int32)
    return x, y, x, y


def parity_sample(p: NetworkTraining, n_total: int, seed: int):
    """A fixed parity data set: ``n_total`` inputs uniform on {-1,1}^``p.parity_n`` (numpy, seeded), labelled
    by the ``p.parity_bits``-bit parity (:func:`parity_labels`) and split like :func:`digits_data`
    (``round(p.test_fraction * n_total)`` held out). Returns ``(x_train, y_train, x_test, y_test)`` float32 /
    int32 numpy arrays. Raises ValueError: ``n_total < 2``."""
    if n_total < 2:
        raise ValueError(f"a parity sample needs at least 2 inputs, got {n_total}")
    x = np.where(np.random.default_rng(seed).random((n_total, p.parity_n)) < 0.5, -1.0, 1.0).astype(np.float32)
    y = np.asarray(parity_labels(x, p.parity_bits))
    n_test = round(p.test_fraction * n_total)
    return x[n_test:], y[n_test:], x[:n_test], y[:n_test]


def parity_labels(x, k: int):
    """Class of the k-bit parity target: 0 where ``prod_{i<k} x_i = +1``, 1 where it is -1."""
    return (jnp.sum(x[..., :k] < 0, axis=-1) % 2).astype(jnp.int32)


def _flip(u, x, nus):
    """``[V, P, n]``: ``x [P, n]`` with each bit flipped with probability ``nus[v]`` (``u``: ``[V, P, n]``
    uniforms)."""
    return jnp.where(u < jnp.asarray(nus, x.dtype)[:, None, None], -x, x)


LABEL_NOISE_SALT = 0x1ABE1  # fold_in salt of the label-noise draws (kept apart from the split of the seed key)
# fold_in(seed key, TASK_STRIDE * task index + kind index): one stream per (task, kind) case (two kinds)
TASK_STRIDE = 1000


def noisy_labels(key, y, rate, n_classes: int):
    """``y`` ([...] int) with each label replaced, with probability ``rate`` (a scalar, may be traced), by a
    class drawn uniformly from ``n_classes`` (so a replaced label may equal the clean one: the label is
    wrong with probability ``rate (1 - 1/n_classes)``). The uniforms deciding which labels are replaced
    and the replacements depend on ``key`` only, so the noisy label sets of several rates from one key are
    nested (a label replaced at one rate is replaced, by the same class, at every higher rate)."""
    k_which, k_class = jax.random.split(key)
    replace = jax.random.uniform(k_which, y.shape) < rate
    return jnp.where(replace, jax.random.randint(k_class, y.shape, 0, n_classes, y.dtype), y)


def train_network(key, x_train, y_train, x_test, y_test, *, p: TrainingParams, task: str, kind: KindName,
                  label_noise=0.0, fresh_parity: bool = True):
    """Train one network with Adam and the ATan surrogate (:func:`theory.lif_snn.heaviside`); measure NS
    before and after on the same pairs (common random numbers).

    ``label_noise`` (scalar in [0, 1], may be traced): the rate at which training labels are replaced by
    uniformly random classes (:func:`noisy_labels`; a fixed training set: a fixed corruption of it per
    seed; parity with ``fresh_parity``: fresh per batch).

    ``fresh_parity`` (parity only): True draws the inputs fresh for every batch and ignores the data
    arrays; False trains on the fixed sample ``x_train, y_train`` (:func:`parity_sample`) like digits. The draws come from ``fold_in(key, LABEL_NOISE_SALT)``, so networks of
    one seed at several rates share their initialisation, minibatches and NS pairs, and at rate 0 the run
    is the noiseless one. Accuracies are always against the clean labels.

    Returns a dict: ``ns_before``/``ns_after`` [V] (x uniform on {-1,1}^64: the definition),
    ``data_ns_before``/``data_ns_after`` [V] (x drawn from the test inputs), ``train_acc`` (training inputs,
    clean labels), ``test_acc``, ``init_test_acc`` [], ``loss`` [steps // log_every].
    """
    n_in = x_train.shape[1]
    n_out = 2 if task != "digits10" else 10
    k_init, k_train, k_eval = jax.random.split(key, 3)
    k_noise = jax.random.fold_in(key, LABEL_NOISE_SALT)
    fresh = task == "parity" and fresh_parity
    y_fit = None if fresh else noisy_labels(k_noise, jnp.asarray(y_train), label_noise, n_out)
    weights = th.init_weights(k_init, (n_in,) + (p.hidden,) * (p.depth - 1) + (n_out,), jnp.float32)

    def counts(w, x):
        return th.spike_counts(th.run_network(w, th.encode_input(x, kind), p.theta, p.beta, p.T, kind), kind)

    def loss_fn(w, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(p.logit_scale * counts(w, x), y).mean()

    opt = optax.adam(p.lr)

    def batch(k):
        if fresh:
            x = _signs(jax.random.uniform(k, (p.batch, n_in)))
            y = noisy_labels(jax.random.fold_in(k, LABEL_NOISE_SALT), parity_labels(x, p.parity_bits), label_noise,
                             n_out)
            return x, y
        idx = jnp.minimum(jax.random.uniform(k, (p.batch,)) * x_train.shape[0], x_train.shape[0] - 1).astype(jnp.int32)
        return x_train[idx], y_fit[idx]

    def step(carry, k):
        w, s = carry
        loss, g = jax.value_and_grad(loss_fn)(w, *batch(k))
        upd, s = opt.update(g, s, w)
        return (optax.apply_updates(w, upd), s), loss

    (trained, _), losses = jax.lax.scan(step, (weights, opt.init(weights)), jax.random.split(k_train, p.steps))

    v, pairs = len(p.nus), p.ns_pairs
    u_test, u_x, u_idx, u_fu, u_fd = uniform_parts(k_eval, [(2, pairs, n_in), (pairs, n_in), (pairs,),
                                                            (v, pairs, n_in), (v, pairs, n_in)])
    if fresh:
        xt = _signs(u_test)
        tr_x, tr_y, te_x, te_y = xt[0], parity_labels(xt[0], p.parity_bits), xt[1], parity_labels(xt[1], p.parity_bits)
    else:
        tr_x, tr_y, te_x, te_y = x_train, y_train, x_test, y_test
    x_u = _signs(u_x)
    x_d = te_x[jnp.minimum(u_idx * te_x.shape[0], te_x.shape[0] - 1).astype(jnp.int32)]
    y_u, y_d = _flip(u_fu, x_u, p.nus), _flip(u_fd, x_d, p.nus)
    # One evaluation of both weight sets on every input (a single call site keeps compilation short).
    pieces = [tr_x, te_x, x_u, y_u.reshape(-1, n_in), x_d, y_d.reshape(-1, n_in)]
    ends = np.cumsum([a.shape[0] for a in pieces])
    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), weights, trained)
    inputs = jnp.concatenate(pieces)  # [M, n_in]: the rows are independent, classified p.eval_rows at a time

    def classes(w):  # [M]
        if p.eval_rows is None:
            return th.classify(counts(w, inputs))
        return jax.lax.map(lambda xi: th.classify(counts(w, xi)), inputs, batch_size=p.eval_rows)

    cls = jax.vmap(classes)(both)  # [2, M]
    tr_c, te_c, xu_c, yu_c, xd_c, yd_c = (cls[:, a:b] for a, b in zip(np.r_[0, ends[:-1]], ends))
    def ns(cx, cy):  # [2, P], [2, V * P] -> [2, V]
        return jnp.mean(cx[:, None] != cy.reshape(2, v, -1), axis=-1)

    ns_u, ns_d = ns(xu_c, yu_c), ns(xd_c, yd_c)
    test_acc = jnp.mean(te_c == te_y, axis=-1)
    return {"ns_before": ns_u[0], "ns_after": ns_u[1], "data_ns_before": ns_d[0], "data_ns_after": ns_d[1],
            "train_acc": jnp.mean(tr_c[1] == tr_y), "test_acc": test_acc[1], "init_test_acc": test_acc[0],
            "loss": losses.reshape(-1, p.log_every).mean(axis=1) if p.steps % p.log_every == 0
            else losses[:: p.log_every]}


def run_training(p: TrainingParams, ctx: cli.Context) -> dict:
    """NS against nu before and after surrogate-gradient training (Figure 3), per task and kind.

    Source: Araya et al., Figure 3 (trained networks are less sensitive), surrogate gradient as in snnTorch;
    ``paper_configs/lif_snn_training.yaml``. Seeds (one network each) are sharded over devices; every
    seed trains from its own initialisation and measures NS on its own pairs, the same pairs before and
    after training.

    Returns (``S = p.n_seeds``, ``V = len(p.nus)``, ``C`` cases: each task with each kind, the parity
    task with ``p.parity_kinds`` only): nus [V]; parity_ns_exact [V] (NS of the target parity,
    ``1/2 - 1/2 (1 - 2 nu)^k``); input_dims [3] (n of digits2, digits10, parity: 64, 64, ``p.parity_n``);
    cases [C] (str, ``"{task}_{kind}"``); and, with the seeds (one network each) on axis 0:
      ns_before [S, C, V], ns_after [S, C, V]: NS with x uniform on {-1,1}^n (the definition), MC over
        ``p.ns_pairs`` pairs per nu, the same pairs before and after training.
      data_ns_before [S, C, V], data_ns_after [S, C, V]: the same with x drawn from the test inputs.
      train_acc [S, C], test_acc [S, C], init_test_acc [S, C]; loss [S, C, steps / log_every].
    """
    out = {"nus": np.asarray(p.nus), "parity_ns_exact": 0.5 - 0.5 * (1 - 2 * np.asarray(p.nus)) ** p.parity_bits,
           "input_dims": np.asarray([64, 64, p.parity_n])}
    cases, per_case = [], []
    bar = runtime.progress(sum(len(p.parity_kinds if t == "parity" else p.kinds) for t in p.tasks), "training",
                           unit="model")
    for ti, task in enumerate(p.tasks):
        if task == "parity":
            data = parity_placeholder(p)
        else:
            data = digits_data(p, task, ctx.config.seed)
        for kind in (p.parity_kinds if task == "parity" else p.kinds):
            def piece(task=task, kind=kind, data=data, ti=ti):
                fn = lambda k, *d: train_network(jax.random.fold_in(k, TASK_STRIDE * ti + th.KINDS.index(kind)),
                                                 *d, p=p, task=task, kind=kind)
                return runtime.map_seeds(fn, ctx.config.seed, p.n_seeds, *data, mesh=ctx.mesh,
                                         per_device=p.per_device)
            cases.append(f"{task}_{kind}")
            per_case.append(ctx.parts.get(f"{task}_{kind}", piece))
            bar.update(1)
    bar.close()
    out["cases"] = np.asarray(cases)
    for name in per_case[0]:
        out[name] = np.stack([np.asarray(r[name]) for r in per_case], axis=1)
    return out
