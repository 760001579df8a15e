"""MDM-variance figures from saved results (``results/<scale>/mdm_variance_*.npz``); plotting only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np


def plot_decomposition(a: dict, meta: dict):
    """Stacked A, B, C bars per model (MDM / ARM, oracle / learned) with the direct variance and SEs."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    names = [str(m) for m in a["methods"]]
    x = np.arange(len(names))
    bottom = np.zeros(len(names))
    for k, c in (("A", "C0"), ("B", "C1"), ("C", "C2")):
        ax.bar(x, a[k], bottom=bottom, color=c, width=0.6, label={"A": "A masking pattern", "B": "B masking rate",
                                                                   "C": "C data"}[k])
        bottom = bottom + a[k]
    ax.errorbar(x, a["total"], yerr=a["total_se"], fmt="none", ecolor="k", capsize=3)
    ax.errorbar(x + 0.38, a["direct_var"], yerr=a["direct_var_se"], fmt="D", color="k", ms=4,
                label="direct i.i.d. variance ± SE")
    ax.set_xticks(x, [n.replace("_", "\n") for n in names])
    ax.set_ylabel("variance of the per-sample loss")
    c = meta["config"]
    ax.set_title(f"Var(l) = A + B + C, Markov chain V={c['vocab']}, L={c['length']}, eps={c['eps']}\n"
                 f"(learned = chain estimated from {c['n_fit']} samples)", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_pots(a: dict, meta: dict):
    """sqrt(E[l^2|t]) and E[l|t] per bin; P-POTS and EPR densities; variance ratios against eps."""
    fig, (ax1, ax2, ax3) = plt.subplots(1, 3, figsize=(13, 4))
    e = a["edges"]
    mid = 0.5 * (e[1:] + e[:-1])
    ax1.plot(mid, np.sqrt(a["m2"]), "o", ms=3, label="sqrt E[l²|t] (bin draws)")
    ax1.plot(mid, a["g"], "s", ms=3, label="g(t) = E[l|t] (bin draws)")
    ax1.plot(a["exact_t"], np.sqrt(a["exact_m2"]), "k-", lw=1, label="exact in t (masks enumerated)")
    ax1.plot(a["exact_t"], a["exact_g"], "k--", lw=1)
    ax1.set_xscale("log")
    ax1.set_xlabel("t")
    ax1.set_ylabel("per-sequence loss moment (nats)")
    ax1.legend(fontsize=8)
    ax1.set_title("conditional moments (oracle MDM)", fontsize=9)
    ax2.stairs(a["density_pots"], e, label="P-POTS p* (bins)")
    ax2.stairs(a["density_epr"], e, ls="--", label="paper's EPR fit")
    ax2.axhline(1 / (e[-1] - e[0]), color="0.5", lw=0.8, label="uniform")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("t")
    ax2.set_ylabel("density")
    ax2.legend(fontsize=8)
    ax2.set_title("sampling densities", fontsize=9)
    eps = a["eps_list"]
    n_exact = int(np.prod(np.shape(a["exact_sums"])[:2]))
    ax3.plot(eps, a["exact_var_optimal"] / a["exact_var_uniform"], "k-",
             label=f"P-POTS / uniform (exact in t, {n_exact} fresh sequences)")
    ax3.plot(eps, a["exact_var_paper"] / a["exact_var_uniform"], "x", color="C3", ms=8,
             label="paper's sqrt(g² + v_within) / uniform (exact)")
    ax3.plot(eps, a["var_pots"] / a["var_uniform"], "o",
             label=f"P-POTS / uniform ({len(e) - 1} bins; plug-in of the bin draws, biased low)")
    ax3.plot(eps, a["var_epr"] / a["var_uniform"], "s--", label="EPR / uniform (bins)")
    ax3.set_xscale("log")
    ax3.set_xlabel("eps (t >= eps)")
    ax3.set_ylabel("variance ratio")
    ax3.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3))  # below the axes: off the points
    ax3.set_title(f"variance ratio to uniform t; direct draws at eps={eps[0]:g}, variances ± SE:\n"
                  f"P-POTS {float(a['meas_pots']):.3f} ± {float(a['meas_pots_se']):.3f}, uniform "
                  f"{float(a['meas_uniform']):.3f} ± {float(a['meas_uniform_se']):.3f} (nats²)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_mirror(a: dict, meta: dict):
    """A ratio and pair correlation against t: MIRROR and MultiSample-2, oracle and context-free."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    t = a["t_grid"]
    tt = np.linspace(0.02, 0.98, 200)
    closed = np.where(tt <= 0.5, (1 - 2 * tt) / (2 * (1 - tt)), (2 * tt - 1) / (2 * tt))
    ax1.plot(tt, closed, "k-", lw=1, label="closed form (context-free)")
    ax2.plot(tt, -np.minimum(tt, 1 - tt) / np.maximum(tt, 1 - tt), "k-", lw=1, label="closed form (context-free)")
    for model, mk in (("oracle", "o"), ("context_free", "s")):
        for pair, ls in (("mirror", "-"), ("multisample2", ":")):
            lab = f"{model.replace('_', '-')} {pair}"
            ax1.errorbar(t, a[f"{model}_{pair}_ratio"], yerr=a[f"{model}_{pair}_ratio_se"], fmt=mk, ls=ls, ms=4,
                         capsize=2, label=lab)
            ax2.errorbar(t, a[f"{model}_{pair}_rho"], yerr=a[f"{model}_{pair}_rho_se"], fmt=mk, ls=ls, ms=4,
                         capsize=2, label=lab)
    ax1.axhline(0.5, color="0.5", lw=0.8)
    ax1.set_xlabel("t")
    ax1.set_ylabel("A_pair / A_single")
    ax1.legend(fontsize=7)
    ax2.set_xlabel("t")
    ax2.set_ylabel("pair correlation rho")
    ax2.legend(fontsize=7)
    fig.suptitle("MIRROR (shared U) vs two independent masks at equal cost", fontsize=10)
    fig.tight_layout()
    return fig


def plot_training(a: dict, meta: dict):
    """Validation MDM loss against steps (mean over seeds) and the final loss per seed of each trained method:
    standard (one mask), P-POTS, MIRROR, P-POTS + MIRROR (the methods Tables 1 and 2 rank), MultiSample-2
    (two independent masks, MIRROR's cost) and the thinned control."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.2))
    steps = a["steps"]
    methods = (("standard", "C0", "standard (1 mask)"), ("pots", "C1", "P-POTS (1 mask)"),
               ("mirror", "C4", "MIRROR (2 masks)"), ("pots_mirror", "C3", "P-POTS + MIRROR (2 masks)"),
               ("multisample2", "C2", "MultiSample-2 (2 masks)"), ("thinned", "C7", "thinned (control, 1 mask)"))
    methods = tuple(x for x in methods if f"{x[0]}_val_loss" in a)
    base = a["standard_val_loss"][:, -1]
    for j, (m, c, lab) in enumerate(methods):
        v = a[f"{m}_val_loss"]
        mean, se = v[:, 1:].mean(0), v[:, 1:].std(0, ddof=1) / np.sqrt(v.shape[0])
        ax1.errorbar(steps[1:] + 2.0 * (j - 2.5), mean, yerr=2 * se, color=c, marker="o", ms=3, capsize=2, label=lab)
        d = v[:, -1] - base
        ax2.plot(np.full(d.size, j), d, "o", color=c, alpha=0.6, ms=4)
        se = np.std(d, ddof=1) / np.sqrt(d.size)
        ax2.errorbar(j + 0.2, d.mean(), yerr=2 * se, fmt="s", color="k", ms=4, capsize=3)
    ax2.axhline(0.0, color="0.5", lw=0.8)
    ax1.set_xlabel("step")
    ax1.set_ylabel("validation MDM loss (nats/char)\nmean +- 2 SE over seeds")
    ax1.legend(fontsize=7)
    ax2.set_xticks(range(len(methods)), [lab.replace(" (", "\n(").replace(" + ", "\n+ ") for _, _, lab in methods],
                   fontsize=7)
    ax2.set_xlim(-0.5, len(methods) - 0.3)
    ax2.set_ylabel("final loss - standard's, per seed (lower: better)")
    gm = lambda x, y: np.exp(np.mean(np.log(a[f"grad_var_{x}"]) - np.log(a[f"grad_var_{y}"])))  # noqa: E731
    c = meta["config"]
    ax2.set_title(f"black: mean +- 2 SE (paired); gradient variance (geo. mean): MS-2 / P+M = "
                  f"{gm('multisample2', 'pots_mirror'):.2f}, std / P+M = {gm('standard', 'pots_mirror'):.2f}",
                  fontsize=8)
    fig.suptitle(f"small MDMs on stdlib source: {c['n_seeds']} seeds, {c['steps']} steps, batch {c['batch']}, "
                 f"context {c['seq_len']}, d_model {c['d_model']}", fontsize=10)
    fig.tight_layout()
    return fig


PLOTS = {"decomposition": plot_decomposition, "pots": plot_pots, "mirror": plot_mirror, "training": plot_training}
