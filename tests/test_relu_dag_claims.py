"""The relu_dag claims decided from figure results decide on what they are given: fabricated results (no
simulation) where the theorem holds, where it is violated, and where the data cannot decide, handed to
the registered check as :class:`claims.ledger.Reads`."""

from __future__ import annotations

import numpy as np
import pytest

import claims.relu_dag  # noqa: F401  (registers the claims)
from claims import ledger


def _decide(claim_id: str, name: str, arrays: dict, meta: dict) -> ledger.Evidence:
    c = ledger.REGISTRY[claim_id]
    return c.decide(ledger.Reads({name: ledger.FigureResult(arrays, meta)}, claim_id=claim_id))


def _stability(claim_id: str, name: str, arrays: dict, meta: dict) -> dict:
    c = ledger.REGISTRY[claim_id]
    reads = ledger.Reads({name: ledger.FigureResult(arrays, meta)}, claim_id=claim_id)
    return ledger.stability(c, reads, c.decide(reads))


# --------------------------------------------------------------------------------------------------
# relu_dag.conservation (reads relu_dag_conservation)
# --------------------------------------------------------------------------------------------------

CONS_META = {"config": {"flow_h": 5e-4, "horizon": 2.0, "n_hidden": 8},
             "seed_axes": {"drift": 2, "gd_identity_err": 1, "homogeneity_rel": 2, "fine_drift": 1,
                           "flow_rate_rel": 1, "step_identity_err": 1, "momentum_identity_err": 1}}


def _conservation(S=4, rk4=1e-16, tanh=1e-3, adam=1e-3, momentum=1e-4, symbolic=(24, 24)):
    """Per-seed errors: ``rk4`` and ``adam`` scale dc/dt along the flow and along Adam's run."""
    rng = np.random.default_rng(0)
    tiny = lambda *shape: 1e-16 * rng.random(shape)  # noqa: E731  (rounding-level errors)
    rel = np.stack([tiny(4, S), tanh * (1 + rng.random((4, S)))])
    return {"etas": np.array([0.2, 0.1]), "methods": np.array(["GD", "RK4 flow", "Adam"]),
            "drift": rng.random((3, 2, S)), "gd_identity_err": tiny(2, S), "horizon": np.array(2.0),
            "homogeneity_rel": rel, "fine_drift": np.stack([1e-6 * rng.random(S), 1 + rng.random(S)]),
            "flow_rate_rel": np.stack([rk4 * rng.random(S), adam * (1 + rng.random(S))]),
            "step_identity_err": tiny(4, S), "momentum_identity_err": momentum * (1 + rng.random((2, S))),
            "symbolic": np.array(symbolic)}


def test_conservation_holds_when_the_law_holds_and_every_control_breaks_it():
    ev = _decide("relu_dag.conservation", "relu_dag_conservation", _conservation(), CONS_META)
    assert ev.verdict == "holds" and len(ev.controls) == 3 and ev.controls_rejected
    st = _stability("relu_dag.conservation", "relu_dag_conservation", _conservation(), CONS_META)
    assert st["total"] == 4 and not st["fragile"]


@pytest.mark.parametrize("kw", [{"rk4": 1e-8}, {"symbolic": (23, 24)}])
def test_conservation_fails_when_c_moves_along_the_flow_or_a_pattern_is_not_zero(kw):
    ev = _decide("relu_dag.conservation", "relu_dag_conservation", _conservation(**kw), CONS_META)
    assert ev.verdict == "fails"


def test_conservation_fails_when_a_control_obeys_the_law():
    # Adam's dc/dt at rounding level like the flow's: the test cannot tell the law from its negation.
    ev = _decide("relu_dag.conservation", "relu_dag_conservation", _conservation(adam=1e-16), CONS_META)
    assert ev.verdict == "fails" and not ev.controls[1].rejected


def test_conservation_at_the_threshold_and_undecidable():
    # A deterministic comparison has no band: a rate exactly at 1e-12 fails (strict <), a diverged run
    # (NaN rate) cannot be decided.
    a = _conservation()
    a["flow_rate_rel"][0, :] = 1e-12
    assert _decide("relu_dag.conservation", "relu_dag_conservation", a, CONS_META).verdict == "fails"
    a = _conservation()
    a["flow_rate_rel"][0, 1] = np.nan
    assert _decide("relu_dag.conservation", "relu_dag_conservation", a, CONS_META).verdict == "inconclusive"


