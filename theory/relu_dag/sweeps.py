"""Random-DAG sweeps behind the exact relu_dag claims: each returns how many cases satisfy a statement of
Nurisso et al. (ICLR 2026, arXiv 2602.00693), on its own cases and on cases just outside its hypothesis.

Every sweep draws from the ``numpy`` generator it is given (so a caller shifts the seed to replicate on
fresh graphs) and returns plain integers and floats; deciding is the caller's business.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np

from theory.relu_dag.balance import balance, feasible_point
from theory.relu_dag.checks import (bottleneck_edges, errata_chain, lp_point, no_bottleneck_dag, orthant_classes,
                                    per_node_forced_edges, per_node_rank)
from theory.relu_dag.components import (_linprog, count_components, forced_edges, forced_edges_bruteforce,
                                        forced_edges_lp, sample_point)
from theory.relu_dag.graphs import (_c_exact, c_vector, chain_graph, dl1_graph, dl1_theta, layered_graph, random_dag,
                                    structure, theta_dict, worked_examples)
from theory.relu_dag.init import init_stds
from theory.relu_dag.singular import (
    exact_jacobian_rank,
    has_singular_points_bruteforce,
    is_singular,
    jacobian_rank,
    numerical_rank,
    singular_subnetworks,
)


def feasibility_sweep(rng, n: int = 300, n_ctl: int = 100) -> dict:
    """Proposition 3 (``H_G(c)`` non-empty) on ``n`` random DAGs (``random_dag`` with 1-3 inputs, 1-14 hidden
    nodes, 1-2 outputs, edge probability ``p ~ U[0.1, 0.6)``) with ``c`` exact rationals ``k / q`` (``k`` in
    -5..5, ``q`` in 1..3) on even cases and ``N(0, 3^2)`` floats on odd ones: the flow certificate of :func:`feasible_point` checked with Fractions, a certified HiGHS point,
    and the float balance of ``theta = sqrt(s)``. Controls on the first ``n_ctl`` graphs: one more
    constrained node on no input-to-output path (an input with ``c = +1``, an output with ``c = -1``).

    Returns ``cases``, ``certified_exactly``, ``lp_feasible``, ``float_balance_rel_err`` and ``controls``:
    ``{"input"|"output": (#LP-feasible, #certified infeasible by the Farkas ray e_node)}``.
    """
    n_exact, n_lp, worst, graphs = 0, 0, 0.0, []
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
        n_exact += all(x >= 0 for x in s.values()) and all(
            sum((s[e] for e in G.in_edges(v)), Fraction(0)) - sum((s[e] for e in G.out_edges(v)),
                                                                  Fraction(0)) == cv
            for v, cv in zip(info.hidden, cex))
        n_lp += lp_point(info.B, c_vector(G, c, info)) is not None
        b = balance(G, {e: math.sqrt(x) for e, x in s.items()})
        worst = max(worst, max((abs(b[v] - float(q)) / (1 + abs(float(q))) for v, q in zip(info.hidden, cex)),
                               default=0.0))
        graphs.append((info, c_vector(G, c, info)))
    ctl = {}
    for side, sign in (("input", 1), ("output", -1)):
        n_feas, n_ray = 0, 0
        for info, cv in graphs[:n_ctl]:
            node = info.inputs[0] if side == "input" else info.outputs[0]
            row = np.array([(1 if v == node else 0) - (1 if u == node else 0) for (u, v) in info.edges])
            B2, c2 = np.vstack([info.B, row[None, :]]), np.append(cv, float(sign))
            n_feas += lp_point(B2, c2) is not None
            y = np.zeros(len(c2), dtype=np.int64)
            y[-1] = sign                      # Farkas: B2^T y <= 0 and c2 . y > 0 (exact integers)
            n_ray += bool(np.all(B2.T @ y <= 0) and sign * y[-1] > 0)
        ctl[side] = (n_feas, n_ray)
    return {"cases": n, "certified_exactly": n_exact, "lp_feasible": n_lp, "float_balance_rel_err": worst,
            "controls": ctl}


def connectivity_sweep(rng, n_nb: int = 150, n_lp: int = 40, n_lay: int = 60, n_dl1: int = 80,
                       n_ctl: int = 60) -> dict:
    """Theorem 1's corollaries as counts: DAGs without bottleneck nodes connected (and no forced edge by LP
    on the first ``n_lp``), layered nets with widths >= 2 connected, d-l-1 nets (d >= 2) with
    ``2^#{k: c_k < 0}`` components. Controls (``n_ctl`` each): one added in-bottleneck, one hidden layer of
    width 1, d = 1. Returns each count under its name (``*_cases`` beside it).

    Families: no-bottleneck DAGs with 2-3 inputs, 1-12 hidden nodes, 2-3 outputs, ``p ~ U[0.1, 0.5)``, ``c``
    in -3..3 (even cases) or ``N(0, 3^2)`` (odd); layered nets of 3-5 layers of widths 2-4, ``c ~ N(0, 3^2)``;
    d-l-1 nets with d in 2..5, l in 1..8, ``c`` in -2..2 (odd) or ``N(0, 1)`` (even). Controls: a hidden
    node ``hb`` fed by ``x0`` alone and feeding ``y0`` and ``y1``; 3-4 layers of widths 2-4 with a width-1
    layer inserted among the hidden ones; d = 1 with l in 1..8 and ``c ~ N(0, 1)``."""
    def c_of(info, i):
        return ({v: float(rng.normal(scale=3)) for v in info.hidden} if i % 2 else
                {v: int(rng.integers(-3, 4)) for v in info.hidden})

    def nb_graph():
        return no_bottleneck_dag(rng, int(rng.integers(2, 4)), int(rng.integers(1, 13)), int(rng.integers(2, 4)),
                                 float(rng.uniform(0.1, 0.5)))

    def dl1_ok(d, cv):
        return count_components(dl1_graph(d, len(cv)), {(1, k): float(x) for k, x in enumerate(cv)}) == 2 ** int(
            np.sum(np.asarray(cv) < 0))

    out = {"no_bottleneck_connected": 0, "no_bottleneck_lp_no_forced": 0, "layered_connected": 0,
           "dl1_count_matches": 0, "bottleneck_added_connected": 0, "width1_layer_connected": 0,
           "d1_count_matches": 0}
    for i in range(n_nb):
        G = nb_graph()
        c = c_of(structure(G), i)
        out["no_bottleneck_connected"] += count_components(G, c) == 1
        if i < n_lp:
            out["no_bottleneck_lp_no_forced"] += not forced_edges_lp(G, c)
    for _ in range(n_lay):
        G = layered_graph([int(w) for w in rng.integers(2, 5, size=int(rng.integers(3, 6)))])
        c = {v: float(rng.normal(scale=3)) for v in structure(G).hidden}
        out["layered_connected"] += count_components(G, c) == 1
    for i in range(n_dl1):
        d, l = int(rng.integers(2, 6)), int(rng.integers(1, 9))
        out["dl1_count_matches"] += dl1_ok(d, rng.integers(-2, 3, size=l) if i % 2 else rng.normal(size=l))
    for i in range(n_ctl):   # one added in-bottleneck: a hidden node with a single in-edge
        G = nb_graph()
        G.add_edges_from([("x0", "hb"), ("hb", "y0"), ("hb", "y1")])
        out["bottleneck_added_connected"] += count_components(G, c_of(structure(G), i)) == 1
    for _ in range(n_ctl):   # layered, one intermediate layer of width 1
        widths = [int(w) for w in rng.integers(2, 5, size=int(rng.integers(3, 5)))]
        widths.insert(int(rng.integers(1, len(widths))), 1)
        G = layered_graph(widths)
        out["width1_layer_connected"] += count_components(
            G, {v: float(rng.normal(scale=3)) for v in structure(G).hidden}) == 1
    for _ in range(n_ctl):   # d = 1 input: hidden nodes are in-bottlenecks too
        l = int(rng.integers(1, 9))
        out["d1_count_matches"] += dl1_ok(1, rng.normal(size=l))
    out.update(no_bottleneck_cases=n_nb, lp_cases=n_lp, layered_cases=n_lay, dl1_cases=n_dl1, control_cases=n_ctl)
    return out


def cut_off_point(G, info, c, C) -> np.ndarray:
    """A point of ``H_G(c)`` with every edge across the boundary of ``C`` at 0 (the LP of the existence
    criterion for singular points), as ``sqrt(s)`` (``[|E|]``)."""
    bounds = [(0.0, 0.0) if ((u in C) != (v in C)) else (0.0, None) for (u, v) in info.edges]
    res = _linprog(np.zeros(len(info.edges)), info.B.astype(float), c_vector(G, c, info), bounds)
    return np.sqrt(np.clip(res.x, 0, None))


def singular_sweep(rng, n_rank: int = 200, n_ex: int = 60, n_bf: int = 25, n_init: int = 100, n_sm: int = 40,
                   n_ng: int = 20) -> dict:
    """The theorem on singular points as counts. ``rank_formula_agrees`` (``|V_hid| - kappa`` = exact rank =
    SVD rank on sparse random points) and, for the control, ``per_node_rank_agrees`` (the per-node rule);
    ``existence_lp_agrees`` (the cut-off LP's point is singular, or 10 sampled points are not);
    ``existence_vs_bruteforce`` and ``bruteforce_cases_singular`` (against every zero pattern, <= 8 edges);
    ``random_inits_nonsingular`` and, for the control, ``masked_inits_nonsingular`` (Bernoulli(1/2) zeros);
    ``generic_c_smooth`` and ``dims_ok`` (full rank at 5 points, dimension |E| - |V_hid|); for the control,
    ``nongeneric_smooth`` (c with a cut-off set of sum 0, its LP point included). ``min_singular_value_gap``:
    the smallest ``s_r / s_(r+1)`` at the SVD rank. Case counts under ``n_*``.

    Families (``random_dag(inputs, hidden, outputs, p)``): rank (2, 1-9, 2, ``U[0.2, 0.6)``) with Gaussian
    weights zeroed with probability ``U[0.3, 1)``; existence (2, 1-6, 2, ``U[0.2, 0.6)``), ``c`` in -1..1;
    brute force (1-2, 1-4, 1-2, 0.3) with at most 8 edges, ``c`` in -1..1; initialisations (3, 2-12, 2,
    0.3); generic ``c ~ N(0, 1)`` and the non-generic control (``c`` in -1..1) on (2, 2-8, 2, 0.35). Sampled
    points (:func:`sample_point`) use one LP vertex each, with random signs for generic ``c``."""
    out = dict.fromkeys(("rank_formula_agrees", "per_node_rank_agrees", "existence_lp_agrees",
                         "cases_with_singular_points", "existence_vs_bruteforce", "bruteforce_cases_singular",
                         "random_inits_nonsingular", "masked_inits_nonsingular", "generic_c_smooth",
                         "nongeneric_smooth"), 0)
    min_gap, dims = np.inf, set()
    for _ in range(n_rank):
        G = random_dag(rng, 2, int(rng.integers(1, 10)), 2, float(rng.uniform(0.2, 0.6)))
        m = G.number_of_edges()
        th = theta_dict(G, rng.normal(size=m) * (rng.random(m) < rng.uniform(0.3, 1.0)))
        rex = exact_jacobian_rank(G, th)
        rnum, sv = numerical_rank(G, th)
        out["rank_formula_agrees"] += jacobian_rank(G, th) == rex == rnum
        out["per_node_rank_agrees"] += per_node_rank(G, th) == rex == rnum
        if 0 < rnum < len(sv):
            min_gap = min(min_gap, float(sv[rnum - 1] / max(sv[rnum], 1e-300)))
    for _ in range(n_ex):    # existence iff LP: integer c with zeros on small DAGs
        G = random_dag(rng, 2, int(rng.integers(1, 7)), 2, float(rng.uniform(0.2, 0.6)))
        info = structure(G)
        c = {v: int(rng.integers(-1, 2)) for v in info.hidden}
        subs = singular_subnetworks(G, c)
        if subs:
            out["cases_with_singular_points"] += 1
            th = theta_dict(G, cut_off_point(G, info, c, subs[0]))
            ok = is_singular(G, th) and max(abs(balance(G, th)[v] - c[v]) for v in info.hidden) < 1e-9
        else:
            ok = not any(is_singular(G, theta_dict(G, sample_point(G, c, rng=rng, n_vertices=1))) for _ in range(10))
        out["existence_lp_agrees"] += ok
    k = 0
    while k < n_bf:          # existence against brute force over zero patterns
        G = random_dag(rng, int(rng.integers(1, 3)), int(rng.integers(1, 5)), int(rng.integers(1, 3)), 0.3)
        if G.number_of_edges() > 8:
            continue
        c = {v: int(rng.integers(-1, 2)) for v in structure(G).hidden}
        k += 1
        brute = has_singular_points_bruteforce(G, c)
        out["existence_vs_bruteforce"] += bool(singular_subnetworks(G, c)) == brute
        out["bruteforce_cases_singular"] += brute
    for _ in range(n_init):  # Gaussian initialisations; control: the same draw with exact zeros
        G = random_dag(rng, 3, int(rng.integers(2, 13)), 2, 0.3)
        th = theta_dict(G, rng.normal(size=G.number_of_edges()))
        out["random_inits_nonsingular"] += (not singular_subnetworks(G, balance(G, th))) and not is_singular(G, th)
        thm = {e: x * float(rng.random() < 0.5) for e, x in th.items()}
        out["masked_inits_nonsingular"] += (not singular_subnetworks(G, balance(G, thm))) and not is_singular(G, thm)
    for _ in range(n_sm):    # generic c: points of H (LP vertices included) at full rank
        G = random_dag(rng, 2, int(rng.integers(2, 9)), 2, 0.35)
        info = structure(G)
        c = {v: float(rng.normal()) for v in info.hidden}
        pts = [sample_point(G, c, rng.choice([-1.0, 1.0], len(info.edges)), rng, n_vertices=1) for _ in range(5)]
        ranks = [numerical_rank(G, theta_dict(G, p))[0] for p in pts]
        out["generic_c_smooth"] += all(r == len(info.hidden) for r in ranks) and not singular_subnetworks(G, c)
        dims.add(len(info.edges) - len(info.hidden) == len(info.edges) - min(ranks))
    k = 0
    while k < n_ng:          # control: non-generic c, the LP's cut-off point among the points looked at
        G = random_dag(rng, 2, int(rng.integers(2, 9)), 2, 0.35)
        info = structure(G)
        c = {v: int(rng.integers(-1, 2)) for v in info.hidden}
        subs = singular_subnetworks(G, c)
        if not subs:
            continue
        k += 1
        pts = [cut_off_point(G, info, c, set(subs[0]))] + [sample_point(G, c, rng=rng, n_vertices=1)
                                                            for _ in range(4)]
        out["nongeneric_smooth"] += all(numerical_rank(G, theta_dict(G, p))[0] == len(info.hidden) for p in pts)
    out.update(min_singular_value_gap=min_gap, dims_ok=dims == {True}, n_rank=n_rank, n_ex=n_ex, n_bf=n_bf,
               n_init=n_init, n_sm=n_sm, n_ng=n_ng)
    return out


def component_count_sweep(rng, n_rand: int = 80, n_timed: int = 10) -> dict:
    """Theorem 1 made exact (``#components = 2^#forced``) as counts. ``table_rows_matching`` of
    ``n_table`` worked examples where closure, LP and brute force give the tabulated forced edges;
    ``random_dags_3_methods_agree`` of ``n_rand`` random DAGs; on 10 small cases (chains, 2-1-1 and 1-2-1
    rows, the skip chain with non-local forcing) the independent count ``orthant_classes``
    (:func:`orthant_classes`) beside ``predicted_classes`` (``2^#forced``), ``wrong_joins``,
    ``wrong_splits`` and ``path_residual``; ``wrong_rule_counts`` (``2^#edges`` of the per-node and the
    every-bottleneck rules, for controls) on the same cases; ``max_seconds_20_hidden`` of
    :func:`count_components` over ``n_timed`` DAGs with 20 hidden nodes (wall clock).

    Families: random DAGs with 1-3 inputs, 1-9 hidden nodes, 1-2 outputs, ``p ~ U[0.1, 0.5)``, ``c ~ N(0, 1)``
    (odd cases) or in -2..2 (even); timed DAGs with 3 inputs, 20 hidden nodes, 2 outputs,
    ``p ~ U[0.08, 0.3)``."""
    ex = worked_examples()
    table_ok = sum(forced_edges(G, c) == forced_edges_lp(G, c) == forced_edges_bruteforce(G, c) == fe
                   for _, G, c, fe in ex)
    agree = 0
    for i in range(n_rand):
        G = random_dag(rng, int(rng.integers(1, 4)), int(rng.integers(1, 10)), int(rng.integers(1, 3)),
                       float(rng.uniform(0.1, 0.5)))
        info = structure(G)
        c = ({v: float(rng.normal()) for v in info.hidden} if i % 2 else
             {v: int(rng.integers(-2, 3)) for v in info.hidden})
        agree += forced_edges(G, c) == forced_edges_lp(G, c) == forced_edges_bruteforce(G, c)
    cases = [(chain_graph(2), {"h1": 0, "h2": 1}), (chain_graph(2), {"h1": -1, "h2": 1}),
             (chain_graph(2, skip=True), {"h1": 0, "h2": 1}), (chain_graph(2), {"h1": 0, "h2": 0})]
    cases += [(G, c) for name, G, c, _ in ex if name in ("2-1-1", "1-2-1")][:5]
    cases.append((errata_chain(), {"h1": -0.3, "h2": 0.5, "h3": -0.1}))  # non-local forcing
    orth, pred, wj, ws, resid = [], [], 0, 0, 0.0
    for G, c in cases:
        k, a, b, res = orthant_classes(G, c, rng)
        orth.append(k)
        pred.append(count_components(G, c))
        wj, ws, resid = wj + a, ws + b, max(resid, res)
    wrong = {name: [2 ** len(rule(G, c)) for G, c in cases]
             for name, rule in (("per_node", per_node_forced_edges), ("bottleneck", bottleneck_edges))}
    tmax = 0.0
    for _ in range(n_timed):
        G = random_dag(rng, 3, 20, 2, float(rng.uniform(0.08, 0.3)))
        c = {v: float(rng.normal()) for v in structure(G).hidden}
        t0 = time.perf_counter()
        count_components(G, c)
        tmax = max(tmax, time.perf_counter() - t0)
    return {"table_rows_matching": table_ok, "n_table": len(ex), "random_dags_3_methods_agree": agree,
            "n_rand": n_rand, "orthant_classes": orth, "predicted_classes": pred, "wrong_joins": wj,
            "wrong_splits": ws, "path_residual": resid, "wrong_rule_counts": wrong, "max_seconds_20_hidden": tmax}


def dl1_count_agreement(rng, n_draw: int = 60) -> int:
    """On ``n_draw`` Kaiming-normal draws of d-l-1 nets (d in 2..4, l in 1..5), how often
    ``count_components > 1`` agrees with the closed-form event "some c_k < 0"."""
    agree = 0
    for _ in range(n_draw):
        d, l = int(rng.integers(2, 5)), int(rng.integers(1, 6))
        s_in, s_out = init_stds(d, l, "kaiming")
        W, a = s_in * rng.normal(size=(l, d)), s_out * rng.normal(size=l)
        G = dl1_graph(d, l)
        disc = count_components(G, balance(G, theta_dict(G, np.asarray(dl1_theta(W, a))))) > 1
        agree += disc == bool(np.any((W**2).sum(1) < a**2))
    return agree
