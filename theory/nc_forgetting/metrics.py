"""Checks, class statistics and the collapse metrics on frozen features (numpy, float64): NC1-NC4 in Papyan et al.'s conventions, the SNR of Sec. 4.1, the effective rank, the active subspace S_t (Definition 1)."""

from __future__ import annotations

import math

import numpy as np

PROBE_C = 10.0  # the authors' probe (utils/feature_forgetting.py): LogisticRegression(C=10, max_iter=5000)
# on raw features; we standardise by default (the protocol; lbfgs converges far faster)
PROBE_MAX_ITER = 5000
LDA_RIDGE = 1e-6  # Sigma + 1e-6 I, as in the authors' LDA counterfactuals


# ---------------------------------------------------------------------------------------------------
# Checks and class statistics
# ---------------------------------------------------------------------------------------------------


def check_features(features, name: str = "features", *, min_rows: int = 1) -> np.ndarray:
    """``features`` as a finite float64 ``[n, d]`` array with ``n >= min_rows``.

    Raises:
      ValueError: not numeric (strings, complex numbers), not two-dimensional, too few rows, or a
        non-finite entry (counted).
    """
    raw = np.asarray(features)
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be a real numeric array, got dtype {raw.dtype}")
    x = np.asarray(raw, dtype=np.float64)  # no copy of a float64 array
    if x.ndim != 2:
        raise ValueError(f"{name} must be a [n, d] array, got shape {x.shape}")
    if x.shape[0] < min_rows or x.shape[1] < 1:
        raise ValueError(f"{name} needs at least {min_rows} rows and one column, got shape {x.shape}")
    bad = x.size - int(np.count_nonzero(np.isfinite(x)))
    if bad:
        raise ValueError(f"{name} has {bad} non-finite entries (NaN or inf); refused, not averaged in")
    return x


def _unit_scale(x: np.ndarray) -> np.ndarray:
    """``x / max |x|`` when ``max |x|`` is outside ``[1e-100, 1e100]`` (squares would under- or overflow),
    else ``x`` itself (no copy): for quantities that do not depend on the scale. ``x`` is never empty (its
    callers pass arrays from :func:`check_features`, at least one row and one column)."""
    m = float(np.max(np.abs(x)))
    return x / m if m > 0 and not 1e-100 <= m <= 1e100 else x