# --------------------------------------------------------------------------------------------------
# relu_dag.init_obstruction_probability (reads relu_dag_init_probability)
# --------------------------------------------------------------------------------------------------

INIT_META = {"config": {"n_samples": 4000}, "seed_axes": {"batch_disconnected": 0, "batch_draws": 0}}
LS = np.array([1, 4, 16])


def _init(shift=0.0, n_batches=16, per_batch=250):
    formula = np.array([[[0.2, 0.5, 0.8], [0.1, 0.3, 0.6]],      # kaiming, d = 2, 3
                        [[0.05, 0.15, 0.4], [0.02, 0.08, 0.25]]])  # xavier
    rng = np.random.default_rng(1)
    counts = rng.binomial(per_batch, np.clip(formula + shift, 0, 1), size=(n_batches,) + formula.shape)
    return {"ds": np.array([2, 3]), "ls": LS, "formula": formula, "batch_disconnected": counts,
            "batch_draws": np.full(n_batches, per_batch)}


def test_init_probability_holds_when_monte_carlo_matches_the_formula():
    ev = _decide("relu_dag.init_obstruction_probability", "relu_dag_init_probability", _init(), INIT_META)
    assert ev.verdict == "holds" and ev.controls_rejected and ev.measured["max_z"] < 4.5
    st = _stability("relu_dag.init_obstruction_probability", "relu_dag_init_probability", _init(), INIT_META)
    assert st["total"] == 16 and not st["fragile"]


def test_init_probability_fails_when_the_draws_are_off_the_formula():
    ev = _decide("relu_dag.init_obstruction_probability", "relu_dag_init_probability", _init(shift=0.05),
                 INIT_META)
    assert ev.verdict == "fails" and ev.measured["max_z"] > 4.5


def test_init_probability_undecidable_without_a_count():
    a = _init()
    a["batch_disconnected"] = a["batch_disconnected"].astype(float)
    a["batch_disconnected"][3, 0, 0, 0] = np.nan      # a lost batch: max z is not a number
    ev = _decide("relu_dag.init_obstruction_probability", "relu_dag_init_probability", a, INIT_META)
    assert ev.verdict == "inconclusive"


# --------------------------------------------------------------------------------------------------
# relu_dag.pruning (reads relu_dag_pruning)
# --------------------------------------------------------------------------------------------------

REGS = ["none", "l2", "l1", "prox_l1", "nuclear"]
PRUNE_META = {"config": {"n_data": 128, "lr": 0.05, "n_steps": 10, "lam": 0.01, "prune_tau": 1e-3},
              "seed_axes": {k: 1 for k in ("loss", "kappa", "zeros", "sv_ratio", "bit_equal", "theta_final",
                                           "kappa_tau", "pruned_tau", "loss_tau")}}


def _pruning(log_ratio=None, S=6, none_log_ratio=-1.0, loss_change=0.001):
    """Final log10(s_min/s_max) per regulariser (prox-L1 exactly 0), kappa after pruning 2 for L1 and
    nuclear and 0 otherwise, a relative loss change of pruning ``loss_change``."""
    rng = np.random.default_rng(2)
    log_ratio = {"l1": -4.0, "nuclear": -3.5, **(log_ratio or {})}
    centre = {"none": none_log_ratio, "l2": -1.0, **log_ratio}
    ratio = np.zeros((5, S, 3))
    for i, x in enumerate(REGS):
        if x != "prox_l1":
            ratio[i] = 10.0 ** (centre[x] + 0.1 * rng.standard_normal((S, 3)))
    kappa = np.zeros((5, S, 3), int)
    kappa[3] = 2
    kappa_tau = np.zeros((5, S), int)
    kappa_tau[[2, 3, 4]] = 2
    loss = 0.05 + 0.01 * rng.random((5, S, 3))
    loss_tau = loss[:, :, -1] * (1 + loss_change + 0.0005 * rng.standard_normal((5, S)))
    return {"regularisers": np.array(REGS), "loss": loss, "kappa": kappa, "zeros": np.zeros((5, S, 3), int),
            "sv_ratio": ratio, "bit_equal": np.ones((5, S), bool), "theta_final": rng.normal(size=(5, S, 88)),
            "kappa_tau": kappa_tau, "pruned_tau": np.zeros((5, S), int), "loss_tau": loss_tau,
            "steps": np.arange(3)}


