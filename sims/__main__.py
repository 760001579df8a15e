"""``python -m sims``: the simulations and their figures; ``python -m sims NAME ... [--scale S] [--force]``
runs the configs named (a figure name ``paper_configs/<name>.yaml``, or a paper name for all its
figures) in one process, skipping current results. One simulation: ``python -m sims.<paper> --config``.

Exit status: 0, or 2 with one line for an unknown name, a bad config or an unwritable results folder.
"""

from __future__ import annotations

import argparse
import difflib
import sys

from sims import cli, results, runtime
from sims.config import SCALES, ConfigError


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sims", description=__doc__.splitlines()[0].strip("`: "))
    p.add_argument("names", nargs="*", metavar="NAME", help="figure or paper names (none: list them)")
    p.add_argument("--scale", default="quick", choices=SCALES)
    p.add_argument("--force", action="store_true", help="recompute even if current (discards stored pieces)")
    p.add_argument("--out", default="results", help="results root; writes <out>/<scale>/ (default: results)")
    a = p.parse_args(argv)
    try:
        papers = cli.figures_by_paper()
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not a.names:
        for paper, names in papers.items():
            print(f"{paper}: {' '.join(names)}")
        print("run: python -m sims NAME ... [--scale quick|paper]; one: python -m sims.<paper> --config "
              "paper_configs/<name>.yaml; run and render a paper: make figures-<paper>")
        return 0
    known = [*papers, *(n for names in papers.values() for n in names)]
    todo = []
    for name in a.names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            print(f"error: '{name}' is neither a paper nor a figure ({hint}python -m sims lists them)",
                  file=sys.stderr)
            return 2
        todo += papers.get(name, [name])
    if not a.out.strip():
        print("error: --out needs a folder path, got an empty string", file=sys.stderr)
        return 2
    try:
        runtime.setup()
    except runtime.SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    todo = list(dict.fromkeys(todo))  # each figure once, in the order asked
    for k, name in enumerate(todo, 1):
        try:
            _, meta = cli.run_config(cli.CONFIGS / f"{name}.yaml", a.scale, force=a.force, outdir=a.out,
                                     quiet=True)
        except (ConfigError, results.ResultError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        if runtime.is_writer():
            state = "current" if meta.get("skipped") else f"computed in {meta['wall_time_s']:.1f} s"
            print(f"[{k}/{len(todo)}] {name}: {state}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
