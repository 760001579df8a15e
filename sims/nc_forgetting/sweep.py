"""``buffer_sweep``: deep and shallow forgetting against buffer size (the paper's Fig. 2) and the old tasks' SNR (Corollary 2)."""

from __future__ import annotations

import dataclasses

import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.nc_forgetting.common import _distinct, _params_at, _percents, CommonParams, evaluated, per_dataset
from sims.nc_forgetting.data import CorrectionName, Data, N_TASKS, ScheduleName, SettingName, SETTINGS
from sims.nc_forgetting.evaluation import all_features, class_head_accuracy, head_accuracy, pair_snr, probe_row
from sims.nc_forgetting.training import head_of, train_grid
from theory import nc_forgetting as th

# ---------------------------------------------------------------------------------------------------
# buffer_sweep (Fig. 2 and Corollary 2)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SweepParams(CommonParams):
    """Deep and shallow forgetting against buffer size (the paper's Fig. 2), with SNR per session."""

    n_seeds: int = param(6, ge=2, le=runtime.MAX_SEEDS)
    settings: tuple[SettingName, ...] = param(SETTINGS)
    schedules: tuple[ScheduleName, ...] = param(("concat",), smoke=1)
    buffer_percents: tuple[float, ...] = param((0.0, 1.0, 5.0, 20.0, 100.0), ge=0, le=100, smoke=2)
    head_correction: CorrectionName = param("shrinkage", doc="corrected head reported beside the network's")
    measure_probes: bool = param(True, doc="fit the probes (A*, F_deep); false leaves probe_acc NaN (SNR and "
                                 "head accuracy only: the probes dominate the quick scale's time)")

    def __post_init__(self):
        super().__post_init__()
        _distinct("settings", self.settings)
        _distinct("schedules", self.schedules)
        _percents(self.buffer_percents)
        if self.head_correction == "calibration":
            raise ValueError("head_correction 'calibration' needs runs with a held-out buffer: it is measured by "
                             "the lda experiment; use none, transfer or shrinkage here")


def corrected_head(p_name: str, f_tr, y_tr, buf_rows, cur_rows, held_rows=None) -> th.LinearHead | None:
    """The class-level LDA head corrected as ``p_name`` from what a replay learner holds at the end:
    old classes' buffer features (``buf_rows``), the current task's training features (``cur_rows``) and,
    for ``calibration``, the never-trained calibration rows (``held_rows``). Means: the buffer's (old
    classes) and the current data's (current classes); uniform priors. Covariance: ``transfer`` the
    current task's pooled within-class covariance; ``shrinkage`` Ledoit-Wolf of the pooled residuals of
    buffer and current data; ``calibration`` old-class means from the calibration rows, covariance
    transferred. ``none`` gives None. Beyond the paper (our fixes)."""
    if p_name == "none":
        return None
    rows = np.concatenate([buf_rows, cur_rows]).astype(np.int64)
    if p_name == "calibration":
        if held_rows is None or len(held_rows) == 0:
            return None
        rows = np.concatenate([held_rows, cur_rows]).astype(np.int64)
    x, y = f_tr[rows], y_tr[rows]
    classes, means = th.class_means(x, y)
    cur = f_tr[cur_rows.astype(np.int64)], y_tr[cur_rows.astype(np.int64)]
    if p_name == "shrinkage":
        cov = th.shrunk_covariance(x, y)
    else:
        cov = th.pooled_covariance(*cur)
    return th.gaussian_head(means, cov, np.ones(classes.size), classes)


