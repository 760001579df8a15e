"""The claims ledger: every theorem we check is a named, registered claim that returns evidence.

A claim has an id ``<paper>.<slug>``, the source in the paper (theorem, lemma, equation), a one-sentence
statement, and a check: a function of no arguments returning :class:`Evidence` (what was measured, what
the theorem predicts, the tolerance, the verdict, standard errors where the measurement is random).

Each paper module in ``theory/`` registers its claims with the :func:`claim` decorator when imported;
:func:`discover` imports them all. A claim we show to fail in our measurement is registered with
``expected="fails"`` and the reason, so that the ledger passes only when every verdict is the one we
expect, and a reader still sees "fails here", with the numbers.
"""

from __future__ import annotations

import importlib
import pkgutil
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal

Verdict = Literal["holds", "fails", "inconclusive"]
VERDICTS = ("holds", "fails", "inconclusive")

# Modules of this package that are infrastructure, not papers.
_NOT_PAPERS = {"ledger", "__main__"}


@dataclass(frozen=True)
class Evidence:
    """The outcome of one check.

    Attributes:
      measured: name -> value actually measured (floats, ints, short lists).
      predicted: name -> value the theorem predicts for the same quantities.
      tolerance: how close counts as agreement, in words or numbers (e.g. ``"rel 2%"``).
      verdict: ``"holds"``, ``"fails"`` or ``"inconclusive"``.
      stderr: name -> standard error of a Monte Carlo measurement (empty when exact).
      notes: one or two sentences a reader needs (setting, why a tolerance is what it is).
    """

    measured: dict[str, Any]
    predicted: dict[str, Any]
    tolerance: str
    verdict: Verdict
    stderr: dict[str, Any] = field(default_factory=dict)
    notes: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")


def verdict(ok: bool) -> Verdict:
    """``"holds"`` if ``ok`` else ``"fails"``."""
    return "holds" if bool(ok) else "fails"


@dataclass(frozen=True)
class Claim:
    """A registered claim. ``expected`` is the verdict our measurement is known to give, and ``why``
    explains any expectation other than ``"holds"``."""

    id: str
    source: str
    statement: str
    check: Callable[[], Evidence]
    expected: Verdict = "holds"
    why: str = ""

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]


@dataclass(frozen=True)
class Outcome:
    """A claim together with the evidence its check returned (or the error it raised) and run time."""

    claim: Claim
    evidence: Evidence | None
    seconds: float
    error: str = ""

    @property
    def verdict(self) -> str:
        return self.evidence.verdict if self.evidence is not None else "error"

    @property
    def as_expected(self) -> bool:
        return self.evidence is not None and self.evidence.verdict == self.claim.expected

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "id": c.id, "paper": c.paper, "source": c.source, "statement": c.statement,
            "expected": c.expected, "why": c.why, "verdict": self.verdict,
            "as_expected": self.as_expected, "seconds": round(self.seconds, 3), "error": self.error,
            "evidence": _jsonable(asdict(self.evidence)) if self.evidence is not None else None,
        }


REGISTRY: dict[str, Claim] = {}


def claim(id: str, *, source: str, statement: str, expected: Verdict = "holds", why: str = ""):
    """Decorator registering ``fn() -> Evidence`` as the check of claim ``id``.

    Raises:
      ValueError: malformed id (must be ``<paper>.<slug>``), duplicate id, unknown expected verdict, or
        an expectation other than ``"holds"`` without a ``why``.
    """
    if id.count(".") != 1 or not all(id.split(".")):
        raise ValueError(f"claim id must be '<paper>.<slug>', got {id!r}")
    if expected not in VERDICTS:
        raise ValueError(f"claim {id}: expected must be one of {VERDICTS}, got {expected!r}")
    if expected != "holds" and not why:
        raise ValueError(f"claim {id}: an expected verdict of {expected!r} needs a `why`")

    def register(fn: Callable[[], Evidence]) -> Callable[[], Evidence]:
        if id in REGISTRY and REGISTRY[id].check.__qualname__ != fn.__qualname__:
            raise ValueError(f"claim {id} is registered twice")
        REGISTRY[id] = Claim(id, source, statement, fn, expected, why)
        return fn

    return register


def papers() -> list[str]:
    """Names of the paper modules in ``theory/`` (each one module per paper)."""
    import theory

    return sorted(m.name for m in pkgutil.iter_modules(theory.__path__)
                  if m.name not in _NOT_PAPERS and not m.name.startswith("_"))


