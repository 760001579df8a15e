"""Claims of Araya, Datres, Kutyniok, *Random Spiking Neural Networks are Stable and Spectrally Simple* (ICLR
2026, arXiv 2511.00904), checked with ``theory.lif_snn``, ``theory.boolean`` and the ``sims.lif_snn`` results.

Each claim reads the figures it names in ``reads=`` and returns :class:`claims.ledger.Evidence` built from
ledger decisions (its own tests) and controls (cases just outside the hypothesis, decided by the same test);
the ledger computes the verdict. Every random quantity decided on comes from a figure's per-seed arrays
(seeds, networks), so the ledger can re-decide each claim with seeds left out.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from claims import ledger
from theory import boolean
from theory import lif_snn as th

Z_MC = 3.0  # |z| of one Monte-Carlo comparison
Z_MANY = 4.0  # max |z| over a family of a few dozen comparisons (P(any > 4) ~ 0.2% for 30 normals)


def _fit(x, y, se=None) -> tuple[float, float]:
    """Least-squares slope of ``log y`` on ``log x`` and its standard error (weighted by ``se`` of ``y``
    through ``se / y``, the delta method; without ``se`` the error is NaN)."""
    lx, ly = np.log(np.asarray(x, np.float64)), np.log(np.asarray(y, np.float64))
    if se is None:
        return float(np.polyfit(lx, ly, 1)[0]), float("nan")
    w = (np.asarray(y) / np.asarray(se)) ** 2
    xm = np.sum(w * lx) / np.sum(w)
    sxx = np.sum(w * (lx - xm) ** 2)
    slope = np.sum(w * (lx - xm) * ly) / sxx
    return float(slope), float(1.0 / math.sqrt(sxx))


def _mean_se(per_seed, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the seed axis and its standard error (sample SD / sqrt(seeds))."""
    a = np.asarray(per_seed, np.float64)
    return a.mean(axis=axis), a.std(axis=axis, ddof=1) / math.sqrt(a.shape[axis])


def _agree(name: str, z: float, z_max: float) -> ledger.Decision:
    """Monte Carlo consistent with an exact value: ``|z| <= z_max`` (a two-sided z-test not rejected; the
    controls show the same test rejects the nearby wrong laws). ``z = inf`` marks an exact mismatch where
    every seed gave the same value (no spread): that disagreement is exact, not a z-test."""
    if math.isinf(z):
        return ledger.check(name, False, "exact mismatch at zero spread", 0.0,
                            "a value identical in every seed must equal the exact value")
    return ledger.compare(name, float(abs(z)), "<=", z_max,
                          f"|Monte Carlo - exact| / SE <= {z_max:g} (two-sided z-test, normal approximation)")


def _closer(label: str, per_seed, law, rival, law_name: str, rival_name: str) -> ledger.Decision:
    """Per-seed vectors ``per_seed [S, K]`` closer to ``law`` than to ``rival`` (both ``[K]``): the projection
    ``D_s = (law - rival) . (2 x_s - law - rival)`` (= |x_s - rival|^2 - |x_s - law|^2) has mean
    ``|law - rival|^2 > 0`` when ``law`` is the truth and the negative of it when ``rival`` is; decided above 0
    at Z_MC SE over seeds (three-way: below -Z_MC SE it fails)."""
    law, rival = np.asarray(law, np.float64), np.asarray(rival, np.float64)
    d = (2 * np.asarray(per_seed, np.float64) - law - rival) @ (law - rival)
    m, se = _mean_se(d)
    return ledger.ztest(f"{label}: closer to {law_name} than to {rival_name}", float(m), float(se), 0.0, "above",
                        Z_MC, f"projection on the difference of the two laws above 0 at {Z_MC:g} SE over seeds "
                        "(normal approximation)")


