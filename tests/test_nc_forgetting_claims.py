"""The neural-collapse forgetting claims decide on what they are given: fabricated figure results (no
training) where the answer is known, handed to each registered check as :class:`ledger.Reads`. For every
claim decided from data: a result where the statement holds gives "holds", one where it is violated
"fails", and one sitting on the threshold "inconclusive"."""

from __future__ import annotations

import numpy as np
import pytest

from claims import ledger
from claims import nc_forgetting as C

P = np.array([0.0, 1.0, 5.0, 20.0, 100.0])
PB = np.array([1.0, 2.0, 5.0, 20.0, 100.0])  # buffer_stats and lda have no 0% run
SETTINGS = np.array(["til", "cil", "dil"])
DATASETS = np.array(["digits", "gaussian"])
E = 0.01 * np.array([1.0, -1.0, 2.0, -2.0, 0.5, -0.5])  # per-seed noise with mean exactly 0 (sd 0.0145)
N = E.size
CONFIG = {"n_seeds": N, "widths": [8], "steps_per_task": 1, "lr": 0.1, "momentum": 0.0, "weight_decay": 1e-3,
          "batch_size": 4, "probe_C": 10.0, "probe_standardize": True, "lin_eta": 0.5, "lin_lambda": 0.01}

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "roundoff_f64": (1e-12, "float64 closed forms on fabricated results: means over <= 4 old tasks, logs, a "
                            "5-point polyfit slope, 0.9^t for t <= 10, a log difference divided by log 0.9: "
                            "tens of roundings of 1.1e-16, amplified <= 20x by the cancellation; measured "
                            "<= 1.1e-15"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def noise(k: int, n: int = N) -> np.ndarray:
    """``[n]`` mean-zero per-seed noise, rolled by ``k`` so that two cases are not perfectly paired."""
    return np.roll(np.resize(E, n), k)


def decide(claim_id: str, arrays: dict, seed_axes: dict) -> ledger.Evidence:
    c = ledger.REGISTRY[claim_id]
    fr = ledger.FigureResult(arrays, {"config": CONFIG, "seed_axes": seed_axes})
    return c.decide(ledger.Reads({c.reads[0]: fr}, claim_id=claim_id))


# ---------------------------------------------------------------------------------------------------
# buffer_sweep
# ---------------------------------------------------------------------------------------------------

SWEEP_AXES = {"head_acc": 4, "probe_acc": 4, "snr": 4, "joint_probe_acc": 2}


def sweep(gap: dict, deep: dict | None = None, snr_log=(-2.3, -1.0, -0.7, -0.4, -0.1)) -> dict:
    """A buffer_sweep result, every task learned at accuracy 1 and SNR 4: per setting and buffer,
    F_deep = ``deep`` and F_shallow - F_deep = ``gap`` + per-seed noise; the CIL (and every) setting's old-task
    log SNR ratio = ``snr_log`` + per-seed noise; joint training's probe at accuracy 1."""
    D, S, B = DATASETS.size, SETTINGS.size, P.size
    head = np.full((D, S, 1, B, N, 5, 5), np.nan)
    probe, snr = np.full_like(head, np.nan), np.full_like(head, np.nan)
    for i in range(5):
        for j in range(i + 1):
            head[..., i, j] = probe[..., i, j] = 1.0
            snr[..., i, j] = 4.0
    for s, name in enumerate(SETTINGS):
        for b in range(B):
            dp = 0.0 if deep is None else deep[name][b]
            probe[:, s, 0, b, :, 4, :4] = 1.0 - dp
            head[:, s, 0, b, :, 4, :4] = 1.0 - dp - gap[name][b] - noise(b + s)[:, None]
            snr[:, s, 0, b, :, 4, :4] = 4.0 * np.exp(snr_log[b] + noise(b)[:, None])
    return {"datasets": DATASETS, "settings": SETTINGS, "schedules": np.array(["concat"]), "buffer_percents": P,
            "head_acc": head, "probe_acc": probe, "snr": snr, "joint_probe_acc": np.ones((D, S, N, 5))}


GOOD = {"til": [0.05, 0.03, 0.02, 0.01, 0.0], "cil": [0.5, 0.6, 0.2, 0.05, 0.0], "dil": [0.3, 0.3, 0.1, 0.05, 0.0]}


def test_forgetting_is_the_drop_from_learned_to_final():
    a = sweep({"til": [0.1] * 5, "cil": [0.4, 0.5, 0.2, 0.05, 0.0], "dil": [0.1] * 5},
              {"til": [0.0] * 5, "cil": [0.3] * 5, "dil": [0.0] * 5})
    fs, fd = C.forgetting(a, 0, 1, 0)
    np.testing.assert_allclose(fd, 0.3, rtol=TOL["roundoff_f64"])
    np.testing.assert_allclose(fs.mean(axis=1), 0.3 + np.array([0.4, 0.5, 0.2, 0.05, 0.0]),
                               rtol=TOL["roundoff_f64"])


@pytest.mark.parametrize("til_at_5, verdict", [(0.0, "holds"), (-0.10, "fails"), (-C.DEEP_TOL, "inconclusive")])
def test_deep_le_shallow(til_at_5, verdict):
    """Holds when the head forgets at least as much as the probe everywhere; fails when the probe forgets 10 pp
    more in one case; undecided when that case sits on the -2 pp tolerance."""
    gap = {**GOOD, "til": [0.05, 0.03, til_at_5, 0.01, 0.0]}
    ev = decide("nc_forgetting.deep_le_shallow", sweep(gap), SWEEP_AXES)
    assert ev.verdict == verdict and ev.measured[verdict] == (len(ev.decisions) if verdict == "holds" else 2)
    assert all(c.rejected for c in ev.controls)  # the head fails in CIL at 1%: the swapped inequality is refuted


def test_deep_le_shallow_cannot_hold_when_the_head_never_fails():
    """Without a head failure in CIL the swapped inequality is accepted: the test says nothing."""
    ev = decide("nc_forgetting.deep_le_shallow", sweep({k: [0.0] * 5 for k in SETTINGS}), SWEEP_AXES)
    assert ev.verdict == "fails" and not any(c.rejected for c in ev.controls)


@pytest.mark.parametrize("deep_at_1, gap_at_1, verdict", [(0.0, 0.4, "holds"), (0.3, 0.4, "fails"),
                                                          (0.0, C.GAP_MUCH, "inconclusive")])
def test_small_buffer_saves_features(deep_at_1, gap_at_1, verdict):
    deep = {k: [0.3, deep_at_1, 0.0, 0.0, 0.0] for k in SETTINGS}  # no replay: 30 pp below joint training
    gap = {k: [0.5, gap_at_1, 0.2, 0.05, 0.0] for k in SETTINGS}
    ev = decide("nc_forgetting.small_buffer_saves_features", sweep(gap, deep), SWEEP_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)


@pytest.mark.parametrize("cil, verdict", [([0.5, 0.6, 0.2, 0.05, 0.0], "holds"), ([0.5, 0.6, 0.2, 0.1, 0.1], "fails"),
                                          ([0.5, C.GAP_LARGE, 0.2, 0.05, 0.0], "inconclusive")])
def test_head_needs_big_buffer(cil, verdict):
    """Fails when the CIL gap never closes; undecided when the gap at 1% sits on the 5 pp 'large' threshold."""
    ev = decide("nc_forgetting.head_needs_big_buffer", sweep({**GOOD, "cil": cil}), SWEEP_AXES)
    assert ev.verdict == verdict


@pytest.mark.parametrize("snr_log, verdict", [((-2.3, -1.0, -0.7, -0.4, -0.1), "holds"),
                                              ((-2.3, -2.6, -0.7, -0.4, -0.1), "fails"),
                                              ((float(C.SNR_HALF), -0.3, -0.2, -0.1, 0.0), "inconclusive")])
def test_snr_replay(snr_log, verdict):
    """Holds when the SNR decays without replay and any buffer keeps it higher; fails when 1% ends below 0%;
    undecided when the no-replay SNR ends at exactly half."""
    ev = decide("nc_forgetting.snr_replay", sweep(GOOD, snr_log=snr_log), SWEEP_AXES)
    assert ev.verdict == verdict
    assert all(c.rejected for c in ev.controls)  # the largest buffer does not halve the SNR


def test_snr_replay_is_stable_on_a_clear_effect():
    c = ledger.REGISTRY["nc_forgetting.snr_replay"]
    fr = ledger.FigureResult(sweep(GOOD), {"config": CONFIG, "seed_axes": SWEEP_AXES})
    reads = ledger.Reads({c.reads[0]: fr}, claim_id=c.id)
    st = ledger.stability(c, reads, c.decide(reads))
    assert st["total"] == N and not st["fragile"]


def test_log_snr_ratio_counts_dead_features_at_the_floor():
    snr = np.full((1, 3, 1, 2, 3, 5, 5), np.nan)
    for i in range(5):
        for j in range(i + 1):
            snr[..., i, j] = 4.0 if i == j else 1.0
    snr[0, 1, 0, 0, :, 4, 0] = 0.0  # task 0's two classes collapsed onto one point
    lr = C.log_snr_ratio({"snr": snr}, 0, 1, 0)  # [B, N]
    np.testing.assert_allclose(lr[1], np.log(0.25), rtol=TOL["roundoff_f64"])
    np.testing.assert_allclose(lr[0], (np.log(C.SNR_FLOOR / 4) + 3 * np.log(0.25)) / 4,
                               rtol=TOL["roundoff_f64"])


# ---------------------------------------------------------------------------------------------------
# subspace
# ---------------------------------------------------------------------------------------------------


def subspace(old_at_0: float, fit_error: float = 1e-14, bound: float = 2.5e-12) -> dict:
    """A subspace result: OOD groups project at 0.1, current classes at 1.1, old classes at 0.1 + delta
    (+ per-seed noise) with delta = ``old_at_0`` without replay and 0.8 with 100% replay (the nearest-level
    rule's boundary is delta = (1.1 - 0.1) / 2 = 0.5); the linear model's deviation from the decay law
    ``fit_error`` and its three controls' 0.1, 0.6, 6e-3, against the rounding budget ``bound``."""
    D, B, K, G = DATASETS.size, 2, 2, 3
    cp = np.full((D, B, N, 5, K, 10), np.nan)
    for s in range(5):
        cp[..., s, :, 2 * s:2 * s + 2] = 1.1
        for b, delta in enumerate((old_at_0, 0.8)):
            cp[:, b, :, s, :, :2 * s] = 0.1 + delta + noise(b)[None, :, None, None]
    return {"datasets": DATASETS, "buffer_percents": np.array([0.0, 100.0]), "class_projection": cp,
            "ood_projection": np.full((D, B, N, 5, K, G), 0.1),
            "linear_cases": np.array(["collapsed", "momentum", "two_layer", "not_collapsed"]),
            "linear_fit_error": np.array([fit_error, 0.1, 0.6, 6e-3]),
            "linear_rounding_bound": np.asarray(bound),
            "linear_perp": np.ones((4, 11, 3)), "upsilon": np.asarray(0.995)}


@pytest.mark.parametrize("old_at_0, error, verdict", [(0.05, 1e-14, "holds"), (0.8, 1e-14, "fails"),
                                                      (0.05, 1e-3, "fails"), (0.5, 1e-14, "inconclusive")])
def test_subspace_decay(old_at_0, error, verdict):
    """The decay law within the rounding budget, and old classes nearer the OOD level (0.1) than the current
    classes' (1.1): holds; old classes at 0.9 (nearer the current level) or the law off by 1e-3: fails;
    old classes exactly half-way (0.6): undecided."""
    ev = decide("nc_forgetting.subspace_decay", subspace(old_at_0, error),
                {"class_projection": 2, "ood_projection": 2})
    assert ev.verdict == verdict
    assert all(c.rejected for c in ev.controls)  # controls of T1, 100% replay


def test_subspace_decay_fails_when_a_control_obeys_the_law():
    """A control (outside T1) that obeys the decay law as well as the T1 instance: the check cannot tell them
    apart, and the claim is not supported."""
    a = subspace(0.05)
    a["linear_fit_error"] = np.array([1e-14, 1e-14, 0.6, 6e-3])
    ev = decide("nc_forgetting.subspace_decay", a, {"class_projection": 2, "ood_projection": 2})
    assert ev.verdict == "fails" and not all(c.rejected for c in ev.controls)


def subspace_nc(fall: float = -0.5, old_change: float = 0.5) -> dict:
    """A subspace result with NC per snapshot: the trained-on data's NC1 and NC3 change by ``fall`` (log)
    from the first to the last of 3 snapshots of every task, the old classes' NC1 (sessions 1-4, 0% replay)
    by ``old_change`` (each + per-seed noise)."""
    a = subspace(0.05)
    D, B, K = DATASETS.size, 2, 3
    ramp = np.linspace(0.0, 1.0, K)
    nc = np.exp(fall * ramp[None, None, None, None, :, None] + noise(5)[None, None, :, None, None, None]
                * ramp[None, None, None, None, :, None]) * np.ones((D, B, N, 5, K, 2))
    old = np.exp(old_change * ramp + noise(6)[:, None, None] * ramp) * np.ones((D, B, N, 5, K))
    old[:, :, :, 0] = np.nan
    old[:, 1] = np.nan  # 100% replay: no 'not trained on' classes
    a.update(nc_trained=nc, nc1_old=old)
    return a


NC_AXES = {"class_projection": 2, "ood_projection": 2, "nc_trained": 2, "nc1_old": 2}
NC_CONFIG = {**CONFIG, "snapshots": 3, "steps_per_task": 30}


def _decide_nc(arrays) -> ledger.Evidence:
    c = ledger.REGISTRY["nc_forgetting.nc_emerges_each_task"]
    fr = ledger.FigureResult(arrays, {"config": NC_CONFIG, "seed_axes": NC_AXES})
    return c.decide(ledger.Reads({c.reads[0]: fr}, claim_id=c.id))


@pytest.mark.parametrize("fall, old_change, verdict", [(-0.5, 0.5, "holds"), (0.5, 0.5, "fails"),
                                                       (0.0, 0.5, "inconclusive"), (-0.5, 0.0, "inconclusive"),
                                                       (-0.5, -0.5, "fails")])
def test_nc_emerges_each_task(fall, old_change, verdict):
    """NC falls on the trained-on data and rises on the forgotten classes: holds; rises on the trained-on data:
    fails; flat: undecided; the control (old classes) flat: undecided (not rejected); falling as well: the
    control is accepted and the claim fails."""
    assert _decide_nc(subspace_nc(fall, old_change)).verdict == verdict


# ---------------------------------------------------------------------------------------------------
# buffer_stats
# ---------------------------------------------------------------------------------------------------

STATS_AXES = dict.fromkeys(("within_rank_buffer", "within_rank_heldout", "mean_norm_ratio",
                            "mean_norm_ratio_heldout", "nc1_buffer", "nc1_heldout", "nc1_heldout_b", "dead_runs"), 2)


def stats(log_rank_gap: float = 0.3, log_inflation: float = np.log(1.5), log_nc1_gap: float = 1.0,
          log_control_gap: float = -1.0) -> dict:
    """A buffer_stats result: log within-class rank held-out - buffer = ``log_rank_gap``; at buffers <= 5%
    log mean-norm ratio = ``log_inflation`` (held-out: log 1.02), 0 above; log NC1 held-out - buffer =
    ``log_nc1_gap`` and held-out - second held-out = ``log_control_gap`` (each + per-seed noise)."""
    D, B = DATASETS.size, PB.size
    base = np.ones((D, B, N))
    ratio = np.where((PB <= 5)[None, :, None, None], log_inflation, 0.0) + noise(1)[None, None, :, None]
    return {"datasets": DATASETS, "buffer_percents": PB,
            "within_rank_heldout": 10 * base, "within_rank_buffer": 10 * np.exp(-log_rank_gap + noise(2)) * base,
            "mean_norm_ratio": np.exp(ratio) * np.ones((D, B, N, 8)),
            "mean_norm_ratio_heldout": np.full((D, B, N, 8), 1.02),
            "nc1_heldout": base, "nc1_buffer": np.exp(-log_nc1_gap + noise(3)) * base,
            "nc1_heldout_b": np.exp(-log_control_gap + noise(4)) * base, "dead_runs": np.zeros((D, B, N), bool)}


@pytest.mark.parametrize("kw, verdict", [({}, "holds"), ({"log_rank_gap": -0.3}, "fails"),
                                         ({"log_inflation": C.NORM_INFLATED}, "inconclusive")])
def test_buffer_artifacts(kw, verdict):
    ev = decide("nc_forgetting.buffer_artifacts", stats(**kw), STATS_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)  # 100%: no inflation


@pytest.mark.parametrize("kw, verdict", [({}, "holds"), ({"log_nc1_gap": -1.0}, "fails"),
                                         ({"log_nc1_gap": 0.0}, "inconclusive"),
                                         ({"log_control_gap": 0.0}, "inconclusive")])
def test_buffer_strong_collapse(kw, verdict):
    """Holds only where a second held-out draw is refuted by the same test; with a null control (what the
    simulation measures) the claim is undecided however strong the effect."""
    assert decide("nc_forgetting.buffer_strong_collapse", stats(**kw), STATS_AXES).verdict == verdict


# ---------------------------------------------------------------------------------------------------
# lda
# ---------------------------------------------------------------------------------------------------

HEADS = ["network", "probe", "lda_buf_mu_buf_sigma", "lda_pop_mu_identity", "lda_pop_mu_pop_sigma",
         "lda_buf_mu_identity", "uniform_prior", "transfer", "shrinkage", "calibration", "radial",
         "calibration_network"]
LDA_AXES = {"accuracy_old": 2, "accuracy_all": 2, "seed_index": 0}


def lda(n: int = 12, **acc) -> dict:
    """An lda result with ``n`` seeds: each head's accuracy (old and all) a constant plus per-seed noise;
    ``acc`` overrides a head's accuracy, as a constant or ``[n]`` per seed (a head set to NaN cannot be
    built). Defaults: network 0.5, uniform_prior 0.6, the authors' buffer LDA 0.55, shrinkage 0.7, transfer
    0.55, calibration and radial NaN, pop-Sigma 0.9, pop-I 0.8, buf-I 0.78."""
    level = {"network": 0.5, "probe": 0.9, "lda_buf_mu_buf_sigma": 0.55, "lda_pop_mu_identity": 0.8,
             "lda_pop_mu_pop_sigma": 0.9, "lda_buf_mu_identity": 0.78, "uniform_prior": 0.6, "transfer": 0.55,
             "shrinkage": 0.7, "calibration": np.nan, "radial": np.nan, "calibration_network": 0.5, **acc}
    x = np.stack([np.broadcast_to(np.asarray(level[h], float), (n,)) + noise(k, n) for k, h in enumerate(HEADS)],
                 axis=-1)  # [n, H]
    a = np.broadcast_to(x, (DATASETS.size, PB.size, n, len(HEADS))).copy()
    return {"datasets": DATASETS, "buffer_percents": PB, "heads": np.array(HEADS), "seed_index": np.arange(n),
            "accuracy_old": a, "accuracy_all": a.copy()}


@pytest.mark.parametrize("acc, verdict", [({}, "holds"), ({"lda_pop_mu_pop_sigma": 0.7}, "fails"),
                                          ({"lda_pop_mu_pop_sigma": 0.8}, "inconclusive")])
def test_lda_counterfactuals(acc, verdict):
    """The isotropic control is drawn by the check itself (seed offset 0) and must be refuted."""
    ev = decide("nc_forgetting.lda_counterfactuals", lda(**acc), LDA_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)


def test_isotropic_control_refutes_sigma_beats_identity():
    gap = C.isotropic_identity_gap()
    assert gap.shape == (20,) and -0.02 < gap.mean() < 0
    assert ledger.paired("iso", gap, 0.0, "above").decision == "fails"


def _judged(value: float, chosen: float = 0.7, n: int = 12) -> np.ndarray:
    """Shrinkage at ``chosen`` on the selection seeds and ``value`` on the judged ones."""
    return np.where(np.arange(n) < C.SELECT_SEEDS, chosen, value)


@pytest.mark.parametrize("shrink, verdict", [(0.7, "holds"), (0.4, "fails"), (0.6, "inconclusive")])
def test_corrected_head_is_judged_on_other_seeds(shrink, verdict):
    """Shrinkage is chosen on seeds 0..4 (it beats the other candidates there) and judged on the rest: better
    than both heads there -> holds; worse than the network's head -> fails; equal to the uncorrected head ->
    undecided."""
    ev = decide("nc_forgetting.corrected_head", lda(shrinkage=_judged(shrink)), LDA_AXES)
    assert ev.measured["correction chosen on the selection seeds"] == "shrinkage"
    assert ev.seeds == {"chosen on": list(range(C.SELECT_SEEDS)), "judged on": list(range(C.SELECT_SEEDS, 12))}
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)


