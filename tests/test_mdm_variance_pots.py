"""P-POTS exactly in t (theory/mdm_variance/): per-token moments E_m[l^k] by a loop over every mask, the
log-t Gauss rule against Beta integrals, pots_exact's mean and variances against scipy quadrature and
delete-one recomputation, its trace decomposition, the chain gradients against central differences, and
the binned density. float64 throughout (the conftest turns x64 on). Split from test_mdm_variance_theory.py.

Each tolerance says the smallest error it can detect; the plausible bugs it guards are larger."""

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special

from test_mdm_variance_theory import _abc, _jackknife  # the loop references, written once
from theory import mdm_variance as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    # float64 roundoff against references in exact or correctly rounded arithmetic
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
    "mask_enumeration": (1e-12, "exact_t_moments from the per-size mask sums against a loop over the 32 masks: "
                                "positive float64 sums of 32 terms times t^k (1 - t)^(L - k), <= ~40 eps = 9e-15 "
                                "relative; measured 5.3e-16"),
    # quadrature
    "t_quadrature": (1e-12, "the 48-panel, 12-node Gauss rule in log t is exact to ~4e-16 on these Beta integrands "
                            "(measured, also against Fractions); the references carry the error: scipy's betaincc a "
                            "few ulp, and the alternating binomial sum (terms to ~900, sum 1.4) loses up to 3300 eps "
                            "= 7e-13 (measured 8.0e-14)"),
    "quadrature_mean": (1e-10, "mu by scipy quad (epsrel 1e-12, the bin edges as break points) against pots_exact's "
                               "log-t Gauss rule on a polynomial-in-t integrand: both ~1e-12, measured 0"),
    "quadrature": (1e-9, "scipy quad at epsrel 1e-12 / 1e-13 against the bin-sum or log-t Gauss form, V subtracting "
                         "mu^2 (<= ~3-fold cancellation): <= ~1e-11, measured <= 5.1e-15; a wrong density moves V by "
                         "> 1e-3 of itself (test_pots_exact_binned_density_is_probability_per_unit_t asserts so)"),
    "quadrature_variance": (1e-8, "V_optimal and V_paper square or multiply quad integrals (epsrel 1e-12 each) and "
                                  "subtract mu^2 = 6.0 from ~9.2: <= ~1e-11 (measured 1.7e-14); still resolves "
                                  "V_paper from V_optimal, 9.6e-6 apart on these sums"),
    # derivatives and fits
    "finite_difference": (1e-8, "absolute: central differences with h = 1e-5 err by h^2 / 6 times the third "
                                "derivative, ~1e-10, plus eps |l| / h ~ 1e-11 of rounding, measured 3.4e-11; 1e-8 "
                                "is ~300x that and 5e-8 of the largest entry (0.19)"),
    "softmax_row_sum": (1e-12, "absolute: a row of a gradient in softmax logits sums to 0 exactly in real "
                               "arithmetic; a float64 sum of 3 entries <= 0.2 errs by ~1e-16 (measured 5.6e-17); "
                               "a gradient in T itself has non-zero row sums"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _brute_moments(logp_fn, x0, t):
    """E[l | x0, t] and E[l^2 | x0, t] by a loop over all 2^L masks with probability t^k (1-t)^(L-k)."""
    length = len(x0)
    g = m2 = 0.0
    for bits in itertools.product((False, True), repeat=length):
        m = np.array(bits)
        k = int(m.sum())
        lp = np.asarray(logp_fn(jnp.asarray(x0), jnp.asarray(m)))
        loss = -float(lp[m].sum()) / (length * t)
        pr = t**k * (1 - t) ** (length - k)
        g, m2 = g + pr * loss, m2 + pr * loss * loss
    return g, m2


def test_exact_t_moments_by_mask_loop():
    """The exact-in-t moments of the chain oracle against a loop over every mask, at three rates, to 1e-12
    relative (float64 sums of 2^5 terms)."""
    trans, init = th.random_chain(jax.random.key(3), 4, 0.5)
    x0 = np.asarray(th.sample_chain(jax.random.key(4), trans, init, 1, 5)[0])
    fn = lambda x, m: th.oracle_token_logprobs(trans, init, x, m)  # noqa: E731
    sums = np.asarray(th.exact_mask_sums(fn, jnp.asarray(x0)))
    ts = np.array([0.03, 0.4, 0.9])
    g, m2 = th.exact_t_moments(sums, ts)
    brute_fn = jax.jit(fn)   # one compile: every mask has the shape [5]
    for j, t in enumerate(ts):
        bg, bm = _brute_moments(brute_fn, x0, t)
        assert g[j] == pytest.approx(bg, rel=TOL["mask_enumeration"])
        assert m2[j] == pytest.approx(bm, rel=TOL["mask_enumeration"])


def test_t_quadrature_against_beta_integrals():
    """int_eps^1 t^(k-1) (1-t)^(L-k) dt (closed form: incomplete Beta) and int t^-1 (1-t)^(L-1) dt (binomial
    expansion), to 1e-12 relative: the rule that every exact variance uses."""
    length = 16
    for eps in (1e-2, 1e-4):
        t, w = th.t_quadrature(eps, breaks=th.t_bin_edges(eps, 8))
        for k in range(1, length + 1):
            exact = special.beta(k, length - k + 1) * special.betaincc(k, length - k + 1, eps)
            assert np.sum(w * t ** (k - 1) * (1 - t) ** (length - k)) == pytest.approx(exact, rel=TOL["t_quadrature"])
        inv = -math.log(eps) + sum(math.comb(length - 1, j) * (-1) ** j * (1 - eps**j) / j for j in range(1, length))
        assert np.sum(w * (1 - t) ** (length - 1) / t) == pytest.approx(inv, rel=TOL["t_quadrature"])


def _fake_sums(rng, n, length=5):
    """Exact sums of losses s(m) = sum_{i in m} c_i (1 + k / L) with random per-sequence c (mask enumeration)."""
    out = np.zeros((n, 2, length + 1))
    for i in range(n):
        c = 1.0 + rng.random(length)
        for bits in itertools.product((0, 1), repeat=length):
            k = sum(bits)
            s = float(np.dot(bits, c)) * (1 + k / length)
            out[i, 0, k] += s
            out[i, 1, k] += s * s
    return out


def test_pots_exact_by_scipy_quadrature_and_deletion():
    """pots_exact against scipy.integrate.quad of its defining integrals (uniform, optimum, the paper's
    density) to 1e-8 relative, the identity V(p ~ M2) = V(uniform), the optimum below every other density,
    and the jackknife SE against deletion from scratch."""

    rng = np.random.default_rng(7)
    sums = _fake_sums(rng, 6)
    eps = 0.02
    u = 1 / (1 - eps)
    r = th.pots_exact(sums, eps)

    def mom(t):
        g, m2 = th.exact_t_moments(sums, np.array([t]))
        return g[:, 0], m2[:, 0]

    def quad(f):
        return integrate.quad(f, eps, 1, epsrel=1e-12, limit=200)[0]

    big_m2 = lambda t: mom(t)[1].mean()  # noqa: E731
    big_g = lambda t: mom(t)[0].mean()  # noqa: E731
    paper = lambda t: np.sqrt(big_g(t) ** 2 + (mom(t)[1] - mom(t)[0] ** 2).mean())  # noqa: E731
    mu = u * quad(big_g)
    assert r["mu"] == pytest.approx(mu, rel=TOL["quadrature"])
    assert r["V_uniform"] == pytest.approx(u * quad(big_m2) - mu**2, rel=TOL["quadrature_variance"])
    assert r["V_optimal"] == pytest.approx(u**2 * quad(lambda t: np.sqrt(big_m2(t))) ** 2 - mu**2,
                                           rel=TOL["quadrature_variance"])
    assert r["V_paper"] == pytest.approx(u**2 * quad(paper) * quad(lambda t: big_m2(t) / paper(t)) - mu**2,
                                         rel=TOL["quadrature_variance"])
    assert r["V_square"] == pytest.approx(r["V_uniform"], rel=TOL["variance_roundoff"])
    assert all(r["V_optimal"] <= r[f"V_{k}"] for k in th.POTS_DENSITIES)
    se = _jackknife(sums, lambda s: th.pots_exact(s, eps)["V_optimal"] / th.pots_exact(s, eps)["V_uniform"])
    assert th.jackknife_se_of(r["loo"]["V_optimal"] / r["loo"]["V_uniform"]) == pytest.approx(
        se, rel=TOL["loo_cancellation"])


def test_pots_exact_refuses_bad_input():
    sums = _fake_sums(np.random.default_rng(0), 3)
    with pytest.raises(ValueError, match="eps"):
        th.pots_exact(sums, 0.0)
    with pytest.raises(ValueError, match="n >= 3"):
        th.pots_exact(sums[:2], 0.01)
    with pytest.raises(ValueError, match="cover"):
        th.pots_exact(sums, 0.01, bin_edges=np.array([0.02, 0.5, 1.0]), bin_probs=np.array([0.5, 0.5]))
    # each bin check on its own (an `and` between them accepts either alone): covering edges with one
    # probability too few, and the right count with a zero
    with pytest.raises(ValueError, match="one per bin"):
        th.pots_exact(sums, 0.01, bin_edges=np.array([0.01, 0.5, 1.0]), bin_probs=np.array([1.0]))
    with pytest.raises(ValueError, match="positive"):
        th.pots_exact(sums, 0.01, bin_edges=np.array([0.01, 0.5, 1.0]), bin_probs=np.array([1.0, 0.0]))


def test_trace_decomposition_sums_to_the_per_coordinate_loops():
    """trace_estimates_from_sums of trace_nested_sums (over two blocks, added) against _abc per coordinate,
    summed; trace_variance_from_sums against numpy's covariance trace (1e-10 relative)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(9, 3, 4, 3)) * np.array([1.0, 0.3, 2.0]) + np.arange(9.0)[:, None, None, None] ** 1.2
    sums = th.trace_nested_sums(x[:4]) + th.trace_nested_sums(x[4:])
    r = th.trace_estimates_from_sums(sums, 9, 3, 4)
    want = {k: sum(_abc(x[..., d])[k] for d in range(3)) for k in ("A", "B", "C")}
    for k in want:
        assert r[k] == pytest.approx(want[k], rel=TOL["loo_roundoff"])
    assert r["total"] == pytest.approx(sum(want.values()), rel=TOL["loo_roundoff"])
    f = rng.normal(size=(50, 3)) * np.array([1.0, 2.0, 0.5]) + 3.0
    s = th.trace_direct_sums(f[:20]) + th.trace_direct_sums(f[20:])
    assert th.trace_variance_from_sums(s, 50) == pytest.approx(np.trace(np.cov(f.T)), rel=TOL["loo_roundoff"])
    with pytest.raises(ValueError):
        th.trace_nested_sums(x[:, :1])


def test_chain_gradients_by_central_differences():
    """oracle_mdm_grad_fn and arm_grad_fn against central differences of the losses at softmax(log T +- h e_ij)
    (h = 1e-5: truncation ~1e-10, rounding ~1e-11), and rows summing to 0 (a row's softmax ignores a shift)."""
    trans, init = th.random_chain(jax.random.key(5), 3, 0.5)
    length, x0 = 5, jnp.array([0, 2, 1, 1, 0])
    mask, t = jnp.array([True, False, True, True, False]), 0.6
    theta = np.log(np.asarray(trans))
    for grad_fn, loss_of in (
            (th.oracle_mdm_grad_fn(trans, init, length),
             lambda tr: th.oracle_mdm_loss_fn(tr, init, length)(x0, t, mask)),
            (th.arm_grad_fn(trans, init), lambda tr: th.arm_loss_fn(tr, init)(x0, t, mask))):
        g = np.asarray(grad_fn(x0, t, mask)).reshape(3, 3)
        fd = np.zeros((3, 3))
        for i in range(3):
            for j in range(3):
                e = np.zeros((3, 3))
                e[i, j] = 1e-5
                up, dn = (jax.nn.softmax(jnp.asarray(theta + s * e), -1) for s in (1, -1))
                fd[i, j] = (float(loss_of(up)) - float(loss_of(dn))) / 2e-5
        np.testing.assert_allclose(g, fd, atol=TOL["finite_difference"])
        np.testing.assert_allclose(g.sum(1), 0.0, atol=TOL["softmax_row_sum"])
        assert np.abs(g).max() > 1e-3


def test_pots_exact_binned_density_is_probability_per_unit_t():
    """The piecewise-constant sampler puts probability ``pr_j`` on bin j, so its density is ``pr_j / width_j``
    (normalised): bins whose probabilities are proportional to their widths are the uniform sampler, and
    for unequal bins ``V = u^2 int M2 / p dt - mu^2`` agrees with scipy's adaptive quadrature of the same
    integrand bin by bin (M2(t) averaged over the sequences by :func:`exact_t_moments`, which
    test_exact_t_moments_by_mask_loop checks against a mask loop)."""

    rng = np.random.default_rng(0)
    sums = np.abs(rng.normal(size=(4, 2, 6)))
    sums[:, 1] = sums[:, 0] ** 2 + 0.1
    eps, edges = 0.05, np.array([0.05, 0.3, 0.5, 1.0])
    widths = np.diff(edges)
    r = th.pots_exact(sums, eps, bin_edges=edges, bin_probs=7 * widths)
    assert r["V_bins"] == pytest.approx(r["V_uniform"], rel=TOL["variance_roundoff"])
    probs = np.array([0.5, 0.25, 0.25])
    r = th.pots_exact(sums, eps, bin_edges=edges, bin_probs=probs)
    u = 1 / (1 - eps)
    dens = probs / probs.sum() / widths

    def moment(t, i):
        return float(th.exact_t_moments(sums, [t])[i].mean())

    int_m2_over_p = sum(integrate.quad(lambda t: moment(t, 1), a, b, epsabs=0, epsrel=1e-12)[0] / d
                        for a, b, d in zip(edges[:-1], edges[1:], dens))
    mu = u * integrate.quad(lambda t: moment(t, 0), eps, 1, points=edges[1:-1], epsabs=0, epsrel=1e-12)[0]
    assert r["mu"] == pytest.approx(mu, rel=TOL["quadrature_mean"])
    assert r["V_bins"] == pytest.approx(u**2 * int_m2_over_p - mu**2, rel=TOL["quadrature"])
    assert abs(r["V_bins"] - r["V_uniform"]) > 1e-3 * r["V_uniform"]  # the test can see a wrong density
