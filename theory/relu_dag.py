"""ReLU networks on DAGs: balance invariants, connected components and singularities of the learning space.

Paper: Nurisso, Leroy, Petri, Vaccarino, "Topology and Geometry of the Learning Space of ReLU Networks:
Connectivity and Singularities", ICLR 2026, arXiv 2602.00693. Brief: ``shared/papers/relu_dag.md``.

Setting. A network is a ``networkx.DiGraph`` without cycles; inputs are the nodes of in-degree 0, outputs
the nodes of out-degree 0, the rest hidden. There is one weight ``theta_e`` per edge (a bias is an edge
from an input node that always carries 1). Hidden nodes apply ReLU (or leaky ReLU), outputs are linear.
``B~`` is the incidence matrix restricted to hidden rows (+1 where the edge enters the node, -1 where it
leaves), so the balance vector is ``c = B~ theta^2`` (in-weights squared minus out-weights squared).

* Conservation (paper eq. for <<theta, grad L>>_v = 0; Du, Hu & Lee 2018): ``B~(theta * grad L) = 0``, so
  gradient flow keeps ``theta`` in ``H_G(c) = {theta : B~ theta^2 = c}`` (Definition 1).
* ``H_G(c)`` is the preimage under the elementwise square of the polyhedron
  ``P(c) = {s >= 0 : B~ s = c}``; an edge is *forced* when ``min_{P(c)} s_e > 0`` and the number of
  connected components is ``2^(#forced)`` (Theorem 1 made exact; brief section 2.3). Only edges into an
  in-degree-1 hidden node or out of an out-degree-1 hidden node (bottlenecks) can be forced, and the
  closure criterion (Gale/Hoffman flow feasibility) decides it exactly by one max-weight closure per edge.
* The Jacobian of ``theta -> B~ theta^2`` is ``2 B~ diag(theta)``; its rank is ``|V_hid| - kappa(theta)``
  with ``kappa`` the number of components of the support graph that touch no input or output
  (the theorem on singular points; brief section 2.4).

Every public function validates its graph (:func:`structure`): a cycle, an isolated node, a hidden node on
no input-to-output path, a ``theta`` whose keys are not the edges or a ``c`` whose keys are not the hidden
nodes raise ``ValueError`` naming the offending cycle, node or key; wrong types raise ``TypeError``.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np

from theory import ledger

# ---------------------------------------------------------------------------------------------------
# Graph structure and input validation
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DagInfo:
    """The validated structure of a network graph.

    Attributes:
      graph: the graph itself (not copied).
      inputs, hidden, outputs: node tuples in ``G.nodes`` order (in-degree 0 / both >= 1 / out-degree 0).
      edges: ``tuple(G.edges)``; the order of every parameter vector ``theta`` of shape ``[|E|]``.
      B: ``[|V_hid|, |E|]`` int incidence matrix on hidden rows (+1 edge enters, -1 edge leaves).
      topo: all nodes in a topological order.
    """

    graph: nx.DiGraph
    inputs: tuple
    hidden: tuple
    outputs: tuple
    edges: tuple
    B: np.ndarray
    topo: tuple

    @property
    def edge_index(self) -> dict:
        return {e: i for i, e in enumerate(self.edges)}

    @property
    def hidden_index(self) -> dict:
        return {v: i for i, v in enumerate(self.hidden)}


def structure(G) -> DagInfo:
    """Validate ``G`` and return its :class:`DagInfo`.

    Raises:
      TypeError: ``G`` is not a ``networkx.DiGraph`` (multigraphs and undirected graphs are refused).
      ValueError: ``G`` is empty, has a cycle (the message lists the cycle's edges), has an isolated node
        (it would be both input and output), or has a hidden node on no input-to-output path (named).
    """
    if not isinstance(G, nx.DiGraph) or isinstance(G, nx.MultiDiGraph):
        raise TypeError(f"G must be a networkx.DiGraph (no multigraph), got {type(G).__name__}")
    if G.number_of_nodes() == 0:
        raise ValueError("G has no nodes")
    try:
        cycle = nx.find_cycle(G)
    except nx.NetworkXNoCycle:
        cycle = None
    if cycle is not None:
        raise ValueError(f"G is not acyclic: it has the cycle {[(u, v) for u, v, *_ in cycle]}")
    indeg, outdeg = dict(G.in_degree()), dict(G.out_degree())
    for v in G.nodes:
        if indeg[v] == 0 and outdeg[v] == 0:
            raise ValueError(f"node {v!r} is isolated: it is on no input-to-output path")
    inputs = tuple(v for v in G.nodes if indeg[v] == 0)
    outputs = tuple(v for v in G.nodes if outdeg[v] == 0)
    hidden = tuple(v for v in G.nodes if indeg[v] > 0 and outdeg[v] > 0)
    # In a DAG every hidden node has an ancestor input and a descendant output; the check stays explicit
    # so that the invariant is enforced, not assumed.
    from_in = set(inputs).union(*(nx.descendants(G, u) for u in inputs)) if inputs else set()
    to_out = set(outputs).union(*(nx.ancestors(G, w) for w in outputs)) if outputs else set()
    for v in hidden:
        if v not in from_in or v not in to_out:
            raise ValueError(f"hidden node {v!r} is on no input-to-output path")
    edges = tuple(G.edges())
    hidx = {v: i for i, v in enumerate(hidden)}
    B = np.zeros((len(hidden), len(edges)), dtype=np.int64)
    for j, (u, v) in enumerate(edges):
        if v in hidx:
            B[hidx[v], j] += 1
        if u in hidx:
            B[hidx[u], j] -= 1
    return DagInfo(G, inputs, hidden, outputs, edges, B, tuple(nx.topological_sort(G)))


def incidence_matrix(G) -> tuple[np.ndarray, tuple, tuple]:
    """``(B~, hidden, edges)``: the ``[|V_hid|, |E|]`` hidden-row incidence matrix (+1 in, -1 out) and the
    row and column orders. Raises as :func:`structure`."""
    info = structure(G)
    return info.B.copy(), info.hidden, info.edges


def _real(x, what: str):
    """A finite real number: ints and Fractions stay exact, floats stay floats.

    Raises TypeError (not a real number, or a bool) or ValueError (NaN or infinite), naming ``what``."""
    if isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{what} must be a real number, got the bool {x!r}")
    if isinstance(x, numbers.Rational):
        return Fraction(int(x.numerator), int(x.denominator)) if not isinstance(x, int) else x
    if isinstance(x, numbers.Real):
        v = float(x)
    elif hasattr(x, "shape") and hasattr(x, "dtype") and np.shape(x) == () and np.issubdtype(
            np.asarray(x).dtype, np.number) and not np.issubdtype(np.asarray(x).dtype, np.complexfloating):
        v = float(np.asarray(x))
    else:
        raise TypeError(f"{what} must be a real number, got {type(x).__name__} {x!r}")
    if not math.isfinite(v):
        raise ValueError(f"{what} must be finite, got {v!r}")
    return v


def _mapping_values(m, keys: tuple, name: str, keyname: str) -> list:
    """Values of mapping ``m`` in the order of ``keys``, requiring its keys to be exactly ``keys``."""
    if not isinstance(m, Mapping):
        raise TypeError(f"{name} must be a dict {keyname} -> float, got {type(m).__name__}")
    want = set(keys)
    missing = [k for k in keys if k not in m]
    extra = [k for k in m if k not in want]
    if missing:
        raise ValueError(f"{name} is missing the {keyname}(s) {missing}")
    if extra:
        raise ValueError(f"{name} has key(s) {extra} that are not {keyname}s of G")
    return [_real(m[k], f"{name}[{k!r}]") for k in keys]


def theta_vector(G, theta, info: DagInfo | None = None) -> np.ndarray:
    """``theta`` (dict edge -> float) as a float64 vector ``[|E|]`` in ``tuple(G.edges)`` order.

    Raises:
      TypeError: ``theta`` is not a dict, or a value is not a real number.
      ValueError: its keys are not exactly the edges (missing / extra keys named), or a value is not finite.
    """
    info = info or structure(G)
    return np.array([float(v) for v in _mapping_values(theta, info.edges, "theta", "edge")], np.float64)


def theta_dict(G, vec) -> dict:
    """Inverse of :func:`theta_vector`: a vector ``[|E|]`` in ``tuple(G.edges)`` order to a dict."""
    edges = tuple(G.edges())
    vec = np.asarray(vec, np.float64)
    if vec.shape != (len(edges),):
        raise ValueError(f"theta vector must have shape ({len(edges)},), got {vec.shape}")
    return {e: float(x) for e, x in zip(edges, vec)}


def _c_exact(info: DagInfo, c) -> list[Fraction]:
    return [Fraction(v) for v in _mapping_values(c, info.hidden, "c", "hidden node")]


def c_vector(G, c, info: DagInfo | None = None) -> np.ndarray:
    """``c`` (dict hidden node -> float) as a float64 vector ``[|V_hid|]`` in hidden-node order.

    Raises:
      TypeError / ValueError: as :func:`theta_vector`, for keys that are not exactly the hidden nodes.
    """
    info = info or structure(G)
    return np.array([float(v) for v in _c_exact(info, c)], np.float64)


# ---------------------------------------------------------------------------------------------------
# Balance (conservation law) and feasibility
# ---------------------------------------------------------------------------------------------------


def balance(G, theta) -> dict:
    """The balance vector ``c = B~ theta^2``: hidden node -> (sum of squared in-weights) - (sum of squared
    out-weights). Paper Definition 1 / brief section 1.

    Args:
      G: the network DAG.
      theta: dict edge -> real weight; ints and ``Fraction`` give exact values, floats give floats.
    Returns:
      dict hidden node -> ``c_v`` (hidden nodes in ``G.nodes`` order).
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`theta_vector`.
    """
    info = structure(G)
    vals = dict(zip(info.edges, _mapping_values(theta, info.edges, "theta", "edge")))
    out = {}
    for v in info.hidden:
        cin = sum((vals[e] * vals[e] for e in G.in_edges(v)), 0)
        cout = sum((vals[e] * vals[e] for e in G.out_edges(v)), 0)
        out[v] = cin - cout
    return out


def balance_array(B: np.ndarray, theta) -> jax.Array:
    """``B~ theta^2`` for a vector (or batch ``[..., |E|]``) ``theta``; JAX-traceable."""
    return jnp.einsum("he,...e->...h", jnp.asarray(B, jnp.result_type(float)), jnp.square(theta))


def feasible_point(G, c) -> dict:
    """An exact point ``s`` of ``P(c) = {s >= 0 : B~ s = c}`` (hence ``theta = sqrt(s)`` in ``H_G(c)``).

    Constructive proof of Proposition 3 (brief 2.1): ``c_v > 0`` is routed along an input -> v path,
    ``c_v < 0`` along a v -> output path; intermediate hidden nodes see equal in- and outflow.

    Returns:
      dict edge -> ``Fraction`` (exact), with ``B~ s = c`` exactly.
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`c_vector`.
    """
    info = structure(G)
    cex = _c_exact(info, c)
    s = {e: Fraction(0) for e in info.edges}
    src, snk = object(), object()
    Gs = nx.DiGraph(G)
    Gs.add_edges_from((src, u) for u in info.inputs)
    Gs.add_edges_from((w, snk) for w in info.outputs)
    for v, cv in zip(info.hidden, cex):
        if cv > 0:
            path = nx.shortest_path(Gs, src, v)[1:]
        elif cv < 0:
            path = nx.shortest_path(Gs, v, snk)[:-1]
        else:
            continue
        for e in zip(path[:-1], path[1:]):
            s[e] += abs(cv)
    return s


# ---------------------------------------------------------------------------------------------------
# Forced edges and connected components (Theorem 1, exact)
# ---------------------------------------------------------------------------------------------------


def _integer_weights(cex: list[Fraction]) -> list[int]:
    den = math.lcm(*(q.denominator for q in cex)) if cex else 1
    return [int(q * den) for q in cex]


class _Terminal:
    """A super-source/sink node for min-cut graphs, distinct from every node of a user's graph."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


def _max_closure(G, info: DagInfo, w: dict, root, side: str) -> tuple[int, frozenset]:
    """Max of ``w(S)`` over sets ``S`` of hidden nodes with ``root in S`` and every other member having all
    its predecessors (``side='in'``) or successors (``side='out'``) in ``S``. Exact (integer min-cut).
    Returns ``(max, S)``."""
    nbrs = G.predecessors if side == "in" else G.successors
    reach = nx.descendants(G, root) if side == "in" else nx.ancestors(G, root)
    cand = [v for v in reach if v in w]
    total_pos = sum(w[v] for v in cand if w[v] > 0)
    if total_pos == 0:
        return w[root], frozenset([root])
    src, snk = _Terminal("source"), _Terminal("sink")  # never equal to a user's node
    H = nx.DiGraph()
    H.add_nodes_from([src, snk])
    cset = set(cand)
    for v in cand:
        forbidden = any(u != root and u not in cset for u in nbrs(v))
        if forbidden:
            H.add_edge(v, snk)  # no capacity attribute: infinite, v can never be in S
        elif w[v] < 0:
            H.add_edge(v, snk, capacity=-w[v])
        if w[v] > 0:
            H.add_edge(src, v, capacity=w[v])
        for u in nbrs(v):
            if u != root and u in cset:
                H.add_edge(v, u)  # v in S => u in S (infinite)
    cut, (src_side, _) = nx.minimum_cut(H, src, snk)
    S = frozenset(v for v in src_side if v is not src) | {root}
    return w[root] + total_pos - cut, S


def forced_edge_certificates(G, c) -> dict:
    """The forced edges of ``H_G(c)`` with exact certificates, by the closure criterion (brief 2.3).

    Edge ``e = (a, b)`` is forced iff (in) ``b`` is hidden with in-degree 1 and some ``S`` containing
    ``b``, whose other members have all their predecessors in ``S``, has ``c(S) > 0``; or (out) ``a`` is
    hidden with out-degree 1 and some ``S`` containing ``a``, whose other members have all their
    successors in ``S``, has ``c(S) < 0``. ``1_S`` is then a Farkas ray proving
    ``{s in P(c) : s_e = 0}`` empty. Each maximum is an exact integer max-weight closure (min-cut).

    Returns:
      dict forced edge -> ``(side, S, c(S))`` with ``side in {'in', 'out'}``, ``S`` a frozenset of hidden
      nodes and ``c(S)`` an exact ``Fraction``.
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`c_vector`.
    """
    info = structure(G)
    cex = _c_exact(info, c)
    cint = _integer_weights(cex)
    w_in = dict(zip(info.hidden, cint))
    w_out = {v: -x for v, x in w_in.items()}
    cq = dict(zip(info.hidden, cex))
    out = {}
    for (a, b) in info.edges:
        if b in w_in and G.in_degree(b) == 1:
            best, S = _max_closure(G, info, w_in, b, "in")
            if best > 0:
                out[(a, b)] = ("in", S, sum((cq[v] for v in S), Fraction(0)))
                continue
        if a in w_in and G.out_degree(a) == 1:
            best, S = _max_closure(G, info, w_out, a, "out")
            if best > 0:
                out[(a, b)] = ("out", S, sum((cq[v] for v in S), Fraction(0)))
    return out


def forced_edges(G, c) -> set:
    """The forced edges of ``H_G(c)``: edges ``e`` with ``min_{s in P(c)} s_e > 0``, whose sign is the same
    on a whole connected component (brief 2.3, Theorem 1 made exact).

    Decided exactly (rational arithmetic, integer min-cut) by the closure criterion; :func:`edge_lp_minima`
    is the LP route (one HiGHS LP per edge, every verdict certified), and the ledger checks they agree.

    Args:
      G: the network DAG; c: dict hidden node -> real balance.
    Returns:
      set of edges ``(u, v)``.
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`c_vector`.
    """
    return set(forced_edge_certificates(G, c))


def count_components(G, c) -> int:
    """Number of connected components of ``H_G(c)``: ``2 ** len(forced_edges(G, c))`` (exact).

    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`c_vector`.
    """
    return 2 ** len(forced_edges(G, c))


def forced_edges_bruteforce(G, c, max_hidden: int = 14) -> set:
    """The closure criterion by enumerating every candidate set ``S`` (exact Fractions); for cross-checks.

    Raises:
      ValueError: more than ``max_hidden`` hidden nodes.
    """
    info = structure(G)
    if len(info.hidden) > max_hidden:
        raise ValueError(f"{len(info.hidden)} hidden nodes > max_hidden={max_hidden}")
    cq = dict(zip(info.hidden, _c_exact(info, c)))
    hid = set(info.hidden)

    def ok(S, root, nbrs):
        return all(all(u in S for u in nbrs(v)) for v in S if v != root)

    def best(root, nbrs, reach, sign):
        others = [v for v in reach if v in hid]
        vals = []
        for r in range(len(others) + 1):
            for sub in itertools.combinations(others, r):
                S = set(sub) | {root}
                if ok(S, root, nbrs):
                    vals.append(sign * sum((cq[v] for v in S), Fraction(0)))
        return max(vals)

    out = set()
    for (a, b) in info.edges:
        if b in hid and G.in_degree(b) == 1 and best(b, G.predecessors, nx.descendants(G, b), 1) > 0:
            out.add((a, b))
        elif a in hid and G.out_degree(a) == 1 and best(a, G.successors, nx.ancestors(G, a), -1) > 0:
            out.add((a, b))
    return out


@dataclass(frozen=True)
class LPVerdict:
    """One certified LP verdict: ``minimum`` of ``s_e`` over ``P(c)`` (HiGHS), ``forced`` and the
    certificate: an exact integer Farkas ray ``y`` (forced) or a feasible point with ``s_e = 0``
    (not forced, residual ``residual``)."""

    edge: Any
    minimum: float
    forced: bool
    ray: tuple | None
    point: np.ndarray | None
    residual: float


def _linprog(cost, A, b, bounds):
    from scipy.optimize import linprog

    return linprog(cost, A_eq=A, b_eq=b, bounds=bounds, method="highs")


def edge_lp_minima(G, c, edges=None, rtol: float = 1e-9) -> dict:
    """One LP per edge, ``min s_e`` over ``P(c) = {s >= 0 : B~ s = c}`` (scipy ``linprog``, HiGHS), each
    verdict verified by its certificate, never by the solver status alone.

    Bounds are passed explicitly (``linprog`` would otherwise impose them silently). ``forced`` is
    certified by the LP's dual ``y`` (``res.eqlin.marginals``), rounded to integers (``B~`` is totally
    unimodular, so dual vertices are integral) and checked exactly: ``(B~^T y)_f <= 0`` for ``f != e`` and
    ``c.y > 0`` (Farkas). ``not forced`` is certified by a point of ``P(c)`` with ``s_e = 0`` whose
    residual ``|B~ s - c|_inf <= rtol * max(1, |c|_inf)``.

    Returns:
      dict edge -> :class:`LPVerdict` (for ``edges``, default all edges).
    Raises:
      RuntimeError: HiGHS failed, or neither certificate verifies (a near-boundary ``c``).
    """
    info = structure(G)
    cex = _c_exact(info, c)
    cv = np.array([float(q) for q in cex])
    B = info.B.astype(np.float64)
    m = len(info.edges)
    scale = max(1.0, float(np.max(np.abs(cv)))) if cv.size else 1.0
    idx = info.edge_index
    out = {}
    for e in (info.edges if edges is None else edges):
        j = idx[e]
        if not info.hidden:
            out[e] = LPVerdict(e, 0.0, False, None, np.zeros(m), 0.0)
            continue
        cost = np.zeros(m)
        cost[j] = 1.0
        res = _linprog(cost, B, cv, [(0.0, None)] * m)
        if res.status != 0:
            raise RuntimeError(f"HiGHS failed on the LP of edge {e!r}: {res.message}")
        y = np.asarray(res.eqlin.marginals, np.float64)
        yi = [int(round(v)) for v in y]
        aty = info.B.T @ np.array(yi, dtype=object) if yi else np.zeros(m, dtype=object)
        cy = sum((q * k for q, k in zip(cex, yi)), Fraction(0))
        ray_ok = all(aty[f] <= 0 for f in range(m) if f != j) and cy > 0
        if ray_ok:
            out[e] = LPVerdict(e, float(res.fun), True, tuple(yi), None, 0.0)
            continue
        # The optimal point itself, with s_e set to 0, usually certifies "not forced"; otherwise solve the
        # feasibility LP with s_e fixed to 0 and check its point.
        for attempt in range(2):
            if attempt == 0:
                x = res.x
            else:
                bounds = [(0.0, None)] * m
                bounds[j] = (0.0, 0.0)
                feas = _linprog(np.zeros(m), B, cv, bounds)
                x = feas.x if feas.status == 0 else None
            if x is None:
                continue
            s = np.clip(np.asarray(x, np.float64), 0.0, None)
            s[j] = 0.0
            resid = float(np.max(np.abs(B @ s - cv)))
            if resid <= rtol * scale:
                break
        else:
            s = None
        if s is not None:
            out[e] = LPVerdict(e, float(res.fun), False, None, s, resid)
            continue
        raise RuntimeError(f"LP verdict on edge {e!r} not certified (min s_e = {res.fun:.3g}): neither "
                           "an integral Farkas ray nor a feasible point with s_e = 0 verifies")
    return out


def forced_edges_lp(G, c) -> set:
    """The forced edges by one certified HiGHS LP per edge (:func:`edge_lp_minima`)."""
    return {e for e, v in edge_lp_minima(G, c).items() if v.forced}


def sample_point(G, c, signs=None, rng=None, n_vertices: int = 3) -> np.ndarray:
    """A point ``theta`` of ``H_G(c)`` (vector ``[|E|]``), ``theta = signs * sqrt(s)`` with ``s`` a random
    convex combination of ``n_vertices`` vertices of ``P(c)`` (LPs with random costs) and the exact
    :func:`feasible_point`.

    Args:
      signs: ``[|E|]`` array of +-1 (default all +1); rng: ``np.random.Generator``.
    """
    info = structure(G)
    rng = rng if rng is not None else np.random.default_rng(0)
    cv = c_vector(G, c, info)
    m = len(info.edges)
    fp = feasible_point(G, c)
    pts = [np.array([float(fp[e]) for e in info.edges])]
    if info.hidden:
        for _ in range(n_vertices):
            res = _linprog(rng.uniform(0.1, 1.0, m), info.B.astype(float), cv, [(0.0, None)] * m)
            if res.status == 0:
                pts.append(np.clip(res.x, 0.0, None))
    wts = rng.dirichlet(np.ones(len(pts)))
    s = sum(w * p for w, p in zip(wts, pts))
    # Edges on no hidden node are unconstrained; give them a random magnitude.
    free = ~np.any(info.B != 0, axis=0)
    s = np.where(free, rng.uniform(0.1, 1.0, m), s)
    sg = np.ones(m) if signs is None else np.asarray(signs, np.float64)
    return sg * np.sqrt(s)


def connect(G, c, theta0, theta1, forced=None, zero_points=None, n_per_leg: int = 16):
    """The explicit path of the structure lemma between two points of ``H_G(c)`` (brief section 5).

    Interpolates linearly in ``s = theta^2`` (inside the convex ``P(c)``) to a point of ``P(c)`` with
    ``s_e = 0`` for one edge ``e`` whose sign differs, flips that sign there, repeats, and ends at
    ``theta1``. It exists iff the two points agree in sign on every forced edge.

    Args:
      theta0, theta1: vectors ``[|E|]`` in ``H_G(c)``; forced: the forced edge set (computed if None);
      zero_points: optional cache dict edge -> point of ``P(c)`` with ``s_e = 0``.
    Returns:
      ``[K, |E|]`` array of points along the path, or ``None`` when a forced edge changes sign (no path
      exists: ``|theta_e| >= sqrt(min_P s_e) > 0`` on all of ``H_G(c)``).
    """
    info = structure(G)
    forced = forced_edges(G, c) if forced is None else forced
    t0, t1 = np.asarray(theta0, np.float64), np.asarray(theta1, np.float64)
    sg0, sg1 = np.sign(t0), np.sign(t1)
    differ = [j for j in range(len(info.edges)) if sg0[j] * sg1[j] < 0]
    if any(info.edges[j] in forced for j in differ):
        return None
    eps = np.where(sg0 != 0, sg0, np.where(sg1 != 0, sg1, 1.0))
    s = t0**2
    legs = []
    lam = np.linspace(0.0, 1.0, n_per_leg)[:, None]
    zero_points = {} if zero_points is None else zero_points
    for j in differ:
        e = info.edges[j]
        if e not in zero_points:
            zero_points[e] = edge_lp_minima(G, c, edges=[e])[e].point
            if zero_points[e] is None:
                raise RuntimeError(f"edge {e!r} is not forced but has no certified zero point")
        p = zero_points[e].copy()
        legs.append(eps * np.sqrt((1 - lam) * s + lam * p))
        eps = eps.copy()
        eps[j] = -eps[j]
        s = p
    final = np.where(sg1 != 0, sg1, eps)
    legs.append(np.where(lam < 1, eps, final) * np.sqrt((1 - lam) * s + lam * t1**2))
    return np.concatenate(legs, axis=0)


# ---------------------------------------------------------------------------------------------------
# Jacobian rank and singular points (theorem on singular points)
# ---------------------------------------------------------------------------------------------------


def support_components(G, theta) -> list[frozenset]:
    """Components of the support graph ``(V, {e : theta_e != 0})`` (weak connectivity) that contain no
    input or output node, each as a frozenset of hidden nodes; isolated hidden nodes count. These are the
    cut-off sub-networks; ``kappa(theta) = len(...)``.

    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`theta_vector`.
    """
    info = structure(G)
    vec = theta_vector(G, theta, info)
    U = nx.Graph()
    U.add_nodes_from(G.nodes)
    U.add_edges_from(e for e, x in zip(info.edges, vec) if x != 0.0)
    terminals = set(info.inputs) | set(info.outputs)
    return [frozenset(C) for C in nx.connected_components(U) if not (C & terminals)]


def jacobian(G, theta) -> np.ndarray:
    """``D(theta -> B~ theta^2) = 2 B~ diag(theta)``, shape ``[|V_hid|, |E|]``."""
    info = structure(G)
    return 2.0 * info.B * theta_vector(G, theta, info)[None, :]


def jacobian_rank(G, theta) -> int:
    """Rank of the Jacobian ``2 B~ diag(theta)`` of ``theta -> B~ theta^2``: ``|V_hid| - kappa(theta)``,
    ``kappa`` = number of support components touching no input or output (theorem on singular points;
    brief 2.4). Exact: combinatorial, any non-zero weight counts as non-zero (tests confirm it against
    an exact integer rank and a singular-value gap).

    Args:
      G: the network DAG; theta: dict edge -> real weight.
    Returns:
      int in ``[0, |V_hid|]``.
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`theta_vector`.
    """
    info = structure(G)
    return len(info.hidden) - len(support_components(G, theta))


def is_singular(G, theta) -> bool:
    """True iff ``theta`` is a singular point of ``H_G(balance(G, theta))``, i.e. the Jacobian rank is below
    ``|V_hid|`` (some sub-network is cut off from every input and output). Raises as
    :func:`jacobian_rank`."""
    return jacobian_rank(G, theta) < len(structure(G).hidden)


def exact_jacobian_rank(G, theta) -> int:
    """Rank of ``B~ diag(theta)`` over the rationals (python-flint ``fmpz_mat``), for cross-checks."""
    import flint

    info = structure(G)
    vec = theta_vector(G, theta, info)
    cols = [j for j, x in enumerate(vec) if x != 0.0]
    if not info.hidden or not cols:
        return 0
    M = info.B[:, cols]
    return int(flint.fmpz_mat([[int(x) for x in row] for row in M]).rank())


def numerical_rank(G, theta, gap: float = 1e6) -> tuple[int, np.ndarray]:
    """Rank of ``2 B~ diag(theta)`` read from the largest relative gap in its singular values.

    Returns ``(rank, singular values)``; the rank is the index of the first singular value more than
    ``gap`` times smaller than its predecessor (or below ``1e-300``); full rank when there is none.
    """
    sv = np.linalg.svd(jacobian(G, theta), compute_uv=False) if structure(G).hidden else np.zeros(0)
    for k in range(len(sv)):
        if sv[k] < 1e-300 or (k > 0 and sv[k] * gap < sv[k - 1]):
            return k, sv
    return len(sv), sv


def singular_subnetworks(G, c, max_hidden: int = 20) -> list[frozenset]:
    """Hidden sets ``C`` that can be cut off inside ``H_G(c)``: ``c(C) = 0`` exactly and the LP
    ``{B~ s = c, s >= 0, s_e = 0 on every edge between C and the rest}`` is feasible (certified point).
    ``Sing(H_G(c))`` is non-empty iff this list is (brief 2.4, Existence). Only subsets with an exact zero
    sum are tested by LP.

    Raises:
      ValueError: more than ``max_hidden`` hidden nodes (the search is over subsets).
    """
    info = structure(G)
    n = len(info.hidden)
    if n > max_hidden:
        raise ValueError(f"{n} hidden nodes > max_hidden={max_hidden}")
    cex = _c_exact(info, c)
    cint = np.array(_integer_weights(cex), dtype=object)
    cf = np.array([float(q) for q in cex])
    if n == 0:
        return []
    masks = np.arange(1, 2**n, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)) & 1).astype(np.float64)
    sums = bits @ cf
    near = masks[np.abs(sums) <= 1e-9 * (1 + np.abs(cf).sum())]
    out = []
    B = info.B.astype(float)
    m = len(info.edges)
    for mask in near:
        C = [info.hidden[i] for i in range(n) if (mask >> i) & 1]
        if sum(cint[i] for i in range(n) if (mask >> i) & 1) != 0:
            continue
        Cs = set(C)
        bounds = [(0.0, 0.0) if ((u in Cs) != (v in Cs)) else (0.0, None) for (u, v) in info.edges]
        res = _linprog(np.zeros(m), B, cf, bounds)
        if res.status == 0:
            s = np.clip(res.x, 0.0, None)
            if np.max(np.abs(B @ s - cf), initial=0.0) <= 1e-9 * max(1.0, np.abs(cf).max()):
                out.append(frozenset(C))
    return out


