"""claims.decisions, the ledger's one decision rule, against values it did not compute: the verdict
truth table written out by hand, Student-t margins from a loop and ``scipy.stats.t``, Wilson bounds from
their formula, z-tests at exactly their critical value, and non-finite inputs that must never "hold".
"""

import dataclasses
import math
from fractions import Fraction

import flint
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.stats

from claims import decisions as D
from claims import ledger

H, F, I = "holds", "fails", "inconclusive"

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "mean_rel": (1e-12, "the mean of <= 40 doubles by a Python loop against statsmodels' numpy sum: the loop's "
                        "worst case (n - 1) u sum|d| / |sum d| is 1.3e-13 for the 40 normal draws (small mean, "
                        "wide spread) and <= 3.1e-15 for the other lists; measured 9.4e-16"),
    "mean_abs": (1e-15, "an absolute floor for a mean near 0: the loop's rounding is <= (n - 1) u sum|d| / n, "
                        "1.5e-17 for the eight differences of mean 0.005; measured max 2.1e-17 over the lists"),
    "t_interval_rel": (1e-9, "margins and critical values from statsmodels' t interval ((mean - lo) / se) against "
                             "the hand loop and scipy's t quantile, or tan(0.475 pi) (condition ~19) for 1 degree "
                             "of freedom: a few roundings, the subtraction cancelling at most a factor ~2 here; "
                             "measured max 9.9e-16 relative"),
    "margin_abs": (1e-12, "an absolute floor for a margin gap / se that cancels near 0: gap is rounded to "
                          "<= 1.1e-16 x 5.3 and se >= 0.0087 here, so < 7e-14; measured max 4.4e-16 absolute"),
    "same_formula_rel": (1e-12, "code and test evaluate the same float64 expression (norm.ppf((1 + level) / 2), "
                                "(p - 1/2) / sqrt(p (1 - p) / n), and gap / se on [1, 3] where mean 2 and SE 1 "
                                "are exact): a few roundings at most; measured 0"),
    "interval_end_probe": (1e-9, "a threshold placed this far (times max(1, |end|)) inside or outside an interval "
                                 "end: the hand ends agree with statsmodels' to 2.2e-16 (Wilson) and 5.6e-17 "
                                 "(Student t), measured, so the probe is unambiguously on its side"),
    "three_significant_digits": (5e-3, "the TOST p-value is printed with '.3g': rounding to three significant "
                                       "digits is off by <= 0.5 in the third digit, <= 5e-3 relative; measured "
                                       "max 2.6e-3"),
    "quoted_4_decimals": (1e-4, "Wilson's upper end for 0 of 20 at 95% is 0.16113, quoted as 0.1611 (2.5e-5 off)"),
    "z_score_roundoff": (1e-12, "|estimate| / se and z - |estimate| / se of short decimals (0.76 / 0.1): one or two "
                                "roundings of values <= 7.6, <= 2e-15; measured 0"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def dec(verdict, name="d"):
    return D.Decision(name, verdict)


def ctl(verdict):
    return D.Control("case", dec(verdict, "control"))


# ---------------------------------------------------------------------------------------------------
# Decision, Control
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["maybe", "Holds", "holds ", None, True, "error"])
def test_decision_refuses_unknown_outcomes(bad):
    with pytest.raises(ValueError):
        D.Decision("x", bad)


