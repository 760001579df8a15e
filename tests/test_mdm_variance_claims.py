"""The MDM-variance claims decide on what they are given: fabricated figure results (no simulation) where
the answer is known, handed to the registered checks as :class:`claims.ledger.Reads`.

For each claim: a result where the statement holds gives "holds", one where it is violated gives
"fails", and one at the threshold gives "inconclusive" where the claim's test has a three-way band
(z tests and Student-t intervals). The consistency tests of the decomposition and P-POTS claims are
two-way (|a - b| <= 3 combined SE holds, above fails), so there the boundary is pinned from both sides."""

from __future__ import annotations

import numpy as np
import pytest

from claims import ledger
from claims import mdm_variance as C
from theory import mdm_variance as th

G = 16  # blocks (the seed axis of the Monte Carlo results)


def _decide(claim_id: str, name: str, arrays: dict, meta: dict) -> ledger.Evidence:
    return ledger.REGISTRY[claim_id].decide(ledger.Reads({name: (arrays, meta)}, claim_id=claim_id))


def _nested(rng, n, s_a, s_b, s_c, n_t=4, k=4) -> np.ndarray:
    """Per-sequence nested statistics [n, 3] of losses l = c_x + b_xt + a_xtk with the given sds, so
    A = s_a^2, B = s_b^2, C = s_c^2."""
    x = (s_c * rng.standard_normal((n, 1, 1)) + s_b * rng.standard_normal((n, n_t, 1))
         + s_a * rng.standard_normal((n, n_t, k)))
    return th.nested_stats(x)


# ---------------------------------------------------------------------------------------------------
# decomposition and ARM
# ---------------------------------------------------------------------------------------------------

DEC_META = {"config": {"n_t": 4, "n_masks": 4, "eps": 0.01}, "seed": 0, "scale": "quick",
            "seed_axes": {"nested_stats": 0, "direct_losses": 0}}
NB, ND = 256, 1000  # sequences per block (nested, direct)


