"""Linear social choice (theory/social_choice/): worked instances on Ge et al. 2024's Theorem 3.1 and
Hollender & Kraiczy's Theorems 4.1, 5.1 and 5.2 (the numbers are our own computations), the public API on
random instances (exact hinge infima against brute-force vertex enumeration in Fractions, BTL/exp fits
against their stationarity conditions and scipy, uniform coverage against the BTL closed form and two
independent quadratures), bad input, and toy-size runs of every experiment and figure. float64 throughout
(tests/conftest.py runs sims.runtime.setup())."""

import dataclasses
import itertools
import math
import time
from fractions import Fraction
from pathlib import Path

import jax
import jax.numpy as jnp
import matplotlib
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from sims import runtime
from sims import social_choice as S
from sims.social_choice.coverage import NARROW_SALT
from theory import social_choice as sc

matplotlib.use("Agg")

from figures import social_choice as FIG  # (imported after the backend is chosen)

HYP = settings(max_examples=12, deadline=None, derandomize=True)

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "printed_6_decimals": (5e-7, "the expected value is our number printed to 6 decimals (0.259133, -0.002112): "
                                 "the true value lies within half a unit of the last digit"),
    "printed_5_decimals": (5e-6, "the expected value is printed to 5 decimals (0.00255, -0.00251): half a unit "
                                 "of the last digit"),
    "printed_4_decimals": (5e-5, "the expected value is printed to 4 decimals (0.0717, 19.3692, 5.0547, "
                                 "0.0314): half a unit of the last digit"),
    "printed_2_decimals": (5e-3, "the expected angle is printed to 2 decimals (16.83, 23.56 deg): half a unit "
                                 "of the last digit"),
    "mu_printed": (1e-3, "mu is printed to 3 decimals (0.046; actual 0.04635): one unit of the last digit, for "
                         "a curvature bound that is only needed to that precision"),
    "newton_rounding_level": (1e-10, "a converged Newton fit sits at rounding level: measured certified radius "
                                     "2.0e-13 on Ge's instance and a logit gap 2.2e-16 from ln(7/3)"),
    "roundoff": (1e-12, "float64 roundoff on O(1)-O(40) quantities: a Newton loss vs BFGS's at its optimum "
                        "(measured <= 8.9e-16 over 40 random instances), vmapped vs single Newton fits (5.6e-17), "
                        "eigmin_lower's own rounding allowance 4 (p + 1) eps max|A_ii| ~ 8e-14"),
    "bfgs_theta": (1e-5, "BFGS at gtol 1e-10 stops within ~1e-6 of the minimiser: measured <= 2.7e-6 over 40 "
                         "random instances"),
    "radius_multiple": (10, "where the certificate is looser than BFGS, allow ten certified radii; with radius "
                            "< 1e-8 (asserted next) the 1e-5 floor is what applies"),
    "random_fit_radius": (1e-8, "certified radii of the BTL/exp fits on random instances are rounding level: "
                                "measured <= 7.0e-12 over 40 instances"),
    "highs_vertex": (1e-9, "the certified theta (HiGHS's basis re-solved in rationals, free coordinates "
                           "rationalised to denominators <= 1e9) against HiGHS's float vertex on small-rational "
                           "data: simplex roundoff, measured <= 5.6e-16"),
    "lp_optimum": (1e-9, "HiGHS's hinge optimum is exact up to simplex roundoff (~1e-14 on a loss of 35), and "
                         "random steps of 0.05 raise the loss by >= 1.6e-3 (measured)"),
    "spd_solve": (1e-9, "a backward-stable 5 x 5 SPD solve with cond <= 335 and |x| <= 24 errs by ~cond p eps "
                        "|x| ~ 1e-11: measured 7.1e-14"),
    "cone_lp": (1e-9, "the cone margin comes from a HiGHS LP at a vertex of a 2 x 2 system: measured 1.1e-16 "
                      "from sqrt(1/2); 1e-9 is cone_coordinates' own residual tolerance"),
    "direction_angle_deg": (1e-6, "a fitted direction against its closed form: measured <= 1.1e-11 deg (hypothesis "
                                  "instances) and 1.5e-14 deg (half-circle arc)"),
    "closed_form_length": (1e-8, "|theta| of the fit against the closed form's root rho: measured <= 2.1e-12 "
                                 "relative over 300 instances of the test's distribution (70 by the 1-D fit); "
                                 "before the 1-D fit's cancellations were removed, voters 0.04 deg apart "
                                 "(seed 200000) erred 3.5e-7"),
    "reduction_smooth": (1e-13, "for smooth losses the 1-D reduction and the Gauss rows are both exact to "
                                "roundoff on losses ~0.5-0.8: measured <= 2.7e-15"),
    "midpoint_hinge_d2": (1e-6, "the hinge's midpoint rows over its kinks converge like 1/n^2: measured 1.4e-8 "
                                "at n = 4000"),
    "midpoint_hinge_d3": (4e-5, "the same 1/n^2 rule at n = 120 in d = 3: measured 1.0e-5"),
    "mc_angle_deg": (2.0, "a fit on 5e4 sampled directions errs by O(1/sqrt(n)) in angle: measured 0.18 deg"),
    "toy_dose": (5e-4, "alpha_fix at the toy run's coverage resolution 32: measured 0.031378, 2.2e-5 from the "
                       "printed 0.0314; far below alpha_po = 0.26"),
    "sweep_vs_host_fit": (1e-8, "one draw's BTL fit by the sweep's Newton (padded rows, vmapped) against the host's "
                                "Newton on the unpadded rows: both converge to rounding level (|theta| ~ 1), so "
                                "angles agree to ~1e-12 deg (measured 2.2e-15 deg); fitting on another draw or on "
                                "all 1000 padded directions moves the angle by 0.1-10 deg"),
    "slope_roundoff": (1e-9, "slopes of points drawn on y = -2 x + b, from differences dx >= 3.6e-3: ulp(y) / dx "
                             "<= ~1e-13 relative (measured 0)"),
    "pareto_pair_length": (1e-12, "c1 - c0 of points in [-1, 1]^2 rounded to float64: <= ~2e-16 absolute on "
                                  "length 0.02, ~1e-14 relative (measured 3.0e-15)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _loss_np(Z, w, theta, loss):
    m = Z @ theta
    return float(np.sum(w * {"btl": np.logaddexp(0, -m), "exp": np.exp(-m), "hinge": np.maximum(0, 1 - m)}[loss]))


# --------------------------------------------------------------------------------------------------
# Worked instances (Ge et al. 2024, Theorem 3.1; Hollender & Kraiczy, Theorem 4.1; numbers our own)
# --------------------------------------------------------------------------------------------------


def test_ge_instance_btl_matches_the_typed_in_table_and_is_certified():
    inst = sc.ge_instance(0.6, 0.01, 2.0)
    f = sc.fit_reward_certified(inst.candidates, inst.voters, inst.weights)
    np.testing.assert_allclose(f.theta, [0.259133, 0.023988], atol=TOL["printed_6_decimals"])
    m, certified = f.margin(inst.candidates[5] - inst.candidates[2])
    assert m == pytest.approx(-2.112e-3, abs=TOL["printed_6_decimals"]) and certified
    assert f.radius < TOL["newton_rounding_level"]
    assert sc.pareto_violations(inst.candidates, inst.voters, f.theta) == [(5, 2)]
    ctrl = sc.ge_instance(0.6, 0.05, 2.0)
    fc = sc.fit_reward_certified(ctrl.candidates, ctrl.voters, ctrl.weights)
    mc = fc.margin(ctrl.candidates[5] - ctrl.candidates[2])[0]
    assert mc == pytest.approx(2.55e-3, abs=TOL["printed_5_decimals"])
    assert sc.pareto_violations(ctrl.candidates, ctrl.voters, fc.theta) == []


def test_ge_printed_parameters_are_the_sign_slip():
    with pytest.raises(ValueError, match="not preferred by every voter"):
        sc.ge_instance(0.6, 0.01, 0.5, (1, 1))
    sc.ge_instance(0.75, 0.1, 0.5, (1, 3))  # voter (1, t), t > 1/delta: our fix of Ge et al.'s footnote 7


@pytest.mark.parametrize("eps,counts,glob,cons", [
    ("1/100", (3, 1), Fraction(2003, 50), Fraction(6156, 149)),
    ("1/10", (3, 1), Fraction(446, 11), Fraction(288, 7)),
    ("1/100", (3, 2), None, None), ("1/100", (2, 1), None, None)])
def test_hinge_certificates_of_the_errata(eps, counts, glob, cons):
    inst = sc.ge_instance(eps=Fraction(eps), delta=Fraction(2), counts=counts, exact=True)
    g, c = sc.hinge_certificate(inst.candidates, inst.voters, counts, (5, 2))
    assert isinstance(g, Fraction) and isinstance(c, Fraction)
    if glob is None:
        assert c == g  # no certificate of a violation with these counts
    else:
        assert (g, c) == (glob, cons)


def test_pair_counterexample_hinge_and_btl():
    D, V, _, u = sc.pair_counterexample(Fraction(3, 4), Fraction(1, 10), exact=True)
    rows = sc.pair_rows(D, V, [3, 1], exact=True)
    g = sc.hinge_exact(rows)
    c = sc.hinge_exact(rows, np.array([D[u]], dtype=object))
    assert (g.value, g.theta, c.value) == (Fraction(202, 25), (Fraction(2, 5), Fraction(-1, 5)), Fraction(49, 6))
    Df, Vf, wf, _ = sc.pair_counterexample(0.9, 0.01)
    th = sc.fit_rows(sc.pair_rows(Df, Vf, wf), "btl").theta
    np.testing.assert_allclose(th, [0.935167, -0.395500], atol=TOL["printed_6_decimals"])
    assert th @ Df[u] == pytest.approx(-2.51e-3, abs=TOL["printed_5_decimals"])


def test_ex7_linear_is_pareto_optimal_degree_two_is_not():
    ex = sc.ex7()
    f1 = sc.fit_reward_certified(ex.candidates, ex.voters, ex.weights, degree=1)
    f2 = sc.fit_reward_certified(ex.candidates, ex.voters, ex.weights, degree=2)
    F1, F2 = sc.lift(ex.candidates, 1), sc.lift(ex.candidates, 2)
    assert f1.theta @ (F1[6] - F1[5]) == pytest.approx(0.0717, abs=TOL["printed_4_decimals"])
    assert f2.theta @ (F2[6] - F2[5]) == pytest.approx(-0.0323, abs=TOL["printed_4_decimals"])
    assert f2.mu == pytest.approx(0.046, abs=TOL["mu_printed"])
    assert sc.pareto_violations(ex.candidates, ex.voters, f1.theta) == []
    assert (6, 5) in sc.pareto_violations(ex.candidates, ex.voters, f2.theta, degree=2)


def test_ex7_ties_cast_no_vote():
    ex = sc.ex7()
    signs = sc.vote_signs(ex.candidates, ex.voters, sc.pair_index(7))
    assert int(np.sum(signs == 0)) == 3


def test_btl_core_identity_sympy_and_roots():
    ident = sc.btl_core_identity()
    # the five documented checks, by name (a check dropped or renamed must not pass as "all true")
    assert set(ident) == {"core_is_g_sum", "symmetric", "grad2_at_0", "grad1_at_0", "tanh_form"}
    assert all(ident.values())
    assert float(sc.btl_core_theta1(0.6)) == pytest.approx(0.271541, abs=TOL["printed_6_decimals"])
    assert float(sc.btl_core_theta1(0.75)) == pytest.approx(0.756308, abs=TOL["printed_6_decimals"])
    core = sc.ge_core(0.6)
    for loss in ("btl", "exp"):
        f = sc.fit_reward_certified(core.candidates, core.voters, core.weights, loss=loss)
        assert abs(f.theta[1]) <= f.radius


def test_monomial_order():
    assert sc.monomial_exponents(2, 3) == ((1, 0), (0, 1), (2, 0), (1, 1), (0, 2), (3, 0), (2, 1), (1, 2),
                                           (0, 3))
    X = np.array([[2.0, 3.0]])
    np.testing.assert_array_equal(sc.lift(X, 2), [[2, 3, 4, 6, 9]])


# --------------------------------------------------------------------------------------------------
# Random instances (hypothesis, derandomized)
# --------------------------------------------------------------------------------------------------

small_int = st.integers(-4, 4)


def _brute_hinge(rows, constraint=None):
    """Minimum over the vertices of the line arrangement <theta, z> = 1 (and <theta, c> = 0), in Fractions."""
    Z = [tuple(r) for r in rows.Z.tolist()]
    n = list(rows.w)
    lines = [(z, Fraction(1)) for z in Z] + ([(tuple(constraint), Fraction(0))] if constraint is not None else [])
    best = None
    for (a, ra), (b, rb) in itertools.combinations(lines, 2):
        det = a[0] * b[1] - a[1] * b[0]
        if det == 0:
            continue
        th = ((ra * b[1] - rb * a[1]) / det, (a[0] * rb - b[0] * ra) / det)
        if constraint is not None and th[0] * constraint[0] + th[1] * constraint[1] < 0:
            continue
        val = sum(ni * max(Fraction(0), 1 - (th[0] * z[0] + th[1] * z[1])) for ni, z in zip(n, Z))
        best = val if best is None else min(best, val)
    return best


@HYP
@given(pts=st.lists(st.tuples(small_int, small_int), min_size=3, max_size=5, unique=True),
       voters=st.lists(st.tuples(small_int, small_int).filter(lambda v: v != (0, 0)), min_size=1, max_size=3),
       counts=st.lists(st.integers(1, 4), min_size=3, max_size=3), den=st.integers(1, 3))
def test_hinge_certificate_equals_vertex_enumeration(pts, voters, counts, den):
    X = np.array([[Fraction(x, den), Fraction(y, den)] for x, y in pts], dtype=object)
    V = np.array(voters, dtype=object)
    cnt = counts[:len(voters)]
    rows = sc.comparison_rows(X, V, np.array([Fraction(c) for c in cnt], dtype=object), exact=True)
    if sc.exact.exact_rank_of_rows(rows) < 2:
        return  # the minimum need not sit at a vertex
    g, c = sc.hinge_certificate(X, V, cnt, (0, 1))
    assert g == _brute_hinge(rows)
    assert c == _brute_hinge(rows, X[0] - X[1])
    assert c >= g
    # the certified theta is HiGHS's vertex made exact, free coordinates included
    cert = sc.hinge_exact(rows)
    theta_lp = sc.hinge_lp(np.asarray(rows.Z, float), np.asarray(rows.w, float)).x[:2]
    assert np.abs(np.array(cert.theta, float) - theta_lp).max() < TOL["highs_vertex"]


@HYP
@given(seed=st.integers(0, 10**6), n=st.integers(3, 7), k=st.integers(2, 3), loss=st.sampled_from(["btl", "exp"]))
def test_fit_reward_is_stationary_and_matches_scipy(seed, n, k, loss):
    rng = np.random.default_rng(seed)
    X, V, w = rng.normal(size=(n, 2)), rng.normal(size=(k, 2)), rng.uniform(0.2, 1.0, k)
    rows = sc.comparison_rows(X, V, w)
    if sc.separating_direction(rows.Z, rows.contested) is not None:
        with pytest.raises(ValueError, match="no finite optimum"):
            sc.fit_reward(X, V, w, loss=loss)
        return
    f = sc.fit_reward_certified(X, V, w, loss=loss)
    ref = minimize(lambda t: _loss_np(rows.Z, rows.w, t, loss), np.zeros(2), method="BFGS",
                   options={"gtol": 1e-10})
    assert f.value <= ref.fun + TOL["roundoff"]
    if f.rank == 2:
        assert np.linalg.norm(f.theta - ref.x) <= max(TOL["bfgs_theta"], TOL["radius_multiple"] * f.radius)
        assert f.radius < TOL["random_fit_radius"]
        # every Pareto pair's certified sign agrees with pareto_violations
        viol = set(sc.pareto_violations(X, V, f.theta))
        for a, b in sc.pareto_pairs(X, V):
            m, cert = f.margin(X[a] - X[b])
            if cert:
                assert ((a, b) in viol) == (m < 0)


def test_fit_reward_hinge_is_an_lp_optimum():
    rng = np.random.default_rng(5)
    X, V = rng.normal(size=(6, 2)), rng.normal(size=(3, 2))
    theta = sc.fit_reward(X, V, np.ones(3), loss="hinge")
    rows = sc.comparison_rows(X, V, np.ones(3))
    val = _loss_np(rows.Z, rows.w, theta, "hinge")
    for _ in range(200):
        assert _loss_np(rows.Z, rows.w, theta + rng.normal(scale=0.05, size=2), "hinge") >= val - TOL["lp_optimum"]


def test_newton_fit_vmapped_equals_single_fits():
    rng = np.random.default_rng(3)
    Zs = rng.normal(size=(4, 12, 3))
    ws = rng.uniform(0.1, 1.0, size=(4, 12))
    Zs = np.concatenate([Zs, -Zs], axis=1)
    ws = np.concatenate([ws, ws[:, ::-1]], axis=1)
    th, _, _ = jax.jit(jax.vmap(lambda Z, w: sc.newton_fit(Z, w, "btl")))(jnp.asarray(Zs), jnp.asarray(ws))
    for i in range(4):
        rows = sc.Rows(Zs[i], ws[i], -np.ones((24, 2), int), np.ones(24, bool))
        np.testing.assert_allclose(np.asarray(th[i]), sc.fit_rows(rows, "btl").theta, atol=TOL["roundoff"])


def test_pure_jnp_linear_algebra_matches_lapack():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 5, 5))
    A = A @ A.transpose(0, 2, 1) + 0.05 * np.eye(5)
    A[-1] = np.diag([1.0, 2.0, -2.0, 3.0, 4.0])  # indefinite
    b = rng.normal(size=(6, 5))
    x, lo = jax.jit(jax.vmap(lambda A, b: (sc.spd_solve(A, b), sc.eigmin_lower(A))))(jnp.asarray(A), jnp.asarray(b))
    np.testing.assert_allclose(np.asarray(x[:-1]), np.linalg.solve(A[:-1], b[:-1][..., None])[..., 0],
                               rtol=TOL["spd_solve"], atol=TOL["spd_solve"])
    ev = np.linalg.eigvalsh(A)[:, 0]
    assert np.all((ev[:-1] / 2 - TOL["roundoff"] <= np.asarray(lo[:-1])) & (np.asarray(lo[:-1]) <= ev[:-1]))
    assert float(lo[-1]) == -np.inf and np.all(np.isnan(np.asarray(x[-1])))


