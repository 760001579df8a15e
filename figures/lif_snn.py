"""LIF-SNN figures (Araya, Datres, Kutyniok, ICLR 2026) from saved results (``results/<scale>/lif_snn_*.npz``);
plotting only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

KIND_LABEL = {"slif": "sIF (sign spikes, ±1 input)", "lif": "IF (Heaviside spikes, {0,1} input)"}


def _se(x: np.ndarray, axis: int = 0) -> np.ndarray:
    return x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])


def plot_single_neuron(a: dict, meta: dict):
    """Figure 1: ENS at nu = 1/sqrt(n) against n for every step t, sIF (exact lines, Monte Carlo points) and
    IF (Monte Carlo), with the t = 1 plug-in limits."""
    c = meta["config"]
    kinds = [k for k in ("slif", "lif") if f"{k}_mc_mean" in a]
    fig, axes = plt.subplots(1, len(kinds), figsize=(5.6 * len(kinds), 4.4), sharey=True, squeeze=False)
    n, steps = a["widths"], a["steps"]
    cmap = plt.get_cmap("viridis")
    for ax, kind in zip(axes[0], kinds):
        mean, se = a[f"{kind}_mc_mean"], a[f"{kind}_mc_se"]
        for j, t in enumerate(steps.tolist()):
            col = cmap(j / max(1, steps.size - 1))
            if kind == "slif" and np.all(np.isfinite(a["slif_exact"][:, j])):
                ax.plot(n, a["slif_exact"][:, j], color=col, lw=1.2, label=f"t={t}" if j in (0, steps.size - 1) else None)
                ax.errorbar(n, mean[:, j], yerr=se[:, j], fmt="o", ms=3, color=col, capsize=2)
            else:
                ax.errorbar(n, mean[:, j], yerr=se[:, j], fmt="o-", ms=3, lw=1, color=col, capsize=2,
                            label=f"t={t}" if j in (0, steps.size - 1) else None)
        plug = a[f"{kind}_plugin_t1"]
        ax.plot(n, plug, "k--", lw=1, label="t=1 plug-in limit (ρ = 1−2ν)" if kind == "slif" else "t=1 plug-in limit")
        ref = plug[0] * (n / n[0]) ** -0.25
        ax.plot(n, ref, ":", color="0.5", lw=1, label="∝ n^(-1/4)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("n (input dimension)")
        ax.set_title(KIND_LABEL[kind] + (": exact (lines) vs MC (points)" if kind == "slif" else ": MC"), fontsize=9)
        ax.legend(fontsize=7)
    axes[0][0].set_ylabel("P[s_t(x) ≠ s_t(y)]  at ν = 1/√n")
    fig.suptitle(f"One random neuron, static input, θ = {c['theta']}, β = {c['beta']}, t = 1..{c['T']} (dark → light); "
                 f"{int(a['mc_pairs'])} MC pairs per point, ±SE bars", fontsize=9)
    fig.tight_layout()
    return fig


def plot_depth(a: dict, meta: dict):
    """Figure 2: ENS of random binary classifiers against width (per depth), depth (per width) and T."""
    c = meta["config"]
    n, depths, steps = a["widths"], a["depths"], a["steps"]
    t_idx = min(5, steps.size) - 1
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    cmap = plt.get_cmap("plasma")
    for kind, ls in (("slif", "-"), ("lif", "--")):
        if f"{kind}_ens" not in a:
            continue
        ens, se = a[f"{kind}_ens"], a[f"{kind}_se"]
        for j, L in enumerate(depths.tolist()):
            col = cmap(j / max(1, depths.size))
            axes[0].errorbar(n, ens[:, j, t_idx], yerr=se[:, j, t_idx], fmt="o" + ls, ms=3, color=col, capsize=2,
                             lw=1.2 if kind == "slif" else 0.8, label=f"L={L}" if kind == "slif" else None)
        for i, w in enumerate(n.tolist()):
            col = plt.get_cmap("viridis")(i / max(1, n.size - 1))
            axes[1].errorbar(depths, ens[i, :, t_idx], yerr=se[i, :, t_idx], fmt="o" + ls, ms=3, color=col,
                             capsize=2, lw=1.2 if kind == "slif" else 0.8,
                             label=f"n={w}" if kind == "slif" else None)
        fixed = a.get("per_network_fixed")
        if fixed is not None and fixed.size:  # the control: the same networks at a fixed nu (sIF only drawn)
            per = fixed[list(a["kinds"]).index(kind), ..., t_idx]  # [W, N, D]
            for j in range(depths.size) if kind == "slif" else ():
                axes[0].errorbar(n, per[:, :, j].mean(1), yerr=_se(per[:, :, j], 1), fmt="s:", ms=3, lw=0.8,
                                 color=cmap(j / max(1, depths.size)), capsize=1,
                                 label=f"fixed ν = {float(a['fixed_nu']):g}" if j == 0 else None)
        drop = a.get("per_network_dropout")
        if drop is not None and drop.size:  # input dropout on the same networks and x (depth panel)
            per = drop[list(a["kinds"]).index(kind), ..., t_idx]  # [W, N, R, D]
            for r, q in enumerate(a["dropout_rates"].tolist()):
                axes[1].errorbar(depths, per[-1, :, r].mean(0), yerr=_se(per[-1, :, r]), fmt="x" + ls, ms=4, lw=0.8,
                                 color=plt.get_cmap("cool")(r / max(1, a["dropout_rates"].size - 1)), capsize=1,
                                 label=f"{kind} dropout {q:g} (n={int(n[-1])})")
        mid = n.size // 2
        for j, L in enumerate(depths.tolist()):
            col = cmap(j / max(1, depths.size))
            axes[2].errorbar(steps, ens[mid, j], yerr=se[mid, j], fmt=ls, color=col, capsize=1,
                             lw=1.2 if kind == "slif" else 0.8, label=f"L={L}" if kind == "slif" else None)
    drop = a.get("per_network_dropout")
    if n.size == 1 and drop is not None and drop.size:  # one width: the perturbations side by side at L = max
        axes[0].clear()
        cases = [("flips", a["per_network"][..., -1, t_idx])]
        if np.asarray(a["per_network_fixed"]).size:
            cases.append((f"flips {float(a['fixed_nu']):g}", a["per_network_fixed"][..., -1, t_idx]))
        cases += [(f"dropout {q:g}", drop[:, :, :, r, -1, t_idx]) for r, q in enumerate(a["dropout_rates"].tolist())]
        for k, kind in enumerate(a["kinds"].tolist()):
            per = [v[k, 0] for _, v in cases]
            axes[0].bar(np.arange(len(cases)) + 0.4 * k, [v.mean() for v in per], 0.4, yerr=[_se(v) for v in per],
                        capsize=2, color="C0" if kind == "slif" else "C3", label=kind)
        axes[0].set_xticks(np.arange(len(cases)) + 0.2, [name for name, _ in cases], fontsize=7)
        axes[0].set_title(f"L = {int(depths[-1])}, n = {int(n[0])}, T = {t_idx + 1}: flips at ν = "
                          f"{c['nu_scale']:g} and dropout", fontsize=9)
    else:
        if c.get("nu_rule", "sqrt") == "sqrt" and "slif_ens" in a and n.size > 1:
            # Theorem 1's rate at nu = 1/sqrt(n): NS ~ n^(-1/4), drawn through the sIF L = 1 point at the smallest n
            y0 = float(a["slif_ens"][0, 0, t_idx])
            axes[0].plot(n, y0 * (n / n[0]) ** -0.25, color="0.4", ls=(0, (6, 3)), lw=1,
                         label="n^(-1/4) (Theorem 1), through L=1 at the smallest n")
        axes[0].set_xscale("log")
        axes[0].set_yscale("log")
        lo, hi = axes[0].get_ylim()
        axes[0].set_ylim(lo * 0.4, hi)  # room below the curves for the legend
        axes[0].set_xlabel("width n")
        axes[0].set_title(f"ENS vs width (T = {t_idx + 1})", fontsize=9)
    axes[1].set_xticks(depths)
    axes[1].set_xlabel("depth L (L − 1 hidden layers + readout)")
    axes[1].set_title(f"ENS vs depth (T = {t_idx + 1})", fontsize=9)
    axes[2].set_xlabel("T (steps counted by the readout)")
    axes[2].set_title(f"ENS vs T at n = {int(n[n.size // 2])}", fontsize=9)
    rule = c.get("nu_rule", "sqrt")
    for ax in axes:
        ax.set_ylabel("ENS at ν = 1/√n" if rule == "sqrt" else "ENS at ν' = 1/(√n ln n)" if rule == "sqrt_log"
                      else f"ENS at ν = {c['nu_scale']:g}")
        ax.legend(fontsize=7)
    if n.size > 1:
        axes[0].legend(fontsize=6, loc="lower left", ncol=2)
    k_out = int(a["n_out"]) if "n_out" in a else 2
    kind_of = "binary" if k_out == 2 else f"{k_out}-class"
    fig.suptitle(f"Random {kind_of} classifiers: sIF solid, IF dashed; θ = {c['theta']}, β = {c['beta']}, "
                 f"{c['n_networks']} networks × {c['pairs']} pairs per point (±SE over networks); ties → class 0"
                 + (" (the lowest index)" if k_out > 2 else ""), fontsize=9)
    fig.tight_layout()
    return fig


def plot_spectrum(a: dict, meta: dict):
    """Expected level weights E W^k of random sLIF classifiers per depth vs a uniformly random function."""
    c = meta["config"]
    widths, depths = a["widths"].tolist(), a["depths"].tolist()
    fig, axes = plt.subplots(1, len(widths), figsize=(5 * len(widths), 4.2), squeeze=False)
    cmap = plt.get_cmap("plasma")
    for i, (ax, n) in enumerate(zip(axes[0], widths)):
        k = np.arange(n + 1)
        w = a["weights"][i, ..., : n + 1]
        for j, L in enumerate(depths):
            m, s = w[:, j].mean(0), _se(w[:, j])
            ax.errorbar(k, np.maximum(m, 1e-6), yerr=s, fmt="o-", ms=3, lw=1.2, capsize=2,
                        color=cmap(j / max(1, len(depths))),
                        label=f"sLIF L={L} (ENS {a['ns'][i, :, j].mean():.3f})")
        ax.plot(k, a["random_expected"][i, : n + 1], "k--", lw=1.2,
                label=f"random function (ENS {a['random_ns'][i].mean():.3f})")
        ax.plot(k, np.maximum(a["neuron_expected"][i, : n + 1], 1e-6), ":", color="0.45", lw=1.2,
                label="one neuron, t = 1 (exact)")
        ax.axvline(np.sqrt(n), color="0.6", lw=0.8)
        ax.text(np.sqrt(n), 0.6, " 1/ν = √n", fontsize=7, color="0.4")
        ax.axvline(np.sqrt(n) * np.log(n), color="0.6", lw=0.8, ls="--")
        ax.text(np.sqrt(n) * np.log(n), 0.6, " √n ln n (Cor. 1)", fontsize=7, color="0.4")
        ax.set_yscale("log")
        ax.set_ylim(1e-6, 1.5)
        ax.set_xlabel("degree k")
        ax.set_title(f"n = {n}: E W^k (full Walsh–Hadamard transform)", fontsize=9)
        ax.legend(fontsize=7, loc="lower center")
    axes[0][0].set_ylabel("expected Fourier weight at level k")
    fig.suptitle(f"Spectral simplicity: random binary sLIF classifiers (T = {c['T']}, θ = {c['theta']}, "
                 f"{c['n_networks']} networks, ±SE) vs a uniformly random function", fontsize=9)
    fig.tight_layout()
    return fig


def plot_training(a: dict, meta: dict):
    """Figure 3: NS against nu before (dashed) and after (solid) training, per task and kind."""
    c = meta["config"]
    nus = a["nus"]
    tasks = [t for t in ("digits2", "digits10", "parity") if t in c["tasks"]]
    case = {str(name): j for j, name in enumerate(a["cases"])}
    fig, axes = plt.subplots(2, len(tasks), figsize=(5 * len(tasks), 7.5), squeeze=False, sharex=True)
    colors = {"slif": "C0", "lif": "C3"}
    titles = {"digits2": f"digits {c['digit_pair'][0]} vs {c['digit_pair'][1]} (n = 64)",
              "digits10": "digits, 10 classes (n = 64)",
              "parity": f"{c['parity_bits']}-bit parity of n = {c['parity_n']} (control)"}
    for col, task in enumerate(tasks):
        kinds = c["parity_kinds"] if task == "parity" else c["kinds"]
        for row, (key, where) in enumerate((("ns", "x uniform"), ("data_ns", "x = held-out input"))):
            ax = axes[row][col]
            for kind in kinds:
                j = case[f"{task}_{kind}"]
                acc = float(np.mean(a["test_acc"][:, j]))
                for when, ls in (("before", "--"), ("after", "-")):
                    v = a[f"{key}_{when}"][:, j]
                    ax.errorbar(nus, v.mean(0), yerr=_se(v), fmt="o" + ls, ms=3, capsize=2, color=colors[kind],
                                mfc="white" if when == "before" else colors[kind],  # hollow before, filled after
                                label=f"{kind} {when}" + (f" (test acc {acc:.2f})" if when == "after" else ""))
            if task == "parity":
                ax.plot(nus, a["parity_ns_exact"], "k:", lw=1, label="NS of the target parity")
            n_in = {"digits2": 64, "digits10": 64, "parity": c["parity_n"]}[task]
            ax.axvline(1 / np.sqrt(n_in), color="0.6", lw=0.8)
            ax.set_xscale("log")
            ax.set_title(f"{titles[task]}: {where}", fontsize=9)
            ax.legend(fontsize=7, handlelength=3)  # long enough to show the dashes
            if col == 0:
                ax.set_ylabel("noise sensitivity NS_ν")
            if row == 1:
                ax.set_xlabel("ν (grey line: 1/√n)")
    fig.suptitle(f"Before (dashed, hollow) and after (solid, filled) surrogate-gradient training: depth {c['depth']}, "
                 f"hidden {c['hidden']}, T = {c['T']}, θ = {c['theta']}, β = {c['beta']}, {c['n_seeds']} seeds (±SE), "
                 f"{c['steps']} Adam steps", fontsize=9)
    fig.tight_layout()
    return fig


def _loglog_slope(n, m, s):
    """Weighted log-log slope and its delta-method SE (the claims' fit, for the picture only)."""
    lx, ly, w = np.log(n), np.log(m), (m / s) ** 2
    xm = np.sum(w * lx) / np.sum(w)
    sxx = np.sum(w * (lx - xm) ** 2)
    return np.sum(w * (lx - xm) * ly) / sxx, 1 / np.sqrt(sxx)


def plot_time_varying(a: dict, meta: dict):
    """Theorem 1 for input sequences: flip probability per step against n (time-varying vs static input,
    beta = 1, with the fixed-nu control), the fitted width exponent per step, and beta = 0.5 vs beta = 1."""
    c = meta["config"]
    n, steps, betas = a["widths"], a["steps"], a["betas"].tolist()
    b1 = betas.index(1.0) if 1.0 in betas else 0
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    for name, ls, lab in (("dynamic", "-", "time-varying"), ("static", "--", "static")):
        for j, col in ((0, "C0"), (steps.size - 1, "C3")):
            per = a[f"{name}_per_seed"][:, b1, :, j]
            axes[0].errorbar(n, per.mean(0), yerr=_se(per), fmt="o" + ls, ms=3, capsize=2, color=col,
                             label=f"{lab}, t={int(steps[j])}")
        per = a[f"{name}_fixed_per_seed"][:, b1, :, -1]
        axes[0].errorbar(n, per.mean(0), yerr=_se(per), fmt="s" + ls, ms=3, capsize=2, color="0.5", lw=0.8,
                         label=f"{lab}, t={int(steps[-1])}, fixed ν = {float(a['fixed_nu']):.3g}")
    if np.all(np.isfinite(a["static_exact"])):
        axes[0].plot(n, a["static_exact"][:, 0], "k:", lw=1, label="static exact, t=1")
    axes[0].set_xscale("log")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("n")
    axes[0].set_ylabel("P[s_t(x) ≠ s_t(y)]")
    axes[0].set_title(f"β = 1, ν = {c['nu_scale']:g}/√n per step", fontsize=9)
    ln = np.log(n.astype(float))
    bound = np.polyfit(ln, -0.25 * ln + np.log(ln), 1)[0]
    for b, beta in enumerate(betas):
        for name, fmt in (("dynamic", "o-"), ("static", "s--")):
            per = a[f"{name}_per_seed"][:, b]
            m, s = per.mean(0), _se(per)
            fits = np.array([_loglog_slope(n, m[:, t], s[:, t]) for t in range(steps.size)])
            axes[1].errorbar(steps + 0.1 * b, fits[:, 0], yerr=fits[:, 1], fmt=fmt, ms=3, capsize=2,
                             color=f"C{2 * b + (name == 'static')}",
                             label=f"{'time-varying' if name == 'dynamic' else 'static'}, β = {beta:g}")
    axes[1].axhline(-0.25, color="k", lw=0.8, ls=":", label="−1/4 (static bound)")
    axes[1].axhline(bound, color="k", lw=0.8, ls="-.", label=f"n^(−1/4) ln n fit ({bound:.3f})")
    axes[1].set_xlabel("step t")
    axes[1].set_ylabel("fitted width exponent (±SE)")
    axes[1].set_title("rate in n per step", fontsize=9)
    lo, hi = axes[1].get_ylim()
    axes[1].set_ylim(lo, hi + 0.6 * (hi - lo))  # room for the legend above the curves
    if len(betas) > 1:
        for i in (0, n.size - 1):
            for b, beta in enumerate(betas):
                per = a["static_per_seed"][:, b, i]
                axes[2].errorbar(steps, per.mean(0), yerr=_se(per), fmt="o-" if b == b1 else "s--", ms=3, capsize=2,
                                 color="C0" if i == 0 else "C3", label=f"static, β = {beta:g}, n = {int(n[i])}")
        axes[2].set_xlabel("step t")
        axes[2].set_ylabel("P[s_t(x) ≠ s_t(y)]")
        axes[2].set_title("static input: leak β = 0.5 vs β = 1", fontsize=9)
    for ax in axes:
        ax.legend(fontsize=7, ncol=2 if ax is axes[1] else 1, loc="upper right" if ax is axes[1] else "best")
    fig.suptitle(f"One random neuron, θ = {c['theta']}, {a['static_per_seed'].shape[0]} seeds × "
                 f"{int(a['pairs_per_seed'])} pairs per point (±SE over seeds)", fontsize=9)
    fig.tight_layout()
    return fig


def plot_accuracy(a: dict, meta: dict):
    """Figure 3's accuracy dependence: NS drop at nu = 1/sqrt(n) against training accuracy, per label-noise
    level (each seed's levels joined by a thin line; level means ±SE), on the task and the parity control."""
    c = meta["config"]
    nus, levels = a["nus"], a["label_noise"]
    pres = ("task", "parity")
    dims = dict(zip(("task", "parity"), a["input_dims"].tolist()))
    titles = {"task": f"{c['task']} with label noise (n = {dims['task']})",
              "parity": f"{c['parity_bits']}-bit parity of n = {c['parity_n']}"
                        + (", fixed sample" if c.get("parity_sample") else "") + ", same levels (control)"}
    fig, axes = plt.subplots(2, len(pres), figsize=(5 * len(pres), 7.5), squeeze=False)
    for col, pre in enumerate(pres):
        v = int(np.argmin(np.abs(nus - 1 / np.sqrt(dims[pre]))))
        acc = a[f"{pre}_train_acc"]
        for row, (key, where) in enumerate((("ns", "x uniform"), ("data_ns", "x = held-out input"))):
            ax = axes[row][col]
            drop = a[f"{pre}_{key}_before"][:, :, v] - a[f"{pre}_{key}_after"][:, :, v]
            ax.plot(acc.T, drop.T, "-", color="0.8", lw=0.6)
            for k, lv in enumerate(levels):
                ax.errorbar(acc[:, k].mean(), drop[:, k].mean(), xerr=_se(acc[:, k]), yerr=_se(drop[:, k]),
                            fmt="o", ms=6, capsize=3, color=f"C{k}", label=f"label noise {lv:g}")
                ax.plot(acc[:, k], drop[:, k], ".", ms=3, color=f"C{k}", alpha=0.6)
            ax.axhline(0, color="k", lw=0.6)
            ax.set_title(f"{titles[pre]}: {where}, ν = {nus[v]:g}", fontsize=9)
            ax.legend(fontsize=7)
            ax.set_xlabel("training accuracy (clean labels)")
            if col == 0:
                ax.set_ylabel("NS drop: before − after training")
    fig.suptitle(f"Does training lower NS more where accuracy is higher? sIF depth {c['depth']}, hidden "
                 f"{c['hidden']}, T = {c['T']}, {c['steps']} Adam steps, {c['n_seeds']} seeds\n(grey: one seed's "
                 "levels; every seed is shown, the claim decides on the seeds fitted at every level)", fontsize=9)
    fig.tight_layout()
    return fig


PLOTS = {"single_neuron": plot_single_neuron, "depth": plot_depth, "spectrum": plot_spectrum,
         "training": plot_training, "time_varying": plot_time_varying, "accuracy": plot_accuracy}