def has_singular_points_bruteforce(G, c, max_edges: int = 12) -> bool:
    """Independent check of :func:`singular_subnetworks`: enumerate every set ``Z`` of edges forced to 0
    whose removal leaves a component touching no input or output, and test ``{s in P(c), s_Z = 0}`` by LP
    (certified point). True iff some ``Z`` passes, i.e. ``Sing(H_G(c))`` is non-empty.

    Raises:
      ValueError: more than ``max_edges`` edges (``2^|E|`` sets).
    """
    info = structure(G)
    m = len(info.edges)
    if m > max_edges:
        raise ValueError(f"{m} edges > max_edges={max_edges}")
    cf = c_vector(G, c, info)
    if not info.hidden:
        return False
    B = info.B.astype(float)
    terminals = set(info.inputs) | set(info.outputs)
    for mask in range(2**m):
        Z = {j for j in range(m) if (mask >> j) & 1}
        U = nx.Graph()
        U.add_nodes_from(G.nodes)
        U.add_edges_from(e for j, e in enumerate(info.edges) if j not in Z)
        if all(C & terminals for C in nx.connected_components(U)):
            continue
        res = _linprog(np.zeros(m), B, cf, [(0.0, 0.0) if j in Z else (0.0, None) for j in range(m)])
        if res.status == 0 and np.max(np.abs(B @ np.clip(res.x, 0, None) - cf)) <= 1e-9 * max(
                1.0, np.abs(cf).max()):
            return True
    return False


