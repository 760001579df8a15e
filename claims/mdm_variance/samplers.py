"""MDM claims about the variance-reducing samplers: MIRROR (Sec. 4.2), P-POTS and its estimator, their synergy, the EPR form of p(t) (Sec. 4.1)."""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from claims import ledger
from claims.mdm_variance.common import Z, _consistent, _pool, _setting
from theory import mdm_variance as th

# ---------------------------------------------------------------------------------------------------
# 3. MIRROR (mdm_variance_mirror)
# ---------------------------------------------------------------------------------------------------


def pair_summaries(a) -> dict:
    """``{model}_{pair}`` (and ``oracle_positive``) -> :func:`theory.mdm_variance.pair_summary` of the
    per-sequence blocks ``..._rows [G, R, n_b, 3]`` of the mirror result."""
    return {k[:-5]: th.pair_summary(_pool(a[k], 2)) for k in a if k.endswith("_rows")}


def _worst(name: str, est, se, threshold, kind: str, t) -> ledger.Decision:
    """The ``kind`` test of ``est`` against ``threshold`` at the rate closest to failing (all rates at once)."""
    est, se = np.asarray(est, float), np.asarray(se, float)
    gap = threshold - est if kind == "below" else est - threshold
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.sign(gap) * np.inf)
    j = int(np.argmin(np.nan_to_num(m, nan=0.0)))  # an undecidable rate counts as 0 SE
    return ledger.ztest(f"{name} at every t (closest: t = {float(t[j]):g})", est[j], se[j], threshold, kind, Z)


@ledger.claim("mdm_variance.mirror_halves_A", source="Sec. 4.2 (MIRROR, complementary masks)",
              paper=ledger.PaperValue(0.5, "Sec. 4.2: Var of the MIRROR pair mean = (sigma^2 / 2)(1 + rho) <= "
                                      "sigma^2 / 2 when rho <= 0, i.e. A cut by at least half (an upper bound on the "
                                      "ratio at every t)"),
              statement="MIRROR's pair correlation is negative and it cuts A by at least half at every t, "
                        "leaving B and C unchanged; in the context-free model the ratio is (1-2t)/(2(1-t)) for "
                        "t <= 1/2 and (2t-1)/(2t) above; it beats two independent masks at equal cost.",
              reads=("mdm_variance_mirror",))
