"""LIF-SNN claims about deep networks: Theorem 2 (depth, width, IF, several classes), time-varying inputs, the beta = 0.5 table."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from claims import ledger
from claims.lif_snn.common import Z_MANY, Z_MC, _agree, log_log_fit, _mean_se
from theory import lif_snn as th

# ---------------------------------------------------------------------------------------------------
# 3. Theorem 2: width and depth (Figure 2)
# ---------------------------------------------------------------------------------------------------

T_DEPTH = 5  # the classifiers of Theorem 2 decided at T = 5 steps


def _networks(a, kind: str, key: str = "per_network") -> np.ndarray:
    """``[W, N, D]``: each network's disagreement share at ``T = min(T_DEPTH, T)`` for ``kind``."""
    t_idx = min(T_DEPTH, a["steps"].size) - 1
    return a[key][list(a["kinds"]).index(kind), ..., t_idx]


def _depth_width_evidence(r: ledger.Reads, kind: str, figure: str = "lif_snn_depth") -> ledger.Evidence:
    """Theorem 2's width and depth decisions for one model kind, with the fixed-rate control, on the
    depth-experiment result ``figure``."""
    a, meta = r[figure]
    widths, depths = a["widths"], a["depths"]
    per, fixed = _networks(a, kind), _networks(a, kind, "per_network_fixed")  # [W, N, D]
    fixed_nu = float(a["fixed_nu"])
    n_net = per.shape[1]
    ens, se = _mean_se(per, axis=1)  # [W, D]
    decisions, controls, width = [], [], {}

    def falls(label, data, bound):
        m, s = _mean_se(data, axis=1)
        slope, sse = log_log_fit(widths, m, s)
        return ledger.ztest(label, slope, sse, bound, "below", Z_MC,
                            f"weighted log-log slope over n (delta-method SE over networks) below Theorem 2's "
                            f"power of n, {bound:.4g}, at {Z_MC:g} SE (three-way, normal approximation)")

    for j, L in enumerate(depths.tolist()):
        bound = float(a["bound_width_exponent"][j])
        dec = falls(f"L={L}: width exponent below the bound's -1/2^(2L+2)", per[:, :, j], bound)
        decisions.append(dec)
        ctl = falls(f"L={L}: width exponent at the fixed nu = {fixed_nu:g}", fixed[:, :, j], bound)
        controls.append(ledger.Control(
            f"L={L}: the same networks and inputs at the fixed rate nu = {fixed_nu:g} (>= 1/sqrt(n) at every n >= "
            f"{int(round(fixed_nu ** -2))}: outside nu = O(1/sqrt(n)), ENS tends to a positive limit), same test",
            ctl, {"exponent": ctl.statistic}))
        width[f"L={L}"] = {"exponent": dec.statistic, "margin_se": dec.margin_se, "bound_exponent": bound,
                           "fixed_nu_exponent": ctl.statistic, "fixed_nu_margin_se": ctl.margin_se}
    depth = {}
    tc = float(stats.t.ppf(0.975, n_net - 1))
    for i, n in enumerate(widths.tolist()):
        diff = per[i, :, -1] - per[i, :, 0]  # same networks: depth max vs 1 (common random numbers)
        dec = ledger.paired(f"n={n}: ENS(L={depths[-1]}) - ENS(L=1) > 0 (same networks)", diff, 0.0, "above")
        steps = per[i, :, 1:] - per[i, :, :-1]
        step_hi = steps.mean(0) + tc * steps.std(0, ddof=1) / math.sqrt(n_net)
        decisions += [dec, ledger.compare(
            f"n={n}: smallest upper 95% bound of the steps ENS(L+1) - ENS(L)", float(step_hi.min()), ">=", 0.0,
            "no step L -> L+1 with its two-sided 95% Student-t interval (same networks) below 0")]
        depth[f"n={n}"] = {"ens_by_L": ens[i].round(4).tolist(), "Lmax_minus_L1": dec.statistic,
                           "step_upper_95": step_hi.round(4).tolist()}
    all_t = a["per_network"][list(a["kinds"]).index(kind)].mean(axis=1)  # [W, D, T]
    t_effect = {f"n={n}": {"T=1->T=max (L=1)": float(all_t[i, 0, -1] - all_t[i, 0, 0]),
                           "L=1->L=max (T=1)": float(all_t[i, -1, 0] - all_t[i, 0, 0])}
                for i, n in enumerate(widths.tolist())}
    return ledger.Evidence(
        measured={"width_exponent": width, "depth": depth, "T_vs_depth_effect": t_effect},
        predicted={"width_exponent": "below -1/2^(2L+2) at every L (the bound's power of n at nu = c/sqrt(n))",
                   "depth": "ENS(L_max) > ENS(1) at every n, no step down"},
        tolerance=f"width: weighted log-log slope over n at least {Z_MC:g} SE below the bound's exponent "
                  "-1/2^(2L+2) for every L (z-test, SE over networks); depth: 95% Student-t interval (statsmodels) "
                  "of the per-network paired difference ENS(L_max) - ENS(1) above 0 at every n, and no step L -> "
                  "L + 1 whose 95% interval lies below 0; the fixed-rate controls must fail the width test",
        decisions=decisions,
        stderr={f"n={n}": se[i].round(4).tolist() for i, n in enumerate(widths.tolist())},
        notes=f"{meta.get('config_path')} at {r.scale} scale: {kind}, {int(meta['config'].get('n_out', 2))} output "
              f"neurons, T = {min(T_DEPTH, a['steps'].size)}, {n_net} "
              f"networks x {meta['config']['pairs']} pairs per width; each depth's classifier shares the hidden "
              "layers of the same network (paired), and the fixed-rate control uses the same networks and x. The "
              "bound's power of n is -1/2^(2L+2) (-0.0625, -0.0156, -0.0039, ... for L = 1, 2, 3) times "
              "log^(3/2) n: a slope below the power alone is a stronger statement than the theorem's (whose "
              "polylog factor may grow over a finite range), so a 'holds' here supports the theorem a fortiori. "
              "At n <= 16 (exhaustive) the width trend is invisible for L >= 2; it shows from n = 64.",
        controls=controls)