def test_corrected_head_choice_ignores_the_judged_seeds():
    """Transfer is best on the judged seeds only: the choice (made on seeds 0..4) stays shrinkage."""
    ev = decide("nc_forgetting.corrected_head", lda(transfer=_judged(0.95, chosen=0.55)), LDA_AXES)
    assert ev.measured["correction chosen on the selection seeds"] == "shrinkage"


def test_corrected_head_keeps_seeds_apart_with_a_seed_left_out():
    c = ledger.REGISTRY["nc_forgetting.corrected_head"]
    reads = ledger.Reads({c.reads[0]: ledger.FigureResult(lda(), {"config": CONFIG, "seed_axes": LDA_AXES})})
    ev = c.decide(reads.without([0]))
    assert ev.seeds == {"chosen on": [1, 2, 3, 4], "judged on": list(range(5, 12))}
    assert not ledger.stability(c, reads, c.decide(reads))["fragile"]


def test_corrected_head_fails_when_the_last_ranked_candidate_also_wins():
    """Transfer is ranked last on the selection seeds (0.55 there) but beats the uncorrected head on the judged
    seeds (0.65 > 0.6): the control just outside 'a correction that repairs the statistics' is accepted by
    the same test, and the claim is not supported."""
    ev = decide("nc_forgetting.corrected_head", lda(transfer=_judged(0.65, chosen=0.55)), LDA_AXES)
    assert ev.measured["control: the candidate ranked last on the selection seeds"] == "transfer"
    assert ev.verdict == "fails" and not all(c.rejected for c in ev.controls)


