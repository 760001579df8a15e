"""The MLP (flax), the per-setting logit masks and losses, buffers and run grids, and the vmapped training of every run (seed x buffer x setting x schedule) sharded over the mesh."""

from __future__ import annotations

import dataclasses
import functools
import math

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from sims import runtime
from sims.nc_forgetting.data import Data, N_CLASSES, N_TASKS, SCHEDULES, SETTINGS

# ---------------------------------------------------------------------------------------------------
# Model and training
# ---------------------------------------------------------------------------------------------------


# fold_in salts of a run's seed key, each naming the draw it keeps apart from the others. Session s's
# minibatches use fold_in(key, s + 1), 1 to 5 for the five sessions: the salts lie outside that range.
INIT_SALT = 0  # the network's initialisation
CLASS_ORDER_SALT = 7  # the per-class row orders that buffers are cut from (class_orders)


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
    params = model.init(jax.random.fold_in(key, INIT_SALT), jnp.zeros((1, x_train.shape[1]), jnp.float32))
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
    key = jax.random.fold_in(runtime.seed_key(seed, seed_index), CLASS_ORDER_SALT)
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
    n = bucket(data.y_train.size)
    x = np.zeros((n, data.x_train.shape[1]), np.float32)
    x[: data.y_train.size] = data.x_train
    y = np.zeros(n, np.int32)
    y[: data.y_train.size] = data.y_train
    out = runtime.map_batch(_grid_run(tr, seed), grid["runs"], jnp.asarray(x), jnp.asarray(y), mesh=mesh)
    return out, grid


@functools.lru_cache(maxsize=16)
def _grid_run(tr: Trainer, seed: int):
    """``(run, x_train, y_train) -> train_run(...)``, one function object per ``(tr, seed)``: every
    train_grid call of a process with these settings (both data sets, every experiment) reuses its traced
    and compiled program instead of tracing, lowering and loading it again."""
    class_task = jnp.asarray(np.arange(N_CLASSES) // 2, jnp.int32)

    def fn(run, xtr, ytr):
        return train_run(tr, seed, run, xtr, ytr, class_task)

    fn.__qualname__ = "train_grid"  # its name in the plan
    return fn