def _typo_level_weights(n: int, theta: float) -> np.ndarray:
    """Expected level weights of the rival kernel with the correlation rho = 1 - d/n (a typo for 1 - 2d/n):
    ``G(d) = 1 - 2 P_plugin(theta, d / 2n)``, Krawtchouk-inverted exactly from its float64 values (n <= 16:
    the inversion amplifies their rounding by at most ~2^n)."""
    g = [1 - 2 * th.plugin_flip_probability(theta, d / (2 * n)) for d in range(n + 1)]
    return np.array([float(w) for w in boolean.level_weights_from_kernel(g, n)])


def _level_z(mean, se, exact) -> float:
    """Largest |z| over levels; a level with zero spread (exactly zero in every seed) must match exactly."""
    mean, se, exact = map(np.asarray, (mean, se, exact))
    zero = se == 0
    if np.any(np.abs(mean[zero] - exact[zero]) > 1e-12):
        return float("inf")
    return float(np.max(np.abs(mean[~zero] - exact[~zero]) / se[~zero])) if np.any(~zero) else 0.0


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

EXPONENT_TOL = 0.02
SQRT_TOL = 0.05


@ledger.claim("lif_snn.theorem1_scaling",
              source="Araya et al. Theorem 1 (beta = 1, static input) and Figure 1",
              statement="At nu = 1/sqrt(n) the expected noise sensitivity of one random sIF neuron falls like "
                        "n^(-1/4) (fitted over n = 10^2..10^4 at t = 1, 2), grows like sqrt(nu) at fixed n, and "
                        "grows only mildly (sub-quadratically) with t = 1..10.",
              reads=("lif_snn_single_neuron",))
