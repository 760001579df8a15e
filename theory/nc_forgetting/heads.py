"""Heads on frozen features: the linear probe (scikit-learn), Gaussian (LDA) heads from chosen means and covariances (Sec. 5, Fig. 6) and the statistics corrections we add beyond the paper."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from sklearn.covariance import ledoit_wolf
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

from theory.nc_forgetting.metrics import check_features, check_labelled, class_means, LDA_RIDGE, pooled_covariance, PROBE_C, PROBE_MAX_ITER, within_class_residuals

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
    scaling is folded into the head); the authors' code fits raw features (``standardize=False``),
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
