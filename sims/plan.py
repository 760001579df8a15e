"""Paper scale, planned before an accelerator sees it: ``python -m sims plan [--scale paper] [NAME ...]``.

For each config, the experiment runs in *planning* mode (:func:`sims.runtime.planning`): every compiled
function it calls from Python (through :func:`sims.runtime.jit`, :func:`~sims.runtime.map_batch`,
:func:`~sims.runtime.map_seeds`, :func:`~sims.runtime.mean_over_seeds`) is traced, checked, lowered and
compiled at the config's real shapes and sharding on the mesh the run would use (8 simulated CPU devices
by default, ``XLA_FLAGS=--xla_force_host_platform_device_count``), but not run: the call returns zeros
of its output shapes and the experiment's Python goes on, so the plan counts the calls exactly as the run
makes them (steps x sweep points x ...; seeds are a vmapped axis inside each call). Work that is not a
compiled function runs for real, and its wall time is reported as host seconds.

Per compiled function the plan reports:

- FLOPs and bytes accessed, counted on its jaxpr with JAX's own per-primitive roofline rules
  (``jax.experimental.roofline``), loops multiplied out: a ``scan`` body counts ``length`` times, a
  ``shard_map`` body once per device, a ``cond`` its costliest branch. (XLA's ``cost_analysis()``
  counts a loop body once whatever its trip count, so it is not used for totals.) A ``while_loop``
  whose trip count is not static counts once and is flagged. Bytes are the unfused upper bound: every
  operation reads its inputs and writes its output.
- Peak memory per device from XLA's ``memory_analysis()`` of the compiled executable (arguments +
  outputs + temporaries - aliased).
- An estimated time on :data:`ACCELERATOR`, a roofline bound per call plus latencies:
  ``max(flops_f32 / F32 + flops_f64 / F64, bytes / BW) / devices + LAUNCH_S + serial_steps * STEP_S``,
  times the calls (``serial_steps``: iterations of sequential loops, which run one after another).

A config is *unrunnable* when an array has more elements than XLA can index, an array or the peak
per device exceeds the accelerator's memory, or the experiment raises while planned.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

from sims import cli, results, runtime
from sims.costs import (ACCELERATOR, LAUNCH_S, STEP_S, Accelerator, Cost, elements_of, jaxpr_cost,
                        size_problems)
from sims.config import SCALES, ConfigError

SMOKE_DIR = "results/paper-smoke"  # smoke results: read by no claim and no paper figure



@dataclasses.dataclass
class Stage:
    """One compiled function of a planned run, at one signature."""

    name: str
    calls: int
    cost: Cost
    peak_bytes: int  # per device, from XLA's memory analysis
    compile_s: float
    problems: list[str]

    def seconds(self, devices: int, acc: Accelerator = ACCELERATOR) -> float:
        """Estimated seconds of all its calls on ``devices`` accelerators (the work split evenly)."""
        compute = self.cost.flops_f32 / acc.f32_flops + self.cost.flops_f64 / acc.f64_flops
        memory = self.cost.bytes / acc.bandwidth
        return self.calls * (max(compute, memory) / devices + LAUNCH_S + self.cost.serial_steps * STEP_S)


def _abstract(x):
    if isinstance(x, (jax.Array, np.ndarray, np.generic)):
        # Keep a sharding the run commits to (a batch sharded over the mesh); an uncommitted array (jnp.asarray)
        # goes wherever the computation does, as in the run.
        sharding = x.sharding if isinstance(x, jax.Array) and getattr(x, "committed", False) else None
        return jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=sharding)
    return x


def _zeros(s) -> np.ndarray:
    """Read-only zeros standing in for one output of a planned call (made once per stage; an array beyond
    the machine is a zero-strided view of one zero, never allocated)."""
    z = np.lib.stride_tricks.as_strided(np.zeros((), s.dtype), s.shape, (0,) * len(s.shape))
    z.flags.writeable = False
    return z


def _leaf_key(x, static: bool):
    """A compiled call's key for one argument leaf: arrays by shape and dtype, Python scalars by type (jit
    traces them), static arguments by value."""
    if hasattr(x, "dtype") and hasattr(x, "shape"):
        return (tuple(np.shape(x)), str(x.dtype))
    if not static and isinstance(x, (bool, int, float, complex)):
        return type(x).__name__
    return repr(x)


def _signature(args: tuple, kwargs: dict, static: tuple[tuple[int, ...], tuple[str, ...]]) -> tuple:
    nums, names = static
    pos = tuple((str(jax.tree.structure(a)), tuple(_leaf_key(x, i in nums) for x in jax.tree.leaves(a)))
                for i, a in enumerate(args))
    kw = tuple((k, str(jax.tree.structure(v)), tuple(_leaf_key(x, k in names) for x in jax.tree.leaves(v)))
               for k, v in sorted(kwargs.items()))
    return pos, kw


def _fingerprint(obj, depth: int = 0, seen: frozenset = frozenset()):
    """What a function computes besides its arguments, as a hashable key: its code location and, recursively
    (to depth 4), the values it closes over (scalars and strings by value, arrays by shape and dtype, functions
    and partials by their own fingerprint). Two calls of one code with different captured settings (a width,
    a kind) are different compiled functions, costed apart."""
    if depth > 4 or id(obj) in seen:
        return "..."
    seen = seen | {id(obj)}
    if isinstance(obj, (bool, int, float, complex, str, bytes, type(None))):
        return repr(obj)
    if hasattr(obj, "dtype") and hasattr(obj, "shape"):
        return ("array", tuple(np.shape(obj)), str(obj.dtype))
    if isinstance(obj, (tuple, list)):
        return tuple(_fingerprint(x, depth + 1, seen) for x in obj[:64])
    if isinstance(obj, dict):
        return tuple((str(k), _fingerprint(v, depth + 1, seen)) for k, v in list(obj.items())[:64])
    if isinstance(obj, functools.partial):
        return ("partial", _fingerprint(obj.func, depth + 1, seen), _fingerprint(obj.args, depth + 1, seen),
                _fingerprint(obj.keywords, depth + 1, seen))
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return repr(obj)
    fn = getattr(obj, "__wrapped__", None) or getattr(obj, "jitted", None) or obj
    code = getattr(fn, "__code__", None)
    if code is None:
        return type(obj).__qualname__
    cells = tuple(_fingerprint(c.cell_contents, depth + 1, seen) for c in (fn.__closure__ or ())
                  if _filled(c))
    return (code.co_filename, code.co_firstlineno, cells)


def _filled(cell) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - an empty cell raises
    except ValueError:
        return False
    return True


class Unrunnable(Exception):
    """A planned function cannot run on the accelerator (its message says why); planning stops there."""


class Recorder:
    """The planner's stand-in for compiled calls (see :func:`sims.runtime.planning`)."""

    def __init__(self, acc: Accelerator = ACCELERATOR):
        self.acc = acc
        self.stages: dict[tuple, Stage] = {}
        self.outputs: dict[tuple, Any] = {}
        self.seconds = 0.0  # spent inside the recorder (tracing, compiling), not host work of the sim

    def __call__(self, name: str, jitted, args: tuple, kwargs: dict, static=((), ())):
        t0 = time.perf_counter()
        key = (name, _fingerprint(jitted), _signature(args, kwargs, static))
        if key not in self.stages:
            self.stages[key] = self._plan(name, jitted, args, kwargs, key)
        stage = self.stages[key]
        stage.calls += 1
        fatal = [q for q in stage.problems if "counted once" not in q]
        if fatal:
            self.seconds += time.perf_counter() - t0
            raise Unrunnable(f"{name}: {'; '.join(fatal)}")
        out = self.outputs[key]
        self.seconds += time.perf_counter() - t0
        return out

    def _plan(self, name, jitted, args, kwargs, key) -> Stage:  # noqa: PLR0913
        a_args, a_kwargs = jax.tree.map(_abstract, (args, kwargs))
        traced = jitted.trace(*a_args, **a_kwargs)
        self.outputs[key] = jax.tree.map(_zeros, traced.out_info)
        cost = jaxpr_cost(traced.jaxpr)
        biggest = max([cost.max_bytes, *(elements_of(s) * s.dtype.itemsize for s in jax.tree.leaves(traced.out_info))])
        problems = size_problems(cost.max_elements, biggest, self.acc.memory, self.acc.name)
        peak, compile_s = 0, 0.0
        if not problems:
            t0 = time.perf_counter()
            compiled = traced.lower().compile()
            compile_s = time.perf_counter() - t0
            m = compiled.memory_analysis()
            if m is not None:
                peak = int(m.argument_size_in_bytes + m.output_size_in_bytes + m.temp_size_in_bytes
                           - m.alias_size_in_bytes)
            if peak > self.acc.memory:
                problems.append(f"peak {peak / 1e9:.3g} GB per device > {self.acc.memory / 1e9:.0f} GB")
        if cost.while_loops:
            problems.append(f"{cost.while_loops} while loop(s) without a static trip count, counted once")
        return Stage(name, 0, cost, peak, compile_s, problems)


