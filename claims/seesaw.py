"""Claims of Seesaw (Meterez et al., ICLR 2026, arXiv 2510.14717), checked with ``theory.seesaw``.

Each claim builds :class:`claims.ledger.Decision`s (exact comparisons for the scheduler arithmetic,
deterministic float64 comparisons for the exact recursion, Student-t intervals for seeded runs) and runs
the same test on its controls: cases just outside the claim's hypothesis (an off-line member of an
equivalence family, the allowed boundary of a stability condition, the variance-dominated side of a
mean-dominated effect). The ledger turns them into the verdict. Claims about a figure read that figure's
result (``reads=``) and never recompute it; seeded language-model runs are decided on per-seed paired
differences (:func:`claims.ledger.paired`) and are "inconclusive" when the interval cannot decide.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from claims import ledger
from theory.seesaw import (
    MEAN_DOMINATED_B0,
    NSGD_LINE,
    REF,
    SQRT2,
    discrete_serial_step_reduction,
    final_risk_ratio,
    member_name,
    noise_scale,
    paper_step_counts,
    power_law_eigs,
    seesaw_vs_step_by_batch,
    serial_step_reduction_limit,
)


def spread(values) -> float:
    """``max / min - 1`` of positive final risks (or risk ratios): how far apart a family ends.

    Source: the equivalence claims (Seesaw Theorem 1, Corollary 1) compare members by this number."""
    v = np.asarray(list(values), np.float64)
    if v.size == 0 or np.any(~np.isfinite(v)) or np.any(v <= 0):
        return float("inf")
    return float(v.max() / v.min() - 1)


def summary(d: ledger.Decision) -> dict:
    """The numbers of a paired decision worth printing beside a member's losses."""
    return {"mean": d.statistic, "margin_se": d.margin_se, "critical": d.critical, "decision": d.decision}


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
# Monte Carlo against the recursion (the figure seesaw_equivalence): the SGD members it decides, the
# tolerance (3%, fixed before the runs: the recursion that decides Theorem 1's 5% spread must itself be
# confirmed well inside 5%) and the off-line member whose exact risk the (2,1) runs must be told apart
# from (alpha*beta = sqrt2, 2.7x the base's final risk in that setting).
MC_MEMBERS = ((2.0, 1.0), (1.0, 2.0))
MC_TOL = 0.03
MC_CONTROL = (1 / SQRT2, 2.0)


def _spread_decision(name, ratios, members, tol) -> ledger.Decision:
    return ledger.compare(name, spread(ratios[ab] for ab in members), "<=", tol,
                          f"max/min final risk - 1 <= {tol:g} (exact recursion, float64)")


def _off_line_controls(ratios, base, off_line, tol, family) -> list[ledger.Control]:
    """The spread test ``max/min - 1 <= tol`` run on {base, off-line member}: each must fail it."""
    return [ledger.Control(f"{family} {member_name(ab)}: {why}",
                           _spread_decision(f"spread of {{(2,1), {member_name(ab)}}}", ratios, [base, ab], tol),
                           {"final_risk_ratio": ratios[ab]})
            for ab, why in off_line.items()]


def _member(a: dict, family: str, ab) -> str:
    """The tag (``sgd0``, ...) of member ``ab`` in a ``seesaw_equivalence`` result (KeyError if absent)."""
    for i in range(int(a[f"{family}_count"])):
        if np.allclose(np.asarray(a[f"{family}{i}_ab"], float), ab, rtol=1e-9):
            return f"{family}{i}"
    raise KeyError(f"member {member_name(ab)} is not in the {family} members of seesaw_equivalence")


