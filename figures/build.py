"""Every figure of one or more papers in one process: ``python -m figures.build PAPER ... [--scale S]``
(what ``make figures`` runs, one process per paper, so ``make -j2 figures`` runs two papers side by side).

For each config ``paper_configs/<name>.yaml`` whose ``sim`` is one of the papers, in name order: the
simulation runs unless its result is current (same config hash and code hash, intact files; a damaged
result is recomputed), then the figure is rendered unless its PNG and PDF are newer than the result and
the plotting code. One line per figure::

    [k/N] name: current | computed in S s ; rendered | figure current

A long simulation shows a progress bar on stderr (``PBE_PROGRESS=0`` hides it). Two papers never write
the same file: results, pieces and figures are per figure name, each written atomically under a lock.

Exit status: 0, or 2 with one line for an unknown paper, a bad config or an unwritable folder; 130 after
Ctrl-C, with one line saying what was kept for a rerun.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
import time
from pathlib import Path

from figures.__main__ import render
from sims import cli, results, runtime, xla
from sims.config import SCALES, ConfigError

FIGURES = Path(__file__).resolve().parent


def figure_is_current(name: str, sim: str, scale: str, results_dir: Path, out_dir: Path) -> bool:
    """Whether ``<out_dir>/<scale>/<name>.png`` and ``.pdf`` are newer than the result and the plotting
    code (``figures/<sim>.py``, ``figures/__main__.py``): the rule ``make fig-<name>`` applies."""
    outs = [out_dir / scale / f"{name}.{ext}" for ext in ("png", "pdf")]
    inputs = [*results.paths(name, results.scale_dir(results_dir, scale)), FIGURES / f"{sim}.py",
              FIGURES / "__main__.py"]
    if not all(p.is_file() for p in outs) or not all(p.is_file() for p in inputs):
        return False
    return min(p.stat().st_mtime for p in outs) >= max(p.stat().st_mtime for p in inputs)


def build(papers: list[str], scale: str = "quick", results_dir: str | Path = "results",
          out_dir: str | Path = "figures/out", force: bool = False, configs: Path = cli.CONFIGS) -> list[str]:
    """Run (unless current) and render (unless current) every figure of ``papers`` (the configs in
    ``configs``); returns the lines printed, one per figure.

    Raises:
      ConfigError: a config of these papers does not match its schema.
      ResultError: a result or figure folder cannot be written.
    """
    results_dir, out_dir = Path(results_dir), Path(out_dir)
    by_paper = cli.figures_by_paper(configs)
    names = [(p, n) for p in papers for n in by_paper.get(p, [])]
    lines = []
    for k, (paper, name) in enumerate(names, 1):
        t0 = time.perf_counter()
        _, meta = cli.run_config(Path(configs) / f"{name}.yaml", scale, force=force, outdir=results_dir,
                                 quiet=True)
        state = "current" if meta.get("skipped") else f"computed in {time.perf_counter() - t0:.1f} s"
        if meta.get("non_finite"):
            state += f" (non-finite entries: {sum(meta['non_finite'].values())}, counted in the sidecar)"
        if runtime.is_writer():
            if figure_is_current(name, paper, scale, results_dir, out_dir) and meta.get("skipped"):
                state += "; figure current"
            else:
                render(name, scale, results_dir, out_dir)
                state += "; rendered"
            line = f"[{k}/{len(names)}] {name}: {state}"
            print(line, flush=True)
            lines.append(line)
    return lines


def default_jobs(scale: str) -> int:
    """How many papers ``make figures`` runs side by side unless told (``FIGURE_JOBS``, or make's own -j): the
    cores this process may use at quick scale on a CPU-only machine (:func:`sims.xla.cpu_only`), else 1 (one
    JAX process takes most of an accelerator's memory, and paper scale is for accelerators)."""
    if scale != "quick" or not xla.cpu_only():
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def main(argv: list[str] | None = None) -> int:
    sims = cli.simulation_modules()
    p = argparse.ArgumentParser(prog="python -m figures.build",
                                description="Run and render every figure of the given papers in one process.")
    p.add_argument("papers", nargs="*", metavar="PAPER", help=f"one or more of: {', '.join(sims)}")
    p.add_argument("--scale", default="quick", choices=SCALES)
    p.add_argument("--force", action="store_true", help="recompute every result (discards stored pieces)")
    p.add_argument("--results", default="results", help="results root (writes <results>/<scale>/)")
    p.add_argument("--out", default="figures/out", help="figures root (writes <out>/<scale>/)")
    p.add_argument("--default-jobs", action="store_true",
                   help="print how many papers make figures runs side by side at --scale, and exit")
    a = p.parse_args(argv)
    if a.default_jobs:
        print(default_jobs(a.scale))
        return 0
    if not a.papers:
        p.error("give one or more papers")
    for paper in a.papers:
        if paper not in sims:
            close = difflib.get_close_matches(paper, sims, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            print(f"error: no paper '{paper}' (no simulation module sims/{paper}); {hint}known: "
                  f"{', '.join(sims)}", file=sys.stderr)
            return 2
    for flag, value in (("--results", a.results), ("--out", a.out)):
        if not value.strip():
            print(f"error: {flag} needs a folder path, got an empty string", file=sys.stderr)
            return 2
    try:
        runtime.setup()
    except runtime.SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        build(a.papers, a.scale, a.results, a.out, a.force)
    except (ConfigError, results.ResultError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        names = [n for paper, ns in cli.figures_by_paper().items() if paper in a.papers for n in ns]
        return cli.interrupted(cli.kept_for_rerun(names, results.scale_dir(a.results, a.scale)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
