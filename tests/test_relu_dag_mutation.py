"""ReLU DAG (Nurisso et al., ICLR 2026, arXiv 2602.00693): tests whose expected values do not come from
theory/relu_dag (issue 23). The sweeps, the worked examples and the small checks helpers are compared
with our own table of worked examples (not in the paper), with the statements of Proposition 3 /
Theorem 1 / the theorem on singular points, and with independent oracles written here: an incidence
matrix built edge by edge, one scipy HiGHS LP per edge for forced edges, a subset enumeration plus LP for
singular points, and ``numpy.linalg.matrix_rank`` for the Jacobian rank. The sweeps run on tiny inputs
(well under 1 s each) with the functions they call wrapped by spies, so every count they return is
recomputed from the very cases they drew.
"""

import itertools
from decimal import Decimal
from fractions import Fraction

import jax.numpy as jnp
import mpmath
import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from theory import relu_dag as R
from theory.relu_dag import checks
from theory.relu_dag import sweeps as S

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "lp_forced_margin": (1e-9, "HiGHS's min s_e on a 0/+-1 system is exact to rounding: measured exactly 0 when not "
                               "forced, and when forced a positive c(S), >= 9.3e-3 over every LP these tests solve "
                               "(>= 1 on the integer worked examples)"),
    "zero_sum": (1e-12, "c(C) = 0 is decided on the sweeps' integer c, whose sums are exact; 1e-12 relative to "
                        "1 + |c| would also absorb float c's rounding (|C| eps), while a non-zero sum is >= 1"),
    "root_near_u0": (1e-14, "u is brentq's root to rtol 4 eps (8.9e-16 at u ~ 1) of a G computed to ~2e-16 with "
                            "|G'(1)| = 0.5, so u0 - u is 4t up to ~3e-15 (measured 3.2e-17); tightened from 2e-12, "
                            "which exceeded 4t itself and let a root off by the bracket's 1e-12 pass"),
    "law_long_times": (1e-7, "the root is found to brentq's rtol 4 eps and G ~ 1/u is conditioned ~1, so G is "
                             "right to ~1e-15 relative (measured <= 1.8e-16); the bug this caught (absolute xtol "
                             "2e-12 with u ~ 5e-13) put G off by a factor 2.5"),
    "asymptote_long": (0.05, "u (2t) - 1 ~ (ln 2t + G(u0)) / 2t, the next term of u ~ 1/(2t): 5.2e-4 at t = 1e4 "
                             "(measured), smaller beyond; a u off by a factor 2 misses by 1"),
    "asymptote_t500": (0.5, "the same next term at t = 500, (ln 1000 + 0.54) / 1000 = 7.4e-3 (measured), where 2t "
                            "is not yet >> G(u0) and the term is 14x larger than at t = 1e4"),
    "lp_point_residual": (1e-12, "HiGHS's point of a 0/+-1 system, B s = c, is exact up to the rounding of c's "
                                 "magnitude (measured <= 2.8e-17 relative, 0 on the integer and the unique-point "
                                 "cases); lp_point itself would accept up to 1e-9 relative"),
    "cut_off_point": (1e-12, "sqrt of an LP vertex of the 0/+-1 system squared back and summed over <= 3 edges of "
                             "size <= 1.5: a few roundings (measured <= 2.2e-16); a wrong cut-off set misses c by "
                             ">= 0.5"),
    "float_balance": (1e-14, "the float balance of sqrt(s) over exact s rounds s, the sqrt and each square and sums "
                             "<= 14 terms: <= ~45 eps relative to 1 + |c| (measured 1.2e-15), while a corrupted "
                             "point is off by > 1e-3"),
    "recomputed_same": (1e-6, "the test repeats the sweep's own float operations on the same matrix and points "
                              "(measured: equal to the last bit); 1e-6 is a 'same number' check, and reporting "
                              "another case's value or another index is off by orders of magnitude"),
    "recomputed_zero": (1e-18, "absolute floor of that check for a worst balance error of exactly 0, far below the "
                               "~1e-15 the errors have when non-zero"),
    "path_on_H": (1e-8, "orthant_classes' own join rule (|B~ theta^2 - c| < 1e-8); the paths are convex "
                        "combinations in theta^2 of exact LP vertices, residual measured 4.4e-16"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}

# --------------------------------------------------------------------------------------------------
# Independent oracles (no theory/relu_dag code)
# --------------------------------------------------------------------------------------------------


def _incidence(G):
    """(hidden nodes, edges, B) with B[v, e] = +1 if e enters v, -1 if it leaves (hidden rows only)."""
    hidden = [v for v in G.nodes if G.in_degree(v) > 0 and G.out_degree(v) > 0]
    edges = list(G.edges)
    B = np.zeros((len(hidden), len(edges)))
    for j, (a, b) in enumerate(edges):
        for i, v in enumerate(hidden):
            B[i, j] = (v == b) - (v == a)
    return hidden, edges, B