def test_decision_is_frozen_with_empty_defaults():
    d = D.Decision("x", H)
    assert (d.statistic, d.threshold, d.margin_se, d.critical, d.test) == (None, None, None, None, "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.decision = F


@pytest.mark.parametrize("verdict, rejected", [(F, True), (I, False), (H, False)])
def test_a_control_is_rejected_exactly_when_its_decision_fails(verdict, rejected):
    assert ctl(verdict).rejected is rejected


@pytest.mark.parametrize("bad", ["fails", {"decision": "fails"}, None, ("d", "fails")])
def test_a_control_needs_a_decision(bad):
    with pytest.raises(TypeError):
        D.Control("case", bad)


def test_ledger_uses_these_constructors():
    for name in ("Decision", "Control", "verdict_of", "exact", "compare", "check", "ztest", "paired",
                 "proportion"):
        assert getattr(ledger, name) is getattr(D, name)


# ---------------------------------------------------------------------------------------------------
# verdict_of: the full truth table
# ---------------------------------------------------------------------------------------------------

OWN = {"none": [], "all hold": [H, H], "one inconclusive": [H, I], "one fails": [H, F]}
CONTROLS = {"none": [], "all fail": [F, F], "one inconclusive": [F, I], "one holds": [F, H]}
TABLE = {  # written by hand from the rule: own fails > own undecided/none > controls
    ("none", "none"): I, ("none", "all fail"): I, ("none", "one inconclusive"): I, ("none", "one holds"): I,
    ("all hold", "none"): H, ("all hold", "all fail"): H, ("all hold", "one inconclusive"): I,
    ("all hold", "one holds"): F,
    ("one inconclusive", "none"): I, ("one inconclusive", "all fail"): I,
    ("one inconclusive", "one inconclusive"): I, ("one inconclusive", "one holds"): I,
    ("one fails", "none"): F, ("one fails", "all fail"): F, ("one fails", "one inconclusive"): F,
    ("one fails", "one holds"): F,
}


@pytest.mark.parametrize("own, controls", sorted(TABLE))
def test_verdict_of_truth_table(own, controls):
    got = D.verdict_of([dec(v) for v in OWN[own]], [ctl(v) for v in CONTROLS[controls]])
    assert got == TABLE[own, controls]


@pytest.mark.parametrize("own, controls, want", [
    ([F, I], [], F),                 # a failure outranks an undecided test
    ([I, F, H], [ctl(H)], F),
    ([H], [ctl(H), ctl(I)], F),      # a control accepted outright: the test cannot tell claim from negation
    ([H], [ctl(I), ctl(I)], I),
    ([H], [ctl(F)] * 5, H),
    ([H, H, H], (ctl(F),), H),       # tuples as well as lists
])
def test_verdict_of_mixed(own, controls, want):
    assert D.verdict_of(tuple(dec(v) for v in own), controls) == want


def test_an_inconclusive_control_never_lets_a_claim_hold():
    c = ctl(I)
    assert not c.rejected
    assert D.verdict_of([dec(H)], [c]) != H


# ---------------------------------------------------------------------------------------------------
# exact, compare, check
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("measured, expected, want", [
    (3, 3, H), (3, 4, F), (Fraction(1, 3), Fraction(2, 6), H), (Fraction(1, 3), 0.3333333333333333, F),
    ((2, 3), (2, 3), H), ((2, 3), (3, 2), F), (flint.fmpq(1, 3), flint.fmpq(1, 3), H),
    (np.array([1, 2, 3]), np.array([1, 2, 3]), H), (np.array([1, 2, 3]), np.array([1, 2, 4]), F),
    (np.int64(5), 5, H), (0.1 + 0.2, 0.3, F),
])
def test_exact(measured, expected, want):
    d = D.exact("rank", measured, expected)
    assert d.decision == want and d.margin_se is None and d.critical is None
    assert d.statistic is measured and d.threshold is expected


def test_exact_nan_never_holds():
    assert D.exact("x", float("nan"), float("nan")).decision != H
    assert D.exact("x", np.array([1.0, np.nan]), np.array([1.0, np.nan])).decision != H


@pytest.mark.parametrize("measured, expected", [(np.array([]), np.array([5])), (np.zeros(0), 7)])
def test_exact_empty_array_does_not_equal_a_value(measured, expected):
    assert D.exact("ranks", measured, expected).decision != H


OPS_TABLE = {  # value vs threshold: below, equal, above
    "<": (H, F, F), "<=": (H, H, F), ">": (F, F, H), ">=": (F, H, H), "==": (F, H, F),
}


@pytest.mark.parametrize("op", sorted(OPS_TABLE))
@pytest.mark.parametrize("values", [(0.5, 1.0, 1.5), (Fraction(1, 4), Fraction(2, 6), Fraction(1, 2)),
                                    (2, 3, 4)])
def test_compare_operators(op, values):
    below, equal, above = values
    threshold = equal
    got = tuple(D.compare("x", v, op, threshold).decision for v in (below, equal, above))
    assert got == OPS_TABLE[op]
    d = D.compare("x", below, op, threshold)
    assert d.statistic == below and d.threshold == threshold and d.margin_se is None


@pytest.mark.parametrize("op", ["!=", "=", "lt", "=>"])
def test_compare_refuses_unknown_operators(op):
    with pytest.raises(ValueError):
        D.compare("x", 1.0, op, 2.0)


@pytest.mark.parametrize("value", [float("nan"), math.inf, -math.inf, np.float64(np.inf), np.float64(np.nan)])
@pytest.mark.parametrize("op", sorted(OPS_TABLE))
def test_compare_non_finite_float_is_inconclusive(value, op):
    assert D.compare("x", value, op, 1.0).decision == I


@pytest.mark.parametrize("value", [np.float32(np.inf), np.array(np.inf), jnp.array(jnp.inf),
                                   np.float32(np.nan)])
def test_compare_non_finite_array_scalar_is_inconclusive(value):
    assert D.compare("x", value, ">", 5.0).decision == I


@pytest.mark.parametrize("value", [np.float32(np.nan), np.array(np.nan), jnp.array(jnp.nan), float("nan")])
@pytest.mark.parametrize("op", sorted(OPS_TABLE))
def test_compare_nan_never_holds(value, op):
    assert D.compare("x", value, op, 1.0).decision != H
    assert D.compare("x", 1.0, op, float("nan")).decision != H


@pytest.mark.parametrize("ok, want", [(True, H), (False, F), (np.bool_(True), H), (np.bool_(False), F),
                                      (1 == 1, H), (np.all(np.array([1, 2]) > 1), F)])
def test_check(ok, want):
    d = D.check("acyclic", ok, statistic=3, threshold=0, test="networkx")
    assert d.decision == want and (d.statistic, d.threshold, d.test) == (3, 0, "networkx")
    assert d.margin_se is None and d.critical is None


def test_check_nan_never_holds():
    try:
        d = D.check("x", float("nan"))
    except (TypeError, ValueError):
        return
    assert d.decision != H


# ---------------------------------------------------------------------------------------------------
# ztest
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("est, se, thr, kind, z, margin, want", [
    # margins by hand, in exactly representable numbers
    (3.0, 1.0, 1.0, "above", 2.0, 2.0, I),      # exactly at +z: undecided
    (3.0, 0.5, 1.0, "above", 2.0, 4.0, H),
    (-1.0, 1.0, 1.0, "above", 2.0, -2.0, I),    # exactly at -z: undecided
    (-1.5, 1.0, 1.0, "above", 2.0, -2.5, F),
    (-1.0, 1.0, 1.0, "below", 2.0, 2.0, I),
    (-1.5, 1.0, 1.0, "below", 2.0, 2.5, H),
    (3.5, 1.0, 1.0, "below", 2.0, -2.5, F),
    (-0.5, 1.0, 2.5, "within", 2.0, 2.0, I),    # |est| = 0.5: the sign of a within-estimate is ignored
    (-0.25, 1.0, 2.5, "within", 2.0, 2.25, H),
    (0.25, 1.0, 2.5, "within", 2.0, 2.25, H),
    (-4.5, 1.0, 2.5, "within", 2.0, -2.0, I),
    (4.75, 1.0, 2.5, "within", 2.0, -2.25, F),
    (-4.75, 1.0, 2.5, "within", 2.0, -2.25, F),
    (1.0, 0.25, 0.0, "above", 3.0, 4.0, H),
    (1.0, 0.25, 0.0, "above", 4.0, 4.0, I),     # the stated z, not a fixed 2
])
def test_ztest_hand_margins(est, se, thr, kind, z, margin, want):
    d = D.ztest("width", est, se, thr, kind, z)
    assert d.margin_se == margin and d.decision == want
    assert (d.statistic, d.threshold, d.critical) == (est, thr, z)


@pytest.mark.parametrize("z", [1.0, 1.959963984540054, 2.5758293035489004])
def test_ztest_just_past_the_critical_value(z):
    se = 0.1
    for kind, sign in (("above", 1), ("below", -1)):
        assert D.ztest("x", sign * (z * se * (1 + 1e-9)), se, 0.0, kind, z).decision == H
        assert D.ztest("x", sign * (z * se * (1 - 1e-9)), se, 0.0, kind, z).decision == I
        assert D.ztest("x", -sign * (z * se * (1 + 1e-9)), se, 0.0, kind, z).decision == F


@pytest.mark.parametrize("kind, est, want", [("above", 1.0, H), ("above", -1.0, F), ("above", 0.0, I),
                                             ("below", -1.0, H), ("below", 1.0, F), ("within", 0.5, H),
                                             ("within", -1.5, F), ("within", 1.0, I)])
def test_ztest_zero_se_decides_on_the_sign_of_the_gap(kind, est, want):
    thr = 1.0 if kind == "within" else 0.0
    assert D.ztest("x", est, 0.0, thr, kind, 2.0).decision == want


@pytest.mark.parametrize("est, se", [(float("nan"), 1.0), (math.inf, 1.0), (-math.inf, 1.0),
                                     (1.0, float("nan")),
                                     (1.0, math.inf), (np.float32(np.inf), 0.0), (jnp.array(jnp.nan), 0.1),
                                     (math.inf, 0.0), (float("nan"), 0.0)])
@pytest.mark.parametrize("kind", ["above", "below", "within"])
def test_ztest_non_finite_is_inconclusive(est, se, kind):
    d = D.ztest("x", est, se, 0.5, kind, 2.0)
    assert d.decision == I and (d.margin_se is None or math.isnan(d.margin_se))


def test_ztest_nan_threshold_is_inconclusive_when_se_is_positive():
    for kind in ("above", "below"):
        assert D.ztest("x", 1.0, 0.1, float("nan"), kind, 2.0).decision == I


@pytest.mark.parametrize("kind", ["above", "below"])
def test_ztest_nan_threshold_with_zero_se_never_holds(kind):
    assert D.ztest("x", 1.0, 0.0, float("nan"), kind, 2.0).decision == I


def test_ztest_negative_se_is_refused():
    try:
        d = D.ztest("x", 3.0, -1.0, 0.0, "above", 2.0)
    except ValueError:
        return
    assert d.decision == I


@pytest.mark.parametrize("kw", [{"kind": "sideways"}, {"kind": "within", "threshold": -0.1}, {"z": 0.0},
                                {"z": -2.0}, {"z": float("nan")}])
def test_ztest_refuses(kw):
    args = {"name": "x", "estimate": 1.0, "se": 0.1, "threshold": 0.5, "kind": "above", "z": 2.0} | kw
    with pytest.raises(ValueError):
        D.ztest(**args)


def test_ztest_accepts_array_scalars():
    d = D.ztest("x", jnp.array(3.0), np.float32(0.5), np.array(1.0), "above", 2.0)
    assert d.decision == H and d.margin_se == 4.0 and isinstance(d.statistic, float)


# ---------------------------------------------------------------------------------------------------
# paired: against a Student-t test written out
# ---------------------------------------------------------------------------------------------------


def hand_t(d, level):
    """mean, se (ddof=1, by a loop) and the two-sided t quantile with n - 1 degrees of freedom."""
    n = len(d)
    mean = sum(d) / n
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / (n - 1) / n)
    return mean, se, scipy.stats.t.ppf(0.5 + level / 2, n - 1)


