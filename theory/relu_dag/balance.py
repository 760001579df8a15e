"""The balance vector ``c = B~ theta^2`` (conservation law, Definition 1), exact feasible points of
``P(c)``, the symbolic conservation check, and the exact flow on the chain example."""

from __future__ import annotations

from fractions import Fraction

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import sympy as sp
from scipy.optimize import brentq

from theory.numerics import check_limit, check_real
from theory.relu_dag.graphs import _c_exact, _mapping_values, structure

MAX_PATHS = 256  # input-to-output paths of a symbolic conservation check (L has ~ paths^2 terms)


def balance(G, theta) -> dict:
    """The balance vector ``c = B~ theta^2``: hidden node -> (sum of squared in-weights) - (sum of squared
    out-weights). Paper Definition 1.

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

    Constructive proof of Proposition 3 (proved by network flows in App. A.3): ``c_v > 0`` is routed
    along an input -> v path, ``c_v < 0`` along a v -> output path; intermediate hidden nodes see equal
    in- and outflow.

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


def symbolic_conservation(G, active) -> list:
    """``B~(theta * grad L)`` computed symbolically (sympy) on one activation pattern: hidden nodes in
    ``active`` are the identity, the others output 0; ``L = sum_o (f_o - y_o)^2 / 2`` for symbolic inputs
    ``x`` and targets ``y``. Returns the expanded entries (all 0 when the conservation law holds), one per
    hidden node.

    Raises:
      ValueError: more than ``MAX_PATHS`` input-to-output paths through active nodes (the expansion of
        ``L`` has about their square in terms), or as :func:`structure`.
    Source: the conservation law ``<<theta, grad L>>_v = 0`` (paper Def. 1; Du, Hu & Lee 2018).
    """
    info = structure(G)
    paths = {v: 1 for v in info.inputs}
    for v in info.topo:
        if v not in paths:
            through = v in info.outputs or v in active
            paths[v] = sum(paths[u] for u in G.predecessors(v)) if through else 0
    check_limit(sum(paths[w] for w in info.outputs), MAX_PATHS, "MAX_PATHS",
                "the number of input-to-output paths through active nodes")
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


def chain_law_G(u):
    """``G(u) = 1/u - ln(1 + 1/u)``: along gradient flow on the chain example (derived
    here; an exact test), ``G(u(t)) = G(u0) + 2t`` with ``u = theta_1^2``. ``u > 0`` (array or scalar,
    numpy)."""
    return 1.0 / u - np.log1p(1.0 / u)


def chain_law_u(t, u0: float) -> np.ndarray:
    """``u(t)`` solving ``G(u(t)) = G(u0) + 2t`` (``brentq``), the exact trajectory of the chain example.

    Args: t: times (scalar or array, finite); u0 > 0 finite. Returns ``[len(t)]`` float64.
    Raises: ValueError / TypeError: a non-finite ``t``, or ``u0`` not a finite real > 0.
    Source: our own derivation (not in the paper), a closed form of gradient flow on ``H_G(c)``. The root is
    found to relative precision (``rtol`` 4 eps, no absolute floor): u falls like 1/t, so an absolute
    tolerance would leave nothing of u at long times.
    """
    u0 = check_real(u0, "u0", gt=0)
    if not np.all(np.isfinite(np.asarray(t, np.float64))):
        raise ValueError("t must be finite")
    target = chain_law_G(u0) + 2.0 * np.asarray(t, np.float64)
    return np.array([brentq(lambda u, g=g: chain_law_G(u) - g, 1e-300 if g > 1e3 else 1e-12, u0 * (1 + 1e-12),
                            xtol=1e-300, rtol=4 * np.finfo(float).eps)
                     if g > chain_law_G(u0) else u0 for g in np.atleast_1d(target)])