class Plan(NamedTuple):
    """The plan of one config."""

    name: str
    scale: str
    devices: int
    stages: list[Stage]
    host_s: float  # wall seconds of the experiment's own (non-compiled) work: measured, or extrapolated
    error: str  # why planning stopped ('' when it completed)
    note: str = ""  # how host_s was extrapolated, when it was

    @property
    def seconds(self) -> float:
        return sum(s.seconds(self.devices) for s in self.stages)

    @property
    def runnable(self) -> bool:
        return not self.error and not any(p for s in self.stages for p in s.problems
                                          if "counted once" not in p)


def _planned_run(cfg, exp: cli.Experiment, params, mesh) -> tuple[Recorder, float, str]:
    """Run ``exp`` on ``params`` in planning mode: ``(recorder, host seconds, error or '')``."""
    rec = Recorder()
    error = ""
    with tempfile.TemporaryDirectory(prefix="pbe-plan-") as tmp:
        ctx = cli.Context(dataclasses.replace(cfg, params=params), mesh,
                          results.Parts(cfg.name, "plan", tmp, writer=False), {})
        t0 = time.perf_counter()
        try:
            with runtime.planning(rec), contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings(), \
                    np.errstate(all="ignore"):
                warnings.simplefilter("ignore")  # the zeros that stand in for results divide by zero
                exp.run(params, ctx)
        except Unrunnable as e:
            error = str(e)
        except (ValueError, TypeError, MemoryError, OverflowError, ZeroDivisionError, np.linalg.LinAlgError,
                FloatingPointError) as e:
            error = f"{type(e).__name__}: {runtime._first_line(e)}"
            if os.environ.get("PBE_PLAN_DEBUG"):
                raise
        total = time.perf_counter() - t0
    return rec, max(total - rec.seconds, 0.0), error


