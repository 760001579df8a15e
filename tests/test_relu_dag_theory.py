"""ReLU DAG theory (theory/relu_dag/) against expected values that do not come from the code under test:
textbook fan formulas written out, an exact closed form at d = 2, quadrature of the chi-square laws, Monte
Carlo drawn from first principles in numpy, an independent ODE solver, hand-computed steps and a dense
eigenvalue route. All in float64 (tests/conftest.py runs sims.runtime.setup()).

Each tolerance says the smallest error it can detect; the plausible bugs it guards are larger."""

import functools
import math

import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from scipy import integrate, special, stats

from theory import relu_dag as R
from theory.relu_dag import components

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "few_roundings": (1e-15, "a hand-written value against the code's, each a division, sqrt or a few products on "
                             "O(1) numbers, correctly rounded: <= ~2 ulp = 4.4e-16 apart (measured <= 2.8e-16); a "
                             "swapped fan, stage or sign is off by percents"),
    "hand_step_floor": (1e-17, "absolute floor of the hand GD step, below one ulp of its -0.2 entries (2.8e-17) and "
                               "above the 1.7e-18 rounding of its 0.01 entry"),
    "hand_chain_rel": (1e-14, "a hand-computed chain of <= 7 RK4 steps or one regularised step on O(1) numbers: "
                              "<= ~30 eps = 7e-15 (measured <= 2.3e-16); a wrong stage weight or point changes the "
                              "amplification by ~h^4/24 = 3.4e-4 or more"),
    "special_function": (1e-12, "scipy's F distribution (regularised incomplete beta, ~1e-15 relative) against an "
                                "elementary closed form or its own cdf: measured <= 2.1e-16"),
    "anchor_6_decimals": (1e-6, "the anchors 0.367544 and 0.422650 are written to 6 decimals, so they are off by up "
                                "to 5e-7 (measured 4.7e-7); the sqrt(2/l) Xavier bug moves 2-1-1 by 0.13"),
    "reference_rel": (1e-12, "relative tolerance asked of the reference solvers (scipy quad, DOP853), 1e3 or more "
                             "below the comparisons they feed"),
    "quad_abs": (1e-14, "quad's absolute tolerance on an integral of size 0.5 to 1, below its relative one"),
    "dop853_abs": (1e-15, "DOP853's absolute tolerance on u, which stays >= 0.097 over t <= 3, below its "
                          "relative one"),
    "quad_vs_closed_form": (1e-9, "quadrature to epsrel 1e-12, amplified in 1 - ok^l by l (1 - P) / P <= 23 for these "
                                  "cells: <= 2.3e-11 (measured <= 2.5e-15); a wrong variance moves P by percents"),
    "closed_form_vs_quad": (1e-8, "the same quadrature bound of 2.3e-11 on the d = 3, 5 cells, with more room "
                                  "(measured 2.5e-15)"),
    "mc_z": (4.5, "z of the Monte Carlo checks: P(|Z| > 4.5) = 6.8e-6 per cell, 1.5e-4 over the 22 cells (fixed "
                  "seeds); it detects a shift of ~0.016 at n = 20000 and ~0.028 at n = 6000"),
    "ode_reference": (1e-8, "DOP853 at rtol 1e-12 over t <= 3 errs ~1e-12 relative (measured 4.5e-13 against "
                            "chain_law_u's 4-eps root); a wrong G shifts u(1) by percents"),
    "svd_gradient": (1e-10, "U V^T from JAX's differentiated SVD and from numpy's, both LAPACK on a matrix with O(1) "
                            "gaps between singular values: ~1e-15 (measured equal); a missing lam term moves theta by "
                            ">= 0.005, 2% of it"),
    "lp_exact_zero": (1e-12, "HiGHS's min s_e of an unforced edge on a 0/+-1 system with c = 1 is exactly 0 "
                             "(measured 0); a forced edge's minimum is >= 1"),
    "lp_certificate": (1e-9, "edge_lp_minima's own acceptance bound (rtol 1e-9 times max(1, |c|) = 1) for the "
                             "fallback point (measured residual 0); a fallback that also asked s >= 1 has no point"),
    "eigen_route": (1e-9, "the eigenvalues of M M^T square M's condition: lambda_min carries ~eps lambda_max, "
                          "1.5e-14 relative at the worst ratio 0.0147 here (measured 8.1e-15)"),
    "same_svd": (1e-12, "the same LAPACK SVD of the same matrix (measured equal); a swapped min / max or another "
                        "batch entry is off by O(1)"),
    "conservation_rel": (1e-12, "B~(theta * g) = 0 exactly for ReLU; in float64 a node's sum of <= 5 products after "
                                "a backward pass of depth <= 4: tens of eps relative (measured 4.4e-16); tanh breaks "
                                "it by 0.19"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}

