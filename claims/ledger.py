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

import difflib
import importlib
import inspect
import math
import pkgutil
import sys
import time
import traceback
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

import claims
from claims.reads import FigureResult, Reads, non_finite_read
from claims.decisions import (VERDICTS, Control, Decision, Verdict, check, compare, consistent, exact,
                              paired, proportion, verdict_of, ztest)
from sims import cli
from sims.results import SCALES, jsonable

__all__ = ["Control", "Decision", "Evidence", "Claim", "PaperValue", "Reads", "FigureResult", "claim", "run",
           "check", "compare", "consistent", "exact", "paired", "proportion", "ztest", "verdict_of", "figure_result"]

NOT_MEASURED = "not measured"

# The repository's results root: the ledger reads and computes figure results there from any working folder.
RESULTS = cli.REPO / "results"

# Modules of this package that are infrastructure, not papers.
_NOT_PAPERS = {"ledger", "decisions", "reads", "report", "__main__"}

# Leave-one-seed-out re-decisions: up to this many seeds each seed is left out once; above it the seeds
# are split into STABILITY_FOLDS disjoint folds, each left out in turn.
STABILITY_MAX_LOO = 16
STABILITY_FOLDS = 8

# Whether a claim may compute a figure's missing or stale result, per scale: quick runs in minutes on a
# laptop; a paper-scale result comes only from `make figures SCALE=paper` (GPU hours), never as a side
# effect of the ledger.
COMPUTE_MISSING = {"quick": True, "paper": False}


class NotMeasured(Exception):
    """A claim's figure result does not exist (or is stale) at the scale asked, and the ledger may not
    compute it there. ``str(err)`` says how to produce it."""


def figure_result(name: str, scale: str, seed_offset: int = 0) -> tuple[dict, dict]:
    """The arrays and sidecar of figure ``name`` (``paper_configs/<name>.yaml``) at ``scale``: loaded
    when current, computed when missing or stale and :data:`COMPUTE_MISSING` allows it at that scale.
    With ``seed_offset`` N > 0 the figure's root seed is shifted by N and the result lives in
    ``results/<scale>/seed-offset-N/`` (a replication on fresh seeds; ``results/<scale>/`` is untouched).
    ``results/`` is the repository's (:data:`RESULTS`), whatever the working folder.

    This is the one route from a claim to a figure's numbers, so the ledger and the figure always
    report the same run. Claims do not call it: they declare ``reads=`` and are handed :class:`Reads`.

    Raises:
      NotMeasured: the result is not current at ``scale`` and may not be computed there.
      ConfigError: the figure's config is missing or invalid.
    """
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    stored = cli.stored_result(name, scale, RESULTS, seed_offset=seed_offset)
    if stored is not None:
        return stored
    if not COMPUTE_MISSING[scale]:
        where = f" SEED_OFFSET={seed_offset}" if seed_offset else ""
        raise NotMeasured(f"no current {scale}-scale result of {name}; run `make fig-{name} SCALE={scale}"
                          f"{where}`")
    print(f"  computing {name} at {scale} scale{f' (seed offset {seed_offset})' if seed_offset else ''} "
          "(no current result)...", file=sys.stderr, flush=True)
    return cli.run_config(cli.figure_config(name), scale, outdir=RESULTS, quiet=True, seed_offset=seed_offset)