@pytest.mark.parametrize("buf, verdict", [(0.45, "holds"), (0.55, "fails"), (0.5, "inconclusive")])
def test_lda_buffer_below_head(buf, verdict):
    """The authors' buffer LDA below the network's head (0.5): holds; above it: fails; equal: undecided. The
    control (population LDA at 0.9) is refuted by the same test."""
    ev = decide("nc_forgetting.lda_buffer_below_head", lda(lda_buf_mu_buf_sigma=buf), LDA_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)


def test_lda_buffer_below_head_fails_when_the_population_lda_is_below_too():
    ev = decide("nc_forgetting.lda_buffer_below_head", lda(lda_buf_mu_buf_sigma=0.45, lda_pop_mu_pop_sigma=0.4),
                LDA_AXES)
    assert ev.verdict == "fails" and not any(c.rejected for c in ev.controls)


# ---------------------------------------------------------------------------------------------------
# TIL feature rank (Sec. 3.2) and DIL deep forgetting
# ---------------------------------------------------------------------------------------------------

UFM_SHAPES = ((5, 2), (3, 4))


def _spectrum(rank: int, m: int, tail: float = 1e-15) -> np.ndarray:
    """``[m]`` singular values: ``rank`` values between 6 and 3, then ``tail``."""
    return np.concatenate([np.linspace(6.0, 3.0, rank), np.full(m - rank, tail)])