# --------------------------------------------------------------------------------------------------
# Initialisation obstruction of d-l-1 networks (the d-l-1 count of Theorem 1; NeurIPS 2024 theorem)
# --------------------------------------------------------------------------------------------------


def _variances(d, l, init):
    """(sigma_in^2, sigma_out^2) from the fans, written out: layer 1 has fan_in d, fan_out l; layer 2 has
    fan_in l, fan_out 1. He-normal: 2 / fan_in. Glorot-normal: 2 / (fan_in + fan_out)."""
    fans = [(d, l), (l, 1)]
    if init == "kaiming":
        return tuple(2.0 / fi for fi, _ in fans)
    return tuple(2.0 / (fi + fo) for fi, fo in fans)


def _exact_d2(l, init):
    """d = 2: |w_k|^2 = s_in^2 chi2_2 is exponential with mean 2 s_in^2, so P(|w_k|^2 >= a_k^2 | a_k) =
    exp(-a_k^2 / (2 s_in^2)), and with a_k^2 = s_out^2 Z^2, E exp(-r Z^2 / 2) = (1 + r)^(-1/2),
    r = s_out^2 / s_in^2. The l neurons are independent: P(disconnected) = 1 - (1 + r)^(-l/2)."""
    vin, vout = _variances(2, l, init)
    return 1.0 - (1.0 + vout / vin) ** (-l / 2)


@functools.lru_cache(maxsize=None)
def _quadrature(d, l, init):
    """P(some s_in^2 chi2_d < s_out^2 chi2_1) = 1 - (E_Z P(chi2_d >= r Z^2))^l, Z standard normal, by
    quadrature over z (no F distribution): 2 int_0^inf phi(z) Q(d/2, r z^2 / 2) dz, Q the regularised
    upper incomplete gamma function (the chi2_d survival function)."""
    vin, vout = _variances(d, l, init)
    r = vout / vin
    ok, _ = integrate.quad(lambda z: 2 * math.exp(-z * z / 2) / math.sqrt(2 * math.pi) * special.gammaincc(
        d / 2, r * z * z / 2), 0, np.inf, epsabs=TOL["quad_abs"], epsrel=TOL["reference_rel"], limit=200)
    return 1.0 - ok**l


@pytest.mark.parametrize("d,l,init,want", [
    (2, 1, "xavier", (math.sqrt(2 / 3), 1.0)),
    (2, 1, "kaiming", (1.0, math.sqrt(2))),
    (3, 5, "kaiming", (math.sqrt(2 / 3), math.sqrt(2 / 5))),
    (4, 7, "xavier", (math.sqrt(2 / 11), 0.5)),
    (5, 3, "xavier", (0.5, math.sqrt(0.5))),
])
def test_init_stds_are_the_fan_formulas(d, l, init, want):
    """Hand-written values (not general d = l): a swapped fan or a dropped +1 changes some entry."""
    assert R.init_stds(d, l, init) == pytest.approx(want, rel=TOL["few_roundings"])


