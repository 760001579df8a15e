"""Linear social choice figures from saved results (``results/<scale>/social_choice_*.npz``); plotting only."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

LOSS_COLORS = {"btl": "C0", "hinge": "C3", "exp": "C2"}
LOSS_WIDTH = {"btl": 3.0, "hinge": 1.2, "exp": 1.2}  # BTL and exp share a direction here: BTL drawn wide


def _level_line(ax, theta, point, color, label=None, ls="-", lw=1.2):
    """The reward's level line through ``point`` (perpendicular to theta), across the axes' limits."""
    t = np.asarray(theta, float)
    d = np.array([-t[1], t[0]]) / np.linalg.norm(t)
    s = np.linspace(-10, 10, 3)
    ax.plot(point[0] + s * d[0], point[1] + s * d[1], color=color, lw=lw, ls=ls, label=label, alpha=0.8)


def plot_ge_instance(a: dict, meta: dict):
    """Ge's construction: candidates, voters, each loss's reward direction and level lines; a zoom on the
    Pareto pair (c', c) shows every fitted reward ranking c above c'."""
    X, V, names = a["candidates"], a["voters"], [str(n) for n in a["names"]]
    losses = [str(s) for s in a["losses"]]
    pa, pb = (int(i) for i in a["pareto_pair"])
    fig, (ax, zx) = plt.subplots(1, 2, figsize=(11.5, 4.8))
    for i, (x, y) in enumerate(X):
        ax.plot(x, y, "ko", ms=5)
        # primed candidates sit eps away from their originals: label them on the other side
        off = (-14, -13) if names[i].endswith("'") else (5, 4)
        ax.annotate(names[i], (x, y), textcoords="offset points", xytext=off, fontsize=9)
    w = a["weights"]
    for v, wi, ls in zip(V, w, ("-", "--")):
        ax.annotate("", xy=0.9 * v / np.linalg.norm(v), xytext=(0, 0),
                    arrowprops={"arrowstyle": "->", "color": "0.3", "lw": 1.5, "ls": ls})
        # above the arrow's tip, so the label never lies on the arrow
        ax.annotate(f"voter ({v[0]:g}, {v[1]:g}), w={wi:.2f}", 0.9 * v / np.linalg.norm(v), textcoords="offset points",
                    xytext=(0, 6), ha="left", va="bottom", fontsize=7, color="0.3")
    for k, loss in enumerate(losses):
        th = a["theta"][k]
        for c in (0, 1, 2):
            _level_line(ax, th, X[c], LOSS_COLORS[loss], label=f"{loss} level lines" if c == 0 else None,
                        ls=":" if loss != "btl" else "-", lw=LOSS_WIDTH[loss])
    ax.set_xlim(-1.3, 2.6)
    ax.set_ylim(-0.6, 1.7)
    ax.set_aspect("equal")
    ax.set_xlabel("feature 1")
    ax.set_ylabel("feature 2")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title("candidates, voters (arrows), level lines of each fitted reward", fontsize=9)
    # Zoom on the Pareto pair.
    cx, cy = X[pb]
    span = 2.5 * np.max(np.abs(X[pa] - X[pb]))
    zx.plot(*X[pb], "ko", ms=7)
    zx.plot(*X[pa], "k^", ms=8)
    zx.annotate(f"{names[pb]} (dominated)", X[pb], textcoords="offset points", xytext=(6, -12), fontsize=9)
    zx.annotate(f"{names[pa]} (every voter prefers it)", X[pa], textcoords="offset points", xytext=(6, 6),
                fontsize=9)
    zx.annotate("", xy=X[pa], xytext=X[pb], arrowprops={"arrowstyle": "->", "color": "k", "lw": 1})
    for k, loss in enumerate(losses):
        th = a["theta"][k]
        m = float(a["margin"][k])
        _level_line(zx, th, X[pb], LOSS_COLORS[loss], lw=LOSS_WIDTH[loss],
                    label=f"{loss}: r({names[pa]}) - r({names[pb]}) = {m:+.3g}")
        # arrow along theta: the side of higher reward
        t = th / np.linalg.norm(th)
        zx.annotate("", xy=(cx + 0.35 * span * t[0], cy + 0.35 * span * t[1]), xytext=(cx, cy),
                    arrowprops={"arrowstyle": "->", "color": LOSS_COLORS[loss], "lw": 1})
    zx.set_xlim(cx - span, cx + span)
    zx.set_ylim(cy - span, cy + span)
    zx.set_aspect("equal")
    zx.set_xlabel("feature 1")
    zx.set_ylabel("feature 2")
    zx.legend(fontsize=7, loc="lower left")
    h = a["hinge_inf_exact"]
    zx.set_title(f"zoom: level lines through {names[pb]}; arrows point to higher reward\n"
                 f"hinge exact: inf L = {h[0]}, inf over r({names[pa]}) >= r({names[pb]}) = {h[1]}",
                 fontsize=8)
    c = meta["config"]
    fig.suptitle(f"Ge et al. Thm 3.1: every loss ranks the Pareto-dominated {names[pb]} above {names[pa]} "
                 f"(p={c['p']}, eps={c['eps']}, delta={c['delta']}; hinge counts {tuple(c['hinge_counts'])}, "
                 f"eps={c['hinge_eps']})", fontsize=9)
    fig.tight_layout()
    return fig


def _mean_se(x):
    n = np.sum(np.isfinite(x), axis=0)
    m = np.nanmean(x, axis=0)
    sd = np.nanstd(x, axis=0, ddof=1)
    return m, sd / np.sqrt(np.maximum(n, 1)), n


def plot_coverage(a: dict, meta: dict):
    """(a) mean angle between the fit on N uniform comparisons and the uniform-coverage direction, with
    the predicted c/sqrt(N); (b) share of fits outside the voters' cone and of refused draws; (c) the
    coverage dose-response on the 3-pair counterexample."""
    fig, (ax, bx, cx) = plt.subplots(1, 3, figsize=(15, 4.4))
    N, NN = a["sample_sizes"], a["narrow_sample_sizes"]
    for fam, n, lab, mk, col in (("", N, f"d={a['voters'].shape[1]}, {a['voters'].shape[0]} voters", "o", "C0"),
                                 ("narrow_", NN, "d=2, voters 5 deg apart", "s", "C1")):
        m, se, _ = _mean_se(a[f"{fam}angle_deg"])
        ax.errorbar(n, m, yerr=se, fmt=mk + "-", ms=4, capsize=2, color=col, label=f"{lab} (mean +- SE)")
        out = np.nanmean(1 - a[f"{fam}in_cone"], axis=0)
        bx.plot(n, out, mk + "-", color=col, label=f"{lab}: outside the cone (share of fitted)")
        bx.plot(n, a[f"{fam}refused"].mean(0), mk + ":", color=col, mfc="none",
                label=f"{lab}: refused, no finite MLE (share of draws)")
    c = float(a["predicted_c_deg"])
    ax.plot(N, c / np.sqrt(N), "k--", lw=1, label=f"predicted {c:.1f} deg / sqrt(N)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("sampled comparisons N")
    ax.set_ylabel("angle to the uniform-coverage direction (deg)")
    ax.legend(fontsize=7)
    ax.set_title("finite samples approach the limit like N^(-1/2)", fontsize=9)
    bx.set_xscale("log")
    bx.set_xlabel("sampled comparisons N")
    bx.set_ylabel(f"share of {a['angle_deg'].shape[0]} draws")
    bx.legend(fontsize=7)
    bx.set_title("share of fits outside the cone -> 0 (that is, P(fit in the cone) -> 1)", fontsize=9)
    al = a["alphas"]
    cx.plot(al, a["dose_pair_margin"], "C0-", label="cos(theta, unanimous difference x3)")
    cx.plot(al, a["dose_cone_margin"], "C1-", label="cone margin (< 0: outside the cone)")
    for arc, apm, acm, ls in zip(a.get("dose_arcs", []), a.get("dose_arc_pair_margin", []),
                                 a.get("dose_arc_cone_margin", []), (":", "-.")):
        cx.plot(al, apm, "C0" + ls, lw=0.9, label=f"control, coverage on {arc[0]:g}..{arc[1]:g} deg only: cos")
        cx.plot(al, acm, "C1" + ls, lw=0.9, label=f"control, coverage on {arc[0]:g}..{arc[1]:g} deg only: cone")
    cx.axhline(0, color="0.5", lw=0.8)
    for v, lab, col in ((float(a["alpha_fix"]), "pair fixed", "C0"), (float(a["alpha_po"]), "whole-space PO",
                                                                     "C1")):
        cx.axvline(v, color=col, ls=":", lw=1)
        cx.text(v, 0.25 if col == "C0" else -0.15, f" {lab}\n alpha={v:.4f}", color=col, fontsize=7,
                va="bottom", ha="right" if col == "C0" else "left")
    cx.set_xscale("symlog", linthresh=0.01)
    cx.set_xlim(0, 1)
    cx.set_xlabel("share alpha of uniform coverage mixed in")
    cx.set_ylabel("cosine or cone margin of the fitted reward")
    cx.legend(fontsize=7, loc="lower right")
    cx.set_title(f"dose-response (BTL, p={float(a['dose_p'])}, s={float(a['dose_s'])})", fontsize=9)
    fig.suptitle(f"H&K Thm 5.1 (uniform coverage restores PO): {a['angle_deg'].shape[0]} seeds per N",
                 fontsize=9)
    fig.tight_layout()
    return fig


def plot_polynomial(a: dict, meta: dict):
    """(a) share of random instances whose BTL reward reverses a Pareto pair, per degree (binomial SE);
    (b) the margin on ex7's Pareto pair per degree."""
    degs = a["degrees"]
    valid, viol, unc = a["valid"], a["violated"], a["uncertain"]
    lin = int(np.nonzero(degs == 1)[0][0])
    lin_ok = valid[:, lin] & ~viol[:, lin] & ~unc[:, lin]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = np.arange(len(degs))
    series = [("any Pareto pair", viol, valid), ("given the linear fit is Pareto optimal", viol,
                                                 valid & lin_ok[:, None]),
              ("the constructed pair", a["pair_violated"], valid)]
    top = 0.0
    for k, (lab, hit, base) in enumerate(series):
        n = base.sum(0)
        r = (hit & base).sum(0) / np.maximum(n, 1)
        se = np.sqrt(r * (1 - r) / np.maximum(n, 1))
        ax.bar(x + (k - 1) * 0.27, r, 0.27, yerr=se, capsize=3, label=lab)
        top = max(top, float(np.max(r + se)))
    ax.set_ylim(0, 1.45 * top)
    ax.set_xticks(x, [f"degree {d}" for d in degs])
    ax.set_ylabel("share of instances with a certified PO violation")
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{valid.shape[0]} random instances, {a['instances'].shape[1]} candidates each", fontsize=9)
    m = a["ex7_margin"]
    bx.bar(x, m, color=["C2" if v > 0 else "C3" for v in m])
    for i, (v, rk) in enumerate(zip(m, a["ex7_rank"])):
        bx.text(i, v * (1.15 if v > 0 else 1.6), f"{v:+.4f}\nlifted rank {rk}", ha="center",
                va="bottom" if v > 0 else "top", fontsize=8)
    bx.axhline(0, color="0.4", lw=0.8)
    bx.set_yscale("symlog", linthresh=0.01)
    bx.set_ylim(-1, 20)
    bx.set_xticks(x, [f"degree {d}" for d in degs])
    bx.set_ylabel("r(c') - r(c) on ex7 (< 0: PO violated)")
    bx.set_title("ex7: linear is Pareto optimal, degree 2 is not;\ndegree 3 saturates its 7 candidates "
                 "(unrestricted BTL, which is PO)", fontsize=9)
    c = meta["config"]
    fig.suptitle(f"H&K Thm 4.1: polynomial rewards still violate PO (BTL; voters (1,0) w={c['p_major']}, "
                 f"(0,1); copy shifted by {c['eps']})", fontsize=9)
    fig.tight_layout()
    return fig


def plot_poly_degrees(a: dict, meta: dict):
    """Theorem 4.1 for every degree: share of layouts (with its binomial SE) whose degree-d BTL reward
    reverses the constructed Pareto pair (c1, c0), any Pareto pair, a majority pair (PMC), and the same for
    the unrestricted reward (the control)."""
    degs = a["degrees"]
    valid = a["valid"].astype(bool)
    n = np.maximum(valid.sum(0), 1)
    series = [("(c1, c0) reversed (PO and PMC)", a["pair_reversed"]), ("any Pareto pair reversed",
                                                                       a["po_reversed"] > 0),
              ("a majority pair reversed (PMC)", a["pmc_reversed"] > 0),
              ("unrestricted reward: a Pareto pair reversed", a["unr_po_reversed"] > 0)]
    fig, ax = plt.subplots(figsize=(8, 4.2))
    x = np.arange(len(degs))
    for k, (lab, hit) in enumerate(series):
        r = (hit & valid).sum(0) / n
        ax.bar(x + (k - 1.5) * 0.2, r, 0.2, yerr=np.sqrt(r * (1 - r) / n), capsize=2, label=lab)
    ax.set_xticks(x, [f"degree {d}\n{d * (d + 1) + 2} candidates" for d in degs])
    ax.set_ylabel(f"share of {valid.shape[0]} layouts (certified)")
    ax.legend(fontsize=7, loc="upper left")
    c = meta["config"]
    ax.set_title(f"H&K Thm 4.1 for every degree: d lines of slope -2, c1 = c0 + {c['delta']} u (BTL; voters "
                 f"(1,0) w={c['p_major']}, (0,1))", fontsize=9)
    fig.tight_layout()
    return fig


def plot_lcpo(a: dict, meta: dict):
    """LCPO on profiles with every voter below one half: per family, the draws with a majority cycle, with
    a feasible PMC ranking, with a Pareto pair reversed by LCPO and by leximax Copeland without the Pareto
    constraints; (b) winner monotonicity: winner changes after raising vs lowering it one position."""
    fams = [str(f) for f in a["families"]]
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.2))
    x = np.arange(len(fams))
    series = [("majority cycle", a["cycle"]), ("PMC applies", a["pmc_applies"]),
              ("LCPO reverses a Pareto pair", a["po_violations"] > 0),
              ("without Pareto constraints: reverses one", a["ablation_po_violations"] > 0)]
    for k, (lab, hit) in enumerate(series):
        ax.bar(x + (k - 1.5) * 0.2, [int(np.sum(hit[a["family"] == i])) for i in range(len(fams))], 0.2, label=lab)
    ax.set_xticks(x, [f"{f}\n({int(np.sum(a['family'] == i))} draws)" for i, f in enumerate(fams)])
    ax.set_ylabel("draws")
    ax.legend(fontsize=7)
    ax.set_title("Ge Thm 4.3: LCPO is PO and PMC; its Pareto constraints bind", fontsize=9)
    for k, (lab, tot, ch) in enumerate((("winner raised one position", "raises", "raise_changed"),
                                        ("winner lowered (control)", "lowers", "lower_changed"))):
        t, c = int(a[tot].sum()), int(a[ch].sum())
        bx.bar(k, c / max(t, 1), 0.6, color=f"C{k}")
        bx.text(k, c / max(t, 1), f"{c} of {t}", ha="center", va="bottom", fontsize=8)
    bx.set_xticks([0, 1], ["winner raised", "winner lowered\n(control)"])
    bx.set_ylabel("share of modified profiles whose LCPO winner changes")
    bx.set_title("winner monotonicity", fontsize=9)
    fig.tight_layout()
    return fig


PLOTS = {"ge_instance": plot_ge_instance, "coverage": plot_coverage, "polynomial": plot_polynomial,
         "poly_degrees": plot_poly_degrees, "lcpo": plot_lcpo}
