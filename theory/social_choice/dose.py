"""Coverage dose-response: pair data mixed with uniform coverage (our experiment, beyond Hollender &
Kraiczy, ICLR 2026, §5).

How much uniform coverage, mixed into labelled pair data, does it take to rank a Pareto pair correctly
(``alpha_fix``) and to bring the optimum into the voters' cone (``alpha_po``, whole-space Pareto
optimality)? Theorem 5.1 answers at ``alpha = 1``; :func:`dose_thresholds` finds the two thresholds on
[0, 1]. :func:`arc_rows` mixes in a coverage uniform on an arc only, outside the theorem's hypothesis.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from theory.social_choice.axioms import cone_coordinates
from theory.social_choice.coverage import RESOLUTION, coverage_rows
from theory.social_choice.model import Rows, fit_rows, pair_rows


def mixed_rows(pairs: Rows, uniform: Rows, alpha: float, n_pairs: int) -> Rows:
    """The dose-response data (our experiment, beyond the paper): weight ``1 - alpha`` spread equally
    over ``n_pairs`` labelled pairs (``pairs``: rows of :func:`model.pair_rows`, each pair carrying the
    total voter weight) and ``alpha`` on uniform coverage (``uniform``: :func:`coverage_rows`)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    Z = np.concatenate([np.asarray(pairs.Z, np.float64), uniform.Z])
    w = np.concatenate([(1 - alpha) / n_pairs * np.asarray(pairs.w, np.float64), alpha * uniform.w])
    keep = w > 0
    return Rows(Z[keep], w[keep], -np.ones((int(keep.sum()), 2), np.int64),
                np.concatenate([pairs.contested, uniform.contested])[keep])


@dataclass(frozen=True)
class DoseProblem:
    """Pair data mixed with uniform coverage: the rows of both parts and what is measured.

    Attributes:
      pairs: :func:`model.pair_rows` of the labelled differences; n_pairs: how many differences.
      uniform: :func:`coverage_rows` of the voters; voters: ``[k, d]``; unanimous: ``[d]`` the
        difference every voter prefers (the Pareto pair whose ranking is watched).
    """

    pairs: Rows
    n_pairs: int
    uniform: Rows
    voters: np.ndarray
    unanimous: np.ndarray


def arc_rows(voters, weights, arc_deg, n: int = 96) -> Rows:
    """Rows of comparisons whose directions are uniform on an arc of the circle (d = 2) instead of the
    whole circle: a coverage that is not rotation invariant (outside H&K Theorem 5.1's hypothesis).
    Gauss-Legendre in the angle on each piece between the voters' normal lines; every voter labels every
    direction; total weight ``sum w_i``.

    Args: voters ``[k, 2]``; weights ``[k]``; arc_deg: ``(lo, hi)`` angles in degrees, ``0 < hi - lo <=
      180`` (directions x and -x are the same comparison); n: nodes.
    Raises: ValueError: not d = 2, an empty or longer arc.
    """
    V = np.asarray(voters, np.float64)
    lo, hi = (float(a) for a in arc_deg)
    if V.ndim != 2 or V.shape[1] != 2:
        raise ValueError(f"arc coverage is implemented for d = 2, got voters of shape {V.shape}")
    if not 0 < hi - lo <= 180:
        raise ValueError(f"arc must satisfy 0 < hi - lo <= 180 degrees, got ({lo}, {hi})")
    # Gauss-Legendre on each piece between the voters' normal lines (<v_i, x> = 0), where the labels are
    # constant and the integrand smooth.
    normals = np.degrees(np.arctan2(-V[:, 0], V[:, 1]))
    cuts = sorted({lo, hi} | {c + 180 * j for c in normals for j in range(-3, 4) if lo < c + 180 * j < hi})
    t, wt = special.roots_legendre(n)
    phi = np.concatenate([a + (t + 1) * (b - a) / 2 for a, b in zip(cuts[:-1], cuts[1:])])
    q1 = np.concatenate([wt * (b - a) / 2 for a, b in zip(cuts[:-1], cuts[1:])]) / (hi - lo)
    x = np.stack([np.cos(np.radians(phi)), np.sin(np.radians(phi))], 1)
    q = np.concatenate([q1, q1])  # the quadrature weights of x and of -x, each summing to 1
    S = x @ V.T
    w = np.asarray(weights, np.float64)
    W = np.concatenate([(S > 0) @ w, (S < 0) @ w]) * q
    keep = W > 0
    both = np.concatenate([((S > 0) @ w > 0) & ((S < 0) @ w > 0)] * 2)
    return Rows(np.concatenate([x, -x])[keep], W[keep], -np.ones((int(keep.sum()), 2), np.int64), both[keep])


def dose_problem(diffs, voters, weights, unanimous: int, *, resolution: int | None = None,
                 arc_deg=None) -> DoseProblem:
    """Build the dose-response problem for BTL: ``diffs [N, d]`` labelled by ``voters``, the index of the
    unanimous difference, and the uniform-coverage rows (smooth-loss quadrature); with ``arc_deg = (lo,
    hi)`` (d = 2) the mixed-in coverage is uniform on that arc only (:func:`arc_rows`)."""
    D = np.asarray(diffs, np.float64)
    cov = (coverage_rows(voters, weights, loss="btl", resolution=resolution) if arc_deg is None else
           arc_rows(voters, weights, arc_deg, n=resolution or RESOLUTION["smooth"][2]))
    return DoseProblem(pair_rows(D, voters, weights), D.shape[0], cov, np.asarray(voters, np.float64),
                       D[unanimous])


def dose_fit(prob: DoseProblem, alpha: float, loss: str = "btl") -> np.ndarray:
    """The fit on weight ``1 - alpha`` spread over the labelled pairs and ``alpha`` on uniform coverage."""
    return fit_rows(mixed_rows(prob.pairs, prob.uniform, alpha, prob.n_pairs), loss,
                    check=alpha == 0).theta


def dose_margins(prob: DoseProblem, theta) -> tuple[float, float]:
    """``(pair margin, cone margin)`` of theta: ``<theta, x_u> / (|theta| |x_u|)`` for the unanimous
    difference, and :func:`axioms.cone_coordinates` ``.margin`` (> 0 inside the cone)."""
    th = np.asarray(theta, np.float64)
    pm = float(th @ prob.unanimous / (np.linalg.norm(th) * np.linalg.norm(prob.unanimous)))
    return pm, cone_coordinates(th, prob.voters).margin


def dose_thresholds(prob: DoseProblem, loss: str = "btl", xtol: float = 1e-10) -> tuple[float, float]:
    """``(alpha_fix, alpha_po)``: the smallest coverage share at which the Pareto pair is ranked
    correctly, and at which the optimum enters the voters' cone (whole-space PO); brentq on [0, 1] of
    the two margins of :func:`dose_margins` (both must change sign once)."""
    out = []
    for k in range(2):
        f = lambda a, k=k: dose_margins(prob, dose_fit(prob, a, loss))[k]
        lo, hi = f(0.0), f(1.0)
        if not (lo < 0 < hi):
            raise ValueError(f"margin {k} does not change sign on [0, 1] ({lo:.3g}, {hi:.3g})")
        out.append(float(optimize.brentq(f, 0.0, 1.0, xtol=xtol)))
    return out[0], out[1]
