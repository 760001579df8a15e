"""Ge et al. 2024, Theorem 3.7: every C1 linear rule (one whose output depends only on the pairwise
majority graph) fails Pareto optimality.

The construction: candidates +-e_i (i = 1..4) and c* = (1/5, 1/5, 1/5, 1/5) in R^4, five voters. Key fact:
no theta ranks c* first (sum_i theta_i / 5 < max_i |theta_i| for theta != 0; exact Farkas certificate
below). If eight five-voter profiles share one majority graph G, and in the profile P_t every voter
prefers c* to t, for each of the eight candidates t = +-e_i, then a C1 rule outputs one ranking on all
eight; its top t is not c* (no theta ranks c* first), so on P_t it ranks t above c* although every voter
prefers c*: a Pareto violation.

Ge et al.'s own five voters are not available to us; ``C1_PROFILES`` are eight integer profiles found by a
HiGHS mixed-integer feasibility search (one binary per voter and pair for the sign of <v, x_a - x_b>,
margins >= 0.05 at |v_j| <= 1, a shared majority graph with c* its Condorcet winner, c* above t in P_t),
rounded to integers; :func:`c1_construction_facts` verifies every fact exactly (Fractions).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

C1_PROFILES = np.array([
    [[75, 1000, 25, 125], [125, -75, 25, 1000], [-50, 150, -100, 1000], [-1000, -500, -550, -950],
     [75, 25, 1000, 213]],
    [[175, 225, -25, 1000], [125, 75, 25, 1000], [175, 225, 1000, -25], [-275, -25, 1000, -75],
     [1000, -25, -125, 75]],
    [[-183, 83, -233, 1000], [-25, 1000, 125, 75], [200, 300, 250, 1000], [700, 75, -25, 125],
     [1000, 950, 25, 75]],
    [[950, 1000, -279, -25], [150, -100, 1000, 200], [-900, 1000, -950, -850], [-25, 75, 1000, 125],
     [1000, 75, 25, 125]],
    [[442, 1000, 25, 492], [-75, -192, 1000, -25], [175, 350, 25, 75], [75, 125, 25, 650],
     [-89, -189, 1000, -25]],
    [[1000, 250, 200, 300], [1000, -75, 162, -25], [-1000, -100, 900, 950], [-1000, 300, -25, 350],
     [75, 1000, -25, 125]],
    [[1000, -188, -87, -37], [-100, 200, 150, 1000], [-1000, 133, 83, 950], [1000, -163, -62, -213],
     [75, 1000, 25, 213]],
    [[950, -850, -900, 1000], [1000, -200, 50, -100], [-25, 1000, 75, 125], [-75, 25, 1000, 125],
     [175, 1000, -75, 25]],
])
"""``[8, 5, 4]`` integer voters: profile t (t = 0..3: e_{t+1}; 4..7: -e_{t-3}) has every voter prefer c*
to candidate t."""


def c1_candidates(s=Fraction(1, 5)) -> np.ndarray:
    """``[9, 4]`` Fractions: e_1..e_4, -e_1..-e_4, then c* = (s, s, s, s) (Ge et al. take s = 1/5)."""
    s = Fraction(s)
    rows = [[Fraction(int(i == j)) for j in range(4)] for i in range(4)]
    rows += [[-x for x in r] for r in rows]
    return np.array(rows + [[s] * 4], dtype=object)


def c_star_top_certificate(s=Fraction(1, 5)) -> dict:
    """Whether some theta ranks c* = (s, s, s, s) strictly above every +-e_i, decided exactly.

    For s < 1/4 the multipliers lambda = 4 s + 1 on each c* - e_i and 1 - 4 s on each c* + e_i are positive
    and sum the differences to 0 exactly, so <theta, c* - x> >= 1 for all x is infeasible (Farkas); for
    s > 1/4, theta = (1, 1, 1, 1) ranks c* first (4 s > 1); s = 1/4 ties c* with e_i at theta = 1.

    Returns: ``{"c_star_can_be_first": bool, "combination": [4] Fractions (sum lambda z, 0 when
    infeasible), "lambda": (plus, minus), "theta": [4] or None, "min_margin": Fraction or None}``.
    """
    X = c1_candidates(s)
    cs = X[8]
    lam_m, lam_p = 4 * Fraction(s) + 1, 1 - 4 * Fraction(s)
    comb = sum((lam_m * (cs - X[i]) + lam_p * (cs - X[4 + i]) for i in range(4)), np.array([Fraction(0)] * 4))
    if lam_m > 0 and lam_p > 0:
        return {"c_star_can_be_first": False, "combination": list(comb), "lambda": (lam_m, lam_p),
                "theta": None, "min_margin": None}
    theta = np.array([Fraction(1)] * 4, dtype=object)
    margin = min(theta.dot(cs - X[i]) for i in range(8))
    return {"c_star_can_be_first": margin > 0, "combination": list(comb), "lambda": (lam_m, lam_p),
            "theta": list(theta), "min_margin": margin}


def c1_construction_facts(profiles=C1_PROFILES, s=Fraction(1, 5)) -> dict:
    """The facts of the construction, exactly: per profile the majority graph (5 voters, strict), whether
    every voter ranks strictly (no ties), and whether every voter of profile t prefers c* to candidate t.

    Args: profiles ``[8, k, 4]`` rational voters (k odd); s: c*'s coordinate.
    Returns: ``{"strict": bool, "same_majority_graph": bool, "c_star_condorcet": bool,
    "c_star_pareto_over_t": [8] bool, "graph": [9, 9] bool (of profile 0)}``.
    Raises: ValueError: not 8 profiles of voters in R^4, or an even number of voters.
    """
    P = np.asarray(profiles, dtype=object)
    if P.ndim != 3 or P.shape[0] != 8 or P.shape[2] != 4 or P.shape[1] % 2 == 0:
        raise ValueError(f"need 8 profiles of an odd number of voters in R^4, got shape {P.shape}")
    X = c1_candidates(s)
    graphs, strict, pareto = [], True, []
    for t in range(8):
        V = np.array([[Fraction(v) for v in row] for row in P[t].tolist()], dtype=object)
        S = np.array([[[int(np.sign(v.dot(X[a] - X[b]))) for v in V] for b in range(9)] for a in range(9)])
        strict = strict and not np.any((S == 0) & ~np.eye(9, dtype=bool)[:, :, None])
        graphs.append(2 * (S > 0).sum(2) > V.shape[0])
        pareto.append(bool(np.all(S[8, t] > 0)))
    same = all(np.array_equal(g, graphs[0]) for g in graphs)
    return {"strict": bool(strict), "same_majority_graph": bool(same),
            "c_star_condorcet": bool(graphs[0][8, :8].all()), "c_star_pareto_over_t": pareto, "graph": graphs[0]}
