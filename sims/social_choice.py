"""Simulations behind the linear social choice figures (Hollender & Kraiczy, ICLR 2026; Ge et al.,
NeurIPS 2024), with ``theory.social_choice``.

Experiments (``paper_configs/social_choice_*.yaml``):

- ``ge_instance``: Ge's six-candidate construction (sign slip fixed): the BTL and exponential optima with
  their certified margins on the Pareto pair (c', c), the exact hinge infima, the rankings and the PMC
  ranking.
- ``coverage``: (a) N uniformly sampled comparisons labelled by every voter, seeds sharded over devices:
  the angle between the BTL fit and the uniform-coverage direction, and whether the fit lies in the
  voters' cone, against N; draws with no finite MLE are refused, not fitted. (b) the coverage
  dose-response on the 3-pair counterexample: the optimum as a share alpha of uniform coverage is
  mixed in, and the two thresholds (Pareto pair fixed; whole-space PO).
- ``polynomial``: random instances (a candidate copied and shifted into the positive quadrant, so both
  voters prefer the copy), BTL rewards of each degree, seeds sharded over devices: how often the fit
  reverses a Pareto pair (certified), per degree; plus the worked instance ex7 (a Pareto pair that
  degree 2 reverses).
"""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import social_choice as sc

# ---------------------------------------------------------------------------------------------------
# ge_instance
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class GeParams:
    """Ge's construction: voter ``voter`` (share p) and (-1, 0); candidates spread by eps and delta."""

    p: float = param(0.6, gt=0.5, lt=1)
    eps: float = param(0.01, gt=0)
    delta: float = param(2.0, gt=0)
    voter: tuple[float, ...] = param((1.0, 1.0))
    hinge_counts: tuple[int, ...] = param((3, 1), ge=0)
    hinge_eps: str = param("1/100", doc="exact rational, e.g. 1/100")
    hinge_delta: str = param("2", doc="exact rational")
    control_eps: float = param(0.05, gt=0, doc="eps at which BTL and exp are Pareto-correct")
    control_hinge_counts: tuple[int, ...] = param((3, 2, 2, 1), ge=0,
                                                  doc="hinge counts (n1, n2) pairs with p <= 2/3 (no certificate)")
    variants: tuple[float, ...] = param((0.75, 0.1, 0.5, 1.0, 3.0, 0.9, 0.2, 0.5, 1.0, 3.0,
                                         0.75, 0.01, 2.0, 1.0, 1.0, 0.75, 0.1, 2.0, 1.0, 1.0),
                                        doc="further (p, eps, delta, voter_x, voter_y) rows where BTL violates")

    def __post_init__(self):
        if len(self.voter) != 2 or len(self.hinge_counts) != 2:
            raise ValueError("voter and hinge_counts need two entries")
        if len(self.control_hinge_counts) % 2 or len(self.variants) % 5:
            raise ValueError("control_hinge_counts needs pairs (n1, n2) and variants rows of 5 numbers "
                             "(p, eps, delta, voter_x, voter_y)")
        for k in ("hinge_eps", "hinge_delta"):
            # digits bounded before Fraction(), which takes unbounded time on "1e-1000000000"
            if not _RATIONAL.fullmatch(getattr(self, k).strip()):
                raise ValueError(f"{k} must be a rational like 1/100 or 0.01 (at most 40 digits a part), "
                                 f"got {getattr(self, k)!r}")
            try:
                positive = Fraction(getattr(self, k)) > 0
            except ZeroDivisionError:
                positive = False
            if not positive:
                raise ValueError(f"{k} must be a rational > 0, got {getattr(self, k)!r}")
        pairs = [self.hinge_counts] + [self.control_hinge_counts[i:i + 2]
                                       for i in range(0, len(self.control_hinge_counts), 2)]
        if not all(any(pair) for pair in pairs):
            raise ValueError("hinge_counts and each control_hinge_counts pair need a positive count")
        # the instances the run builds, checked by the theory now (one line) rather than mid-run (traceback)
        try:
            sc.ge_instance(self.p, self.eps, self.delta, self.voter)
            sc.ge_instance(eps=Fraction(self.hinge_eps), delta=Fraction(self.hinge_delta),
                           voter=tuple(Fraction(v) for v in self.voter), counts=self.hinge_counts, exact=True)
        except ValueError as e:
            raise ValueError(f"the instance of voter, eps, delta, hinge_* is refused by the theory: {e}") from None