# --------------------------------------------------------------------------------------------------
# Axioms and LCPO
# --------------------------------------------------------------------------------------------------


def test_pmc_and_lcpo_on_ge_and_random_instances():
    inst = sc.ge_instance(0.6, 0.01, 2.0)
    rank, feasible = sc.pmc_ranking(inst.candidates, inst.voters, inst.weights)
    assert feasible and rank == (0, 3, 1, 4, 5, 2)  # a > a' > b > b' > c' > c (voter (1, 1), share 0.6)
    theta = sc.fit_reward(inst.candidates, inst.voters, inst.weights)
    assert (5, 2) in sc.pmc_violations(inst.candidates, inst.voters, inst.weights, theta).violations
    r = sc.lcpo(inst.candidates, inst.voters, inst.weights)
    assert r.ranking == rank and sc.ranking_of(inst.candidates, r.theta) == rank
    for s in range(6):
        X, _ = sc.random_po_instance(jax.random.key(s), 7, 2.0, 0.05)
        X = np.asarray(X)
        out = sc.lcpo(X, np.eye(2), [0.9, 0.1])
        ax = sc.check_ranking_axioms(X, np.eye(2), [0.9, 0.1], out.ranking)
        assert not ax["po_violations"] and ax["pmc_holds"]


def test_cone_test_inside_outside_and_margins():
    V = sc.voters_from_angles((0, 90))
    assert sc.in_cone([1, 1], V) and not sc.in_cone([1, -0.1], V)
    assert sc.cone_coordinates([1, 1], V).margin == pytest.approx(math.sqrt(0.5), abs=TOL["cone_lp"])
    V3 = sc.voters_from_angles((0, 45, 90))
    assert sc.cone_coordinates([1, 0.2], V3).margin > 0 > sc.cone_coordinates([1, -0.2], V3).margin
    with pytest.raises(ValueError, match="theta = 0"):
        sc.cone_coordinates([0, 0], V)