def extrapolate(x: cli.Extrapolate, value, times: tuple[float, float]) -> tuple[float, str]:
    """Seconds predicted at ``value`` (an int, or a tuple: the sum over its entries) from ``times``
    measured at ``x.small``, by ``x.law``; and a one-line account of the fit.

    Raises:
      ValueError: an unknown law, or small sizes that are not two distinct positive ints.
    """
    (n1, n2), (t1, t2) = x.small, (max(times[0], 1e-6), max(times[1], 1e-6))
    if not (0 < n1 < n2):
        raise ValueError(f"Extrapolate.small must be two increasing positive sizes, got {x.small}")
    targets = value if isinstance(value, tuple) else (value,)
    if x.law == "power":
        a = math.log(t2 / t1) / math.log(n2 / n1)
        pred = sum(t1 * (n / n1) ** a for n in targets)
        fit = f"t = c n^a, a = {a:.2f}"
    elif x.law == "exponential":
        b = (t2 / t1) ** (1 / (n2 - n1))
        pred = sum(t1 * b ** (n - n1) for n in targets)
        fit = f"t = c b^n, b = {b:.3g}"
    else:
        raise ValueError(f"Extrapolate.law must be 'power' or 'exponential', got {x.law!r}")
    why = f" ({x.why})" if x.why else ""
    return pred, (f"host time extrapolated from {x.key} = {n1}: {t1:.3g} s and {n2}: {t2:.3g} s by {fit}{why} "
                  f"to {x.key} = {value}")