def test_obstruction_probability_exact_at_d2():
    """The closed form against 1 - (1 + r)^(-l/2) (derived in _exact_d2), to 1e-12 relative. Anchors:
    Xavier 2-1-1 is 1 - (5/2)^(-1/2) = 0.36754 (a sqrt(2/l) output std would give 0.5), Kaiming 2-1-1 is
    1 - 3^(-1/2) = 0.42265."""
    assert R.disconnection_probability(2, 1, "xavier") == pytest.approx(1 - 2.5**-0.5, rel=TOL["special_function"])
    assert R.disconnection_probability(2, 1, "xavier") == pytest.approx(0.367544, abs=TOL["anchor_6_decimals"])
    assert R.disconnection_probability(2, 1, "kaiming") == pytest.approx(0.422650, abs=TOL["anchor_6_decimals"])
    for l in (1, 2, 3, 8):
        for init in ("kaiming", "xavier"):
            want = _exact_d2(l, init)
            assert R.disconnection_probability(2, l, init) == pytest.approx(want, rel=TOL["special_function"])


def test_obstruction_probability_by_quadrature():
    """d >= 3 (no elementary form): quadrature of the chi-square laws, to 1e-8 relative (quad's own error
    is near 1e-12); the quadrature agrees with the d = 2 closed form too."""
    for init in ("kaiming", "xavier"):
        assert _quadrature(2, 3, init) == pytest.approx(_exact_d2(3, init), rel=TOL["quad_vs_closed_form"])
        for d in (3, 5):
            for l in (1, 3, 8):
                want = _quadrature(d, l, init)
                assert R.disconnection_probability(d, l, init) == pytest.approx(want, rel=TOL["closed_form_vs_quad"])


def test_first_principles_monte_carlo_matches_closed_form():
    """Networks drawn in numpy from the fan variances (not through init_stds): the fraction with some
    |w_k|^2 < a_k^2 matches the closed form within 4.5 binomial SE (n = 20000: detects a shift above
    ~0.016 at p = 0.37; the sqrt(2/l) Xavier bug shifts 2-1-1 by 0.13)."""
    rng = np.random.default_rng(2026)
    n = 20000
    for d, l, init in ((2, 1, "xavier"), (2, 1, "kaiming"), (3, 3, "xavier"), (5, 8, "kaiming")):
        vin, vout = _variances(d, l, init)
        W = rng.normal(scale=math.sqrt(vin), size=(n, l, d))
        a = rng.normal(scale=math.sqrt(vout), size=(n, l))
        frac = np.mean(np.any((W**2).sum(-1) < a**2, axis=1))
        p = R.disconnection_probability(d, l, init)
        assert abs(frac - p) < TOL["mc_z"] * math.sqrt(p * (1 - p) / n), (d, l, init, frac, p)


def test_jax_samplers_match_independent_probabilities():
    """The two JAX samplers against probabilities that do not go through init_stds (the d = 2 closed form
    and quadrature): the grid sampler over 6000 shared draws within 4.5 SE (detects ~0.028 at p = 0.37).
    The single-network sampler is checked bit for bit below."""
    from sims import runtime

    ds, ls = (2, 3, 5), (1, 3, 8)
    mean, _ = runtime.mean_over_seeds(lambda k: R.disconnection_monte_carlo(k, ds, ls), 17, 6000)
    for i, init in enumerate(("kaiming", "xavier")):
        for a, d in enumerate(ds):
            for b, l in enumerate(ls):
                p = _exact_d2(l, init) if d == 2 else _quadrature(d, l, init)
                se = math.sqrt(p * (1 - p) / 6000)
                assert abs(mean[i, a, b] - p) < TOL["mc_z"] * se, (d, l, init, mean[i, a, b], p)