_RATIONAL = re.compile(r"[+-]?\d{1,40}(/\d{1,40}|\.\d{1,40})?")


def ge_fits(p: float, eps: float, delta: float, voter) -> dict:
    """BTL and exponential fits on Ge's instance: theta, margin r(c') - r(c), certified radius, ranking,
    and ``violates``: (c', c) is unanimous and the fit ranks c above c' with a certified margin, so it
    violates Pareto optimality and pairwise majority consistency on that pair."""
    inst = sc.ge_instance(p, eps, delta, tuple(voter))
    a, b = inst.pareto_pair
    z = inst.candidates[a] - inst.candidates[b]
    unanimous = (a, b) in sc.pareto_pairs(inst.candidates, inst.voters)
    out = {}
    for loss in sc.SMOOTH_LOSSES:
        f = sc.fit_reward_certified(inst.candidates, inst.voters, inst.weights, loss=loss)
        m, certified = f.margin(z)
        pmc = sc.pmc_violations(inst.candidates, inst.voters, inst.weights, f.theta)
        po = sc.pareto_violations(inst.candidates, inst.voters, f.theta)
        out[loss] = {"theta": f.theta, "margin": m, "certified": certified, "radius": f.radius, "mu": f.mu,
                     "grad_norm": f.grad_norm, "ranking": sc.ranking_of(inst.candidates, f.theta),
                     "po_violations": po, "pmc_violations": pmc.violations, "pmc_ranking": pmc.ranking,
                     "violates": bool(unanimous and certified and m < 0 and (a, b) in po
                                      and (a, b) in pmc.violations)}
    return out


