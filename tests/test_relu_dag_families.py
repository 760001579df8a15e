"""ReLU DAG (Nurisso et al., ICLR 2026, arXiv 2602.00693): the random families the exact claims' sweeps
draw are the ones their docstrings state (issue 23). A claim's evidence says "n random DAGs with 1-14
hidden nodes"; a sweep that drew a narrower family (no single-input graph, no negative c, the same edge
probability every time) would still return plausible counts, so each test here runs one sweep on enough
cases that every stated extreme is drawn, records the arguments of the generators it calls (spies that
call through), and compares the ranges seen with the stated ones:

- integer parameters: the smallest and the largest value of the stated range are both drawn (on the seed
  used, with >= 40 draws from <= 14 values, each missing with probability below 1e-2);
- uniform parameters U[a, b): all draws inside, and draws within 10% of the range from each end;
- Gaussian c: the sample standard deviation within 4 standard errors (SE = sigma / sqrt(2 N)) of the
  stated sigma, which tells sigma = 3 from 1 or 4.

The sweeps run at the sizes below, their expensive checks stubbed where the
test reads only the family (brute force, exact ranks, LP points), in about 2 s together.
"""

import types
from fractions import Fraction

import numpy as np
import pytest

from theory.relu_dag import sweeps as S

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "clock_sum_rounding": (1e-12, "the fake clock reads float64 partial sums of 0.1, 0.3, 0.2 up to 6.0, so a 0.3 "
                                  "difference of two readings carries their rounding, <= 2 ulp(6) = 1.8e-15 "
                                  "(measured 2.8e-16); a wrong maximum (0.2 or 0.1) is 0.1 away"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _spy(monkeypatch, name, stub=None):
    """Wrap sweeps.<name>, recording every call's (args, kwargs); returns the record list. The call goes
    through to the real function, or to ``stub`` for an expensive check whose answer this test ignores."""
    calls, orig = [], stub or getattr(S, name)

    def wrapped(*a, **k):
        calls.append((a, k))
        return orig(*a, **k)
    monkeypatch.setattr(S, name, wrapped)
    return calls


def _ints(values, lo, hi):
    """The integer draws span exactly lo..hi (both ends drawn, nothing outside)."""
    values = [int(v) for v in values]
    assert (min(values), max(values)) == (lo, hi), (min(values), max(values))


def _uniform(values, lo, hi):
    values = np.asarray(values, float)
    assert np.all((values >= lo) & (values < hi))
    assert values.min() < lo + 0.1 * (hi - lo) and values.max() > hi - 0.1 * (hi - lo)


def _normal(values, sigma):
    values = np.asarray([float(v) for v in values])
    se = sigma / np.sqrt(2 * len(values))
    assert abs(values.std() - sigma) < 4 * se, (values.std(), sigma, se)
    assert abs(values.mean()) < 4 * sigma / np.sqrt(len(values))


def _dag_args(calls):
    """(n_in, n_hid, n_out, p) of each random_dag call (p positional or its default 0.3)."""
    rows = []
    for a, k in calls:
        p = a[4] if len(a) > 4 else k.get("p", 0.3)
        rows.append((a[1], a[2], a[3], p))
    return list(zip(*rows))


def test_feasibility_sweep_family(monkeypatch):
    """feasibility_sweep: random_dag(n_in 1-3, n_hid 1-14, n_out 1-2, p ~ U[0.1, 0.6)); c exact rationals
    k / q (k in -5..5, q in 1..3) on even cases, N(0, 3^2) floats on odd ones; the controls add to the first
    n_ctl graphs the balance row of the graph's first input (= +1) or first output (= -1)."""
    dags = _spy(monkeypatch, "random_dag")
    fps = _spy(monkeypatch, "feasible_point")
    lps = _spy(monkeypatch, "lp_point")
    n, n_ctl = 120, 5
    S.feasibility_sweep(np.random.default_rng(0), n=n, n_ctl=n_ctl)
    n_in, n_hid, n_out, p = _dag_args(dags)
    _ints(n_in, 1, 3), _ints(n_hid, 1, 14), _ints(n_out, 1, 2), _uniform(p, 0.1, 0.6)
    exact = [x for i, ((G, c), _) in enumerate(fps) if i % 2 == 0 for x in c.values()]
    floats = [x for i, ((G, c), _) in enumerate(fps) if i % 2 for x in c.values()]
    assert all(type(x) is Fraction for x in exact) and all(type(x) is float for x in floats)
    assert (min(exact), max(exact)) == (-5, 5)          # k = -5 and k = 5 over q = 1
    assert {x.denominator for x in exact} == {1, 2, 3}     # k / q in lowest terms
    _normal(floats, 3.0)
    ctl = lps[n:]                       # after the n cases' own LPs: input controls, then output controls
    assert len(ctl) == 2 * n_ctl
    for k, ((B2, c2), _) in enumerate(ctl):
        G = fps[k % n_ctl][0][0]
        edges = list(G.edges)
        node, sign = ("x0", 1.0) if k < n_ctl else ("y0", -1.0)
        row = [(v == node) - (u == node) for u, v in edges]   # inflow - outflow of the terminal node
        assert node in G and np.array_equal(B2[-1], row) and np.any(B2[-1] != 0) and c2[-1] == sign


def test_connectivity_sweep_family(monkeypatch):
    """connectivity_sweep: no-bottleneck DAGs (n_in 2-3, n_hid 1-12, n_out 2-3, p ~ U[0.1, 0.5)) with c in
    -3..3 (even cases) or N(0, 3^2) (odd); layered nets of 3-5 layers of widths 2-4 with c ~ N(0, 3^2);
    d-l-1 nets with d 2-5, l 1-8, c in -2..2 (odd) or N(0, 1) (even). Controls: the in-bottleneck hb (in-edge
    from x0, out-edges to y0 and y1), one width-1 hidden layer among 2-3 layers of widths 2-4, and d = 1."""
    nb = _spy(monkeypatch, "no_bottleneck_dag")
    lay = _spy(monkeypatch, "layered_graph")
    cc = _spy(monkeypatch, "count_components")
    k = dict(n_nb=40, n_lp=1, n_lay=40, n_dl1=60, n_ctl=40)
    S.connectivity_sweep(np.random.default_rng(0), **k)
    n_in, n_hid, n_out, p = zip(*[a[1:5] for a, _ in nb])
    _ints(n_in, 2, 3), _ints(n_hid, 1, 12), _ints(n_out, 2, 3), _uniform(p, 0.1, 0.5)
    i = 0
    groups = {}
    for name in ("nb", "lay", "dl1", "bn", "w1", "d1"):
        m = k["n_" + name] if name in ("nb", "lay", "dl1") else k["n_ctl"]
        groups[name], i = cc[i:i + m], i + m
    assert i == len(cc)
    c_int = [x for j, ((G, c), _) in enumerate(groups["nb"] + groups["bn"]) if j % 2 == 0 for x in c.values()]
    c_flt = [x for j, ((G, c), _) in enumerate(groups["nb"] + groups["bn"]) if j % 2 for x in c.values()]
    _ints(c_int, -3, 3), _normal(c_flt, 3.0)
    for (G, _), _ in groups["bn"]:
        assert list(G.predecessors("hb")) == ["x0"] and set(G.successors("hb")) == {"y0", "y1"}
    widths = [a[0] for a, _ in lay]
    plain, w1 = widths[:40], widths[40:]
    _ints([len(w) for w in plain], 3, 5), _ints([x for w in plain for x in w], 2, 4)
    assert all(w.count(1) == 1 and 0 < w.index(1) < len(w) - 1 for w in w1)
    _ints([len(w) - 1 for w in w1], 3, 4), _ints([x for w in w1 for x in w if x != 1], 2, 4)
    _ints([w.index(1) for w in w1], 1, 3)
    _normal([x for (G, c), _ in groups["lay"] for x in c.values()], 3.0)
    d = [sum(1 for v in G if G.in_degree(v) == 0) for (G, _), _ in groups["dl1"]]
    l = [len(c) for (G, c), _ in groups["dl1"]]
    _ints(d, 2, 5), _ints(l, 1, 8)
    _ints([x for j, ((G, c), _) in enumerate(groups["dl1"]) if j % 2 for x in c.values()], -2, 2)
    _normal([x for j, ((G, c), _) in enumerate(groups["dl1"]) if j % 2 == 0 for x in c.values()], 1.0)
    assert all(sum(1 for v in G if G.in_degree(v) == 0) == 1 for (G, _), _ in groups["d1"])
    _ints([len(c) for (G, c), _ in groups["d1"]], 1, 8)


def test_singular_sweep_family(monkeypatch):
    """singular_sweep: rank cases random_dag(2, 1-9, 2, p ~ U[0.2, 0.6)); existence cases random_dag(2, 1-6,
    2, U[0.2, 0.6)) with c in -1..1, checked by the cut-off LP or 10 points of one LP vertex each; brute-force
    cases random_dag(1-2, 1-4, 1-2, 0.3) with <= 8 edges; initialisations random_dag(3, 2-12, 2, 0.3);
    generic c: random_dag(2, 2-8, 2, 0.35), c ~ N(0, 1), 5 points with random signs and one LP vertex each;
    non-generic control: random_dag(2, 2-8, 2, 0.35), c in -1..1, the cut-off point and 4 one-vertex points."""
    dags = _spy(monkeypatch, "random_dag")
    subs = _spy(monkeypatch, "singular_subnetworks")
    pts = _spy(monkeypatch, "sample_point", stub=lambda G, c, *a, **k: np.ones(G.number_of_edges()))
    bf = _spy(monkeypatch, "has_singular_points_bruteforce", stub=lambda G, c: False)
    _spy(monkeypatch, "exact_jacobian_rank", stub=lambda G, th: -1)
    n = dict(n_rank=60, n_ex=50, n_bf=40, n_init=50, n_sm=40, n_ng=10)
    S.singular_sweep(np.random.default_rng(0), **n)
    rank, ex = _dag_args(dags[:60]), _dag_args(dags[60:110])
    for group, hid in ((rank, (1, 9)), (ex, (1, 6))):
        assert set(group[0]) == {2} and set(group[2]) == {2}
        _ints(group[1], *hid), _uniform(group[3], 0.2, 0.6)
    tail = _dag_args(dags[110:])
    small = [r for r in zip(*tail) if r[3] == 0.3 and r[0] in (1, 2)]     # brute-force draws (any size)
    _ints([r[0] for r in small], 1, 2), _ints([r[1] for r in small], 1, 4), _ints([r[2] for r in small], 1, 2)
    assert len(bf) == 40 and all(a[0].number_of_edges() <= 8 for a, _ in bf)
    init = [r for r in zip(*tail) if r[0] == 3]
    assert len(init) == 50 and {(r[2], r[3]) for r in init} == {(2, 0.3)}
    _ints([r[1] for r in init], 2, 12)
    generic = [r for r in zip(*tail) if r[3] == 0.35]
    assert {(r[0], r[2]) for r in generic} == {(2, 2)}
    _ints([r[1] for r in generic], 2, 8)
    ex_c = [x for (G, c), _ in subs[:50] for x in c.values()]
    _ints(ex_c, -1, 1)
    assert all(type(x) is int for x in ex_c)
    assert pts and all(k.get("n_vertices", a[4] if len(a) > 4 else 3) == 1 for a, k in pts)
    signs = [a[2] for a, k in pts if len(a) > 2 and a[2] is not None]
    assert len(signs) == 5 * 40 and {-1.0, 1.0} <= set(np.concatenate(signs).tolist()) <= {-1.0, 1.0}
    sm_c = [x for a, k in pts if len(a) > 2 and a[2] is not None for x in a[1].values()]
    _normal(sm_c, 1.0)


def test_component_count_sweep_family_and_clock(monkeypatch):
    """component_count_sweep: random DAGs random_dag(1-3, 1-9, 1-2, p ~ U[0.1, 0.5)) with c ~ N(0, 1) (odd)
    or in -2..2 (even); timed DAGs random_dag(3, 20, 2, U[0.08, 0.3)). ``max_seconds_20_hidden`` is the
    longest count_components call, read off a fake clock whose calls take 0.1, 0.3, 0.2, ... s."""
    dags = _spy(monkeypatch, "random_dag")
    fe = _spy(monkeypatch, "forced_edges")
    for name in ("forced_edges_lp", "forced_edges_bruteforce"):
        _spy(monkeypatch, name, stub=lambda G, c: None)
    oc = _spy(monkeypatch, "orthant_classes", stub=lambda G, c, rng: (1, 0, 0, 0.0))
    ticks = iter(np.cumsum([0.0, 0.1, 0.0, 0.3, 0.0, 0.2] * 10))
    monkeypatch.setattr(S, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    rng = np.random.default_rng(0)
    out = S.component_count_sweep(rng, n_rand=60, n_timed=3)
    assert oc and all(a[2] is rng for a, _ in oc)  # the orthant points come from the sweep's own stream
    n_in, n_hid, n_out, p = _dag_args(dags[:60])
    _ints(n_in, 1, 3), _ints(n_hid, 1, 9), _ints(n_out, 1, 2), _uniform(p, 0.1, 0.5)
    assert [r[:3] for r in zip(*_dag_args(dags[60:]))] == [(3, 20, 2)] * 3
    assert all(0.08 <= r <= 0.3 for r in _dag_args(dags[60:])[3])
    rand = fe[32:32 + 60]                           # after the 32 rows of our worked-example table
    _ints([x for j, ((G, c), _) in enumerate(rand) if j % 2 == 0 for x in c.values()], -2, 2)
    _normal([x for j, ((G, c), _) in enumerate(rand) if j % 2 for x in c.values()], 1.0)
    assert out["max_seconds_20_hidden"] == pytest.approx(0.3, abs=TOL["clock_sum_rounding"])


def test_dl1_count_agreement_family(monkeypatch):
    """dl1_count_agreement: Kaiming-normal d-l-1 nets with d in 2..4 and l in 1..5."""
    nets = _spy(monkeypatch, "dl1_graph")
    S.dl1_count_agreement(np.random.default_rng(0), n_draw=60)
    d, l = zip(*[a for a, _ in nets])
    _ints(d, 2, 4), _ints(l, 1, 5)
