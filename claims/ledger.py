"""The claims ledger: every theorem we check is a named, registered claim that returns evidence.

A claim has an id ``<paper>.<slug>``, the source in the paper (theorem, lemma, equation), a one-sentence
statement, and a check: a function returning :class:`Evidence` (what was measured, what the theorem
predicts, the tolerance, the verdict, standard errors where the measurement is random). A check that
takes a ``scale`` argument is given the scale the ledger runs at (``"quick"`` or ``"paper"``) and reads
the figure's result at that scale through :func:`figure_result`, the one route from a claim to a
simulation's numbers: it never runs a second copy of a figure's sweep.

Each module of the ``claims`` package registers its claims with the :func:`claim` decorator when
imported; :func:`discover` imports them all. A claim we show to fail in our measurement is registered
with ``expected="fails"`` and the reason, so that the ledger passes only when every verdict is the one we
expect, and a reader still sees "fails here", with the numbers. The expected verdict may differ by scale
(``expected={"quick": "inconclusive", "paper": "holds"}``). At paper scale a figure's result is not
computed by the ledger: until someone has run it, the claim is reported as "not measured at this scale".
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Literal, Mapping

import claims
from sims import cli
from sims.results import SCALES, jsonable

Verdict = Literal["holds", "fails", "inconclusive"]
VERDICTS = ("holds", "fails", "inconclusive")
NOT_MEASURED = "not measured"

# Modules of this package that are infrastructure, not papers.
_NOT_PAPERS = {"ledger", "__main__"}

# Whether a claim may compute a figure's missing or stale result, per scale: quick runs in minutes on a
# laptop; a paper-scale result comes only from `make figures SCALE=paper` (GPU hours), never as a side
# effect of the ledger.
COMPUTE_MISSING = {"quick": True, "paper": False}


class NotMeasured(Exception):
    """A claim's figure result does not exist (or is stale) at the scale asked, and the ledger may not
    compute it there. ``str(err)`` says how to produce it."""


def figure_result(name: str, scale: str) -> tuple[dict, dict]:
    """The arrays and sidecar of figure ``name`` (``paper_configs/<name>.yaml``) at ``scale``: loaded
    when current, computed when missing or stale and :data:`COMPUTE_MISSING` allows it at that scale.

    This is the one route from a claim to a figure's numbers, so the ledger and the figure always
    report the same run.

    Raises:
      NotMeasured: the result is not current at ``scale`` and may not be computed there.
      ConfigError: the figure's config is missing or invalid.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    stored = cli.stored_result(name, scale)
    if stored is not None:
        return stored
    if not COMPUTE_MISSING[scale]:
        raise NotMeasured(f"no current {scale}-scale result of {name}; run `make fig-{name} SCALE={scale}`")
    print(f"  computing {name} at {scale} scale (no current result)...", file=sys.stderr, flush=True)
    return cli.run_config(cli.figure_config(name), scale, quiet=True)


@dataclass(frozen=True)
class Control:
    """A case just outside a claim's hypothesis that the claim's own check is run on and must reject
    (an off-line member of an equivalence family, a monomial activation where a generic one is
    assumed, a graph with a bottleneck where none is assumed).

    Attributes:
      case: what differs from the hypothesis, in words.
      measured: what the same check measured on it (the number that made it reject, or accept).
      rejected: whether the check rejected it (a control that is accepted means the check cannot fail).
    """

    case: str
    measured: Any
    rejected: bool


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
      controls: the :class:`Control` cases the same check ran on; a claim holds only when its own
        cases pass *and* every control is rejected.
      no_control: for a claim without a meaningful control (an exact integer identity), one line
        saying why; a registered claim gives controls or this reason.

    Raises:
      ValueError: an unknown verdict, or ``"holds"`` while a control was accepted.
    """

    measured: dict[str, Any]
    predicted: dict[str, Any]
    tolerance: str
    verdict: Verdict
    stderr: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    controls: tuple[Control, ...] = ()
    no_control: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        object.__setattr__(self, "controls", tuple(self.controls))
        for c in self.controls:
            if not isinstance(c, Control):
                raise TypeError(f"controls must be Control instances, got {type(c).__name__}")
        accepted = [c.case for c in self.controls if not c.rejected]
        if self.verdict == "holds" and accepted:
            raise ValueError(f"a claim cannot hold while its check accepts a control: {accepted}")

    @property
    def controls_rejected(self) -> bool:
        """Every control was rejected (vacuously true without controls)."""
        return all(c.rejected for c in self.controls)


def combine(own: list[str], control_decisions: list[str]) -> Verdict:
    """The verdict of a claim decided by three-valued tests (:func:`theory.numerics.paired_decision`).

    ``own``: the decisions of the claim's own cases; ``control_decisions``: the same test's decisions on
    its controls (a control is rejected when its decision is "fails"). A failed own case gives "fails";
    an undecided one, or none (nothing testable), "inconclusive"; when every own case holds, the claim
    holds if every control is rejected, "fails" if the test accepted a control outright (it cannot tell
    the claim from its negation), else "inconclusive".
    """
    if "fails" in own:
        return "fails"
    if "inconclusive" in own or not own:
        return "inconclusive"
    if all(c == "fails" for c in control_decisions):
        return "holds"
    return "fails" if "holds" in control_decisions else "inconclusive"


def verdict(ok: bool, controls: tuple[Control, ...] | list[Control] = ()) -> Verdict:
    """``"holds"`` if ``ok`` and every control was rejected, else ``"fails"``."""
    return "holds" if bool(ok) and all(c.rejected for c in controls) else "fails"


@dataclass(frozen=True)
class Claim:
    """A registered claim. ``expected`` is the verdict our measurement is known to give (one verdict, or
    a scale -> verdict mapping), and ``why`` explains any expectation other than ``"holds"``."""

    id: str
    source: str
    statement: str
    check: Callable[..., Evidence]
    expected: Verdict | Mapping[str, Verdict] = "holds"
    why: str = ""

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]

    def expected_at(self, scale: str) -> Verdict:
        """The expected verdict at ``scale``."""
        return self.expected if isinstance(self.expected, str) else self.expected[scale]

    @property
    def takes_scale(self) -> bool:
        """Whether the check reads a figure's result (takes the ``scale`` argument)."""
        return "scale" in inspect.signature(self.check).parameters

    def run(self, scale: str) -> Evidence:
        return self.check(scale=scale) if self.takes_scale else self.check()