def ufm_result(multi=None, single=None, no_decay=None, weyl: float = 1e-11, m: int = 30) -> dict:
    """A subspace result's rank arrays for the (n, K) instances of UFM_SHAPES: by default one head per task
    at rank n(K - 1), a single head at nK - 1 (Weyl bound ``weyl``) and no weight decay at full rank ``m``;
    ``multi``/``single``/``no_decay`` override the rank of every instance of that case."""
    sv = np.full((3, len(UFM_SHAPES), m), np.nan)
    for j, (n, K) in enumerate(UFM_SHAPES):
        ranks = (multi or n * (K - 1), single or n * K - 1, no_decay or m)
        for i, r in enumerate(ranks):
            sv[i, j] = _spectrum(r, m) if r < m else np.linspace(6.0, 1.0, m)
    return {"ufm_cases": np.array(["multi_head", "single_head", "multi_head_no_decay"]),
            "ufm_tasks": np.array([n for n, _ in UFM_SHAPES]),
            "ufm_classes_per_task": np.array([k for _, k in UFM_SHAPES]),
            "ufm_singular_values": sv, "ufm_weyl_bound": np.array([[weyl] * 2, [weyl] * 2, [np.inf] * 2]),
            "ufm_residual_norm": np.full((3, 2), weyl * 0.05)}