def mc_evidence(a: dict, meta: dict) -> tuple[list, list, dict]:
    """Decisions, controls and numbers of the Monte Carlo part of ``seesaw.sgd_equivalence``, from a
    ``seesaw_equivalence`` result: per member in :data:`MC_MEMBERS`, the per-seed final risks over the
    exact final risk, ``x_i / exact - 1``, within :data:`MC_TOL` on the Student-t interval (TOST);
    control: the (2,1) runs against the exact final risk of :data:`MC_CONTROL`, same test."""
    decisions, out = [], {}
    for ab in MC_MEMBERS:
        t = _member(a, "sgd", ab)
        x, exact = np.asarray(a[f"{t}_mc"], np.float64), np.asarray(a[f"{t}_exact_at_mc"], np.float64)
        d = ledger.paired(f"Monte Carlo {member_name(ab)} / recursion - 1, final risk", x[:, -1] / exact[-1] - 1,
                          MC_TOL, "within")
        decisions.append(d)
        se = x.std(axis=0, ddof=1) / np.sqrt(x.shape[0])
        out[member_name(ab)] = {"mc_over_exact_final": 1 + d.statistic, "n_seeds": int(x.shape[0]),
                                "max_abs_z_phase_ends": float(np.max(np.abs((x.mean(0) - exact) / se)))}
    base = np.asarray(a[f"{_member(a, 'sgd', (2.0, 1.0))}_mc"], np.float64)[:, -1]
    off = float(np.asarray(a[f"{_member(a, 'sgd', MC_CONTROL)}_exact_at_mc"])[-1])
    c = ledger.paired(f"Monte Carlo (2,1) / recursion of {member_name(MC_CONTROL)} - 1", base / off - 1, MC_TOL,
                      "within")
    controls = [ledger.Control(f"the (2,1) runs against the exact risk of the off-line {member_name(MC_CONTROL)} "
                               "(alpha*beta = sqrt2), same within-3% test", c)]
    c_ = meta["config"]
    out["setting"] = (f"seesaw_equivalence: d={c_['d']}, {c_['n_seeds']} seeds, {c_['n_phases']} phases of "
                      f"{c_['samples_per_phase']} samples, eta0={c_['sgd_eta0']}, B0={c_['b0']}")
    return decisions, controls, out


@ledger.claim("seesaw.sgd_equivalence", source="Seesaw Theorem 1 (SGD, noisy linear regression)",
              statement="SGD schedules (eta0 alpha^-k, B0 beta^k) with equal samples per phase and the "
                        "same alpha*beta (alpha >= 1) end within a few percent of each other's excess risk.",
              reads=("seesaw_equivalence",))
def _check_sgd_equivalence(r: ledger.Reads) -> ledger.Evidence:
    base = (2.0, 1.0)
    ratios, steps = final_risk_ratio(SGD_LINE + list(SGD_OFF_LINE), base, eta0=0.5, n_phases=4,
                                     normalized=False)
    mc_dec, mc_ctl, mc = mc_evidence(*r["seesaw_equivalence"])
    return ledger.Evidence(
        measured={"final_risk_ratio": {member_name(k): ratios[k] for k in SGD_LINE},
                  "spread": spread(ratios[k] for k in SGD_LINE),
                  "steps": {member_name(k): steps[k] for k in SGD_LINE}, "monte_carlo": mc},
        predicted={"spread": "<= 5% (equal up to constant factors)", "monte_carlo / recursion - 1": "within 3%",
                   "off-line members": "spread vs (2,1) > 5%"},
        tolerance="spread <= 5% (Theorem 1 holds up to constants; float64 recursion); Monte Carlo final risk "
                  "within 3% of the recursion, TOST on the 95% Student-t interval of the per-seed ratios "
                  "(statsmodels); the same tests must reject the off-line members and the off-line recursion",
        decisions=[_spread_decision("spread of the alpha*beta = 2 line", ratios, SGD_LINE, SGD_TOL), *mc_dec],
        controls=_off_line_controls(ratios, base, SGD_OFF_LINE, SGD_TOL, "SGD") + mc_ctl,
        notes="Recursion: d=256, l_j∝j^-1.5, trH=1, sigma²=1, B0=8, 4 phases of 2^16 samples, eta0=0.5. "
              f"Monte Carlo read from {mc['setting']}. The earlier rule (|z| <= 3 against the recursion) was a "
              "no-difference test that too few seeds pass by default; the equivalence test (TOST) must show "
              "agreement within 3%, which needs the seeds.")


@ledger.claim("seesaw.nsgd_equivalence", source="Seesaw Corollary 1 (NSGD under Assumption 3)",
              statement="Normalized SGD in the variance-dominated regime: schedules with equal alpha*sqrt(beta)"
                        " = 2, from (2,1) to (1,4), end within 2% of each other.")
def _check_nsgd_equivalence() -> ledger.Evidence:
    base = (2.0, 1.0)
    ratios, steps = final_risk_ratio(NSGD_LINE + list(NSGD_OFF_LINE), base, eta0=0.05, n_phases=4,
                                     normalized=True)
    eigs = power_law_eigs(REF["d"])
    bn = noise_scale(eigs, np.full(REF["d"], REF["m0"]), REF["noise_var"])
    return ledger.Evidence(
        measured={"final_risk_ratio": {member_name(k): ratios[k] for k in NSGD_LINE},
                  "spread": spread(ratios[k] for k in NSGD_LINE),
                  "steps": {member_name(k): steps[k] for k in NSGD_LINE}, "B_noise_at_init": bn},
        predicted={"spread": "< 2%", "off-line members": "spread vs (2,1) > 2%"},
        tolerance="max/min final risk - 1 <= 2% (exact recursion, float64); the same test must reject each "
                  "off-line member paired with (2,1)",
        decisions=[_spread_decision("spread of the alpha*sqrt(beta) = 2 line", ratios, NSGD_LINE, NSGD_TOL)],
        controls=_off_line_controls(ratios, base, NSGD_OFF_LINE, NSGD_TOL, "NSGD"),
        notes="Same problem as sgd_equivalence, NSGD nominal eta0=0.05; largest batch 8*4^3=512. "
              "B_noise is the variance/mean crossover of E||g||^2 at initialisation.")


