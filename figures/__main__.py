"""Render one figure from its saved result: ``python -m figures <name> [--results DIR] [--out DIR]``.

The figure module is ``figures/<sim>.py`` (``sim`` from the result's sidecar); its ``PLOTS`` maps the
experiment name to ``plot(arrays, meta) -> matplotlib.figure.Figure``. Rendering uses the non-interactive
Agg backend, so it works with no display, and it never touches the results.
"""

from __future__ import annotations

import argparse
import importlib
import io
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")


def render(name: str, results_dir: str = "results", out_dir: str = "figures/out") -> list[Path]:
    """Render result ``name`` to PNG and PDF in ``out_dir``; returns the written paths.

    Raises:
      FileNotFoundError: the result does not exist (run the simulation first).
    """
    import matplotlib.pyplot as plt

    from sims import results

    arrays, meta = results.load(name, results_dir)
    mod = importlib.import_module(f"figures.{meta['sim']}")
    fig = mod.PLOTS[meta["experiment"]](arrays, meta)
    fig.text(0.995, 0.005, f"{name} | {meta['scale']} | {meta['git_commit'][:12]} | "
             f"{meta['device_count']} dev", ha="right", va="bottom", fontsize=6, color="0.5")
    written = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=150, bbox_inches="tight")
        path = Path(out_dir) / f"{name}.{ext}"
        results.write_atomic(path, buf.getvalue())
        written.append(path)
    plt.close(fig)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m figures", description=__doc__.splitlines()[0])
    p.add_argument("name")
    p.add_argument("--results", default="results")
    p.add_argument("--out", default="figures/out")
    a = p.parse_args(argv)
    try:
        for path in render(a.name, a.results, a.out):
            print(f"wrote {path}", file=sys.stderr)
    except FileNotFoundError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
