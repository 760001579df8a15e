"""Neuromanifold functions against independent references (issue 23): hand-written loops for the JAX
networks and the subnetwork distance, an evaluation of every claimed symmetry in exact arithmetic, and
the paper's counts written out. General inputs: unequal neurons, several filters, non-unit strides.
float64 for the JAX parts (tests/conftest.py)."""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction as F

import jax.numpy as jnp
import numpy as np
import pytest

from theory import neuromanifold as nm
from theory.neuromanifold import ranks

X3X2 = [0, 0, 1, 1]

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "network_f64_rel": (1e-12, "float64 forward passes with small integer weights and inputs and activation "
                               "coefficients rounded once (1/3, -2/5, 1/2, -1/3: 1.1e-16 relative): a few eps "
                               "times the cancellation in the sums, measured 7.3e-15 elementwise on outputs "
                               "from 0.71 to 3.1e9"),
    "network_f64_abs": (1e-12, "a floor for outputs below ~1, where the rounding is ~eps of O(1) values "
                               "(measured 1.1e-16 at the smallest output, 0.71); no output here is 0"),
    "norm_ratio_f64": (1e-12, "a ratio of products of 2- and 3-term float64 norms (math.hypot against "
                              "jnp.linalg.norm): a few roundings of 1.1e-16 (measured 0)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _sigma(cs, z):
    return sum(c * z**i for i, c in enumerate(cs))


def _mlp_loop(theta, x, widths, cs):
    """f_W(x) with explicit loops: W_l of shape (d_l, d_{l-1}) read row-major from theta."""
    h, i = list(x), 0
    for l in range(1, len(widths)):
        rows, cols = widths[l], widths[l - 1]
        W = [[theta[i + r * cols + c] for c in range(cols)] for r in range(rows)]
        i += rows * cols
        h = [sum(W[r][c] * h[c] for c in range(cols)) for r in range(rows)]
        if l < len(widths) - 1:
            h = [_sigma(cs, z) for z in h]
    return h


def _cnn_loop(theta, x, k, s, cs):
    """Valid 1-D convolution down to one output: (conv z)_j = sum_m w[m] z[s j + m]."""
    h, i = list(x), 0
    for l, kk in enumerate(k):
        w = theta[i:i + kk]
        i += kk
        st = s[l] if l < len(s) else 1
        n_out = (len(h) - kk) // st + 1
        h = [sum(w[m] * h[st * j + m] for m in range(kk)) for j in range(n_out)]
        if l < len(k) - 1:
            h = [_sigma(cs, z) for z in h]
    assert len(h) == 1
    return h[0]


@pytest.mark.parametrize("kind, shape, act", [("mlp", (3, 2, 4, 2), [F(1, 3), F(-2, 5), 1]),
                                              ("cnn", ((3, 2, 2), (2, 1)), [F(1, 2), 0, F(-1, 3), 1]),
                                              ("cnn", ((2, 3), (2,)), X3X2)])
def test_jax_networks_equal_loops_in_exact_arithmetic(kind, shape, act):
    """The JAX forward pass against loops in Fractions at integer points. Outputs reach |f| ~ 3e9 (the CNN
    with x^3 + x^2, measured), so the relative tolerance sets the scale: a transposed weight, a flipped filter
    or a stride changes an output by far more than 1e-12 of it."""
    rng = np.random.default_rng(7)
    if kind == "mlp":
        n, d0 = sum(a * b for a, b in itertools.pairwise(shape)), shape[0]
    else:
        n, d0 = sum(shape[0]), nm.cnn_layer_sizes(*shape)[0]
    theta = [int(t) for t in rng.integers(-3, 4, size=n)]
    X = rng.integers(-2, 3, size=(5, d0))
    cs = [F(c) for c in act]
    want = np.array([(_mlp_loop(theta, list(map(int, x)), shape, cs) if kind == "mlp"
                      else [_cnn_loop(theta, list(map(int, x)), *shape, cs)]) for x in X], dtype=float)
    got = np.asarray(nm.network_apply(kind, shape, act)(jnp.asarray(theta, float), jnp.asarray(X, float)))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=TOL["network_f64_rel"],
                               atol=TOL["network_f64_abs"])


