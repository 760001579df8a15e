"""Network graphs: validation (:func:`structure`), parameter vectors, and the graph families and worked
examples (exact values derived here and LP-verified, tests/test_relu_dag.py)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import jax.numpy as jnp
import networkx as nx
import numpy as np

from theory.numerics import check_int, check_real


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
    """Inverse of :func:`theta_vector`: a vector ``[|E|]`` in ``tuple(G.edges)`` order to a dict.

    Raises: ValueError: a vector of another shape."""
    edges = tuple(G.edges())
    vec = np.asarray(vec, np.float64)
    if vec.shape != (len(edges),):
        raise ValueError(f"theta vector must have shape ({len(edges)},), got {vec.shape}")
    return {e: float(x) for e, x in zip(edges, vec)}


def _c_exact(info: DagInfo, c) -> list[Fraction]:
    """``c`` (dict hidden node -> real) as exact Fractions in hidden-node order (floats exactly)."""
    return [Fraction(v) for v in _mapping_values(c, info.hidden, "c", "hidden node")]


def c_vector(G, c, info: DagInfo | None = None) -> np.ndarray:
    """``c`` (dict hidden node -> float) as a float64 vector ``[|V_hid|]`` in hidden-node order.

    Raises:
      TypeError / ValueError: as :func:`theta_vector`, for keys that are not exactly the hidden nodes.
    """
    info = info or structure(G)
    return np.array([float(v) for v in _c_exact(info, c)], np.float64)


def layered_graph(widths) -> nx.DiGraph:
    """Fully connected layered network with ``widths = (n_0, ..., n_L)``; nodes ``(layer, index)``.

    Raises: TypeError (a width that is not an integer) / ValueError (fewer than 2 layers, a width < 1)."""
    widths = [check_int(w, "widths[]") for w in widths]
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
    then the out-weights ``a_k``; :func:`dl1_theta` builds that vector.

    Raises: TypeError / ValueError: ``d`` or ``l`` not an integer >= 1."""
    d, l = check_int(d, "d", ge=1), check_int(l, "l", ge=1)
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
    """``x -> h1 -> ... -> hn -> y`` (plus the skip ``x -> y`` if asked; ``n_hidden = 0`` is ``x -> y``).

    Raises: TypeError / ValueError: ``n_hidden`` not an integer >= 0."""
    n_hidden = check_int(n_hidden, "n_hidden", ge=0)
    nodes = ["x"] + [f"h{i + 1}" for i in range(n_hidden)] + ["y"]
    G = nx.DiGraph(list(zip(nodes[:-1], nodes[1:])))
    if skip:
        G.add_edge("x", "y")
    return G


def random_dag(rng: np.random.Generator, n_in: int, n_hid: int, n_out: int, p: float = 0.3) -> nx.DiGraph:
    """A random network DAG: nodes ``x0..``, ``h0..`` (topologically ordered), ``y0..``; each allowed edge
    (input->hidden/output, hidden->later hidden/output) appears with probability ``p``; missing in- or
    out-edges are added at random so that every node has its role.

    Args:
      rng: a ``np.random.Generator``; n_in, n_out: integers >= 1; n_hid: integer >= 0; p in [0, 1].
    Raises:
      TypeError / ValueError: counts that are not integers in range, ``p`` outside [0, 1] or NaN.
    """
    n_in, n_out = check_int(n_in, "n_in", ge=1), check_int(n_out, "n_out", ge=1)
    n_hid = check_int(n_hid, "n_hid", ge=0)
    p = check_real(p, "p", ge=0, le=1)
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


def _g(edges):
    """A DiGraph from an edge list."""
    return nx.DiGraph(edges)


def worked_examples() -> list[tuple[str, nx.DiGraph, dict, set]]:
    """Our table of worked examples of forced edges (derived here, LP-checked in tests/test_relu_dag.py):
    ``(name, G, c, forced edges)``."""
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