def test_single_network_sampler_is_the_definition():
    """Same key, same split: the sampler's verdict is some |w_k|^2 < a_k^2 with the Xavier stds of a 3-8-1
    net written out (sqrt(2/11), sqrt(2/9)), bit for bit over 24 keys (both outcomes occur)."""
    s_in, s_out = math.sqrt(2 / 11), math.sqrt(2 / 9)
    seen = set()
    for i in range(24):
        key = jax.random.key(i)
        kw, ka = jax.random.split(key)
        W, a = s_in * jax.random.normal(kw, (8, 3)), s_out * jax.random.normal(ka, (8,))
        want = float(np.any(np.sum(np.asarray(W) ** 2, 1) < np.asarray(a) ** 2))
        assert float(R.sample_disconnected(key, 3, 8, "xavier")) == want
        seen.add(want)
    assert seen == {0.0, 1.0}
    # l = 1 Kaiming: P(c < 0) = P(F_{d,1} < 1) (sigma_out^2 / (d sigma_in^2) = (2/1) / (d 2/d) = 1).
    want = stats.f.cdf(1.0, 4, 1)
    assert R.disconnection_probability(4, 1, "kaiming") == pytest.approx(want, rel=TOL["special_function"])


# --------------------------------------------------------------------------------------------------
# The chain law, RK4, regulariser steps, dl1 parameter layout, singular-value ratio
# --------------------------------------------------------------------------------------------------


def test_chain_law_against_an_independent_ode_solve():
    """u = theta_1^2 on the chain obeys u' = -2 u^2 (1 + u) (our own derivation). scipy's DOP853 at rtol 1e-12
    against chain_law_u to 1e-8 relative (a wrong G shifts u(1) by percents)."""
    from scipy.integrate import solve_ivp

    ts = np.array([0.1, 0.5, 1.0, 3.0])
    for u0 in (1.0, 0.3, 2.5):
        sol = solve_ivp(lambda t, u: -2 * u**2 * (1 + u), (0, ts[-1]), [u0], method="DOP853", t_eval=ts,
                        rtol=TOL["reference_rel"], atol=TOL["dop853_abs"])
        np.testing.assert_allclose(R.chain_law_u(ts, u0), sol.y[0], rtol=TOL["ode_reference"])
        np.testing.assert_allclose(R.chain_law_G(sol.y[0]) - R.chain_law_G(u0), 2 * ts, rtol=TOL["ode_reference"])


def test_rk4_is_the_classical_scheme():
    """For y' = -y one RK4 step multiplies y by 1 - h + h^2/2 - h^3/6 + h^4/24 exactly, so n steps give its
    n-th power (to rounding, 1e-14): a wrong stage weight or a wrong stage point changes a coefficient."""
    h, n = 0.3, 7
    ys = np.asarray(R.rk4(lambda y: -y, jnp.array([1.0, -2.0]), h, n))
    amp = 1 - h + h**2 / 2 - h**3 / 6 + h**4 / 24
    np.testing.assert_allclose(ys[:, 0], amp ** np.arange(n + 1), rtol=TOL["hand_chain_rel"])
    np.testing.assert_allclose(ys[:, 1], -2 * amp ** np.arange(n + 1), rtol=TOL["hand_chain_rel"])
    # a non-linear field: y' = y^2 from 1, one step h: stages worked by hand
    h = 0.1
    k1 = 1.0
    k2 = (1 + h / 2 * k1) ** 2
    k3 = (1 + h / 2 * k2) ** 2
    k4 = (1 + h * k3) ** 2
    want = 1 + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert float(R.rk4(lambda y: y**2, jnp.array([1.0]), h, 1)[1, 0]) == pytest.approx(want, rel=TOL["few_roundings"])


def test_regulariser_steps_by_hand():
    """One step of each regulariser on hand-picked numbers (theta, g, lr = 0.1, lam = 0.4)."""
    t = jnp.array([1.0, -0.3, 0.02, 0.0])
    g = jnp.array([0.5, -1.0, 0.1, 2.0])
    B = np.ones((1, 4))
    step = lambda name: np.asarray(R.regulariser_step(name, B, 0.1, 0.4)(t, g))  # noqa: E731
    np.testing.assert_allclose(step("none"), [0.95, -0.2, 0.01, -0.2], rtol=TOL["few_roundings"],
                               atol=TOL["hand_step_floor"])
    np.testing.assert_allclose(step("l2"), [0.91, -0.188, 0.0092, -0.2], rtol=TOL["hand_chain_rel"])
    np.testing.assert_allclose(step("l1"), [0.91, -0.16, -0.03, -0.2], rtol=TOL["hand_chain_rel"])
    # prox: u = t - lr g = [0.95, -0.2, 0.01, -0.2], soft threshold lr lam = 0.04
    np.testing.assert_allclose(step("prox_l1"), [0.91, -0.16, 0.0, -0.16], rtol=TOL["hand_chain_rel"])