def prune(G, theta) -> tuple[nx.DiGraph, dict]:
    """Remove every cut-off sub-network (support components with no input or output, with all their
    edges). Returns ``(G', theta')``; the network function is unchanged (the removed edges carry 0)."""
    comps = support_components(G, theta)
    drop = set().union(*comps) if comps else set()
    H = G.copy()
    H.remove_nodes_from(drop)
    return H, {e: theta[e] for e in H.edges}


# ---------------------------------------------------------------------------------------------------
# The network function, training dynamics
# ---------------------------------------------------------------------------------------------------


def forward_fn(G, slope: float = 0.0) -> Callable:
    """The network function ``f(theta, X)`` of ``G`` (JAX-traceable).

    Nodes are evaluated level by level (a level = nodes with the same longest distance from the inputs),
    one dense product per level.

    Args:
      G: the network DAG; slope: leaky-ReLU slope gamma (0 = ReLU) on hidden nodes; outputs are linear.
    Returns:
      ``f(theta [|E|], X [n, |V_in|]) -> [n, |V_out|]``, columns of ``X`` in input-node order.
    """
    info = structure(G)
    nodes = list(info.inputs) + [v for v in info.topo if v not in set(info.inputs)]
    pos = {v: i for i, v in enumerate(nodes)}
    depth = {}
    for v in info.topo:
        depth[v] = 1 + max((depth[u] for u in G.predecessors(v)), default=-1)
    hidden = set(info.hidden)
    plan = []
    for lev in range(1, max(depth.values()) + 1):
        lv = [v for v in nodes if depth[v] == lev]
        col = {v: k for k, v in enumerate(lv)}
        es = [(j, pos[u], col[v]) for j, (u, v) in enumerate(info.edges) if v in col]
        plan.append((np.array([pos[v] for v in lv]), np.array([e[0] for e in es]),
                     np.array([e[1] for e in es]), np.array([e[2] for e in es]),
                     np.array([v in hidden for v in lv]), len(lv)))
    n_in, N = len(info.inputs), len(nodes)
    out_idx = np.array([pos[w] for w in info.outputs])

    def f(theta, X):
        act = jnp.zeros((X.shape[0], N), jnp.result_type(theta, X)).at[:, :n_in].set(X)
        for nidx, eidx, src, dst, is_hid, width in plan:
            M = jnp.zeros((N, width), act.dtype).at[src, dst].add(theta[eidx])
            z = act @ M
            act = act.at[:, nidx].set(jnp.where(is_hid & (z <= 0), slope * z, z))
        return act[:, out_idx]

    return f