# --------------------------------------------------------------------------------------------------
# Uniform coverage
# --------------------------------------------------------------------------------------------------


@settings(max_examples=8, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), dk=st.sampled_from([(2, 2), (2, 3), (3, 2), (3, 3), (4, 3)]))
def test_uniform_coverage_btl_direction_is_the_closed_form(seed, dk):
    d, k = dk
    rng = np.random.default_rng(seed)
    V, w = np.abs(rng.normal(size=(k, d))) + 0.05, rng.uniform(0.2, 1.0, k)
    u, rho = sc.btl_uniform_closed_form(V, w)
    f = sc.uniform_coverage_fit(V, w)
    assert sc.angle_deg(sc.uniform_coverage_direction(V, w), u) < TOL["direction_angle_deg"]
    assert np.linalg.norm(f.theta) == pytest.approx(rho, rel=TOL["closed_form_length"])
    for loss in ("hinge", "exp"):
        assert sc.in_cone(sc.uniform_coverage_direction(V, w, loss=loss), V)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("loss", ["btl", "exp", "hinge"])
def test_one_dimensional_reduction_equals_hemisphere_quadrature(d, loss):
    V = sc.D3_VOTERS if d == 3 else sc.voters_from_angles((10, 60))
    w = sc.D3_WEIGHTS if d == 3 else np.array([0.8, 0.2])
    theta = np.array([1.3, -0.4, 0.7][:d])
    # hinge: the midpoint rule over its kinks converges like 1/n^2 (checked at two resolutions)
    res = 4000 if (loss == "hinge" and d == 2) else (120 if loss == "hinge" else None)
    rows = sc.coverage_rows(V, w, loss=loss, resolution=res)
    tol = TOL["reduction_smooth"] if loss != "hinge" else (
        TOL["midpoint_hinge_d2"] if d == 2 else TOL["midpoint_hinge_d3"])
    if loss == "hinge" and d == 3:
        coarse = sc.coverage_rows(V, w, loss=loss, resolution=60)
        exact = sc.uniform_loss(theta, V, w, loss)
        assert abs(exact - sc.loss_value(rows, theta, loss)) < abs(exact - sc.loss_value(coarse, theta, loss))
    assert sc.uniform_loss(theta, V, w, loss) == pytest.approx(sc.loss_value(rows, theta, loss), abs=tol)


