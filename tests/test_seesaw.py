"""Seesaw (arXiv 2510.14717): the exact recursion against closed forms and Monte Carlo, the schedules
against the paper's step counts, and toy-size runs of every experiment and figure. float64 throughout
(tests/conftest.py turns it on)."""

import itertools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

from theory import seesaw as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "linalg_route": (1e-12, "the same quantity by a dense route: the 6x6 recursion in a rotated basis over 35 "
                            "contracting steps (radius <= 0.98), or numpy's eigenvalues of the 4x4 one-step map; "
                            "measured <= 1.3e-15"),
    "closed_form": (1e-13, "a closed form (rho^t with rho = 0.61, the Isserlis moment) against the float64 "
                           "recursion or formula: tens of roundings of O(1) terms, measured <= 3.8e-16; a dropped "
                           "tr H, noise or 1/B term moves E||g||^2 by >= 3%"),
    "few_roundings": (1e-15, "1/2 and 1/6 from exact inputs: one rounding each side (measured equal)"),
    "few_ops": (1e-12, "a handful of roundings: a sqrt and a division, or 24 successive divisions of the lr "
                       "multiplier by sqrt(1.1), <= 24 eps = 5e-15 (measured <= 1.0e-15)"),
    "phase_samples": (1e-12, "a phase's batch 4096 / n summed over its n <= 512 steps: <= 512 eps = 1.1e-13 "
                             "relative (measured 1.1e-16); a phase off by one step misses by >= 1/512"),
    "phase_lr_match": (1e-12, "eta0 alpha^-k by python's ** (schedule) and numpy's power (here): an ulp or two apart "
                              "(measured equal) while phases differ by sqrt2; was the library default rtol 1e-5"),
    "continuum_limit": (1e-4, "the discrete scheduler approaches its limit linearly in gamma - 1: measured offset "
                              "2.5e-5 at gamma = 1.0001 (2.4e-4 at 1.001); dropping the warmup moves it by 0.045"),
    "hand_value_abs": (1e-14, "hand values of a few acos, divisions and sums on O(1) numbers at gamma = 2: a few "
                              "ulp (measured <= 2.8e-17); one switch more or less moves them by >= 0.016 (measured)"),
    "bisection": (1e-9, "80 bisections pin each switch to float resolution and both sides sum <= ~220 switches "
                        "(lr_cut 1e-9 at gamma = 1.1): <= ~1e-13 (measured <= 3.3e-16); a sum shifted by one switch "
                        "moves the reduction by >= 0.047 on these cases (measured)"),
    "switch_at_floor": (1e-12, "a switch exactly at the floor (gamma^-k = f) must count: gamma^-k carries ~k ulp "
                               "for k <= 220, far below this relative slack, and the next switch is a factor "
                               "gamma >= 1.1 lower"),
    "hand_value_rel": (1e-14, "hand values of a few float64 operations (noise scale, power-law eigenvalues): a few "
                              "ulp (measured <= 1.2e-16)"),
    "recomputed": (1e-12, "the test recomputes the value from the same schedules and recursion, or sums it in "
                          "another order (fsum, numpy against JAX): measured <= 2.7e-16, ~4000x below"),
    "mc_z3": (3.0, "one comparison at 3 SE: a false alarm 2.7e-3 (fixed seeds; measured |z| 1.0 and 0.70); 200000 "
                   "draws resolve 0.4%, the bugs move >= 3%"),
    "mc_mean_abs_z": (2.0, "the mean |z| along the path, 0.80 for independent z (measured 0.84); a biased path "
                           "drifts the whole mean"),
    "mc_z_moments": (4.5, "14 moments each at 4.5 SE: P(|Z| > 4.5) = 6.8e-6, 9.5e-5 over the 14 (measured max |z| "
                          "2.3); the bugs listed move some entry by 18 SE or more"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _full_recursion(h, sigma0, noise_var, lrs, bs):
    """Dense second-moment recursion with E[Ĥ A Ĥ] = HAH + (HAH + tr(HA)H)/B (Gaussian inputs)."""
    d = h.shape[0]
    s, risks = sigma0.copy(), [0.5 * np.trace(h @ sigma0)]
    for lr, b in zip(lrs, bs):
        a = np.eye(d) - lr * h
        s = a @ s @ a + lr**2 / b * (h @ s @ h + np.trace(h @ s) * h) + lr**2 * noise_var / b * h
        risks.append(0.5 * np.trace(h @ s))
    return np.asarray(risks)


def test_diagonal_recursion_equals_dense_recursion_in_any_basis():
    rng = np.random.default_rng(0)
    d = 6
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    lam = th.power_law_eigs(d)
    h = q @ np.diag(lam) @ q.T
    x = rng.normal(size=(d, d))
    sigma0 = x @ x.T / d
    lrs, bs = np.r_[np.full(20, 0.7), np.full(15, 0.3)], np.r_[np.full(20, 3.0), np.full(15, 2.5)]
    dense = _full_recursion(h, sigma0, 0.4, lrs, bs)
    diag = th.expected_risk(lam, np.diag(q.T @ sigma0 @ q), 0.4, lrs, bs)
    np.testing.assert_allclose(diag, dense, rtol=TOL["linalg_route"])


def test_one_dimensional_closed_form():
    lam, lr, b, s2, m0, t = 0.8, 0.3, 4.0, 0.5, 2.0, 50
    rho = 1 - 2 * lr * lam + lr**2 * lam**2 * (1 + 2 / b)
    c = lr**2 * lam * s2 / b
    m_t = rho**t * m0 + c * (1 - rho**t) / (1 - rho)
    r = th.expected_risk([lam], m0, s2, np.full(t, lr), np.full(t, b))
    assert r[-1] == pytest.approx(0.5 * lam * m_t, rel=TOL["closed_form"])


def _isserlis_grad_second_moment(h, e, noise_var, b):
    """``E||g||^2`` of ``g = (1/b) sum_i x_i (x_i^T e - eps_i)``, ``x_i ~ N(0, h)`` and ``eps_i ~ N(0,
    noise_var)`` independent, from first principles: ``||g||^2 = b^-2 sum_{i,k} g_i . g_k``; a pair i != k
    gives ``||h e||^2``; i = k gives ``E[(x^T e)^2 ||x||^2] + noise_var tr h``, the fourth moment term by term
    from Isserlis' theorem ``E[x_a x_a x_b x_c] = h_aa h_bc + 2 h_ab h_ac``. Exact in Fractions."""
    d = len(h)
    he = [sum(h[a][c] * e[c] for c in range(d)) for a in range(d)]
    pair = sum(v * v for v in he)
    fourth = sum((h[a][a] * h[i][j] + 2 * h[a][i] * h[a][j]) * e[i] * e[j]
                 for a, i, j in itertools.product(range(d), repeat=3))
    same = fourth + noise_var * sum(h[a][a] for a in range(d))
    return (b * (b - 1) * pair + b * same) / b**2


# tr H = 3.1, sigma^2 = 7/10 and uneven m: a dropped tr H, noise or 1/B term moves E||g||^2 by 3% or more.
G2_EIGS = [Fraction(2), Fraction(7, 10), Fraction(3, 10), Fraction(1, 10)]
G2_ERR = [Fraction(1), Fraction(-1, 2), Fraction(3, 2), Fraction(2)]  # w - w* in the eigenbasis; m = err^2


@pytest.mark.parametrize("b", [1, 3, 5])
def test_grad_second_moment_equals_the_isserlis_expansion(b):
    h = [[lam if i == j else Fraction(0) for j, _ in enumerate(G2_EIGS)] for i, lam in enumerate(G2_EIGS)]
    want = _isserlis_grad_second_moment(h, G2_ERR, Fraction(7, 10), b)
    lam, m = np.array(G2_EIGS, np.float64), np.array([float(x * x) for x in G2_ERR])
    assert float(th.grad_second_moment(jnp.asarray(lam), jnp.asarray(m), 0.7, float(b))) == \
        pytest.approx(float(want), rel=TOL["closed_form"])
    # NSGD's first step is eta / sqrt(E||g||^2) (float64 recursion)
    _, eff = th.expected_risk(lam, m, 0.7, [0.05, 0.05], [b, b], normalized=True, return_lrs=True)
    assert eff[0] == pytest.approx(0.05 / math.sqrt(want), rel=TOL["closed_form"])


def test_isserlis_expansion_agrees_with_a_monte_carlo_of_the_gradient():
    """The expected value above checked once against its definition: batches drawn in numpy (3 SE)."""
    rng = np.random.default_rng(7)
    lam, e, s2, b, n = np.array(G2_EIGS, float), np.array(G2_ERR, float), 0.7, 3, 200_000
    x = rng.standard_normal((n, b, 4)) * np.sqrt(lam)
    eps = rng.standard_normal((n, b)) * math.sqrt(s2)
    g = np.einsum("nbi,nb->ni", x, x @ e - eps) / b
    sq = np.sum(g * g, axis=1)
    h = [[lam_ if i == j else Fraction(0) for j in range(4)] for i, lam_ in enumerate(G2_EIGS)]
    want = float(_isserlis_grad_second_moment(h, G2_ERR, Fraction(7, 10), b))
    se = sq.std(ddof=1) / math.sqrt(n)
    assert abs(sq.mean() - want) < TOL["mc_z3"] * se and se / want < 0.01  # 1% resolution; the bugs above move >= 3%


def test_monte_carlo_sgd_agrees_with_recursion_within_3_se():
    # label-noise variance 0.3, not 1: a noise drawn with sd 1/sqrt(0.3) (or variance 0.3^2) differs here
    lam = jnp.asarray(th.power_law_eigs(8))
    lrs, bs = th.phase_schedule(0.5, 2, 1.0, 2.0, 256, 3)
    exact = th.expected_risk(lam, 1.0, 0.3, lrs, bs)
    from sims import runtime

    mean, se = runtime.mean_over_seeds(lambda k: th.sgd_risk_path(k, lam, jnp.ones(8), 0.3, lrs, bs), 0, 512)
    z = (mean - exact)[1:] / se[1:]
    assert np.max(np.abs(z[-1])) < TOL["mc_z3"] and np.mean(np.abs(z)) < TOL["mc_mean_abs_z"]
    assert se[-1] / mean[-1] < 0.1  # the check has power: 10% relative precision or better


def test_phase_schedule_spends_equal_samples_per_phase():
    lrs, bs = th.phase_schedule(0.5, 8, th.SQRT2, th.SQRT2, 4096, 4)
    phase_lr = 0.5 * th.SQRT2 ** -np.arange(4)
    starts = [int(np.argmax(np.isclose(lrs, v, rtol=TOL["phase_lr_match"], atol=0))) for v in phase_lr]
    ends = starts[1:] + [lrs.size]
    for a, b in zip(starts, ends):
        assert bs[a:b].sum() == pytest.approx(4096, rel=TOL["phase_samples"])
    l2, b2 = th.phase_schedule(1.0, 8, 2, 1, 64, 2)
    np.testing.assert_array_equal(b2, 8.0)
    np.testing.assert_array_equal(l2, np.r_[np.ones(8), np.full(8, 0.5)])
    with pytest.raises(ValueError, match="exceeds"):
        th.phase_schedule(1.0, 8, 1, 4, 64, 3)
    with pytest.raises(ValueError):
        th.phase_schedule(-1.0, 8, 1, 1, 64, 1)
    # a phase of one step (nominal batch = its budget) is a phase
    l1, b1 = th.phase_schedule(1.0, 64, 1, 1, 64, 1)
    np.testing.assert_array_equal(b1, [64.0])
    # exact inputs give the documented float64 arrays: 12 samples at nominal batch 8 is round(1.5) = 2 steps
    # of batch 6 per phase, at lr 1/2 then 1/6
    l3, b3 = th.phase_schedule(Fraction(1, 2), 8, 3, 1, Fraction(12), 2)
    assert l3.dtype == b3.dtype == np.float64
    np.testing.assert_allclose(l3, np.r_[np.full(2, 0.5), np.full(2, 1 / 6)], rtol=TOL["few_roundings"])
    np.testing.assert_array_equal(b3, 6.0)


def test_nsgd_takes_no_step_where_the_expected_gradient_is_zero():
    """At the optimum without label noise E||g||^2 = 0: normalised SGD's effective rate is 0 (not the
    nominal rate, not 1) and the risk stays 0; with noise the rate is lr / sqrt(E||g||^2) > 0."""
    lrs, bs = np.full(3, 0.2), np.full(3, 4.0)
    risk, eff = th.expected_risk([1.0, 0.25], 0.0, 0.0, lrs, bs, normalized=True, return_lrs=True)
    np.testing.assert_array_equal(eff, 0.0)
    np.testing.assert_array_equal(risk, 0.0)
    _, eff = th.expected_risk([1.0, 0.25], 0.0, 0.5, lrs, bs, normalized=True, return_lrs=True)
    # E||g||^2 at m = 0 is tr H sigma^2 / B = 1.25 * 0.5 / 4
    assert eff[0] == pytest.approx(0.2 / math.sqrt(1.25 * 0.5 / 4), rel=TOL["few_ops"])


def test_phase_schedule_names_the_argument_it_refuses():
    for i, name in enumerate(["eta0", "b0", "alpha", "beta", "samples_per_phase"]):
        args = [1.0, 8, 1, 1, 64]
        args[i] = 0
        with pytest.raises(ValueError, match=f"^{name} must be > 0"):
            th.phase_schedule(*args, 1)


def test_phase_schedule_step_limit_counts_every_phase(monkeypatch):
    """MAX_STEPS bounds the running total over phases (8 steps per phase here): 3 phases fit in 24, a 4th
    is refused, naming the phases counted."""
    monkeypatch.setattr(th, "MAX_STEPS", 24)
    assert th.phase_schedule(1.0, 8, 1, 1, 64, 3)[0].size == 24
    with pytest.raises(ValueError, match="first 4 phases is 32"):
        th.phase_schedule(1.0, 8, 1, 1, 64, 4)


def test_paper_step_counts_and_scheduler_shape():
    assert th.paper_step_counts(3.3e9, 1024, 256) == (12589, 7756)
    assert th.paper_step_counts(3.3e9, 1024, 128) == (25178, 15524)
    batches, mult = th.seesaw_batches(3.3e9, 1024, 256)
    assert batches[0] == 256 and batches[-1] == math.floor(256 * 1.1**24 + 1e-9)
    assert mult[-1] == pytest.approx(1.1**-12, rel=TOL["few_ops"])
    assert np.all(np.diff(batches) >= 0) and np.all(np.diff(mult) <= 0)
    with pytest.raises(ValueError):
        th.paper_step_counts(3.3e9, 1024, 256, gamma=1.0)


def test_serial_step_limits_are_exact():
    assert sp.simplify(th.serial_step_reduction_limit("quarter_cosine") - (1 - 2 / sp.pi)) == 0
    assert th.serial_step_reduction_limit("half_cosine", sp.Rational(1, 10), sp.Rational(1, 10)) == \
        sp.Rational(81, 200)
    got = th.discrete_serial_step_reduction("half_cosine", 1.0001, final_lr_frac=0.1, warmup_frac=0.1)
    assert got == pytest.approx(0.405, abs=TOL["continuum_limit"])
    with pytest.raises(ValueError):
        th.serial_step_reduction_limit("triangle")


def _discrete_reduction_by_bisection(shape, gamma, f=0.0, w=0.0, lr_cut=1e-9):
    """The discrete scheduler's serial-step reduction written apart from theory.seesaw: switch k (every k
    with gamma^-k >= the floor f, or lr_cut when f = 0) sits where the base lr f + (1 - f) s(u) itself
    falls to gamma^-k, found by bisection on s (no inverse); steps = the integral over u of
    gamma^-(switches before u) = gamma^-K + sum_k (gamma^-(k-1) - gamma^-k) u_k (summed by parts)."""
    s = {"quarter_cosine": lambda u: math.cos(math.pi * u / 2),
         "half_cosine": lambda u: (1 + math.cos(math.pi * u)) / 2}[shape]
    floor, crossings, k = (f if f > 0 else lr_cut), [], 1
    while gamma**-k >= floor * (1 - TOL["switch_at_floor"]):
        lo, hi = 0.0, 1.0
        for _ in range(80):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if f + (1 - f) * s(mid) > gamma**-k else (lo, mid)
        crossings.append(hi)
        k += 1
    steps = gamma ** -len(crossings) + sum((gamma ** -(j - 1) - gamma**-j) * u
                                           for j, u in enumerate(crossings, 1))
    return 1 - (w + (1 - w) * steps)


def test_discrete_serial_step_reduction_at_coarse_gamma_is_exact():
    """Hand values at gamma = 2, then general gamma against the bisection above (float64). A sum shifted
    by one switch moves the reduction by ~(gamma - 1) x the steps (0.009 at gamma = 1.1, 0.42 at 2)."""
    # quarter cosine, lr_cut 0.3: one switch, at cos(pi u / 2) = 1/2, u = 2/3: steps 2/3 + (1/3)/2 = 5/6
    assert th.discrete_serial_step_reduction("quarter_cosine", 2.0, lr_cut=0.3) == \
        pytest.approx(1 / 6, abs=TOL["hand_value_abs"])
    # an integer gamma is the same real number (no integer power of a negative exponent)
    assert th.discrete_serial_step_reduction("quarter_cosine", 2, lr_cut=0.3) == \
        pytest.approx(1 / 6, abs=TOL["hand_value_abs"])
    # half cosine, lr_cut 0.3: one switch at u = 1/2: steps 3/4; 40% warmup at B0: 1 - (0.4 + 0.6 * 3/4)
    assert th.discrete_serial_step_reduction("half_cosine", 2.0, lr_cut=0.3, warmup_frac=0.4) == \
        pytest.approx(0.15, abs=TOL["hand_value_abs"])
    # quarter cosine, lr_cut exactly gamma^-2 = 1/4: two switches (the one at the cut counts), at
    # cos(pi u / 2) = 1/2 and 1/4: steps u1 + (u2 - u1) / 2 + (1 - u2) / 4
    u1, u2 = 2 / 3, 2 / math.pi * math.acos(1 / 4)
    assert th.discrete_serial_step_reduction("quarter_cosine", 2.0, lr_cut=0.25) == \
        pytest.approx(1 - (u1 + (u2 - u1) / 2 + (1 - u2) / 4), abs=TOL["hand_value_abs"])
    # half cosine to a 1/4 floor: switches at s = 1/3 (u = acos(-1/3)/pi) and at s = 0 (u = 1)
    assert th.discrete_serial_step_reduction("half_cosine", 2.0, final_lr_frac=0.25) == \
        pytest.approx((1 - math.acos(-1 / 3) / math.pi) / 2, abs=TOL["hand_value_abs"])
    for shape, gamma, f, w in [("half_cosine", 1.1, 0.1, 0.1), ("half_cosine", 1.1, 0.0, 0.0),
                               ("quarter_cosine", 1.1, 0.0, 0.0), ("quarter_cosine", 1.37, 0.05, 0.2),
                               ("half_cosine", 1.6, 0.2, 0.0), ("quarter_cosine", 3.0, 0.1, 0.3)]:
        got = th.discrete_serial_step_reduction(shape, gamma, final_lr_frac=f, warmup_frac=w)
        assert got == pytest.approx(_discrete_reduction_by_bisection(shape, gamma, f, w), abs=TOL["bisection"]), \
            (shape, gamma, f, w)


def test_stability_radius_separates_stable_and_unstable_steps():
    lam = th.power_law_eigs(32)
    assert th.stability_radius(lam, 0.5, 8) < 1 < th.stability_radius(lam, 6.0, 8)


def test_stability_radius_is_the_radius_of_the_dense_one_step_map():
    """Column k of the map m -> m' is the diagonal of one dense step (noise 0) from Sigma = e_k e_k^T,
    written as in _full_recursion; its spectral radius is the stability radius (tr H = 2.6, B = 3)."""
    lam = np.array([1.5, 0.6, 0.4, 0.1])
    h = np.diag(lam)
    for lr, b in ((0.3, 3.0), (0.9, 3.0), (1.2, 1.5), (0.05, 7.0)):
        a = np.eye(4) - lr * h
        cols = []
        for k in range(4):
            s = np.zeros((4, 4))
            s[k, k] = 1.0
            cols.append(np.diag(a @ s @ a + lr**2 / b * (h @ s @ h + np.trace(h @ s) * h)))
        want = np.max(np.abs(np.linalg.eigvals(np.array(cols).T)))
        assert th.stability_radius(lam, lr, b) == pytest.approx(want, rel=TOL["linalg_route"]), (lr, b)


def test_noise_scale_power_law_eigs_and_a_quarter_cosine_limit_by_hand():
    # tr H = 2.5, sum l m + sigma^2 = 2 + 2 + 0.3, sum l^2 m = 4 + 1: 2.5 * 4.3 / 5
    assert th.noise_scale([2.0, 0.5], [1.0, 4.0], 0.3) == pytest.approx(2.15, rel=TOL["hand_value_rel"])
    # j^-2 for j = 1..4 sums to 205/144; scaled to trace 3 (an integer exponent is the same real number)
    for exponent in (2.0, 2):
        np.testing.assert_allclose(th.power_law_eigs(4, exponent, trace=3.0),
                                   np.array([1, 1 / 4, 1 / 9, 1 / 16]) * 3 * 144 / 205, rtol=TOL["hand_value_rel"])
    # the defaults: l_j prop. j^-1.5, trace 1
    lam = np.array([1, 2**-1.5, 3**-1.5])
    np.testing.assert_allclose(th.power_law_eigs(3), lam / lam.sum(), rtol=TOL["hand_value_rel"])
    # quarter cosine to a 1/10 floor with 1/5 warmup: 1 - (1/5 + 4/5 (1/10 + 9/10 * 2/pi)) = 18/25 - 36/(25 pi)
    got = th.serial_step_reduction_limit("quarter_cosine", sp.Rational(1, 10), sp.Rational(1, 5))
    assert sp.simplify(got - (sp.Rational(18, 25) - 36 / (25 * sp.pi))) == 0


def test_seesaw_vs_step_by_batch_is_the_nsgd_final_risk_ratio_of_the_two_schedules():
    """Assembled here from the schedules and the exact recursion (claim seesaw.mean_dominated_gap)."""
    eigs = th.power_law_eigs(256)

    def final(alpha, beta, b0, noise_var, eta0, samples, n_phases):
        lrs, bs = th.phase_schedule(eta0, b0, alpha, beta, samples, n_phases)
        return th.expected_risk(eigs, 1.0, noise_var, lrs, bs, normalized=True)[-1]

    got, b_noise = th.seesaw_vs_step_by_batch(0.3, (4, 32), n_phases=3, samples_per_phase=2**10, eta0=0.07)
    assert sorted(got) == [4, 32]
    for b0 in (4, 32):
        want = final(math.sqrt(2), 2.0, b0, 0.3, 0.07, 2**10, 3) / final(2.0, 1.0, b0, 0.3, 0.07, 2**10, 3)
        assert got[b0] == pytest.approx(want, rel=TOL["recomputed"])
    # B_noise = tr H (sum l m + sigma^2) / sum l^2 m at m = 1 (the reference m0), summed by a loop
    tr = math.fsum(eigs)
    assert b_noise == pytest.approx(tr * (tr + 0.3) / math.fsum(lam * lam for lam in eigs), rel=TOL["recomputed"])
    # the defaults are the reference setting: NSGD eta0 = 0.05, 4 phases of 2^18 samples
    got, _ = th.seesaw_vs_step_by_batch(0.01, (64,))
    want = final(math.sqrt(2), 2.0, 64, 0.01, 0.05, 2**18, 4) / final(2.0, 1.0, 64, 0.01, 0.05, 2**18, 4)
    assert got[64] == pytest.approx(want, rel=TOL["recomputed"])


def test_final_risk_ratio_on_a_given_spectrum():
    """With ``eigs`` given, each member's final risk over the base's, assembled here from the schedules."""
    eigs = th.power_law_eigs(16, 2.0, trace=2.0)
    got, steps = th.final_risk_ratio([(2.0, 2.0), (1.5, 1.0)], (2.0, 1.0), eta0=0.3, n_phases=3, normalized=False,
                                     b0=4, samples_per_phase=256, noise_var=0.5, eigs=eigs, m0=0.7)

    def final(alpha, beta):
        lrs, bs = th.phase_schedule(0.3, 4, alpha, beta, 256, 3)
        return th.expected_risk(eigs, 0.7, 0.5, lrs, bs)[-1], lrs.size

    for ab in [(2.0, 2.0), (1.5, 1.0)]:
        assert got[ab] == pytest.approx(final(*ab)[0] / final(2.0, 1.0)[0], rel=TOL["recomputed"])
        assert steps[ab] == final(*ab)[1]


def test_sgd_equivalence_line_within_five_percent_and_alpha_below_one_diverges():
    ratios, _ = th.final_risk_ratio([(th.SQRT2, th.SQRT2), (1.0, 2.0)], (2.0, 1.0), eta0=0.5, n_phases=4,
                                    normalized=False, samples_per_phase=2**12)
    assert all(abs(r - 1) < 0.05 for r in ratios.values())
    bad, _ = th.final_risk_ratio([(0.5, 2.0)], (2.0, 1.0), eta0=0.5, n_phases=6, normalized=False,
                                 samples_per_phase=2**12)
    assert not np.isfinite(bad[(0.5, 2.0)]) or bad[(0.5, 2.0)] > 1e3


def test_bad_inputs_raise():
    with pytest.raises(ValueError):
        th.expected_risk([1.0, -1.0], 1.0, 1.0, [0.1], [1.0])
    with pytest.raises(ValueError):
        th.expected_risk([1.0], 1.0, 1.0, [0.1, 0.1], [1.0])
    with pytest.raises(ValueError, match="integer"):
        th.sgd_risk_path(jax.random.key(0), jnp.ones(2), jnp.ones(2), 1.0, [0.1], [1.5])




def test_sgd_risk_path_first_step_by_hand():
    """One step on the documented draws (step t splits fold_in(key, t) into the keys of s / sqrt(q), the
    noise / sd and g), written out in numpy as the batch it stands for: x_i = H e s_i / q + z_i with
    z_i ~ N(0, H - H e e^T H / q), so that sum_i x_i r_i = H e (s.r) / q + ||r|| z."""
    key, eigs, e0, lr, b, s2 = jax.random.key(7), np.array([1.0, 0.5, 0.25]), np.array([1.0, -2.0, 0.5]), 0.3, 2, 0.7
    ks, kn, kg = jax.random.split(jax.random.fold_in(key, 0), 3)
    q = float(np.sum(eigs * e0**2))
    s = np.asarray(jax.random.normal(ks, (b,), jnp.float64)) * math.sqrt(q)
    eps = np.asarray(jax.random.normal(kn, (b,), jnp.float64)) * math.sqrt(s2)
    y = np.asarray(jax.random.normal(kg, (3,), jnp.float64)) * np.sqrt(eigs)
    projector = np.eye(3) - np.outer(eigs * e0, e0) / q  # y -> y - H e (e^T y) / q
    r = s - eps
    e1 = e0 - lr / b * (eigs * e0 * (s @ r) / q + np.linalg.norm(r) * (projector @ y))
    path = th.sgd_risk_path(key, jnp.asarray(eigs), jnp.asarray(e0), s2, [lr], [b])
    np.testing.assert_allclose(np.asarray(path), [0.5 * np.sum(eigs * e0**2), 0.5 * np.sum(eigs * e1**2)],
                               rtol=TOL["recomputed"])


def _one_step_moments(eigs, e, lr, b, s2):
    """Exact mean and second-moment matrix of one SGD step e' = e - (lr/B) sum_i x_i (x_i^T e - eps_i) on a
    Gaussian batch: E[e'] = (I - lr H) e and, by Isserlis (E[x x^T A x x^T] = 2 H A H + tr(HA) H),
    E[e' e'^T] = E[e'] E[e']^T + (lr^2 / B) (H e e^T H + (e^T H e + s2) H)."""
    h = np.diag(eigs)
    mean = e - lr * h @ e
    he = h @ e
    return mean, np.outer(mean, mean) + lr**2 / b * (np.outer(he, he) + (e @ he + s2) * h)


@pytest.mark.parametrize("e0", [np.array([1.0, -2.0, 0.5, 0.0]), np.zeros(4)], ids=["e", "zero"])
def test_sgd_step_has_the_gaussian_batch_first_two_moments(e0):
    """The step drawn from 2B + d normals has the law of the batch's: over 2**15 seeds its mean and every
    entry of its second-moment matrix sit within 4.5 SE of the exact Isserlis values (14 entries tested,
    so 4.5 SE keeps a false alarm below 1e-4). Measured on these draws: without z's projection some entry
    moves 18 SE, with s drawn at sd q instead of sqrt(q) 69 SE, without the H e (s.r)/q term 340 SE; without
    the ||r|| z term the error's zero coordinate never moves (sd 0, z not finite: fails too). At e = 0 the
    q = 0 branch must give the same law (there the H e terms vanish)."""
    eigs, lr, b, s2, n = np.array([1.0, 0.6, 0.3, 0.1]), 0.4, 3, 0.5, 2**15
    keys = jax.random.split(jax.random.key(11), n)

    step = jax.jit(jax.vmap(lambda k: th.sgd_step(k, jnp.asarray(eigs), jnp.asarray(e0), s2, lr, b)))
    e1 = np.asarray(step(keys))
    mean, second = _one_step_moments(eigs, e0, lr, b, s2)
    z_mean = (e1.mean(0) - mean) / (e1.std(0, ddof=1) / math.sqrt(n))
    prods = e1[:, :, None] * e1[:, None, :]
    iu = np.triu_indices(4)
    z_second = (prods.mean(0) - second)[iu] / (prods.std(0, ddof=1)[iu] / math.sqrt(n))
    z_max = TOL["mc_z_moments"]
    assert np.max(np.abs(z_mean)) < z_max and np.max(np.abs(z_second)) < z_max, (z_mean, z_second)


def test_spectrum_moment_and_batch_checks_at_their_boundaries():
    """noise_scale / stability_radius / sgd_risk_path refuse what they document and accept the boundary
    (m = 0, batch 1) and exact inputs (taken as their float64 values)."""
    assert th.noise_scale([Fraction(2), Fraction(1, 2)], [Fraction(1), 4], 0.3) == \
        pytest.approx(2.15, rel=TOL["hand_value_rel"])
    # m = [0, 4]: tr H 2.5, sum l m + sigma^2 = 2.3, sum l^2 m = 1; scalar m = 1/2: 1.55 and 2.125
    assert th.noise_scale([2.0, 0.5], [0.0, 4.0], 0.3) == pytest.approx(2.5 * 2.3, rel=TOL["hand_value_rel"])
    assert th.noise_scale([2.0, 0.5], 0.5, 0.3) == pytest.approx(2.5 * 1.55 / 2.125, rel=TOL["hand_value_rel"])
    for eigs in ([2.0, 0.0], [2.0, -0.5], [2.0, math.inf], [2.0, math.nan], [], [[1.0, 2.0]]):
        with pytest.raises(ValueError, match="eigs must be"):
            th.noise_scale(eigs, 1.0, 0.3)
        with pytest.raises(ValueError, match="eigs must be"):
            th.stability_radius(eigs, 0.1, 4)
    for m in ([1.0, -1.0], [1.0, math.nan], [1.0, math.inf], [1.0, 2.0, 3.0]):
        with pytest.raises(ValueError, match="m must be"):
            th.noise_scale([2.0, 0.5], m, 0.3)
    # batch 1 is a batch; exact integer batch sizes are integers
    eigs = jnp.array([1.0, 0.5])
    path = th.sgd_risk_path(jax.random.key(0), eigs, jnp.full(2, 2.0), 0.0, [0.1, 0.1, 0.1], [1, 1, Fraction(2)])
    # the initial risk 0.5 sum l e0^2 = 0.5 (4 + 2)
    assert path.shape == (4,) and np.all(np.isfinite(path)) and path[0] == pytest.approx(3.0, rel=0, abs=0)
    with pytest.raises(ValueError, match="integer"):
        th.sgd_risk_path(jax.random.key(0), eigs, jnp.ones(2), 0.0, [0.1], [0.5])
    # a zero or exact learning rate is a learning rate; an infinite or negative one is refused
    path = th.sgd_risk_path(jax.random.key(0), eigs, jnp.ones(2), 0.0, [0.0, Fraction(1, 10)], [2, 2])
    assert path[1] == path[0] and path[2] < path[0]
    for lr in (math.inf, -0.1, math.nan):
        with pytest.raises(ValueError, match="learning rates"):
            th.sgd_risk_path(jax.random.key(0), eigs, jnp.ones(2), 0.0, [lr], [2])
    # the draws take the spectrum's precision (float32 here, with float64 enabled process-wide)
    e32 = jnp.ones(2, jnp.float32)
    assert th.sgd_risk_path(jax.random.key(0), e32 / 2, e32, 0.5, [0.1], [2]).dtype == jnp.float32