def plateaus(ratio_by_phases: dict) -> bool:
    """The NSGD failure test of Lemma 4: the ratio to step decay grows with the horizon, past 1.5 at 8
    phases and past 10 at 12 (exact normalisation keeps NSGD finite: it plateaus instead of diverging)."""
    r = ratio_by_phases
    return bool(r[12] > 10 and r[12] > r[8] > 1.5)


def diverges(ratio: float) -> bool:
    """The SGD failure test of Lemma 4's analogue: final risk non-finite or above 1e6 times step decay's."""
    return bool(not np.isfinite(ratio) or ratio > 1e6)


PLATEAU_TEST = "ratio to step decay > 1.5 at 8 phases, > 10 and growing at 12 (exact recursion)"
DIVERGE_TEST = "final risk / step decay's > 1e6 or non-finite at 10 phases (exact recursion)"


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
    seesaw_dev = max(abs(v - 1) for v in nsgd_seesaw.values())
    decisions = [
        ledger.check("NSGD (1/sqrt2, 2) plateaus", plateaus(nsgd_merrill), nsgd_merrill, "> 1.5 at 8, > 10 at 12",
                     PLATEAU_TEST),
        ledger.compare("NSGD Seesaw (sqrt2, 2) stays within 2% of step decay", seesaw_dev, "<", 0.02),
        ledger.check("SGD (1/sqrt2, 2) diverges", diverges(sgd[merrill]), sgd[merrill], "> 1e6", DIVERGE_TEST)]
    controls = [
        ledger.Control("NSGD Seesaw (sqrt2,2): alpha = sqrt(beta), the allowed boundary (same plateau test)",
                       ledger.check("NSGD (sqrt2, 2) plateaus", plateaus(nsgd_seesaw), nsgd_seesaw,
                                    "> 1.5 at 8, > 10 at 12", PLATEAU_TEST)),
        ledger.Control("SGD (1,2): alpha = 1, the allowed boundary (same divergence test)",
                       ledger.check("SGD (1, 2) diverges", diverges(sgd[batch_only]), sgd[batch_only], "> 1e6",
                                    DIVERGE_TEST))]
    return ledger.Evidence(
        measured={"nsgd_(1/sqrt2,2)_vs_step_by_phases": nsgd_merrill,
                  "nsgd_seesaw_vs_step_by_phases": nsgd_seesaw,
                  "sgd_(1/sqrt2,2)_vs_step_10_phases": sgd[merrill],
                  "sgd_(1,2)_vs_step_10_phases": sgd[batch_only],
                  "nsgd_(1,2)_vs_step_by_phases (reported, not decided)": nsgd_batch_only},
        predicted={"nsgd_(1/sqrt2,2)": "grows with the horizon (plateau)", "sgd_(1/sqrt2,2)": "diverges",
                   "boundary members": "neither plateau nor diverge"},
        tolerance="NSGD aggressive/step > 1.5 at 8 phases, > 10 at 12; Seesaw within 2%; SGD ratio > 1e6 "
                  "or non-finite (exact recursion, float64); the same tests must reject the boundary members",
        decisions=decisions, controls=controls,
        notes="Over 4 phases the aggressive ramp is not yet worse; the failure is a long-horizon effect. "
              "Exact normalisation keeps NSGD finite, so it plateaus instead of blowing up. The NSGD "
              "batch-only ramp (1,2) also has alpha < sqrt(beta) but keeps beating step decay over 12 "
              "phases (its batch outgrows the noise scale); the claim is made for lr x sqrt2 with batch x2.")


def gap_opens(gap_by_b0: dict) -> bool:
    """The Fig. 3 test: Seesaw/reference strictly increasing in B0 and at least 1.2 at the largest B0."""
    gaps = [gap_by_b0[b] for b in sorted(gap_by_b0)]
    return bool(all(b > a for a, b in itertools.pairwise(gaps)) and gaps[-1] >= 1.2)


GAP_TEST = "strictly increasing in B0 and >= 1.2 at the largest B0 (exact recursion, float64)"