def _check_mirror(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_mirror"]
    t, s = a["t_grid"], pair_summaries(a)
    om, cf, ms2, pos = s["oracle_mirror"], s["context_free_mirror"], s["oracle_multisample2"], s["oracle_positive"]
    cfg = meta["config"]
    pr = [str(p) for p in a["pairings"]]
    dec = {p: th.nested_estimates_from_stats(x, cfg["n_t"], cfg["n_decomp_masks"])
           for p, x in zip(pr, _pool(a["dec_stats"], 2))}
    sg, mi = dec["single"], dec["mirror"]

    def closed_z(x):
        return float(np.max(np.abs(x["ratio"] - a["closed_form"]) / np.maximum(x["ratio_se"], 1e-12)))

    # the max over len(t) rates: Bonferroni, so the family keeps the two-sided level of one Z-SE test
    zf = float(scipy.stats.norm.isf(scipy.stats.norm.sf(Z) / t.size))
    closed = (f"max_t |ratio - closed form| / SE <= {zf:.3g} ({Z:g}-SE level, Bonferroni over the {t.size} "
              "rates)")
    decisions = [
        _worst("oracle: ratio < 1/2", om["ratio"], om["ratio_se"], 0.5, "below", t),
        _worst("oracle: rho < 0", om["rho"], om["rho_se"], 0.0, "below", t),
        _worst("context-free: ratio < 1/2", cf["ratio"], cf["ratio_se"], 0.5, "below", t),
        _worst("context-free: rho < 0", cf["rho"], cf["rho_se"], 0.0, "below", t),
        ledger.check("context-free ratio = closed form", closed_z(cf) <= zf, closed_z(cf), zf, closed),
        _consistent("B unchanged (single vs MIRROR)", sg["B"], mi["B"], sg["B_se"], mi["B_se"]),
        _consistent("C unchanged (single vs MIRROR)", sg["C"], mi["C"], sg["C_se"], mi["C_se"]),
        _worst("oracle: MultiSample-2 ratio - MIRROR ratio > 0", ms2["ratio"] - om["ratio"],
               np.hypot(om["ratio_se"], ms2["ratio_se"]), 0.0, "above", t),
    ]
    share = th.POSITIVE_SHARE
    controls = [
        ledger.Control(f"a positively correlated pair (mask 2 reuses each token's U with probability {share:g}; "
                       f"context-free ratio {(1 + share) / 2:g}) under the 'ratio < 1/2' test",
                       _worst("positive pair: ratio < 1/2", pos["ratio"], pos["ratio_se"], 0.5, "below", t)),
        ledger.Control("the same positively correlated pair under the 'rho < 0' test",
                       _worst("positive pair: rho < 0", pos["rho"], pos["rho_se"], 0.0, "below", t)),
        ledger.Control("the context-free closed form applied to the context-dependent (oracle) denoiser",
                       ledger.check("oracle ratio = context-free closed form", closed_z(om) <= zf, closed_z(om), zf,
                                    closed)),
    ]
    return ledger.Evidence(
        measured={"t": t.tolist(), "oracle ratio": np.round(om["ratio"], 4).tolist(),
                  "oracle rho": np.round(om["rho"], 4).tolist(),
                  "context-free ratio": np.round(cf["ratio"], 4).tolist(),
                  "MultiSample-2 ratio": np.round(ms2["ratio"], 4).tolist(),
                  "positive-pair ratio": np.round(pos["ratio"], 4).tolist(),
                  "B single/mirror": [sg["B"], mi["B"]], "C single/mirror": [sg["C"], mi["C"]],
                  "context-free max z vs closed form": closed_z(cf)},
        predicted={"ratio": "<= 1/2 at every t", "rho": "< 0",
                   "context-free ratio": np.round(a["closed_form"], 4).tolist(), "B, C": "unchanged",
                   "MultiSample-2": "ratio 1/2 > MIRROR's"},
        tolerance=f"ratio + {Z:g} SE < 1/2 and rho + {Z:g} SE < 0 at every t (normal z test at the closest t; "
                  f"fails beyond {Z:g} SE on the other side); context-free within {zf:.3g} SE of the closed form at "
                  f"every t ({Z:g}-SE level, Bonferroni over {t.size} rates); "
                  f"B and C within {Z:g} SE; MIRROR below MultiSample-2 by {Z:g} SE",
        decisions=decisions, controls=controls,
        stderr={"oracle ratio": np.round(om["ratio_se"], 4).tolist(), "B": [sg["B_se"], mi["B_se"]],
                "C": [sg["C_se"], mi["C_se"]]},
        notes=_setting(meta) + " The oracle ratio exceeds the context-free one at mid t: context dependence "
              "makes the pair losses less anti-correlated. MIRROR costs two forward passes, as MultiSample-2; "
              "MultiSample-2 itself sits on the boundary (ratio 1/2, rho 0), so the control is a pair just past it.")


# ---------------------------------------------------------------------------------------------------
# 4. P-POTS (mdm_variance_pots)
# ---------------------------------------------------------------------------------------------------


def pots_estimates(a) -> dict:
    """The direct importance-sampling draws (means and variances, uniform and the P-POTS bin density at
    ``eps_list[0]``) and, per eps of ``eps_list``, the exact-in-t variances of
    :func:`theory.mdm_variance.pots_exact` from the blocks ``exact_sums [G, n_b, 2, L + 1]`` (the bin
    density's variance too at ``eps_list[0]``), from ``check_losses [G, 2, n_b']``."""
    sums = _pool(a["exact_sums"], 1)  # [n, 2, L + 1]
    eps_list = [float(x) for x in a["eps_list"]]
    exact = [th.pots_exact(sums, eps, **({"bin_edges": a["edges"], "bin_probs": a["probs_pots"]} if i == 0 else {}))
             for i, eps in enumerate(eps_list)]
    out = {"exact": exact, "eps": eps_list, "n_exact": sums.shape[0]}
    for name, x in zip(("uniform", "pots"), _pool(a["check_losses"], 2)):
        out[f"meas_{name}"], out[f"meas_{name}_se"] = th.variance_with_se(x)
        out[f"mean_{name}"], out[f"mean_{name}_se"] = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    return out


def _jk(e: dict, f) -> tuple[float, float]:
    """``f`` of the exact-in-t values (a dict of floats) and its jackknife SE (``f`` of the leave-one-out
    arrays, the same sequences left out in every term)."""
    return float(f({k: e[k] for k in e["loo"]})), th.jackknife_se_of(f(e["loo"]))


def _worst_eps(name: str, pairs, eps, threshold: float, kind: str, test: str = "") -> ledger.Decision:
    """The ``kind`` z test of each ``(estimate, se)`` in ``pairs`` (one per eps) against ``threshold`` at
    the eps closest to failing (all at once)."""
    est, se = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    gap = threshold - est if kind == "below" else est - threshold
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.sign(gap) * np.inf)
    j = int(np.argmin(np.nan_to_num(m, nan=0.0)))
    return ledger.ztest(f"{name} (closest: eps = {eps[j]:g})", est[j], se[j], threshold, kind, Z, test)


