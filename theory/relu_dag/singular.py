"""Jacobian rank of ``theta -> B~ theta^2`` and singular points (the theorem on singular points): the
combinatorial rank, exact and numeric cross-checks, existence by LP, and pruning."""

from __future__ import annotations

import networkx as nx
import numpy as np

from theory import numerics
from theory.numerics import check_int, check_limit, check_real
from theory.relu_dag.components import _integer_weights, _linprog
from theory.relu_dag.graphs import DagInfo, _c_exact, c_vector, structure, theta_vector

MAX_SUBSET_HIDDEN = 20  # hidden nodes of the subset search of singular_subnetworks (2^n masks in memory)
MAX_BRUTEFORCE_EDGES = 14  # edges of the brute-force zero-pattern search (one LP per each of 2^|E| sets)


def support_components(G, theta, info: DagInfo | None = None) -> list[frozenset]:
    """Components of the support graph ``(V, {e : theta_e != 0})`` (weak connectivity) that contain no
    input or output node, each as a frozenset of hidden nodes; isolated hidden nodes count. These are the
    cut-off sub-networks; ``kappa(theta) = len(...)``. ``info``: ``structure(G)`` where the caller has it
    (as :func:`theta_vector` takes it), so that a sweep over many ``theta`` validates ``G`` once.

    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`theta_vector`.
    """
    info = structure(G) if info is None else info
    vec = theta_vector(G, theta, info)
    U = nx.Graph()
    U.add_nodes_from(G.nodes)
    U.add_edges_from(e for e, x in zip(info.edges, vec) if x != 0.0)
    terminals = set(info.inputs) | set(info.outputs)
    return [frozenset(C) for C in nx.connected_components(U) if not (C & terminals)]


def jacobian(G, theta) -> np.ndarray:
    """``D(theta -> B~ theta^2) = 2 B~ diag(theta)``, shape ``[|V_hid|, |E|]``. Raises as
    :func:`theta_vector`."""
    info = structure(G)
    return 2.0 * info.B * theta_vector(G, theta, info)[None, :]


def jacobian_rank(G, theta) -> int:
    """Rank of the Jacobian ``2 B~ diag(theta)`` of ``theta -> B~ theta^2``: ``|V_hid| - kappa(theta)``,
    ``kappa`` = number of support components touching no input or output (theorem on singular points;
    formula derived here). Exact: combinatorial, any non-zero weight counts as non-zero (tests confirm it
    against an exact integer rank and a singular-value gap).

    Args:
      G: the network DAG; theta: dict edge -> real weight.
    Returns:
      int in ``[0, |V_hid|]``.
    Raises:
      TypeError, ValueError: as :func:`structure` and :func:`theta_vector`.
    """
    info = structure(G)
    return len(info.hidden) - len(support_components(G, theta, info))


def is_singular(G, theta) -> bool:
    """True iff ``theta`` is a singular point of ``H_G(balance(G, theta))``, i.e. the Jacobian rank is below
    ``|V_hid|`` (some sub-network is cut off from every input and output). Raises as
    :func:`jacobian_rank`."""
    return jacobian_rank(G, theta) < len(structure(G).hidden)


def exact_jacobian_rank(G, theta) -> int:
    """Rank of ``B~ diag(theta)`` over the rationals (:func:`theory.numerics.exact_rank` on the columns of
    ``B~`` where ``theta`` is non-zero), for cross-checks. Raises as :func:`jacobian_rank`."""
    info = structure(G)
    vec = theta_vector(G, theta, info)
    cols = [j for j, x in enumerate(vec) if x != 0.0]
    if not info.hidden or not cols:
        return 0
    return numerics.exact_rank(info.B[:, cols], "QQ")


def numerical_rank(G, theta, gap: float = 1e6) -> tuple[int, np.ndarray]:
    """Rank of ``2 B~ diag(theta)`` read at the largest gap of its singular values.

    The rank and the gap come from :func:`theory.numerics.gap_rank` (largest ratio ``s_i / s_{i+1}``, with
    the floor ``s_1 eps n`` appended so that a well-conditioned full-rank matrix reads as full rank); when
    that largest ratio does not exceed ``gap`` the spectrum has no clear gap and reads as full rank.

    Args:
      G: the network DAG; theta: dict edge -> real weight; gap: the ratio required, a finite real > 1.
    Returns:
      ``(rank, singular values)``: the values descending, ``[min(|V_hid|, |E|)]`` (empty without hidden
      nodes); the gap seen is ``theory.numerics.gap_rank(sv)[1]``.
    Raises:
      TypeError, ValueError: as :func:`jacobian_rank`, or ``gap`` not a finite real > 1.
    """
    gap = check_real(gap, "gap", gt=1)
    info = structure(G)
    sv = np.linalg.svd(jacobian(G, theta), compute_uv=False) if info.hidden else np.zeros(0)
    r, seen = numerics.gap_rank(sv)
    return (r if seen > gap else len(sv)), sv