@ledger.claim("lif_snn.theorem2_depth_width",
              source="Araya et al. Theorem 2 (beta = 1, static input) and Figure 2",
              paper=(ledger.PaperValue(-0.0625, "Theorem 2: the bound n_L T^4 C (1 + theta) nu^(1/2^(2L+1)) log^(3/2) n "
                                       "at nu = c/sqrt(n) has the power n^(-1/16) at L = 1 (an upper bound on the rate)",
                                       ("width_exponent", "L=1", "exponent")),
                     ledger.PaperValue(-0.015625, "Theorem 2: the same power, n^(-1/64) at L = 2",
                                       ("width_exponent", "L=2", "exponent"))),
              statement="For random L-layer binary sIF classifiers the expected noise sensitivity at nu = 1/sqrt(n) "
                        "falls with the width n at fixed L, at least as fast as the bound's power n^(-1/2^(2L+2)), "
                        "and rises with the depth L at fixed n.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="quick scale (128 networks x 96 pairs, n = 64..1024, L = 1..4, T = 5): the width exponents -0.24, -0.17, "
                  "-0.11, -0.09 lie 7.6-18 SE below the bound's power -1/2^(2L+2), and depth raises ENS at every n "
                  "(numbers when this was written): the theorem's direction is decided with margin. The control just "
                  "outside the hypothesis, the same networks at the fixed nu = 1/8 (ENS tends to a positive limit), "
                  "is flat: exponents -0.003, +0.003, +0.019, -0.017 (SE ~0.01). The same test rejects it at L = 1 "
                  "(7.4 SE above -1/16) but cannot at L >= 2, where the bound's power (-1/64, -1/256, -1/1024) lies "
                  "within 2 SE of 0: a flat law and the bound's power are not separable at this power, so the ledger "
                  "leaves the claim inconclusive rather than accept a check that has not rejected its control. Any "
                  "nu -> 0 makes ENS fall, so no control with a shrinking nu could be rejected by a 'falls' test; "
                  "the earlier control (a uniformly random function) was rejected trivially. Paper scale (512 "
                  "networks) is not measured; L >= 3 would need SE well below 0.004 on the slope.",
              reads=("lif_snn_depth",))
def _check_theorem2_depth_width(r: ledger.Reads) -> ledger.Evidence:
    return _depth_width_evidence(r, "slif")


