"""theory.numerics against values it did not compute: exact ranks against sympy and a hand-written
elimination modulo p, the gap rank against singular values worked out by hand, standard errors against
exact rationals, primes against sympy (the seed-paired Student-t decision is tested in test_decisions.py).

Inputs are chosen where a plausible slip shows: floats that only look dependent (0.1 * 3 != 0.3), a
largest gap that is not the first large one, two seeds (t = 12.7, not 2), a bound met with equality.
"""

import math
from fractions import Fraction

import flint
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy

from sims import runtime
from theory import numerics as nx

EPS = 2.0**-52  # float64 machine epsilon, written out

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "one_rounding": (1e-15, "a float64 value and the same quantity rounded once more differ by at most one "
                            "unit in the last place, 2.2e-16 relative"),
    "few_roundings": (1e-14, "binomial_se's sqrt(p (1 - p) / n) takes four float64 roundings, at most "
                             "~9e-16 relative; a wrong formula (n - 1, a missing sqrt) is off by >= 1e-3"),
    "gap_ratio": (1e-12, "a singular-value ratio, recomputed from the same float64 singular values by a "
                         "differently ordered expression: a few roundings, far below the 1e3 spread of the "
                         "gaps a wrong index would pick"),
    "cholesky_rel": (1e-9, "Cholesky factors of two backward-stable implementations agree to about "
                           "sqrt(cond A) * p * eps; after the diagonal shift these A have cond <= ~1e4, so "
                           "<= 1e-12 relative, and a wrong pivot or a skipped row is O(1)"),
    "cholesky_abs": (1e-12, "for entries of L near zero, the same bound taken absolutely: entries are <= ~2, "
                            "so roundoff is below 2 * sqrt(1e4) * 7 * eps = 3e-13"),
    "backward_stable_factor": (10, "a backward-stable SPD solve errs by at most ~cond * p * eps relative; "
                                   "ten times that covers the constant of the bound (Higham, Thm 10.4)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


# ---------------------------------------------------------------------------------------------------
# Hand references
# ---------------------------------------------------------------------------------------------------


def rank_mod_p(rows, p):
    """Rank of an integer matrix modulo the prime p by Gaussian elimination (pure Python)."""
    a = [[int(v) % p for v in r] for r in rows]
    rank, col, m = 0, 0, len(a)
    ncols = len(a[0]) if a else 0
    while rank < m and col < ncols:
        piv = next((i for i in range(rank, m) if a[i][col]), None)
        if piv is None:
            col += 1
            continue
        a[rank], a[piv] = a[piv], a[rank]
        inv = pow(a[rank][col], p - 2, p)
        for i in range(m):
            if i != rank and a[i][col]:
                f = a[i][col] * inv % p
                a[i] = [(x - f * y) % p for x, y in zip(a[i], a[rank])]
        rank, col = rank + 1, col + 1
    return rank


def rank_qq(rows):
    """Rank over the rationals with sympy, each float taken exactly (sympy.Rational(float) is exact)."""
    return sympy.Matrix([[sympy.Rational(v) if isinstance(v, float) else sympy.Rational(str(v))
                          if isinstance(v, Fraction) else sympy.sympify(v) for v in r] for r in rows]).rank()


# ---------------------------------------------------------------------------------------------------
# to_fmpq
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("v, num, den", [
    (7, 7, 1), (np.int64(-3), -3, 1), (10**30, 10**30, 1),
    (0.1, 3602879701896397, 2**55),            # 0x3FB999999999999A
    (np.float32(0.1), 13421773, 2**27),       # 0x3DCCCCCD: float32 widened exactly, not re-rounded
    (0.5, 1, 2), (-2.75, -11, 4),
    (Fraction(3, 7), 3, 7), (sympy.Rational(-3, 7), -3, 7), (sympy.Integer(5), 5, 1),
    (flint.fmpq(2, 9), 2, 9),
])
def test_to_fmpq_is_exact(v, num, den):
    q = nx.to_fmpq(v)
    assert isinstance(q, flint.fmpq) and q == flint.fmpq(num, den)


def test_to_fmpq_takes_the_binary_value_not_the_decimal_one():
    assert nx.to_fmpq(0.1) != flint.fmpq(1, 10)
    assert nx.to_fmpq(0.1) * 3 != nx.to_fmpq(0.3)


@pytest.mark.skipif(np.finfo(np.longdouble).nmant <= 52, reason="long double is float64 on this platform")
def test_to_fmpq_long_double_is_exact():
    x = np.longdouble(1) / 3
    assert nx.to_fmpq(x) == flint.fmpq(*x.as_integer_ratio())


@pytest.mark.parametrize("v, exc", [
    (True, TypeError), (np.bool_(False), TypeError), ("1/2", TypeError), (1 + 2j, TypeError),
    (None, TypeError), (sympy.Float(1.5), TypeError),
    (float("nan"), ValueError), (float("inf"), ValueError), (np.float64(-np.inf), ValueError),
])
def test_to_fmpq_refuses(v, exc):
    with pytest.raises(exc):
        nx.to_fmpq(v)


# ---------------------------------------------------------------------------------------------------
# exact_rank
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("m, n, r", [(4, 5, 2), (5, 5, 5), (6, 3, 3), (3, 6, 1), (4, 4, 0), (5, 7, 3)])
def test_exact_rank_qq_on_integer_products_matches_sympy(m, n, r):
    rng = np.random.default_rng(100 * m + 10 * n + r)
    a = (rng.integers(-5, 6, (m, r)) @ rng.integers(-5, 6, (r, n))) if r else np.zeros((m, n), int)
    want = sympy.Matrix(a.tolist()).rank()
    assert want <= r
    assert nx.exact_rank(a) == want
    assert nx.exact_rank(a.tolist()) == want


def test_exact_rank_qq_takes_floats_exactly():
    # 3 * 0.1 != 0.3 in binary: rank 2 exactly, although decimally the rows are dependent
    assert nx.exact_rank([[0.1, 0.3], [1, 3]]) == rank_qq([[0.1, 0.3], [1, 3]]) == 2
    # 0.5 and 1.5 are dyadic: the rows are exactly dependent
    assert nx.exact_rank([[0.5, 1.5], [1, 3]]) == rank_qq([[0.5, 1.5], [1, 3]]) == 1
    # a difference of one ulp is rank 2 (a floating-point rank reads 1 here)
    near = [[1.0, 1.0], [1.0, 1.0 + EPS]]
    assert np.linalg.matrix_rank(np.array(near)) == 1
    assert nx.exact_rank(near) == 2


def test_exact_rank_qq_rationals():
    assert nx.exact_rank([[Fraction(1, 3), Fraction(1, 6)], [Fraction(2, 3), Fraction(1, 3)]]) == 1
    assert nx.exact_rank([[sympy.Rational(1, 3), 1], [1, 3]]) == 1
    off = sympy.Rational(3, 1) + sympy.Rational(1, 10**20)
    assert nx.exact_rank([[sympy.Rational(1, 3), 1], [1, off]]) == 2


def test_exact_rank_modp_matches_hand_elimination():
    rng = np.random.default_rng(7)
    seen = set()
    for p in (2, 3, 5, 7):
        for _ in range(40):
            a = rng.integers(-10, 11, (4, 5))
            if rng.random() < 0.5:  # plant a dependency over the integers
                a[3] = 2 * a[0] - a[1]
            want = rank_mod_p(a.tolist(), p)
            seen.add(want)
            assert nx.exact_rank(a, field="modp", p=p) == want, (p, a)
    assert len(seen) >= 3  # the random matrices did exercise several ranks


def test_exact_rank_modp_differs_from_qq_where_it_should():
    p = nx.PRIME
    assert nx.exact_rank([[p, 0], [0, 1]], field="modp") == 1
    assert nx.exact_rank([[p, 0], [0, 1]]) == 2
    assert nx.exact_rank([[1, 1], [1, -1]], field="modp", p=2) == 1  # -1 = 1 mod 2
    assert nx.exact_rank([[1, 1], [1, -1]], field="modp", p=3) == 2
    big = 2**64 + 1  # entries above int64 are reduced exactly
    assert nx.exact_rank([[big, 1], [1, 1]], field="modp", p=2) == rank_mod_p([[big, 1], [1, 1]], 2) == 1
    assert nx.exact_rank([[1, 2], [3, 6]], field="modp", p=2**61 - 1) == 1
    # each way in gives the same residues: numpy integers (int64 with negatives, uint64), numpy scalars in
    # an object array, Python ints in lists
    for a in (np.array([[p, -1], [-p, 1]]), np.array([[p, 2**63 + p], [0, 1]], np.uint64),
              np.array([[np.int64(p), np.int64(0)], [np.int64(0), np.int64(1)]], dtype=object)):
        assert nx.exact_rank(a, field="modp") == 1 and nx.exact_rank(a.tolist(), field="modp") == 1, a


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 0)])
def test_exact_rank_empty_is_zero(shape):
    assert nx.exact_rank(np.zeros(shape)) == 0