@dataclass(frozen=True)
class Outcome:
    """A claim together with the evidence its check returned (or the error it raised), the scale it ran
    at and its run time. ``not_measured`` holds the reason when the scale's result does not exist yet."""

    claim: Claim
    evidence: Evidence | None
    seconds: float
    error: str = ""
    scale: str = "quick"
    not_measured: str = ""

    @property
    def verdict(self) -> str:
        if self.not_measured:
            return NOT_MEASURED
        return self.evidence.verdict if self.evidence is not None else "error"

    @property
    def expected(self) -> Verdict:
        return self.claim.expected_at(self.scale)

    @property
    def as_expected(self) -> bool:
        return self.evidence is not None and self.evidence.verdict == self.expected

    @property
    def ok(self) -> bool:
        """As expected, or honestly not measured at this scale (neither an error nor a surprise)."""
        return self.as_expected or bool(self.not_measured)

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return jsonable({
            "id": c.id, "paper": c.paper, "source": c.source, "statement": c.statement,
            "scale": self.scale, "expected": self.expected, "why": c.why, "verdict": self.verdict,
            "as_expected": self.as_expected, "seconds": round(self.seconds, 3), "error": self.error,
            "not_measured": self.not_measured,
            "evidence": asdict(self.evidence) if self.evidence is not None else None,
        })


REGISTRY: dict[str, Claim] = {}


def claim(id: str, *, source: str, statement: str, expected: Verdict | Mapping[str, Verdict] = "holds",
          why: str = ""):
    """Decorator registering ``fn() -> Evidence`` (or ``fn(scale) -> Evidence``) as the check of claim
    ``id``. ``expected`` is one verdict, or one per scale (``{"quick": ..., "paper": ...}``).

    Raises:
      ValueError: malformed id (must be ``<paper>.<slug>``), duplicate id, unknown expected verdict or
        scale, or an expectation other than ``"holds"`` without a ``why``.
    """
    if id.count(".") != 1 or not all(id.split(".")):
        raise ValueError(f"claim id must be '<paper>.<slug>', got {id!r}")
    per_scale = dict(expected) if not isinstance(expected, str) else {s: expected for s in SCALES}
    if set(per_scale) != set(SCALES):
        raise ValueError(f"claim {id}: expected per scale must name exactly {SCALES}, got {sorted(per_scale)}")
    for v in per_scale.values():
        if v not in VERDICTS:
            raise ValueError(f"claim {id}: expected must be one of {VERDICTS}, got {v!r}")
    if set(per_scale.values()) != {"holds"} and not why:
        raise ValueError(f"claim {id}: an expected verdict other than 'holds' needs a `why`")

    def register(fn: Callable[[], Evidence]) -> Callable[[], Evidence]:
        if id in REGISTRY and REGISTRY[id].check.__qualname__ != fn.__qualname__:
            raise ValueError(f"claim {id} is registered twice")
        REGISTRY[id] = Claim(id, source, statement, fn, expected, why)
        return fn

    return register


def papers() -> list[str]:
    """Names of the paper modules of the ``claims`` package (one module per paper)."""
    return sorted(m.name for m in pkgutil.iter_modules(claims.__path__)
                  if m.name not in _NOT_PAPERS and not m.name.startswith("_"))


def discover() -> dict[str, Claim]:
    """Import every paper module of ``claims`` so its claims register; returns the registry."""
    for name in papers():
        importlib.import_module(f"claims.{name}")
    return REGISTRY


