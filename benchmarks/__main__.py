"""``python -m benchmarks [--paper P]``: run every benchmark module and print one table.

On a CPU-only machine the host is split into as many simulated devices as it has cores, so that sharded
code paths can be timed against one device in the same run.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sys

# Before JAX is imported (below): the simulated device count is read once, at JAX's start.
if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count() or 1}"

import benchmarks  # noqa: E402
from sims import cli, runtime  # noqa: E402
from sims.config import ConfigError  # noqa: E402


def figure_times(scale: str = "quick", results_dir: str = "results") -> list[str]:
    """One line per figure: the measured wall time of its current result at ``scale`` (from the sidecar),
    the seconds XLA spent compiling during that run and the persistent-cache hits and misses, so that a
    cold start (misses) and a warm one (hits only) are told apart; ``wall - compile`` is what the run costs
    once every function is compiled. A result that is not current is listed as such (``make figures``
    makes it)."""
    head = f"{'figure':34s} {'wall_s':>8s} {'compile_s':>9s} {'wall-compile_s':>14s} {'cache':>13s}  measured"
    lines = [head]
    total = [0.0, 0.0]
    for paper, names in cli.figures_by_paper().items():
        for name in names:
            got = cli.stored_result(name, scale, results_dir)
            if got is None:
                lines.append(f"{name:34s} {'not current: make fig-' + name}")
                continue
            meta = got[1]
            wall, comp = float(meta.get("wall_time_s", float("nan"))), meta.get("compile")
            cs = float(comp["compile_s"]) if comp else float("nan")
            cache = (f"{'cold' if comp['cache_misses'] else 'warm'} {comp['cache_hits']}h/{comp['cache_misses']}m"
                     if comp else "not recorded")
            total[0] += wall
            total[1] += cs if comp else 0.0
            c1, c2 = (f"{cs:9.1f}", f"{wall - cs:14.1f}") if comp else (f"{'-':>9s}", f"{'-':>14s}")
            lines.append(f"{name:34s} {wall:8.1f} {c1} {c2} {cache:>13s}  "
                         f"{meta.get('finished', '?')[:16]} on {meta.get('device_count', '?')} device(s)")
    lines.append(f"{'total':34s} {total[0]:8.1f} {total[1]:9.1f} {total[0] - total[1]:14.1f}")
    return lines


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks")
    p.add_argument("--paper")
    p.add_argument("--figures-only", action="store_true",
                   help="only the table of each figure's measured quick-scale time (reads the sidecars)")
    a = p.parse_args(argv)
    try:
        runtime.setup()
        return _tables(a)
    except (runtime.SetupError, ConfigError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return cli.interrupted("benchmarks keep nothing (the table is printed at the end) and never write results; "
                               "rerun the same command")


def _tables(a: argparse.Namespace) -> int:
    """The benchmark table (and each figure's measured time) for the parsed arguments ``a``."""
    if a.figures_only:
        print("\n".join(figure_times()))
        return 0
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if not m.name.startswith("_") and m.name != "timing")
    if a.paper:
        if a.paper not in names:
            print(f"error: no benchmarks/{a.paper}.py; known: {', '.join(names)}", file=sys.stderr)
            return 2
        names = [a.paper]
    cols = ("benchmark", "case", "baseline", "baseline_s", "ours", "ours_s", "ratio", "check")
    rows = []
    for n in names:
        for r in importlib.import_module(f"benchmarks.{n}").run():
            rows.append({k: (f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k])) for k in cols})
            print(f"  done: {r['benchmark']} / {r['case']}", file=sys.stderr, flush=True)
    width = {k: max([len(k)] + [len(r[k]) for r in rows]) for k in cols}
    print("  ".join(k.ljust(width[k]) for k in cols))
    for r in rows:
        print("  ".join(r[k].ljust(width[k]) for k in cols))
    if not a.paper:
        print("\nEach figure's quick-scale run, as measured when its result was made (sidecars; make figures):")
        print("\n".join(figure_times()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