def discover() -> dict[str, Claim]:
    """Import every paper module so its claims register; returns the registry."""
    for name in papers():
        importlib.import_module(f"theory.{name}")
    return REGISTRY


def select(paper: str | None = None, claim_id: str | None = None) -> list[Claim]:
    """Registered claims filtered by paper and/or id, sorted by id.

    Raises:
      KeyError: an unknown paper or claim id (the message lists what exists).
    """
    reg = discover()
    if paper is not None and paper not in papers():
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(papers())}")
    if claim_id is not None and claim_id not in reg:
        raise KeyError(f"unknown claim {claim_id!r}; `python -m theory list` shows the ids")
    out = [c for c in reg.values()
           if (paper is None or c.paper == paper) and (claim_id is None or c.id == claim_id)]
    return sorted(out, key=lambda c: c.id)


def run(claims: list[Claim], *, on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run each claim's check; a check that raises becomes an ``error`` outcome, never a crash."""
    outcomes = []
    for c in claims:
        t0 = time.perf_counter()
        try:
            ev = c.check()
            if not isinstance(ev, Evidence):
                raise TypeError(f"check of {c.id} returned {type(ev).__name__}, not Evidence")
            o = Outcome(c, ev, time.perf_counter() - t0)
        except Exception:  # noqa: BLE001 - the ledger reports a broken check, it does not crash
            o = Outcome(c, None, time.perf_counter() - t0, traceback.format_exc(limit=3))
        outcomes.append(o)
        if on_done is not None:
            on_done(o)
    return outcomes


def _jsonable(x: Any) -> Any:
    """Numpy/JAX scalars and arrays, fractions and tuples to plain JSON values."""
    import fractions

    import numpy as np

    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (bool, int, str)) or x is None:
        return x
    if isinstance(x, float):
        return x if np.isfinite(x) else str(x)
    if isinstance(x, fractions.Fraction):
        return str(x)
    if hasattr(x, "tolist"):
        return _jsonable(np.asarray(x).tolist())
    return str(x)


def fmt(x: Any) -> str:
    """Short human rendering of a measured/predicted value for the table."""
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, dict):
        return ", ".join(f"{k}={fmt(v)}" for k, v in x.items())
    if isinstance(x, (list, tuple)):
        inner = ", ".join(fmt(v) for v in list(x)[:6])
        return f"[{inner}{', ...' if len(x) > 6 else ''}]"
    if hasattr(x, "tolist"):
        return fmt(x.tolist())
    return str(x)


def summary(outcomes: list[Outcome]) -> str:
    """One line: how many claims gave their expected verdict, and which did not."""
    bad = [o.claim.id for o in outcomes if not o.as_expected]
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS + ("error",)}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    return (f"{len(outcomes) - len(bad)} of {len(outcomes)} claims gave their expected verdict ({tally})"
            + (f"; unexpected: {', '.join(bad)}" if bad else ""))


def _cell(x: str) -> str:
    """A markdown table cell: pipes escaped, one line."""
    return x.replace("|", "\\|").replace("\n", " ")


def to_markdown(outcomes: list[Outcome]) -> str:
    """The ledger as a markdown report: a summary line and table, then each claim's evidence."""
    lines = ["# Claims ledger", "", summary(outcomes), "",
             "| claim | verdict | expected | measured | predicted | tolerance | s |",
             "|---|---|---|---|---|---|---|"]
    for o in outcomes:
        ev = o.evidence
        m = fmt(ev.measured) if ev else o.error.strip().splitlines()[-1][:80]
        p = fmt(ev.predicted) if ev else ""
        t = ev.tolerance if ev else ""
        cells = [f"`{o.claim.id}`", o.verdict, o.claim.expected, m, p, t, f"{o.seconds:.1f}"]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    for o in outcomes:
        c, ev = o.claim, o.evidence
        lines += [f"## `{c.id}`", "", f"*{c.source}*: {c.statement}", ""]
        if c.why:
            lines += [f"Expected {c.expected}: {c.why}", ""]
        if ev is None:
            lines += ["```", o.error.strip(), "```", ""]
            continue
        lines += [f"- verdict: **{ev.verdict}** (tolerance: {ev.tolerance})",
                  f"- measured: {fmt(ev.measured)}", f"- predicted: {fmt(ev.predicted)}"]
        if ev.stderr:
            lines.append(f"- standard errors: {fmt(ev.stderr)}")
        if ev.notes:
            lines.append(f"- notes: {ev.notes}")
        lines.append("")
    return "\n".join(lines)