DIFFS = [
    [1.0, 3.0],                                   # n = 2: t = 12.7
    [0.0, 1.0, 2.0],
    [0.12, 0.18, 0.09, 0.15, 0.11],
    [-0.3, 0.1, -0.25, -0.05],
    [0.02, -0.01, 0.03, 0.0, -0.02, 0.01, 0.04, -0.03],
    [5.0, 5.5, 4.5],
    list(np.random.default_rng(5).normal(0.3, 1.0, 40)),
]


@pytest.mark.parametrize("d", DIFFS)
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
@pytest.mark.parametrize("kind", ["above", "below", "within"])
def test_paired_against_a_hand_t_test(d, level, kind):
    mean, se, t = hand_t(d, level)
    for thr in (0.0, 0.1, 0.5, -0.2, 5.3):
        if kind == "within" and thr < 0:
            continue
        gap = {"above": mean - thr, "below": thr - mean, "within": thr - abs(mean)}[kind]
        want = H if gap > t * se else F if gap < -t * se else I
        dd = D.paired("x", d, thr, kind, level)
        assert dd.statistic == pytest.approx(mean, rel=TOL["mean_rel"], abs=TOL["mean_abs"])
        assert dd.margin_se == pytest.approx(gap / se, rel=TOL["t_interval_rel"], abs=TOL["margin_abs"])
        assert dd.critical == pytest.approx(t, rel=TOL["t_interval_rel"], abs=0)
        assert dd.decision == want, (thr, gap / se, t)