def _feasible(B, c, bounds):
    res = linprog(np.zeros(B.shape[1]), A_eq=B, b_eq=np.asarray(c, float), bounds=bounds, method="highs")
    return res.status == 0


def _lp_forced(G, c):
    """Edges e with min s_e > 0 over P(c) = {s >= 0 : B s = c} (Theorem 1 made exact), one HiGHS LP each."""
    hidden, edges, B = _incidence(G)
    cv = [float(c[v]) for v in hidden]
    forced = set()
    for j, e in enumerate(edges):
        obj = np.zeros(len(edges))
        obj[j] = 1.0
        res = linprog(obj, A_eq=B, b_eq=cv, bounds=[(0, None)] * len(edges), method="highs")
        assert res.status == 0  # Proposition 3: P(c) is never empty
        forced |= {e} if res.fun > TOL["lp_forced_margin"] else set()
    return forced


def _has_singular(G, c):
    """Some non-empty C of hidden nodes with c(C) = 0 whose boundary edges can all be 0 in P(c)."""
    hidden, edges, B = _incidence(G)
    cv = np.array([float(c[v]) for v in hidden])
    for k in range(1, len(hidden) + 1):
        for idx in itertools.combinations(range(len(hidden)), k):
            if abs(cv[list(idx)].sum()) > TOL["zero_sum"] * (1 + np.abs(cv).sum()):
                continue
            C = {hidden[i] for i in idx}
            if _feasible(B, cv, [(0, 0) if (a in C) ^ (b in C) else (0, None) for a, b in edges]):
                return True
    return False


def _rank(G, theta):
    """Rank of 2 B diag(theta) by numpy (theta with exact zeros and O(1) non-zeros)."""
    _, edges, B = _incidence(G)
    return int(np.linalg.matrix_rank(2 * B * np.array([theta[e] for e in edges])[None, :]))


def _per_node_rank(G, theta):
    hidden, _, _ = _incidence(G)
    dead = [v for v in hidden if all(theta[(v, w)] == 0 for w in G.successors(v))
            and all(theta[(u, v)] == 0 for u in G.predecessors(v))]
    return len(hidden) - len(dead)


def _spy(monkeypatch, module, name):
    """Wrap module.name so that every call's (args, result) is recorded; returns the record list."""
    calls, orig = [], getattr(module, name)

    def wrapped(*a, **k):
        out = orig(*a, **k)
        calls.append((a, k, out))
        return out
    monkeypatch.setattr(module, name, wrapped)
    return calls


# --------------------------------------------------------------------------------------------------
# worked_examples: our own table of Theorem 1 examples (not in the paper), transcribed independently
# --------------------------------------------------------------------------------------------------

def _paper_table():
    """Rows (name, edges, c, forced) of the table of worked examples, written from our hand derivation."""
    e111 = [("x", "h"), ("h", "y")]
    e211 = [("x1", "h"), ("x2", "h"), ("h", "y")]
    e212 = [("x1", "h"), ("x2", "h"), ("h", "y1"), ("h", "y2")]
    e121 = [("x", "h1"), ("x", "h2"), ("h1", "y"), ("h2", "y")]
    e221 = [("x1", "h1"), ("x2", "h1"), ("x1", "h2"), ("x2", "h2"), ("h1", "y"), ("h2", "y")]
    e222 = e221[:4] + [("h1", "y1"), ("h1", "y2"), ("h2", "y1"), ("h2", "y2")]
    ech = [("x", "h1"), ("h1", "h2"), ("h2", "y")]
    rows = []
    for name, E in (("1-1-1", e111), ("1-1-1+skip", e111 + [("x", "y")])):
        rows += [(name, E, {"h": 1}, {("x", "h")}), (name, E, {"h": -1}, {("h", "y")}),
                 (name, E, {"h": 0}, set())]
    rows += [("2-1-1", e211, {"h": 1}, set()), ("2-1-1", e211, {"h": -1}, {("h", "y")}),
             ("2-1-1", e211, {"h": 0}, set())]
    rows += [("2-1-2", e212, {"h": v}, set()) for v in (1, -1, 0, 3.5)]  # "any" c
    rows += [("1-2-1", e121, {"h1": 1, "h2": 1}, {("x", "h1"), ("x", "h2")}),
             ("1-2-1", e121, {"h1": 1, "h2": -1}, {("x", "h1"), ("h2", "y")}),
             ("1-2-1", e121, {"h1": -1, "h2": 0}, {("h1", "y")}),
             ("1-2-1", e121, {"h1": 0, "h2": 0}, set())]
    rows += [("2-2-1", e221, {"h1": 1, "h2": 1}, set()), ("2-2-1", e221, {"h1": 1, "h2": -1}, {("h2", "y")}),
             ("2-2-1", e221, {"h1": -1, "h2": -1}, {("h1", "y"), ("h2", "y")}),
             ("2-2-1", e221, {"h1": -1, "h2": 0}, {("h1", "y")})]
    rows += [("2-2-2", e222, {"h1": a, "h2": b}, set()) for a, b in ((1, 1), (-1, -1), (5, -7))]
    a, b, d = ech
    chain = {(1, 1): {a, b}, (1, -1): {a, d}, (-1, 1): {b}, (0, 0): set(), (1, 0): {a}, (-2, 1): {b, d},
             (0, 1): {a, b}, (-1, -1): {b, d}}
    rows += [("chain", ech, {"h1": k[0], "h2": k[1]}, f) for k, f in chain.items()]
    return rows


