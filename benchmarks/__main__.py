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
from sims import runtime  # noqa: E402


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks")
    p.add_argument("--paper")
    a = p.parse_args(argv)
    runtime.setup()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
