"""NC forgetting (theory/nc_forgetting.py): inputs chosen so that a wrong bound, default, dtype or dropped
argument shows (issue "Proofs by example that catch a wrong formula", ``make mutate PAPER=nc_forgetting``):
the checks' inclusive bounds, the rank tolerance at chosen singular values, _unit_scale at both ends of its
interval, Ledoit-Wolf written out as a loop, pooled covariances in Fractions, probes against scikit-learn
with non-default C and max_iter, the linear-feature model's defaults, refusals and logits in the hundreds.
Mutants no input can tell apart are listed with the reason in tests/mutation_equivalents.yaml. float64
throughout (numpy)."""

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from theory import nc_forgetting as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "few_roundings": (1e-15, "an O(1) result a few float64 roundings (1.1e-16 each) from an exact value: "
                             "dyadic ratios, square roots of perfect squares, unit singular vectors of "
                             "axis-aligned matrices (measured error 0)"),
    "exact_data_sums": (1e-14, "float64 closed forms on small exact inputs against Fractions or a hand value: "
                               "sums of <= 9 terms, a division, a 2 x 2 solve with cond <= 2.5 or Phi "
                               "(slope <= 0.4) of such a value, <= ~20 roundings = 2.2e-15; measured "
                               "<= 8.9e-16"),
    "svd_entropy": (1e-13, "exp of the entropy of squared singular values of a 4 x 3 matrix: the SVD and "
                           "the p log p sum each add a few eps, exp(H) with H <= log 2 barely amplifies "
                           "(measured 0)"),
    "ledoit_wolf_rel": (1e-12, "sklearn's Ledoit-Wolf and the loop form the same sums over n = 30 residuals "
                               "in another order, ~n eps = 7e-15 relative (measured 3.7e-16)"),
    "ledoit_wolf_abs": (1e-14, "the same for entries near 0: the rounding is relative to the largest "
                               "entry, 9.2, and was measured at 8.9e-16 absolute"),
    "decay_law_f64": (1e-10, "T1's law is exact in real arithmetic: float64 leaves "
                             "decay_rounding_bound = 1e-14 (measured 1.6e-14, and 1.2e-15 with logits of "
                             "1000); a rate 1 - eta lam / 2 instead of 1 - eta lam would deviate by 5e-3"),
    "in_subspace": (1e-12, "the collapsed training features lie in S exactly; their part off S is the "
                           "rounding of d = 4 term sums, ~d eps relative to the largest feature "
                           "(measured 5.9e-16)"),
    "genz_default_abseps": (3e-5, "Genz's randomised integration stops at the default abseps = 1e-5 per "
                                  "orthant integral, 3 abseps allows that (here the rank-one Gram makes "
                                  "scipy's integral one-dimensional: measured error 0)"),
    "genz_abseps_1e8": (5e-8, "Genz's integration with abseps = 1e-8 against quadrature good to 2.5e-10: "
                              "the error estimate is statistical, measured 1.2e-8 (seed 0) and up to 2.0e-8 "
                              "over seeds 0-4, so 5 abseps"),
    "probe_fold": (1e-10, "the probe's scaling folded into the head (weights up to 15 from a feature of "
                          "scale 0.05) against sklearn's pipeline: ~d eps |w| |x| ~ 1e-13 on logits <= 7 "
                          "(measured 5.3e-15)"),
    "lda_ill_conditioned": (1e-10, "an explicit inverse against a Cholesky solve of S with cond(S) = 1.2e5 "
                                   "(feature scales 1, 20, 0.05): both err by ~cond(S) eps = 2.7e-11 "
                                   "relative (measured 4.3e-16)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


# --------------------------------------------------------------------------------------------------
# Checks, class statistics and covariances (inputs where a wrong bound, dtype or default shows)
# --------------------------------------------------------------------------------------------------


def test_check_features_returns_float64_and_check_labelled_int64():
    """The documented dtypes: features float64 whatever the input's numeric dtype, labels int64 whatever
    the integer (or integral float) dtype of the labels, classes integers (float labels become int64)."""
    x = th.check_features(np.array([[1, 2], [3, 4]], dtype=np.int32))
    assert x.dtype == np.float64 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert th.check_features(np.array([[True], [False]])).dtype == np.float64
    feats = np.arange(8.0).reshape(4, 2)
    for labels in (np.array([5, 5, 9, 9], np.int32), np.array([5, 5, 9, 9], np.uint8), np.array([5.0, 5.0, 9.0, 9.0])):
        _, y, classes = th.check_labelled(feats, labels)
        assert y.dtype == np.int64 and classes.dtype.kind in "iu", labels.dtype
        assert y.tolist() == [5, 5, 9, 9] and classes.tolist() == [5, 9]


def test_check_labelled_integer_bounds_are_inclusive():
    """Unsigned labels up to 2^63 - 1 (the largest int64) are accepted; float labels are accepted exactly
    when they are whole numbers of size at most 2^53 (2^53 itself included; 2^53 + 2, the next float
    above it, refused; a NaN refused)."""
    feats = np.arange(8.0).reshape(4, 2)
    top = np.iinfo(np.int64).max
    _, y, classes = th.check_labelled(feats, np.array([0, 0, top, top], dtype=np.uint64))
    assert classes.tolist() == [0, top]
    for ok in (2.0**53, 1000.0, -(2.0**53)):
        _, y, classes = th.check_labelled(feats, np.array([0.0, 0.0, ok, ok]))
        assert int(ok) in classes.tolist() and y.tolist().count(int(ok)) == 2
    for bad in (2.0**53 + 2, 0.5, np.nan, np.inf):
        with pytest.raises(ValueError, match="whole numbers"):
            th.check_labelled(feats, np.array([0.0, 0.0, bad, bad]))


def test_singleton_classes_are_allowed_where_the_docstring_allows_them():
    """class_means and within_class_residuals accept one sample per class by default (a class of one is
    its own mean: residual 0); pooled_covariance with one degree of freedom left works, with none refuses."""
    x = np.array([[1.0, 2.0], [3.0, 6.0], [5.0, -1.0]])
    y = np.array([0, 0, 1])
    classes, means = th.class_means(x, y)
    assert classes.tolist() == [0, 1] and means.tolist() == [[2.0, 4.0], [5.0, -1.0]]
    np.testing.assert_array_equal(th.within_class_residuals(x, y), [[-1.0, -2.0], [1.0, 2.0], [0.0, 0.0]])
    # n - K = 1 degree of freedom: the residual outer products themselves, [[2, 4], [4, 8]]
    np.testing.assert_array_equal(th.pooled_covariance(x, y), [[2.0, 4.0], [4.0, 8.0]])
    with pytest.raises(ValueError, match="more samples than classes"):
        th.pooled_covariance(x[1:], y[1:])  # two samples, two classes: n - K = 0
    with pytest.raises(ValueError, match="at least 2 samples"):
        th.within_class_residuals(x, y, min_per_class=2)


def test_pooled_covariance_is_the_residual_sum_over_n_minus_k_by_default():
    """Against a loop over samples in Fractions: K = 3 classes of sizes 2, 3, 4 (n = 9), the default
    divides by n - K = 6, ddof_per_class = 0 by n = 9."""
    rows = [(0, [1, 2]), (0, [4, -1]), (1, [0, 0]), (1, [2, 5]), (1, [7, 1]),
            (2, [3, 3]), (2, [-2, 1]), (2, [5, 0]), (2, [1, 8])]
    sums = {}
    for c, v in rows:
        s = sums.setdefault(c, [0, [Fraction(0), Fraction(0)]])
        s[0] += 1
        s[1] = [a + b for a, b in zip(s[1], v)]
    mean = {c: [a / s[0] for a in s[1]] for c, s in sums.items()}
    ss = [[sum((v[i] - mean[c][i]) * (v[j] - mean[c][j]) for c, v in rows) for j in range(2)] for i in range(2)]
    x = np.array([v for _, v in rows], float)
    y = np.array([c for c, _ in rows])
    np.testing.assert_allclose(th.pooled_covariance(x, y), [[float(e / 6) for e in r] for r in ss],
                               rtol=TOL["exact_data_sums"])
    np.testing.assert_allclose(th.pooled_covariance(x, y, ddof_per_class=0), [[float(e / 9) for e in r] for r in ss],
                               rtol=TOL["exact_data_sums"])


def _ledoit_wolf_2004(r):
    """Ledoit and Wolf (2004), Lemma 3.2 / Theorem 3.1, on samples ``r [n, d]`` taken as centred, written as a
    loop over samples: S = sum x x^T / n, m = tr S / d, d2 = ||S - m I||^2, b2 = min(d2, sum_k ||x_k x_k^T -
    S||^2 / n^2), with ||A||^2 = tr(A A^T) / d; the estimate (b2 / d2) m I + (1 - b2 / d2) S."""
    n, d = r.shape
    S = sum(np.outer(v, v) for v in r) / n
    fro = lambda A: float(np.sum(A * A)) / d  # noqa: E731 - the paper's normalised Frobenius norm
    m = np.trace(S) / d
    d2 = fro(S - m * np.eye(d))
    b2 = min(d2, sum(fro(np.outer(v, v) - S) for v in r) / n**2)
    return b2 / d2 * m * np.eye(d) + (1 - b2 / d2) * S


def test_shrunk_covariance_is_ledoit_wolf_of_the_within_class_residuals():
    """Three classes with distinct means, anisotropic noise, n = 30 < several d: the estimate is Ledoit-Wolf's
    formula applied to the residuals from the class means (computed here by a loop), not to the raw
    features (the class means would inflate it) nor the shrinkage constant alone."""
    rng = np.random.default_rng(8)
    y = np.repeat([2, 5, 7], [8, 10, 12])
    centres = {2: [5.0, 0.0, 0.0, 1.0, 0.0, 0.0], 5: [0.0, -4.0, 2.0, 0.0, 0.0, 1.0], 7: [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]}
    x = np.array([centres[c] for c in y]) + rng.standard_normal((30, 6)) * [3.0, 1.0, 0.5, 0.2, 2.0, 1.0]
    resid = np.array([x[i] - x[y == y[i]].mean(axis=0) for i in range(30)])
    want = _ledoit_wolf_2004(resid)
    got = th.shrunk_covariance(x, y)
    np.testing.assert_allclose(got, want, rtol=TOL["ledoit_wolf_rel"], atol=TOL["ledoit_wolf_abs"])
    raw = _ledoit_wolf_2004(x - x.mean(axis=0))  # the class means left in: another matrix
    assert np.max(np.abs(raw - want)) > 0.5


# --------------------------------------------------------------------------------------------------
# Rescaling and the numeric rank of the centred means
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m, rescaled", [(0.0, False), (1e-101, True), (1e-100, False), (0.75, False),
                                         (1.0, False), (1e100, False), (2e100, True)])