PAPER_CHAIN_COUNTS = [4, 4, 2, 1, 2, 4, 4, 4]  # the table's #comp column for the chain, in row order


def test_worked_examples_are_the_papers_table():
    """Every row of worked_examples() is the hand-derived table's row: same DAG (edges, node names,
    edge order irrelevant), same c (exact, type-insensitive), same forced edges. A changed edge, node,
    balance value or forced set in any example fails here (the smallest change: one c entry by any
    amount, one edge)."""
    got = R.worked_examples()
    want = _paper_table()
    assert len(got) == len(want) == 32
    for (n1, G, c1, f1), (n2, E, c2, f2) in zip(got, want):
        assert n1 == n2
        assert isinstance(G, nx.DiGraph) and set(G.edges) == set(E) and G.number_of_edges() == len(E)
        assert set(G.nodes) == {u for e in E for u in e}
        assert c1 == c2 and set(c1) == set(c2)
        assert f1 == f2
    chain_rows = [f for name, _, _, f in got if name == "chain"]
    assert [2 ** len(f) for f in chain_rows] == PAPER_CHAIN_COUNTS


@pytest.mark.parametrize("i", range(32))
def test_worked_examples_forced_edges_by_independent_lp(i):
    """Theorem 1 made exact: the tabulated forced edges are those with min_{P(c)} s_e > 0, decided here
    by one scipy HiGHS LP per edge on an incidence matrix built in the test (detects one wrongly
    forced or unforced edge; the LP margin is 1e-9 against minima >= 1 when forced)."""
    name, G, c, forced = R.worked_examples()[i]
    assert _lp_forced(G, c) == forced


# --------------------------------------------------------------------------------------------------
# chain_law_u: the exact flow on the chain (our own derivation), G(u) = 1/u - ln(1 + 1/u)
# --------------------------------------------------------------------------------------------------

def _G_mp(u):
    u = mpmath.mpf(u)
    return 1 / u - mpmath.log(1 + 1 / u)


@pytest.mark.parametrize("u0", [0.3, 1.0, 2.5])
def test_chain_law_u_at_zero_is_u0_exactly(u0):
    """u(0) = u0 exactly (the law's initial condition), not a root-finder's approximation of it (a
    bracket search returns u0 only to ~1e-12; equality detects any error)."""
    assert R.chain_law_u(0.0, u0)[0] == u0
    assert R.chain_law_u([0, 0.0], u0).tolist() == [u0, u0]


@pytest.mark.parametrize("t", [1e-14, 1e-13])
def test_chain_law_u_tiny_time_is_just_below_u0(t):
    """For t -> 0, u(t) = u0 - 2 u0^2 (1 + u0) t + O(t^2) (from u' = -2u^2(1+u)): the root lies within
    1e-12 relative of u0 and must still be found (a bracket that stops short of u0 loses it)."""
    u0 = 1.0
    u = R.chain_law_u([t], u0)[0]
    assert u <= u0 and u0 - u < 4 * t + TOL["root_near_u0"]


# 1e8 and 1e12 caught a real bug: brentq's default absolute xtol (2e-12) left u ~ 5e-13 off by a factor 2.5.
@pytest.mark.parametrize("t", [5e2, 1e4, 1e8, 1e12])
def test_chain_law_u_long_times_solve_the_law(t):
    """Long times (u tiny, where G(u) ~ 1/u): u(t) solves G(u) = G(u0) + 2t, checked with mpmath at 30
    digits: relative error of G below 1e-7 (u known to 1e-7 relative; a bracket that misses the root
    raises instead)."""
    u0 = 0.7
    u = R.chain_law_u([t], u0)[0]
    target = _G_mp(u0) + 2 * mpmath.mpf(t)
    assert 0 < u < u0
    assert abs(_G_mp(u) - target) / target < TOL["law_long_times"]
    assert abs(u * (2 * t) - 1) < (TOL["asymptote_long"] if t > 1e3 else TOL["asymptote_t500"])  # u ~ 1/(2t)


