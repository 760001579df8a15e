"""Social choice axioms against independent references (issue 23): every expected value here comes from
an enumeration in exact arithmetic (Fractions, integer data) or a differently written computation, never
from the function under test. Inputs are general: unequal voter weights, half-half majorities, Copeland
ties, voters that are not unit vectors, instances where the linear-feasibility constraint of LCPO binds.

LCPO reference (:func:`_lcpo_brute`): every permutation of the candidates, kept when it is Pareto optimal
(exact signs) and strictly induced by some linear reward (an LP maximising the smallest margin over the
box ``|theta|_inf <= 1``, a different formulation from the module's ``>= 1`` feasibility LP), then the
lexicographically best sequence of ``(-Copeland, index)`` along the ranking (leximax Copeland, ties to the
lower index; Ge et al. 2024, Section 4). Copeland scores are exact Fractions from integer counts.

On the Pareto constraints of LCPO: in 1,800 random instances (d = 2 and 3, 2-5 voters spread over 90 to
270 degrees, a near-copy of one candidate so that Pareto pairs exist) the ranking with and without them was
the same, and no instance here makes them bind. We have no proof that they never bind (Ge et al. keep them
in the definition), so the module keeps them; what the tests pin down is that LCPO's output never
violates PO and equals the brute-force rule, which includes PO. float64 throughout.
"""

import itertools
import math
from fractions import Fraction

import jax
import numpy as np
import pytest
import sympy
from scipy.optimize import linprog