def _rank_verdict(a) -> ledger.Evidence:
    return decide("nc_forgetting.til_feature_rank", a, {})


def test_til_feature_rank_holds_on_rank_n_k_minus_one():
    """One head per task at rank n(K - 1) (5 and 9), a single head at nK - 1 (9 and 11), no weight decay at
    full rank: every decision holds and both controls of each instance are rejected."""
    ev = _rank_verdict(ufm_result())
    assert ev.verdict == "holds" and len(ev.controls) == 4 and all(c.rejected for c in ev.controls)


def test_til_feature_rank_fails_when_one_head_per_task_spans_nk_minus_one():
    """Features of the per-task heads spanning nK - 1 dimensions (as with a single head): fails."""
    a = ufm_result()
    a["ufm_singular_values"][0] = a["ufm_singular_values"][1]  # the per-task heads' spectrum = the single head's
    assert _rank_verdict(a).verdict == "fails"


def test_til_feature_rank_fails_when_the_tail_exceeds_the_weyl_bound():
    """The rank read at the gap is n(K - 1) but sigma_(n(K-1)+1) = 1e-6 lies above the Weyl bound 1e-11 set
    by the stationarity residual: not a stationary point of rank n(K - 1), fails."""
    a = ufm_result()
    for j, (n, K) in enumerate(UFM_SHAPES):
        a["ufm_singular_values"][0, j, n * (K - 1):] = 1e-6
    ev = _rank_verdict(a)
    assert ev.verdict == "fails"
    assert [d.decision for d in ev.decisions if "<= ||R||_2" in d.name] == ["fails", "fails"]