def plan_config(path: str | Path, scale: str = "paper") -> Plan:
    """Plan the run of config ``path`` at ``scale`` on every device of this process (see module doc). An
    experiment with :class:`~sims.cli.Extrapolate` is planned at its two small sizes and its host time
    extrapolated; its compiled functions are then those of the larger small size.

    Raises:
      ConfigError: the config does not match its schema.
    """
    runtime.setup()
    cfg, mod = cli.load_config(path, scale)
    mesh = runtime.make_mesh()
    exp = cli.Experiment(*mod.EXPERIMENTS[cfg.experiment])
    x = exp.extrapolate
    if x is None:
        rec, host_s, error = _planned_run(cfg, exp, cfg.params, mesh)
        return Plan(cfg.name, cfg.scale, mesh.devices.size, list(rec.stages.values()), host_s, error)
    value = getattr(cfg.params, x.key)
    times, error = [], ""
    # The smaller size runs once untimed first: one-off costs (JAX compiling eager ops and jitted theory
    # functions, imports) would otherwise be charged to its timed run alone and flatten the fitted law.
    for k, n in enumerate((x.small[0], *x.small)):
        try:
            small = dataclasses.replace(cfg.params, **{x.key: (n,) if isinstance(value, tuple) else n})
        except (ValueError, TypeError) as e:  # a cross-field check refuses the small size
            rec, host_s, error = Recorder(), 0.0, f"Extrapolate({x.key!r}, small={x.small}): {e}"
            break
        rec, host_s, error = _planned_run(cfg, exp, small, mesh)
        if k:
            times.append(host_s)
        if error:
            break
    host_s, note = (0.0, "") if error else extrapolate(x, value, tuple(times))
    return Plan(cfg.name, cfg.scale, mesh.devices.size, list(rec.stages.values()), host_s, error, note)


def _si(x: float, unit: str = "") -> str:
    for div, p in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return f"{x / div:.3g} {p}{unit}"
    return f"{x:.3g} {unit}".rstrip()


def _duration(s: float) -> str:
    return f"{s / 3600:.2f} h" if s >= 3600 else f"{s / 60:.1f} min" if s >= 60 else f"{s:.2g} s"


def format_plan(p: Plan) -> list[str]:
    """Lines of the plan table for one config: a head row, then one indented row per compiled function."""
    state = "ok" if p.runnable else "UNRUNNABLE"
    peak = max([s.peak_bytes for s in p.stages], default=0)
    lines = [f"{p.name}: {state}; est {_duration(p.seconds)} on {p.devices} x {ACCELERATOR.name} + host "
             f"{_duration(p.host_s)} {'extrapolated' if p.note else 'measured'}; peak {_si(peak, 'B')}/device"
             + (f"; planning stopped: {p.error}" if p.error else "")]
    if p.note:
        lines.append(f"  {p.note}")
    for s in p.stages:
        approx = f"; 1 FLOP/element for {sorted(s.cost.approximated)}" if s.cost.approximated else ""
        lines.append(f"  {s.name}: {s.calls} call(s) x {_si(s.cost.flops, 'FLOP')} "
                     f"({_si(s.cost.flops_f64, 'FLOP')} f64), {_si(s.cost.bytes, 'B')} accessed, "
                     f"peak {_si(s.peak_bytes, 'B')}/device, est {_duration(s.seconds(p.devices))}"
                     + "".join(f"; {q}" for q in s.problems) + approx)
    return lines


def smoke_config(path: str | Path, outdir: str | Path = SMOKE_DIR) -> dict:
    """Run config ``path`` at paper scale with its loops truncated (:func:`sims.config.smoke_params`) through
    the real simulation and result writing into ``<outdir>/paper/`` (no claim or paper figure reads it),
    then render its figure into ``figures/out/paper-smoke/`` (``python -m figures``, a separate process:
    ``sims`` does not import ``figures``). Returns the result's sidecar plus ``"figure_rc"``.

    Raises:
      ConfigError: the config does not match its schema, or its truncation fails its checks.
      ResultError: the folder cannot be written.
    """
    _, meta = cli.run_config(path, "paper", outdir=outdir, quiet=True, smoke=True, force=True)
    name = Path(path).stem
    r = subprocess.run([sys.executable, "-m", "figures", name, "--scale", "paper", "--results", str(outdir),
                        "--out", str(Path("figures") / "out" / "paper-smoke")], capture_output=True, text=True,
                       check=False, cwd=results.REPO)
    if r.returncode:
        print(f"{name}: figure failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}", file=sys.stderr)
    return {**meta, "figure_rc": r.returncode}