from theory import social_choice as sc

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "share_roundoff": (1e-12, "a majority share is a sum of <= 3 float64 weights over their float64 total, a few "
                              "roundings (~1e-16) from the Fraction enumeration; one miscounted vote moves a "
                              "share by >= 0.1"),
    "cone_lp": (1e-9, "the cone margin and coordinates come from NNLS and a HiGHS LP at a vertex of a 2 x 2 "
                      "system (measured error 0 on these inputs); 1e-9 is cone_coordinates' own residual "
                      "tolerance, and dropping the unit-voter normalisation moves the margin by 0.47"),
    "lp_feasibility": (1e-9, "HiGHS returns a theta whose constraints <theta, z> >= 1 hold up to float64 "
                             "roundoff of the simplex solve (measured worst slack -6.7e-16 on these cases), far "
                             "inside 1e-9; an order theta does not induce misses by O(1)"),
    "strict_inducible": (1e-9, "the reference LP's optimal margin t is 0 (measured |t| = 0) for orders no theta "
                               "induces and >= 0.10 for those it does, on every permutation of these cases; 1e-9 "
                               "separates the two with room for interior-point roundoff"),
    "midpoint_rule": (5e-4, "the midpoint rule on 20000 angles errs by at most one cell (1/20000) per "
                            "breakpoint, 4 breakpoints here: <= 2e-4; misjudging one interval between "
                            "breakpoints moves the share by its width, >= 0.015 here"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _dot(v, a, b):
    return sum(vi * (ai - bi) for vi, ai, bi in zip(v, a, b))


def _copeland(X, V, counts):
    """Exact Copeland scores: 1 per strict weighted-majority win, 1/2 per half-half pair."""
    n, W = len(X), sum(counts)
    out = [Fraction(0)] * n
    for a, b in itertools.permutations(range(n), 2):
        pro = sum(c for v, c in zip(V, counts) if _dot(v, X[a], X[b]) > 0)
        out[a] += 1 if 2 * pro > W else Fraction(1, 2) if 2 * pro == W else 0
    return out


def _pareto(X, V):
    return {(a, b) for a, b in itertools.permutations(range(len(X)), 2) if all(_dot(v, X[a], X[b]) > 0 for v in V)}


def _inducible(X, order):
    """max t s.t. <theta, x_i - x_next> >= t along the order, |theta|_inf <= 1; strict iff t > 0."""
    Xf = np.asarray(X, float)
    d = Xf.shape[1]
    A = np.array([np.r_[Xf[order[i + 1]] - Xf[order[i]], 1.0] for i in range(len(order) - 1)])
    res = linprog(np.r_[np.zeros(d), -1.0], A_ub=A, b_ub=np.zeros(len(A)), bounds=[(-1, 1)] * d + [(None, 1)],
                  method="highs-ipm")
    return res.status == 0 and -res.fun > TOL["strict_inducible"]


def _lcpo_brute(X, V, counts, *, po=True, linear=True, tiebreak=1):
    cop, P = _copeland(X, V, counts), _pareto(X, V)
    best = None
    for perm in itertools.permutations(range(len(X))):
        key = tuple(k for c in perm for k in (-cop[c], tiebreak * c))
        if best is not None and key >= best[0]:
            continue
        pos = {c: i for i, c in enumerate(perm)}
        if po and any(pos[a] > pos[b] for a, b in P):
            continue
        if linear and not _inducible(X, perm):
            continue
        best = (key, perm)
    return best[1]


# Integer instances (no voter ties): (candidates, voters, counts). Case 0: equal counts, half-half pairs,
# the chain constraint binds (any order would put 0 above 1). Case 1: a three-way Copeland tie broken by
# index where linear feasibility moves candidate 3 above 2. Case 2: Ge's six candidates scaled to integers
# (eps = 1/10, delta = 2), counts 3:2. Case 3: three voters with distinct counts, a near-copy (Pareto pair).
# Case 4: opposed voters, equal counts; every link of the prefix chain is needed (without the link between
# the last two placed candidates, LCPO is left with no feasible next candidate).
LCPO_CASES = [
    ([(0, -3), (4, -3), (-3, -1), (-2, 4)], [(3, 0), (-3, 1)], [2, 2]),
    ([(-2, -1), (0, -2), (1, 3), (4, 0), (-3, 4)], [(3, -1), (-2, 2), (0, -3)], [2, 3, 3]),
    ([(20, 10), (10, 10), (0, 0), (19, 10), (9, 10), (-1, 2)], [(1, 1), (-1, 0)], [3, 2]),
    ([(3, -7), (-5, 2), (6, 5), (-8, -6), (7, 6)], [(1, 3), (4, 1), (2, 3)], [1, 3, 2]),
    ([(4, 4), (-3, 3), (-1, -4), (-6, 4), (4, -5)], [(2, -3), (-3, 2)], [2, 2]),
]


@pytest.mark.parametrize("case", range(len(LCPO_CASES)))
def test_lcpo_equals_brute_force_leximax_copeland(case):
    X, V, counts = LCPO_CASES[case]
    r = sc.lcpo(np.array(X, float), np.array(V, float), np.array(counts, float))
    assert r.ranking == _lcpo_brute(X, V, counts)
    assert [Fraction(c) for c in r.copeland] == _copeland(X, V, counts)
    rew = np.array(X, float) @ r.theta
    # theta induces it
    assert all(rew[a] - rew[b] >= 1 - TOL["lp_feasibility"] for a, b in itertools.pairwise(r.ranking))
    assert not [(a, b) for a, b in _pareto(X, V) if r.ranking.index(a) > r.ranking.index(b)]


@pytest.mark.parametrize("case", range(len(LCPO_CASES)))
def test_lcpo_winner_is_the_brute_force_winner_with_and_without_pareto(case):
    """lcpo_winner places only the first position: the brute force's first candidate, with the Pareto
    constraints and without them (the compromise instance below is one where the two winners differ)."""
    X, V, counts = LCPO_CASES[case]
    args = (np.array(X, float), np.array(V, float), np.array(counts, float))
    assert sc.lcpo_winner(*args) == _lcpo_brute(X, V, counts)[0]
    assert sc.lcpo_winner(*args, pareto=False) == _lcpo_brute(X, V, counts, po=False)[0]


def test_lcpo_cases_make_the_constraints_bind():
    """The cases above are not ones where the rule is trivial: dropping linear feasibility changes a ranking,
    the index tie-break decides one, and half-half pairs occur (so the 1/2 Copeland term matters)."""
    assert any(_lcpo_brute(*c, linear=False) != _lcpo_brute(*c) for c in LCPO_CASES)
    assert any(_lcpo_brute(*c, tiebreak=-1) != _lcpo_brute(*c) for c in LCPO_CASES)
    assert any(s.denominator == 2 for c in LCPO_CASES for s in _copeland(*c))


def test_majority_matrix_and_pareto_pairs_exact_with_ties_and_unequal_weights():
    """ex7 has three voter ties (no vote) and weights 0.9/0.1; a three-voter instance has weights that are
    not a share of one voter. Expected shares by enumeration in Fractions (smallest detectable error 1e-12)."""
    ex = sc.ex7()
    X7 = [tuple(Fraction(x) for x in row) for row in ex.candidates.tolist()]
    V7 = [tuple(Fraction(x) for x in row) for row in ex.voters.tolist()]
    for X, V, w in ((X7, V7, [Fraction(9, 10), Fraction(1, 10)]),
                    (LCPO_CASES[3][0], LCPO_CASES[3][1], [Fraction(1, 6), Fraction(1, 2), Fraction(1, 3)])):
        M = sc.majority_matrix(np.array(X, float), np.array(V, float), np.array(w, float))
        want = [[float(sum(wi for v, wi in zip(V, w) if _dot(v, X[a], X[b]) > 0) / sum(w)) for b in range(len(X))]
                for a in range(len(X))]
        np.testing.assert_allclose(M, want, atol=TOL["share_roundoff"])
        assert set(sc.pareto_pairs(np.array(X, float), np.array(V, float))) == _pareto(X, V)
    # the ties remove (4, 0) and (3, 5): one voter ties them, the other prefers the first (a ">=" test counts them)
    assert _pareto(X7, V7) == {(3, 0), (4, 2), (6, 0), (6, 5)}


def test_pareto_and_pmc_violations_need_a_strict_reversal():
    """A reward that ties a Pareto pair (theta orthogonal to x_a - x_b) violates nothing; reversing it does."""
    X, V, counts = LCPO_CASES[3]
    Xf, Vf = np.array(X, float), np.array(V, float)
    (a, b) = (4, 2)
    assert (a, b) in _pareto(X, V)
    d = Xf[a] - Xf[b]
    tie = np.array([-d[1], d[0]])
    assert (a, b) not in sc.pareto_violations(Xf, Vf, tie)
    assert (a, b) in sc.pareto_violations(Xf, Vf, tie - 0.01 * d)
    inst = sc.ge_instance(0.6, 0.01, 2.0)
    rank, _ = sc.pmc_ranking(inst.candidates, inst.voters, inst.weights)
    for theta in ([0.0, 1.0], [1.0, 0.3], [0.259133, 0.023988]):
        r = inst.candidates @ np.array(theta)
        want = [(p, q) for i, p in enumerate(rank) for q in rank[i + 1:] if r[q] > r[p]]
        assert sc.pmc_violations(inst.candidates, inst.voters, inst.weights, theta).violations == want
    assert rank == (0, 3, 1, 4, 5, 2)  # a > a' > b > b' > c' > c: voter (1, 1) holds the majority 0.6


def test_cone_margin_with_voters_that_are_not_unit_vectors():
    """theta = (1, 1) against voters (2, 0) and (0, 3): theta/|theta| = (e1 + e2)/sqrt 2, so the margin (the
    smallest coordinate on the unit voters) is 1/sqrt 2 and the coordinates of theta are (1, 1); unit-voter
    normalisation dropped would give 1/(3 sqrt 2) = 0.236 (smallest detectable error 1e-9)."""
    c = sc.cone_coordinates([1.0, 1.0], [[2.0, 0.0], [0.0, 3.0]])
    assert c.inside and c.margin == pytest.approx(1 / math.sqrt(2), abs=TOL["cone_lp"])
    np.testing.assert_allclose(c.coords, [1.0, 1.0], atol=TOL["cone_lp"])
    out = sc.cone_coordinates([1.0, -0.5], [[2.0, 0.0], [0.0, 3.0]])
    # the margin outside the cone is the sine of the gap
    assert not out.inside and out.margin == pytest.approx(-0.5 / math.hypot(1, 0.5), abs=TOL["cone_lp"])


def _disagreement_exact(theta, V, w):
    """Share of directions x = (cos phi, sin phi), phi in [0, pi), where sign <theta, x> differs from the
    weighted majority of voter signs: exact, from the breakpoints (directions orthogonal to theta or a voter)."""
    normals = [theta] + list(V)
    cuts = sorted({(math.atan2(v[1], v[0]) + math.pi / 2) % math.pi for v in normals} | {0.0, math.pi})
    total = 0.0
    for lo, hi in itertools.pairwise(cuts):
        mid = 0.5 * (lo + hi)
        x = (math.cos(mid), math.sin(mid))
        maj = sum(wi * ((v[0] * x[0] + v[1] * x[1]) > 0) - wi * ((v[0] * x[0] + v[1] * x[1]) < 0)
                  for v, wi in zip(V, w))
        own = theta[0] * x[0] + theta[1] * x[1]
        if (own > 0) != (maj > 0) or (own < 0) != (maj < 0):
            total += hi - lo
    return total / math.pi


def test_majority_disagreement_exact_share():
    """Three voters (weights 0.5/0.3/0.2, different lengths): the midpoint rule's error is at most the number
    of breakpoints over n_angles = 4 / 20000, so abs = 5e-4 sees any error of one interval's width."""
    V = [(1.0, 0.2), (0.3, 2.0), (-1.5, 1.0)]
    w = [0.5, 0.3, 0.2]
    for theta in ((1.0, 0.4), (0.2, 1.0), (1.0, -0.3)):
        want = _disagreement_exact(theta, V, w)
        got = sc.majority_disagreement(np.array(theta), np.array(V), np.array(w))
        assert got == pytest.approx(want, abs=TOL["midpoint_rule"])
    assert _disagreement_exact((1.0, 0.4), V, w) > 0.05  # not the trivial 0


def _midpoint_disagreements(theta, V, w, n):
    """How many of the n midpoint directions (cos phi, sin phi), phi = (k + 1/2) pi / n, put sign <theta, x>
    against the weighted majority of the voters' signs: a loop, not the module's vectorised form."""
    differ = 0
    for k in range(n):
        x = (math.cos((k + 0.5) * math.pi / n), math.sin((k + 0.5) * math.pi / n))
        maj = sum(wi * np.sign(v[0] * x[0] + v[1] * x[1]) for v, wi in zip(V, w))
        differ += np.sign(theta[0] * x[0] + theta[1] * x[1]) != np.sign(maj)
    return int(differ)


def test_majority_disagreement_is_the_midpoint_rule_on_a_coarse_grid():
    """At a coarse grid the rule itself shows: n_angles = 8 puts directions at phi = (k + 1/2) 22.5 degrees,
    counted here one by one (:func:`_midpoint_disagreements`). For theta = (1, -0.3) a grid shifted by half
    a cell (phi = k 22.5 degrees, endpoints instead of midpoints) counts 4 of 8 directions instead of 5 (an
    error of 1/8, far above rounding). A shift by a whole cell is not a bug: the disagreement is the same
    at x and -x, and such a grid is the same directions up to sign."""
    V = [(1.0, 0.2), (0.3, 2.0), (-1.5, 1.0)]
    w = [0.5, 0.3, 0.2]
    n = 8
    for theta in ((1.0, 0.4), (0.2, 1.0), (1.0, -0.3), (-0.3, 1.0)):
        got = sc.majority_disagreement(np.array(theta), np.array(V), np.array(w), n_angles=n)
        assert got == _midpoint_disagreements(theta, V, w, n) / n
    # the documented default grid (20000 midpoints), counted the same way: the count is an exact integer
    theta, n = (1.0, -0.3), 20000
    assert sc.majority_disagreement(np.array(theta), np.array(V), np.array(w)) * n == _midpoint_disagreements(
        theta, V, w, n)
    with pytest.raises(ValueError, match="d = 2"):  # a 3-vector theta against planar voters
        sc.majority_disagreement(np.ones(3), np.array(V), np.array(w))
    with pytest.raises(ValueError, match="d = 2"):
        sc.majority_disagreement(np.ones(3), np.ones((2, 3)), np.array([0.5, 0.5]))


def test_small_helpers_at_their_edges():
    """linear_feasible on no rows (any theta, here 0) and on one row (a theta with <theta, z> >= 1, checked
    here); arc_rows refuses voters that are not planar; exact rows convert a sympy Rational exactly."""
    np.testing.assert_array_equal(sc.linear_feasible(np.zeros((0, 3))), np.zeros(3))
    z = np.array([[0.5, -2.0]])
    theta = sc.linear_feasible(z)
    assert theta is not None and float(z[0] @ theta) >= 1 - TOL["lp_feasibility"]
    with pytest.raises(ValueError):
        sc.arc_rows(np.ones((2, 3)), [0.5, 0.5], (0.0, 90.0))
    # exact rows keep a sympy Rational coordinate as the same Fraction
    rows = sc.comparison_rows([[0, 0], [sympy.Rational(3, 4), 1]], [[1, 1]], exact=True)
    assert rows.Z.tolist() == [[Fraction(3, 4), Fraction(1)]]


def test_pmc_does_not_apply_to_a_transitive_majority_no_linear_reward_induces():
    """Guards PMC.applies (``ranking is not None and feasible``, not ``or``) and its empty violation list
    (``[]``, not None, when PMC does not apply). Three voters with counts 3, 2, 2 (any two form a majority)
    and four integer candidates: the exact majority relation (enumerated here) is the strict linear order
    1 > 0 > 2 > 3, but its chain differences x1 - x0 = (2, -1), x0 - x2 = (1, 4), x2 - x3 = (-3, -1) have
    the positive combination 11 (2, -1) + 5 (1, 4) + 9 (-3, -1) = 0, so no linear reward ranks them all
    positively (Farkas): the ranking exists, is infeasible, and PMC constrains nothing."""
    X = [(0, 3), (2, 2), (-1, -1), (2, 0)]
    V = [(-1, 2), (-1, -3), (2, 3)]
    counts = [3, 2, 2]
    beats = {(a, b) for a, b in itertools.permutations(range(4), 2)
             if 2 * sum(c for v, c in zip(V, counts) if _dot(v, X[a], X[b]) > 0) > sum(counts)}
    order = (1, 0, 2, 3)
    assert beats == {(order[i], order[j]) for i in range(4) for j in range(i + 1, 4)}
    chain = [[ai - bi for ai, bi in zip(X[order[i]], X[order[i + 1]])] for i in range(3)]
    assert [sum(lam * c[k] for lam, c in zip((11, 5, 9), chain)) for k in range(2)] == [0, 0]
    Xf, Vf = np.array(X, float), np.array(V, float)
    for theta in ([1.0, 0.0], [-0.3, 1.0], [0.0, -1.0]):
        pmc = sc.pmc_violations(Xf, Vf, counts, theta)
        assert pmc.ranking == order and pmc.feasible is False and pmc.applies is False
        assert pmc.violations == [] and pmc.consistent
    # no PMC ranking (two opposite voters split the pair (0, 1), the third ties it): nothing applies, and
    # the violations are still the empty list
    cyc = sc.pmc_violations([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]],
                            [[1.0, -1.5], [-1.0, 1.5], [0.0, -1.0]], [1, 1, 1], [1.0, 0.0])
    assert cyc.applies is False and cyc.violations == []