def test_uniform_coverage_typed_in_angles():
    V = sc.voters_from_angles((10, 60))
    ang = {loss: math.degrees(math.atan2(*sc.uniform_coverage_direction(V, [0.8, 0.2], loss=loss)[::-1]))
           for loss in sc.LOSSES}
    # an earlier hand computation printed 19.370; the closed form (angle of .8 v(10 deg) + .2 v(60 deg))
    # is 19.3692
    assert ang["btl"] == pytest.approx(19.3692, abs=TOL["printed_4_decimals"])
    assert ang["hinge"] == pytest.approx(16.83, abs=TOL["printed_2_decimals"])
    assert ang["exp"] == pytest.approx(23.56, abs=TOL["printed_2_decimals"])
    _, rho = sc.btl_uniform_closed_form(sc.D3_VOTERS, sc.D3_WEIGHTS)
    assert rho == pytest.approx(5.0547, abs=TOL["printed_4_decimals"])


def test_sampled_coverage_agrees_with_the_exact_reduction_in_d4():
    rng = np.random.default_rng(4)
    V, w = np.abs(rng.normal(size=(3, 4))), np.array([0.5, 0.3, 0.2])
    exact = sc.uniform_coverage_direction(V, w, loss="exp")
    sampled = sc.fit_rows(sc.coverage_rows(V, w, loss="exp", n_samples=50_000), "exp").theta
    assert sc.angle_deg(exact, sampled) < TOL["mc_angle_deg"]  # Monte Carlo error of 5e4 directions


