"""Proofs by example for the neuromanifold paper (theory/neuromanifold/, sims/neuromanifold.py).

Exact values are our own computations (exact rational ranks, Groebner bases; of these examples the paper
has only the two of its Appendix D: the (2,2,1) MLP with x^3 + x^2 and the k = (3,2), stride-2 CNN with
y^2 + y) and were re-derived here by independent routes (coefficient-space Jacobians with sympy, Groebner
bases). Numerics run in float64.
"""

from __future__ import annotations

import math
import numbers
import random
import time
from fractions import Fraction as F

import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp
from conftest import outcomes_by_statement, statement_outcomes
from hypothesis import given, settings
from hypothesis import strategies as st

from theory import neuromanifold as nm

G3 = [F(1, 3), F(2, 7), F(-5, 4), 1]
X3X2 = [0, 0, 1, 1]

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "network_f64": (1e-12, "float64 networks with small integer weights and inputs and activation "
                           "coefficients rounded once (1/3, 2/7, -5/4: 1.1e-16 relative): on outputs up to 864 "
                           "a few eps times the cancellation in the sums (measured 4.3e-16 relative)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


# --------------------------------------------------------------------------- inputs and errors

def test_activation_accepts_all_coefficient_types_exactly():
    want = (F(0), F(1, 2), F(0), F(3))
    assert nm.activation([0, F(1, 2), 0, 3, 0, 0]) == want
    assert nm.activation([0, sp.Rational(1, 2), sp.Integer(0), sp.Integer(3)]) == want
    assert nm.activation([0.0, 0.5, 0.0, 3.0]) == want
    assert nm.activation(np.array([0, 0.5, 0, 3])) == want
    # A float is converted exactly, never rounded to a nearby simple rational.
    assert nm.activation([0.1])[0] == F(0.1) != F(1, 10)


@pytest.mark.parametrize("bad, err", [
    ([], ValueError), ([0, 0.0, F(0)], ValueError), (["1"], TypeError), ([1j], TypeError),
    ([float("nan")], ValueError), ([sp.Symbol("c")], TypeError), ("x^2", TypeError), (3, TypeError),
    ([None, 1], TypeError), ([True, 1], TypeError)])
def test_bad_activation_is_a_clear_error(bad, err):
    with pytest.raises(err, match="activation_coeffs"):
        nm.activation(bad)
    with pytest.raises(err):
        nm.mlp_dimension((2, 2, 1), bad)


@pytest.mark.parametrize("widths, err, match", [
    ((2, 0, 1), ValueError, r"widths\[1\] must be >= 1"), ((3,), ValueError, "at least 2"),
    ((2, 2.5, 1), TypeError, "integer"), ((2, -1, 1), ValueError, ">= 1"), ("221", TypeError, "widths")])
def test_bad_widths(widths, err, match):
    with pytest.raises(err, match=match):
        nm.mlp_dimension(widths, X3X2)
    with pytest.raises(err, match=match):
        nm.expected_dimension("mlp", widths, X3X2)


@pytest.mark.parametrize("k, s, err, match", [
    ((3, 0), (2,), ValueError, r"filter_sizes\[1\] must be >= 1"), ((), (), ValueError, "at least 1"),
    ((3, 2), (0,), ValueError, r"strides\[0\] must be >= 1"), ((3, 2), (2, 1, 1), ValueError, "1 \\(or 2\\)"),
    ((3, 2, 2), (1,), ValueError, "strides must have 2"), ((3, 2), (1.5,), TypeError, "integer")])
def test_bad_cnn(k, s, err, match):
    with pytest.raises(err, match=match):
        nm.cnn_dimension(k, s, [0, 1, 1])
    with pytest.raises(err, match=match):
        nm.expected_dimension("cnn", (k, s), [0, 1, 1])


def test_strides_that_do_not_fit_the_input():
    assert nm.check_cnn((3, 2), (2,), input_size=5) == ((3, 2), (2,))
    with pytest.raises(ValueError, match="do not fit input_size=6"):
        nm.check_cnn((3, 2), (2,), input_size=6)
    with pytest.raises(ValueError, match="strides do not fit the input"):
        nm.cnn_dimension((2, 2), (3,), [0, 1, 1])
    assert nm.cnn_dimension((2, 2), (2,), [0, 1, 1]) == 4
    with pytest.raises(ValueError, match="kind"):
        nm.expected_dimension("rnn", (2, 2, 1), X3X2)


def test_layer_sizes_and_last_stride_irrelevant():
    assert nm.cnn_layer_sizes((3, 2), (2,)) == (5, 2, 1)
    assert nm.cnn_layer_sizes((2, 2, 2), (2, 2)) == (8, 4, 2, 1)
    assert nm.cnn_dimension((3, 2), (2, 7), [0, 1, 1]) == nm.cnn_dimension((3, 2), (2,), [0, 1, 1]) == 5



# --------------------------------------------------------------------------- bounded work

_PRELUDE = ("from sims import runtime; runtime.setup()\n"
            "import numpy as np\nfrom theory import neuromanifold as nm\nX3X2 = [0, 0, 1, 1]\n")


def _outcomes(stmts, timeout=20):
    """Outcomes of the statements (``nm`` = theory.neuromanifold), see ``conftest.statement_outcomes``."""
    return statement_outcomes(_PRELUDE, stmts, timeout)


_LIMITS = [
    ("nm.mlp_dimension((1000, 1000, 1), X3X2)", "MAX_EXACT_PARAMS"),
    ("nm.generic_rank('mlp', (2,) * 14, X3X2, field='QQ')", "MAX_QQ_DEGREE"),
    ("nm.cnn_dimension((2,) * 30, (2,) * 29, [0, 1, 1])", "MAX_INPUT_SIZE"),
    ("nm.generic_rank('mlp', (2, 2, 1), [0, 0, 0, 1], n_points=10**9)", "MAX_POINTS"),
    ("nm.numeric_rank('mlp', (1000, 1000, 1), X3X2)", "MAX_NUMERIC_PARAMS"),
    ("nm.mlp_numeric_ranks([(2, 2, 1), (1000, 1000, 1)], X3X2)", "MAX_NUMERIC_PARAMS"),
    ("nm.expected_dimension('mlp', (2,) * 16, X3X2)", "MAX_DEGREE"),
    ("nm.mlp_grid(100, (10,))", "MAX_GRID"),
    ("nm.mlp_symmetries((2, 12, 1), list(range(1, 37)))", "MAX_SYMMETRIES"),
    ("nm.fiber('mlp', (3, 3, 3, 1), X3X2, list(range(1, 22)))", "MAX_FIBER_UNKNOWNS"),
    ("nm.coefficient_map('mlp', (6, 6, 6, 1), X3X2)", "MAX_SYMBOLIC_PARAMS"),
    ("nm.dead_neuron_certificate((2, 2, 1), X3X2, 1, n_samples=10**9)", "MAX_POINTS"),
    ("nm.coefficient_projector('mlp', (8, 8, 8, 1), X3X2)", "MAX_BASIS"),
]


@pytest.fixture(scope="module")
def limit_outcomes():
    """Each statement of ``_LIMITS`` -> its outcome, all run in one interpreter (one start-up, not 13)."""
    return outcomes_by_statement(_PRELUDE, [s for s, _ in _LIMITS])


@pytest.mark.parametrize("stmt, limit", _LIMITS)
def test_large_inputs_are_refused_naming_the_limit(stmt, limit, limit_outcomes):
    """A public function finishes in bounded time or refuses up front with a ValueError naming its limit."""
    out = limit_outcomes[stmt]
    assert out.startswith("ValueError") and limit in out, out


def test_singularity_helpers_refuse_large_inputs():
    """The padding patterns, the stacked Jacobians and the padding report (one interpreter for all three)."""
    out = _outcomes(["nm.cnn_zero_patterns((8, 8))",
                     "nm.fiber_stack('mlp', (2, 2, 1), X3X2, [[1] * 6] * 100)",
                     "nm.cnn_padding_report((3, 3, 3), (1, 1), [0, 1, 1], [1] * 9)"])
    for o, limit in zip(out, ["MAX_SYMMETRIES", "MAX_POINTS", "MAX_FIBER_UNKNOWNS"]):
        assert o.startswith("ValueError") and limit in o, out


def test_a_modulus_that_is_not_a_small_prime_is_refused():
    """flint aborts the whole process on a rank modulo a composite; int64 residues overflow above 2^31."""
    out = _outcomes(["nm.generic_rank('mlp', (2, 2, 1), X3X2, p=4)",
                     "nm.exact_rank(np.array([[2, 0], [0, 1]]), 'modp', 4)",
                     "nm.generic_rank('mlp', (2, 2, 1), X3X2, p=2**61 - 1)"])
    assert out[0].startswith("ValueError") and "prime" in out[0], out
    assert out[1].startswith("ValueError") and "prime" in out[1], out
    assert out[2].startswith("ValueError") and "2^31" in out[2], out


def test_sizes_at_the_limits_still_run():
    assert nm.generic_rank("mlp", (10, 10, 10, 1), X3X2, n_points=1).rank == 210
    assert nm.expected_dimension("mlp", (2,) * 9, X3X2) == 8 * 4  # N = 8 layers of 2 x 2; degree 3^7


@pytest.mark.parametrize("call, err, match", [
    ("nm.numeric_rank('mlp', (2, 2, 1), X3X2, scale=nan)", ValueError, "scale"),
    ("nm.numeric_rank('mlp', (2, 2, 1), X3X2, n_points=2.5)", TypeError, "n_points"),
    ("nm.generic_rank('mlp', (2, 2, 1), X3X2, n_points=0)", ValueError, "n_points"),
    ("nm.generic_rank('mlp', (2, 2, 1), X3X2, field='RR')", ValueError, "field"),
    ("nm.random_point('mlp', (2, 2, 1), random.Random(0), n_eval=-1)", ValueError, "n_eval"),
    ("nm.exposure_trial_fn('mlp', (2, 2, 1), X3X2, tol=nan)", ValueError, "tol"),
    ("nm.exposure_trial_fn('mlp', (2, 2, 1), X3X2, n_steps=1.5)", TypeError, "n_steps"),
    ("nm.sparsity_trial_fn('mlp', (2, 2, 1), X3X2, lr=nan)", ValueError, "lr"),
    ("nm.sparsity_trial_fn('mlp', (2, 2, 1), X3X2, init_scale=inf)", ValueError, "init_scale"),
    ("nm.mlp_grid(4.5)", TypeError, "max_width"),
    ("nm.grid_sample(-1)", ValueError, "n_depth4"),
    ("nm.cnn_node_pair((3, 2), (2,), 1, q=1.0)", TypeError, "q"),
    ("nm.dead_neuron_certificate((2, 2, 1), X3X2, 1.0)", TypeError, "layer"),
    ("nm.dense_activation(0)", ValueError, "degree"),
    ("nm.dense_activation(3.0)", TypeError, "degree"),
    ("nm.expected_dimension('mlp', (2, 2, 1), X3X2, cuts='some')", ValueError, "cuts"),
    ("nm.fiber_stack('mlp', (2, 2, 1), X3X2, [[1, 2, 3, 4, 5, 0.5]])", TypeError, "integer"),
    ("nm.fiber_stack('mlp', (2, 2, 1), X3X2, [[1, 2, 3]])", ValueError, "6 entries"),
    ("nm.cnn_padding_orbit((3, 2), (2,), [1, 2, 3])", ValueError, "5 entries"),
    ("nm.implicit_cubic_normal([1, 2, 3])", ValueError, "6 entries"),
])
def test_bad_numbers_are_refused(call, err, match):
    with pytest.raises(err, match=match):
        eval(call, {"nm": nm, "X3X2": X3X2, "nan": math.nan, "inf": math.inf, "random": random})

# --------------------------------------------------------------------------- dimension: exact values

TYPED_MLP = [((2, 2, 1), X3X2, 6, 7), ((2, 2, 1), G3, 6, 10), ((2, 3, 1), G3, 9, 10), ((2, 3, 1), X3X2, 7, 7),
             ((2, 2, 2), X3X2, 8, 14), ((3, 3, 1), X3X2, 12, 16), ((2, 2, 2, 1), X3X2, 10, 45),
             ((2, 2, 1), [0, 0, 1, 0, 1], 6, 8), ((2, 2, 1), [0, 1, 1], 5, 5),
             ((2, 2, 1), [F(1, 3), F(2, 7), 1], 5, 6), ((2, 2, 1), [0, 0, 1], 3, 3)]


@pytest.mark.parametrize("widths, act, rank, ambient", TYPED_MLP)
def test_mlp_rank_typed_in_table(widths, act, rank, ambient):
    assert nm.mlp_dimension(widths, act) == rank
    assert nm.generic_rank("mlp", widths, act, field="QQ").rank == rank
    assert nm.mlp_ambient_dimension(widths, act) == ambient


@pytest.mark.parametrize("k, s, generic, monomial", [((2, 2), (1,), 4, 3), ((2, 2, 2), (1, 1), 6, 4),
                                                     ((2, 2, 2), (2, 2), 6, 4), ((3, 3), (1,), 6, 5),
                                                     ((3, 2), (2,), 5, 4)])
def test_cnn_rank_typed_in_table(k, s, generic, monomial):
    for act in ([0, 1, 1], [0, 0, 1, 1]):
        assert nm.cnn_dimension(k, s, act) == generic == nm.expected_dimension("cnn", (k, s), act)
    for act in ([0, 0, 1], [0, 0, 0, 1]):
        assert nm.cnn_dimension(k, s, act) == monomial == nm.expected_dimension("cnn", (k, s), act)


def test_coefficient_types_give_the_same_dimension():
    forms = [[0, 0, 1, 1], [0.0, 0.0, 1.0, 1.0], [F(0), F(0), F(1), F(1)],
             [sp.Integer(0), sp.Integer(0), sp.Rational(1), sp.Rational(1)]]
    assert {nm.mlp_dimension((2, 3, 1), f) for f in forms} == {7}
    g3_float = [0.25, 0.5, -1.25, 1.0]  # exactly representable
    g3_frac = [F(1, 4), F(1, 2), F(-5, 4), 1]
    g3_sym = [sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(-5, 4), 1]
    assert nm.mlp_dimension((2, 3, 1), g3_float) == nm.mlp_dimension((2, 3, 1), g3_frac) \
        == nm.mlp_dimension((2, 3, 1), g3_sym) == 9
    assert nm.cnn_dimension((3, 2), (2,), [F(0), F(1, 3), sp.Rational(2, 5)]) == 5


def test_expected_dimension_formula():
    assert nm.expected_dimension("mlp", (3, 4, 2), G3) == 20                 # N
    assert nm.expected_dimension("mlp", (3, 4, 2), [0, 0, 0, 1]) == min(20 - 4, 2 * 10)
    assert nm.expected_dimension("mlp", (2, 3, 1), X3X2) == 7                # capped by dim V = 7
    assert nm.expected_dimension("mlp", (4, 4, 4, 1), [0, 0, 0, 0, 1]) == 36 - 8
    assert nm.expected_dimension("cnn", ((3, 3, 2), (1, 2)), [0, 1, 1]) == 8
    assert nm.expected_dimension("cnn", ((3, 3, 2), (1, 2)), [0, 0, 0, 1]) == 6
    # A tiny CNN whose monomial count (3: x0^2, x0 x1, x1^2 ... ) caps |k|.
    assert nm.expected_dimension("cnn", ((2, 1, 1), (1, 1)), [0, 0, 1]) == min(4 - 2, 3)


def test_dense_activation():
    cs = nm.dense_activation(5, seed=1)
    assert len(cs) == 6 and all(c != 0 for c in cs) and cs[-1] == 1
    assert cs == nm.dense_activation(5, seed=1) != nm.dense_activation(5, seed=0)
    assert not nm.is_monomial(cs)


@pytest.mark.parametrize("widths, degree, rank, plain", [((1, 1, 4, 1), 6, 8, 9), ((3, 1, 5, 1), 6, 10, 13),
                                                          ((3, 1, 5, 1), 4, 8, 13), ((1, 1, 4, 1), 7, 9, 9)])
def test_width_one_layer_caps_the_dimension(widths, degree, rank, plain):
    """After a width-1 layer the tail maps a scalar into univariate polynomials: (1,1,4,1) at degree 6 is
    E(1,1) + E(1,4,1) = 1 + min(8, 7) = 8, not min(N, dim V) = 9 (our own correction). At degree 7 the
    tail's 8 coefficients no longer bind."""
    cs = nm.dense_activation(degree)
    assert nm.expected_dimension("mlp", widths, cs) == rank == nm.mlp_dimension(widths, cs)
    assert nm.expected_dimension("mlp", widths, cs, cuts="width1") == rank
    assert nm.expected_dimension("mlp", widths, cs, cuts="none") == plain
    assert nm.generic_rank("mlp", widths, cs, field="QQ", n_points=2).rank == rank


def test_cut_at_a_wider_layer_and_monomials():
    """(1,3,2,2) with a dense cubic: the head (1,3,2) has only 2 * 4 output coefficients, so E = 8 + 4 =
    12 < 13 = N; a monomial subtracts the rescaling of the cut layer's neurons once."""
    cs = nm.dense_activation(3)
    assert nm.expected_dimension("mlp", (1, 3, 2, 2), cs) == 12 == nm.mlp_dimension((1, 3, 2, 2), cs)
    assert nm.expected_dimension("mlp", (1, 3, 2, 2), cs, cuts="width1") == 13
    x3 = [0, 0, 0, 1]
    for w in [(1, 1, 4, 1), (2, 1, 3, 2), (2, 3, 2, 1), (1, 2, 4, 1)]:
        assert nm.expected_dimension("mlp", w, x3) == nm.mlp_dimension(w, x3), w


def test_expected_dimension_bounds_and_attains_the_rank_on_a_grid():
    """Every MLP of depth 2-3 and widths 1..3: the rank never exceeds E(w) (it is a proven upper bound)
    and equals it for dense activations and monomials; quadratics fall below it here, x^3 + x^2 only with
    a 4-wide layer, (2,4,3) (their defects, not the formula's). The 400-net grid and degrees 3..8 are in
    the slow test."""
    archs = nm.mlp_grid(3, (2, 3))
    for cs in (nm.dense_activation(3), nm.dense_activation(4), [0, 0, 0, 1], G3):
        assert [nm.mlp_dimension(w, cs) for w in archs] == [nm.expected_dimension("mlp", w, cs) for w in archs]
    gaps = {}
    for name, cs in (("x3+x2", X3X2), ("quadratic", nm.ACTIVATIONS["quadratic"])):
        gaps[name] = [nm.expected_dimension("mlp", w, cs) - nm.mlp_dimension(w, cs) for w in archs]
        assert min(gaps[name]) == 0
    assert max(gaps["x3+x2"]) == 0 and max(gaps["quadratic"]) >= 1
    assert nm.mlp_dimension((2, 4, 3), X3X2) == 19 < nm.expected_dimension("mlp", (2, 4, 3), X3X2) == 20
    assert nm.mlp_dimension((2, 4, 3), G3) == 20


@pytest.mark.slow
def test_degree_ramp_on_the_400_net_grid():
    """The review's grid (depths 2-3 in full, 80 depth-4 nets): dense activations of degree 3..8 (two
    seeds) reach E(w) everywhere; against the plain min(N, dim V) the defects are 75, 45, 14, 14, 0, 0;
    from degree 7 on E(w) = N."""
    archs = nm.grid_sample(80, seed=0)
    plain = {3: 75, 4: 45, 5: 14, 6: 14, 7: 0, 8: 0}
    for r in range(3, 9):
        for seed in (0, 1):
            cs = nm.dense_activation(r, seed)
            ranks = [nm.mlp_dimension(w, cs) for w in archs]
            assert ranks == [nm.expected_dimension("mlp", w, cs) for w in archs], (r, seed)
            assert sum(x < nm.expected_dimension("mlp", w, cs, cuts="none")
                       for x, w in zip(ranks, archs)) == plain[r]
            if r >= 7:
                assert ranks == [nm.mlp_num_params(w) for w in archs]


@pytest.mark.parametrize("widths, act", [((2, 2, 1), X3X2), ((2, 2, 2, 1), X3X2), ((3, 2, 1), G3),
                                         ((1, 2, 2, 1), [0, 1, 0, 1]), ((2, 1, 2), [F(1, 2), 0, 0, 1])])
def test_ambient_formula_matches_expansion(widths, act):
    rng = random.Random(0)
    params = [rng.choice([-1, 1]) * rng.randint(1, 10**6) for _ in range(nm.mlp_num_params(widths))]
    keys, _, _ = nm.coefficient_map("mlp", widths, act, params=params)
    assert len(keys) == nm.mlp_ambient_dimension(widths, act)


@pytest.mark.parametrize("k, s, act", [((3, 2), (2,), [0, 1, 1]), ((2, 2, 2), (1, 1), [0, 0, 1, 1]),
                                       ((3, 3), (3,), [F(1, 2), 1, 1])])
def test_cnn_support_matches_expansion(k, s, act):
    rng = random.Random(1)
    # Large random integers: small ones can cancel a monomial by accident (seen with entries in 1..9).
    params = [rng.choice([-1, 1]) * rng.randint(1, 10**6) for _ in range(sum(k))]
    keys, _, _ = nm.coefficient_map("cnn", (k, s), act, params=params)
    assert {m for _, m in keys} == nm.cnn_support(k, s, act)
    assert nm.cnn_ambient_dimension(k, s, act) == len(keys)
    assert nm.cnn_ambient_dimension(k, s, act, cap=3) is None


@pytest.mark.parametrize("kind, shape, act, n", [  # n: parameters (sum of d_l d_(l+1); CNN: sum of the filters)
    ("mlp", (2, 2, 1), X3X2, 6), ("mlp", (2, 2, 1), [F(1, 3), F(2, 7), 1], 6), ("mlp", (2, 2, 2), G3, 8),
    ("cnn", ((3, 2), (2,)), [0, 1, 1], 5), ("cnn", ((2, 2), (1,)), [0, 0, 1], 4)])
def test_coefficient_jacobian_rank_equals_evaluation_rank(kind, shape, act, n):
    """Coefficient-space Jacobian (sympy DomainMatrix over QQ) against the evaluation Jacobian."""
    rng = random.Random(2)
    point = [rng.choice([-1, 1]) * rng.randint(1, 9) for _ in range(n)]
    coef_rank = nm.coefficient_jacobian(kind, shape, act, point).rank()
    _, X = nm.random_point(kind, shape, rng, "QQ", n_eval=n + 8)
    J = nm.eval_jacobian(kind, shape, act, np.array(point, dtype=object), X, field="QQ")
    assert coef_rank == nm.exact_rank(J, "QQ") == nm.exact_rank(
        nm.eval_jacobian(kind, shape, act, np.array(point, dtype=object), X, field="modp"), "modp")
    assert coef_rank == nm.generic_rank(kind, shape, act).rank


def test_sympy_rank_trap_is_avoided():
    """A float that is singular in exact arithmetic: exact_rank converts it exactly (Fraction(x))."""
    a = np.array([[0.1, 0.2], [0.2, 0.4]])
    assert nm.exact_rank(a, "QQ") == 1
    assert nm.exact_rank(np.array([[1, 2], [3, 4]]), "modp") == 2


def test_largest_gap_rank():
    """nm.gap_rank is theory.numerics.gap_rank: the rank and the gap it was read at."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(30, 5)) @ rng.normal(size=(5, 12))
    r, gap = nm.gap_rank(np.linalg.svd(A, compute_uv=False))
    assert r == 5 and gap > 1e12
    r, gap = nm.gap_rank(np.linalg.svd(rng.normal(size=(30, 12)), compute_uv=False))
    assert r == 12 and gap > 1e6
    assert nm.gap_rank(np.zeros(4)) == (0, math.inf)
    rep = nm.numeric_rank("mlp", (2, 3, 1), X3X2)
    assert rep.rank == 7 and min(g for r, g in zip(rep.ranks, rep.gaps) if r == rep.rank) > 6  # log10


def test_numeric_rank_agrees_with_exact_on_a_grid_sample():
    archs = sorted(random.Random(3).sample(nm.mlp_grid(3, (2, 3)), 24)) + [(2, 2, 2, 1), (3, 2, 2, 2, 1)]
    for act in (X3X2, G3, [0, 0, 0, 1], [F(1, 3), F(2, 7), 1]):
        num = nm.mlp_numeric_ranks(archs, act, n_points=2, seed=1)
        assert [r.rank for r in num] == [nm.mlp_dimension(w, act) for w in archs]
        # each report carries one gap per point; the rank is read where the spectrum drops by > 6 decades
        assert all(len(r.gaps) == 2 and min(g for k, g in zip(r.ranks, r.gaps) if k == r.rank) > 6 for r in num)
    assert nm.numeric_rank("cnn", ((3, 2), (2,)), [0, 1, 1]).rank == 5
    assert nm.numeric_rank("mlp", (2, 3, 1), X3X2).rank == 7


def test_exact_rank_of_a_210_parameter_network_is_fast():

    t0 = time.perf_counter()
    assert nm.mlp_dimension((10, 10, 10, 1), X3X2) == 210
    assert time.perf_counter() - t0 < 10


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(1, 3), min_size=3, max_size=4), st.sampled_from([X3X2, G3, [0, 0, 0, 1]]))
def test_rank_bounded_by_parameters_and_ambient(widths, act):
    r = nm.mlp_dimension(widths, act)
    assert r <= min(nm.mlp_num_params(widths), nm.mlp_ambient_dimension(widths, act))
    assert r == nm.generic_rank("mlp", widths, act, field="QQ", seed=5).rank


# --------------------------------------------------------------------------- JAX functions

def test_jax_networks_match_sympy():

    rng = np.random.default_rng(0)
    # (n parameters, d_0 inputs): 2*3 + 3*2 and 2; filters 3 + 2 on 3 + (2 - 1) * 2 = 5 inputs (stride 2)
    for kind, shape, act, n, d0 in (("mlp", (2, 3, 2), G3, 12, 2), ("cnn", ((3, 2), (2,)), [0, 1, 1], 5, 5)):
        theta = rng.integers(-3, 4, size=n)
        X = rng.integers(-2, 3, size=(4, d0))
        outs, xs, _ = nm.network_sympy(kind, shape, act, [int(t) for t in theta])
        want = np.array([[float(o.subs(dict(zip(xs, map(int, x))))) for o in outs] for x in X])
        got = np.asarray(nm.network_apply(kind, shape, act)(jnp.asarray(theta, float), jnp.asarray(X, float)))
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=TOL["network_f64"])


# --------------------------------------------------------------------------- fibers

def test_fiber_of_221_is_the_swap():
    W0 = [1, 2, -1, 3, 2, -3]
    rep = nm.fiber("mlp", (2, 2, 1), X3X2, W0)
    assert rep.zero_dimensional and rep.degree == 2
    swaps = nm.mlp_symmetries((2, 2, 1), W0)
    assert len(swaps) == 2 and all(nm.satisfies("mlp", (2, 2, 1), X3X2, s, W0) for s in swaps)
    assert not nm.fiber("mlp", (2, 2, 1), [0, 0, 0, 1], W0).zero_dimensional


def test_cnn_fiber_is_one_point():
    assert nm.fiber("cnn", ((3, 2), (2,)), [0, 1, 1], [1, 2, -1, 3, 2]).degree == 1


# --------------------------------------------------------------------------- singularities

@pytest.mark.parametrize("widths, layer, dim, at_point", [((2, 2, 1), 1, 6, 4), ((2, 2, 2, 1), 1, 10, 6),
                                                          ((2, 2, 2, 1), 2, 10, 8), ((2, 2, 2), 1, 8, 6)])
def test_dead_neuron_certificate(widths, layer, dim, at_point):
    c = nm.dead_neuron_certificate(widths, X3X2, layer)
    assert (c.dim, c.rank_at_point) == (dim, at_point)
    assert c.singular and c.stacked_rank > dim


def test_dead_neuron_certificate_errors():
    with pytest.raises(ValueError, match="hidden layer"):
        nm.dead_neuron_certificate((2, 2, 1), X3X2, 2)
    with pytest.raises(ValueError, match="neuron"):
        nm.dead_neuron_certificate((2, 2, 1), X3X2, 1, neuron=2)


def test_implicit_cubic_and_its_gradient():
    grads, ps, F_phi = nm.cubic_gradient_on_manifold()
    assert F_phi == 0
    W0 = dict(zip(ps, [1, 2, -1, 3, 2, -3]))
    # Independent route: expand f directly and differentiate F.
    x, y = sp.symbols("x y")
    f = sp.expand(2 * ((x + 2 * y) ** 3 + (x + 2 * y) ** 2) - 3 * ((-x + 3 * y) ** 3 + (-x + 3 * y) ** 2))
    P = sp.Poly(f, x, y)
    Fc, m = nm.implicit_cubic_221()
    vals = [P.coeff_monomial(x**i * y**j) for i, j in [(3, 0), (2, 1), (1, 2), (0, 3), (2, 0), (1, 1), (0, 2)]]
    direct = [sp.diff(Fc, s).subs(dict(zip(m, vals))) for s in m]
    assert [g.subs(W0) for g in grads] == direct == [3240, 1980, -540, -1080, -16200, 1350, 2700]
    # Subnetwork parameters: a dead out-weight, a dead in-weight, parallel neurons.
    for sub in ({ps[5]: 0}, {ps[2]: 0, ps[3]: 0}, {ps[2]: 2 * ps[0], ps[3]: 2 * ps[1]}):
        assert all(sp.expand(g.subs(sub)) == 0 for g in grads)


def test_implicit_cubic_normal_at_the_worked_point():
    """grad F at phi(W0) is (3240, 1980, -540, -1080, -16200, 1350, 2700) and orthogonal to the six
    tangent columns (rank 6); an earlier hand computation's vector (the last assertion) is not."""
    rep = nm.implicit_cubic_normal([1, 2, -1, 3, 2, -3])
    assert rep.gradient == (3240, 1980, -540, -1080, -16200, 1350, 2700)
    assert rep.tangent_products == (0,) * 6 and rep.tangent_rank == 6
    keys, vals, ps = nm.coefficient_map("mlp", (2, 2, 1), X3X2)
    coef = {k[1]: v for k, v in zip(keys, vals)}
    order = [(3, 0), (2, 1), (1, 2), (0, 3), (2, 0), (1, 1), (0, 2)]
    W0 = dict(zip(ps, [1, 2, -1, 3, 2, -3]))
    T = sp.Matrix([[sp.diff(coef[o], q).subs(W0) for q in ps] for o in order])
    assert T.T * sp.Matrix(rep.gradient) == sp.zeros(6, 1)
    assert T.T * sp.Matrix([-648, 324, 324, -648, -1944, -486, 972]) != sp.zeros(6, 1)


def test_fiber_stack_generic_point_and_dead_neuron():
    """A generic point stacked with its whole fiber (the swap) has one tangent space; a dead neuron's
    fiber spans more than dim M; with x^3 (M fills V) the same certificate cannot fire."""
    W0 = [1, 2, -1, 3, 2, -3]
    st = nm.fiber_stack("mlp", (2, 2, 1), X3X2, nm.mlp_symmetries((2, 2, 1), W0))
    assert st.same_function and st.ranks == (6, 6) and st.joint_rank == 6 and not st.singular
    dead = [[1, 2, a, b, 2, 0] for a, b in [(-1, 3), (4, 1), (2, -5), (7, 7)]]
    st = nm.fiber_stack("mlp", (2, 2, 1), X3X2, dead)
    assert st.same_function and st.singular and st.joint_rank == 7
    assert not nm.fiber_stack("mlp", (2, 2, 1), X3X2, [W0, [1, 2, -1, 3, 2, -2]]).same_function
    assert not nm.dead_neuron_certificate((2, 2, 1), [0, 0, 0, 1], 1).singular


def test_padding_orbit():
    assert nm.cnn_padding_orbit((3, 2), (2,), (5, 0, 0, 0, 7)) == [(5, 0, 0, 0, 7), (0, 0, 5, 7, 0)]
    assert nm.cnn_padding_orbit((3, 2), (2,), (5, 6, 0, 0, 7)) == [(5, 6, 0, 0, 7)]  # 1 is not a stride
    assert len(nm.cnn_padding_orbit((3, 2), (1,), (5, 6, 0, 0, 7))) == 2
    # A shift passing through a layer without padding (stride 1 divides it): the accumulated rule.
    assert nm.cnn_padding_orbit((2, 2, 2), (1, 1), (0, 1, 2, 3, 4, 0)) == [(0, 1, 2, 3, 4, 0), (1, 0, 2, 3, 0, 4)]
    assert len(nm.cnn_padding_orbit((2, 2, 2), (2, 2), (0, 1, 2, 3, 4, 0))) == 1
    assert len(nm.cnn_zero_patterns((3, 2))) == 21


def _iff_holds(k, s, seed=0):
    rng = random.Random(seed)
    out = []
    for pat in nm.cnn_zero_patterns(k):
        theta = [rng.choice((-1, 1)) * rng.randint(1, 30) * b for b in pat]
        rep = nm.cnn_padding_report(k, s, [0, 1, 1], theta)
        out.append((rep.movable, rep.node if rep.movable else rep.smooth))
    return out


def test_cnn_singular_iff_movable_padding_worked_example():
    """Thm 4.6 both ways at every zero pattern of k = (3,2), s = 2 (y^2 + y): the two movable patterns
    are nodes, the 19 others smooth (one fiber point, rank 5)."""
    res = _iff_holds((3, 2), (2,))
    assert sum(m for m, _ in res) == 2 and all(ok for _, ok in res)
    rep = nm.cnn_padding_report((3, 2), (2,), [0, 1, 1], [2, 0, 0, 0, 5])
    assert (rep.orbit, rep.fiber_degree, rep.stack.joint_rank) == (2, 2, 8) and rep.node and not rep.smooth
    chain = nm.cnn_padding_report((2, 2, 2), (1, 1), [0, 1, 1], [0, 3, -2, 5, 7, 0])
    assert chain.orbit == chain.fiber_degree == 2 and chain.node
    mono = nm.cnn_padding_report((3, 2), (2,), [0, 0, 1], [2, 0, 0, 0, 5])
    assert mono.fiber_degree is None and not mono.node


@pytest.mark.slow
@pytest.mark.parametrize("k, s", [((3, 2), (1,)), ((2, 2), (1,)), ((3, 3), (1,)), ((3, 3), (2,)), ((3, 3), (3,)),
                                  ((2, 2, 2), (1, 1)), ((2, 2, 2), (1, 2)), ((2, 2, 2), (2, 1)),
                                  ((2, 2, 2), (2, 2)), ((3, 2, 2), (2, 2))])
def test_cnn_singular_iff_movable_padding(k, s):
    assert all(ok for _, ok in _iff_holds(k, s))


def test_cnn_node_pair_worked_example():
    a, b = nm.cnn_node_pair((3, 2), (2,), 1)
    assert [int(v != 0) for v in a] == [0, 0, 1, 1, 0] and [int(v != 0) for v in b] == [1, 0, 0, 0, 1]
    c = nm.cnn_node_certificate((3, 2), (2,), [0, 1, 1])
    assert (c.dim, c.rank_a, c.rank_b, c.joint_rank) == (5, 5, 5, 8)
    assert c.same_function and c.distinct_params
    with pytest.raises(ValueError, match="do not fit"):
        nm.cnn_node_pair((2, 2), (2,), 1)


def test_subnetwork_distance_zero_at_subnetworks():

    assert float(nm.subnetwork_distance("mlp", (2, 2, 1), jnp.array([1., 2, 3, 4, 5, 0]))) == 0
    assert float(nm.subnetwork_distance("cnn", ((3, 2), (2,)), jnp.array([0., 2, 3, 4, 5]))) == 0
    assert float(nm.subnetwork_distance("cnn", ((3, 2), (2,)), jnp.array([1., 0, 3, 4, 5]))) > 0
    # both hidden neurons have |out_i| |in_i| = 1: exactly 1 / 2
    assert np.isclose(float(nm.subnetwork_distance("mlp", (2, 2, 1), jnp.array([1., 0, 1, 0, 1, 1]))), 0.5,
                      rtol=0, atol=0)


@pytest.mark.slow
def test_exact_and_numeric_ranks_agree_on_the_quick_grid():
    """All 351 MLPs with widths 1..3 and depths 2-4, four activations: float64 gap rank == F_p rank."""
    archs = nm.mlp_grid(3)
    for name in ("x3+x2", "generic cubic", "monomial x3", "quadratic"):
        cs = nm.ACTIVATIONS[name]
        num = nm.mlp_numeric_ranks(archs, cs, n_points=3, seed=0)
        assert [r.rank for r in num] == [nm.mlp_dimension(w, cs) for w in archs], name


def test_cnn_pattern_sweeps():
    """Thm 4.4 at every zero pattern of App. D's CNN: rank 5 = |k| exactly where no filter is zero."""
    ranks = nm.cnn_pattern_ranks((3, 2), (2,), [0, 1, 1], seed=0)
    off = [r for pat, r in ranks.items() if any(pat[:3]) and any(pat[3:])]
    on = [r for pat, r in ranks.items() if not (any(pat[:3]) and any(pat[3:]))]
    assert len(ranks) == 32 and len(off) == 21 and set(off) == {5} and max(on) < 5
    assert nm.cnn_sparse_full_rank([((3, 2), (2,)), ((2, 2), (1,))], [0, 1, 1], per_cnn=3) == (6, 6)
    assert nm.cnn_sparse_full_rank([((3, 2), (2,))], [0, 0, 1], per_cnn=3)[0] == 0  # monomial: rank 4
    # (2,2,2), s = (1,1): the padding moves through the middle layer only (the accumulated rule).
    assert not nm.two_layer_move((2, 2, 2), (1, 1), [0, 3, -2, 5, 7, 0])
    assert nm.two_layer_move((3, 2), (2,), [2, 0, 0, 0, 5])


def test_monomial_rescaling_bound_without_factorization_cuts():
    """Thm 4.1 for a monomial activation x^r: each hidden neuron's weights can be rescaled (in by c, out by
    c^-r) without changing f, so the dimension is at most N - sum of hidden widths; with cuts="none" that
    bound alone (capped by the ambient dimension) is the formula. N and the widths are typed in here."""
    for w, cs in (((3, 2, 1), (0, 0, 0, 1)), ((2, 2, 2, 1), (0, 0, 0, 1)), ((2, 2, 2), (0, 0, 0, 0, 1))):
        n = sum(a * b for a, b in zip(w[:-1], w[1:]))
        assert nm.expected_dimension("mlp", w, cs, cuts="none") == n - sum(w[1:-1])


def test_symbolic_and_architecture_edge_cases():
    """A constant network (activation 1) has the one coefficient 1 on the constant monomial; a CNN of one
    layer has no strides; a custom rational type registered as numbers.Rational converts exactly; a
    one-hidden-layer symmetry group of 13! elements is refused before enumerating it."""
    assert nm.coefficient_map("mlp", (1, 1, 1), [1], params=[1, 1])[:2] == ([(0, (0,))], [1])
    assert nm.check_cnn((3,), ()) == ((3,), ())
    assert nm.cnn_layer_sizes((3,), ()) == nm.cnn_layer_sizes((3,), (1,))  # a last stride is never used

    class Ratio:
        def __init__(self, p, q):
            self.numerator, self.denominator = p, q

    numbers.Rational.register(Ratio)
    assert nm.activation([0, Ratio(3, 4), 1]) == (0, F(3, 4), 1)
    with pytest.raises(ValueError, match="MAX_SYMMETRIES"):
        nm.mlp_symmetries((1, 13, 1), [1] * 26)

