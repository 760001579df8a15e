"""MDM-variance estimators (theory/mdm_variance/) against expected values that do not come from the code
under test: delete-one jackknives recomputed from scratch in loops, standard errors against the spread of
independent repeats, MIRROR's per-token moments by exact rational arithmetic, and hand-worked EMA and
binning steps. float64 throughout (the conftest turns x64 on).

Each tolerance says the smallest error it can detect; the plausible bugs it guards are larger."""

import math
import statistics
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate

from theory import mdm_variance as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    # float64 roundoff against references in exact or correctly rounded arithmetic
    "one_rounding": (1e-15, "the EMA steps and the smoothed counts are one or two float64 operations on small "
                            "dyadic or half-integer inputs, exact or rounded once (1.1e-16): measured 0; ~5 ulp "
                            "of room, while a swapped rate moves s2's first bin from 4 to 8"),
    "few_roundings": (1e-14, "statistics and Fraction references are exact; numpy's mean, two-pass variance and "
                             "sqrt of <= 6 values, the MIRROR closed forms at t = float(Fraction) (condition <= ~4 "
                             "in t) and the sampler weights take a handful of roundings, <= ~10 eps = 2.2e-15: "
                             "measured <= 2.8e-16"),
    "sum_roundoff": (1e-13, "means of <= 10 values and their ratios, numpy against statistics.fmean (exact) or a "
                            "loop in another order: <= ~10 eps = 2.2e-15 relative, measured <= 2.6e-16"),
    "variance_roundoff": (1e-12, "variances and SEs computed two algebraically equal ways: two-pass variances, "
                                 "the jackknife of 6 values, and pots_exact's V = u^2 (int w)(int w M2) - mu^2, "
                                 "where mu^2 cancels up to ~3-fold: ~1e-14 at worst, measured <= 5.2e-16"),
    "loo_roundoff": (1e-10, "vectorised estimators (leave-one-out deletions (n a - a_i) / (n - 1), jackknife "
                            "spreads, variances from added sums and sums of squares) against loops recomputing each "
                            "from scratch: their cancellations (~sqrt(n) |estimate| / SE <= ~100-fold, the sums of "
                            "squares <= ~6-fold here) keep roundoff <= ~1e-13 (measured <= 2.1e-15); the slips "
                            "guarded (n vs n - 1, a missing 1/K or 1/n_t) are >= 1e-2 relative"),
    "loo_cancellation": (1e-9, "B_batch subtracts the mask term from the variance of replicate means, and the "
                               "ratio's jackknife SE (1e-3 of the ratio 0.94) is a spread of leave-one-out values "
                               "agreeing to ~4 digits: roundoff amplified ~1e3-1e4, measured <= 1.6e-13; the "
                               "guarded slip of the mask term's loo mean moves the SE by 2e-3"),
    # quadrature
    "gauss6_truncation": (1e-13, "absolute: the 4-panel, 6-node rule in log t truncates int t^2 dt by 3.3e-14 "
                                 "(1.0e-13 relative, measured; 8 nodes give 2e-16), deterministic; a third of 1e-13"),
    "gauss16_truncation": (1e-10, "16-node Gauss-Legendre per bin on the EPR density (t^1.3, (1 - t)^2.1 terms) "
                                  "truncates by 3.8e-12 to 5.8e-12 relative (measured; 64 nodes give 1.4e-15) "
                                  "against scipy quad at epsrel 1e-13; 1e-10 is ~17 times that"),
    "quadrature": (1e-9, "scipy quad at epsrel 1e-12 / 1e-13 against the bin-sum or log-t Gauss form, V subtracting "
                         "mu^2 (<= ~3-fold cancellation): <= ~1e-11, measured <= 5.1e-15; a wrong density moves V by "
                         "> 1e-3 of itself (test_mdm_variance_pots.py's binned-density test asserts so)"),
    # derivatives and fits
    "epr_kl": (1e-9, "the same trapezoid KL in another summation order with math.log for np.log: roundoff times "
                     "the cancellation of p log(p / q) terms of both signs (sum |f| / KL = 8.3 here), measured "
                     "8.8e-15; the unit-spacing trapezoid it guards misstates the KL by ~1/spacing"),
    # Monte Carlo standard errors
    "se_vs_repeats": (0.15, "the SD of 400 repeats has sampling error 1 / sqrt(2 * 399) = 3.5% (and the jackknife "
                            "at n = 40 a small bias): measured <= 5.0% off; 15% is ~4 such SE, under the 24% of a C "
                            "SE without its 1/n_t and the 41% of an SE off by sqrt(2)"),
    "se_vs_samples": (0.10, "the SD of 400 sample variances has sampling error ~1 / sqrt(2 * 399) = 3.5% (~4% "
                            "with the jackknife's own noise): measured 4.2% off; 10% is ~2.5 of those, under the "
                            "41% of an SE off by sqrt(2)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _jackknife(values, estimate):
    """sqrt((n-1)/n sum_i (theta_{-i} - mean)^2), theta_{-i} = estimate(values without point i), each
    recomputed from scratch."""
    n = len(values)
    loo = [estimate(np.delete(values, i, axis=0)) for i in range(n)]
    m = sum(loo) / n
    return ((n - 1) / n * sum((v - m) ** 2 for v in loo)) ** 0.5


def _abc(x):
    """Unbiased A, B, C of a nested sample x [n, n_t, K] written as loops (law of total variance:
    A = E s2_K, B = E s2_t(g) - A/K, C = s2_x(G) - E s2_t(g)/n_t)."""
    n, nt, k = x.shape
    within = [statistics.variance(x[i, j]) for i in range(n) for j in range(nt)]
    a = statistics.fmean(within)
    g = [[statistics.fmean(x[i, j]) for j in range(nt)] for i in range(n)]
    over_t = statistics.fmean(statistics.variance(gi) for gi in g)
    big = [statistics.fmean(gi) for gi in g]
    return {"A": a, "B": over_t - a / k, "C": statistics.variance(big) - over_t / nt}


def test_nested_estimates_and_jackknife_by_deletion():
    """Every estimate and SE of nested_estimates against _abc and a from-scratch delete-one jackknife on a
    general nested sample (n = 7, n_t = 3, K = 4, unequal scales), to 1e-10 relative."""
    x = np.random.default_rng(4).normal(size=(7, 3, 4)) * np.array([1.0, 2.5, 0.4])[None, :, None]
    x += np.arange(7.0)[:, None, None] ** 1.5
    r = th.nested_estimates(x)
    want = _abc(x)
    for key in ("A", "B", "C"):
        assert r[key] == pytest.approx(want[key], rel=TOL["loo_roundoff"])
        assert r[f"{key}_se"] == pytest.approx(_jackknife(x, lambda v, key=key: _abc(v)[key]), rel=TOL["loo_roundoff"])
    assert r["total_se"] == pytest.approx(_jackknife(x, lambda v: sum(_abc(v).values())), rel=TOL["loo_roundoff"])
    assert r["A_minus_BC"] == pytest.approx(want["A"] - want["B"] - want["C"], rel=TOL["loo_roundoff"])
    dom = lambda v: _abc(v)["A"] - _abc(v)["B"] - _abc(v)["C"]  # noqa: E731
    assert r["A_minus_BC_se"] == pytest.approx(_jackknife(x, dom), rel=TOL["loo_roundoff"])
    # the plug-in total (no bias corrections): mean s2_K + mean s2_t(g) + s2_x(G)
    g = x.mean(2)
    naive = (statistics.fmean(x.var(2, ddof=1).ravel()) + statistics.fmean(g.var(1, ddof=1))
             + statistics.variance(g.mean(1)))
    assert r["naive_total"] == pytest.approx(naive, rel=TOL["variance_roundoff"])


def test_direct_variance_moments_by_statistics_module():
    """The flat estimate's mean, variance and SE of the mean against the statistics module on its draws."""
    loss = lambda x0, t, m: t * (1.0 + jnp.sum(m)) + x0[0]  # noqa: E731
    data = np.arange(30, dtype=np.int32).reshape(10, 3) % 4
    r = th.direct_variance(loss, data, jax.random.key(3), eps=0.1)
    ls = r["losses"].tolist()
    assert r["mean"] == pytest.approx(statistics.fmean(ls), rel=TOL["sum_roundoff"])
    assert r["var"] == pytest.approx(statistics.variance(ls), rel=TOL["variance_roundoff"])
    assert r["mean_se"] == pytest.approx(statistics.stdev(ls) / len(ls) ** 0.5, rel=TOL["variance_roundoff"])
    assert r["var_se"] == pytest.approx(_jackknife(np.asarray(ls), statistics.variance), rel=TOL["loo_roundoff"])


def test_nested_standard_errors_match_the_spread_of_repeats():
    """Known decomposition drawn in numpy: l = m_x + b (t - 1/2) + z with m_x ~ N(0, 1), t ~ U[0, 1],
    z ~ N(0, 1), b = 5: A = 1, B = b^2 / 12 = 25/12, C = 1. Over 400 independent repeats (n = 40, n_t = 2,
    K = 2): each mean within 4 SE of the truth (SE from the repeats' spread), and the mean reported SE within
    15% of the repeats' standard deviation (here within 5%; the sampling error of a 400-repeat standard
    deviation is ~3.5%). A C SE without its 1/n_t reads 24% high; an SE off by sqrt(2) would show too."""
    rng = np.random.default_rng(23)
    reps, n, nt, k = 400, 40, 2, 2
    m = rng.normal(size=(reps, n, 1, 1))
    t = rng.random(size=(reps, n, nt, 1))
    x = m + 5.0 * (t - 0.5) + rng.normal(size=(reps, n, nt, k))
    est = [th.nested_estimates(xi) for xi in x]
    for key, true in (("A", 1.0), ("B", 25 / 12), ("C", 1.0), ("total", 2 + 25 / 12)):
        v = np.array([e[key] for e in est])
        se = np.array([e[f"{key}_se"] for e in est])
        assert abs(v.mean() - true) < 4 * v.std(ddof=1) / np.sqrt(reps), (key, v.mean(), true)
        assert se.mean() == pytest.approx(v.std(ddof=1), rel=TOL["se_vs_repeats"]), (key, se.mean(), v.std(ddof=1))


def test_variance_with_se_by_deletion_and_spread():
    """Jackknife SE of the sample variance against a from-scratch deletion loop (n = 6, 1e-12), and
    against the spread of 400 normal samples of size 200 (mean SE within 10% of the std of the variances;
    its sampling error is ~4%; an off-by-one in the delete-one variance is caught by the loop)."""
    x = np.array([0.3, -1.2, 4.0, 2.2, 2.2, -0.7])
    v, se = th.variance_with_se(x)
    assert v == pytest.approx(statistics.variance(x), rel=TOL["few_roundings"])
    assert se == pytest.approx(_jackknife(x, statistics.variance), rel=TOL["variance_roundoff"])
    xs = np.random.default_rng(0).normal(scale=1.7, size=(400, 200))
    out = np.array([th.variance_with_se(r) for r in xs])
    assert out[:, 1].mean() == pytest.approx(out[:, 0].std(ddof=1), rel=TOL["se_vs_samples"])


def test_pair_summary_by_deletion():
    """ratio, rho and their SEs from pair_summary against deletion loops over general rows (n = 6)."""
    rows = np.abs(np.random.default_rng(5).normal(size=(2, 6, 3))) + np.array([1.0, 0.2, 0.0])
    rows[..., 2] -= 0.3
    out = th.pair_summary(rows)
    for r in range(2):
        R = rows[r]

        def ratio(v):
            return v[:, 1].mean() / v[:, 0].mean()

        def rho(v):
            return v[:, 2].mean() / v[:, 0].mean()

        assert out["ratio"][r] == pytest.approx(ratio(R), rel=TOL["sum_roundoff"])
        assert out["rho"][r] == pytest.approx(rho(R), rel=TOL["sum_roundoff"])
        assert out["ratio_se"][r] == pytest.approx(_jackknife(R, ratio), rel=TOL["loo_roundoff"])
        assert out["rho_se"][r] == pytest.approx(_jackknife(R, rho), rel=TOL["loo_roundoff"])
        assert out["A_single_se"][r] == pytest.approx(_jackknife(R, lambda v: v[:, 0].mean()), rel=TOL["loo_roundoff"])
        assert out["A_pair_se"][r] == pytest.approx(_jackknife(R, lambda v: v[:, 1].mean()), rel=TOL["loo_roundoff"])


def _mirror_exact(t: Fraction):
    """Per token, X1 = 1[U < t], X2 = 1[U > 1 - t] with one U ~ U[0, 1]: Var = t (1 - t) and
    P(X1 X2 = 1) = |(1 - t, t)| = max(0, 2t - 1). ratio = Var((X1 + X2)/2) / Var(X1) = (Var + Cov) / (2 Var),
    rho = Cov / Var (exact rationals; the loss weights cancel in the context-free model)."""
    var = t * (1 - t)
    cov = max(Fraction(0), 2 * t - 1) - t * t
    return (var + cov) / (2 * var), cov / var


@pytest.mark.parametrize("t", [Fraction(1, 7), Fraction(2, 5), Fraction(1, 2), Fraction(3, 4),
                               Fraction(5, 6)])
def test_mirror_closed_forms_by_exact_moments(t):
    ratio, rho = _mirror_exact(t)
    assert th.mirror_ratio_context_free(float(t)) == pytest.approx(float(ratio), rel=TOL["few_roundings"], abs=0)
    assert th.mirror_rho_context_free(float(t)) == pytest.approx(float(rho), rel=TOL["few_roundings"])


def test_binned_summary_by_statistics_module():
    ls = np.array([[0.5, 2.0, -1.0, 3.5, 0.25], [1.0, 1.5, 2.5, 2.0, 9.0]])
    out = th.binned_summary(ls)
    for j, row in enumerate(ls.tolist()):
        sq = [v * v for v in row]
        assert out["g"][j] == pytest.approx(statistics.fmean(row), rel=TOL["few_roundings"])
        assert out["m2"][j] == pytest.approx(statistics.fmean(sq), rel=TOL["few_roundings"])
        assert out["var"][j] == pytest.approx(statistics.variance(row), rel=TOL["few_roundings"])
        assert out["g_se"][j] == pytest.approx(statistics.stdev(row) / 5**0.5, rel=TOL["few_roundings"])
        assert out["m2_se"][j] == pytest.approx(statistics.stdev(sq) / 5**0.5, rel=TOL["few_roundings"])


def test_binned_sampler_weights_and_bin_law():
    """eps = 0.2 (the U[eps, 1] density 1.25 is far from 1): E_p[w t^2] = (1 - eps^3) / (3 (1 - eps)) within
    4.5 SE of the draws (~0.5% here; a weight without the density factor is 25% off), and each bin drawn
    with its probability within 4.5 binomial SE."""
    edges = th.t_bin_edges(0.2, 6)
    probs = np.array([1.0, 3.0, 2.0, 5.0, 0.5, 4.0])
    t, w = (np.asarray(a) for a in th.binned_sampler(edges, probs)(jax.random.key(9), (100_000,)))
    assert t.min() >= 0.2 and t.max() <= 1
    want = (1 - 0.2**3) / 3 / 0.8
    f = w * t**2
    assert abs(f.mean() - want) < 4.5 * f.std() / np.sqrt(t.size), (f.mean(), want)
    counts = np.histogram(t, edges)[0] / t.size
    p = probs / probs.sum()
    assert np.all(np.abs(counts - p) < 4.5 * np.sqrt(p * (1 - p) / t.size)), (counts, p)
    # a bin the sampler could never draw (zero or negative probability) leaves the estimator biased: refused,
    # as are non-finite probabilities and a count other than one per bin
    for bad in ([1.0, 0.0, 2.0, 5.0, 0.5, 4.0], [1.0, -3.0, 2.0, 5.0, 0.5, 4.0], [1.0, np.nan, 2.0, 5.0, 0.5, 4.0],
                [1.0, 3.0, 2.0, 5.0, 0.5]):
        with pytest.raises(ValueError, match="positive and finite, one per bin"):
            th.binned_sampler(edges, np.array(bad))


def test_ema_update_and_bins_by_hand():
    """eps = 0.01, 4 equal bins of width 0.2475: t = 0.1, 0.3, 0.6, 0.9, 1.0 fall in bins 0, 1, 2, 3, 3.
    First batch sets a bin; later ones move it by rate (0.25) toward the batch mean."""
    np.testing.assert_array_equal(np.asarray(th.ema_bin(jnp.array([0.01, 0.1, 0.3, 0.6, 0.9, 1.0]), 0.01, 4)),
                                  [0, 0, 1, 2, 3, 3])

    @jax.jit  # one compilation instead of one per eager op
    def run():
        s1 = th.ema_update(th.ema_init(4), jnp.array([0.1, 0.3, 0.3]), jnp.array([2.0, 4.0, 8.0]), eps=0.01,
                           rate=0.25)
        s2 = th.ema_update(s1, jnp.array([0.1, 0.9]), jnp.array([10.0, -1.0]), eps=0.01, rate=0.25)
        adj = th.ema_adjusted_loss(jnp.array([1.0, 1.0, 1.0]), jnp.array([0.1, 0.6, 0.95]), s2, eps=0.01)
        return s1, s2, adj

    s1, s2, adj = run()
    np.testing.assert_allclose(np.asarray(s1.mean), [2.0, 6.0, 0.0, 0.0], rtol=TOL["one_rounding"])
    np.testing.assert_array_equal(np.asarray(s1.seen), [True, True, False, False])
    np.testing.assert_allclose(np.asarray(s2.mean), [0.75 * 2.0 + 0.25 * 10.0, 6.0, 0.0, -1.0],
                               rtol=TOL["one_rounding"])
    np.testing.assert_allclose(np.asarray(adj), [1.0 - 4.0, 1.0, 2.0], rtol=TOL["one_rounding"])


def test_batch_t_noise_by_reconstruction():
    """l = t: the replicate means are reproduced from the same key (t drawn first by uniform_t from the
    first half of split(key)), and B_batch and its jackknife SE recomputed by deletion (n_rep = 5, where an
    off-by-one in the delete-one variance is a factor 3/4). The mask-noise term: tests/test_mdm_variance.py
    (test_shared_t_raises_and_stratified_t_lowers_batch_t_noise)."""
    L, n = 4, 16
    key = jax.random.key(7)
    r = th.batch_t_noise(lambda x0, t, m: t + 0.0 * jnp.sum(m), np.zeros((n, L), np.int32), key, n_rep=5,
                         n_masks=2, eps=0.01, stratified=False)
    kt, _ = jax.random.split(key)
    means = np.asarray(th.uniform_t(kt, (5, n), 0.01)).mean(1)
    assert r["B_batch"] == pytest.approx(statistics.variance(means), rel=TOL["loo_roundoff"])
    assert r["B_batch_se"] == pytest.approx(_jackknife(means, statistics.variance), rel=TOL["loo_roundoff"])


def test_batch_t_noise_with_mask_noise_by_reconstruction():
    """l = t + (number of masked tokens): the masks vary, so the within-mask variance term differs between
    replicates. t and the masks are drawn again from the same key (t from the first half of split(key),
    the mask uniforms [R, n, K, L] from the second), B_batch = s2_r(M) - mean_r(s2) / (K n) is recomputed
    in loops and its jackknife SE by deleting each replicate and recomputing from scratch: guards the
    leave-one-out mean of the mask term (dividing its sum by n_rep + 1 instead of n_rep - 1 moves the SE
    by 0.2% here; tolerance 1e-9)."""
    L, n, R, K, eps = 5, 6, 6, 3, 0.05
    key = jax.random.key(11)
    loss = lambda x0, t, m: t + jnp.sum(m)  # noqa: E731
    r = th.batch_t_noise(loss, np.zeros((n, L), np.int32), key, n_rep=R, n_masks=K, eps=eps,
                         stratified=False)
    kt, km = jax.random.split(key)
    t = np.asarray(th.uniform_t(kt, (R, n), eps), np.float64)
    u = np.asarray(jax.random.uniform(km, (R, n, K, L)), np.float64)
    ls = [[[t[i, j] + float(np.sum(u[i, j, k] < t[i, j])) for k in range(K)] for j in range(n)]
          for i in range(R)]
    means = [statistics.fmean(statistics.fmean(row) for row in rep) for rep in ls]
    within = [statistics.fmean(statistics.variance(row) for row in rep) / (K * n) for rep in ls]
    assert statistics.stdev(within) > 0.05 * statistics.fmean(within)  # the mask term does vary

    def b_of(idx):
        return statistics.variance([means[i] for i in idx]) - statistics.fmean(within[i] for i in idx)

    assert r["B_batch"] == pytest.approx(b_of(range(R)), rel=TOL["loo_cancellation"])
    loo = [b_of([i for i in range(R) if i != j]) for j in range(R)]
    m = statistics.fmean(loo)
    se = math.sqrt((R - 1) / R * sum((v - m) ** 2 for v in loo))
    assert r["B_batch_se"] == pytest.approx(se, rel=TOL["loo_cancellation"])
    assert r["nB"] == pytest.approx(n * b_of(range(R)), rel=TOL["loo_cancellation"])


def test_binned_is_variance_by_quadrature():
    """A deterministic loss l(t) = 1 + 1/t under the piecewise-constant density p(t) = probs_j / width_j:
    the importance-weighted variance int_eps^1 l^2 u^2 / p dt - (int u l dt)^2 (u = 1 / (1 - eps)) by
    quadrature per bin, against the bin-sum form, to 1e-9 relative; P-POTS's bin probabilities reach the
    Cauchy-Schwarz minimum and random probabilities do no better."""

    eps = 0.05
    edges = th.t_bin_edges(eps, 6)
    u = 1 / (1 - eps)
    f = lambda t: 1 + 1 / t  # noqa: E731
    w = np.diff(edges)
    bins = list(zip(edges[:-1], edges[1:]))
    m2 = np.array([integrate.quad(lambda t: f(t) ** 2, a, b, epsrel=1e-13)[0] for a, b in bins]) / w
    g = np.array([integrate.quad(f, a, b, epsrel=1e-13)[0] for a, b in bins]) / w
    mu = u * integrate.quad(f, eps, 1, epsrel=1e-13)[0]

    def direct(probs):
        p = np.asarray(probs) / np.sum(probs)
        second = sum(integrate.quad(lambda t, j=j: f(t) ** 2 * u**2 * w[j] / p[j], edges[j], edges[j + 1],
                                    epsrel=1e-13)[0] for j in range(len(w)))
        return second - mu**2

    for probs in (np.array([1.0, 3.0, 2.0, 5.0, 0.5, 4.0]), w):
        assert th.binned_is_variance(edges, probs, m2, g) == pytest.approx(direct(probs), rel=TOL["quadrature"])
    opt = direct(th.pots_bin_probs(edges, m2))
    assert th.binned_optimal_variance(edges, m2, g) == pytest.approx(opt, rel=TOL["quadrature"])
    rng = np.random.default_rng(1)
    assert all(opt <= direct(rng.random(6) + 0.05) for _ in range(5))


def test_variance_with_se_of_three_values_by_hand():
    """The smallest sample variance_with_se accepts (3 values): x = (1, 2, 4) has s2 = 7/3; the delete-one
    variances are 2, 9/2, 1/2, whose jackknife SE sqrt(2/3 * 49/6) is 7/3 (worked by hand in Fractions)."""
    loo = [Fraction(2), Fraction(9, 2), Fraction(1, 2)]
    m = sum(loo) / 3
    se2 = Fraction(2, 3) * sum((v - m) ** 2 for v in loo)
    assert se2 == Fraction(49, 9)
    v, se = th.variance_with_se([1.0, 2.0, 4.0])
    assert v == pytest.approx(7 / 3, rel=TOL["few_roundings"]) and se == pytest.approx(7 / 3, rel=TOL["few_roundings"])


def test_estimate_chain_by_counting_in_fractions():
    """estimate_chain's smoothed counts, normalised per row (each row of the transition sums to 1), against
    counts done by hand in Fractions: a division by the wrong axis's sums would mix rows 0 and 2."""
    data = np.array([[0, 1, 1, 0], [1, 0, 2, 2], [2, 1, 0, 1]])
    vocab, sm = 3, Fraction(1, 2)
    counts = [[sm] * vocab for _ in range(vocab)]
    for row in data.tolist():
        for a, b in zip(row[:-1], row[1:]):
            counts[a][b] += 1
    init = [sm] * vocab
    for row in data.tolist():
        init[row[0]] += 1
    want_tr = [[float(c / sum(r)) for c in r] for r in counts]
    want_ini = [float(c / sum(init)) for c in init]
    tr, ini = th.estimate_chain(data, vocab, 0.5)
    np.testing.assert_allclose(np.asarray(tr), want_tr, rtol=TOL["one_rounding"])
    np.testing.assert_allclose(np.asarray(ini), want_ini, rtol=TOL["one_rounding"])


def _trapezoid(y, x):
    return sum((y[i] + y[i + 1]) / 2 * (x[i + 1] - x[i]) for i in range(len(x) - 1))


def test_fit_epr_reports_the_kl_of_its_fit():
    """The kl fit_epr returns is KL(p_hat || p_EPR) of the returned parameters by trapezoid on the given
    (non-uniform) grid, recomputed here from the EPR formula sqrt(a t^r + b (1-t)^q + A^2 exp(2 kappa t^m)):
    a trapezoid with unit spacing instead of the grid's misstates it by ~1/spacing. p_hat is outside the
    family, so the KL is well above rounding (and positive)."""
    t = np.geomspace(0.02, 0.98, 40)
    p_hat = 1.0 + np.sin(5 * t) ** 2 + 0.3 / t
    params, kl = th.fit_epr(t, p_hat, restarts=2)
    a, r, b, q, amp, kappa, m = params
    epr = [math.sqrt(a * s**r + b * (1 - s) ** q + amp**2 * math.exp(2 * kappa * s**m)) for s in t]
    zp, zq = _trapezoid(list(p_hat), t), _trapezoid(epr, t)
    f = [pp / zp * math.log((pp / zp) / (qq / zq)) for pp, qq in zip(p_hat, epr)]
    want = _trapezoid(f, t)
    assert want > 1e-6
    assert kl == pytest.approx(want, rel=TOL["epr_kl"])


def test_t_quadrature_accepts_exact_fraction_breaks():
    """Breaks given as exact Fractions (bin edges worked out by hand) are read as float64: the same rule as
    their floats, integrating t^2 on [0.1, 1] to (1 - 0.001) / 3 (an array left as objects would make the
    finiteness check raise TypeError)."""
    fr = th.t_quadrature(0.1, [Fraction(3, 10), Fraction(1, 2)], n_panels=4, order=6)
    fl = th.t_quadrature(0.1, [0.3, 0.5], n_panels=4, order=6)
    np.testing.assert_array_equal(fr[0], fl[0])
    np.testing.assert_array_equal(fr[1], fl[1])
    assert np.sum(fr[1] * fr[0] ** 2) == pytest.approx(0.999 / 3, abs=TOL["gauss6_truncation"])


def test_epr_bin_probs_by_quadrature_per_bin():
    """epr_bin_probs against scipy's adaptive quadrature of the EPR density sqrt(a t^r + b (1-t)^q +
    A^2 exp(2 kappa t^m)) (written out here) over each bin of uneven edges, normalised to sum 1: guards
    evaluating the density at the wrong nodes (or at none: NaN) and a missing normalisation. The 16-point
    Gauss-Legendre rule on these smooth bins is exact to ~6e-12 (measured); tolerance 1e-10."""
    params = (0.7, 1.3, 0.4, 2.1, 0.5, 0.8, 1.7)
    a, r, b, q, amp, kappa, m = params
    dens = lambda s: math.sqrt(a * s**r + b * (1 - s) ** q + amp**2 * math.exp(2 * kappa * s**m))  # noqa: E731
    edges = [0.05, 0.1, 0.3, 0.35, 0.7, 1.0]
    mass = [integrate.quad(dens, lo, hi, epsabs=0, epsrel=1e-13)[0] for lo, hi in zip(edges[:-1], edges[1:])]
    got = th.epr_bin_probs(np.array(edges), params)
    assert got.shape == (5,)
    np.testing.assert_allclose(got, np.array(mass) / sum(mass), rtol=TOL["gauss16_truncation"])


def test_binned_sampler_reads_float32_probs_in_float64():
    """float32 probabilities are read as the float64 numbers they are: the same draws as the float64 copy
    (bin choice and t), and each weight u width_j / p_j with p_j = probs_j / sum(probs) worked out in
    Fractions from the float32 values, to 1e-14. Guards normalising (and taking logs) in float32, which
    moves the weights by ~1e-8 and the bin choice's random stream."""
    edges = np.array([0.05, 0.2, 0.5, 1.0])
    probs = np.array([0.1, 0.7, 0.2], np.float32)
    key = jax.random.key(4)
    t, w = (np.asarray(a) for a in th.binned_sampler(edges, probs)(key, (300,)))
    t64, w64 = (np.asarray(a) for a in th.binned_sampler(edges, probs.astype(np.float64))(key, (300,)))
    np.testing.assert_array_equal(t, t64)
    fp = [Fraction(float(v)) for v in probs]
    fe = [Fraction(float(v)) for v in edges]
    u = 1 / (fe[-1] - fe[0])
    want = [float(u * (fe[j + 1] - fe[j]) * sum(fp) / fp[j]) for j in range(3)]
    j = np.searchsorted(edges, t, side="right") - 1
    assert set(j.tolist()) == {0, 1, 2}
    np.testing.assert_allclose(w, np.array(want)[j], rtol=TOL["few_roundings"])
    np.testing.assert_array_equal(w, w64)