def _sweep_dataset(p: SweepParams, data: Data, seed: int, mesh) -> dict:
    specs = [dict(seed=s, setting=st, schedule=h, percent=b) for st in p.settings for h in p.schedules
             for b in p.buffer_percents for s in range(p.n_seeds)]
    # joint training (every class in every session, no buffer) rides in the same batch
    jspecs = [dict(seed=s, setting=st, schedule="concat", percent=0.0, joint=True) for st in p.settings
              for s in range(p.n_seeds)]
    out, grid = train_grid(p.trainer(), data, specs + jspecs, seed, mesh)
    ftr = all_features(p.widths, out["params"], data.x_train)[:, :, -1]
    fte = all_features(p.widths, out["params"], data.x_test)[:, :, -1]
    R = len(specs)
    head, probe, snr = (np.full((R, N_TASKS, N_TASKS), np.nan) for _ in range(3))
    corr = np.full((R, N_TASKS), np.nan)
    last = N_TASKS - 1
    for r in runtime.tracked(evaluated(R), f"{data.name}: heads and probes", unit="run"):
        st = SETTINGS.index(specs[r]["setting"])
        for s in range(N_TASKS):
            W, b = head_of(_params_at(out["params"], r, s))
            head[r, s] = head_accuracy(W, b, fte[r, s], data.y_test, st, s)
            # A*_jj (learned, at session j) and A*_Tj (final): the entries forgetting needs.
            tasks = range(s + 1) if s == last else [s]
            if p.measure_probes:
                probe[r, s] = probe_row(ftr[r, s], data.y_train, fte[r, s], data.y_test, st, s, p.probe_C,
                                        p.probe_standardize, tasks)
            snr[r, s] = pair_snr(fte[r, s], data.y_test, s)
        h = corrected_head(p.head_correction, ftr[r, last], data.y_train, grid["buf_rows"][r],
                           grid["runs"]["cur_idx"][r, last, : grid["runs"]["cur_n"][r, last]])
        if h is not None:
            corr[r] = class_head_accuracy(h, fte[r, last], data.y_test, st)
    shape = (len(p.settings), len(p.schedules), len(p.buffer_percents), p.n_seeds)
    jhead, jprobe = (np.full((len(jspecs), N_TASKS), np.nan) for _ in range(2))
    for i in runtime.tracked(evaluated(len(jspecs)), f"{data.name}: joint runs", unit="run"):
        st, r = SETTINGS.index(jspecs[i]["setting"]), R + i
        W, b = head_of(_params_at(out["params"], r, last))
        jhead[i] = head_accuracy(W, b, fte[r, last], data.y_test, st, last)
        if p.measure_probes:
            jprobe[i] = probe_row(ftr[r, last], data.y_train, fte[r, last], data.y_test, st, last, p.probe_C,
                                  p.probe_standardize)
    return {"head_acc": head.reshape(shape + (N_TASKS, N_TASKS)),
            "probe_acc": probe.reshape(shape + (N_TASKS, N_TASKS)),
            "snr": snr.reshape(shape + (N_TASKS, N_TASKS)),
            "corrected_acc": corr.reshape(shape + (N_TASKS,)),
            "train_loss": out["loss"][:R].reshape(shape + (N_TASKS,)),
            "buffer_loss": out["buffer_loss"][:R].reshape(shape + (N_TASKS,)),
            "joint_head_acc": jhead.reshape((len(p.settings), p.n_seeds, N_TASKS)),
            "joint_probe_acc": jprobe.reshape((len(p.settings), p.n_seeds, N_TASKS)),
            "joint_loss": out["loss"][R:, last].reshape((len(p.settings), p.n_seeds))}


def run_buffer_sweep(p: SweepParams, ctx: cli.Context) -> dict:
    """Deep vs shallow forgetting against buffer size per data set, setting and schedule (Fig. 2).

    Arrays (D data sets, S settings, H schedules, B buffer sizes, N seeds; sessions and tasks 5):
    ``datasets [D]``, ``settings [S]``, ``schedules [H]``, ``buffer_percents [B]``;
    ``head_acc [D, S, H, B, N, 5, 5]`` the network head's test accuracy on task j after session i
    (A_ij; NaN for j > i); ``probe_acc [D, S, H, B, N, 5, 5]`` the probe's (A*_ij; only A*_jj and the
    final row A*_4j are measured, the rest NaN; all NaN with ``measure_probes: false``, as is
    ``joint_probe_acc``); ``snr [D, S, H, B, N, 5, 5]`` SNR of task j's two
    classes on test features after session i; ``corrected_acc [D, S, H, B, N, 5]`` the final per-task
    accuracy of the ``head_correction`` head; ``train_loss``, ``buffer_loss [D, S, H, B, N, 5]`` the
    mean training loss on the current task and on the buffer at each session's end;
    ``joint_head_acc``, ``joint_probe_acc [D, S, N, 5]`` and ``joint_loss [D, S, N]`` of joint training
    (every class in each of the 5 sessions: the same total steps). Forgetting of task j < 4:
    F_shallow = A_jj - A_4j, F_deep = A*_jj - A*_4j.
    """
    return {"settings": np.asarray(p.settings), "schedules": np.asarray(p.schedules),
            "buffer_percents": np.asarray(p.buffer_percents, np.float64),
            **per_dataset(p, ctx, "sweep", _sweep_dataset)}