@pytest.mark.parametrize("field", ["QQ", "modp"])
def test_exact_rank_one_by_one(field):
    assert nx.exact_rank([[5]], field=field) == 1 and nx.exact_rank([[0]], field=field) == 0


@pytest.mark.parametrize("matrix, kw, exc", [
    ([1, 2, 3], {}, ValueError), (np.zeros((2, 2, 2)), {}, ValueError),
    ([[1.0, float("nan")]], {}, ValueError), ([[1.0, float("inf")]], {}, ValueError),
    ([[1, 2]], {"field": "ZZ"}, ValueError),
    ([[1.5, 2]], {"field": "modp"}, TypeError), ([[True, 2]], {"field": "modp"}, TypeError),
    ([[True, 2]], {}, TypeError), ([["a", 2]], {}, TypeError),
    ([[1, 2]], {"field": "modp", "p": 4}, ValueError), ([[1, 2]], {"field": "modp", "p": 2**31}, ValueError),
    ([[1, 2]], {"field": "modp", "p": 1}, ValueError), ([[1, 2]], {"field": "modp", "p": 7.0}, TypeError),
    ([[1, 2]], {"field": "modp", "p": 2**89 - 1}, ValueError),  # prime, but above flint's word size
])
def test_exact_rank_refuses(matrix, kw, exc):
    with pytest.raises(exc):
        nx.exact_rank(matrix, **kw)


