"""Neural collapse and forgetting (Lanzillotta et al., ICLR 2026), the rate claims: Theorem 3 / Corollary 2
(the SNR decays as Theta(r^2) in the replay ratio) and Theorem 2 (the perpendicular energy decays as
upsilon^(2 (t - t0))), each decided by its registered check on a hand-built result whose answer is known,
with the controls it must reject. Split from test_nc_forgetting_claims.py, whose toy results it reuses."""

from __future__ import annotations

import numpy as np
import pytest
from test_nc_forgetting_claims import NC_AXES, NC_CONFIG, noise, subspace_nc

from claims import ledger
from claims import nc_forgetting as C


# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "roundoff_f64": (1e-12, "float64 closed forms on fabricated results: means over <= 4 old tasks, logs, a "
                            "5-point polyfit slope, 0.9^t for t <= 10, a log difference divided by log 0.9: "
                            "tens of roundings of 1.1e-16, amplified <= 20x by the cancellation; measured "
                            "<= 1.1e-15"),
    "one_step_exponent": (2e-3, "the end exponent is a one-step difference, 2 / (1 + u) at t = T - 1/2 rather "
                                "than T: off by |d/dt 2 / (1 + u_t)| / 2 = 1.05e-3 at u_T = 0.995^400 (measured "
                                "1.05e-3), plus the claim's rounding to 4 decimals (5e-5); the rival exponent "
                                "1 is 0.76 away"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


RATE_CONFIG = {**NC_CONFIG, "replay_ratio": 0.5}


def test_r2_exponent_two_points_against_the_formula_by_hand():
    """pi = 1/2 and 1/3 (r = 1 and 1/2) at delta = 1, u = 0: SNR = r^2 / (r^2 + 1) = 1/2 and 1/5, so the
    slope over the two points is log(5/2) / log 2; at delta = 0 the SNR is r^2: slope exactly 2."""
    assert C.r2_exponent([0.5, 1 / 3], 1.0, 0.0) == pytest.approx(np.log2(2.5), rel=TOL["roundoff_f64"])
    assert C.r2_exponent(C.replay_fractions(0.5), 0.0, 0.0) == pytest.approx(2.0, abs=TOL["roundoff_f64"])
    np.testing.assert_allclose(C.replay_fractions(0.5), [0.5, 0.25, 0.125, 0.0625, 0.03125],
                               rtol=0, atol=0)


def test_end_exponent_and_perp_energy_on_an_exact_geometric_decay():
    t = np.arange(11)
    assert C.end_exponent(0.9 ** (2 * t), 0.9) == pytest.approx(2.0, rel=TOL["roundoff_f64"])
    assert C.end_exponent(0.9 ** t, 0.9) == pytest.approx(1.0, rel=TOL["roundoff_f64"])
    perp = np.ones((4, 11, 3))
    perp[0] = 3.0 * 0.9 ** t[:, None]
    perp[0, :, 2] = 0.0  # a probe inside S: left out
    np.testing.assert_allclose(C.perp_energy({"linear_perp": perp, "linear_cases": np.array(
        ["collapsed", "momentum", "two_layer", "not_collapsed"])}), 0.81 ** t, rtol=TOL["roundoff_f64"])


def subspace_rates(trained: float = 0.1, old: float = 100.0, per_step: float = 0.995, steps: int = 200) -> dict:
    """A subspace result for the rate claims: the trained-on data's NC1 at every task's last snapshot =
    ``trained`` (per-seed factor exp(noise)), the old classes' NC1 (0%, sessions 1-4) = ``old``, and the
    linear model's S-perp component decaying by ``per_step`` per step over ``steps`` steps."""
    a = subspace_nc()
    a["nc_trained"][..., -1, 0] = trained * np.exp(noise(3))[None, None, :, None]
    a["nc1_old"][:, 0, :, 1:, -1] = old
    perp = np.ones((4, steps + 1, 3))
    perp[0] = 2.0 * per_step ** np.arange(steps + 1)[:, None]
    a["linear_perp"] = perp
    return a


def _decide_rate(claim_id: str, arrays) -> ledger.Evidence:
    c = ledger.REGISTRY[claim_id]
    fr = ledger.FigureResult(arrays, {"config": RATE_CONFIG, "seed_axes": NC_AXES})
    return c.decide(ledger.Reads({c.reads[0]: fr}, claim_id=c.id))


@pytest.mark.parametrize("kw, verdict, rejected", [({}, "holds", True), ({"trained": 10.0}, "fails", True),
                                                   ({"old": 0.1}, "fails", False)])
def test_replay_snr_rate(kw, verdict, rejected):
    """Collapsed replayed data (NC1 0.1): the fitted exponent is within 0.5 of 2 and every control (finite t,
    lambda = 0, a non-collapsed replayed component at NC1 100) is rejected: holds. Trained-on NC1 of 10 (the
    local exponent 2 / (1 + r^2 delta) falls to 1/6 at r = 1): fails. Old classes as collapsed as the
    trained-on ones: the 'not collapsed' control is accepted, so the claim fails."""
    ev = _decide_rate("nc_forgetting.replay_snr_rate", subspace_rates(**kw))
    assert ev.verdict == verdict
    assert all(c.rejected for c in ev.controls) == rejected


@pytest.mark.parametrize("per_step, verdict", [(0.995, "holds"), (0.995 ** 0.5, "fails"), (1.0, "fails")])
def test_no_replay_snr_rate(per_step, verdict):
    """The S-perp component decays by upsilon = 1 - eta lambda = 0.995 per step: its energy's exponent is 2 and
    the SNR's at step 200 (a one-step difference) is about 2 / (1 + 0.995^400) = 1.76: holds. Decaying at
    sqrt(upsilon) (exponent 1, the rival) or not at all: fails. The controls (lambda = 0, replay pi = 1/2) are
    rejected in every case."""
    ev = _decide_rate("nc_forgetting.no_replay_snr_rate", subspace_rates(per_step=per_step))
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)
    if verdict == "holds":
        assert ev.measured["q of SNR at the last step"] == pytest.approx(2 / (1 + 0.995 ** 400),
                                                                         abs=TOL["one_step_exponent"])