@ledger.claim("lif_snn.theorem2_depth_width_if",
              source="Araya et al. Figure 2 (IF networks; the theory covers sign spikes only)",
              statement="For random L-layer binary IF classifiers (Heaviside spikes, {0,1} input) the expected noise "
                        "sensitivity at nu = 1/sqrt(n) falls with the width n at fixed L, at least as fast as the sIF "
                        "bound's power n^(-1/2^(2L+2)), and rises with the depth L at fixed n, as for sIF.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="IF networks are outside the theory (Heaviside spikes, {0,1} input); Figure 2 shows them behaving like "
                  "sIF. Quick scale: the width exponents -0.27, -0.14, -0.15, -0.12 lie 3.8-8.9 SE below the sIF "
                  "bound's power, and ENS(L=4) - ENS(L=1) > 0 at every n (numbers when this was written). The "
                  "fixed-nu = 1/8 control is flat (exponents -0.008, +0.039, +0.003, -0.008) and is rejected at no "
                  "depth (margins -2.4, -2.2, -0.2, +0.2 SE): inconclusive, for the reason given for sIF.",
              reads=("lif_snn_depth",))
def _check_theorem2_depth_width_if(r: ledger.Reads) -> ledger.Evidence:
    return _depth_width_evidence(r, "lif")