# ---------------------------------------------------------------------------------------------------
# gap_rank
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("s, rank, gap", [
    ([10.0, 1.0, 1e-9], 2, 1e9),
    ([-1e-9, 10.0, 1.0], 2, 1e9),                   # any order, signs ignored
    ([1.0, 1e-3, 1e-12], 2, 1e9),                   # the largest gap, not the first large one (1e3)
    ([3.0, 2.0, 1.0], 3, 1 / (3 * EPS * 3)),        # full rank: s_3 against the floor s_1 eps n
    ([5.0], 1, 1 / EPS),
    ([1.0, 0.5, 0.0], 2, math.inf),                 # an exact zero next
    ([1.0, 1e-7, 1e-8, 1e-20], 3, 1e-8 / (4 * EPS * 1e-3)),  # 1e-20 lifted to the floor / 1000
    ([0.0, 0.0], 0, math.inf), ([], 0, math.inf),
])
def test_gap_rank_hand_values(s, rank, gap):
    r, g = nx.gap_rank(s)
    assert isinstance(r, int) and r == rank
    assert g == gap if math.isinf(gap) else g == pytest.approx(gap, rel=TOL["gap_ratio"])


def test_gap_rank_of_a_low_rank_product():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 3)) @ rng.standard_normal((3, 6))
    noise = rng.standard_normal(a.shape)
    r, g = nx.gap_rank(np.linalg.svd(a, compute_uv=False))
    assert r == 3 and g > 1e10
    s = np.linalg.svd(a + 1e-9 * noise, compute_uv=False)
    assert nx.gap_rank(s) == (3, pytest.approx(s[2] / s[3], rel=TOL["gap_ratio"]))  # the perturbation shows in the gap
    # noise at 1e-6: s_6 / (s_1 eps n) = 5e7 beats s_3 / s_4 = 8e5, so the largest gap says full rank;
    # callers must state the gap they require (docstring), the rank alone does not say "3 plus noise"
    s = np.linalg.svd(a + 1e-6 * noise, compute_uv=False)
    assert s[2] / s[3] < s[5] / (s[0] * EPS * 6)
    assert nx.gap_rank(s) == (6, pytest.approx(s[5] / (s[0] * EPS * 6), rel=TOL["gap_ratio"]))


