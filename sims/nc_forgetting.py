"""Simulations behind the neural-collapse forgetting figures (Lanzillotta, Meier, Hofmann, ICLR 2026), with
``theory.nc_forgetting``.

Continual learning on two data sets: scikit-learn's bundled 8x8 digits and synthetic anisotropic Gaussian
classes (10 classes in R^64, a shared rank-``spike_rank`` spike plus isotropic noise), both split into
five tasks of two classes. Settings: TIL (one head per task: the logits are masked to the task's classes),
CIL (one head growing with the classes seen) and DIL (one head, label = class mod 2). Experience replay
with a class-balanced buffer holding ``p`` percent of each past class's training data (at least one
sample per class when ``p > 0``), either concatenated to the current task's data (``concat``) or drawn at
a fixed share of every batch (``ratio``); joint training on all tasks is the reference. The network is an
MLP with ReLU (no BatchNorm) and a linear head, trained with SGD + momentum and coupled weight decay
(``optax.add_decayed_weights`` before ``optax.sgd``) to near-zero loss on every task. Runs (seed x buffer x
setting x schedule) are one vmapped axis sharded over the device mesh (:func:`sims.runtime.map_batch`);
seed ``i`` starts from the same initialisation in every run.

Experiments (``paper_configs/nc_forgetting_*.yaml``):

- ``buffer_sweep``: deep and shallow forgetting against buffer size, per setting and schedule, the
  paper's Fig. 2; the old tasks' SNR after every session (Corollary 2); the corrected head's accuracy.
- ``subspace``: the exact (1 - eta lambda) decay in the linear-feature model (T1) with its controls, the
  projection of old classes' means onto the current span S_t against an OOD set during CIL training
  without replay (Fig. 4, H1), and the rank of the features with one head per task against a single head
  in the unconstrained-features model (Sec. 3.2).
- ``buffer_stats``: effective rank of trained-on buffer features against an equal number of held-out
  samples, buffer-over-population class-mean norms and NC1 of both, against buffer size (Fig. 5).
- ``lda``: Gaussian heads from population or buffer statistics (Fig. 6) and our corrected heads, with the
  network's head and the probe, against buffer size; the held-out calibration buffer (never trained on).
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
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from sims import cli, runtime
from sims.config import ConfigError, param
from theory import nc_forgetting as th

N_CLASSES = 10
N_TASKS = 5
SETTINGS = ("til", "cil", "dil")
SCHEDULES = ("concat", "ratio")
DatasetName = Literal["digits", "gaussian"]
SettingName = Literal["til", "cil", "dil"]
ScheduleName = Literal["concat", "ratio"]
CorrectionName = Literal["none", "transfer", "shrinkage", "calibration"]


# ---------------------------------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Data:
    """Inputs and labels of one data set: ``x_train [N, 64]``, ``y_train [N]``, ``x_test [M, 64]``,
    ``y_test [M]`` (classes 0..9; task ``t`` holds classes ``2t, 2t + 1``), ``x_ood [M_ood, 64]``;
    ``bayes_accuracy`` of the generating distribution (Gaussian classes; NaN for digits: unknown)."""

    name: str
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    x_ood: np.ndarray
    bayes_accuracy: float = float("nan")


def _standardise(xtr, others):
    mu, sd = xtr.mean(axis=0), xtr.std() + 1e-12
    return ((xtr - mu) / sd).astype(np.float32), [((o - mu) / sd).astype(np.float32) for o in others]


def digits_data(test_fraction: float, seed: int) -> Data:
    """scikit-learn's bundled 8x8 digits (1797 images, no download), pixels centred by the training mean
    and scaled by one global standard deviation; a stratified split. OOD set: the test images with their
    64 pixels permuted (one fixed permutation per image: the same pixel values, no digit)."""
    d = load_digits()
    xtr, xte, ytr, yte = train_test_split(d.data.astype(np.float64), d.target, test_size=test_fraction,
                                          stratify=d.target, random_state=seed % 2**32)
    perm_key = jax.random.fold_in(jax.random.key(seed), 1)
    perms = np.asarray(jax.vmap(lambda k: jax.random.permutation(k, 64))(jax.random.split(perm_key, len(xte))))
    ood = np.take_along_axis(xte, perms, axis=1)
    xtr, (xte, ood) = _standardise(xtr, [xte, ood])
    return Data("digits", xtr, ytr.astype(np.int32), xte, yte.astype(np.int32), ood)


def gaussian_data(n_train: int, n_test: int, dim: int, spike_rank: int, spike_scale: float,
                  separation: float, seed: int) -> Data:
    """Ten Gaussian classes in R^dim with a shared anisotropic covariance ``A A^T + 0.1 I`` (``A [dim,
    spike_rank]`` with N(0, spike_scale^2) entries) and means ``separation * N(0, I / dim)`` (so a
    Gaussian head with the identity covariance is visibly worse than with the true one), ``n_train`` and
    ``n_test`` samples per class. OOD set: the same covariance around the origin (no class mean).
    ``bayes_accuracy``: the Bayes classifier's accuracy on these classes (equal priors), by numerical
    integration (:func:`theory.nc_forgetting.bayes_accuracy_lda`; the standardisation is affine and does
    not change it)."""
    k = jax.random.key(seed)
    ka, km, kx, kt, ko = jax.random.split(k, 5)
    A = np.asarray(jax.random.normal(ka, (dim, spike_rank))) * spike_scale
    means = np.asarray(jax.random.normal(km, (N_CLASSES, dim))) * separation / math.sqrt(dim)

    def draw(key, n):
        k1, k2 = jax.random.split(key)
        z = np.asarray(jax.random.normal(k1, (N_CLASSES * n, spike_rank)))
        e = np.asarray(jax.random.normal(k2, (N_CLASSES * n, dim))) * math.sqrt(0.1)
        y = np.repeat(np.arange(N_CLASSES), n)
        return means[y] + z @ A.T + e, y

    xtr, ytr = draw(kx, n_train)
    xte, yte = draw(kt, n_test)
    ood = np.asarray(jax.random.normal(ko, (N_CLASSES * n_test, spike_rank))) @ A.T + np.asarray(
        jax.random.normal(jax.random.fold_in(ko, 1), (N_CLASSES * n_test, dim))) * math.sqrt(0.1)
    xtr, (xte, ood) = _standardise(xtr, [xte, ood])
    bayes = th.bayes_accuracy_lda(means, A @ A.T + 0.1 * np.eye(dim))
    return Data("gaussian", xtr, ytr.astype(np.int32), xte, yte.astype(np.int32), ood, bayes)


# ---------------------------------------------------------------------------------------------------
# Model and training
# ---------------------------------------------------------------------------------------------------


class MLP(nn.Module):
    """ReLU MLP ``[n, 64] -> features [n, widths[-1]]`` and a linear head with bias: ``__call__`` returns
    ``(logits [n, 10], features [n, widths[-1]])``."""

    widths: tuple[int, ...]

    @nn.compact
    def __call__(self, x):
        for i, w in enumerate(self.widths):
            x = nn.relu(nn.Dense(w, name=f"dense{i}", param_dtype=jnp.float32)(x))
        return nn.Dense(N_CLASSES, name="head", param_dtype=jnp.float32)(x), x


def features_fn(widths):
    """``(params, x [n, 64]) -> [n, widths[-1]]``: the penultimate features."""
    model = MLP(tuple(widths))
    return lambda params, x: model.apply(params, x)[1]


def head_of(params) -> tuple[np.ndarray, np.ndarray]:
    """``(W [10, f], b [10])`` of the linear head (one row per class)."""
    h = params["params"]["head"]
    return np.asarray(h["kernel"]).T, np.asarray(h["bias"])


def allowed_logits(setting, cls, session, class_task, class_session):
    """``[..., 10]`` mask of the logits a sample of class ``cls [...]`` competes over at ``session``: its
    task's classes (TIL), every class seen so far (CIL) or the two shared labels (DIL)."""
    k = jnp.arange(N_CLASSES)
    til = class_task[k] == class_task[cls][..., None]
    cil = jnp.broadcast_to(class_session[k] <= session, til.shape)
    dil = jnp.broadcast_to(k < 2, til.shape)
    return jnp.where(setting == 0, til, jnp.where(setting == 1, cil, dil))


