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
    slopes = {f"t={t}": _fit(widths, exact[:, t - 1])[0] for t in range(1, exact.shape[1] + 1)}
    for k in (1, 2):
        decisions.append(_exponent_near(f"t={k}: width exponent (exact curve, n = {int(widths[0])}.."
                                        f"{int(widths[-1])})", slopes[f"t={k}"], WIDTH_EXPONENT, WIDTH_TOL))
    per = a["mc_per_seed"][:, list(a["kinds"]).index("slif")]  # [S, W, T]
    mc_mean, mc_se = _mean_se(per)
    mc_slopes = {f"t={t}": _fit(widths, mc_mean[:, t - 1], mc_se[:, t - 1]) for t in (1, 2)}
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
    large = {f"t={t}": _fit(big, plug[:, t - 1])[0] for t in range(1, plug.shape[1] + 1)}
    decisions += [_exponent_near(f"{k}: width exponent in the large-n limit (n = {big[0]:.0e}..{big[-1]:.0e})", v,
                                 WIDTH_EXPONENT, WIDTH_TOL) for k, v in large.items()]
    # sqrt(nu) at fixed n = 10^4, in the regime n nu >= 10 (exact mixture).
    nus = np.array([0.001, 0.002, 0.005, 0.01, 0.02])
    sqrt_slope = _fit(nus, [th.single_neuron_flip_probability(10_000, theta, v) for v in nus])[0]
    decisions.append(_exponent_near("nu exponent at n = 10^4, n nu = 10..200 (exact)", sqrt_slope, NU_EXPONENT,
                                    NU_TOL))
    # Controls, outside the hypotheses, by the same tests.
    fixed = np.array([th.single_neuron_flip_probability(int(n), theta, FIXED_NU) for n in widths])
    fixed_slope = _fit(widths, fixed)[0]
    fixed_large = _fit(big, [th.static_plugin_flip_probabilities(theta, FIXED_NU, plug.shape[1])[-1]] * big.size)[0]
    lin_nus = np.array([1e-4, 2e-4, 5e-4, 1e-3])
    lin_slope = _fit(lin_nus, [th.single_neuron_flip_probability(100, theta, v) for v in lin_nus])[0]
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
        sl, sse = _fit(widths, mean[:, k - 1], se[:, k - 1])
        mc[f"t={k}"] = {"slope": sl, "se": sse}
        decisions.append(ledger.ztest(
            f"IF t={k}: width exponent (Monte Carlo) within {WIDTH_TOL:g} of -1/4", sl - WIDTH_EXPONENT, sse,
            WIDTH_TOL, "within", Z_MC, f"|slope + 1/4| below {WIDTH_TOL:g} (half the gap to the rival laws n^0, "
                                       f"n^(-1/2)) at {Z_MC:g} SE (delta-method SE over seeds)"))
    # Large-n limit: the IF currents (w.x, w.y) on {0,1} input have variance 1/2 and correlation 1 - nu, so the
    # IF neuron is the sIF neuron at theta sqrt(2) and rate nu / 2.
    big = a["large_widths"]
    lim = np.stack([th.static_plugin_flip_probabilities(theta * math.sqrt(2), 0.5 / math.sqrt(n), T) for n in big])
    large = {f"t={t}": _fit(big, lim[:, t - 1])[0] for t in range(1, T + 1)}
    decisions += [_exponent_near(f"IF {k}: width exponent in the large-n limit (n = {big[0]:.0e}..{big[-1]:.0e})", v,
                                 WIDTH_EXPONENT, WIDTH_TOL) for k, v in large.items()]
    fixed = np.array([th.if_plugin_flip_probability(theta, FIXED_NU)] * widths.size)
    fixed_slope = _fit(widths, fixed)[0]
    controls = [ledger.Control(
        f"IF t=1 at the fixed nu = {FIXED_NU:g} (large-n limit, exact; outside nu = O(1/sqrt(n))), same exponent test",
        _exponent_near("IF width exponent at a fixed nu", fixed_slope, WIDTH_EXPONENT, WIDTH_TOL),
        {"exponent": fixed_slope})]
    s_mean = a["mc_per_seed"][:, list(a["kinds"]).index("slif")].mean(0) if "slif" in list(a["kinds"]) else None
    all_t = {f"t={t}": _fit(widths, mean[:, t - 1])[0] for t in range(1, T + 1)}
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
        slope, sse = _fit(widths, m, s)
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


