"""Claims of Seesaw (Meterez et al., ICLR 2026, arXiv 2510.14717), checked with ``theory.seesaw``.

Each claim is registered with :func:`claims.ledger.claim` and returns :class:`claims.ledger.Evidence`
carrying its controls: cases just outside the claim's hypothesis (an off-line member of an equivalence
family, the allowed boundary of a stability condition, the variance-dominated side of a mean-dominated
effect) that the same check runs on and must reject; a claim holds only when its own cases pass and every
control is rejected. Claims on seeded language-model runs decide on per-seed paired differences with
Student-t intervals (:func:`paired_decision`), and say "inconclusive" when the interval cannot decide.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from claims import ledger
from sims import runtime
from theory.numerics import paired_decision
from theory.seesaw import (
    MEAN_DOMINATED_B0,
    NSGD_LINE,
    REF,
    SQRT2,
    discrete_serial_step_reduction,
    expected_risk,
    final_risk_ratio,
    member_name,
    noise_scale,
    paper_step_counts,
    phase_schedule,
    power_law_eigs,
    seesaw_vs_step_by_batch,
    serial_step_reduction_limit,
    sgd_risk_path,
)

# ---------------------------------------------------------------------------------------------------
# Decision rules shared by the claims (pure functions; candidates for theory/numerics.py)
# ---------------------------------------------------------------------------------------------------


def spread(values) -> float:
    """``max / min - 1`` of positive final risks (or risk ratios): how far apart a family ends.

    Source: the equivalence claims (Seesaw Theorem 1, Corollary 1) compare members by this number."""
    v = np.asarray(list(values), np.float64)
    if v.size == 0 or np.any(~np.isfinite(v)) or np.any(v <= 0):
        return float("inf")
    return float(v.max() / v.min() - 1)


def _decision_summary(d: dict) -> dict:
    """The numbers of a :func:`paired_decision` worth printing."""
    return {"mean": d["mean"], "ci": [d["ci"][0], d["ci"][1]], "n_seeds": d["n"], "t": d["t"],
            "decision": d["verdict"]}


# ---------------------------------------------------------------------------------------------------
# Equivalence in the exact recursion (Theorem 1, Corollary 1)
# ---------------------------------------------------------------------------------------------------

SGD_LINE = [(2.0, 1.0), (SQRT2, SQRT2), (1.0, 2.0)]
SGD_TOL = 0.05
# Off-line SGD members (alpha*beta != 2), each with what makes it off-line.
SGD_OFF_LINE = {(2.0, 2.0): "alpha*beta = 4 (too much decay)",
                (SQRT2, 1.0): "alpha*beta = sqrt2 (too little decay)",
                (SQRT2, 2.0): "alpha*beta = 2*sqrt2: Seesaw, on NSGD's alpha*sqrt(beta) = 2 line, not SGD's"}
NSGD_TOL = 0.02
# Off-line NSGD members (alpha*sqrt(beta) != 2).
NSGD_OFF_LINE = {(1.0, 2.0): "alpha*sqrt(beta) = sqrt2: on SGD's alpha*beta = 2 line, not NSGD's",
                 (2.0, 2.0): "alpha*sqrt(beta) = 2*sqrt2 (too much decay)",
                 (SQRT2, 1.0): "alpha*sqrt(beta) = sqrt2 (step decay by sqrt2 only)"}
MC_CONTROL = (2.0, 2.0)  # the Monte Carlo test must tell (2,1)'s runs from this member's exact risk


def _off_line_controls(ratios, base, off_line, tol, family) -> list[ledger.Control]:
    """The spread test ``max/min - 1 <= tol`` run on {base, off-line member}: each must be rejected."""
    out = []
    for ab, why in off_line.items():
        sp_ = spread([ratios[base], ratios[ab]])
        out.append(ledger.Control(f"{family} {member_name(ab)}: {why}",
                                  {"final_risk_ratio": ratios[ab], "spread_vs_base": sp_}, sp_ > tol))
    return out


@ledger.claim("seesaw.sgd_equivalence", source="Seesaw Theorem 1 (SGD, noisy linear regression)",
              statement="SGD schedules (eta0 alpha^-k, B0 beta^k) with equal samples per phase and the "
                        "same alpha*beta (alpha >= 1) end within a few percent of each other's excess risk.")
def _check_sgd_equivalence() -> ledger.Evidence:
    base = (2.0, 1.0)
    ratios, steps = final_risk_ratio(SGD_LINE + list(SGD_OFF_LINE), base, eta0=0.5, n_phases=4,
                                     normalized=False)
    line = {ab: ratios[ab] for ab in SGD_LINE}
    spread_ = spread(line.values())
    # Monte Carlo cross-check of the recursion on a smaller problem, seeds sharded over all devices.
    mc = monte_carlo_check(n_seeds=256, control=MC_CONTROL)
    ok = spread_ <= SGD_TOL and mc["max_abs_z"] <= 3.0
    controls = _off_line_controls(ratios, base, SGD_OFF_LINE, SGD_TOL, "SGD") + [
        ledger.Control(f"Monte Carlo of (2,1) against the exact risk of the off-line {member_name(MC_CONTROL)}"
                       " (same |z| <= 3 test)", {"z": mc["control_z"]}, abs(mc["control_z"]) > 3.0)]
    return ledger.Evidence(
        measured={"final_risk_ratio": {member_name(k): v for k, v in line.items()}, "spread": spread_,
                  "steps": {member_name(k): steps[k] for k in SGD_LINE},
                  "mc_vs_recursion_max_z": mc["max_abs_z"]},
        predicted={"spread": "<= 5% (equal up to constant factors)", "mc_vs_recursion_max_z": "<= 3",
                   "off-line members": "spread vs (2,1) > 5%"},
        tolerance="spread <= 5% (Theorem 1 holds up to constants); MC within 3 SE of the exact recursion; "
                  "the same tests must reject the off-line members and the off-line recursion",
        verdict=ledger.verdict(ok, controls),
        stderr={"mc_rel_se": mc["rel_se"]},
        notes=f"d=256, l_j∝j^-1.5, trH=1, sigma²=1, B0=8, 4 phases of 2^16 samples, eta0=0.5. MC: "
              f"{mc['setting']}; MC/recursion ratios {mc['ratios']}.",
        controls=controls)


def monte_carlo_check(n_seeds=256, d=32, samples_per_phase=2**12, n_phases=4, eta0=0.5, b0=8, seed=0,
                      mesh=None, control=None):
    """Monte Carlo SGD (sharded seeds) against :func:`expected_risk` for the members (2,1), (1,2).

    Returns a dict with the z-scores ``(mc - exact) / se`` of the final risk, their max, the relative
    standard errors and MC/exact ratios; with ``control=(alpha, beta)`` also ``control_z``, the z-score of
    the (2,1) runs against the exact final risk of that member (a test that can tell members apart has
    ``|control_z| > 3`` for an off-line member). Source: Seesaw Theorem 1's setting.
    """

    eigs = power_law_eigs(d)
    e0 = np.ones(d)
    out = {"z": {}, "rel_se": {}, "ratios": {}}
    for ab in [(2.0, 1.0), (1.0, 2.0)]:
        lrs, bs = phase_schedule(eta0, b0, ab[0], ab[1], samples_per_phase, n_phases)
        exact = expected_risk(eigs, e0**2, 1.0, lrs, bs)[-1]
        mean, se = runtime.mean_over_seeds(
            lambda k, lrs=lrs, bs=bs: sgd_risk_path(k, eigs, e0, 1.0, lrs, bs)[-1], seed, n_seeds, mesh=mesh)
        out["z"][member_name(ab)] = float((mean - exact) / se)
        out["rel_se"][member_name(ab)] = float(se / mean)
        out["ratios"][member_name(ab)] = round(float(mean / exact), 4)
        if ab == (2.0, 1.0) and control is not None:
            c_lrs, c_bs = phase_schedule(eta0, b0, control[0], control[1], samples_per_phase, n_phases)
            out["control_z"] = float((mean - expected_risk(eigs, e0**2, 1.0, c_lrs, c_bs)[-1]) / se)
    out["max_abs_z"] = max(abs(z) for z in out["z"].values())
    out["setting"] = (f"d={d}, {n_seeds} seeds, {n_phases} phases of {samples_per_phase} samples, "
                      f"eta0={eta0}, B0={b0}")
    return out


@ledger.claim("seesaw.nsgd_equivalence", source="Seesaw Corollary 1 (NSGD under Assumption 3)",
              statement="Normalized SGD in the variance-dominated regime: schedules with equal alpha*sqrt(beta)"
                        " = 2, from (2,1) to (1,4), end within 2% of each other.")
def _check_nsgd_equivalence() -> ledger.Evidence:
    base = (2.0, 1.0)
    ratios, steps = final_risk_ratio(NSGD_LINE + list(NSGD_OFF_LINE), base, eta0=0.05, n_phases=4,
                                     normalized=True)
    line = {ab: ratios[ab] for ab in NSGD_LINE}
    spread_ = spread(line.values())
    controls = _off_line_controls(ratios, base, NSGD_OFF_LINE, NSGD_TOL, "NSGD")
    eigs = power_law_eigs(REF["d"])
    bn = noise_scale(eigs, np.full(REF["d"], REF["m0"]), REF["noise_var"])
    return ledger.Evidence(
        measured={"final_risk_ratio": {member_name(k): v for k, v in line.items()}, "spread": spread_,
                  "steps": {member_name(k): steps[k] for k in NSGD_LINE}, "B_noise_at_init": bn},
        predicted={"spread": "< 2%", "off-line members": "spread vs (2,1) > 2%"},
        tolerance="max/min final risk - 1 <= 2%; the same test must reject each off-line member paired "
                  "with (2,1)",
        verdict=ledger.verdict(spread_ <= NSGD_TOL, controls),
        notes="Same problem as sgd_equivalence, NSGD nominal eta0=0.05; largest batch 8*4^3=512. "
              "B_noise is the variance/mean crossover of E||g||^2 at initialisation.",
        controls=controls)


def plateaus(ratio_by_phases: dict) -> bool:
    """The NSGD failure test of Lemma 4: the ratio to step decay grows with the horizon, past 1.5 at 8
    phases and past 10 at 12 (exact normalisation keeps NSGD finite: it plateaus instead of diverging)."""
    r = ratio_by_phases
    return bool(r[12] > 10 and r[12] > r[8] > 1.5)


def diverges(ratio: float) -> bool:
    """The SGD failure test of Lemma 4's analogue: final risk non-finite or above 1e6 times step decay's."""
    return bool(not np.isfinite(ratio) or ratio > 1e6)


@ledger.claim("seesaw.aggressive_ramp_fails", source="Seesaw Lemma 4 / Remark 1",
              statement="Ramps with alpha < sqrt(beta) (lr x sqrt2 with batch x2) are clearly worse: NSGD "
                        "plateaus, and SGD with alpha < 1 diverges over long horizons.")
def _check_aggressive_ramp() -> ledger.Evidence:
    merrill, seesaw, batch_only = (1 / SQRT2, 2.0), (SQRT2, 2.0), (1.0, 2.0)
    horizons = {}
    for k in (4, 8, 12):
        n = 2**16 if k <= 8 else 2**18
        r, _ = final_risk_ratio([seesaw, merrill, batch_only], (2.0, 1.0), eta0=0.05, n_phases=k,
                                normalized=True, samples_per_phase=n)
        horizons[k] = r
    nsgd_merrill = {k: v[merrill] for k, v in horizons.items()}
    nsgd_seesaw = {k: v[seesaw] for k, v in horizons.items()}
    nsgd_batch_only = {k: v[batch_only] for k, v in horizons.items()}
    sgd, _ = final_risk_ratio([merrill, batch_only], (2.0, 1.0), eta0=0.5, n_phases=10,
                              normalized=False, samples_per_phase=2**18)
    ok = (plateaus(nsgd_merrill) and max(abs(v - 1) for v in nsgd_seesaw.values()) < 0.02
          and diverges(sgd[merrill]))
    controls = [
        ledger.Control("NSGD Seesaw (sqrt2,2): alpha = sqrt(beta), the allowed boundary (same plateau test)",
                       nsgd_seesaw, not plateaus(nsgd_seesaw)),
        ledger.Control("SGD (1,2): alpha = 1, the allowed boundary (same divergence test)", sgd[batch_only],
                       not diverges(sgd[batch_only]))]
    return ledger.Evidence(
        measured={"nsgd_(1/sqrt2,2)_vs_step_by_phases": nsgd_merrill,
                  "nsgd_seesaw_vs_step_by_phases": nsgd_seesaw,
                  "sgd_(1/sqrt2,2)_vs_step_10_phases": sgd[merrill],
                  "sgd_(1,2)_vs_step_10_phases": sgd[batch_only],
                  "nsgd_(1,2)_vs_step_by_phases (reported, not decided)": nsgd_batch_only},
        predicted={"nsgd_(1/sqrt2,2)": "grows with the horizon (plateau)", "sgd_(1/sqrt2,2)": "diverges",
                   "boundary members": "neither plateau nor diverge"},
        tolerance="NSGD aggressive/step > 1.5 at 8 phases, > 10 at 12; Seesaw within 2%; SGD ratio > 1e6 "
                  "or non-finite; the same tests must reject the boundary members",
        verdict=ledger.verdict(ok, controls),
        notes="Over 4 phases the aggressive ramp is not yet worse; the failure is a long-horizon effect. "
              "Exact normalisation keeps NSGD finite, so it plateaus instead of blowing up. The NSGD "
              "batch-only ramp (1,2) also has alpha < sqrt(beta) but keeps beating step decay over 12 "
              "phases (its batch outgrows the noise scale); the claim is made for lr x sqrt2 with batch x2.",
        controls=controls)


def gap_opens(gap_by_b0: dict) -> bool:
    """The Fig. 3 test: Seesaw/step strictly increasing in B0 and at least 1.2 at the largest B0."""
    gaps = [gap_by_b0[b] for b in sorted(gap_by_b0)]
    return bool(all(b > a for a, b in itertools.pairwise(gaps)) and gaps[-1] >= 1.2)


@ledger.claim("seesaw.mean_dominated_gap", source="Seesaw Section 5 (beyond the critical batch size), Fig. 3",
              statement="When the gradient mean dominates the noise (small label noise, large batch) Seesaw "
                        "falls behind step decay, and the gap opens as the batch grows.")
def _check_mean_dominated() -> ledger.Evidence:
    low, bn_low = seesaw_vs_step_by_batch(1e-2)
    high, bn_high = seesaw_vs_step_by_batch(1.0)
    ok = gap_opens(low) and abs(high[MEAN_DOMINATED_B0[0]] - 1) < 0.02
    controls = [ledger.Control("sigma²=1 in place of 0.01: label noise 100x larger, the variance-dominated "
                               "side (same opening-gap test)", high, not gap_opens(high))]
    return ledger.Evidence(
        measured={"seesaw/step, sigma²=0.01, by B0": low, "seesaw/step, sigma²=1, by B0": high,
                  "B_noise_init sigma²=0.01": bn_low, "B_noise_init sigma²=1": bn_high},
        predicted={"sigma²=0.01": "increasing in B0, >= 1.2 at the largest", "sigma²=1, B0=4": "~1",
                   "sigma²=1": "no opening gap"},
        tolerance="strictly increasing gap; >= 20% at B0=256; sigma²=1 at B0=4 within 2%; the same "
                  "opening-gap test must reject sigma²=1",
        verdict=ledger.verdict(ok, controls),
        notes="NSGD, 4 phases of 2^18 samples, nominal eta0=0.05, d=256. B_noise = tr H (sum l m + "
              "sigma²)/sum l² m at initialisation; it grows as the risk falls (the mean term sum l² m shrinks "
              "while sigma² stays).",
        controls=controls)


LIMITS = {  # (shape, final_lr_frac, warmup_frac) -> the brief's value of the limit
    ("quarter_cosine", 0, 0): 1 - 2 / sp.pi,
    ("half_cosine", 0, 0): sp.Rational(1, 2),
    ("half_cosine", sp.Rational(1, 10), 0): sp.Rational(45, 100),
    ("half_cosine", sp.Rational(1, 10), sp.Rational(1, 10)): sp.Rational(405, 1000),
}


# Controls of serial_step_limit: the discrete scheduler of one setting against the limit of its neighbour
# (the setting with one hypothesis element changed: the shape, the floor, the warmup).
LIMIT_NEIGHBOURS = {("half_cosine", 0, 0): (("quarter_cosine", 0, 0), "half cosine, not quarter"),
                    ("half_cosine", sp.Rational(1, 10), 0): (("half_cosine", 0, 0), "the 0.1 floor ignored"),
                    ("half_cosine", sp.Rational(1, 10), sp.Rational(1, 10)):
                        (("half_cosine", sp.Rational(1, 10), 0), "the 10% warmup at B0 ignored")}


@ledger.claim("seesaw.serial_step_limit",
              source="Seesaw Lemma 1 (1 - 2/pi); the 50%, 45%, 40.5% limits are our derivations, not the "
                     "paper's",
              statement="The serial-step reduction of the most aggressive ramp tends to 1 - 2/pi for a "
                        "quarter-cosine schedule, and to 50%, 45%, 40.5% for half-cosine to 0, to a 0.1 floor, "
                        "and with 10% warmup; analytically and from the discrete scheduler as gamma -> 1.")
def _check_serial_step_limit() -> ledger.Evidence:
    exact, discrete, errors, ok = {}, {}, {}, True
    for (shape, f, w), want in LIMITS.items():
        key = f"{shape},floor={f},warmup={w}"
        got = serial_step_reduction_limit(shape, f, w)
        ok &= sp.simplify(got - want) == 0
        exact[key] = str(got)
        errs = [abs(discrete_serial_step_reduction(shape, g, final_lr_frac=float(f), warmup_frac=float(w))
                    - float(want)) for g in (1.1, 1.01, 1.001)]
        ok &= errs[-1] < 1e-3 and errs[0] > errs[1] > errs[2]
        discrete[key] = discrete_serial_step_reduction(shape, 1.001, final_lr_frac=float(f),
                                                       warmup_frac=float(w))
        errors[key] = errs
    controls = []
    for (shape, f, w), (other, why) in LIMIT_NEIGHBOURS.items():
        err = abs(discrete[f"{shape},floor={f},warmup={w}"] - float(LIMITS[other]))
        controls.append(ledger.Control(f"discrete {shape}, floor={f}, warmup={w} at gamma=1.001 against the "
                                       f"limit of {other} ({why}); same error < 1e-3 test",
                                       {"abs_error": err}, err >= 1e-3))
    return ledger.Evidence(
        measured={"sympy_limit": exact, "discrete_gamma_1.001": discrete,
                  "abs_error_gamma_1.1_1.01_1.001": errors},
        predicted={k: str(v) for k, v in LIMITS.items()},
        tolerance="sympy limit equal exactly; discrete error < 1e-3 at gamma=1.001 and decreasing in gamma; "
                  "the same error test must reject each setting against its neighbour's limit",
        verdict=ledger.verdict(ok, controls),
        notes="Steps of the ramp = sample-mean of eta/eta0 (batch B0 eta0/eta); warmup runs at B0. The "
              "brief's errata: only 1 - 2/pi is the paper's Lemma 1; 50%, 45%, 40.5% are derived here.",
        controls=controls)


PAPER_STEPS = {256: (12589, 7756), 128: (25178, 15524)}


@ledger.claim("seesaw.paper_step_counts", source="Seesaw Table 1 / Fig. 1, released scheduler",
              statement="The paper's scheduler (10% warmup at B0, cosine in tokens to 0.1, gamma = 1.1, batch "
                        "floored) on 3.3e9 tokens of 1024-token sequences gives 12589 vs 7756 steps at B0 = 256 "
                        "and 25178 vs 15524 at B0 = 128.")
def _check_paper_step_counts() -> ledger.Evidence:
    got = {b0: paper_step_counts(3.3e9, 1024, b0) for b0 in PAPER_STEPS}
    red = {b0: 1 - s / c for b0, (c, s) in got.items()}
    return ledger.Evidence(
        measured={f"B0={b}": list(v) for b, v in got.items()} | {"reduction": red},
        predicted={f"B0={b}": list(v) for b, v in PAPER_STEPS.items()},
        tolerance="exact integer equality",
        verdict=ledger.verdict(got == PAPER_STEPS),
        notes="Reductions ~38.4%, two points short of the gamma -> 1 limit of 40.5% (switch lag at gamma=1.1).",
        no_control="an exact integer identity: the released scheduler reproduces the paper's step counts or "
                   "it does not; there is no nearby case for the equality test to reject")


# ---------------------------------------------------------------------------------------------------
# AdamW language models (Fig. 1, 2, 3), decided on per-seed paired differences
# ---------------------------------------------------------------------------------------------------

LM_TOL = 0.01  # |loss / reference - 1| <= 1%: the paper's differences at or below the critical batch are <= 0.3%
STEP_RATIO = (0.55, 0.7)  # Seesaw / cosine serial steps (paper: 0.62; gamma -> 1 limit with warmup: 0.595)


def lm_comparison(arrays) -> dict:
    """Final validation loss (mean over seeds, nats/char), serial steps and noise scale per B0 and schedule
    from a ``seesaw_lm`` result (``sims.seesaw.run_lm``), with the per-seed paired relative differences
    ``loss_i / cosine_i - 1`` of the other schedules (seed i shares cosine's initialisation)."""
    out = {}
    for b0 in arrays["batch_sizes"].tolist():
        row = {}
        for kind in arrays["schedules"].tolist():
            vl = np.asarray(arrays[f"b{b0}_{kind}_val_loss"])[:, -1]
            row[kind] = {"loss": float(vl.mean()), "loss_se": float(vl.std(ddof=1) / np.sqrt(vl.size))
                         if vl.size > 1 else 0.0, "steps": int(arrays[f"b{b0}_{kind}_total_steps"]),
                         "per_seed": vl.tolist()}
        if "cosine" in row:
            row["noise_scale"] = float(np.mean(arrays[f"b{b0}_cosine_noise_scale"]))
            cos = np.asarray(row["cosine"]["per_seed"])
            for kind in ("seesaw", "fixed_lr"):
                if kind in row:
                    row[kind]["paired_rel_diffs"] = (np.asarray(row[kind]["per_seed"]) / cos - 1).tolist()
        out[int(b0)] = row
    return out


def lm_match_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.adam_lm_match`` from a ``seesaw_lm`` result (see that claim).

    Per B0 below the measured noise scale: Seesaw vs cosine by :func:`paired_decision` (|mean| <= 1%)
    and the step ratio in :data:`STEP_RATIO`; control: the fixed-lr ramp vs cosine by the same test.
    No B0 below the noise scale gives "inconclusive". Source: Seesaw Fig. 1 / Table 1."""
    cmp = lm_comparison(arrays)
    rows, own, ctl_dec, controls = {}, [], [], []
    for b0, r in cmp.items():
        if r["noise_scale"] <= b0:
            rows[b0] = {"noise_scale": r["noise_scale"], "note": "at or above the noise scale: not tested"}
            continue
        d = paired_decision(r["seesaw"]["paired_rel_diffs"], LM_TOL, "within")
        step_ratio = r["seesaw"]["steps"] / r["cosine"]["steps"]
        own += [d["verdict"], ledger.verdict(STEP_RATIO[0] <= step_ratio <= STEP_RATIO[1])]
        rows[b0] = {"noise_scale": r["noise_scale"], "cosine_loss": r["cosine"]["loss"],
                    "seesaw_loss": r["seesaw"]["loss"], "seesaw_vs_cosine": _decision_summary(d),
                    "step_ratio": step_ratio}
        if "fixed_lr" in r:
            c = paired_decision(r["fixed_lr"]["paired_rel_diffs"], LM_TOL, "within")
            ctl_dec.append(c["verdict"])
            controls.append(ledger.Control(
                f"B0={b0}: the fixed-lr ramp (alpha = 1, beta = gamma: alpha*sqrt(beta) = sqrt(gamma), off "
                "the line) against cosine, same |mean| <= 1% test", _decision_summary(c), c["verdict"] == "fails"))
    verdict = ledger.combine(own, ctl_dec)
    return ledger.Evidence(
        measured={f"B0={b}": v for b, v in rows.items()},
        predicted={"seesaw_vs_cosine": "|paired rel diff| <= 1%", "step_ratio": "~0.6 (paper 0.62)",
                   "fixed-lr ramp vs cosine": "outside 1% (rejected)"},
        tolerance="|seesaw_i/cosine_i - 1| <= 1% decided on the 95% Student-t interval of the per-seed paired "
                  "differences (holds inside, fails outside, else inconclusive); step ratio in [0.55, 0.7]; "
                  "every B0 below the measured noise scale; the fixed-lr ramp must fail the same test",
        verdict=verdict,
        stderr={f"B0={b}": {k: r[k]["loss_se"] for k in r if isinstance(r[k], dict)} for b, r in cmp.items()},
        notes=(setting + " " if setting else "") + "Noise scale = McCandlish B_simple in sequences, mean over "
              "seeds at mid and end of the cosine run." + ("" if own else " No B0 below the measured noise "
                                                                            "scale: nothing testable."),
        controls=controls)


def _lm_setting(meta, scale) -> str:
    c = meta["config"]
    return (f"{meta.get('config_path', 'paper_configs')} at {scale} scale ({c['n_seeds']} seeds, "
            f"{c['total_tokens']} tokens, d_model {c['d_model']}).")


@ledger.claim("seesaw.adam_lm_match", source="Seesaw Fig. 1 / Table 1 (AdamW language models)",
              statement="A small transformer LM trained with AdamW: cosine vs Seesaw at equal tokens reach final "
                        "validation losses within 1% at batch sizes below the measured noise scale, with about "
                        "0.6x the serial steps.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="at quick CPU scale (2 seeds, about 5 tokens per parameter, loss still falling steeply) "
                  "Seesaw trails cosine by about 1% (seed-paired, when this was written: +0.91% at B0=8, seeds "
                  "+1.10% and +0.73%; +1.23% at B0=32, seeds +0.75% and +1.71%). With 2 seeds the 95% Student-t "
                  "interval is mean +- 12.7 SE ([-1.4%, +3.3%] and [-4.9%, +7.3%]), so the 1% bound cannot be "
                  "decided, nor can the off-line control (the fixed-lr ramp, +1.04% and +0.29% against cosine) "
                  "be rejected; the step ratio (0.63) holds. The earlier '2 paired SE' rule was wrong about 30% "
                  "of the time at 2 seeds. The paper trains at about 20 tokens per parameter, which the quick "
                  "scale cannot afford. At paper scale the paper's claim is that it holds; the ledger reports it "
                  "as not measured until the paper-scale seesaw_lm result exists.")
def _check_adam_lm_match(scale: str) -> ledger.Evidence:
    arrays, meta = ledger.figure_result("seesaw_lm", scale)
    return lm_match_evidence(arrays, _lm_setting(meta, scale))


def fixed_lr_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.fixed_lr_ramp_worse`` from a ``seesaw_lm`` result (see that claim).

    Per B0 at or above the measured noise scale (beyond the critical batch): ``fixed_i / seesaw_i - 1``
    decided by :func:`paired_decision` (mean > 0); control: cosine in place of the fixed-lr ramp, which
    the paper finds better than Seesaw there, by the same test. Below the noise scale nothing is
    decided (reported only); no B0 at or above it gives "inconclusive". Source: Seesaw Fig. 3."""
    cmp = lm_comparison(arrays)
    rows, own, ctl_dec, controls = {}, [], [], []
    for b0, r in cmp.items():
        if "fixed_lr" not in r or "seesaw" not in r:
            continue
        see = np.asarray(r["seesaw"]["per_seed"])
        d = paired_decision(np.asarray(r["fixed_lr"]["per_seed"]) / see - 1, 0.0, "above")
        if r["noise_scale"] > b0:
            rows[b0] = {"noise_scale": r["noise_scale"], "fixed_vs_seesaw (not decided)": _decision_summary(d),
                        "note": "below the noise scale: outside Fig. 3's hypothesis, not tested"}
            continue
        c = paired_decision(np.asarray(r["cosine"]["per_seed"]) / see - 1, 0.0, "above")
        own.append(d["verdict"])
        ctl_dec.append(c["verdict"])
        controls.append(ledger.Control(f"B0={b0}: cosine in place of the fixed-lr ramp (decays the lr; the "
                                       "paper finds it better than Seesaw here), same 'worse than Seesaw' test",
                                       _decision_summary(c), c["verdict"] == "fails"))
        rows[b0] = {"noise_scale": r["noise_scale"], "fixed_vs_seesaw": _decision_summary(d),
                    "fixed_lr_loss": r["fixed_lr"]["loss"], "seesaw_loss": r["seesaw"]["loss"],
                    "cosine_loss": r["cosine"]["loss"]}
    return ledger.Evidence(
        measured={f"B0={b}": v for b, v in rows.items()},
        predicted={"fixed_vs_seesaw": "> 0 at every B0 at or above the noise scale",
                   "cosine_vs_seesaw": "not > 0 (rejected)"},
        tolerance="fixed_i/seesaw_i - 1 > 0 decided on the 95% Student-t interval of the per-seed paired "
                  "differences (holds above 0, fails below, else inconclusive), at B0 >= the measured noise "
                  "scale; cosine must fail the same test",
        verdict=ledger.combine(own, ctl_dec),
        notes=(setting + " " if setting else "") + "The paper's Fig. 3 statement is about AdamW language "
              "models (150M, B0 = 1024-8192, beyond the critical batch of ~256), so this reads seesaw_lm, "
              "not the NSGD recursion of seesaw_large_batch." + ("" if own else " No B0 at or above the "
                                                                  "measured noise scale: nothing testable."),
        controls=controls,
        no_control="" if controls else "no B0 at or above the measured noise scale, so the control (cosine "
                                       "in place of the fixed-lr ramp at such a B0) has nothing to run on")


@ledger.claim("seesaw.fixed_lr_ramp_worse",
              source="Seesaw Fig. 3 (150M AdamW LMs beyond the critical batch size), read from seesaw_lm",
              statement="Beyond the critical batch size (B0 at or above the measured gradient noise scale), the "
                        "batch ramp at constant lr (Seesaw's batch schedule without its lr decay) ends at a "
                        "higher validation loss than Seesaw.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="the quick seesaw_lm runs B0 = 8 and 32, both below the measured noise scale (about 118 and "
                  "224 sequences when this was written), so no batch beyond the critical one is tested: "
                  "nothing to decide. Below it (reported, not decided) the fixed-lr ramp was not resolvably "
                  "different from Seesaw (seed-paired +0.13% and -0.93% at B0 = 8 and 32). At paper scale the paper's claim "
                  "is that it holds; the ledger reports it as not measured until the paper-scale seesaw_lm "
                  "result exists.")
def _check_fixed_lr_ramp_worse(scale: str) -> ledger.Evidence:
    arrays, meta = ledger.figure_result("seesaw_lm", scale)
    return fixed_lr_evidence(arrays, _lm_setting(meta, scale))


def adam_line_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.adam_sqrt_line`` from a ``seesaw_adam_line`` result (see that claim).

    Member 0 is the base. Members with the base's ``alpha*sqrt(beta)`` and ``alpha >= sqrt(beta)`` are
    the claim's own cases, decided against the base by :func:`paired_decision` (|mean| <= 1%); members
    off the line are controls that must fail the same test; line members with ``alpha < sqrt(beta)``
    are reported only (outside Lemma 4's stable range; the paper reports they degrade). A base B0 at or
    above the measured noise scale gives "inconclusive" (Corollary 1 assumes variance domination).
    Source: Seesaw Fig. 2."""
    alphas, betas = np.asarray(arrays["alphas"], np.float64), np.asarray(arrays["betas"], np.float64)
    final = np.asarray(arrays["final_val_loss"], np.float64)
    inv = alphas * np.sqrt(betas)
    b0, ns = int(arrays["b0"]), float(np.mean(arrays["noise_scale"][0]))
    steps = np.asarray(arrays["total_steps"]).tolist()
    base = member_name((alphas[0], betas[0]))
    rows = {base: {"loss": float(final[0].mean()), "steps": steps[0], "alpha*sqrt(beta)": float(inv[0])}}
    own, ctl_dec, controls = [], [], []
    for i in range(1, alphas.size):
        name = member_name((alphas[i], betas[i]))
        d = paired_decision(final[i] / final[0] - 1, LM_TOL, "within")
        row = {"vs_base": _decision_summary(d), "loss": float(final[i].mean()), "steps": steps[i],
               "alpha*sqrt(beta)": float(inv[i])}
        if not np.isclose(inv[i], inv[0], rtol=1e-9):
            ctl_dec.append(d["verdict"])
            controls.append(ledger.Control(f"{name}: alpha*sqrt(beta) = {inv[i]:.4g}, off the line "
                                           f"(alpha*beta = {alphas[i] * betas[i]:.4g}); same |mean| <= 1% test",
                                           _decision_summary(d), d["verdict"] == "fails"))
            row["role"] = "control (off the line)"
        elif alphas[i] >= np.sqrt(betas[i]) * (1 - 1e-9):
            own.append(d["verdict"])
            row["role"] = "on the line, alpha >= sqrt(beta)"
        else:
            row["role"] = "on the line, alpha < sqrt(beta): reported, not decided"
        rows[name] = row
    testable = ns > b0
    verdict = ledger.combine(own if testable else [], ctl_dec)
    return ledger.Evidence(
        measured={"B0": b0, "noise_scale_base": ns} | rows,
        predicted={"on the line": "|loss/base - 1| <= 1%", "off the line": "outside 1% (rejected)"},
        tolerance="|member_i/base_i - 1| <= 1% decided on the 95% Student-t interval of the per-seed paired "
                  "differences (holds inside, fails outside, else inconclusive); B0 below the measured noise "
                  "scale; every off-line member must fail the same test",
        verdict=verdict,
        notes=(setting + " " if setting else "") + "Members switch where the reference cosine halves (gamma = 2); "
              "seed i has the same initialisation in every member." + (
                  "" if testable else f" B0 = {b0} is not below the measured noise scale {ns:.3g}: outside "
                                      "Corollary 1's hypothesis, nothing decided."),
        controls=controls)


@ledger.claim("seesaw.adam_sqrt_line", source="Seesaw Fig. 2 (150M AdamW, the alpha*sqrt(beta) = 2 line), "
                                              "Corollary 1",
              statement="AdamW phase schedules with equal alpha*sqrt(beta) (and alpha >= sqrt(beta)), switching "
                        "where the reference cosine halves, reach final validation losses within 1% of the "
                        "step-decay base (2,1) below the noise scale; off-line members (alpha*beta = 2, or "
                        "alpha*sqrt(beta) = 2*sqrt(2)) do not.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="at quick CPU scale (B0 = 8, below the measured noise scale of about 122; 3 seeds; about 5 "
                  "tokens per parameter, loss still falling steeply) the final loss follows the serial step count "
                  "more than the alpha*sqrt(beta) invariant. Seed-paired against the base (2,1) (782 steps), when "
                  "this was written: (2^3/4, 2^1/2) (640 steps) +0.43%, 95% t interval [0.07%, 0.79%], holds; "
                  "Seesaw (sqrt2, 2) (563 steps) +1.05% [0.72%, 1.38%], undecided at the 1% bound; the off-line "
                  "(1, 2) (alpha*beta = 2, 563 steps) +1.19% [0.47%, 1.91%], not distinguishable from Seesaw, so "
                  "that control is not rejected; the off-line (2, 2) +1.66% [1.40%, 1.91%] is rejected. The "
                  "paper's Fig. 2 members with alpha >= sqrt(beta) differ by <= 0.25% at 150M; at paper scale "
                  "the claim is expected to hold, reported as not measured until the paper-scale "
                  "seesaw_adam_line result exists.")
def _check_adam_sqrt_line(scale: str) -> ledger.Evidence:
    arrays, meta = ledger.figure_result("seesaw_adam_line", scale)
    return adam_line_evidence(arrays, _lm_setting(meta, scale))
