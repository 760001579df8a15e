"""Data of the NC-forgetting simulations: the task split, scikit-learn's 8x8 digits and the anisotropic Gaussian classes, standardised."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import jax
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

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


# fold_in salts, each naming the draw it keeps apart from the others of the same key.
OOD_PERMUTATION_SALT = 1  # digits: the pixel permutations of the out-of-distribution images (root seed key)
OOD_NOISE_SALT = 1  # gaussian: the isotropic noise of the OOD points, apart from their spike part (OOD key)


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
    perm_key = jax.random.fold_in(jax.random.key(seed), OOD_PERMUTATION_SALT)
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
        jax.random.normal(jax.random.fold_in(ko, OOD_NOISE_SALT), (N_CLASSES * n_test, dim))) * math.sqrt(0.1)
    xtr, (xte, ood) = _standardise(xtr, [xte, ood])
    bayes = th.bayes_accuracy_lda(means, A @ A.T + 0.1 * np.eye(dim))
    return Data("gaussian", xtr, ytr.astype(np.int32), xte, yte.astype(np.int32), ood, bayes)
