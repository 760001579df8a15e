"""Independent counts and deliberately wrong rules that the relu_dag claims compare against.

The claims of Nurisso et al. (ICLR 2026, arXiv 2602.00693) are checked against a second, independent
method (one point of ``H_G(c)`` in every sign orthant joined by the structure-lemma path; a certified
HiGHS point of ``P(c)``) and each control runs the same test with a rule just outside the theorem (forcing
decided node by node, every bottleneck edge forced, a rank rule that only sees isolated nodes). These
helpers are mathematics only: graphs, points and counts, no decisions.
"""

from __future__ import annotations

import itertools

import jax
import networkx as nx
import numpy as np

from theory import numerics
from theory.relu_dag.components import _linprog, connect, forced_edges, sample_point
from theory.relu_dag.graphs import c_vector, chain_graph, random_dag, structure, theta_dict
from theory.relu_dag.singular import jacobian_rank, support_components
from theory.relu_dag.training import forward_sequential


def lp_point(B: np.ndarray, c: np.ndarray) -> np.ndarray | None:
    """A certified point of ``P(c) = {s >= 0 : B s = c}`` (``B [n_hid, |E|]``, ``c [n_hid]``) found by HiGHS,
    accepted when its residual is ``<= 1e-9 max(1, |c|)``; ``None`` when HiGHS finds none.
    Source: Proposition 3 (feasibility of ``H_G(c)``) read through ``P(c)`` (structure lemma)."""
    res = _linprog(np.zeros(B.shape[1]), B.astype(float), c, [(0.0, None)] * B.shape[1])
    if res.status != 0:
        return None
    s = np.clip(res.x, 0.0, None)
    return s if np.max(np.abs(B @ s - c), initial=0.0) <= 1e-9 * max(1.0, np.abs(c).max(initial=0.0)) else None


def errata_chain() -> nx.DiGraph:
    """The chain ``x -> h1 -> h2 -> h3 -> y`` with the skip ``x -> h3``: with ``c = (-0.3, 0.5, -0.1)`` the
    edge ``(x, h1)`` is forced through ``S = {h1, h2}`` (non-local forcing; 8 components, not 4)."""
    G = chain_graph(3)
    G.add_edge("x", "h3")
    return G


def per_node_forced_edges(G, c) -> set:
    """A WRONG rule (for controls): forcing decided node by node (``S = {v}`` only), ignoring the closure
    sets of Theorem 1. Returns the set of edges it calls forced."""
    info = structure(G)
    cv = dict(zip(info.hidden, c_vector(G, c, info)))
    return {(a, b) for (a, b) in info.edges
            if (b in cv and G.in_degree(b) == 1 and cv[b] > 0) or (a in cv and G.out_degree(a) == 1 and cv[a] < 0)}


def bottleneck_edges(G, c) -> set:
    """A WRONG rule (for controls): every edge into an in-degree-1 or out of an out-degree-1 hidden node,
    whatever the balance ``c`` (accepted for a uniform signature)."""
    info = structure(G)
    hid = set(info.hidden)
    return {(a, b) for (a, b) in info.edges
            if (b in hid and G.in_degree(b) == 1) or (a in hid and G.out_degree(a) == 1)}


def per_node_rank(G, theta) -> int:
    """A WRONG rank rule (for controls): ``|V_hid|`` minus the hidden nodes whose every weight is 0. It
    misses cut-off sub-networks of two or more nodes (a floating chain), which the theorem on singular
    points counts in ``kappa``."""
    info = structure(G)
    dead = [v for v in info.hidden
            if all(theta[e] == 0 for e in itertools.chain(G.in_edges(v), G.out_edges(v)))]
    return len(info.hidden) - len(dead)


def orthant_classes(G, c, rng) -> tuple[int, int, int, float]:
    """An independent component count: one point of ``H_G(c)`` in every sign orthant of ``R^E`` (``rng``
    draws them), each pair joined by :func:`connect` (the structure-lemma path) and united when the path
    ends at both points with residual ``|B~ theta^2 - c| < 1e-8``.

    Returns ``(#classes, #pairs joined across different forced signs, #pairs with equal forced signs not
    joined, max path residual)``; Theorem 1 predicts ``(2^#forced, 0, 0, ~0)``. Exponential in ``|E|``: for
    small graphs only.
    """
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
    return len({uf[i] for i in range(len(pts))}), wrong_join, wrong_split, resid


def no_bottleneck_dag(rng, n_in: int, n_hid: int, n_out: int, p: float) -> nx.DiGraph:
    """A random DAG (:func:`random_dag`) topped up so that every hidden node has in- and out-degree >= 2
    (needs ``n_in, n_out >= 2``): a graph without bottleneck nodes (Theorem 1's corollary)."""
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


def chain_run(step_fn, th0, n_blocks: int = 100, every: int = 600) -> np.ndarray:
    """``[n_blocks + 1, |E|]`` states of a parameter vector under ``step_fn`` (one step, JAX), saved every
    ``every`` steps, the initial state first."""
    def block(t, _):
        t = jax.lax.fori_loop(0, every, lambda i, u: step_fn(u), t)
        return t, t
    _, ys = numerics.loop_jit(lambda t: jax.lax.scan(block, t, None, length=n_blocks))(th0)
    return np.concatenate([np.asarray(th0)[None], np.asarray(ys)])


def min_rank_along(G, ys) -> tuple[int, bool]:
    """The finite-time check of the reachability section: ``(min Jacobian rank over the states ys [T,
    |E|], whether it is |V_hid| at every state)``."""
    ranks = [jacobian_rank(G, theta_dict(G, y)) for y in ys]
    return min(ranks), min(ranks) == len(structure(G).hidden)


def live_node_removed_equal(G, theta: dict, Xt) -> bool:
    """Remove the first hidden node that is neither cut off (:func:`support_components`) nor dead and
    compare the network's outputs on ``Xt [n, n_in]`` byte for byte: the control of the bit-exact pruning
    check (removing a live node changes f)."""
    comps = support_components(G, theta)
    cut = set().union(*comps) if comps else set()
    info = structure(G)
    live = next(v for v in info.hidden if v not in cut
                and any(theta[e] != 0 for e in G.in_edges(v)) and any(theta[e] != 0 for e in G.out_edges(v)))
    H = G.copy()
    H.remove_node(live)
    return forward_sequential(G, theta, Xt).tobytes() == forward_sequential(H, {e: theta[e] for e in H.edges},
                                                                            Xt).tobytes()
