"""Command line of the claims ledger.

    python -m claims list [--paper P]
    python -m claims verify [--scale quick|paper] [--paper P] [--claim ID] [--json PATH] [--markdown PATH]
                            [--seed-offset N]
    python -m claims report [--scale quick|paper] [--seed-offset N] [--json PATH] [--out DIR]

``verify`` prints a table of verdicts and exits 0 only when every measured claim's verdict is the one it
is expected to have at that scale (a claim shown to fail here is registered as expected to fail, with
the reason); a claim whose figure has no current result at paper scale is reported as not measured and
does not fail the run (the summary counts it). Claims
that read a figure's result read it at the scale asked (``results/<scale>/``). Bad arguments, a
selection that matches no claim, and a report that cannot be written exit 2 with one line, before any
claim runs.

``report`` writes the ledger as a static site (``reports/<scale>/site/``, :mod:`claims.report`) from the
JSON ``verify`` wrote and the saved results and figures; it runs nothing, and a missing or stale JSON
is one line saying which ``make verify`` to run, exit 2.

``--seed-offset N`` replicates on fresh seeds: every figure is rerun with its root seed shifted by N into
``results/<scale>/seed-offset-N/`` (``results/<scale>/`` is never touched), and each claim's verdict is
printed beside its verdict on the default seeds, with the replication rate.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from claims import ledger, report
from sims import cli, runtime
from sims.results import SCALES, ResultError, check_writable, dumps, write_atomic


WIDTH = 160  # characters of a console line at most; the details are in --json, --markdown and the report


def _fit(line: str, width: int = WIDTH) -> str:
    """``line`` cut to ``width`` characters, ending in an ellipsis when cut."""
    return line if len(line) <= width else line[: width - 1] + "…"


def _say(line: str = "") -> None:
    """Print one line; a closed pipe (``| head``) silences the rest of the output instead of ending the
    run, so the reports are still written and the exit status still says what the ledger found."""
    try:
        print(line, flush=True)
    except BrokenPipeError:
        cli.pipe_closed()


def main(argv: list[str] | None = None) -> int:
    """The command line's one error boundary: a report that cannot be written (a full disk) is one line and
    exit status 2; Ctrl-C is one line saying what was kept and exit status 130, never a traceback."""
    try:
        return _main(argv)
    except ResultError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return cli.interrupted(f"no report was written; the figure results and pieces computed so far (if any) are "
                               f"kept in {ledger.RESULTS}/ and rerunning the same command resumes from them")


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="python -m claims", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="list registered claims")
    p_list.add_argument("--paper", help="only this paper's claims")
    p_ver = sub.add_parser("verify", help="run the checks and print the ledger")
    p_ver.add_argument("--scale", default="quick", choices=SCALES,
                       help="which results the claims read (default: quick)")
    p_ver.add_argument("--paper", help="only this paper's claims (e.g. seesaw)")
    p_ver.add_argument("--claim", help="only this claim (an id from `python -m claims list`)")
    p_ver.add_argument("--json", help="write the outcomes as JSON to this path")
    p_ver.add_argument("--markdown", help="write the ledger as markdown to this path")
    p_ver.add_argument("--seed-offset", type=int, default=0, metavar="N",
                       help="replicate: shift every figure's root seed by N >= 1 (results/<scale>/seed-offset-N/) "
                            "and print each verdict beside the default seeds' verdict")
    p_rep = sub.add_parser("report", help="write the ledger as a static site from the JSON of `verify`")
    p_rep.add_argument("--scale", default="quick", choices=SCALES, help="which run to show (default: quick)")
    p_rep.add_argument("--seed-offset", type=int, default=0, metavar="N",
                       help="the replication at seed offset N (reports/<scale>/seed-offset-N/)")
    p_rep.add_argument("--json", help="the ledger JSON to show (default: reports/<scale>/claims.json)")
    p_rep.add_argument("--out", help="the site folder (default: reports/<scale>/site)")
    p_rep.add_argument("--no-screenshot", action="store_true", help="skip the screenshot of the index")
    args = parser.parse_args(argv)
    if getattr(args, "seed_offset", 0) < 0:
        parser.error(f"--seed-offset must be >= 0, got {args.seed_offset}")
    if args.cmd == "report":
        return _report(args)

    try:
        runtime.setup()
    except runtime.SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        claims = ledger.select(args.paper, getattr(args, "claim", None))
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2

    if args.cmd == "list":
        for c in claims:
            exp = {s: c.expected_at(s) for s in SCALES}
            tag = "" if set(exp.values()) == {"holds"} else "  [expected: " + ", ".join(
                f"{v} at {s}" for s, v in exp.items()) + "]"
            _say(_fit(f"{c.id:48s} {c.source}{tag}"))
        return 0

    for flag, value in (("--json", args.json), ("--markdown", args.markdown)):
        if value is not None and not value.strip():
            print(f"error: {flag} needs a file path, got an empty string", file=sys.stderr)
            return 2
    reports = [Path(p) for p in (args.json, args.markdown) if p]
    try:
        for p in reports:
            if p.is_symlink() or (p.exists() and not p.is_file()):
                raise ResultError(f"{p}: exists and is not a regular file (a folder, link or device); "
                                  "expected a report file path")
            check_writable(p.parent, "the report")
    except ResultError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2

    width = max((len(c.id) for c in claims), default=10)
    offset = args.seed_offset
    base: dict[str, str] = {}
    if offset:
        _say(f"default seeds first (results/{args.scale}/), then seed offset {offset} "
             f"(results/{args.scale}/seed-offset-{offset}/)")
        base = {o.claim.id: o.verdict for o in ledger.run(claims, scale=args.scale)}
    _say(f"scale: {args.scale}" + (f", seed offset {offset}" if offset else "")
         + f"\n{'claim':{width}s}  {'verdict':15s} {'expected':12s} "
         + (f"{'default seeds':14s} " if offset else "") + f"{'s':>7s}  stability | evidence")

    def show(o):
        ev = o.evidence
        mark = ("ok " if o.ok else "XX ") if not o.not_measured else "-- "
        detail = (f"measured {ledger.fmt(ev.measured)} | predicted {ledger.fmt(ev.predicted)}"
                  f" | tol {ev.tolerance}") if ev else (o.not_measured or o.error.strip().splitlines()[-1])
        stab = ledger.fmt_stability(o.stability) or "-"
        was = f"{base.get(o.claim.id, '?'):14s} " if offset else ""
        _say(_fit(f"{o.claim.id:{width}s}  {mark}{o.verdict:12s} {o.expected:12s} {was}{o.seconds:7.1f}  "
                  f"{stab} | {detail}"))

    outcomes = ledger.run(claims, scale=args.scale, seed_offset=offset, on_done=show)
    _say()
    for part in ledger.summary(outcomes).split("; "):  # every named claim shown, lines wrapped at WIDTH
        for line in textwrap.wrap(part, WIDTH, subsequent_indent="  ", break_on_hyphens=False):
            _say(line)
    for o in outcomes:  # which arrays held non-finite values, how many, and whether the check left them out
        if o.non_finite:
            _say(_fit(f"{o.claim.id}: {ledger.fmt_non_finite(o.non_finite)}"))
    if offset:
        measured = [o for o in outcomes
                    if not o.not_measured and base.get(o.claim.id) not in (None, ledger.NOT_MEASURED)]
        changed = [f"{o.claim.id} ({base[o.claim.id]} -> {o.verdict})" for o in measured
                   if o.verdict != base[o.claim.id]]
        _say(f"replication at seed offset {offset}: {len(measured) - len(changed)} of {len(measured)} "
             "verdicts unchanged"
             + (f"; changed: {', '.join(changed)}" if changed else ""))
    if args.json:
        write_atomic(args.json, dumps([o.to_dict() for o in outcomes]))
    if args.markdown:
        write_atomic(args.markdown, (ledger.to_markdown(outcomes) + "\n").encode())
    return 0 if all(o.ok for o in outcomes) else 1


def _report(args) -> int:
    """``python -m claims report``: 0 when the site is written, 2 (one line) when it cannot be."""
    out = Path(args.out) if args.out else report.site_dir(args.scale, args.seed_offset)
    try:
        inp = report.load(args.scale, args.seed_offset, json_path=args.json)
        check_writable(out, "the report site")
        written = report.build(inp, out)
    except (report.ReportError, ResultError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    _say(f"report: {written[0]} and {len(written) - 1} paper pages ({len(inp.outcomes)} claims)")
    if not args.no_screenshot:
        why = report.screenshot(written[0], out / "index.png")
        _say(why or f"screenshot of the index: {out / 'index.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