@ledger.claim("lif_snn.theorem2_multiclass",
              source="Araya et al. Theorem 2 (multiclass argmax readout with n_L outputs; beta = 1, static input)",
              paper=(ledger.PaperValue(-0.0625, "Theorem 2: the bound n_L T^4 C (1 + theta) nu^(1/2^(2L+1)) log^(3/2) n "
                                       "at nu = c/sqrt(n) has the power n^(-1/16) at L = 1 (an upper bound on the rate)",
                                       ("width_exponent", "L=1", "exponent")),
                     ledger.PaperValue(-0.015625, "Theorem 2: the same power, n^(-1/64) at L = 2",
                                       ("width_exponent", "L=2", "exponent"))),
              statement="For random L-layer sIF classifiers with n_L = 4 output neurons (argmax of spike counts, ties "
                        "to the lowest index, class 0 as in the binary case) the expected noise sensitivity at nu = "
                        "1/sqrt(n) falls with the width n at fixed L, at least as fast as the bound's power "
                        "n^(-1/2^(2L+2)) (the factor n_L does not depend on n), and rises with the depth L at fixed n.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="quick scale (lif_snn_multiclass: 64 networks x 64 pairs, n = 64, 256, 1024, L = 1..3, T = 5; numbers "
                  "when this was written): the width exponents -0.20, -0.13, -0.076 lie 10.5, 10.7, 6.9 SE below the "
                  "bound's power -1/2^(2L+2), and ENS rises with L at every n (0.20 -> 0.39 at n = 1024): the theorem's "
                  "direction is decided with margin. The control just outside the hypothesis (the same networks at the "
                  "fixed nu = 1/8, where ENS tends to a positive limit) has exponents +0.021, +0.011, +0.030: the same "
                  "test rejects it at L = 1 (8.4 SE) and L = 3 (3.4 SE) but not at L = 2 (2.9 SE, inside the 3 SE "
                  "critical value), where the bound's power -1/64 lies close to 0: inconclusive, for the reason given "
                  "for the binary claim lif_snn.theorem2_depth_width (a flat law and the bound's power are hard to "
                  "separate at L >= 2). Sample sizes were fixed before this measurement and not raised after it. "
                  "Paper scale not measured.",
              reads=("lif_snn_multiclass",))
def _check_theorem2_multiclass(r: ledger.Reads) -> ledger.Evidence:
    return _depth_width_evidence(r, "slif", "lif_snn_multiclass")


def _depth_over_time_evidence(r: ledger.Reads, kind: str) -> ledger.Evidence:
    """Figure 2's reading "depth raises ENS more than T does" at the corner (L_max, T_max) of the depth
    result, per width, on the same networks: depth effect ENS(L_max, T) - ENS(1, T) against time effect
    ENS(L, T_max) - ENS(L, 1) at (L, T) = (L_max, T_max). Their difference is ENS(L_max, 1) - ENS(1, T_max),
    decided per network (paired)."""
    a, meta = r["lif_snn_depth"]
    per = a["per_network"][list(a["kinds"]).index(kind)]  # [W, N, D, T]
    widths, L, T = a["widths"], int(a["depths"][-1]), int(a["steps"][-1])
    decisions, controls, measured = [], [], {}
    for i, n in enumerate(widths.tolist()):
        x = per[i]
        diff = x[:, -1, 0] - x[:, 0, -1]
        dec = ledger.paired(f"n={n}: depth effect - T effect = ENS(L={L}, T=1) - ENS(L=1, T={T}) > 0 (same networks)",
                            diff, 0.0, "above")
        decisions.append(dec)
        ctl = ledger.paired(f"n={n}: reversed, ENS(L=1, T={T}) - ENS(L={L}, T=1) > 0", -diff, 0.0, "above")
        controls.append(ledger.Control(
            f"n={n}: the opposite ordering (T raises ENS more than depth) on the same networks, same test: the "
            "statement is an ordering of two effects, so its negation must be rejected for the test to mean it",
            ctl, {"mean": ctl.statistic}))
        m = x.mean(axis=0)  # [D, T]
        measured[f"n={n}"] = {"depth_effect": round(float(m[-1, -1] - m[0, -1]), 4),
                              "T_effect": round(float(m[-1, -1] - m[-1, 0]), 4),
                              "difference": round(float(diff.mean()), 4), "ENS(1,1)": round(float(m[0, 0]), 4),
                              "ENS(Lmax,Tmax)": round(float(m[-1, -1]), 4)}
    return ledger.Evidence(
        measured=measured,
        predicted={"difference": f"> 0 at every n: going from 1 to {L} layers raises ENS more than going from 1 to "
                                 f"{T} time steps"},
        tolerance="95% Student-t interval (statsmodels, ledger.paired) of the per-network difference ENS(L_max, 1) - "
                  "ENS(1, T_max) above 0 at every width; the reversed ordering must be rejected by the same test",
        decisions=decisions, controls=controls,
        notes=f"{meta.get('config_path')} at {r.scale} scale: {kind}, widths {widths.tolist()}, L = 1..{L}, T = 1..{T}, "
              f"{per.shape[1]} networks x {meta['config']['pairs']} pairs per width; every depth's classifier reads "
              "the same network's layers and every T the same spike trains (paired). The paper's Figure 2 uses 5-layer "
              "networks and shows no bounds; the ordering is its reading of the figure, not a theorem.")


@ledger.claim("lif_snn.depth_over_time",
              source="Araya et al. Figure 2 (5-layer sIF networks, L and T varied: 'depth raises ENS more than T does')",
              statement="In random sIF classifiers at nu = 1/sqrt(n), adding layers raises the expected noise "
                        "sensitivity more than adding time steps does.",
              expected={"quick": "holds", "paper": "holds"},
              why="quick scale (128 networks, n = 64..1024, L = 1..4, T = 1..5): ENS(L=4, T=1) - ENS(L=1, T=5) is "
                  "+0.06 to +0.13, 4.8-12 SE above 0 at every width, growing with n (numbers when this was written); "
                  "the reversed ordering is rejected at every width.",
              reads=("lif_snn_depth",))
def _check_depth_over_time(r: ledger.Reads) -> ledger.Evidence:
    return _depth_over_time_evidence(r, "slif")


@ledger.claim("lif_snn.depth_over_time_if",
              source="Araya et al. Figure 2 (5-layer IF networks: 'depth raises ENS more than T does', as for sIF)",
              statement="In random IF classifiers (Heaviside spikes, {0,1} input) at nu = 1/sqrt(n), adding layers "
                        "raises the expected noise sensitivity more than adding time steps does.",
              expected={"quick": "fails", "paper": "fails"},
              why="quick scale: not for IF. Deep IF networks are quiet at T = 1 (few spikes reach layer 4), so "
                  "ENS(L=4, T=1) is 0.075-0.097 while ENS(L=1, T=5) is 0.077-0.15: the difference is -0.075 and -0.057 "
                  "at n = 64 and 128 (6.9 and 5.5 SE below 0), -0.026 at n = 256, and +0.01 (undecided) at n = 512 and "
                  "1024 (numbers when this was written). Figure 2 shows IF behaving like sIF; in our IF model with theta "
                  "= 0.5 it does not at small widths. Expected 'fails' at paper scale too until measured.",
              reads=("lif_snn_depth",))
def _check_depth_over_time_if(r: ledger.Reads) -> ledger.Evidence:
    return _depth_over_time_evidence(r, "lif")


# ---------------------------------------------------------------------------------------------------
# 3b. Theorem 1 for input sequences (time-varying input)
# ---------------------------------------------------------------------------------------------------


def _slopes(widths, per) -> tuple[np.ndarray, np.ndarray]:
    """Weighted log-log slopes over ``widths`` of the per-seed shares ``per [S, W, T]``, per step: ``([T], [T])``
    slope and delta-method SE over seeds."""
    m, s = _mean_se(per)
    fits = [log_log_fit(widths, m[:, t], s[:, t]) for t in range(m.shape[1])]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])