def test_gap_rank_takes_exact_and_huge_values_as_float64():
    # Fractions and integers beyond int64 (object arrays without the float64 conversion) are ranked like
    # their float64 values
    assert nx.gap_rank([Fraction(1), Fraction(1, 10**9)]) == (1, pytest.approx(1e9, rel=TOL["one_rounding"]))
    assert nx.gap_rank([2**70, 2**10]) == (1, 2.0**60)


@pytest.mark.parametrize("bad", [[1.0, float("nan")], [float("inf"), 1.0]])
def test_gap_rank_refuses_non_finite(bad):
    with pytest.raises(ValueError):
        nx.gap_rank(bad)


# ---------------------------------------------------------------------------------------------------
# binomial_se, zero_count_upper
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p, n, exact", [
    (0.5, 100, sympy.Rational(1, 20)), (0.1, 900, sympy.Rational(1, 100)), (0.2, 4, sympy.Rational(1, 5)),
    (0.25, 3, sympy.Rational(1, 4)), (0.0, 10, 0), (1.0, 10, 0), (0.5, 1, sympy.Rational(1, 2)),
])
def test_binomial_se_exact(p, n, exact):
    want = float(sympy.sqrt(sympy.Rational(p) * (1 - sympy.Rational(p)) / n))
    assert want == pytest.approx(float(exact), rel=TOL["one_rounding"])
    assert nx.binomial_se(p, n) == pytest.approx(want, rel=TOL["few_roundings"], abs=0)


@pytest.mark.parametrize("p, n", [(-0.1, 10), (1.1, 10), (2.0, 10), (float("nan"), 10), (0.5, 0), (0.5, -3)])
def test_binomial_se_refuses(p, n):
    # the documented refusal, not math.sqrt's domain error (1 < p <= 2 would reach sqrt of a negative)
    with pytest.raises(ValueError, match="binomial_se needs"):
        nx.binomial_se(p, n)


def test_zero_count_upper_is_the_rule_of_three_and_covers_the_exact_bound():
    for n in (1, 10, 300, 12345):
        assert nx.zero_count_upper(n) == pytest.approx(3 / n, rel=TOL["one_rounding"])
    for n in range(1, 2001):
        exact = 1 - 0.05 ** (1 / n)  # the one-sided 95% Clopper-Pearson bound for 0 of n
        assert nx.zero_count_upper(n) >= exact
        if n >= 300:
            assert nx.zero_count_upper(n) <= 1.01 * exact
    for n in (0, -1):
        with pytest.raises(ValueError):
            nx.zero_count_upper(n)


