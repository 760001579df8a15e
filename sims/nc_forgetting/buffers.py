"""``buffer_stats`` (Fig. 5) and ``lda`` (Fig. 6 and our corrected heads): buffer statistics and Gaussian heads against buffer size."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.nc_forgetting.common import _params_at, _percents, CommonParams, dead_runs, evaluated, per_dataset
from sims.nc_forgetting.data import Data, N_CLASSES, N_TASKS
from sims.nc_forgetting.evaluation import final_features
from sims.nc_forgetting.sweep import corrected_head
from sims.nc_forgetting.training import head_of, train_grid
from theory import nc_forgetting as th

# ---------------------------------------------------------------------------------------------------
# buffer_stats (Fig. 5) and lda (Fig. 6 and our corrected heads)
# ---------------------------------------------------------------------------------------------------


# fold_in salt of the draws that split each old class's training rows into buffer and held-out rows, kept
# apart from the run's other draws (training.INIT_SALT, training.CLASS_ORDER_SALT, sessions 1 to 5).
HELD_OUT_SALT = 11
# fold_in(held-out key, DRAW_STRIDE * j + c): the order of class c's test rows in held-out draw j (0 or 1)
DRAW_STRIDE = 100


@dataclasses.dataclass(frozen=True)
class BufferParams(CommonParams):
    """CIL with replay (concatenated) at each buffer size; statistics of the final buffer."""

    n_seeds: int = param(5, ge=2, le=runtime.MAX_SEEDS)
    buffer_percents: tuple[float, ...] = param((1.0, 2.0, 5.0, 20.0, 100.0), gt=0, le=100,
                                               smoke=2)
    calibration: float = param(0.5, gt=0, lt=1, doc="lda: share of memory held out, never trained on")

    def __post_init__(self):
        super().__post_init__()
        _percents(self.buffer_percents)


@dataclasses.dataclass(frozen=True)
class LdaParams(BufferParams):
    """:class:`BufferParams` of the ``lda`` experiment (its own defaults: more seeds)."""

    n_seeds: int = param(12, ge=2, le=runtime.MAX_SEEDS)


def _old_rows(grid, r: int) -> np.ndarray:
    return np.asarray(grid["buf_rows"][r], np.int64)


def _stats_dataset(p: BufferParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b) for b in p.buffer_percents
             for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(), data, specs, seed, mesh)
    last = N_TASKS - 1
    ftr = final_features(p.widths, out["params"], data.x_train)
    fte = final_features(p.widths, out["params"], data.x_test)
    old = np.arange(2 * last)
    R = len(specs)
    er_buf, er_held, er_held_b, nc1_buf, nc1_held, nc1_held_b, per_class = (np.full(R, np.nan) for _ in range(7))
    ew_buf, ew_held, ew_held_b = (np.full(R, np.nan) for _ in range(3))
    ratio, ratio_held, ratio_held_b = (np.full((R, old.size), np.nan) for _ in range(3))
    pop = (data.y_test // 2) < last
    dead = dead_runs(ftr)
    live = evaluated(R, dead)
    for r in runtime.tracked(live, f"{data.name}: buffer statistics", unit="run"):
        rows = _old_rows(grid, r)
        yb = data.y_train[rows]
        key = jax.random.fold_in(runtime.seed_key(seed, specs[r]["seed"]), HELD_OUT_SALT)
        take_b, take_h, take_h2 = [], [], []
        for c in old:
            bc = rows[yb == c]
            tc = np.flatnonzero(data.y_test == c)
            m = min(bc.size, tc.size)
            take_b.append(bc[:m])
            for j, lst in enumerate((take_h, take_h2)):
                k_jc = jax.random.fold_in(key, DRAW_STRIDE * j + int(c))
                order = np.asarray(jax.random.permutation(k_jc, tc.size))
                lst.append(tc[order[:m]])
        tb, th1, th2 = np.concatenate(take_b), np.concatenate(take_h), np.concatenate(take_h2)
        per_class[r] = tb.size / old.size
        er_buf[r] = th.effective_rank(ftr[r][tb])
        er_held[r] = th.effective_rank(fte[r][th1])
        er_held_b[r] = th.effective_rank(fte[r][th2])
        _, pop_means = th.class_means(fte[r], data.y_test)
        centre = pop_means.mean(axis=0)  # mu_G of the population of all seen classes
        ratio[r] = th.mean_norm_ratio(ftr[r][rows], yb, fte[r][pop], data.y_test[pop], centre)
        ratio_held[r] = th.mean_norm_ratio(fte[r][th1], data.y_test[th1], fte[r][pop], data.y_test[pop], centre)
        ratio_held_b[r] = th.mean_norm_ratio(fte[r][th2], data.y_test[th2], fte[r][pop], data.y_test[pop], centre)
        if tb.size >= 2 * old.size:
            nc1_buf[r] = th.nc_metrics(ftr[r][tb], data.y_train[tb])["nc1"]
            nc1_held[r] = th.nc_metrics(fte[r][th1], data.y_test[th1])["nc1"]
            nc1_held_b[r] = th.nc_metrics(fte[r][th2], data.y_test[th2])["nc1"]
            within = [th.within_class_residuals(f[t], y[t]) for f, y, t in (
                (ftr[r], data.y_train, tb), (fte[r], data.y_test, th1), (fte[r], data.y_test, th2))]
            if all(np.any(w != 0) for w in within):
                ew_buf[r], ew_held[r], ew_held_b[r] = (th.effective_rank(w) for w in within)
    head_cos, norm_ratio = np.full(R, np.nan), np.full(R, np.nan)
    for r in live:
        W, _ = head_of(_params_at(out["params"], r, last))
        head_cos[r], norm_ratio[r] = th.minority_collapse_stats(W, fte[r], data.y_test, old)
    shape = (len(p.buffer_percents), p.n_seeds)
    return {"minority_head_cosine": head_cos.reshape(shape), "minority_norm_ratio": norm_ratio.reshape(shape),
            "effective_rank_buffer": er_buf.reshape(shape), "effective_rank_heldout": er_held.reshape(shape),
            "effective_rank_heldout_b": er_held_b.reshape(shape),
            "within_rank_buffer": ew_buf.reshape(shape), "within_rank_heldout": ew_held.reshape(shape),
            "within_rank_heldout_b": ew_held_b.reshape(shape),
            "mean_norm_ratio": ratio.reshape(shape + (old.size,)),
            "mean_norm_ratio_heldout": ratio_held.reshape(shape + (old.size,)),
            "mean_norm_ratio_heldout_b": ratio_held_b.reshape(shape + (old.size,)),
            "nc1_heldout_b": nc1_held_b.reshape(shape), "nc1_buffer": nc1_buf.reshape(shape),
            "nc1_heldout": nc1_held.reshape(shape), "compared_per_class": per_class.reshape(shape),
            "buffer_loss": out["buffer_loss"][:, last].reshape(shape),
            "dead_runs": dead.reshape(shape)}


def run_buffer_stats(p: BufferParams, ctx: cli.Context) -> dict:
    """Statistics of the trained-on buffer against held-out samples after the last CIL task (Fig. 5).

    Arrays (D data sets, B buffer sizes, N seeds; the 8 old classes): ``datasets [D]``,
    ``buffer_percents [B]``; ``effective_rank_buffer [D, B, N]`` of the buffer's features and
    ``effective_rank_heldout [D, B, N]`` of as many test samples of the same classes (per class
    ``min(buffer, test)``; beyond the paper, which compares with the full split); ``mean_norm_ratio
    [D, B, N, 8]`` ||mu_c(buffer) - mu_G|| / ||mu_c(test) - mu_G|| with mu_G the test population's mean
    of class means, and ``mean_norm_ratio_heldout [D, B, N, 8]`` the same for the equal-size held-out
    sample (a small sample's mean is farther out by its own noise) and ``mean_norm_ratio_heldout_b`` for a
    second equal-size held-out draw (control); ``effective_rank_heldout_b [D, B, N]`` and
    ``nc1_heldout_b [D, B, N]`` of that second draw (controls);
    ``within_rank_buffer``, ``within_rank_heldout``, ``within_rank_heldout_b [D, B, N]`` the same three
    for the within-class residuals (the pooled covariance Sigma-hat of Sec. 5; NaN below two per class);
    ``nc1_buffer``, ``nc1_heldout [D, B, N]`` (NaN below two samples per class);
    ``compared_per_class [D, B, N]``; ``buffer_loss [D, B, N]`` the training loss on the buffer at the end;
    minority collapse (Sec. 3.2, :func:`theory.nc_forgetting.minority_collapse_stats`, the 8 old classes as the
    minority): ``minority_head_cosine [D, B, N]`` the mean pairwise cosine of their centred head rows and
    ``minority_norm_ratio [D, B, N]`` their centred test-feature mean norm over the current classes';
    ``dead_runs [D, B, N]`` True where the network died (the same features on every training sample, all 0:
    :func:`sims.nc_forgetting.common.evaluated`), whose statistics above are NaN.
    """
    return {"buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "stats", _stats_dataset)}


LDA_HEADS = ("network", "probe", "lda_buf_mu_buf_sigma", "lda_pop_mu_identity", "lda_pop_mu_pop_sigma",
             "lda_buf_mu_identity", "uniform_prior", "transfer", "shrinkage", "calibration", "radial",
             "calibration_network")


def radial_head(f_tr, y_tr, buf_rows, cur_rows, held_rows) -> th.LinearHead:
    """Buffer means moved radially about mu_G (the mean of the class means) by ``s`` = the median over old
    classes of ||mu_c(held) - mu_G|| / ||mu_c(buffer) - mu_G||, measured on the never-trained calibration
    rows; Ledoit-Wolf covariance of the buffer and current data; uniform priors (beyond the paper)."""
    rows = np.concatenate([buf_rows, cur_rows]).astype(np.int64)
    x, y = f_tr[rows], y_tr[rows]
    classes, means = th.class_means(x, y)
    centre = means.mean(axis=0)
    old = np.unique(y_tr[held_rows])
    scale = float(np.median(th.mean_norm_ratio(f_tr[held_rows], y_tr[held_rows], f_tr[buf_rows][np.isin(
        y_tr[buf_rows], old)], y_tr[buf_rows][np.isin(y_tr[buf_rows], old)], centre)))
    moved = np.isin(classes, old)
    means[moved] = th.radial_correction(means[moved], centre, scale)
    return th.gaussian_head(means, th.shrunk_covariance(x, y), np.ones(classes.size), classes)


def _lda_dataset(p: LdaParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting="cil", schedule="concat", percent=b, calibration=c)
             for c in (0.0, p.calibration) for b in p.buffer_percents for s in range(p.n_seeds)]
    half = len(specs) // 2
    # two batches of the buffer_stats shape (ER, then calibration): one compiled program for both figures
    parts = [train_grid(p.trainer(), data, specs[i:i + half], seed, mesh) for i in (0, half)]
    out = jax.tree.map(lambda *a: np.concatenate(a), parts[0][0], parts[1][0])
    grid = {"runs": jax.tree.map(lambda *a: np.concatenate(a), parts[0][1]["runs"], parts[1][1]["runs"]),
            "held": parts[0][1]["held"] + parts[1][1]["held"], "buf_rows": parts[0][1]["buf_rows"] + parts[1][1]["buf_rows"]}
    last = N_TASKS - 1
    ftr = final_features(p.widths, out["params"], data.x_train)
    fte = final_features(p.widths, out["params"], data.x_test)
    old_te = (data.y_test // 2) < last
    acc_old, acc_all = (np.full((half, len(LDA_HEADS)), np.nan) for _ in range(2))
    eye = np.eye(ftr.shape[-1])
    dead = dead_runs(ftr)  # a dead network's heads measure nothing: its (ER) row or calibration heads stay NaN
    for r in runtime.tracked(evaluated(half, dead[:half]), f"{data.name}: LDA heads", unit="run"):
        f, g = ftr[r], fte[r]
        cur = grid["runs"]["cur_idx"][r, last, : grid["runs"]["cur_n"][r, last]].astype(np.int64)
        rows = np.concatenate([_old_rows(grid, r), cur])
        xb, yb = f[rows], data.y_train[rows]
        heads = {}
        W, b = head_of(_params_at(out["params"], r, last))
        heads["network"] = th.LinearHead(W, b, np.arange(N_CLASSES))
        heads["probe"] = th.fit_probe(f, data.y_train, C=p.probe_C, standardize=p.probe_standardize)
        heads["lda_buf_mu_buf_sigma"] = th.lda_head(xb, yb)
        heads["lda_pop_mu_identity"] = th.lda_head(f, data.y_train, covariance=eye)
        heads["lda_pop_mu_pop_sigma"] = th.lda_head(f, data.y_train)
        heads["lda_buf_mu_identity"] = th.lda_head(xb, yb, covariance=eye)
        heads["uniform_prior"] = th.lda_head(xb, yb, priors=np.ones(np.unique(yb).size))
        for name in ("transfer", "shrinkage"):
            heads[name] = corrected_head(name, f, data.y_train, _old_rows(grid, r), cur)
        rc = half + r  # the calibration run with the same seed and memory
        held = np.concatenate([grid["held"][rc][c] for c in range(2 * last)]).astype(np.int64)
        cur_c = grid["runs"]["cur_idx"][rc, last, : grid["runs"]["cur_n"][rc, last]].astype(np.int64)
        have = not dead[rc] and all(np.any(data.y_train[held] == c) for c in range(2 * last))
        heads["calibration"] = corrected_head("calibration", ftr[rc], data.y_train, _old_rows(grid, rc), cur_c,
                                              held) if have else None
        have_both = have and all(np.any(data.y_train[_old_rows(grid, rc)] == c) for c in range(2 * last))
        heads["radial"] = radial_head(ftr[rc], data.y_train, _old_rows(grid, rc), cur_c, held) if have_both else None
        Wc, bc = head_of(_params_at(out["params"], rc, last))
        heads["calibration_network"] = None if dead[rc] else th.LinearHead(Wc, bc, np.arange(N_CLASSES))
        for h_i, name in enumerate(LDA_HEADS):
            if heads[name] is None:
                continue
            x = fte[rc] if name.startswith("calibration") or name == "radial" else g
            acc_old[r, h_i] = heads[name].accuracy(x[old_te], data.y_test[old_te])
            acc_all[r, h_i] = heads[name].accuracy(x, data.y_test)
    shape = (len(p.buffer_percents), p.n_seeds, len(LDA_HEADS))
    return {"accuracy_old": acc_old.reshape(shape), "accuracy_all": acc_all.reshape(shape)}


def run_lda(p: LdaParams, ctx: cli.Context) -> dict:
    """Gaussian counterfactual heads (Fig. 6; the four of the authors' code) and our
    corrected heads, after the last CIL task, against buffer size.

    Arrays: ``datasets [D]``, ``buffer_percents [B]``, ``heads [H]`` (:data:`LDA_HEADS`), ``seed_index [N]``
    (each seed's index, on the seed axis: a claim that chooses on some seeds and judges on the others
    keeps them apart when the ledger leaves a seed out);
    ``accuracy_old [D, B, N, H]`` test accuracy (over all 10 classes) on the old tasks' samples and
    ``accuracy_all [D, B, N, H]`` on every test sample. Heads: the network's; the probe (full training
    split); LDA from (buffer or population) means with (buffer or population) pooled covariance or the
    identity, priors = class frequencies (buffer statistics = the old classes' buffer and the last task's
    training data; population = the full training split); ``uniform_prior`` (buffer statistics, uniform
    priors); ``transfer`` (buffer means, the last task's covariance, uniform priors); ``shrinkage``
    (Ledoit-Wolf); ``calibration`` (a run holding out ``calibration`` of each class's memory, never trained
    on: old means from those samples, covariance transferred; NaN when a class has none), ``radial`` (the
    same run's replayed buffer means shrunk radially by the inflation the calibration samples measure,
    Ledoit-Wolf covariance) and that run's own head ``calibration_network``. Equal memory throughout. A
    dead network (:func:`sims.nc_forgetting.common.dead_runs`: the same features on every sample) leaves
    NaN: every head of its ER run, or the three heads of its calibration run.
    """
    return {"buffer_percents": np.asarray(p.buffer_percents, np.float64), "heads": np.asarray(LDA_HEADS),
            "seed_index": np.arange(p.n_seeds), **per_dataset(p, ctx, "lda", _lda_dataset)}
