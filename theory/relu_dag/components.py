"""Forced edges and connected components of ``H_G(c)`` (Theorem 1 made exact): the closure criterion
(integer min-cuts), its brute-force cross-check, certified LPs, and explicit paths between points."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import networkx as nx
import numpy as np
from scipy.optimize import linprog

from theory.numerics import check_int, check_limit, check_real
from theory.relu_dag.balance import feasible_point
from theory.relu_dag.graphs import _c_exact, c_vector, structure

MAX_BRUTEFORCE_HIDDEN = 16  # hidden nodes of a brute-force closure enumeration (2^(n-1) sets per edge)
MAX_VERTICES = 1000  # random LP vertices of one sampled point


def _integer_weights(cex: list[Fraction]) -> list[int]:
    """Exact Fractions scaled by the lcm of their denominators to integers (same signs of every sum)."""
    den = math.lcm(*(q.denominator for q in cex)) if cex else 1
    return [int(q * den) for q in cex]


class _Terminal:
    """A super-source/sink node for min-cut graphs, distinct from every node of a user's graph."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self):
        return f"<{self.name}>"


def _max_closure(G, w: dict, root, side: str) -> tuple[int, frozenset]:
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
    """The forced edges of ``H_G(c)`` with exact certificates, by the closure criterion (derived here).

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
            best, S = _max_closure(G, w_in, b, "in")
            if best > 0:
                out[(a, b)] = ("in", S, sum((cq[v] for v in S), Fraction(0)))
                continue
        if a in w_in and G.out_degree(a) == 1:
            best, S = _max_closure(G, w_out, a, "out")
            if best > 0:
                out[(a, b)] = ("out", S, sum((cq[v] for v in S), Fraction(0)))
    return out


def forced_edges(G, c) -> set:
    """The forced edges of ``H_G(c)``: edges ``e`` with ``min_{s in P(c)} s_e > 0``, whose sign is the same
    on a whole connected component (Theorem 1 made exact; derived here).

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
      ValueError: more than ``max_hidden`` hidden nodes, or more than ``MAX_BRUTEFORCE_HIDDEN`` whatever
        ``max_hidden`` says (the enumeration is exponential); as :func:`structure` and :func:`c_vector`.
    """
    info = structure(G)
    max_hidden = check_int(max_hidden, "max_hidden", ge=0)
    check_limit(len(info.hidden), MAX_BRUTEFORCE_HIDDEN, "MAX_BRUTEFORCE_HIDDEN", "the number of hidden nodes")
    check_limit(len(info.hidden), max_hidden, "max_hidden", "the number of hidden nodes")
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
        forced_in = b in hid and G.in_degree(b) == 1 and best(b, G.predecessors, nx.descendants(G, b), 1) > 0
        if forced_in or (a in hid and G.out_degree(a) == 1
                         and best(a, G.successors, nx.ancestors(G, a), -1) > 0):
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
    """``min cost.s`` s.t. ``A s = b`` and ``bounds`` (explicit), by HiGHS."""
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
      ValueError / TypeError: ``rtol`` not a finite real > 0; as :func:`structure` and :func:`c_vector`.
    """
    rtol = check_real(rtol, "rtol", gt=0)
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
    """The forced edges by one certified HiGHS LP per edge. Raises: as :func:`edge_lp_minima`."""
    return {e for e, v in edge_lp_minima(G, c).items() if v.forced}


def sample_point(G, c, signs=None, rng=None, n_vertices: int = 3) -> np.ndarray:
    """A point ``theta`` of ``H_G(c)`` (vector ``[|E|]``), ``theta = signs * sqrt(s)`` with ``s`` a random
    convex combination of ``n_vertices`` vertices of ``P(c)`` (LPs with random costs) and the exact
    :func:`feasible_point`.

    Args:
      signs: ``[|E|]`` array of +-1 (default all +1); rng: ``np.random.Generator``;
      n_vertices: integer in ``0..MAX_VERTICES`` (one LP each).
    Raises:
      TypeError / ValueError: ``n_vertices`` not an integer in range; as :func:`structure` and
        :func:`c_vector`.
    """
    n_vertices = check_int(n_vertices, "n_vertices", ge=0)
    check_limit(n_vertices, MAX_VERTICES, "MAX_VERTICES", "n_vertices")
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
    """The explicit path of the structure lemma (derived here) between two points of ``H_G(c)``.

    Interpolates linearly in ``s = theta^2`` (inside the convex ``P(c)``) to a point of ``P(c)`` with
    ``s_e = 0`` for one edge ``e`` whose sign differs, flips that sign there, repeats, and ends at
    ``theta1``. It exists iff the two points agree in sign on every forced edge.

    Args:
      theta0, theta1: vectors ``[|E|]`` in ``H_G(c)``; forced: the forced edge set (computed if None);
      zero_points: optional cache dict edge -> point of ``P(c)`` with ``s_e = 0``; filled with one certified
        LP (:func:`edge_lp_minima`) per flipped edge it lacks.
    Returns:
      ``[K, |E|]`` array of points along the path, or ``None`` when a forced edge changes sign (no path
      exists: ``|theta_e| >= sqrt(min_P s_e) > 0`` on all of ``H_G(c)``).
    Raises:
      TypeError / ValueError: ``n_per_leg`` not an integer >= 2; as :func:`structure`.
      RuntimeError: an edge to flip has no certified zero point (see :func:`edge_lp_minima`).
    """
    n_per_leg = check_int(n_per_leg, "n_per_leg", ge=2)
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
