"""Render one figure from its saved result:
``python -m figures <name> [--scale quick|paper] [--results DIR] [--out DIR]``.

Reads ``<results>/<scale>/<name>.npz|json`` and writes ``<out>/<scale>/<name>.png`` and ``.pdf``. The
figure module is ``figures/<sim>.py`` (``sim`` from the result's sidecar); its ``PLOTS`` maps the
experiment name to ``plot(arrays, meta) -> matplotlib.figure.Figure``. Rendering uses the non-interactive
Agg backend, so it works with no display, and it never touches the results. A missing or damaged result,
or a figure folder that cannot be written, is one line naming the file, exit status 2; Ctrl-C is one line,
exit status 130.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import io
import re
import sys
from pathlib import Path

import matplotlib
import yaml

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

from sims import cli, results  # noqa: E402
from sims.config import ConfigError  # noqa: E402
from sims.results import SCALES, ResultError, WriteError  # noqa: E402


def render(name: str, scale: str = "quick", results_dir: str | Path = "results",
           out_dir: str | Path = "figures/out") -> list[Path]:
    """Render result ``name`` at ``scale`` to PNG and PDF in ``<out_dir>/<scale>/``; returns the paths.

    Raises:
      ResultError: the result is missing or damaged (run the simulation first).
      WriteError: a figure file cannot be written (read-only folder, full disk).
    """
    folder = results.scale_dir(results_dir, scale)
    arrays, meta = results.load(name, folder)
    sim, experiment = meta.get("sim"), meta.get("experiment")
    plots = {}
    if isinstance(sim, str) and re.fullmatch(r"[A-Za-z0-9_]+", sim):
        try:
            plots = importlib.import_module(f"figures.{sim}").PLOTS
        except ModuleNotFoundError:
            plots = {}
    if experiment not in plots:
        raise ResultError(f"{folder}/{name}.json names no plot: sim {sim!r}, experiment {experiment!r} (a simulation's "
                          "sidecar names both, and the figures module of that sim plots the experiment)")
    fig = plots[experiment](arrays, meta)
    fig.text(0.995, 0.005, f"{name} | {meta['scale']}{' SMOKE (loops truncated)' if meta.get('smoke') else ''} | "
             f"{meta['git_commit'][:12]} | {meta['device_count']} dev", ha="right", va="bottom", fontsize=6,
             color="0.5")
    written = []
    for ext in ("png", "pdf"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=150, bbox_inches="tight")
        path = Path(out_dir) / scale / f"{name}.{ext}"
        results.write_atomic(path, buf.getvalue())
        written.append(path)
    plt.close(fig)
    return written


def _stale_reason(name: str, scale: str, results_dir: str) -> str | None:
    """Why the saved result of a paper figure is not the one its config and today's code make (another
    config with the same file name, a different scale's parameters, older code), or ``None``. Results
    without a config in paper_configs/ (a user's own run) render as they are, stamped with their name."""
    config = results.REPO / "paper_configs" / f"{name}.yaml"
    folder = results.scale_dir(results_dir, scale)
    if not config.is_file() or not all(f.exists() for f in results.paths(name, folder)):
        return None  # render() says what is missing
    try:
        if results.load(name, folder)[1].get("smoke"):
            return None  # a smoke run (python -m sims plan --smoke): rendered with a SMOKE stamp, read by no claim
        if cli.result_is_current(name, scale, results_dir):
            return None
        _, meta = results.load(name, folder)
    except ConfigError as e:
        return str(e)
    except ResultError:
        return None  # damaged: render() says so in one line
    return (f"{folder}/{name} is not the result of paper_configs/{name}.yaml at today's code "
            f"(made from {meta.get('config_path', '?')}, config hash {str(meta.get('config_hash', '?'))[:12]})")


def _recompute_hint(name: str, scale: str, results_dir: str) -> str:
    """The command that recomputes paper figure ``name`` into ``results_dir``: ``make fig-<name>`` for the
    repository's results, else ``python -m sims.<sim> ... --out`` (the sim named by the config's ``sim``)."""
    try:
        sim = yaml.safe_load((results.REPO / "paper_configs" / f"{name}.yaml").read_text())["sim"]
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        sim = "<paper>"
    run = f"python -m sims.{sim} --config paper_configs/{name}.yaml --scale {scale}"
    return f"make fig-{name} SCALE={scale}, or {run}" if results_dir == "results" else f"{run} --out {results_dir}"


def _list(scale: str, results_dir: str) -> int:
    """Print every paper figure, one line each, with the state of its result at ``scale``; a closed pipe
    (``| head``) ends the listing quietly. Returns 0."""
    folder = results.scale_dir(results_dir, scale)
    try:
        for name in sorted(c.stem for c in (results.REPO / "paper_configs").glob("*.yaml")):
            if not all(f.exists() for f in results.paths(name, folder)):
                state = f"no result in {folder}/"
            else:
                state = "result current" if _stale_reason(name, scale, results_dir) is None else \
                    "result not current (older code or another config)"
            print(f"{name:32s} {state}")
        print(f"render one: python -m figures NAME --scale {scale}; compute and render a paper: make figures-<paper>")
    except BrokenPipeError:
        cli.pipe_closed()
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m figures",
                                description="Render one figure (PNG and PDF) from its saved result.")
    p.add_argument("name", nargs="?", help="a figure name: a config paper_configs/<name>.yaml (none: list them)")
    p.add_argument("--scale", default="quick", choices=SCALES)
    p.add_argument("--results", default="results", help="results root (reads <results>/<scale>/)")
    p.add_argument("--out", default="figures/out", help="figures root (writes <out>/<scale>/)")
    a = p.parse_args(argv)
    if a.name is None:
        return _list(a.scale, a.results)
    if not re.fullmatch(r"[A-Za-z0-9_]+", a.name):
        print(f"error: a figure name is a config's stem (letters, digits, _), got {a.name!r}; the figures are "
              "paper_configs/<name>.yaml", file=sys.stderr)
        return 2
    for flag, value in (("--results", a.results), ("--out", a.out)):
        if not value.strip():
            print(f"error: {flag} needs a folder path, got an empty string", file=sys.stderr)
            return 2
    try:
        stale = _stale_reason(a.name, a.scale, a.results)
        if stale:
            print(f"error: {stale}; recompute: {_recompute_hint(a.name, a.scale, a.results)}", file=sys.stderr)
            return 2
        for path in render(a.name, a.scale, a.results, a.out):
            print(f"wrote {path}", file=sys.stderr)
    except WriteError as e:  # the figure folder, not the result: a recompute would not help
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ResultError as e:
        configs = results.REPO / "paper_configs"
        missing = not any(f.exists() for f in results.paths(a.name, results.scale_dir(a.results, a.scale)))
        if missing and not (configs / f"{a.name}.yaml").is_file():
            names = sorted(c.stem for c in configs.glob("*.yaml"))
            close = difflib.get_close_matches(a.name, names, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            print(f"error: no result {a.results}/{a.scale}/{a.name} and no figure '{a.name}' in this repository "
                  f"(no paper_configs/{a.name}.yaml; {hint}`python -m figures` lists the {len(names)} figures)",
                  file=sys.stderr)
            return 2
        if not (configs / f"{a.name}.yaml").is_file():  # a user's own result: no paper config to rerun
            print(f"error: {e}", file=sys.stderr)
            return 2
        print(f"error: {e} (recompute: {_recompute_hint(a.name, a.scale, a.results)})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return cli.interrupted(f"each figure file is written whole or not at all, so {a.out}/{a.scale}/ holds no "
                               "partial figure and the results are untouched; rerun the same command to render")
    return 0


if __name__ == "__main__":
    sys.exit(main())