@dataclass(frozen=True)
class Evidence:
    """The outcome of one check. Its verdict is computed, never written: :func:`verdict_of` of its own
    ``decisions`` and its ``controls``.

    Attributes:
      measured: name -> value actually measured (floats, ints, short lists).
      predicted: name -> value the theorem predicts for the same quantities.
      tolerance: how close counts as agreement, and which test decided (e.g. ``"Student-t 95%"``).
      decisions: the :class:`Decision` of each of the claim's own tests (none: nothing was testable,
        the verdict is "inconclusive").
      stderr: name -> standard error of a Monte Carlo measurement (empty when exact).
      notes: one or two sentences a reader needs (setting, why a tolerance is what it is).
      controls: the :class:`Control` cases the same test ran on; a claim holds only when its own
        decisions hold *and* every control's decision is "fails".
      no_control: for a claim without a meaningful control (an exact integer identity), one line
        saying why; a registered claim gives controls or this reason.
      seeds: which seeds did what, when a parameter was chosen from data (``{"chosen on": ..., "judged
        on": ...}``): the two must be disjoint.

    Raises:
      TypeError: a decision or control of the wrong type.
    """

    measured: dict[str, Any]
    predicted: dict[str, Any]
    tolerance: str
    decisions: tuple[Decision, ...] = ()
    stderr: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    controls: tuple[Control, ...] = ()
    no_control: str = ""
    seeds: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "decisions", tuple(self.decisions))
        object.__setattr__(self, "controls", tuple(self.controls))
        for d in self.decisions:
            if not isinstance(d, Decision):
                raise TypeError(f"decisions must be Decision instances, got {type(d).__name__}")
        for c in self.controls:
            if not isinstance(c, Control):
                raise TypeError(f"controls must be Control instances, got {type(c).__name__}")

    @property
    def verdict(self) -> Verdict:
        return verdict_of(self.decisions, self.controls)

    @property
    def controls_rejected(self) -> bool:
        """Every control was rejected (vacuously true without controls)."""
        return all(c.rejected for c in self.controls)

    def margins(self) -> list[tuple[float, float]]:
        """``(|margin_se|, critical)`` of every own and control decision decided on a standard error."""
        ds = list(self.decisions) + [c.decision for c in self.controls]
        return [(abs(d.margin_se), d.critical or 0.0) for d in ds
                if d.margin_se is not None and math.isfinite(d.margin_se)]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "verdict": self.verdict,
                "controls": [{**asdict(c), "rejected": c.rejected} for c in self.controls]}


@dataclass(frozen=True)
class PaperValue:
    """A number the paper itself reports for a quantity the claim measures (shown beside ours).

    Attributes:
      value: the paper's number (a float or int; a short string for a range such as ``"0.35-0.40"``).
      where: where the paper reports it (``"Table 1"``, ``"Figure 3 caption"``, ``"Section 4.2"``).
      measured: the key of ``Evidence.measured`` it compares with (a tuple of keys for a nested value;
        empty when none is comparable); ``Evidence.stderr`` under the same key gives the difference in SE.
    """

    value: Any
    where: str
    measured: str | tuple[str, ...] = ""


@dataclass(frozen=True)
class Claim:
    """A registered claim. ``expected`` is the verdict our measurement is known to give (one verdict, or
    a scale -> verdict mapping), and ``why`` explains any expectation other than ``"holds"``. ``reads``
    names the figures whose results the check is handed (as :class:`Reads`). ``paper_values`` are the
    numbers the paper reports for what the claim measures (``paper=`` of :func:`claim`; the name
    ``paper`` is the paper's module name)."""

    id: str
    source: str
    statement: str
    check: Callable[..., Evidence]
    expected: Verdict | Mapping[str, Verdict] = "holds"
    why: str = ""
    reads: tuple[str, ...] = ()
    paper_values: tuple[PaperValue, ...] = ()

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]

    def expected_at(self, scale: str) -> Verdict:
        """The expected verdict at ``scale``."""
        return self.expected if isinstance(self.expected, str) else self.expected[scale]

    @property
    def takes_reads(self) -> bool:
        """Whether the check takes an argument (the :class:`Reads`)."""
        return len(inspect.signature(self.check).parameters) > 0

    def load(self, scale: str, seed_offset: int = 0) -> Reads:
        """The results of the figures in ``reads`` at ``scale`` (through :func:`figure_result`).

        Raises: NotMeasured, ConfigError (as :func:`figure_result`)."""
        return Reads({n: figure_result(n, scale, seed_offset) for n in self.reads}, scale, seed_offset,
                     self.id)

    def decide(self, reads: Reads) -> Evidence:
        """Run the check on ``reads``. Raises TypeError when it returns anything but :class:`Evidence`,
        ValueError when it gives neither controls nor a reason for having none."""
        ev = self.check(reads) if self.takes_reads else self.check()
        if not isinstance(ev, Evidence):
            raise TypeError(f"check of {self.id} returned {type(ev).__name__}, not Evidence")
        if not ev.controls and not ev.no_control:
            raise ValueError(f"{self.id} returned no controls and no one-line reason why it has none")
        return ev

    def run(self, scale: str = "quick", seed_offset: int = 0) -> Evidence:
        return self.decide(self.load(scale, seed_offset))