# ---------------------------------------------------------------------------------------------------
# 3b. Theorem 1 for input sequences (time-varying input)
# ---------------------------------------------------------------------------------------------------


def _slopes(widths, per) -> tuple[np.ndarray, np.ndarray]:
    """Weighted log-log slopes over ``widths`` of the per-seed shares ``per [S, W, T]``, per step: ``([T], [T])``
    slope and delta-method SE over seeds."""
    m, s = _mean_se(per)
    fits = [_fit(widths, m[:, t], s[:, t]) for t in range(m.shape[1])]
    return np.array([f[0] for f in fits]), np.array([f[1] for f in fits])


@ledger.claim("lif_snn.theorem1_time_varying",
              source="Araya et al. Theorem 1 (input sequences x_1..x_t, y_1..y_t with per-step distance nu_t; beta = 1)",
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


# ---------------------------------------------------------------------------------------------------
# 4. Spectral simplicity (Corollary 1)
# ---------------------------------------------------------------------------------------------------


def _width_falls(label: str, widths, per) -> ledger.Decision:
    """Weighted log-log slope over ``widths`` of the mean of ``per [W, N]`` (per-network shares; SE over
    networks by the delta method) below 0 at :data:`Z_MC` SE: holds below -Z_MC SE, fails above +Z_MC SE."""
    m, s = _mean_se(per, axis=1)
    slope, se = _fit(widths, m, s)
    return ledger.ztest(label, slope, se, 0.0, "below", Z_MC,
                        f"weighted log-log slope over n (delta-method SE over networks) below 0 at {Z_MC:g} SE "
                        "(three-way, normal approximation)")


def _corollary_cutoff(n) -> float:
    """Corollary 1's cut-off degree ``1/nu' = sqrt(n) ln n``."""
    return math.sqrt(n) * math.log(n)


@ledger.claim("lif_snn.spectral_simplicity",
              source="Araya et al. Corollary 1 (with Theorem 2 and O'Donnell Prop. 3.3, the bridge "
                     "W^{>=1/nu} <= 2.313 NS_nu)",
              statement="Random binary sIF classifiers of fixed depth L are, in expectation, concentrated up to the "
                        "degree sqrt(n) ln n with an error eps(n) -> 0: the bridge bound 2.313 ENS_nu' (nu' = "
                        "1/(sqrt(n) ln n)) on E W^{>= sqrt(n) ln n} falls with the width n at every L (n = 64..1024), "
                        "and the bridge holds for every network of the exhaustive transforms (n <= 16).",
              expected={"quick": "holds", "paper": "holds"},
              why="quick scale (128 networks x 256 pairs, n = 64..1024, L = 1..3): the fitted width exponent of "
                  "ENS_nu' is -0.31, -0.18, -0.10 (9-34 SE below 0, when this was written), while the same networks "
                  "and inputs at the fixed rate nu = 0.03 (the cut-off 1/nu = 33 frozen at its n = 64 value, below "
                  "the corollary's sqrt(n) ln n at every larger n) rise with n (+0.03, +0.06, +0.07, 5-8 SE above "
                  "0) and a uniformly random function's bound rises to its maximum: both controls rejected (replicated at "
                  "seed offset 1: -0.31, -0.21, -0.11 against +0.045, +0.042, +0.061, 5.4-6.4 SE). Paper "
                  "scale (n to 16384, L to 5) is not measured; the quick trend predicts 'holds'. Earlier this claim "
                  "judged the tail above sqrt(n) (1/nu at nu = 1/sqrt(n)) against half a random function's, a "
                  "threshold of ours, not the corollary's: that tail grows with depth (0.25, 0.38, 0.46 of a random "
                  "function's at n = 16, L = 1..3) and is now a labelled observation, not decided.",
              reads=("lif_snn_spectrum", "lif_snn_corollary"))
def _check_spectral_simplicity(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_spectrum"]
    c, cmeta = r["lif_snn_corollary"]
    decisions, controls = [], []
    # (a) The bridge, function by function, at the corollary's nu' and at nu = 1/sqrt(n): an inequality that
    # holds for every Boolean function (a check of the transforms; no control can fail it).
    gaps, observed = {}, {}
    for i, n in enumerate(a["widths"].tolist()):
        w = a["weights"][i, ..., : n + 1]  # [N, D, n + 1]
        k = np.arange(n + 1)
        for name, cut in (("sqrt(n) ln n", _corollary_cutoff(n)), ("sqrt(n)", math.sqrt(n))):
            ns = w @ (0.5 * (1 - (1 - 2 / cut) ** k))  # NS at nu = 1/cut from the exact spectrum
            gaps[f"n={n}, 1/nu = {name}"] = float(np.max(boolean.tail_weight(w, cut) - boolean.BRIDGE_CONSTANT * ns))
        # Labelled observations (not decided): the exact tails at the two cut-offs against a random function's.
        rand = a["random_expected"][i, : n + 1]
        for name, cut in (("sqrt(n) ln n", _corollary_cutoff(n)), ("sqrt(n)", math.sqrt(n))):
            m, s = _mean_se(boolean.tail_weight(w, cut))
            rt = float(boolean.tail_weight(rand, cut))
            observed[f"n={n}, k >= {math.ceil(cut)} ({name})"] = {
                "E_W>=k by L": m.round(4).tolist(), "se": s.round(4).tolist(), "random_function": round(rt, 4),
                "ratio by L": (m / rt).round(3).tolist()}
    decisions.append(ledger.compare("max over networks, n <= 16 and both cut-offs of W^{>=1/nu} - 2.313 NS_nu",
                                    max(gaps.values()), "<=", 1e-12,
                                    "O'Donnell Prop. 3.3 holds for every function (float64, to 1e-12)"))
    # (b) eps(n) -> 0 beyond exhaustive sizes: the bridge bound 2.313 ENS_nu' falls with n at every depth.
    widths, nus = c["widths"], c["nus"]
    k_s = list(c["kinds"]).index("slif")
    t_idx = c["steps"].size - 1
    per, fixed = c["per_network"][k_s, ..., t_idx], c["per_network_fixed"][k_s, ..., t_idx]  # [W, N, D]
    fixed_nu = float(c["fixed_nu"])
    rand = np.array([boolean.random_function_noise_sensitivity(int(n), float(v)) for n, v in zip(widths, nus)])
    rs = _fit(widths, rand)[0]
    rows = {}
    for j, L in enumerate(c["depths"].tolist()):
        dec = _width_falls(f"L={L}: bridge bound 2.313 ENS_nu' on E W^(>= sqrt(n) ln n) falls with n", widths,
                           per[:, :, j])
        decisions.append(dec)
        ctl = _width_falls(f"L={L}: bound at the fixed nu = {fixed_nu:g} falls with n", widths, fixed[:, :, j])
        controls.append(ledger.Control(
            f"L={L}: the same networks and inputs at the fixed rate nu = {fixed_nu:g} (the cut-off degree "
            f"{1 / fixed_nu:.0f} frozen at its n = {int(widths[0])} value, below sqrt(n) ln n beyond), same test",
            ctl, {"exponent": ctl.statistic}))
        m, s = _mean_se(per[:, :, j], axis=1)
        rows[f"L={L}"] = {"exponent": dec.statistic, "margin_se": dec.margin_se,
                          "bound_2.313_ENS_by_n": (boolean.BRIDGE_CONSTANT * m).round(4).tolist(),
                          "se_ENS_by_n": s.round(4).tolist(), "fixed_nu_exponent": ctl.statistic}
    controls.append(ledger.Control(
        "a uniformly random function at the same nu' (exact ENS 1/2 - (1 - nu')^n / 2, no simplicity bias), "
        f"same 'exponent {Z_MC:g} SE below 0' test",
        ledger.ztest("random function: bound falls with n", rs, 0.0, 0.0, "below", Z_MC),
        {"exponent": rs, "bound": (boolean.BRIDGE_CONSTANT * rand).round(4).tolist()}))
    return ledger.Evidence(
        measured={"bound_by_depth": rows, "nu_prime": nus.round(5).tolist(), "bridge_max_gap": gaps,
                  "exact_tails (observation, not decided)": observed},
        predicted={"bound": "2.313 ENS_nu' -> 0 with n at every fixed L (eps = O(n^(-1/2^(2(L+1))) polylog n))",
                   "bridge": "W^{>=1/nu} <= 2.313 NS_nu for every function"},
        tolerance=f"per depth: weighted log-log slope of ENS_nu' over n (delta-method SE over networks) below 0 "
                  f"at {Z_MC:g} SE (three-way); the controls (the fixed rate {fixed_nu:g}, a random function) must "
                  "fail the same test; the bridge must hold for every network to 1e-12",
        decisions=decisions,
        stderr={k: v["se_ENS_by_n"] for k, v in rows.items()},
        notes=f"{cmeta.get('config_path')} at {r.scale} scale: T = {cmeta['config']['T']}, 2 outputs, ties to class "
              f"0, {per.shape[1]} networks x {cmeta['config']['pairs']} pairs per width. The corollary's cut-off "
              "sqrt(n) ln n is architecture-free by its choice; the constant eps grows with L. Observation (not "
              "decided): at n <= 16 the exact tail above sqrt(n) ln n falls with n at every L but so does a random "
              "function's (the cut-off lies above n/2 there), so the exhaustive sizes cannot test the corollary; "
              "the tail above sqrt(n) (the figure's 1/nu) grows with depth (ratio by L in exact_tails), as the "
              "corollary allows (its eps grows with L). Weight above degree k cannot be estimated by Monte Carlo "
              "beyond n ~ 20 (variance ~ C(n, k)): the bridge bound is what the corollary itself uses.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 5. Training lowers noise sensitivity (Figure 3)
# ---------------------------------------------------------------------------------------------------

FIT_ACC = {"digits2": 0.9, "digits10": 0.8, "parity": 0.95}


def _training_evidence(r: ledger.Reads, kind: str) -> ledger.Evidence:
    """The paired before/after decisions of one model kind (``"slif"`` or ``"lif"``): every digits case, both
    NS measures, decided on the Student-t interval of the per-seed drop; the parity case of the same kind is
    the control (it must rise)."""
    a, meta = r["lif_snn_training"]
    cfg = meta["config"]
    nus = a["nus"]
    dims = dict(zip(("digits2", "digits10", "parity"), a["input_dims"].tolist()))
    decisions, controls, rows, unfit = [], [], {}, []
    for j, case in enumerate(str(c) for c in a["cases"]):
        task, k = case.rsplit("_", 1)
        if k != kind:
            continue
        v = int(np.argmin(np.abs(nus - 1 / math.sqrt(dims[task]))))
        acc = float(np.mean(a["test_acc"][:, j]))
        fitted = acc >= FIT_ACC[task]
        if not fitted and task != "parity":
            unfit.append(f"{case} (test accuracy {acc:.3f} < {FIT_ACC[task]})")
        row = {"nu": float(nus[v]), "test_acc": acc}
        for measure, key in (("uniform", "ns"), ("data", "data_ns")):
            before, after = a[f"{key}_before"][:, j, v], a[f"{key}_after"][:, j, v]
            d = ledger.paired(f"{case}, x {measure}: NS drop before - after > 0", before - after, 0.0, "above")
            row[measure] = {"before": float(before.mean()), "after": float(after.mean()), "drop": d.statistic,
                            "margin_se": d.margin_se, "decision": d.decision}
            if task == "parity":
                if not fitted:  # a network that did not learn the parity tests the optimiser: not a control
                    d = ledger.Decision(d.name, "inconclusive", d.statistic, d.threshold, d.margin_se, d.critical,
                                        f"not fitted (test accuracy {acc:.3f} < {FIT_ACC[task]}): the control is "
                                        "untested; " + d.test)
                controls.append(ledger.Control(
                    f"{kind} trained on the {cfg['parity_bits']}-bit parity of {dims[task]} bits (a high-degree "
                    f"target; test accuracy {acc:.3f}), NS with x {measure}, same 'drop > 0' test", d))
            else:
                decisions.append(d)
        rows[case] = row
    # A network that did not fit its task tests the optimiser, not the claim: nothing is testable then.
    return ledger.Evidence(
        measured={**rows, "not fitted": unfit,
                  "parity control not fitted": [c for c, v in rows.items() if c.startswith("parity")
                                                and v["test_acc"] < FIT_ACC["parity"]]},
        predicted={"digits": "NS before - after > 0 (95% Student-t over seeds)",
                   "parity control": "NS rises (drop < 0): rejected",
                   "parity NS of the target": dict(zip(nus.round(4).tolist(), a["parity_ns_exact"].round(4).tolist()))},
        tolerance="per-seed paired drop NS_before - NS_after at nu = 1/sqrt(n) (0.125 for the 64-bit digits, 0.25 for "
                  "the 16-bit parity), the same network and the same input pairs before and after training, decided "
                  "on its 95% Student-t interval over seeds (statsmodels): holds above 0, fails below; every digits "
                  "case must hold for both measures, the parity control must fail; a mean test accuracy below "
                  f"{FIT_ACC} leaves nothing decided (inconclusive)",
        decisions=[] if unfit else decisions,
        notes=f"{meta.get('config_path')} at {r.scale} scale: {cfg['n_seeds']} seeds (one network each), depth "
              f"{cfg['depth']}, hidden {cfg['hidden']}, T = {cfg['T']}, theta = {cfg['theta']}, beta = {cfg['beta']}, "
              f"Adam lr {cfg['lr']}, {cfg['steps']} steps, {cfg['ns_pairs']} pairs per NS. Over the whole nu grid "
              "the drop holds at small nu; at nu >= 0.25 on 64 bits (16+ flipped bits) trained networks can be more "
              "sensitive than random ones (see the figure).",
        controls=controls)


@ledger.claim("lif_snn.training_lowers_sensitivity",
              source="Araya et al. Figure 3 (trained SNNs; sLIF curves)",
              statement="sIF classifiers trained with a surrogate gradient on the bundled 8x8 digits (binarised, 3 vs "
                        "8 and all ten) have lower noise sensitivity at nu = 1/sqrt(n) than the same networks at "
                        "initialisation, both with x uniform (the definition) and on held-out digits; training on a "
                        "sparse parity (which it fits) raises it.",
              expected={"quick": "holds", "paper": "holds"},
              why="paired design: each seed's network is measured before and after training on the same input "
                  "pairs, and the per-seed drops are decided on their Student-t interval. With 4 seeds two cells "
                  "were undecided; with 32 seeds every sIF drop is decided: 3 vs 8 with x uniform 0.290 -> 0.223 (5.5 SE), on "
                  "held-out digits 0.275 -> 0.062; ten classes 0.664 -> 0.498 and 0.660 -> 0.317 (numbers when this "
                  "was written). The parity control rises 0.321 -> 0.427 (towards the 3-bit parity's 0.4375 at nu = "
                  "1/4; 6 SE), rejected. Replicated at seed offset 1 (every sIF drop decided, 5.9-12.5 SE; parity "
                  "rises, 4.5 SE). Paper scale not measured.",
              reads=("lif_snn_training",))
def _check_training(r: ledger.Reads) -> ledger.Evidence:
    return _training_evidence(r, "slif")


@ledger.claim("lif_snn.training_lowers_sensitivity_if",
              source="Araya et al. Figure 3 (trained SNNs; IF curves: 'sLIF and IF behave similarly')",
              statement="IF classifiers (Heaviside spikes, {0,1} input) trained with a surrogate gradient on the "
                        "bundled 8x8 digits have lower noise sensitivity at nu = 1/sqrt(n) than at initialisation, "
                        "with x uniform and on held-out digits; training on a sparse parity raises it.",
              expected={"quick": "fails", "paper": "fails"},
why="quick scale, 32 seeds, paired (numbers when this was written): on held-out digits IF NS drops (3 vs 8: "
                  "0.172 -> 0.095, 2.9 SE; ten classes 0.472 -> 0.324, 4.6 SE), but with x uniform on {-1,1}^64 (the "
                  "definition) it rises on 3 vs 8 (0.151 -> 0.224, the drop -0.073 is 3.3 SE below 0; decided) and "
                  "does not drop on ten classes (0.460 -> 0.517, -1.7 SE): the paper's 'IF behaves like sLIF' is "
                  "not what we measure for the noise sensitivity as defined, hence 'fails'. The IF parity control "
                  "is untested: IF networks do not fit the 3-bit parity in 300 steps (test accuracy 0.52; they "
                  "collapse to a near-constant output, NS 0.21 -> 0.03). Replication (seed offset 1, 32 fresh seeds): "
                  "the x-uniform drops are -0.010 (3 vs 8) and -0.005 (ten classes), both undecided, and on held-out "
                  "digits 3 vs 8 +0.028 (undecided), ten classes +0.176 (decided): the verdict there is "
                  "'inconclusive', not 'fails'. What replicates is that IF shows no decided drop of the noise "
                  "sensitivity as defined (x uniform) in either seed set, while sIF drops in both. Paper scale not "
                  "measured.",
              reads=("lif_snn_training",))
def _check_training_if(r: ledger.Reads) -> ledger.Evidence:
    return _training_evidence(r, "lif")
