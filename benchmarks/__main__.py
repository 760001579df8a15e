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

if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count() or 1}"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks")
    p.add_argument("--paper")
    a = p.parse_args(argv)
    from sims import runtime

    runtime.setup()
    import benchmarks

    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__) if not m.name.startswith("_"))
    if a.paper:
        if a.paper not in names:
            print(f"error: no benchmarks/{a.paper}.py; known: {', '.join(names)}", file=sys.stderr)
            return 2
        names = [a.paper]
    print(f"{'benchmark':34s} {'case':28s} {'baseline':>22s} {'s':>9s} {'ours':>22s} {'s':>9s} "
          f"{'ratio':>7s}  check")
    for n in names:
        for r in importlib.import_module(f"benchmarks.{n}").run():
            print(f"{r['benchmark']:34s} {r['case']:28s} {r['baseline']:>22s} {r['baseline_s']:9.4f} "
                  f"{r['ours']:>22s} {r['ours_s']:9.4f} {r['ratio']:7.2f}  {r['check']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