def check_labelled(features, labels, *, min_per_class: int = 2, min_classes: int = 2
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(features [n, d] float64, labels [n] int, classes [K] sorted)``.

    Raises:
      ValueError: shapes disagree, labels are not integers, fewer than ``min_classes`` classes, a class
        with fewer than ``min_per_class`` samples, or non-finite features.
    """
    x = check_features(features)
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != x.shape[0]:
        raise ValueError(f"labels must be a [n] vector with n = {x.shape[0]} (the rows of features), "
                         f"got shape {y.shape}")
    if y.dtype.kind == "u" and y.size and int(y.max()) > np.iinfo(np.int64).max:
        raise ValueError("labels must fit in int64, got an unsigned label above 2^63 - 1")
    if y.dtype.kind == "f":  # integral floats are accepted where they are exact integers (|y| <= 2^53)
        if not (np.all(np.isfinite(y)) and np.all(y == np.round(y)) and np.all(np.abs(y) <= 2.0**53)):
            raise ValueError("labels must be integers (float labels must be whole numbers of size at most 2^53)")
        y = y.astype(np.int64)
    elif y.dtype.kind not in "iu":
        raise ValueError(f"labels must be integers, got dtype {y.dtype}")
    classes, counts = np.unique(y, return_counts=True)
    if classes.size < min_classes:
        raise ValueError(f"need at least {min_classes} classes, got {classes.size}")
    small = classes[counts < min_per_class]
    if small.size:
        raise ValueError(f"every class needs at least {min_per_class} samples; class {int(small[0])} has "
                         f"{int(counts[classes == small[0]][0])}")
    return x, y.astype(np.int64), classes


def class_means(features, labels, *, min_per_class: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """``(classes [K], means [K, d])`` of the labelled features (float64). Raises ValueError as
    :func:`check_labelled`."""
    x, y, classes = check_labelled(features, labels, min_per_class=min_per_class, min_classes=1)
    means = np.stack([x[y == c].mean(axis=0) for c in classes])
    return classes, means


def within_class_residuals(features, labels, *, min_per_class: int = 1) -> np.ndarray:
    """``[n, d]`` features minus their class mean (the samples of Sigma_W)."""
    x, y, classes = check_labelled(features, labels, min_per_class=min_per_class, min_classes=1)
    _, means = class_means(x, y, min_per_class=min_per_class)
    return x - means[np.searchsorted(classes, y)]


def pooled_covariance(features, labels, *, ddof_per_class: int = 1) -> np.ndarray:
    """Pooled within-class covariance ``[d, d]``: the sum of squared residuals over ``n - K``
    (``ddof_per_class=1``, the LDA estimate) or over ``n`` (``0``, Papyan's Sigma_W).

    Raises:
      ValueError: as :func:`check_labelled` (one sample per class is allowed with ``ddof_per_class=0``),
        or no degrees of freedom left.
    """
    x, y, classes = check_labelled(features, labels, min_per_class=1, min_classes=1)
    r = within_class_residuals(x, y)
    dof = x.shape[0] - ddof_per_class * classes.size
    if dof <= 0:
        raise ValueError(f"pooled covariance needs more samples than classes ({x.shape[0]} samples, "
                         f"{classes.size} classes)")
    return r.T @ r / dof


# ---------------------------------------------------------------------------------------------------
# Neural collapse (Papyan, Han, Donoho 2020; the paper's Sec. 3.1)
# ---------------------------------------------------------------------------------------------------


def _centred_rank_mask(s, means, mu_g) -> np.ndarray:
    """Which singular values ``s`` of the centred means ``M~ = means - mu_g`` (``[K, d]``) are real: at most
    K - 1 (centring removes one dimension), and above the rounding that centring leaves behind,
    ``max(K, d) * eps * max(s_max, sqrt(K) ||mu_G||)`` (far from the origin, as with ReLU features, the
    rounding of ``means - mu_g`` is relative to the uncentred means, not to the spread)."""
    K, d = means.shape  # s holds min(K, d) >= 1 values: callers pass K >= 2 classes, check_features d >= 1
    tol = max(K, d) * np.finfo(np.float64).eps * max(float(s[0]), math.sqrt(K) * float(np.linalg.norm(mu_g)))
    keep = s > tol
    keep[K - 1:] = False
    return keep


def nc_metrics(features, labels, head_weights=None, head_bias=None) -> dict[str, float]:
    """Neural-collapse metrics of labelled features, each 0 at exact collapse (Papyan et al. 2020).

    With class means ``mu_c``, the global mean ``mu_G`` = the mean of the class means (class-balanced) and
    the centred means ``M~ = [mu_c - mu_G]`` (``[K, d]``):

    - ``nc1`` = Tr(Sigma_W Sigma_B^+) / K, Sigma_W the within-class covariance (residuals over n), Sigma_B
      = M~^T M~ / K; the pseudo-inverse keeps at most K - 1 singular values of M~, those above the rounding
      of the centring (``max(K, d) * eps * max(s_max, sqrt(K) ||mu_G||)``);
    - ``nc2_equinorm`` = std_c ||mu~_c|| / mean_c ||mu~_c|| (population std);
    - ``nc2_equiangular`` = mean over c != c' of |cos(mu~_c, mu~_c') + 1/(K - 1)|;
    - ``nc3`` = || W / ||W||_F - M~ / ||M~||_F ||_F^2 (squared, Papyan's convention; the paper plots a cosine
      that tends to 1 instead), when ``head_weights`` is given;
    - ``nc4`` = share of samples whose head prediction ``argmax_c (w_c . h + b_c)`` (the network's own
      classifier, bias included) differs from the nearest class centre ``argmin_c ||h - mu_c||``, when
      ``head_weights`` is given. At exact collapse (NC1-NC3 with the head's bias at its collapse value
      ``b_c = -w_c . mu_G + const``, Papyan et al.) it is 0 whatever ``mu_G``; without the bias it is not
      (a global mean off the origin adds ``w_c . mu_G`` to the logits).

    Args:
      features: ``[n, d]`` finite.
      labels: ``[n]`` integers, at least two classes with at least two samples each.
      head_weights: optional ``[K, d]``, row ``k`` for the ``k``-th smallest label.
      head_bias: ``[K]`` the head's bias, required with ``head_weights`` (pass zeros for a head without
        one: NC4 is about the classifier the network uses).
    Returns:
      dict with ``nc1``, ``nc2_equinorm``, ``nc2_equiangular`` and, with a head, ``nc3`` and ``nc4``.
    Raises:
      ValueError: bad features or labels (see :func:`check_labelled`), a head or bias of the wrong shape or
        non-finite, a head without its bias (or a bias without a head), or class means that all coincide
        (Sigma_B = 0).

    Cost: O(n d K), no ``d x d`` matrix: Tr(Sigma_W Sigma_B^+) = K sum_j s_j^-2 v_j^T Sigma_W v_j over the
    SVD M~ = U S V^T.
    """
    x, y, classes = check_labelled(features, labels)
    x0 = x
    x = _unit_scale(x0)  # every metric is scale-free: avoid overflow and underflow at extreme scales
    shrink = 1.0 if x is x0 else float(np.max(np.abs(x0)))  # x = x0 / shrink
    K, n = classes.size, x.shape[0]
    idx = np.searchsorted(classes, y)
    onehot = np.zeros((K, n))
    onehot[idx, np.arange(n)] = 1.0
    means = onehot @ x / np.bincount(idx, minlength=K)[:, None]  # one pass over the features
    mu_g = means.mean(axis=0)
    mt = means - mu_g
    _, s, vt = np.linalg.svd(mt, full_matrices=False)
    keep = _centred_rank_mask(s, means, mu_g)
    if not np.any(keep):
        raise ValueError("all class means coincide (Sigma_B = 0): NC1 is undefined")
    v = vt[keep].T  # [d, r]
    proj = x @ v - (means @ v)[idx]  # residuals projected on the r directions, [n, r]
    nc1 = float(np.sum(np.sum(proj**2, axis=0) / n / s[keep] ** 2))  # = K sum_j (...) / K
    norms = np.linalg.norm(mt, axis=1)
    if np.any(norms == 0):
        raise ValueError("a centred class mean is exactly zero: NC2 angles are undefined")
    unit = mt / norms[:, None]
    cos = unit @ unit.T
    off = ~np.eye(K, dtype=bool)
    out = {"nc1": nc1, "nc2_equinorm": float(norms.std() / norms.mean()),
           "nc2_equiangular": float(np.mean(np.abs(cos[off] + 1.0 / (K - 1))))}
    if (head_weights is None) != (head_bias is None):
        raise ValueError("NC3/NC4 need the head's weights and its bias together (head_weights and head_bias; "
                         "zeros for a head without a bias)")
    if head_weights is not None:
        w = np.asarray(head_weights)
        if w.shape != (K, x.shape[1]):
            raise ValueError(f"head_weights must be [K, d] = [{K}, {x.shape[1]}] (one row per class), "
                             f"got shape {w.shape}")
        w = check_features(w, "head_weights")
        bias = check_features(np.reshape(np.asarray(head_bias), (1, -1)), "head_bias")[0]
        if bias.shape != (K,):
            raise ValueError(f"head_bias must be [K] = [{K}] (one entry per class), got shape "
                             f"{np.shape(head_bias)}")
        wn = np.linalg.norm(w)
        if wn == 0:
            raise ValueError("head_weights are all zero: NC3 is undefined")
        out["nc3"] = float(np.sum((w / wn - mt / np.linalg.norm(mt)) ** 2))
        scores = x @ np.vstack([w, means]).T  # one pass: head logits and x . mu_c
        # features divided by ``shrink`` (_unit_scale): w . (s x) + b = s (w . x + b / s), the same argmax
        head = np.argmax(scores[:, :K] + bias / shrink, axis=1)
        ncc = np.argmin(np.sum(means**2, axis=1) - 2 * scores[:, K:], axis=1)  # nearest centre (||x||^2 dropped)
        out["nc4"] = float(np.mean(head != ncc))
    return out


# ---------------------------------------------------------------------------------------------------
# Separability, rank, subspaces
# ---------------------------------------------------------------------------------------------------


def snr(features_a, features_b) -> float:
    """SNR(a, b) = ||mu_a - mu_b||^2 / Tr(Sigma_a + Sigma_b) (the paper's Sec. 4.1; unbiased covariances).

    Args:
      features_a, features_b: ``[n_a, d]`` and ``[n_b, d]`` samples of two classes, at least two each.
    Returns:
      the SNR (float, >= 0; inf when both classes have zero spread and distinct means).
    Raises:
      ValueError: fewer than two samples, different ``d``, non-finite values, or both classes with zero
        spread and equal means (0/0).
    """
    a = check_features(features_a, "features_a", min_rows=2)
    b = check_features(features_b, "features_b", min_rows=2)
    if a.shape[1] != b.shape[1]:
        raise ValueError(f"features_a and features_b need the same d, got {a.shape[1]} and {b.shape[1]}")
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))  # the SNR is scale-free
    if scale > 0 and not 1e-100 <= scale <= 1e100:
        a, b = a / scale, b / scale
    num = float(np.sum((a.mean(axis=0) - b.mean(axis=0)) ** 2))
    den = float(np.sum(a.var(axis=0, ddof=1)) + np.sum(b.var(axis=0, ddof=1)))
    if den == 0:
        if num == 0:
            raise ValueError("SNR is 0/0: both classes are single points at the same place")
        return math.inf
    return num / den


def effective_rank(features) -> float:
    """exp of the Shannon entropy of the normalised eigenvalues of the (centred) covariance of
    ``features [n, d]`` (Roy and Vetterli 2007): between 1 and ``min(n - 1, d)``.

    Raises:
      ValueError: fewer than two rows, non-finite values, or zero variance (no eigenvalue mass).
    """
    x = _unit_scale(check_features(features, min_rows=2))  # scale-free
    s = np.linalg.svd(x - x.mean(axis=0), compute_uv=False) ** 2
    total = float(s.sum())
    if total == 0:
        raise ValueError("features have zero variance: the effective rank is undefined")
    p = s[s > 0] / total
    return float(math.exp(-np.sum(p * np.log(p))))


def active_subspace(features, labels) -> np.ndarray:
    """Orthonormal basis ``[d, r]`` of S = span of the centred class means (the paper's Definition 1),
    ``mu_G`` = mean of the class means, ``r`` = the numeric rank of ``M~`` (at most K - 1; singular values
    above the rounding of the centring, as in :func:`nc_metrics`).

    Raises:
      ValueError: bad features or labels (one sample per class is allowed), or coinciding means.
    """
    _, means = class_means(features, labels)
    if means.shape[0] < 2:
        raise ValueError("the active subspace needs at least two classes")
    mu_g = means.mean(axis=0)
    _, s, vt = np.linalg.svd(means - mu_g, full_matrices=False)
    keep = _centred_rank_mask(s, means, mu_g)
    if not np.any(keep):
        raise ValueError("all class means coincide: the active subspace is {0}")
    return vt[keep].T


def projection_norm(vectors, basis) -> np.ndarray:
    """``[m]`` norms ``||P_S v||`` of the rows of ``vectors [m, d]`` projected onto the span of the
    orthonormal columns of ``basis [d, r]``."""
    v = check_features(vectors, "vectors")
    q = check_features(basis, "basis")
    if q.shape[0] != v.shape[1]:
        raise ValueError(f"basis must be [d, r] with d = {v.shape[1]}, got shape {q.shape}")
    return np.linalg.norm(v @ q, axis=1)