def test_cnn_layer_sizes_by_counting_windows():
    """d_{l-1} is the smallest input whose valid strided convolution has d_l outputs: counted directly."""
    for k, s in [((3, 2), (2,)), ((4, 3, 2), (3, 2)), ((2, 2, 2, 2), (1, 2, 2)), ((5, 3), (3,))]:
        d = nm.cnn_layer_sizes(k, s)
        assert d[-1] == 1
        for l in range(len(k)):
            st = s[l] if l < len(s) else 1
            assert min(m for m in range(1, 200) if (m - k[l]) // st + 1 == d[l + 1] and m >= k[l]) == d[l]


def test_subnetwork_distance_by_loops():
    """MLP: min_i |out_i| |in_i| / sum_i over the last hidden layer; CNN: min over filter ends of
    |w_end| / |w|. Unequal neurons so that min, mean and max differ (errors above 1e-12 are seen)."""
    widths = (2, 3, 1)
    theta = [1.0, 2.0, -0.5, 0.25, 3.0, -1.0, 2.0, -1.5, 0.5]
    W1 = [theta[0:2], theta[2:4], theta[4:6]]
    out = theta[6:9]
    s = [abs(o) * math.hypot(*row) for o, row in zip(out, W1)]
    want = min(s) / sum(s)
    assert float(nm.subnetwork_distance("mlp", widths, jnp.array(theta))) == pytest.approx(
        want, rel=TOL["norm_ratio_f64"])
    assert want < 0.2 < max(s) / sum(s)
    k, th = (3, 2), [0.5, 2.0, -1.0, 3.0, -0.25]
    ends = [abs(0.5), abs(-1.0)]
    ends = [e / math.sqrt(0.25 + 4 + 1) for e in ends] + [x / math.hypot(3.0, 0.25) for x in (3.0, 0.25)]
    assert float(nm.subnetwork_distance("cnn", (k, (2,)), jnp.array(th))) == pytest.approx(
        min(ends), rel=TOL["norm_ratio_f64"])


def test_sign_symmetries_keep_the_function_of_an_even_activation():
    """(2, 2, 1) with s(t) = t^4 + t^2 (even): the permutations and hidden sign flips give 2! * 2^2 = 8
    points, each computing the same function (checked by loops in Fractions at 6 points); an odd
    activation (t^3 + t^2) is not invariant under the flips, so they must be the only new points."""
    w0 = [1, 2, -1, 3, 2, -3]
    even = [0, 0, 1, 0, 1]
    pts = nm.mlp_symmetries((2, 2, 1), w0, signs=True)
    assert len(pts) == 8 == math.factorial(2) * 2**2 and len(set(pts)) == 8
    xs = [(1, 2), (-3, 1), (2, -1), (0, 1), (5, 3), (-2, -7)]
    ref = [_mlp_loop(w0, x, (2, 2, 1), [F(c) for c in even]) for x in xs]
    for p in pts:
        assert [_mlp_loop(list(p), x, (2, 2, 1), [F(c) for c in even]) for x in xs] == ref
    assert sorted(nm.mlp_symmetries((2, 2, 1), w0)) == sorted([tuple(w0), (-1, 3, 1, 2, -3, 2)])
    flipped = [-1, -2, -1, 3, 2, -3]
    assert _mlp_loop(flipped, (1, 2), (2, 2, 1), [F(c) for c in X3X2]) != \
        _mlp_loop(w0, (1, 2), (2, 2, 1), [F(c) for c in X3X2])


def test_ambient_dimension_by_counting_monomials():
    """dim V counted directly: for (d0, h, 1) with s of exponents E, the degrees are E (one activation);
    (d0, h, h, 1): the sums of e copies of E over e in E. Count the monomials of each degree in d0 variables
    by enumeration (no binomial formula)."""
    def count(d0, t):
        return sum(1 for c in itertools.product(range(t + 1), repeat=d0) if sum(c) == t)
    for widths, act, degrees in [((3, 2, 1), X3X2, {2, 3}), ((2, 2, 2, 1), X3X2, {4, 5, 6, 7, 8, 9}),
                                 ((3, 4, 2), [1, 0, 0, 1], {0, 3}), ((2, 3, 3, 1), [0, 1, 0, 0, 1], {1, 4, 7, 10, 13, 16}),
                                 ((2, 2, 2, 1), [0, 0, 1], {4})]:
        want = widths[-1] * sum(count(widths[0], t) for t in degrees)
        assert nm.mlp_ambient_dimension(widths, act) == want, widths


def test_expected_dimension_paper_counts():
    """Thm 4.1/4.4 counts written out: N = sum d_l d_{l-1}, minus the hidden widths for a monomial
    activation; |k| minus (L - 1) filter rescalings for a monomial CNN (|k| for a generic one)."""
    assert nm.expected_dimension("mlp", (3, 5, 4, 2), [0, 0, 0, 0, 0, 1]) == 15 + 20 + 8 - 9
    assert nm.expected_dimension("cnn", ((3, 3, 2, 2), (1, 2, 1)), [0, 0, 0, 1]) == 10 - 3
    assert nm.expected_dimension("cnn", ((3, 3, 2, 2), (1, 2, 1)), [F(1, 2), 1, 0, 1]) == 10


def _shift_orbit(k, s, theta, n_x=6):
    """Every filter tuple obtained by sliding each filter within its zero padding (filter l moved by delta_l,
    the entries that fall off must be zero) that computes the same function, checked by loops in Fractions
    at random integer inputs with the generic activation 2 t^2 + t + 1/3: the definition, not the
    integrality rule the module derives from it."""
    cs = [F(1, 3), F(1), F(2)]
    d0 = nm.cnn_layer_sizes(k, s)[0]
    rng = np.random.default_rng(11)
    xs = [list(map(int, rng.integers(-9, 10, size=d0))) for _ in range(n_x)]
    ref = [_cnn_loop(list(theta), x, k, s, cs) for x in xs]
    offs = np.cumsum((0,) + k)
    filters = [list(theta[a:b]) for a, b in itertools.pairwise(offs)]
    out = set()
    for delta in itertools.product(*[range(-kk + 1, kk) for kk in k]):
        new = []
        for w, dl in zip(filters, delta):
            moved = [w[m - dl] if 0 <= m - dl < len(w) else 0 for m in range(len(w))]
            if sorted(map(abs, moved)) != sorted(map(abs, w)):  # a nonzero entry fell off
                break
            new += moved
        else:
            if [_cnn_loop(new, x, k, s, cs) for x in xs] == ref:
                out.add(tuple(new))
    return out


@pytest.mark.parametrize("k, s, theta", [((2, 2, 2), (1, 2), (0, 1, 0, 7, 9, 0)),
                                         ((3, 2, 2), (2, 2), (0, 0, 8, 0, 7, 2, 0)),
                                         ((3, 2, 2), (1, 2), (0, 0, 5, 0, 4, 9, 0)),
                                         ((3, 2), (2,), (5, 0, 0, 0, 7))])
def test_padding_orbit_equals_the_shifts_that_keep_the_function(k, s, theta):
    """Non-unit strides after a stride-1 layer: a shift passes a layer only when the accumulated shift (not
    the layer's own) is divisible by its stride (Thm 4.6's integrality condition)."""
    orbit = nm.cnn_padding_orbit(k, s, theta)
    assert set(orbit) == _shift_orbit(k, s, theta) and len(orbit) == len(set(orbit)) >= 2


@pytest.mark.parametrize("kind, shape, act", [("cnn", ((3, 2), (2,)), [0, 1, 1]), ("cnn", ((2, 2, 2), (1, 1)), X3X2),
                                              ("mlp", (2, 2, 2, 1), [1, 0, 1]), ("mlp", (2, 3, 1), X3X2)])
def test_output_degree_is_the_degree_of_the_expanded_network(kind, shape, act):
    """r^(L-1), read off the loops above run on sympy symbols at random integer weights (the size limits
    MAX_DEGREE and MAX_QQ_DEGREE are checked against this degree)."""
    import sympy as sp

    d0 = shape[0] if kind == "mlp" else nm.cnn_layer_sizes(*shape)[0]
    n = sum(a * b for a, b in itertools.pairwise(shape)) if kind == "mlp" else sum(shape[0])
    xs = sp.symbols(f"x0:{d0}")
    theta = [int(t) for t in np.random.default_rng(3).integers(1, 6, size=n)]
    cs = [sp.Integer(c) for c in act]
    f = _mlp_loop(theta, xs, shape, cs)[0] if kind == "mlp" else _cnn_loop(theta, xs, *shape, cs)
    assert sp.Poly(sp.expand(f), *xs).total_degree() == nm.output_degree(kind, shape, act)


def test_generic_ranks_random_points_are_drawn_once_per_net_and_seed():
    """generic_rank's points do not depend on the activation: a net's points for a seed are kept for the next
    activation (read-only, the same draws as random.Random(seed) in turn), never for seed None (fresh draws
    each call, as before the cache)."""
    pts = ranks._random_points("mlp", (2, 3, 1), 5, "modp", nm.PRIME, 17, 2, 2 * (9 + 17 * 2))
    assert pts is ranks._random_points("mlp", (2, 3, 1), 5, "modp", nm.PRIME, 17, 2, 2 * (9 + 17 * 2))
    assert not pts[0][0].flags.writeable and not pts[1][1].flags.writeable
    rng = random.Random(5)
    for theta, X in pts:  # the draws random_point makes from one generator, in turn
        t2, x2 = nm.random_point("mlp", (2, 3, 1), rng, n_eval=17)
        assert theta.tolist() == t2.tolist() and X.tolist() == x2.tolist()
    fresh = [ranks._random_points("mlp", (2, 3, 1), None, "modp", nm.PRIME, 17, 1, 9 + 17 * 2)[0][0]
             for _ in range(2)]
    assert fresh[0].tolist() != fresh[1].tolist()
