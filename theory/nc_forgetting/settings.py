"""One head per task against one head for all classes (the feature rank, Sec. 3.2) and minority collapse of under-replayed classes."""

from __future__ import annotations

import math

import numpy as np

from theory.nc_forgetting.metrics import check_features

# ---------------------------------------------------------------------------------------------------
# One head per task (TIL) against one head for all classes: the rank of the features (Sec. 3.2)
# ---------------------------------------------------------------------------------------------------


def head_rank_bound(n_tasks: int, classes_per_task: int, *, multi_head: bool) -> int:
    """The rank bound of the collapsed features of Sec. 3.2: ``n (K - 1)`` with one head per task (TIL:
    each task's features are a (K - 1)-dimensional simplex of its own head) and ``n K - 1`` with a single
    head over all ``n K`` classes (CIL).

    Raises:
      ValueError: ``n_tasks < 1`` or ``classes_per_task < 2``.
    """
    if n_tasks < 1 or classes_per_task < 2:
        raise ValueError(f"need n_tasks >= 1 and classes_per_task >= 2, got {n_tasks} and {classes_per_task}")
    return n_tasks * (classes_per_task - 1) if multi_head else n_tasks * classes_per_task - 1


def multihead_ufm_gd(n_tasks: int, classes_per_task: int, dim: int, per_class: int, rng: np.random.Generator, *,
                     multi_head: bool, eta: float, lam_features: float, lam_head: float, steps: int,
                     init_scale: float = 1.0) -> dict[str, np.ndarray]:
    """Full-batch GD, float64, in the unconstrained-features model of continual classification with every
    task's data trained on (the hypothesis of Sec. 3.2: neural collapse holds for the data being trained
    on): free features ``h_i`` (one per sample), a linear head with bias, cross-entropy over the logits of
    the sample's task (``multi_head``: TIL, one head per task) or over all ``n K`` classes (single head,
    CIL), coupled weight decay ``lam_features`` on each feature and ``lam_head`` on the head weights.

    Updates (each sample's feature is its own parameter with loss ``CE_i + lam_features / 2 ||h_i||^2``; the
    head's loss is their mean plus ``lam_head / 2 ||W||_F^2``)::

        h_i <- h_i - eta (W^T g_i + lam_features h_i),   g_i = softmax over the allowed logits - onehot
        W   <- W - eta (G^T H / N + lam_head W),          b <- b - eta mean_i g_i

    At a stationary point with ``lam_features > 0``, ``h_i = -W^T g_i / lam_features`` and ``g_i`` sums to 0
    over the allowed logits, so the features of task t lie in the span of the differences of its head's
    rows: rank <= :func:`head_rank_bound`. Off stationarity, ``H = A + R / lam_features`` with ``rank A <=``
    the bound and ``R`` the stationarity residual, so by Weyl's inequality ``sigma_(bound + 1)(H) <=
    ||R||_2 / lam_features``: the returned ``weyl_bound``.

    Args:
      n_tasks, classes_per_task: ``n`` and ``K``; dim: feature dimension ``d``; per_class: samples per class.
      rng: initialisation (features and head weights N(0, init_scale^2 / d), bias 0).
      eta: step; lam_features, lam_head: weight decay (>= 0); steps: GD steps.
    Returns:
      ``features [N, d]`` (N = n K per_class), ``labels [N]`` (class c belongs to task c // K), ``weights
      [n K, d]``, ``bias [n K]``, ``singular_values [min(N, d)]`` of the features (descending),
      ``residual_norm`` = ||R||_2 (spectral norm of the rows ``W^T g_i + lam_features h_i``) and
      ``weyl_bound`` = ``residual_norm / lam_features`` (inf when ``lam_features = 0``: no certificate).
    Raises:
      ValueError: ``n_tasks < 1``, ``classes_per_task < 2``, ``dim < 1``, ``per_class < 1``, ``steps < 1``,
        ``eta <= 0``, a negative weight decay or ``init_scale <= 0``.
    """
    if n_tasks < 1 or classes_per_task < 2 or dim < 1 or per_class < 1 or steps < 1:
        raise ValueError("need n_tasks >= 1, classes_per_task >= 2, dim >= 1, per_class >= 1, steps >= 1; got "
                         f"{n_tasks}, {classes_per_task}, {dim}, {per_class}, {steps}")
    if not (eta > 0 and lam_features >= 0 and lam_head >= 0 and init_scale > 0):
        raise ValueError(f"need eta > 0, lam_features >= 0, lam_head >= 0, init_scale > 0; got {eta}, "
                         f"{lam_features}, {lam_head}, {init_scale}")
    C = n_tasks * classes_per_task
    N = C * per_class
    y = np.repeat(np.arange(C), per_class)
    H = rng.standard_normal((N, dim)) * init_scale / math.sqrt(dim)
    W = rng.standard_normal((C, dim)) * init_scale / math.sqrt(dim)
    b = np.zeros(C)
    k = np.arange(C)
    allowed = (k[None, :] // classes_per_task == (y // classes_per_task)[:, None]) if multi_head \
        else np.ones((N, C), bool)
    Y = np.zeros((N, C))
    Y[np.arange(N), y] = 1.0

    def grad_logits(H, W, b):
        z = np.where(allowed, H @ W.T + b, -np.inf)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(axis=1, keepdims=True) - Y

    for _ in range(steps):
        G = grad_logits(H, W, b)
        H, W, b = (H - eta * (G @ W + lam_features * H), W - eta * (G.T @ H / N + lam_head * W),
                   b - eta * G.mean(axis=0))
    R = grad_logits(H, W, b) @ W + lam_features * H
    res = float(np.linalg.norm(R, 2))
    return {"features": H, "labels": y, "weights": W, "bias": b,
            "singular_values": np.linalg.svd(H, compute_uv=False), "residual_norm": res,
            "weyl_bound": res / lam_features if lam_features > 0 else math.inf}


# ---------------------------------------------------------------------------------------------------
# Minority collapse of under-replayed classes (Sec. 3.2, after Fang et al. 2021)
# ---------------------------------------------------------------------------------------------------


def minority_collapse_stats(head_weights, features, labels, minority) -> tuple[float, float]:
    """Two signs of minority collapse (Fang et al. 2021; the paper's Sec. 3.2 for under-replayed old classes
    in CIL): their head rows converge and their features shrink toward the global mean.

    Args:
      head_weights: ``[C, d]`` one row per class ``0..C-1`` (the network's head).
      features: ``[n, d]`` features of samples of every class; labels: ``[n]`` in ``0..C-1``, every class
        present.
      minority: the minority classes (at least two; the rest are the majority, at least one).
    Returns:
      ``(cosine, norm_ratio)``: the mean pairwise cosine between the minority classes' head rows centred by the
      mean row of all ``C`` classes (a simplex ETF gives -1/(C - 1); converged rows give 1), and the mean
      norm of the minority classes' centred feature means ``||mu_c - mu_G||`` (``mu_G`` the mean of all
      class means) over the majority classes' mean norm.
    Raises:
      ValueError: shapes disagree, a class without samples, fewer than two minority classes or no majority
        class, or a zero centred row or mean.
    """
    W = check_features(head_weights, "head_weights", min_rows=3)
    x = check_features(features)
    y = np.asarray(labels)
    C = W.shape[0]
    if x.shape[1] != W.shape[1] or y.shape != (x.shape[0],):
        raise ValueError(f"shapes disagree: head_weights {W.shape}, features {x.shape}, labels {y.shape}")
    if set(np.unique(y).tolist()) != set(range(C)):
        raise ValueError(f"labels must cover the classes 0..{C - 1} of the head, got {np.unique(y).tolist()}")
    mino = np.unique(np.asarray(minority, int))
    majo = np.setdiff1d(np.arange(C), mino)
    if mino.size < 2 or majo.size < 1 or mino.min() < 0 or mino.max() >= C:
        raise ValueError(f"need at least two minority classes and one majority class in 0..{C - 1}, got {mino.tolist()}")
    wc = W - W.mean(axis=0)
    means = np.stack([x[y == c].mean(axis=0) for c in range(C)])
    norms_w = np.linalg.norm(wc[mino], axis=1)
    centred = np.linalg.norm(means - means.mean(axis=0), axis=1)
    if np.any(norms_w == 0) or np.any(centred == 0):
        raise ValueError("a centred head row or class mean is zero: the angle or ratio is undefined")
    u = wc[mino] / norms_w[:, None]
    cos = u @ u.T
    off = ~np.eye(mino.size, dtype=bool)
    return float(cos[off].mean()), float(centred[mino].mean() / centred[majo].mean())