def test_dose_response_thresholds_match_the_errata():
    D, V, w, u = sc.pair_counterexample(0.9, 0.01)
    a_fix, a_po = sc.dose_thresholds(sc.dose_problem(D, V, w, u))
    assert a_fix == pytest.approx(0.0314, abs=TOL["printed_4_decimals"])
    assert a_po == pytest.approx(0.2600, abs=TOL["printed_4_decimals"])


# --------------------------------------------------------------------------------------------------
# Bad input: one-line ValueErrors that say why
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("call,match", [
    (lambda: sc.fit_reward(np.zeros((3, 2)) + np.arange(3)[:, None], np.ones((2, 3)), np.ones(2)),
     "voters have dimension 3 but candidates have dimension 2"),
    (lambda: sc.fit_reward([[0, 0], [1, 1], [0, 0]], [[1, 0], [0, 1]], [1, 1]), "candidates 0 and 2 are identical"),
    (lambda: sc.fit_reward([[0, 0], [1, 1], [2, 0]], [[1, 0]], [1]), "no finite optimum"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [1]), "one entry per voter"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [1, -1]), "non-negative"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [0, 0]), "at least one weight must be positive"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [1, math.nan]), "weights must be finite"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [1, 1], loss="l2"), "loss must be one of"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[1, 0], [0, 1]], [1, 1], degree=0), "degree must be"),
    (lambda: sc.fit_reward([[0, 0], [1, 1]], [[0, 0], [0, 1]], [1, 1]), "zero vector"),
    (lambda: sc.hinge_certificate([[0, 0], [1, 2], [2, 1]], [[1, 0], [0, 1]], [1.5, 1], (0, 1)), "integers"),
    (lambda: sc.hinge_certificate([[0, 0], [1, 2], [2, 1]], [[1, 0], [0, 1]], [1, 1], (0, 5)), "distinct indices"),
    (lambda: sc.uniform_coverage_direction([[1, 0], [2, 0]], [1, 1]), "same way"),
    (lambda: sc.lcpo(sc.EX7, np.eye(2), [0.9, 0.1]), "strict rankings"),
    (lambda: sc.pareto_violations([[0, 0], [1, 1]], [[1, 0]], [1, 2, 3]), "theta has 3 entries"),
])
def test_bad_input_is_a_one_line_value_error(call, match):
    with pytest.raises(ValueError, match=match) as e:
        call()
    assert "\n" not in str(e.value)


