"""Hollender & Kraiczy's "implicit norm budget" example: one voter v = (eps, 1) and candidates a = (1, 0),
b = (0, 0), c = (-delta, delta); the voter ranks a > c > b (every pair unanimous). The BTL loss minimised
over the unit circle |theta| = 1 (or with an L2 penalty) is pulled toward the x-axis by the long pairs
a - b and a - c and ranks b above c: a Pareto violation. Unconstrained, the data are separable, no
minimiser exists, and the rule's ranking (the cone attaining the infimum 0) is the voter's own.

The angle 1.403 deg at eps = 0.1, delta = 0.05 is our computation of the example, not a number printed
in the paper.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from theory.social_choice.model import comparison_rows


def norm_budget_instance(eps: float = 0.1, delta: float = 0.05):
    """``(X [3, 2] (a, b, c), V [1, 2], w [1])``. Raises ValueError unless eps, delta > 0 and eps < 1 (the
    voter must rank c above b: <v, c - b> = delta (1 - eps) > 0)."""
    if not (0 < eps < 1 and delta > 0):
        raise ValueError(f"need 0 < eps < 1 and delta > 0, got eps={eps}, delta={delta}")
    return np.array([[1.0, 0.0], [0.0, 0.0], [-delta, delta]]), np.array([[eps, 1.0]]), np.array([1.0])


def _loss_grad(Z, w, th):
    m = Z @ th
    L = float(np.sum(w * np.logaddexp(0.0, -m)))
    g = -(Z.T @ (w * 0.5 * (1 - np.tanh(m / 2))))
    return L, g


@dataclass(frozen=True)
class NormBudget:
    """The unit-circle BTL optimum of the example.

    Attributes:
      angle_deg: polar angle of the optimum; bracket_deg: ``(lo, hi)`` where the angular derivative of the
        loss changes sign (the optimum lies inside, to brentq's 1e-13 rad).
      theta: ``[2]``; rewards: ``[3]`` (a, b, c).
      margin_cb: r(c) - r(b) at the optimum; margin_cb_bracket: its largest value over the bracket (< 0
        certifies the reversal for the exact optimum).
      grid: angle grid nodes over the whole circle (the minimum is searched globally on it first).
    """

    angle_deg: float
    bracket_deg: tuple[float, float]
    theta: np.ndarray
    rewards: np.ndarray
    loss: float
    margin_cb: float
    margin_cb_bracket: float
    grid: int


def unit_norm_fit(eps: float = 0.1, delta: float = 0.05, grid: int = 36000) -> NormBudget:
    """The BTL optimum over |theta| = 1 (angle phi): a global grid over the circle, then brentq on dL/dphi
    in the grid cell around the minimum (float64). Source: Hollender & Kraiczy 2026, the norm-budget
    example. Raises ValueError as :func:`norm_budget_instance`; RuntimeError when the derivative does not
    change sign around the grid minimum."""
    X, V, w = norm_budget_instance(eps, delta)
    rows = comparison_rows(X, V, w)
    Z, wr = rows.Z, rows.w
    phis = 2 * math.pi * np.arange(grid) / grid - math.pi
    T = np.stack([np.cos(phis), np.sin(phis)], 1)
    L = np.sum(wr * np.logaddexp(0.0, -(T @ Z.T)), axis=1)
    i = int(np.argmin(L))

    def dL(phi):
        th = np.array([math.cos(phi), math.sin(phi)])
        return float(_loss_grad(Z, wr, th)[1] @ np.array([-math.sin(phi), math.cos(phi)]))

    lo, hi = phis[i] - 2 * math.pi / grid, phis[i] + 2 * math.pi / grid
    if not dL(lo) < 0 < dL(hi):
        raise RuntimeError("the angular derivative does not change sign around the grid minimum")
    phi = optimize.brentq(dL, lo, hi, xtol=1e-13)
    th = np.array([math.cos(phi), math.sin(phi)])
    r = X @ th
    # r(c) - r(b) = <(cos p, sin p), (-delta, delta)> = delta (sin p - cos p): increasing on the bracket
    # (|p| < 3 pi / 4), so its largest value there is at the upper end.
    mcb = lambda p: delta * (math.sin(p) - math.cos(p))
    return NormBudget(math.degrees(phi), (math.degrees(lo), math.degrees(hi)), th, r, _loss_grad(Z, wr, th)[0],
                      float(r[2] - r[1]), mcb(hi), grid)


def penalised_fit(lam: float, eps: float = 0.1, delta: float = 0.05) -> np.ndarray:
    """The BTL optimum with an L2 penalty ``lam |theta|^2`` (strictly convex: unique), by Newton-type BFGS
    to gradient norm 1e-12. Raises ValueError for lam <= 0."""
    if not lam > 0:
        raise ValueError(f"lam must be > 0, got {lam}")
    X, V, w = norm_budget_instance(eps, delta)
    rows = comparison_rows(X, V, w)

    def f(th):
        L, g = _loss_grad(rows.Z, rows.w, th)
        return L + lam * th @ th, g + 2 * lam * th

    res = optimize.minimize(f, np.zeros(2), jac=True, method="BFGS", options={"gtol": 1e-12})
    return res.x


def unconstrained_ray(eps: float = 0.1, delta: float = 0.05, t: float = 100.0) -> tuple[np.ndarray, float]:
    """No norm budget: the data are separable (one voter), the loss tends to its infimum 0 along theta = t v
    and any ranking with b above c has loss at least ln 2 (the pair (c, b) alone); so the rule's ranking is
    the voter's. Returns ``(v, L(t v))``."""
    X, V, w = norm_budget_instance(eps, delta)
    rows = comparison_rows(X, V, w)
    return V[0], _loss_grad(rows.Z, rows.w, t * V[0])[0]