def test_nuclear_regulariser_step_is_the_svd_subgradient():
    """``nuclear``: d|B diag(theta)|_* / d theta_j = sum_i B_ij (U V^T)_ij for M = B diag(theta) = U S V^T
    with distinct non-zero singular values (the nuclear norm's gradient U V^T, chained through the column
    scaling), computed here with numpy's SVD and a loop over columns. A step with another regulariser, or
    without the lam term, moves theta by lr * lam * |grad| ~ 0.05 or more, far above rtol 1e-10."""
    rng = np.random.default_rng(4)
    B = rng.normal(size=(3, 5))
    t, g = rng.normal(size=5), rng.normal(size=5)
    U, _, Vt = np.linalg.svd(B * t[None, :], full_matrices=False)
    P = U @ Vt
    grad = np.array([sum(B[i, j] * P[i, j] for i in range(3)) for j in range(5)])
    want = t - 0.1 * (g + 0.7 * grad)
    got = np.asarray(R.regulariser_step("nuclear", B, 0.1, 0.7)(jnp.asarray(t), jnp.asarray(g)))
    assert np.min(np.abs(0.07 * grad)) > 0.005
    np.testing.assert_allclose(got, want, rtol=TOL["svd_gradient"])


def test_lp_verdict_falls_back_to_a_feasibility_lp_when_the_optimum_does_not_certify(monkeypatch):
    """edge_lp_minima: when the optimal point of min s_e (with s_e set to 0) does not satisfy B~ s = c, the
    verdict "not forced" is certified by a second LP with s_e fixed to 0 and every other s >= 0. Here the
    first LP's point is corrupted (+0.5 on every edge): on x1 -> h, x2 -> h, h -> y with c_h = 1 the edge
    h -> y is not forced, and the fallback point must split c_h = 1 between the two in-edges, which a
    fallback that also asked s >= 1 of them could not (2 > 1: no point, so no certificate)."""
    G = nx.DiGraph([("x1", "h"), ("x2", "h"), ("h", "y")])
    real, calls = components._linprog, []

    def first_point_off(cost, A, b, bounds):
        res = real(cost, A, b, bounds)
        calls.append(bounds)
        if len(calls) == 1:
            res.x = res.x + 0.5
        return res
    monkeypatch.setattr(components, "_linprog", first_point_off)
    v = R.edge_lp_minima(G, {"h": 1.0}, edges=[("h", "y")])[("h", "y")]
    assert len(calls) == 2 and not v.forced and v.ray is None
    assert type(v.minimum) is float and v.minimum == pytest.approx(0.0, abs=TOL["lp_exact_zero"])
    edges = list(G.edges)
    s = dict(zip(edges, v.point))
    assert s[("h", "y")] == 0.0 and min(v.point) >= 0.0
    assert s[("x1", "h")] + s[("x2", "h")] - s[("h", "y")] == pytest.approx(1.0, abs=TOL["lp_certificate"])
    assert v.residual <= TOL["lp_certificate"]


