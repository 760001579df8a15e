"""Neural-collapse forgetting figures (Lanzillotta, Meier, Hofmann, ICLR 2026) from saved results
(``results/<scale>/nc_forgetting_*.npz``); plotting only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

LAST = 4


def _mean_se(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error over ``axis`` (the seeds), ignoring NaN (cells not measured, e.g. a head
    that needs two samples per class at a 1% buffer, stay NaN and are not drawn)."""
    x = np.asarray(x, np.float64)
    ok = np.isfinite(x)
    n = ok.sum(axis=axis)
    z = np.where(ok, x, 0.0)
    m = np.where(n > 0, z.sum(axis=axis) / np.maximum(n, 1), np.nan)
    dev = np.where(ok, x - np.expand_dims(m, axis), 0.0)
    sd = np.sqrt(np.where(n > 1, (dev**2).sum(axis=axis) / np.maximum(n - 1, 1), np.nan))
    return m, np.where(n > 1, sd / np.sqrt(np.maximum(n, 1)), 0.0)


def _xaxis(ax, percents):
    ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(-0.15 if percents[0] == 0 else 0.8 * percents[0], 1.3 * percents[-1])
    ax.set_xticks(percents)
    ax.set_xticklabels([f"{p:g}" for p in percents], fontsize=7)
    ax.set_xlabel("replay buffer (% of past data)")


def _forgetting(acc: np.ndarray) -> np.ndarray:
    """``[..., 5, 5]`` accuracies -> ``[...]`` mean over old tasks of A_jj - A_4j."""
    j = np.arange(LAST)
    return (acc[..., j, j] - acc[..., LAST, j]).mean(axis=-1)


def _log_snr_ratio(snr: np.ndarray) -> np.ndarray:
    """``[..., 5, 5]`` SNR -> ``[...]`` mean over old tasks of log(SNR after the last session / SNR when
    learned); an SNR of 0 (dead features) enters as 1e-6, as in the claim nc_forgetting.snr_replay."""
    j = np.arange(LAST)
    x = np.maximum(snr, 1e-6)
    return np.log(x[..., LAST, j] / x[..., j, j]).mean(axis=-1)


def plot_buffer_sweep(a: dict, meta: dict):
    """Fig. 2: deep (probe) and shallow (head) forgetting against buffer size, per data set and setting;
    with CIL among the settings, a last column of the old tasks' SNR, final over learned (Corollary 2)."""
    D, S = len(a["datasets"]), len(a["settings"])
    P = a["buffer_percents"]
    cil = list(a["settings"]).index("cil") if "cil" in list(a["settings"]) else None
    fig, axes = plt.subplots(D, S + (cil is not None), figsize=(4.2 * (S + (cil is not None)), 3.4 * D),
                             squeeze=False)
    for d in range(D):
        for s in range(S):
            ax = axes[d][s]
            for h, sched in enumerate(a["schedules"]):
                ls = "-" if sched == "concat" else "--"
                for arr, col, lab in ((a["head_acc"], "C3", "shallow (head)"), (a["probe_acc"], "C0", "deep (probe)")):
                    if not np.any(np.isfinite(arr[d, s, h])):  # probes not fitted (measure_probes: false)
                        continue
                    m, se = _mean_se(_forgetting(arr[d, s, h]), axis=1)
                    ax.errorbar(P, m, yerr=se, fmt="o" + ls, ms=3, lw=1.2, color=col, capsize=2,
                                label=f"{lab}, {sched}")
            ax.axhline(0, color="0.6", lw=0.8)
            _xaxis(ax, P)
            ax.set_title(f"{a['datasets'][d]} / {a['settings'][s].upper()}", fontsize=9)
            if s == 0:
                ax.set_ylabel("forgetting (old tasks, mean)")
        if cil is not None:
            ax = axes[d][S]
            for h, sched in enumerate(a["schedules"]):
                m, se = _mean_se(_log_snr_ratio(a["snr"][d, cil, h]), axis=1)
                ax.errorbar(P, m, yerr=se, fmt="o-" if sched == "concat" else "s--", ms=3, lw=1.2,
                            color="C2" if sched == "concat" else "C4", capsize=2, label=str(sched))
            if len(a["schedules"]) > 1:
                ax.legend(fontsize=7)
            ax.axhline(np.log(0.5), color="0.6", lw=0.8, ls="--")
            ax.text(P[-1], np.log(0.5), " halved", fontsize=7, va="bottom", ha="right", color="0.4")
            _xaxis(ax, P)
            ax.set_ylabel("log(SNR final / learned), old tasks")
            ax.set_title(f"{a['datasets'][d]} / CIL: old-task SNR ({', '.join(map(str, a['schedules']))})",
                         fontsize=9)
    axes[0][0].legend(fontsize=7)
    c = meta["config"]
    how = "replay concatenated (solid)" + (f" or {c['replay_ratio']:g} of each batch (dashed)"
                                          if "ratio" in list(a["schedules"]) else "")
    if not np.any(np.isfinite(a["probe_acc"])):
        how += "; probes not fitted (shallow forgetting and SNR only)"
    fig.suptitle(f"Deep vs shallow forgetting under replay: {c['n_seeds']} seeds, ±SE; {how}", fontsize=9)
    fig.tight_layout()
    return fig