def run_ge(p: GeParams, ctx: cli.Context) -> dict:
    """Arrays: ``candidates [6, 2]``, ``voters [2, 2]``, ``weights [2]``, ``names [6]``,
    ``losses [3]`` (btl, hinge, exp), ``theta [3, 2]`` (hinge: an exactly optimal vertex),
    ``margin [3]`` (r(c') - r(c)), ``radius_smooth [2]`` (certified |theta - theta*| of BTL and exp),
    ``certified [3]``, ``violates [3]`` (BTL, exp: certified reversal of the unanimous pair (c', c),
    which is also a majority pair; hinge: constrained infimum > global infimum), ``rankings [3, 6]``,
    ``pmc_ranking [6]`` and ``pmc_feasible``, ``voter_ranking [6]`` (voter ``voter``'s ranking),
    ``pareto_pair [2]``, ``hinge_weights [2]``, ``hinge_inf [2]`` (global, constrained; floats),
    ``hinge_inf_exact [2]`` (the same as "p/q" strings), ``hinge_gap`` (float); controls:
    ``control_margin, control_certified, control_violates [2]`` (BTL, exp at ``control_eps``),
    ``control_hinge_counts [H, 2]`` with ``control_hinge_gap [H]`` and ``control_hinge_gap_exact [H]``;
    variants: ``variant_params [R, 5]`` (p, eps, delta, voter) with the BTL ``variant_margin [R]``,
    ``variant_certified [R]`` and ``variant_violates [R]``."""
    inst = sc.ge_instance(p.p, p.eps, p.delta, p.voter)
    fits = ge_fits(p.p, p.eps, p.delta, p.voter)
    he, hd = Fraction(p.hinge_eps), Fraction(p.hinge_delta)
    hinst = sc.ge_instance(eps=he, delta=hd, voter=tuple(Fraction(v) for v in p.voter),
                           counts=p.hinge_counts, exact=True)
    a, b = hinst.pareto_pair
    g, c = sc.hinge_certificate(hinst.candidates, hinst.voters, list(p.hinge_counts), (a, b))
    hrows = sc.comparison_rows(hinst.candidates, hinst.voters, np.array(
        [Fraction(int(k)) for k in p.hinge_counts], dtype=object), exact=True)
    hcert = sc.hinge_exact(hrows)
    htheta = np.array([float(t) for t in hcert.theta])
    hX = np.array([[float(v) for v in r] for r in hinst.candidates])
    hcounts = np.asarray(p.control_hinge_counts, int).reshape(-1, 2)
    gaps_h = []
    for counts in hcounts:
        gg, cc = sc.hinge_certificate(hinst.candidates, hinst.voters, [int(k) for k in counts], (a, b))
        gaps_h.append(cc - gg)
    ctrl = ge_fits(p.p, p.control_eps, p.delta, p.voter)
    rows = np.asarray(p.variants, np.float64).reshape(-1, 5)
    var = [ge_fits(r[0], r[1], r[2], (r[3], r[4]))["btl"] for r in rows]
    pmc_rank, pmc_feasible = sc.pmc_ranking(inst.candidates, inst.voters, inst.weights)
    ctx.summary.update({"hinge_global_inf": sc.jsonable_fraction(g),
                        "hinge_constrained_inf": sc.jsonable_fraction(c),
                        "hinge_gap": sc.jsonable_fraction(c - g)})
    thetas = np.stack([fits["btl"]["theta"], htheta, fits["exp"]["theta"]])
    return {
        "candidates": inst.candidates, "voters": inst.voters, "weights": inst.weights,
        "names": np.asarray(inst.names), "losses": np.asarray(["btl", "hinge", "exp"]),
        "theta": thetas,
        "margin": np.array([fits["btl"]["margin"], float(htheta @ (hX[a] - hX[b])), fits["exp"]["margin"]]),
        "radius_smooth": np.array([fits["btl"]["radius"], fits["exp"]["radius"]]),
        "certified": np.array([fits["btl"]["certified"], c > g, fits["exp"]["certified"]]),
        "violates": np.array([fits["btl"]["violates"], c > g, fits["exp"]["violates"]]),
        "rankings": np.array([fits["btl"]["ranking"], sc.ranking_of(hX, htheta), fits["exp"]["ranking"]]),
        "pmc_ranking": np.asarray(pmc_rank if pmc_rank is not None else [-1] * len(inst.names)),
        "pmc_feasible": np.asarray(bool(pmc_feasible)),
        "voter_ranking": np.asarray(sc.ranking_of(inst.candidates, inst.voters[0])),
        "pareto_pair": np.asarray(inst.pareto_pair), "hinge_weights": np.asarray(p.hinge_counts, float),
        "hinge_inf": np.array([float(g), float(c)]),
        "hinge_inf_exact": np.asarray([sc.jsonable_fraction(g), sc.jsonable_fraction(c)]),
        "hinge_gap": np.asarray(float(c - g)),
        "control_margin": np.array([ctrl["btl"]["margin"], ctrl["exp"]["margin"]]),
        "control_certified": np.array([ctrl["btl"]["certified"], ctrl["exp"]["certified"]]),
        "control_violates": np.array([ctrl["btl"]["violates"], ctrl["exp"]["violates"]]),
        "control_hinge_counts": hcounts,
        "control_hinge_gap": np.asarray([float(x) for x in gaps_h]),
        "control_hinge_gap_exact": np.asarray([sc.jsonable_fraction(x) for x in gaps_h]),
        "variant_params": rows, "variant_margin": np.array([v["margin"] for v in var]),
        "variant_certified": np.array([v["certified"] for v in var]),
        "variant_violates": np.array([v["violates"] for v in var]),
    }


