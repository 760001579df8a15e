"""Uniform coverage (``coverage``): BTL fits of N uniformly sampled comparisons against N, seeds sharded
over devices, and the coverage dose-response on the 3-pair counterexample."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import social_choice as sc


@dataclasses.dataclass(frozen=True)
class CoverageParams:
    """Finite uniform samples (two voter families) and the coverage dose-response."""

    dim: int = param(3, ge=2)
    voters: tuple[float, ...] = param((1.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.6, 0.0, 0.8))
    weights: tuple[float, ...] = param((0.6, 0.3, 0.1), gt=0)
    narrow_dim: int = param(2, ge=2)
    narrow_voters: tuple[float, ...] = param((1.0, 0.0, 0.9961946980917455, 0.08715574274765817))
    narrow_weights: tuple[float, ...] = param((0.6, 0.4), gt=0)
    sample_sizes: tuple[int, ...] = param((50, 100, 300, 1000, 3000, 10000, 30000), ge=10, smoke=3)
    narrow_sample_sizes: tuple[int, ...] = param((50, 100, 300, 1000, 3000), ge=10, smoke=3)
    n_seeds: int = param(256, ge=2)
    constant_samples: int = param(2**18, ge=1024, doc="Monte Carlo draws for the predicted constant",
                                  smoke=2**16)
    dose_p: float = param(0.9, gt=0.5, lt=1)
    dose_s: float = param(0.01, gt=0)
    dose_alphas: int = param(41, ge=3, doc="alpha grid points, (i/(n-1))^2", smoke=11)
    dose_resolution: int = param(96, ge=16, doc="quadrature nodes per voter", smoke=32)
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


# seed_key salt of the narrow family's per-seed keys, apart from the main family's and from every other root
# seed's (root seed + 1 had made a replication at seed offset 1 draw the default run's narrow numbers as its
# main family).
NARROW_SALT = runtime.FAMILY_SALT_BASE + 1


def _bucket(n: int) -> int:
    """The padded sample count a size is computed at: small sizes share one compiled shape (1000)."""
    return max(n, 1000)


def _draw(key, N, d):
    """The N directions of one draw: the first N of ``_bucket(N)`` normalised Gaussians (all ``_bucket(N)``
    returned; ``N`` concrete)."""
    return _directions(key, _bucket(N), d)


def _directions(key, n_rows, d):
    """``[n_rows, d]`` normalised Gaussians (uniform directions)."""
    x = jax.random.normal(key, (n_rows, d))
    return x / jnp.linalg.norm(x, axis=1, keepdims=True)


def _fit_samples(key, N, n_rows, V, w, theta0):
    """One draw of N uniform comparisons (``N`` may be traced: the first N of ``n_rows = _bucket(N)``
    directions), the BTL fit from ``theta0``, and whether the contested rows span R^d (else the draw goes to
    the host to be refused or fitted there)."""
    x = _directions(key, n_rows, V.shape[1])
    Z, W, contested = sc.sampled_rows_jax(x, V, w, n_used=N)
    zc = Z * contested[:, None]
    G = zc.T @ zc
    full = sc.pd_above(G, 1e-10 * jnp.trace(G))  # no LAPACK in vmapped code: see model.cholesky
    theta, gn, _ = sc.newton_fit(Z, W, "btl", 60, theta0)
    return {"theta": theta, "grad_norm": gn, "full_rank": full}


def finite_sample_sweep(V, w, sizes, n_seeds, seed, mesh, parts, tag, salt: int | None = None) -> dict:
    """Angle to the limit direction and cone membership of BTL fits on N sampled comparisons: arrays
    ``[n_seeds, len(sizes)]`` (nan where refused) and the refusal mask. Seed s of size index j draws
    from ``fold_in(seed_key(seed, s, salt), j)`` (``salt``: None, or a second family of draws)."""
    V = np.asarray(V, np.float64)
    w = np.asarray(w, np.float64)
    u, rho = sc.btl_uniform_closed_form(V, w)
    S, J = n_seeds, len(sizes)
    angle, angle_v1, inside, margin = (np.full((S, J), np.nan) for _ in range(4))
    v1 = V[int(np.argmax(w))]
    refused = np.zeros((S, J))
    fits = {}  # one compiled fit per padded size (_bucket): the sizes below it pass N and j as arguments

    def fit_of(n_rows):
        if n_rows not in fits:
            def fit(k, j, N):
                return _fit_samples(jax.random.fold_in(k, j), N, n_rows, jnp.asarray(V), jnp.asarray(w),
                                    jnp.asarray(rho * u))

            fit.__qualname__ = f"coverage.fit[{tag}, {n_rows} draws]"  # its name in the plan: a stage per shape
            fits[n_rows] = fit
        return fits[n_rows]

    for j, N in enumerate(sizes):
        def piece(N=N, j=j):
            out = runtime.map_seeds(fit_of(_bucket(N)), seed, S, np.int32(j), np.int32(N), mesh=mesh,
                                    salt=salt)
            return {k: np.asarray(v) for k, v in out.items()}

        r = parts.get(f"{tag}_N{N}", piece)
        # Not while planned: the zeros standing in for the fits have no angle, and would send every draw to
        # the host refit that a real run gives only the rare rank-deficient small-N draws.
        for s in range(0 if runtime.is_planning() else S):
            th = r["theta"][s]
            if not r["full_rank"][s]:
                # Contested rows short of full rank: refuse the draw when it has no finite MLE,
                # otherwise fit it on the host.
                key = jax.random.fold_in(runtime.seed_key(seed, s, salt), j)
                x = np.asarray(_draw(key, N, V.shape[1]))[:N]
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
    narrow = finite_sample_sweep(NV, p.narrow_weights, p.narrow_sample_sizes, p.n_seeds, seed, ctx.mesh,
                                 ctx.parts, "narrow", salt=NARROW_SALT)
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
