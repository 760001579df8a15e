"""The MDM-variance claims decide on what they are given: fabricated figure results (no simulation) where
the answer is known, handed to the registered checks as :class:`claims.ledger.Reads`.

For each claim: a result where the statement holds gives "holds", one where it is violated gives
"fails", and one at the threshold gives "inconclusive" where the claim's test has a three-way band
(z tests and Student-t intervals). The consistency tests of the decomposition and P-POTS claims are
two-way (|a - b| <= 3 combined SE holds, above fails), so there the boundary is pinned from both sides."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import scipy.stats

from claims import ledger
from claims import mdm_variance as C
from theory import mdm_variance as th

G = 16  # blocks (the seed axis of the Monte Carlo results)

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "nested_A_mc": (0.05, "A is the mean of ddof-1 mask variances of normal draws, 16 x 256 sequences x 4 rates "
                          "x 3 df = 49152 df: SE = 0.49 sqrt(2 / 49152) = 0.0031, 0.64% relative, so 5% is ~8 SE "
                          "(measured 0.12% off); dividing by K instead of K - 1 is 25% off, folding B in 18%"),
    "scipy_chi2_sf": (1e-12, "scipy's chi2.sf is Cephes' regularised incomplete gamma, accurate to ~1e-15 relative "
                             "(measured 3e-16 against exp(-1)); a wrong df (1 or 3) gives p = 0.157 or 0.572"),
    "gauss_legendre": (1e-13, "16-node Gauss-Legendre is exact for t^2, leaving 16-term float64 sums (~16 eps = "
                              "3.6e-15) against (hi^3 - lo^3) / (3 width), which cancels at most 2x on these bins: "
                              "measured 3.7e-16; a one-point midpoint rule errs by >= 1% on these bins"),
    "mean_roundoff": (1e-12, "statsmodels' mean and numpy's of the same 12 same-sign differences differ only in "
                             "summation order: <= 12 eps = 2.7e-15 relative (measured 0)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


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


def _decomposition(direct_scale=1.0, seed=0, mdm_sds=(0.7, 0.3, 0.2)) -> dict:
    rng = np.random.default_rng(seed)
    sds = {"mdm_oracle": mdm_sds, "mdm_learned": mdm_sds}
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
    assert ev.measured["mdm_oracle"]["A"] == pytest.approx(0.49, rel=TOL["nested_A_mc"])


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


def test_a_dominates_holds_when_a_is_most_of_the_variance():
    # A = 0.49 against B + C = 0.13; the ARMs (A = 0) are rejected
    ev = _decide("mdm_variance.A_dominates", "mdm_variance_decomposition", _decomposition(), DEC_META)
    assert ev.verdict == "holds" and len(ev.controls) == 2 and all(c.rejected for c in ev.controls)


def test_a_dominates_fails_when_rate_and_data_noise_outweigh_a():
    # A = 0.16 against B + C = 0.25 + 0.09 = 0.34
    a = _decomposition(mdm_sds=(0.4, 0.5, 0.3))
    ev = _decide("mdm_variance.A_dominates", "mdm_variance_decomposition", a, DEC_META)
    assert ev.verdict == "fails" and {d.decision for d in ev.decisions} == {"fails"}


def test_a_dominates_is_inconclusive_at_the_boundary():
    # A = B + C exactly in the population (0.25 = 0.16 + 0.09): within a few SE of 0
    a = _decomposition(mdm_sds=(0.5, 0.4, 0.3))
    ev = _decide("mdm_variance.A_dominates", "mdm_variance_decomposition", a, DEC_META)
    assert ev.verdict == "inconclusive" and {d.decision for d in ev.decisions} == {"inconclusive"}


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
LEN = 6  # sequence length of the fabricated exact sums
NX = 16  # sequences per block of the exact sums


def _mask_sums(c) -> np.ndarray:
    """Exact mask sums ``[2, L + 1]`` of a loss whose masked tokens cost ``c_i (1 + k / L)`` when k tokens
    are masked (harder with less context, so E[l | t] rises with t), by enumerating the masks
    (independent of the code under test)."""
    out = np.zeros((2, c.size + 1))
    for m in itertools.product((0, 1), repeat=c.size):
        k = sum(m)
        s = float(np.dot(m, c)) * (1 + k / c.size)
        out[0, k] += s
        out[1, k] += s * s
    return out


def _pots(direct_pots_scale=1.0, spread=0.3, eps=EPS, seed=0) -> tuple[dict, dict]:
    """A P-POTS result: exact sums of fabricated sequences (per-token losses around 1.4; ``spread`` sets
    how much the sequences' mean losses differ), direct draws with the exact-in-t variances of the
    uniform and the bin density (the P-POTS one scaled by ``direct_pots_scale``)."""
    rng = np.random.default_rng(seed)
    base = 1.4 + 0.5 * rng.standard_normal(LEN)
    cs = [rng.permutation(base) + spread * rng.standard_normal() for _ in range(G * NX)]
    sums = np.stack([_mask_sums(c) for c in cs])  # [n, 2, L + 1]
    edges_all = np.stack([th.t_bin_edges(e, NBINS) for e in eps])
    edges = edges_all[0]
    mid = 0.5 * (edges[1:] + edges[:-1])
    probs = th.pots_bin_probs(edges, 1.0 / mid)
    ex = th.pots_exact(sums, eps[0], bin_edges=edges, bin_probs=probs)
    mu = ex["mu"]
    direct = np.stack([mu + np.sqrt(ex["V_uniform"]) * rng.standard_normal(G * NC),
                       mu + np.sqrt(ex["V_bins"] * direct_pots_scale) * rng.standard_normal(G * NC)])
    check = 1.4 + 0.5 * rng.standard_normal((NBINS, G * NM))  # E[l | t] flat: the unweighted mean is unbiased
    check += 0.5 * (mid[:, None] - mid.mean())  # ... unless t is drawn from p* without its weight
    a = {"eps_list": np.array(eps), "edges_all": edges_all, "edges": edges, "probs_pots": probs,
         "exact_sums": sums.reshape(G, NX, 2, LEN + 1),
         "check_moment_losses": np.moveaxis(check.reshape(NBINS, G, NM), 1, 0),
         "check_losses": np.moveaxis(direct.reshape(2, G, NC), 1, 0),
         "var_pots": np.ones(len(eps)), "var_uniform": np.full(len(eps), 1.1), "var_epr": np.full(len(eps), 1.01)}
    meta = {"config": {"eps": eps[0]}, "seed": 0, "scale": "quick",
            "seed_axes": {"check_moment_losses": 0, "check_losses": 0, "exact_sums": 0}}
    return a, meta


def test_pots_holds_when_the_direct_draws_match_the_exact_variances():
    ev = _decide("mdm_variance.pots_optimal", "mdm_variance_pots", *_pots())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)
    assert all(r < 1 for r in ev.measured["exact P-POTS / uniform"])


def test_pots_fails_when_the_importance_weighted_variance_is_off():
    ev = _decide("mdm_variance.pots_optimal", "mdm_variance_pots", *_pots(direct_pots_scale=1.5))
    assert ev.verdict == "fails"
    assert [d.decision for d in ev.decisions][1] == "fails"


def test_pots_fails_when_the_gain_does_not_grow():
    # eps listed from small to large: the ratio then rises at every step
    ev = _decide("mdm_variance.pots_optimal", "mdm_variance_pots", *_pots(eps=EPS[::-1]))
    assert ev.verdict == "fails" and [d.decision for d in ev.decisions][4] == "fails"


def test_paper_estimator_attains_the_optimum_when_sequences_share_their_mean_loss():
    # every sequence a permutation of the same per-token losses: Var_x0 E[l | x0, t] = 0, the paper's
    # density is the optimum exactly
    ev = _decide("mdm_variance.pots_paper_estimator", "mdm_variance_pots", *_pots(spread=0.0))
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


def test_paper_estimator_fails_when_the_data_noise_moves_the_optimum():
    ev = _decide("mdm_variance.pots_paper_estimator", "mdm_variance_pots", *_pots(spread=1.0))
    assert ev.verdict == "fails" and [d.decision for d in ev.decisions] == ["holds", "fails"]


def _synergy(c_mid, c_end, nb=512, seed=0) -> tuple[dict, dict]:
    """Pair draws per bin: E[l | t] = 1 + 8 (t - 1/2)^2 (lowest at mid t), mask variance c_mid exp(-((t - 1/2)
    / 0.15)^2) + c_end [t > 0.8]; MIRROR's partner correlated by the context-free rho(t) = -min / max, the
    MultiSample-2 partner independent. Population S (bin formula): (1, 2) gives S_MIRROR = +0.016 and
    S_MS-2 = -0.015; (0.5, 4) gives S_MIRROR = -0.13; (2, 1) gives S_MIRROR = +0.10 and S_MS-2 = +0.045."""
    rng = np.random.default_rng(seed)
    edges = th.t_bin_edges(0.01, 8)
    mid = 0.5 * (edges[1:] + edges[:-1])
    g = 1 + 8 * (mid - 0.5) ** 2
    sd = np.sqrt(c_mid * np.exp(-(((mid - 0.5) / 0.15) ** 2)) + c_end * (mid > 0.8))
    rho = -np.minimum(mid, 1 - mid) / np.maximum(mid, 1 - mid)
    z1, z2, z3 = rng.standard_normal((3, G, nb, mid.size))
    x = np.stack([g + sd * z1, g + sd * (rho * z1 + np.sqrt(1 - rho**2) * z2), g + sd * z3], -1)
    a = {"pair_losses": x, "edges": edges, "eps_list": np.array([0.01])}
    return a, {"config": {"eps": 0.01}, "seed": 0, "scale": "quick", "seed_axes": {"pair_losses": 0}}


def test_synergy_holds_when_mirror_is_superadditive_and_multisample2_is_not():
    ev = _decide("mdm_variance.pots_mirror_synergy", "mdm_variance_pots", *_synergy(1.0, 2.0))
    assert ev.verdict == "holds" and ev.controls[0].rejected


def test_synergy_fails_when_the_combination_is_subadditive():
    ev = _decide("mdm_variance.pots_mirror_synergy", "mdm_variance_pots", *_synergy(0.5, 4.0))
    assert ev.verdict == "fails" and ev.decisions[0].decision == "fails"


def test_synergy_fails_when_two_independent_masks_are_as_superadditive():
    ev = _decide("mdm_variance.pots_mirror_synergy", "mdm_variance_pots", *_synergy(2.0, 1.0))
    assert ev.decisions[0].decision == "holds" and not ev.controls[0].rejected and ev.verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# StraTS (the claim's own draws: its decision rule on fabricated measurements)
# ---------------------------------------------------------------------------------------------------

STRATS = {"nB_iid": 0.10, "nB_iid_se": 0.004, "nB_strat": 0.05, "nB_strat_se": 0.004, "nB_shared": 6.0,
          "nB_shared_se": 0.3}


def test_strats_decision_rule():
    assert C.decide_strats(STRATS).verdict == "holds"
    assert C.decide_strats({**STRATS, "nB_strat": 0.12}).verdict == "fails"
    assert C.decide_strats({**STRATS, "nB_strat": 0.095}).verdict == "inconclusive"  # 0.9 SE
    ev = C.decide_strats({**STRATS, "nB_shared": 0.05, "nB_shared_se": 0.004})  # the control passes
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_ema_has_no_claim():
    assert "mdm_variance.strats_ema" not in ledger.REGISTRY and "mdm_variance.strats" in ledger.REGISTRY


# ---------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------


def _training(n=8, grad_effect=-0.5, thin_effect=0.3, sd_std=0.05, sd_pm=0.002, noise=0.05, seed=0):
    rng = np.random.default_rng(seed)
    gv = 5.0 * np.exp(0.2 * rng.standard_normal(n))
    val = lambda sd: np.concatenate([np.full((n, 1), 6.0), 3.1 + sd * rng.standard_normal((n, 2))], 1)  # noqa: E731
    # MultiSample-2 (the compute-matched baseline) is what the decisions compare with; the one-mask standard
    # run sits far above it, so a claim judged against it would hold in every case below
    a = {"standard_val_loss": val(5 * sd_std), "multisample2_val_loss": val(sd_std),
         "pots_mirror_val_loss": val(sd_pm), "grad_var_standard": 4.0 * gv, "grad_var_multisample2": gv,
         "grad_var_pots_mirror": gv * np.exp(grad_effect + noise * rng.standard_normal(n)),
         "grad_var_thinned": gv * np.exp(thin_effect + noise * rng.standard_normal(n)),
         "loss_var_standard": np.ones(n), "loss_var_multisample2": np.full(n, 0.9),
         "loss_var_pots_mirror": np.full(n, 0.8), "loss_var_thinned": np.full(n, 1.2),
         "learned_A": np.float64(1.3), "learned_B": np.float64(0.03), "learned_C": np.float64(0.3)}
    meta = {"config": {"steps": 240, "d_model": 32}, "seed": 0, "scale": "quick",
            "seed_axes": {k: 0 for k in a if k.endswith(("_val_loss", "_standard", "_multisample2", "_pots_mirror",
                                                          "_thinned"))}}
    return a, meta


def test_training_holds_with_lower_gradient_variance_and_spread():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training())
    assert ev.verdict == "holds" and ev.controls[0].rejected


def test_training_fails_when_the_gradient_variance_rises():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training(grad_effect=0.5))
    assert ev.verdict == "fails"


def test_training_fails_when_only_the_one_mask_baseline_is_beaten():
    # P-POTS + MIRROR above MultiSample-2 (its cost-matched baseline), below the one-mask standard run
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training(grad_effect=0.5))
    assert ev.measured["grad-variance ratio standard / P+M (one mask, not compute-matched)"] > 1
    assert ev.verdict == "fails"


def test_training_is_inconclusive_at_four_noisy_seeds():
    a, meta = _training(n=4, grad_effect=-0.1, noise=0.4, sd_pm=0.05)
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", a, meta)
    assert ev.verdict == "inconclusive"
    assert {d.decision for d in ev.decisions} == {"inconclusive"}


def test_training_fails_when_the_control_estimator_also_passes():
    ev = _decide("mdm_variance.training_stability", "mdm_variance_training", *_training(thin_effect=-0.3))
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_spread_decision_is_the_f_interval():
    x, y = np.array([0.0, 1.0, 2.0, 3.0]), np.array([0.0, 10.0, 20.0, 30.0])
    r = np.var(x, ddof=1) / np.var(y, ddof=1)
    hi = r / scipy.stats.f.ppf(0.025, 3, 3)
    d = C.spread_decision("s", x, y)
    assert (d.decision == "holds") == (hi < 1) and d.decision == "holds"
    assert C.spread_decision("s", y, x).decision == "fails"
    assert C.spread_decision("s", x, 1.5 * x).decision == "inconclusive"


# ---------------------------------------------------------------------------------------------------
# EPR fit (Fig. 1's shape): chi-square goodness of fit on independent per-bin draws
# ---------------------------------------------------------------------------------------------------

EPR_TRUE = (1.0, 1.0, 4.0, 3.0, 1.5, 0.5, 2.0)  # (a, r, b, q, A, kappa, m): E[l^2 | t] U-shaped in t


def _epr_m2(t, params):
    a, r, b, q, amp, kappa, m = params
    return a * t**r + b * (1 - t) ** q + amp**2 * np.exp(2 * kappa * t**m)


def _epr(stored_params=EPR_TRUE, nb=128, seed=0) -> tuple[dict, dict]:
    """Per-bin draws with E[l | t] = 1 and E[l^2 | t] = the EPR form squared at ``EPR_TRUE`` (bin means by a
    fine trapezoid, independent of the claim's quadrature), the choosing and the judged draws independent;
    ``stored_params`` is the EPR fit the result reports."""
    a, meta = _pots(seed=seed)
    rng = np.random.default_rng(seed + 1)
    edges = a["edges"]
    target = np.array([np.trapezoid(_epr_m2(tt, EPR_TRUE), tt) / (hi - lo)
                       for lo, hi in zip(edges[:-1], edges[1:]) for tt in [np.linspace(lo, hi, 4001)]])
    sd = np.sqrt(target - 1.0)[None, :, None]
    draw = lambda: 1.0 + sd * rng.standard_normal((G, target.size, nb))  # noqa: E731
    probs = np.sqrt(target) * np.diff(edges)
    a.update(moment_losses=draw()[:, None], check_moment_losses=draw(), epr_params=np.asarray(stored_params),
             probs_epr=probs / probs.sum(), density_pots=np.sqrt(target), exact_t=np.geomspace(0.01, 1.0, 50))
    a["exact_m2"] = _epr_m2(a["exact_t"], EPR_TRUE)
    meta["seed_axes"].update(moment_losses=0)
    return a, meta


def test_shape_gof_against_a_hand_computed_chi_square():
    # s = 2 (equal weights), residuals -1, 0, 1: chi2 = 2 on 2 df, whose survival function is exp(-1)
    r = C.shape_gof([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0])
    # exact: s = 6 / 3, residuals and chi2 are small integers, exact in float64
    assert r["scale"] == pytest.approx(2.0, rel=0, abs=0) and r["chi2"] == pytest.approx(2.0, rel=0, abs=0)
    assert r["df"] == 2
    assert r["p"] == pytest.approx(np.exp(-1.0), rel=TOL["scipy_chi2_sf"])


def test_bin_average_integrates_polynomials_exactly():
    edges = np.array([0.01, 0.2, 0.7, 1.0])
    exp = (edges[1:] ** 3 - edges[:-1] ** 3) / (3 * np.diff(edges))  # the mean of t^2 over each bin
    np.testing.assert_allclose(C.bin_average(edges, lambda t: t**2), exp, rtol=TOL["gauss_legendre"])


def test_epr_fit_holds_when_the_form_is_the_truth_and_controls_are_rejected():
    ev = _decide("mdm_variance.epr_fit", "mdm_variance_pots", *_epr())
    assert ev.verdict == "holds", ev.decisions
    assert all(c.rejected for c in ev.controls)


def test_epr_fit_fails_when_the_fitted_form_misses_the_small_t_rise():
    wrong = (1.0, 1.0, 0.0, 3.0, 1.5, 0.5, 2.0)  # b = 0: the (1 - t)^q term left out
    ev = _decide("mdm_variance.epr_fit", "mdm_variance_pots", *_epr(stored_params=wrong))
    assert ev.decisions[0].decision == "holds" and ev.decisions[1].decision == "fails" and ev.verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# gradient-level decomposition: trace of the gradient covariance
# ---------------------------------------------------------------------------------------------------

GD, GNB, GND = 3, 64, 512  # gradient coordinates, sequences per block (nested, flat)


def _gradient(mdm_sds=(0.7, 0.3, 0.2), direct_scale=1.0, seed=0) -> tuple[dict, dict]:
    """Nested vector draws g = c_x + b_xt + a_xtk per coordinate (so A_g = GD s_a^2, B_g = GD s_b^2,
    C_g = GD s_c^2) for the MDM and c_x alone for the ARM, and flat draws of total variance (scaled by
    ``direct_scale`` for the MDM), stored as per-block sums."""
    rng = np.random.default_rng(seed)
    nested, flat = [], []
    for sds in (mdm_sds, (0.0, 0.0, 0.2)):
        s_a, s_b, s_c = sds
        x = (s_c * rng.standard_normal((G * GNB, 1, 1, GD)) + s_b * rng.standard_normal((G * GNB, 4, 1, GD))
             + s_a * rng.standard_normal((G * GNB, 4, 4, GD)))
        scale = direct_scale if s_a > 0 else 1.0
        f = np.sqrt(scale * sum(s * s for s in sds)) * rng.standard_normal((G * GND, GD))
        nested.append(np.stack([th.trace_nested_sums(b) for b in np.split(x, G)]))
        flat.append(np.stack([th.trace_direct_sums(b) for b in np.split(f, G)]))
    a = {"grad_nested_sums": np.stack(nested, 1), "grad_direct_sums": np.stack(flat, 1),
         "grad_block_n": np.array([GNB, GND])}
    meta = {"config": {"n_t": 4, "n_masks": 4, "eps": 0.01}, "seed": 0, "scale": "quick",
            "seed_axes": {"grad_nested_sums": 0, "grad_direct_sums": 0}}
    return a, meta


GRAD_ID = "mdm_variance.gradient_decomposition"


def test_gradient_decomposition_holds_and_its_controls_are_rejected():
    ev = _decide(GRAD_ID, "mdm_variance_decomposition", *_gradient())
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


def test_gradient_decomposition_fails_when_the_direct_trace_is_larger():
    ev = _decide(GRAD_ID, "mdm_variance_decomposition", *_gradient(direct_scale=1.5))
    assert ev.decisions[0].decision == "fails" and ev.verdict == "fails"


def test_gradient_decomposition_fails_when_rate_and_data_noise_outweigh_a():
    ev = _decide(GRAD_ID, "mdm_variance_decomposition", *_gradient(mdm_sds=(0.3, 0.4, 0.4)))
    assert ev.decisions[0].decision == "holds" and ev.decisions[2].decision == "fails" and ev.verdict == "fails"


# ---------------------------------------------------------------------------------------------------
# Table 1 and Table 2 orderings (final validation loss, seed-paired)
# ---------------------------------------------------------------------------------------------------

T1_ID, T2_ID = "mdm_variance.table1_ordering", "mdm_variance.table2_ordering"
PAPER_ORDER = {"standard": 0.0, "pots": -0.01, "mirror": -0.02, "pots_mirror": -0.03, "multisample2": -0.015,
               "thinned": 0.01}  # shifts of the final loss: the order Table 2 reports, thinned worst


def _orderings(shift=PAPER_ORDER, n=12, noise=0.002, seed_sd=0.02, seed=0) -> tuple[dict, dict]:
    """Validation losses ``[n, 3]`` per method: 6.0 at step 0, then a per-seed level shared by every method
    (sd ``seed_sd``: what pairing removes) plus the method's ``shift`` plus independent noise."""
    rng = np.random.default_rng(seed)
    level = 3.1 + seed_sd * rng.standard_normal((n, 1))
    a = {f"{m}_val_loss": np.concatenate([np.full((n, 1), 6.0), level + s + noise * rng.standard_normal((n, 2))], 1)
         for m, s in shift.items()}
    meta = {"config": {"steps": 240, "batch": 4, "seq_len": 24, "d_model": 32}, "seed": 0, "scale": "quick",
            "seed_axes": {k: 0 for k in a}}
    return a, meta


def test_table_orderings_hold_in_the_papers_order_and_reject_the_thinned_control():
    for cid in (T1_ID, T2_ID):
        ev = _decide(cid, "mdm_variance_training", *_orderings())
        assert ev.verdict == "holds" and all(d.decision == "holds" for d in ev.decisions)
        assert len(ev.controls) == 1 and ev.controls[0].rejected
    assert len(_decide(T1_ID, "mdm_variance_training", *_orderings()).decisions) == 5
    assert len(_decide(T2_ID, "mdm_variance_training", *_orderings()).decisions) == 3


def test_table1_fails_when_p_pots_ranks_below_standard():
    ev = _decide(T1_ID, "mdm_variance_training", *_orderings({**PAPER_ORDER, "pots": 0.01}))
    bad = [d for d in ev.decisions if d.decision == "fails"]
    assert ev.verdict == "fails" and [d.name.split(" ranks")[0] for d in bad] == ["P-POTS"]


def test_table2_alone_fails_when_p_pots_outranks_mirror():
    # Table 1 does not rank P-POTS against MIRROR (its columns disagree); Table 2 puts MIRROR above P-POTS
    order = {**PAPER_ORDER, "pots": -0.02, "mirror": -0.01}
    assert _decide(T1_ID, "mdm_variance_training", *_orderings(order)).verdict == "holds"
    ev = _decide(T2_ID, "mdm_variance_training", *_orderings(order))
    assert ev.verdict == "fails" and [d.decision for d in ev.decisions] == ["holds", "fails", "holds"]


def test_table_orderings_are_inconclusive_when_the_seeds_cannot_decide():
    ev = _decide(T1_ID, "mdm_variance_training", *_orderings(n=4, noise=0.05))
    assert ev.verdict == "inconclusive" and any(d.decision == "inconclusive" for d in ev.decisions)


def test_table_orderings_fail_when_the_thinned_control_also_ranks_above_standard():
    ev = _decide(T1_ID, "mdm_variance_training", *_orderings({**PAPER_ORDER, "thinned": -0.01}))
    assert all(d.decision == "holds" for d in ev.decisions) and not ev.controls[0].rejected
    assert ev.verdict == "fails"


def test_ordering_decision_pairs_the_seeds_on_the_student_t_interval():
    # a common per-seed level 10 times the method gap: only the paired comparison resolves the gap
    a, _ = _orderings(seed_sd=0.1, noise=0.002)
    f = C.final_val_loss(a)
    d = C.ordering_decision(f, "mirror", "standard")
    diff = f["standard"] - f["mirror"]
    lo = diff.mean() - scipy.stats.t.ppf(0.975, diff.size - 1) * diff.std(ddof=1) / np.sqrt(diff.size)
    assert d.statistic == pytest.approx(diff.mean(), rel=TOL["mean_roundoff"]) and lo > 0 and d.decision == "holds"
    shuffled = {**f, "mirror": f["mirror"][np.roll(np.arange(f["mirror"].size), 1)]}  # pairs broken
    assert C.ordering_decision(shuffled, "mirror", "standard").decision == "inconclusive"