def test_chain_law_u_accepts_exact_real_times():
    """Times given as Fraction or Decimal (real numbers, the docstring's "finite times") give the same u
    as the floats; they were converted to float64 before use."""
    want = R.chain_law_u([0.5, 2.0], 1.0)
    np.testing.assert_array_equal(R.chain_law_u([Fraction(1, 2), Fraction(2)], 1.0), want)
    np.testing.assert_array_equal(R.chain_law_u([Decimal("0.5"), Decimal("2")], 1.0), want)


# --------------------------------------------------------------------------------------------------
# checks: no_bottleneck_dag, lp_point, chain_run, min_rank_along
# --------------------------------------------------------------------------------------------------

def test_no_bottleneck_dag_at_p1_is_complete_and_at_p0_has_no_bottleneck():
    """p = 1 gives the complete network DAG (every input->hidden/output, hidden->later hidden/output edge:
    n_in (n_hid + n_out) + n_hid (n_hid - 1) / 2 + n_hid n_out edges); for any p, every hidden node has
    in- and out-degree >= 2 (Theorem 1's corollary needs no bottleneck) and the graph is acyclic."""
    rng = np.random.default_rng(5)
    G = R.no_bottleneck_dag(rng, 3, 4, 2, 1.0)
    assert G.number_of_edges() == 3 * (4 + 2) + 4 * 3 // 2 + 4 * 2
    for p in (0.0, 0.2, 0.6):
        for _ in range(10):
            n_in, n_hid, n_out = int(rng.integers(2, 4)), int(rng.integers(1, 7)), int(rng.integers(2, 4))
            G = R.no_bottleneck_dag(rng, n_in, n_hid, n_out, p)
            assert nx.is_directed_acyclic_graph(G)
            hs = [f"h{i}" for i in range(n_hid)]
            assert {v for v in G if G.in_degree(v) == 0} == {f"x{i}" for i in range(n_in)}
            assert {v for v in G if G.out_degree(v) == 0} == {f"y{i}" for i in range(n_out)}
            assert all(G.in_degree(v) >= 2 and G.out_degree(v) >= 2 for v in hs)
            assert all(int(a[1:]) < int(b[1:]) for a, b in G.edges if a[0] == b[0] == "h")


def test_no_bottleneck_dag_density_follows_p():
    """Mean edge count over 30 draws at p = 0.9 exceeds that at p = 0.1 by > 5 edges (3-6-3 nets: 60
    possible edges; the top-up adds at most 2 per hidden node), so p is used."""
    rng = np.random.default_rng(0)
    m = {p: np.mean([R.no_bottleneck_dag(rng, 3, 6, 3, p).number_of_edges() for _ in range(30)])
         for p in (0.1, 0.9)}
    assert m[0.9] - m[0.1] > 5


def test_lp_point_feasible_infeasible_and_scaled():
    """lp_point returns a point of P(c) (checked: s >= 0, B s = c to 1e-12 relative) when one exists
    (Proposition 3) and None when not (a node with only out-edges and c = +1: Farkas); at |c| = 1e6 the
    point is still accepted (tolerance relative to |c|)."""
    G = R.chain_graph(3)
    _, _, B = _incidence(G)
    for c in ([1.0, -2.0, 0.5], [0.0, 0.0, 0.0], [-1e6, 3e6, 2e6], [0.3, -0.7, 0.1]):
        s = R.lp_point(B.astype(np.int64), np.array(c))
        assert s is not None and s.shape == (4,) and np.all(s >= 0)
        scale = max(1.0, np.abs(c).max())           # relative to |c|, with a unit floor for c = 0
        np.testing.assert_allclose(B @ s, c, rtol=0, atol=TOL["lp_point_residual"] * scale)
    assert R.lp_point(np.array([[-1, -1]]), np.array([1.0])) is None
    assert R.lp_point(np.array([[1, -1], [0, 1]]), np.array([0.0, -1.0])) is None
    np.testing.assert_array_equal(R.lp_point(np.array([[1, -1]]), np.array([0.0])) @ np.array([1, -1]), 0.0)


def test_lp_point_unique_point_empty_rows_and_inexact_scale():
    """(1) B = [[1, -1], [-1, 0]] (chain x->h->y with the input x also constrained, as in the
    feasibility controls), c = (-1, 0): P(c) is the single point s = (0, 1), so the edge (x, h) must be
    exactly 0 (a lower bound above 0 on s would find nothing). (2) No constrained node (B with 0 rows): any
    s >= 0 is a point. (3) c of size ~3e6 with non-integer entries: the residual of HiGHS' point is
    ~1e-10 absolute, accepted because the tolerance is relative to |c| (an absolute 1e-15 would not)."""
    s = R.lp_point(np.array([[1, -1], [-1, 0]]), np.array([-1.0, 0.0]))
    np.testing.assert_allclose(s, [0.0, 1.0], atol=TOL["lp_point_residual"])
    s = R.lp_point(np.zeros((0, 2), np.int64), np.zeros(0))
    assert s is not None and s.shape == (2,) and np.all(s >= 0)
    _, _, B = _incidence(R.errata_chain())
    c = np.array([-1234567.891, 3456789.123, 2e6 + 1 / 3])
    s = R.lp_point(B.astype(np.int64), c)
    assert s is not None and np.all(s >= 0)
    np.testing.assert_allclose(B @ s, c, rtol=TOL["lp_point_residual"])