# ---------------------------------------------------------------------------------------------------
# check_real, check_int, check_limit, check_prime
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("x, want", [
    (3, 3.0), (-2.5, -2.5), (Fraction(1, 3), 1 / 3), (sympy.Rational(1, 4), 0.25), (np.float32(0.5), 0.5),
    (np.array(2.0), 2.0), (jnp.array(3.0), 3.0), (np.int64(7), 7.0),
])
def test_check_real_accepts(x, want):
    v = nx.check_real(x, "x")
    assert type(v) is float and v == want


@pytest.mark.parametrize("x, exc", [
    (True, TypeError), (np.bool_(True), TypeError), (1 + 0j, TypeError), ("1", TypeError), (None, TypeError),
    (np.array([1.0]), TypeError), ([[1.0], [1.0, 2.0]], TypeError),   # a ragged list: no array, still a type
    (float("nan"), ValueError), (float("inf"), ValueError), (-math.inf, ValueError),
    (np.array(np.nan), ValueError),
])
def test_check_real_refuses(x, exc):
    with pytest.raises(exc, match="width"):
        nx.check_real(x, "width")


@pytest.mark.parametrize("x, bound, ok", [
    (0.0, {"gt": 0}, False), (1e-300, {"gt": 0}, True), (0.0, {"ge": 0}, True), (-1e-300, {"ge": 0}, False),
    (1.0, {"lt": 1}, False), (1.0, {"le": 1}, True), (1.0 + 2 * EPS, {"le": 1}, False),
    (0.5, {"gt": 0, "lt": 1}, True), (1.0, {"gt": 0, "lt": 1}, False), (float("nan"), {"gt": 0}, False),
])
def test_check_real_bounds(x, bound, ok):
    if ok:
        assert nx.check_real(x, "lr", **bound) == x
    elif math.isnan(x):
        with pytest.raises(ValueError, match="^lr must be finite"):
            nx.check_real(x, "lr", **bound)
    else:  # the message names the bound violated
        op, value = next((k, v) for k, v in bound.items()
                         if not {"gt": x > v, "ge": x >= v, "lt": x < v, "le": x <= v}[k])
        sign = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}[op]
        with pytest.raises(ValueError, match=f"^lr must be {sign} {value}, got "):
            nx.check_real(x, "lr", **bound)


def test_check_real_huge_integer_is_a_value_error():
    with pytest.raises(ValueError, match="x"):
        nx.check_real(10**400, "x")


@pytest.mark.parametrize("x", [3, np.int64(3), np.uint8(3), np.array(3), jnp.array(3), sympy.Integer(3)])
def test_check_int_accepts(x):
    v = nx.check_int(x, "k")
    assert type(v) is int and v == 3


@pytest.mark.parametrize("x", [3.0, np.float64(3.0), True, np.bool_(True), "3", Fraction(6, 2),
                               np.array(3.0), None, [[3], [3, 3]]])
def test_check_int_refuses_non_integers(x):
    with pytest.raises(TypeError, match="k"):
        nx.check_int(x, "k")


def test_check_int_bounds_are_inclusive():
    assert nx.check_int(2, "k", ge=2, le=2) == 2
    with pytest.raises(ValueError, match="k must be >= 2"):
        nx.check_int(1, "k", ge=2)
    with pytest.raises(ValueError, match="k must be <= 2"):
        nx.check_int(3, "k", le=2)


def test_check_limit():
    nx.check_limit(10, 10, "MAX_N", "the count")  # equal to the limit is allowed
    nx.check_limit(-1, 10, "MAX_N", "the count")
    for count in (11, 10.5, float("nan"), math.inf):
        with pytest.raises(ValueError, match="MAX_N") as e:
            nx.check_limit(count, 10, "MAX_N", "the number of paths")
        assert "the number of paths" in str(e.value)
    with pytest.raises(ValueError, match="12,345,678.*MAX_N = 1,000"):
        nx.check_limit(12_345_678, 1000, "MAX_N", "x")
    with pytest.raises(ValueError, match=r"^x is 1\.5e\+20, above the limit MAX_N = 1,000$"):  # a float count
        nx.check_limit(1.5e20, 1000, "MAX_N", "x")
    with pytest.raises(ValueError, match=r"^x is 1\.235e\+04, above"):  # 4 significant digits, not 12,345.678
        nx.check_limit(12345.678, 1000, "MAX_N", "x")


