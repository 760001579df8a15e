"""Claims of Araya, Datres, Kutyniok, *Random Spiking Neural Networks are Stable and Spectrally Simple* (ICLR
2026, arXiv 2511.00904), checked with ``theory.lif_snn``, ``theory.boolean`` and the ``sims.lif_snn`` results.
Brief: ``shared/papers/lif_snn.md`` (its errata override its body and the issue's wording).

Each claim returns :class:`claims.ledger.Evidence` with its controls (cases just outside the hypothesis the
same check must reject). Claims about a figure read it through :func:`claims.ledger.figure_result`.
Seed-paired comparisons of trained networks use the Student-t rule of :func:`claims.seesaw.paired_decision`
(shared, not copied; it belongs in ``theory/numerics.py``).
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy import stats

from claims import ledger
from sims import lif_snn as sim
from sims import runtime
from theory import boolean
from theory import lif_snn as th
from theory.numerics import float64, paired_decision

THETA = 0.5
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


# ---------------------------------------------------------------------------------------------------
# 1. The single neuron at t = 1, exactly
# ---------------------------------------------------------------------------------------------------


def full_vector_mc(n: int, *, nu=None, d=None, theta=THETA, seeds=64, per_seed=4096, seed=0):
    """Monte-Carlo t = 1 flip probability of one sLIF neuron simulated with full vectors (``w``, ``x``, the
    flips), seeds sharded over all devices. Returns ``(mean, standard error)``."""
    with float64():
        mean, se = runtime.mean_over_seeds(
            lambda k: sim.full_vector_flip_rate(k, n, theta=theta, m=per_seed, nu=nu, d=d), seed, seeds)
    return float(mean), float(se)


def neuron_tables_mc(n: int, theta: float, networks: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Level weights of ``networks`` random neurons ``sign(w.x - theta)`` by full Walsh–Hadamard
    transforms: ``(mean [n + 1], standard error [n + 1])`` over the neurons."""
    pts = boolean.cube(n).astype(np.float64)
    with float64():
        w = np.asarray(jax.random.normal(jax.random.key(seed), (networks, n))) / math.sqrt(n)
    tables = np.where(w @ pts.T > theta, 1.0, -1.0)
    lw = boolean.level_weights(tables)
    return lw.mean(axis=0), lw.std(axis=0, ddof=1) / math.sqrt(networks)


def _level_z(mean, se, exact) -> float:
    """Largest |z| over levels; a level with zero spread (exactly zero in every network) must match
    exactly."""
    mean, se, exact = map(np.asarray, (mean, se, exact))
    zero = se == 0
    if np.any(np.abs(mean[zero] - exact[zero]) > 1e-12):
        return float("inf")
    return float(np.max(np.abs(mean[~zero] - exact[~zero]) / se[~zero])) if np.any(~zero) else 0.0


@ledger.claim("lif_snn.single_neuron_exact",
              source="Araya et al. Theorem 1, base case t = 1 (static input); brief §3-4 and errata",
              statement="At Hamming distance d the t = 1 flip probability of one random sLIF neuron is exactly "
                        "2[Q(theta) - P(X > theta, Y > theta; rho = 1 - 2d/n)] = 4 T(theta, sqrt(d/(n-d))) "
                        "(arccos(rho)/pi at theta = 0); under per-bit flips with probability nu it is the "
                        "Bin(n, nu) mixture of these (the plug-in rho = 1 - 2 nu is only its large-n limit); "
                        "its expected level weights follow by Krawtchouk inversion.")
