"""The LIF-SNN claims decide on what they are given: fabricated figure results (no simulation) where the
theorem holds, where it is violated, and where the data sit at the threshold, fed to the registered checks
through :class:`claims.ledger.Reads`. float64 throughout (conftest turns it on)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from claims import ledger
from claims import lif_snn as C  # noqa: F401  (registers the claims)
from theory import boolean
from theory import lif_snn as th

THETA = 0.5


def _decide(claim_id: str, **results) -> ledger.Evidence:
    return ledger.REGISTRY[claim_id].decide(ledger.Reads({k: ledger.FigureResult(*v) for k, v in results.items()}))


def _noise(rng, shape, sd):
    """Exactly mean-zero, exactly SD ``sd`` noise along axis 0 (so a fabricated mean is the mean)."""
    e = rng.standard_normal(shape)
    e = e - e.mean(axis=0)
    return sd * e / e.std(axis=0, ddof=1)


# ---------------------------------------------------------------------------------------------------
# single_neuron_exact: the t = 1 law against full-vector draws
# ---------------------------------------------------------------------------------------------------

S = 16
LAW = {"theta": THETA, "law_n": 100, "law_nu": 0.1, "law_samples_per_seed": 8192, "law_neurons_per_seed": 32}
LEVELS = [(10, 0.0), (10, THETA), (12, THETA)]


def _law(toward_rival=0.0, mixture_sd=0.002, seed=0):
    """Per-seed draws centred on the exact law, the fixed-distance ones moved ``toward_rival`` of the way to
    the rival law rho = 1 - d/n (0: the exact law, 1/2: the midpoint, 1: the rival)."""
    rng = np.random.default_rng(seed)
    dist, mix = np.array([1, 10, 30]), np.array([100, 30])
    sd = 0.002  # per-seed SD: SE = 0.0005
    exact = np.array([th.flip_probability_at_distance(100, int(d), THETA) for d in dist])
    rival = np.array([th.plugin_flip_probability(THETA, d / 200) for d in dist])
    fixed = exact + toward_rival * (rival - exact) + _noise(rng, (S, 3), sd)
    mixture = np.array([th.single_neuron_flip_probability(int(n), THETA, 0.1) for n in mix]) + _noise(
        rng, (S, 2), mixture_sd)
    levels = np.zeros((3, S, 13))
    for c, (n, t) in enumerate(LEVELS):
        w = th.expected_level_weights(n, t)
        noise = _noise(rng, (S, n + 1), 0.002) * (w > 1e-12)  # exact zeros stay zero in every seed
        levels[c, :, : n + 1] = w + noise
    arrays = {"law_fixed_per_seed": fixed, "law_distances": dist, "law_mixture_per_seed": mixture,
              "law_mixture_widths": mix, "law_levels": levels, "law_level_widths": np.array([10, 10, 12]),
              "law_level_thetas": np.array([0.0, THETA, THETA])}
    meta = {"config": LAW, "seed_axes": {"law_fixed_per_seed": 0, "law_mixture_per_seed": 0, "law_levels": 1}}
    return arrays, meta


def _fixed_decisions(ev):
    return [d.decision for d in ev.decisions if "d=" in d.name]


def test_single_neuron_exact_holds_on_draws_from_the_exact_law():
    ev = _decide("lif_snn.single_neuron_exact", lif_snn_single_neuron=_law())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls) and len(ev.controls) == 12


def test_single_neuron_exact_fails_when_the_draws_follow_the_rival_law():
    ev = _decide("lif_snn.single_neuron_exact", lif_snn_single_neuron=_law(toward_rival=1.0))
    assert ev.verdict == "fails" and _fixed_decisions(ev) == ["fails"] * 3


def test_single_neuron_exact_is_undecided_halfway_between_the_laws():
    ev = _decide("lif_snn.single_neuron_exact", lif_snn_single_neuron=_law(toward_rival=0.5))
    assert ev.verdict == "inconclusive" and _fixed_decisions(ev) == ["inconclusive"] * 3


def test_single_neuron_exact_is_undecided_when_too_noisy_to_tell_the_mixture_from_the_plug_in():
    ev = _decide("lif_snn.single_neuron_exact", lif_snn_single_neuron=_law(mixture_sd=0.05))
    plug = [d for d in ev.decisions if "plug-in" in d.name]
    assert plug and plug[0].decision == "inconclusive" and ev.verdict == "inconclusive"


# ---------------------------------------------------------------------------------------------------
# theorem1_scaling: exact curves and their Monte Carlo
# ---------------------------------------------------------------------------------------------------

WIDTHS1 = np.array([100, 1000, 10000])


def _single(mc_shift=0.0, exponent_shift=0.0, seed=0):
    rng = np.random.default_rng(seed)
    T = 3
    exact = np.stack([th.static_flip_probabilities(int(n), THETA, 1 / math.sqrt(n), T) for n in WIDTHS1])
    exact = exact * (WIDTHS1[:, None] / 100.0) ** exponent_shift
    sd = 0.004
    mc = exact[None] + mc_shift * sd / math.sqrt(S) + _noise(rng, (S,) + exact.shape, sd)
    arrays = {"widths": WIDTHS1, "slif_exact": exact, "small_noise_constants": th.small_noise_constants(THETA, T),
              "kinds": np.array(["slif"]), "mc_per_seed": mc[:, None], "mc_pairs": np.asarray(S * 4096)}
    return arrays, {"config": {"theta": THETA}, "config_path": "fabricated", "seed_axes": {"mc_per_seed": 0}}


def test_theorem1_scaling_holds_on_the_exact_curves():
    ev = _decide("lif_snn.theorem1_scaling", lif_snn_single_neuron=_single())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


def test_theorem1_scaling_fails_on_a_steeper_width_law_or_a_biased_monte_carlo():
    ev = _decide("lif_snn.theorem1_scaling", lif_snn_single_neuron=_single(exponent_shift=-0.1))
    assert ev.verdict == "fails" and "t=1" in next(d.name for d in ev.decisions if d.decision == "fails")
    ev = _decide("lif_snn.theorem1_scaling", lif_snn_single_neuron=_single(mc_shift=8.0))
    assert ev.verdict == "fails"
    assert next(d for d in ev.decisions if "Monte Carlo" in d.name).decision == "fails"


def test_theorem1_scaling_at_the_threshold_of_its_family_test():
    """Monte Carlo 3.9 SE from the exact curve everywhere still passes the max-|z| <= 4 test; 4.1 SE fails."""
    assert _decide("lif_snn.theorem1_scaling", lif_snn_single_neuron=_single(mc_shift=3.9)).verdict == "holds"
    assert _decide("lif_snn.theorem1_scaling", lif_snn_single_neuron=_single(mc_shift=4.1)).verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# theorem2_depth_width: per-network disagreement against width and depth
# ---------------------------------------------------------------------------------------------------

WIDTHS2 = np.array([64, 128, 256, 512, 1024])
N_NET, DEPTH, STEPS = 64, 3, 5


def _depth(exponent=-0.15, sd=0.05, seed=0):
    """ENS = 0.2 (n / 64)^exponent (1 + 0.3 (L - 1)), the same at every T, per-network noise of SD ``sd``."""
    rng = np.random.default_rng(seed)
    L = np.arange(1, DEPTH + 1)
    ens = 0.2 * (WIDTHS2[:, None] / 64.0) ** exponent * (1 + 0.3 * (L - 1))  # [W, D]
    per = ens[:, None, :] + _noise(rng, (N_NET, WIDTHS2.size, DEPTH), sd).transpose(1, 0, 2)  # [W, N, D]
    per = np.repeat(per[..., None], STEPS, axis=-1)[None]  # [K=1, W, N, D, T]
    arrays = {"widths": WIDTHS2, "depths": L, "steps": np.arange(1, STEPS + 1), "kinds": np.array(["slif"]),
              "per_network": per, "bound_width_exponent": np.array([th.theorem2_width_exponent(l) for l in L])}
    return arrays, {"config": {"pairs": 64, "T": STEPS}, "config_path": "fabricated", "seed_axes": {"per_network": 2}}


def test_theorem2_holds_when_ens_falls_with_width_and_rises_with_depth():
    ev = _decide("lif_snn.theorem2_depth_width", lif_snn_depth=_depth())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    assert min(d.margin_se for d in ev.decisions if "width" in d.name) > C.Z_WIDTH


def test_theorem2_fails_when_ens_rises_with_width():
    ev = _decide("lif_snn.theorem2_depth_width", lif_snn_depth=_depth(exponent=+0.15))
    assert ev.verdict == "fails"


def test_theorem2_is_inconclusive_without_a_width_trend():
    ev = _decide("lif_snn.theorem2_depth_width", lif_snn_depth=_depth(exponent=0.0))
    assert ev.verdict == "inconclusive"
    assert {d.decision for d in ev.decisions if "width" in d.name} == {"inconclusive"}


def test_theorem2_leave_one_network_out_is_stable_far_from_the_threshold():
    reads = ledger.Reads({"lif_snn_depth": ledger.FigureResult(*_depth())})
    c = ledger.REGISTRY["lif_snn.theorem2_depth_width"]
    st = ledger.stability(c, reads, c.decide(reads))
    assert st["total"] == 8 and not st["fragile"]


# ---------------------------------------------------------------------------------------------------
# spectral_simplicity: exact tails against a random function's
# ---------------------------------------------------------------------------------------------------

WIDTHS3 = [8, 12]


def _spectrum(ratio, sd=0.01, seed=0):
    """Every network's tail above each cut-off is ``ratio`` x the random function's (level weights put all
    of a random function's tail mass on its own levels, scaled), plus noise."""
    rng = np.random.default_rng(seed)
    N, D, K = 40, 2, max(WIDTHS3) + 1
    W = len(WIDTHS3)
    weights, rand_w = np.zeros((W, N, D, K)), np.zeros((W, N, K))
    rand_exp = np.zeros((W, K))
    for i, n in enumerate(WIDTHS3):
        e = boolean.random_function_level_weights(n)
        rand_exp[i, : n + 1] = e
        scaled = e * ratio
        scaled[0] = 1 - scaled[1:].sum()  # the rest at level 0
        noise = _noise(rng, (N, D, n + 1), sd) * e[None, None, :]  # relative noise per level
        weights[i, ..., : n + 1] = scaled + noise
        rand_w[i, :, : n + 1] = e + _noise(rng, (N, n + 1), sd) * e[None, :]
    arrays = {"widths": np.array(WIDTHS3), "depths": np.arange(1, D + 1), "weights": weights,
              "ns": np.full((W, N, D), 0.5), "random_weights": rand_w, "random_expected": rand_exp}
    meta = {"config": {"T": 5, "n_networks": N}, "config_path": "fabricated",
            "seed_axes": {"weights": 1, "ns": 1, "random_weights": 1}}
    return arrays, meta


def _spectral(ratio, **kw):
    return _decide("lif_snn.spectral_simplicity", lif_snn_spectrum=_spectrum(ratio, **kw),
                   lif_snn_depth=_depth())


def test_spectral_simplicity_holds_far_below_half_a_random_function():
    ev = _spectral(0.2)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


def test_spectral_simplicity_fails_above_half_and_is_undecided_at_half():
    assert _spectral(0.8).verdict == "fails"
    ev = _spectral(0.5)
    assert ev.verdict == "inconclusive"
    assert {d.decision for d in ev.decisions if "tail" in d.name} == {"inconclusive"}


def test_spectral_simplicity_fails_when_the_bridge_is_broken():
    arrays, meta = _spectrum(0.2)
    arrays["ns"] = np.zeros_like(arrays["ns"])  # NS = 0 with tail weight > 0 breaks W^{>=1/nu} <= 2.313 NS
    ev = _decide("lif_snn.spectral_simplicity", lif_snn_spectrum=(arrays, meta), lif_snn_depth=_depth())
    assert ev.verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# training_lowers_sensitivity: paired before/after drops
# ---------------------------------------------------------------------------------------------------

CASES = np.array(["digits2_slif", "digits10_slif", "parity_slif"])


def _training(drop, parity_drop=-0.15, sd=0.02, acc=0.97, seed=0):
    rng = np.random.default_rng(seed)
    S_, V = 8, 3
    nus = np.array([0.0625, 0.125, 0.25])
    before = np.full((S_, 3, V), 0.4)
    drops = np.array([drop, drop, parity_drop])
    arrays = {"nus": nus, "input_dims": np.array([64, 64, 16]), "cases": CASES,
              "parity_ns_exact": 0.5 - 0.5 * (1 - 2 * nus) ** 3, "test_acc": np.full((S_, 3), acc)}
    for key in ("ns", "data_ns"):
        arrays[f"{key}_before"] = before
        arrays[f"{key}_after"] = before - drops[None, :, None] + _noise(rng, (S_, 3, V), sd)
    cfg = {"n_seeds": S_, "depth": 3, "hidden": 8, "T": 5, "theta": THETA, "beta": 1.0, "lr": 0.03, "steps": 10,
           "ns_pairs": 64, "parity_bits": 3}
    meta = {"config": cfg, "config_path": "fabricated",
            "seed_axes": {k: 0 for k in ("ns_before", "ns_after", "data_ns_before", "data_ns_after", "test_acc")}}
    return arrays, meta


def test_training_holds_when_every_digits_drop_is_positive_and_parity_rises():
    ev = _decide("lif_snn.training_lowers_sensitivity", lif_snn_training=_training(0.1))
    assert ev.verdict == "holds" and len(ev.controls) == 2 and all(c.rejected for c in ev.controls)


def test_training_fails_when_training_raises_digits_sensitivity():
    assert _decide("lif_snn.training_lowers_sensitivity", lif_snn_training=_training(-0.1)).verdict == "fails"


def test_training_is_inconclusive_at_a_zero_drop_or_without_a_fit():
    assert _decide("lif_snn.training_lowers_sensitivity", lif_snn_training=_training(0.0)).verdict == "inconclusive"
    ev = _decide("lif_snn.training_lowers_sensitivity", lif_snn_training=_training(0.1, acc=0.5))
    assert ev.verdict == "inconclusive" and not ev.decisions and ev.measured["not fitted"]


def test_training_fails_when_the_parity_control_also_drops():
    """Training that lowers NS whatever the target cannot tell the claim from its negation."""
    ev = _decide("lif_snn.training_lowers_sensitivity", lif_snn_training=_training(0.1, parity_drop=0.1))
    assert ev.verdict == "fails" and not any(c.rejected for c in ev.controls)