def target_of(setting, cls):
    """The label a sample of class ``cls`` is trained and scored on: the class, or class mod 2 in DIL."""
    return jnp.where(setting == 2, cls % 2, cls)


def masked_loss(logits, allowed, target):
    """``[n]`` cross-entropy of ``target [n]`` over the allowed logits (``logits``, ``allowed`` ``[n, 10]``)."""
    z = jnp.where(allowed, logits, -jnp.inf)
    return -jnp.take_along_axis(jax.nn.log_softmax(z), target[:, None], 1)[:, 0]


@dataclasses.dataclass(frozen=True)
class Trainer:
    """Training hyper-parameters shared by the experiments (SGD, momentum, coupled weight decay)."""

    widths: tuple[int, ...]
    steps_per_task: int
    batch_size: int
    lr: float
    momentum: float
    weight_decay: float
    replay_ratio: float
    snapshots: int = 1  # parameter snapshots per task (evenly spaced, the last at the task's end)


def train_run(tr: Trainer, root_seed: int, run: dict, x_train, y_train, class_task):
    """One continual-learning run (vmapped over runs by :func:`sims.runtime.map_batch`).

    Args:
      run: ``seed`` (int index), ``setting`` (0 TIL, 1 CIL, 2 DIL), ``schedule`` (0 concat, 1 ratio),
        ``class_session [10]`` (the session a class arrives in: its task, or 0 for joint training),
        ``cur_idx [S, C]`` / ``cur_n [S]`` (the current task's training rows per session, padded),
        ``buf_idx [S, B]`` / ``buf_n [S]`` (the replay buffer's rows per session, padded).
      x_train ``[N, 64]``, y_train ``[N]`` (rows past the data are padding, never drawn), class_task
        ``[10]``.
    Returns:
      ``params`` with leading axes ``[S, snapshots]``; ``loss [S]`` the mean training loss over the
      current task's rows at each session's end; ``buffer_loss [S]`` over the buffer's rows (0 if empty).
    """
    model = MLP(tuple(tr.widths))
    key = runtime.seed_key(root_seed, run["seed"])
    params = model.init(jax.random.fold_in(key, 0), jnp.zeros((1, x_train.shape[1]), jnp.float32))
    opt = optax.chain(optax.add_decayed_weights(tr.weight_decay), optax.sgd(tr.lr, momentum=tr.momentum))
    B = tr.batch_size
    n_rep = round(tr.replay_ratio * B)
    per_snap = tr.steps_per_task // tr.snapshots
    setting, schedule = run["setting"], run["schedule"]

    def batch_rows(k, s):
        cur, cn, buf, bn = run["cur_idx"][s], run["cur_n"][s], run["buf_idx"][s], run["buf_n"][s]
        k1, k2, k3 = jax.random.split(k, 3)
        u = jax.random.randint(k1, (B,), 0, cn + bn, dtype=jnp.int32)
        concat = jnp.where(u < cn, cur[jnp.minimum(u, cur.shape[0] - 1)],
                           buf[jnp.clip(u - cn, 0, buf.shape[0] - 1)])
        uc = jax.random.randint(k2, (B,), 0, cn, dtype=jnp.int32)
        ub = jax.random.randint(k3, (B,), 0, jnp.maximum(bn, 1), dtype=jnp.int32)
        from_buf = (jnp.arange(B) >= B - n_rep) & (bn > 0)
        ratio = jnp.where(from_buf, buf[jnp.minimum(ub, buf.shape[0] - 1)], cur[jnp.minimum(uc, cur.shape[0] - 1)])
        return jnp.where(schedule == 0, concat, ratio)

    def loss_fn(p, rows, s):
        cls = y_train[rows]
        logits = model.apply(p, x_train[rows])[0]
        return masked_loss(logits, allowed_logits(setting, cls, s, class_task, run["class_session"]),
                           target_of(setting, cls))

    def step(carry, i, s):
        p, o = carry
        rows = batch_rows(jax.random.fold_in(jax.random.fold_in(key, s + 1), i), s)
        g = jax.grad(lambda q: loss_fn(q, rows, s).mean())(p)
        upd, o = opt.update(g, o, p)
        return (optax.apply_updates(p, upd), o), None

    def session(p, s):
        o = opt.init(p)  # a fresh optimiser state per task

        def chunk(carry, c):
            carry, _ = jax.lax.scan(lambda cr, i: step(cr, c * per_snap + i, s), carry, jnp.arange(per_snap))
            return carry, carry[0]

        (p, _), snaps = jax.lax.scan(chunk, (p, o), jnp.arange(tr.snapshots))

        def mean_loss(idx, n):
            w = (jnp.arange(idx.shape[0]) < n).astype(jnp.float32)
            return jnp.sum(loss_fn(p, idx, s) * w) / jnp.maximum(w.sum(), 1.0)

        return p, (snaps, mean_loss(run["cur_idx"][s], run["cur_n"][s]),
                   mean_loss(run["buf_idx"][s], run["buf_n"][s]))

    _, (snaps, loss, bloss) = jax.lax.scan(session, params, jnp.arange(N_TASKS))
    return {"params": snaps, "loss": loss, "buffer_loss": bloss}


# ---------------------------------------------------------------------------------------------------
# Buffers and run grids
# ---------------------------------------------------------------------------------------------------


def class_orders(y_train: np.ndarray, seed: int, seed_index: int) -> list[np.ndarray]:
    """Per class, its training rows in a random order (``jax.random.key``); a buffer of ``m`` samples of
    class ``c`` is the first ``m`` rows of ``orders[c]``, so buffers are nested across sizes."""
    key = jax.random.fold_in(runtime.seed_key(seed, seed_index), 7)
    out = []
    for c in range(N_CLASSES):
        rows = np.flatnonzero(y_train == c)
        out.append(rows[np.asarray(jax.random.permutation(jax.random.fold_in(key, c), rows.size))])
    return out


def buffer_count(n_class: int, percent: float) -> int:
    """Samples of a past class kept at ``percent`` of its training data: 0 at 0%, else at least 1."""
    return 0 if percent <= 0 else min(n_class, max(1, round(percent / 100 * n_class)))


def session_rows(orders, percent: float, calibration: float = 0.0, joint: bool = False):
    """Rows per session. Returns ``(cur [S] lists, buf [S] lists, held [10] lists)``: the current task's
    rows, the buffer's rows and, per class, the calibration rows (never trained on: a share
    ``calibration`` of each class's memory, taken out of its task's training data and out of replay).

    ``joint``: every session holds every class and no buffer (the reference: all tasks at once, the same
    number of steps)."""
    counts = [buffer_count(len(o), percent) for o in orders]
    held = [o[: math.floor(calibration * counts[c])] for c, o in enumerate(orders)]
    train = [o[len(held[c]):] for c, o in enumerate(orders)]
    replay = [t[: counts[c] - len(held[c])] for c, t in enumerate(train)]
    if joint:
        return [np.concatenate(train)] * N_TASKS, [np.zeros(0, np.int64)] * N_TASKS, held
    cur, buf = [], []
    for s in range(N_TASKS):
        cur.append(np.concatenate([train[2 * s], train[2 * s + 1]]))
        buf.append(np.concatenate([replay[c] for c in range(2 * s)]) if s else np.zeros(0, np.int64))
    return cur, buf, held


def _pad(lists, width: int):
    """``([len(lists), width] int32 rows padded with 0, [len(lists)] counts)``."""
    out = np.zeros((len(lists), width), np.int32)
    for i, x in enumerate(lists):
        out[i, : len(x)] = x
    return out, np.array([len(x) for x in lists], np.int32)