GAIN = f"V_uniform - V_p > 0 at {Z:g} SE (jackknife over the enumerated sequences; t integrated exactly)"
STEP = (f"each step of V_p / V_uniform from one eps to the next smaller one < 0 at {Z:g} SE (paired jackknife: "
        "the same sequences at every eps)")


def _ratio_steps(ex: list, name: str) -> list:
    """``(V_name / V_uniform)`` at eps[i+1] minus at eps[i], with paired jackknife SEs."""
    key = f"V_{name}"
    r = [(e[key] / e["V_uniform"], e["loo"][key] / e["loo"]["V_uniform"]) for e in ex]
    return [(float(b[0] - a[0]), th.jackknife_se_of(b[1] - a[1])) for a, b in zip(r[:-1], r[1:])]


@ledger.claim("mdm_variance.pots_optimal", source="Sec. 4.1 (P-POTS, Pareto-optimal t-sampler)",
              statement="Sampling t from p*(t) proportional to sqrt(E[l^2 | t]) with the weight 1/p* keeps the loss "
                        "unbiased and lowers its variance below uniform t at every clamp eps, by more as eps shrinks; "
                        "variances computed exactly in t (every mask of each sequence enumerated, t integrated by "
                        "Gauss-Legendre) agree with direct importance-sampling draws.",
              reads=("mdm_variance_pots",))