def stability(c: Claim, reads: Reads, full: Evidence) -> dict[str, Any] | None:
    """Re-decide claim ``c`` with seeds left out of the arrays it read, without running anything again:
    each seed once (up to :data:`STABILITY_MAX_LOO` seeds), else :data:`STABILITY_FOLDS` disjoint folds
    (each result split over its own seed count).

    Returns ``None`` when no array it read has a seed axis (an exact or deterministic claim), else
    ``agree`` (re-decisions with the full verdict), ``total``, ``min_margin_se`` (the smallest
    ``|margin_se|`` of any decision, full run and re-decisions), ``min_slack_se`` (the smallest
    ``|margin_se| - critical``: how many SE the closest decision is from changing), ``fragile`` (any
    re-decision disagrees), ``left_out`` (the folds) and ``changed`` (the folds whose verdict changed).
    A re-decision that raises counts as a disagreement.
    """
    n = reads.n_seeds()
    if n == 0:
        return None
    loo = n <= STABILITY_MAX_LOO
    folds = [[i] for i in range(n)] if loo else [f"fold {k + 1} of {STABILITY_FOLDS}" for k in range(STABILITY_FOLDS)]
    margins = full.margins()
    agree, changed = 0, []
    for k, fold in enumerate(folds):
        try:
            ev = c.decide(reads.without(fold) if loo else reads.without_fold(k, STABILITY_FOLDS))
            v = ev.verdict
            margins += ev.margins()
        except Exception as e:  # noqa: BLE001 - a check that breaks without a seed is not stable
            v = f"error ({type(e).__name__})"
        if v == full.verdict:
            agree += 1
        else:
            changed.append({"left_out": fold, "verdict": v})
    return {"agree": agree, "total": len(folds), "n_seeds": n,
            "design": "leave one seed out" if n <= STABILITY_MAX_LOO else f"{STABILITY_FOLDS} disjoint folds",
            "min_margin_se": min((m for m, _ in margins), default=None),
            "min_slack_se": min((m - k for m, k in margins), default=None),
            "fragile": agree < len(folds), "changed": changed}


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
    stability: dict[str, Any] | None = None
    seed_offset: int = 0
    non_finite: dict[str, Any] | None = None  # claims.reads.non_finite_read: what non-finite values it read

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
        """The verdict is the expected one; a fragile verdict (one that a seed left out changes) counts as
        "inconclusive", so a claim registered as expected inconclusive for its fragility is as expected."""
        if self.evidence is None:
            return False
        return self.evidence.verdict == self.expected or (self.fragile and self.expected == "inconclusive")

    @property
    def fragile(self) -> bool:
        return bool(self.stability and self.stability["fragile"])

    @property
    def ok(self) -> bool:
        """As expected and not fragile (a fragile verdict is allowed only where "inconclusive" is
        expected), or honestly not measured at this scale (neither an error nor a surprise)."""
        return (self.as_expected and (not self.fragile or self.expected == "inconclusive")) or bool(
            self.not_measured)

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return jsonable({
            "id": c.id, "paper": c.paper, "source": c.source, "statement": c.statement,
            "scale": self.scale, "expected": self.expected, "why": c.why, "verdict": self.verdict,
            "as_expected": self.as_expected, "fragile": self.fragile, "seed_offset": self.seed_offset,
            "seconds": round(self.seconds, 3), "error": self.error, "not_measured": self.not_measured,
            "non_finite": self.non_finite,
            "paper_values": [asdict(p) for p in c.paper_values],
            "evidence": None if self.evidence is None else {
                **self.evidence.to_dict(), "reads": list(c.reads), "stability": self.stability},
        })


REGISTRY: dict[str, Claim] = {}