# ---------------------------------------------------------------------------------------------------
# coverage
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CoverageParams:
    """Finite uniform samples (two voter families) and the coverage dose-response."""

    dim: int = param(3, ge=2)
    voters: tuple[float, ...] = param((1.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.6, 0.0, 0.8))
    weights: tuple[float, ...] = param((0.6, 0.3, 0.1), gt=0)
    narrow_dim: int = param(2, ge=2)
    narrow_voters: tuple[float, ...] = param((1.0, 0.0, 0.9961946980917455, 0.08715574274765817))
    narrow_weights: tuple[float, ...] = param((0.6, 0.4), gt=0)
    sample_sizes: tuple[int, ...] = param((50, 100, 300, 1000, 3000, 10000, 30000, 100000), ge=10)
    narrow_sample_sizes: tuple[int, ...] = param((50, 100, 300, 1000, 3000), ge=10)
    n_seeds: int = param(64, ge=2)
    constant_samples: int = param(2**18, ge=1024, doc="Monte Carlo draws for the predicted constant")
    dose_p: float = param(0.9, gt=0.5, lt=1)
    dose_s: float = param(0.01, gt=0)
    dose_alphas: int = param(41, ge=3, doc="alpha grid points, (i/(n-1))^2")
    dose_resolution: int = param(96, ge=16, doc="quadrature nodes per voter")
    dose_control_arcs: tuple[float, ...] = param((-90.0, 0.0, -90.0, 60.0),
                                                 doc="(lo, hi) degree pairs: coverage uniform on that arc only")

    def __post_init__(self):
        if len(self.dose_control_arcs) % 2 or not all(
                0 < hi - lo <= 180 for lo, hi in zip(self.dose_control_arcs[::2], self.dose_control_arcs[1::2])):
            raise ValueError(f"dose_control_arcs needs (lo, hi) degree pairs with 0 < hi - lo <= 180, got "
                             f"{self.dose_control_arcs}")
        for v, w, d, name in ((self.voters, self.weights, self.dim, ""),
                              (self.narrow_voters, self.narrow_weights, self.narrow_dim, "narrow_")):
            if len(v) != len(w) * d:
                raise ValueError(f"{name}voters needs {name}dim x len({name}weights) = {len(w) * d} numbers, "
                                 f"got {len(v)}")


def _bucket(n: int) -> int:
    """The padded sample count a size is computed at: small sizes share one compiled shape (1000)."""
    return max(n, 1000)


def _draw(key, N, d):
    """The N directions of one draw: the first N of ``_bucket(N)`` normalised Gaussians."""
    x = jax.random.normal(key, (_bucket(N), d))
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


def _fit_samples(key, N, V, w, theta0):
    """One draw of N uniform comparisons, the BTL fit from ``theta0``, and whether the contested rows
    span R^d (else the draw goes to the host to be refused or fitted there)."""
    x = _draw(key, N, V.shape[1])
    Z, W, contested = sc.sampled_rows_jax(x, V, w, n_used=N)
    zc = Z * contested[:, None]
    G = zc.T @ zc
    full = sc.pd_above(G, 1e-10 * jnp.trace(G))  # no LAPACK in vmapped code: see model.cholesky
    theta, gn, _ = sc.newton_fit(Z, W, "btl", 60, theta0)
    return {"theta": theta, "grad_norm": gn, "full_rank": full}


def finite_sample_sweep(V, w, sizes, n_seeds, seed, mesh, parts, tag) -> dict:
    """Angle to the limit direction and cone membership of BTL fits on N sampled comparisons: arrays
    ``[n_seeds, len(sizes)]`` (nan where refused) and the refusal mask. Seed s of size index j draws
    from ``fold_in(seed_key(seed, s), j)``."""
    V = np.asarray(V, np.float64)
    w = np.asarray(w, np.float64)
    u, rho = sc.btl_uniform_closed_form(V, w)
    S, J = n_seeds, len(sizes)
    angle, angle_v1, inside, margin = (np.full((S, J), np.nan) for _ in range(4))
    v1 = V[int(np.argmax(w))]
    refused = np.zeros((S, J))
    for j, N in enumerate(sizes):
        def piece(N=N, j=j):
            out = runtime.map_seeds(lambda k: _fit_samples(jax.random.fold_in(k, j), N, jnp.asarray(V),
                                                           jnp.asarray(w), jnp.asarray(rho * u)),
                                    seed, S, mesh=mesh)
            return {k: np.asarray(v) for k, v in out.items()}

        r = parts.get(f"{tag}_N{N}", piece)
        for s in range(S):
            th = r["theta"][s]
            if not r["full_rank"][s]:
                # Contested rows short of full rank: refuse the draw when it has no finite MLE,
                # otherwise fit it on the host.
                x = np.asarray(_draw(jax.random.fold_in(runtime.seed_key(seed, s), j), N, V.shape[1]))[:N]
                rows = sc.sampled_rows(x, V, w)
                if sc.separating_direction(rows.Z, rows.contested) is not None:
                    refused[s, j] = 1
                    continue
                th = sc.fit_rows(rows, "btl", check=False).theta
            angle[s, j] = sc.angle_deg(th, u)
            angle_v1[s, j] = sc.angle_deg(th, v1)
            ct = sc.cone_coordinates(th, V)
            inside[s, j] = float(ct.inside)
            margin[s, j] = ct.margin
    return {"angle_deg": angle, "angle_v1_deg": angle_v1, "in_cone": inside, "cone_margin": margin,
            "refused": refused, "limit": u}