def test_forward_sequential_by_hand():
    """The reference forward pass on x0, x1 -> h -> y with a skip x0 -> y (theta: x0->h 2, x1->h -1, h->y 3,
    x0->y 0.5): x = (1, 1): h = relu(1) = 1, y = 3 + 0.5 = 3.5; x = (1, 3): h = relu(-1) = 0, y = 0.5; with
    slope 0.1 (leaky) h = -0.1 and y = -0.3 + 0.5 = 0.2. theta_vector lists theta in tuple(G.edges) order
    with or without a precomputed structure."""
    G = nx.DiGraph([("x0", "h"), ("x1", "h"), ("h", "y"), ("x0", "y")])
    theta = {("x0", "h"): 2.0, ("x1", "h"): -1.0, ("h", "y"): 3.0, ("x0", "y"): 0.5}
    assert tuple(R.structure(G).inputs) == ("x0", "x1")
    X = np.array([[1.0, 1.0], [1.0, 3.0]])
    np.testing.assert_array_equal(R.forward_sequential(G, theta, X), [[3.5], [0.5]])
    np.testing.assert_allclose(R.forward_sequential(G, theta, X, slope=0.1), [[3.5], [0.2]], rtol=TOL["few_roundings"])
    want = [theta[e] for e in G.edges]
    np.testing.assert_array_equal(R.theta_vector(G, theta), want)
    np.testing.assert_array_equal(R.theta_vector(G, theta, R.structure(G)), want)


def test_dl1_theta_layout_by_loop():
    """W[k, i] sits on the edge ((0, i), (1, k)) and a_k on ((1, k), (2, 0)), read through the edge order
    of dl1_graph (non-square W so that a transpose shows)."""
    d, l = 3, 4
    W = np.arange(1.0, 1.0 + l * d).reshape(l, d)
    a = -np.arange(1.0, 1.0 + l)
    th = R.theta_dict(R.dl1_graph(d, l), np.asarray(R.dl1_theta(W, a)))
    for k in range(l):
        assert th[((1, k), (2, 0))] == a[k]
        for i in range(d):
            assert th[((0, i), (1, k))] == W[k, i]


def test_singular_value_ratio_by_dense_eigenvalues():
    """s_min / s_max of B~ diag(theta) with 5 hidden nodes (more than 2, so the smallest is not the second),
    from the eigenvalues of M M^T computed per batch entry in a loop, to 1e-9 relative."""
    G = R.layered_graph([2, 3, 2, 1])
    B = R.structure(G).B
    th = np.random.default_rng(3).normal(size=(3, B.shape[1]))
    r = R.singular_value_ratio(B, th)
    for j in range(3):
        M = B * th[j][None, :]
        ev = np.linalg.eigvalsh(M @ M.T)
        assert r[j] == pytest.approx(math.sqrt(ev.min() / ev.max()), rel=TOL["eigen_route"])


# --------------------------------------------------------------------------------------------------
# Moved from tests/test_relu_dag.py: activations, singular-value ratio, wrong count rules, d-l-1 counts
# --------------------------------------------------------------------------------------------------


def _rand_problem(seed: int, n_in: int, n_hid: int, n_out: int, p: float, n_data: int = 24):
    """A random DAG with random weights, inputs and targets (fixed seeds)."""
    G = R.random_dag(np.random.default_rng(seed), n_in, n_hid, n_out, p)
    info = R.structure(G)
    kt, kx, ky = jax.random.split(jax.random.key(seed), 3)
    return (G, info, jax.random.normal(kt, (len(info.edges),)), jax.random.normal(kx, (n_data, len(info.inputs))),
            jax.random.normal(ky, (n_data, len(info.outputs))))


def test_non_homogeneous_activation_breaks_conservation():
    G, info, theta, X, Y = _rand_problem(3, 2, 3, 1, 0.5)
    lf = R.loss_fn("mse")
    rel = {}
    for name, act in (("relu", None), ("tanh", jnp.tanh)):
        f = R.forward_fn(G, activation=act)
        tg = np.asarray(theta) * np.asarray(jax.jit(jax.grad(lambda t, f=f: lf(f(t, X), Y)))(theta))
        rel[name] = float(np.max(np.abs(info.B @ tg) / (np.abs(info.B) @ np.abs(tg) + 1e-300)))
    assert rel["relu"] < TOL["conservation_rel"] and rel["tanh"] > 1e-3
    # Leaky ReLU written as an explicit activation gives the built-in slope's network bit for bit.
    leaky = jax.jit(R.forward_fn(G, activation=lambda z: jnp.where(z <= 0, 0.1 * z, z)))(theta, X)
    assert np.array_equal(np.asarray(leaky), np.asarray(jax.jit(R.forward_fn(G, 0.1))(theta, X)))
    with pytest.raises(TypeError, match="callable"):
        R.forward_fn(G, activation="tanh")