def forward_sequential(G, theta, X, slope: float = 0.0) -> np.ndarray:
    """Reference numpy forward pass summing each node's inputs one edge at a time in ``G.in_edges`` order
    (used to compare networks bit for bit). ``theta``: dict edge -> float; ``X``: ``[n, |V_in|]``."""
    info = structure(G)
    X = np.asarray(X, np.float64)
    act = {v: X[:, i] for i, v in enumerate(info.inputs)}
    hidden = set(info.hidden)
    for v in info.topo:
        if v in act:
            continue
        z = np.zeros(X.shape[0])
        for (u, _) in G.in_edges(v):
            z = z + theta[(u, v)] * act[u]
        act[v] = np.where(z > 0, z, slope * z) if v in hidden else z
    return np.stack([act[w] for w in info.outputs], axis=1)


def rk4(field: Callable, y0, h: float, n_steps: int, save_every: int = 1):
    """Classical RK4 for ``y' = field(y)`` with step ``h`` (``lax.scan``). Returns ``[n_steps // save_every
    + 1, ...]`` states, the first being ``y0``."""
    def step(y, _):
        k1 = field(y)
        k2 = field(y + 0.5 * h * k1)
        k3 = field(y + 0.5 * h * k2)
        k4 = field(y + h * k3)
        return y + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4), None

    def block(y, _):
        y, _ = jax.lax.scan(step, y, None, length=save_every)
        return y, y

    _, ys = jax.lax.scan(block, y0, None, length=n_steps // save_every)
    return jnp.concatenate([y0[None], ys], axis=0)


# ---------------------------------------------------------------------------------------------------
# Graph families
# ---------------------------------------------------------------------------------------------------


def layered_graph(widths) -> nx.DiGraph:
    """Fully connected layered network with ``widths = (n_0, ..., n_L)``; nodes ``(layer, index)``."""
    widths = [int(w) for w in widths]
    if len(widths) < 2 or min(widths) < 1:
        raise ValueError(f"widths must have >= 2 layers of width >= 1, got {widths}")
    G = nx.DiGraph()
    for l, w in enumerate(widths):
        G.add_nodes_from((l, i) for i in range(w))
    for l in range(len(widths) - 1):
        G.add_edges_from(((l, i), (l + 1, j)) for i in range(widths[l]) for j in range(widths[l + 1]))
    return G


def dl1_graph(d: int, l: int) -> nx.DiGraph:
    """The two-layer ``d``-``l``-1 network (no biases): inputs ``(0, i)``, hidden ``(1, k)``, output
    ``(2, 0)``. ``tuple(G.edges)`` lists the in-weights input-major (``W[k, i]`` at index ``i * l + k``),
    then the out-weights ``a_k``; :func:`dl1_theta` builds that vector."""
    G = nx.DiGraph()
    G.add_nodes_from([(0, i) for i in range(d)] + [(1, k) for k in range(l)] + [(2, 0)])
    G.add_edges_from(((0, i), (1, k)) for k in range(l) for i in range(d))
    G.add_edges_from(((1, k), (2, 0)) for k in range(l))
    return G


def dl1_theta(W, a):
    """The parameter vector ``[d*l + l]`` of :func:`dl1_graph` from ``W [l, d]`` (row k = in-weights of
    hidden k) and ``a [l]`` (out-weights). JAX-traceable."""
    return jnp.concatenate([jnp.asarray(W).T.reshape(-1), jnp.asarray(a)])


def chain_graph(n_hidden: int = 2, skip: bool = False) -> nx.DiGraph:
    """``x -> h1 -> ... -> hn -> y`` (plus the skip ``x -> y`` if asked)."""
    nodes = ["x"] + [f"h{i + 1}" for i in range(n_hidden)] + ["y"]
    G = nx.DiGraph(list(zip(nodes[:-1], nodes[1:])))
    if skip:
        G.add_edge("x", "y")
    return G


def random_dag(rng: np.random.Generator, n_in: int, n_hid: int, n_out: int, p: float = 0.3) -> nx.DiGraph:
    """A random network DAG: nodes ``x0..``, ``h0..`` (topologically ordered), ``y0..``; each allowed edge
    (input->hidden/output, hidden->later hidden/output) appears with probability ``p``; missing in- or
    out-edges are added at random so that every node has its role."""
    xs = [f"x{i}" for i in range(n_in)]
    hs = [f"h{i}" for i in range(n_hid)]
    ys = [f"y{i}" for i in range(n_out)]
    G = nx.DiGraph()
    G.add_nodes_from(xs + hs + ys)
    order = xs + hs
    for j, v in enumerate(hs + ys):
        for u in (xs + hs[:j] if v in hs else order):
            if rng.random() < p:
                G.add_edge(u, v)
    for j, v in enumerate(hs + ys):
        if G.in_degree(v) == 0:
            pool = xs + hs[:j] if v in hs else order
            G.add_edge(pool[rng.integers(len(pool))], v)
    for j, u in enumerate(xs + hs):
        if G.out_degree(u) == 0:
            pool = (hs + ys) if u in xs else hs[hs.index(u) + 1:] + ys
            G.add_edge(u, pool[rng.integers(len(pool))])
    return G


# ---------------------------------------------------------------------------------------------------
# Initialisation obstruction for d-l-1 networks
# ---------------------------------------------------------------------------------------------------


def init_stds(d: int, l: int, init: str) -> tuple[float, float]:
    """Standard deviations ``(sigma_in, sigma_out)`` of the two weight layers of a d-l-1 network.

    ``kaiming``: He-normal, ``sqrt(2 / fan_in)`` (ReLU gain), i.e. ``sqrt(2/d)`` and ``sqrt(2/l)``;
    ``xavier``: Glorot-normal, ``sqrt(2 / (fan_in + fan_out))``, i.e. ``sqrt(2/(d+l))`` and
    ``sqrt(2/(l+1))``.
    """
    if init == "kaiming":
        return math.sqrt(2.0 / d), math.sqrt(2.0 / l)
    if init == "xavier":
        return math.sqrt(2.0 / (d + l)), math.sqrt(2.0 / (l + 1))
    raise ValueError(f"init must be 'kaiming' or 'xavier', got {init!r}")


def disconnection_probability(d: int, l: int, init: str) -> float:
    """Probability that a Gaussian-initialised d-l-1 network (d >= 2) has a disconnected ``H``, i.e. some
    ``c_k = |w_k|^2 - a_k^2 < 0`` (NeurIPS 2024 theorem, brief 2.3). With ``|w_k|^2 = s_in^2 chi2_d`` and
    ``a_k^2 = s_out^2 chi2_1``, ``P(c_k >= 0) = P(F_{d,1} >= s_out^2 / (d s_in^2))`` and the answer is
    ``1 - P(c_k >= 0)^l``.

    Raises:
      ValueError: ``d < 2`` or ``l < 1`` or an unknown init.
    """
    from scipy import stats

    if d < 2 or l < 1:
        raise ValueError(f"need d >= 2 and l >= 1, got d={d}, l={l}")
    s_in, s_out = init_stds(d, l, init)
    p_ok = float(stats.f.sf(s_out**2 / (d * s_in**2), d, 1))
    return float(-np.expm1(l * np.log(p_ok)))


def sample_disconnected(key, d: int, l: int, init: str) -> jax.Array:
    """One Monte Carlo draw (JAX): 1.0 if a fresh init of the d-l-1 network has some ``c_k < 0``."""
    s_in, s_out = init_stds(d, l, init)
    kw, ka = jax.random.split(key)
    W = s_in * jax.random.normal(kw, (l, d))
    a = s_out * jax.random.normal(ka, (l,))
    return jnp.any(jnp.sum(W**2, axis=1) - a**2 < 0).astype(jnp.result_type(float))


# ---------------------------------------------------------------------------------------------------
# Worked examples (brief section 3), used by the claims and the tests
# ---------------------------------------------------------------------------------------------------


def _g(edges):
    return nx.DiGraph(edges)


def worked_examples() -> list[tuple[str, nx.DiGraph, dict, set]]:
    """The brief's table of forced edges: ``(name, G, c, forced edges)``."""
    one = _g([("x", "h"), ("h", "y")])
    one_skip = _g([("x", "h"), ("h", "y"), ("x", "y")])
    two_one = _g([("x1", "h"), ("x2", "h"), ("h", "y")])
    two_one_two = _g([("x1", "h"), ("x2", "h"), ("h", "y1"), ("h", "y2")])
    one_two = _g([("x", "h1"), ("x", "h2"), ("h1", "y"), ("h2", "y")])
    fc221 = _g([(f"x{i}", f"h{k}") for k in (1, 2) for i in (1, 2)] + [("h1", "y"), ("h2", "y")])
    fc222 = _g([(f"x{i}", f"h{k}") for k in (1, 2) for i in (1, 2)]
               + [(f"h{k}", f"y{j}") for k in (1, 2) for j in (1, 2)])
    ch = chain_graph(2)
    X = []
    for G, name in ((one, "1-1-1"), (one_skip, "1-1-1+skip")):
        X += [(name, G, {"h": 1}, {("x", "h")}), (name, G, {"h": -1}, {("h", "y")}),
              (name, G, {"h": 0}, set())]
    X += [("2-1-1", two_one, {"h": 1}, set()), ("2-1-1", two_one, {"h": -1}, {("h", "y")}),
          ("2-1-1", two_one, {"h": 0}, set())]
    X += [("2-1-2", two_one_two, {"h": v}, set()) for v in (1, -1, 0, 3.5)]
    X += [("1-2-1", one_two, {"h1": 1, "h2": 1}, {("x", "h1"), ("x", "h2")}),
          ("1-2-1", one_two, {"h1": 1, "h2": -1}, {("x", "h1"), ("h2", "y")}),
          ("1-2-1", one_two, {"h1": -1, "h2": 0}, {("h1", "y")}),
          ("1-2-1", one_two, {"h1": 0, "h2": 0}, set())]
    X += [("2-2-1", fc221, {"h1": 1, "h2": 1}, set()),
          ("2-2-1", fc221, {"h1": 1, "h2": -1}, {("h2", "y")}),
          ("2-2-1", fc221, {"h1": -1, "h2": -1}, {("h1", "y"), ("h2", "y")}),
          ("2-2-1", fc221, {"h1": -1, "h2": 0}, {("h1", "y")})]
    X += [("2-2-2", fc222, {"h1": a, "h2": b}, set()) for a, b in ((1, 1), (-1, -1), (5, -7))]
    chain_counts = {(1, 1): 4, (1, -1): 4, (-1, 1): 2, (0, 0): 1, (1, 0): 2, (-2, 1): 4, (0, 1): 4,
                    (-1, -1): 4}
    e1, e2, e3 = ("x", "h1"), ("h1", "h2"), ("h2", "y")
    chain_forced = {(1, 1): {e1, e2}, (1, -1): {e1, e3}, (-1, 1): {e2}, (0, 0): set(), (1, 0): {e1},
                    (-2, 1): {e2, e3}, (0, 1): {e1, e2}, (-1, -1): {e2, e3}}
    for cc, fe in chain_forced.items():
        assert 2 ** len(fe) == chain_counts[cc]
        X.append(("chain", ch, {"h1": cc[0], "h2": cc[1]}, fe))
    return X


# ---------------------------------------------------------------------------------------------------
# Losses, regularisers and training steps (shared by the claims and sims/relu_dag.py)
# ---------------------------------------------------------------------------------------------------

REGULARISERS = ("none", "l2", "l1", "prox_l1", "nuclear")


def loss_fn(name: str) -> Callable:
    """``loss(pred [n, k], Y [n, k]) -> scalar``: ``mse`` (half mean squared error), ``bce`` (logistic loss
    on logits, targets in {0, 1}), ``softmax`` (cross-entropy, one-hot targets), ``huber``."""
    import optax

    if name == "mse":
        return lambda p, y: 0.5 * jnp.mean(jnp.sum((p - y) ** 2, axis=-1))
    if name == "bce":
        return lambda p, y: jnp.mean(optax.sigmoid_binary_cross_entropy(p, y))
    if name == "softmax":
        return lambda p, y: jnp.mean(optax.softmax_cross_entropy(p, y))
    if name == "huber":
        return lambda p, y: jnp.mean(optax.huber_loss(p, y, delta=0.5))
    raise ValueError(f"unknown loss {name!r}")


def regulariser_step(name: str, B: np.ndarray, lr: float, lam: float) -> Callable:
    """``step(theta, g) -> theta'``: one gradient step of size ``lr`` on ``L + lam * R(theta)``.

    ``none``: plain GD; ``l2``: weight decay ``R = |theta|^2 / 2``; ``l1``: subgradient of ``|theta|_1``;
    ``prox_l1``: GD then soft-thresholding by ``lr * lam`` (reaches exact zeros); ``nuclear``: subgradient
    of ``|B~ diag(theta)|_*``, the nuclear-norm surrogate of the rank drop ``kappa`` (brief 2.6).
    """
    Bf = jnp.asarray(B, jnp.result_type(float))
    if name == "none":
        return lambda t, g: t - lr * g
    if name == "l2":
        return lambda t, g: t - lr * (g + lam * t)
    if name == "l1":
        return lambda t, g: t - lr * (g + lam * jnp.sign(t))
    if name == "prox_l1":
        def prox(t, g):
            u = t - lr * g
            return jnp.sign(u) * jnp.maximum(jnp.abs(u) - lr * lam, 0.0)
        return prox
    if name == "nuclear":
        nuc = jax.grad(lambda t: jnp.sum(jnp.linalg.svd(Bf * t[None, :], compute_uv=False)))
        return lambda t, g: t - lr * (g + lam * nuc(t))
    raise ValueError(f"unknown regulariser {name!r}; known: {REGULARISERS}")


def symbolic_conservation(G, active) -> list:
    """``B~(theta * grad L)`` computed symbolically (sympy) on one activation pattern: hidden nodes in
    ``active`` are the identity, the others output 0; ``L = sum_o (f_o - y_o)^2 / 2`` for symbolic inputs
    ``x`` and targets ``y``. Returns the expanded entries (all 0 when the conservation law holds)."""
    import sympy as sp

    info = structure(G)
    th = {e: sp.Symbol(f"t{j}") for j, e in enumerate(info.edges)}
    act = {v: sp.Symbol(f"x{i}") for i, v in enumerate(info.inputs)}
    for v in info.topo:
        if v in act:
            continue
        z = sum((th[(u, v)] * act[u] for u, _ in G.in_edges(v)), sp.Integer(0))
        act[v] = z if (v in info.outputs or v in active) else sp.Integer(0)
    L = sum(((act[w] - sp.Symbol(f"y{i}")) ** 2 / 2 for i, w in enumerate(info.outputs)), sp.Integer(0))
    out = []
    for v in info.hidden:
        r = sum((th[e] * sp.diff(L, th[e]) for e in G.in_edges(v)), sp.Integer(0)) - sum(
            (th[e] * sp.diff(L, th[e]) for e in G.out_edges(v)), sp.Integer(0))
        out.append(sp.expand(r))
    return out


# ---------------------------------------------------------------------------------------------------
# Claims
# ---------------------------------------------------------------------------------------------------

_SRC = "Nurisso et al. ICLR 2026 (arXiv 2602.00693)"


def _rand_problem(seed: int, n_in: int, n_hid: int, n_out: int, p: float, n_data: int = 24):
    """A random DAG with random weights, inputs and targets (fixed seeds)."""
    rng = np.random.default_rng(seed)
    G = random_dag(rng, n_in, n_hid, n_out, p)
    info = structure(G)
    kt, kx, ky = jax.random.split(jax.random.key(seed), 3)
    theta = jax.random.normal(kt, (len(info.edges),))
    X = jax.random.normal(kx, (n_data, len(info.inputs)))
    Y = jax.random.normal(ky, (n_data, len(info.outputs)))
    return G, info, theta, X, Y


@ledger.claim(
    "relu_dag.conservation", source=f"{_SRC}, conservation law <<theta, grad L>>_v = 0 (Def. 1); "
    "Du, Hu & Lee 2018",
    statement="B~(theta * grad L) = 0 for any loss, data and theta, so c is constant along gradient flow; "
              "one GD step changes c by exactly eta^2 B~(g*g), with weight decay c -> (1-eta*lam)^2 c + "
              "eta^2 B~ g^2.")
def _claim_conservation() -> ledger.Evidence:
    worst_rel, n_cases = 0.0, 0
    combos = [(0.0, "mse"), (0.0, "bce"), (0.1, "softmax"), (0.1, "huber")]
    for seed, (slope, name) in enumerate(combos):
        G, info, theta, X, Y = _rand_problem(seed, 3, 3 + seed % 7, 2, 0.35)
        Yn = {"bce": (Y > 0).astype(float), "softmax": jax.nn.one_hot(jnp.argmax(Y, 1), Y.shape[1])}.get(
            name, Y)
        f, lf = forward_fn(G, slope), loss_fn(name)
        g = np.asarray(jax.jit(jax.grad(lambda t: lf(f(t, X), Yn)))(theta))
        tg = np.asarray(theta) * g
        r = np.abs(info.B @ tg) / (np.abs(info.B) @ np.abs(tg) + 1e-300)
        worst_rel = max(worst_rel, float(r.max()))
        n_cases += 1
    # Gradient flow (RK4, h = 5e-4, t in [0, 2]) on one random DAG.
    G, info, theta, X, Y = _rand_problem(11, 3, 6, 2, 0.4)
    f, lf = forward_fn(G), loss_fn("mse")
    field = jax.jit(lambda t: -jax.grad(lambda u: lf(f(u, X), Y))(t))
    ys = jax.jit(lambda y: rk4(field, y, 5e-4, 4000, 100))(0.5 * theta)
    cs = np.asarray(balance_array(info.B, ys))
    flow_drift = float(np.max(np.abs(cs - cs[0])))
    # One GD step, with and without weight decay: the exact identity.
    gd_err = 0.0
    grad = jax.jit(jax.grad(lambda u: lf(f(u, X), Y)))
    for lr, lam in ((0.1, 0.0), (0.01, 0.0), (0.1, 0.3), (0.05, 1.0)):
        g = grad(theta)
        new = (1 - lr * lam) * theta - lr * g
        c0, c1 = np.asarray(balance_array(info.B, theta)), np.asarray(balance_array(info.B, new))
        pred = (1 - lr * lam) ** 2 * c0 + lr**2 * np.asarray(balance_array(info.B, g))
        gd_err = max(gd_err, float(np.max(np.abs(c1 - pred)) / (1 + np.max(np.abs(c0)))))
    # Exact: sympy on every activation pattern of small DAGs.
    rng = np.random.default_rng(12)
    n_sym, n_zero = 0, 0
    for _ in range(3):
        Gs = random_dag(rng, 2, 3, 1, 0.5)
        hid = structure(Gs).hidden
        for r in range(len(hid) + 1):
            for act in itertools.combinations(hid, r):
                n_sym += 1
                n_zero += all(x == 0 for x in symbolic_conservation(Gs, set(act)))
    ok = worst_rel < 1e-12 and flow_drift < 1e-10 and gd_err < 1e-12 and n_zero == n_sym
    return ledger.Evidence(
        measured={"max_rel_B_theta_grad": worst_rel, "flow_drift_rk4": flow_drift, "gd_identity_err": gd_err,
                  "symbolic_patterns_zero": n_zero},
        predicted={"max_rel_B_theta_grad": 0.0, "flow_drift_rk4": 0.0, "gd_identity_err": 0.0,
                   "symbolic_patterns_zero": n_sym},
        tolerance="B~(theta*g) rel < 1e-12; RK4 drift < 1e-10; GD identity rel < 1e-12 (float64)",
        verdict=ledger.verdict(ok),
        notes=f"{n_cases} random DAGs: ReLU with mse, bce; leaky ReLU (0.1) with softmax, huber; flow on "
              "a random DAG with 6 hidden nodes, h=5e-4, t<=2; GD with lr in {0.01..0.1}, weight decay in "
              "{0,0.3,1}; sympy: every activation pattern of 3 random DAGs (2 in, 3 hidden, 1 out), MSE, "
              "symbolic data.")


@ledger.claim(
    "relu_dag.feasible", source=f"{_SRC}, Proposition 3 (Appendix A.3, network flows)",
    statement="H_G(c) is non-empty for every DAG and every c.")
def _claim_feasible() -> ledger.Evidence:
    rng = np.random.default_rng(2)
    n_exact, worst = 0, 0.0
    n = 300
    for i in range(n):
        G = random_dag(rng, int(rng.integers(1, 4)), int(rng.integers(1, 15)), int(rng.integers(1, 3)),
                       float(rng.uniform(0.1, 0.6)))
        info = structure(G)
        if i % 2:
            c = {v: float(rng.normal(scale=3)) for v in info.hidden}
        else:
            c = {v: Fraction(int(rng.integers(-5, 6)), int(rng.integers(1, 4))) for v in info.hidden}
        s = feasible_point(G, c)
        cex = _c_exact(info, c)
        exact = all(x >= 0 for x in s.values()) and all(
            sum((s[e] for e in G.in_edges(v)), Fraction(0)) - sum((s[e] for e in G.out_edges(v)),
                                                                  Fraction(0)) == cv
            for v, cv in zip(info.hidden, cex))
        n_exact += exact
        th = {e: math.sqrt(x) for e, x in s.items()}
        b = balance(G, th)
        worst = max(worst, max((abs(b[v] - float(q)) / (1 + abs(float(q))) for v, q in zip(info.hidden, cex)),
                               default=0.0))
    return ledger.Evidence(
        measured={"certified_exactly": n_exact, "cases": n, "float_balance_rel_err": worst},
        predicted={"certified_exactly": n, "cases": n, "float_balance_rel_err": 0.0},
        tolerance="every certificate exact in rational arithmetic; theta=sqrt(s) balance rel err < 1e-13",
        verdict=ledger.verdict(n_exact == n and worst < 1e-13),
        notes="certificate: s routes c_v along an input->v path (c_v>0) or a v->output path (c_v<0); "
              "B~s = c checked with Fractions; random DAGs with 1-14 hidden nodes, float and rational c.")


def _orthant_test(G, c, rng) -> tuple[int, int, int, float]:
    """Sample a point in every sign orthant of R^E, join pairs by :func:`connect`. Returns
    ``(#classes, #pairs joined wrongly, #pairs not joined wrongly, max path residual)``."""
    info = structure(G)
    forced = forced_edges(G, c)
    cv = c_vector(G, c, info)
    m = len(info.edges)
    fj = [j for j, e in enumerate(info.edges) if e in forced]
    pts = [sample_point(G, c, np.array(sg), rng) for sg in itertools.product([1.0, -1.0], repeat=m)]
    cache: dict = {}
    uf = nx.utils.UnionFind(range(len(pts)))
    wrong_join, wrong_split, resid = 0, 0, 0.0
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            path = connect(G, c, pts[i], pts[j], forced, cache, n_per_leg=8)
            same = all(np.sign(pts[i][k]) == np.sign(pts[j][k]) for k in fj)
            if path is not None:
                r = float(np.max(np.abs(path**2 @ info.B.T - cv), initial=0.0))
                ends = np.allclose(path[0], pts[i], atol=1e-9) and np.allclose(path[-1], pts[j], atol=1e-9)
                resid = max(resid, r)
                joined = ends and r < 1e-8
            else:
                joined = False
            if joined:
                uf.union(i, j)
            wrong_join += joined and not same
            wrong_split += same and not joined
    n_classes = len({uf[i] for i in range(len(pts))})
    return n_classes, wrong_join, wrong_split, resid


@ledger.claim(
    "relu_dag.components", source=f"{_SRC}, Theorem 1 (bottlenecks), made exact in the brief (2.2-2.3)",
    statement="H_G(c) has exactly 2^(number of forced edges) connected components; forced edges (min over "
              "P(c) of s_e > 0) are exactly the bottleneck edges passing the closure criterion.")
def _claim_components() -> ledger.Evidence:
    import time

    table_ok = 0
    ex = worked_examples()
    for _, G, c, fe in ex:
        table_ok += forced_edges(G, c) == forced_edges_lp(G, c) == forced_edges_bruteforce(G, c) == fe
    rng = np.random.default_rng(3)
    n_rand, agree = 80, 0
    for i in range(n_rand):
        G = random_dag(rng, int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(1, 3)),
                       float(rng.uniform(0.1, 0.5)))
        info = structure(G)
        c = ({v: float(rng.normal()) for v in info.hidden} if i % 2 else
             {v: int(rng.integers(-2, 3)) for v in info.hidden})
        agree += forced_edges(G, c) == forced_edges_lp(G, c) == forced_edges_bruteforce(G, c)
    # Independent count: a point in every sign orthant, joined by the explicit path construction.
    cases = [(chain_graph(2), {"h1": 0, "h2": 1}), (chain_graph(2), {"h1": -1, "h2": 1}),
             (chain_graph(2, skip=True), {"h1": 0, "h2": 1}), (chain_graph(2), {"h1": 0, "h2": 0})]
    ex221 = [x for x in ex if x[0] == "2-1-1" or x[0] == "1-2-1"]
    cases += [(G, c) for _, G, c, _ in ex221[:5]]
    orth_classes, orth_pred, wj, ws, resid = [], [], 0, 0, 0.0
    for G, c in cases:
        k, a, b, r = _orthant_test(G, c, rng)
        orth_classes.append(k)
        orth_pred.append(count_components(G, c))
        wj, ws, resid = wj + a, ws + b, max(resid, r)
    # Speed at 20 hidden nodes.
    tmax = 0.0
    for i in range(10):
        G = random_dag(rng, 3, 20, 2, float(rng.uniform(0.08, 0.3)))
        c = {v: float(rng.normal()) for v in structure(G).hidden}
        t0 = time.perf_counter()
        count_components(G, c)
        tmax = max(tmax, time.perf_counter() - t0)
    ok = (table_ok == len(ex) and agree == n_rand and orth_classes == orth_pred and wj == 0 and ws == 0
          and resid < 1e-8 and tmax < 1.0)
    return ledger.Evidence(
        measured={"table_rows_matching": table_ok, "random_dags_3_methods_agree": agree,
                  "orthant_classes": orth_classes, "wrong_joins": wj, "wrong_splits": ws,
                  "path_residual": resid, "max_seconds_20_hidden": round(tmax, 4)},
        predicted={"table_rows_matching": len(ex), "random_dags_3_methods_agree": n_rand,
                   "orthant_classes": orth_pred, "wrong_joins": 0, "wrong_splits": 0,
                   "path_residual": 0.0, "max_seconds_20_hidden": "< 1"},
        tolerance="exact counts; path residual |B~theta^2-c| < 1e-8; < 1 s per count at 20 hidden nodes",
        verdict=ledger.verdict(ok),
        notes="3 methods: exact min-cut closure, one certified HiGHS LP per edge (integral Farkas ray or "
              "feasible point), brute-force closure. Orthant test: one point of H per sign orthant of R^E, "
              "every pair joined by the structure-lemma path iff forced signs agree; classes = components.")