def test_unit_scale_rescales_exactly_outside_its_documented_interval(m, rescaled):
    """``x`` itself (the same object) for max |x| in [1e-100, 1e100] (both ends included) and 0, ``x / max
    |x|`` outside."""
    x = np.array([[m, -m / 2], [0.0, m / 4]])
    out = th._unit_scale(x)
    if rescaled:
        assert out is not x
        np.testing.assert_array_equal(out, [[1.0, -0.5], [0.0, 0.25]])
    else:
        assert out is x


def test_the_rank_tolerance_is_relative_to_the_largest_singular_value_and_the_global_mean():
    """Four classes at +-1e4 e1 and +-1e-12 e2 (global mean exactly 0): singular values sqrt(2) 1e4 and
    sqrt(2) 1e-12. The tolerance max(K, d) eps max(s_max, sqrt(K) ||mu_G||) = 4 eps sqrt(2) 1e4 ~ 1.3e-11
    drops the second one: S is the e1 axis. The same second direction at 1e-10 is kept (rank 2)."""
    y = np.repeat(np.arange(4), 2)
    for small, rank in ((1e-12, 1), (1e-10, 2)):
        means = np.array([[1e4, 0.0], [-1e4, 0.0], [0.0, small], [0.0, -small]])
        q = th.active_subspace(means[y], y)
        assert q.shape == (2, rank), small
        if rank == 1:
            np.testing.assert_allclose(np.abs(q[:, 0]), [1.0, 0.0], rtol=0, atol=TOL["few_roundings"])


