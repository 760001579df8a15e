"""Neuromanifold statements that the mutation samples (``make mutate PAPER=neuromanifold``) found untested:
a constant network's numeric rank, the tangent spaces along a dead neuron's fiber, a filter's sign flip
before an even activation, the symbols of the symbolic networks, the fiber of an even activation, the
monomial basis, the CNN grid of the claims and the activation names. Expected values are worked out by
hand in each docstring (no call of the code under test builds them)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction as F

import pytest
import sympy as sp

from theory import neuromanifold as nm

X3X2 = [0, 0, 1, 1]


def test_numeric_rank_of_a_constant_network_is_one():
    """With the constant activation s = 1 the network computes the constant sum_j W2[0, j]: its
    neuromanifold is the line of constants (dimension 1), and the first layer's weights get a zero column
    in the Jacobian, which must be dropped, not divided by its zero norm (Thm 4.1's rank, read
    numerically)."""
    assert nm.numeric_rank("mlp", (2, 2, 1), [1], n_points=2).rank == 1
    reports = nm.mlp_numeric_ranks([(2, 2, 1), (3, 2, 2)], [1], n_points=2)
    # (3,2,2): two outputs, each a constant sum of its own row of W2: dimension 2.
    assert [r.rank for r in reports] == [1, 2]
    assert all(len(r.gaps) == 2 and min(r.gaps) > 6 for r in reports)  # log10 gap: a clean reading


@pytest.mark.parametrize("n_samples, stacked", [(20, 25), (26, 30)])
def test_dead_neuron_tangent_spaces_span_the_ambient_space(n_samples, stacked):
    """(4, 2, 1) with s = x^3 + x^2, neuron 0 dead (out-weight 0), live neuron (u, a). The tangent space at
    a fiber point (in-weights v of the dead neuron) is spanned by a s'(u.x) x_j (4), s(u.x) and s(v.x): rank
    6. Over the fiber the s(v_i.x) add one direction each until they fill V (scaling v separates
    (v.x)^3 from (v.x)^2, which span all cubics and quadratics): stacked rank min(5 + n_samples, dim V),
    dim V = C(6, 3) + C(5, 2) = 30 > N + 8 = 18, so the evaluation points must be as many as dim V
    (Thm 4.2's certificate, its rank read exactly)."""
    c = nm.dead_neuron_certificate((4, 2, 1), X3X2, 1, n_samples=n_samples)
    assert math.comb(6, 3) + math.comb(5, 2) == 30
    assert (c.dim, c.rank_at_point, c.stacked_rank, c.n_samples) == (10, 6, stacked, n_samples)
    assert c.singular


@pytest.mark.parametrize("k, s, theta, flipped", [
    ((3, 2), (2,), [1, 2, 3, 4, 5], [-1, -2, -3, 4, 5]),
    ((2, 3, 2), (1, 2), [1, 2, 3, 4, 5, 6, 7], [1, 2, -3, -4, -5, 6, 7])])
def test_filter_sign_flip_before_an_even_activation_keeps_the_function(k, s, theta, flipped):
    """s(t) = t^2 is even, so negating a filter whose layer is followed by s leaves f unchanged: the two
    points lie in one fiber (same_function), with one tangent space (the flip is a linear symmetry, so the
    joint rank is dim M = |k| - (L - 1), the filter rescalings of a monomial, Thm 4.4); a point listed
    twice counts once. With x^3 + x^2 (not even) the same flip changes the function, and so does negating
    the last filter (no activation after the last layer: f becomes -f). The 3-layer case flips the middle
    filter."""
    st = nm.fiber_stack("cnn", (k, s), [0, 0, 1], [theta, flipped, theta])
    dim = sum(k) - (len(k) - 1)
    assert st.same_function and st.ranks == (dim,) * 3 and st.joint_rank == dim and not st.singular
    assert st.n_points == 2
    assert not nm.fiber_stack("cnn", (k, s), X3X2, [theta, flipped]).same_function
    last_flipped = theta[:-k[-1]] + [-v for v in theta[-k[-1]:]]
    assert not nm.fiber_stack("cnn", (k, s), [0, 0, 1], [theta, last_flipped]).same_function


def test_default_symbols_of_the_symbolic_networks():
    """The parameters are named by 1-based layer, as the paper's W_1..W_L and k_1..k_L: W{l}_{i}_{j} (MLP,
    row i, column j) and w{l}_{m} (CNN). Two coefficients written out by hand: (2,2,1) with x^3 + x^2,
    coefficient of x0^3 = W2_0_0 W1_0_0^3 + W2_0_1 W1_1_0^3; App. D's CNN (3,2), s = 2, with x^2 + x,
    f = w2_0 s(w1 . x[0:3]) + w2_1 s(w1 . x[2:5]), coefficient of x2^2 = w2_0 w1_2^2 + w2_1 w1_0^2."""
    keys, vals, ps = nm.coefficient_map("mlp", (2, 2, 1), X3X2)
    W = {str(p): p for p in ps}
    assert list(W) == ["W1_0_0", "W1_0_1", "W1_1_0", "W1_1_1", "W2_0_0", "W2_0_1"]
    a, b, c, d = sp.symbols("W1_0_0 W1_1_0 W2_0_0 W2_0_1")
    assert sp.expand(dict(zip(keys, vals))[(0, (3, 0))] - (c * a**3 + d * b**3)) == 0
    keys, vals, ps = nm.coefficient_map("cnn", ((3, 2), (2,)), [0, 1, 1])
    assert [str(p) for p in ps] == ["w1_0", "w1_1", "w1_2", "w2_0", "w2_1"]
    w10, w12, w20, w21 = sp.symbols("w1_0 w1_2 w2_0 w2_1")
    assert sp.expand(dict(zip(keys, vals))[(0, (0, 0, 2, 0, 0))] - (w20 * w12**2 + w21 * w10**2)) == 0


def test_cnn_grid_is_every_listed_architecture_once():
    """The claims' CNN grid: 2 layers, filters in {2, 3}, stride 1..k_1 (2 * (2 + 3) = 10 nets), and 3
    layers, filters in {2, 3}, strides in {1, 2} (8 * 4 = 32), listed once each: 42 valid CNNs."""
    want = []
    for k1 in (2, 3):
        for k2 in (2, 3):
            want += [((k1, k2), (s1,)) for s1 in range(1, k1 + 1)]
            for k3 in (2, 3):
                want += [((k1, k2, k3), (s1, s2)) for s1 in (1, 2) for s2 in (1, 2)]
    grid = nm.cnn_grid()
    assert len(want) == 42 == len(grid) and sorted(grid) == sorted(want)
    assert all(nm.check_cnn(k, s) == (k, s) for k, s in grid)


@pytest.mark.parametrize("coeffs, var, name", [
    (X3X2, "x", "x^3 + x^2"), ([0, 0, 0, 1], "y", "y^3"), ([1, 1, 1], "x", "x^2 + x + 1"),
    ([F(1, 3), F(2, 7), F(-5, 4), 1], "y", "y^3 + (-5/4)y^2 + (2/7)y + 1/3"), ([0, 3], "t", "(3)t")])
def test_activation_names(coeffs, var, name):
    """poly_name: highest degree first, unit coefficients dropped, others in parentheses, the constant
    term as its value (the names the claims print for the activations)."""
    assert nm.poly_name(coeffs, var) == name


def test_fiber_of_an_even_activation_is_the_signed_symmetry_group():
    """(2, 2, 1) with the even activation t^4 + t^2: besides swapping the two hidden neurons, negating a
    neuron's incoming weights keeps f, so the generic fiber has 2! * 2^2 = 8 points (Thm 4.1's finite
    fibers, with the sign symmetries of an even activation); the Groebner count of the complex fiber finds
    exactly these 8, each a solution."""
    even = [0, 0, 1, 0, 1]
    w0 = [1, 2, -1, 3, 2, -3]
    rep = nm.fiber("mlp", (2, 2, 1), even, w0)
    assert rep.zero_dimensional and rep.degree == math.factorial(2) * 2**2 == 8
    pts = nm.mlp_symmetries((2, 2, 1), w0, signs=True)
    assert len(set(pts)) == 8 and all(nm.satisfies("mlp", (2, 2, 1), even, p, w0) for p in pts)


def test_monomial_basis_lists_each_monomial_of_each_degree_once():
    """(2, 3, 1) with x^3 + x^2: f has degrees {2, 3} in the d_0 = 2 inputs, so the basis is the 3 + 4
    exponent pairs of total degree 2 or 3 (enumerated here from a box), dim V = 7; (3, 2, 1) the same degrees
    in 3 inputs: 6 + 10 = 16 triples."""
    for widths, n in (((2, 3, 1), 7), ((3, 2, 1), 16)):
        d0 = widths[0]
        want = sorted(e for e in itertools.product(range(4), repeat=d0) if sum(e) in (2, 3))
        assert nm.monomial_basis("mlp", widths, X3X2) == want and len(want) == n


@pytest.mark.parametrize("k, s, q, fits", [
    ((3, 2), (2,), 1, True),      # s q = 2 < 3 leading zeros, q = 1 < 2 trailing zeros
    ((3, 3), (1,), 2, True),      # 2 < 3 and 2 < 3
    ((3, 2), (2,), 2, False),     # s q = 4 >= 3: the leading zeros fill the first filter
    ((4, 2), (1,), 2, False),     # q = 2 >= k_2 = 2: the trailing zeros fill the second filter
    ((4, 3), (1,), 0, False),     # q = 0: no shift, no pair
])
def test_cnn_node_pair_needs_the_padding_to_fit(k, s, q, fits):
    """cnn_node_pair (Thm 4.6's nodes): w_1 gets s_1 q leading zeros and w_2 q trailing zeros, so the pair
    exists iff s_1 q < k_1, 1 <= q < k_2; the two tuples differ and have those zeros."""
    if not fits:
        with pytest.raises(ValueError, match="padding"):
            nm.cnn_node_pair(k, s, 1, q)
        return
    t, tp = (list(map(int, a)) for a in nm.cnn_node_pair(k, s, 1, q))
    assert t != tp and t[:s[0] * q] == [0] * (s[0] * q) and t[sum(k) - q:] == [0] * q


def test_fiber_reports_its_groebner_time_as_a_duration():
    """FiberReport.seconds is the time the Groebner basis took (a duration, not a clock reading)."""
    rep = nm.fiber("mlp", (2, 2, 1), X3X2, [1, 2, -1, 3, 2, -3])
    assert 0 <= rep.seconds < 600