def claim(id: str, *, source: str, statement: str, expected: Verdict | Mapping[str, Verdict] = "holds",
          why: str = "", reads: tuple[str, ...] = (), paper: PaperValue | tuple[PaperValue, ...] = ()):
    """Decorator registering ``fn(r: Reads) -> Evidence`` (or ``fn() -> Evidence`` for a claim that reads
    nothing) as the check of claim ``id``. ``reads`` names the figures (``paper_configs/<name>.yaml``)
    whose results the check is handed; ``expected`` is one verdict, or one per scale
    (``{"quick": ..., "paper": ...}``); ``paper`` the numbers the paper reports (:class:`PaperValue`).

    Raises:
      ValueError: malformed id (must be ``<paper>.<slug>``), duplicate id, unknown expected verdict or
        scale, an expectation other than ``"holds"`` without a ``why``, a check that declares reads
        but takes no argument, or a ``paper`` entry that is not a PaperValue saying where.
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

    reads = (reads,) if isinstance(reads, str) else tuple(reads)
    paper = tuple(paper) if isinstance(paper, (list, tuple)) else (paper,)
    if not all(isinstance(p, PaperValue) and p.where.strip() for p in paper):
        raise ValueError(f"claim {id}: paper= takes PaperValue(value, where=...) entries, each saying where")

    def register(fn: Callable[..., Evidence]) -> Callable[..., Evidence]:
        if id in REGISTRY and REGISTRY[id].check.__qualname__ != fn.__qualname__:
            raise ValueError(f"claim {id} is registered twice")
        c = Claim(id, source, statement, fn, expected, why, reads, paper)
        if reads and not c.takes_reads:
            raise ValueError(f"claim {id} declares reads={reads} but its check takes no argument")
        REGISTRY[id] = c
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


def _nearest(name: str, known) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``known`` (difflib), or ``""`` when none is close."""
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def select(paper: str | None = None, claim_id: str | None = None) -> list[Claim]:
    """Registered claims filtered by paper and/or id, sorted by id.

    Raises:
      KeyError: an unknown paper or claim id, or a selection that matches no claim (the message says
        which and lists what exists).
    """
    reg = discover()
    if paper is not None and paper not in papers():
        raise KeyError(f"unknown paper {paper!r}{_nearest(paper, papers())}; known: {', '.join(papers())}")
    if claim_id is not None and claim_id not in reg:
        raise KeyError(f"unknown claim {claim_id!r}{_nearest(claim_id, reg)}; `python -m claims list` shows the ids")
    out = [c for c in reg.values()
           if (paper is None or c.paper == paper) and (claim_id is None or c.id == claim_id)]
    if not out:
        raise KeyError(f"no claim matches --claim {claim_id} together with --paper {paper}")
    return sorted(out, key=lambda c: c.id)


