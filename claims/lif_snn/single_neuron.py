"""LIF-SNN claims about one neuron: the exact base case, Theorem 1's scaling, IF against sIF (Figure 1)."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from claims.lif_snn.common import Z_MANY, Z_MC, _agree, _closer, log_log_fit, _level_z, _mean_se, _typo_level_weights
from theory import boolean
from theory import lif_snn as th

# ---------------------------------------------------------------------------------------------------
# 1. The single neuron at t = 1, exactly
# ---------------------------------------------------------------------------------------------------


@ledger.claim("lif_snn.single_neuron_exact",
              source="Araya et al. Theorem 1, base case t = 1 (static input)",
              statement="At Hamming distance d the t = 1 flip probability of one random sLIF neuron is exactly "
                        "2[Q(theta) - P(X > theta, Y > theta; rho = 1 - 2d/n)] = 4 T(theta, sqrt(d/(n-d))) "
                        "(arccos(rho)/pi at theta = 0); under per-bit flips with probability nu it is the "
                        "Bin(n, nu) mixture of these (the plug-in rho = 1 - 2 nu is only its large-n limit); "
                        "its expected level weights follow by Krawtchouk inversion.",
              reads=("lif_snn_single_neuron",))
def _check_single_neuron_exact(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_single_neuron"]
    cfg = meta["config"]
    theta, n, nu = float(cfg["theta"]), int(cfg["law_n"]), float(cfg["law_nu"])
    decisions, controls = [], []
    # (a) theta = 0: Sheppard's formula, an identity.
    d_all = np.arange(n + 1)
    sheppard = float(np.max(np.abs(th.flip_probability_at_distance(n, d_all, 0.0)
                                   - np.arccos(1 - 2 * d_all / n) / np.pi)))
    decisions.append(ledger.compare("theta = 0: max |P - arccos(rho)/pi| over d", sheppard, "<=", 1e-12,
                                    "float64 identity to 1e-12"))
    # (b, c) Full-vector Monte Carlo against the exact law and a rival law: rho = 1 - nu (a typo for the correlation
    # in notes on the paper; at fixed distance rho = 1 - d/n) everywhere, and the plug-in rho = 1 - 2 nu
    # (the large-n limit) at the smallest mixture width, where it is 5% off (at n = 100 it is 1.1% off: reported).
    # Three-way z-test: |MC - law| below half the gap between the two laws holds, above it fails.
    fixed, mixture = {}, {}

    def versus(label, mc, se, exact, rival, rival_name):
        half = abs(exact - rival) / 2
        test = (f"|MC - law| < half the gap to the rival law ({rival_name}) at {Z_MC:g} SE (normal approximation)")
        own = ledger.ztest(f"{label}: MC closer to the exact law than to {rival_name}", mc - exact, se, half,
                           "within", Z_MC, test)
        ctl = ledger.Control(f"{label}: the rival law {rival_name} in place of the exact one, same test",
                             ledger.ztest(f"{label}: MC closer to {rival_name}", mc - rival, se, half, "within",
                                          Z_MC, test), {"rival": rival})
        return own, ctl

    mean, se = _mean_se(a["law_fixed_per_seed"])
    for j, d in enumerate(a["law_distances"].tolist()):
        exact = th.flip_probability_at_distance(n, d, theta)
        fixed[f"d={d}"] = {"exact": exact, "mc": float(mean[j]), "se": float(se[j]),
                           "z": float((mean[j] - exact) / se[j])}
        own, ctl = versus(f"n={n}, d={d}", mean[j], se[j], exact, th.plugin_flip_probability(theta, d / (2 * n)),
                          "rho = 1 - d/n")
        decisions.append(own)
        controls.append(ctl)
    mean, se = _mean_se(a["law_mixture_per_seed"])
    plug = th.plugin_flip_probability(theta, nu)
    typo = th.plugin_flip_probability(theta, nu / 2)  # rho = 1 - nu, the note's typo (= the plug-in at nu/2)
    widths = a["law_mixture_widths"].tolist()
    for j, nn in enumerate(widths):
        exact = th.single_neuron_flip_probability(nn, theta, nu)
        mixture[f"n={nn}"] = {"exact": exact, "mc": float(mean[j]), "se": float(se[j]),
                              "z": float((mean[j] - exact) / se[j]), "z_vs_plugin": float((mean[j] - plug) / se[j])}
        rivals = [(typo, "rho = 1 - nu")] + ([(plug, "the plug-in rho = 1 - 2 nu")] if nn == min(widths) else [])
        for rival, name in rivals:
            own, ctl = versus(f"n={nn}, nu={nu}", mean[j], se[j], exact, rival, name)
            decisions.append(own)
            controls.append(ctl)
    small, large = f"n={min(widths)}", f"n={max(widths)}"
    ms, ml = mixture[small], mixture[large]
    # (d) Krawtchouk expected level weights against transforms averaged over random neurons: are the per-seed
    # level weights closer to the Krawtchouk weights than to those of the rival kernel rho = 1 - d/n?
    kraw = {}
    for c, (nn, th_c) in enumerate(zip(a["law_level_widths"].tolist(), a["law_level_thetas"].tolist())):
        key = f"n={nn},theta={th_c}"
        per = a["law_levels"][c, :, : nn + 1]  # [S, n + 1]
        exact_w, typo_w = th.expected_level_weights(nn, th_c), _typo_level_weights(nn, th_c)
        rand_w = boolean.random_function_level_weights(nn)
        m, s = _mean_se(per)
        own = _closer(key, per, exact_w, typo_w, "the Krawtchouk weights", "the rho = 1 - d/n weights")
        kraw[key] = {"max_abs_z_vs_exact (reported)": _level_z(m, s, exact_w), "exact": np.round(exact_w, 4).tolist(),
                     "mc": np.round(m, 4).tolist(), "rival rho = 1 - d/n": np.round(typo_w, 4).tolist()}
        decisions.append(own)
        for law, name in ((typo_w, "the rho = 1 - d/n weights"), (rand_w, "a random function's C(n,k)/2^n")):
            controls.append(ledger.Control(f"{key}: {name} in place of the Krawtchouk weights, same test",
                                           _closer(key, per, law, exact_w, name, "the Krawtchouk weights")))
    pairs = int(a["law_fixed_per_seed"].shape[0] * cfg["law_samples_per_seed"])
    neurons = int(a["law_levels"].shape[1] * cfg["law_neurons_per_seed"])
    return ledger.Evidence(
        measured={"theta0_vs_sheppard_max_abs_diff": sheppard, f"fixed_distance_n{n}": fixed,
                  f"mixture_nu{nu}": mixture, "krawtchouk_vs_wht": kraw},
        predicted={"theta0": "arccos(rho)/pi exactly", "mixture": "exact Bin(n, nu) mixture", "plugin_limit": plug,
                   "plugin_relative_to_mixture": {k: plug / v["exact"] - 1 for k, v in mixture.items()}},
        tolerance=f"theta = 0 identity to 1e-12; each Monte Carlo closer to the exact law than to the rival law "
                  f"(|MC - law| within half their gap, z-test at {Z_MC:g} SE over seeds); the level weights of "
                  f"{neurons} averaged transforms closer to the Krawtchouk weights than to the rival kernel's "
                  f"(projection z-test at {Z_MC:g} SE over seeds); every control (a rival law or a random function's "
                  "weights claimed instead) must fail the same test",
        decisions=decisions,
        stderr={**{f"mixture {k}": v["se"] for k, v in mixture.items()},
                **{f"fixed {k}": v["se"] for k, v in fixed.items()}},
        notes=f"theta = {theta}; full-vector Monte Carlo (w ~ N(0, I/n), x uniform, flips), {pairs} pairs per "
              f"case over {a['law_fixed_per_seed'].shape[0]} seeds. The plug-in is "
              f"{100 * (plug / ml['exact'] - 1):+.2f}% off the exact mixture at {large}, nu = {nu} "
              f"(z = {ml['z_vs_plugin']:.1f}, reported) and {100 * (plug / ms['exact'] - 1):+.1f}% at {small}: a large-n "
              "limit, not the law at finite n. Krawtchouk sums run in python-flint ball arithmetic (float64 "
              "loses ~n bits). The per-level |z| of the averaged transforms against the Krawtchouk weights is "
              "reported, not decided: the high levels' per-seed weights are skewed, and a pass/fail |z| test "
              "has no undecided zone, so it flips when a seed is left out (seen at seed offset 1, |z| = 3.7 at "
              "n = 12, k = 10).",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 2. Theorem 1's scalings (Figure 1)
# ---------------------------------------------------------------------------------------------------

# Rival laws of the scaling tests: at nu = 1/sqrt(n) a flip probability that does not fall (n^0: what a fixed
# nu gives) and one linear in nu (n^(-1/2): what n nu < 1 gives, at most one flipped bit); in nu at fixed n,
# nu^0 and nu^1. Each test asks for the fitted exponent to lie closer to the law than to the nearest rival:
# within half the gap.
WIDTH_EXPONENT, WIDTH_TOL = -0.25, 0.125  # half the gap from -1/4 to 0 and to -1/2
NU_EXPONENT, NU_TOL = 0.5, 0.25  # half the gap from 1/2 to 0 and to 1
FIXED_NU = 0.1  # the control's fixed rate: above 1/sqrt(n) at every n > 100 (outside nu = O(1/sqrt(n)))


def _exponent_near(name: str, slope: float, law: float, tol: float) -> ledger.Decision:
    """A deterministic (exact-curve) fitted exponent within ``tol`` (half the gap to the nearest rival law)
    of ``law``."""
    return ledger.compare(name, abs(slope - law), "<=", tol,
                          f"|fitted exponent - {law:g}| <= {tol:g}: closer to the law than to the nearest rival "
                          "law (half their gap; exact values, float64 least squares)")


@ledger.claim("lif_snn.theorem1_scaling",
              source="Araya et al. Theorem 1 (beta = 1, static input) and Figure 1",
              paper=(ledger.PaperValue(-0.25, "Theorem 1 (beta = 1, static input, log n dropped): the bound C (1 + "
                                       "theta) t^2 sqrt(nu) at nu = 1/sqrt(n) is a power n^(-1/4)",
                                       ("exponent_exact", "t=1")),
                     ledger.PaperValue(0.5, "Theorem 1: the bound grows like sqrt(nu), power 1/2 of nu",
                                       "sqrt_nu_exponent_n1e4")),
              statement="At nu = 1/sqrt(n) the expected noise sensitivity P_t of one random sIF neuron falls like "
                        "n^(-1/4) (the bound C t^2 sqrt(nu)): at t = 1, 2 over the figure's n = 10^2..10^4 (exact "
                        "curves and Monte Carlo), and at every t = 1..10 in the large-n limit; at fixed n it grows "
                        "like sqrt(nu) in the regime n nu >> 1.",
              expected={"quick": "holds", "paper": "holds"},
              why="the t = 1, 2 exponents are -0.250, -0.251 (exact) and -0.252 +- 0.002 (Monte Carlo); in the "
                  "large-n limit (n = 10^12..10^16) every t = 1..10 has -0.250; the sqrt(nu) exponent at n = 10^4 "
                  "is 0.505 (numbers when this was written). Each control (a fixed nu = 0.1, outside nu = "
                  "O(1/sqrt(n)): exponent ~0; n nu < 1: exponent ~1) fails the same test. For t >= 3 over the "
                  "figure's n the exponent is -0.18 to -0.20 (pre-asymptotic: reported, and decided only in the "
                  "large-n limit, where the theorem's rate applies). The growth in t (c_t = lim P_t / sqrt(nu), "
                  "about linear in t) is reported, not decided: the bound's constant C is not given, so 'below "
                  "C t^2 sqrt(nu)' has no failing outcome at finite T.",
              reads=("lif_snn_single_neuron",))
def _check_theorem1_scaling(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_single_neuron"]
    widths, exact = a["widths"], a["slif_exact"]
    theta = float(meta["config"]["theta"])
    decisions, controls = [], []
    slopes = {f"t={t}": log_log_fit(widths, exact[:, t - 1])[0] for t in range(1, exact.shape[1] + 1)}
    for k in (1, 2):
        decisions.append(_exponent_near(f"t={k}: width exponent (exact curve, n = {int(widths[0])}.."
                                        f"{int(widths[-1])})", slopes[f"t={k}"], WIDTH_EXPONENT, WIDTH_TOL))
    per = a["mc_per_seed"][:, list(a["kinds"]).index("slif")]  # [S, W, T]
    mc_mean, mc_se = _mean_se(per)
    mc_slopes = {f"t={t}": log_log_fit(widths, mc_mean[:, t - 1], mc_se[:, t - 1]) for t in (1, 2)}
    for k in (1, 2):
        sl, sse = mc_slopes[f"t={k}"]
        decisions.append(ledger.ztest(
            f"t={k}: width exponent (Monte Carlo) within {WIDTH_TOL:g} of -1/4", sl - WIDTH_EXPONENT, sse, WIDTH_TOL,
            "within", Z_MC, f"|slope + 1/4| below {WIDTH_TOL:g} (half the gap to the rival laws n^0, n^(-1/2)) at "
                            f"{Z_MC:g} SE (delta-method SE over seeds)"))
    z = (mc_mean - exact) / mc_se
    decisions.append(_agree("Monte Carlo vs exact curves, max over n and t", float(np.max(np.abs(z))), Z_MANY))
    # Every t in the large-n limit (the plug-in curves, exact as n -> infinity).
    big, plug = a["large_widths"], a["slif_plugin_large"]
    large = {f"t={t}": log_log_fit(big, plug[:, t - 1])[0] for t in range(1, plug.shape[1] + 1)}
    decisions += [_exponent_near(f"{k}: width exponent in the large-n limit (n = {big[0]:.0e}..{big[-1]:.0e})", v,
                                 WIDTH_EXPONENT, WIDTH_TOL) for k, v in large.items()]
    # sqrt(nu) at fixed n = 10^4, in the regime n nu >= 10 (exact mixture).
    nus = np.array([0.001, 0.002, 0.005, 0.01, 0.02])
    sqrt_slope = log_log_fit(nus, [th.single_neuron_flip_probability(10_000, theta, v) for v in nus])[0]
    decisions.append(_exponent_near("nu exponent at n = 10^4, n nu = 10..200 (exact)", sqrt_slope, NU_EXPONENT,
                                    NU_TOL))
    # Controls, outside the hypotheses, by the same tests.
    fixed = np.array([th.single_neuron_flip_probability(int(n), theta, FIXED_NU) for n in widths])
    fixed_slope = log_log_fit(widths, fixed)[0]
    fixed_large = log_log_fit(big, [th.static_plugin_flip_probabilities(theta, FIXED_NU, plug.shape[1])[-1]] * big.size)[0]
    lin_nus = np.array([1e-4, 2e-4, 5e-4, 1e-3])
    lin_slope = log_log_fit(lin_nus, [th.single_neuron_flip_probability(100, theta, v) for v in lin_nus])[0]
    controls = [
        ledger.Control(f"t=1 at the fixed nu = {FIXED_NU:g} (above 1/sqrt(n) for n > 100: outside nu = O(1/sqrt(n))), "
                       "same exponent test", _exponent_near("width exponent at a fixed nu", fixed_slope,
                                                            WIDTH_EXPONENT, WIDTH_TOL), {"exponent": fixed_slope}),
        ledger.Control(f"t={plug.shape[1]} in the large-n limit at the fixed nu = {FIXED_NU:g}, same exponent test",
                       _exponent_near("large-n width exponent at a fixed nu", fixed_large, WIDTH_EXPONENT,
                                      WIDTH_TOL), {"exponent": fixed_large}),
        ledger.Control("n = 100 with n nu < 1 (at most one flipped bit, P ~ n nu P(d=1): linear in nu; outside the "
                       "regime n nu >> 1 of the sqrt(nu) law), same nu-exponent test",
                       _exponent_near("nu exponent at n nu < 1", lin_slope, NU_EXPONENT, NU_TOL),
                       {"exponent": lin_slope}),
    ]
    ratio = exact[:, -1] / exact[:, 0]
    c = a["small_noise_constants"]
    t = np.arange(1, c.size + 1)
    # Where each step reaches its n^(-1/4) rate: sqrt(nu) below the switch-point spacing theta / (t (t - 1)).
    crossover = {f"t={k}": float((k * (k - 1) / theta) ** 4) for k in range(3, c.size + 1)}
    return ledger.Evidence(
        measured={"exponent_exact": slopes, "exponent_mc_t1_t2": {k: {"slope": v[0], "se": v[1]}
                                                                  for k, v in mc_slopes.items()},
                  "exponent_large_n_limit": large, "mc_vs_exact_max_abs_z": float(np.max(np.abs(z))),
                  "sqrt_nu_exponent_n1e4": sqrt_slope,
                  "controls": {"fixed_nu_exponent": fixed_slope, "fixed_nu_large_n_exponent": fixed_large,
                               "n_nu_below_1_nu_exponent": lin_slope},
                  "observation (not decided)": {
                      "P10_over_P1": dict(zip([int(n) for n in widths], ratio.tolist())),
                      "small_noise_constants c_t": c.round(4).tolist(),
                      "c_t_over_c1_t2": (c / (c[0] * t**2)).round(4).tolist(),
                      "n where sqrt(nu) = theta/(t(t-1))": crossover}},
        predicted={"width exponent": WIDTH_EXPONENT, "nu exponent": NU_EXPONENT,
                   "growth in t": "below C t^2 sqrt(nu) (C not given): not decided"},
        tolerance=f"|exponent + 1/4| <= {WIDTH_TOL:g} (exact curves at t = 1, 2 over the figure's n, and at every t "
                  f"in the large-n limit) and within {WIDTH_TOL:g} at {Z_MC:g} SE (Monte Carlo, SE over seeds): half "
                  f"the gap to the rival laws n^0 and n^(-1/2); |nu exponent - 1/2| <= {NU_TOL:g} (half the gap to "
                  f"nu^0 and nu^1); Monte Carlo within {Z_MANY:g} SE of the exact curves (max over n, t); the "
                  "controls must fail the same tests",
        decisions=decisions,
        stderr={"mc_exponent_t1": mc_slopes["t=1"][1], "mc_exponent_t2": mc_slopes["t=2"][1]},
        notes=f"{meta.get('config_path')} at {r.scale} scale, theta = {theta}, beta = 1, {per.shape[0]} seeds, "
              f"{int(a['mc_pairs'])} Monte-Carlo pairs per point. For t >= 3 the fitted exponent over n = 10^2..10^4 "
              "is -0.18 to -0.20 (exponent_exact): pre-asymptotic. P_t switches at the points theta m / j (j <= t), "
              "and P_t / sqrt(nu) reaches its limit c_t only once sqrt(nu) is well below their spacing theta / "
              "(t (t - 1)), i.e. n >> (t (t - 1) / theta)^4 (about 10^9 for t = 10); the large-n limit curves "
              "decide the rate there. Observation: c_t grows about linearly in t (c_t / (c_1 t^2) <= "
              f"{(c / (c[0] * t**2))[1:].max():.2f} for t >= 2), P_10/P_1 <= {ratio.max():.2f} over the figure's n.",
        controls=controls)


@ledger.claim("lif_snn.if_single_neuron",
              source="Araya et al. Figure 1 (one neuron, sIF and IF: 'sIF and IF behave similarly')",
              statement="One random IF neuron (Heaviside spikes, {0,1} input, beta = 1, static input) at nu = 1/sqrt(n) "
                        "has an expected noise sensitivity that falls like n^(-1/4), as the sIF neuron's: at t = 1, 2 "
                        "over the figure's n (Monte Carlo), and at every t in the large-n limit, where it equals the "
                        "sIF neuron's at threshold theta sqrt(2) and rate nu / 2 (w.x has variance 1/2 on {0,1} "
                        "input and correlation 1 - nu).",
              expected={"quick": "holds", "paper": "holds"},
              why="quick scale: the IF Monte Carlo exponents at t = 1, 2 are -0.250 and -0.247 (SE 0.002), and every t "
                  "has -0.250 in the large-n limit; the control (a fixed nu = 0.1, outside nu = O(1/sqrt(n))) is flat "
                  "and fails the same test. Reported, not decided: at t = 1 IF is the more stable (P_1 ratio IF/sIF ~ "
                  "0.62 at every n); at t = 10 the ratio rises from 0.77 at n = 100 to 1.09 at n = 10^4, since the IF "
                  "t >= 3 exponent over n = 10^2..10^4 is about -0.11 (pre-asymptotic, as for sIF's -0.19).",
              reads=("lif_snn_single_neuron",))
def _check_if_single_neuron(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_single_neuron"]
    widths = a["widths"]
    theta = float(meta["config"]["theta"])
    per = a["mc_per_seed"][:, list(a["kinds"]).index("lif")]  # [S, W, T]
    mean, se = _mean_se(per)
    T = per.shape[-1]
    decisions, mc = [], {}
    for k in (1, 2):
        sl, sse = log_log_fit(widths, mean[:, k - 1], se[:, k - 1])
        mc[f"t={k}"] = {"slope": sl, "se": sse}
        decisions.append(ledger.ztest(
            f"IF t={k}: width exponent (Monte Carlo) within {WIDTH_TOL:g} of -1/4", sl - WIDTH_EXPONENT, sse,
            WIDTH_TOL, "within", Z_MC, f"|slope + 1/4| below {WIDTH_TOL:g} (half the gap to the rival laws n^0, "
                                       f"n^(-1/2)) at {Z_MC:g} SE (delta-method SE over seeds)"))
    # Large-n limit: the IF currents (w.x, w.y) on {0,1} input have variance 1/2 and correlation 1 - nu, so the
    # IF neuron is the sIF neuron at theta sqrt(2) and rate nu / 2.
    big = a["large_widths"]
    lim = np.stack([th.static_plugin_flip_probabilities(theta * math.sqrt(2), 0.5 / math.sqrt(n), T) for n in big])
    large = {f"t={t}": log_log_fit(big, lim[:, t - 1])[0] for t in range(1, T + 1)}
    decisions += [_exponent_near(f"IF {k}: width exponent in the large-n limit (n = {big[0]:.0e}..{big[-1]:.0e})", v,
                                 WIDTH_EXPONENT, WIDTH_TOL) for k, v in large.items()]
    fixed = np.array([th.if_plugin_flip_probability(theta, FIXED_NU)] * widths.size)
    fixed_slope = log_log_fit(widths, fixed)[0]
    controls = [ledger.Control(
        f"IF t=1 at the fixed nu = {FIXED_NU:g} (large-n limit, exact; outside nu = O(1/sqrt(n))), same exponent test",
        _exponent_near("IF width exponent at a fixed nu", fixed_slope, WIDTH_EXPONENT, WIDTH_TOL),
        {"exponent": fixed_slope})]
    s_mean = a["mc_per_seed"][:, list(a["kinds"]).index("slif")].mean(0) if "slif" in list(a["kinds"]) else None
    all_t = {f"t={t}": log_log_fit(widths, mean[:, t - 1])[0] for t in range(1, T + 1)}
    return ledger.Evidence(
        measured={"exponent_mc_t1_t2": mc, "exponent_large_n_limit": large,
                  "observation (not decided)": {
                      "exponent_mc_all_t (n = figure's)": {k: round(v, 4) for k, v in all_t.items()},
                      "P1_IF_over_plugin_limit": (mean[:, 0] / a["lif_plugin_t1"]).round(4).tolist(),
                      **({"P_IF_over_P_sIF (t = 1, T)": (mean[:, [0, -1]] / s_mean[:, [0, -1]]).round(3).tolist()}
                         if s_mean is not None else {})},
                  "control_fixed_nu_exponent": fixed_slope},
        predicted={"width exponent": WIDTH_EXPONENT},
        tolerance=f"|Monte Carlo exponent + 1/4| within {WIDTH_TOL:g} at {Z_MC:g} SE (t = 1, 2; SE over seeds) and "
                  f"|exact large-n exponent + 1/4| <= {WIDTH_TOL:g} (every t): half the gap to the rival laws n^0 and "
                  "n^(-1/2); the fixed-nu control must fail the same test",
        decisions=decisions,
        stderr={k: v["se"] for k, v in mc.items()},
        notes=f"{meta.get('config_path')} at {r.scale} scale, theta = {theta}, beta = 1, {per.shape[0]} seeds, "
              f"{int(a['mc_pairs'])} pairs per point; the IF currents are drawn from their exact joint law (popcount "
              "binomials for the ones among flipped and unflipped bits). The theory covers sign spikes only; the "
              "IF rate follows from the mapping above (theory.lif_snn.if_plugin_flip_probability at t = 1).",
        controls=controls)