def test_the_rank_mask_keeps_values_strictly_above_the_tolerance_and_at_most_k_minus_one():
    """_centred_rank_mask on chosen singular values (K = 3 classes in d = 4, mu_G = 0): the tolerance is
    4 eps s_max = 2^-50 exactly for s_max = 1; a value equal to it is dropped (strictly above), and a third
    value far above it is dropped too (centring leaves at most K - 1 = 2 directions)."""
    means, mu_g = np.zeros((3, 4)), np.zeros(4)
    tol = 4 * np.finfo(np.float64).eps
    assert tol == 2.0**-50
    np.testing.assert_array_equal(th._centred_rank_mask(np.array([1.0, tol, 0.0]), means, mu_g), [True, False, False])
    np.testing.assert_array_equal(th._centred_rank_mask(np.array([1.0, 0.5, 0.25]), means, mu_g), [True, True, False])
    # the global mean's term: ||mu_G|| sqrt(K) = 2 * sqrt(3) sets the tolerance when s_max is smaller
    mu = np.array([2.0, 0.0, 0.0, 0.0])
    big = 4 * np.finfo(np.float64).eps * 2 * np.sqrt(3)
    np.testing.assert_array_equal(th._centred_rank_mask(np.array([1.0, 0.9 * big, 0.0]), means, mu),
                                  [True, False, False])


