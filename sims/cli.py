"""The one entry point every simulation shares.

A simulation module ``sims/<paper>.py`` declares::

    EXPERIMENTS = {"<experiment>": (ParamsDataclass, run_fn), ...}
    if __name__ == "__main__":
        raise SystemExit(cli.main(__name__))

where ``run_fn(params, ctx) -> dict[str, array]`` computes the arrays of one figure. It then runs as
``python -m sims.<paper> --config paper_configs/<name>.yaml [--scale quick|paper] [--force]`` and writes
``results/<name>.npz`` and ``results/<name>.json`` (provenance included). A result whose config hash and
code hash match the saved sidecar is not recomputed unless ``--force``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import time
from pathlib import Path
from typing import Any

from sims import results
from sims.config import SCALES, ConfigError, RunConfig, load, read_yaml

REPO = results.REPO


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
    schemas = {k: v[0] for k, v in mod.EXPERIMENTS.items()}
    return load(path, scale, schemas, sim=sim), mod


def code_files(sim: str) -> list[Path]:
    """Sources whose change invalidates a result: the sim module, its theory module, the runtime."""
    return [REPO / "sims" / f"{sim}.py", REPO / "theory" / f"{sim}.py", REPO / "sims" / "runtime.py"]


def run_config(path: str | Path, scale: str = "quick", *, force: bool = False,
               outdir: str | Path = "results", n_devices: int | None = None, quiet: bool = False
               ) -> tuple[dict, dict]:
    """Run (or load, when current) the experiment of one config. Returns ``(arrays, meta)``; a loaded
    result's ``meta`` has ``"skipped": True``.

    Raises:
      ConfigError: the config does not match its schema.
    """
    from sims import runtime

    runtime.setup()
    cfg, mod = load_config(path, scale)
    chash, code = cfg.hash(), results.code_hash(code_files(cfg.sim))
    if not force and results.is_current(cfg.name, chash, code, outdir):
        if not quiet:
            print(f"{cfg.name}: up to date (config {chash[:12]}), skipped; --force reruns it",
                  file=sys.stderr)
        arrays, meta = results.load(cfg.name, outdir)
        return arrays, {**meta, "skipped": True}
    mesh = runtime.make_mesh(n_devices)
    ctx = Context(cfg, mesh, results.Parts(cfg.name, chash + code, outdir, runtime.is_writer()), {})
    t0 = time.time()
    arrays = mod.EXPERIMENTS[cfg.experiment][1](cfg.params, ctx)
    meta = {
        "name": cfg.name, "sim": cfg.sim, "experiment": cfg.experiment, "scale": cfg.scale,
        "config_path": str(cfg.path), "config": cfg.params_dict(), "config_hash": chash,
        "code_hash": code, "seed": cfg.seed, "git_commit": results.git_commit(),
        "versions": results.versions(), **runtime.device_summary(),
        "wall_time_s": round(time.time() - t0, 3), "finished": results.now(),
        "resumed_parts": ctx.parts.resumed, "summary": ctx.summary,
    }
    if runtime.is_writer():
        results.save(cfg.name, arrays, meta, outdir)
        ctx.parts.clear()
    return {k: results.np.asarray(v) for k, v in arrays.items()}, meta


def main(module_name: str, argv: list[str] | None = None) -> int:
    """Command line of ``python -m sims.<paper>``; returns the exit status (2 for a bad config)."""
    if module_name == "__main__":  # run as `python -m sims.<paper>`: the real name is in __spec__
        spec = getattr(sys.modules["__main__"], "__spec__", None)
        module_name = spec.name if spec is not None else "__main__"
    sim = module_name.rsplit(".", 1)[-1] if module_name.startswith("sims.") else None
    parser = argparse.ArgumentParser(prog=f"python -m sims.{sim}",
                                     description="Run one simulation from its paper config.")
    parser.add_argument("--config", required=True, help="paper_configs/<name>.yaml")
    parser.add_argument("--scale", default="quick", choices=SCALES)
    parser.add_argument("--force", action="store_true", help="recompute even if the result is current")
    parser.add_argument("--out", default="results", help="results folder (default: results)")
    parser.add_argument("--distributed", action="store_true",
                        help="call jax.distributed.initialize() (same as PBE_DISTRIBUTED=1)")
    args = parser.parse_args(argv)
    from sims import runtime

    runtime.setup(distributed=args.distributed or None)
    try:
        if sim is not None and read_yaml(args.config).get("sim") != sim:
            raise ConfigError(args.config, "sim", f"'{sim}' to run with python -m sims.{sim}",
                              read_yaml(args.config).get("sim"))
        _, meta = run_config(args.config, args.scale, force=args.force, outdir=args.out)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if runtime.is_writer() and not meta.get("skipped"):
        print(f"{meta['name']}: wrote {args.out}/{meta['name']}.npz and .json "
              f"({meta['wall_time_s']:.1f} s, {meta['device_count']} devices)", file=sys.stderr)
    return 0
