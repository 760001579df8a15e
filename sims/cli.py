"""The one entry point every simulation shares.

A simulation module ``sims/<paper>.py`` declares::

    EXPERIMENTS = {"<experiment>": Experiment(ParamsDataclass, run_fn), ...}
    if __name__ == "__main__":
        raise SystemExit(cli.main(__name__))

where ``run_fn(params, ctx) -> dict[str, array]`` computes the arrays of one figure (its docstring lists
them with their shapes: the contract figures and claims rely on). It then runs as
``python -m sims.<paper> --config paper_configs/<name>.yaml [--scale quick|paper] [--force]`` and writes
``results/<scale>/<name>.npz`` and ``.json`` (provenance included). A result whose config hash and code
hash match its intact sidecar is not recomputed unless ``--force``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import difflib
import functools
import importlib
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

import jax
import numpy as np
from jax.experimental import multihost_utils

from sims import results, runtime, xla
from sims.config import SCALES, ConfigError, RunConfig, load, read_yaml, smoke_params

REPO = results.REPO
CONFIGS = REPO / "paper_configs"


class Extrapolate(NamedTuple):
    """How the paper-scale plan (:mod:`sims.plan`) costs an experiment whose work is not a compiled function
    (exact arithmetic, LPs): run it at two small values of the size parameter ``key`` (an int field, or a
    tuple field planned as the 1-tuples ``(small[0],)`` and ``(small[1],)``) and extrapolate the measured
    wall time to the config's value by ``law``: ``"power"`` (t = c n^a, a fitted from the two runs) or
    ``"exponential"`` (t = c b^n). A tuple value is the sum of its entries' predictions. ``why`` says in a
    few words why that law (e.g. "LP with n^2 constraints")."""

    key: str
    small: tuple[int, int]
    law: str = "power"
    why: str = ""


class Experiment(NamedTuple):
    """One experiment of a simulation module: its parameter dataclass, ``run(params, ctx) -> arrays``,
    ``seed_axes``: array name -> the axis that holds independent seeds (written to the sidecar, so that the
    ledger can re-decide a claim with a seed left out without running anything again), and
    ``extrapolate``: for work that is not a compiled function, how the plan extrapolates its cost."""

    params: type
    run: Callable[[Any, "Context"], dict[str, Any]]
    seed_axes: dict[str, int] | None = None
    extrapolate: Extrapolate | None = None


@dataclasses.dataclass
class Context:
    """What an experiment gets besides its parameters.

    Attributes:
      config: the loaded :class:`~sims.config.RunConfig` (``config.seed`` is the root seed).
      mesh: the 1-D device mesh seeds are sharded over.
      parts: resumable pieces (:class:`~sims.results.Parts`): wrap each long, independent piece.
      summary: scalars/strings to store in the JSON sidecar (e.g. a measured noise scale).
    """

    config: RunConfig
    mesh: Any
    parts: results.Parts
    summary: dict[str, Any]


def simulation_modules() -> list[str]:
    """Names of the simulation modules of ``sims/``, sorted: each module ``sims/<name>.py`` or package
    ``sims/<name>/`` that assigns ``EXPERIMENTS`` at top level (read from the source, nothing imported).
    The shared infrastructure (cli, config, data, results, runtime, ...) has no ``EXPERIMENTS``; the
    Makefile's ``PAPERS`` applies the same rule with grep."""
    sims = REPO / "sims"
    out = []
    for src in sorted([*sims.glob("*.py"), *sims.glob("*/__init__.py")]):
        if re.search(r"^EXPERIMENTS\b", src.read_text(), flags=re.MULTILINE):
            out.append(src.parent.name if src.name == "__init__.py" else src.stem)
    return sorted(out)


def figures_by_paper(configs: str | Path = CONFIGS) -> dict[str, list[str]]:
    """``{paper: [figure names]}``: the configs in ``configs`` (``paper_configs/``) grouped by their ``sim``
    key, names sorted; every simulation module is a key, even one without configs.

    Raises:
      ConfigError: a config cannot be read or has no ``sim`` string.
    """
    out: dict[str, list[str]] = {p: [] for p in simulation_modules()}
    for path in sorted(Path(configs).glob("*.yaml")):
        sim = read_yaml(path).get("sim")
        if not isinstance(sim, str):
            raise ConfigError(path, "sim", "a string naming a module in sims/", sim)
        out.setdefault(sim, []).append(path.stem)
    return out