# --------------------------------------------------------------------------------------------------
# LCPO: the Pareto constraints bind; majority consistency and winner monotonicity helpers
# --------------------------------------------------------------------------------------------------

# A compromise candidate w = (1, 1, 1) beats x_j ~ 4 e_j and c = (4.5, .03, .04) by 2:1 (each x_j and c
# is first only for one of three equal voters near e_j), so it is the Condorcet winner. The x_j sum to
# 4.03 (1, 1, 1), so every theta ranking w first has sum(theta) < 0 and ranks c above a = c + 0.1 (1, 1, 1),
# which every voter prefers (hand computation, not the code under test).
BIND_V = np.array([[1, .1, .2], [.2, 1, .1], [.1, .2, 1]])
BIND_X = np.array([[1, 1, 1], [4, .01, .02], [.02, 4, .01], [.01, .02, 4], [4.5, .03, .04], [4.6, .13, .14]])


def test_lcpo_pareto_constraints_bind_on_the_compromise_instance():
    assert (5, 4) in sc.pareto_pairs(BIND_X, BIND_V)
    ablation = sc.lcpo(BIND_X, BIND_V, pareto=False).ranking
    assert ablation[0] == 0 and ablation.index(4) < ablation.index(5)  # w first, then c above a
    assert (5, 4) in sc.check_ranking_axioms(BIND_X, BIND_V, None, ablation)["po_violations"]
    out = sc.lcpo(BIND_X, BIND_V)
    assert out.ranking != ablation and out.ranking[0] != 0
    assert not sc.check_ranking_axioms(BIND_X, BIND_V, None, out.ranking)["po_violations"]
    assert sc.ranking_of(BIND_X, out.theta) == out.ranking
    # the winners alone: w without the Pareto constraints, another candidate with them
    assert sc.lcpo_winner(BIND_X, BIND_V, pareto=False) == 0 != sc.lcpo_winner(BIND_X, BIND_V)