def test_check_prime_against_sympy():
    for p in range(-3, 300):
        if sympy.isprime(p):
            assert nx.check_prime(p, below=2**31) == p
        else:
            with pytest.raises(ValueError):
                nx.check_prime(p, below=2**31)


@pytest.mark.parametrize("p, below, ok", [
    (561, 2**31, False), (41041, 2**31, False),  # Carmichael numbers
    (2**31 - 1, 2**31, True), (2**31 - 1, 2**31 - 1, False),  # `below` is exclusive
    (2**61 - 1, 2**63, True), ((2**31 - 1) * (2**61 - 1), 2**100, False), (np.int64(7), 8, True),
])
def test_check_prime_cases(p, below, ok):
    if ok:
        assert nx.check_prime(p, below=below) == int(p)
    else:
        with pytest.raises(ValueError):
            nx.check_prime(p, below=below)


def test_check_prime_names_its_argument():
    with pytest.raises(ValueError, match="^p must be a prime, got 9"):
        nx.check_prime(9, below=100)
    with pytest.raises(ValueError, match="^modulus must be a prime below"):
        nx.check_prime(101, "modulus", below=100)


@pytest.mark.parametrize("p", [7.0, "7", True])
def test_check_prime_refuses_non_integers(p):
    with pytest.raises(TypeError):
        nx.check_prime(p, below=100)


# ---------------------------------------------------------------------------------------------------
# float64
# ---------------------------------------------------------------------------------------------------


def test_float64_scope_whatever_the_process_setting():
    tiny = 2.0**-40  # lost next to 1 in float32 (eps 2^-23), kept in float64
    with jax.enable_x64(False):
        assert jnp.array(1.0).dtype == jnp.float32
        assert float(jnp.array(1.0) + tiny) == 1.0
        with nx.float64():
            assert jnp.array(1.0).dtype == jnp.float64
            assert float(jnp.array(1.0) + tiny) == 1.0 + tiny
        assert jnp.array(1.0).dtype == jnp.float32  # restored on exit


# --------------------------------------------------------------------------------------------------
# Linear algebra under vmap: expected values from LAPACK (numpy), a different implementation.
# --------------------------------------------------------------------------------------------------

def _spd(rng, p, cond=1.0):
    q, _ = np.linalg.qr(rng.normal(size=(p, p)))
    return (q * np.geomspace(1.0, 1.0 / cond, p)) @ q.T + np.diag(rng.uniform(0, 0.1, p))


@pytest.mark.parametrize("p", [1, 2, 5, 7])
def test_cholesky_and_solves_match_lapack(p):
    rng = np.random.default_rng(p)
    A = np.stack([_spd(rng, p, cond) for cond in (1.0, 1e3, 1e6)])            # [3, p, p]
    b = rng.normal(size=(3, p)) * 3.0
    L, ok = jax.jit(jax.vmap(nx.cholesky))(jnp.asarray(A))
    np.testing.assert_allclose(np.asarray(L), np.linalg.cholesky(A), rtol=TOL["cholesky_rel"], atol=TOL["cholesky_abs"])
    assert np.all(np.asarray(ok))
    want = np.linalg.solve(A, b[..., None])[..., 0]
    x = jax.jit(jax.vmap(nx.spd_solve))(jnp.asarray(A), jnp.asarray(b))
    y = jax.jit(jax.vmap(nx.chol_solve))(L, jnp.asarray(b))
    for cond, got, got2, ref in zip((1.0, 1e3, 1e6), np.asarray(x), np.asarray(y), want):
        # a backward-stable solve: relative error at most ~ cond * p * eps (1e-10 at cond 1e6, p 7)
        tol = TOL["backward_stable_factor"] * cond * p * np.finfo(float).eps
        assert np.linalg.norm(got - ref) <= tol * np.linalg.norm(ref)
        assert np.linalg.norm(got2 - ref) <= tol * np.linalg.norm(ref)