def run_coverage(p: CoverageParams, ctx: cli.Context) -> dict:
    """Arrays: ``sample_sizes [J]``; main family (``voters [k, dim]``, ``weights [k]``):
    ``angle_deg, angle_v1_deg, in_cone, cone_margin, refused [S, J]`` (angle in degrees between the fit
    and the uniform-coverage direction, and the heaviest voter; nan where refused), ``limit [dim]``,
    ``predicted_c_deg`` (mean angle ~ c / sqrt N); narrow family over ``narrow_sample_sizes [J']``:
    ``narrow_voters``, ``narrow_weights``, ``narrow_angle_deg``, ``narrow_angle_v1_deg``,
    ``narrow_in_cone``, ``narrow_cone_margin``, ``narrow_refused`` ``[S, J']``, ``narrow_limit``;
    dose-response:
    ``alphas [A]``, ``dose_theta [A, 2]``, ``dose_pair_margin [A]`` (cosine of theta and the unanimous
    difference), ``dose_cone_margin [A]``, ``alpha_fix``, ``alpha_po``, ``dose_p``, ``dose_s``; controls
    with the coverage uniform on an arc of directions only (not rotation invariant): ``dose_arcs [R, 2]``
    (degrees) and ``dose_arc_pair_margin, dose_arc_cone_margin [R, A]``."""
    V = np.asarray(p.voters, np.float64).reshape(-1, p.dim)
    NV = np.asarray(p.narrow_voters, np.float64).reshape(-1, p.narrow_dim)
    seed = ctx.config.seed
    out: dict[str, np.ndarray] = {"sample_sizes": np.asarray(p.sample_sizes),
                                  "narrow_sample_sizes": np.asarray(p.narrow_sample_sizes), "voters": V,
                                  "weights": np.asarray(p.weights), "narrow_voters": NV,
                                  "narrow_weights": np.asarray(p.narrow_weights)}
    main = finite_sample_sweep(V, p.weights, p.sample_sizes, p.n_seeds, seed, ctx.mesh, ctx.parts, "main")
    narrow = finite_sample_sweep(NV, p.narrow_weights, p.narrow_sample_sizes, p.n_seeds, seed + 1, ctx.mesh,
                                 ctx.parts, "narrow")
    out.update(main)
    out.update({f"narrow_{k}": v for k, v in narrow.items()})
    const = ctx.parts.get("constant", lambda: {"c": np.asarray(sc.asymptotic_angle_constant(
        V, p.weights, n_mc=p.constant_samples, seed=seed)["c_deg"])})
    out["predicted_c_deg"] = np.asarray(const["c"])
    D, DV, Dw, u = sc.pair_counterexample(p.dose_p, p.dose_s)
    prob = sc.dose_problem(D, DV, Dw, u, resolution=p.dose_resolution)
    alphas = np.linspace(0.0, 1.0, p.dose_alphas) ** 2
    thetas = np.array([sc.dose_fit(prob, a) for a in alphas])
    margins = np.array([sc.dose_margins(prob, t) for t in thetas])
    a_fix, a_po = sc.dose_thresholds(prob)
    arcs = np.asarray(p.dose_control_arcs, np.float64).reshape(-1, 2)
    arc_m = np.array([[sc.dose_margins(pa, sc.dose_fit(pa, a)) for a in alphas] for pa in (
        sc.dose_problem(D, DV, Dw, u, resolution=p.dose_resolution, arc_deg=arc) for arc in arcs)])
    out.update({"dose_arcs": arcs, "dose_arc_pair_margin": arc_m[..., 0], "dose_arc_cone_margin": arc_m[..., 1]})
    out.update({"alphas": alphas, "dose_theta": thetas, "dose_pair_margin": margins[:, 0],
                "dose_cone_margin": margins[:, 1], "alpha_fix": np.asarray(a_fix),
                "alpha_po": np.asarray(a_po), "dose_p": np.asarray(p.dose_p), "dose_s": np.asarray(p.dose_s)})
    ctx.summary.update({"alpha_fix": a_fix, "alpha_po": a_po, "predicted_c_deg": float(const["c"])})
    return out


