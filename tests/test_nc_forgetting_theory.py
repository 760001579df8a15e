"""Neural collapse and forgetting (theory/nc_forgetting.py): the linear-feature model in which T1 is exact
and the replay SNR formula, with expected values that do not come from the code under test.

- The collapsed instance decays by exactly 1 - eta lambda; each control (momentum, two layers, generic
  data) breaks the law by more than any rounding.
- ``decay_error`` is the largest relative deviation: checked on hand-made paths whose deviations are known
  exactly (Fractions), so a mean, a dropped probe or a step off by one gives another number.
- ``snr_replay_theory`` at general pi (not only 0 and 1/2, where pi/(1-pi) and its square agree), beta,
  delta and u, against the formula written out in Fractions.
- ``decay_law_fit_error`` (the law with its rate and constant fixed in advance) on hand-made paths, and
  ``decay_rounding_bound`` against Higham's gamma written out in Fractions.
- ``bayes_accuracy_lda`` against Phi(Delta / 2) for two classes, one-dimensional quadrature for orthogonal
  equidistant classes, and Monte Carlo on the simulation's Gaussian classes.
- ``linear_feature_gd`` against gradients by autodiff and projections by least squares (generic data,
  momentum, two layers).
- The checks, class statistics and remaining branches: tests/test_nc_forgetting_checks.py.

float64 throughout (numpy).
"""

import itertools
import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm

from theory import nc_forgetting as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "decay_law_f64": (1e-10, "T1's law is exact in real arithmetic; float64 leaves at most "
                             "decay_rounding_bound(80, 20, 20, 16) = 5e-13 (measured 3.8e-15 per step, 8.9e-16 "
                             "over the run), while momentum, two layers or generic data break it by >= 2.5e-4"),
    "autodiff_rel": (1e-9, "two float64 implementations of the same 12 GD steps (closed-form gradients and an "
                           "SVD projection against jax.grad and least squares): a few eps per operation, "
                           "measured 3.0e-15 relative; the features move by > 1e-3, so a wrong term shows"),
    "autodiff_abs": (1e-12, "the same for perp entries near 0, whose rounding is relative to the largest "
                            "perp, 1.2 (measured 6.7e-16 absolute)"),
    "few_ulps": (1e-15, "O(1) results a couple of correctly rounded operations from exact: 0.99^t by pow "
                        "against exp(t log1p(-0.01)), a dyadic factor 1.25: <= ~4 ulp of 1.0 = 8.9e-16 "
                        "(measured 2.2e-16)"),
    "formula_f64": (1e-14, "float64 closed forms against Fractions or a hand value: the replay-SNR order (sums "
                           "of positive terms and one division, ~10 roundings of 1.1e-16), Phi of a Mahalanobis "
                           "distance through a Cholesky solve of a diagonal covariance; measured 0, and float32 "
                           "arithmetic would be off by ~1e-7"),
    "replay_pi_rounding": (1e-13, "float(pi) rounds pi by 1.1e-16 relative and 1 - pi amplifies that by "
                                  "pi / (1 - pi) <= 99, so r^2 is off by <= 2.2e-14 relative before the SNR's "
                                  "(smaller) sensitivity to r^2; measured 3.1e-16"),
    "deviation_cancellation": (1e-12, "a deviation d computed as a float64 ratio minus 1 carries the ratio's "
                                      "~3-10 roundings (1.1e-16 each) divided by d >= 0.03: <= 4e-14 "
                                      "relative; measured <= 6.7e-15"),
    "genz_default_abseps": (3e-5, "Genz's randomised integration stops at the default abseps = 1e-5 per "
                                  "class's orthant integral; its error estimate is statistical, so 3 abseps "
                                  "(measured 5e-7 for K = 3 and 10; the quadrature is good to 1e-12)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}

# --------------------------------------------------------------------------------------------------
# The linear-feature model (T1 exact) and the replay SNR formula
# --------------------------------------------------------------------------------------------------


def _linear_case(collapsed=True, momentum=0.0, depth=1, steps=80, eta=0.5, lam=0.01):
    rng = np.random.default_rng(11)
    m = th.collapsed_linear_model(4, 20, 16, 5, rng, collapsed=collapsed)
    probes = rng.standard_normal((10, 20))
    out = th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], m["b"], eta=eta, lam=lam, steps=steps,
                               probes=probes, momentum=momentum, depth=depth)
    return out, th.decay_error(out["perp"], eta, lam)


