"""Command line of the claims ledger.

    python -m theory list [--paper P]
    python -m theory verify [--paper P] [--claim ID] [--json PATH] [--markdown PATH]

``verify`` prints a table of verdicts and exits 0 only when every claim's verdict is the one it is
expected to have (a claim shown to fail here is registered as expected to fail, with the reason).
Bad arguments exit 2 with one line.
"""

from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m theory", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_list = sub.add_parser("list", help="list registered claims")
    p_list.add_argument("--paper")
    p_ver = sub.add_parser("verify", help="run the checks and print the ledger")
    p_ver.add_argument("--paper")
    p_ver.add_argument("--claim")
    p_ver.add_argument("--json", help="write the outcomes as JSON to this path")
    p_ver.add_argument("--markdown", help="write the ledger as markdown to this path")
    args = parser.parse_args(argv)

    from sims import runtime
    runtime.setup()
    from theory import ledger

    try:
        claims = ledger.select(args.paper, getattr(args, "claim", None))
    except KeyError as e:
        print(f"error: {e.args[0]}", file=sys.stderr)
        return 2

    if args.cmd == "list":
        for c in claims:
            tag = "" if c.expected == "holds" else f"  [expected: {c.expected}]"
            print(f"{c.id:48s} {c.source}{tag}")
        return 0

    width = max((len(c.id) for c in claims), default=10)
    print(f"{'claim':{width}s}  {'verdict':12s} {'expected':12s} {'s':>7s}  evidence")

    def show(o):
        ev = o.evidence
        mark = "ok " if o.as_expected else "XX "
        detail = (f"measured {ledger.fmt(ev.measured)} | predicted {ledger.fmt(ev.predicted)}"
                  f" | tol {ev.tolerance}") if ev else o.error.strip().splitlines()[-1]
        print(f"{o.claim.id:{width}s}  {mark}{o.verdict:9s} {o.claim.expected:12s} {o.seconds:7.1f}  "
              f"{detail}", flush=True)

    outcomes = ledger.run(claims, on_done=show)
    bad = [o.claim.id for o in outcomes if not o.as_expected]
    print("\n" + ledger.summary(outcomes))
    from sims.results import write_atomic

    if args.json:
        write_atomic(args.json, json.dumps([o.to_dict() for o in outcomes], indent=2).encode())
    if args.markdown:
        write_atomic(args.markdown, (ledger.to_markdown(outcomes) + "\n").encode())
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
