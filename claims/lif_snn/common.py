"""Shared pieces of the lif_snn claims: test constants and helpers."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from theory import boolean
from theory import lif_snn as th

Z_MC = 3.0  # |z| of one Monte-Carlo comparison
Z_MANY = 4.0  # max |z| over a family of a few dozen comparisons (P(any > 4) ~ 0.2% for 30 normals)


def log_log_fit(x, y, se=None) -> tuple[float, float]:
    """Least-squares slope of ``log y`` on ``log x`` and its standard error (weighted by ``se`` of ``y``
    through ``se / y``, the delta method; without ``se`` the error is NaN)."""
    lx, ly = np.log(np.asarray(x, np.float64)), np.log(np.asarray(y, np.float64))
    if se is None:
        return float(np.polyfit(lx, ly, 1)[0]), float("nan")
    w = (np.asarray(y) / np.asarray(se)) ** 2
    xm = np.sum(w * lx) / np.sum(w)
    sxx = np.sum(w * (lx - xm) ** 2)
    slope = np.sum(w * (lx - xm) * ly) / sxx
    return float(slope), float(1.0 / math.sqrt(sxx))


def _mean_se(per_seed, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the seed axis and its standard error (sample SD / sqrt(seeds))."""
    a = np.asarray(per_seed, np.float64)
    return a.mean(axis=axis), a.std(axis=axis, ddof=1) / math.sqrt(a.shape[axis])


def _agree(name: str, z: float, z_max: float) -> ledger.Decision:
    """Monte Carlo consistent with an exact value: ``|z| <= z_max`` (a two-sided z-test not rejected; the
    controls show the same test rejects the nearby wrong laws). ``z = inf`` marks an exact mismatch where
    every seed gave the same value (no spread): that disagreement is exact, not a z-test."""
    if math.isinf(z):
        return ledger.check(name, False, "exact mismatch at zero spread", 0.0,
                            "a value identical in every seed must equal the exact value")
    return ledger.compare(name, float(abs(z)), "<=", z_max,
                          f"|Monte Carlo - exact| / SE <= {z_max:g} (two-sided z-test, normal approximation)")


def _closer(label: str, per_seed, law, rival, law_name: str, rival_name: str) -> ledger.Decision:
    """Per-seed vectors ``per_seed [S, K]`` closer to ``law`` than to ``rival`` (both ``[K]``): the projection
    ``D_s = (law - rival) . (2 x_s - law - rival)`` (= |x_s - rival|^2 - |x_s - law|^2) has mean
    ``|law - rival|^2 > 0`` when ``law`` is the truth and the negative of it when ``rival`` is; decided above 0
    at Z_MC SE over seeds (three-way: below -Z_MC SE it fails)."""
    law, rival = np.asarray(law, np.float64), np.asarray(rival, np.float64)
    d = (2 * np.asarray(per_seed, np.float64) - law - rival) @ (law - rival)
    m, se = _mean_se(d)
    return ledger.ztest(f"{label}: closer to {law_name} than to {rival_name}", float(m), float(se), 0.0, "above",
                        Z_MC, f"projection on the difference of the two laws above 0 at {Z_MC:g} SE over seeds "
                        "(normal approximation)")


def _typo_level_weights(n: int, theta: float) -> np.ndarray:
    """Expected level weights of the rival kernel with the correlation rho = 1 - d/n (a typo for 1 - 2d/n):
    ``G(d) = 1 - 2 P_plugin(theta, d / 2n)``, Krawtchouk-inverted exactly from its float64 values (n <= 16:
    the inversion amplifies their rounding by at most ~2^n)."""
    g = [1 - 2 * th.plugin_flip_probability(theta, d / (2 * n)) for d in range(n + 1)]
    return np.array([float(w) for w in boolean.level_weights_from_kernel(g, n)])


def _level_z(mean, se, exact) -> float:
    """Largest |z| over levels; a level with zero spread (exactly zero in every seed) must match exactly."""
    mean, se, exact = map(np.asarray, (mean, se, exact))
    zero = se == 0
    if np.any(np.abs(mean[zero] - exact[zero]) > 1e-12):
        return float("inf")
    return float(np.max(np.abs(mean[~zero] - exact[~zero]) / se[~zero])) if np.any(~zero) else 0.0
