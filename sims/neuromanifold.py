"""Simulations for the neuromanifold paper (Shahverdi, Marchetti, Kohn, ICLR 2026; arXiv 2505.11846).

Experiments (configs ``paper_configs/neuromanifold_<experiment>.yaml``):

* ``dimensions``: exact (F_p) and numeric (float64 JAX) generic Jacobian ranks of MLPs over a grid of
  architectures and activations, against the parameter count, the ambient dimension and the formula.
* ``exposure``: the fraction of random MSE targets for which the best subnetwork is a critical point
  of the full loss (MLP) and the pruned coordinate's gradient (CNN) (Thm 4.3 / Prop 4.5).
* ``sparsity``: how often gradient descent ends near a subnetwork, MLP vs CNN.

The math lives in ``theory/neuromanifold/``; this module only sweeps it.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import neuromanifold as nm


# seed_key salt of the CNN's per-seed keys in ``exposure`` and ``sparsity``: apart from the MLP's and from
# every other root seed's (root seed + 1 had made a replication at seed offset 1 draw the default run's CNN
# targets and runs as its MLP's).
CNN_SALT = runtime.FAMILY_SALT_BASE + 1


# Activation names a dimensions config may use besides the keys of ``nm.ACTIVATIONS``: a dense random
# activation ``dense(r,seed)`` (``nm.dense_activation``) and a sum of unit monomials ``x^7+x^6``, ``x^3+x^2+x``.
_DENSE = re.compile(r"dense\((\d+),(\d+)\)")
_MONOMIALS = re.compile(r"x(\^\d+)?(\+x(\^\d+)?)*")


def activation_of(name: str) -> tuple:
    """The coefficients ``(c_0, ..., c_r)`` of a named activation: a key of ``nm.ACTIVATIONS``,
    ``"dense(r,seed)"`` (``nm.dense_activation(r, seed)``, every coefficient nonzero) or a sum of distinct
    unit monomials such as ``"x^7"``, ``"x^7+x^6"``, ``"x^3+x^2+x"`` (no spaces).

    Raises:
      ValueError: any other name (the message lists the known forms), a repeated exponent, or a degree
        above 64.
    """
    if name in nm.ACTIVATIONS:
        return nm.ACTIVATIONS[name]
    m = _DENSE.fullmatch(name)
    if m:
        return nm.dense_activation(int(m.group(1)), int(m.group(2)))
    if _MONOMIALS.fullmatch(name):
        exps = [int(t[2:]) if t.startswith("x^") else 1 for t in name.split("+")]
        if len(set(exps)) != len(exps) or max(exps) > 64:
            raise ValueError(f"activation {name!r}: repeated exponent or degree above 64")
        return nm.activation([int(i in exps) for i in range(max(exps) + 1)])
    raise ValueError(f"unknown activation {name!r}; known: {sorted(nm.ACTIVATIONS)}, 'dense(r,seed)', or unit "
                     f"monomial sums like 'x^7+x^6'")


@dataclass(frozen=True)
class DimensionsParams:
    max_width: int = param(4, ge=1, le=6, doc="widths 1..max_width for every layer", smoke=2)
    depths: tuple[int, ...] = param((2, 3, 4), ge=1, le=5, doc="numbers of weight layers")
    max_per_depth: tuple[int, ...] = param((100000, 100000, 80), ge=1,
                                           doc="fixed-seed sample size per depth (one entry per depth, or one "
                                           "for all; all nets if larger)")
    activations: tuple[str, ...] = param((
        "x3+x2", "generic cubic", "monomial x3", "quadratic", "x^3+x^2+x",
        "dense(3,0)", "dense(3,1)", "dense(4,0)", "dense(4,1)", "dense(5,0)", "dense(5,1)", "dense(6,0)", "dense(6,1)",
        "dense(7,0)", "dense(7,1)", "dense(8,0)", "dense(8,1)", "x^3", "x^4", "x^5", "x^6", "x^7", "x^8",
        "x^3+x^2", "x^4+x^3", "x^5+x^4", "x^6+x^5", "x^7+x^6", "x^8+x^7"))
    n_points: int = param(3, ge=1, doc="random points per rank (max taken)", smoke=2)
    numeric: tuple[str, ...] = param(("x3+x2", "generic cubic", "generic quintic", "monomial x3", "quadratic"),
                                     doc="activations whose float64 JAX rank is also computed (when swept)")

    def __post_init__(self):
        bad = []
        for a in self.activations:
            try:
                activation_of(a)
            except ValueError:
                bad.append(a)
        if bad:
            raise ValueError(f"unknown activations {bad}; known: {sorted(nm.ACTIVATIONS)}, 'dense(r,seed)', "
                             f"unit monomial sums like 'x^7+x^6'")
        if len(set(self.activations)) != len(self.activations):
            raise ValueError(f"activations repeat a name: {list(self.activations)}")
        if len(self.max_per_depth) not in (1, len(self.depths)):
            raise ValueError(f"max_per_depth has {len(self.max_per_depth)} entries; give one, or one per depth "
                             f"({len(self.depths)})")


def _architectures(p: DimensionsParams, seed: int) -> list[tuple[int, ...]]:
    """The swept MLPs as width tuples ``(d_0, ..., d_L)``: for each ``L`` in ``p.depths`` (in that order)
    every net of :func:`theory.neuromanifold.mlp_grid` with widths ``1..p.max_width``, or a sorted
    fixed-seed (``random.Random(seed)``) sample of the depth's ``p.max_per_depth`` entry when there are
    more. With depths (2, 3, 4), widths 1..4 and caps (all, all, 80) this is ``nm.grid_sample(80, seed)``."""
    caps = p.max_per_depth * len(p.depths) if len(p.max_per_depth) == 1 else p.max_per_depth
    out = []
    for L, cap in zip(p.depths, caps):
        archs = nm.mlp_grid(p.max_width, (L,))
        if len(archs) > cap:
            archs = sorted(random.Random(seed).sample(archs, cap))
        out += archs
    return out


def run_dimensions(p: DimensionsParams, ctx) -> dict[str, np.ndarray]:
    """Generic Jacobian rank (the neuromanifold dimension) of polynomial MLPs over a grid of
    architectures and activations, exact and numeric, against N, dim V and the formula.

    Source: Thm 4.1 (finite identifiability => dim = N for generic activations of large degree;
    monomials lose one per hidden neuron, Kileel-Trager-Bruna 2019), ``paper_configs/neuromanifold_dimensions.yaml``. Architectures from
    :func:`_architectures`; per activation one resumable part ``dims-<name>``.

    Returns (``n_arch`` = number of architectures, ``n_act = len(p.activations)``):
      widths [n_arch, max(p.depths) + 1]: widths ``(d_0, ..., d_L)`` of each net, zero-padded on the right.
      depth [n_arch]: number of weight layers L.
      n_params [n_arch]: parameter count ``N = sum_l d_l d_{l-1}``.
      activations [n_act]: activation names (strings, see :func:`activation_of`).
      exact_rank [n_act, n_arch]: generic Jacobian rank over F_p (``nm.generic_rank``, max over
        ``p.n_points`` random points).
      numeric_rank [n_act, n_arch]: float64 JAX rank (``nm.mlp_numeric_ranks``); -1 for an activation not
        in ``p.numeric``.
      expected [n_act, n_arch]: the expected dimension E(w) (``nm.expected_dimension``): the paper's
        formula capped by dim V and by the factorization bound at every hidden layer.
      ambient [n_act, n_arch]: the ambient dimension dim V (``nm.mlp_ambient_dimension``).

    ``ctx.summary``: ``architectures`` (n_arch), ``defective[<activation>]`` (nets whose exact rank is not
    the formula's), ``numeric==exact[<activation>]`` (``"k/n_arch"`` agreeing; activations in ``p.numeric`` only).
    """
    archs = _architectures(p, ctx.config.seed)
    widths = np.full((len(archs), max(p.depths) + 1), 0, dtype=np.int64)
    for i, w in enumerate(archs):
        widths[i, :len(w)] = w
    n_params = np.array([nm.mlp_num_params(w) for w in archs])
    exact, numeric, expected, ambient = [], [], [], []
    for name in runtime.tracked(p.activations, "dimensions", unit="activation"):
        cs = activation_of(name)

        def piece(cs=cs, numeric=name in p.numeric):
            ex = [nm.generic_rank("mlp", w, cs, n_points=p.n_points, seed=ctx.config.seed).rank for w in archs]
            nu = ([r.rank for r in nm.mlp_numeric_ranks(archs, cs, n_points=p.n_points, seed=ctx.config.seed)]
                  if numeric else [-1] * len(archs))
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
        if name in p.numeric:
            ctx.summary[f"numeric==exact[{name}]"] = f"{int(np.sum(numeric[i] == exact[i]))}/{len(archs)}"
    return {"widths": widths, "depth": np.array([len(w) - 1 for w in archs]), "n_params": n_params,
            "activations": np.array(p.activations), "exact_rank": exact, "numeric_rank": numeric,
            "expected": np.array(expected), "ambient": np.array(ambient)}


@dataclass(frozen=True)
class ExposureParams:
    n_targets: int = param(100, ge=1, le=runtime.MAX_SEEDS, smoke=16)
    mlp_restarts: int = param(8, ge=1, smoke=2)
    mlp_steps: int = param(300, ge=1, smoke=50)
    cnn_restarts: int = param(4, ge=1, smoke=2)
    cnn_steps: int = param(150, ge=1, smoke=50)
    tol: float = param(1e-6, gt=0)


def run_exposure(p: ExposureParams, ctx) -> dict[str, np.ndarray]:
    """Critical exposure: how often the best subnetwork is a critical point of the full MSE loss, for
    random targets ``u ~ N(0, I)`` in coefficient space, MLP against CNN.

    Source: Thm 4.3 (MLP subnetworks critically exposed) and Prop 4.5 (CNN subnetworks not),
    ``paper_configs/neuromanifold_exposure.yaml``. ``nm.exposure_trial_fn`` per target for
    ``nm.COMPARED_MLP`` (the (2,2,1) MLP, x^3 + x^2, neuron 0 of the hidden layer removed) and
    ``nm.COMPARED_CNN`` (the (3,2), stride-2 CNN, y^2 + y, each filter end entry pruned in turn).

    Returns (``n = p.n_targets``; the CNN has ``n_pruned = 4`` pruned coordinates):
      mlp_critical [n]: the converged best subnetwork is a critical point of the full loss (full gradient
        norm ``< p.tol``) (bool).
      mlp_full_grad [n]: full-loss gradient norm at the embedded best subnetwork (NaN if no restart
        converged).
      mlp_converged [n]: some restart converged (subnetwork gradient ``< p.tol``, bounded, finite) (bool).
      cnn_critical [n]: some pruned coordinate's gradient is ``< p.tol`` at a converged subnetwork (bool).
      cnn_pruned_grad [n, n_pruned]: ``|dL/dw_pruned|`` at the best converged run for each pruned entry
        (NaN if none converged).
      cnn_full_grad [n, n_pruned]: full-loss gradient norm there (NaN if none converged).
      tol []: the tolerance ``p.tol``.

    ``ctx.summary``: ``mlp_critical_fraction``, ``mlp_critical_stderr``, ``cnn_critical_fraction``,
    ``cnn_critical_stderr`` (binomial standard errors), ``cnn_min_pruned_grad`` (smallest finite
    ``cnn_pruned_grad``, NaN if none).
    """
    n = p.n_targets
    trials = {"mlp": nm.exposure_trial_fn(*nm.COMPARED_MLP, n_restarts=p.mlp_restarts, n_steps=p.mlp_steps,
                                          tol=p.tol),
              "cnn": nm.exposure_trial_fn(*nm.COMPARED_CNN, n_restarts=p.cnn_restarts, n_steps=p.cnn_steps,
                                          tol=p.tol)}
    for name, fn in trials.items():
        fn.__qualname__ = f"exposure.trial[{name}]"  # its plan name (MLP and CNN take the same arguments)
    mlp = ctx.parts.get("mlp", lambda: runtime.map_seeds(trials["mlp"], ctx.config.seed, n, mesh=ctx.mesh))
    cnn = ctx.parts.get("cnn", lambda: runtime.map_seeds(trials["cnn"], ctx.config.seed, n, mesh=ctx.mesh,
                                                         salt=CNN_SALT))
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
    n_runs: int = param(1600, ge=1, le=runtime.MAX_SEEDS, smoke=64)
    n_steps: int = param(4000, ge=1, smoke=500)
    lr: float = param(0.01, gt=0)
    init_scale: float = param(0.5, gt=0)
    thresholds: tuple[float, ...] = param((1e-1, 1e-2, 1e-3, 1e-4), gt=0)


def run_sparsity(p: SparsityParams, ctx) -> dict[str, np.ndarray]:
    """Sparsity bias: how often gradient descent ends near a subnetwork, MLP against CNN.

    Source: Sec. 4 discussion (critical exposure => sparsity bias of MLPs, not CNNs),
    ``paper_configs/neuromanifold_sparsity.yaml``. ``p.n_runs`` runs of ``nm.sparsity_trial_fn`` each
    (``p.n_steps`` steps of clipped GD, lr ``p.lr``, init std ``p.init_scale``, target ``u ~ N(0, I)``,
    loss ``||coef(f_W) - u||^2``) for ``nm.COMPARED_MLP`` and ``nm.COMPARED_CNN``.

    Returns, for ``name`` in ``mlp``, ``cnn`` (``n_thr = len(p.thresholds)``):
      {name}_distance [p.n_runs]: scale-free distance to a subnetwork at the end, in [0, 1]
        (``nm.subnetwork_distance``).
      {name}_loss [p.n_runs]: final loss ``||coef(f_W) - u||^2``.
      {name}_grad [p.n_runs]: final gradient norm.
      {name}_share [n_thr]: fraction of runs with distance below each threshold.
      {name}_share_stderr [n_thr]: its binomial standard error ``sqrt(s (1 - s) / p.n_runs)``.
      thresholds [n_thr]: the distance thresholds.

    ``ctx.summary``: ``{name}_share<{t:g}`` for each threshold t (the shares).
    """
    out = {}
    for name, spec, salt in (("mlp", nm.COMPARED_MLP, None), ("cnn", nm.COMPARED_CNN, CNN_SALT)):
        trial = nm.sparsity_trial_fn(*spec, n_steps=p.n_steps, lr=p.lr, init_scale=p.init_scale)
        trial.__qualname__ = f"sparsity.trial[{name}]"  # its plan name (MLP and CNN take the same arguments)
        r = ctx.parts.get(name, lambda trial=trial, salt=salt: runtime.map_seeds(
            trial, ctx.config.seed, p.n_runs, mesh=ctx.mesh, salt=salt))
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
    # Exact ranks: no seed axis (a rank over F_p at random points is the generic rank up to O(deg / p)).
    # Its cost is host work (exact F_p ranks in Python, host SVDs), planned at max_width 2 and 3.
    "dimensions": cli.Experiment(DimensionsParams, run_dimensions, extrapolate=cli.Extrapolate(
        "max_width", small=(2, 3), law="power",
        why="max_width^(L+1) nets of depth L, one exact F_p rank of an (N + 8) d_L x N Jacobian each, "
            "N ~ L max_width^2")),
    # One independent target (and its restarts) per index of the leading axis, for the MLP and the CNN.
    "exposure": cli.Experiment(ExposureParams, run_exposure, seed_axes={
        "mlp_critical": 0, "mlp_full_grad": 0, "mlp_converged": 0, "cnn_critical": 0, "cnn_pruned_grad": 0,
        "cnn_full_grad": 0}),
    # One independent run (init and target) per index, for the MLP and the CNN.
    "sparsity": cli.Experiment(SparsityParams, run_sparsity, seed_axes={
        f"{k}_{v}": 0 for k in ("mlp", "cnn") for v in ("distance", "loss", "grad")}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