def _no_bottleneck_dag(rng, n_in, n_hid, n_out, p) -> nx.DiGraph:
    """A random DAG in which every hidden node has in- and out-degree >= 2 (needs n_in, n_out >= 2)."""
    G = random_dag(rng, n_in, n_hid, n_out, p)
    xs = [f"x{i}" for i in range(n_in)]
    hs = [f"h{i}" for i in range(n_hid)]
    ys = [f"y{i}" for i in range(n_out)]
    for j, v in enumerate(hs):
        pool = [u for u in xs + hs[:j] if not G.has_edge(u, v)]
        while G.in_degree(v) < 2:
            G.add_edge(pool.pop(int(rng.integers(len(pool)))), v)
    for j, v in reversed(list(enumerate(hs))):
        pool = [w for w in hs[j + 1:] + ys if not G.has_edge(v, w)]
        while G.out_degree(v) < 2:
            G.add_edge(v, pool.pop(int(rng.integers(len(pool)))))
    return G


@ledger.claim(
    "relu_dag.no_bottleneck_connected", source=f"{_SRC}, Theorem 1 corollary, Corollary 2; NeurIPS 2024 "
    "theorem for d-l-1",
    statement="Without bottleneck nodes H_G(c) is connected for every c; layered nets with all widths >= 2 "
              "are connected; the d-l-1 net (d >= 2) has 2^#{k: c_k < 0} components.")
