"""Evaluation on frozen features: features, head accuracy, linear probes, pair SNR, Gaussian heads."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from sims import runtime
from sims.nc_forgetting.data import N_CLASSES, N_TASKS
from sims.nc_forgetting.training import features_fn
from theory import nc_forgetting as th

# ---------------------------------------------------------------------------------------------------
# Evaluation on frozen features
# ---------------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _features_over(widths: tuple[int, ...]):
    """``(params with one leading axis [P, ...], x [n, 64]) -> [P, n, f]``, compiled once per ``widths``."""
    return runtime.jit(jax.vmap(features_fn(widths), in_axes=(0, None)), name="all_features")


def all_features(widths, params, x) -> np.ndarray:
    """Features ``[*lead, n, f]`` of ``x [n, 64]`` under every parameter set of the stacked ``params``
    (leading axes ``lead``: runs, sessions, snapshots), float64 on the host."""
    lead = params["params"]["head"]["bias"].shape[:-1]
    flat = jax.tree.map(lambda a: a.reshape((-1,) + a.shape[len(lead):]), params)
    out = _features_over(tuple(widths))(flat, jnp.asarray(x))
    if runtime.is_planning():  # the planner's zeros, read by nobody (common.evaluated): no float64 copy
        return np.broadcast_to(np.float64(0), lead + out.shape[1:])
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
    """``[5]`` probe accuracies after ``session`` (the protocol of the authors' code): TIL one probe per
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