def test_singular_value_ratio():
    G = R.chain_graph(2)
    B = R.structure(G).B
    assert R.singular_value_ratio(B, np.array([0.0, 1.0, 0.0])) == 0.0      # the floating chain
    assert R.singular_value_ratio(B, np.zeros(3)) == 0.0
    th = np.random.default_rng(0).normal(size=(4, 5, 3))
    r = R.singular_value_ratio(B, th)
    assert r.shape == (4, 5) and np.all((r > 0) & (r <= 1))
    sv = np.linalg.svd(B * th[1, 2][None, :], compute_uv=False)
    assert r[1, 2] == pytest.approx(sv.min() / sv.max(), rel=TOL["same_svd"])
    # Tall B~ diag(theta) (more hidden nodes than edges cannot happen in a DAG) and bad input.
    with pytest.raises(ValueError, match=r"\[\.\.\., 3\]"):
        R.singular_value_ratio(B, np.zeros(4))
    with pytest.raises(ValueError, match="finite"):
        R.singular_value_ratio(B, np.array([0.0, np.nan, 1.0]))


def test_wrong_count_rules_miss_non_local_forcing():
    # Our own skip chain: (x, h1) is forced through S = {h1, h2} (c = 0.2 > 0); node by node it is not.
    G, c = R.errata_chain(), {"h1": -0.3, "h2": 0.5, "h3": -0.1}
    assert R.count_components(G, c) == 8 and 2 ** len(R.per_node_forced_edges(G, c)) == 4
    assert R.orthant_classes(G, c, np.random.default_rng(0))[:3] == (8, 0, 0)
    assert len(R.bottleneck_edges(G, {"h1": 0, "h2": 0, "h3": 0})) == 4 and R.count_components(
        G, {"h1": 0, "h2": 0, "h3": 0}) == 1
    # The per-node rank rule misses the floating chain of our own singular-point example (b).
    th = {("x", "h1"): 0.0, ("h1", "h2"): 1.0, ("h2", "y"): 0.0}
    assert R.per_node_rank(R.chain_graph(2), th) == 2 and R.jacobian_rank(R.chain_graph(2), th) == 1


def test_dl1_monte_carlo_matches_component_count():
    rng = np.random.default_rng(13)
    G = R.dl1_graph(3, 4)
    for _ in range(20):
        W, a = rng.normal(size=(4, 3)), rng.normal(size=4) * 1.5
        th = R.theta_dict(G, np.asarray(R.dl1_theta(W, a)))
        c = R.balance(G, th)
        assert (R.count_components(G, c) > 1) == bool(np.any((W**2).sum(1) - a**2 < 0))


def test_any_node_labels_and_extreme_c():
    # Labels that a careless implementation might use internally, and integer labels.
    G = nx.DiGraph([("_s", "_t"), ("_t", "y"), ("_s", "z"), ("z", "y")])
    c = {"_t": 1.0, "z": -1.0}
    assert R.forced_edges(G, c) == R.forced_edges_bruteforce(G, c) == {("_s", "_t"), ("z", "y")}
    G = nx.DiGraph([(0, 2), (1, 2), (2, 3), (0, 3)])
    assert R.count_components(G, {2: -1}) == 2 and R.count_components(G, {2: 1}) == 1
    # Exact at the extremes of float64: sums of 1e300 and subnormals are decided exactly.
    G = R.chain_graph(3)
    for c in ({"h1": 1e300, "h2": -1e-300, "h3": 5e-324}, {"h1": -1e300, "h2": 1e300, "h3": -1e-300}):
        assert R.forced_edges(G, c) == R.forced_edges_bruteforce(G, c)
    assert R.forced_edges(G, {"h1": 1e300, "h2": -1e-300, "h3": 5e-324}) == {
        ("x", "h1"), ("h2", "h3"), ("h3", "y")}