# --------------------------------------------------------------------------------------------------
# Experiments and figures at toy size
# --------------------------------------------------------------------------------------------------


MAIN_VOTERS = (np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.6, 0.0, 0.8]]), np.array([0.6, 0.3, 0.1]))
NARROW_VOTERS = (np.array([[1.0, 0.0], [0.9961946980917455, 0.08715574274765817]]), np.array([0.6, 0.4]))


@pytest.mark.parametrize("salt, voters, sizes, seeds", [(None, MAIN_VOTERS, (60, 300, 1000, 1200), 3),
                                                        (NARROW_SALT, NARROW_VOTERS, (60, 1200), 16)])
def test_finite_sample_sweep_fits_the_first_n_directions_of_each_draw(toy_ctx, salt, voters, sizes, seeds):
    """finite_sample_sweep compiles one fit per padded size: sizes below 1000 share one, with N and the size
    index j traced, 1000 directions drawn and the first N used. Each seed's angle is the host's fit of the
    first N directions of its draw (the key fold_in(k_s, j), k_s = seed_key(seed, s), or for a second
    family fold_in(fold_in(k_s, salt), j); normalised in numpy), for sizes below, at and above the padding.
    The narrow pair refuses about half its draws at N = 60 on the host, from the draw its key gives: a refusal
    is compared with the test's own check of that draw, every other draw with the host's fit."""
    V, w = voters
    seed = 5
    cov = S.CoverageParams(sample_sizes=sizes, n_seeds=seeds)
    ctx = toy_ctx(cov, "social_choice", "coverage")
    r = S.finite_sample_sweep(V, w, sizes, seeds, seed, ctx.mesh, ctx.parts, "main", salt=salt)
    u = sc.btl_uniform_closed_form(V, w)[0]
    gaps, refused = [], np.zeros_like(r["refused"])
    for j, n in enumerate(sizes):
        for s in range(seeds):
            k = runtime.seed_key(seed, s) if salt is None else jax.random.fold_in(runtime.seed_key(seed, s), salt)
            x = np.asarray(jax.random.normal(jax.random.fold_in(k, j), (max(n, 1000), V.shape[1])))
            x = x[:n] / np.sqrt(np.sum(x[:n] ** 2, axis=1, keepdims=True))
            rows = sc.sampled_rows(x, V, w)
            if sc.separating_direction(rows.Z, rows.contested) is not None:
                refused[s, j] = 1
                continue
            gaps.append(abs(r["angle_deg"][s, j] - sc.angle_deg(sc.fit_rows(rows, "btl", check=False).theta, u)))
    np.testing.assert_array_equal(r["refused"], refused)
    assert gaps and np.all(np.asarray(gaps) <= TOL["sweep_vs_host_fit"]), gaps  # a NaN angle fails too
    if salt is not None:
        assert refused.any()  # the narrow pair's host path ran