def test_til_feature_rank_fails_when_a_control_has_the_same_rank():
    """A single head whose features also span n(K - 1) (so 'rank = nK - 1' fails and the control is
    accepted): the check cannot tell the two settings apart."""
    ev = _rank_verdict(ufm_result(single=5))
    assert ev.verdict == "fails" and not all(c.rejected for c in ev.controls)


def dil_sweep(til, dil, cil=(0.4, 0.2, 0.05, 0.02, 0.01)) -> dict:
    """A buffer_sweep result where F_deep of every old task is ``til``/``dil``/``cil`` per buffer plus
    per-seed noise (mean exactly 0, the same draw in every setting rolled by the setting)."""
    a = sweep(GOOD, {"til": list(til), "cil": list(cil), "dil": list(dil)})
    for s in range(SETTINGS.size):
        for b in range(P.size):
            a["probe_acc"][:, s, 0, b, :, 4, :4] -= noise(3 * s + b)[:, None]
    return a


@pytest.mark.parametrize("dil, verdict", [((0.10, 0.08, 0.05, 0.02, 0.01), "holds"),
                                          ((0.10, 0.08, 0.005, 0.02, 0.01), "fails"),
                                          ((0.10, 0.08, 0.01, 0.02, 0.01), "inconclusive")])
def test_dil_deep_forgetting(dil, verdict):
    """TIL forgets 1 pp of probe accuracy at every buffer. DIL forgetting 10, 8, 5 pp at 0, 1, 5%: holds, and
    the swapped inequality is rejected; DIL at 0.5 pp at 5% (below TIL): fails; DIL equal to TIL at 5%
    (a null difference): undecided. Buffers above 5% are not decided."""
    ev = decide("nc_forgetting.dil_deep_forgetting", dil_sweep([0.01] * 5, dil), SWEEP_AXES)
    assert ev.verdict == verdict and len(ev.decisions) == 2 * 3  # 2 data sets x buffers 0, 1, 5%
    assert all(c.rejected for c in ev.controls)


