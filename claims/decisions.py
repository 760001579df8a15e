"""The one decision mechanism of the ledger: a :class:`Decision` per test, a :class:`Control` per case
just outside the hypothesis, and :func:`verdict_of`, the only rule that turns them into a verdict.

A claim's check builds its decisions with the constructors below (never a verdict string of its own):

* :func:`exact`: an exact comparison (ranks, counts, rationals, certificates): the two exact values, no
  margin.
* :func:`compare`: a deterministic numeric comparison (a float64 value against a stated tolerance); no
  standard error, so no margin.
* :func:`ztest`: a Monte Carlo estimate with its standard error against a threshold, decided at a
  stated critical value ``z`` (holds beyond ``+z`` SE, fails beyond ``-z`` SE, else inconclusive).
* :func:`paired`: the mean of per-seed paired differences against a threshold on the Student-t interval
  of ``statsmodels`` (``DescrStatsW.tconfint_mean``; n - 1 degrees of freedom). For ``kind="within"``
  (an equivalence statement) the interval is the one of the TOST at level (1 - level) / 2 per side,
  and the TOST p-value (``DescrStatsW.ttost_mean``) is reported with it.
* :func:`proportion`: a count of successes against a rate threshold on the Wilson interval
  (``statsmodels.stats.proportion.proportion_confint``).
* :func:`check`: a boolean the claim computed from exact or float64 facts it states in ``test``.

``margin_se`` is the signed distance of the statistic from its threshold in standard errors, positive
on the "holds" side; for ztest and paired the decision holds when it exceeds ``critical`` and fails
below ``-critical`` (for proportion the Wilson interval decides; the margin is for reading).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any, Literal, Sequence

import numpy as np
import scipy.stats
from statsmodels.stats.proportion import proportion_confint
from statsmodels.stats.weightstats import DescrStatsW

Verdict = Literal["holds", "fails", "inconclusive"]
VERDICTS = ("holds", "fails", "inconclusive")
Kind = Literal["above", "below", "within"]
KINDS = ("above", "below", "within")


@dataclass(frozen=True)
class Decision:
    """One test's outcome and what decided it.

    Attributes:
      name: what was tested, in a few words (``"width: sIF ENS falls"``).
      decision: ``"holds"``, ``"fails"`` or ``"inconclusive"``.
      statistic: the measured value the test looked at (for an exact comparison: the exact value).
      threshold: the value it was compared with (for an exact comparison: the predicted exact value).
      margin_se: ``(statistic - threshold) / se`` signed so that positive favours "holds" (for "within":
        ``(threshold - |statistic|) / se``); ``None`` for exact and deterministic comparisons.
      critical: the margin in SE needed to decide (a Student-t or normal quantile); ``None`` when exact.
      test: which test decided, in words (library and level included).
    """

    name: str
    decision: Verdict
    statistic: Any = None
    threshold: Any = None
    margin_se: float | None = None
    critical: float | None = None
    test: str = ""

    def __post_init__(self):
        if self.decision not in VERDICTS:
            raise ValueError(f"decision must be one of {VERDICTS}, got {self.decision!r}")


@dataclass(frozen=True)
class Control:
    """A case just outside a claim's hypothesis (an off-line member of an equivalence family, a monomial
    activation where a generic one is assumed, a graph with a bottleneck where none is assumed) that the
    claim's own test is run on and must reject.

    Attributes:
      case: what differs from the hypothesis, in words.
      decision: the :class:`Decision` of the same test on this case. The control is rejected exactly when
        that decision is ``"fails"``: an undecided control never lets a claim hold.
      measured: extra numbers a reader needs (optional; the decision carries the statistic).
    """

    case: str
    decision: Decision
    measured: Any = None

    def __post_init__(self):
        if not isinstance(self.decision, Decision):
            raise TypeError(f"a Control's decision must be a Decision, got {type(self.decision).__name__}")

    @property
    def rejected(self) -> bool:
        return self.decision.decision == "fails"


def verdict_of(decisions: Sequence[Decision], controls: Sequence[Control] = ()) -> Verdict:
    """The verdict of a claim: the only rule the ledger has.

    A failed own decision gives "fails"; an undecided one, or none at all (nothing testable),
    "inconclusive". When every own decision holds, the claim holds if every control is rejected (its
    decision is "fails"), "fails" if the test accepted a control outright (decision "holds": it cannot
    tell the claim from its negation), and "inconclusive" otherwise.
    """
    own = [d.decision for d in decisions]
    if "fails" in own:
        return "fails"
    if "inconclusive" in own or not own:
        return "inconclusive"
    ctl = [c.decision.decision for c in controls]
    if all(c == "fails" for c in ctl):
        return "holds"
    return "fails" if "holds" in ctl else "inconclusive"


def _num(x) -> float:
    return float(np.asarray(x, np.float64))


def _three_way(margin: float, critical: float) -> Verdict:
    if math.isnan(margin):
        return "inconclusive"
    return "holds" if margin > critical else "fails" if margin < -critical else "inconclusive"


def _margin(stat: float, threshold: float, se: float, kind: Kind) -> float:
    """Signed distance of ``stat`` from ``threshold`` in units of ``se``, positive on the holds side; NaN
    (undecidable) when any of the three is not finite."""
    if not (math.isfinite(stat) and math.isfinite(se) and math.isfinite(threshold)):
        return float("nan")
    gap = {"above": stat - threshold, "below": threshold - stat, "within": threshold - abs(stat)}[kind]
    if se == 0:
        return math.copysign(math.inf, gap) if gap != 0 else float("nan")
    return gap / se


def _check_kind(kind: str, threshold: float) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "within" and not threshold >= 0:
        raise ValueError(f"a 'within' threshold must be >= 0, got {threshold}")


_WORDS = {"above": ">", "below": "<", "within": "|.| <="}


def exact(name: str, measured: Any, expected: Any, test: str = "exact equality") -> Decision:
    """Holds when ``measured == expected`` (exact values: ints, Fractions, flint numbers, tuples; arrays
    must agree in shape and every entry, never by broadcasting)."""
    if isinstance(measured, np.ndarray) or isinstance(expected, np.ndarray):
        ok = np.shape(measured) == np.shape(expected) and bool(np.array_equal(measured, expected))
    else:
        ok = bool(measured == expected)
    return Decision(name, "holds" if ok else "fails", measured, expected, None, None, test)


def _finite(x) -> bool:
    """False for a non-finite real of any type (Python, numpy, JAX, 0-d array); True for exact numbers."""
    try:
        a = np.asarray(x)
    except Exception:  # noqa: BLE001 - an exact type numpy cannot hold is finite
        return True
    return not (a.dtype.kind in "fc" and not np.all(np.isfinite(a)))


_OPS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "==": operator.eq}


def compare(name: str, value: Any, op: str, threshold: Any, test: str = "") -> Decision:
    """A deterministic comparison ``value op threshold`` (op in ``< <= > >= ==``): holds when true, fails
    when false. A non-finite float value is "inconclusive" (never silently compared)."""
    if op not in _OPS:
        raise ValueError(f"op must be one of {tuple(_OPS)}, got {op!r}")
    if not (_finite(value) and _finite(threshold)):
        return Decision(name, "inconclusive", value, threshold, None, None,
                        (test or f"value {op} threshold") + " (non-finite: not compared)")
    ok = bool(_OPS[op](value, threshold))
    return Decision(name, "holds" if ok else "fails", value, threshold, None, None,
                    test or f"value {op} threshold (deterministic)")


def check(name: str, ok: bool, statistic: Any = None, threshold: Any = None, test: str = "") -> Decision:
    """A boolean fact the claim computed exactly or in float64 (``test`` says what was checked).

    Raises TypeError: ``ok`` is not a bool (a NaN or a number would pass ``bool()`` silently)."""
    if not isinstance(ok, (bool, np.bool_)):
        raise TypeError(f"check {name!r}: ok must be a bool, got {type(ok).__name__} {ok!r}")
    return Decision(name, "holds" if bool(ok) else "fails", statistic, threshold, None, None, test)


def ztest(name: str, estimate, se, threshold: float, kind: Kind, z: float, test: str = "") -> Decision:
    """A Monte Carlo estimate with standard error ``se`` against ``threshold``.

    kind="above": holds when ``(estimate - threshold) / se > z``, fails when it is below ``-z``;
    "below" is the mirror image; "within" tests ``|estimate| <= threshold``. ``se == 0`` decides on the
    sign of the gap; a non-finite estimate or SE is "inconclusive".

    Raises ValueError: unknown kind, negative "within" threshold, or ``z <= 0``.
    """
    threshold = _num(threshold)
    _check_kind(kind, threshold)
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z}")
    est, s = _num(estimate), _num(se)
    if s < 0:
        raise ValueError(f"ztest {name!r}: a standard error must be >= 0, got {s}")
    m = _margin(est, threshold, s, kind)
    rule = test or f"estimate {_WORDS[kind]} {threshold:g} at {z:g} standard errors (normal approximation)"
    return Decision(name, _three_way(m, z), est, threshold, m, float(z), rule)


def consistent(name: str, estimate, se, z: float, test: str = "") -> Decision:
    """A two-sided z-test that an estimated difference is 0: "holds" (consistent) when
    ``|estimate| / se <= z``, "fails" when it is larger. The statistic is ``|estimate| / se``, the margin
    ``z - |estimate| / se`` (in SE, positive on the consistent side; critical 0), so the ledger's stability
    sees how far the decision is from changing. ``se == 0`` compares the estimate with 0 exactly; a
    non-finite estimate or SE is "inconclusive".

    Raises ValueError: ``z <= 0`` or a negative ``se``."""
    if not z > 0:
        raise ValueError(f"z must be > 0, got {z}")
    est, s = _num(estimate), _num(se)
    if s < 0:
        raise ValueError(f"consistent {name!r}: a standard error must be >= 0, got {s}")
    rule = test or f"|estimate| / SE <= {z:g} (consistent with 0 at {z:g} standard errors)"
    if not (math.isfinite(est) and math.isfinite(s)):
        return Decision(name, "inconclusive", est, float(z), None, None, rule + " (non-finite: not compared)")
    score = abs(est) / s if s > 0 else (0.0 if est == 0 else math.inf)
    margin = float(z) - score
    return Decision(name, "holds" if margin >= 0 else "fails", score, float(z), margin, 0.0, rule)


def paired(name: str, diffs, threshold: float, kind: Kind = "within", level: float = 0.95) -> Decision:
    """The mean of per-seed paired differences (two runs sharing a seed) against ``threshold``.

    The two-sided ``level`` Student-t interval of the mean (statsmodels ``DescrStatsW.tconfint_mean``,
    n - 1 degrees of freedom) decides: "above" holds when it lies above ``threshold`` and fails when it
    lies below; "below" mirrors it; "within" holds when it lies inside ``[-threshold, threshold]`` (the
    TOST at ``(1 - level) / 2`` per side; its p-value is in ``test``) and fails when it lies outside.
    Fewer than 2 seeds, a non-finite difference or no spread with a tie give "inconclusive".

    Raises ValueError: unknown kind, negative "within" threshold, ``level`` not in (0, 1).
    """
    threshold = _num(threshold)
    _check_kind(kind, threshold)
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    d = np.asarray(diffs, np.float64).ravel()
    n = int(d.size)
    rule = f"mean {_WORDS[kind]} {threshold:g} on the {level:.0%} Student-t interval over {n} seeds (statsmodels)"
    if n < 2 or not np.all(np.isfinite(d)):
        why = "fewer than 2 seeds" if n < 2 else "a non-finite difference"
        mean = float(d.mean()) if n and np.all(np.isfinite(d)) else float("nan")
        return Decision(name, "inconclusive", mean, threshold, None, None, f"{rule} ({why})")
    stats = DescrStatsW(d)
    mean, se = float(stats.mean), float(stats.std_mean)
    lo, _ = stats.tconfint_mean(alpha=1 - level)
    crit = (mean - float(lo)) / se if se > 0 else float(np.inf)
    if kind == "within":
        p = float(stats.ttost_mean(-threshold, threshold)[0]) if se > 0 else float(abs(mean) >= threshold)
        rule += f"; TOST p = {p:.3g}"
    m = _margin(mean, threshold, se, kind)
    if se == 0:
        crit = 0.0
    return Decision(name, _three_way(m, crit), mean, threshold, m, crit, rule)


def proportion(name: str, successes: int, n: int, threshold: float, kind: Kind = "above",
               level: float = 0.95) -> Decision:
    """A binomial rate ``successes / n`` against ``threshold`` on the two-sided ``level`` Wilson interval
    (statsmodels ``proportion_confint(method="wilson")``): "above" holds when the interval lies above the
    threshold, fails when below; "below" mirrors it. ``margin_se`` is the Wald distance (binomial SE at
    the estimate) and ``critical`` the normal quantile of ``level``, for reading only: the Wilson
    interval decides, and near 0 or 1 the two can disagree.

    Raises ValueError: ``n < 1``, ``successes`` outside ``[0, n]``, kind "within", level not in (0, 1).
    """
    if kind not in ("above", "below"):
        raise ValueError(f"kind must be 'above' or 'below' for a proportion, got {kind!r}")
    if not (isinstance(n, (int, np.integer)) and isinstance(successes, (int, np.integer)) and n >= 1
            and 0 <= successes <= n):
        raise ValueError(f"need integers 0 <= successes <= n and n >= 1, got {successes} of {n}")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level}")
    p = successes / n
    lo, hi = (float(v) for v in proportion_confint(successes, n, alpha=1 - level, method="wilson"))
    if kind == "above":
        dec = "holds" if lo > threshold else "fails" if hi < threshold else "inconclusive"
    else:
        dec = "holds" if hi < threshold else "fails" if lo > threshold else "inconclusive"
    se = math.sqrt(p * (1 - p) / n)
    m = _margin(p, float(threshold), se, kind)
    return Decision(name, dec, p, float(threshold), m, float(scipy.stats.norm.ppf((1 + level) / 2)),
                    f"rate {_WORDS[kind]} {threshold:g} on the {level:.0%} Wilson interval "
                    f"[{lo:.4g}, {hi:.4g}] of {successes}/{n} (statsmodels)")