def _decomposition(direct_scale=1.0, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    sds = {"mdm_oracle": (0.7, 0.3, 0.2), "mdm_learned": (0.7, 0.3, 0.2)}
    stats, direct = [], []
    for m in ("mdm_oracle", "arm_oracle", "mdm_learned", "arm_learned"):
        if m.startswith("arm"):  # deterministic in x0: A = B = 0 exactly
            big = 0.2 * rng.standard_normal(G * NB)
            st = np.stack([np.zeros_like(big), np.zeros_like(big), big], -1)
            total = 0.04
        else:
            st = _nested(rng, G * NB, *sds[m])
            total = sum(s * s for s in sds[m])
        stats.append(st.reshape(G, NB, 3))
        direct.append(np.sqrt(total * direct_scale) * rng.standard_normal((G, ND)))
    neglogp = np.array([1.2, 1.5, 1.3])
    return {"methods": np.array(["mdm_oracle", "arm_oracle", "mdm_learned", "arm_learned"]),
            "nested_stats": np.stack(stats, 1), "direct_losses": np.stack(direct, 1),
            "exact_mean_eps0": neglogp.copy(), "exact_mean_eps": neglogp + 0.004,
            "exact_mean_learned_eps0": neglogp + 0.03, "neglogp": neglogp}


def test_decomposition_holds_when_the_nested_estimate_matches_the_direct_variance():
    ev = _decide("mdm_variance.decomposition", "mdm_variance_decomposition", _decomposition(), DEC_META)
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    assert ev.measured["mdm_oracle"]["A"] == pytest.approx(0.49, rel=0.05)


def test_decomposition_fails_when_the_direct_variance_is_larger():
    ev = _decide("mdm_variance.decomposition", "mdm_variance_decomposition", _decomposition(1.3), DEC_META)
    assert ev.verdict == "fails"
    assert {d.name for d in ev.decisions if d.decision == "fails"} >= {"mdm_oracle: A+B+C = direct"}


def test_consistency_boundary_is_three_standard_errors():
    assert C._consistent("x", 3.0 - 1e-9, 0.0, 1.0, 0.0).decision == "holds"
    assert C._consistent("x", 3.0 + 1e-9, 0.0, 1.0, 0.0).decision == "fails"


def test_decomposition_is_stable_when_one_block_is_left_out():
    c = ledger.REGISTRY["mdm_variance.decomposition"]
    reads = ledger.Reads({"mdm_variance_decomposition": (_decomposition(), DEC_META)})
    st = ledger.stability(c, reads, c.decide(reads))
    assert st["total"] == G and st["agree"] == G and not st["fragile"]


def test_arm_claim_holds_and_its_controls_are_rejected():
    ev = _decide("mdm_variance.arm_only_data_noise", "mdm_variance_decomposition", _decomposition(), DEC_META)
    assert ev.verdict == "holds" and len(ev.controls) == 3 and all(c.rejected for c in ev.controls)


def test_arm_claim_fails_when_the_identity_is_off():
    a = _decomposition()
    a["exact_mean_eps0"] = a["exact_mean_eps0"] + 1e-6
    ev = _decide("mdm_variance.arm_only_data_noise", "mdm_variance_decomposition", a, DEC_META)
    assert ev.verdict == "fails"


def test_arm_claim_fails_when_the_exact_denoiser_control_passes_the_identity():
    a = _decomposition()
    a["exact_mean_learned_eps0"] = a["neglogp"].copy()  # the control case accepted: the test tells nothing
    assert _decide("mdm_variance.arm_only_data_noise", "mdm_variance_decomposition", a, DEC_META).verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# MIRROR
# ---------------------------------------------------------------------------------------------------

T = np.array([0.1, 0.3, 0.5, 0.7, 0.9])
CLOSED = np.array([th.mirror_ratio_context_free(t) for t in T])
CLOSED_RHO = np.array([th.mirror_rho_context_free(t) for t in T])
MIR_META = {"config": {"n_t": 4, "n_decomp_masks": 4, "eps": 0.01}, "seed": 0, "scale": "quick",
            "seed_axes": {}}
NR = 64  # sequences per block


def _rows(rng, ratio, rho, noise=0.02) -> np.ndarray:
    """Per-sequence (one-mask variance, pair variance, covariance) [G, R, NR, 3] with the given ratio and
    rho per rate (exactly, where noise multiplies a zero target)."""
    vs = rng.gamma(4.0, 0.25, (G, T.size, NR))
    e1, e2 = (1 + noise * rng.standard_normal(vs.shape) for _ in range(2))
    return np.stack([vs, np.asarray(ratio)[None, :, None] * vs * e1, np.asarray(rho)[None, :, None] * vs * e2], -1)


def _mirror(oracle_ratio=None, positive=0.625, seed=0) -> dict:
    rng = np.random.default_rng(seed)
    orc = CLOSED + 0.05 if oracle_ratio is None else np.asarray(oracle_ratio)
    a = {"t_grid": T, "closed_form": CLOSED, "pairings": np.array(["single", "mirror", "multisample2"]),
         "oracle_mirror_rows": _rows(rng, orc, 2 * orc - 1),
         "oracle_multisample2_rows": _rows(rng, np.full(T.size, 0.5), np.zeros(T.size)),
         "context_free_mirror_rows": _rows(rng, CLOSED, CLOSED_RHO),
         "context_free_multisample2_rows": _rows(rng, np.full(T.size, 0.5), np.zeros(T.size)),
         "oracle_positive_rows": _rows(rng, np.full(T.size, positive), np.full(T.size, 2 * positive - 1)),
         "dec_stats": np.stack([_nested(rng, G * NR, s, 0.3, 0.2).reshape(G, NR, 3) for s in (0.7, 0.5, 0.5)], 1)}
    meta = {**MIR_META, "seed_axes": {k: 0 for k in a if k.endswith("_rows") or k == "dec_stats"}}
    return a, meta


def test_mirror_holds_with_negative_correlation_at_every_t():
    ev = _decide("mdm_variance.mirror_halves_A", "mdm_variance_mirror", *_mirror())
    assert ev.verdict == "holds" and len(ev.controls) == 3 and all(c.rejected for c in ev.controls)


def test_mirror_fails_when_the_ratio_exceeds_a_half_somewhere():
    orc = CLOSED + 0.05
    orc[0] = 0.6
    ev = _decide("mdm_variance.mirror_halves_A", "mdm_variance_mirror", *_mirror(orc))
    assert ev.verdict == "fails"


def test_mirror_is_inconclusive_with_the_ratio_at_one_half():
    orc = CLOSED + 0.05
    orc[0] = 0.5
    ev = _decide("mdm_variance.mirror_halves_A", "mdm_variance_mirror", *_mirror(orc))
    assert ev.verdict == "inconclusive"
    assert [d.decision for d in ev.decisions][:2] == ["inconclusive", "inconclusive"]


def test_mirror_cannot_hold_when_the_control_pair_sits_at_the_boundary():
    """MultiSample-2 (ratio 1/2, rho 0) as the control would be undecided: the claim may not hold on it."""
    ev = _decide("mdm_variance.mirror_halves_A", "mdm_variance_mirror", *_mirror(positive=0.5))
    assert ev.verdict == "inconclusive" and not ev.controls[0].rejected


# ---------------------------------------------------------------------------------------------------
# P-POTS
# ---------------------------------------------------------------------------------------------------

EPS = (1e-2, 1e-3, 1e-4)
NBINS, NM, NC = 8, 128, 1000


def _pots(direct_pots_scale=1.0, seed=0) -> tuple[dict, dict]:
    rng = np.random.default_rng(seed)
    edges_all = np.stack([th.t_bin_edges(e, NBINS) for e in EPS])

    def draws(edges, shape):
        mid = 0.5 * (edges[1:] + edges[:-1])
        g, sd = 1.0 + 2.0 * mid, np.sqrt(0.2 / mid)  # E[l^2 | t] grows like 1/t; g varies with t
        return g[:, None] + sd[:, None] * rng.standard_normal((NBINS, shape))

    mom = np.stack([draws(e, G * NM) for e in edges_all])  # [e, b, n]
    check = draws(edges_all[0], G * NM)
    edges = edges_all[0]
    m0, mv = th.binned_summary(mom[0]), th.binned_summary(check)
    probs = th.pots_bin_probs(edges, m0["m2"])
    u, w = 1.0 / (edges[-1] - edges[0]), np.diff(edges)
    mu = float(np.sum(u * w * mv["g"]))
    var_u = th.binned_is_variance(edges, w, mv["m2"], mv["g"])
    var_p = th.binned_is_variance(edges, probs, mv["m2"], mv["g"])
    direct = np.stack([mu + np.sqrt(var_u) * rng.standard_normal(G * NC),
                       mu + np.sqrt(var_p * direct_pots_scale) * rng.standard_normal(G * NC)])
    var_pots = np.array([th.binned_optimal_variance(e, th.binned_summary(m)["m2"], th.binned_summary(m)["g"])
                         for e, m in zip(edges_all, mom)])
    a = {"eps_list": np.array(EPS), "edges_all": edges_all, "edges": edges, "probs_pots": probs,
         "moment_losses": np.moveaxis(mom.reshape(len(EPS), NBINS, G, NM), 2, 0),
         "check_moment_losses": np.moveaxis(check.reshape(NBINS, G, NM), 1, 0),
         "check_losses": np.moveaxis(direct.reshape(2, G, NC), 1, 0),
         "var_pots": var_pots, "var_epr": 1.01 * var_pots}
    meta = {"config": {"eps": 0.01}, "seed": 0, "scale": "quick",
            "seed_axes": {"moment_losses": 0, "check_moment_losses": 0, "check_losses": 0}}
    return a, meta


def test_pots_holds_when_the_direct_draws_match_the_bin_formula():
    ev = _decide("mdm_variance.pots_optimal", "mdm_variance_pots", *_pots())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    assert ev.measured["P-POTS / uniform"][0] < 1


def test_pots_fails_when_the_importance_weighted_variance_is_off():
    ev = _decide("mdm_variance.pots_optimal", "mdm_variance_pots", *_pots(direct_pots_scale=1.5))
    assert ev.verdict == "fails"
    assert [d.decision for d in ev.decisions][1] == "fails"


def test_pots_fails_when_the_gain_does_not_grow():
    a, meta = _pots()
    a["moment_losses"] = np.repeat(a["moment_losses"][:, :1], 3, 1)  # the same moments at every eps
    a["edges_all"] = np.repeat(a["edges_all"][:1], 3, 0)
    assert _decide("mdm_variance.pots_optimal", "mdm_variance_pots", a, meta).verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# StraTS / EMA (the claim's own draws: its decision rule on fabricated measurements)
# ---------------------------------------------------------------------------------------------------

STRATS = {"nB_iid": 0.10, "nB_iid_se": 0.004, "nB_strat": 0.05, "nB_strat_se": 0.004, "nB_shared": 6.0,
          "nB_shared_se": 0.3, "var_raw": 0.70, "var_raw_se": 0.01, "var_adj": 0.60, "var_adj_se": 0.01,
          "dvar_adj_se": 0.005, "var_neg": 1.0, "var_neg_se": 0.02, "dvar_neg_se": 0.01, "grad_diff_ema": 0.0,
          "grad_diff_attached": 0.01}


def test_strats_ema_decision_rule():
    assert C.decide_strats_ema(STRATS).verdict == "holds"
    assert C.decide_strats_ema({**STRATS, "nB_strat": 0.12}).verdict == "fails"
    assert C.decide_strats_ema({**STRATS, "nB_strat": 0.095}).verdict == "inconclusive"  # 0.9 SE
    assert C.decide_strats_ema({**STRATS, "grad_diff_ema": 1e-300}).verdict == "fails"  # not bitwise
    ev = C.decide_strats_ema({**STRATS, "grad_diff_attached": 0.0})  # the test cannot see the attached baseline
    assert ev.verdict == "fails" and not ev.controls[2].rejected


# ---------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------


def _training(n=8, grad_effect=-0.5, thin_effect=0.3, sd_std=0.05, sd_pm=0.002, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    gv = 5.0 * np.exp(0.2 * rng.standard_normal(n))
    val = lambda sd: np.concatenate([np.full((n, 1), 6.0), 3.1 + sd * rng.standard_normal((n, 2))], 1)  # noqa: E731
    a = {"standard_val_loss": val(sd_std), "pots_mirror_val_loss": val(sd_pm),
         "grad_var_standard": gv, "grad_var_pots_mirror": gv * np.exp(grad_effect + noise * rng.standard_normal(n)),
         "grad_var_thinned": gv * np.exp(thin_effect + noise * rng.standard_normal(n)),
         "loss_var_standard": np.ones(n), "loss_var_pots_mirror": np.full(n, 0.8), "loss_var_thinned": np.full(n, 1.2),
         "learned_A": np.float64(1.3), "learned_B": np.float64(0.03), "learned_C": np.float64(0.3)}
    meta = {"config": {"steps": 240, "d_model": 32}, "seed": 0, "scale": "quick",
            "seed_axes": {k: 0 for k in a if k.endswith(("_val_loss", "_standard", "_pots_mirror", "_thinned"))}}
    return a, meta


def test_training_holds_with_lower_gradient_variance_and_spread():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training())
    assert ev.verdict == "holds" and ev.controls[0].rejected


def test_training_fails_when_the_gradient_variance_rises():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training(grad_effect=0.5))
    assert ev.verdict == "fails"


def test_training_is_inconclusive_at_four_noisy_seeds():
    a, meta = _training(n=4, grad_effect=-0.2, noise=0.4, sd_pm=0.05)
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", a, meta)
    assert ev.verdict == "inconclusive"
    assert {d.decision for d in ev.decisions} == {"inconclusive"}


def test_training_fails_when_the_control_estimator_also_passes():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training(thin_effect=-0.3))
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_spread_decision_is_the_f_interval():
    import scipy.stats
    x, y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 10.0, 20.0, 30.0])
    r = np.var(x, ddof=1) / np.var(y, ddof=1)
    hi = r / scipy.stats.f.ppf(0.025, 3, 3)
    d = C.spread_decision("s", x, y)
    assert (d.decision == "holds") == (hi < 1) and d.decision == "holds"
    assert C.spread_decision("s", y, x).decision == "fails"
    assert C.spread_decision("s", x, 1.5 * x).decision == "inconclusive"