def singular_value_ratio(B, theta) -> np.ndarray:
    """``s_min / s_max`` of ``B~ diag(theta)``, batched: how close ``theta`` is to the singular locus of
    ``H_G(c)`` on the scale of the weights (0 exactly at a singular point, where the rank drops to
    ``|V_hid| - kappa``; Eckart-Young: ``s_min`` is the distance from the Jacobian to the rank-deficient
    matrices). Used to compare regularisers that drive training towards cut-off sub-networks (the
    paper's self-pruning section).

    Args:
      B: ``[|V_hid|, |E|]`` incidence matrix on hidden rows (``structure(G).B``), ``|V_hid| >= 1``.
      theta: ``[..., |E|]`` finite weights.
    Returns:
      ``[...]`` float64 ratios in ``[0, 1]`` (0 where ``theta`` is all zero).
    Raises:
      ValueError: ``B`` not 2-D with at least one row, ``theta``'s last axis not ``|E|``, or a
        non-finite weight.
    """
    B = np.asarray(B, np.float64)
    th = np.asarray(theta, np.float64)
    if B.ndim != 2 or B.shape[0] == 0:
        raise ValueError(f"B must be [|V_hid| >= 1, |E|], got shape {B.shape}")
    if th.ndim == 0 or th.shape[-1] != B.shape[1]:
        raise ValueError(f"theta must be [..., {B.shape[1]}], got shape {th.shape}")
    if not np.all(np.isfinite(th)):
        raise ValueError("theta must be finite")
    sv = np.linalg.svd(B * th[..., None, :], compute_uv=False)        # [..., min(|V_hid|, |E|)]
    top = sv[..., 0]
    # A wide B~ diag(theta) has |V_hid| singular values; a tall one (|E| < |V_hid|) is rank-deficient.
    low = sv[..., -1] if B.shape[0] <= B.shape[1] else np.zeros_like(top)
    return np.where(top > 0, low / np.where(top > 0, top, 1.0), 0.0)


def singular_subnetworks(G, c, max_hidden: int = 20) -> list[frozenset]:
    """Hidden sets ``C`` that can be cut off inside ``H_G(c)``: ``c(C) = 0`` exactly and the LP
    ``{B~ s = c, s >= 0, s_e = 0 on every edge between C and the rest}`` is feasible (certified point).
    ``Sing(H_G(c))`` is non-empty iff this list is (derived here). Only subsets with an exact zero
    sum are tested by LP.

    Returns:
      The cut-off sets, as frozensets of hidden nodes (in increasing bitmask order).
    Raises:
      ValueError: more than ``max_hidden`` hidden nodes, or more than ``MAX_SUBSET_HIDDEN`` whatever
        ``max_hidden`` says (the search is over all subsets); as :func:`structure` and :func:`c_vector`.
    """
    info = structure(G)
    n = len(info.hidden)
    max_hidden = check_int(max_hidden, "max_hidden", ge=0)
    check_limit(n, MAX_SUBSET_HIDDEN, "MAX_SUBSET_HIDDEN", "the number of hidden nodes")
    check_limit(n, max_hidden, "max_hidden", "the number of hidden nodes")
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
      ValueError: more than ``max_edges`` edges (``2^|E|`` sets), or more than ``MAX_BRUTEFORCE_EDGES``
        whatever ``max_edges`` says; as :func:`structure` and :func:`c_vector`.
    """
    info = structure(G)
    m = len(info.edges)
    max_edges = check_int(max_edges, "max_edges", ge=0)
    check_limit(m, MAX_BRUTEFORCE_EDGES, "MAX_BRUTEFORCE_EDGES", "the number of edges")
    check_limit(m, max_edges, "max_edges", "the number of edges")
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
    edges). Returns ``(G', theta')``; the network function is unchanged (the removed edges carry 0).
    Raises as :func:`support_components`. Source: the theorem on singular points (cut-off sub-networks)."""
    comps = support_components(G, theta)
    drop = set().union(*comps) if comps else set()
    H = G.copy()
    H.remove_nodes_from(drop)
    return H, {e: theta[e] for e in H.edges}