@ledger.claim("lif_snn.theorem1_time_varying",
              source="Araya et al. Theorem 1 (input sequences x_1..x_t, y_1..y_t with per-step distance nu_t; beta = 1)",
              paper=ledger.PaperValue(-0.25, "Theorem 1 (input sequences): the bound C (1 + theta) t^2 "
                                      "sqrt(nu_bar_t) log n at nu_bar_t = 1/sqrt(n) is n^(-1/4) up to its log n factor "
                                      "(an upper bound on the rate)", ("time_varying_exponent", "t=1", "slope")),
              statement="For one random sIF neuron driven by input sequences (a fresh uniform input and fresh flips "
                        "of each bit with probability nu = 1/sqrt(n) at every step, so nu_bar_t = nu), the flip "
                        "probability P[s_t(x_1..x_t) != s_t(y_1..y_t)] falls with n at every step t = 1..10 at least "
                        "as fast as Theorem 1's bound C (1 + theta) t^2 sqrt(nu_bar_t) log n, i.e. its fitted power of "
                        "n is below that of n^(-1/4) log n over the same widths.",
              expected={"quick": "holds", "paper": "holds"},
              why="quick scale (32 seeds x 2048 neuron-sequence pairs, n = 100..10^4, theta = 0.5, numbers when this was "
                  "written): the time-varying exponents are -0.25 (t = 1) to -0.22 (t = 10), SE 0.003-0.004, against "
                  "the bound's fitted power -0.10 (30+ SE below); the control (the same neurons and inputs at the "
                  "fixed nu = 0.1, outside nu = O(1/sqrt(n))) is flat (exponents -0.004..+0.006) and fails the same "
                  "test at every t. The static-input Monte Carlo from the same neurons matches the exact static curves "
                  "(max |z| 2.5 over 50 points, within the 4 SE of a family). Reported, not decided: the time-varying "
                  "exponent is not flatter than the static one but steeper (t >= 3: about -0.22 vs -0.19, differences "
                  "-0.03 to -0.04 with a conservative SE of 0.005; the static steps t >= 3 are pre-asymptotic), so the "
                  "log n factor of the input-sequence bound is not visible in the measured rate. Leave-one-fold-out: "
                  "8/8 agree, 29 SE from a change.",
              reads=("lif_snn_time_varying",))