def _plot_ufm_rank(ax, a: dict) -> None:
    """Sec. 3.2: singular values of the unconstrained-features model's features, one head per task (solid),
    a single head (dashed), one head per task without weight decay (dotted); a tick at n(K - 1)."""
    styles = {"multi_head": "-", "single_head": "--", "multi_head_no_decay": ":"}
    for j, (n, K) in enumerate(zip(a["ufm_tasks"], a["ufm_classes_per_task"])):
        for i, case in enumerate(a["ufm_cases"]):
            sv = a["ufm_singular_values"][i, j]
            sv = sv[np.isfinite(sv)]
            ax.plot(np.arange(1, sv.size + 1), np.maximum(sv, 1e-17), styles.get(str(case), "-"), color=f"C{j}",
                    lw=1.2, label=f"n={n}, K={K}: {str(case).replace('_', ' ')}")
        ax.axvline(int(n) * (int(K) - 1) + 0.5, color=f"C{j}", lw=0.6, alpha=0.5)
    ax.set_yscale("log")
    ax.set_xlabel("index i (vertical lines: n(K − 1) + 1/2)")
    ax.set_ylabel("singular value σ_i of the features")
    ax.set_title("UFM, every task trained (Sec. 3.2):\nrank n(K − 1) per-task heads vs nK − 1 single head",
                 fontsize=8)
    ax.legend(fontsize=5.5, ncol=1)