def bucket(n: int, size: int = 1024) -> int:
    """``n`` rounded up to a multiple of ``size``: index arrays and the training inputs are padded to it, so
    that both data sets and every experiment of a scale compile one training program per run count."""
    return size * max(1, -(-n // size))


def run_grid(data: Data, specs: list[dict], seed: int) -> dict:
    """The padded run arrays of :func:`train_run` for ``specs`` (dicts with ``seed`` index, ``setting``,
    ``schedule`` names, ``percent``, optional ``calibration`` and ``joint``), plus ``held`` (per run, per
    class, the calibration rows) and ``buf_rows`` (per run, the final session's buffer rows). Index
    widths are :func:`bucket`-ed."""
    orders = {}
    cur_l, buf_l, held_l = [], [], []
    for sp in specs:
        if sp["seed"] not in orders:
            orders[sp["seed"]] = class_orders(data.y_train, seed, sp["seed"])
        cur, buf, held = session_rows(orders[sp["seed"]], sp["percent"], sp.get("calibration", 0.0),
                                      sp.get("joint", False))
        cur_l.append(cur)
        buf_l.append(buf)
        held_l.append(held)
    width = bucket(data.y_train.size)
    cur_idx, cur_n = zip(*[_pad(c, width) for c in cur_l])
    buf_idx, buf_n = zip(*[_pad(b, width) for b in buf_l])
    arrival = np.arange(N_CLASSES) // 2
    runs = {"seed": np.array([sp["seed"] for sp in specs], np.int32),
            "setting": np.array([SETTINGS.index(sp["setting"]) for sp in specs], np.int32),
            "schedule": np.array([SCHEDULES.index(sp["schedule"]) for sp in specs], np.int32),
            "class_session": np.stack([arrival * (not sp.get("joint", False)) for sp in specs]).astype(np.int32),
            "cur_idx": np.stack(cur_idx), "cur_n": np.stack(cur_n),
            "buf_idx": np.stack(buf_idx), "buf_n": np.stack(buf_n)}
    return {"runs": runs, "held": held_l, "buf_rows": [b[-1] for b in buf_l]}


def train_grid(tr: Trainer, data: Data, specs: list[dict], seed: int, mesh):
    """Train every run of ``specs`` (one vmapped, sharded batch). Returns ``(out, grid)``: the outputs of
    :func:`train_run` with a leading run axis, and :func:`run_grid`'s bookkeeping."""
    grid = run_grid(data, specs, seed)
    class_task = jnp.asarray(np.arange(N_CLASSES) // 2, jnp.int32)
    n = bucket(data.y_train.size)
    x = np.zeros((n, data.x_train.shape[1]), np.float32)
    x[: data.y_train.size] = data.x_train
    y = np.zeros(n, np.int32)
    y[: data.y_train.size] = data.y_train
    def fn(run, xtr, ytr):
        return train_run(tr, seed, run, xtr, ytr, class_task)

    out = runtime.map_batch(fn, grid["runs"], jnp.asarray(x), jnp.asarray(y), mesh=mesh)
    return out, grid


# ---------------------------------------------------------------------------------------------------
# Evaluation on frozen features
# ---------------------------------------------------------------------------------------------------


def all_features(widths, params, x) -> np.ndarray:
    """Features ``[*lead, n, f]`` of ``x [n, 64]`` under every parameter set of the stacked ``params``
    (leading axes ``lead``: runs, sessions, snapshots), float64 on the host."""
    lead = params["params"]["head"]["bias"].shape[:-1]
    flat = jax.tree.map(lambda a: a.reshape((-1,) + a.shape[len(lead):]), params)
    out = jax.jit(jax.vmap(features_fn(widths), in_axes=(0, None)))(flat, jnp.asarray(x))
    return np.asarray(out, np.float64).reshape(lead + out.shape[1:])


def final_features(widths, params, x) -> np.ndarray:
    """Features ``[R, n, f]`` of ``x`` after each run's last session (its last snapshot) only."""
    return all_features(widths, jax.tree.map(lambda a: a[:, -1:, -1:], params), x)[:, 0, 0]


def allowed_np(setting: int, session: int, task: int) -> np.ndarray:
    """``[10]`` logits a sample of ``task`` competes over at ``session`` (numpy twin of
    :func:`allowed_logits`)."""
    k = np.arange(N_CLASSES)
    return [(k // 2) == task, (k // 2) <= session, k < 2][setting]


def scored_label(setting: int, y: np.ndarray) -> np.ndarray:
    """The label a class is scored on: itself, or class mod 2 in DIL."""
    return y % 2 if setting == 2 else y


def head_accuracy(W, b, feats, y, setting: int, session: int) -> np.ndarray:
    """``[5]`` accuracy of the network's head ``(W [10, f], b [10])`` on each task's samples of
    ``(feats [n, f], y [n])``, over the logits allowed at ``session``; NaN for tasks not yet seen."""
    logits = feats @ W.T + b
    out = np.full(N_TASKS, np.nan)
    for t in range(session + 1):
        m = (y // 2) == t
        z = np.where(allowed_np(setting, session, t), logits[m], -np.inf)
        out[t] = float(np.mean(np.argmax(z, axis=1) == scored_label(setting, y[m])))
    return out


def probe_row(f_tr, y_tr, f_te, y_te, setting: int, session: int, C: float, standardize: bool,
              tasks=None) -> np.ndarray:
    """``[5]`` probe accuracies after ``session`` (the authors' protocol, brief errata): TIL one probe per
    task on its training split; CIL one global probe over all seen classes; DIL one global probe over the
    two labels on all seen tasks; each scored per task on the test split. Only ``tasks`` (default: all
    seen) are filled; the rest is NaN."""
    out = np.full(N_TASKS, np.nan)
    tasks = range(session + 1) if tasks is None else [t for t in tasks if t <= session]
    if setting == 0:
        for t in tasks:
            mtr, mte = (y_tr // 2) == t, (y_te // 2) == t
            out[t] = th.probe_accuracy(f_tr[mtr], y_tr[mtr], f_te[mte], y_te[mte], C=C, standardize=standardize)
        return out
    seen = (y_tr // 2) <= session
    head = th.fit_probe(f_tr[seen], scored_label(setting, y_tr[seen]), C=C, standardize=standardize)
    for t in tasks:
        m = (y_te // 2) == t
        out[t] = head.accuracy(f_te[m], scored_label(setting, y_te[m]))
    return out


def pair_snr(f_te, y_te, session: int) -> np.ndarray:
    """``[5]`` SNR of each seen task's two classes on test features (NaN for unseen tasks; 0 when every
    test sample of both classes has the same feature vector, e.g. all-zero ReLU features)."""
    out = np.full(N_TASKS, np.nan)
    for t in range(session + 1):
        a, b = f_te[y_te == 2 * t], f_te[y_te == 2 * t + 1]
        # Both classes on one point (dead ReLU features of a forgotten task): no separation at all, 0.
        out[t] = 0.0 if np.ptp(np.concatenate([a, b]), axis=0).max() == 0 else th.snr(a, b)
    return out


def class_head_accuracy(head: th.LinearHead, feats, y, setting: int, session: int = N_TASKS - 1) -> np.ndarray:
    """``[5]`` per-task accuracy of a class-level head (10 classes, e.g. an LDA head) scored like the
    network's head in ``setting``: restricted to the task's classes (TIL), to the seen classes (CIL), or
    its predicted class mod 2 (DIL)."""
    logits = feats @ head.weights.T + head.bias
    out = np.full(N_TASKS, np.nan)
    k = head.classes
    for t in range(session + 1):
        m = (y // 2) == t
        allowed = (k // 2) == t if setting == 0 else (k // 2) <= session
        pred = k[np.argmax(np.where(allowed, logits[m], -np.inf), axis=1)]
        out[t] = float(np.mean(scored_label(setting, pred) == scored_label(setting, y[m])))
    return out


# ---------------------------------------------------------------------------------------------------
# Parameters shared by the experiments
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CommonParams:
    """Data, network and training shared by every experiment."""

    datasets: tuple[DatasetName, ...] = param(("digits", "gaussian"))
    n_seeds: int = param(3, ge=2, le=runtime.MAX_SEEDS)
    widths: tuple[int, ...] = param((64, 64, 32), ge=1, doc="hidden widths; the last is the feature dim")
    steps_per_task: int = param(300, ge=1)
    batch_size: int = param(64, ge=2)
    lr: float = param(0.05, gt=0)
    momentum: float = param(0.9, ge=0, lt=1)
    weight_decay: float = param(5e-4, ge=0, doc="coupled L2 (optax.add_decayed_weights before sgd)")
    replay_ratio: float = param(0.5, gt=0, lt=1, doc="share of each batch drawn from the buffer (ratio)")
    probe_C: float = param(10.0, gt=0, doc="inverse L2 strength of the probe (the authors': 10)")
    probe_standardize: bool = param(True, doc="standardise features before the probe (the authors: no)")
    digits_test_fraction: float = param(0.3, gt=0, lt=1)
    gaussian_n_train: int = param(150, ge=4, doc="training samples per class")
    gaussian_n_test: int = param(60, ge=4, doc="test samples per class")
    gaussian_spike_rank: int = param(8, ge=1)
    gaussian_spike_scale: float = param(0.5, gt=0)
    gaussian_separation: float = param(1.0, gt=0, doc="class-mean scale; 1.0 with spike 0.5 (root seed 0): "
                                       "Bayes accuracy 0.891, room for forgetting to show (3.0: 0.99999984)")

    def __post_init__(self):
        _distinct("datasets", self.datasets)

    def trainer(self, snapshots: int = 1, steps: int | None = None) -> Trainer:
        return Trainer(self.widths, steps or self.steps_per_task, self.batch_size, self.lr, self.momentum,
                       self.weight_decay, self.replay_ratio, snapshots)

    def check_snapshots(self, snapshots: int) -> None:
        if self.steps_per_task % snapshots:
            raise ValueError(f"steps_per_task ({self.steps_per_task}) must be a multiple of snapshots ({snapshots})")


def load_data(p: CommonParams, name: str, seed: int) -> Data:
    """The data set ``name`` of the experiment (same split and draw for a given root seed)."""
    if name == "digits":
        return digits_data(p.digits_test_fraction, seed)
    return gaussian_data(p.gaussian_n_train, p.gaussian_n_test, 64, p.gaussian_spike_rank,
                         p.gaussian_spike_scale, p.gaussian_separation, seed)


def _distinct(name: str, values) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat an entry, got {list(values)}")


def _percents(values) -> tuple[float, ...]:
    if len(set(values)) != len(values) or list(values) != sorted(values):
        raise ValueError(f"buffer_percents must be increasing and distinct, got {list(values)}")
    return tuple(values)


def per_dataset(p: CommonParams, ctx: cli.Context, tag: str, fn, datas: dict | None = None) -> dict:
    """``fn(p, data, seed, mesh) -> arrays`` on every data set of ``p`` (one resumable piece each), the
    arrays stacked on a leading data-set axis ``[D, ...]``, with ``datasets [D]`` and ``bayes_accuracy [D]``
    (NaN where unknown: digits)."""
    datas = datas or {name: load_data(p, name, ctx.config.seed) for name in p.datasets}
    parts = {name: ctx.parts.get(f"{tag}_{name}", lambda data=data: fn(p, data, ctx.config.seed, ctx.mesh))
             for name, data in datas.items()}
    out = {k: np.stack([parts[n][k] for n in p.datasets]) for k in parts[p.datasets[0]]}
    bayes = np.array([datas[n].bayes_accuracy for n in p.datasets])
    return {"datasets": np.asarray(p.datasets), "bayes_accuracy": bayes, **out}


def _params_at(params, r: int, s: int, k: int = -1):
    return jax.tree.map(lambda a: a[r, s, k], params)


# ---------------------------------------------------------------------------------------------------
# buffer_sweep (Fig. 2 and Corollary 2)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SweepParams(CommonParams):
    """Deep and shallow forgetting against buffer size (the paper's Fig. 2), with SNR per session."""

    settings: tuple[SettingName, ...] = param(SETTINGS)
    schedules: tuple[ScheduleName, ...] = param(SCHEDULES)
    buffer_percents: tuple[float, ...] = param((0.0, 1.0, 5.0, 20.0, 100.0), ge=0, le=100)
    head_correction: CorrectionName = param("shrinkage", doc="corrected head reported beside the network's")
    measure_probes: bool = param(True, doc="fit the probes (A*, F_deep); false leaves probe_acc NaN (SNR and "
                                 "head accuracy only: the probes dominate the quick scale's time)")

    def __post_init__(self):
        super().__post_init__()
        _distinct("settings", self.settings)
        _distinct("schedules", self.schedules)
        _percents(self.buffer_percents)
        if self.head_correction == "calibration":
            raise ValueError("head_correction 'calibration' needs runs with a held-out buffer: it is measured by "
                             "the lda experiment; use none, transfer or shrinkage here")


def corrected_head(p_name: str, f_tr, y_tr, buf_rows, cur_rows, held_rows=None) -> th.LinearHead | None:
    """The class-level LDA head corrected as ``p_name`` from what a replay learner holds at the end:
    old classes' buffer features (``buf_rows``), the current task's training features (``cur_rows``) and,
    for ``calibration``, the never-trained calibration rows (``held_rows``). Means: the buffer's (old
    classes) and the current data's (current classes); uniform priors. Covariance: ``transfer`` the
    current task's pooled within-class covariance; ``shrinkage`` Ledoit-Wolf of the pooled residuals of
    buffer and current data; ``calibration`` old-class means from the calibration rows, covariance
    transferred. ``none`` gives None. Beyond the paper (brief section 4)."""
    if p_name == "none":
        return None
    rows = np.concatenate([buf_rows, cur_rows]).astype(np.int64)
    if p_name == "calibration":
        if held_rows is None or len(held_rows) == 0:
            return None
        rows = np.concatenate([held_rows, cur_rows]).astype(np.int64)
    x, y = f_tr[rows], y_tr[rows]
    classes, means = th.class_means(x, y)
    cur = f_tr[cur_rows.astype(np.int64)], y_tr[cur_rows.astype(np.int64)]
    if p_name == "shrinkage":
        cov = th.shrunk_covariance(x, y)
    else:
        cov = th.pooled_covariance(*cur)
    return th.gaussian_head(means, cov, np.ones(classes.size), classes)


def _sweep_dataset(p: SweepParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting=st, schedule=h, percent=b) for st in p.settings for h in p.schedules
             for b in p.buffer_percents for s in range(p.n_seeds)]
    # joint training (every class in every session, no buffer) rides in the same batch
    jspecs = [dict(seed=s, setting=st, schedule="concat", percent=0.0, joint=True) for st in p.settings
              for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(), data, specs + jspecs, seed, mesh)
    ftr = all_features(p.widths, out["params"], data.x_train)[:, :, -1]
    fte = all_features(p.widths, out["params"], data.x_test)[:, :, -1]
    R = len(specs)
    head, probe, snr = (np.full((R, N_TASKS, N_TASKS), np.nan) for _ in range(3))
    corr = np.full((R, N_TASKS), np.nan)
    last = N_TASKS - 1
    for r, sp in enumerate(specs):
        st = SETTINGS.index(sp["setting"])
        for s in range(N_TASKS):
            W, b = head_of(_params_at(out["params"], r, s))
            head[r, s] = head_accuracy(W, b, fte[r, s], data.y_test, st, s)
            # A*_jj (learned, at session j) and A*_Tj (final): the entries forgetting needs.
            tasks = range(s + 1) if s == last else [s]
            if p.measure_probes:
                probe[r, s] = probe_row(ftr[r, s], data.y_train, fte[r, s], data.y_test, st, s, p.probe_C,
                                        p.probe_standardize, tasks)
            snr[r, s] = pair_snr(fte[r, s], data.y_test, s)
        h = corrected_head(p.head_correction, ftr[r, last], data.y_train, grid["buf_rows"][r],
                           grid["runs"]["cur_idx"][r, last, : grid["runs"]["cur_n"][r, last]])
        if h is not None:
            corr[r] = class_head_accuracy(h, fte[r, last], data.y_test, st)
    shape = (len(p.settings), len(p.schedules), len(p.buffer_percents), p.n_seeds)
    jhead, jprobe = (np.full((len(jspecs), N_TASKS), np.nan) for _ in range(2))
    for i, sp in enumerate(jspecs):
        st, r = SETTINGS.index(sp["setting"]), R + i
        W, b = head_of(_params_at(out["params"], r, last))
        jhead[i] = head_accuracy(W, b, fte[r, last], data.y_test, st, last)
        if p.measure_probes:
            jprobe[i] = probe_row(ftr[r, last], data.y_train, fte[r, last], data.y_test, st, last, p.probe_C,
                                  p.probe_standardize)
    return {"head_acc": head.reshape(shape + (N_TASKS, N_TASKS)),
            "probe_acc": probe.reshape(shape + (N_TASKS, N_TASKS)),
            "snr": snr.reshape(shape + (N_TASKS, N_TASKS)),
            "corrected_acc": corr.reshape(shape + (N_TASKS,)),
            "train_loss": out["loss"][:R].reshape(shape + (N_TASKS,)),
            "buffer_loss": out["buffer_loss"][:R].reshape(shape + (N_TASKS,)),
            "joint_head_acc": jhead.reshape((len(p.settings), p.n_seeds, N_TASKS)),
            "joint_probe_acc": jprobe.reshape((len(p.settings), p.n_seeds, N_TASKS)),
            "joint_loss": out["loss"][R:, last].reshape((len(p.settings), p.n_seeds))}


def run_buffer_sweep(p: SweepParams, ctx: cli.Context) -> dict:
    """Deep vs shallow forgetting against buffer size per data set, setting and schedule (Fig. 2).

    Arrays (D data sets, S settings, H schedules, B buffer sizes, N seeds; sessions and tasks 5):
    ``datasets [D]``, ``settings [S]``, ``schedules [H]``, ``buffer_percents [B]``;
    ``head_acc [D, S, H, B, N, 5, 5]`` the network head's test accuracy on task j after session i
    (A_ij; NaN for j > i); ``probe_acc [D, S, H, B, N, 5, 5]`` the probe's (A*_ij; only A*_jj and the
    final row A*_4j are measured, the rest NaN; all NaN with ``measure_probes: false``, as is
    ``joint_probe_acc``); ``snr [D, S, H, B, N, 5, 5]`` SNR of task j's two
    classes on test features after session i; ``corrected_acc [D, S, H, B, N, 5]`` the final per-task
    accuracy of the ``head_correction`` head; ``train_loss``, ``buffer_loss [D, S, H, B, N, 5]`` the
    mean training loss on the current task and on the buffer at each session's end;
    ``joint_head_acc``, ``joint_probe_acc [D, S, N, 5]`` and ``joint_loss [D, S, N]`` of joint training
    (every class in each of the 5 sessions: the same total steps). Forgetting of task j < 4:
    F_shallow = A_jj - A_4j, F_deep = A*_jj - A*_4j.
    """
    return {"settings": np.asarray(p.settings), "schedules": np.asarray(p.schedules),
            "buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "sweep", _sweep_dataset)}


# ---------------------------------------------------------------------------------------------------
# subspace (T1 exact; H1 / Fig. 4 in the MLP)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SubspaceParams(CommonParams):
    """The exact decay in the linear-feature model and old-class projections onto S_t in the MLP."""

    snapshots: int = param(10, ge=1, doc="feature snapshots per task (steps_per_task must be a multiple)")
    buffer_percents: tuple[float, ...] = param((0.0, 100.0), ge=0, le=100)
    ood_groups: int = param(10, ge=2, doc="OOD samples are split into groups the size of a test class")
    lin_classes: int = param(4, ge=2)
    lin_input_dim: int = param(20, ge=2)
    lin_feature_dim: int = param(16, ge=2)
    lin_per_class: int = param(5, ge=1)
    lin_eta: float = param(0.5, gt=0)
    lin_lambda: float = param(0.01, gt=0)
    lin_steps: int = param(200, ge=2)
    lin_probes: int = param(10, ge=1, doc="arbitrary inputs whose features are tracked")
    control_momentum: float = param(0.1, gt=0, lt=1)
    control_noise: float = param(0.3, gt=0, doc="input noise of the non-collapsed control")
    ufm_tasks: tuple[int, ...] = param((5, 3, 4), ge=1, doc="n of each (n tasks, K classes) instance")
    ufm_classes_per_task: tuple[int, ...] = param((2, 4, 3), ge=2, doc="K of each instance")
    ufm_dim: int = param(32, ge=2, doc="feature dimension (at least n K of every instance)")
    ufm_per_class: int = param(3, ge=1)
    ufm_eta: float = param(0.5, gt=0)
    ufm_lambda: float = param(0.05, gt=0, doc="weight decay on features and head (the no-decay control: 0)")
    ufm_steps: int = param(5000, ge=1)

    def __post_init__(self):
        super().__post_init__()
        self.check_snapshots(self.snapshots)
        _percents(self.buffer_percents)
        if len(self.ufm_tasks) != len(self.ufm_classes_per_task):
            raise ValueError(f"ufm_tasks and ufm_classes_per_task must have the same length, got "
                             f"{len(self.ufm_tasks)} and {len(self.ufm_classes_per_task)}")
        most = max(n * k for n, k in zip(self.ufm_tasks, self.ufm_classes_per_task))
        if self.ufm_dim < most:
            raise ValueError(f"ufm_dim must be at least n K = {most} (else d caps the rank), got {self.ufm_dim}")
        if self.lin_eta * self.lin_lambda >= 1:
            raise ValueError(f"lin_eta * lin_lambda must be < 1 (upsilon > 0), got {self.lin_eta * self.lin_lambda}")


LINEAR_CASES = ("collapsed", "momentum", "two_layer", "not_collapsed")


def linear_cases(p: SubspaceParams, seed: int) -> dict:
    """The T1 instance (exact) and its three controls, float64: ``perp [4, steps + 1, probes]``,
    ``decay_error [4]`` (largest relative deviation from perp_{t+1} = (1 - eta lambda) perp_t),
    ``fit_error [4]`` (largest relative deviation from the law perp_t = perp_0 (1 - eta lambda)^t over the
    whole run: :func:`theory.nc_forgetting.decay_law_fit_error`) and ``rounding_bound`` (its float64
    budget: :func:`theory.nc_forgetting.decay_rounding_bound`)."""
    perps, errs, fits = [], [], []
    for i, case in enumerate(LINEAR_CASES):
        rng = np.random.default_rng(np.asarray(jax.random.key_data(runtime.seed_key(seed, 10_000 + i))))
        m = th.collapsed_linear_model(p.lin_classes, p.lin_input_dim, p.lin_feature_dim, p.lin_per_class, rng,
                                      collapsed=case != "not_collapsed", noise=p.control_noise)
        probes = rng.standard_normal((p.lin_probes, p.lin_input_dim))
        out = th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], m["b"], eta=p.lin_eta, lam=p.lin_lambda,
                                   steps=p.lin_steps, probes=probes,
                                   momentum=p.control_momentum if case == "momentum" else 0.0,
                                   depth=2 if case == "two_layer" else 1)
        perps.append(out["perp"])
        errs.append(th.decay_error(out["perp"], p.lin_eta, p.lin_lambda))
        fits.append(th.decay_law_fit_error(out["perp"], p.lin_eta, p.lin_lambda))
    bound = th.decay_rounding_bound(p.lin_steps, p.lin_classes * p.lin_per_class, p.lin_input_dim,
                                    p.lin_feature_dim)
    return {"perp": np.stack(perps), "decay_error": np.array(errs), "fit_error": np.array(fits),
            "rounding_bound": np.asarray(bound)}


UFM_CASES = ("multi_head", "single_head", "multi_head_no_decay")


def ufm_ranks(p: SubspaceParams, seed: int) -> dict:
    """The feature rank of Sec. 3.2 in the unconstrained-features model (float64,
    :func:`theory.nc_forgetting.multihead_ufm_gd`), every task's data trained on, for each (n tasks, K
    classes) instance: one head per task (TIL: the hypothesis), a single head over all classes (CIL, the
    paper's contrast) and one head per task without weight decay (outside the terminal-phase hypothesis; a
    control). The three cases of an instance share their initialisation.

    Returns ``ufm_cases [3]``, ``ufm_tasks [S]``, ``ufm_classes_per_task [S]``, ``ufm_singular_values
    [3, S, m]`` the features' singular values (descending; NaN past min(N, d)), ``ufm_weyl_bound [3, S]``
    ||R||_2 / lambda (inf without weight decay) and ``ufm_residual_norm [3, S]`` ||R||_2."""
    S = len(p.ufm_tasks)
    m = max(min(n * k * p.ufm_per_class, p.ufm_dim) for n, k in zip(p.ufm_tasks, p.ufm_classes_per_task))
    sv = np.full((len(UFM_CASES), S, m), np.nan)
    weyl, res = np.full((len(UFM_CASES), S), np.nan), np.full((len(UFM_CASES), S), np.nan)
    for i, case in enumerate(UFM_CASES):
        lam = 0.0 if case.endswith("no_decay") else p.ufm_lambda
        for j, (n, k) in enumerate(zip(p.ufm_tasks, p.ufm_classes_per_task)):
            rng = np.random.default_rng(np.asarray(jax.random.key_data(runtime.seed_key(seed, 20_000 + j))))
            out = th.multihead_ufm_gd(n, k, p.ufm_dim, p.ufm_per_class, rng, multi_head=case != "single_head",
                                      eta=p.ufm_eta, lam_features=lam, lam_head=lam, steps=p.ufm_steps)
            s = out["singular_values"]
            sv[i, j, : s.size] = s
            weyl[i, j], res[i, j] = out["weyl_bound"], out["residual_norm"]
    return {"ufm_cases": np.asarray(UFM_CASES), "ufm_tasks": np.asarray(p.ufm_tasks),
            "ufm_classes_per_task": np.asarray(p.ufm_classes_per_task), "ufm_singular_values": sv,
            "ufm_weyl_bound": weyl, "ufm_residual_norm": res}


def projections(f_tr_cur, y_tr_cur, f_te, y_te, f_ood, session: int, groups: int, group_size: int):
    """Projections onto S_t (span of the centred means of the current training features) of the centred
    test means of every class and of ``groups`` OOD groups, over the current classes' average (so a
    current class is ~1). Returns ``(classes [10], ood [groups])``; classes not yet seen are NaN."""
    q = th.active_subspace(f_tr_cur, y_tr_cur)
    _, cur_means = th.class_means(f_tr_cur, y_tr_cur)
    mu_g = cur_means.mean(axis=0)
    _, te_means = th.class_means(f_te, y_te)
    num = th.projection_norm(te_means - mu_g, q)
    cur = np.unique(y_tr_cur)
    scale = float(np.mean(num[cur]))
    ood_means = np.stack([f_ood[i * group_size:(i + 1) * group_size].mean(axis=0) for i in range(groups)])
    cls = num / scale
    cls[np.arange(N_CLASSES) // 2 > session] = np.nan
    return cls, th.projection_norm(ood_means - mu_g, q) / scale


def ood_group_size(data: Data) -> int:
    """OOD samples per group: the size of the smallest test class (a group mean is as noisy as a class's)."""
    return int(np.min(np.bincount(data.y_test)))


def _subspace_dataset(p: SubspaceParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b) for b in p.buffer_percents
             for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(snapshots=p.snapshots), data, specs, seed, mesh)
    ftr = all_features(p.widths, out["params"], data.x_train)
    fte = all_features(p.widths, out["params"], data.x_test)
    group = ood_group_size(data)
    food = all_features(p.widths, out["params"], data.x_ood[: p.ood_groups * group])
    R, K = len(specs), p.snapshots
    cls = np.full((R, N_TASKS, K, N_CLASSES), np.nan)
    ood = np.full((R, N_TASKS, K, p.ood_groups), np.nan)
    nc_trained = np.full((R, N_TASKS, K, 2), np.nan)
    nc1_old = np.full((R, N_TASKS, K), np.nan)
    for r in range(R):
        for s in range(N_TASKS):
            rows = np.concatenate([grid["runs"]["cur_idx"][r, s, : grid["runs"]["cur_n"][r, s]],
                                   grid["runs"]["buf_idx"][r, s, : grid["runs"]["buf_n"][r, s]]]).astype(np.int64)
            trained = np.unique(data.y_train[rows])
            old_rows = np.flatnonzero((data.y_train // 2) < s)
            for k in range(K):
                cls[r, s, k], ood[r, s, k] = projections(ftr[r, s, k][rows], data.y_train[rows], fte[r, s, k],
                                                         data.y_test, food[r, s, k], s, p.ood_groups, group)
                W, b = head_of(_params_at(out["params"], r, s, k))
                m = th.nc_metrics(ftr[r, s, k][rows], data.y_train[rows], W[trained], b[trained])
                nc_trained[r, s, k] = m["nc1"], m["nc3"]
                if s > 0 and not _buffered(grid["runs"], r, s):
                    nc1_old[r, s, k] = th.nc_metrics(ftr[r, s, k][old_rows], data.y_train[old_rows])["nc1"]
    shape = (len(p.buffer_percents), p.n_seeds, N_TASKS, K)
    return {"class_projection": cls.reshape(shape + (N_CLASSES,)), "ood_projection": ood.reshape(shape + (p.ood_groups,)),
            "nc_trained": nc_trained.reshape(shape + (2,)), "nc1_old": nc1_old.reshape(shape)}


def _buffered(runs, r: int, s: int) -> bool:
    """Whether run ``r`` replays anything in session ``s``."""
    return bool(runs["buf_n"][r, s] > 0)


def run_subspace(p: SubspaceParams, ctx: cli.Context) -> dict:
    """The subspace theorem (T1) exactly, and forgotten classes against OOD data (H1, Fig. 4).

    Arrays: ``linear_cases [4]`` (collapsed: T1's hypotheses; momentum, two_layer, not_collapsed:
    controls), ``linear_perp [4, lin_steps + 1, lin_probes]`` ||P_{S_t perp} phi_t(x)|| of arbitrary
    inputs, ``linear_decay_error [4]``, ``upsilon`` (1 - eta lambda), ``linear_fit_error [4]`` the largest
    relative deviation from perp_t = perp_0 upsilon^t, ``linear_rounding_bound`` its float64 budget;
    the TIL feature rank in the unconstrained-features model (Sec. 3.2, :func:`ufm_ranks`): ``ufm_cases
    [3]``, ``ufm_tasks [S]``, ``ufm_classes_per_task [S]``, ``ufm_singular_values [3, S, m]``,
    ``ufm_weyl_bound [3, S]``, ``ufm_residual_norm [3, S]``;
    ``datasets [D]``, ``bayes_accuracy [D]``,
    ``buffer_percents [B]``, ``class_projection [D, B, N, 5, K, 10]`` the projection of each class's
    centred test mean onto S_t at snapshot k of session i, over the current classes' (NaN for unseen
    classes), ``ood_projection [D, B, N, 5, K, G]`` the same for G groups of OOD inputs (CIL; S_t is
    spanned by the current training data, buffer included); ``nc_trained [D, B, N, 5, K, 2]`` NC1 and NC3
    (Papyan's conventions, with the head's rows and biases of the classes trained on) of the session's
    training data (current task and buffer) at each snapshot, ``nc1_old [D, B, N, 5, K]`` NC1 of the old
    classes' training features in sessions without replay (NaN otherwise: session 0 or a buffer).
    """
    lin = linear_cases(p, ctx.config.seed)
    datas = {name: load_data(p, name, ctx.config.seed) for name in p.datasets}
    for name, data in datas.items():  # refuse before any training
        most = data.x_ood.shape[0] // ood_group_size(data)
        if p.ood_groups > most:
            raise ConfigError(ctx.config.path, "ood_groups", f"at most {most} (groups of {ood_group_size(data)} "
                              f"of the {data.x_ood.shape[0]} OOD samples of {name})", p.ood_groups)
    return {"linear_cases": np.asarray(LINEAR_CASES), "linear_perp": lin["perp"],
            "linear_decay_error": lin["decay_error"], "upsilon": np.asarray(1 - p.lin_eta * p.lin_lambda),
            "linear_fit_error": lin["fit_error"], "linear_rounding_bound": lin["rounding_bound"],
            **ufm_ranks(p, ctx.config.seed), "buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "subspace", _subspace_dataset, datas)}


# ---------------------------------------------------------------------------------------------------
# buffer_stats (Fig. 5) and lda (Fig. 6 and our corrected heads)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class BufferParams(CommonParams):
    """CIL with replay (concatenated) at each buffer size; statistics of the final buffer."""

    buffer_percents: tuple[float, ...] = param((1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0), gt=0, le=100)
    calibration: float = param(0.5, gt=0, lt=1, doc="lda: share of memory held out, never trained on")

    def __post_init__(self):
        super().__post_init__()
        _percents(self.buffer_percents)


def _old_rows(grid, r: int) -> np.ndarray:
    return np.asarray(grid["buf_rows"][r], np.int64)


def _stats_dataset(p: BufferParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b) for b in p.buffer_percents
             for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(), data, specs, seed, mesh)
    last = N_TASKS - 1
    ftr = final_features(p.widths, out["params"], data.x_train)
    fte = final_features(p.widths, out["params"], data.x_test)
    old = np.arange(2 * last)
    R = len(specs)
    er_buf, er_held, er_held_b, nc1_buf, nc1_held, nc1_held_b, per_class = (np.full(R, np.nan) for _ in range(7))
    ew_buf, ew_held, ew_held_b = (np.full(R, np.nan) for _ in range(3))
    ratio, ratio_held, ratio_held_b = (np.full((R, old.size), np.nan) for _ in range(3))
    pop = (data.y_test // 2) < last
    for r in range(R):
        rows = _old_rows(grid, r)
        yb = data.y_train[rows]
        key = jax.random.fold_in(runtime.seed_key(seed, specs[r]["seed"]), 11)
        take_b, take_h, take_h2 = [], [], []
        for c in old:
            bc = rows[yb == c]
            tc = np.flatnonzero(data.y_test == c)
            m = min(bc.size, tc.size)
            take_b.append(bc[:m])
            for j, lst in enumerate((take_h, take_h2)):
                order = np.asarray(jax.random.permutation(jax.random.fold_in(key, 100 * j + int(c)), tc.size))
                lst.append(tc[order[:m]])
        tb, th1, th2 = np.concatenate(take_b), np.concatenate(take_h), np.concatenate(take_h2)
        per_class[r] = tb.size / old.size
        er_buf[r] = th.effective_rank(ftr[r][tb])
        er_held[r] = th.effective_rank(fte[r][th1])
        er_held_b[r] = th.effective_rank(fte[r][th2])
        _, pop_means = th.class_means(fte[r], data.y_test)
        centre = pop_means.mean(axis=0)  # mu_G of the population of all seen classes
        ratio[r] = th.mean_norm_ratio(ftr[r][rows], yb, fte[r][pop], data.y_test[pop], centre)
        ratio_held[r] = th.mean_norm_ratio(fte[r][th1], data.y_test[th1], fte[r][pop], data.y_test[pop], centre)
        ratio_held_b[r] = th.mean_norm_ratio(fte[r][th2], data.y_test[th2], fte[r][pop], data.y_test[pop], centre)
        if tb.size >= 2 * old.size:
            nc1_buf[r] = th.nc_metrics(ftr[r][tb], data.y_train[tb])["nc1"]
            nc1_held[r] = th.nc_metrics(fte[r][th1], data.y_test[th1])["nc1"]
            nc1_held_b[r] = th.nc_metrics(fte[r][th2], data.y_test[th2])["nc1"]
            within = [th.within_class_residuals(f[t], y[t]) for f, y, t in (
                (ftr[r], data.y_train, tb), (fte[r], data.y_test, th1), (fte[r], data.y_test, th2))]
            if all(np.any(w != 0) for w in within):
                ew_buf[r], ew_held[r], ew_held_b[r] = (th.effective_rank(w) for w in within)
    head_cos, norm_ratio = np.full(R, np.nan), np.full(R, np.nan)
    for r in range(R):
        W, _ = head_of(_params_at(out["params"], r, last))
        head_cos[r], norm_ratio[r] = th.minority_collapse_stats(W, fte[r], data.y_test, old)
    shape = (len(p.buffer_percents), p.n_seeds)
    return {"minority_head_cosine": head_cos.reshape(shape), "minority_norm_ratio": norm_ratio.reshape(shape),
            "effective_rank_buffer": er_buf.reshape(shape), "effective_rank_heldout": er_held.reshape(shape),
            "effective_rank_heldout_b": er_held_b.reshape(shape),
            "within_rank_buffer": ew_buf.reshape(shape), "within_rank_heldout": ew_held.reshape(shape),
            "within_rank_heldout_b": ew_held_b.reshape(shape),
            "mean_norm_ratio": ratio.reshape(shape + (old.size,)),
            "mean_norm_ratio_heldout": ratio_held.reshape(shape + (old.size,)),
            "mean_norm_ratio_heldout_b": ratio_held_b.reshape(shape + (old.size,)),
            "nc1_heldout_b": nc1_held_b.reshape(shape), "nc1_buffer": nc1_buf.reshape(shape),
            "nc1_heldout": nc1_held.reshape(shape), "compared_per_class": per_class.reshape(shape),
            "buffer_loss": out["buffer_loss"][:, last].reshape(shape)}


def run_buffer_stats(p: BufferParams, ctx: cli.Context) -> dict:
    """Statistics of the trained-on buffer against held-out samples after the last CIL task (Fig. 5).

    Arrays (D data sets, B buffer sizes, N seeds; the 8 old classes): ``datasets [D]``,
    ``buffer_percents [B]``; ``effective_rank_buffer [D, B, N]`` of the buffer's features and
    ``effective_rank_heldout [D, B, N]`` of as many test samples of the same classes (per class
    ``min(buffer, test)``; beyond the paper, which compares with the full split); ``mean_norm_ratio
    [D, B, N, 8]`` ||mu_c(buffer) - mu_G|| / ||mu_c(test) - mu_G|| with mu_G the test population's mean
    of class means, and ``mean_norm_ratio_heldout [D, B, N, 8]`` the same for the equal-size held-out
    sample (a small sample's mean is farther out by its own noise) and ``mean_norm_ratio_heldout_b`` for a
    second equal-size held-out draw (control); ``effective_rank_heldout_b [D, B, N]`` and
    ``nc1_heldout_b [D, B, N]`` of that second draw (controls);
    ``within_rank_buffer``, ``within_rank_heldout``, ``within_rank_heldout_b [D, B, N]`` the same three
    for the within-class residuals (the pooled covariance Sigma-hat of Sec. 5; NaN below two per class);
    ``nc1_buffer``, ``nc1_heldout [D, B, N]`` (NaN below two samples per class);
    ``compared_per_class [D, B, N]``; ``buffer_loss [D, B, N]`` the training loss on the buffer at the end;
    minority collapse (Sec. 3.2, :func:`theory.nc_forgetting.minority_collapse_stats`, the 8 old classes as the
    minority): ``minority_head_cosine [D, B, N]`` the mean pairwise cosine of their centred head rows and
    ``minority_norm_ratio [D, B, N]`` their centred test-feature mean norm over the current classes'.
    """
    return {"buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "stats", _stats_dataset)}


LDA_HEADS = ("network", "probe", "lda_buf_mu_buf_sigma", "lda_pop_mu_identity", "lda_pop_mu_pop_sigma",
             "lda_buf_mu_identity", "uniform_prior", "transfer", "shrinkage", "calibration", "radial",
             "calibration_network")


def radial_head(f_tr, y_tr, buf_rows, cur_rows, held_rows) -> th.LinearHead:
    """Buffer means moved radially about mu_G (the mean of the class means) by ``s`` = the median over old
    classes of ||mu_c(held) - mu_G|| / ||mu_c(buffer) - mu_G||, measured on the never-trained calibration
    rows; Ledoit-Wolf covariance of the buffer and current data; uniform priors (beyond the paper)."""
    rows = np.concatenate([buf_rows, cur_rows]).astype(np.int64)
    x, y = f_tr[rows], y_tr[rows]
    classes, means = th.class_means(x, y)
    centre = means.mean(axis=0)
    old = np.unique(y_tr[held_rows])
    scale = float(np.median(th.mean_norm_ratio(f_tr[held_rows], y_tr[held_rows], f_tr[buf_rows][np.isin(
        y_tr[buf_rows], old)], y_tr[buf_rows][np.isin(y_tr[buf_rows], old)], centre)))
    moved = np.isin(classes, old)
    means[moved] = th.radial_correction(means[moved], centre, scale)
    return th.gaussian_head(means, th.shrunk_covariance(x, y), np.ones(classes.size), classes)


def _lda_dataset(p: BufferParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b, calibration=c)
             for c in (0.0, p.calibration) for b in p.buffer_percents for s in range(p.n_seeds)]
    half = len(specs) // 2
    # two batches of the buffer_stats shape (ER, then calibration): one compiled program for both figures
    parts = [train_grid(p.trainer(), data, specs[i:i + half], seed, mesh) for i in (0, half)]
    out = jax.tree.map(lambda *a: np.concatenate(a), parts[0][0], parts[1][0])
    grid = {"runs": jax.tree.map(lambda *a: np.concatenate(a), parts[0][1]["runs"], parts[1][1]["runs"]),
            "held": parts[0][1]["held"] + parts[1][1]["held"], "buf_rows": parts[0][1]["buf_rows"] + parts[1][1]["buf_rows"]}
    last = N_TASKS - 1
    ftr = final_features(p.widths, out["params"], data.x_train)
    fte = final_features(p.widths, out["params"], data.x_test)
    old_te = (data.y_test // 2) < last
    acc_old, acc_all = (np.full((half, len(LDA_HEADS)), np.nan) for _ in range(2))
    eye = np.eye(ftr.shape[-1])
    for r in range(half):
        f, g = ftr[r], fte[r]
        cur = grid["runs"]["cur_idx"][r, last, : grid["runs"]["cur_n"][r, last]].astype(np.int64)
        rows = np.concatenate([_old_rows(grid, r), cur])
        xb, yb = f[rows], data.y_train[rows]
        heads = {}
        W, b = head_of(_params_at(out["params"], r, last))
        heads["network"] = th.LinearHead(W, b, np.arange(N_CLASSES))
        heads["probe"] = th.fit_probe(f, data.y_train, C=p.probe_C, standardize=p.probe_standardize)
        heads["lda_buf_mu_buf_sigma"] = th.lda_head(xb, yb)
        heads["lda_pop_mu_identity"] = th.lda_head(f, data.y_train, covariance=eye)
        heads["lda_pop_mu_pop_sigma"] = th.lda_head(f, data.y_train)
        heads["lda_buf_mu_identity"] = th.lda_head(xb, yb, covariance=eye)
        heads["uniform_prior"] = th.lda_head(xb, yb, priors=np.ones(np.unique(yb).size))
        for name in ("transfer", "shrinkage"):
            heads[name] = corrected_head(name, f, data.y_train, _old_rows(grid, r), cur)
        rc = half + r  # the calibration run with the same seed and memory
        held = np.concatenate([grid["held"][rc][c] for c in range(2 * last)]).astype(np.int64)
        cur_c = grid["runs"]["cur_idx"][rc, last, : grid["runs"]["cur_n"][rc, last]].astype(np.int64)
        have = all(np.any(data.y_train[held] == c) for c in range(2 * last))
        heads["calibration"] = corrected_head("calibration", ftr[rc], data.y_train, _old_rows(grid, rc), cur_c,
                                              held) if have else None
        have_both = have and all(np.any(data.y_train[_old_rows(grid, rc)] == c) for c in range(2 * last))
        heads["radial"] = radial_head(ftr[rc], data.y_train, _old_rows(grid, rc), cur_c, held) if have_both else None
        Wc, bc = head_of(_params_at(out["params"], rc, last))
        heads["calibration_network"] = th.LinearHead(Wc, bc, np.arange(N_CLASSES))
        for h_i, name in enumerate(LDA_HEADS):
            if heads[name] is None:
                continue
            x = fte[rc] if name.startswith("calibration") or name == "radial" else g
            acc_old[r, h_i] = heads[name].accuracy(x[old_te], data.y_test[old_te])
            acc_all[r, h_i] = heads[name].accuracy(x, data.y_test)
    shape = (len(p.buffer_percents), p.n_seeds, len(LDA_HEADS))
    return {"accuracy_old": acc_old.reshape(shape), "accuracy_all": acc_all.reshape(shape)}


def run_lda(p: BufferParams, ctx: cli.Context) -> dict:
    """Gaussian counterfactual heads (Fig. 6; the four of the authors' code, brief errata) and our
    corrected heads, after the last CIL task, against buffer size.

    Arrays: ``datasets [D]``, ``buffer_percents [B]``, ``heads [H]`` (:data:`LDA_HEADS`), ``seed_index [N]``
    (each seed's index, on the seed axis: a claim that chooses on some seeds and judges on the others
    keeps them apart when the ledger leaves a seed out);
    ``accuracy_old [D, B, N, H]`` test accuracy (over all 10 classes) on the old tasks' samples and
    ``accuracy_all [D, B, N, H]`` on every test sample. Heads: the network's; the probe (full training
    split); LDA from (buffer or population) means with (buffer or population) pooled covariance or the
    identity, priors = class frequencies (buffer statistics = the old classes' buffer and the last task's
    training data; population = the full training split); ``uniform_prior`` (buffer statistics, uniform
    priors); ``transfer`` (buffer means, the last task's covariance, uniform priors); ``shrinkage``
    (Ledoit-Wolf); ``calibration`` (a run holding out ``calibration`` of each class's memory, never trained
    on: old means from those samples, covariance transferred; NaN when a class has none), ``radial`` (the
    same run's replayed buffer means shrunk radially by the inflation the calibration samples measure,
    Ledoit-Wolf covariance) and that run's own head ``calibration_network``. Equal memory throughout.
    """
    return {"buffer_percents": np.asarray(p.buffer_percents, np.float64), "heads": np.asarray(LDA_HEADS),
            "seed_index": np.arange(p.n_seeds), **per_dataset(p, ctx, "lda", _lda_dataset)}


# The axis of every per-seed array (seed i of every run starts from the same initialisation), for the
# ledger's leave-one-seed-out re-decisions.
_SWEEP_SEEDS = {**dict.fromkeys(("head_acc", "probe_acc", "snr", "corrected_acc", "train_loss", "buffer_loss"), 4),
                **dict.fromkeys(("joint_head_acc", "joint_probe_acc", "joint_loss"), 2)}
_STATS_SEEDS = dict.fromkeys(
    ("effective_rank_buffer", "effective_rank_heldout", "effective_rank_heldout_b", "within_rank_buffer",
     "within_rank_heldout", "within_rank_heldout_b", "mean_norm_ratio", "mean_norm_ratio_heldout",
     "minority_head_cosine", "minority_norm_ratio",
     "mean_norm_ratio_heldout_b", "nc1_buffer", "nc1_heldout", "nc1_heldout_b", "compared_per_class",
     "buffer_loss"), 2)

EXPERIMENTS = {
    "buffer_sweep": cli.Experiment(SweepParams, run_buffer_sweep, seed_axes=_SWEEP_SEEDS),
    "subspace": cli.Experiment(SubspaceParams, run_subspace,
                               seed_axes={"class_projection": 2, "ood_projection": 2, "nc_trained": 2, "nc1_old": 2}),
    "buffer_stats": cli.Experiment(BufferParams, run_buffer_stats, seed_axes=_STATS_SEEDS),
    "lda": cli.Experiment(BufferParams, run_lda, seed_axes={"accuracy_old": 2, "accuracy_all": 2, "seed_index": 0}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