def _claim_no_bottleneck() -> ledger.Evidence:
    rng = np.random.default_rng(4)
    n_nb, nb_conn, nb_lp = 150, 0, 0
    for i in range(n_nb):
        G = _no_bottleneck_dag(rng, int(rng.integers(2, 4)), int(rng.integers(1, 13)),
                               int(rng.integers(2, 4)), float(rng.uniform(0.1, 0.5)))
        info = structure(G)
        c = ({v: float(rng.normal(scale=3)) for v in info.hidden} if i % 2 else
             {v: int(rng.integers(-3, 4)) for v in info.hidden})
        nb_conn += count_components(G, c) == 1
        if i < 40:
            nb_lp += not forced_edges_lp(G, c)
    n_lay, lay_conn = 60, 0
    for i in range(n_lay):
        widths = [int(w) for w in rng.integers(2, 5, size=int(rng.integers(3, 6)))]
        G = layered_graph(widths)
        c = {v: float(rng.normal(scale=3)) for v in structure(G).hidden}
        lay_conn += count_components(G, c) == 1
    n_dl1, dl1_ok = 80, 0
    for i in range(n_dl1):
        d, l = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        cv = rng.integers(-2, 3, size=l) if i % 2 else rng.normal(size=l)
        G = dl1_graph(d, l)
        dl1_ok += count_components(G, {(1, k): float(cv[k]) for k in range(l)}) == 2 ** int(np.sum(cv < 0))
    ok = nb_conn == n_nb and nb_lp == 40 and lay_conn == n_lay and dl1_ok == n_dl1
    return ledger.Evidence(
        measured={"no_bottleneck_connected": nb_conn, "no_bottleneck_lp_no_forced": nb_lp,
                  "layered_connected": lay_conn, "dl1_count_matches": dl1_ok},
        predicted={"no_bottleneck_connected": n_nb, "no_bottleneck_lp_no_forced": 40,
                   "layered_connected": n_lay, "dl1_count_matches": n_dl1},
        tolerance="exact", verdict=ledger.verdict(ok),
        notes="random DAGs with hidden in/out-degree >= 2 (1-12 hidden) and float or integer c (zeros "
              "included); layered widths in {2,3,4}; d in 2..5, l in 1..8.")


