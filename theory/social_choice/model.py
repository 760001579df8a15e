"""Loss-based reward models of linear social choice: data, votes, features, losses, fits, certificates.

Setting (Ge et al., NeurIPS 2024, arXiv 2405.14758, Section 2):
candidates are feature vectors ``x_c`` in R^d, voters are direction vectors ``v_i`` with weights ``w_i``,
and voter ``i`` prefers ``a`` to ``b`` when ``<v_i, x_a - x_b> > 0``; a voter who scores ``a`` and ``b``
equally casts no vote on that pair (our tie rule; the papers assume strict rankings). The reward of
candidate ``c`` is ``r(c) = <theta, phi(x_c)>`` with ``phi`` the identity (``degree=1``) or the monomials
of degree 1..D (:func:`monomial_exponents`; the constant drops out of every difference).

A comparison won by margin ``m = r(preferred) - r(other)`` costs ``l(m)``: BTL ``log(1 + e^-m)``, hinge
``max(0, 1 - m)``, exponential ``e^-m``. The fit minimises ``sum_j w_j l(<theta, z_j>)`` over comparison
rows ``z_j`` (lifted difference preferred - other) with weights ``w_j`` (voter weights or counts summed
over the voters who cast that vote). No regularisation.

Every comparison set reduces to rows ``(Z [m, p], w [m])``; the candidate data (:func:`comparison_rows`),
pair data (:func:`pair_rows`) and uniform coverage (``coverage.py``) all do. The smooth losses are fitted
by a damped Newton method in JAX (:func:`newton_fit`, jit-able and vmap-able, used by the simulations
too) and certified by :func:`fit_certificate`: ``|theta_hat - theta*| <= |grad| / mu`` with ``mu`` a
lower bound on the Hessian's smallest eigenvalue over the whole ball that must contain ``theta*``
(derived here), the gradient norm inflated by a bound on its float64 rounding error. The hinge fit
is a linear program (HiGHS); its exact rational certificate lives in ``exact.py``.

This module holds the fits (existence of a finite optimum, the hinge LP, :func:`fit_rows`,
:func:`fit_reward`); the rows live in :mod:`~theory.social_choice.rows`, the losses in
:mod:`~theory.social_choice.losses` and the Newton fit with its certificate in
:mod:`~theory.social_choice.newton`. Their public names are re-exported here, so
``from theory.social_choice.model import ...`` reaches all of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import jax.numpy as jnp
import numpy as np
from scipy.optimize import linprog

from theory.numerics import float64, gap_rank
from theory.social_choice.losses import (
    LOSSES,
    SMOOTH_LOSSES,
    check_loss,
    d2loss,
    dloss,
    ell,
)
from theory.social_choice.newton import (
    _bucket,
    _fit_and_certify,
    cholesky,
    eigmin_lower,
    fit_certificate,
    newton_fit,
    pd_above,
    spd_solve,
)
from theory.social_choice.rows import (
    EPS,
    Rows,
    as_points,
    check_degree,
    comparison_rows,
    lift,
    monomial_exponents,
    pair_index,
    pair_rows,
    to_fraction,
    unrestricted_rows,
    validate,
    vote_signs,
)

__all__ = [
    "EPS",
    "LOSSES",
    "RewardFit",
    "Rows",
    "SMOOTH_LOSSES",
    "angle_deg",
    "as_points",
    "check_degree",
    "check_finite_optimum",
    "check_loss",
    "cholesky",
    "comparison_rows",
    "d2loss",
    "dloss",
    "eigmin_lower",
    "ell",
    "fit_certificate",
    "fit_reward",
    "fit_reward_certified",
    "fit_rows",
    "hinge_lp",
    "jsonable_fraction",
    "lift",
    "loss_value",
    "monomial_exponents",
    "newton_fit",
    "pair_index",
    "pair_rows",
    "pd_above",
    "separating_direction",
    "spd_solve",
    "to_fraction",
    "unrestricted_rows",
    "validate",
    "vote_signs",
]


def separating_direction(Z: np.ndarray, contested: np.ndarray | None = None) -> np.ndarray | None:
    """A nonzero ``theta`` with ``Z theta >= 0`` and ``Z theta != 0`` (the rows are separable, so BTL and
    exponential fits have no finite optimum: the loss keeps falling along ``theta``), or ``None``.

    Fast path: when the contested rows (both orientations present) span R^p no such direction exists.
    Otherwise an LP (HiGHS): maximise ``sum s_j`` with ``0 <= s_j <= <theta, z_j>``, ``s <= 1``,
    ``theta`` in the unit box; a direction is reported when the optimum exceeds ``1e-9 max|z|``.
    """
    Z = np.asarray(Z, np.float64)
    m, p = Z.shape
    if contested is not None and np.any(contested):
        zc = Z[np.asarray(contested, bool)]
        if gap_rank(np.linalg.svd(zc, compute_uv=False))[0] == p:
            return None
    # variables [theta (p), s (m)]; maximise sum s  <=>  minimise -sum s
    c = np.r_[np.zeros(p), -np.ones(m)]
    A = np.hstack([-Z, np.eye(m)])  # s_j - <theta, z_j> <= 0
    res = linprog(c, A_ub=A, b_ub=np.zeros(m), bounds=[(-1, 1)] * p + [(0, 1)] * m, method="highs")
    if res.status != 0:
        raise RuntimeError(f"separability LP failed: {res.message}")
    scale = max(1.0, float(np.abs(Z).max()))
    return res.x[:p] if -res.fun > 1e-9 * scale else None


def check_finite_optimum(rows: Rows, loss: str) -> None:
    """Raise ValueError when a smooth loss (BTL, exponential) has no finite optimum on ``rows`` (the
    comparisons are separable: the BTL MLE does not exist). Hinge always attains its minimum."""
    if loss in SMOOTH_LOSSES:
        sep = separating_direction(np.asarray(rows.Z, np.float64), rows.contested)
        if sep is not None:
            raise ValueError(f"no finite optimum for the {loss} fit: the comparisons are separable (theta ~ "
                             f"{np.round(sep, 4).tolist()} ranks every comparison correctly or tied), so "
                             "the loss decreases forever along it")


@dataclass(frozen=True)
class RewardFit:
    """A fitted reward and its certificate.

    Attributes:
      theta: ``[p]`` float64 parameters (monomial order of :func:`monomial_exponents`).
      loss: the loss; value: the loss at ``theta``.
      grad_norm: gradient norm at ``theta`` (smooth losses).
      mu: strong-convexity bound over the certification ball (smooth losses; nan for hinge).
      radius: certified ``|theta - theta*|`` (smooth losses; ``inf`` when not certified; nan for hinge,
        whose optimum need not be unique: certify hinge claims with exact infima instead).
      duality_gap: HiGHS primal - dual objective (hinge; 0.0 for smooth losses).
      iterations: Newton iterations (smooth) or 0.
      rank: dimension of the rows' span; when < p the fit lives in that span (min-norm optimum).
    """

    theta: np.ndarray
    loss: str
    value: float
    grad_norm: float
    mu: float
    radius: float
    duality_gap: float
    iterations: int
    rank: int

    def margin(self, z) -> tuple[float, bool]:
        """``(<theta, z>, certified)``: certified when the sign of ``<theta*, z>`` is provably the same
        (``|<theta, z>| > radius |z|`` plus rounding)."""
        z = np.asarray(z, np.float64)
        m = float(self.theta @ z)
        slack = self.radius * float(np.linalg.norm(z)) + 8 * EPS * float(np.abs(self.theta) @ np.abs(z))
        return m, bool(abs(m) > slack)


def hinge_lp(Z: np.ndarray, w: np.ndarray, constraints: np.ndarray | None = None):
    """The hinge fit as an LP (HiGHS dual simplex, a vertex): minimise ``sum w_j xi_j`` subject to
    ``xi_j >= 1 - <theta, z_j>``, ``xi >= 0`` and ``<theta, c> >= 0`` for each row of ``constraints``.

    Returns: scipy's ``OptimizeResult`` (``x = [theta (p), xi (m)]``).
    Raises: RuntimeError if HiGHS does not report an optimum.
    """
    Z = np.asarray(Z, np.float64)
    w = np.asarray(w, np.float64)
    m, p = Z.shape
    A = np.hstack([-Z, -np.eye(m)])
    b = -np.ones(m)
    if constraints is not None and len(constraints):
        C = np.asarray(constraints, np.float64).reshape(-1, p)
        A = np.vstack([A, np.hstack([-C, np.zeros((C.shape[0], m))])])
        b = np.r_[b, np.zeros(C.shape[0])]
    res = linprog(np.r_[np.zeros(p), w], A_ub=A, b_ub=b, bounds=[(None, None)] * p + [(0, None)] * m,
                  method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"hinge LP: {res.message}")
    return res


def fit_rows(rows: Rows, loss: str = "btl", *, check: bool = True) -> RewardFit:
    """Fit ``theta`` to comparison rows (candidate data, pair data or coverage nodes).

    Smooth losses: Newton in float64 (JAX) on the rows' span, with :func:`fit_certificate`. Hinge: the
    LP :func:`hinge_lp`. ``check`` runs :func:`check_finite_optimum` first.

    Raises:
      ValueError: unknown loss; no finite optimum (separable data, smooth losses).
    """
    check_loss(loss)
    Z = np.asarray(rows.Z, np.float64)
    w = np.asarray(rows.w, np.float64)
    m, p = Z.shape
    if loss == "hinge":
        res = hinge_lp(Z, w)
        gap = float(res.fun - (-res.ineqlin.marginals).sum())
        return RewardFit(res.x[:p], loss, float(res.fun), math.nan, math.nan, math.nan, gap, 0, p)
    if check:
        check_finite_optimum(rows, loss)
    rank, _ = gap_rank(np.linalg.svd(Z, compute_uv=False))
    Q = np.eye(p) if rank == p else np.linalg.svd(Z, full_matrices=False)[2][:rank].T
    Zr = Z @ Q
    mb = _bucket(m)
    Zp = np.zeros((mb, rank))
    Zp[:m] = Zr
    wp = np.zeros(mb)
    wp[:m] = w
    with float64():
        th, it, cert = _fit_and_certify(jnp.asarray(Zp), jnp.asarray(wp), loss)
        th = np.asarray(th)
        cert = {k: float(v) for k, v in cert.items()}
    if not np.all(np.isfinite(th)):
        raise ValueError(f"no finite optimum for the {loss} fit (Newton diverged)")
    # in NumPy: as eager JAX ops on the unpadded rows, it compiled four small programs for every new row
    # count (social_choice_poly_degrees: 200 of its 325 compiles)
    value = float(np.sum(w * ell(loss, Zr @ th, xp=np)))
    return RewardFit(Q @ th, loss, value, cert["grad_norm"], cert["mu"], cert["radius"], 0.0, int(it), rank)


def fit_reward_certified(candidates, voters, weights=None, *, loss: str = "btl", degree: int = 1) -> RewardFit:
    """:func:`fit_reward` with its certificate (:class:`RewardFit`). Same arguments and errors."""
    check_loss(loss)
    return fit_rows(comparison_rows(candidates, voters, weights, degree), loss)


def fit_reward(candidates, voters, weights=None, *, loss: str = "btl", degree: int = 1) -> np.ndarray:
    """The loss-based rule of Ge et al. (Section 2): the reward parameters minimising
    ``sum over voters i and pairs {a, b} of w_i l(r(preferred) - r(other))``, unregularised.

    Args:
      candidates: ``[n, d]`` distinct feature vectors.
      voters: ``[k, d]`` direction vectors; voter i prefers a to b when ``<v_i, x_a - x_b> > 0`` and casts
        no vote on a pair it scores equally.
      weights: ``[k]`` non-negative voter weights (default all 1).
      loss: ``"btl"`` (``log(1+e^-m)``), ``"hinge"`` (``max(0, 1-m)``) or ``"exp"`` (``e^-m``).
      degree: 1 for linear rewards, D >= 2 for polynomials of degree <= D in the monomials of
        :func:`monomial_exponents` (x, y, x^2, xy, y^2, ... for d = 2).
    Returns:
      ``theta`` ``[p]`` float64. BTL/exp: the unique minimiser on the span of the comparison rows
      (certified by :func:`fit_certificate`; see :func:`fit_reward_certified`). Hinge: an optimal vertex
      of the LP (optima need not be unique).
    Raises:
      ValueError (one line): mismatched dimensions, duplicate candidates, bad weights, unknown loss or
        degree, no vote cast, or separable data where BTL/exp has no finite optimum.
    """
    return fit_reward_certified(candidates, voters, weights, loss=loss, degree=degree).theta


def loss_value(rows: Rows, theta, loss: str) -> float:
    """``sum_j w_j l(<theta, z_j>)`` in float64."""
    with float64():
        return float(jnp.sum(jnp.asarray(np.asarray(rows.w, np.float64)) * ell(
            loss, jnp.asarray(np.asarray(rows.Z, np.float64) @ np.asarray(theta, np.float64)))))


def angle_deg(a, b) -> float:
    """Angle in degrees between two nonzero vectors (float64, via atan2 for accuracy near 0)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    cross = np.linalg.norm(np.outer(a, b) - np.outer(b, a)) / math.sqrt(2)
    return math.degrees(math.atan2(cross, float(a @ b)))


def jsonable_fraction(q: Fraction) -> str:
    """``"p/q"`` text of a Fraction (for results and reports)."""
    return f"{q.numerator}/{q.denominator}" if q.denominator != 1 else str(q.numerator)