class UnknownName(ValueError):
    """A name that is neither a paper nor a figure; ``str(err)`` is one line suggesting the nearest."""


def expand_names(names: list[str], papers: dict[str, list[str]]) -> list[str]:
    """Figure names for ``names`` (figure names, or paper names meaning all their figures), each once, in
    the order asked. ``papers`` is :func:`figures_by_paper`.

    Raises:
      UnknownName: a name is neither; the message suggests the nearest known one (difflib).
    """
    known = [*papers, *(n for figs in papers.values() for n in figs)]
    todo = []
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise UnknownName(f"'{name}' is neither a paper nor a figure ({hint}python -m sims lists them)")
        todo += papers.get(name, [name])
    return list(dict.fromkeys(todo))


def _module(sim: str, path) -> Any:
    try:
        mod = importlib.import_module(f"sims.{sim}")
    except ModuleNotFoundError:
        raise ConfigError(path, "sim", "the name of a module in sims/", sim) from None
    if not hasattr(mod, "EXPERIMENTS"):
        raise ConfigError(path, "sim", "a simulation module (one with EXPERIMENTS)", sim)
    return mod


def load_config(path: str | Path, scale: str = "quick") -> tuple[RunConfig, Any]:
    """Load a config and the sim module it names. Raises ConfigError."""
    sim = read_yaml(path).get("sim")
    if not isinstance(sim, str):
        raise ConfigError(path, "sim", "a string naming a module in sims/", sim)
    mod = _module(sim, path)
    schemas = {k: Experiment(*v).params for k, v in mod.EXPERIMENTS.items()}
    return load(path, scale, schemas, sim=sim), mod


def _imported(path: Path, package: str) -> frozenset[str]:
    """Top-level modules of ``package`` (``theory`` or ``sims``) that a source file imports (``from
    package import x``, ``import package.x``, ``from package.x import y``); empty when the file cannot be
    read or parsed."""
    try:
        source = path.read_bytes()
    except OSError:
        return frozenset()
    return _imports_in(source, package)