def select(paper: str | None = None, claim_id: str | None = None) -> list[Claim]:
    """Registered claims filtered by paper and/or id, sorted by id.

    Raises:
      KeyError: an unknown paper or claim id, or a selection that matches no claim (the message says
        which and lists what exists).
    """
    reg = discover()
    if paper is not None and paper not in papers():
        raise KeyError(f"unknown paper {paper!r}; known: {', '.join(papers())}")
    if claim_id is not None and claim_id not in reg:
        raise KeyError(f"unknown claim {claim_id!r}; `python -m claims list` shows the ids")
    out = [c for c in reg.values()
           if (paper is None or c.paper == paper) and (claim_id is None or c.id == claim_id)]
    if not out:
        raise KeyError(f"no claim matches --claim {claim_id} together with --paper {paper}")
    return sorted(out, key=lambda c: c.id)


def run(claims: list[Claim], *, scale: str = "quick",
        on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run each claim's check at ``scale``; a check that raises becomes an ``error`` outcome, never a
    crash, and one whose figure result does not exist at that scale a ``not measured`` outcome."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    outcomes = []
    for c in claims:
        t0 = time.perf_counter()
        try:
            ev = c.run(scale)
            if not isinstance(ev, Evidence):
                raise TypeError(f"check of {c.id} returned {type(ev).__name__}, not Evidence")
            if not ev.controls and not ev.no_control:
                raise ValueError(f"{c.id} returned no controls and no one-line reason why it has none")
            o = Outcome(c, ev, time.perf_counter() - t0, scale=scale)
        except NotMeasured as e:
            o = Outcome(c, None, time.perf_counter() - t0, scale=scale, not_measured=str(e))
        except Exception:  # noqa: BLE001 - the ledger reports a broken check, it does not crash
            o = Outcome(c, None, time.perf_counter() - t0, traceback.format_exc(limit=3), scale=scale)
        outcomes.append(o)
        if on_done is not None:
            on_done(o)
    return outcomes


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
    bad = [o.claim.id for o in outcomes if not o.ok]
    good = sum(o.as_expected for o in outcomes)
    missing = sum(bool(o.not_measured) for o in outcomes)
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS + ("error", NOT_MEASURED)}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    scale = outcomes[0].scale if outcomes else "quick"
    return (f"{good} of {len(outcomes) - missing} measured claims gave their expected verdict at {scale} "
            f"scale ({tally})" + (f"; {missing} not measured at this scale (not a failure)" if missing else "")
            + (f"; unexpected: {', '.join(bad)}" if bad else ""))


def _cell(x: str) -> str:
    """A markdown table cell: pipes escaped, one line."""
    return x.replace("|", "\\|").replace("\n", " ")


def to_markdown(outcomes: list[Outcome]) -> str:
    """The ledger as a markdown report: a summary line and table, then each claim's evidence."""
    lines = ["# Claims ledger", "", summary(outcomes), "",
             "| claim | verdict | expected | measured | predicted | tolerance | controls | s |",
             "|---|---|---|---|---|---|---|---|"]
    for o in outcomes:
        ev = o.evidence
        m = fmt(ev.measured) if ev else (o.not_measured or o.error.strip().splitlines()[-1][:80])
        p = fmt(ev.predicted) if ev else ""
        t = ev.tolerance if ev else ""
        ctl = "" if ev is None else (
            f"{sum(c.rejected for c in ev.controls)}/{len(ev.controls)} rejected" if ev.controls
            else f"none: {ev.no_control}" if ev.no_control else "none")
        cells = [f"`{o.claim.id}`", o.verdict, o.expected, m, p, t, ctl, f"{o.seconds:.1f}"]
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    lines.append("")
    for o in outcomes:
        c, ev = o.claim, o.evidence
        lines += [f"## `{c.id}`", "", f"*{c.source}*: {c.statement}", ""]
        if c.why:
            lines += [f"Expected {o.expected}: {c.why}", ""]
        if o.not_measured:
            lines += [f"Not measured at {o.scale} scale: {o.not_measured}", ""]
            continue
        if ev is None:
            lines += ["```", o.error.strip(), "```", ""]
            continue
        lines += [f"- verdict: **{ev.verdict}** (tolerance: {ev.tolerance})",
                  f"- measured: {fmt(ev.measured)}", f"- predicted: {fmt(ev.predicted)}"]
        if ev.stderr:
            lines.append(f"- standard errors: {fmt(ev.stderr)}")
        for ctl in ev.controls:
            lines.append(f"- control ({'rejected' if ctl.rejected else 'ACCEPTED'}): {ctl.case}: "
                         f"{fmt(ctl.measured)}")
        if ev.no_control:
            lines.append(f"- no control: {ev.no_control}")
        if ev.notes:
            lines.append(f"- notes: {ev.notes}")
        lines.append("")
    return "\n".join(lines)