def plan_dict(p: Plan) -> dict:
    """The JSON form of a plan (``reports/<scale>/plan.json``)."""
    return {"name": p.name, "scale": p.scale, "devices": p.devices, "runnable": p.runnable, "error": p.error,
            "extrapolation": p.note,
            "estimate_s": p.seconds, "host_s": p.host_s, "accelerator": ACCELERATOR._asdict(),
            "launch_s": LAUNCH_S,
            "peak_bytes_per_device": max([s.peak_bytes for s in p.stages], default=0),
            "stages": [{"name": s.name, "calls": s.calls, "flops": s.cost.flops, "flops_f64": s.cost.flops_f64,
                        "bytes": s.cost.bytes, "peak_bytes_per_device": s.peak_bytes,
                        "estimate_s": s.seconds(p.devices), "compile_s": s.compile_s, "problems": s.problems,
                        "approximated": s.cost.approximated} for s in p.stages]}


def main(argv: list[str] | None = None) -> int:
    """``python -m sims plan``: exit 0 (every config runnable), 1 (one is not, or a smoke run failed), 2 (bad
    input, one line) or 130 (Ctrl-C, one line)."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return cli.interrupted(f"no plan was written (a plan runs nothing and keeps nothing); smoke results "
                               f"finished so far are in {SMOKE_DIR}/paper/")


def _main(argv: list[str] | None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sims plan", description=(
        "Compile every config's functions at their real shapes on simulated devices, without running them: "
        "calls, FLOPs, bytes, peak memory per device, estimated accelerator time, unrunnable configs."))
    ap.add_argument("names", nargs="*", metavar="NAME", help="figure or paper names (default: every config)")
    ap.add_argument("--scale", default="paper", choices=SCALES)
    ap.add_argument("--devices", type=int, default=8, help="simulated CPU devices to plan on (default 8)")
    ap.add_argument("--smoke", action="store_true",
                    help=f"also run each config at paper scale with its loops truncated into {SMOKE_DIR}/")
    ap.add_argument("--json", default=None, help="write the plan as JSON here (default reports/<scale>/plan.json)")
    a = ap.parse_args(argv)
    if a.devices < 1:
        print(f"error: --devices must be at least 1, got {a.devices}", file=sys.stderr)
        return 2
    # Before JAX starts a backend: plan on simulated CPU devices, whatever accelerator this machine has.
    os.environ["JAX_PLATFORMS"] = "cpu"
    flags = [f for f in os.environ.get("XLA_FLAGS", "").split() if "host_platform_device_count" not in f]
    os.environ["XLA_FLAGS"] = " ".join([*flags, f"--xla_force_host_platform_device_count={a.devices}"])
    try:
        papers = cli.figures_by_paper()
        names = cli.expand_names(a.names, papers) if a.names else [n for v in papers.values() for n in v]
        runtime.setup()
    except (ConfigError, runtime.SetupError, cli.UnknownName) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if jax.device_count() != a.devices:
        print(f"error: JAX started with {jax.device_count()} devices, not {a.devices} (was a backend already "
              "initialised?)", file=sys.stderr)
        return 2
    plans, total, ok = [], 0.0, True
    for k, name in enumerate(names, 1):
        try:
            p = plan_config(cli.CONFIGS / f"{name}.yaml", a.scale)
        except ConfigError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        plans.append(p)
        total += p.seconds + p.host_s
        ok &= p.runnable
        lines = format_plan(p)
        print(f"[{k}/{len(names)}] " + "\n".join(lines), flush=True)
        if a.smoke:
            try:
                meta = smoke_config(cli.CONFIGS / f"{name}.yaml")
            except (ConfigError, results.ResultError) as e:
                print(f"  smoke: error: {e}", file=sys.stderr)
                ok = False
                continue
            ok &= meta["figure_rc"] == 0
            print(f"  smoke: ran in {meta['wall_time_s']:.1f} s -> {SMOKE_DIR}/paper/{name}.npz"
                  + ("" if meta["figure_rc"] == 0 else "; figure FAILED"), flush=True)
    print(f"total: est {_duration(total)} on {a.devices} x {ACCELERATOR.name} (compiled work + measured host "
          f"work); {sum(not p.runnable for p in plans)} unrunnable; peak rates: {ACCELERATOR.source}")
    out = Path(a.json) if a.json else results.REPO / "reports" / a.scale / "plan.json"
    if a.json is not None and not a.json.strip():
        print("error: --json needs a file path, got an empty string", file=sys.stderr)
        return 2
    results.write_atomic(out, json.dumps([plan_dict(p) for p in plans], indent=1).encode())
    print(f"wrote {out}", file=sys.stderr)
    return 0 if ok else 1