def test_collapsed_linear_model_decays_by_exactly_one_minus_eta_lambda():
    out, err = _linear_case()
    assert err < TOL["decay_law_f64"]
    assert np.all(out["rank"] == 3)  # dim S_t = K - 1 at every step
    perp = out["perp"]
    assert np.all(perp[0] > 0.1)
    np.testing.assert_allclose(perp[-1], perp[0] * (1 - 0.5 * 0.01) ** 80, rtol=TOL["decay_law_f64"])


@pytest.mark.parametrize("control", [{"momentum": 0.1}, {"depth": 2}, {"collapsed": False}],
                         ids=["momentum", "two_layer", "not_collapsed"])
def test_each_control_breaks_the_exact_decay(control):
    out, err = _linear_case(**control)
    assert err > 1e-6, err
    assert np.all(out["rank"] == 3)


def _gd_by_autodiff(X, Y, V, W, b, probes, *, eta, lam, steps, momentum, depth):
    """linear_feature_gd written differently: gradients by jax.grad of the written-out objective
    (mean cross-entropy + lam/2 ||feature map||^2), the projection onto S_t by least squares on the
    centred class means (no SVD), heavy-ball momentum by the textbook update."""

    labels = Y.argmax(axis=1)

    def loss(theta):
        V, V2, W, b = theta
        z = X @ V.T @ V2.T @ W.T + b
        ce = -jnp.mean(jnp.sum(Y * jax.nn.log_softmax(z, axis=1), axis=1))
        return ce + lam / 2 * (jnp.sum(V * V) + (jnp.sum(V2 * V2) if depth == 2 else 0.0))

    def perp(V, V2):
        F, Pf = X @ V.T @ V2.T, probes @ V.T @ V2.T
        means = np.stack([F[labels == c].mean(axis=0) for c in range(Y.shape[1])])
        M = (means - means.mean(axis=0)).T                             # [d, K], rank K - 1
        coef = np.linalg.lstsq(M, Pf.T, rcond=None)[0]
        return np.linalg.norm(Pf.T - M @ coef, axis=0)

    theta = [jnp.asarray(V), jnp.eye(V.shape[0]), jnp.asarray(W), jnp.asarray(b)]
    vel = [jnp.zeros_like(t) for t in theta]
    out = [perp(np.asarray(theta[0]), np.asarray(theta[1]))]
    grad = jax.jit(jax.grad(loss))
    for _ in range(steps):
        g = grad(theta)
        vel = [momentum * v + gi for v, gi in zip(vel, g)]
        theta = [t - eta * v if (i != 1 or depth == 2) else t for i, (t, v) in enumerate(zip(theta, vel))]
        out.append(perp(np.asarray(theta[0]), np.asarray(theta[1])))
    return np.array(out)


@pytest.mark.parametrize("momentum, depth", [(0.0, 1), (0.6, 1), (0.0, 2), (0.3, 2)])
def test_linear_feature_gd_matches_autodiff_on_generic_data(momentum, depth):
    """Generic (not collapsed) data, W and b non-zero at the start, every term of the update active."""
    rng = np.random.default_rng(5)
    m = th.collapsed_linear_model(3, 6, 5, 4, rng, collapsed=False, noise=0.5)
    W, b = rng.standard_normal((3, 5)) * 0.5, rng.standard_normal(3) * 0.3
    probes = rng.standard_normal((4, 6))
    kw = dict(eta=0.3, lam=0.05, steps=12, momentum=momentum, depth=depth)
    got = th.linear_feature_gd(m["X"], m["onehot"], m["V"], W, b, probes=probes, **kw)
    want = _gd_by_autodiff(m["X"], m["onehot"], m["V"], W, b, probes, **kw)
    assert got["perp"].shape == (13, 4) and np.all(got["rank"] == 2)
    np.testing.assert_allclose(got["perp"], want, rtol=TOL["autodiff_rel"], atol=TOL["autodiff_abs"])
    assert np.ptp(want[:, 0]) > 1e-3  # the features move: a wrong step would show


def test_no_weight_decay_means_no_decay():
    out, err = _linear_case(lam=0.0)
    assert err < TOL["decay_law_f64"]  # upsilon = 1: the perpendicular component is frozen
    np.testing.assert_allclose(out["perp"][-1], out["perp"][0], rtol=TOL["decay_law_f64"])


