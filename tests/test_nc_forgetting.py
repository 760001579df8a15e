"""Neural collapse and forgetting under replay (theory/nc_forgetting.py): proofs by example for the toolkit,
none of which needs a training run.

- NC1-NC4 are ~0 on an exactly collapsed simplex ETF (K = 2..6, d >= K) and grow away from it; they agree
  with a plain numpy implementation (d x d Sigma_W, Sigma_B, pinv) on random data to 1e-10 relative;
  bad input is refused with a message naming it.
- SNR on a hand example; effective rank k on k equal-variance axes, 1 on a line.
- The probe is scikit-learn's LogisticRegression(C=10, max_iter=5000) (raw and standardised); the Gaussian
  heads are scikit-learn's LDA(solver='lsqr') and the explicit nearest-mean rule with the identity.
- The linear-feature model and the replay SNR formula: tests/test_nc_forgetting_theory.py; the checks and
  remaining branches: tests/test_nc_forgetting_checks.py; the unconstrained-features model:
  tests/test_nc_forgetting_ufm.py; the simulation helpers and a tiny training: tests/test_nc_forgetting_sims.py.

float64 throughout the toolkit (numpy) and in JAX (tests/conftest.py runs sims.runtime.setup()); the
networks of the sims train in float32.
"""

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from theory import nc_forgetting as th