# ---------------------------------------------------------------------------------------------------
# polynomial
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PolynomialParams:
    """Random 2-D instances with one constructed Pareto pair, BTL rewards of each degree."""

    n_instances: int = param(2000, ge=10)
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



# ---------------------------------------------------------------------------------------------------
# lcpo
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class LCPOParams:
    """Random profiles with no voter weight above one half (theory ``random_profile``), LCPO on each."""

    n_draws: int = param(200, ge=2, doc="draws per family")
    families: tuple[str, ...] = param(("generic", "compromise"))
    n_candidates: tuple[int, ...] = param((5, 8), ge=3, doc="generic family: candidates drawn in [lo, hi]")
    n_voters: tuple[int, ...] = param((3, 5), ge=3, doc="generic family: voters drawn in [lo, hi]")

    def __post_init__(self):
        bad = [f for f in self.families if f not in sc.PROFILE_FAMILIES]
        if bad or not self.families:
            raise ValueError(f"families must be a nonempty subset of {sc.PROFILE_FAMILIES}, got {self.families}")
        for name in ("n_candidates", "n_voters"):
            lo_hi = getattr(self, name)
            if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]:
                raise ValueError(f"{name} needs two entries lo <= hi, got {lo_hi}")


def _winner_after(X, V, w, i, v_new) -> int:
    V2 = np.array(V, np.float64)
    V2[i] = v_new
    return sc.lcpo(X, V2, w).ranking[0]


def lcpo_draw(X, V, w) -> dict:
    """Everything the LCPO claims read about one profile: axioms of LCPO and of its ablation without the
    Pareto constraints, the majority and plurality tops, and winner monotonicity (each voter's ranking
    with the winner raised one position, where a linear voter has that ranking; lowered one position as
    the control)."""
    res = sc.lcpo(X, V, w)
    abl = sc.lcpo(X, V, w, pareto=False)
    ax = sc.check_ranking_axioms(X, V, w, res.ranking)
    axa = sc.check_ranking_axioms(X, V, w, abl.ranking)
    M = sc.majority_matrix(X, V, w)
    n = X.shape[0]
    wins = ((M > 0.5) & ~np.eye(n, dtype=bool)).sum(1)
    halves = np.isclose(M, 0.5) & ~np.eye(n, dtype=bool)
    cycle = not halves.any() and sorted(wins.tolist()) != list(range(n))
    share = np.zeros(n)
    for v, wi in zip(V, w):
        share[sc.voter_top(X, v)] += wi
    share /= share.sum()
    mt = sc.majority_top(X, V, w)
    top = res.ranking[0]
    raised = [(i, sc.raise_candidate(X, V[i], top)) for i in range(V.shape[0])]
    lowered = [(i, sc.lower_candidate(X, V[i], top)) for i in range(V.shape[0])]
    raised = [(i, v) for i, v in raised if v is not None]
    lowered = [(i, v) for i, v in lowered if v is not None]
    return {"n": n, "k": V.shape[0], "max_weight": float(w.max() / w.sum()),
            "po_violations": len(ax["po_violations"]), "pmc_applies": ax["pmc_applies"],
            "pmc_holds": ax["pmc_holds"], "cycle": cycle,
            "pmc_infeasible": ax["pmc_ranking"] is not None and not ax["pmc_applies"],
            "ablation_po_violations": len(axa["po_violations"]), "ablation_differs": abl.ranking != res.ranking,
            "ablation_pmc_holds": axa["pmc_holds"], "lcpo_top": top, "majority_top": -1 if mt is None else mt,
            "plurality_top": int(np.argmax(share)), "plurality_share": float(share.max()),
            "raises": len(raised), "raise_changed": sum(_winner_after(X, V, w, i, v) != top for i, v in raised),
            "lowers": len(lowered),
            "lower_changed": sum(_winner_after(X, V, w, i, v) != top for i, v in lowered)}