def test_linear_feature_gd_refuses_bad_arguments():
    m = th.collapsed_linear_model(3, 5, 4, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="momentum"):
        th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], m["b"], eta=0.1, lam=0.1, steps=2,
                             momentum=1.0)
    with pytest.raises(ValueError, match="shapes disagree"):
        th.linear_feature_gd(m["X"], m["onehot"], m["V"].T, m["W"], m["b"], eta=0.1, lam=0.1, steps=2)


def test_snr_replay_theory_limits():
    u = np.array([1.0, 0.1, 1e-8])
    no_replay = th.snr_replay_theory(0.0, 2.0, 0.0, u)
    np.testing.assert_allclose(no_replay, u / (2.0 + u), rtol=TOL["formula_f64"])  # T2: -> 0
    pi = 0.5  # r^2 = 1; delta -> 0 (NC1): the SNR tends to r^2 beta / beta = 1
    assert th.snr_replay_theory(pi, 2.0, 0.0, 1e-12) == pytest.approx(1.0, rel=TOL["formula_f64"])
    assert np.all(np.diff(th.snr_replay_theory([0.0, 0.2, 0.5, 0.8], 2.0, 0.1, 1e-6)) > 0)
    with pytest.raises(ValueError, match="pi"):
        th.snr_replay_theory(1.0, 1.0, 0.0, 1.0)


# --------------------------------------------------------------------------------------------------
# decay_error and snr_replay_theory against exact values
# --------------------------------------------------------------------------------------------------


def test_decay_error_is_the_largest_relative_deviation_on_a_hand_made_path():
    """perp [4 steps + 1, 3 probes] built from chosen ratios perp_{t+1} / (upsilon perp_t) = 1 + dev; the
    answer is max |dev| = 0.03 (probe 2, step 3), where a mean over entries gives 0.008 and a mean per probe
    or step less than 0.03. A probe at 0 (probe 1 from step 2 on) is skipped, not divided by."""
    eta, lam = 0.5, Fraction(1, 10)
    ups = 1 - Fraction(1, 2) * lam
    dev = [[Fraction(0), Fraction(1, 100), Fraction(-1, 200)],
           [Fraction(1, 1000), Fraction(-1, 1), Fraction(0)],      # probe 1 falls to 0 here: dev = -1 exactly
           [Fraction(-2, 1000), None, Fraction(1, 500)],
           [Fraction(0), None, Fraction(-3, 100)]]
    rows = [[Fraction(3), Fraction(2), Fraction(5, 4)]]
    for step in dev:
        rows.append([Fraction(0) if d is None else ups * p * (1 + d) for p, d in zip(rows[-1], step)])
    perp = np.array([[float(x) for x in r] for r in rows])
    want = max(abs(d) for d in itertools.chain(*dev) if d is not None)
    assert want == 1  # the step to zero is a deviation of 100%
    assert th.decay_error(perp, eta, float(lam)) == pytest.approx(float(want), rel=TOL["deviation_cancellation"])
    # Without the fall to zero the largest deviation is the 3% of probe 2 at the last step.
    dev[1][1] = Fraction(2, 100)
    rows = [rows[0]]
    for step in dev:
        rows.append([p * ups * (1 + (0 if d is None else d)) for p, d in zip(rows[-1], step)])
    perp = np.array([[float(x) for x in r] for r in rows])
    devs = [abs(d) for d in itertools.chain(*dev) if d is not None]
    assert max(devs) == Fraction(3, 100) and sum(devs) / len(devs) < Fraction(1, 100)
    assert th.decay_error(perp, eta, float(lam)) == pytest.approx(0.03, rel=TOL["deviation_cancellation"])
    # A probe that starts at 0 and stays there has no ratio: it is skipped.
    z = np.hstack([perp, np.zeros((perp.shape[0], 1))])
    assert th.decay_error(z, eta, float(lam)) == pytest.approx(0.03, rel=TOL["deviation_cancellation"])
    # upsilon enters as 1 - eta lambda: the same path read with lambda = 0 deviates by 1/upsilon - 1 more.
    exact = float(max(abs(ups * (1 + d) - 1) for d in itertools.chain(*dev) if d is not None))
    assert th.decay_error(perp, eta, 0.0) == pytest.approx(exact, rel=TOL["deviation_cancellation"])


def _snr_replay_exact(pi, beta, delta, u):
    """(r^2 beta + u) / (r^2 delta + beta + u), r = pi / (1 - pi): Corollary 2's order, in Fractions."""
    r2 = (pi / (1 - pi)) ** 2
    return (r2 * beta + u) / (r2 * delta + beta + u)