def _check_pots(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_pots"]
    e = pots_estimates(a)
    ex, eps = e["exact"], e["eps"]
    gains = [_jk(x, lambda d: d["V_uniform"] - d["V_optimal"]) for x in ex]
    ratio = [_jk(x, lambda d: d["V_optimal"] / d["V_uniform"]) for x in ex]
    e0 = ex[0]
    decisions = [
        _consistent("unbiased: mean under P-POTS = mean under uniform", e["mean_pots"], e["mean_uniform"],
                    e["mean_pots_se"], e["mean_uniform_se"]),
        _consistent("direct P-POTS (bin density) variance = exact-in-t variance of that density", e["meas_pots"],
                    e0["V_bins"], e["meas_pots_se"], e0["V_bins_se"]),
        _consistent("direct uniform variance = exact-in-t uniform variance", e["meas_uniform"], e0["V_uniform"],
                    e["meas_uniform_se"], e0["V_uniform_se"]),
        _worst_eps("exact in t: P-POTS lowers the variance at every eps", gains, eps, 0.0, "above", GAIN),
        _worst_eps("exact in t: P-POTS / uniform falls at every step to a smaller eps", _ratio_steps(ex, "optimal"),
                   eps, 0.0, "below", STEP),
    ]
    pots = a["probs_pots"]
    u, w = 1.0 / (a["edges"][-1] - a["edges"][0]), np.diff(a["edges"])
    mom = th.binned_summary(_pool(a["check_moment_losses"], 2))
    bias = float(np.sum(pots * mom["g"]) - np.sum(u * w * mom["g"]))
    bias_se = float(math.sqrt(np.sum(((pots - u * w) * mom["g_se"]) ** 2)))
    controls = [
        ledger.Control("t ~ p* without the 1/p weight under the unbiasedness test",
                       _consistent("unweighted mean under p* = uniform mean", bias, 0.0, bias_se, 0.0)),
        ledger.Control("the direct P-POTS draws against the exact variance of p ~ |E[l | t]| (another density) "
                       "under the same consistency test",
                       _consistent("direct P-POTS variance = exact variance of p ~ |E[l|t]|", e["meas_pots"],
                                   e0["V_mean_only"], e["meas_pots_se"], e0["V_mean_only_se"])),
        ledger.Control("p proportional to |E[l | t]| (hard t by the mean loss alone, the variance left out) under "
                       "the 'lowers the variance' test",
                       _worst_eps("exact in t: p ~ |E[l|t]| lowers the variance at every eps",
                                  [_jk(x, lambda d: d["V_uniform"] - d["V_mean_only"]) for x in ex], eps, 0.0,
                                  "above", GAIN)),
        ledger.Control("the same p ~ |E[l | t]| under the 'gain grows as eps shrinks' test",
                       _worst_eps("exact in t: p ~ |E[l|t]| / uniform falls as eps shrinks",
                                  _ratio_steps(ex, "mean_only"), eps, 0.0, "below", STEP)),
    ]
    return ledger.Evidence(
        measured={"eps": eps, "exact var uniform": [round(x["V_uniform"], 5) for x in ex],
                  "exact var P-POTS (p*)": [round(x["V_optimal"], 5) for x in ex],
                  "exact P-POTS / uniform": [round(x[0], 5) for x in ratio],
                  "exact var p ~ |E[l|t]|": [round(x["V_mean_only"], 5) for x in ex],
                  "direct var P-POTS bins (eps0)": e["meas_pots"], "exact var P-POTS bins (eps0)": e0["V_bins"],
                  "direct var uniform (eps0)": e["meas_uniform"], "exact var uniform (eps0)": e0["V_uniform"],
                  "mean P-POTS / uniform": [e["mean_pots"], e["mean_uniform"]],
                  "bin-formula P-POTS / uniform (moment draws)": np.round(a["var_pots"] / a["var_uniform"], 4).tolist(),
                  "EPR fit loses (var_EPR / var_P-POTS - 1, bins)": np.round(a["var_epr"] / a["var_pots"] - 1,
                                                                             4).tolist()},
        predicted={"mean": "unchanged", "var P-POTS": "below uniform at every eps",
                   "ratio": "decreasing as eps -> 0", "direct draws": "= exact-in-t values"},
        tolerance=f"{Z:g} SE: consistency of the direct draws with the exact-in-t values (combined SE of both "
                  f"samples); {GAIN}; {STEP}",
        decisions=decisions, controls=controls,
        stderr={"exact var uniform": [round(x["V_uniform_se"], 5) for x in ex],
                "exact var P-POTS": [round(x["V_optimal_se"], 5) for x in ex],
                "exact P-POTS / uniform": [round(x[1], 5) for x in ratio],
                "direct var P-POTS": e["meas_pots_se"], "direct var uniform": e["meas_uniform_se"],
                "means": [e["mean_pots_se"], e["mean_uniform_se"]]},
        notes=_setting(meta) + f" Exact in t: {e['n_exact']} fresh sequences, all 2^L masks each; the only "
              "randomness left is the sample of sequences (its jackknife SE). The paper reports accuracies, not a "
              "variance ratio for its LLM runs, so the ratio is measured here, not compared with a number of the "
              "paper. p ~ E[l^2|t] (the square) is no control: its variance equals the uniform one identically "
              "(int M2 * int M2/M2 = (1 - eps) int M2). The direct draws use the 48-bin P-POTS density chosen on "
              "separate moment draws. The bin draws' own ratio at eps = 1e-4 (0.63) lies below the exact 0.68: "
              "i.i.d. draws under-sample the 1/t tail of E[l^2 | t] there; the exact values replace them in every "
              "decision. The whole P-POTS gain at eps0 (about 0.06) is about 2 combined SE of the direct check (the "
              "direct uniform variance is heavy-tailed), so that check's control is a density further off.",
        seeds={"chosen on": "moment_losses at eps_list[0] (the P-POTS bin probabilities)",
               "judged on": "exact_sums, check_losses and check_moment_losses (independent draws)"})


ROUNDING = 1e3 * float(np.finfo(np.float64).eps)  # relative rounding of a float64 sum over ~10^3 terms
OPTIMUM = (f"|V_p - V_p*| / SE <= {Z:g} (consistency with the exact optimum at {Z:g} SE; paired jackknife over the "
           "enumerated sequences, t integrated exactly)")


@ledger.claim("mdm_variance.pots_paper_estimator", source="Sec. 4.1 (P-POTS estimation: g and v per t from a "
              "data points x c masks)",
              statement="The paper's P-POTS density, p prop. sqrt(g(t)^2 + v(t)) with g the mean loss at t and v "
                        "the mask variance within each x0 averaged over x0, lowers the variance below uniform t and "
                        "is the variance-minimising density, at every eps.",
              expected="fails",
              why="exact in t on 512 sequences (quick), the paper's density lowers the variance below uniform at every "
                  "eps (P-POTS / uniform 0.91, 0.81, 0.68 at eps = 1e-2, 1e-3, 1e-4) but does not reach the optimum: "
                  "it leaves out Var_x0 E[l | x0, t] (the data part of E[l^2 | t]), and its variance exceeds the "
                  "optimum's by about 1e-4 (0.015% of the variance, 0.15% of the gain), resolved at more than 3 SE. "
                  "The loss is real and negligible in practice; the statement that the estimator is the optimum is "
                  "what fails. More sequences (paper scale) resolve the excess further.",
              reads=("mdm_variance_pots",))
def _check_pots_paper(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_pots"]
    e = pots_estimates(a)
    ex, eps = e["exact"], e["eps"]

    def excess(name):
        # SE floored at float64 rounding of the quadrature sums (about 10^3 nodes): an excess that is 0 up to
        # rounding (the paper's density equal to p*) is consistent, not infinitely many SE away
        out = [_jk(x, lambda d: d[f"V_{name}"] - d["V_optimal"]) for x in ex]
        return [(v, max(s, ROUNDING * x["V_optimal"])) for (v, s), x in zip(out, ex)]

    def worst_consistent(name, label):
        vals = excess(name)
        z = [abs(v) / s if s > 0 else (0.0 if v == 0 else math.inf) for v, s in vals]
        j = int(np.argmax(z))
        return ledger.consistent(f"{label} (largest: eps = {eps[j]:g})", *vals[j], Z, OPTIMUM)

    decisions = [
        _worst_eps("exact in t: the paper's density lowers the variance at every eps",
                   [_jk(x, lambda d: d["V_uniform"] - d["V_paper"]) for x in ex], eps, 0.0, "above", GAIN),
        worst_consistent("paper", "exact in t: the paper's density attains the optimum's variance at every eps"),
    ]
    controls = [
        ledger.Control("uniform t under the 'attains the optimum' test",
                       worst_consistent("uniform", "uniform attains the optimum")),
        ledger.Control("p proportional to |E[l | t]| (v left out entirely) under the 'attains the optimum' test",
                       worst_consistent("mean_only", "p ~ |E[l|t]| attains the optimum")),
    ]
    ex_paper = excess("paper")
    return ledger.Evidence(
        measured={"eps": eps, "exact var paper's density": [round(x["V_paper"], 6) for x in ex],
                  "exact var optimum p*": [round(x["V_optimal"], 6) for x in ex],
                  "excess paper - optimum": [float(v) for v, _ in ex_paper],
                  "excess / SE": [float(v / s) if s > 0 else (0.0 if v == 0 else math.inf) for v, s in ex_paper],
                  "share of the optimal gain attained": [
                      float((x["V_uniform"] - x["V_paper"]) / (x["V_uniform"] - x["V_optimal"])) for x in ex]},
        predicted={"var": "below uniform", "excess over the optimum": 0.0},
        tolerance=f"{GAIN}; {OPTIMUM}",
        decisions=decisions, controls=controls,
        stderr={"excess paper - optimum": [float(s) for _, s in ex_paper]},
        notes=_setting(meta) + f" Exact in t over {e['n_exact']} enumerated sequences. The paper's density is taken at "
              "its population value (no finite-sample noise in g or v), so the gap measured is the estimator's "
              "target, not its sampling error.")


def synergy_estimates(a) -> dict:
    """Bin-formula variances at ``eps_list[0]`` of standard t, P-POTS, each pairing (MIRROR, MultiSample-2)
    and P-POTS with each pairing, from the draws ``pair_losses [G, n_b, b, 3]`` (one-mask loss, MIRROR's
    partner, an independent partner), with the superadditivity ``S = V_P + V_pair - V_std - V_P+pair`` and
    the change of P-POTS's ratio ``V_P+pair / V_pair - V_P / V_std``; SEs by the delete-one-block jackknife
    over the G blocks (the same blocks left out of every term)."""
    x = np.asarray(a["pair_losses"], np.float64)  # [G, n_b, b, 3]
    edges, w = a["edges"], np.diff(a["edges"])
    per = {"s": (x**2).mean(-1), "g": x.mean(-1), "M": ((x[..., 0] + x[..., 1]) / 2) ** 2,
           "MS": ((x[..., 0] + x[..., 2]) / 2) ** 2}
    tot = {k: v.sum((0, 1)) for k, v in per.items()}  # [b]
    blk = {k: v.sum(1) for k, v in per.items()}  # [G, b]
    n_all, n_b = x.shape[0] * x.shape[1], x.shape[1]

    def values(m):
        g = m["g"]
        v = {"std": th.binned_is_variance(edges, w, m["s"], g), "P": th.binned_optimal_variance(edges, m["s"], g)}
        for k in ("M", "MS"):
            v[k] = th.binned_is_variance(edges, w, m[k], g)
            v[f"P+{k}"] = th.binned_optimal_variance(edges, m[k], g)
            v[f"S_{k}"] = v["P"] + v[k] - v["std"] - v[f"P+{k}"]
            v[f"rel_{k}"] = v[f"P+{k}"] / v[k] - v["P"] / v["std"]
        return v

    full = values({k: t / n_all for k, t in tot.items()})
    loo = [values({k: (tot[k] - blk[k][i]) / (n_all - n_b) for k in tot}) for i in range(x.shape[0])]
    out = {k: float(v) for k, v in full.items()}
    out.update({f"{k}_se": th.jackknife_se_of([d[k] for d in loo]) for k in full})
    return out


SUPER = f"S = V_P + V_pair - V_std - V_P+pair > 0 at {Z:g} SE (the drop of the combination above the sum of the drops)"


@ledger.claim("mdm_variance.pots_mirror_synergy", source="Sec. 4 and Table 1 (P-POTS with MIRROR, '1 + 1 > 2')",
              paper=ledger.PaperValue("+1.28, +0.86; together +7.01", "Table 1, OpenScience accuracy gain over "
                                      "standard (45.52) of P-POTS (46.80), MIRROR (46.38) and P-POTS+MIRROR (52.53), "
                                      "LLaDA-8B fine-tuning (ours: estimator variance of a small proxy)"),
              statement="P-POTS and MIRROR are superadditive ('1 + 1 > 2'): the drop of the loss variance under "
                        "P-POTS + MIRROR exceeds the sum of the two methods' drops.",
              expected={"quick": "inconclusive", "paper": "fails"},
              why="at quick scale (eps = 1e-2, 48 bins x 2048 draws) the drops are 0.059 (P-POTS), 0.311 (MIRROR) and "
                  "0.377 (both): superadditive by S = 0.0061 (4.9 SE). The control, two independent masks at the "
                  "same cost, gives S = 0.0015 (1.3 SE): not rejected, so the check cannot yet tell MIRROR's synergy "
                  "from a generic pairing. With a pair that scales the mask variance by the same factor at every t, "
                  "the sign of S is set by where that variance sits relative to E[l | t] (here at small t, where the "
                  "loss is lowest), not by the pairing. Paper scale (not run yet) has 32 times the draws, an SE about "
                  "5.7 times smaller: the control's S = 0.0015 would then sit about 7 SE above 0, accepted, and the "
                  "verdict 'fails' (superadditivity not specific to MIRROR); that is the expectation set there. The "
                  "replication at seed offset 1 (another chain) already gives it: S = 0.0115 (11.9 SE) for MIRROR "
                  "and 0.0057 (5.3 SE) for the control, verdict 'fails'.",
              reads=("mdm_variance_pots",))
def _check_synergy(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_pots"]
    v = synergy_estimates(a)

    def z(key, kind, test, label):
        return ledger.ztest(label, v[key], v[f"{key}_se"], 0.0, kind, Z, test)

    decisions = [z("S_M", "above", SUPER, "MIRROR: drop of P-POTS + MIRROR > sum of the drops")]
    controls = [ledger.Control("two independent masks (MultiSample-2: the same cost, pair correlation 0, the mask "
                               "variance halved at every t) in MIRROR's place, under the superadditivity test",
                               z("S_MS", "above", SUPER, "MultiSample-2: drop of P-POTS + MS-2 > sum of the drops"))]
    keys = ("std", "P", "M", "P+M", "MS", "P+MS")
    return ledger.Evidence(
        measured={**{f"V {k}": round(v[k], 5) for k in keys},
                  "drops P, MIRROR, P+MIRROR": [v["std"] - v["P"], v["std"] - v["M"], v["std"] - v["P+M"]],
                  "S (MIRROR)": v["S_M"], "S (MS-2)": v["S_MS"],
                  "P-POTS ratio before / after MIRROR": [v["P"] / v["std"], v["P+M"] / v["M"]],
                  "P-POTS ratio after MS-2": v["P+MS"] / v["MS"],
                  "ratio change after MIRROR / after MS-2 (not judged)": [v["rel_M"], v["rel_MS"]]},
        predicted={"S": "> 0 (1 + 1 > 2)", "P-POTS ratio": "lower after MIRROR"},
        tolerance=SUPER, decisions=decisions, controls=controls,
        stderr={f"V {k}": round(v[f"{k}_se"], 5) for k in keys} | {"S (MIRROR)": v["S_M_se"],
                                                                      "ratio change (MIRROR)": v["rel_M_se"]},
        notes=_setting(meta) + f" eps = {float(a['eps_list'][0]):g}, {a['edges'].size - 1} bins of t; P-POTS is the "
              "bin optimum of each estimator's own E[l^2 | t] (plug-in; the jackknife bias correction moves S by "
              "about 4e-5, 1/30 SE). The paper's '1 + 1 > 2' is shown on accuracy (Table 1); on the chain it is "
              "judged on the loss variance the methods target. P-POTS's ratio falls after either pairing, so that "
              "part of the paper's explanation does not single MIRROR out; it is reported, not judged.")


# ---------------------------------------------------------------------------------------------------
# 4b. The EPR form of p(t) (Fig. 1's shape), tested against independent per-bin draws
# ---------------------------------------------------------------------------------------------------

GOF_LEVEL = float(2 * scipy.stats.norm.sf(Z))  # the two-sided Z-SE level, 0.0027
GOF = (f"chi-square goodness of fit of a shape for E[l^2 | t] to the per-bin means of independent draws (scale "
       f"by weighted least squares, b - 1 degrees of freedom, scipy.stats.chi2.sf): p >= {GOF_LEVEL:.4f}, the "
       f"two-sided {Z:g}-SE level")


def bin_average(edges, f, order: int = 16) -> np.ndarray:
    """``[b]`` mean of ``f(t)`` over each bin of ``edges [b + 1]`` (Gauss-Legendre, ``order`` nodes per bin):
    what a per-bin mean of draws with t uniform in the bin estimates."""
    e = np.asarray(edges, np.float64)
    x, w = np.polynomial.legendre.leggauss(order)
    mid, half = 0.5 * (e[1:] + e[:-1]), 0.5 * np.diff(e)
    return (f(mid[:, None] + half[:, None] * x[None]) * w[None]).sum(1) / 2.0


def shape_gof(m2, var, shape) -> dict:
    """Chi-square goodness of fit of ``s * shape`` to the per-bin estimates ``m2 [b]`` with variances
    ``var [b]`` (independent bins), the scale ``s`` fitted by weighted least squares: ``chi2``, ``df = b - 1``,
    ``p`` (``scipy.stats.chi2.sf``), ``scale`` and the standardised residuals ``z [b]``."""
    m2, var, shape = (np.asarray(v, np.float64) for v in (m2, var, shape))
    s = float(np.sum(m2 * shape / var) / np.sum(shape**2 / var))
    z = (m2 - s * shape) / np.sqrt(var)
    chi2, df = float(np.sum(z**2)), m2.size - 1
    return {"chi2": chi2, "df": df, "p": float(scipy.stats.chi2.sf(chi2, df)), "scale": s, "z": z}


def epr_fit_estimates(a) -> dict:
    """At ``eps_list[0]``: the per-bin moments of the draws the P-POTS density and its EPR fit were chosen on
    (``moment_losses [G, e, b, n_b]``, eps index 0) and of independent draws on the same bins
    (``check_moment_losses [G, b, n_b]``, judged), and the goodness of fit to the judged E[l^2 | t] of:
    the fitted EPR form squared (``epr_params``), a constant (uniform p), a power law ``t^k`` (k fitted on
    the choosing draws by weighted least squares in log-log), ``g^2`` (the mean alone, v left out) and the
    choosing draws' own per-bin values (the test's calibration: variances of both samples added)."""
    edges = np.asarray(a["edges"], np.float64)
    mid = 0.5 * (edges[1:] + edges[:-1])
    choose = th.binned_summary(_pool(np.asarray(a["moment_losses"])[:, 0], 2))
    judge = th.binned_summary(_pool(a["check_moment_losses"], 2))
    var = judge["m2_se"] ** 2
    wt = (choose["m2"] / choose["m2_se"]) ** 2  # 1 / var(log m2), delta method
    design = np.c_[np.ones_like(mid), np.log(mid)] * np.sqrt(wt)[:, None]
    k = float(np.linalg.lstsq(design, np.log(choose["m2"]) * np.sqrt(wt), rcond=None)[0][1])
    params = tuple(float(v) for v in a["epr_params"])
    shapes = {"epr": bin_average(edges, lambda t: th.epr_unnormalised(t, params) ** 2),
              "constant": np.ones_like(mid), "power": bin_average(edges, lambda t: t**k), "mean_only": choose["g"] ** 2}
    out = {name: shape_gof(judge["m2"], var, s) for name, s in shapes.items()}
    out["calibration"] = shape_gof(judge["m2"], var + choose["m2_se"] ** 2, choose["m2"])
    out.update(power_k=k, params=params, mid=mid, judge=judge, choose=choose)
    return out


def _gof_check(label: str, r: dict) -> ledger.Decision:
    return ledger.check(f"{label} (chi2 = {r['chi2']:.1f} on {r['df']} df)", bool(r["p"] >= GOF_LEVEL), r["p"],
                        GOF_LEVEL, GOF)


@ledger.claim("mdm_variance.epr_fit",
              source="Sec. 4.1 (P-POTS: the parametric 'EPR' form of p(t), Fig. 1's shape)",
              statement="Stronger than the paper, which presents the form as a fit with no tolerance (ours, "
                        "labelled): the paper's 7-parameter EPR form, p(t) prop. sqrt(a t^r + b (1 - t)^q + A^2 "
                        "exp(2 kappa t^m)), fitted to the estimated P-POTS density (KL, L-BFGS-B with random "
                        "restarts, as released), describes p*(t) prop. sqrt(E[l^2 | t]): the squared form matches "
                        "the per-bin E[l^2 | t] of independent draws within their sampling noise.",
              expected="fails",
              why="at quick scale (eps = 1e-2, 48 bins, 2048 independent draws per bin) the fitted EPR form misses "
                  "E[l^2 | t] by chi2 = 176 on 47 df (p = 7e-17; 181 before the fit's rounding moved with the "
                  "runtime's device-count rule), while the choosing draws' own per-bin values "
                  "pass the same test (calibration, chi2 = 53, p = 0.25). The misfit is systematic: 6.4 SE at the "
                  "last bin (t ~ 0.98), above 3 SE at t ~ 0.09, 0.65, 0.77 and 0.94. The form stays bounded as "
                  "t -> 0, where E[l^2 | t] rises like 1/t (the KL fit imitates the rise with b (1 - t)^q, "
                  "q ~ 40). The shape of Fig. 1 holds qualitatively (p* falls from 2.1 at t = 0.011 to a minimum "
                  "0.81 near t = 0.22, then rises to 1.26 at t = 0.98), and the fit costs little variance: exactly "
                  "in t, sampling from the EPR bins gives 0.15% (SE 0.0035%) more variance than p*. Paper scale has "
                  "32 times the draws per bin, so a systematic misfit is rejected further: 'fails' there too (not "
                  "run yet).",
              reads=("mdm_variance_pots",))
def _check_epr_fit(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_pots"]
    e = epr_fit_estimates(a)
    decisions = [_gof_check("the choosing draws' per-bin E[l^2 | t] fit the judged draws (calibration)",
                            e["calibration"]),
                 _gof_check("the fitted EPR form squared fits the judged E[l^2 | t]", e["epr"])]
    controls = [
        ledger.Control("a constant E[l^2 | t] (uniform p: P-POTS's argument gives p* = uniform only then) under the "
                       "same goodness-of-fit test", _gof_check("constant fits E[l^2 | t]", e["constant"])),
        ledger.Control(f"a pure power law t^k (k = {e['power_k']:.3f}, fitted on the choosing draws) under the same "
                       "test", _gof_check("power law fits E[l^2 | t]", e["power"])),
        ledger.Control("E[l | t]^2 alone (the mask variance v left out, which the paper's sqrt(g^2 + v) keeps) under "
                       "the same test", _gof_check("g^2 fits E[l^2 | t]", e["mean_only"])),
    ]
    sums = _pool(a["exact_sums"], 1)
    eps0 = float(a["eps_list"][0])
    ex = th.pots_exact(sums, eps0, bin_edges=a["edges"], bin_probs=a["probs_epr"])
    loss, loss_se = _jk(ex, lambda d: d["V_bins"] / d["V_optimal"] - 1)
    dens = np.asarray(a["density_pots"], np.float64)
    j = int(np.argmin(dens))
    te = np.asarray(a["exact_t"], np.float64)  # E[l^2 | t] exactly in t (enumerated masks): p* against the fit
    p_star, p_epr = np.sqrt(np.asarray(a["exact_m2"], np.float64)), th.epr_unnormalised(te, e["params"])
    rel = (p_epr / np.trapezoid(p_epr, te)) / (p_star / np.trapezoid(p_star, te)) - 1
    return ledger.Evidence(
        measured={**{f"chi2 / df ({k})": [round(e[k]["chi2"], 2), e[k]["df"]]
                     for k in ("epr", "calibration", "constant", "power", "mean_only")},
                  **{f"p ({k})": e[k]["p"] for k in ("epr", "calibration", "constant", "power", "mean_only")},
                  "EPR params (a, r, b, q, A, kappa, m)": [round(v, 4) for v in e["params"]],
                  "largest |residual| / SE (EPR) and its t": [float(np.max(np.abs(e["epr"]["z"]))),
                                                              float(e["mid"][np.argmax(np.abs(e["epr"]["z"]))])],
                  "P-POTS density: first bin, minimum (t), last bin": [float(dens[0]), float(dens[j]),
                                                                      float(e["mid"][j]), float(dens[-1])],
                  "exact in t: V(EPR bins) / V(p*) - 1": loss,
                  "exact in t: EPR density / p* - 1, min and max": [float(rel.min()), float(rel.max())]},
        predicted={"chi2": f"consistent with {e['epr']['df']} df (p >= {GOF_LEVEL:.4f})"},
        tolerance=GOF, decisions=decisions, controls=controls,
        stderr={"exact in t: V(EPR bins) / V(p*) - 1": loss_se},
        notes=_setting(meta) + f" eps = {eps0:g}. The EPR parameters and the P-POTS density were chosen on the "
              "moment draws; the test judges them on the independent check draws (same bins), so only the scale is "
              "fitted on the judged data. The EPR shape's own noise (7 parameters from 48 noisy bins) is left out of "
              "the variance, which raises chi2 under a true fit by about 7 in expectation, far below the excess "
              "measured. The paper fits the form on a linear grid t in [1/T, 1 - 1/T]; the geometric bins here "
              "resolve the 1/t rise near eps that such a grid does not see.",
        seeds={"chosen on": "moment_losses at eps_list[0] (P-POTS density, EPR fit, power-law exponent)",
               "judged on": "check_moment_losses (independent draws, the same bins)"})