def plot_subspace(a: dict, meta: dict):
    """T1 in the linear model (decay of the component outside S against (1 - eta lambda)^t), Fig. 4:
    old-class mean projections onto S_t against OOD data during CIL training, and (when measured) the
    feature rank with one head per task against a single head (Sec. 3.2)."""
    D = len(a["datasets"])
    ufm = "ufm_singular_values" in a
    fig, axes = plt.subplots(1, 1 + D + ufm, figsize=(5 * (1 + D + ufm), 4.6))
    if ufm:
        _plot_ufm_rank(axes[-1], a)
    ax = axes[0]
    ups = float(a["upsilon"])
    perp = a["linear_perp"]
    t = np.arange(perp.shape[1])
    bound = float(a["linear_rounding_bound"])
    for i, case in enumerate(a["linear_cases"]):
        ok = perp[i][0] > 0
        dev = np.abs(perp[i][:, ok] / (perp[i][0, ok] * ups ** t[:, None]) - 1).max(axis=1)
        ax.plot(t, np.maximum(dev, 1e-17), lw=1.6 if case == "collapsed" else 1,
                label=f"{case.replace('_', ' ')} (max {a['linear_fit_error'][i]:.1e})")
    ax.axhline(bound, color="k", ls=":", lw=1, label=f"float64 rounding budget {bound:.1e}")
    ax.set_yscale("log")
    ax.set_xlabel("GD step t")
    ax.set_ylabel("max over inputs |perp_t / (perp_0 (1 − ηλ)^t) − 1|")
    ax.set_title(f"Linear-feature model (T1/T2): decay law\nperp_t = perp_0 (1 − ηλ)^t, 1 − ηλ = {ups:g}",
                 fontsize=8)
    ax.legend(fontsize=7)
    P = list(a["buffer_percents"])
    for d in range(D):
        ax = axes[1 + d]
        cp, op = a["class_projection"][d], a["ood_projection"][d]  # [B, N, 5, K, 10], [B, N, 5, K, G]
        K = cp.shape[3]
        x = np.arange(5 * K) / K
        for b, p in enumerate(P):
            ls = "-" if p == 0 else "--"
            for task, col in zip(range(LAST), ("C0", "C1", "C2", "C3")):
                cls = [2 * task, 2 * task + 1]
                y = _mean_se(cp[b][:, :, :, cls].mean(axis=3), axis=0)[0].reshape(-1)
                y[: (task + 1) * K] = np.nan  # only once the task is old
                ax.plot(x, y, ls, color=col, lw=1, label=f"task {task} classes ({p:g}% replay)" if d == 0 else None)
            ax.plot(x, op[b].mean(axis=(0, 3)).reshape(-1), ls, color="0.4", lw=1.2,
                    label=f"OOD ({p:g}% replay)" if d == 0 else None)
        ax.set_xlabel("task (training time)")
        ax.set_ylabel("projection onto S_t / current classes'")
        ax.set_title(f"{a['datasets'][d]}: old-class means vs OOD (CIL)", fontsize=9)
    # one legend for both datasets' panels, below them, where it covers no curve
    fig.legend(*axes[1].get_legend_handles_labels(), fontsize=7, ncol=5, loc="lower center",
               bbox_to_anchor=(0.5, 0.0), frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))
    return fig