def test_no_bottleneck_dag_top_up_only_adds_forward_edges(monkeypatch):
    """The top-up (edges added to the graph of :func:`random_dag` until every hidden node has in- and
    out-degree >= 2) keeps the base graph's edges and only adds edges from an input or an earlier hidden
    node to a later hidden node or an output (a DAG in the nodes' order), over 60 sparse draws."""
    rng = np.random.default_rng(4)
    base = []
    orig = checks.random_dag

    def spy(*a, **k):
        G0 = orig(*a, **k)
        base.append(G0.copy())       # the graph before the top-up edits it in place
        return G0
    monkeypatch.setattr(checks, "random_dag", spy)
    n_added = 0
    for _ in range(60):
        G = R.no_bottleneck_dag(rng, 2, 3, 2, 0.05)
        G0 = base.pop()
        assert set(G0.edges) <= set(G.edges)
        added = set(G.edges) - set(G0.edges)
        assert all(a[0] in "xh" and b[0] in "hy" and (a[0] == "x" or b[0] == "y" or int(a[1:]) < int(b[1:]))
                   for a, b in added)
        n_added += len(added)
    assert n_added > 60


def test_chain_run_saves_every_block_exactly():
    """chain_run with the affine step u -> u/2 + 1 (exact in float64): row k is u after k * every steps,
    2 + (u0 - 2) 2^(-k every) (any off-by-one in blocks or steps changes a row by a power of 2)."""
    th0 = jnp.array([3.0, -6.0, 2.0])
    ys = R.chain_run(lambda u: 0.5 * u + 1.0, th0, n_blocks=4, every=3)
    assert ys.shape == (5, 3)
    want = np.array([[2.0 + (x - 2.0) * 0.5 ** (3 * k) for x in (3.0, -6.0, 2.0)] for k in range(5)])
    np.testing.assert_array_equal(ys, want)
    assert R.chain_run(lambda u: u + 1.0, jnp.zeros(2)).shape == (101, 2)
    np.testing.assert_array_equal(R.chain_run(lambda u: u + 1.0, jnp.zeros(2))[-1], [60000.0, 60000.0])


def test_min_rank_along_reads_the_jacobian_rank():
    """On the chain x->h1->h2->y (our own singular-point example (b)): theta = (0, 1, 0) has rank 1 of 2,
    (1, 2, 3) and (1, 0, 1) rank 2 ((1, 0, 1): two separate terminal-linked pieces); the minimum over
    a path and whether it stays at |V_hid| = 2, against numpy's rank of 2 B diag(theta)."""
    G = R.chain_graph(2)
    ys = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, 0.0], [1.0, 0.0, 1.0]])
    assert [_rank(G, R.theta_dict(G, y)) for y in ys] == [2, 1, 2]
    assert R.min_rank_along(G, ys) == (1, False)
    assert R.min_rank_along(G, ys[[0, 2]]) == (2, True)
    assert R.min_rank_along(G, np.zeros((2, 3))) == (0, False)


# --------------------------------------------------------------------------------------------------
# cut_off_point
# --------------------------------------------------------------------------------------------------

def test_cut_off_point_unique_case_and_general_case():
    """Our own singular-point example (b): chain with c = (-1, 1), C = {h1, h2}: the only point of P(c) with
    zero boundary edges is s = (0, 1, 0), so theta = (0, 1, 0) (to 1e-12). On 2-2-1 with c = (0, 1.5),
    C = {h1} (point (c)), and on our own skip chain with c = (-1, 1, 0.5), C = {h1, h2} (a floating
    chain with an internal edge): boundary edges exactly 0 and B theta^2 = c to 1e-12."""
    G = R.chain_graph(2)
    info = R.structure(G)
    th = R.cut_off_point(G, info, {"h1": -1, "h2": 1}, {"h1", "h2"})
    np.testing.assert_allclose(th, [0.0, 1.0, 0.0], atol=TOL["cut_off_point"])
    for G, c, C in ((R.worked_examples()[-12][1], {"h1": 0, "h2": 1.5}, {"h1"}),
                    (R.errata_chain(), {"h1": -1, "h2": 1, "h3": 0.5}, {"h1", "h2"})):
        info = R.structure(G)
        hidden, edges, B = _incidence(G)
        th = R.cut_off_point(G, info, c, C)
        d = dict(zip(info.edges, th))
        assert all(d[(a, b)] == 0 for a, b in edges if (a in C) != (b in C))
        np.testing.assert_allclose(B @ np.array([d[e] for e in edges]) ** 2, [c[v] for v in hidden],
                                   atol=TOL["cut_off_point"])
    assert any(d[(a, b)] > 0 for a, b in edges if a in C and b in C)   # internal edges carry the flow