def test_experiments_and_figures_at_toy_size(toy_ctx):
    ge = S.GeParams()
    a = S.run_ge(ge, toy_ctx(ge, "social_choice", "ge_instance"))
    assert np.all(a["margin"] < 0) and a["hinge_gap"] > 0 and np.all(a["control_margin"] > 0)
    poly = S.PolynomialParams(n_instances=24)
    b = S.run_polynomial(poly, toy_ctx(poly, "social_choice", "polynomial"))
    assert b["valid"].shape == (24, 3) and b["valid"].mean() > 0.9
    assert b["ex7_margin"][0] > 0 > b["ex7_margin"][1]
    cov = S.CoverageParams(sample_sizes=(50, 400), narrow_sample_sizes=(50,), n_seeds=4, constant_samples=4096,
                           dose_alphas=5, dose_resolution=32)
    c = S.run_coverage(cov, toy_ctx(cov, "social_choice", "coverage"))
    assert c["angle_deg"].shape == (4, 2) and np.nanmean(c["angle_deg"][:, 1]) < np.nanmean(c["angle_deg"][:, 0])
    assert float(c["alpha_fix"]) == pytest.approx(0.0314, abs=TOL["toy_dose"])
    # the arrays the ledger re-decides claims on with a seed left out hold the seeds on the declared axis
    for name, arrays, n in (("coverage", c, 4), ("polynomial", b, 24)):
        axes = S.EXPERIMENTS[name].seed_axes
        assert axes and all(arrays[k].shape[ax] == n for k, ax in axes.items())
    assert a["violates"].all() and not a["control_violates"].any() and list(a["control_hinge_gap_exact"]) == ["0", "0"]
    for name, arrays, params in (("ge_instance", a, ge), ("polynomial", b, poly), ("coverage", c, cov)):
        fig = FIG.PLOTS[name](arrays, {"config": dataclasses.asdict(params)})
        assert fig.axes
        matplotlib.pyplot.close(fig)


# --------------------------------------------------------------------------------------------------
# Constructions of the papers: Theorem 4.1's layout, the unrestricted fit, arcs, PMC gaps, c*
# --------------------------------------------------------------------------------------------------


def test_theorem41_layout_shape_and_pareto_pair():
    for deg in (1, 2, 3):
        X, (i1, i0) = sc.theorem41_layout(jax.random.key(deg), deg, 0.02)
        assert X.shape == (deg * (deg + 1) + 2, 2)
        lines = X[:-2].reshape(deg, deg + 1, 2)
        slopes = np.diff(lines[..., 1], axis=1) / np.diff(lines[..., 0], axis=1)
        np.testing.assert_allclose(slopes, -2.0, rtol=TOL["slope_roundoff"])
        d = X[i1] - X[i0]
        assert np.all(d > 0) and np.linalg.norm(d) == pytest.approx(0.02, rel=TOL["pareto_pair_length"])
        assert (i1, i0) in sc.pareto_pairs(X, np.eye(2))


def test_unrestricted_btl_two_candidates_is_the_logit():
    """Two candidates, shares p and 1 - p: the unrestricted BTL score gap is ln(p / (1 - p))."""
    X = np.array([[1.0, 0.0], [0.0, 1.0]])
    f = sc.fit_rows(sc.unrestricted_rows(X, np.eye(2), [0.7, 0.3]), "btl", check=False)
    assert f.theta[0] - f.theta[1] == pytest.approx(math.log(0.7 / 0.3), abs=TOL["newton_rounding_level"])