def run_lcpo(p: LCPOParams, ctx: cli.Context) -> dict:
    """Arrays, one row per draw (axis 0: draws, independent seeds; ``family [N]`` indexes ``families``):
    ``n, k [N]``; ``max_weight [N]`` (largest voter share, below 1/2 by construction);
    ``po_violations [N]`` (Pareto pairs LCPO reverses); ``pmc_applies, pmc_holds [N]``; ``cycle [N]``
    (the majority relation has no half-half pair and is not transitive); ``pmc_infeasible [N]`` (a
    majority ranking that no linear reward induces); ``ablation_po_violations, ablation_differs,
    ablation_pmc_holds [N]`` (leximax Copeland without the Pareto constraints); ``lcpo_top,
    majority_top [N]`` (-1: no candidate is first for voters above one half); ``plurality_top,
    plurality_share [N]`` (the largest first-place share); ``raises, raise_changed [N]`` (voters whose
    ranking with the LCPO winner raised one position is linear, and how many of those change the winner);
    ``lowers, lower_changed [N]`` (the same with the winner lowered one position: the control). Draw j of
    family f uses ``fold_in(seed_key(seed, j), f)``."""
    rng_n, rng_k = p.n_candidates, p.n_voters
    rows, fam = [], []
    for f, family in enumerate(p.families):
        def piece(f=f, family=family):
            out = []
            for j in range(p.n_draws):
                key = jax.random.fold_in(runtime.seed_key(ctx.config.seed, j), f)
                kn, kk, kp = jax.random.split(key, 3)
                n = int(jax.random.randint(kn, (), rng_n[0], rng_n[1] + 1))
                k = int(jax.random.randint(kk, (), rng_k[0], rng_k[1] + 1))
                out.append(lcpo_draw(*sc.random_profile(kp, family, n, k)))
            return {key: np.asarray([r[key] for r in out]) for key in out[0]}

        r = ctx.parts.get(f"lcpo_{family}", piece)
        rows.append(r)
        fam.append(np.full(p.n_draws, f))
    out = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    out.update({"family": np.concatenate(fam), "families": np.asarray(p.families)})
    ctx.summary.update({"cycles": int(out["cycle"].sum()), "ablation_po_violating": int(
        (out["ablation_po_violations"] > 0).sum()), "majority_top_draws": int((out["majority_top"] >= 0).sum())})
    return out



# ---------------------------------------------------------------------------------------------------
# poly_degrees (Theorem 4.1 for every degree)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PolyDegreesParams:
    """Theorem 4.1's layout per degree (theory ``theorem41_layout``), BTL rewards of that degree."""

    degrees: tuple[int, ...] = param((1, 2, 3, 4), ge=1)
    n_draws: int = param(24, ge=2, doc="draws per degree")
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
            for j in range(p.n_draws):
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


_COVERAGE_SEEDS = {f"{pre}{k}": 0 for pre in ("", "narrow_")
                   for k in ("angle_deg", "angle_v1_deg", "in_cone", "cone_margin", "refused")}
_POLY_SEEDS = {k: 0 for k in ("valid", "violated", "uncertain", "pair_violated", "pair_margin", "instances",
                              "copy_of")}

_LCPO_SEEDS = {k: 0 for k in ("family", "n", "k", "max_weight", "po_violations", "pmc_applies", "pmc_holds", "cycle",
                            "pmc_infeasible", "ablation_po_violations", "ablation_differs", "ablation_pmc_holds",
                            "lcpo_top", "majority_top", "plurality_top", "plurality_share", "raises",
                            "raise_changed", "lowers", "lower_changed")}

_DEGREE_SEEDS = {k: 0 for k in ("valid", "pair_margin", "pair_reversed", "pair_uncertain", "po_reversed",
                              "po_uncertain", "pmc_reversed", "unr_pair_margin", "unr_po_reversed",
                              "unr_po_uncertain")}

EXPERIMENTS = {
    "ge_instance": cli.Experiment(GeParams, run_ge),
    "coverage": cli.Experiment(CoverageParams, run_coverage, seed_axes=_COVERAGE_SEEDS),
    "polynomial": cli.Experiment(PolynomialParams, run_polynomial, seed_axes=_POLY_SEEDS),
    "lcpo": cli.Experiment(LCPOParams, run_lcpo, seed_axes=_LCPO_SEEDS),
    "poly_degrees": cli.Experiment(PolyDegreesParams, run_poly_degrees, seed_axes=_DEGREE_SEEDS),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
