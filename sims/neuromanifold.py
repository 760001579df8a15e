"""Simulations for the neuromanifold paper (Shahverdi, Marchetti, Kohn, ICLR 2026; arXiv 2505.11846).

Experiments (configs ``paper_configs/neuromanifold_<experiment>.yaml``):

* ``dimensions``: exact (F_p) and numeric (float64 JAX) generic Jacobian ranks of MLPs over a grid of
  architectures and activations, against the parameter count, the ambient dimension and the formula.
* ``exposure``: the fraction of random MSE targets for which the best subnetwork is a critical point
  of the full loss (MLP) and the pruned coordinate's gradient (CNN) (Thm 4.3 / Prop 4.5).
* ``sparsity``: how often gradient descent ends near a subnetwork, MLP vs CNN.

The math lives in ``theory/neuromanifold.py``; this module only sweeps it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import neuromanifold as nm


@dataclass(frozen=True)
class DimensionsParams:
    max_width: int = param(4, ge=1, le=6, doc="widths 1..max_width for every layer")
    depths: tuple[int, ...] = param((2, 3, 4), ge=1, le=5, doc="numbers of weight layers")
    max_per_depth: int = param(100000, ge=1, doc="fixed-seed sample size per depth (all if larger)")
    activations: tuple[str, ...] = param(("x3+x2", "generic cubic", "monomial x3", "quadratic"))
    n_points: int = param(3, ge=1, doc="random points per rank (max taken)")
    numeric: bool = param(True, doc="also compute the float64 JAX rank")

    def __post_init__(self):
        unknown = [a for a in self.activations if a not in nm.ACTIVATIONS]
        if unknown:
            raise ValueError(f"unknown activations {unknown}; known: {sorted(nm.ACTIVATIONS)}")


def _architectures(p: DimensionsParams, seed: int) -> list[tuple[int, ...]]:
    import random

    out = []
    for L in p.depths:
        archs = nm.mlp_grid(p.max_width, (L,))
        if len(archs) > p.max_per_depth:
            archs = sorted(random.Random(seed + L).sample(archs, p.max_per_depth))
        out += archs
    return out


def run_dimensions(p: DimensionsParams, ctx) -> dict[str, np.ndarray]:
    archs = _architectures(p, ctx.config.seed)
    widths = np.full((len(archs), max(p.depths) + 1), 0, dtype=np.int64)
    for i, w in enumerate(archs):
        widths[i, :len(w)] = w
    n_params = np.array([nm.mlp_num_params(w) for w in archs])
    exact, numeric, expected, ambient = [], [], [], []
    for name in p.activations:
        cs = nm.ACTIVATIONS[name]

        def piece(cs=cs):
            ex = [nm.generic_rank("mlp", w, cs, n_points=p.n_points, seed=ctx.config.seed).rank for w in archs]
            nu = ([r.rank for r in nm.mlp_numeric_ranks(archs, cs, n_points=p.n_points, seed=ctx.config.seed)]
                  if p.numeric else [-1] * len(archs))
            return {"exact": np.array(ex), "numeric": np.array(nu),
                    "expected": np.array([nm.expected_dimension("mlp", w, cs) for w in archs]),
                    "ambient": np.array([nm.mlp_ambient_dimension(w, cs) for w in archs])}

        part = ctx.parts.get(f"dims-{name}", piece)
        exact.append(part["exact"])
        numeric.append(part["numeric"])
        expected.append(part["expected"])
        ambient.append(part["ambient"])
    exact, numeric = np.array(exact), np.array(numeric)
    ctx.summary["architectures"] = len(archs)
    for i, name in enumerate(p.activations):
        ctx.summary[f"defective[{name}]"] = int(np.sum(exact[i] != np.array(expected)[i]))
        if p.numeric:
            ctx.summary[f"numeric==exact[{name}]"] = f"{int(np.sum(numeric[i] == exact[i]))}/{len(archs)}"
    return {"widths": widths, "depth": np.array([len(w) - 1 for w in archs]), "n_params": n_params,
            "activations": np.array(p.activations), "exact_rank": exact, "numeric_rank": numeric,
            "expected": np.array(expected), "ambient": np.array(ambient)}


@dataclass(frozen=True)
class ExposureParams:
    n_targets: int = param(100, ge=1)
    mlp_restarts: int = param(8, ge=1)
    mlp_steps: int = param(300, ge=1)
    cnn_restarts: int = param(4, ge=1)
    cnn_steps: int = param(150, ge=1)
    tol: float = param(1e-6, gt=0)


def run_exposure(p: ExposureParams, ctx) -> dict[str, np.ndarray]:
    n = p.n_targets
    mlp = ctx.parts.get("mlp", lambda: runtime.map_seeds(
        nm.exposure_trial_fn(*nm.COMPARED_MLP, n_restarts=p.mlp_restarts, n_steps=p.mlp_steps, tol=p.tol),
        ctx.config.seed, n, mesh=ctx.mesh))
    cnn = ctx.parts.get("cnn", lambda: runtime.map_seeds(
        nm.exposure_trial_fn(*nm.COMPARED_CNN, n_restarts=p.cnn_restarts, n_steps=p.cnn_steps, tol=p.tol),
        ctx.config.seed + 1, n, mesh=ctx.mesh))
    for name, r in (("mlp", mlp), ("cnn", cnn)):
        frac = float(np.mean(r["critical"]))
        ctx.summary[f"{name}_critical_fraction"] = frac
        ctx.summary[f"{name}_critical_stderr"] = math.sqrt(frac * (1 - frac) / n)
    ctx.summary["cnn_min_pruned_grad"] = float(np.nanmin(cnn["pruned_grad"])) if np.isfinite(
        cnn["pruned_grad"]).any() else float("nan")
    return {"mlp_critical": np.asarray(mlp["critical"]), "mlp_full_grad": np.asarray(mlp["full_grad"])[:, 0],
            "mlp_converged": np.asarray(mlp["converged"])[:, 0],
            "cnn_critical": np.asarray(cnn["critical"]), "cnn_pruned_grad": np.asarray(cnn["pruned_grad"]),
            "cnn_full_grad": np.asarray(cnn["full_grad"]), "tol": np.array(p.tol)}


@dataclass(frozen=True)
class SparsityParams:
    n_runs: int = param(400, ge=1)
    n_steps: int = param(4000, ge=1)
    lr: float = param(0.01, gt=0)
    init_scale: float = param(0.5, gt=0)
    thresholds: tuple[float, ...] = param((1e-1, 1e-2, 1e-3, 1e-4), gt=0)


def run_sparsity(p: SparsityParams, ctx) -> dict[str, np.ndarray]:
    out = {}
    for i, (name, spec) in enumerate((("mlp", nm.COMPARED_MLP), ("cnn", nm.COMPARED_CNN))):
        r = ctx.parts.get(name, lambda spec=spec, i=i: runtime.map_seeds(
            nm.sparsity_trial_fn(*spec, n_steps=p.n_steps, lr=p.lr, init_scale=p.init_scale),
            ctx.config.seed + i, p.n_runs, mesh=ctx.mesh))
        d = np.asarray(r["distance"])
        out[f"{name}_distance"] = d
        out[f"{name}_loss"] = np.asarray(r["loss"])
        out[f"{name}_grad"] = np.asarray(r["grad"])
        shares = np.array([np.mean(d < t) for t in p.thresholds])
        out[f"{name}_share"] = shares
        out[f"{name}_share_stderr"] = np.sqrt(shares * (1 - shares) / p.n_runs)
        for t, s in zip(p.thresholds, shares):
            ctx.summary[f"{name}_share<{t:g}"] = float(s)
    out["thresholds"] = np.array(p.thresholds)
    return out


EXPERIMENTS = {
    "dimensions": (DimensionsParams, run_dimensions),
    "exposure": (ExposureParams, run_exposure),
    "sparsity": (SparsityParams, run_sparsity),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
