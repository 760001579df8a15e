"""``subspace``: the exact decay in the linear-feature model (T1), the projections onto S_t against OOD data (Fig. 4), the TIL feature rank in the unconstrained-features model (Sec. 3.2)."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from sims import cli, runtime
from sims.config import ConfigError, param
from sims.nc_forgetting.common import _params_at, _percents, CommonParams, evaluated, load_data, per_dataset
from sims.nc_forgetting.data import Data, N_CLASSES, N_TASKS
from sims.nc_forgetting.evaluation import all_features
from sims.nc_forgetting.training import head_of, train_grid
from theory import nc_forgetting as th

# ---------------------------------------------------------------------------------------------------
# subspace (T1 exact; H1 / Fig. 4 in the MLP)
# ---------------------------------------------------------------------------------------------------


# Seed indices of the host models' generators, seed_key(seed, OFFSET + i) for case or instance i: above
# every network's seed index (n_seeds <= LINEAR_SEED_OFFSET).
LINEAR_SEED_OFFSET = 10_000  # the linear-feature model of LINEAR_CASES[i]
UFM_SEED_OFFSET = 20_000  # the unconstrained-features model of (ufm_tasks, ufm_classes_per_task)[j]


@dataclasses.dataclass(frozen=True)
class SubspaceParams(CommonParams):
    """The exact decay in the linear-feature model and old-class projections onto S_t in the MLP."""

    n_seeds: int = param(10, ge=2, le=LINEAR_SEED_OFFSET)
    snapshots: int = param(5, ge=1, doc="feature snapshots per task (steps_per_task must be a multiple)",
                           smoke=20)
    buffer_percents: tuple[float, ...] = param((0.0, 100.0), ge=0, le=100)
    ood_groups: int = param(10, ge=2, doc="OOD samples are split into groups the size of a test class")
    lin_classes: int = param(4, ge=2)
    lin_input_dim: int = param(20, ge=2)
    lin_feature_dim: int = param(16, ge=2)
    lin_per_class: int = param(5, ge=1)
    lin_eta: float = param(0.5, gt=0)
    lin_lambda: float = param(0.01, gt=0)
    lin_steps: int = param(200, ge=2)
    lin_probes: int = param(10, ge=1, doc="arbitrary inputs whose features are tracked")
    control_momentum: float = param(0.1, gt=0, lt=1)
    control_noise: float = param(0.3, gt=0, doc="input noise of the non-collapsed control")
    ufm_tasks: tuple[int, ...] = param((5, 3, 4), ge=1, doc="n of each (n tasks, K classes) instance")
    ufm_classes_per_task: tuple[int, ...] = param((2, 4, 3), ge=2, doc="K of each instance")
    ufm_dim: int = param(32, ge=2, doc="feature dimension (at least n K of every instance)")
    ufm_per_class: int = param(3, ge=1)
    ufm_eta: float = param(0.5, gt=0)
    ufm_lambda: float = param(0.05, gt=0, doc="weight decay on features and head (the no-decay control: 0)")
    ufm_steps: int = param(5000, ge=1)

    def __post_init__(self):
        super().__post_init__()
        self.check_snapshots(self.snapshots)
        _percents(self.buffer_percents)
        if len(self.ufm_tasks) != len(self.ufm_classes_per_task):
            raise ValueError(f"ufm_tasks and ufm_classes_per_task must have the same length, got "
                             f"{len(self.ufm_tasks)} and {len(self.ufm_classes_per_task)}")
        most = max(n * k for n, k in zip(self.ufm_tasks, self.ufm_classes_per_task))
        if self.ufm_dim < most:
            raise ValueError(f"ufm_dim must be at least n K = {most} (else d caps the rank), got {self.ufm_dim}")
        if self.lin_eta * self.lin_lambda >= 1:
            raise ValueError(f"lin_eta * lin_lambda must be < 1 (upsilon > 0), got {self.lin_eta * self.lin_lambda}")


LINEAR_CASES = ("collapsed", "momentum", "two_layer", "not_collapsed")


def linear_cases(p: SubspaceParams, seed: int) -> dict:
    """The T1 instance (exact) and its three controls, float64: ``perp [4, steps + 1, probes]``,
    ``decay_error [4]`` (largest relative deviation from perp_{t+1} = (1 - eta lambda) perp_t),
    ``fit_error [4]`` (largest relative deviation from the law perp_t = perp_0 (1 - eta lambda)^t over the
    whole run: :func:`theory.nc_forgetting.decay_law_fit_error`) and ``rounding_bound`` (its float64
    budget: :func:`theory.nc_forgetting.decay_rounding_bound`)."""
    perps, errs, fits = [], [], []
    for i, case in enumerate(LINEAR_CASES):
        key = runtime.seed_key(seed, LINEAR_SEED_OFFSET + i)
        rng = np.random.default_rng(np.asarray(jax.random.key_data(key)))
        m = th.collapsed_linear_model(p.lin_classes, p.lin_input_dim, p.lin_feature_dim, p.lin_per_class, rng,
                                      collapsed=case != "not_collapsed", noise=p.control_noise)
        probes = rng.standard_normal((p.lin_probes, p.lin_input_dim))
        out = th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], m["b"], eta=p.lin_eta, lam=p.lin_lambda,
                                   steps=p.lin_steps, probes=probes,
                                   momentum=p.control_momentum if case == "momentum" else 0.0,
                                   depth=2 if case == "two_layer" else 1)
        perps.append(out["perp"])
        errs.append(th.decay_error(out["perp"], p.lin_eta, p.lin_lambda))
        fits.append(th.decay_law_fit_error(out["perp"], p.lin_eta, p.lin_lambda))
    bound = th.decay_rounding_bound(p.lin_steps, p.lin_classes * p.lin_per_class, p.lin_input_dim,
                                    p.lin_feature_dim)
    return {"perp": np.stack(perps), "decay_error": np.array(errs), "fit_error": np.array(fits),
            "rounding_bound": np.asarray(bound)}


UFM_CASES = ("multi_head", "single_head", "multi_head_no_decay")


def ufm_ranks(p: SubspaceParams, seed: int) -> dict:
    """The feature rank of Sec. 3.2 in the unconstrained-features model (float64,
    :func:`theory.nc_forgetting.multihead_ufm_gd`), every task's data trained on, for each (n tasks, K
    classes) instance: one head per task (TIL: the hypothesis), a single head over all classes (CIL, the
    paper's contrast) and one head per task without weight decay (outside the terminal-phase hypothesis; a
    control). The three cases of an instance share their initialisation.

    Returns ``ufm_cases [3]``, ``ufm_tasks [S]``, ``ufm_classes_per_task [S]``, ``ufm_singular_values
    [3, S, m]`` the features' singular values (descending; NaN past min(N, d)), ``ufm_weyl_bound [3, S]``
    ||R||_2 / lambda (inf without weight decay) and ``ufm_residual_norm [3, S]`` ||R||_2."""
    S = len(p.ufm_tasks)
    m = max(min(n * k * p.ufm_per_class, p.ufm_dim) for n, k in zip(p.ufm_tasks, p.ufm_classes_per_task))
    sv = np.full((len(UFM_CASES), S, m), np.nan)
    weyl, res = np.full((len(UFM_CASES), S), np.nan), np.full((len(UFM_CASES), S), np.nan)
    for i, case in enumerate(UFM_CASES):
        lam = 0.0 if case.endswith("no_decay") else p.ufm_lambda
        for j, (n, k) in enumerate(zip(p.ufm_tasks, p.ufm_classes_per_task)):
            key = runtime.seed_key(seed, UFM_SEED_OFFSET + j)
            rng = np.random.default_rng(np.asarray(jax.random.key_data(key)))
            out = th.multihead_ufm_gd(n, k, p.ufm_dim, p.ufm_per_class, rng, multi_head=case != "single_head",
                                      eta=p.ufm_eta, lam_features=lam, lam_head=lam, steps=p.ufm_steps)
            s = out["singular_values"]
            sv[i, j, : s.size] = s
            weyl[i, j], res[i, j] = out["weyl_bound"], out["residual_norm"]
    return {"ufm_cases": np.asarray(UFM_CASES), "ufm_tasks": np.asarray(p.ufm_tasks),
            "ufm_classes_per_task": np.asarray(p.ufm_classes_per_task), "ufm_singular_values": sv,
            "ufm_weyl_bound": weyl, "ufm_residual_norm": res}


def projections(f_tr_cur, y_tr_cur, f_te, y_te, f_ood, session: int, groups: int, group_size: int):
    """Projections onto S_t (span of the centred means of the current training features) of the centred
    test means of every class and of ``groups`` OOD groups, over the current classes' average (so a
    current class is ~1). Returns ``(classes [10], ood [groups])``; classes not yet seen are NaN."""
    q = th.active_subspace(f_tr_cur, y_tr_cur)
    _, cur_means = th.class_means(f_tr_cur, y_tr_cur)
    mu_g = cur_means.mean(axis=0)
    _, te_means = th.class_means(f_te, y_te)
    num = th.projection_norm(te_means - mu_g, q)
    cur = np.unique(y_tr_cur)
    scale = float(np.mean(num[cur]))
    ood_means = np.stack([f_ood[i * group_size:(i + 1) * group_size].mean(axis=0) for i in range(groups)])
    cls = num / scale
    cls[np.arange(N_CLASSES) // 2 > session] = np.nan
    return cls, th.projection_norm(ood_means - mu_g, q) / scale


def ood_group_size(data: Data) -> int:
    """OOD samples per group: the size of the smallest test class (a group mean is as noisy as a class's)."""
    return int(np.min(np.bincount(data.y_test)))


def _subspace_dataset(p: SubspaceParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b) for b in p.buffer_percents
             for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(snapshots=p.snapshots), data, specs, seed, mesh)
    ftr = all_features(p.widths, out["params"], data.x_train)
    fte = all_features(p.widths, out["params"], data.x_test)
    group = ood_group_size(data)
    food = all_features(p.widths, out["params"], data.x_ood[: p.ood_groups * group])
    R, K = len(specs), p.snapshots
    cls = np.full((R, N_TASKS, K, N_CLASSES), np.nan)
    ood = np.full((R, N_TASKS, K, p.ood_groups), np.nan)
    nc_trained = np.full((R, N_TASKS, K, 2), np.nan)
    nc1_old = np.full((R, N_TASKS, K), np.nan)
    for r in runtime.tracked(evaluated(R), f"{data.name}: subspace metrics", unit="run"):
        for s in range(N_TASKS):
            rows = np.concatenate([grid["runs"]["cur_idx"][r, s, : grid["runs"]["cur_n"][r, s]],
                                   grid["runs"]["buf_idx"][r, s, : grid["runs"]["buf_n"][r, s]]]).astype(np.int64)
            trained = np.unique(data.y_train[rows])
            old_rows = np.flatnonzero((data.y_train // 2) < s)
            for k in range(K):
                cls[r, s, k], ood[r, s, k] = projections(ftr[r, s, k][rows], data.y_train[rows], fte[r, s, k],
                                                         data.y_test, food[r, s, k], s, p.ood_groups, group)
                W, b = head_of(_params_at(out["params"], r, s, k))
                m = th.nc_metrics(ftr[r, s, k][rows], data.y_train[rows], W[trained], b[trained])
                nc_trained[r, s, k] = m["nc1"], m["nc3"]
                if s > 0 and not _buffered(grid["runs"], r, s):
                    nc1_old[r, s, k] = th.nc_metrics(ftr[r, s, k][old_rows], data.y_train[old_rows])["nc1"]
    shape = (len(p.buffer_percents), p.n_seeds, N_TASKS, K)
    return {"class_projection": cls.reshape(shape + (N_CLASSES,)), "ood_projection": ood.reshape(shape + (p.ood_groups,)),
            "nc_trained": nc_trained.reshape(shape + (2,)), "nc1_old": nc1_old.reshape(shape)}


def _buffered(runs, r: int, s: int) -> bool:
    """Whether run ``r`` replays anything in session ``s``."""
    return bool(runs["buf_n"][r, s] > 0)


def run_subspace(p: SubspaceParams, ctx: cli.Context) -> dict:
    """The subspace theorem (T1) exactly, and forgotten classes against OOD data (H1, Fig. 4).

    Arrays: ``linear_cases [4]`` (collapsed: T1's hypotheses; momentum, two_layer, not_collapsed:
    controls), ``linear_perp [4, lin_steps + 1, lin_probes]`` ||P_{S_t perp} phi_t(x)|| of arbitrary
    inputs, ``linear_decay_error [4]``, ``upsilon`` (1 - eta lambda), ``linear_fit_error [4]`` the largest
    relative deviation from perp_t = perp_0 upsilon^t, ``linear_rounding_bound`` its float64 budget;
    the TIL feature rank in the unconstrained-features model (Sec. 3.2, :func:`ufm_ranks`): ``ufm_cases
    [3]``, ``ufm_tasks [S]``, ``ufm_classes_per_task [S]``, ``ufm_singular_values [3, S, m]``,
    ``ufm_weyl_bound [3, S]``, ``ufm_residual_norm [3, S]``;
    ``datasets [D]``, ``bayes_accuracy [D]``,
    ``buffer_percents [B]``, ``class_projection [D, B, N, 5, K, 10]`` the projection of each class's
    centred test mean onto S_t at snapshot k of session i, over the current classes' (NaN for unseen
    classes), ``ood_projection [D, B, N, 5, K, G]`` the same for G groups of OOD inputs (CIL; S_t is
    spanned by the current training data, buffer included); ``nc_trained [D, B, N, 5, K, 2]`` NC1 and NC3
    (Papyan's conventions, with the head's rows and biases of the classes trained on) of the session's
    training data (current task and buffer) at each snapshot, ``nc1_old [D, B, N, 5, K]`` NC1 of the old
    classes' training features in sessions without replay (NaN otherwise: session 0 or a buffer).
    """
    lin = linear_cases(p, ctx.config.seed)
    datas = {name: load_data(p, name, ctx.config.seed) for name in p.datasets}
    for name, data in datas.items():  # refuse before any training
        most = data.x_ood.shape[0] // ood_group_size(data)
        if p.ood_groups > most:
            raise ConfigError(ctx.config.path, "ood_groups", f"at most {most} (groups of {ood_group_size(data)} "
                              f"of the {data.x_ood.shape[0]} OOD samples of {name})", p.ood_groups)
    return {"linear_cases": np.asarray(LINEAR_CASES), "linear_perp": lin["perp"],
            "linear_decay_error": lin["decay_error"], "upsilon": np.asarray(1 - p.lin_eta * p.lin_lambda),
            "linear_fit_error": lin["fit_error"], "linear_rounding_bound": lin["rounding_bound"],
            **ufm_ranks(p, ctx.config.seed), "buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "subspace", _subspace_dataset, datas)}