@pytest.mark.parametrize("pi, beta, delta, u", [
    (Fraction(1, 5), Fraction(3, 2), Fraction(1, 10), Fraction(1, 100)),
    (Fraction(3, 10), Fraction(2), Fraction(1, 4), Fraction(1, 10**6)),
    (Fraction(7, 10), Fraction(1, 2), Fraction(3), Fraction(1, 3)),
    (Fraction(9, 10), Fraction(5), Fraction(1, 7), Fraction(0)),
    (Fraction(99, 100), Fraction(1, 3), Fraction(2), Fraction(1, 2)),
])
def test_snr_replay_theory_at_general_pi_equals_the_exact_formula(pi, beta, delta, u):
    """At pi = 0.2 the ratio pi/(1-pi) is 1/4 and its square 1/16: r^2 read as pi/(1-pi) moves the SNR by
    at least 0.5% at every row here (1e10 times the tolerance)."""
    got = th.snr_replay_theory(float(pi), float(beta), float(delta), float(u))
    assert float(got) == pytest.approx(float(_snr_replay_exact(pi, beta, delta, u)),
                                           rel=TOL["replay_pi_rounding"])
    vec = th.snr_replay_theory(np.array([0.0, float(pi)]), float(beta), float(delta), float(u))
    np.testing.assert_allclose(vec, [float(_snr_replay_exact(Fraction(0), beta, delta, u)),
                                     float(_snr_replay_exact(pi, beta, delta, u))],
                               rtol=TOL["replay_pi_rounding"])
    wrong_r2 = pi / (1 - pi)  # the plausible slip: r^2 = pi / (1 - pi)
    slip = (wrong_r2 * beta + u) / (wrong_r2 * delta + beta + u)
    assert abs(slip / _snr_replay_exact(pi, beta, delta, u) - 1) > Fraction(1, 200)


# --------------------------------------------------------------------------------------------------
# The decay law with rate and constant fixed in advance, and its rounding budget
# --------------------------------------------------------------------------------------------------


def test_decay_law_fit_error_on_a_hand_made_path():
    """perp_t = perp_0 upsilon^t, with one entry off by a known factor: the largest relative deviation is
    that factor minus 1 (a fitted rate or a constant taken elsewhere than t0 would give another number)."""
    eta, lam = 0.5, 0.02  # upsilon = 0.99
    t = np.arange(6)[:, None]
    path = np.array([[2.0, 5.0, 0.0]]) * 0.99 ** t  # the third probe has nothing outside S (skipped)
    assert th.decay_law_fit_error(path, eta, lam) < TOL["few_ulps"]
    bad = path.copy()
    bad[3, 1] *= 1.25
    assert th.decay_law_fit_error(bad, eta, lam) == pytest.approx(0.25, abs=TOL["few_ulps"])
    shifted = 1.5 * path  # the constant is the value at t0, so a common scale changes nothing
    assert th.decay_law_fit_error(shifted, eta, lam) < TOL["few_ulps"]
    # the rate is the theory's: a path decaying at 0.98 instead deviates by 1 - (0.98/0.99)^5 at the last step
    other = np.array([[1.0]]) * 0.98 ** t
    assert th.decay_law_fit_error(other, eta, lam) == pytest.approx(1 - (0.98 / 0.99) ** 5,
                                                                    rel=TOL["deviation_cancellation"])


def test_decay_law_fit_error_refuses_bad_input():
    with pytest.raises(ValueError, match="perp_0 = 0"):
        th.decay_law_fit_error(np.zeros((3, 2)), 0.5, 0.01)
    with pytest.raises(ValueError, match=r"eta \* lam"):
        th.decay_law_fit_error(np.ones((3, 2)), 0.5, 0.0)
    with pytest.raises(ValueError, match="at least 2 rows"):
        th.decay_law_fit_error(np.ones((1, 2)), 0.5, 0.01)


def test_decay_rounding_bound_is_steps_times_gamma():
    """200 steps, n = 20 samples, p = 20 inputs, d = 16 features: 200 * 56 u / (1 - 56 u), u = 2^-53."""
    u = Fraction(1, 2**53)
    expected = 200 * 56 * u / (1 - 56 * u)
    assert th.decay_rounding_bound(200, 20, 20, 16) == float(expected)
    with pytest.raises(ValueError, match=">= 1"):
        th.decay_rounding_bound(0, 20, 20, 16)