def _check_theorem1_time_varying(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_time_varying"]
    widths, steps = a["widths"], a["steps"]
    betas = a["betas"].tolist()
    if 1.0 not in betas:
        return ledger.Evidence(measured={"betas": betas}, predicted={}, tolerance="", decisions=[],
                               notes="beta = 1 (the theorem's sIF neuron) was not run: nothing decided")
    b = betas.index(1.0)
    bound = th.theorem1_width_exponent(widths, static=False)
    dyn, dyn_se = _slopes(widths, a["dynamic_per_seed"][:, b])
    sta, sta_se = _slopes(widths, a["static_per_seed"][:, b])
    fix, fix_se = _slopes(widths, a["dynamic_fixed_per_seed"][:, b])
    test = (f"weighted log-log slope over n (delta-method SE over seeds) below the fitted power of n^(-1/4) ln n, "
            f"{bound:.4f}, at {Z_MC:g} SE (three-way, normal approximation)")
    decisions, controls = [], []
    for j, t in enumerate(steps.tolist()):
        decisions.append(ledger.ztest(f"t={t}: time-varying width exponent below the bound's {bound:.3f}", dyn[j],
                                      dyn_se[j], bound, "below", Z_MC, test))
        controls.append(ledger.Control(
            f"t={t}: the same neurons and input sequences at the fixed nu = {float(a['fixed_nu']):.4g} at every n "
            "(outside nu = O(1/sqrt(n))), same test",
            ledger.ztest(f"t={t}: width exponent at the fixed nu", fix[j], fix_se[j], bound, "below", Z_MC, test),
            {"exponent": float(fix[j])}))
    m, s = _mean_se(a["static_per_seed"][:, b])
    z = (m - a["static_exact"]) / s
    decisions.append(_agree("static input (same neurons, first input held): Monte Carlo vs the exact curves, max over "
                            "n and t", float(np.max(np.abs(z))), Z_MANY))
    diff_se = np.sqrt(dyn_se**2 + sta_se**2)
    return ledger.Evidence(
        measured={"time_varying_exponent": {f"t={t}": {"slope": round(float(dyn[j]), 4), "se": round(float(dyn_se[j]), 4)}
                                            for j, t in enumerate(steps.tolist())},
                  "control_fixed_nu_exponent": fix.round(4).tolist(),
                  "static_mc_vs_exact_max_abs_z": float(np.max(np.abs(z))),
                  "observation (not decided): static vs time-varying rate": {
                      "static_exponent": sta.round(4).tolist(), "static_se": sta_se.round(4).tolist(),
                      "time_varying_minus_static": (dyn - sta).round(4).tolist(),
                      "se (independent-draw bound; the two share draws)": diff_se.round(4).tolist(),
                      "time_varying_by_n (t = 1, T)": a["dynamic_per_seed"][:, b][..., [0, -1]].mean(0).round(4).tolist(),
                      "static_by_n (t = 1, T)": a["static_per_seed"][:, b][..., [0, -1]].mean(0).round(4).tolist()}},
        predicted={"bound_exponent (input sequences)": bound,
                   "bound_exponent (static input)": th.theorem1_width_exponent(widths, static=True)},
        tolerance=f"per step t: fitted width exponent of the time-varying flip probability below the bound's power "
                  f"{bound:.4f} at {Z_MC:g} SE (SE over seeds); static Monte Carlo within {Z_MANY:g} SE of the exact "
                  "static curves (max over n, t); each fixed-nu control must fail the same exponent test",
        decisions=decisions,
        stderr={"time_varying_exponent": dyn_se.round(4).tolist()},
        notes=f"{meta.get('config_path')} at {r.scale} scale: theta = {meta['config']['theta']}, beta = 1, "
              f"{a['dynamic_per_seed'].shape[0]} seeds x {int(a['pairs_per_seed'])} pairs (neurons x input sequences) "
              "per width; per-step flips at nu = 1/sqrt(n) (16-bit rates, exact rates in the result). Theorem 1 bounds "
              "the probability over the weights uniformly over inputs at the given distances, so uniformly drawn "
              "sequences are an instance. Its constant C is not given, so the growth in t is not decided; the "
              "bound's power of n (with its log n) is what a measurement over n can test. At t = 1 the time-varying "
              "and static neurons coincide (same draws).",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 3c. The leaky experiment table (beta = 0.5; outside the theorems)
# ---------------------------------------------------------------------------------------------------

LEAKY_TABLE = {("slif", "flips"): 0.19, ("lif", "flips"): 0.28, ("slif", "dropout"): 0.16, ("lif", "dropout"): 0.16}
TABLE_PRECISION = 0.005  # the table prints two decimals: a value it shows as v lies in [v - 0.005, v + 0.005]


@ledger.claim("lif_snn.leaky_table",
              source="Araya et al., experiment table (5 layers, n = 1000, beta = 0.5, theta = 1) and its remark on "
                     "beta = 0.5 single neurons; an experiment outside Theorems 1-2, which assume beta = 1",
              paper=tuple(ledger.PaperValue(v, f"experiment table (5 layers, n = 1000, beta = 0.5, theta = 1), {lab}",
                                            ("table (L = 5)", key, "measured"))
                          for key, lab, v in (("slif, flips", "sLIF, random bit flips", 0.19),
                                              ("lif, flips", "LIF, random bit flips", 0.28),
                                              ("slif, dropout", "sLIF, 5% dropout of inputs", 0.16),
                                              ("lif, dropout", "LIF, 5% dropout of inputs", 0.16))),
              statement="Random 5-layer binary classifiers of width n = 1000 with leak beta = 0.5 and theta = 1 are less "
                        "noise-sensitive as sLIF than as LIF under random bit flips (0.19 vs 0.28), 5% input dropout "
                        "perturbs each less than the bit flips (0.16 vs 0.19, 0.16 vs 0.28), and the four values are "
                        "0.19, 0.28, 0.16, 0.16 (to the table's two decimals).",
              expected={"quick": "fails", "paper": "fails"},
              why="quick scale (lif_snn_leaky: 64 networks x 24 pairs per kind, T = 5; flip rate read as 0.05, the "
                  "dropout column's rate, since the table does not state it; numbers when this was written): our LIF "
                  "networks fall silent from the third layer at theta = 1 (the {0,1} spikes of a sparse layer give "
                  "the next layer a current of variance = its firing rate, below threshold), so every LIF input ties "
                  "to class 0 and the LIF ENS at L = 5 is 0, not 0.28: 'sLIF < LIF' fails decisively, and so do the "
                  "LIF values. sLIF at L = 5 gives 0.109 (SE 0.018) under flips, not 0.19 (0.113 at the 1/sqrt(n) "
                  "reading of the flip rate), and 0.119 under 5% dropout; deep sLIF ENS hardly depends on the size of "
                  "the perturbation (0.11-0.12 for every dropout rate at L = 5), so its flips-minus-dropout difference "
                  "is undecided there (at L = 1 it is 0.121 vs 0.091, reported in by_depth), and neither control "
                  "(dropout at 0.2: sLIF 0.122 vs 0.109 under flips; LIF all zero) is rejected at L = 5. The beta = 0.5 "
                  "single-neuron remark is reported: the ratio P(beta = 0.5) / P(beta = 1) per step is 0.93-1.00 at "
                  "n = 100 and 1.0-1.77 at n = 10^4 (largest at t = 2). The LIF normalisation, T and readout of the "
                  "paper's table are not stated, so the disagreement may lie in the set-up; what we measure under the "
                  "stated model is reported as it is. The paper-scale expectation is the same (LIF silence does not "
                  "depend on the sample size; not measured).",
              reads=("lif_snn_leaky", "lif_snn_time_varying"))
def _check_leaky_table(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_leaky"]
    tv, _ = r["lif_snn_time_varying"]
    kinds = [str(k) for k in a["kinds"]]
    t_idx = min(T_DEPTH, a["steps"].size) - 1
    L_idx = a["depths"].size - 1
    rates = a["dropout_rates"].tolist()
    q = float(meta["config"]["nu_scale"])  # the flip rate (nu_rule fixed)
    i_drop, i_ctl = rates.index(q), rates.index(4 * q) if 4 * q in rates else None
    i_same = rates.index(2 * q) if 2 * q in rates else None
    flips = {k: a["per_network"][kinds.index(k), 0, :, L_idx, t_idx] for k in kinds}  # [N]
    drops = {k: a["per_network_dropout"][kinds.index(k), 0, :, :, L_idx, t_idx] for k in kinds}  # [N, R]
    decisions, controls, values = [], [], {}
    ms, ss = _mean_se(flips["slif"])
    ml, sl = _mean_se(flips["lif"])
    decisions.append(ledger.ztest("bit flips: ENS(LIF) - ENS(sLIF) > 0 (independent networks)", float(ml - ms),
                                  float(math.hypot(ss, sl)), 0.0, "above", Z_MC,
                                  f"difference of two means (SE over networks, combined) above 0 at {Z_MC:g} SE "
                                  "(three-way)"))
    for k in kinds:
        decisions.append(ledger.paired(f"{k}: ENS(bit flips {q:g}) - ENS(dropout {q:g}) > 0 (same networks and x)",
                                       flips[k] - drops[k][:, i_drop], 0.0, "above"))
        if i_ctl is not None:
            controls.append(ledger.Control(
                f"{k}: dropout at {4 * q:g} (changes {2 * q:g} of the bits in expectation, twice the flips' {q:g}) in "
                "place of the table's 5%, same paired test",
                ledger.paired(f"{k}: ENS(bit flips) - ENS(dropout {4 * q:g}) > 0", flips[k] - drops[k][:, i_ctl], 0.0,
                              "above")))
        for col, per in (("flips", flips[k]), ("dropout", drops[k][:, i_drop])):
            m, s = _mean_se(per)
            paper = LEAKY_TABLE[(k, col)]
            values[f"{k}, {col}"] = {"measured": round(float(m), 4), "se": round(float(s), 4), "paper": paper}
            decisions.append(ledger.ztest(f"{k}, {col}: ENS = the table's {paper}", float(m - paper), float(s),
                                          TABLE_PRECISION, "within", Z_MC,
                                          f"|MC - table| within the table's rounding {TABLE_PRECISION:g} at {Z_MC:g} SE "
                                          "(three-way; SE over networks)"))
    by_depth = {}
    for k in kinds:
        per = a["per_network"][kinds.index(k), 0, :, :, t_idx]
        alt = a["per_network_fixed"][kinds.index(k), 0, :, :, t_idx] if a["per_network_fixed"].size else None
        by_depth[k] = {"flips": _mean_se(per)[0].round(4).tolist(), "se": _mean_se(per)[1].round(4).tolist(),
                       **({f"flips at nu = {float(a['fixed_nu']):g} (1/sqrt(n) reading)": _mean_se(alt)[0].round(4).tolist()}
                          if alt is not None else {}),
                       **{f"dropout {qq:g}": _mean_se(a['per_network_dropout'][kinds.index(k), 0, :, j, :, t_idx])[0]
                          .round(4).tolist() for j, qq in enumerate(rates)},
                       "tie rate of x": a[f"{k}_tie"][0, :, t_idx].round(3).tolist()}
        d = per - a["per_network_dropout"][kinds.index(k), 0, :, i_drop, :, t_idx]  # [N, D]: flips - dropout
        dm, dse = _mean_se(d)
        by_depth[k][f"flips - dropout {q:g}: mean, t"] = [[round(float(x), 4), round(float(x / y), 2) if y > 0 else 0.0]
                                                          for x, y in zip(dm, dse)]
    same_law = {}
    if i_same is not None and "slif" in kinds:
        for j, L in enumerate(a["depths"].tolist()):
            d = a["per_network"][kinds.index("slif"), 0, :, j, t_idx] - \
                a["per_network_dropout"][kinds.index("slif"), 0, :, i_same, j, t_idx]
            m, s = _mean_se(d)
            same_law[f"L={L}"] = {"diff": round(float(m), 4), "z": round(float(m / s), 2) if s > 0 else 0.0}
    # The remark: single-neuron values at beta = 0.5 similar to beta = 1 (static input, nu = 1/sqrt(n)).
    betas = tv["betas"].tolist()
    single = {}
    if 1.0 in betas and 0.5 in betas:
        p1 = tv["static_per_seed"][:, betas.index(1.0)].mean(0)
        p5 = tv["static_per_seed"][:, betas.index(0.5)].mean(0)
        single = {f"n={int(n)}": {"beta=1": p1[i].round(4).tolist(), "beta=0.5": p5[i].round(4).tolist(),
                                  "ratio": (p5[i] / p1[i]).round(3).tolist()} for i, n in enumerate(tv["widths"])}
    return ledger.Evidence(
        measured={"table (L = 5)": values, "by_depth (L = 1..5)": by_depth,
                  "observation (not decided): sLIF dropout at 2 nu vs flips at nu, equal in law": same_law,
                  "observation (not decided): single neuron, static, theta = 0.5, nu = 1/sqrt(n), t = 1..T": single},
        predicted={"table": {f"{k}, {c}": v for (k, c), v in LEAKY_TABLE.items()},
                   "ordering": "sLIF < LIF under flips; dropout < flips for each kind"},
        tolerance=f"ENS(LIF) - ENS(sLIF) above 0 at {Z_MC:g} SE; per kind the paired per-network difference flips - "
                  "dropout above 0 on its 95% Student-t interval; each value within the table's rounding "
                  f"{TABLE_PRECISION:g} at {Z_MC:g} SE (three-way); the controls (dropout at 4x the rate, which "
                  "changes twice as many bits as the flips) must fail the paired test",
        decisions=decisions,
        stderr={k: v["se"] for k, v in values.items()},
        notes=f"{meta.get('config_path')} at {r.scale} scale: L = {int(a['depths'][-1])}, n = {int(a['widths'][0])}, "
              f"beta = {meta['config']['beta']}, theta = {meta['config']['theta']}, T = {t_idx + 1}, 2 outputs, ties to "
              f"class 0; {flips['slif'].size} networks x {meta['config']['pairs']} pairs per kind (sLIF and LIF on "
              "different networks). Assumed (the table does not say): the flip rate is the dropout column's 0.05; "
              "dropout sets a bit to its 'off' value (0 in {0,1}, -1 in {-1,1}), so on uniform inputs it changes "
              "half the selected bits; for sLIF, dropout at 2 nu then has exactly the law of flips at nu (the sign "
              "symmetry of Gaussian weights), reported as a check. The 1/sqrt(n) reading of the flip rate is "
              "measured on the same networks and reported. The beta = 0.5 single-neuron remark is reported, not "
              "decided: 'similar' states no tolerance, and at these n the beta = 0.5 steps t >= 2 are "
              "pre-asymptotic (their switch points are theta/3 apart, about the spread of X - Y at n = 10^4).",
        controls=controls)