@pytest.mark.parametrize("d", DIFFS)
@pytest.mark.parametrize("kind, edge", [("above", "lo"), ("above", "hi"), ("below", "lo"), ("below", "hi")])
def test_paired_on_both_sides_of_the_interval_ends(d, kind, edge):
    mean, se, t = hand_t(d, 0.95)
    lo, hi = mean - t * se, mean + t * se
    tol = TOL["interval_end_probe"] * max(1.0, abs(lo), abs(hi))
    end = lo if edge == "lo" else hi
    inside, outside = (end + tol, end - tol) if edge == "lo" else (end - tol, end + tol)
    decided = {("above", "lo"): H, ("above", "hi"): F, ("below", "lo"): F, ("below", "hi"): H}[kind, edge]
    assert D.paired("x", d, outside, kind).decision == decided
    assert D.paired("x", d, inside, kind).decision == I


def test_paired_two_seeds_are_not_two_standard_errors():
    d = D.paired("x", [1.0, 3.0], 0.0, "above")
    assert d.margin_se == pytest.approx(2.0, rel=TOL["same_formula_rel"], abs=0)
    # t_{0.975, 1} = 12.706
    assert d.critical == pytest.approx(math.tan(0.475 * math.pi), rel=TOL["t_interval_rel"], abs=0)
    assert d.decision == I


