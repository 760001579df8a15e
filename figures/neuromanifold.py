"""Figures of the neuromanifold paper (plotting only; the numbers come from results/neuromanifold_*.npz)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

_COLORS = {"x3+x2": "C0", "generic cubic": "C2", "generic quintic": "C4", "monomial x3": "C3",
           "quadratic": "C1"}


def plot_dimensions(arrays: dict, meta: dict):
    """Left: exact generic rank against the plain count min(N, dim V) per architecture and activation.
    Right: share of architectures whose rank equals the expected dimension E(w) (the formula capped by
    dim V and by the factorization bound at each hidden layer), per depth and activation, with
    numeric/exact agreement in the legend."""
    acts = [str(a) for a in arrays["activations"]]
    exact, numeric = arrays["exact_rank"], arrays["numeric_rank"]
    n, amb, expd = arrays["n_params"], arrays["ambient"], arrays["expected"]
    depth = arrays["depth"]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4))
    rng = np.random.default_rng(0)
    for i, a in enumerate(acts):
        cap = np.minimum(n, amb[i])
        jit = rng.uniform(-0.25, 0.25, size=cap.shape)
        agree = int(np.sum(numeric[i] == exact[i])) if np.all(numeric[i] >= 0) else None
        lab = a + (f"  (numeric = exact {agree}/{len(cap)})" if agree is not None else "")
        ax.scatter(cap + jit, exact[i] + jit, s=7, alpha=0.45, color=_COLORS.get(a, f"C{i}"), label=lab)
    top = float(np.max(np.minimum(n[None], amb))) + 1
    ax.plot([0, top], [0, top], "k--", lw=0.8, label="rank = min(N, dim V)")
    ax.set_xlabel("min(parameter count N, ambient dim V)")
    ax.set_ylabel("generic Jacobian rank (exact, F_p)")
    ax.set_title("MLP neuromanifold dimension over the grid")
    ax.legend(fontsize=7, loc="upper left")
    depths = sorted(set(depth.tolist()))
    width = 0.8 / len(acts)
    for i, a in enumerate(acts):
        share = [np.mean(exact[i][depth == d] == expd[i][depth == d]) for d in depths]
        bx.bar(np.arange(len(depths)) + (i - (len(acts) - 1) / 2) * width, share, width,
               color=_COLORS.get(a, f"C{i}"), label=a)
    bx.set_xticks(range(len(depths)), [f"L = {d}\n({int(np.sum(depth == d))} nets)" for d in depths])
    bx.set_ylabel("share with rank = E(w)")
    bx.set_ylim(0, 1.05)
    bx.set_title("E(w): N (generic) or N - hidden (monomial), capped by dim V and cuts", fontsize=9)
    bx.legend(fontsize=7)
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
    for name, c in (("mlp", "C0"), ("cnn", "C3")):
        d = arrays[f"{name}_distance"]
        d = d[np.isfinite(d)]
        bx.hist(np.log10(np.maximum(d, 1e-16)), bins=50, alpha=0.6, color=c, label=name.upper())
    bx.set_xlabel("log10 final subnetwork distance")
    bx.set_ylabel("count")
    bx.legend(fontsize=8)
    fig.tight_layout()
    return fig


PLOTS = {"dimensions": plot_dimensions, "exposure": plot_exposure, "sparsity": plot_sparsity}
