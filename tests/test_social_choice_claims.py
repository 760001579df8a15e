"""The social choice claims decide on what they are given: fabricated figure results (no fit, no sweep)
where the answer is known, handed to the registered checks as :class:`claims.ledger.Reads`. For each
claim decided from a figure: a result where the theorem holds gives "holds", one where it is violated
gives "fails", and one at the threshold (or with an undecided measurement) gives "inconclusive"; the
controls are the check's own test on a case just outside the hypothesis."""

from __future__ import annotations

import numpy as np
import pytest

import claims.social_choice  # noqa: F401 - registers the claims
from claims import ledger
from sims.social_choice import _COVERAGE_SEEDS, _POLY_SEEDS
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


def _poly(k2: int = 30, k3: int = 20, n: int = 200, ex2: int = 1, ex7_lin: int = 0, ex7_lin_unc: int = 0) -> dict:
    """n instances whose linear fit is certified Pareto optimal; the first k2 (k3) violate at degree 2 (3)."""
    valid = np.ones((n, 3), bool)
    violated = np.zeros((n, 3), bool)
    violated[:k2, 1] = True
    violated[:k3, 2] = True
    ex = [-1, 0 if k2 else -1, 0 if k3 else -1]
    return {"degrees": np.array([1, 2, 3]), "valid": valid, "violated": violated,
            "uncertain": np.zeros((n, 3), bool), "pair_violated": violated.copy(),
            "pair_margin": np.where(violated, -0.01, 0.01), "instances": np.zeros((n, 13, 2)),
            "copy_of": np.zeros(n, int), "ex7_violations": np.array([ex7_lin, 1, 0]),
            "ex7_uncertain": np.array([ex7_lin_unc, 0, 0]), "ex7_min_margin": np.array([0.0717, -0.0323, 1.52]),
            "example": np.array(ex), "example_violations": np.array([-1, ex2, 1]),
            "example_min_margin": np.array([np.nan, -0.015, -0.4]), "example_radius": np.array([np.nan, 1e-9, 1e-9]),
            "example_linear_violations": np.array([-1, 0, 0]), "example_linear_uncertain": np.array([-1, 0, 0]),
            "example_linear_min_margin": np.array([np.nan, 0.002, 0.058])}


def test_polynomial_holds_with_certified_violations_at_degrees_2_and_3():
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(), POLY_META)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    rate = [d for d in ev.decisions if d.name.startswith("degree 2")][0]
    assert rate.statistic == pytest.approx(30 / 200) and "Wilson" in rate.test


def test_polynomial_fails_when_a_witness_is_not_certified_or_the_linear_fit_violates():
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex2=0), POLY_META)
    assert ev.verdict == "fails"
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex7_lin=1), POLY_META)
    assert ev.verdict == "fails" and not ev.controls[0].rejected  # the control (ex7 at degree 1) accepted


def test_polynomial_is_inconclusive_at_a_rate_of_zero_or_an_uncertified_control():
    """No violation at degree 3 sits on the threshold (rate 0): the Wilson interval cannot exclude 0 nor
    fall below it; an ex7 degree-1 pair within its certificate leaves the control undecided."""
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(k3=0), POLY_META)
    assert ev.verdict == "inconclusive"
    ev = _decide("social_choice.polynomial_po_violation", "social_choice_polynomial", _poly(ex7_lin_unc=1),
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
         "alpha_po": np.asarray(0.26), "dose_p": np.asarray(0.9), "dose_s": np.asarray(0.01)}
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