def _gap_decision(name: str, gap: dict) -> ledger.Decision:
    return ledger.check(name, gap_opens(gap), gap, "increasing, >= 1.2 at the largest B0", GAP_TEST)


def large_batch_gaps(a: dict) -> dict:
    """Seesaw / cosine final risk by B0 for each label-noise variance of a ``seesaw_large_batch`` result."""
    b0s = [int(b) for b in np.asarray(a["batch_sizes"])]
    ratio = np.asarray(a["seesaw"], np.float64) / np.asarray(a["cosine"], np.float64)
    return {float(s2): dict(zip(b0s, ratio[i].tolist())) for i, s2 in enumerate(np.asarray(a["noise_vars"]))}


@ledger.claim("seesaw.mean_dominated_gap", source="Seesaw Section 5 (beyond the critical batch size), Fig. 3",
              statement="When the gradient mean dominates the noise (small label noise, large batch) Seesaw "
                        "falls behind step decay (and cosine), and the gap opens as the batch grows.",
              reads=("seesaw_large_batch",))
def _check_mean_dominated(r: ledger.Reads) -> ledger.Evidence:
    low, bn_low = seesaw_vs_step_by_batch(1e-2)
    high, bn_high = seesaw_vs_step_by_batch(1.0)
    a, meta = r["seesaw_large_batch"]
    fig = large_batch_gaps(a)
    small, large = min(fig), max(fig)
    decisions = [_gap_decision("Seesaw/step decay opens with B0 at sigma²=0.01", low),
                 ledger.compare("Seesaw/step decay at sigma²=1, B0=4: |ratio - 1|",
                                abs(high[MEAN_DOMINATED_B0[0]] - 1), "<", 0.02),
                 _gap_decision(f"seesaw_large_batch: Seesaw/cosine opens with B0 at sigma²={small:g}",
                               fig[small])]
    controls = [ledger.Control("sigma²=1 in place of 0.01: label noise 100x larger, the variance-dominated "
                               "side (same opening-gap test)", _gap_decision("Seesaw/step at sigma²=1", high)),
                ledger.Control(f"seesaw_large_batch at sigma²={large:g} in place of {small:g}: the variance-"
                               "dominated row of the figure (same opening-gap test)",
                               _gap_decision(f"Seesaw/cosine at sigma²={large:g}", fig[large]))]
    c = meta["config"]
    return ledger.Evidence(
        measured={"seesaw/step, sigma²=0.01, by B0": low, "seesaw/step, sigma²=1, by B0": high,
                  "B_noise_init sigma²=0.01": bn_low, "B_noise_init sigma²=1": bn_high,
                  "seesaw_large_batch: seesaw/cosine by sigma², B0": fig},
        predicted={"sigma²=0.01": "increasing in B0, >= 1.2 at the largest", "sigma²=1, B0=4": "~1",
                   "sigma²=1": "no opening gap"},
        tolerance="strictly increasing gap; >= 20% at the largest B0; sigma²=1 at B0=4 within 2% (exact "
                  "recursion, float64); the same opening-gap test must reject the sigma²=1 rows",
        decisions=decisions, controls=controls,
        notes="NSGD, 4 phases of 2^18 samples, nominal eta0=0.05, d=256 (against step decay); the figure "
              f"seesaw_large_batch: NSGD, d={c['d']}, {c['total_samples']} samples, cosine with 10% warmup "
              f"to {c['final_lr_frac']} vs Seesaw gamma={c['gamma']}. B_noise = tr H (sum l m + sigma²)/sum "
              "l² m at initialisation; it grows as the risk falls (the mean term sum l² m shrinks while "
              "sigma² stays), so B0 past it at init is not yet mean-dominated.")