def test_dil_deep_forgetting_chance_normalisation():
    """F_deep / (A*_jj - chance): learned at accuracy 1, a 10 pp drop is 0.2 of the 2-way probe's room above
    chance (1/2) and 0.1 / 0.9 of the 10-way probe's (1/10)."""
    a = sweep(GOOD, {"til": [0.0] * 5, "cil": [0.1] * 5, "dil": [0.1] * 5})
    np.testing.assert_allclose(C.chance_normalised_deep(a, 0, 2, 0, 0.5), 0.2, rtol=TOL["roundoff_f64"])
    np.testing.assert_allclose(C.chance_normalised_deep(a, 0, 1, 0, 0.1), 0.1 / 0.9,
                               rtol=TOL["roundoff_f64"])


def ratio_result(none=-3.0, concat=-2.5, fixed=-1.5) -> dict:
    """A ratio result (CIL, schedules concat and ratio, buffers 0% and 1%): every old task learned at SNR 4
    and ending at 4 exp(log ratio + per-seed noise), the log ratio ``none`` at 0% (both schedules), ``concat``
    and ``fixed`` at 1%."""
    D, B = DATASETS.size, 2
    snr = np.full((D, 1, 2, B, N, 5, 5), np.nan)
    for i in range(5):
        for j in range(i + 1):
            snr[..., i, j] = 4.0
    for h, at_1 in enumerate((concat, fixed)):
        for b, x in enumerate((none, at_1)):
            snr[:, 0, h, b, :, 4, :4] = 4.0 * np.exp(x + noise(2 * h + b)[:, None])
    return {"datasets": DATASETS, "settings": np.array(["cil"]), "schedules": np.array(["concat", "ratio"]),
            "buffer_percents": np.array([0.0, 1.0]), "snr": snr}