def plot_buffer_stats(a: dict, meta: dict):
    """Fig. 5: effective rank (pooled and within-class) and NC1 of buffer vs equal-size held-out features,
    mean-norm ratios and (when measured) the minority-collapse statistics of the old classes (Sec. 3.2)."""
    D = len(a["datasets"])
    P = a["buffer_percents"]
    minority = "minority_norm_ratio" in a
    fig, axes = plt.subplots(D, 3 + minority, figsize=(5 * (3 + minority), 3.4 * D), squeeze=False)
    for d in range(D):
        if minority:
            ax = axes[d][3]
            m, se = _mean_se(a["minority_norm_ratio"][d], axis=1)
            ax.errorbar(P, m, yerr=se, fmt="o-", ms=3, color="C2", capsize=2, label="feature-mean norm, old / current")
            m, se = _mean_se(a["minority_head_cosine"][d], axis=1)
            ax.errorbar(P, m, yerr=se, fmt="s--", ms=3, color="C4", capsize=2, label="head-row cosine, old classes")
            ax.axhline(1, color="0.6", lw=0.8)
            ax.axhline(-1 / 9, color="C4", lw=0.8, ls=":", label="ETF cosine −1/9")
            _xaxis(ax, P)
            ax.set_title(f"{a['datasets'][d]}: minority collapse (Sec. 3.2)", fontsize=9)
            ax.legend(fontsize=6)
        ax = axes[d][0]
        for k, lab, col, ls in (("effective_rank_buffer", "buffer (trained on), pooled", "C3", "-"),
                                ("effective_rank_heldout", "held-out, same size, pooled", "C0", "-"),
                                ("within_rank_buffer", "buffer, within-class", "C3", "--"),
                                ("within_rank_heldout", "held-out, within-class", "C0", "--")):
            m, se = _mean_se(a[k][d], axis=1)
            ax.errorbar(P, m, yerr=se, fmt="o" + ls, ms=3, color=col, capsize=2, label=lab,
                        mfc=col if ls == "-" else "white")  # within-class: dashed and hollow
        _xaxis(ax, P)
        ax.set_ylabel("effective rank (8 old classes)")
        ax.set_title(f"{a['datasets'][d]}: covariance deficiency?", fontsize=9)
        ax.legend(fontsize=6, handlelength=3)  # long enough to show the dashes
        ax = axes[d][1]
        for k, lab, col in (("nc1_buffer", "buffer (trained on)", "C3"), ("nc1_heldout", "held-out, same size", "C0")):
            m, se = _mean_se(a[k][d], axis=1)
            ax.errorbar(P, m, yerr=se, fmt="o-", ms=3, color=col, capsize=2, label=lab)
        ax.set_yscale("log")
        _xaxis(ax, P)
        ax.set_ylabel("NC1 (8 old classes)")
        ax.set_title(f"{a['datasets'][d]}: strong collapse", fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[d][2]
        for k, lab, col in (("mean_norm_ratio", "buffer / population", "C3"),
                            ("mean_norm_ratio_heldout", "held-out (same size) / population", "C0")):
            m, se = _mean_se(np.exp(np.log(a[k][d]).mean(axis=-1)), axis=1)
            ax.errorbar(P, m, yerr=se, fmt="o-", ms=3, color=col, capsize=2, label=lab)
        ax.axhline(1, color="0.6", lw=0.8)
        _xaxis(ax, P)
        ax.set_ylabel("||μ_c − μ_G|| ratio (geometric mean)")
        ax.set_title(f"{a['datasets'][d]}: mean-norm inflation", fontsize=9)
        ax.legend(fontsize=7)
    dead = int(np.sum(a["dead_runs"])) if "dead_runs" in a else 0
    left_out = f" ({dead} dead network{'s' if dead != 1 else ''} left out)" if dead else ""
    fig.suptitle(f"Buffer statistics after the last CIL task, {meta['config']['n_seeds']} seeds{left_out}, ±SE",
                 fontsize=9)
    fig.tight_layout()
    return fig


LDA_STYLE = {"network": ("k", "-", "network head"), "probe": ("0.5", "-", "probe (full split)"),
             "lda_buf_mu_buf_sigma": ("C3", "-", "LDA μ_buf Σ_buf"), "lda_pop_mu_identity": ("C1", ":", "LDA μ_pop I"),
             "lda_pop_mu_pop_sigma": ("C0", "-", "LDA μ_pop Σ_pop"), "lda_buf_mu_identity": ("C5", ":", "LDA μ_buf I"),
             "uniform_prior": ("C3", "--", "μ_buf Σ_buf, uniform prior"), "transfer": ("C2", "-", "corrected: Σ transfer"),
             "shrinkage": ("C4", "-", "corrected: Ledoit-Wolf"), "calibration": ("C9", "-", "corrected: calibration buffer"),
             "radial": ("C8", "-", "corrected: radial means + Ledoit-Wolf (calibration run)"),
             "calibration_network": ("k", "--", "network head (calibration run)")}


def plot_lda(a: dict, meta: dict):
    """Fig. 6: accuracy on old tasks of the counterfactual Gaussian heads and our corrected heads."""
    D = len(a["datasets"])
    P = a["buffer_percents"]
    fig, axes = plt.subplots(1, D, figsize=(6 * D, 4.9), squeeze=False)
    for d in range(D):
        ax = axes[0][d]
        for h, name in enumerate(a["heads"]):
            col, ls, lab = LDA_STYLE.get(str(name), ("0.3", "-", str(name)))
            m, se = _mean_se(a["accuracy_old"][d, :, :, h], axis=1)
            ax.errorbar(P, m, yerr=se, fmt="o" + ls, ms=3, lw=1.1, color=col, capsize=2, label=lab)
        _xaxis(ax, P)
        ax.set_ylabel("accuracy on old tasks (10-way)")
        ax.set_title(f"{a['datasets'][d]}: heads on frozen features after the last CIL task", fontsize=9)
    # One legend below the panels (inside one it covered the curves): every panel draws the same heads.
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=7, frameon=False)
    fig.suptitle(f"Counterfactual and corrected heads at equal memory, {meta['config']['n_seeds']} seeds, ±SE",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    return fig


PLOTS = {"buffer_sweep": plot_buffer_sweep, "subspace": plot_subspace, "buffer_stats": plot_buffer_stats,
         "lda": plot_lda}
