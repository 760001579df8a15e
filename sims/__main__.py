"""``python -m sims``: the simulations and their figures; ``python -m sims NAME ... [--scale S] [--force]``
runs the configs named (a figure name ``paper_configs/<name>.yaml``, or a paper name for all its
figures) in one process, skipping current results. One simulation: ``python -m sims.<paper> --config``.
``python -m sims plan [NAME ...] [--scale paper] [--smoke]``: the paper-scale plan (:mod:`sims.plan`).

Exit status: 0, or 2 with one line for an unknown name, a bad config or an unwritable results folder; 130
after Ctrl-C, with one line saying what was kept for a rerun.
"""

from __future__ import annotations

import argparse
import sys
import textwrap

from sims import cli, plan, results, runtime
from sims.config import SCALES, ConfigError


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["plan"]:
        return plan.main(argv[1:])
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
        try:  # wrapped at 160 characters; a closed pipe (| head) ends the listing quietly
            for paper, names in papers.items():
                print(textwrap.fill(f"{paper}: {' '.join(names)}", 160, subsequent_indent="  "))
            print("run: python -m sims NAME ... [--scale quick|paper]; one: python -m sims.<paper> --config "
                  "paper_configs/<name>.yaml\nrun and render a paper: make figures-<paper>; paper-scale plan: "
                  "python -m sims plan")
        except BrokenPipeError:
            cli.pipe_closed()
        return 0
    try:
        todo = cli.expand_names(a.names, papers)
    except cli.UnknownName as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not a.out.strip():
        print("error: --out needs a folder path, got an empty string", file=sys.stderr)
        return 2
    try:
        runtime.setup()
    except runtime.SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for k, name in enumerate(todo, 1):
        try:
            _, meta = cli.run_config(cli.CONFIGS / f"{name}.yaml", a.scale, force=a.force, outdir=a.out,
                                     quiet=True)
        except (ConfigError, results.ResultError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            return cli.interrupted(cli.kept_for_rerun(todo, results.scale_dir(a.out, a.scale)))
        if runtime.is_writer():
            state = "current" if meta.get("skipped") else f"computed in {meta['wall_time_s']:.1f} s"
            print(f"[{k}/{len(todo)}] {name}: {state}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