HYP = settings(max_examples=25, deadline=None, derandomize=True)

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "etf_gram": (1e-14, "the Gram matrix of an ETF built from a QR factor: sums of d <= 9 products of O(1) "
                        "entries, a few eps = 2.2e-16 each (measured 6.7e-16)"),
    "at_collapse": (1e-12, "NC metrics are 0 in exact arithmetic at an exact ETF: rounding of its construction "
                           "leaves NC2 at ~eps (measured <= 2.3e-16) and the squared NC1 and NC3 at ~eps^2 "
                           "(measured <= 5e-31); a 1% defect in one class's norm gives NC2 >= 3e-3"),
    "reference_pinv_cutoff": (1e-10, "the reference pinv's rank cutoff relative to the largest eigenvalue of "
                                     "Sigma_B: its null eigenvalues are rounding (<= 4.4e-16 relative) and the "
                                     "real ones >= 6.7e-7 (both measured over 3000 draws of the test's "
                                     "distribution), so the cutoff keeps exactly the K - 1 real directions"),
    "reference_rel": (1e-10, "the reference forms Sigma_B = M~^T M~ / K, squaring cond(M~): its pinv errs by "
                             "~cond(Sigma_B) eps, cond up to ~1e6 for these random means; measured over 3000 "
                             "draws: NC1 9.1e-11, NC2 1.1e-14, NC3 7.8e-16 relative"),
    "nc2_k2_rounding": (1e-14, "for K = 2 both NC2 metrics are 0 in exact arithmetic and each implementation "
                               "leaves a few eps of rounding (measured <= 4.4e-16 over 3000 draws)"),
    "global_offset": (1e-10, "features moved by an offset of 1000 are rounded to eps * 1000 = 2.2e-13 "
                             "absolute against a class spread of ~0.5, ~4e-13 relative, summed over 200 "
                             "samples (measured 2.9e-13); a rank mask fooled by the offset changes NC1 by O(1)"),
    "few_roundings": (1e-15, "a hand example of small integers: the means, variances and 20 / 4 are exact in "
                             "float64 (measured error 0); the value allows ~4 roundings of 1.1e-16"),
    "svd_f64": (1e-12, "quantities of the float64 SVD of a <= 16 x 8 matrix of O(1) entries: backward error "
                       "~max(m, n) eps ~ 4e-15 relative to the largest singular value, an exact 0 (a line's "
                       "second axis, mu_G's part in S) becomes ~eps * |x|; measured <= 1.8e-15"),
    "orthonormal": (1e-13, "Q^T Q - I for the right singular vectors of a 4 x 7 matrix: ~d eps = 1.6e-15 "
                           "(measured 3.3e-16)"),
    "reordered_sums": (1e-12, "the same float64 sums in another order or grouping (the probe's scaling folded "
                              "into the head; pooled residual products weighted by priors in sklearn): "
                              "~n eps relative over n <= 118 terms, <= 2.6e-14; measured <= 3.6e-15"),
    "lda_lsqr": (1e-9, "sklearn solves the LDA system by least squares and we by Cholesky: both err by "
                       "~cond(Sigma) eps <= 62 eps = 1.4e-14 relative to the largest weight, and the smallest "
                       "weights are ~1e3 times smaller, so ~1.4e-11 elementwise (measured 1.2e-13)"),
    "cholesky_vs_inverse": (1e-10, "a Cholesky solve against an explicit inverse of S with cond(S) = 92: both "
                                   "err by ~cond(S) eps = 2e-14 relative to the largest entry (measured 4.1e-15 "
                                   "elementwise)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


# --------------------------------------------------------------------------------------------------
# Helpers: an exact simplex ETF and a plain numpy reference for the NC metrics
# --------------------------------------------------------------------------------------------------


def _etf(K: int, d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``(M~ [K, d], offset [d])``: centred means forming a simplex ETF (unit norms, cosines -1/(K-1)) in a
    random K-dimensional subspace of R^d, and a global mean ``offset`` orthogonal to their span."""
    U = np.linalg.qr(rng.standard_normal((d, K)))[0]  # [d, K] orthonormal columns
    mt = np.sqrt(K / (K - 1)) * (np.eye(K) - np.ones((K, K)) / K) @ U.T
    return mt, 3.0 * U @ np.ones(K)  # U 1 is orthogonal to every row of M~ (their coefficients sum to 0)


def _collapsed(K: int, d: int, n_per_class: int, seed: int = 0, offset: bool = False):
    """Features exactly at their class mean (an ETF, plus a global mean orthogonal to it if ``offset``),
    labels, and the head W = M~."""
    mt, mu_g = _etf(K, d, np.random.default_rng(seed))
    y = np.repeat(np.arange(K), n_per_class)
    return (mu_g if offset else 0.0) + mt[y], y, mt


def _nc_reference(x, y, W=None, b=None) -> dict:
    """NC1-NC4 written out plainly (Papyan et al. 2020), forming the d x d covariances; NC4 with the
    head's bias ``b`` (a sample-by-sample loop over the classes)."""
    classes = np.unique(y)
    K, n = classes.size, x.shape[0]
    means = np.array([x[y == c].mean(axis=0) for c in classes])
    mt = means - means.mean(axis=0)
    resid = np.concatenate([x[y == c] - means[i] for i, c in enumerate(classes)])
    sigma_w = resid.T @ resid / n
    sigma_b = mt.T @ mt / K
    sigma_b_pinv = np.linalg.pinv(sigma_b, rtol=TOL["reference_pinv_cutoff"], hermitian=True)
    out = {"nc1": float(np.trace(sigma_w @ sigma_b_pinv) / K)}
    norms = np.sqrt(np.array([mt[i] @ mt[i] for i in range(K)]))
    out["nc2_equinorm"] = float(np.std(norms) / np.mean(norms))
    devs = [abs(mt[i] @ mt[j] / (norms[i] * norms[j]) + 1 / (K - 1)) for i in range(K) for j in range(K) if i != j]
    out["nc2_equiangular"] = float(np.mean(devs))
    if W is not None:
        out["nc3"] = float(np.sum((W / np.sqrt(np.sum(W**2)) - mt / np.sqrt(np.sum(mt**2))) ** 2))
        wrong = 0
        for i in range(n):
            logits = [float(W[k] @ x[i] + b[k]) for k in range(K)]
            dists = [float(np.sum((x[i] - means[k]) ** 2)) for k in range(K)]
            wrong += int(np.argmax(logits) != np.argmin(dists))
        out["nc4"] = wrong / n
    return out


# --------------------------------------------------------------------------------------------------
# NC metrics
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("K", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("extra_dims", [0, 3])
def test_nc_metrics_vanish_on_an_exact_simplex_etf(K, extra_dims):
    x, y, mt = _collapsed(K, K + extra_dims, 3, seed=K)
    gram = mt @ mt.T  # the ETF itself: unit norms, cosines -1/(K-1)
    np.testing.assert_allclose(gram, (K * np.eye(K) - 1) / (K - 1), rtol=0, atol=TOL["etf_gram"])
    m = th.nc_metrics(x, y, mt, np.zeros(K))
    assert set(m) == {"nc1", "nc2_equinorm", "nc2_equiangular", "nc3", "nc4"}
    for name, value in m.items():
        assert abs(value) < TOL["at_collapse"], (name, value)
    assert th.nc_metrics(x, y, 7.0 * mt, np.zeros(K))["nc3"] < TOL["at_collapse"]  # NC3 compares directions, not scale
    assert set(th.nc_metrics(x, y)) == {"nc1", "nc2_equinorm", "nc2_equiangular"}


def test_nc1_grows_with_within_class_noise():
    x, y, _ = _collapsed(4, 7, 10)
    z = np.random.default_rng(1).standard_normal(x.shape)
    values = [th.nc_metrics(x + s * z, y)["nc1"] for s in (0.0, 0.01, 0.1, 0.3)]
    assert values[0] < TOL["at_collapse"]
    assert all(b > 2 * a for a, b in itertools.pairwise(values)), values
    assert values[1] > 1e-6


def test_nc2_grows_with_unequal_norms_and_angles():
    x, y, mt = _collapsed(5, 6, 2)
    base = th.nc_metrics(x, y)
    previous = base
    for scale in (1.1, 1.5, 3.0):  # stretch class 0's centred mean
        x2 = x + (scale - 1) * (y == 0)[:, None] * mt[0]
        m = th.nc_metrics(x2, y)
        assert m["nc2_equinorm"] > previous["nc2_equinorm"] + 1e-3
        assert m["nc2_equiangular"] > previous["nc2_equiangular"] + 1e-3
        previous = m
    assert base["nc2_equinorm"] < TOL["at_collapse"] and base["nc2_equiangular"] < TOL["at_collapse"]


def test_nc3_grows_with_the_head_rotation_angle():
    K, d = 4, 6
    x, y, mt = _collapsed(K, d, 2)
    u, v = mt[0] / np.linalg.norm(mt[0]), mt[1] - (mt[1] @ mt[0]) * mt[0] / (mt[0] @ mt[0])
    v /= np.linalg.norm(v)
    values = []
    for angle in (0.0, 0.05, 0.2, 0.6):
        # a rotation by ``angle`` in the plane (u, v), applied to the rows of the head
        R = np.eye(d) + np.sin(angle) * (np.outer(v, u) - np.outer(u, v)) \
            + (np.cos(angle) - 1) * (np.outer(u, u) + np.outer(v, v))
        values.append(th.nc_metrics(x, y, mt @ R.T, np.zeros(K))["nc3"])
    assert values[0] < TOL["at_collapse"]
    assert all(b > a + 1e-4 for a, b in itertools.pairwise(values)), values


def test_nc4_is_the_share_of_head_versus_nearest_centre_disagreements():
    K = 5
    x, y, mt = _collapsed(K, 6, 4, offset=True)
    swapped = mt[[1, 0, 2, 3, 4]]  # the head calls class 0 samples 1 and class 1 samples 0
    zero = np.zeros(K)
    assert th.nc_metrics(x, y, swapped, zero)["nc4"] == pytest.approx(2 / K, abs=0)
    cycled = mt[np.roll(np.arange(K), 1)]  # every class is called another
    assert th.nc_metrics(x, y, cycled, zero)["nc4"] == 1.0
    # non-contiguous labels: row k of the head belongs to the k-th smallest label
    labels = np.array([2, 5, 9, 11, 40])
    m = th.nc_metrics(x, labels[y], mt, zero)
    assert m["nc4"] == 0.0 and m["nc3"] < TOL["at_collapse"]


def test_nc4_is_zero_at_exact_collapse_with_the_heads_bias_and_a_global_mean_off_the_origin():
    """Exactly collapsed features whose global mean is not 0 and not orthogonal to the ETF: the collapsed
    head W = alpha M~ with its collapse bias b_c = -w_c . mu_G agrees with the nearest centre on every
    sample (NC4 = 0); the same weights without the bias do not (the bias-free reading the old NC4 took)."""
    rng = np.random.default_rng(4)
    K, d, per = 5, 7, 3
    mt, _ = _etf(K, d, rng)
    mu_g = 4.0 * rng.standard_normal(d)  # a generic global mean, with a component inside span(M~)
    y = np.repeat(np.arange(K), per)
    x = mu_g + mt[y]
    W = 2.5 * mt
    b = -W @ mu_g
    m = th.nc_metrics(x, y, W, b)
    assert m["nc4"] == 0.0 and m["nc1"] < TOL["at_collapse"] and m["nc3"] < TOL["at_collapse"]
    # without the bias, sample i of class c is called argmax_k w_k . x_i, which here is not always c
    # (counted by hand: the class whose centred mean points most along mu_G wins for some other classes)
    no_bias = np.argmax(x @ W.T, axis=1)
    expected = sum(int(no_bias[i] != y[i]) for i in range(y.size)) / y.size
    assert expected > 0
    assert th.nc_metrics(x, y, W, np.zeros(K))["nc4"] == expected


def test_nc4_counts_the_samples_a_biased_head_takes_from_the_nearest_centre():
    """A head whose bias for class 1 outweighs every margin calls every sample 1: NC4 = 1 - n_1 / n,
    here with unequal class sizes (n_c = 2, 3, 4, 5: NC4 = 1 - 3/14 = 11/14, as an exact fraction)."""
    K, d = 4, 6
    mt, mu_g = _etf(K, d, np.random.default_rng(9))
    counts = [2, 3, 4, 5]
    y = np.repeat(np.arange(K), counts)
    x = mu_g + mt[y]
    b = -mt @ mu_g
    b[1] += 100.0
    assert Fraction(th.nc_metrics(x, y, mt, b)["nc4"]).limit_denominator(100) == Fraction(11, 14)


@HYP
@given(K=st.integers(2, 6), extra=st.integers(0, 5), per_class=st.integers(2, 6),
       seed=st.integers(0, 2**31), noise=st.sampled_from([1e-3, 0.1, 1.0, 5.0]), with_head=st.booleans())
def test_nc_metrics_agree_with_a_plain_numpy_implementation(K, extra, per_class, seed, noise, with_head):
    rng = np.random.default_rng(seed)
    d = K + extra
    means = 2.0 * rng.standard_normal((K, d)) + rng.standard_normal(d)
    counts = per_class + rng.integers(0, 3, K)  # unequal class sizes
    y = np.repeat(np.arange(K), counts)
    x = means[y] + noise * rng.standard_normal((y.size, d))
    order = rng.permutation(y.size)  # labels in any order
    x, y = x[order], y[order]
    W = rng.standard_normal((K, d)) if with_head else None
    b = 3.0 * rng.standard_normal(K) if with_head else None  # a bias that changes some predictions
    ours, ref = th.nc_metrics(x, y, W, b), _nc_reference(x, y, W, b)
    assert set(ours) == set(ref)
    for name in ref:
        if name == "nc4":
            assert ours[name] == ref[name]
        else:  # both NC2 metrics are 0 in exact arithmetic for K = 2 (mu~_2 = -mu~_1): rounding only
            atol = TOL["nc2_k2_rounding"] if name.startswith("nc2") and K == 2 else 0.0
            np.testing.assert_allclose(ours[name], ref[name], rtol=TOL["reference_rel"], atol=atol, err_msg=name)


def test_nc_metrics_match_the_reference_when_d_is_below_k():
    """d < K - 1: Sigma_B has rank d, the pseudo-inverse and the SVD keep the same directions."""
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(6), 5)
    x = 3 * rng.standard_normal((6, 3))[y] + rng.standard_normal((30, 3))
    ours, ref = th.nc_metrics(x, y), _nc_reference(x, y)
    for name in ref:
        np.testing.assert_allclose(ours[name], ref[name], rtol=TOL["reference_rel"])


@pytest.mark.parametrize("offset", [100.0, 1000.0])
def test_nc_metrics_and_active_subspace_ignore_a_global_offset(offset):
    """Moving every feature by the same vector changes no NC metric and no subspace: here ||mu_G|| is
    ~100x the spread of the class means, as with all-positive (ReLU) features of weakly separated
    classes."""
    rng = np.random.default_rng(0)
    K, d = 4, 6
    y = np.repeat(np.arange(K), 50)
    x = rng.standard_normal((K, d))[y] + 0.5 * rng.standard_normal((y.size, d))
    base, moved = th.nc_metrics(x, y), th.nc_metrics(x + offset, y)
    assert th.active_subspace(x + offset, y).shape == (d, K - 1)
    for name in base:
        np.testing.assert_allclose(moved[name], base[name], rtol=TOL["global_offset"], err_msg=name)


def test_nc1_vanishes_on_an_etf_away_from_the_origin():
    x, y, mt = _collapsed(5, 8, 3, seed=5, offset=True)
    assert th.nc_metrics(x, y, mt, np.zeros(5))["nc1"] < TOL["at_collapse"]


def test_nc_metrics_refuse_bad_input():
    x, y, mt = _collapsed(3, 4, 3)
    with pytest.raises(ValueError, match="at least 2 samples; class 2 has 1"):
        th.nc_metrics(x[:7], y[:7])
    bad = x.copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match="1 non-finite"):
        th.nc_metrics(bad, y)
    with pytest.raises(ValueError, match=r"head_weights must be \[K, d\] = \[3, 4\]"):
        th.nc_metrics(x, y, mt.T, np.zeros(3))
    inf_head = mt.copy()
    inf_head[1, 2] = np.inf
    with pytest.raises(ValueError, match="head_weights has 1 non-finite"):
        th.nc_metrics(x, y, inf_head, np.zeros(3))
    with pytest.raises(ValueError, match="weights and its bias together"):
        th.nc_metrics(x, y, mt)  # NC4 without the bias would judge a classifier the network does not use
    with pytest.raises(ValueError, match="weights and its bias together"):
        th.nc_metrics(x, y, head_bias=np.zeros(3))
    with pytest.raises(ValueError, match=r"head_bias must be \[K\] = \[3\]"):
        th.nc_metrics(x, y, mt, np.zeros(4))
    with pytest.raises(ValueError, match="head_bias has 1 non-finite"):
        th.nc_metrics(x, y, mt, np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"labels must be a \[n\] vector with n = 9"):
        th.nc_metrics(x, y[:-1])
    with pytest.raises(ValueError, match="at least 2 classes"):
        th.nc_metrics(x, np.zeros(9, int))
    with pytest.raises(ValueError, match="integers"):
        th.nc_metrics(x, y + 0.5)
    with pytest.raises(ValueError, match="coincide"):
        th.nc_metrics(np.ones((6, 2)), np.repeat([0, 1], 3))
    with pytest.raises(ValueError, match=r"\[n, d\]"):
        th.nc_metrics(x[:, 0], y)


# --------------------------------------------------------------------------------------------------
# SNR, effective rank, subspaces
# --------------------------------------------------------------------------------------------------


def test_snr_on_a_hand_example():
    a = np.array([[0.0, 0.0], [2.0, 0.0]])  # mean (1, 0), unbiased variances (2, 0)
    b = np.array([[5.0, 1.0], [5.0, 3.0]])  # mean (5, 2), unbiased variances (0, 2)
    assert th.snr(a, b) == pytest.approx(20.0 / 4.0, rel=TOL["few_roundings"])
    assert th.snr(b, a) == th.snr(a, b)
    assert th.snr(a, a + 0.0) == 0.0
    assert th.snr(np.zeros((2, 3)), np.ones((3, 3))) == np.inf
    with pytest.raises(ValueError, match="0/0"):
        th.snr(np.zeros((2, 3)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match="same d"):
        th.snr(a, np.ones((2, 3)))
    with pytest.raises(ValueError, match="at least 2 rows"):
        th.snr(a[:1], b)


@pytest.mark.parametrize("k", [1, 2, 3, 5, 8])
def test_effective_rank_counts_equal_variance_axes(k):
    d = 8
    axes = np.linalg.qr(np.random.default_rng(k).standard_normal((d, d)))[0][:, :k]  # k orthonormal directions
    x = np.concatenate([axes.T, -axes.T]) + 4.0  # +-e_i: equal variance on k axes, none elsewhere
    assert th.effective_rank(x) == pytest.approx(k, rel=TOL["svd_f64"])


def test_effective_rank_of_a_line_and_its_refusals():
    t = np.random.default_rng(0).standard_normal(20)
    assert th.effective_rank(np.outer(t, [1.0, -2.0, 0.5]) + 1.0) == pytest.approx(1.0, abs=TOL["svd_f64"])
    unequal = np.diag([1.0, 0.1])  # two directions of unequal variance: strictly between 1 and 2
    assert 1.0 < th.effective_rank(np.concatenate([unequal, -unequal])) < 2.0
    with pytest.raises(ValueError, match="zero variance"):
        th.effective_rank(np.ones((5, 3)))
    with pytest.raises(ValueError, match="non-finite"):
        th.effective_rank(np.array([[0.0, 1.0], [np.nan, 2.0]]))


def test_active_subspace_and_projection_norms():
    x, y, mt = _collapsed(4, 7, 3)
    q = th.active_subspace(x, y)
    assert q.shape == (7, 3)  # rank K - 1
    np.testing.assert_allclose(q.T @ q, np.eye(3), rtol=0, atol=TOL["orthonormal"])
    np.testing.assert_allclose(th.projection_norm(mt, q), np.linalg.norm(mt, axis=1), rtol=TOL["svd_f64"])
    _, offset = _etf(4, 7, np.random.default_rng(0))
    assert th.projection_norm(offset[None], q)[0] < TOL["svd_f64"]  # mu_G is outside S here
    with pytest.raises(ValueError, match="basis must be"):
        th.projection_norm(mt, q[:3])


# --------------------------------------------------------------------------------------------------
# Heads: the probe and the Gaussian (LDA) heads
# --------------------------------------------------------------------------------------------------


def _labelled(K: int, seed: int, per_class: int = 30, d: int = 5):
    """Overlapping anisotropic classes with labels that are not 0..K-1, plus unlabelled test points."""
    rng = np.random.default_rng(seed)
    labels = np.array([3, 7, 11, 20, 21])[:K]
    scale = np.array([1.0, 2.0, 0.5, 3.0, 1.0])[:d]
    y = np.repeat(labels, per_class)
    x = rng.standard_normal((y.size, d)) * scale + rng.standard_normal((K, d))[np.searchsorted(labels, y)] + 1.0
    test = 1.5 * rng.standard_normal((200, d)) * scale + 1.0
    return x, y, test


@pytest.mark.parametrize("K", [2, 3, 4])
def test_probe_is_sklearn_logistic_regression_on_raw_features(K):
    x, y, test = _labelled(K, K)
    head = th.fit_probe(x, y, standardize=False)  # as in the authors' code (utils/feature_forgetting.py)
    ref = LogisticRegression(C=10, max_iter=5000).fit(x, y)
    assert head.weights.shape == (K, 5) and head.bias.shape == (K,)
    np.testing.assert_array_equal(head.classes, np.unique(y))
    pred = ref.predict(test)
    assert len(set(pred)) == K  # every class is predicted somewhere: the comparison is not vacuous
    np.testing.assert_array_equal(head.predict(test), pred)
    np.testing.assert_array_equal(head.predict(x), ref.predict(x))
    assert th.probe_accuracy(x, y, test, pred, standardize=False) == 1.0
    assert head.accuracy(x, y) == pytest.approx(ref.score(x, y), abs=0)


@pytest.mark.parametrize("K", [2, 4])
def test_standardised_probe_is_the_scaler_pipeline(K):
    x, y, test = _labelled(K, 10 + K)
    head = th.fit_probe(x, y, standardize=True)
    pipe = make_pipeline(StandardScaler(), LogisticRegression(C=10, max_iter=5000)).fit(x, y)
    np.testing.assert_array_equal(head.predict(test), pipe.predict(test))
    logits = test @ head.weights.T + head.bias  # the scaling is folded into the head exactly
    dec = pipe.decision_function(test)
    np.testing.assert_allclose(logits[:, 1] - logits[:, 0] if K == 2 else logits, dec, rtol=TOL["reordered_sums"],
                               atol=TOL["reordered_sums"])


def test_probe_refuses_bad_input():
    x, y, test = _labelled(3, 0)
    with pytest.raises(ValueError, match="C must be positive"):
        th.fit_probe(x, y, C=0.0)
    with pytest.raises(ValueError, match="not in train_y"):
        th.probe_accuracy(x, y, test[:3], np.array([3, 7, 99]))
    with pytest.raises(ValueError, match="test_x must be"):
        th.probe_accuracy(x, y, test[:, :2], np.full(200, 3))


@pytest.mark.parametrize("K", [2, 3, 5])
def test_lda_head_is_sklearn_lda_lsqr(K):
    """Same pooled covariance (residuals over n, sklearn's with priors = frequencies) and priors: the
    head's weights are sklearn's coef_ and its predictions are sklearn's (ridge 0, and the default 1e-6)."""
    x, y, test = _labelled(K, 20 + K, per_class=25)
    x, y = x[: 25 * K - 7], y[: 25 * K - 7]  # unequal class sizes: priors matter
    ref = LinearDiscriminantAnalysis(solver="lsqr").fit(x, y)
    np.testing.assert_allclose(th.pooled_covariance(x, y, ddof_per_class=0), ref.covariance_,
                               rtol=TOL["reordered_sums"])
    exact = th.lda_head(x, y, ridge=0.0)
    np.testing.assert_array_equal(exact.predict(test), ref.predict(test))
    np.testing.assert_array_equal(th.lda_head(x, y).predict(test), ref.predict(test))
    assert len(set(ref.predict(test))) == K
    if K > 2:
        np.testing.assert_allclose(exact.weights, ref.coef_, rtol=TOL["lda_lsqr"])
        np.testing.assert_allclose(exact.bias, ref.intercept_, rtol=TOL["lda_lsqr"])
    else:  # sklearn keeps the difference of the two classes
        np.testing.assert_allclose(exact.weights[1] - exact.weights[0], ref.coef_[0], rtol=TOL["lda_lsqr"])
        np.testing.assert_allclose(exact.bias[1] - exact.bias[0], ref.intercept_[0], rtol=TOL["lda_lsqr"])


def test_gaussian_head_with_the_identity_is_the_prior_weighted_nearest_mean():
    """The identity control: argmax_c -||x - mu_c||^2 / 2 + log prior_c, written out directly."""
    x, y, test = _labelled(4, 5)
    classes, means = th.class_means(x, y)
    priors = np.array([1.0, 2.0, 3.0, 6.0])
    head = th.gaussian_head(means, np.eye(5), priors, classes, ridge=0.0)
    score = -0.5 * np.sum((test[:, None, :] - means[None]) ** 2, axis=2) + np.log(priors / priors.sum())
    np.testing.assert_array_equal(head.predict(test), classes[np.argmax(score, axis=1)])
    ident = th.lda_head(x, y, covariance=np.eye(5), ridge=0.0)
    counts = np.bincount(np.searchsorted(classes, y)).astype(float)
    score = -0.5 * np.sum((test[:, None, :] - means[None]) ** 2, axis=2) + np.log(counts / counts.sum())
    np.testing.assert_array_equal(ident.predict(test), classes[np.argmax(score, axis=1)])
    # the identity is not the pooled covariance here: the two heads disagree somewhere
    assert np.any(ident.predict(test) != th.lda_head(x, y).predict(test))


def test_gaussian_head_matches_its_formula_and_refuses_bad_input():
    rng = np.random.default_rng(4)
    A = rng.standard_normal((4, 4))
    cov, means = A @ A.T + 0.1 * np.eye(4), rng.standard_normal((3, 4))
    head = th.gaussian_head(means, cov, [2.0, 1.0, 1.0])
    S_inv = np.linalg.inv(cov + 1e-6 * np.eye(4))
    np.testing.assert_allclose(head.weights, means @ S_inv, rtol=TOL["cholesky_vs_inverse"])
    np.testing.assert_allclose(head.bias, -0.5 * np.einsum("kd,de,ke->k", means, S_inv, means)
                               + np.log([0.5, 0.25, 0.25]), rtol=TOL["cholesky_vs_inverse"])
    np.testing.assert_array_equal(head.classes, [0, 1, 2])
    with pytest.raises(ValueError, match="priors"):
        th.gaussian_head(means, cov, [1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="covariance must be"):
        th.gaussian_head(means, cov[:3, :3], [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="not positive definite"):
        th.gaussian_head(means, -np.eye(4), [1.0, 1.0, 1.0])


def test_radial_correction_and_mean_norm_ratio():
    means, centre = np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([1.0, 1.0])
    np.testing.assert_allclose(th.radial_correction(means, centre, 0.5), [[1.5, 0.5], [0.5, 2.5]], rtol=0, atol=0)
    y = np.repeat([0, 1], 2)
    a = np.array([[3.0, 1.0], [3.0, 1.0], [1.0, 4.0], [1.0, 4.0]])  # means (3, 1), (1, 4)
    b = np.array([[2.0, 1.0], [2.0, 1.0], [1.0, 2.0], [1.0, 2.0]])  # means (2, 1), (1, 2)
    np.testing.assert_allclose(th.mean_norm_ratio(a, y, b, y, centre), [2.0, 3.0], rtol=0, atol=0)
    with pytest.raises(ValueError, match="scale must be positive"):
        th.radial_correction(means, centre, 0.0)
    with pytest.raises(ValueError, match="same classes"):
        th.mean_norm_ratio(a, y, b, y + 1, centre)


def test_labels_that_cannot_be_exact_integers_are_refused():
    x, y, _ = _collapsed(3, 4, 3)
    x = x + np.random.default_rng(0).standard_normal(x.shape)
    with pytest.raises(ValueError, match="fit in int64"):
        th.nc_metrics(x, np.array([0, 2**63, 2**64 - 1], dtype=np.uint64)[y])
    with pytest.raises(ValueError, match="whole numbers"):
        th.nc_metrics(x, np.array([0.0, 1e20, 2e20])[y])  # 1e20 and 1e20 + 1 would merge
    np.testing.assert_allclose(th.nc_metrics(x, y.astype(np.uint8))["nc1"], th.nc_metrics(x, y)["nc1"], rtol=0, atol=0)


def test_complex_or_string_features_are_refused_by_name():
    x, y, mt = _collapsed(3, 4, 3)
    with pytest.raises(ValueError, match="features must be a real numeric array"):
        th.nc_metrics(x.astype(complex), y)
    with pytest.raises(ValueError, match="head_weights must be a real numeric array"):
        th.nc_metrics(x, y, mt.astype(str), np.zeros(3))