@ledger.claim(
    "relu_dag.singular_points", source=f"{_SRC}, theorem on singular points; line 423 (probability 0)",
    statement="rank D(B~theta^2) = |V_hid| - kappa(theta); singular points exist iff a sub-network's balance "
              "sums to 0 with a feasible cut (LP); otherwise H_G(c) is a smooth manifold of dimension "
              "|E| - |V_hid|, and random initialisations are never singular.")
def _claim_singular() -> ledger.Evidence:
    rng = np.random.default_rng(5)
    n_rank, rank_agree, min_gap = 200, 0, np.inf
    for i in range(n_rank):
        G = random_dag(rng, 2, int(rng.integers(1, 10)), 2, float(rng.uniform(0.2, 0.6)))
        m = G.number_of_edges()
        th = theta_dict(G, rng.normal(size=m) * (rng.random(m) < rng.uniform(0.3, 1.0)))
        r, rex = jacobian_rank(G, th), exact_jacobian_rank(G, th)
        rnum, sv = numerical_rank(G, th)
        rank_agree += r == rex == rnum
        if 0 < rnum < len(sv):
            min_gap = min(min_gap, float(sv[rnum - 1] / max(sv[rnum], 1e-300)))
    # Worked singular points of the brief (section 3): expected ranks.
    ch = chain_graph(2)
    fc = worked_examples()[-12][1]
    worked = [jacobian_rank(chain_graph(1), {("x", "h1"): 0.0, ("h1", "y"): 0.0}),
              jacobian_rank(ch, {("x", "h1"): 0.0, ("h1", "h2"): 1.0, ("h2", "y"): 0.0}),
              jacobian_rank(fc, {("x1", "h1"): 0.0, ("x2", "h1"): 0.0, ("x1", "h2"): 1.0, ("x2", "h2"): 0.5,
                                 ("h1", "y"): 0.0, ("h2", "y"): 0.3})]
    # Existence iff LP: integer c with zeros on small DAGs.
    n_ex, ex_ok, n_with = 60, 0, 0
    for i in range(n_ex):
        G = random_dag(rng, 2, int(rng.integers(1, 7)), 2, float(rng.uniform(0.2, 0.6)))
        info = structure(G)
        c = {v: int(rng.integers(-1, 2)) for v in info.hidden}
        subs = singular_subnetworks(G, c)
        if subs:
            n_with += 1
            C = subs[0]
            bounds = [(0.0, 0.0) if ((u in C) != (v in C)) else (0.0, None) for (u, v) in info.edges]
            res = _linprog(np.zeros(len(info.edges)), info.B.astype(float), c_vector(G, c, info), bounds)
            th = theta_dict(G, np.sqrt(np.clip(res.x, 0, None)))
            ok_i = is_singular(G, th) and max(abs(balance(G, th)[v] - c[v]) for v in info.hidden) < 1e-9
        else:
            ok_i = not any(is_singular(G, theta_dict(G, sample_point(G, c, rng=rng, n_vertices=1)))
                           for _ in range(10))
        ex_ok += ok_i
    # Existence, both directions, against brute force over zero patterns on small DAGs.
    n_bf, bf_ok, bf_sing = 0, 0, 0
    while n_bf < 25:
        G = random_dag(rng, int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 3)), 0.3)
        if G.number_of_edges() > 8:
            continue
        c = {v: int(rng.integers(-1, 2)) for v in structure(G).hidden}
        n_bf += 1
        brute = has_singular_points_bruteforce(G, c)
        bf_ok += bool(singular_subnetworks(G, c)) == brute
        bf_sing += brute
    # Random Gaussian initialisations: no vanishing subset sum, full rank.
    n_init, init_ok = 100, 0
    for i in range(n_init):
        G = random_dag(rng, 3, int(rng.integers(2, 13)), 2, 0.3)
        th = theta_dict(G, rng.normal(size=G.number_of_edges()))
        c = balance(G, th)
        init_ok += (not singular_subnetworks(G, c)) and not is_singular(G, th)
    # Smooth manifold: generic c, points of H (LP vertices included) all have full rank.
    n_sm, sm_ok, dims = 40, 0, set()
    for i in range(n_sm):
        G = random_dag(rng, 2, int(rng.integers(2, 9)), 2, 0.35)
        info = structure(G)
        c = {v: float(rng.normal()) for v in info.hidden}
        pts = [sample_point(G, c, rng.choice([-1.0, 1.0], len(info.edges)), rng, n_vertices=1)
               for _ in range(5)]
        ranks = [numerical_rank(G, theta_dict(G, p))[0] for p in pts]
        sm_ok += all(r == len(info.hidden) for r in ranks) and not singular_subnetworks(G, c)
        dims.add(len(info.edges) - len(info.hidden) == len(info.edges) - min(ranks))
    ok = (rank_agree == n_rank and worked == [0, 1, 1] and ex_ok == n_ex and init_ok == n_init
          and sm_ok == n_sm and dims == {True} and bf_ok == n_bf and 0 < bf_sing < n_bf)
    return ledger.Evidence(
        measured={"rank_formula_agrees": rank_agree, "worked_ranks": worked, "existence_lp_agrees": ex_ok,
                  "existence_vs_bruteforce": bf_ok, "bruteforce_cases_singular": bf_sing,
                  "cases_with_singular_points": n_with, "random_inits_nonsingular": init_ok,
                  "generic_c_smooth": sm_ok, "min_singular_value_gap": min_gap},
        predicted={"rank_formula_agrees": n_rank, "worked_ranks": [0, 1, 1], "existence_lp_agrees": n_ex,
                   "existence_vs_bruteforce": n_bf, "bruteforce_cases_singular": "some, not all",
                   "cases_with_singular_points": "some", "random_inits_nonsingular": n_init,
                   "generic_c_smooth": n_sm, "min_singular_value_gap": "> 1e6"},
        tolerance="exact (combinatorial kappa = exact integer rank = SVD rank read at a > 1e6 gap)",
        verdict=ledger.verdict(ok),
        notes="existence: when the LP finds a cut-off C, its LP point is a singular point of H; when none "
              "exists, 10 points of H (LP vertices, sparse) are all non-singular; and on 25 DAGs with <= 8 "
              "edges it agrees with an LP over every zero pattern that cuts off a component. Worked ranks: 1-1-1 at 0 "
              "(c=0), chain at (0,1,0) (c=(-1,1)), 2-2-1 with w1=a1=0 (c=(0,*)).")