def test_coinciding_class_means_at_the_origin_are_refused():
    """All features 0: every singular value is 0 and so is the tolerance; nothing is above it."""
    y = np.repeat([0, 1, 2], 2)
    with pytest.raises(ValueError, match="coincide"):
        th.active_subspace(np.zeros((6, 3)), y)
    with pytest.raises(ValueError, match="coincide"):
        th.nc_metrics(np.zeros((6, 3)), y)
    with pytest.raises(ValueError, match="zero variance"):
        th.effective_rank(np.zeros((4, 2)))


def test_active_subspace_of_two_classes_off_the_origin():
    """K = 2 means (3, 1) and (1, 1): S = span(mu_1 - mu_2) = the e1 axis, whatever the global mean (2, 1);
    in d = 1 (two classes on a line) S is the whole line. One class is refused."""
    x = np.array([[3.0, 1.0], [3.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    y = np.array([0, 0, 1, 1])
    q = th.active_subspace(x, y)
    assert q.shape == (2, 1)
    np.testing.assert_allclose(np.abs(q[:, 0]), [1.0, 0.0], rtol=0, atol=TOL["few_roundings"])
    np.testing.assert_allclose(np.abs(th.active_subspace(np.array([[2.0], [4.0], [7.0]]), [0, 0, 1])), [[1.0]],
                               rtol=0, atol=TOL["few_roundings"])
    with pytest.raises(ValueError, match="at least two classes"):
        th.active_subspace(x, np.zeros(4, int))


# --------------------------------------------------------------------------------------------------
# NC metrics, SNR and effective rank: the remaining branches
# --------------------------------------------------------------------------------------------------


def test_nc_metrics_head_of_unit_frobenius_norm_and_a_zero_centred_mean():
    """A head with ||W||_F = 1 exactly is a head like any other (NC3 = ||W - M~/||M~||||^2 by hand); a
    class mean at the global mean has no NC2 angle and is refused."""
    x = np.array([[2.0, 0.0], [2.0, 0.0], [0.0, 2.0], [0.0, 2.0]])  # M~ = [[1, -1], [-1, 1]]
    y = np.array([0, 0, 1, 1])
    W = np.array([[0.6, 0.0], [0.0, 0.8]])
    assert np.linalg.norm(W) == 1.0
    out = th.nc_metrics(x, y, W, np.zeros(2))
    assert out["nc3"] == pytest.approx((0.6 - 0.5) ** 2 + 0.5**2 + 0.5**2 + (0.8 - 0.5) ** 2,
                                         rel=TOL["exact_data_sums"])
    line = np.array([[-1.0], [-1.0], [0.0], [0.0], [1.0], [1.0]])  # the middle class sits at mu_G
    with pytest.raises(ValueError, match="exactly zero"):
        th.nc_metrics(line, np.repeat([0, 1, 2], 2))


@pytest.mark.parametrize("scale", [1e-120, 1e120])
def test_nc4_with_a_bias_is_scale_free_at_extreme_scales(scale):
    """Features and bias both times ``scale`` (logits w . x + b scale with them): NC4 is that of the unscaled
    problem, counted by a loop (here 1/4: one sample of four goes to the head's other class)."""
    x = np.array([[1.0, 0.0], [0.6, 0.0], [0.0, 1.0], [0.0, 0.8]])
    y = np.array([0, 0, 1, 1])
    W, b = np.eye(2), np.array([0.0, 0.5])  # sample 1: logits (0.6, 0.5) -> class 0; nearest centre 0
    wrong = sum(int(np.argmax(W @ v + b) != np.argmin([np.sum((v - m) ** 2) for m in ([0.8, 0.0], [0.0, 0.9])]))
                for v in x)
    assert wrong == 0
    b = np.array([0.0, 0.7])  # now sample 1 (0.6 < 0.7) goes to class 1: one disagreement in four
    wrong = sum(int(np.argmax(W @ v + b) != np.argmin([np.sum((v - m) ** 2) for m in ([0.8, 0.0], [0.0, 0.9])]))
                for v in x)
    assert wrong == 1
    assert th.nc_metrics(x * scale, y, W, b * scale)["nc4"] == 0.25


def test_snr_below_one_is_not_rescaled_and_exact_on_dyadic_inputs():
    """Two samples per class with dyadic entries (max 0.75): means and unbiased variances are exact in
    float64, so the SNR is the correctly rounded ratio of Fractions; rescaling by 0.75 would round."""
    a = [[Fraction(12, 16), Fraction(3, 16)], [Fraction(0), Fraction(-6, 16)]]
    b = [[Fraction(-5, 16), Fraction(-11, 16)], [Fraction(-11, 16), Fraction(-12, 16)]]

    def mean(s, j):
        return (s[0][j] + s[1][j]) / 2

    def var(s, j):
        return sum((r[j] - mean(s, j)) ** 2 for r in s)  # ddof = 1 with two samples

    num = sum((mean(a, j) - mean(b, j)) ** 2 for j in range(2))
    den = sum(var(a, j) + var(b, j) for j in range(2))
    got = th.snr(np.array(a, float), np.array(b, float))
    assert got == float(num / den)


def test_effective_rank_of_unequal_variances_and_an_exactly_zero_direction():
    """Rows +-a e1, +-b e2 (centred): covariance eigenvalues proportional to a^2, b^2, so the effective
    rank is exp(H(p)) with p = (a^2, b^2) / (a^2 + b^2); a third, empty axis adds a zero eigenvalue,
    which carries no mass (0 log 0 = 0). A single row is refused."""

    for a, b in ((1.0, 2.0), (3.0, 0.5)):
        p = np.array([a * a, b * b]) / (a * a + b * b)
        want = math.exp(-float(np.sum(p * np.log(p))))
        x = np.array([[a, 0.0], [-a, 0.0], [0.0, b], [0.0, -b]])
        assert th.effective_rank(x) == pytest.approx(want, rel=TOL["svd_entropy"])
        x3 = np.hstack([x, np.zeros((4, 1))])
        assert th.effective_rank(x3) == pytest.approx(want, rel=TOL["svd_entropy"])
    assert th.effective_rank(np.array([[1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]])) == 1.0  # two zero eigenvalues
    with pytest.raises(ValueError, match="at least 2 rows"):
        th.effective_rank(np.array([[1.0, 2.0]]))


# --------------------------------------------------------------------------------------------------
# The linear-feature model: defaults, refusals, numerically large logits
# --------------------------------------------------------------------------------------------------


def _small_model(K=3, p=5, d=4, n=2, seed=0):
    return th.collapsed_linear_model(K, p, d, n, np.random.default_rng(seed))


def test_linear_feature_gd_defaults_are_plain_one_layer_gd():
    """Without momentum and depth the run is plain GD on phi = V x, where T1's law is exact; the training
    features of the collapsed instance are their class means, which lie in S (mu_G = 0 is in S), so with
    probes=None (the training inputs) nothing is outside S at any step. Integer biases are accepted."""
    m = _small_model()
    probes = np.random.default_rng(1).standard_normal((3, 5))
    out = th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], [0, 0, 0], eta=0.5, lam=0.02, steps=6,
                               probes=probes)
    assert th.decay_error(out["perp"], 0.5, 0.02) < TOL["decay_law_f64"] and np.all(out["perp"][0] > 1e-3)
    train = th.linear_feature_gd(m["X"], m["onehot"], m["V"], m["W"], m["b"], eta=0.5, lam=0.02, steps=1)
    assert train["perp"].shape == (2, 6) and train["rank"].tolist() == [2, 2]
    assert np.max(train["perp"]) < TOL["in_subspace"] * np.max(np.abs(m["X"] @ m["V"].T))


def test_linear_feature_gd_refuses_each_bad_argument_alone():
    m = _small_model()
    X, Y, V, W, b = m["X"], m["onehot"], m["V"], m["W"], m["b"]
    for bad in ((X[:-1], Y, V, W, b), (X, Y, V[:, :-1], W, b), (X, Y, V, W[:, :-1], b), (X, Y, V, W, b[:-1])):
        with pytest.raises(ValueError, match="shapes disagree"):
            th.linear_feature_gd(*bad, eta=0.1, lam=0.1, steps=2)
    for kw in ({"steps": 0}, {"eta": 0.0}, {"lam": -0.1}, {"momentum": -0.1}, {"depth": 3}):
        args = {"eta": 0.1, "lam": 0.1, "steps": 2, **kw}
        with pytest.raises(ValueError, match="need steps >= 1"):
            th.linear_feature_gd(X, Y, V, W, b, **args)
    with pytest.raises(ValueError, match=r"^probes has 1 non-finite"):
        th.linear_feature_gd(X, Y, V, W, b, eta=0.1, lam=0.1, steps=2, probes=[[np.nan, 0, 0, 0, 0]])


def test_linear_feature_gd_is_stable_for_logits_in_the_hundreds():
    """Two classes whose logits are (1000, 0) and (-1000, 0), and a common bias shift of 700: the softmax is
    computed after subtracting each row's own maximum, so nothing overflows or underflows to 0/0, and the
    (saturated) collapsed instance still follows the law exactly."""
    m = th.collapsed_linear_model(2, 4, 3, 3, np.random.default_rng(2))
    f0 = m["V"] @ m["X"][0]
    W = np.zeros((2, 3))
    W[0] = 1000 * f0 / (f0 @ f0)
    probes = np.random.default_rng(3).standard_normal((2, 4))
    for W_, b in ((W, np.zeros(2)), (np.zeros((2, 3)), np.array([700.0, 700.0]))):
        out = th.linear_feature_gd(m["X"], m["onehot"], m["V"], W_, b, eta=0.5, lam=0.02, steps=4, probes=probes)
        assert np.all(np.isfinite(out["perp"]))
        assert th.decay_error(out["perp"], 0.5, 0.02) < TOL["decay_law_f64"]


def test_collapsed_linear_model_is_collapsed_by_default_and_noisy_with_the_stated_std():
    """Default: each class is n identical copies of a prototype, prototypes summing to 0. collapsed=False:
    i.i.d. N(0, noise^2) added to every entry; the pooled within-class std over 4 x 500 x 10 entries is
    noise to within 5 standard errors (SE of a std over N entries ~ noise / sqrt(2 N))."""
    m = th.collapsed_linear_model(3, 4, 2, 5, np.random.default_rng(0))
    X = m["X"].reshape(3, 5, 4)
    np.testing.assert_array_equal(X, np.repeat(X[:, :1], 5, axis=1))
    np.testing.assert_allclose(X[:, 0].sum(axis=0), 0.0, atol=TOL["exact_data_sums"])
    for kw, noise in (({}, 0.3), ({"noise": 0.7}, 0.7)):
        m = th.collapsed_linear_model(4, 10, 3, 500, np.random.default_rng(1), collapsed=False, **kw)
        X = m["X"].reshape(4, 500, 10)
        r = X - X.mean(axis=1, keepdims=True)
        sd = np.sqrt(np.sum(r**2) / (4 * 499 * 10))
        assert abs(sd - noise) < 5 * noise / np.sqrt(2 * 20000), (sd, noise)


# --------------------------------------------------------------------------------------------------
# decay_error, decay_law_fit_error, decay_rounding_bound: boundaries
# --------------------------------------------------------------------------------------------------


def test_decay_laws_on_paths_below_one():
    """Values in (0, 1) count like any other positive value: 0.8 -> 0.5 at upsilon = 1/2 deviates by
    0.5 / 0.4 - 1 = 1/4. decay_law_fit_error uses the probes positive at t0 only (a probe that is 0 at t0
    and positive later is skipped; one positive at t0 and 0 later deviates by 1)."""
    assert th.decay_error(np.array([[0.8], [0.5]]), 0.5, 1.0) == pytest.approx(0.25, rel=TOL["few_roundings"])
    assert th.decay_law_fit_error(np.array([[1.0, 0.0], [0.5, 0.3]]), 0.5, 1.0) == 0.0
    assert th.decay_law_fit_error(np.array([[1.0, 0.5], [0.5, 0.0]]), 0.5, 1.0) == 1.0


@pytest.mark.parametrize("eta, lam", [(2.0, 0.5), (1.0, 1.5), (0.5, 0.0)])
def test_decay_law_fit_error_refuses_eta_lam_outside_the_open_unit_interval(eta, lam):
    with pytest.raises(ValueError, match=r"eta \* lam must lie in \(0, 1\)"):
        th.decay_law_fit_error(np.ones((3, 2)), eta, lam)


def test_decay_rounding_bound_at_the_smallest_counts_and_each_refusal():
    """steps = n = p = d = 1: 3 u / (1 - 3 u) in Fractions; a zero in any one count is refused."""
    u = Fraction(1, 2**53)
    assert th.decay_rounding_bound(1, 1, 1, 1) == float(3 * u / (1 - 3 * u))
    for counts in ((0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)):
        with pytest.raises(ValueError, match=">= 1"):
            th.decay_rounding_bound(*counts)


# --------------------------------------------------------------------------------------------------
# bayes_accuracy_lda: general two-class case, singular Gram matrix, determinism, precision
# --------------------------------------------------------------------------------------------------


def test_bayes_accuracy_two_general_classes_and_three_collinear_ones():
    """K = 2, means (1, 1/2) and (2, -1), Sigma = [[2, 3/10], [3/10, 1]]: Delta^2 = d^T Sigma^-1 d with
    d = (1, -3/2) is 6.4 / 1.91 (by hand), accuracy Phi(Delta / 2). K = 3 on a line at 0, 1, 3 with unit
    variance (the Gram matrix of the differences is singular): the Bayes regions are x < 1/2, 1/2 < x < 2,
    x > 2, so the accuracy is (Phi(1/2) + Phi(1) - Phi(-1/2) + Phi(1)) / 3."""


    got = th.bayes_accuracy_lda(np.array([[1.0, 0.5], [2.0, -1.0]]), np.array([[2.0, 0.3], [0.3, 1.0]]))
    assert got == pytest.approx(norm.cdf(math.sqrt(6.4 / 1.91) / 2), abs=TOL["exact_data_sums"])
    want = (norm.cdf(0.5) + norm.cdf(1.0) - norm.cdf(-0.5) + norm.cdf(1.0)) / 3
    assert th.bayes_accuracy_lda(np.array([[0.0], [1.0], [3.0]]), np.array([[1.0]])) == pytest.approx(
        want, abs=TOL["genz_default_abseps"])


def test_bayes_accuracy_is_deterministic_with_seed_zero_by_default():
    """Genz's integration is randomised: a fixed seed (0 by default) gives the same number on every call."""
    means = np.random.default_rng(3).standard_normal((4, 3))
    cov = np.diag([1.0, 2.0, 0.5])
    first = th.bayes_accuracy_lda(means, cov)
    assert th.bayes_accuracy_lda(means, cov) == first
    assert th.bayes_accuracy_lda(means, cov, seed=0) == first


def test_bayes_accuracy_reaches_a_small_requested_error():
    """K = 4 orthogonal equidistant classes at a = 0.7 (a 3-dimensional integral), abseps = 1e-8: within
    5 abseps of the one-dimensional quadrature int phi(t) Phi(a + t)^3 dt."""

    want = quad(lambda t: norm.pdf(t) * norm.cdf(0.7 + t) ** 3, -12, 12, epsabs=1e-13)[0]
    got = th.bayes_accuracy_lda(0.7 * np.eye(4, 5), np.eye(5), abseps=1e-8)
    assert got == pytest.approx(want, abs=TOL["genz_abseps_1e8"])


# --------------------------------------------------------------------------------------------------
# Probes and heads: defaults and arguments that must reach scikit-learn
# --------------------------------------------------------------------------------------------------


def _probe_data():
    rng = np.random.default_rng(0)
    labels = np.array([3, 7, 11])
    y = np.repeat(labels, 30)
    scale = np.array([1.0, 20.0, 0.05, 3.0, 1.0])  # unequal scales: standardising changes the probe
    x = (rng.standard_normal((90, 5)) + rng.standard_normal((3, 5))[np.searchsorted(labels, y)]) * scale + 1.0
    test = 1.5 * rng.standard_normal((2000, 5)) * scale + 1.0
    return x, y, test


def test_probe_defaults_and_arguments_are_scikit_learns():
    """fit_probe / probe_accuracy by default = StandardScaler + LogisticRegression(C=10, max_iter=5000); C and
    max_iter reach scikit-learn (C = 0.5 is allowed, max_iter = 3 stops early). Test labels are the
    reference's own predictions, so the right probe scores exactly 1; the references with another
    standardisation, C or max_iter disagree on hundreds / tens of the 2000 test points."""


    x, y, test = _probe_data()

    def ref(C=10.0, max_iter=5000, standardize=True):
        lr = LogisticRegression(C=C, max_iter=max_iter)
        return (make_pipeline(StandardScaler(), lr) if standardize else lr).fit(x, y)

    default = ref().predict(test)
    np.testing.assert_array_equal(th.fit_probe(x, y).predict(test), default)
    assert th.probe_accuracy(x, y, test, default) == 1.0
    assert np.sum(ref(standardize=False).predict(test) != default) > 100
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        early = ref(C=0.01, max_iter=3)
        assert th.probe_accuracy(x, y, test, early.predict(test), C=0.01, max_iter=3) == 1.0
        assert np.sum(ref(C=10.0, max_iter=3).predict(test) != early.predict(test)) > 10
        assert np.sum(ref(C=0.01).predict(test) != early.predict(test)) > 10
        head = th.fit_probe(x, y, max_iter=3)
        np.testing.assert_allclose(test @ head.weights.T + head.bias, ref(max_iter=3).decision_function(test),
                                   rtol=TOL["probe_fold"], atol=TOL["probe_fold"])
    half = th.fit_probe(x, y, C=0.5)
    np.testing.assert_array_equal(half.predict(test), ref(C=0.5).predict(test))


def test_gaussian_head_computes_in_float64_and_refuses_priors_of_another_length():
    """Priors given in float32 are normalised and logged in float64 (the bias to 1e-14, not float32's
    1e-7); priors with one entry for two classes are refused, not broadcast."""
    means, cov = np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([[1.0, 0.2], [0.2, 0.5]])
    p32 = np.array([0.3, 0.7], np.float32)
    head = th.gaussian_head(means, cov, p32, ridge=0.0)
    p = p32.astype(np.float64)
    w = means @ np.linalg.inv(cov)
    np.testing.assert_allclose(head.bias, -0.5 * np.sum(w * means, axis=1) + np.log(p / p.sum()),
                               rtol=TOL["exact_data_sums"])
    with pytest.raises(ValueError, match="priors must be"):
        th.gaussian_head(means, cov, [1.0])


def test_lda_head_uses_the_means_and_priors_it_is_given():
    """lda_head with explicit means and priors: w_c = S^-1 m_c and b_c = -m_c^T S^-1 m_c / 2 + log p_c with S
    the pooled covariance (residuals over n, a loop here) + ridge I, not the class means or frequencies."""
    x, y, _ = _probe_data()
    x, y = x[:, :3], y
    classes = np.unique(y)
    resid = np.array([x[i] - x[y == y[i]].mean(axis=0) for i in range(y.size)])
    S = resid.T @ resid / y.size + 1e-3 * np.eye(3)
    means = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0], [2.0, 2.0, -2.0]])
    priors = np.array([1.0, 3.0, 4.0])
    head = th.lda_head(x, y, means=means, priors=priors, ridge=1e-3)
    Si = np.linalg.inv(S)
    np.testing.assert_allclose(head.weights, means @ Si, rtol=TOL["lda_ill_conditioned"])
    np.testing.assert_allclose(head.bias, [-0.5 * m @ Si @ m + np.log(q / 8.0) for m, q in zip(means, priors)],
                               rtol=TOL["lda_ill_conditioned"])
    np.testing.assert_array_equal(head.classes, classes)


def test_radial_correction_and_mean_norm_ratio_refusals_and_a_general_ratio():
    """mean_norm_ratio divides (buffer norms 5 and 3 over population norms 2 and 4 about the centre); a
    centre with a missing entry, of the wrong length or not numbers is refused with ValueError."""
    means = np.array([[2.0, 0.0], [0.0, 4.0]])
    for bad in ([None, 1.0], [1.0], ["a", "b"]):
        with pytest.raises(ValueError):
            th.radial_correction(means, bad, 0.5)
    with pytest.raises(ValueError, match="centre must be"):
        th.radial_correction(means, [1.0], 0.5)
    y = np.repeat([0, 1], 2)
    a = np.array([[4.0, 5.0], [4.0, 5.0], [1.0, 4.0], [1.0, 4.0]])  # about (1, 1): norms 5, 3
    b = np.array([[3.0, 1.0], [3.0, 1.0], [1.0, 5.0], [1.0, 5.0]])  # norms 2, 4
    np.testing.assert_allclose(th.mean_norm_ratio(a, y, b, y, [1, 1]), [2.5, 0.75], rtol=TOL["few_roundings"])
    with pytest.raises(ValueError):
        th.mean_norm_ratio(a, y, b, y, ["a", "b"])