def _check_theorem1_scaling(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_single_neuron"]
    widths, exact = a["widths"], a["slif_exact"]
    theta = float(meta["config"]["theta"])
    decisions = []
    slopes = {f"t={t}": _fit(widths, exact[:, t - 1])[0] for t in range(1, exact.shape[1] + 1)}
    for k in (1, 2):
        decisions.append(ledger.compare(f"t={k}: |width exponent + 1/4| (exact curve)", abs(slopes[f"t={k}"] + 0.25),
                                        "<=", EXPONENT_TOL, "float64 least-squares log-log slope"))
    per = a["mc_per_seed"][:, list(a["kinds"]).index("slif")]  # [S, W, T]
    mc_mean, mc_se = _mean_se(per)
    mc_slopes = {f"t={t}": _fit(widths, mc_mean[:, t - 1], mc_se[:, t - 1]) for t in (1, 2)}
    z = (mc_mean - exact) / mc_se
    decisions.append(_agree("Monte Carlo vs exact curves, max over n and t", float(np.max(np.abs(z))), Z_MANY))
    # sqrt(nu) at fixed n = 10^4, in the regime n nu >= 10 (exact mixture).
    nus = np.array([0.001, 0.002, 0.005, 0.01, 0.02])
    sqrt_slope = _fit(nus, [th.single_neuron_flip_probability(10_000, theta, v) for v in nus])[0]
    decisions.append(ledger.compare("|nu exponent - 1/2| at n = 10^4 (exact)", abs(sqrt_slope - 0.5), "<=", SQRT_TOL,
                                    "float64 least-squares log-log slope"))
    # Growth in t: exact ratios P_t / P_1 in the figure, and the small-noise constants c_t = lim P_t / sqrt(nu).
    ratio = exact[:, -1] / exact[:, 0]
    c = a["small_noise_constants"]
    t = np.arange(1, c.size + 1)
    quad = c / (c[0] * t**2)
    decisions.append(ledger.compare("max over t >= 2 of c_t / (c_1 t^2)", float(np.max(quad[1:])), "<", 1.0,
                                    "exact small-noise constants (deterministic)"))
    # Controls: the same fits outside the hypotheses.
    fixed = np.array([th.single_neuron_flip_probability(int(n), theta, 0.01) for n in widths])
    fixed_slope = _fit(widths, fixed)[0]
    lin_nus = np.array([1e-4, 2e-4, 5e-4, 1e-3])
    lin_slope = _fit(lin_nus, [th.single_neuron_flip_probability(100, theta, v) for v in lin_nus])[0]
    controls = [
        ledger.Control(f"nu = 0.01 fixed instead of 1/sqrt(n) (t = 1, exact), same |exponent + 1/4| <= "
                       f"{EXPONENT_TOL} test", ledger.compare("|width exponent + 1/4| at fixed nu",
                                                              abs(fixed_slope + 0.25), "<=", EXPONENT_TOL)),
        ledger.Control(f"n = 100 with n nu < 1 (at most one flipped bit, P ~ n nu P(d=1): linear in nu), same "
                       f"|exponent - 1/2| <= {SQRT_TOL} test",
                       ledger.compare("|nu exponent - 1/2| at n nu < 1", abs(lin_slope - 0.5), "<=", SQRT_TOL)),
    ]
    return ledger.Evidence(
        measured={"exponent_exact": slopes, "exponent_mc_t1_t2": {k: {"slope": v[0], "se": v[1]}
                                                                  for k, v in mc_slopes.items()},
                  "mc_vs_exact_max_abs_z": float(np.max(np.abs(z))), "sqrt_nu_exponent_n1e4": sqrt_slope,
                  "P10_over_P1": dict(zip([int(n) for n in widths], ratio.tolist())),
                  "small_noise_constants": c.tolist(), "c_t_over_c1_t2": quad.tolist()},
        predicted={"exponent (t = 1, 2)": -0.25, "sqrt_nu_exponent": 0.5,
                   "growth in t": "below C t^2 sqrt(nu) (C unknown): c_t / (c_1 t^2) < 1 for t >= 2"},
        tolerance=f"|exponent + 1/4| <= {EXPONENT_TOL} (exact values, t = 1, 2); Monte Carlo within {Z_MANY:g} SE of "
                  f"the exact curves (two-sided z-test, max over all n, t; SE over seeds); |sqrt(nu) exponent - 1/2| "
                  f"<= {SQRT_TOL}; c_t / (c_1 t^2) < 1; the controls must fail the same tests",
        decisions=decisions,
        stderr={"mc_exponent_t1": mc_slopes["t=1"][1]},
        notes=f"{meta.get('config_path')} at {r.scale} scale, theta = {theta}, beta = 1, {per.shape[0]} seeds, "
              f"{int(a['mc_pairs'])} Monte-Carlo pairs per point. The fitted exponent is -1/4 only for t = 1, 2; "
              "for t >= 3 it is -0.18 to -0.20 over n = 10^2..10^4: pre-asymptotic, since as nu -> 0 at fixed t, "
              "P_t / sqrt(nu) -> c_t, which grows about linearly in t (new switch points theta k/t); 'far below "
              "C t^2 sqrt(nu)' cannot be tested (C unknown): what is measured is c_t / (c_1 t^2) <= "
              f"{quad[1:].max():.2f} for t >= 2 and P_10/P_1 <= {ratio.max():.2f} over the figure's n.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 3. Theorem 2: width and depth (Figure 2)
# ---------------------------------------------------------------------------------------------------

Z_WIDTH = 2.0  # one-sided: the fitted width exponent must lie 2 SE below 0 (fails 2 SE above)
T_DEPTH = 5  # the classifiers of Theorem 2 decided at T = 5 steps


def _slif_networks(a) -> np.ndarray:
    """``[W, N, D]``: each sIF network's disagreement share at ``T = min(T_DEPTH, T)``."""
    t_idx = min(T_DEPTH, a["steps"].size) - 1
    return a["per_network"][list(a["kinds"]).index("slif"), ..., t_idx]


@ledger.claim("lif_snn.theorem2_depth_width",
              source="Araya et al. Theorem 2 (beta = 1, static input) and Figure 2",
              statement="For random L-layer binary sIF classifiers the expected noise sensitivity at nu = 1/sqrt(n) "
                        "falls with the width n at fixed L and rises with the depth L at fixed n.",
              reads=("lif_snn_depth",))
def _check_theorem2_depth_width(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_depth"]
    widths, depths = a["widths"], a["depths"]
    per = _slif_networks(a)  # [W, N, D]
    n_net = per.shape[1]
    ens, se = _mean_se(per, axis=1)  # [W, D]
    decisions, width = [], {}
    for j, L in enumerate(depths.tolist()):
        s, s_se = _fit(widths, ens[:, j], se[:, j])
        width[f"L={L}"] = {"exponent": s, "se": s_se, "z": s / s_se, "bound_exponent": float(a["bound_width_exponent"][j])}
        decisions.append(ledger.ztest(f"L={L}: width exponent below 0", s, s_se, 0.0, "below", Z_WIDTH,
                                      f"weighted log-log slope over n (delta-method SE over networks) below 0 "
                                      f"at {Z_WIDTH:g} SE (one-sided, normal approximation)"))
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
    # Control: a uniformly random function at nu = 1/sqrt(n): its ENS 1/2 - (1 - nu)^n / 2 rises towards 1/2
    # with n (no simplicity bias). Its values are exact, so the same z-test runs with SE 0 (the sign decides).
    rand = np.array([boolean.random_function_noise_sensitivity(int(n), 1 / math.sqrt(n)) for n in widths])
    rs = _fit(widths, rand)[0]
    controls = [ledger.Control(
        "a uniformly random function (no simplicity bias; exact ENS, rising to 1/2), same 'exponent "
        f"{Z_WIDTH:g} SE below 0' width test", ledger.ztest("random function: width exponent below 0", rs, 0.0, 0.0,
                                                         "below", Z_WIDTH), {"exponent": rs, "ens": rand.tolist()})]
    t_idx = min(T_DEPTH, a["steps"].size) - 1
    k_s = list(a["kinds"]).index("slif")
    all_t = a["per_network"][k_s].mean(axis=1)  # [W, D, T]
    t_effect = {f"n={n}": {"T=1->T=max (L=1)": float(all_t[i, 0, -1] - all_t[i, 0, 0]),
                           "L=1->L=max (T=1)": float(all_t[i, -1, 0] - all_t[i, 0, 0])}
                for i, n in enumerate(widths.tolist())}
    lif = (a["per_network"][list(a["kinds"]).index("lif"), ..., t_idx].mean(axis=1)
           if "lif" in list(a["kinds"]) else None)
    return ledger.Evidence(
        measured={"width_exponent": width, "depth": depth, "T_vs_depth_effect": t_effect,
                  **({"IF_ens_by_width_and_L (not decided)": lif.round(4).tolist()} if lif is not None else {})},
        predicted={"width_exponent": "< 0 at every L (bound: n^(-1/2^(2L+2)) up to polylog)",
                   "depth": "ENS(L_max) > ENS(1) at every n, no step down"},
        tolerance=f"width: weighted log-log slope over n at least {Z_WIDTH:g} SE below 0 for every L (z-test, SE "
                  "over networks); depth: 95% Student-t interval (statsmodels) of the per-network paired difference "
                  "ENS(L_max) - ENS(1) above 0 at every n, and no step L -> L + 1 whose 95% interval lies below 0; "
                  "the control must fail the width test",
        decisions=decisions,
        stderr={f"n={n}": se[i].round(4).tolist() for i, n in enumerate(widths.tolist())},
        notes=f"{meta.get('config_path')} at {r.scale} scale: T = {t_idx + 1}, {n_net} networks x "
              f"{meta['config']['pairs']} pairs per width; each depth's classifier shares the hidden layers of the "
              "same network (paired). The measured width exponents are far steeper than the bound's "
              "-1/2^(2L+2) (-0.0625, -0.0156, -0.0039, ... for L = 1, 2, 3): the bound is consistent but loose. "
              "IF (Heaviside) classifiers are reported, not decided: the theory covers sign spikes only. "
              "At n <= 16 (exhaustive) the width trend is invisible for L >= 2; it shows from n = 64.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 4. Spectral simplicity (the spectrum figure; the depth figure beyond n = 16)
# ---------------------------------------------------------------------------------------------------

FAR_BELOW = 0.5  # "far below": the SNN tail at most half the random function's
CUTOFFS = {"corollary sqrt(n) ln(n)": lambda n: math.sqrt(n) * math.log(n), "1/nu = sqrt(n)": math.sqrt}


@ledger.claim("lif_snn.spectral_simplicity",
              source="Araya et al. Corollary 1 (with O'Donnell Prop. 3.3, the bridge W^{>=1/nu} <= 2.313 NS_nu)",
              statement="The expected Fourier weight of random binary sLIF classifiers above an architecture-free "
                        "cut-off degree (Corollary 1's sqrt(n) ln(n), and 1/nu = sqrt(n)) is far below (at most half) "
                        "a uniformly random function's at every depth: exactly (full transforms) at n <= 16; beyond, "
                        "only the bridge bound 2.313 ENS_nu is available.",
              expected={"quick": "holds", "paper": "fails"},
              why="quick scale (depth <= 3, n <= 16, 480 networks): holds. At the corollary's cut-off sqrt(n) ln(n) the "
                  "sLIF tail is 0.12-0.32 of a random function's; at 1/nu = sqrt(n) the ratio grows with depth, 0.245, "
                  "0.380, 0.458 +- 0.005 at n = 16 for L = 1, 2, 3 (when this was written), the closest decision "
                  "8.8 SE below one half. This quick verdict was 'inconclusive' with 60 networks (0.49 +- 0.011 at "
                  "L = 3, n = 16, within 1-3 SE of one half; 'holds' at seed offset 2): a matter of power, not of "
                  "the statement, so the sample was enlarged. Paper scale adds L = 4, 5 and n = 20, where the "
                  "trend puts the sqrt(n) tail at or above half the random function's (a 60-network trial at "
                  "n = 16: 0.49 +- 0.02 at L = 4, 0.52 +- 0.03 at L = 5): expected to fail there (not measured "
                  "yet). Beyond n = 16 the bridge bound 2.313 (ENS + 3 SE) on E W^{>=sqrt n} is 0.27-0.79 over "
                  "n = 64..1024 and L = 1..4 against the random function's ~1: too weak to decide (reported only).",
              reads=("lif_snn_spectrum", "lif_snn_depth"))
def _check_spectral_simplicity(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_spectrum"]
    decisions, controls, exact, moves, bridge_gap = [], [], {}, {}, -math.inf
    for i, n in enumerate(a["widths"].tolist()):
        w, rw = a["weights"][i, ..., : n + 1], a["random_weights"][i, :, : n + 1]  # [N, D, n+1], [N, n+1]
        for name, cut in CUTOFFS.items():
            k = cut(n)
            tail = boolean.tail_weight(w, k)  # [N, D]
            rand_exp = float(boolean.tail_weight(a["random_expected"][i, : n + 1], k))
            m, s = _mean_se(tail)
            label = f"n={n}, {name} (k >= {math.ceil(k)})"
            dec = [ledger.ztest(f"{label}, L={L}: tail below {FAR_BELOW} x random", float(mi), float(si),
                                FAR_BELOW * rand_exp, "below", Z_MC) for L, mi, si in zip(a["depths"].tolist(), m, s)]
            decisions += dec
            rm, rse = _mean_se(boolean.tail_weight(rw, k))
            controls.append(ledger.Control(
                f"{label}: uniformly random functions (sampled, as many as networks), same 'tail below "
                f"{FAR_BELOW} x random' test", ledger.ztest(f"{label}: random tail below {FAR_BELOW} x random",
                                                            float(rm), float(rse), FAR_BELOW * rand_exp, "below", Z_MC)))
            exact[label] = {"E_W>=k by L": m.round(4).tolist(), "se": s.round(4).tolist(), "random_function": rand_exp,
                            "ratio by L": (m / rand_exp).round(3).tolist(), "decision by L": [d.decision for d in dec]}
        # The bridge holds function by function (a sanity check of the transform).
        bridge_gap = max(bridge_gap, float(np.max(boolean.tail_weight(w, math.sqrt(n))
                                                  - boolean.BRIDGE_CONSTANT * a["ns"][i])))
        moves[f"n={n}"] = {"ENS by L": a["ns"][i].mean(0).round(4).tolist(),
                           "E_W<=2 by L": w[..., :3].sum(-1).mean(0).round(3).tolist(),
                           "E_W>=n/2 by L": w[..., n // 2:].sum(-1).mean(0).round(3).tolist()}
    decisions.append(ledger.compare("max over networks of W^{>=sqrt n} - 2.313 NS_nu", bridge_gap, "<=", 1e-12,
                                    "O'Donnell Prop. 3.3 holds for every function (float64, to 1e-12)"))
    # Beyond exhaustive sizes: only the bridge bound on E W^{>= sqrt n}, from the depth figure's ENS (reported).
    d, _ = r["lif_snn_depth"]
    per = _slif_networks(d)
    ens, se = _mean_se(per, axis=1)
    beyond = {f"n={n}": {"bound_by_L": (boolean.BRIDGE_CONSTANT * (ens[i] + Z_MC * se[i])).round(3).tolist(),
                         "random_function": float(stats.binom.sf(math.ceil(math.sqrt(n)) - 1, n, 0.5))}
              for i, n in enumerate(d["widths"].tolist())}
    return ledger.Evidence(
        measured={"exact": exact, "spectrum_by_depth": moves, "bridge_max_gap": bridge_gap,
                  "beyond_exhaustive_bridge_bound (reported)": beyond},
        predicted={"E_W>=k": f"<= {FAR_BELOW} x the random function's (sum of C(n,j)/2^n over j >= k)"},
        tolerance=f"per n, depth and cut-off: z-test at {Z_MC:g} SE (SE over networks) of mean tail < {FAR_BELOW} x "
                  "the random function's (holds below, fails above, else inconclusive); each control (sampled random "
                  "functions) must fail the same test; W^{>=sqrt n} <= 2.313 NS must hold for every network",
        decisions=decisions,
        notes=f"{meta.get('config_path')} at {r.scale} scale: T = {meta['config']['T']}, 2 outputs, ties to class 0, "
              f"{meta['config']['n_networks']} networks per n. The cut-off is architecture-free by the corollary's "
              "choice, not by measurement: the measured spectrum moves with depth (E W^<=2 falls, E W^>=n/2 rises: "
              "spectrum_by_depth), and the tail above a fixed cut-off grows with L. Weight above degree k cannot "
              "be estimated by Monte Carlo beyond n ~ 20 (variance ~ C(n, k)), hence only the bridge bound there.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 5. Training lowers noise sensitivity (Figure 3)
# ---------------------------------------------------------------------------------------------------

FIT_ACC = {"digits2": 0.9, "digits10": 0.8, "parity": 0.95}


@ledger.claim("lif_snn.training_lowers_sensitivity",
              source="Araya et al. Figure 3 (trained SNNs)",
              statement="sIF and IF classifiers trained with a surrogate gradient on the bundled 8x8 digits "
                        "(binarised, 3 vs 8 and all ten) have lower noise sensitivity at nu = 1/sqrt(n) than at "
                        "initialisation, both with x uniform (the definition) and on held-out digits; training on a "
                        "sparse parity (which it fits) raises it.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="at quick scale (4 seeds, Student-t 95% intervals with 3 degrees of freedom) sIF drops clearly on "
                  "held-out digits (3 vs 8: 0.178 -> 0.071; ten classes 0.623 -> 0.326) and with x uniform on ten "
                  "classes (0.628 -> 0.503); with x uniform on 3 vs 8 it drops 0.276 -> 0.220, interval "
                  "[-0.03, 0.14], undecided at 4 seeds. The IF networks' uniform-x NS does not move (3 vs 8: 0.233 -> "
                  "0.220; ten classes 0.522 -> 0.553, drop -0.03, interval [-0.22, 0.15]) and IF 3 vs 8 on held-out "
                  "digits varies too much between seeds (0.274 -> 0.100, interval [-0.16, 0.51]) (numbers when this "
                  "was written). The parity control is rejected (0.293 -> 0.429 at nu = 1/4, as the 3-bit parity's "
                  "0.4375). The design is already paired (the same networks and input pairs before and after training); "
                  "with the IF uniform-x drop near 0 (per-seed drops of both signs: 3 vs 8 +0.15, +0.06, +0.04, "
                  "-0.20) more seeds are not expected to decide it: 16 seeds at paper scale neither.",
              reads=("lif_snn_training",))
def _check_training(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_training"]
    cfg = meta["config"]
    nus = a["nus"]
    dims = dict(zip(("digits2", "digits10", "parity"), a["input_dims"].tolist()))
    decisions, controls, rows, unfit = [], [], {}, []
    for j, case in enumerate(str(c) for c in a["cases"]):
        task, kind = case.rsplit("_", 1)
        v = int(np.argmin(np.abs(nus - 1 / math.sqrt(dims[task]))))
        acc = float(np.mean(a["test_acc"][:, j]))
        if acc < FIT_ACC[task]:
            unfit.append(f"{case} (test accuracy {acc:.3f} < {FIT_ACC[task]})")
        row = {"nu": float(nus[v]), "test_acc": acc}
        for measure, key in (("uniform", "ns"), ("data", "data_ns")):
            before, after = a[f"{key}_before"][:, j, v], a[f"{key}_after"][:, j, v]
            d = ledger.paired(f"{case}, x {measure}: NS drop before - after > 0", before - after, 0.0, "above")
            row[measure] = {"before": float(before.mean()), "after": float(after.mean()), "drop": d.statistic,
                            "decision": d.decision}
            if task == "parity":
                controls.append(ledger.Control(
                    f"{kind} trained on the {cfg['parity_bits']}-bit parity of {dims[task]} bits (a high-degree "
                    f"target; test accuracy {acc:.3f}), NS with x {measure}, same 'drop > 0' test", d))
            else:
                decisions.append(d)
        rows[case] = row
    # A network that did not fit its task tests the optimiser, not the claim: nothing is testable then.
    return ledger.Evidence(
        measured={**rows, "not fitted": unfit},
        predicted={"digits": "NS before - after > 0 (95% Student-t over seeds)",
                   "parity control": "NS rises (drop < 0): rejected",
                   "parity NS of the target": dict(zip(nus.round(4).tolist(), a["parity_ns_exact"].round(4).tolist()))},
        tolerance="per-seed paired drop NS_before - NS_after at nu = 1/sqrt(n) (0.125 for the 64-bit digits, 0.25 for "
                  "the 16-bit parity) decided on its 95% Student-t interval (statsmodels): holds above 0, fails "
                  "below; every digits case must hold for both measures, the parity controls must fail; a test "
                  f"accuracy below {FIT_ACC} leaves nothing decided (inconclusive)",
        decisions=[] if unfit else decisions,
        notes=f"{meta.get('config_path')} at {r.scale} scale: {cfg['n_seeds']} seeds, depth {cfg['depth']}, hidden "
              f"{cfg['hidden']}, T = {cfg['T']}, theta = {cfg['theta']}, beta = {cfg['beta']}, Adam lr {cfg['lr']}, "
              f"{cfg['steps']} steps, {cfg['ns_pairs']} pairs per NS; the same pairs before and after. Over the whole "
              "nu grid the drop holds at small nu; at nu >= 0.25 on 64 bits (16+ flipped bits) trained networks can "
              "be more sensitive than random ones (see the figure).",
        controls=controls)
