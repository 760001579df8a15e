"""The feature rank of one head per task against a single head (Sec. 3.2) in the unconstrained-features
model: ``theory.nc_forgetting.head_rank_bound`` and ``multihead_ufm_gd``, and the subspace experiment's
``ufm_ranks``. Expected values come from the paper's formula written out by hand, a per-sample loop (one GD
step), finite differences (the stationarity residual) and numpy's ``matrix_rank``, never from the code under
test. float64 throughout (numpy).
"""

import math

import numpy as np
import pytest

from sims import nc_forgetting as S
from theory import nc_forgetting as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "one_step": (1e-14, "one GD step by matrix products against a per-sample loop: sums of <= 18 products "
                        "of O(1) terms in another order, a few eps on entries <= 1 (measured <= 1.1e-16)"),
    "one_step_bias": (1e-15, "the same for the bias, whose entries are <= 6.3e-3 (measured 3.9e-18)"),
    "finite_difference": (1e-8, "central differences with h = 1e-6 on losses of size ~1: truncation "
                                "h^2 |f^(3)| / 6 ~ 1e-13, rounding eps / h ~ 2e-10 per entry (measured 8.1e-11 "
                                "on a spectral norm of ~0.1)"),
    "few_roundings": (1e-15, "O(1) results a few float64 roundings from exact: the same division done twice, "
                             "cosines and norm ratios of small integer rows and means (measured 0)"),
    "shifted_centring": (1e-14, "centring rows shifted by 5 rounds each entry by ~eps * 5 = 1.1e-15 against "
                                "unit-norm rows, a few of those in a cosine (measured 2.2e-16)"),
    "stationary_span": (1e-9, "after 5000 steps the features are H = A + R / lambda with A in the span and "
                              "||R|| / lambda = 1.4e-11 (the Weyl bound), a few e-12 of ||x||; measured "
                              "4.4e-16 relative"),
    "rank_cutoff": (1e-8, "matrix_rank's cutoff between the converged features' real singular values "
                          "(>= 3.6; >= 0.057 without weight decay) and the rest (<= 8.2e-15, the rounding "
                          "of values ~6 and the Weyl bound 3e-14): orders of magnitude from both"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


@pytest.mark.parametrize("n, K, til, cil", [(5, 2, 5, 9), (3, 4, 9, 11), (4, 3, 8, 11), (1, 7, 6, 6)])
def test_head_rank_bound_is_the_papers_formula(n, K, til, cil):
    """n(K - 1) with one head per task, nK - 1 with a single head (one task: the two agree)."""
    assert th.head_rank_bound(n, K, multi_head=True) == til
    assert th.head_rank_bound(n, K, multi_head=False) == cil


@pytest.mark.parametrize("n, K", [(0, 2), (3, 1)])
def test_head_rank_bound_refuses_empty_settings(n, K):
    with pytest.raises(ValueError, match="n_tasks >= 1 and classes_per_task >= 2"):
        th.head_rank_bound(n, K, multi_head=True)


def _init(n, K, d, m, seed, scale=1.0):
    """The initialisation ``multihead_ufm_gd`` draws from ``default_rng(seed)`` (features, then head)."""
    rng = np.random.default_rng(seed)
    H = rng.standard_normal((n * K * m, d)) * scale / math.sqrt(d)
    W = rng.standard_normal((n * K, d)) * scale / math.sqrt(d)
    return H, W


@pytest.mark.parametrize("multi_head", [True, False])
def test_one_step_matches_a_per_sample_loop(multi_head):
    """One GD step written sample by sample: the softmax over the sample's task's K logits (TIL) or all nK
    (single head), h_i <- h_i - eta (W^T g_i + lam_f h_i), W <- W - eta (mean_i g_i h_i^T + lam_w W),
    b <- b - eta mean_i g_i. Unequal weight decays and eta so that a swapped constant shows."""
    n, K, d, m, eta, lf, lw = 3, 3, 7, 2, 0.3, 0.07, 0.02
    H, W = _init(n, K, d, m, 5)
    b = np.zeros(n * K)
    N = H.shape[0]
    Hn, gW, gb = H.copy(), lw * W.copy(), np.zeros(n * K)
    for i in range(N):
        c = i // m
        classes = range((c // K) * K, (c // K + 1) * K) if multi_head else range(n * K)
        z = {k: float(H[i] @ W[k] + b[k]) for k in classes}
        top = max(z.values())
        total = sum(math.exp(v - top) for v in z.values())
        g = np.zeros(n * K)
        for k in classes:
            g[k] = math.exp(z[k] - top) / total - (k == c)
        Hn[i] = H[i] - eta * (g @ W + lf * H[i])
        gW += np.outer(g, H[i]) / N
        gb += g / N
    out = th.multihead_ufm_gd(n, K, d, m, np.random.default_rng(5), multi_head=multi_head, eta=eta,
                              lam_features=lf, lam_head=lw, steps=1)
    np.testing.assert_allclose(out["features"], Hn, rtol=0, atol=TOL["one_step"])
    np.testing.assert_allclose(out["weights"], W - eta * gW, rtol=0, atol=TOL["one_step"])
    np.testing.assert_allclose(out["bias"], -eta * gb, rtol=0, atol=TOL["one_step_bias"])


def _finite_difference_residual(out, n, K, lam, multi_head, h=1e-6):
    """``[N, d]`` gradient of each sample's loss CE_i + lam / 2 ||h_i||^2 in its own feature, by central
    differences (error O(h^2) ~ 1e-12 at these scales)."""
    H, W, b, y = out["features"], out["weights"], out["bias"], out["labels"]

    def loss(i, x):
        k = np.arange(n * K)
        ok = (k // K == y[i] // K) if multi_head else np.ones(n * K, bool)
        z = (W @ x + b)[ok]
        zc = z - z.max()
        return float(-(zc[list(k[ok]).index(y[i])] - math.log(np.exp(zc).sum())) + lam / 2 * x @ x)

    R = np.zeros_like(H)
    for i in range(H.shape[0]):
        for j in range(H.shape[1]):
            e = np.zeros(H.shape[1])
            e[j] = h
            R[i, j] = (loss(i, H[i] + e) - loss(i, H[i] - e)) / (2 * h)
    return R


@pytest.mark.parametrize("multi_head", [True, False])
def test_residual_and_weyl_bound_off_stationarity(multi_head):
    """After 30 steps (far from stationary): residual_norm is the spectral norm of the per-sample gradient
    (finite differences, to 1e-8), and Weyl's certificate holds: sigma_(bound + 1)(H) <= ||R||_2 / lambda,
    with the bound's own formula n(K - 1) or nK - 1 written out (4 and 5 here)."""
    n, K, lam = 2, 3, 0.1
    out = th.multihead_ufm_gd(n, K, 8, 2, np.random.default_rng(3), multi_head=multi_head, eta=0.4,
                              lam_features=lam, lam_head=lam, steps=30)
    R = _finite_difference_residual(out, n, K, lam, multi_head)
    assert out["residual_norm"] == pytest.approx(np.linalg.norm(R, 2), abs=TOL["finite_difference"])
    assert out["weyl_bound"] == pytest.approx(out["residual_norm"] / lam, rel=TOL["few_roundings"])
    assert out["residual_norm"] > 1e-3  # not yet stationary: the certificate is not vacuous
    r = 4 if multi_head else 5
    s = np.linalg.svd(out["features"], compute_uv=False)
    assert s[r] <= out["weyl_bound"]


def test_converged_features_lie_in_their_heads_row_differences():
    """At convergence every task's features lie in the span of the differences of its own head's rows (the
    stationarity condition h_i = -W_t^T g_i / lambda with sum_k g_ik = 0): least-squares residual < 1e-9 of
    the feature norm; numpy's matrix_rank (tolerance 1e-8) reads n(K - 1) = 5 per task head and nK - 1 = 9
    for a single head; without weight decay the features keep full rank min(N, d) = 30."""
    n, K, d, m = 5, 2, 32, 3
    kw = dict(eta=0.5, lam_features=0.05, lam_head=0.05, steps=5000)
    til = th.multihead_ufm_gd(n, K, d, m, np.random.default_rng(0), multi_head=True, **kw)
    H, W, y = til["features"], til["weights"], til["labels"]
    for t in range(n):
        rows = W[t * K:(t + 1) * K]
        basis = (rows[1:] - rows[0]).T  # [d, K - 1]
        x = H[y // K == t].T
        coef = np.linalg.lstsq(basis, x, rcond=None)[0]
        assert np.linalg.norm(basis @ coef - x) < TOL["stationary_span"] * np.linalg.norm(x)
    assert np.linalg.matrix_rank(H, tol=TOL["rank_cutoff"]) == 5
    cil = th.multihead_ufm_gd(n, K, d, m, np.random.default_rng(0), multi_head=False, **kw)
    assert np.linalg.matrix_rank(cil["features"], tol=TOL["rank_cutoff"]) == 9
    free = th.multihead_ufm_gd(n, K, d, m, np.random.default_rng(0), multi_head=True, eta=0.5, lam_features=0.0,
                               lam_head=0.0, steps=500)
    assert np.linalg.matrix_rank(free["features"], tol=TOL["rank_cutoff"]) == 30 and math.isinf(free["weyl_bound"])


@pytest.mark.parametrize("kw, match", [({"n_tasks": 0}, "n_tasks >= 1"), ({"classes_per_task": 1}, "n_tasks >= 1"),
                                       ({"steps": 0}, "steps >= 1"), ({"eta": 0.0}, "eta > 0"),
                                       ({"lam_features": -0.1}, "lam_features >= 0"),
                                       ({"init_scale": 0.0}, "init_scale > 0")])
def test_multihead_ufm_gd_refuses_bad_input(kw, match):
    args = dict(n_tasks=2, classes_per_task=2, dim=4, per_class=1, multi_head=True, eta=0.1, lam_features=0.1,
                lam_head=0.1, steps=1) | kw
    with pytest.raises(ValueError, match=match):
        th.multihead_ufm_gd(rng=np.random.default_rng(0), **args)


def test_ufm_ranks_shapes_and_padding():
    """Two instances of different sizes: singular values padded with NaN past min(N, d); no-decay case has
    an infinite Weyl bound; one head per task reads rank n(K - 1) at its gap."""
    p = S.SubspaceParams(ufm_tasks=(2, 3), ufm_classes_per_task=(2, 2), ufm_dim=8, ufm_per_class=1, ufm_steps=3000)
    out = S.ufm_ranks(p, 0)
    assert out["ufm_singular_values"].shape == (3, 2, 6)
    sv = out["ufm_singular_values"]
    assert np.all(np.isnan(sv[:, 0, 4:])) and np.all(np.isfinite(sv[:, 1]))
    assert np.all(np.isinf(out["ufm_weyl_bound"][2])) and np.all(np.isfinite(out["ufm_weyl_bound"][:2]))
    s = out["ufm_singular_values"][0, 1]
    assert s[2] > 1e3 * out["ufm_weyl_bound"][0, 1] >= s[3]  # n(K - 1) = 3 real directions, the rest below Weyl


@pytest.mark.parametrize("kw, match", [({"ufm_tasks": (2, 3), "ufm_classes_per_task": (2,)}, "same length"),
                                       ({"ufm_tasks": (5,), "ufm_classes_per_task": (4,), "ufm_dim": 16},
                                        "at least n K = 20")])
def test_subspace_params_refuse_bad_ufm_shapes(kw, match):
    with pytest.raises(ValueError, match=match):
        S.SubspaceParams(**kw)


# --------------------------------------------------------------------------------------------------
# Minority collapse statistics (Sec. 3.2)
# --------------------------------------------------------------------------------------------------


def _four_classes():
    """Class means (1,0,0), (-1,0,0), (0,3,0), (0,-3,0) (mu_G = 0), two samples each at mean +- (0,0,1)."""
    means = np.array([[1.0, 0, 0], [-1.0, 0, 0], [0, 3.0, 0], [0, -3.0, 0]])
    x = np.concatenate([means + [0, 0, 1.0], means - [0, 0, 1.0]])
    return x, np.tile(np.arange(4), 2)


def test_minority_collapse_stats_on_collinear_rows():
    """Minority rows identical after centring (the rows sum to 0): cosine 1; minority means of norm 1 against
    majority means of norm 3: ratio 1/3."""
    x, y = _four_classes()
    W = np.array([[1.0, 0, 0], [1.0, 0, 0], [-1.0, 1.0, 0], [-1.0, -1.0, 0]])
    cos, ratio = th.minority_collapse_stats(W, x, y, [0, 1])
    assert cos == pytest.approx(1.0, abs=TOL["few_roundings"]) and ratio == pytest.approx(
        1 / 3, abs=TOL["few_roundings"])


def test_minority_collapse_stats_centres_the_rows():
    """A simplex ETF of 3 rows shifted by a common vector (5, 5): centring removes the shift, so the cosine is
    -1/(C - 1) = -1/2. Means (1, 0), (-1, 0), (0, 3) about mu_G = (0, 1): minority norms sqrt(2), majority
    norm 2, ratio sqrt(2) / 2 (an uncentred ratio would be 1/3)."""
    ang = 2 * np.pi * np.arange(3) / 3
    W = np.stack([np.cos(ang), np.sin(ang)], axis=1) + 5.0
    means = np.array([[1.0, 0], [-1.0, 0], [0, 3.0]])
    x = np.concatenate([means + 0.5, means - 0.5])
    y = np.tile(np.arange(3), 2)
    cos, ratio = th.minority_collapse_stats(W, x, y, [0, 1])
    assert cos == pytest.approx(-0.5, abs=TOL["shifted_centring"]) and ratio == pytest.approx(
        math.sqrt(2) / 2, abs=TOL["shifted_centring"])


@pytest.mark.parametrize("minority, match", [([0], "at least two minority"), ([0, 1, 2, 3], "at least two minority"),
                                             ([0, 7], "at least two minority")])
def test_minority_collapse_stats_refuses_bad_minorities(minority, match):
    x, y = _four_classes()
    with pytest.raises(ValueError, match=match):
        th.minority_collapse_stats(np.eye(4, 3), x, y, minority)


def test_minority_collapse_stats_needs_every_class():
    x, y = _four_classes()
    with pytest.raises(ValueError, match="cover the classes"):
        th.minority_collapse_stats(np.eye(4, 3), x[y < 3], y[y < 3], [0, 1])