def test_pruning_holds_when_l1_and_nuclear_go_singular_and_the_controls_do_not():
    ev = _decide("relu_dag.pruning", "relu_dag_pruning", _pruning(), PRUNE_META)
    assert ev.verdict == "holds" and len(ev.controls) == 5 and ev.controls_rejected
    assert not _stability("relu_dag.pruning", "relu_dag_pruning", _pruning(), PRUNE_META)["fragile"]


def test_pruning_prox_l1_is_singular_to_the_svd_rounding_floor_not_above():
    # A floating chain of two or more nodes gives s_min at rounding level, not an exact 0: that holds;
    # a prox-L1 run ending at s_min/s_max = 1e-6 is not singular.
    a = _pruning()
    a["sv_ratio"][3, 1, -1] = 1e-17
    assert _decide("relu_dag.pruning", "relu_dag_pruning", a, PRUNE_META).verdict == "holds"
    a["sv_ratio"][3, 1, -1] = 1e-6
    assert _decide("relu_dag.pruning", "relu_dag_pruning", a, PRUNE_META).verdict == "fails"


def test_pruning_fails_when_the_nuclear_norm_stays_at_full_rank():
    ev = _decide("relu_dag.pruning", "relu_dag_pruning", _pruning({"nuclear": -1.0}), PRUNE_META)
    assert ev.verdict == "fails"


def test_pruning_fails_when_pruning_costs_more_than_two_percent():
    assert _decide("relu_dag.pruning", "relu_dag_pruning", _pruning(loss_change=0.05), PRUNE_META).verdict == "fails"


def test_pruning_fails_when_no_regulariser_also_goes_singular():
    ev = _decide("relu_dag.pruning", "relu_dag_pruning", _pruning(none_log_ratio=-4.0), PRUNE_META)
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_pruning_inconclusive_at_the_threshold():
    # L1's mean log10 ratio sits on log10(1e-2) = -2: its Student-t interval straddles the threshold.
    ev = _decide("relu_dag.pruning", "relu_dag_pruning", _pruning({"l1": -2.0}), PRUNE_META)
    assert ev.verdict == "inconclusive"


# --------------------------------------------------------------------------------------------------
# relu_dag.component_losses (reads relu_dag_obstruction)
# --------------------------------------------------------------------------------------------------

OBS_META = {"config": {"margin": 1.0, "lr": 0.05, "n_steps": 10}, "summary": {"n_components": 16},
            "seed_axes": {"loss": 1, "acc": 1, "flips": 1, "drift": 1}}


def _obstruction(gap_neg=0.41, gap_pos=0.25, noise=0.002, n_seeds=6, l=4, flips=0):
    rng = np.random.default_rng(0)
    final = np.full((l + 1, n_seeds), 0.03) + noise * rng.normal(size=(l + 1, n_seeds))
    final[0] += gap_neg
    final[l] += gap_pos
    loss = np.concatenate([np.full((l + 1, n_seeds, 1), 0.7), final[:, :, None]], axis=2)
    return {"loss": loss, "flips": np.full((l + 1, n_seeds), flips), "drift": np.zeros((l + 1, n_seeds)),
            "acc": np.ones((l + 1, n_seeds)), "bounds": np.array([0.435, 0.258]), "n_pos": np.arange(l + 1),
            "steps": np.array([0, 10])}


def _losses(a):
    return _decide("relu_dag.component_losses", "relu_dag_obstruction", a, OBS_META)


def test_component_losses_hold_when_components_separate():
    ev = _losses(_obstruction())
    assert ev.verdict == "holds" and len(ev.controls) == 3 and ev.controls_rejected
    st = _stability("relu_dag.component_losses", "relu_dag_obstruction", _obstruction(), OBS_META)
    assert st["total"] == 6 and not st["fragile"]


def test_component_losses_fail_without_separation_or_with_a_flip():
    assert _losses(_obstruction(gap_neg=0.02)).verdict == "fails"
    assert _losses(_obstruction(flips=1)).verdict == "fails"


def test_component_losses_inconclusive_when_the_gap_straddles_the_threshold():
    a = _obstruction()
    a["loss"][2, 1::2, -1] = 0.4     # the mixed class is sometimes stuck: the gap's interval straddles 0.1
    assert _losses(a).verdict == "inconclusive"


def test_component_losses_fail_when_the_same_component_separates():
    a = _obstruction()
    a["loss"][0, ::2, -1] += 0.5     # same-component runs 0, 2, 4 far above 1, 3, 5: control accepted
    ev = _losses(a)
    assert ev.verdict == "fails" and not ev.controls[0].rejected