@pytest.mark.parametrize("d", DIFFS[1:5])
def test_paired_within_reports_the_tost_p_and_holds_with_it(d):
    mean, se, t = hand_t(d, 0.95)
    n = len(d)
    for thr in (abs(mean) + 0.5 * t * se, abs(mean) + 2 * t * se, abs(mean) + 4 * t * se):
        p = max(scipy.stats.t.sf((mean + thr) / se, n - 1), scipy.stats.t.cdf((mean - thr) / se, n - 1))
        dd = D.paired("x", d, thr, "within")
        reported = float(dd.test.rsplit("TOST p = ", 1)[1])
        # printed to 3 significant digits
        assert reported == pytest.approx(p, rel=TOL["three_significant_digits"], abs=0)
        assert (dd.decision == H) == (p < 0.025)       # the 95% interval inside <=> TOST at 2.5% per side


@pytest.mark.parametrize("d, kind, thr, want", [
    ([1.0, 1.0, 1.0], "above", 0.0, H), ([1.0, 1.0, 1.0], "above", 2.0, F),
    ([0.0, 0.0, 0.0], "above", 0.0, I),
    ([1.0, 1.0], "below", 0.0, F), ([0.5, 0.5], "within", 1.0, H), ([2.0, 2.0], "within", 1.0, F),
    ([-1.0, -1.0], "within", 1.0, I),
])
def test_paired_without_spread(d, kind, thr, want):
    assert D.paired("x", d, thr, kind).decision == want


@pytest.mark.parametrize("d", [[], [0.5], [0.1, float("nan")], [0.1, math.inf, 0.2], [-math.inf, 1.0]])
@pytest.mark.parametrize("kind, thr", [("above", -100.0), ("below", 100.0), ("within", 100.0)])
def test_paired_without_a_standard_error_is_inconclusive(d, kind, thr):
    dd = D.paired("x", d, thr, kind)
    assert dd.decision == I
    if len(d) == 1:
        assert dd.statistic == 0.5
    elif not np.all(np.isfinite(d)):
        assert math.isnan(dd.statistic)


@pytest.mark.parametrize("kind", ["above", "below"])
def test_paired_nan_threshold_never_holds(kind):
    assert D.paired("x", [1.0, 1.0, 1.0], float("nan"), kind).decision == I


def test_paired_nan_threshold_with_spread_is_inconclusive():
    assert D.paired("x", [1.0, 2.0, 3.0], float("nan"), "above").decision == I


def test_paired_false_positive_rate_is_nominal_at_three_seeds():
    # true mean at the threshold, n = 3: "above" holds only in the upper 2.5% tail; a normal "z > 1.96"
    # rule would hold P(T_2 > 1.96) = 9.4% of the time
    draws = np.random.default_rng(12).standard_normal((2000, 3))
    rate = np.mean([D.paired("x", d, 0.0, "above").decision == H for d in draws])
    assert 0.012 < rate < 0.04, rate  # binomial SE 0.0035 around 0.025


@pytest.mark.parametrize("kw", [{"kind": "sideways"}, {"kind": "within", "threshold": -0.1}, {"level": 0.0},
                                {"level": 1.0}, {"level": -0.5}])
def test_paired_refuses(kw):
    args = {"name": "x", "diffs": [0.1, 0.2], "threshold": 0.5, "kind": "within", "level": 0.95} | kw
    with pytest.raises(ValueError):
        D.paired(**args)


# ---------------------------------------------------------------------------------------------------
# proportion: against the Wilson interval written out
# ---------------------------------------------------------------------------------------------------


def wilson(k, n, level):
    z = scipy.stats.norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