def _decide_ratio(arrays) -> ledger.Evidence:
    c = ledger.REGISTRY["nc_forgetting.fixed_ratio_snr"]
    fr = ledger.FigureResult(arrays, {"config": CONFIG | {"replay_ratio": 0.5}, "seed_axes": {"snr": 4}})
    return c.decide(ledger.Reads({c.reads[0]: fr}, claim_id=c.id))


@pytest.mark.parametrize("kw, verdict", [({}, "holds"), ({"fixed": -3.5}, "fails"), ({"fixed": -2.5}, "inconclusive")])
def test_fixed_ratio_snr(kw, verdict):
    """The fixed fraction ends at log ratio -1.5, above no replay (-3) and the concatenated 1% buffer (-2.5):
    holds, both swapped inequalities rejected. Below no replay (-3.5): fails. Level with the concatenated
    buffer (-2.5, a null difference): undecided."""
    ev = _decide_ratio(ratio_result(**kw))
    assert ev.verdict == verdict
    if verdict == "holds":
        assert len(ev.controls) == 4 and all(c.rejected for c in ev.controls)


def test_fixed_ratio_snr_needs_both_schedules():
    a = ratio_result()
    a["schedules"] = np.array(["concat", "concat"])
    assert _decide_ratio(a).verdict == "inconclusive"


def test_dil_deep_forgetting_needs_til_and_dil():
    a = dil_sweep([0.01] * 5, [0.1] * 5)
    a["settings"] = np.array(["til", "cil", "cil"])
    assert decide("nc_forgetting.dil_deep_forgetting", a, SWEEP_AXES).verdict == "inconclusive"


def minority_result(norm_small=0.5, cos_small=0.8) -> dict:
    """A buffer_stats result (buffers 1, 2, 5, 20, 100%): the old / current feature-mean norm ratio
    ``norm_small`` at buffers <= 5% and 2 at 20% and 100%, and the old classes' head-row cosine ``cos_small``
    at buffers <= 5% and -1/9 (an ETF) above, each times / plus per-seed noise."""
    D, B = DATASETS.size, PB.size
    norm = np.empty((D, B, N))
    cos = np.empty((D, B, N))
    for b in range(B):
        small = PB[b] <= 5
        norm[:, b] = (norm_small if small else 2.0) * np.exp(noise(b))
        cos[:, b] = (cos_small if small else -1 / 9) + noise(b + 1)
    return {"datasets": DATASETS, "buffer_percents": PB, "minority_norm_ratio": norm, "minority_head_cosine": cos,
            "dead_runs": np.zeros((D, B, N), bool)}


STATS_MINORITY_AXES = {"minority_norm_ratio": 2, "minority_head_cosine": 2, "dead_runs": 2}


@pytest.mark.parametrize("norm_small, verdict", [(0.5, "holds"), (1.5, "fails"), (1.0, "inconclusive")])
def test_minority_features_shrink(norm_small, verdict):
    """Old classes' means at half the current classes' norm under small buffers: holds (balanced replay, at
    twice, is rejected); at 1.5x: fails; at exactly 1x: undecided."""
    ev = decide("nc_forgetting.minority_features_shrink", minority_result(norm_small=norm_small), STATS_MINORITY_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)


@pytest.mark.parametrize("cos_small, verdict", [(0.8, "holds"), (-0.09, "fails"), (4 / 9, "inconclusive")])
def test_minority_heads_converge(cos_small, verdict):
    """Old head rows at cosine 0.8 (nearer collinear than the ETF's -1/9): holds, the balanced ETF control
    rejected; at -0.09 (our measurement's level): fails; exactly at the midpoint 4/9: undecided."""
    ev = decide("nc_forgetting.minority_heads_converge", minority_result(cos_small=cos_small), STATS_MINORITY_AXES)
    assert ev.verdict == verdict and all(c.rejected for c in ev.controls)