def test_lcpo_on_random_profiles_without_a_majority_voter():
    for fam in sc.PROFILE_FAMILIES:
        for s in range(4):
            X, V, w = sc.random_profile(jax.random.key(s), fam, 6, 3)
            assert w.max() < 0.5
            ax = sc.check_ranking_axioms(X, V, w, sc.lcpo(X, V, w).ranking)
            assert not ax["po_violations"] and ax["pmc_holds"]


def test_majority_top_raise_and_lower_candidate():
    X = np.array([[0.0, 0.0], [1.0, 0.2], [0.2, 1.0], [0.7, 0.7]])
    V = np.array([[1.0, 0.1], [0.1, 1.0], [1.0, 0.05]])
    assert sc.voter_top(X, V[0]) == 1 and sc.voter_top(X, V[1]) == 2
    assert sc.majority_top(X, V, [1, 1, 1]) == 1 and sc.majority_top(X, V, [1, 2, 1]) is None  # 1/2 each: none above
    # voter (1, 0.1) ranks 1 > 3 > 2 > 0; raising 3 gives 3 > 1 > 2 > 0, induced by e.g. (1, 1)
    v = sc.raise_candidate(X, V[0], 3)
    assert v is not None and sc.ranking_of(X, v) == (3, 1, 2, 0)
    assert sc.raise_candidate(X, V[0], 1) is None  # already on top
    v = sc.lower_candidate(X, V[0], 1)
    assert v is not None and sc.ranking_of(X, v) == (3, 1, 2, 0)
    # 0 = (0, 0) is last for every voter with positive entries: moving it above 2 needs a theta with
    # r(2) < 0 < r(1), r(3), e.g. (1, -0.1)... and 1 > 3 > 0 > 2 is linear too
    v = sc.raise_candidate(X, V[0], 0)
    assert v is not None and sc.ranking_of(X, v) == (1, 3, 0, 2)
    v = sc.lower_candidate(X, V[0], 2)  # second to last moved down: the same swap
    assert v is not None and sc.ranking_of(X, v) == (1, 3, 0, 2)
    assert sc.lower_candidate(X, V[0], 0) is None  # already last
    # voter (1, 1) scores (1, 0.5) and (0.5, 1) alike (1.5 each, exact in binary): no strict ranking to
    # move a candidate in, whichever candidate is moved
    tied = np.array([[0.0, 0.0], [1.0, 0.5], [0.5, 1.0], [0.75, 0.25]])
    for move in (sc.raise_candidate, sc.lower_candidate):
        for c in range(4):
            with pytest.raises(ValueError, match="ties"):
                move(tied, [1.0, 1.0], c)