@functools.lru_cache(maxsize=1024)
def _imports_in(source: bytes, package: str) -> frozenset[str]:
    """:func:`_imported` of a file's bytes. Cached by the bytes themselves, so an edited file is parsed
    again and an unchanged one is not: ``make verify`` asks for the code hash of a result once per claim
    that reads it, 67 times, and parsing every file each time took 0.2 s a call (2 cores, 2026-12-04)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return frozenset()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == package:
                out |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[1] for a in node.names if a.name.startswith(f"{package}.")}
    return frozenset(out)


# sims modules that keep books (configs, results, the command line) and compute nothing a result holds
BOOKKEEPING = {"cli", "config", "results"}


def _files_of(root: Path, name: str) -> list[Path]:
    """``root/<name>.py``, or every file of the package ``root/<name>/``."""
    return [root / f"{name}.py"] if (root / f"{name}.py").is_file() else sorted((root / name).rglob("*.py"))


def code_files(sim: str) -> list[Path]:
    """Sources whose change invalidates a result: the sim module (every file of it when it is a package
    ``sims/<sim>/``), the shared numerics, every other sims module it imports that computes (the
    runtime, data, models; not the bookkeeping of :data:`BOOKKEEPING`), and every theory module or
    package these import (and that those import). Claims and figures are not among them."""
    theory, sims = REPO / "theory", REPO / "sims"
    files = _files_of(sims, sim) + [theory / "numerics.py"]
    todo, seen = list(files), {"theory": {"numerics"}, "sims": {sim}}
    while todo:
        path = todo.pop()
        found = []
        for name in _imported(path, "theory") - seen["theory"]:
            seen["theory"].add(name)
            found += _files_of(theory, name)
        if path.is_relative_to(sims):
            for name in _imported(path, "sims") - BOOKKEEPING - seen["sims"]:
                seen["sims"].add(name)
                found += _files_of(sims, name)
        files += found
        todo += found
    return sorted(set(files))


_COMPILES: dict[str, float] = {"compile_s": 0.0, "compilations": 0, "cache_hits": 0, "cache_misses": 0}


def _count_compiles() -> None:
    """Count XLA compilations, their seconds and the persistent-cache hits and misses of this process (JAX's
    monitoring events; registered once)."""
    if _COMPILES.get("registered"):
        return

    def on_event(event: str, **_) -> None:
        if event == "/jax/compilation_cache/cache_hits":
            _COMPILES["cache_hits"] += 1
        elif event == "/jax/compilation_cache/cache_misses":
            _COMPILES["cache_misses"] += 1

    def on_duration(event: str, seconds: float, **_) -> None:
        if event == "/jax/core/compile/backend_compile_duration":
            _COMPILES["compile_s"] += seconds
            _COMPILES["compilations"] += 1

    jax.monitoring.register_event_listener(on_event)
    jax.monitoring.register_event_duration_secs_listener(on_duration)
    _COMPILES["registered"] = True


def compile_counts() -> dict[str, float]:
    """A snapshot of :data:`_COMPILES` (subtract two snapshots for the compilations of one run)."""
    return {k: v for k, v in _COMPILES.items() if k != "registered"}


def agree_all(flag: bool) -> bool:
    """True only when ``flag`` is true on every process (one all-gather under ``jax.distributed``)."""
    if jax.process_count() == 1:
        return bool(flag)
    return bool(np.all(multihost_utils.process_allgather(np.array([bool(flag)]))))


def _non_finite(arrays: dict[str, Any]) -> dict[str, int]:
    out = {}
    for k, v in arrays.items():
        a = np.asarray(v)
        if np.issubdtype(a.dtype, np.inexact):
            n = int(a.size - np.count_nonzero(np.isfinite(a)))
            if n:
                out[k] = n
    return out


def seed_offset_dir(outdir: str | Path, scale: str, seed_offset: int = 0) -> Path:
    """``<outdir>/<scale>/``, or ``<outdir>/<scale>/seed-offset-N/`` for a replication whose root seeds
    are shifted by N > 0 (never the default results). Raises ValueError: a negative offset."""
    seed_offset = int(seed_offset)
    if seed_offset < 0:
        raise ValueError(f"seed_offset must be >= 0, got {seed_offset}")
    out = results.scale_dir(outdir, scale)
    return out / f"seed-offset-{seed_offset}" if seed_offset else out


def output_dir(cfg: RunConfig, outdir: str | Path, seed_offset: int = 0) -> Path:
    """Where a run of ``cfg`` writes: :func:`seed_offset_dir`, except that a config from outside
    ``paper_configs/`` (not the repository's config of that name) writing into the repository's
    ``results/`` goes to ``results/<scale>/custom/<name>-<config hash, 12 hex>/``: never over the
    repository's result, which its figures and claims read."""
    out = seed_offset_dir(outdir, cfg.scale, seed_offset)
    ours = REPO / "paper_configs" / f"{cfg.name}.yaml"
    if Path(outdir).resolve() == (REPO / "results").resolve() and Path(cfg.path).resolve() != ours.resolve():
        return out / "custom" / f"{cfg.name}-{cfg.hash()[:12]}"
    return out


def _where(args) -> Path:
    """The folder a ``python -m sims.<paper>`` run writes (its config reloaded: :func:`output_dir`)."""
    return output_dir(_shifted(load_config(args.config, args.scale)[0], args.seed_offset), args.out,
                      args.seed_offset)


def _shifted(cfg: RunConfig, seed_offset: int) -> RunConfig:
    """``cfg`` with its root seed shifted by ``seed_offset``. Raises ConfigError past 2^63 - 1."""
    if not seed_offset:
        return cfg
    if cfg.seed + seed_offset > 2**63 - 1:
        raise ConfigError(cfg.path, "seed", f"a seed that stays below 2^63 with offset {seed_offset}", cfg.seed)
    return dataclasses.replace(cfg, seed=cfg.seed + seed_offset)


def _too_big(cfg: RunConfig, e: BaseException) -> ConfigError:
    """The one-line refusal of a config whose sizes this machine cannot hold (issue: resources checked before
    allocating): the array or allocation that did not fit, and the command that estimates the config."""
    return ConfigError(cfg.path, f"{cfg.scale} (sizes)", f"sizes this machine can hold, but "
                       f"{runtime._first_line(e)}; python -m sims plan {cfg.name} --scale {cfg.scale} estimates "
                       "every compiled function's memory")


def planned_estimate(name: str, scale: str, root: Path = REPO) -> dict[str, Any] | None:
    """The plan's estimate for config ``name`` (``reports/<scale>/plan.json`` of ``python -m sims plan``), kept
    in the sidecar beside the run's measured ``wall_time_s``: ``{"estimate_s", "host_s", "devices",
    "accelerator"}``, or ``None`` when there is no readable plan for it."""
    try:
        plans = json.loads((Path(root) / "reports" / scale / "plan.json").read_text())
        p = next(p for p in plans if isinstance(p, dict) and p.get("name") == name)
        return {"estimate_s": float(p["estimate_s"]), "host_s": float(p["host_s"]), "devices": int(p["devices"]),
                "accelerator": str(p["accelerator"]["name"])}
    except (OSError, ValueError, KeyError, TypeError, StopIteration):
        return None


def run_config(path: str | Path, scale: str = "quick", *, force: bool = False,
               outdir: str | Path = "results", n_devices: int | None = None, quiet: bool = False,
               seed_offset: int = 0, smoke: bool = False) -> tuple[dict, dict]:
    """Run (or load, when current) the experiment of one config at one scale, in
    ``<outdir>/<scale>/`` (with ``seed_offset`` N > 0: the root seed plus N, in
    ``<outdir>/<scale>/seed-offset-N/``; a config from outside ``paper_configs/`` in a folder apart:
    :func:`output_dir`). Returns ``(arrays, meta)``; a loaded result's ``meta`` has
    ``"skipped": True``. ``meta["seed_axes"]`` names the arrays whose given axis holds the seeds.
    ``smoke``: run with the loops truncated (:func:`sims.config.smoke_params`; sidecar ``"smoke": true``),
    which a paper figure renders with a SMOKE stamp and no claim reads.

    Non-finite values in the arrays are counted per array in ``meta["non_finite"]`` and announced on
    stderr (a diverged run is reported, never silently averaged in).

    Raises:
      ConfigError: the config does not match its schema.
      ResultError: the results folder cannot be written (checked before computing).
    """
    runtime.setup()
    cfg, mod = load_config(path, scale)
    cfg = _shifted(cfg, seed_offset)
    if smoke:
        try:
            cfg = dataclasses.replace(cfg, params=smoke_params(cfg.params))
        except ValueError as e:
            raise ConfigError(cfg.path, "params", f"fields a smoke run can truncate together ({e})") from None
    out = output_dir(cfg, outdir, seed_offset)
    chash, code = cfg.hash(), results.code_hash(code_files(cfg.sim))
    if not force and results.is_current(cfg.name, chash, code, out):
        if not quiet:
            print(f"{cfg.name}: up to date at {cfg.scale} scale (config {chash[:12]}), skipped; "
                  "--force reruns it", file=sys.stderr)
        arrays, meta = results.load(cfg.name, out)
        return arrays, {**meta, "skipped": True}
    writer = runtime.is_writer()
    if writer:
        results.check_writable(out)
    parts = results.Parts(cfg.name, chash + code, out, writer, agree_all)
    if force:
        parts.discard()
    mesh = runtime.make_mesh(n_devices)
    ctx = Context(cfg, mesh, parts, {})
    _count_compiles()
    before = compile_counts()
    t0 = time.time()
    exp = Experiment(*mod.EXPERIMENTS[cfg.experiment])
    try:
        arrays = {k: np.asarray(v) for k, v in exp.run(cfg.params, ctx).items()}
    except (runtime.ResourceError, MemoryError) as e:
        raise _too_big(cfg, e) from None
    except jax.errors.JaxRuntimeError as e:
        if "RESOURCE_EXHAUSTED" not in str(e):
            raise
        raise _too_big(cfg, e) from None
    seed_axes = {k: int(ax) for k, ax in (exp.seed_axes or {}).items()}
    missing = sorted(set(seed_axes) - set(arrays))
    if missing:
        raise ValueError(f"{cfg.sim}.{cfg.experiment}: seed_axes names arrays it does not return: {missing}")
    bad = _non_finite(arrays)
    if bad and not quiet and writer:
        print(f"{cfg.name}: non-finite values (entries not measured, or diverged runs; counted in the sidecar; "
              "`make verify` says which claims read them and whether they left them out): "
              + ", ".join(f"{k} {n}" for k, n in bad.items()), file=sys.stderr)
    meta = {
        "name": cfg.name, "sim": cfg.sim, "experiment": cfg.experiment, "scale": cfg.scale,
        "config_path": str(cfg.path), "config": cfg.params_dict(), "config_hash": chash,
        "code_hash": code, "seed": cfg.seed, "seed_offset": int(seed_offset), "seed_axes": seed_axes,
        "git_commit": results.git_commit(),
        "versions": results.versions(), **runtime.device_summary(), "kernels": xla.kernel_summary(),
        "wall_time_s": round(time.time() - t0, 3), "finished": results.now(),
        # XLA compilations during the run: their seconds, and persistent-cache hits and misses (a run with
        # no miss started from a warm cache; make bench tabulates these per figure)
        "compile": {k: round(v - before[k], 3) if k == "compile_s" else int(v - before[k])
                    for k, v in compile_counts().items()},
        "resumed_parts": parts.resumed, "summary": ctx.summary, "non_finite": bad,
        **({"smoke": True} if smoke else {}),
        **({"plan": plan} if (plan := planned_estimate(cfg.name, cfg.scale)) else {}),
    }
    if writer:
        meta = results.save(cfg.name, arrays, meta, out)
        parts.discard()
    return arrays, meta


def figure_config(name: str) -> Path:
    """``paper_configs/<name>.yaml``, the config of figure ``name``.

    Raises:
      ConfigError: there is no such config.
    """
    path = CONFIGS / f"{name}.yaml"
    if not path.is_file():
        known = ", ".join(sorted(p.stem for p in CONFIGS.glob("*.yaml")))
        raise ConfigError(path, "-", f"the config of a figure (known: {known})", "no such file")
    return path


def result_is_current(name: str, scale: str, outdir: str | Path = "results", seed_offset: int = 0) -> bool:
    """Whether the saved result of figure ``name`` at ``scale`` (root seed shifted by ``seed_offset``) is the
    one today's ``paper_configs/<name>.yaml`` and code make (config hash, code hash, intact files).

    Raises:
      ConfigError: the figure has no config, or its config does not match its schema.
    """
    cfg, _ = load_config(figure_config(name), scale)
    cfg = _shifted(cfg, seed_offset)
    return results.is_current(cfg.name, cfg.hash(), results.code_hash(code_files(cfg.sim)),
                              seed_offset_dir(outdir, scale, seed_offset))


def stored_result(name: str, scale: str, outdir: str | Path = "results", seed_offset: int = 0
                  ) -> tuple[dict, dict] | None:
    """The saved result of figure ``name`` at ``scale`` (root seed shifted by ``seed_offset``) when it is
    current for today's config and code (:func:`result_is_current`), else ``None``. Never computes."""
    runtime.setup()
    if not result_is_current(name, scale, outdir, seed_offset):
        return None
    return results.load(name, seed_offset_dir(outdir, scale, seed_offset))


def kept_for_rerun(names: list[str], out: str | Path) -> str:
    """What a run of figures ``names`` stopped by Ctrl-C leaves in ``out`` (one scale's results folder) for
    a rerun, as one phrase: the results saved there and the finished pieces in ``<out>/.parts/``
    (:class:`~sims.results.Parts`; a piece is written whole or not at all)."""
    out = Path(out)
    saved = sum(all(p.is_file() for p in results.paths(n, out)) for n in names)
    pieces = sum(len(list(d.glob("*.npz"))) for n in dict.fromkeys(names) for d in out.glob(f".parts/{n}-*")
                 if d.name[len(n) + 1:].isalnum())
    kept = [f"{k} {what}{'s' if k != 1 else ''} in {where}" for k, what, where in (
        (saved, "saved result", f"{out}/"), (pieces, "finished piece", f"{out}/.parts/")) if k]
    if not kept:
        return f"nothing finished was kept in {out}/; rerunning the same command starts again"
    return "kept " + " and ".join(kept) + "; rerunning the same command resumes from them"


def pipe_closed() -> None:
    """After a ``BrokenPipeError`` on stdout (``| head`` stopped reading): point stdout at /dev/null, so the
    rest of the output, and Python's flush at exit, go nowhere instead of ending in a traceback. The one
    closed-pipe rule of every entry point's listing."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def interrupted(kept: str) -> int:
    """The Ctrl-C boundary of every entry point: one line on stderr saying what was kept (no traceback),
    and the exit status 130 (128 + SIGINT, what a shell reports for a command ended by Ctrl-C)."""
    print(f"interrupted (Ctrl-C): {kept}", file=sys.stderr, flush=True)
    return 130


def main(module_name: str, argv: list[str] | None = None) -> int:
    """Command line of ``python -m sims.<paper>``; returns the exit status (2 for a bad config or an
    unwritable results folder, 130 after Ctrl-C)."""
    if module_name == "__main__":  # run as `python -m sims.<paper>`: the real name is in __spec__
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module_name = spec.name if spec is not None else "__main__"
    sim = module_name.rsplit(".", 1)[-1] if module_name.startswith("sims.") else None
    parser = argparse.ArgumentParser(prog=f"python -m sims.{sim}",
                                     description="Run one simulation from its paper config.")
    parser.add_argument("--config", required=True, help="paper_configs/<name>.yaml")
    parser.add_argument("--scale", default="quick", choices=SCALES)
    parser.add_argument("--force", action="store_true",
                        help="recompute even if the result is current (discards stored pieces)")
    parser.add_argument("--out", default="results", help="results root; writes <out>/<scale>/ (default: results)")
    parser.add_argument("--seed-offset", type=int, default=0, metavar="N",
                        help="shift the root seed by N >= 0; writes <out>/<scale>/seed-offset-N/ (replication)")
    parser.add_argument("--distributed", action="store_true",
                        help="call jax.distributed.initialize() (same as PBE_DISTRIBUTED=1)")
    args = parser.parse_args(argv)
    if args.seed_offset < 0:
        parser.error(f"--seed-offset must be >= 0, got {args.seed_offset}")
    for flag, value, what in (("--config", args.config, "file"), ("--out", args.out, "folder")):
        if not value.strip():  # never resolved to the working folder
            print(f"error: {flag} needs a {what} path, got an empty string", file=sys.stderr)
            return 2
    try:
        runtime.setup(distributed=args.distributed or None)
    except runtime.SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # e.g. while jax.distributed waits for its coordinator
        return interrupted("nothing was computed yet (stopped while setting up); rerun the same command")
    try:
        if sim is not None and read_yaml(args.config).get("sim") != sim:
            raise ConfigError(args.config, "sim", f"'{sim}' to run with python -m sims.{sim}",
                              read_yaml(args.config).get("sim"))
        _, meta = run_config(args.config, args.scale, force=args.force, outdir=args.out,
                             seed_offset=args.seed_offset)
    except (ConfigError, results.ResultError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return interrupted(kept_for_rerun([Path(args.config).stem], _where(args)))
    if runtime.is_writer() and not meta.get("skipped"):
        where = _where(args)
        print(f"{meta['name']}: wrote {where}/{meta['name']}.npz and .json "
              f"({meta['wall_time_s']:.1f} s, {meta['device_count']} device"
              f"{'s' if meta['device_count'] != 1 else ''})", file=sys.stderr)
    return 0