# --------------------------------------------------------------------------------------------------
# Sweeps on tiny inputs, every count recomputed from the cases they drew
# --------------------------------------------------------------------------------------------------

def test_feasibility_sweep_counts(monkeypatch):
    """Proposition 3: every drawn H_G(c) is non-empty (certified exactly, by LP, and by the float balance
    of sqrt(s) to 1e-15 relative); the controls (an input with c = +1, an output with c = -1) are never
    feasible and always have the Farkas ray. Drawn graphs have 1-14 hidden nodes; c alternates exact
    rationals (even cases) and floats (odd)."""
    calls = _spy(monkeypatch, S, "feasible_point")
    out = S.feasibility_sweep(np.random.default_rng(1), n=8, n_ctl=3)
    assert len(calls) == 8
    worst = 0.0
    for i, ((G, c), _, s) in enumerate(calls):
        hidden, edges, B = _incidence(G)
        assert 1 <= len(hidden) <= 14
        assert all(isinstance(c[v], Fraction if i % 2 == 0 else float) for v in hidden)
        assert _feasible(B, [float(c[v]) for v in hidden], [(0, None)] * len(edges))
        b = B @ np.array([np.sqrt(float(s[e])) for e in edges]) ** 2
        worst = max(worst, max(abs(b[k] - float(c[v])) / (1 + abs(float(c[v])))
                               for k, v in enumerate(hidden)))
    assert out["cases"] == 8 and out["certified_exactly"] == 8 and out["lp_feasible"] == 8
    assert 0 <= out["float_balance_rel_err"] < TOL["float_balance"]
    assert out["float_balance_rel_err"] == pytest.approx(worst, rel=TOL["recomputed_same"],
                                                               abs=TOL["recomputed_zero"])
    assert out["controls"] == {"input": (0, 3), "output": (0, 3)}


def test_feasibility_sweep_flags_a_wrong_certificate(monkeypatch):
    """The sweep's exact check sees a point off P(c): feasible_point shifted by 1/7 on one edge is not
    certified (the count drops by exactly the corrupted cases), and its float balance error grows."""
    orig = S.feasible_point

    def bad(G, c):
        s = orig(G, c)
        e = next(e for e in s if G.out_degree(e[1]) > 0)   # an edge into a hidden node
        s[e] += Fraction(1, 7)
        return s
    monkeypatch.setattr(S, "feasible_point", bad)
    out = S.feasibility_sweep(np.random.default_rng(1), n=4, n_ctl=1)
    assert out["certified_exactly"] == 0 and out["lp_feasible"] == 4
    assert out["float_balance_rel_err"] > 1e-3


def test_connectivity_sweep_counts(monkeypatch):
    """Theorem 1's corollaries: no-bottleneck DAGs, layered nets of widths >= 2 are connected; d-l-1 nets
    with d >= 2 have 2^#{c_k < 0} components. Every count_components call is recomputed with the
    per-edge LP oracle, and each of the sweep's counts equals the oracle's count over its phase (a
    control phase's count is whatever the oracle says for the cases drawn)."""
    cc = _spy(monkeypatch, S, "count_components")
    lp = _spy(monkeypatch, S, "forced_edges_lp")
    kw = dict(n_nb=4, n_lp=2, n_lay=2, n_dl1=4, n_ctl=4)
    out = S.connectivity_sweep(np.random.default_rng(12), **kw)   # seed 12: 3 and 2 controls connected
    assert len(cc) == 4 + 2 + 4 + 3 * 4 and len(lp) == 2
    oracle = [2 ** len(_lp_forced(a[0], a[1])) for a, _, _ in cc]
    assert [r for _, _, r in cc] == oracle
    nb, lay, dl1, bn, w1, d1 = (cc[:4], cc[4:6], cc[6:10], cc[10:14], cc[14:18], cc[18:22])
    for (G, c), _, _ in nb + bn:
        hid = [v for v in G if G.in_degree(v) and G.out_degree(v)]
        assert all(G.in_degree(v) >= 2 and G.out_degree(v) >= 2 for v in hid if v != "hb")
    assert all(G.in_degree("hb") == 1 for (G, _), _, _ in bn)
    for i, ((G, c), _, _) in enumerate(nb):
        assert all(isinstance(c[v], float if i % 2 else int) for v in c)
    for (G, c), _, _ in lay + w1:
        widths = [len(g) for g in nx.topological_generations(G)]
        assert (min(widths) >= 2) if (G, c) in [x[0] for x in lay] else (min(widths[1:-1]) == 1)
    for group, d_ok in ((dl1, lambda d: d >= 2), (d1, lambda d: d == 1)):
        for (G, c), _, _ in group:
            d = sum(1 for v in G if G.in_degree(v) == 0)
            assert d_ok(d)

    def n_match(group):
        return sum(r == 2 ** sum(float(x) < 0 for x in c.values()) for (G, c), _, r in group)
    assert out["no_bottleneck_connected"] == sum(r == 1 for *_, r in nb) == 4
    assert out["no_bottleneck_lp_no_forced"] == sum(not _lp_forced(a[0], a[1]) for a, _, _ in lp) == 2
    assert out["layered_connected"] == sum(r == 1 for *_, r in lay) == 2
    assert out["dl1_count_matches"] == n_match(dl1) == 4
    assert out["bottleneck_added_connected"] == sum(r == 1 for *_, r in bn)
    assert out["bottleneck_added_connected"] == sum(c["hb"] <= 0 for (G, c), _, _ in bn)
    assert out["width1_layer_connected"] == sum(r == 1 for *_, r in w1)
    assert out["d1_count_matches"] == n_match(d1)
    assert (out["no_bottleneck_cases"], out["lp_cases"], out["layered_cases"], out["dl1_cases"],
            out["control_cases"]) == (4, 2, 2, 4, 4)


