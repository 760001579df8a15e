"""Figures of the neuromanifold paper (plotting only; the numbers come from results/neuromanifold_*.npz)."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np

_COLORS = {"x3+x2": "C0", "generic cubic": "C2", "generic quintic": "C4", "monomial x3": "C3",
           "quadratic": "C1"}
_DENSE = re.compile(r"dense\((\d+),(\d+)\)")


def _ramp(acts: list[str]) -> list[int]:
    """Degrees r of the dense activations ``dense(r,seed)`` in the result, sorted."""
    return sorted({int(m.group(1)) for m in map(_DENSE.fullmatch, acts) if m})


def plot_dimensions(arrays: dict, meta: dict):
    """Left (Thm 4.1): per degree r of the ramp, how many grid nets have rank below N for the dense random
    activations (the larger count over the seeds), the monomial x^r and the sparse x^r + x^(r-1), and how
    many dense ones miss E(w). Right: share of nets whose rank equals the expected dimension E(w) (N, or
    N - hidden for monomials, capped by dim V and the factorization bound) per depth, for the named
    activations, with float64/exact agreement in the legend."""
    acts = [str(a) for a in arrays["activations"]]
    exact, numeric, expd = arrays["exact_rank"], arrays["numeric_rank"], arrays["expected"]
    n, depth = arrays["n_params"], arrays["depth"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
    ramp = _ramp(acts)

    def count(name, what="N"):
        i = acts.index(name)
        return int(np.sum(exact[i] < n)) if what == "N" else int(np.sum(exact[i] != expd[i]))

    if ramp:
        dense = [[a for a in acts if (m := _DENSE.fullmatch(a)) and int(m.group(1)) == r] for r in ramp]
        ax.plot(ramp, [max(count(a) for a in ds) for ds in dense], "o-", color="C0",
                label="dense random (max over seeds): rank < N")
        ax.plot(ramp, [max(count(a, "E") for a in ds) for ds in dense], "s--", color="C2",
                label="dense random: rank != E(w)")
        for fmt, c, lab in (("x^{r}", "C3", "monomial x^r: rank < N"), ("x^{r}+x^{r1}", "C1", "sparse x^r + x^(r-1): rank < N")):
            names = [fmt.format(r=r, r1=r - 1) for r in ramp]
            pts = [(r, count(a)) for r, a in zip(ramp, names) if a in acts]
            if pts:
                ax.plot(*zip(*pts), "^:", color=c, label=lab)
        ax.set_xticks(ramp)
    ax.set_xlabel("activation degree r")
    ax.set_ylabel(f"nets of the grid (of {len(n)})")
    ax.set_title("Thm 4.1: rank = N from a large enough degree on", fontsize=10)
    ax.legend(fontsize=7)
    named = [a for a in acts if not (_DENSE.fullmatch(a) or a.startswith("x^"))]
    depths = sorted(set(depth.tolist()))
    width = 0.8 / max(len(named), 1)
    for j, a in enumerate(named):
        i = acts.index(a)
        share = [np.mean(exact[i][depth == d] == expd[i][depth == d]) for d in depths]
        agree = int(np.sum(numeric[i] == exact[i])) if np.all(numeric[i] >= 0) else None
        lab = a + (f"  (float64 = exact {agree}/{len(n)})" if agree is not None else "")
        bx.bar(np.arange(len(depths)) + (j - (len(named) - 1) / 2) * width, share, width,
               color=_COLORS.get(a, f"C{j + 5}"), label=lab)
    bx.set_xticks(range(len(depths)), [f"L = {d}\n({int(np.sum(depth == d))} nets)" for d in depths])
    bx.set_ylabel("share with rank = E(w)")
    bx.set_ylim(0, 1.4)
    bx.set_yticks(np.linspace(0, 1, 6))
    bx.set_title("E(w): N (generic) or N - hidden (monomial), capped by dim V and cuts", fontsize=9)
    bx.legend(fontsize=6.5, loc="upper center", ncol=2)
    fig.tight_layout()
    return fig


def plot_exposure(arrays: dict, meta: dict):
    """Left: fraction of targets with a critical subnetwork point, MLP vs CNN (+- 1 s.e.). Right: the
    gradient norms at the embedded subnetwork optimum (MLP) and of the pruned coordinate (CNN)."""
    tol = float(arrays["tol"])
    mlp, cnn = arrays["mlp_critical"].astype(float), arrays["cnn_critical"].astype(float)
    n = len(mlp)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    fr = [mlp.mean(), cnn.mean()]
    se = [np.sqrt(f * (1 - f) / n) for f in fr]
    ax.bar([0, 1], fr, yerr=se, color=["C0", "C3"], capsize=6)
    for x, f in zip([0, 1], fr):
        ax.text(x + 0.12, f + 0.04, f"{f:.2f}", ha="left")
    ax.set_xticks([0, 1], ["MLP (2,2,1)\nx^3+x^2", "CNN k=(3,2), s=2\ny^2+y"])
    ax.set_ylim(0, 1.1)
    ax.set_ylabel(f"fraction of targets (n = {n})")
    ax.set_title("subnetwork is a critical point of the full loss")
    g_m = arrays["mlp_full_grad"]
    g_c = arrays["cnn_pruned_grad"].ravel()
    g_m, g_c = g_m[np.isfinite(g_m)], g_c[np.isfinite(g_c)]
    lo = max(min(g_m.min(initial=1.0), g_c.min(initial=1.0)), 1e-18)
    bins = np.logspace(np.log10(lo) - 0.5, np.log10(max(g_m.max(initial=1), g_c.max(initial=1))) + 0.5, 40)
    bx.hist(g_m, bins=bins, color="C0", alpha=0.7, label="MLP: |grad L| at embedded subnetwork")
    bx.hist(g_c, bins=bins, color="C3", alpha=0.7, label="CNN: |dL/dw_pruned| at sub-optimum")
    bx.axvline(tol, color="k", ls="--", lw=0.8, label=f"tol {tol:g}")
    bx.set_xscale("log")
    bx.set_xlabel("gradient norm")
    bx.set_ylabel("count")
    bx.set_title("converged runs only")
    bx.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_sparsity(arrays: dict, meta: dict):
    """Left: share of gradient-descent runs ending within each subnetwork-distance threshold (+- 1 s.e.).
    Right: distribution of the final subnetwork distance."""
    th = arrays["thresholds"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, 4))
    x = np.arange(len(th))
    for off, name, c in ((-0.2, "mlp", "C0"), (0.2, "cnn", "C3")):
        ax.bar(x + off, arrays[f"{name}_share"], 0.4, yerr=arrays[f"{name}_share_stderr"], capsize=4,
               color=c, label={"mlp": "MLP (2,2,1)", "cnn": "CNN k=(3,2), s=2"}[name])
    ax.set_xticks(x, [f"< {t:g}" for t in th])
    ax.set_xlabel("relative distance to a subnetwork at the end")
    ax.set_ylabel(f"share of runs (n = {len(arrays['mlp_distance'])})")
    ax.set_title("gradient descent ends near a subnetwork")
    ax.legend(fontsize=8)
    # Shared bins (a quarter decade) drawn as outlines on a log count axis, so both models and the few runs far
    # below the bulk stay visible; distances under 1e-16 (float64 rounding of an exact subnetwork) sit at -16.
    logs = {n: np.log10(np.maximum(arrays[f"{n}_distance"][np.isfinite(arrays[f"{n}_distance"])], 1e-16))
            for n in ("mlp", "cnn")}
    lo = np.floor(min([v.min(initial=0.0) for v in logs.values()]))
    bins = np.arange(lo - 0.125, 0.375, 0.25)
    for (name, c), ls in zip((("mlp", "C0"), ("cnn", "C3")), ("-", "--")):
        bx.hist(logs[name], bins=bins, histtype="step", lw=1.6, ls=ls, color=c,
                label={"mlp": "MLP (2,2,1)", "cnn": "CNN k=(3,2), s=2"}[name])
    for t in th:
        bx.axvline(np.log10(t), color="0.6", lw=0.6, ls=":")
    bx.set_yscale("log")
    bx.set_xlabel("log10 relative distance to a subnetwork at the end (dotted: the thresholds)")
    bx.set_ylabel("runs per quarter decade")
    bx.set_title("final distances (at -16: a subnetwork to float64 rounding)", fontsize=9)
    bx.legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


PLOTS = {"dimensions": plot_dimensions, "exposure": plot_exposure, "sparsity": plot_sparsity}