def _check_single_neuron_exact() -> ledger.Evidence:
    n = 100
    # (a) theta = 0: Sheppard's formula, an identity.
    d_all = np.arange(n + 1)
    sheppard = float(np.max(np.abs(th.flip_probability_at_distance(n, d_all, 0.0)
                                   - np.arccos(1 - 2 * d_all / n) / np.pi)))
    # (b) fixed distance against full-vector Monte Carlo.
    fixed = {}
    for d in (1, 10, 30):
        exact = th.flip_probability_at_distance(n, d, THETA)
        mean, se = full_vector_mc(n, d=d, seeds=32, per_seed=2048, seed=d)
        fixed[f"d={d}"] = {"exact": exact, "mc": mean, "se": se, "z": (mean - exact) / se}
    # (c) per-bit flips: the Bin(n, nu) mixture, and the plug-in as its limit (at n = 30 the plug-in is 5%
    # off, which the Monte Carlo resolves sharply; at n = 100 it is 1.1% off, reported).
    nu = 0.1
    mixture = {}
    for nn, s_ in ((100, 101), (30, 102)):
        exact = th.single_neuron_flip_probability(nn, THETA, nu)
        mean, se = full_vector_mc(nn, nu=nu, seeds=128, per_seed=4096, seed=s_)
        mixture[f"n={nn}"] = {"exact": exact, "mc": mean, "se": se, "z": (mean - exact) / se}
    plug = th.plugin_flip_probability(THETA, nu)
    typo = th.plugin_flip_probability(THETA, nu / 2)  # rho = 1 - nu, the note's typo (= the plug-in at nu/2)
    m30, m100 = mixture["n=30"], mixture["n=100"]
    z_plug30, z_plug100 = (m30["mc"] - plug) / m30["se"], (m100["mc"] - plug) / m100["se"]
    z_typo = (m100["mc"] - typo) / m100["se"]
    # (d) Krawtchouk expected level weights against transforms averaged over random neurons.
    kraw, kraw_ctl = {}, {}
    for nn, theta in ((10, 0.0), (10, THETA), (12, THETA)):
        exact_w = th.expected_level_weights(nn, theta)
        mean, se = neuron_tables_mc(nn, theta, 2000, seed=nn + int(10 * theta))
        kraw[f"n={nn},theta={theta}"] = {"max_abs_z": _level_z(mean, se, exact_w),
                                         "exact": np.round(exact_w, 4).tolist(), "mc": np.round(mean, 4).tolist()}
        kraw_ctl[f"n={nn},theta={theta}"] = _level_z(mean, se, boolean.random_function_level_weights(nn))
    ok = (sheppard < 1e-12 and all(abs(v["z"]) <= Z_MC for v in list(fixed.values()) + list(mixture.values()))
          and all(v["max_abs_z"] <= Z_MANY for v in kraw.values()))
    controls = [
        ledger.Control("plug-in rho = 1 - 2 nu at n = 30, nu = 0.1 (the large-n limit, not the finite-n law), "
                       "same |z| <= 3 test against the Monte Carlo", {"plugin": plug, "z": z_plug30},
                       abs(z_plug30) > Z_MC),
        ledger.Control("rho = 1 - nu (the note's typo for the correlation), same |z| <= 3 test",
                       {"value": typo, "z": z_typo}, abs(z_typo) > Z_MC),
        ledger.Control("a uniformly random function's E W^k = C(n,k)/2^n in place of the Krawtchouk weights, "
                       "same max |z| <= 4 test against the averaged transforms",
                       kraw_ctl, all(v > Z_MANY for v in kraw_ctl.values())),
    ]
    return ledger.Evidence(
        measured={"theta0_vs_sheppard_max_abs_diff": sheppard, "fixed_distance_n100": fixed,
                  "mixture_nu0.1": mixture, "plugin_z_at_n100": z_plug100, "krawtchouk_vs_wht": kraw},
        predicted={"theta0": "arccos(rho)/pi exactly", "mixture": "exact Bin(n, nu) mixture", "plugin_limit": plug,
                   "plugin_relative_to_mixture": {k: plug / v["exact"] - 1 for k, v in mixture.items()}},
        tolerance="theta = 0 identity to 1e-12; each Monte Carlo within 3 SE; Krawtchouk levels within 4 SE "
                  "(max over levels) of 2000 averaged transforms; the controls must fail the same tests",
        verdict=ledger.verdict(ok, controls),
        stderr={k: v["se"] for k, v in mixture.items()},
        notes=f"theta = {THETA}; full-vector Monte Carlo (w ~ N(0, I/n), x uniform, flips), seeds sharded. "
              f"The plug-in is {100 * (plug / m100['exact'] - 1):+.2f}% off the exact mixture at n = 100, nu = 0.1 "
              f"(z = {z_plug100:.1f} against {128 * 4096} simulated pairs, too few to resolve 1% reliably) and "
              f"{100 * (plug / m30['exact'] - 1):+.1f}% at n = 30: a large-n limit, not the law at finite n. "
              "Krawtchouk sums run in python-flint ball arithmetic (float64 loses ~n bits).",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 2. Theorem 1's scalings (Figure 1)
# ---------------------------------------------------------------------------------------------------

EXPONENT_TOL = 0.02
SQRT_TOL = 0.05


@ledger.claim("lif_snn.theorem1_scaling",
              source="Araya et al. Theorem 1 (beta = 1, static input) and Figure 1; brief errata",
              statement="At nu = 1/sqrt(n) the expected noise sensitivity of one random sIF neuron falls like "
                        "n^(-1/4) (fitted over n = 10^2..10^4 at t = 1, 2), grows like sqrt(nu) at fixed n, and "
                        "grows only mildly (sub-quadratically) with t = 1..10.")
def _check_theorem1_scaling(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("lif_snn_single_neuron", scale)
    widths, exact = a["widths"], a["slif_exact"]
    theta = float(meta["config"]["theta"])
    slopes = {f"t={t}": _fit(widths, exact[:, t - 1])[0] for t in range(1, exact.shape[1] + 1)}
    mc_slopes = {f"t={t}": _fit(widths, a["slif_mc_mean"][:, t - 1], a["slif_mc_se"][:, t - 1])
                 for t in (1, 2)}
    z = (a["slif_mc_mean"] - exact) / a["slif_mc_se"]
    # sqrt(nu) at fixed n = 10^4, in the regime n nu >= 10 (exact mixture).
    nus = np.array([0.001, 0.002, 0.005, 0.01, 0.02])
    sqrt_slope = _fit(nus, [th.single_neuron_flip_probability(10_000, theta, v) for v in nus])[0]
    # Growth in t: exact ratios P_t / P_1 in the figure, and the small-noise constants c_t = lim P_t / sqrt(nu).
    ratio = exact[:, -1] / exact[:, 0]
    c = a["small_noise_constants"]
    t = np.arange(1, c.size + 1)
    quad = c / (c[0] * t**2)
    ok = (all(abs(slopes[f"t={k}"] + 0.25) <= EXPONENT_TOL for k in (1, 2))
          and float(np.max(np.abs(z))) <= Z_MANY and abs(sqrt_slope - 0.5) <= SQRT_TOL
          and bool(np.all(quad[1:] < 1)))
    # Controls: the same fits outside the hypotheses.
    fixed = np.array([th.single_neuron_flip_probability(int(n), theta, 0.01) for n in widths])
    fixed_slope = _fit(widths, fixed)[0]
    lin_nus = np.array([1e-4, 2e-4, 5e-4, 1e-3])
    lin_slope = _fit(lin_nus, [th.single_neuron_flip_probability(100, theta, v) for v in lin_nus])[0]
    controls = [
        ledger.Control("nu = 0.01 fixed instead of 1/sqrt(n) (t = 1, exact), same |exponent + 1/4| <= 0.02 test",
                       {"exponent": fixed_slope}, abs(fixed_slope + 0.25) > EXPONENT_TOL),
        ledger.Control("n = 100 with n nu < 1 (at most one flipped bit, P ~ n nu P(d=1): linear in nu), same "
                       "|exponent - 1/2| <= 0.05 test", {"exponent": lin_slope}, abs(lin_slope - 0.5) > SQRT_TOL),
    ]
    return ledger.Evidence(
        measured={"exponent_exact": slopes, "exponent_mc_t1_t2": {k: {"slope": v[0], "se": v[1]}
                                                                  for k, v in mc_slopes.items()},
                  "mc_vs_exact_max_abs_z": float(np.max(np.abs(z))), "sqrt_nu_exponent_n1e4": sqrt_slope,
                  "P10_over_P1": dict(zip([int(n) for n in widths], ratio.tolist())),
                  "small_noise_constants": c.tolist(), "c_t_over_c1_t2": quad.tolist()},
        predicted={"exponent (t = 1, 2)": -0.25, "sqrt_nu_exponent": 0.5,
                   "growth in t": "below C t^2 sqrt(nu) (C unknown): c_t / (c_1 t^2) < 1 for t >= 2"},
        tolerance=f"|exponent + 1/4| <= {EXPONENT_TOL} (exact values, t = 1, 2); Monte Carlo within {Z_MANY} SE of "
                  f"the exact curves (max over all n, t); |sqrt(nu) exponent - 1/2| <= {SQRT_TOL}; the controls "
                  "must fail the same tests",
        verdict=ledger.verdict(ok, controls),
        stderr={"mc_exponent_t1": mc_slopes["t=1"][1]},
        notes=f"{meta.get('config_path')} at {scale} scale, theta = {theta}, beta = 1, "
              f"{int(a['mc_pairs'])} Monte-Carlo pairs per point. The fitted exponent is -1/4 only for t = 1, 2; "
              "for t >= 3 it is -0.18 to -0.20 over n = 10^2..10^4: pre-asymptotic, since as nu -> 0 at fixed t, "
              "P_t / sqrt(nu) -> c_t, which grows about linearly in t (new switch points theta k/t); 'far below "
              "C t^2 sqrt(nu)' cannot be tested (C unknown): what is measured is c_t / (c_1 t^2) <= "
              f"{quad[1:].max():.2f} for t >= 2 and P_10/P_1 <= {ratio.max():.2f} over the figure's n.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 3. Theorem 2: width and depth (Figure 2)
# ---------------------------------------------------------------------------------------------------

Z_WIDTH = 2.0  # one-sided: the fitted width exponent must lie 2 SE below 0


def _t_crit(df: int, level: float = 0.95) -> float:
    return float(stats.t.ppf(level, df))


@ledger.claim("lif_snn.theorem2_depth_width",
              source="Araya et al. Theorem 2 (beta = 1, static input) and Figure 2; brief errata",
              statement="For random L-layer binary sIF classifiers the expected noise sensitivity at nu = 1/sqrt(n) "
                        "falls with the width n at fixed L and rises with the depth L at fixed n.")
def _check_theorem2_depth_width(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("lif_snn_depth", scale)
    widths, depths = a["widths"], a["depths"]
    t_idx = min(5, a["steps"].size) - 1
    per = a["slif_per_network"][..., t_idx]  # [W, N, D]
    ens, se = per.mean(axis=1), per.std(axis=1, ddof=1) / math.sqrt(per.shape[1])
    width = {}
    for j, L in enumerate(depths.tolist()):
        s, s_se = _fit(widths, ens[:, j], se[:, j])
        width[f"L={L}"] = {"exponent": s, "se": s_se, "z": s / s_se, "bound_exponent": float(a["bound_width_exponent"][j])}
    falls = all(v["z"] < -Z_WIDTH for v in width.values())
    depth, rises = {}, True
    n_net = per.shape[1]
    tc = _t_crit(n_net - 1, 0.975)
    for i, n in enumerate(widths.tolist()):
        diff = per[i, :, -1] - per[i, :, 0]  # same networks: depth max vs 1 (common random numbers)
        m, s_ = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(n_net))
        steps = per[i, :, 1:] - per[i, :, :-1]
        step_hi = steps.mean(0) + tc * steps.std(0, ddof=1) / math.sqrt(n_net)
        depth[f"n={n}"] = {"ens_by_L": ens[i].round(4).tolist(), "Lmax_minus_L1": m, "ci": [m - tc * s_, m + tc * s_],
                           "steps_significantly_down": int(np.sum(step_hi < 0))}
        rises &= (m - tc * s_ > 0) and not np.any(step_hi < 0)
    # Control: a uniformly random function at nu = 1/sqrt(n) (its ENS rises to 1/2 with n), same width test
    # with the measured standard errors of L = 1.
    rand = np.array([boolean.random_function_noise_sensitivity(int(n), 1 / math.sqrt(n)) for n in widths])
    rs, rs_se = _fit(widths, rand, se[:, 0] * rand / ens[:, 0])
    controls = [ledger.Control("a uniformly random function (no simplicity bias), same 'exponent 2 SE below 0' "
                               "width test", {"exponent": rs, "z": rs / rs_se}, not rs / rs_se < -Z_WIDTH)]
    lif = a["lif_ens"][..., t_idx] if "lif_ens" in a else None
    t_effect = {f"n={n}": {"T=1->T=max (L=1)": float(a["slif_ens"][i, 0, -1] - a["slif_ens"][i, 0, 0]),
                           "L=1->L=max (T=1)": float(a["slif_ens"][i, -1, 0] - a["slif_ens"][i, 0, 0])}
                for i, n in enumerate(widths.tolist())}
    return ledger.Evidence(
        measured={"width_exponent": width, "depth": depth, "T_vs_depth_effect": t_effect,
                  **({"IF_ens_by_width_and_L (not decided)": lif.round(4).tolist()} if lif is not None else {})},
        predicted={"width_exponent": "< 0 at every L (bound: n^(-1/2^(2L+2)) up to polylog)",
                   "depth": "ENS(L_max) > ENS(1) at every n, no step down"},
        tolerance=f"width: weighted log-log slope over n at least {Z_WIDTH} SE below 0 for every L; depth: 95% "
                  f"Student-t interval of the per-network paired difference ENS(L_max) - ENS(1) above 0 at every n "
                  "and no step L -> L + 1 significantly negative; the control must fail the width test",
        verdict=ledger.verdict(falls and rises, controls),
        stderr={f"n={n}": se[i].round(4).tolist() for i, n in enumerate(widths.tolist())},
        notes=f"{meta.get('config_path')} at {scale} scale: T = {t_idx + 1}, {n_net} networks x "
              f"{meta['config']['pairs']} pairs per width; each depth's classifier shares the hidden layers of the "
              "same network (paired). The measured width exponents are far steeper than the bound's "
              "-1/2^(2L+2) (-0.0625, -0.0156, -0.0039, ... for L = 1, 2, 3): the bound is consistent but loose. "
              "IF (Heaviside) classifiers are reported, not decided: the theory covers sign spikes only. "
              "At n <= 16 (exhaustive) the width trend is invisible for L >= 2 (brief errata); it shows from n = 64.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 4. Spectral simplicity (the spectrum figure; the depth figure beyond n = 16)
# ---------------------------------------------------------------------------------------------------

FAR_BELOW = 0.5  # "far below": the SNN tail at most half the random function's


def _three_way(mean: float, se: float, bound: float) -> str:
    """``mean <= bound`` decided at 3 SE: "holds" if ``mean + 3 se <= bound``, "fails" if
    ``mean - 3 se > bound``, else "inconclusive"."""
    return "holds" if mean + Z_MC * se <= bound else "fails" if mean - Z_MC * se > bound else "inconclusive"


CUTOFFS = {"corollary sqrt(n) ln(n)": lambda n: math.sqrt(n) * math.log(n), "1/nu = sqrt(n)": math.sqrt}


@ledger.claim("lif_snn.spectral_simplicity",
              source="Araya et al. Corollary 1 (with O'Donnell Prop. 3.3, the bridge W^{>=1/nu} <= 2.313 NS_nu); "
                     "brief errata",
              statement="The expected Fourier weight of random binary sLIF classifiers above an architecture-free "
                        "cut-off degree (Corollary 1's sqrt(n) ln(n), and 1/nu = sqrt(n)) is far below (at most half) "
                        "a uniformly random function's at every depth: exactly (full transforms) at n <= 16; beyond, "
                        "only the bridge bound 2.313 ENS_nu is available.",
              expected={"quick": "inconclusive", "paper": "fails"},
              why="at the corollary's cut-off sqrt(n) ln(n) the sLIF tail is 0.11-0.30 of a random function's at "
                  "every n <= 16 and depth <= 3 (holds), but at 1/nu = sqrt(n) the ratio grows with depth, 0.25, 0.39, "
                  "0.49 +- 0.01 at n = 16 for L = 1, 2, 3 (when this was written): L = 3 is not resolvably below one "
                  "half at 60 networks, so the quick verdict is inconclusive. The paper scale adds L = 4, 5 and "
                  "n = 20, where the trend puts the sqrt(n) tail above half the random function's: expected to fail "
                  "there (not measured yet). Beyond n = 16 the bridge bound 2.313 (ENS + 3 SE) is 0.37-0.85 against "
                  "the random function's ~1: too weak to decide (reported only).")
def _check_spectral_simplicity(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("lif_snn_spectrum", scale)
    exact, ctl, moves, own, ctl_dec, bridge_ok = {}, {}, {}, [], [], True
    for n in a["widths"].tolist():
        w, r = a[f"n{n}_weights"], a[f"n{n}_random_weights"]
        for name, cut in CUTOFFS.items():
            k = cut(n)
            tail = boolean.tail_weight(w, k)  # [N, D]
            rand_exp = boolean.tail_weight(a[f"n{n}_random_expected"], k)
            m, s = tail.mean(0), tail.std(0, ddof=1) / math.sqrt(tail.shape[0])
            dec = [_three_way(float(mi), float(si), FAR_BELOW * rand_exp) for mi, si in zip(m, s)]
            own += dec
            rand_tail = boolean.tail_weight(r, k)
            rm, rse = float(rand_tail.mean()), float(rand_tail.std(ddof=1) / math.sqrt(rand_tail.size))
            ctl_dec.append(_three_way(rm, rse, FAR_BELOW * rand_exp))
            exact[f"n={n}, {name} (k >= {math.ceil(k)})"] = {
                "E_W>=k by L": m.round(4).tolist(), "se": s.round(4).tolist(), "random_function": rand_exp,
                "ratio by L": (m / rand_exp).round(3).tolist(), "decision by L": dec}
            ctl[f"n={n}, {name}"] = {"sampled_random_tail": rm, "se": rse, "decision": ctl_dec[-1]}
        # The bridge holds function by function (a sanity check of the transform).
        bridge_ok &= bool(np.all(boolean.tail_weight(w, math.sqrt(n)) <= boolean.BRIDGE_CONSTANT * a[f"n{n}_ns"]
                                 + 1e-12))
        moves[f"n={n}"] = {"ENS by L": a[f"n{n}_ns"].mean(0).round(4).tolist(),
                           "E_W<=2 by L": w[..., :3].sum(-1).mean(0).round(3).tolist(),
                           "E_W>=n/2 by L": w[..., n // 2:].sum(-1).mean(0).round(3).tolist()}
    controls = [ledger.Control("uniformly random functions (sampled, as many as networks), same three-way "
                               f"'tail <= {FAR_BELOW} x random' test at both cut-offs", ctl,
                               all(d == "fails" for d in ctl_dec))]
    # Beyond exhaustive sizes: only the bridge bound on E W^{>= sqrt n}, from the depth figure's ENS.
    beyond = {}
    try:
        d, _ = ledger.figure_result("lif_snn_depth", scale)
        t_idx = min(int(meta["config"]["T"]), d["steps"].size) - 1
        for i, n in enumerate(d["widths"].tolist()):
            bound = boolean.BRIDGE_CONSTANT * (d["slif_ens"][i, :, t_idx] + Z_MC * d["slif_se"][i, :, t_idx])
            rand = float(stats.binom.sf(math.ceil(math.sqrt(n)) - 1, n, 0.5))
            beyond[f"n={n}"] = {"bound_by_L": bound.round(3).tolist(), "random_function": rand}
    except ledger.NotMeasured as e:
        beyond = {"not measured": str(e)}
    verdict = ledger.combine(own, ctl_dec) if bridge_ok else "fails"
    return ledger.Evidence(
        measured={"exact": exact, "spectrum_by_depth": moves, "bridge_holds_per_network": bridge_ok,
                  "beyond_exhaustive_bridge_bound (reported)": beyond},
        predicted={"E_W>=k": f"<= {FAR_BELOW} x the random function's (sum of C(n,j)/2^n over j >= k)"},
        tolerance=f"per n, depth and cut-off: mean tail + 3 SE <= {FAR_BELOW} x the random function's holds, "
                  "mean - 3 SE above it fails, else inconclusive; the control (sampled random functions) must fail "
                  "the same test; W^{>=sqrt n} <= 2.313 NS must hold for every network",
        verdict=verdict,
        notes=f"{meta.get('config_path')} at {scale} scale: T = {meta['config']['T']}, 2 outputs, ties to class 0, "
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
              source="Araya et al. Figure 3 (trained SNNs); brief pitfall 8 and errata",
              statement="sIF and IF classifiers trained with a surrogate gradient on the bundled 8x8 digits "
                        "(binarised, 3 vs 8 and all ten) have lower noise sensitivity at nu = 1/sqrt(n) than at "
                        "initialisation, both with x uniform (the definition) and on held-out digits; training on a "
                        "sparse parity (which it fits) raises it.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="at quick scale (4 seeds, Student-t 95% intervals with 3 degrees of freedom) sIF drops clearly on "
                  "held-out digits (3 vs 8: 0.178 -> 0.071; ten classes 0.623 -> 0.326) and with x uniform on ten "
                  "classes (0.628 -> 0.503); with x uniform on 3 vs 8 it drops 0.276 -> 0.220, interval "
                  "[-0.03, 0.14], undecided at 4 seeds. The IF networks' uniform-x NS does not move (3 vs 8: 0.233 -> 0.220; "
                  "ten classes 0.522 -> 0.553, drop -0.03, interval [-0.22, 0.15]) and IF 3 vs 8 on held-out digits "
                  "varies too much between seeds (0.274 -> 0.100, interval [-0.16, 0.51]) (numbers when this was "
                  "written). The parity control is rejected (0.293 -> 0.429 at nu = 1/4, as the 3-bit parity's "
                  "0.4375). With the IF uniform-x drop near 0, 16 seeds at paper scale are not expected to decide it "
                  "either.")
def _check_training(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("lif_snn_training", scale)
    cfg = meta["config"]
    nus = a["nus"]
    dims = dict(zip(("digits2", "digits10", "parity"), a["input_dims"].tolist()))
    own, ctl_dec, controls, rows, fitted = [], [], [], {}, True
    for task in cfg["tasks"]:
        kinds = cfg["parity_kinds"] if task == "parity" else cfg["kinds"]
        v = int(np.argmin(np.abs(nus - 1 / math.sqrt(dims[task]))))
        for kind in kinds:
            pre = f"{task}_{kind}"
            acc = float(np.mean(a[f"{pre}_test_acc"]))
            fitted &= acc >= FIT_ACC[task]
            row = {"nu": float(nus[v]), "test_acc": acc}
            for measure, key in (("uniform", "ns"), ("data", "data_ns")):
                before, after = a[f"{pre}_{key}_before"][:, v], a[f"{pre}_{key}_after"][:, v]
                d = paired_decision(before - after, 0.0, "above")
                row[measure] = {"before": float(before.mean()), "after": float(after.mean()),
                                "drop": d["mean"], "ci": [d["ci"][0], d["ci"][1]], "decision": d["verdict"]}
                if task == "parity":
                    ctl_dec.append(d["verdict"])
                    controls.append(ledger.Control(
                        f"{kind} trained on the {cfg['parity_bits']}-bit parity of {dims[task]} bits (a high-degree "
                        f"target; test accuracy {acc:.3f}), NS with x {measure}, same 'drop > 0' test",
                        row[measure], d["verdict"] == "fails"))
                else:
                    own.append(d["verdict"])
            rows[pre] = row
    verdict = ledger.combine(own, ctl_dec) if fitted else "inconclusive"
    return ledger.Evidence(
        measured=rows,
        predicted={"digits": "NS before - after > 0 (95% Student-t over seeds)",
                   "parity control": "NS rises (drop < 0): rejected",
                   "parity NS of the target": dict(zip(nus.round(4).tolist(), a["parity_ns_exact"].round(4).tolist()))},
        tolerance="per-seed paired drop NS_before - NS_after at nu = 1/sqrt(n) (0.125 for the 64-bit digits, 0.25 for "
                  "the 16-bit parity) decided on its 95% Student-t interval: holds above 0, fails below; every "
                  f"digits case must hold for both measures, the parity control must fail; test accuracy >= "
                  f"{FIT_ACC} (else inconclusive)",
        verdict=verdict,
        notes=f"{meta.get('config_path')} at {scale} scale: {cfg['n_seeds']} seeds, depth {cfg['depth']}, hidden "
              f"{cfg['hidden']}, T = {cfg['T']}, theta = {cfg['theta']}, beta = {cfg['beta']}, Adam lr {cfg['lr']}, "
              f"{cfg['steps']} steps, {cfg['ns_pairs']} pairs per NS; the same pairs before and after. Over the whole "
              "nu grid the drop holds at small nu; at nu >= 0.25 on 64 bits (16+ flipped bits) trained networks can "
              "be more sensitive than random ones (see the figure).",
        controls=controls)