def test_connectivity_controls_fail_on_a_fixed_seed():
    """The controls are outside the theorem: on seed 2 at least one added in-bottleneck with c > 0 is
    disconnected, and a d = 1 net with a c_k > 0 does not match 2^#{c_k < 0} (our own derivation from
    Theorem 1)."""
    out = S.connectivity_sweep(np.random.default_rng(2), n_nb=0, n_lp=0, n_lay=0, n_dl1=0, n_ctl=6)
    assert out["bottleneck_added_connected"] < 6 and out["width1_layer_connected"] < 6
    assert out["d1_count_matches"] < 6


def _per_node_forced(G, c):
    hidden, _, _ = _incidence(G)
    return {(a, b) for a, b in G.edges if (b in hidden and G.in_degree(b) == 1 and c[b] > 0)
            or (a in hidden and G.out_degree(a) == 1 and c[a] < 0)}


def _all_bottleneck(G):
    hidden, _, _ = _incidence(G)
    return {(a, b) for a, b in G.edges if (b in hidden and G.in_degree(b) == 1)
            or (a in hidden and G.out_degree(a) == 1)}


def test_component_count_sweep_counts(monkeypatch):
    """Theorem 1 exact: all 32 rows of our worked-example table match, random DAGs agree across the
    three methods, and on the 10 small cases the orthant count is the hand-derived one (chain (0,1): 4,
    (-1,1): 2; chain with skip x->y (0,1): 4; chain (0,0): 1; 2-1-1 rows 1, 2, 1; 1-2-1 (1,1), (1,-1): 4,
    4; our skip chain: 8), with no wrong join or split and residual < 1e-8. The wrong rules' counts are
    recomputed with rules written here."""
    calls = _spy(monkeypatch, S, "orthant_classes")
    out = S.component_count_sweep(np.random.default_rng(3), n_rand=3, n_timed=1)
    want = [4, 2, 4, 1, 1, 2, 1, 4, 4, 8]
    assert out["table_rows_matching"] == out["n_table"] == 32
    assert out["random_dags_3_methods_agree"] == out["n_rand"] == 3
    assert out["orthant_classes"] == out["predicted_classes"] == want
    assert out["wrong_joins"] == 0 and out["wrong_splits"] == 0 and 0 <= out["path_residual"] < TOL["path_on_H"]
    cases = [a[:2] for a, _, _ in calls]
    # the cases are our worked examples: chain at c = (0, 1) and (-1, 1), the chain with skip x->y at
    # (0, 1), the chain at c = 0, and our own skip chain at c = (-0.3, 0.5, -0.1)
    assert [c for _, c in cases[:4]] == [{"h1": 0, "h2": 1}, {"h1": -1, "h2": 1}, {"h1": 0, "h2": 1},
                                         {"h1": 0, "h2": 0}]
    assert cases[2][0].has_edge("x", "y") and cases[-1][1] == {"h1": -0.3, "h2": 0.5, "h3": -0.1}
    assert [2 ** len(_lp_forced(G, c)) for G, c in cases] == want
    assert out["wrong_rule_counts"] == {"per_node": [2 ** len(_per_node_forced(G, c)) for G, c in cases],
                                        "bottleneck": [2 ** len(_all_bottleneck(G)) for G, _ in cases]}
    assert out["wrong_rule_counts"]["per_node"][-1] == 4      # non-local: the per-node rule says 4, not 8
    assert out["max_seconds_20_hidden"] >= 0