@pytest.mark.parametrize("k, n", [(0, 20), (1, 20), (7, 20), (19, 20), (20, 20), (480, 500), (1, 1),
                                  (50, 100)])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_proportion_against_a_hand_wilson_interval(k, n, level):
    lo, hi = wilson(k, n, level)
    tol = TOL["interval_end_probe"]  # the Wilson ends lie in [0, 1]
    for thr, above, below in ((lo - tol, H, F), (lo + tol, I, I), (hi - tol, I, I), (hi + tol, F, H)):
        if 0 <= thr <= 1:
            assert D.proportion("x", k, n, thr, "above", level).decision == above, (thr, lo, hi)
            assert D.proportion("x", k, n, thr, "below", level).decision == below, (thr, lo, hi)
    d = D.proportion("x", k, n, 0.5, "above", level)
    p = k / n
    assert d.statistic == p and d.threshold == 0.5 and d.critical == pytest.approx(
        scipy.stats.norm.ppf((1 + level) / 2), rel=TOL["same_formula_rel"], abs=0)  # for reading; Wilson decides
    se = math.sqrt(p * (1 - p) / n)
    want = (p - 0.5) / se if se else math.copysign(math.inf, p - 0.5)
    assert d.margin_se == pytest.approx(want, rel=TOL["same_formula_rel"], abs=0)
    assert D.proportion("x", k, n, 0.5, "below", level).margin_se == pytest.approx(-want, rel=TOL["same_formula_rel"],
                                                                                   abs=0)


def test_proportion_is_wilson_not_wald_at_zero_successes():
    # 0 of 20: the Wald interval is [0, 0] and would put the rate below 0.1; Wilson's upper end is 0.161
    assert wilson(0, 20, 0.95)[1] == pytest.approx(0.1611, abs=TOL["quoted_4_decimals"])
    assert D.proportion("x", 0, 20, 0.1, "below").decision == I
    assert D.proportion("x", 0, 20, 0.2, "below").decision == H


def test_proportion_nan_threshold_is_inconclusive():
    for kind in ("above", "below"):
        assert D.proportion("x", 7, 20, float("nan"), kind).decision == I


@pytest.mark.parametrize("kw", [{"n": 0}, {"successes": 21}, {"successes": -1}, {"kind": "within"},
                                {"level": 0.0}, {"level": 1.0}, {"n": 20.0}])
def test_proportion_refuses(kw):
    args = {"name": "x", "successes": 7, "n": 20, "threshold": 0.5, "kind": "above", "level": 0.95} | kw
    with pytest.raises(ValueError):
        D.proportion(**args)


# ---------------------------------------------------------------------------------------------------
# Non-finite inputs never hold
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", [float("nan"), math.inf, -math.inf])
def test_no_constructor_holds_on_a_non_finite_measurement(bad):
    made = [D.compare("x", bad, op, 0.0) for op in OPS_TABLE]
    made += [D.ztest("x", bad, 0.1, 0.0, k, 2.0) for k in ("above", "below", "within")]
    if not bad < 0:  # a negative standard error is refused outright (test_ztest_negative_se_is_refused)
        made += [D.ztest("x", 1.0, bad, 0.0, k, 2.0) for k in ("above", "below", "within")]
    made += [D.paired("x", [0.1, bad, 0.2], 0.0, k) for k in ("above", "below", "within")]
    made += [D.exact("x", bad, 1.0)]
    assert all(m.decision != H for m in made)
    assert all(m.decision == I for m in made[:-1])


def test_consistent_is_a_two_sided_z_test_of_zero_with_its_margin_in_se():
    consistent = D.consistent
    d = consistent("equal", -0.76, 0.1, 3.0)
    assert d.decision == "fails" and d.statistic == pytest.approx(7.6, abs=TOL["z_score_roundoff"])
    assert d.margin_se == pytest.approx(3.0 - 7.6, abs=TOL["z_score_roundoff"])
    assert d.critical == 0.0 and d.threshold == 3.0
    ok = consistent("equal", 0.25, 0.1, 3.0)
    assert ok.decision == "holds" and ok.margin_se == pytest.approx(0.5, abs=TOL["z_score_roundoff"])
    assert consistent("edge", 3.0, 1.0, 3.0).decision == "holds"  # |z| = 3 is still consistent at 3 SE
    assert consistent("exact", 0.0, 0.0, 3.0).decision == "holds"
    assert consistent("exact", 1e-9, 0.0, 3.0).decision == "fails"
    assert consistent("nan", float("nan"), 0.1, 3.0).decision == "inconclusive"
    with pytest.raises(ValueError):
        consistent("bad", 1.0, -0.1, 3.0)
    with pytest.raises(ValueError):
        consistent("bad", 1.0, 0.1, 0.0)