def test_half_circle_arc_is_uniform_coverage_and_a_quadrant_is_not():
    """Directions x and -x are one comparison, so an arc of 180 degrees is the whole coverage: the BTL fit
    points along sum_i w_i v_i / |v_i| (the closed form); the contested quadrant alone does not."""
    V, w = np.eye(2), np.array([0.7, 0.3])
    th = sc.fit_rows(sc.arc_rows(V, w, (-90, 90)), "btl").theta
    assert sc.angle_deg(th, [0.7, 0.3]) < TOL["direction_angle_deg"]
    th = sc.fit_rows(sc.arc_rows(V, w, (-90, 0)), "btl").theta
    assert not sc.in_cone(th, V)
    with pytest.raises(ValueError, match="0 < hi - lo <= 180"):
        sc.arc_rows(V, w, (0, 200))


def test_pmc_gaps_majority_loss_and_ordinary_loss_on_ge():
    from fractions import Fraction
    g = sc.ge_instance(eps="1/100", delta="2", voter=(Fraction(1), Fraction(1)), counts=(3, 1), exact=True)
    glob, gaps = sc.pmc_gaps(g.candidates, g.voters, [3, 1], majority_loss=False)
    assert glob == Fraction(2003, 50)  # exact global hinge minimum (our own computation)
    assert dict(((a, b), gp) for a, b, gp in gaps)[(5, 2)] == 0  # some optimum ranks c above c'
    glob, gaps = sc.pmc_gaps(g.candidates, g.voters, [3, 1], majority_loss=True)
    assert glob == 0 and len(gaps) == 15 and min(gp for *_, gp in gaps) > 0  # 6 candidates, one ranking


def test_c_star_is_never_first_and_the_c1_profiles_by_hand():
    """sum(theta) / 5 < max |theta_i| for theta != 0 (a plain loop over random theta), the Farkas multipliers
    9/5 and 1/5, and the eight profiles' defining facts recomputed with Fractions in a loop."""
    rng = np.random.default_rng(0)
    for th in rng.normal(size=(2000, 4)):
        assert th.sum() / 5 < np.abs(th).max()
    cert = sc.c_star_top_certificate(Fraction(1, 5))
    assert not cert["c_star_can_be_first"] and cert["lambda"] == (Fraction(9, 5), Fraction(1, 5))
    assert sc.c_star_top_certificate(Fraction(3, 10))["min_margin"] == Fraction(1, 5)  # 4 * 3/10 - 1
    cands = [tuple(Fraction(int(i == j)) for j in range(4)) for i in range(4)]
    cands += [tuple(-x for x in c) for c in cands] + [(Fraction(1, 5),) * 4]
    dot = lambda v, x: sum(Fraction(int(a)) * b for a, b in zip(v, x))
    graphs = []
    for t, prof in enumerate(sc.C1_PROFILES):
        for v in prof:
            assert dot(v, cands[8]) > dot(v, cands[t])  # every voter prefers c* to t
        graphs.append({(a, b) for a in range(9) for b in range(9) if a != b
                       and sum(dot(v, cands[a]) > dot(v, cands[b]) for v in prof) >= 3})
    assert all(g == graphs[0] for g in graphs) and all((8, b) in graphs[0] for b in range(8))
    facts = sc.c1_construction_facts()
    assert facts["same_majority_graph"] and facts["c_star_condorcet"] and all(facts["c_star_pareto_over_t"])


@pytest.mark.parametrize("key, value, says", [
    ("hinge_eps", '"1e-1000000000"', "at most 40 digits"),  # Fraction() of it would not return
    ("hinge_eps", '"-1/100"', "rational > 0"),
    ("hinge_eps", '"1/0"', "rational > 0"),
    ("hinge_counts", "[0, 0]", "need a positive count"),
    ("control_hinge_counts", "[0, 0, 2, 1]", "need a positive count"),
    ("voter", "[0, 0]", "refused by the theory"),
])
def test_ge_instance_values_the_theory_refuses_are_config_errors(key, value, says, tmp_path):
    """Values the schema's types accept but the run could not use stop at load time with one line (the
    theory's own check, not a traceback mid-run), in bounded time."""
    from sims.config import ConfigError, load

    text = (Path(__file__).resolve().parents[1] / "paper_configs" / "social_choice_ge_instance.yaml").read_text()
    lines = [f"  {key}: {value}" if ln.strip().startswith(f"{key}:") else ln for ln in text.splitlines()]
    assert sum(ln.strip().startswith(f"{key}:") for ln in text.splitlines()) == 1
    p = tmp_path / "social_choice_ge_instance.yaml"
    p.write_text("\n".join(lines) + "\n")
    t0 = time.perf_counter()
    with pytest.raises(ConfigError) as e:
        load(p, "quick", {k: e.params for k, e in S.EXPERIMENTS.items()})
    assert says in str(e.value) and "\n" not in str(e.value) and time.perf_counter() - t0 < 60