def test_the_collapsed_instance_obeys_the_law_within_the_budget_and_the_controls_do_not():
    """The T1 instance follows perp_0 upsilon^t over the whole run to within the rounding budget; momentum,
    two layers and generic data miss it by orders of magnitude more."""
    bound = th.decay_rounding_bound(80, 20, 20, 16)
    assert th.decay_law_fit_error(_linear_case()[0]["perp"], 0.5, 0.01) <= bound
    for kw in ({"momentum": 0.1}, {"depth": 2}, {"collapsed": False}):
        assert th.decay_law_fit_error(_linear_case(**kw)[0]["perp"], 0.5, 0.01) > 1e6 * bound, kw


# --------------------------------------------------------------------------------------------------
# Bayes accuracy of Gaussian classes with a shared covariance
# --------------------------------------------------------------------------------------------------


def test_bayes_accuracy_of_two_classes_is_phi_of_half_the_mahalanobis_distance():
    """K = 2: Phi(Delta / 2), Delta^2 = (mu_1 - mu_0)^T Sigma^-1 (mu_1 - mu_0), here 2^2 / 4 + 1^2 / 1 = 2."""

    means = np.array([[0.0, 0.0], [2.0, 1.0]])
    cov = np.diag([4.0, 1.0])
    assert th.bayes_accuracy_lda(means, cov) == pytest.approx(norm.cdf(np.sqrt(2.0) / 2),
                                                                  abs=TOL["formula_f64"])


@pytest.mark.parametrize("K, a", [(3, 1.0), (10, 2.5)])
def test_bayes_accuracy_of_orthogonal_equidistant_classes_against_one_dimensional_quadrature(K, a):
    """Means a e_c with the identity covariance: given class c, the Bayes rule picks c iff x_c > x_k for all
    k, so the accuracy is int phi(t) Phi(a + t)^(K - 1) dt (one-dimensional quadrature, scipy.quad)."""

    expected = quad(lambda t: norm.pdf(t) * norm.cdf(a + t) ** (K - 1), -12, 12, epsabs=1e-12)[0]
    means = a * np.eye(K, K + 2)
    got = th.bayes_accuracy_lda(means, np.eye(K + 2))
    # Genz's integration, absolute error 1e-5 per class
    assert got == pytest.approx(expected, abs=TOL["genz_default_abseps"])


def test_bayes_accuracy_of_the_simulated_gaussian_classes_matches_monte_carlo():
    """The simulation's ten classes at separation 1.0 (root seed 0): the Bayes classifier (LDA with the true
    parameters) on 200,000 fresh draws scores within 4 standard errors of the integral, which is near 0.9."""


    k = jax.random.key(0)
    ka, km, *_ = jax.random.split(k, 5)
    A = np.asarray(jax.random.normal(ka, (64, 8))) * 0.5
    means = np.asarray(jax.random.normal(km, (10, 64))) * 1.0 / math.sqrt(64)
    cov = A @ A.T + 0.1 * np.eye(64)
    exact = th.bayes_accuracy_lda(means, cov)
    rng = np.random.default_rng(1)
    n = 200_000
    y = rng.integers(0, 10, n)
    x = means[y] + rng.standard_normal((n, 8)) @ A.T + np.sqrt(0.1) * rng.standard_normal((n, 64))
    head = th.gaussian_head(means, cov, np.ones(10), ridge=0.0)
    mc = head.accuracy(x, y)
    se = math.sqrt(exact * (1 - exact) / n)
    assert abs(mc - exact) < 4 * se
    assert 0.85 < exact < 0.95


def test_bayes_accuracy_refuses_bad_input():
    with pytest.raises(ValueError, match="coincide"):
        th.bayes_accuracy_lda(np.zeros((3, 2)), np.eye(2))
    with pytest.raises(ValueError, match="positive definite"):
        th.bayes_accuracy_lda(np.eye(3), np.zeros((3, 3)))
    with pytest.raises(ValueError, match=r"covariance must be \[d, d\]"):
        th.bayes_accuracy_lda(np.eye(3), np.eye(2))


def test_snr_replay_theory_computes_in_float64_whatever_the_dtype_of_pi():
    """pi given in float32 (0.3 rounded to float32): the formula evaluated in Fractions at that exact value,
    to 1e-14 (float32 arithmetic would be off by ~1e-7)."""
    pi32 = np.float32(0.3)
    want = _snr_replay_exact(Fraction(float(pi32)), Fraction(2), Fraction(1, 4), Fraction(1, 100))
    got = th.snr_replay_theory(pi32, 2.0, 0.25, 0.01)
    assert float(got) == pytest.approx(float(want), rel=TOL["formula_f64"])
