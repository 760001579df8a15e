"""Neural collapse and forgetting under replay (Lanzillotta, Meier, Hofmann, ICLR 2026, arXiv 2512.07400,
"Heads collapse, features stay: why replay needs big buffers"). Brief: ``shared/papers/nc_forgetting.md``
(its errata override its body and the issue's wording).

The toolkit, on frozen features (numpy, float64):

- neural-collapse metrics NC1-NC4 in Papyan et al.'s (2020) conventions (0 at exact collapse);
- the separability proxy SNR (Sec. 4.1), the effective rank, the active subspace S_t = span of the centred
  class means (Definition 1) and projections onto it;
- linear probes (scikit-learn's logistic regression, one fixed protocol) and Gaussian (LDA) heads built from
  chosen means and covariances (Sec. 5, Fig. 6), with the statistics corrections we add beyond the paper
  (covariance transfer, Ledoit-Wolf shrinkage, radial mean correction);
- the linear-feature model in which the subspace theorem (T1) is exact: plain GD on ``phi = V x`` with a
  linear head and coupled weight decay on ``V``, where the component of any feature outside S shrinks by
  ``upsilon = 1 - eta * lambda`` per step.

Shapes: ``n`` samples, ``d`` feature dimensions, ``K`` classes. Labels are integers; class ``k`` of a
``[K, ...]`` array is the ``k``-th smallest label present. Every public function refuses non-finite
features and classes with fewer than two samples with a ValueError naming the argument.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.stats import multivariate_normal, norm
from sklearn.covariance import ledoit_wolf
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

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


# ---------------------------------------------------------------------------------------------------
# Heads on frozen features: the probe, Gaussian (LDA) heads and their corrections
# ---------------------------------------------------------------------------------------------------


class LinearHead(NamedTuple):
    """A linear classifier ``argmax_k (weights[k] . x + bias[k])`` over ``classes``.

    Attributes: ``weights [K, d]``, ``bias [K]``, ``classes [K]``.
    """

    weights: np.ndarray
    bias: np.ndarray
    classes: np.ndarray

    def predict(self, features) -> np.ndarray:
        """``[n]`` predicted labels of ``features [n, d]``."""
        x = check_features(features)
        return self.classes[np.argmax(x @ self.weights.T + self.bias, axis=1)]

    def accuracy(self, features, labels) -> float:
        """Share of rows of ``features`` whose prediction equals ``labels [n]``."""
        return float(np.mean(self.predict(features) == np.asarray(labels)))


def fit_probe(train_x, train_y, *, C: float = PROBE_C, standardize: bool = True,
              max_iter: int = PROBE_MAX_ITER) -> LinearHead:
    """A fresh linear probe on frozen features: scikit-learn's multinomial ``LogisticRegression(C,
    max_iter)`` (lbfgs) fitted on ``(train_x [n, d], train_y [n])``, returned as a :class:`LinearHead` in
    the original feature coordinates. The fixed protocol: the authors' C = 10 on standardised features (the
    scaling is folded into the head); the authors fit raw features (brief errata: ``standardize=False``),
    which L-BFGS needs 3-15x more iterations for on collapsed features.

    Raises:
      ValueError: bad features or labels (two classes with two samples each), ``C <= 0``.
    """
    x, y, classes = check_labelled(train_x, train_y)
    if not (math.isfinite(C) and C > 0):
        raise ValueError(f"C must be positive and finite, got {C}")
    mu, sd = np.zeros(x.shape[1]), np.ones(x.shape[1])
    if standardize:
        sc = StandardScaler().fit(x)
        mu, sd = sc.mean_, sc.scale_
    clf = LogisticRegression(C=C, max_iter=max_iter).fit((x - mu) / sd, y)
    w, b = clf.coef_, clf.intercept_
    if classes.size == 2:  # scikit-learn keeps one row for two classes: decision w.x + b > 0 -> classes[1]
        w, b = np.vstack([np.zeros_like(w[0]), w[0]]), np.array([0.0, b[0]])
    w = w / sd
    return LinearHead(w, b - w @ mu, clf.classes_)


def probe_accuracy(train_x, train_y, test_x, test_y, *, C: float = PROBE_C, standardize: bool = True,
                   max_iter: int = PROBE_MAX_ITER) -> float:
    """Accuracy on ``(test_x [m, d], test_y [m])`` of :func:`fit_probe` on ``(train_x, train_y)``.

    Raises:
      ValueError: as :func:`fit_probe`, test features of another ``d``, or test labels the probe never saw.
    """
    head = fit_probe(train_x, train_y, C=C, standardize=standardize, max_iter=max_iter)
    tx = check_features(test_x, "test_x")
    ty = np.asarray(test_y)
    if tx.shape[1] != head.weights.shape[1] or ty.shape != (tx.shape[0],):
        raise ValueError(f"test_x must be [m, {head.weights.shape[1]}] and test_y [m], got {tx.shape} and "
                         f"{ty.shape}")
    if not np.all(np.isin(ty, head.classes)):
        raise ValueError("test_y has labels that are not in train_y")
    return head.accuracy(tx, ty)


def gaussian_head(means, covariance, priors, classes=None, *, ridge: float = LDA_RIDGE) -> LinearHead:
    """The shared-covariance Gaussian (LDA) head: ``w_c = S^-1 mu_c``,
    ``b_c = -1/2 mu_c^T S^-1 mu_c + log prior_c`` with ``S = covariance + ridge * I``.

    Args:
      means: ``[K, d]``; covariance: ``[d, d]`` symmetric PSD; priors: ``[K]`` positive (normalised here);
      classes: ``[K]`` labels (default ``0..K-1``).
    Raises:
      ValueError: shapes disagree, non-finite entries, non-positive priors, or ``S`` not positive definite.
    """
    m = check_features(means, "means")
    K, d = m.shape
    s = check_features(covariance, "covariance")
    if s.shape != (d, d):
        raise ValueError(f"covariance must be [d, d] = [{d}, {d}], got {s.shape}")
    p = np.asarray(priors, np.float64)
    if p.shape != (K,) or not np.all(np.isfinite(p)) or np.any(p <= 0):
        raise ValueError(f"priors must be [K] = [{K}] positive, got {p}")
    s = 0.5 * (s + s.T) + ridge * np.eye(d)
    try:
        c = np.linalg.cholesky(s)
    except np.linalg.LinAlgError:
        raise ValueError("covariance + ridge I is not positive definite") from None
    w = np.linalg.solve(c.T, np.linalg.solve(c, m.T)).T  # [K, d] = (S^-1 mu_c)^T
    b = -0.5 * np.sum(w * m, axis=1) + np.log(p / p.sum())
    cls = np.arange(K) if classes is None else np.asarray(classes)
    return LinearHead(w, b, cls)


def lda_head(features, labels, *, covariance=None, means=None, priors=None,
             ridge: float = LDA_RIDGE) -> LinearHead:
    """LDA head from labelled features: class means and frequencies of ``(features, labels)``, and the
    pooled within-class covariance unless ``covariance [d, d]`` is given (``np.eye(d)`` gives the
    identity counterfactual); ``means [K, d]`` replaces the class means (e.g. population means) and
    ``priors [K]`` the class frequencies (e.g. uniform)."""
    x, y, classes = check_labelled(features, labels, min_per_class=1)
    _, mu = class_means(x, y)
    counts = np.array([np.sum(y == c) for c in classes], np.float64)
    cov = pooled_covariance(x, y, ddof_per_class=0) if covariance is None else covariance
    return gaussian_head(mu if means is None else means, cov, counts if priors is None else priors, classes,
                         ridge=ridge)


def shrunk_covariance(features, labels) -> np.ndarray:
    """Ledoit-Wolf shrinkage (scikit-learn) of the pooled within-class covariance ``[d, d]`` (residuals
    from the class means)."""
    return ledoit_wolf(within_class_residuals(features, labels), assume_centered=True)[0]


def radial_correction(means, centre, scale: float) -> np.ndarray:
    """Means moved radially about ``centre [d]``: ``centre + scale * (means - centre)`` (``[K, d]``); the
    mean-norm correction of buffer statistics (beyond the paper; ``scale < 1`` undoes inflation)."""
    m = check_features(means, "means")
    c = np.asarray(centre, np.float64)
    if c.shape != (m.shape[1],) or not np.all(np.isfinite(c)):
        raise ValueError(f"centre must be a finite [d] = [{m.shape[1]}] vector")
    if not (math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be positive and finite, got {scale}")
    return c + scale * (m - c)


def mean_norm_ratio(features_a, labels_a, features_b, labels_b, centre) -> np.ndarray:
    """Per class ``[K]``: ``||mu_c^a - centre|| / ||mu_c^b - centre||`` (e.g. buffer over population with
    the population's global mean as ``centre``). Both sets must hold the same classes."""
    ca, ma = class_means(features_a, labels_a)
    cb, mb = class_means(features_b, labels_b)
    if not np.array_equal(ca, cb):
        raise ValueError(f"both sets must hold the same classes, got {ca.tolist()} and {cb.tolist()}")
    c = np.asarray(centre, np.float64)
    return np.linalg.norm(ma - c, axis=1) / np.linalg.norm(mb - c, axis=1)


# ---------------------------------------------------------------------------------------------------
# The linear-feature model (T1, exact)
# ---------------------------------------------------------------------------------------------------


def linear_feature_gd(X, onehot, V, W, b, *, eta: float, lam: float, steps: int, momentum: float = 0.0,
                      probes=None, depth: int = 1) -> dict[str, np.ndarray]:
    """Full-batch GD on cross-entropy of ``softmax(W phi(x) + b)`` with ``phi(x) = V x`` and coupled weight
    decay ``lam`` on the feature map (the paper's T1 setting, SGD with step ``eta``), float64.

    ``depth = 2`` uses ``phi(x) = V2 V x`` (a two-layer linear feature map, V2 = I at the start; the
    decay law is then not exact: a control). ``momentum > 0`` uses heavy-ball momentum (also a control).

    Args:
      X: ``[n, p]`` training inputs; onehot: ``[n, K]`` targets; V: ``[d, p]``; W: ``[K, d]``; b: ``[K]``.
      probes: ``[m, p]`` inputs whose features are tracked (any inputs: forgotten or OOD data).
    Returns:
      ``perp [steps + 1, m]`` = ||P_{S_t perp} phi_t(x)|| for the probes, with S_t the span of the
      centred class means of the training features at step t, and ``rank [steps + 1]`` (dim S_t).
    Raises:
      ValueError: shapes disagree, ``steps < 1``, ``eta <= 0``, ``lam < 0``, ``momentum`` not in [0, 1).
    """
    X = check_features(X, "X")
    Y = check_features(onehot, "onehot")
    V = check_features(V, "V").copy()
    W = check_features(W, "W").copy()
    b = np.asarray(b, np.float64).copy()
    n, p = X.shape
    K = Y.shape[1]
    if Y.shape[0] != n or V.shape[1] != p or W.shape != (K, V.shape[0]) or b.shape != (K,):
        raise ValueError(f"shapes disagree: X {X.shape}, onehot {Y.shape}, V {V.shape}, W {W.shape}, b {b.shape}")
    if steps < 1 or not eta > 0 or lam < 0 or not 0 <= momentum < 1 or depth not in (1, 2):
        raise ValueError("need steps >= 1, eta > 0, lam >= 0, 0 <= momentum < 1, depth in {1, 2}")
    P = X if probes is None else check_features(probes, "probes")
    labels = np.argmax(Y, axis=1)
    d = V.shape[0]
    V2 = np.eye(d)
    mom = [np.zeros_like(V), np.zeros_like(V2), np.zeros_like(W), np.zeros_like(b)]
    perp, ranks = [], []

    def record():
        F = X @ V.T @ V2.T
        q = active_subspace(F, labels)
        pf = P @ V.T @ V2.T
        perp.append(np.linalg.norm(pf - (pf @ q) @ q.T, axis=1))
        ranks.append(q.shape[1])

    record()
    for _ in range(steps):
        H1 = X @ V.T
        F = H1 @ V2.T
        z = F @ W.T + b
        z -= z.max(axis=1, keepdims=True)
        sm = np.exp(z)
        sm /= sm.sum(axis=1, keepdims=True)
        G = (sm - Y) / n  # dL/dz
        gF = G @ W  # [n, d]
        gW = G.T @ F
        gb = G.sum(axis=0)
        if depth == 2:
            gV2 = gF.T @ H1 + lam * V2
            gV = (gF @ V2).T @ X + lam * V
        else:
            gV2 = np.zeros_like(V2)
            gV = gF.T @ X + lam * V
        grads = [gV, gV2, gW, gb]
        for i, g in enumerate(grads):
            mom[i] = momentum * mom[i] + g
        V -= eta * mom[0]
        if depth == 2:
            V2 -= eta * mom[1]
        W -= eta * mom[2]
        b -= eta * mom[3]
        record()
    return {"perp": np.array(perp), "rank": np.array(ranks)}


def collapsed_linear_model(K: int, p: int, d: int, n_per_class: int, rng: np.random.Generator, *,
                           collapsed: bool = True, noise: float = 0.3) -> dict[str, np.ndarray]:
    """The constructed instance in which T1 is exact (brief errata): ``K`` class prototypes in R^p summing
    to 0 (so mu_G = 0 lies in S), ``n_per_class`` identical copies of each (training features exactly
    collapsed at every step), ``V [d, p]`` random, ``W = 0`` and ``b = 0`` (row(W) stays in S). With
    ``collapsed=False`` each copy gets Gaussian noise of std ``noise`` (generic data: a control).

    Returns ``X [K n, p]``, ``onehot [K n, K]``, ``V [d, p]``, ``W [K, d]``, ``b [K]``.
    """
    protos = rng.standard_normal((K, p))
    protos -= protos.mean(axis=0)
    X = np.repeat(protos, n_per_class, axis=0)
    if not collapsed:
        X = X + noise * rng.standard_normal(X.shape)
    Y = np.repeat(np.eye(K), n_per_class, axis=0)
    V = rng.standard_normal((d, p)) / math.sqrt(p)
    return {"X": X, "onehot": Y, "V": V, "W": np.zeros((K, d)), "b": np.zeros(K)}


def decay_law_fit_error(perp, eta: float, lam: float) -> float:
    """Largest relative deviation of ``perp [steps + 1, m]`` (from :func:`linear_feature_gd`) from the decay
    law of T1/T2 with its rate and constant fixed in advance: ``perp_t = perp_0 (1 - eta lam)^t`` (rate
    ``upsilon = 1 - eta lam`` at the run's step and weight decay, constant ``perp_0`` = the value at t0 = 0),
    over every step and probe with ``perp_0 > 0``: ``max |perp_t / (perp_0 upsilon^t) - 1|``.

    Raises:
      ValueError: ``perp`` not two-dimensional with at least two steps, non-finite, or no probe with
        ``perp_0 > 0``; ``eta lam`` outside ``(0, 1)``.
    """
    x = check_features(perp, "perp", min_rows=2)
    if not 0 < eta * lam < 1:
        raise ValueError(f"eta * lam must lie in (0, 1), got {eta * lam}")
    ok = x[0] > 0
    if not np.any(ok):
        raise ValueError("no probe has a component outside S at t0 (perp_0 = 0): the law has nothing to fit")
    t = np.arange(x.shape[0])[:, None]
    pred = x[0, ok] * np.exp(t * math.log1p(-eta * lam))
    return float(np.max(np.abs(x[:, ok] / pred - 1.0)))


def decay_rounding_bound(steps: int, n: int, p: int, d: int) -> float:
    """The float64 rounding budget of the decay law in the linear-feature model: the law is exact in real
    arithmetic, and each GD step computes sums of at most ``n + p + d`` terms (the gradient over ``n``
    samples, ``phi = V x`` over ``p`` inputs, the projection over ``d`` features), each with a relative
    forward error of at most ``gamma_m = m u / (1 - m u)`` (Higham 2002, Sec. 3.1; ``u`` = 2^-53), and the
    ``steps`` multiplicative updates add their errors: ``steps * gamma_{n + p + d}``.

    Raises:
      ValueError: a non-positive count.
    """
    if min(steps, n, p, d) < 1:
        raise ValueError(f"steps, n, p, d must be >= 1, got {steps}, {n}, {p}, {d}")
    u = 2.0**-53
    m = n + p + d
    return steps * m * u / (1 - m * u)


def bayes_accuracy_lda(means, covariance, *, abseps: float = 1e-5, seed: int = 0) -> float:
    """Bayes accuracy of ``K`` equiprobable Gaussian classes ``N(mu_c, Sigma)`` with a shared covariance:
    ``(1/K) sum_c P(all D_ck > 0 | c)``, where ``D_ck = (mu_c - mu_k)^T Sigma^-1 (x - (mu_c + mu_k) / 2)``
    is, for ``x ~ N(mu_c, Sigma)``, jointly Gaussian over ``k != c`` with mean ``Delta_ck^2 / 2`` and
    covariance ``(mu_c - mu_k)^T Sigma^-1 (mu_c - mu_l)`` (``Delta`` the Mahalanobis distance). Each
    orthant probability is a ``K - 1``-dimensional Gaussian integral computed by Genz's numerical
    integration (scipy ``multivariate_normal.cdf``, absolute error ``abseps``, fixed ``seed``); ``K = 2``
    gives the closed form ``Phi(Delta / 2)``.

    Args:
      means: ``[K, d]``; covariance: ``[d, d]`` symmetric positive definite.
    Returns:
      the accuracy of the Bayes classifier, in ``[1/K, 1]``.
    Raises:
      ValueError: shapes disagree, non-finite entries, ``K < 2``, coinciding means, or ``covariance`` not
        positive definite.
    """
    m = check_features(means, "means", min_rows=2)
    K, d = m.shape
    s = check_features(covariance, "covariance")
    if s.shape != (d, d):
        raise ValueError(f"covariance must be [d, d] = [{d}, {d}], got {s.shape}")
    try:
        c = np.linalg.cholesky(0.5 * (s + s.T))
    except np.linalg.LinAlgError:
        raise ValueError("covariance is not positive definite") from None
    z = np.linalg.solve(c, m.T).T  # whitened means [K, d]: Sigma^-1 inner products become dot products
    rng = np.random.default_rng(seed)
    total = 0.0
    for k in range(K):
        diff = z[k] - np.delete(z, k, axis=0)  # [K - 1, d]
        gram = diff @ diff.T
        if np.any(np.diag(gram) == 0):
            raise ValueError("two class means coincide: the Bayes accuracy is not that of distinct classes")
        mean = 0.5 * np.diag(gram)
        if K == 2:
            total += float(norm.cdf(math.sqrt(gram[0, 0]) / 2))
            continue
        # P(D > 0) = P(-D < 0), -D ~ N(-mean, gram)
        total += float(multivariate_normal.cdf(np.zeros(K - 1), mean=-mean, cov=gram, allow_singular=True,
                                               maxpts=200_000 * (K - 1), abseps=abseps, releps=0.0, rng=rng))
    return total / K


def decay_error(perp, eta: float, lam: float) -> float:
    """Largest relative deviation of ``perp [steps + 1, m]`` (from :func:`linear_feature_gd`) from the law
    ``perp_{t+1} = (1 - eta lam) perp_t``, over steps and probes with ``perp_t > 0``."""
    ups = 1.0 - eta * lam
    a, b = np.asarray(perp[:-1]), np.asarray(perp[1:])
    ok = a > 0
    return float(np.max(np.abs(b[ok] / (ups * a[ok]) - 1.0)))


def snr_replay_theory(pi, beta, delta, upsilon_power) -> np.ndarray:
    """The order of the old-class SNR under replay (Corollary 2 / T3, up to constants):
    ``(r^2 beta + u) / (r^2 delta + beta + u)`` with ``r^2 = pi^2 / (1 - pi)^2`` and ``u =
    upsilon^(2 (t - t0))`` (``upsilon_power``); ``pi = 0`` gives T2's ``u / (beta + u)`` -> 0."""
    pi = np.asarray(pi, np.float64)
    if np.any((pi < 0) | (pi >= 1)):
        raise ValueError("pi must lie in [0, 1)")
    r2 = pi**2 / (1 - pi) ** 2
    return (r2 * beta + upsilon_power) / (r2 * delta + beta + upsilon_power)


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
