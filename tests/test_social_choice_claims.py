"""The social choice claims decide on what they are given: fabricated figure results (no fit, no sweep)
where the answer is known, handed to the registered checks as :class:`claims.ledger.Reads`. For each
claim decided from a figure: a result where the theorem holds gives "holds", one where it is violated
gives "fails", and one at the threshold (or with an undecided measurement) gives "inconclusive"; the
controls are the check's own test on a case just outside the hypothesis."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

import claims.social_choice  # noqa: F401 - registers the claims
from claims import ledger
from sims.social_choice import _COVERAGE_SEEDS, _DEGREE_SEEDS, _LCPO_SEEDS, _POLY_SEEDS
from theory import social_choice as sc


def _decide(claim_id: str, figure: str, arrays: dict, meta: dict) -> ledger.Evidence:
    return ledger.REGISTRY[claim_id].decide(ledger.Reads({figure: ledger.FigureResult(arrays, meta)}))


# --------------------------------------------------------------------------------------------------
# Ge's instance: exact and certified, so no undecided zone; holds, fails, and a control accepted
# --------------------------------------------------------------------------------------------------

GE_META = {"config": {"p": 0.6, "eps": 0.01, "delta": 2.0, "voter": [1.0, 1.0], "hinge_counts": [3, 1],
                      "hinge_eps": "1/100", "control_eps": 0.05}, "seed_axes": {}}


def _ge(**over) -> dict:
    inst = sc.ge_instance(0.6, 0.01, 2.0)
    rank = np.array([0, 3, 1, 4, 5, 2])
    a = {"names": np.asarray(inst.names), "candidates": inst.candidates, "voters": inst.voters,
         "pareto_pair": np.asarray(inst.pareto_pair), "losses": np.array(["btl", "hinge", "exp"]),
         "theta": np.array([[0.259133, 0.023988], [1.0, 0.0], [0.3, 0.02]]),
         "rankings": np.array([[0, 3, 1, 4, 2, 5]] * 3), "margin": np.array([-2.1e-3, -1e-2, -1e-3]),
         "radius_smooth": np.array([1e-9, 1e-9]), "violates": np.array([True, True, True]),
         "hinge_inf_exact": np.array(["2003/50", "6156/149"]), "pmc_feasible": np.asarray(True),
         "pmc_ranking": rank, "voter_ranking": rank,
         "variant_params": np.array([[0.75, 0.1, 0.5, 1.0, 3.0], [0.75, 0.01, 2.0, 1.0, 1.0]]),
         "variant_margin": np.array([-0.067, -0.007]), "variant_violates": np.array([True, True]),
         "control_margin": np.array([2.5e-3, 1.3e-3]), "control_certified": np.array([True, True]),
         "control_violates": np.array([False, False]), "control_hinge_counts": np.array([[3, 2], [2, 1]]),
         "control_hinge_gap_exact": np.array(["0", "0"])}
    a.update(over)
    return a


def test_ge_violation_holds_on_the_certified_instance():
    ev = _decide("social_choice.ge_po_violation", "social_choice_ge_instance", _ge(), GE_META)
    assert ev.verdict == "holds" and len(ev.controls) == 5 and all(c.rejected for c in ev.controls)


@pytest.mark.parametrize("over", [
    {"violates": np.array([False, True, True])},  # BTL not certified to reverse the pair
    {"hinge_inf_exact": np.array(["2003/50", "2003/50"])},  # no hinge gap
    {"variant_violates": np.array([True, False])},
    {"voter_ranking": np.array([0, 3, 1, 4, 2, 5])},  # PMC ranking is not voter (1, 1)'s
])
def test_ge_violation_fails_when_one_part_of_the_theorem_is_violated(over):
    ev = _decide("social_choice.ge_po_violation", "social_choice_ge_instance", _ge(**over), GE_META)
    assert ev.verdict == "fails"


def test_ge_violation_fails_when_a_control_is_accepted():
    """A control that also "violates" (eps = 0.05, or hinge counts with p <= 2/3 and a positive gap) means
    the test cannot tell the construction from its neighbours."""
    for over in ({"control_violates": np.array([True, False])},
                 {"control_hinge_gap_exact": np.array(["0", "1/7"])}):
        ev = _decide("social_choice.ge_po_violation", "social_choice_ge_instance", _ge(**over), GE_META)
        assert ev.verdict == "fails" and not all(c.rejected for c in ev.controls)


# --------------------------------------------------------------------------------------------------
# Polynomial rewards: a rate above 0 (Wilson) and certified witnesses
# --------------------------------------------------------------------------------------------------

POLY_META = {"config": {"n_base": 12, "box": 2.0, "eps": 0.05, "p_major": 0.9}, "seed_axes": dict(_POLY_SEEDS)}


def _poly(k2: int = 30, k3: int = 20, n: int = 200, ex2: int = 1, ex7_unr: int = 0, ex7_unr_unc: int = 0,
          unr: int = 0) -> dict:
    """n instances whose linear fit is certified Pareto optimal; the first k2 (k3) violate at degree 2 (3)."""
    valid = np.ones((n, 3), bool)
    violated = np.zeros((n, 3), bool)
    violated[:k2, 1] = True
    violated[:k3, 2] = True
    ex = [-1, 0 if k2 else -1, 0 if k3 else -1]
    return {"degrees": np.array([1, 2, 3]), "valid": valid, "violated": violated,
            "uncertain": np.zeros((n, 3), bool), "pair_violated": violated.copy(),
            "pair_margin": np.where(violated, -0.01, 0.01), "instances": np.zeros((n, 13, 2)),
            "copy_of": np.zeros(n, int), "ex7_violations": np.array([0, 1, 0]),
            "ex7_uncertain": np.array([0, 0, 0]), "ex7_min_margin": np.array([0.0717, -0.0323, 1.52]),
            "example": np.array(ex), "example_violations": np.array([-1, ex2, 1]),
            "example_min_margin": np.array([np.nan, -0.015, -0.4]), "example_radius": np.array([np.nan, 1e-9, 1e-9]),
            "example_linear_violations": np.array([-1, 0, 0]), "example_linear_uncertain": np.array([-1, 0, 0]),
            "example_linear_min_margin": np.array([np.nan, 0.002, 0.058]),
            "example_unrestricted_violations": np.array([-1, unr, 0]),
            "example_unrestricted_uncertain": np.array([-1, 0, 0]),
            "example_unrestricted_min_margin": np.array([np.nan, 0.01, 0.03]),
            "ex7_unrestricted": np.array([ex7_unr, ex7_unr_unc]), "ex7_unrestricted_min_margin": np.asarray(0.02)}


def test_polynomial_holds_with_certified_violations_at_degrees_2_and_3():
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(), POLY_META)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    rate = [d for d in ev.decisions if d.name.startswith("degree 2")][0]
    # the rate is successes / n, the same correctly rounded float64 division as 30 / 200: exact
    assert rate.statistic == pytest.approx(30 / 200, rel=0, abs=0) and "Wilson" in rate.test


def test_polynomial_fails_when_a_witness_is_not_certified_or_the_linear_fit_violates():
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex2=0), POLY_META)
    assert ev.verdict == "fails"
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex7_unr=1), POLY_META)
    assert ev.verdict == "fails" and not ev.controls[0].rejected  # the control (ex7, unrestricted) accepted
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(unr=1), POLY_META)
    assert ev.verdict == "fails" and not ev.controls[1].rejected  # a witness reversed by the unrestricted reward


def test_polynomial_is_inconclusive_at_a_rate_of_zero_or_an_uncertified_control():
    """No violation at degree 3 sits on the threshold (rate 0): the Wilson interval cannot exclude 0 nor
    fall below it; an ex7 degree-1 pair within its certificate leaves the control undecided."""
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(k3=0), POLY_META)
    assert ev.verdict == "inconclusive"


def test_dose_response_fails_when_arc_coverage_also_restores_po():
    """A control accepted: coverage on an arc only (not rotation invariant) that fixes the pair and enters the
    cone from the same alphas means the check cannot tell uniform coverage from its neighbours."""
    ok = _coverage()
    arc = {**ok, "dose_arc_pair_margin": np.stack([ok["alphas"] - 0.0314] * 2),
           "dose_arc_cone_margin": np.stack([ok["alphas"] - 0.26] * 2)}
    ev = _decide("social_choice.coverage_dose_response", "social_choice_coverage", arc, COV_META)
    assert ev.verdict == "fails" and all(d.decision == "holds" for d in ev.decisions)
    assert not any(c.rejected for c in ev.controls)
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex7_unr_unc=1),
                 POLY_META)
    assert ev.verdict == "inconclusive" and ev.controls[0].decision.decision == "inconclusive"


# --------------------------------------------------------------------------------------------------
# Finite samples: the N^(-1/2) rate (z-test on the WLS slope) and cone membership counts
# --------------------------------------------------------------------------------------------------

N = np.array([50, 100, 300, 1000, 3000, 10000, 30000])
NN = np.array([50, 100, 300])
COV_META = {"config": {"dose_resolution": 96}, "seed_axes": dict(_COVERAGE_SEEDS)}


def _coverage(exponent: float = -0.5, S: int = 64, outside_big: int = 0, noise: float = 0.3, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    ang = 40.0 * N[None, :] ** exponent * rng.lognormal(0.0, noise, (S, N.size))
    in_cone = np.ones((S, N.size))
    in_cone[:3, 0] = 0.0  # three fits outside the cone at N = 50
    in_cone[:outside_big, -1] = 0.0
    nar = np.ones((S, NN.size))
    alphas = np.linspace(0, 1, 41) ** 2
    a = {"sample_sizes": N, "narrow_sample_sizes": NN, "voters": np.eye(3), "predicted_c_deg": np.asarray(40.0),
         "angle_deg": ang, "angle_v1_deg": 20.0 + rng.normal(0, 0.5, (S, N.size)), "in_cone": in_cone,
         "cone_margin": in_cone - 0.5, "refused": np.zeros((S, N.size)),
         "narrow_angle_deg": np.ones((S, NN.size)), "narrow_angle_v1_deg": np.ones((S, NN.size)),
         "narrow_in_cone": nar, "narrow_cone_margin": nar, "narrow_refused": np.zeros((S, NN.size)),
         "alphas": alphas, "dose_theta": np.tile([0.935167, -0.3955], (alphas.size, 1)),
         "dose_pair_margin": alphas - 0.0314, "dose_cone_margin": alphas - 0.26, "alpha_fix": np.asarray(0.0314),
         "alpha_po": np.asarray(0.26), "dose_p": np.asarray(0.9), "dose_s": np.asarray(0.01),
         # arc-only coverage: the contested quadrant never fixes the pair; the circle minus 30 degrees fixes
         # it but leaves theta outside the cone near alpha = 1
         "dose_arcs": np.array([[-90.0, 0.0], [-90.0, 60.0]]),
         "dose_arc_pair_margin": np.stack([-0.05 - 0.4 * alphas, alphas - 0.06]),
         "dose_arc_cone_margin": np.stack([-0.39 - 0.3 * alphas, 0.03 - 0.4 * (alphas - 0.6) ** 2 - 0.1 * alphas])}
    return a


def test_rate_holds_at_minus_one_half_and_is_stable():
    a = _coverage()
    ev = _decide("social_choice.finite_sample_rate", "social_choice_coverage", a, COV_META)
    assert ev.verdict == "holds" and ev.controls[0].rejected
    c = ledger.REGISTRY["social_choice.finite_sample_rate"]
    st = ledger.stability(c, ledger.Reads({"social_choice_coverage": ledger.FigureResult(a, COV_META)}), ev)
    assert st["total"] == 8 and not st["fragile"]  # 64 seeds: 8 disjoint folds


def test_rate_fails_at_a_slower_rate_or_with_a_fit_outside_the_cone_at_large_n():
    ev = _decide("social_choice.finite_sample_rate", "social_choice_coverage", _coverage(exponent=-0.2), COV_META)
    assert ev.verdict == "fails" and ev.decisions[0].decision == "fails"
    ev = _decide("social_choice.finite_sample_rate", "social_choice_coverage", _coverage(outside_big=1), COV_META)
    assert ev.verdict == "fails" and ev.decisions[0].decision == "holds"


def test_rate_is_inconclusive_at_the_tolerance_edge():
    """Slope -0.6: |slope + 1/2| sits on the tolerance 0.1, within 3 SE either way."""
    ev = _decide("social_choice.finite_sample_rate", "social_choice_coverage", _coverage(exponent=-0.6), COV_META)
    assert ev.verdict == "inconclusive" and abs(ev.decisions[0].margin_se) < 3


# --------------------------------------------------------------------------------------------------
# Dose-response: deterministic quadrature; an undecided (non-finite) margin is inconclusive
# --------------------------------------------------------------------------------------------------


def test_dose_response_holds_fails_and_is_inconclusive():
    ok = _coverage()
    ev = _decide("social_choice.coverage_dose_response", "social_choice_coverage", ok, COV_META)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    off = {**ok, "alpha_fix": np.asarray(0.0320), "dose_pair_margin": ok["alphas"] - 0.0320}
    assert _decide("social_choice.coverage_dose_response", "social_choice_coverage", off, COV_META).verdict == "fails"
    never = {**ok, "dose_cone_margin": ok["alphas"] - 2.0}  # theta never enters the cone
    assert _decide("social_choice.coverage_dose_response", "social_choice_coverage", never, COV_META).verdict == "fails"
    pm = ok["dose_pair_margin"].copy()
    pm[0] = np.nan  # the fit at alpha = 0 diverged: not measured
    ev = _decide("social_choice.coverage_dose_response", "social_choice_coverage", {**ok, "dose_pair_margin": pm},
                 COV_META)
    assert ev.verdict == "inconclusive"


# --------------------------------------------------------------------------------------------------
# Theorem 4.1 for every degree: certified reversals per degree; the unrestricted reward as control
# --------------------------------------------------------------------------------------------------

DEG_META = {"config": {"delta": 0.02, "p_major": 0.9}, "seed_axes": dict(_DEGREE_SEEDS)}


def _degrees(rev=(3, 2, 2, 4), unr=0, unc=0, n: int = 24) -> dict:
    D = len(rev)
    z = lambda dt=int: np.zeros((n, D), dt)
    pr = z(bool)
    for i, k in enumerate(rev):
        pr[:k, i] = True
    ur = z()
    ur[0, 0] = unr
    pu = z(bool)
    pu[-1, :] = unc > 0
    return {"degrees": np.arange(1, D + 1), "valid": np.ones((n, D), bool),
            "pair_margin": np.where(pr, -0.05, 0.05), "pair_reversed": pr, "pair_uncertain": pu,
            "po_reversed": pr.astype(int), "po_uncertain": z(), "pmc_reversed": 3 * pr.astype(int),
            "unr_pair_margin": np.full((n, D), 0.05), "unr_po_reversed": ur, "unr_po_uncertain": z()}


def test_theorem41_sweep_holds_fails_and_is_inconclusive():
    ev = _decide("social_choice.theorem41_degree_sweep", "social_choice_poly_degrees", _degrees(), DEG_META)
    assert ev.verdict == "holds" and len(ev.controls) == 4 and all(c.rejected for c in ev.controls)
    # a degree with no certified reversal and every pair certified the right way round: fails
    ev = _decide("social_choice.theorem41_degree_sweep", "social_choice_poly_degrees", _degrees((3, 0, 2, 4)), DEG_META)
    assert ev.verdict == "fails"
    # none certified but a pair within its certificate: undecided
    ev = _decide("social_choice.theorem41_degree_sweep", "social_choice_poly_degrees",
                 _degrees((3, 0, 2, 4), unc=1), DEG_META)
    assert ev.verdict in ("fails", "inconclusive")  # the PMC decision at degree 2 has no pair to wait on
    # the unrestricted reward also reversing a Pareto pair: control accepted
    ev = _decide("social_choice.theorem41_degree_sweep", "social_choice_poly_degrees", _degrees(unr=1), DEG_META)
    assert ev.verdict == "fails" and not ev.controls[0].rejected


# --------------------------------------------------------------------------------------------------
# LCPO on profiles without a majority voter: PO, PMC, majority consistency, winner monotonicity
# --------------------------------------------------------------------------------------------------

LCPO_META = {"config": {}, "seed_axes": dict(_LCPO_SEEDS)}


def _lcpo(n: int = 40, po=0, pmc_fail=0, abl=5, maj_miss=0, plur_miss=6, raise_changed=0, lower_changed=9,
          cycles=4) -> dict:
    z = lambda dt=int: np.zeros(n, dt)
    a = {"family": np.r_[np.zeros(n // 2, int), np.ones(n - n // 2, int)], "families": np.array(["generic",
         "compromise"]), "n": np.full(n, 6), "k": np.full(n, 3), "max_weight": np.full(n, 0.4),
         "po_violations": z(), "pmc_applies": np.r_[np.ones(n // 2, bool), np.zeros(n - n // 2, bool)],
         "pmc_holds": np.ones(n, bool), "cycle": z(bool), "pmc_infeasible": z(bool),
         "ablation_po_violations": z(), "ablation_differs": z(bool), "ablation_pmc_holds": np.ones(n, bool),
         "lcpo_top": z(), "majority_top": np.r_[np.zeros(n // 2, int), -np.ones(n - n // 2, int)],
         "plurality_top": z(), "plurality_share": np.full(n, 0.4), "raises": np.ones(n, int),
         "raise_changed": z(), "lowers": np.ones(n, int), "lower_changed": z()}
    a["po_violations"][:po] = 1
    a["pmc_holds"][:pmc_fail] = False
    a["ablation_po_violations"][-abl:] = 1 if abl else 0
    a["cycle"][-cycles:] = True if cycles else False
    a["lcpo_top"][:maj_miss] = 1
    a["plurality_top"][-plur_miss:] = 2 if plur_miss else 0
    a["raise_changed"][:raise_changed] = 1
    a["lower_changed"][-lower_changed:] = 1 if lower_changed else 0
    return a


@pytest.mark.parametrize("claim", ["social_choice.lcpo_axioms", "social_choice.lcpo_majority_consistency",
                                   "social_choice.lcpo_winner_monotonicity"])
def test_lcpo_claims_hold_on_an_axiomatic_result(claim):
    ev = _decide(claim, "social_choice_lcpo", _lcpo(), LCPO_META)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


@pytest.mark.parametrize("claim,over", [
    ("social_choice.lcpo_axioms", {"po": 1}), ("social_choice.lcpo_axioms", {"pmc_fail": 1}),
    ("social_choice.lcpo_majority_consistency", {"maj_miss": 1}),
    ("social_choice.lcpo_winner_monotonicity", {"raise_changed": 1}),
])
def test_lcpo_claims_fail_when_the_axiom_is_violated(claim, over):
    assert _decide(claim, "social_choice_lcpo", _lcpo(**over), LCPO_META).verdict == "fails"


@pytest.mark.parametrize("claim,over", [
    ("social_choice.lcpo_axioms", {"abl": 0}),  # the ablation never reverses a Pareto pair
    ("social_choice.lcpo_majority_consistency", {"plur_miss": 0}),  # plurality always first
    ("social_choice.lcpo_winner_monotonicity", {"lower_changed": 0}),  # lowering never changes the winner
])
def test_lcpo_claims_fail_when_the_control_is_accepted(claim, over):
    ev = _decide(claim, "social_choice_lcpo", _lcpo(**over), LCPO_META)
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_lcpo_axioms_inconclusive_without_cycles():
    """Draws that never reach a majority cycle leave Copeland unexercised: undecided, not a failure."""
    ev = _decide("social_choice.lcpo_axioms", "social_choice_lcpo", _lcpo(cycles=0), LCPO_META)
    assert ev.verdict == "inconclusive"


# --------------------------------------------------------------------------------------------------
# Exact claims with no figure: the majority loss (Ge Theorem 3.6) and the norm-budget example
# --------------------------------------------------------------------------------------------------


def test_majority_loss_pmc_holds_and_fails_when_a_gap_closes(monkeypatch):
    from fractions import Fraction
    c = ledger.REGISTRY["social_choice.majority_loss_pmc"]
    assert c.decide(ledger.Reads({})).verdict == "holds"
    real = sc.pmc_gaps
    monkeypatch.setattr(sc, "pmc_gaps", lambda X, V, k, majority_loss: (
        (Fraction(0), [(0, 1, Fraction(0))]) if majority_loss else real(X, V, k, majority_loss=False)))
    assert c.decide(ledger.Reads({})).verdict == "fails"


def test_norm_budget_holds_and_fails_when_c_is_ranked_above_b(monkeypatch):
    import dataclasses
    c = ledger.REGISTRY["social_choice.norm_budget_example"]
    assert c.decide(ledger.Reads({})).verdict == "holds"
    real = sc.unit_norm_fit
    monkeypatch.setattr(sc, "unit_norm_fit", lambda *a: dataclasses.replace(real(*a), margin_cb_bracket=0.01))
    assert c.decide(ledger.Reads({})).verdict == "fails"


def test_ge_c1_holds_and_fails_when_a_fact_breaks_or_the_control_is_accepted(monkeypatch):
    c = ledger.REGISTRY["social_choice.ge_c1_fails_po"]
    ev = c.decide(ledger.Reads({}))
    assert ev.verdict == "holds" and all(k.rejected for k in ev.controls)
    real_facts, real_key = sc.c1_construction_facts, sc.c_star_top_certificate
    monkeypatch.setattr(sc, "c1_construction_facts", lambda *a: {**real_facts(*a), "same_majority_graph": False})
    assert c.decide(ledger.Reads({})).verdict == "fails"
    monkeypatch.setattr(sc, "c1_construction_facts", real_facts)
    monkeypatch.setattr(sc, "c_star_top_certificate", lambda s: {**real_key(Fraction(1, 5)), "theta": [1] * 4,
                                                                 "min_margin": 0})
    ev = c.decide(ledger.Reads({}))
    assert ev.verdict == "fails" and not ev.controls[0].rejected  # s = 3/10 "cannot be first": accepted