def run(claims: list[Claim], *, scale: str = "quick", seed_offset: int = 0,
        on_done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
    """Run each claim's check at ``scale`` (on figure results whose root seeds are shifted by
    ``seed_offset``), then re-decide it with seeds left out (:func:`stability`) when it read per-seed
    arrays. A check that raises becomes an ``error`` outcome, never a crash, and one whose figure
    result does not exist at that scale a ``not measured`` outcome. Each outcome records the non-finite
    values its check read (:func:`claims.reads.non_finite_read`)."""
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
    outcomes = []
    for c in claims:
        t0 = time.perf_counter()
        kw = {"scale": scale, "seed_offset": seed_offset}
        try:
            reads = c.load(scale, seed_offset)
            ev = c.decide(reads)
            nf = non_finite_read(reads, [d.statistic for d in ev.decisions]
                                 + [k.decision.statistic for k in ev.controls])
            o = Outcome(c, ev, time.perf_counter() - t0, stability=stability(c, reads, ev), non_finite=nf, **kw)
        except NotMeasured as e:
            o = Outcome(c, None, time.perf_counter() - t0, not_measured=str(e), **kw)
        except Exception:  # noqa: BLE001 - the ledger reports a broken check, it does not crash
            o = Outcome(c, None, time.perf_counter() - t0, traceback.format_exc(limit=3), **kw)
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
    """One line: how many claims gave their expected verdict, every claim whose verdict is not "holds"
    (by verdict), every fragile one, and which were unexpected."""
    bad = [o.claim.id for o in outcomes if not o.ok]
    good = sum(o.as_expected for o in outcomes)
    missing = sum(bool(o.not_measured) for o in outcomes)
    counts = {v: sum(o.verdict == v for o in outcomes) for v in VERDICTS + ("error", NOT_MEASURED)}
    tally = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    scale = outcomes[0].scale if outcomes else "quick"
    offset = outcomes[0].seed_offset if outcomes else 0
    named = "; ".join(f"{v}: {', '.join(o.claim.id for o in outcomes if o.verdict == v)}"
                      for v in VERDICTS[1:] + ("error", NOT_MEASURED) if counts[v])
    fragile = [o.claim.id for o in outcomes if o.fragile]
    return (f"{good} of {len(outcomes) - missing} measured claims gave their expected verdict at {scale} "
            f"scale{f' (seed offset {offset})' if offset else ''} ({tally})"
            + (f"; {missing} not measured at this scale (not a failure)" if missing else "")
            + (f"; {named}" if named else "")
            + (f"; fragile (a verdict that changes when a seed is left out): {', '.join(fragile)}"
               if fragile else "; no fragile verdict")
            + (f"; unexpected: {', '.join(bad)}" if bad else ""))


def fmt_decision(d: Decision) -> str:
    """One decision in a line: name, outcome, statistic against threshold, margin in SE, test."""
    margin = "" if d.margin_se is None else f", margin {d.margin_se:+.3g} SE (needs {d.critical or 0:.3g})"
    return f"{d.name}: {d.decision} ({fmt(d.statistic)} vs {fmt(d.threshold)}{margin}; {d.test})"


def fmt_stability(st: dict[str, Any] | None) -> str:
    if st is None:
        return ""
    m = st["min_slack_se"]
    return (f"{st['agree']}/{st['total']} agree ({st['design']})"
            + ("" if m is None else f", closest {m:+.3g} SE from changing")
            + (" FRAGILE" if st["fragile"] else ""))


def fmt_non_finite(nf: dict[str, Any] | None) -> str:
    """The non-finite values a check read (:func:`claims.reads.non_finite_read`) in a line: whether the
    check left them out, then which arrays (by figure) and how many values each; ``""`` when it read none."""
    if not nf:
        return ""
    by_fig: dict[str, list[str]] = {}
    for k, n in nf["arrays"].items():
        fig, arr = k.split(".", 1)
        by_fig.setdefault(fig, []).append(f"{arr} {n}")
    where = "; ".join(f"{fig}: {', '.join(a)}" for fig, a in by_fig.items())
    return ("non-finite values read, left out by the check (every decision finite): " if nf["excluded"] else
            "non-finite values read, and a decision came out non-finite (not decided): ") + where


def _cell(x: str) -> str:
    """A markdown table cell: pipes escaped, one line."""
    return x.replace("|", "\\|").replace("\n", " ")


def to_markdown(outcomes: list[Outcome]) -> str:
    """The ledger as a markdown report: a summary line and table, then each claim's evidence."""
    lines = ["# Claims ledger", "", summary(outcomes), "",
             "| claim | verdict | expected | stability | controls | s |", "|---|---|---|---|---|---|"]
    for o in outcomes:  # short rows: each claim's evidence follows the table
        ev = o.evidence
        ctl = "" if ev is None else (
            f"{sum(c.rejected for c in ev.controls)}/{len(ev.controls)} rejected" if ev.controls
            else "none (see below)" if ev.no_control else "none")
        cells = [f"[`{o.claim.id}`](#{o.claim.id.replace('.', '')})", o.verdict, o.expected,
                 fmt_stability(o.stability) or "-", ctl, f"{o.seconds:.1f}"]
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
        for d in ev.decisions:
            lines.append(f"- decision {fmt_decision(d)}")
        for ctl in ev.controls:
            lines.append(f"- control ({'rejected' if ctl.rejected else 'NOT REJECTED'}): {ctl.case}: "
                         f"{fmt_decision(ctl.decision)}" + (f"; {fmt(ctl.measured)}" if ctl.measured else ""))
        if o.stability:
            lines.append(f"- stability: {fmt_stability(o.stability)}"
                         + "".join(f"; without {c['left_out']}: {c['verdict']}" for c in o.stability["changed"]))
        if o.non_finite:
            lines.append(f"- {fmt_non_finite(o.non_finite)}")
        if ev.seeds:
            lines.append(f"- seeds: {fmt(ev.seeds)}")
        if ev.no_control:
            lines.append(f"- no control: {ev.no_control}")
        if ev.notes:
            lines.append(f"- notes: {ev.notes}")
        lines.append("")
    return "\n".join(lines)
