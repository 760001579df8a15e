"""Polynomial rewards (``polynomial``, ``poly_degrees``): how often a BTL fit of each degree reverses a
certified Pareto pair, on random instances and for every degree Theorem 4.1 covers."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import social_choice as sc


@dataclasses.dataclass(frozen=True)
class PolynomialParams:
    """Random 2-D instances with one constructed Pareto pair, BTL rewards of each degree."""

    n_instances: int = param(1000, ge=10, smoke=64)
    n_base: int = param(12, ge=2, doc="random candidates before the shifted copy (> 9 for degree 3)")
    box: float = param(2.0, gt=0)
    eps: float = param(0.05, gt=0, doc="length of the shift of the copy")
    p_major: float = param(0.9, gt=0.5, lt=1, doc="weight of voter (1, 0); (0, 1) has the rest")
    degrees: tuple[int, ...] = param((1, 2, 3), ge=1)

    def __post_init__(self):
        if 1 not in self.degrees:
            raise ValueError("degrees must include 1 (the linear reward the others are compared with)")


def poly_instance(key, p: PolynomialParams):
    """One instance: the fits of every degree and their certified Pareto-pair verdicts. The degrees'
    features are zero-padded to the largest one and fitted under one vmap (one compiled graph)."""
    X, j = sc.random_po_instance(key, p.n_base, p.box, p.eps)
    n = X.shape[0]
    pairs = sc.pair_index(n)
    V = jnp.eye(2)
    w = jnp.array([p.p_major, 1 - p.p_major])
    D = X[pairs[:, 0]] - X[pairs[:, 1]]
    S = D @ V.T
    plus, minus = (S > 0).astype(X.dtype) @ w, (S < 0).astype(X.dtype) @ w
    una_ab = jnp.all(S > 0, axis=1)  # every voter prefers a (first) to b
    una_ba = jnp.all(S < 0, axis=1)
    contested = (plus > 0) & (minus > 0)
    pmax = len(sc.monomial_exponents(2, max(p.degrees)))
    Zps, frees = [], []
    for deg in p.degrees:
        F = sc.lift(X, deg)
        Zp = F[pairs[:, 0]] - F[pairs[:, 1]]
        Zps.append(jnp.pad(Zp, ((0, 0), (0, pmax - Zp.shape[1]))))
        frees.append(np.arange(pmax) < Zp.shape[1])
    Zps, frees = jnp.stack(Zps), jnp.asarray(np.stack(frees))
    W = jnp.concatenate([plus, minus])

    def fit(Zp, free):
        Z = jnp.concatenate([Zp, -Zp])
        zc = Zp * contested[:, None]
        G = zc.T @ zc + jnp.diag((~free).astype(X.dtype))
        ok = sc.pd_above(G, 1e-9 * jnp.trace(G))
        theta, _, _ = sc.newton_fit(Z, W, "btl", 60, free=free)
        cert = sc.fit_certificate(Z, W, theta, "btl", free=free)
        m = Zp @ theta
        zn = jnp.linalg.norm(Zp, axis=1)
        slack = cert["radius"] * zn + 8 * sc.EPS * (jnp.abs(Zp) @ jnp.abs(theta))
        viol = (una_ab & (m < -slack)) | (una_ba & (m > slack))
        unsure = (una_ab | una_ba) & (jnp.abs(m) <= slack)
        valid = ok & jnp.isfinite(cert["radius"])
        # the constructed pair (j, copy) is row k of the row-major pair list
        k = j * n - j * (j + 1) // 2 + (n - 1 - j - 1)
        return {"valid": valid, "violated": valid & jnp.any(viol), "uncertain": valid & jnp.any(unsure),
                "pair_margin": jnp.where(valid, -m[k], jnp.nan),  # r(copy) - r(original)
                "pair_violated": valid & viol[k]}

    res = jax.vmap(fit)(Zps, frees)
    out = {"X": X, "copy_of": j}
    for i, deg in enumerate(p.degrees):
        out.update({f"{name}_{deg}": v[i] for name, v in res.items()})
    return out


def run_polynomial(p: PolynomialParams, ctx: cli.Context) -> dict:
    """Arrays: ``degrees [D]``; per instance and degree ``valid, violated, uncertain, pair_violated
    [N, D]`` (bool: identifiable and certified; some Pareto pair reversed with a certified margin; a
    Pareto pair within its certificate of a tie; the constructed pair reversed), ``pair_margin [N, D]``
    (r(copy) - r(original)); ``instances [N, n, 2]``, ``copy_of [N]``; ``ex7_margin [D]`` (r(c') - r(c)
    on ex7), ``ex7_radius [D]``, ``ex7_rank [D]`` (dimension of the lifted differences: 6 = n - 1 at
    degree 3 means the class is saturated there, the fit is the unrestricted BTL); ``example [D]``
    (first instance reversing a Pareto pair at that degree while the linear fit is certified Pareto
    optimal, -1 if none), refitted on the host: ``example_violations, example_min_margin,
    example_radius [D]`` at that degree and ``example_linear_violations, example_linear_uncertain,
    example_linear_min_margin [D]`` at degree 1 and ``example_unrestricted_violations,
    example_unrestricted_uncertain, example_unrestricted_min_margin [D]`` for the unrestricted reward
    (one score per candidate) (-1 / nan where there is no example); ex7 likewise: ``ex7_violations,
    ex7_uncertain, ex7_min_margin [D]``, ``ex7_unrestricted [2]`` (violations, uncertain) and
    ``ex7_unrestricted_min_margin``. Seeds (instances) are axis 0 of every
    per-instance array."""
    out = ctx.parts.get("sweep", lambda: {k: np.asarray(v) for k, v in runtime.map_seeds(
        lambda k: poly_instance(k, p), ctx.config.seed, p.n_instances, mesh=ctx.mesh).items()})
    degs = list(p.degrees)
    stack = lambda name: np.stack([out[f"{name}_{d}"] for d in degs], axis=1)
    valid, violated = stack("valid"), stack("violated")
    lin = degs.index(1)
    linear_ok = valid[:, lin] & ~violated[:, lin] & ~stack("uncertain")[:, lin]
    example = []
    for i in range(len(degs)):
        idx = np.nonzero(linear_ok & valid[:, i] & violated[:, i])[0]
        example.append(int(idx[0]) if idx.size else -1)
    ex = sc.ex7()
    a, b = ex.pareto_pair
    ex_m, ex_r, ex_rank, ex_cert = [], [], [], []
    for d in degs:
        f = sc.fit_reward_certified(ex.candidates, ex.voters, ex.weights, degree=d)
        F = sc.lift(ex.candidates, d)
        ex_m.append(float(f.theta @ (F[a] - F[b])))
        ex_r.append(f.radius)
        ex_rank.append(f.rank)
        ex_cert.append(certified_pareto(ex.candidates, ex.voters, ex.weights, d))
    ex_unr = certified_pareto_unrestricted(ex.candidates, ex.voters, ex.weights)
    # The first sweep example per degree, refitted and certified in float64 on the host, at its degree
    # and at degree 1 (where its fit is Pareto optimal by the choice of the example).
    Vs, ws = np.eye(2), np.array([p.p_major, 1 - p.p_major])
    blank = {"violations": -1, "uncertain": -1, "min_margin": np.nan, "radius": np.nan}
    hi, lo, unr = [], [], []
    for d, idx in zip(degs, example):
        X = out["X"][idx] if idx >= 0 and d != 1 else None
        hi.append(blank if X is None else certified_pareto(X, Vs, ws, d))
        lo.append(blank if X is None else certified_pareto(X, Vs, ws, 1))
        unr.append(blank if X is None else certified_pareto_unrestricted(X, Vs, ws))
    col = lambda rows, k: np.asarray([r[k] for r in rows])
    return {"degrees": np.asarray(degs), "valid": valid, "violated": violated,
            "uncertain": stack("uncertain"), "pair_violated": stack("pair_violated"),
            "pair_margin": stack("pair_margin"), "instances": out["X"], "copy_of": out["copy_of"],
            "ex7_margin": np.asarray(ex_m), "ex7_radius": np.asarray(ex_r), "ex7_rank": np.asarray(ex_rank),
            "ex7_violations": col(ex_cert, "violations"), "ex7_uncertain": col(ex_cert, "uncertain"),
            "ex7_min_margin": col(ex_cert, "min_margin"),
            "example": np.asarray(example), "example_violations": col(hi, "violations"),
            "example_min_margin": col(hi, "min_margin"), "example_radius": col(hi, "radius"),
            "example_linear_violations": col(lo, "violations"), "example_linear_uncertain": col(lo, "uncertain"),
            "example_linear_min_margin": col(lo, "min_margin"),
            "example_unrestricted_violations": col(unr, "violations"),
            "example_unrestricted_uncertain": col(unr, "uncertain"),
            "example_unrestricted_min_margin": col(unr, "min_margin"),
            "ex7_unrestricted": np.asarray([ex_unr["violations"], ex_unr["uncertain"]]),
            "ex7_unrestricted_min_margin": np.asarray(ex_unr["min_margin"])}


def certified_pareto_unrestricted(X, V, w) -> dict:
    """:func:`certified_pareto` for the unrestricted BTL reward (one score per candidate; theory
    ``unrestricted_rows``), the class the polynomial degrees tend to."""
    f = sc.fit_rows(sc.unrestricted_rows(X, V, w), "btl", check=False)
    E = np.eye(np.asarray(X).shape[0])
    margins = [f.margin(E[a] - E[b]) for a, b in sc.pareto_pairs(X, V)]
    return {"violations": sum(1 for m, c in margins if c and m < 0),
            "uncertain": sum(1 for m, c in margins if not c),
            "min_margin": min(m for m, _ in margins) if margins else np.nan, "radius": f.radius}


def certified_pareto(X, V, w, degree: int) -> dict:
    """The BTL reward of ``degree`` refitted in float64 with its certificate: ``violations`` (Pareto
    pairs reversed with a certified margin), ``uncertain`` (Pareto pairs within the certificate of a
    tie), ``min_margin`` (smallest r(a) - r(b) over Pareto pairs (a, b); nan when there is none) and the
    certified ``radius``."""
    f = sc.fit_reward_certified(X, V, w, degree=degree)
    F = sc.lift(X, degree)
    margins = [f.margin(F[a] - F[b]) for a, b in sc.pareto_pairs(X, V)]
    return {"violations": sum(1 for m, c in margins if c and m < 0),
            "uncertain": sum(1 for m, c in margins if not c),
            "min_margin": min(m for m, _ in margins) if margins else np.nan, "radius": f.radius}


@dataclasses.dataclass(frozen=True)
class PolyDegreesParams:
    """Theorem 4.1's layout per degree (theory ``theorem41_layout``), BTL rewards of that degree."""

    degrees: tuple[int, ...] = param((1, 2, 3, 4), ge=1, smoke=2)
    n_draws: int = param(24, ge=2, doc="draws per degree", smoke=4)
    delta: float = param(0.02, gt=0, doc="|c1 - c0|")
    p_major: float = param(0.9, gt=0.5, lt=1, doc="weight of voter (1, 0); (0, 1) has the rest")


def theorem41_draw(X, pair, V, w, degree: int) -> dict:
    """One layout: the degree-``degree`` BTL fit and the unrestricted BTL fit (one score per candidate),
    each refitted in float64 with its certificate: the margin r(c1) - r(c0) of the constructed Pareto
    pair, whether its reversal is certified, certified reversals and uncertain Pareto pairs over all
    Pareto pairs, and certified reversals of majority pairs (PMC). ``valid`` False when the contested
    rows do not identify the fit (no finite or no unique MLE): nothing else is then recorded."""
    a, b = pair
    blank = {"valid": False, "pair_margin": np.nan, "pair_reversed": False, "pair_uncertain": False,
             "po_reversed": 0, "po_uncertain": 0, "pmc_reversed": 0, "unr_pair_margin": np.nan,
             "unr_po_reversed": 0, "unr_po_uncertain": 0}
    try:
        f = sc.fit_reward_certified(X, V, w, degree=degree)
    except ValueError:
        return blank
    if not np.isfinite(f.radius) or f.rank < sc.lift(X, degree).shape[1]:
        return blank
    F = sc.lift(X, degree)
    fu = sc.fit_rows(sc.unrestricted_rows(X, V, w), "btl", check=False)
    E = np.eye(X.shape[0])
    pp = sc.pareto_pairs(X, V)
    M = sc.majority_matrix(X, V, w)
    maj = [(i, j) for i, j in zip(*np.nonzero(M > 0.5))]
    m, c = f.margin(F[a] - F[b])
    mg = [f.margin(F[i] - F[j]) for i, j in pp]
    mm = [f.margin(F[i] - F[j]) for i, j in maj]
    mu = [fu.margin(E[i] - E[j]) for i, j in pp]
    return {"valid": True, "pair_margin": m, "pair_reversed": bool(c and m < 0), "pair_uncertain": not c,
            "po_reversed": sum(1 for x, ok in mg if ok and x < 0), "po_uncertain": sum(1 for _, ok in mg if not ok),
            "pmc_reversed": sum(1 for x, ok in mm if ok and x < 0),
            "unr_pair_margin": fu.margin(E[a] - E[b])[0],
            "unr_po_reversed": sum(1 for x, ok in mu if ok and x < 0),
            "unr_po_uncertain": sum(1 for _, ok in mu if not ok)}


def run_poly_degrees(p: PolyDegreesParams, ctx: cli.Context) -> dict:
    """Arrays ``[N, D]`` (axis 0: draws, independent seeds; axis 1: ``degrees [D]``): ``valid``,
    ``pair_margin`` (r(c1) - r(c0), c1 the Pareto-preferred), ``pair_reversed`` (certified),
    ``pair_uncertain``, ``po_reversed`` and ``po_uncertain`` (over all Pareto pairs), ``pmc_reversed``
    (majority pairs reversed, certified; the majority ranking is voter (1, 0)'s, induced by theta = x),
    and for the unrestricted BTL fit on the same layout ``unr_pair_margin``, ``unr_po_reversed``,
    ``unr_po_uncertain``. Draw j of degree index i uses ``fold_in(seed_key(seed, j), i)``."""
    V, w = np.eye(2), np.array([p.p_major, 1 - p.p_major])
    cols = []
    for i, deg in enumerate(p.degrees):
        def piece(i=i, deg=deg):
            out = []
            for j in runtime.tracked(range(p.n_draws), f"degree {deg}", unit="draw"):
                X, pair = sc.theorem41_layout(jax.random.fold_in(runtime.seed_key(ctx.config.seed, j), i), deg,
                                              p.delta)
                out.append(theorem41_draw(X, pair, V, w, deg))
            return {k: np.asarray([r[k] for r in out]) for k in out[0]}

        cols.append(ctx.parts.get(f"degree_{deg}", piece))
    out = {k: np.stack([c[k] for c in cols], axis=1) for k in cols[0]}
    out["degrees"] = np.asarray(p.degrees)
    ctx.summary.update({f"degree_{d}_pair_reversed": int(out["pair_reversed"][:, i].sum())
                        for i, d in enumerate(p.degrees)})
    return out