def test_singular_sweep_counts(monkeypatch):
    """The theorem on singular points: rank = |V_hid| - kappa on every drawn point, existence of singular
    points iff the cut-off LP is feasible, Gaussian initialisations never singular, generic c smooth with
    dimension |E| - |V_hid|, and the non-generic control never smooth (its LP cut-off point is singular).
    The per-node control, the singular-case counts and the masked-initialisation control are recomputed
    with numpy ranks and a subset-enumeration LP oracle."""
    ejr = _spy(monkeypatch, S, "exact_jacobian_rank")
    subs = _spy(monkeypatch, S, "singular_subnetworks")
    bf = _spy(monkeypatch, S, "has_singular_points_bruteforce")
    n = dict(n_rank=12, n_ex=4, n_bf=3, n_init=3, n_sm=2, n_ng=1)
    out = S.singular_sweep(np.random.default_rng(5), **n)
    assert len(ejr) == 12 and len(bf) == 3
    ranks = [_rank(G, th) for (G, th), _, _ in ejr]
    assert [r for *_, r in ejr] == ranks
    assert out["rank_formula_agrees"] == 12
    assert out["per_node_rank_agrees"] == sum(_per_node_rank(G, th) == r
                                              for ((G, th), _, _), r in zip(ejr, ranks))
    ex = subs[:4]
    assert out["existence_lp_agrees"] == 4
    assert out["cases_with_singular_points"] == sum(_has_singular(G, c) for (G, c), _, _ in ex)
    assert all(bool(r) == _has_singular(G, c) for (G, c), _, r in ex)
    for (G, c), _, _ in bf:
        assert G.number_of_edges() <= 8
    assert out["existence_vs_bruteforce"] == 3
    assert out["bruteforce_cases_singular"] == sum(_has_singular(G, c) for (G, c), _, _ in bf)
    init = subs[7:13]
    assert len(init) == 6
    assert out["random_inits_nonsingular"] == 3
    assert not any(_has_singular(G, c) for (G, c), _, _ in init[0::2])
    assert out["masked_inits_nonsingular"] == sum(not _has_singular(G, c) for (G, c), _, _ in init[1::2])
    assert out["generic_c_smooth"] == 2 and out["dims_ok"] is True
    assert out["nongeneric_smooth"] == 0
    gaps = []
    for ((G, th), _, _), r in zip(ejr, ranks):   # the gap s_r / s_(r+1) of 2 B diag(theta) at the rank
        _, edges, B = _incidence(G)
        sv = np.linalg.svd(2 * B * np.array([th[e] for e in edges])[None, :], compute_uv=False)
        if 0 < r < len(sv):
            gaps.append(sv[r - 1] / max(sv[r], 1e-300))
    assert gaps and out["min_singular_value_gap"] == pytest.approx(min(gaps), rel=TOL["recomputed_same"])
    assert out["min_singular_value_gap"] > 1e6
    assert {k: out[k] for k in n} == n


def test_singular_sweep_counts_a_cut_off_point_only_if_singular_and_on_the_level_set(monkeypatch):
    """existence_lp_agrees needs both: the cut-off LP's point singular and on H_G(c). A stub returning
    theta = 0 (singular, with balance 0 at every hidden node) agrees only where c is 0 at every hidden
    node; the DAGs without singular points agree as before (10 sampled points, none singular)."""
    monkeypatch.setattr(S, "cut_off_point", lambda G, info, c, sub: np.zeros(G.number_of_edges()))
    subs = _spy(monkeypatch, S, "singular_subnetworks")
    out = S.singular_sweep(np.random.default_rng(5), n_rank=0, n_ex=12, n_bf=0, n_init=0, n_sm=0, n_ng=0)
    with_sub = [c for (G, c), _, r in subs[:12] if r]
    assert any(any(v != 0 for v in c.values()) for c in with_sub)  # the stub's point is off H_G(c) there
    on_level_set = sum(all(v == 0 for v in c.values()) for c in with_sub)
    assert out["existence_lp_agrees"] == 12 - len(with_sub) + on_level_set


def test_singular_sweep_controls_differ_from_the_theorem():
    """On seed 5 the controls do fail sometimes: the per-node rank rule misses a cut-off set and masked
    initialisations hit singular points (the theorem on singular points says probability 0 only for random
    initialisations, line 423), so those counts are below their case counts."""
    out = S.singular_sweep(np.random.default_rng(5), n_rank=30, n_ex=0, n_bf=0, n_init=10, n_sm=0, n_ng=0)
    assert out["rank_formula_agrees"] == 30
    assert out["per_node_rank_agrees"] < 30 and out["masked_inits_nonsingular"] < 10