def test_cholesky_reads_only_the_lower_triangle():
    rng = np.random.default_rng(1)
    A = _spd(rng, 4)
    B = A + np.triu(rng.normal(size=(4, 4)), 1)                                # garbage above the diagonal
    np.testing.assert_array_equal(np.asarray(nx.cholesky(jnp.asarray(B))[0]), np.asarray(nx.cholesky(jnp.asarray(A))[0]))


@pytest.mark.parametrize("diag, pd", [([1.0, 2.0, -2.0, 3.0], False), ([1.0, 2.0, 0.0, 3.0], False),
                                      ([2.0, 1.0, 3.0, 1e-300], True), ([-1.0, 2.0, 3.0, 4.0], False)])
def test_indefinite_or_singular_is_flagged_and_solves_to_nan(diag, pd):
    A = jnp.asarray(np.diag(diag))
    assert bool(nx.cholesky(A)[1]) == pd
    x = np.asarray(nx.spd_solve(A, jnp.ones(4)))
    assert np.all(np.isfinite(x)) if pd else np.all(np.isnan(x))


def test_pd_above_brackets_the_smallest_eigenvalue():
    rng = np.random.default_rng(2)
    A = np.stack([_spd(rng, 5, c) for c in (1.0, 10.0, 100.0)])
    lam = np.linalg.eigvalsh(A)[:, 0]
    f = jax.jit(jax.vmap(nx.pd_above))
    assert np.all(np.asarray(f(jnp.asarray(A), jnp.asarray(lam * (1 - 1e-6)))))
    assert not np.any(np.asarray(f(jnp.asarray(A), jnp.asarray(lam * (1 + 1e-6)))))


def test_pd_above_works_in_the_dtype_of_a():
    """pd_above forms A - c I in A's own dtype (the vmap-safe helpers keep their input's precision): for
    a float32 identity and a Python-float c = 1 - 1e-10, c rounds to 1 in float32, so A - c I is exactly 0
    and not certified, while a float64 identity (A - c I = 1e-10 I) is. Guards the identity built in
    the default float64 instead, which promotes the float32 A and certifies it."""
    c = 1.0 - 1e-10
    assert np.float32(c) == np.float32(1.0)
    assert not bool(nx.pd_above(jnp.eye(3, dtype=jnp.float32), c))
    assert bool(nx.pd_above(jnp.eye(3, dtype=jnp.float64), c))


def _compiler_options(jitted, *args) -> dict:
    # the options a top-level call compiles with (jax's traced-call parameters; make_jaxpr cannot show
    # them: it traces the call as a nested jit, which jax refuses compiler options for)
    return dict(jitted.trace(*args)._params["compiler_options_kvs"])


def test_loop_jit_compiles_at_the_heavy_level_and_is_the_runtimes_option(monkeypatch):
    """loop_jit passes XLA's level 2 to its compile (in this CPU-only test process the default is level 0,
    sims.xla.CPU_OPT_FLAGS), the same level sims.runtime.jit gives a heavy function, and computes what the
    function computes: a scan's sum of 0..9. On an accelerator it leaves XLA's defaults, as runtime.jit
    does there."""
    f = nx.loop_jit(lambda x: jax.lax.scan(lambda c, i: (c + i, None), x, jnp.arange(10))[0])
    assert _compiler_options(f, 0) == {"xla_backend_optimization_level": 2}
    assert _compiler_options(jax.jit(lambda x: x), 0) == {}
    assert int(f(0)) == 45
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    assert _compiler_options(f, 0) == {}
    level = "xla_backend_optimization_level"
    assert runtime._HEAVY_COMPILE[level] == nx.HEAVY_COMPILE[level] == 2
