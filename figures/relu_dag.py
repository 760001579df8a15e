"""Figures for ReLU networks on DAGs (sims/relu_dag.py): plotting only, from saved results."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_obstruction(a: dict, meta: dict):
    loss, steps, n_pos = a["loss"], a["steps"], a["n_pos"]
    l = int(n_pos.max())
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [2.2, 1]})
    cmap = plt.get_cmap("viridis")
    for k in n_pos:
        col = cmap(k / max(l, 1))
        for s in range(loss.shape[1]):
            ax.plot(np.maximum(steps, 1), loss[k, s], color=col, lw=1.2, alpha=0.8,
                    label=f"{k} of {l} output weights > 0" if s == 0 else None)
    b_neg, b_pos = a["bounds"]
    ax.axhline(b_neg, color=cmap(0.0), ls="--", lw=1, label=f"bound, all < 0: {b_neg:.3f}")
    ax.axhline(b_pos, color=cmap(1.0), ls=":", lw=1.5, label=f"bound, all > 0: {b_pos:.3f}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("gradient-descent step")
    ax.set_ylabel("training loss (BCE)")
    n_comp = meta.get("summary", {}).get("n_components", 2**l)
    ax.set_title(f"Breast cancer, {l} hidden ReLUs, every c_k < 0: H has {n_comp} components")
    ax.legend(fontsize=7, loc="lower left")
    acc = a["acc"]
    ax2.bar(n_pos, acc.mean(1), yerr=acc.std(1), color=[cmap(k / max(l, 1)) for k in n_pos])
    ax2.set_ylim(0, 1.02)
    ax2.set_xticks(n_pos)
    ax2.set_xlabel("positive output weights (fixed by the component)")
    ax2.set_ylabel("final training accuracy")
    ax2.set_title(f"sign flips of forced edges: {int(a['flips'].max())}", fontsize=9)
    fig.tight_layout()
    return fig


def plot_init_probability(a: dict, meta: dict):
    ds, ls, f, mc, z = a["ds"], a["ls"], a["formula"], a["monte_carlo"], a["z"]
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    n = meta.get("config", {}).get("n_samples", "?")
    for i, (ax, name) in enumerate(zip(axes, ("Kaiming-normal", "Xavier-normal"))):
        im = ax.imshow(f[i], origin="lower", cmap="magma", vmin=0, vmax=1, aspect="auto")
        for r in range(len(ds)):
            for c in range(len(ls)):
                txt_col = "white" if f[i, r, c] < 0.6 else "black"
                ax.text(c, r, f"{f[i, r, c]:.2f}\n{mc[i, r, c]:.2f}", ha="center", va="center",
                        fontsize=6.5, color=txt_col)
        ax.set_xticks(range(len(ls)), [str(x) for x in ls])
        ax.set_yticks(range(len(ds)), [str(x) for x in ds])
        ax.set_xlabel("hidden width l")
        ax.set_ylabel("input dimension d")
        ax.set_title(f"{name} (max |MC - formula| = {np.abs(z[i]).max():.1f} s.e.)", fontsize=9)
    fig.suptitle(f"d-l-1 ReLU net: P(H disconnected) = P(some c_k < 0); each cell: formula (top), "
                 f"Monte Carlo (bottom, n = {n})", fontsize=10)
    fig.colorbar(im, ax=axes, shrink=0.85, label="probability")
    return fig


def _spread(x) -> str:
    """``mean (min-max)`` of a per-seed count array."""
    x = np.asarray(x)
    return f"{x.mean():.1f} ({x.min()}-{x.max()})" if x.min() != x.max() else f"{x.min()}"


def plot_pruning(a: dict, meta: dict):
    regs, steps, loss, kappa = a["regularisers"], a["steps"], a["loss"], a["kappa"]
    ratio, floor = a["sv_ratio"], 1e-8
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(15.5, 5.2))
    colors = plt.get_cmap("tab10")
    styles = ("-", "--", "-.", "-", ":")  # several curves sit on top of each other at 0 in the middle panel
    cfg = meta.get("config", {})
    tau = cfg.get("prune_tau", "?")
    for i, r in enumerate(regs):
        ok = "bit-equal" if a["bit_equal"][i].all() else "DIFFERS"
        ls = styles[i % len(styles)]
        # one legend for the three panels (below them): the per-seed counts summarised, not listed
        label = (f"{r}: exact cut-offs at the end {_spread(kappa[i][:, -1])}, pruned f {ok}; "
                 f"magnitude pruning at tau = {tau} cuts off {_spread(a['kappa_tau'][i])}")
        ax1.plot(np.maximum(steps, 1), np.median(loss[i], 0), color=colors(i), lw=1.8, ls=ls, label=label)
        ax1.fill_between(np.maximum(steps, 1), loss[i].min(0), loss[i].max(0), color=colors(i), alpha=0.12)
        ax2.plot(steps, kappa[i].mean(0), color=colors(i), lw=1.8, ls=ls)
        rc = np.maximum(ratio[i], floor)
        ax3.plot(np.maximum(steps, 1), np.median(rc, 0), color=colors(i), lw=1.8, ls=ls)
        ax3.fill_between(np.maximum(steps, 1), rc.min(0), rc.max(0), color=colors(i), alpha=0.12)
    ax1.set_xscale("log")
    ax1.set_yscale("log")
    ax1.set_xlabel("step")
    ax1.set_ylabel("training loss (MSE), median and range")
    ax1.set_title("training loss", fontsize=9)
    ax2.set_xlabel("step")
    ax2.set_ylabel("cut-off sub-networks kappa (mean over seeds)")
    ax2.set_title("exact zeros only", fontsize=9)
    ax3.set_xscale("log")
    ax3.set_yscale("log")
    ax3.axhline(1e-2, color="k", ls=":", lw=1)
    ax3.set_xlabel("step")
    ax3.set_ylabel("s_min / s_max of B~ diag(theta) (median, range)")
    ax3.set_title(f"distance to the singular locus (exact 0 drawn at {floor:g})", fontsize=9)
    n = np.shape(kappa)[1]
    fig.legend(*ax1.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=7.5, frameon=False,
               title=f"regulariser: per-seed counts over {n} seeds, mean (min-max)", title_fontsize=8)
    lam = cfg.get("lam", "?")
    fig.suptitle(f"2-8-8-1 ReLU net, regularisers at lambda = {lam}: L1 and the nuclear norm drive training "
                 "towards singular points (cut-off sub-networks), the proximal L1 step reaches them exactly",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.16, 1, 1))
    return fig


def plot_conservation(a: dict, meta: dict):
    etas, drift, methods = a["etas"], a["drift"], a["methods"]
    fig, ax = plt.subplots(figsize=(6.5, 4.6))
    marks = ("o", "s", "^")
    for i, m in enumerate(methods):
        d = drift[i]
        line, = ax.plot(etas, np.median(d, 1), marker=marks[i], lw=1.5, label=f"{m} (median over seeds)")
        for s in range(d.shape[1]):
            ax.plot(etas, d[:, s], marker=marks[i], ls="none", ms=3, alpha=0.35, color=line.get_color())
    ref = np.median(drift[0], 1)[-1] * etas / etas[-1]
    ax.plot(etas, ref, "k:", lw=1, label="slope 1 (GD: T * eta * B~g^2)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("step size eta (RK4: step h)")
    ax.set_ylabel("max_t |c(t) - c(0)|")
    T = float(a["horizon"])
    err = float(a["gd_identity_err"].max())
    ax.set_title(f"Balance drift up to time T = {T:g} on a random DAG\n"
                 f"GD: drift = sum eta^2 B~g^2 (to {err:.0e}); RK4: integration error only "
                 "(grad L jumps at ReLU kinks); Adam: not conserved", fontsize=8.5)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


PLOTS = {
    "obstruction": plot_obstruction,
    "init_probability": plot_init_probability,
    "pruning": plot_pruning,
    "conservation": plot_conservation,
}