def make_trainer(G, X, Y, *, loss: str = "mse", reg: str = "none", lr: float = 0.05, lam: float = 0.0,
                 n_steps: int = 1000, n_save: int = 50, init_scale: float | None = None,
                 slope: float = 0.0) -> Callable:
    """A per-seed training run for ``sims.runtime.map_seeds``: ``fn(key) -> dict`` with ``theta0 [|E|]``,
    ``theta [n_save+1, |E|]`` and ``loss [n_save+1]`` at evenly spaced steps (step 0 first).

    The initialisation is ``N(0, init_scale^2)`` per edge (default ``sqrt(2 / mean in-degree)``); each step
    is :func:`regulariser_step` ``reg`` on the loss ``loss``.
    """
    info = structure(G)
    f, lf = forward_fn(G, slope), loss_fn(loss)
    X, Y = jnp.asarray(X), jnp.asarray(Y)
    if n_steps % n_save:
        raise ValueError(f"n_steps={n_steps} must be a multiple of n_save={n_save}")
    mean_in = len(info.edges) / max(1, len(info.hidden) + len(info.outputs))
    scale = init_scale if init_scale is not None else math.sqrt(2.0 / mean_in)
    step = regulariser_step(reg, info.B, lr, lam)
    L = lambda t: lf(f(t, X), Y)  # noqa: E731
    grad = jax.grad(L)

    def run(key):
        t0 = scale * jax.random.normal(key, (len(info.edges),))

        def block(t, _):
            t = jax.lax.fori_loop(0, n_steps // n_save, lambda i, u: step(u, grad(u)), t)
            return t, (t, L(t))

        _, (ts, ls) = jax.lax.scan(block, t0, None, length=n_save)
        return {"theta0": t0, "theta": jnp.concatenate([t0[None], ts]),
                "loss": jnp.concatenate([L(t0)[None], ls])}

    return run


def chain_law_G(u):
    """``G(u) = 1/u - ln(1 + 1/u)``: along gradient flow on the chain example (brief section 3, exact
    test), ``G(u(t)) = G(u0) + 2t`` with ``u = theta_1^2``."""
    return 1.0 / u - np.log1p(1.0 / u)


def chain_law_u(t, u0: float) -> np.ndarray:
    """``u(t)`` solving ``G(u(t)) = G(u0) + 2t`` (``brentq``), the exact trajectory of the chain example."""
    from scipy.optimize import brentq

    target = chain_law_G(u0) + 2.0 * np.asarray(t, np.float64)
    return np.array([brentq(lambda u: chain_law_G(u) - g, 1e-300 if g > 1e3 else 1e-12, u0 * (1 + 1e-12))
                     if g > chain_law_G(u0) else u0 for g in np.atleast_1d(target)])


@ledger.claim(
    "relu_dag.unreachable_singularities", source=f"{_SRC}, Proposition 6",
    statement="Gradient flow from a non-singular point never reaches a singular point in finite time; on the "
              "chain example it follows G(u(t)) = G(u0) + 2t exactly and only approaches (0,1,0) as t -> oo.")
def _claim_unreachable() -> ledger.Evidence:
    G = chain_graph(2)
    f, lf = forward_fn(G), loss_fn("mse")
    X, Y = jnp.ones((1, 1)), jnp.zeros((1, 1))
    field = jax.jit(lambda t: -jax.grad(lambda u: lf(f(u, X), Y))(t))
    h, n, every = 1e-3, 60000, 600
    th0 = jnp.array([1.0, math.sqrt(2.0), 1.0])  # u0 = 1, c = (-1, 1), branch theta1 = theta3 > 0
    ys = np.asarray(jax.jit(lambda y: rk4(field, y, h, n, every))(th0))
    t = np.arange(len(ys)) * h * every
    u = ys[:, 0] ** 2
    law_err = float(np.max(np.abs(chain_law_G(u) - chain_law_G(1.0) - 2 * t) / (chain_law_G(1.0) + 2 * t)))
    u_pred = chain_law_u(t, 1.0)
    u_rel = float(np.max(np.abs(u - u_pred) / u_pred))
    ranks = [jacobian_rank(G, theta_dict(G, y)) for y in ys]
    cs = np.asarray(balance_array(structure(G).B, ys))
    dist = np.linalg.norm(ys - np.array([0.0, 1.0, 0.0]), axis=1)
    ok = (law_err < 1e-10 and u_rel < 1e-8 and min(ranks) == 2 and np.all(u > 0)
          and np.all(np.diff(dist) < 0) and np.max(np.abs(cs - cs[0])) < 1e-10)
    return ledger.Evidence(
        measured={"law_rel_err": law_err, "u_rel_err_vs_brentq": u_rel, "min_rank": min(ranks),
                  "u_at_t60": float(u[-1]), "dist_to_singular_t60": float(dist[-1]),
                  "c_drift": float(np.max(np.abs(cs - cs[0])))},
        predicted={"law_rel_err": 0.0, "u_rel_err_vs_brentq": 0.0, "min_rank": 2,
                   "u_at_t60": float(u_pred[-1]), "dist_to_singular_t60": "> 0, decreasing",
                   "c_drift": 0.0},
        tolerance="law rel err < 1e-10; u rel err < 1e-8; rank 2 = |V_hid| at every saved time",
        verdict=ledger.verdict(ok),
        notes="chain x->h1->h2->y, x=1, target 0, L=f^2/2, c=(-1,1), u0=1; RK4 h=1e-3 to t=60, 101 saved "
              "points. u ~ 1/(2t): the singular point (0,1,0) is approached only asymptotically.")


@ledger.claim(
    "relu_dag.expressivity_obstruction", source=f"{_SRC}, line 358 (frozen signs); brief 2.7",
    statement="In the 2-2-1 net with c = (-1,-1), the component with both output weights > 0 keeps "
              "L >= mean(y^2)/2 for all time when y = -ReLU(x1), while the component with both < 0 "
              "reaches zero loss.")
def _claim_expressivity() -> ledger.Evidence:
    G = dl1_graph(2, 2)
    info = structure(G)
    f, lf = forward_fn(G), loss_fn("mse")
    X = jax.random.normal(jax.random.key(0), (64, 2))
    Y = -jnp.maximum(X[:, :1], 0.0)
    bound = 0.5 * float(jnp.mean(Y**2))
    L = jax.jit(jax.vmap(lambda t: lf(f(t, X), Y)))
    field = jax.jit(lambda t: -jax.grad(lambda u: lf(f(u, X), Y))(t))
    flow = jax.jit(lambda y: rk4(field, y, 5e-3, 40000, 400))
    forced = forced_edges(G, {(1, 0): -1.0, (1, 1): -1.0})
    out_idx = [info.edge_index[e] for e in sorted(forced)]
    inits = []
    for sign in (1.0, -1.0):
        for s in range(3):
            W = 0.7 * np.random.default_rng(s).normal(size=(2, 2))
            inits.append(dl1_theta(W, sign * np.sqrt((W**2).sum(1) + 1.0)))
    ys_all = np.asarray(jax.vmap(flow)(jnp.stack(inits)))          # [6, 101, |E|]
    ls_all = np.asarray(jax.vmap(L)(jnp.asarray(ys_all)))          # [6, 101]
    signs = np.repeat([1.0, -1.0], 3)
    flips = int(np.sum(np.sign(ys_all[:, :, out_idx]) != signs[:, None, None]))
    drift = float(np.max(np.abs(np.asarray(balance_array(info.B, ys_all)) + 1.0)))
    gaps = [float(x) for x in ls_all[:3].min(axis=1) - bound]
    finals = [float(x) for x in ls_all[3:, -1]]
    ok = (len(forced) == 2 and min(gaps) >= -1e-12 and max(finals) < 1e-5 * bound and flips == 0)
    return ledger.Evidence(
        measured={"min_L_minus_bound_pos_component": min(gaps), "final_L_neg_component": max(finals),
                  "bound": bound, "forced_sign_flips": flips, "c_drift": drift},
        predicted={"min_L_minus_bound_pos_component": ">= 0", "final_L_neg_component": "-> 0",
                   "bound": bound, "forced_sign_flips": 0, "c_drift": "0 for exact flow (reported, not checked)"},
        tolerance="L - bound >= -1e-12 on every saved point; final loss < 1e-5 * bound; no forced-sign flip "
                  "(c_drift is the integrator's error, checked in relu_dag.conservation)",
        verdict=ledger.verdict(ok),
        notes="64 Gaussian inputs; 3 runs per component, RK4 gradient flow h=5e-3 to t=200 (101 saved "
              "points). f >= 0 when both a_k > 0 and y <= 0, so (f-y)^2 >= y^2. c drift is the RK4 error "
              "at the ReLU kinks.")


def disconnection_monte_carlo(key, ds, ls) -> jax.Array:
    """One Monte Carlo draw for every ``(init, d, l)`` cell: ``[2, len(ds), len(ls)]`` indicators of a
    disconnected ``H`` (Kaiming first, then Xavier), from one shared Gaussian sample (cells are correlated,
    each is exact in law). Uses ``c_k < 0 <=> |z_k|^2 / z_a^2 < s_out^2 / s_in^2``."""
    dmax, lmax = max(ds), max(ls)
    kw, ka = jax.random.split(key)
    Zw = jax.random.normal(kw, (lmax, dmax)) ** 2
    Za = jax.random.normal(ka, (lmax,)) ** 2
    S = jnp.cumsum(Zw, axis=1)[:, jnp.array(ds) - 1]            # [lmax, nd]
    ratio = S / Za[:, None]
    runmin = jax.lax.cummin(ratio, axis=0)[jnp.array(ls) - 1]   # [nl, nd]: min over k < l
    thr = np.array([[[init_stds(d, l, ini)[1] ** 2 / init_stds(d, l, ini)[0] ** 2 for l in ls] for d in ds]
                    for ini in ("kaiming", "xavier")])          # [2, nd, nl]
    return (runmin.T[None] < thr).astype(jnp.result_type(float))


@ledger.claim(
    "relu_dag.init_obstruction_probability", source="Nurisso, Leroy, Vaccarino NeurIPS 2024 (obstruction "
    "probability figure); brief 2.3",
    statement="For d-l-1 networks, P(H disconnected) = 1 - P(F_{d,1} >= s_out^2/(d s_in^2))^l under "
              "Kaiming- and Xavier-normal initialisation, matching Monte Carlo.")
def _claim_init_probability() -> ledger.Evidence:
    from sims import runtime

    ds, ls, n = (2, 3, 5, 10, 20), (1, 2, 4, 8, 16, 32), 20000
    mc, _ = runtime.mean_over_seeds(lambda k: disconnection_monte_carlo(k, ds, ls), 0, n)
    pred = np.array([[[disconnection_probability(d, l, ini) for l in ls] for d in ds]
                     for ini in ("kaiming", "xavier")])
    se = np.sqrt(pred * (1 - pred) / n)
    z = np.abs(mc - pred) / np.maximum(se, 1e-12)
    zmax = float(np.max(z))
    # Consistency with the exact component count on actual draws.
    rng = np.random.default_rng(8)
    agree, n_draw = 0, 60
    for i in range(n_draw):
        d, l = int(rng.integers(2, 5)), int(rng.integers(1, 6))
        s_in, s_out = init_stds(d, l, "kaiming")
        W, a = s_in * rng.normal(size=(l, d)), s_out * rng.normal(size=l)
        G = dl1_graph(d, l)
        disc = count_components(G, balance(G, theta_dict(G, np.asarray(dl1_theta(W, a))))) > 1
        agree += disc == bool(np.any((W**2).sum(1) < a**2))
    ok = zmax < 4.5 and agree == n_draw
    return ledger.Evidence(
        measured={"max_z": zmax, "max_abs_diff": float(np.max(np.abs(mc - pred))),
                  "kaiming_d2": mc[0, 0].round(4).tolist(), "count_components_agrees": agree},
        predicted={"max_z": "< 4.5", "max_abs_diff": 0.0, "kaiming_d2": pred[0, 0].round(4).tolist(),
                   "count_components_agrees": n_draw},
        tolerance="|MC - formula| < 4.5 standard errors in each of 60 cells (n = 20000)",
        stderr={"max_se": float(se.max())}, verdict=ledger.verdict(ok),
        notes="d in (2,3,5,10,20), l in (1,2,4,8,16,32); Kaiming-normal std sqrt(2/fan_in), Xavier-normal "
              "sqrt(2/(fan_in+fan_out)), no biases. kaiming_d2 lists l = 1..32.")


def pruning_problem(n: int = 128, seed: int = 0):
    """The synthetic regression task of the pruning experiment: 2-8-8-1 layered net,
    ``X ~ N(0, I_2)`` (``[n, 2]``), ``y = ReLU(x1 + x2) - ReLU(x1 - x2)`` (``[n, 1]``)."""
    X = jax.random.normal(jax.random.key(seed), (n, 2))
    Y = (jnp.maximum(X[:, 0] + X[:, 1], 0) - jnp.maximum(X[:, 0] - X[:, 1], 0))[:, None]
    return layered_graph([2, 8, 8, 1]), X, Y


@ledger.claim(
    "relu_dag.pruning", source=f"{_SRC}, self-pruning section; brief 2.6",
    statement="Training with an L1 proximal step reaches singular points exactly (cut-off sub-networks), "
              "and pruning them leaves the network function unchanged bit for bit; L2 weight decay and "
              "plain GD never produce exact zeros.")
def _claim_pruning() -> ledger.Evidence:
    from sims import runtime

    G, X, Y = pruning_problem()
    Xt = np.random.default_rng(1).normal(size=(200, 2))
    kappa, bit_equal, losses = {}, {}, {}
    for reg, lam in (("none", 0.0), ("l2", 0.01), ("l1", 0.01), ("prox_l1", 0.01), ("nuclear", 0.01)):
        run = make_trainer(G, X, Y, reg=reg, lr=0.05, lam=lam, n_steps=1500, n_save=10)
        out = runtime.map_seeds(run, 0, 2)
        ks, eq = [], []
        for th in out["theta"][:, -1]:
            td = theta_dict(G, th)
            ks.append(len(support_components(G, td)))
            H, thp = prune(G, td)
            eq.append(forward_sequential(G, td, Xt).tobytes() == forward_sequential(H, thp, Xt).tobytes())
        kappa[reg], bit_equal[reg], losses[reg] = ks, all(eq), float(out["loss"][:, -1].mean())
    ok = (min(kappa["prox_l1"]) >= 1 and all(bit_equal.values()) and kappa["none"] == [0, 0]
          and kappa["l2"] == [0, 0])
    return ledger.Evidence(
        measured={"kappa": kappa, "pruned_bit_equal": bit_equal, "final_loss": losses},
        predicted={"kappa": {"prox_l1": ">= 1", "none": [0, 0], "l2": [0, 0]}, "pruned_bit_equal": True},
        tolerance="exact: kappa counts exact zeros; forward outputs compared byte for byte",
        verdict=ledger.verdict(ok),
        notes="2-8-8-1 net, y = ReLU(x1+x2) - ReLU(x1-x2), 128 points, lr 0.05, 1500 steps, lam 0.01, 2 "
              "seeds; L1 subgradient and the nuclear-norm surrogate |B~ diag(theta)|_* only approach zeros.")