LIMITS = {  # (shape, final_lr_frac, warmup_frac) -> the value of the limit
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
DISCRETE_TOL = 1e-3
GAMMAS = (1.1, 1.01, 1.001)


@ledger.claim("seesaw.serial_step_limit", paper=ledger.PaperValue(0.3634, "Lemma 1: 1 - 2/pi (quarter cosine)",
              measured=("discrete_gamma_1.001", "quarter_cosine,floor=0,warmup=0")),
              source="Seesaw Lemma 1 (1 - 2/pi); the 50%, 45%, 40.5% limits are our derivations, not the "
                     "paper's",
              statement="The serial-step reduction of the most aggressive ramp tends to 1 - 2/pi for a "
                        "quarter-cosine schedule, and to 50%, 45%, 40.5% for half-cosine to 0, to a 0.1 floor, "
                        "and with 10% warmup; analytically and from the discrete scheduler as gamma -> 1.")
def _check_serial_step_limit() -> ledger.Evidence:
    exact, discrete, errors, decisions = {}, {}, {}, []
    for (shape, f, w), want in LIMITS.items():
        key = f"{shape},floor={f},warmup={w}"
        got = serial_step_reduction_limit(shape, f, w)
        decisions.append(ledger.check(f"sympy limit, {key}", sp.simplify(got - want) == 0, str(got), str(want),
                                      "sympy: simplify(limit - value) == 0 (exact)"))
        exact[key] = str(got)
        errs = [abs(discrete_serial_step_reduction(shape, g, final_lr_frac=float(f), warmup_frac=float(w))
                    - float(want)) for g in GAMMAS]
        decisions += [ledger.compare(f"discrete error at gamma=1.001, {key}", errs[-1], "<", DISCRETE_TOL),
                      ledger.check(f"discrete error falls as gamma -> 1, {key}", errs[0] > errs[1] > errs[2],
                                   errs, "decreasing", "error at gamma 1.1 > 1.01 > 1.001 (float64)")]
        discrete[key] = discrete_serial_step_reduction(shape, 1.001, final_lr_frac=float(f),
                                                       warmup_frac=float(w))
        errors[key] = errs
    controls = []
    for (shape, f, w), (other, why) in LIMIT_NEIGHBOURS.items():
        err = abs(discrete[f"{shape},floor={f},warmup={w}"] - float(LIMITS[other]))
        controls.append(ledger.Control(
            f"discrete {shape}, floor={f}, warmup={w} at gamma=1.001 against the limit of {other} ({why})",
            ledger.compare("discrete error at gamma=1.001 against the neighbour's limit", err, "<",
                           DISCRETE_TOL)))
    return ledger.Evidence(
        measured={"sympy_limit": exact, "discrete_gamma_1.001": discrete,
                  "abs_error_gamma_1.1_1.01_1.001": errors},
        predicted={k: str(v) for k, v in LIMITS.items()},
        tolerance="sympy limit equal exactly; discrete error < 1e-3 at gamma=1.001 and decreasing in gamma "
                  "(float64); the same error test must reject each setting against its neighbour's limit",
        decisions=decisions, controls=controls,
        notes="Steps of the ramp = sample-mean of eta/eta0 (batch B0 eta0/eta); warmup runs at B0. Only "
              "1 - 2/pi is the paper's Lemma 1; 50%, 45%, 40.5% are derived here.")


PAPER_STEPS = {256: (12589, 7756), 128: (25178, 15524)}


@ledger.claim("seesaw.paper_step_counts", source="Seesaw Table 1 / Fig. 1, released scheduler",
              paper=ledger.PaperValue(0.36, "abstract: wall-clock time reduced by about 36% against cosine "
                                      "decay at equal FLOPs (150M-600M models); ours is the serial-step "
                                      "reduction at B0 = 256", ("reduction", "256")),
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
        decisions=[ledger.exact(f"(cosine, Seesaw) steps at B0={b}", tuple(int(x) for x in got[b]),
                                PAPER_STEPS[b]) for b in PAPER_STEPS],
        notes="Reductions ~38.4%, two points short of the gamma -> 1 limit of 40.5% (switch lag at gamma=1.1).",
        no_control="an exact integer identity: the released scheduler reproduces the paper's step counts or "
                   "it does not; there is no nearby case for the equality test to reject")


# ---------------------------------------------------------------------------------------------------
# AdamW language models (Fig. 1, 2, 3), decided on per-seed paired differences
# ---------------------------------------------------------------------------------------------------

LM_TOL = 0.01  # |loss / reference - 1| <= 1%: the paper's differences at or below the critical batch are <= 0.3%
STEP_RATIO = (0.55, 0.7)  # Seesaw / cosine serial steps (paper: 0.62; gamma -> 1 limit with warmup: 0.595)
PAIRED = ("decided on the 95% Student-t interval of the per-seed paired differences (statsmodels; holds "
          "inside, fails outside, else inconclusive)")


def lm_comparison(arrays) -> dict:
    """Per B0 and schedule of a ``seesaw_lm`` result (``sims.seesaw.run_lm``): per-seed final validation
    losses (nats/char), their mean and SE, serial steps, and the noise scale (mean over seeds of the cosine
    run's mid and end measurements). Seed i shares cosine's initialisation in every schedule (paired)."""
    kinds = [str(k) for k in np.asarray(arrays["schedules"]).tolist()]
    vl = np.asarray(arrays["val_loss"], np.float64)[..., -1]  # [n_b0, n_sched, n_seeds]
    out = {}
    for b, b0 in enumerate(np.asarray(arrays["batch_sizes"]).tolist()):
        row = {}
        for s, kind in enumerate(kinds):
            x = vl[b, s]
            row[kind] = {"per_seed": x, "loss": float(x.mean()), "steps": int(arrays["total_steps"][b, s]),
                         "loss_se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else 0.0}
        if "cosine" in row:
            row["noise_scale"] = float(np.mean(arrays["noise_scale"][b, kinds.index("cosine")]))
        out[int(b0)] = row
    return out


def lm_match_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.adam_lm_match`` from a ``seesaw_lm`` result (see that claim).

    Per B0 below the measured noise scale: Seesaw vs cosine by :func:`claims.ledger.paired` (|mean| <= 1%)
    and the step ratio in :data:`STEP_RATIO`; control: the fixed-lr ramp vs cosine by the same test.
    No B0 below the noise scale gives no decision ("inconclusive"). Source: Seesaw Fig. 1 / Table 1."""
    cmp = lm_comparison(arrays)
    rows, own, controls = {}, [], []
    for b0, r in cmp.items():
        if r["noise_scale"] <= b0:
            rows[b0] = {"noise_scale": r["noise_scale"], "note": "at or above the noise scale: not tested"}
            continue
        cos = r["cosine"]["per_seed"]
        d = ledger.paired(f"B0={b0}: Seesaw_i / cosine_i - 1", r["seesaw"]["per_seed"] / cos - 1, LM_TOL,
                          "within")
        step_ratio = r["seesaw"]["steps"] / r["cosine"]["steps"]
        own += [d, ledger.check(f"B0={b0}: Seesaw / cosine serial steps in [0.55, 0.7]",
                                STEP_RATIO[0] <= step_ratio <= STEP_RATIO[1], step_ratio, STEP_RATIO,
                                "exact step counts of the two schedules")]
        rows[b0] = {"noise_scale": r["noise_scale"], "cosine_loss": r["cosine"]["loss"],
                    "seesaw_loss": r["seesaw"]["loss"], "seesaw_vs_cosine": summary(d), "step_ratio": step_ratio}
        if "fixed_lr" in r:
            c = ledger.paired(f"B0={b0}: fixed-lr_i / cosine_i - 1", r["fixed_lr"]["per_seed"] / cos - 1, LM_TOL,
                              "within")
            controls.append(ledger.Control(
                f"B0={b0}: the fixed-lr ramp (alpha = 1, beta = gamma: alpha*sqrt(beta) = sqrt(gamma), off "
                "the line) against cosine, same |mean| <= 1% test", c))
    return ledger.Evidence(
        measured={f"B0={b}": v for b, v in rows.items()},
        predicted={"seesaw_vs_cosine": "|paired rel diff| <= 1%", "step_ratio": "~0.6 (paper 0.62)",
                   "fixed-lr ramp vs cosine": "outside 1% (rejected)"},
        tolerance=f"|seesaw_i/cosine_i - 1| <= 1% {PAIRED}; step ratio in [0.55, 0.7]; every B0 below the "
                  "measured noise scale; the fixed-lr ramp must fail the same test",
        decisions=own,
        stderr={f"B0={b}": {k: r[k]["loss_se"] for k in r if isinstance(r[k], dict)} for b, r in cmp.items()},
        notes=(setting + " " if setting else "") + "Noise scale = McCandlish B_simple in sequences, mean over "
              "seeds at mid and end of the cosine run." + ("" if own else " No B0 below the measured noise "
                                                                            "scale: nothing testable."),
        controls=controls,
        no_control="" if controls else "no B0 below the measured noise scale with a fixed-lr run: the control "
                                       "has nothing to run on")


def _lm_setting(meta, scale) -> str:
    c = meta["config"]
    return (f"{meta.get('config_path', 'paper_configs')} at {scale} scale ({c['n_seeds']} seeds, "
            f"{c['total_tokens']} tokens, d_model {c['d_model']}).")


@ledger.claim("seesaw.adam_lm_match", source="Seesaw Fig. 1 / Table 1 (AdamW language models)",
              paper=ledger.PaperValue(-0.0024, "Table 1, 150M B=128: Seesaw/cosine 3.0208/3.0282 - 1 (ours: toy LM)"),
              statement="A small transformer LM trained with AdamW: cosine vs Seesaw at equal tokens reach final "
                        "validation losses within 1% at batch sizes below the measured noise scale, with about "
                        "0.6x the serial steps.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="at quick CPU scale (2 seeds, about 5 tokens per parameter, loss still falling steeply) "
                  "Seesaw trails cosine by about 1% (seed-paired, when this was written: +0.91% at B0=8, seeds "
                  "+1.10% and +0.73%; +1.23% at B0=32, seeds +0.75% and +1.71%). With 2 seeds the 95% Student-t "
                  "interval is mean +- 12.7 SE ([-1.4%, +3.3%] and [-4.9%, +7.3%]), so the 1% bound cannot be "
                  "decided, nor can the off-line control (the fixed-lr ramp, +0.75% and +0.29% against cosine) "
                  "be rejected; the step ratio (0.63) holds. The earlier '2 paired SE' rule was wrong about 30% "
                  "of the time at 2 seeds. The paper trains at about 20 tokens per parameter, which the quick "
                  "scale cannot afford. At paper scale the paper's claim is that it holds; the ledger reports it "
                  "as not measured until the paper-scale seesaw_lm result exists.",
              reads=("seesaw_lm",))
def _check_adam_lm_match(r: ledger.Reads) -> ledger.Evidence:
    arrays, meta = r["seesaw_lm"]
    return lm_match_evidence(arrays, _lm_setting(meta, r.scale))


def fixed_lr_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.fixed_lr_ramp_worse`` from a ``seesaw_lm`` result (see that claim).

    Per B0 at or above the measured noise scale (beyond the critical batch): ``fixed_i / seesaw_i - 1``
    decided by :func:`claims.ledger.paired` (mean > 0); control: cosine in place of the fixed-lr ramp,
    which the paper finds better than Seesaw there, by the same test. Below the noise scale nothing is
    decided (reported only); no B0 at or above it gives no decision ("inconclusive"). Source: Seesaw Fig. 3."""
    cmp = lm_comparison(arrays)
    rows, own, controls = {}, [], []
    for b0, r in cmp.items():
        if "fixed_lr" not in r or "seesaw" not in r:
            continue
        see = r["seesaw"]["per_seed"]
        d = ledger.paired(f"B0={b0}: fixed-lr_i / Seesaw_i - 1", r["fixed_lr"]["per_seed"] / see - 1, 0.0,
                          "above")
        if r["noise_scale"] > b0:
            rows[b0] = {"noise_scale": r["noise_scale"], "fixed_vs_seesaw (not decided)": summary(d),
                        "note": "below the noise scale: outside Fig. 3's hypothesis, not tested"}
            continue
        c = ledger.paired(f"B0={b0}: cosine_i / Seesaw_i - 1", r["cosine"]["per_seed"] / see - 1, 0.0, "above")
        own.append(d)
        controls.append(ledger.Control(f"B0={b0}: cosine in place of the fixed-lr ramp (decays the lr; the "
                                       "paper finds it better than Seesaw here), same 'worse than Seesaw' test", c))
        rows[b0] = {"noise_scale": r["noise_scale"], "fixed_vs_seesaw": summary(d),
                    "fixed_lr_loss": r["fixed_lr"]["loss"], "seesaw_loss": r["seesaw"]["loss"],
                    "cosine_loss": r["cosine"]["loss"]}
    return ledger.Evidence(
        measured={f"B0={b}": v for b, v in rows.items()},
        predicted={"fixed_vs_seesaw": "> 0 at every B0 at or above the noise scale",
                   "cosine_vs_seesaw": "not > 0 (rejected)"},
        tolerance=f"fixed_i/seesaw_i - 1 > 0 {PAIRED}, at B0 >= the measured noise scale; cosine must fail "
                  "the same test",
        decisions=own,
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
                  "different from Seesaw (seed-paired -0.17% and -0.93% at B0 = 8 and 32). At paper scale the "
                  "paper's claim is that it holds; the ledger reports it as not measured until the paper-scale "
                  "seesaw_lm result exists.",
              reads=("seesaw_lm",))
def _check_fixed_lr_ramp_worse(r: ledger.Reads) -> ledger.Evidence:
    arrays, meta = r["seesaw_lm"]
    return fixed_lr_evidence(arrays, _lm_setting(meta, r.scale))


def adam_line_evidence(arrays, setting: str = "") -> ledger.Evidence:
    """The evidence of ``seesaw.adam_sqrt_line`` from a ``seesaw_adam_line`` result (see that claim).

    Member 0 is the base. Members with the base's ``alpha*sqrt(beta)`` and ``alpha >= sqrt(beta)`` are
    the claim's own cases, decided against the base by :func:`claims.ledger.paired` (|mean| <= 1%);
    members off the line are controls that must fail the same test; line members with
    ``alpha < sqrt(beta)`` are reported only (outside Lemma 4's stable range; the paper reports they
    degrade). A base B0 at or above the measured noise scale gives no decision ("inconclusive":
    Corollary 1 assumes variance domination). Source: Seesaw Fig. 2."""
    alphas, betas = np.asarray(arrays["alphas"], np.float64), np.asarray(arrays["betas"], np.float64)
    final = np.asarray(arrays["final_val_loss"], np.float64)
    inv = alphas * np.sqrt(betas)
    b0, ns = int(arrays["b0"]), float(np.mean(arrays["noise_scale"][0]))
    steps = np.asarray(arrays["total_steps"]).tolist()
    base = member_name((alphas[0], betas[0]))
    rows = {base: {"loss": float(final[0].mean()), "steps": steps[0], "alpha*sqrt(beta)": float(inv[0])}}
    own, controls = [], []
    for i in range(1, alphas.size):
        name = member_name((alphas[i], betas[i]))
        d = ledger.paired(f"{name}_i / {base}_i - 1", final[i] / final[0] - 1, LM_TOL, "within")
        row = {"vs_base": summary(d), "loss": float(final[i].mean()), "steps": steps[i],
               "alpha*sqrt(beta)": float(inv[i])}
        if not np.isclose(inv[i], inv[0], rtol=1e-9):
            controls.append(ledger.Control(f"{name}: alpha*sqrt(beta) = {inv[i]:.4g}, off the line "
                                           f"(alpha*beta = {alphas[i] * betas[i]:.4g}); same |mean| <= 1% test", d))
            row["role"] = "control (off the line)"
        elif alphas[i] >= np.sqrt(betas[i]) * (1 - 1e-9):
            own.append(d)
            row["role"] = "on the line, alpha >= sqrt(beta)"
        else:
            row["role"] = "on the line, alpha < sqrt(beta): reported, not decided"
        rows[name] = row
    testable = ns > b0
    return ledger.Evidence(
        measured={"B0": b0, "noise_scale_base": ns} | rows,
        predicted={"on the line": "|loss/base - 1| <= 1%", "off the line": "outside 1% (rejected)"},
        tolerance=f"|member_i/base_i - 1| <= 1% {PAIRED}; B0 below the measured noise scale; every off-line "
                  "member must fail the same test",
        decisions=own if testable else [],
        notes=(setting + " " if setting else "") + "Members switch where the reference cosine halves (gamma = 2); "
              "seed i has the same initialisation in every member." + (
                  "" if testable else f" B0 = {b0} is not below the measured noise scale {ns:.3g}: outside "
                                      "Corollary 1's hypothesis, nothing decided."),
        controls=controls,
        no_control="" if controls else "the result has no member off the alpha*sqrt(beta) line to run the "
                                       "control on")


@ledger.claim("seesaw.adam_sqrt_line", source="Seesaw Fig. 2 (150M AdamW, the alpha*sqrt(beta) = 2 line), "
                                              "Corollary 1",
              statement="AdamW phase schedules with equal alpha*sqrt(beta) (and alpha >= sqrt(beta)), switching "
                        "where the reference cosine halves, reach final validation losses within 1% of the "
                        "step-decay base (2,1) below the noise scale; off-line members (alpha*beta = 2, or "
                        "alpha*sqrt(beta) = 2*sqrt(2)) do not.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="at quick CPU scale (B0 = 8, below the measured noise scale of about 114; 3 seeds; about 5 "
                  "tokens per parameter, loss still falling steeply) the final loss follows the serial step count "
                  "more than the alpha*sqrt(beta) invariant. Seed-paired against the base (2,1) (782 steps), when "
                  "this was written: (2^3/4, 2^1/2) (640 steps) +0.38%, 95% t interval [-0.09%, 0.85%], holds; "
                  "Seesaw (sqrt2, 2) (563 steps) +1.07% [0.70%, 1.43%], undecided at the 1% bound; the off-line "
                  "(1, 2) (alpha*beta = 2, 563 steps) +1.11% [0.56%, 1.66%], not distinguishable from Seesaw, so "
                  "that control is not rejected; the off-line (2, 2) +1.61% [1.24%, 1.98%] is rejected. The "
                  "paper's Fig. 2 members with alpha >= sqrt(beta) differ by <= 0.25% at 150M; at paper scale "
                  "the claim is expected to hold, reported as not measured until the paper-scale "
                  "seesaw_adam_line result exists.",
              reads=("seesaw_adam_line",))
def _check_adam_sqrt_line(r: ledger.Reads) -> ledger.Evidence:
    arrays, meta = r["seesaw_adam_line"]
    return adam_line_evidence(arrays, _lm_setting(meta, r.scale))
