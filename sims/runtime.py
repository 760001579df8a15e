"""The sharded simulation runtime: process setup, a 1-D device mesh, and seed sweeps over it.

Seeds (and sweeps) are a leading array axis over a 1-D mesh of every device (``jax.make_mesh``): a
per-seed function is ``vmap``-ed and :func:`map_batch` runs it in calls of a fixed number of seeds per
device (:func:`chunk_size`), each device running the one-device program on its own seeds, so a seed's
numbers are the same bits on 1 or many devices. Per-device reductions (Monte Carlo means) use one
``jax.shard_map`` with a ``psum`` over the mesh (equal to rounding across device counts).
Seed indices are int32 (``fold_in`` data), so a sweep has at most ``2**31 - 1`` seeds (:data:`MAX_SEEDS`).

Randomness: seed ``i`` of a sweep with root seed ``s`` uses ``fold_in(key(s), i)`` and
``jax_threefry_partitionable`` is set explicitly, so the draws of seed ``i`` are bit-identical whatever
the number of seeds, devices or processes.

Beyond one host, :func:`setup` calls ``jax.distributed.initialize()`` when ``PBE_DISTRIBUTED=1`` (or
``distributed=True``): with no further variables JAX detects SLURM, Open MPI or TPU pods; on a plain
cluster set ``PBE_COORDINATOR=host:port``, ``PBE_NUM_PROCESSES`` and ``PBE_PROCESS_ID``. Only process 0
writes results and figures (:func:`is_writer`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from pathlib import Path
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from tqdm.auto import tqdm

from sims import costs, xla
from theory import numerics
from theory.numerics import check_int

AXIS = "seeds"
MAX_SEEDS = 2**31 - 1  # seed indices are int32
FAMILY_SALT_BASE = 2**31  # the least salt of seed_key: above every seed, call or item index (int32)
# Entries per device per compiled call by default (chunk_size): ceil(n / CHUNKS) for a batch of n, which
# does not depend on the device count, so neither do a run's numbers. CHUNKS = 8: an 8-device host (and the
# 8-device plan) runs the batch in one call; one device in 8 calls (on the CPU about as fast at quick scale).
CHUNKS = 8
_STATE: dict[str, Any] = {"done": False}
# The planner (sims.plan) while it plans a config: called instead of a compiled function (see jit).
_PLANNER: dict[str, Any] = {"record": None}


class SetupError(RuntimeError):
    """JAX cannot start as asked (no backend for ``JAX_PLATFORMS``, a bad ``PBE_*`` distributed setting).
    ``str(err)`` is one line naming the setting; entry points print it and exit with status 2."""


def _first_line(e: BaseException) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    return lines[0] if lines else f"{type(e).__name__} without a message (is that platform installed here?)"


def setup(*, x64: bool = True, distributed: bool | None = None, cache_dir: str | None = None) -> None:
    """Configure JAX for this process; idempotent. Call before creating any array.

    Sets float64 (``x64``), partitionable threefry, the persistent compilation cache (``cache_dir``, env
    ``PBE_CACHE_DIR``, default ``~/.cache/proofs-by-example/jax``; programs compiling for at least
    :data:`sims.xla.CACHE_MIN_COMPILE_S`, env ``PBE_CACHE_MIN_COMPILE_S``) and, if asked, ``jax.distributed``.

    Raises:
      SetupError: JAX has no backend for ``JAX_PLATFORMS``, or a ``PBE_*`` setting is bad.
      RuntimeError: float64 was requested but is not in effect afterwards.
    """
    if not _STATE["done"]:
        _fast_cpu_compiles()
        xla.one_blas_thread()
        jax.config.update("jax_threefry_partitionable", True)
        cache = cache_dir or os.environ.get("PBE_CACHE_DIR") or str(
            Path.home() / ".cache" / "proofs-by-example" / "jax")
        jax.config.update("jax_compilation_cache_dir", cache)
        try:
            min_compile_s = xla.cache_min_compile_s()
        except ValueError as e:
            raise SetupError(str(e)) from None
        jax.config.update("jax_persistent_cache_min_compile_time_secs", min_compile_s)
        if distributed is None:
            distributed = os.environ.get("PBE_DISTRIBUTED", "0") not in ("", "0", "false")
        if distributed:
            _init_distributed()
        try:
            jax.devices()  # start the backend here, so that a missing one is one clear error
        except (RuntimeError, AssertionError, ValueError) as e:
            raise SetupError(f"JAX could not start a backend (JAX_PLATFORMS={os.environ.get('JAX_PLATFORMS', '')!r}): "
                             f"{_first_line(e)}") from None
        _STATE["done"] = True
    if x64:
        jax.config.update("jax_enable_x64", True)
        if jnp.zeros(()).dtype != jnp.float64:
            raise RuntimeError("float64 requested but jax_enable_x64 is not in effect")


def _fast_cpu_compiles() -> None:
    """:func:`sims.xla.cpu_flags`, then this process's state: level-2 compiles for heavy functions
    (:data:`OPTIMIZE_FLOPS`) and, where the fusion emitters were turned off, turned back on for those
    (see :data:`sims.xla.CPU_FUSION_FLAGS`)."""
    level0, fusion_off = xla.cpu_flags()
    if fusion_off:
        _HEAVY_COMPILE["xla_cpu_use_fusion_emitters"] = True
    if level0:
        _STATE["fast_cpu"] = True


def _init_distributed() -> None:
    # Cross-process collectives on CPU devices need an implementation; it does not affect GPU/TPU.
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    kw: dict[str, Any] = {}
    if "PBE_COORDINATOR" in os.environ:
        ints = {}
        for name in ("PBE_NUM_PROCESSES", "PBE_PROCESS_ID"):
            value = os.environ.get(name, "")
            if not value.strip().isdigit():
                raise SetupError(f"{name} must be a non-negative integer with PBE_COORDINATOR set, got {value!r}")
            ints[name] = int(value)
        if not ints["PBE_PROCESS_ID"] < ints["PBE_NUM_PROCESSES"]:
            raise SetupError(f"PBE_PROCESS_ID ({ints['PBE_PROCESS_ID']}) must be below PBE_NUM_PROCESSES "
                             f"({ints['PBE_NUM_PROCESSES']})")
        kw = dict(coordinator_address=os.environ["PBE_COORDINATOR"], num_processes=ints["PBE_NUM_PROCESSES"],
                  process_id=ints["PBE_PROCESS_ID"])
    try:
        jax.distributed.initialize(**kw)
    except (RuntimeError, ValueError) as e:
        where = os.environ.get("PBE_COORDINATOR", "auto-detected")
        raise SetupError(f"jax.distributed could not start (PBE_DISTRIBUTED=1, coordinator {where}): "
                         f"{_first_line(e)}") from None


class ResourceError(RuntimeError):
    """A compiled call would hold an array larger than this machine (or than XLA can index); ``str(err)`` is
    one line with the function, the array's size and the memory available. Raised before compiling."""


def device_memory() -> int:
    """Bytes of memory of one device: the accelerator's limit, or this machine's RAM for the CPU backend."""
    stats = jax.local_devices()[0].memory_stats() or {}
    if stats.get("bytes_limit"):
        return int(stats["bytes_limit"])
    return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))


def _check_fits(name: str, jitted, args, kwargs) -> costs.Cost:
    """Refuse (:class:`ResourceError`) a call whose largest array, read off its jaxpr with the plan's costing
    (:func:`sims.costs.jaxpr_cost`), exceeds what XLA can index or this device's memory: the checks of
    ``python -m sims plan``, before XLA would abort the process or fail with RESOURCE_EXHAUSTED. Returns
    the call's cost."""
    cost = costs.jaxpr_cost(jitted.trace(*args, **kwargs).jaxpr)
    problems = costs.size_problems(cost.max_elements, cost.max_bytes, device_memory(), "this device's memory")
    if problems:
        raise ResourceError(f"{name}: {'; '.join(problems)}")
    return cost


# Work per call (FLOPs, sims.costs) from which a CPU-only process compiles a function optimised (level 2,
# theory.numerics.HEAVY_COMPILE) rather than at sims.xla.CPU_OPT_FLAGS' level 0. Measured side by side on
# the idle 2-core machine (benchmarks/compile_levels.py, make bench), against level 3, which runs them as
# fast as level 2: level 0 compiles a function 0.02 to 0.5 s faster and runs it 0.04 s (matrix products) to
# 1.8 s (elementwise tanh/exp, ten times slower) per 1e9 FLOPs slower. A wrong level 2 costs at most that
# compile difference; a wrong level 0 can run a long loop ten times slower. So the bar sits where the code
# that level 0 slows most starts to lose (~1e8 FLOPs): a safe side, not a tuned optimum. A while loop (trip
# count unknown) also counts as heavy. The bar is read per device (FLOPs over the devices its arguments are
# split over): a fixed batch per device (chunk_size) gets one level, and the same bits, on any device count.
OPTIMIZE_FLOPS = 1e8
# A heavy function's compiler options; _fast_cpu_compiles adds the fusion emitters' switch (on) where
# sims.xla.cpu_flags turned them off. Read at such a function's first compile, after setup.
_HEAVY_COMPILE: dict[str, Any] = dict(numerics.HEAVY_COMPILE)


def _shard_count(leaves) -> int:
    """The most devices any argument in ``leaves`` is split over (1 when none is split)."""
    return max((len(x.sharding.device_set) for x in leaves
                if isinstance(x, jax.Array) and not x.sharding.is_fully_replicated), default=1)


class Plannable:
    """A ``jax.jit``-compiled function that the paper-scale planner (:mod:`sims.plan`) can stand in for.

    Called normally it is the jitted function. While :func:`planning` is active, a call from Python
    (not from inside another trace) hands ``(name, jitted, args, kwargs, static)`` to the planner, which lowers and
    compiles the function at the arguments' shapes and shardings without running it, and returns zeros
    of the output's shapes; so the plan sees exactly the functions, shapes, shardings and call counts of
    the real run. Other attributes (``lower``, ``trace``, ...) are the jitted function's.
    """

    def __init__(self, jitted, name: str, static: tuple[tuple[int, ...], tuple[str, ...]] = ((), ()),
                 optimized: Callable[[], Any] | None = None):
        functools.update_wrapper(self, jitted)  # first: it copies the wrapped function's __dict__
        self.jitted = jitted
        self.name = name
        self.static = static  # (static_argnums, static_argnames): the planner keys these by value
        self._make_optimized = optimized  # builds the same function compiled optimised (_HEAVY_COMPILE)
        self._optimized = None
        # (argument shapes and dtypes, devices split over) -> the jitted function that runs it, chosen at
        # its first call (sizes checked)
        self._chosen: dict = {}

    def __call__(self, *args, **kwargs):
        record = _PLANNER["record"]
        leaves = jax.tree.leaves((args, kwargs))
        if any(isinstance(x, jax.core.Tracer) for x in leaves):
            return self.jitted(*args, **kwargs)
        if record is not None:
            return record(self.name, self.jitted, args, kwargs, self.static)
        # The first call at each signature: refuse an array beyond the machine before XLA compiles it, and
        # pick the optimisation level (OPTIMIZE_FLOPS) when this is a CPU-only process at level 0.
        shards = _shard_count(leaves)
        signature = (tuple((np.shape(x), str(getattr(x, "dtype", type(x).__name__))) for x in leaves), shards)
        chosen = self._chosen.get(signature)
        if chosen is None:
            cost = _check_fits(self.name, self.jitted, args, kwargs)
            chosen = self.jitted
            if _STATE.get("fast_cpu") and self._make_optimized and (
                    cost.flops / shards >= OPTIMIZE_FLOPS or cost.while_loops):
                if self._optimized is None:
                    self._optimized = self._make_optimized()
                chosen = self._optimized
            self._chosen[signature] = chosen
        return chosen(*args, **kwargs)

    def __getattr__(self, attr):
        return getattr(self.jitted, attr)


def jit(fn: Callable[..., Any] | None = None, *, name: str | None = None, **kwargs) -> Any:
    """``jax.jit(fn, **kwargs)`` as a :class:`Plannable` (also a decorator, with or without arguments).
    Every compiled function a simulation calls from Python goes through this, so that ``python -m sims
    plan`` sees it; ``name`` labels it in the plan (default: the function's qualified name)."""
    if fn is None:
        return functools.partial(jit, name=name, **kwargs)
    nums, names = kwargs.get("static_argnums", ()), kwargs.get("static_argnames", ())
    static = (tuple([nums] if isinstance(nums, int) else nums), tuple([names] if isinstance(names, str) else names))
    return Plannable(jax.jit(fn, **kwargs), name or getattr(fn, "__qualname__", repr(fn)), static,
                     optimized=None if "compiler_options" in kwargs else
                     functools.partial(jax.jit, fn, compiler_options=_HEAVY_COMPILE, **kwargs))


class planning:  # noqa: N801 - a context manager used as ``with runtime.planning(record):``
    """While active, every :class:`Plannable` call goes to ``record(name, jitted, args, kwargs, static)`` instead
    of running (:mod:`sims.plan`). Not reentrant."""

    def __init__(self, record: Callable[..., Any]):
        self.record = record

    def __enter__(self):
        if _PLANNER["record"] is not None:
            raise RuntimeError("runtime.planning is already active")
        _PLANNER["record"] = self.record
        return self

    def __exit__(self, *_exc):
        _PLANNER["record"] = None
        return False


def is_planning() -> bool:
    """True while :class:`planning` is active (a simulation may then skip pure-Python work whose
    result the plan does not need, e.g. a convergence check on the zeros the planner returns)."""
    return _PLANNER["record"] is not None


class _PlannedClosure(Plannable):
    """A theory closure's ``jax.jit`` as a Plannable; a Python number argument (a chunk index) goes to the
    planner as a 0-d array, so that every chunk is one signature (one plan stage), as it is one trace."""

    def __call__(self, *args, **kwargs):
        args = tuple(np.asarray(a) if isinstance(a, (int, float)) and not isinstance(a, bool) else a
                     for a in args)
        return super().__call__(*args, **kwargs)


@contextlib.contextmanager
def planned_theory_jits(label: str = ""):
    """While :class:`planning` is active, the ``jax.jit`` calls that theory functions make when called
    (theory/ imports no sims code, so its compiled closures, e.g. those of
    :func:`theory.mdm_variance.nested_losses`, are plain ``jax.jit``) make :class:`Plannable` functions,
    so that ``python -m sims plan`` costs them instead of running them, as it does :func:`jit`'s.
    Functions compiled at import time are untouched. Outside planning it does nothing, so a normal run is
    unchanged. ``label`` prefixes their names in the plan (``"label: qualname"``). Not reentrant."""
    if not is_planning():
        yield
        return
    plain = jax.jit

    def planned_jit(fn=None, **kwargs):
        if fn is None:
            return functools.partial(planned_jit, **kwargs)
        cls = Plannable if kwargs else _PlannedClosure  # static arguments stay Python values
        name = getattr(fn, "__qualname__", "jit")
        return cls(plain(fn, **kwargs), f"{label}: {name}" if label else name)

    jax.jit = planned_jit
    try:
        yield
    finally:
        jax.jit = plain


def is_writer() -> bool:
    """True on the one process that writes results and figures (process 0)."""
    return jax.process_index() == 0


def make_mesh(n_devices: int | None = None) -> jax.sharding.Mesh:
    """A 1-D mesh with axis ``"seeds"`` over all devices (or the first ``n_devices``) of all processes."""
    devices = jax.devices()
    if n_devices is not None:
        if not 1 <= n_devices <= len(devices):
            raise ValueError(f"n_devices must be in [1, {len(devices)}], got {n_devices}")
        devices = devices[:n_devices]
    return jax.make_mesh((len(devices),), (AXIS,), axis_types=(jax.sharding.AxisType.Auto,),
                         devices=devices)


def seed_key(seed: int, index, salt: int | None = None) -> jax.Array:
    """The key of seed ``index`` in a sweep with root ``seed``, ``fold_in(key(seed), index)``, folded with
    ``salt`` if given (in ``[FAMILY_SALT_BASE, 2**32)``, else ValueError): a second family of draws of the
    same seeds, apart from every index's and every root seed's (root seed + k: redrawn at seed offset k)."""
    key = jax.random.fold_in(jax.random.key(seed), index)
    if salt is not None and not FAMILY_SALT_BASE <= salt < 2**32:
        raise ValueError(f"a seed_key salt must be in [2**31, 2**32), got {salt}")
    return key if salt is None else jax.random.fold_in(key, salt)


def _check_n_seeds(n_seeds: int) -> None:
    """Raise ValueError unless ``1 <= n_seeds < 2**31`` (seed indices are int32)."""
    if not 1 <= n_seeds <= MAX_SEEDS:
        raise ValueError(f"n_seeds must be in [1, 2**31 - 1] (seed indices are int32), got {n_seeds}")


def chunk_size(n: int, per_device: int | None = None) -> int:
    """Entries per device per compiled call for a batch of ``n``: ``per_device`` if given, else
    ``ceil(n / CHUNKS)``. It never depends on the device count: every device compiles the same shapes on
    1 or many devices, so a run's numbers do not depend on how many devices run it (bitwise, on one
    backend; see :func:`map_batch`).

    Raises:
      ValueError: ``n`` < 1 or ``per_device`` < 1.
      TypeError: ``per_device`` not an integer.
    """
    check_int(n, "n", ge=1)
    if per_device is not None:
        return check_int(per_device, "per_device", ge=1)
    return -(-n // CHUNKS)


def batch_chunks(n: int, mesh, per_device: int | None = None) -> list[np.ndarray]:
    """Row indices ``0..n-1`` split into consecutive calls of ``chunk_size(n, per_device)`` rows per
    device (``step`` = that times the mesh size rows per call), the last padded by repeating row
    ``n - 1``: a list of ``[step]`` int64 arrays."""
    step = chunk_size(n, per_device) * mesh.devices.size
    rows = _padded(n, step)
    return [rows[i:i + step] for i in range(0, rows.size, step)]


def _padded(n: int, multiple: int) -> np.ndarray:
    """Row indices ``0..n-1`` padded by repeating the last to a multiple of ``multiple``: the one padding
    rule of every batch (:func:`padded_rows`, :func:`batch_chunks`)."""
    return np.minimum(np.arange(-(-n // multiple) * multiple), n - 1)


def padded_rows(n: int, mesh) -> np.ndarray:
    """Row indices ``0..n-1`` padded by repeating the last to a multiple of the mesh size: ``[padded]``
    int64 (:func:`seed_indices`, :func:`shard_rows`)."""
    return _padded(n, mesh.devices.size)


def shard_rows(a, mesh) -> jax.Array:
    """``a [n, ...]`` padded by :func:`padded_rows` and sharded over the ``"seeds"`` axis of ``mesh``
    (across processes too): ``[padded, ...]``."""
    a = np.asarray(a)[padded_rows(np.shape(a)[0], mesh)]
    return jax.make_array_from_callback(a.shape, NamedSharding(mesh, P(AXIS)), lambda s: a[s])


def seed_indices(n: int, mesh) -> tuple[jax.Array, int]:
    """Seed indices 0..n-1 (int32), padded (by repeating the last) to a multiple of the mesh size and
    sharded over the ``"seeds"`` axis (across processes too). Returns ``(indices [padded], padded)``.

    Raises:
      ValueError: ``n`` is not in ``[1, 2**31 - 1]``.
    """
    _check_n_seeds(n)
    arr = shard_rows(np.arange(n, dtype=np.int32), mesh)
    return arr, arr.shape[0]


def to_host(tree):
    """Gather a (possibly multi-process) sharded pytree to numpy on every process."""
    if jax.process_count() > 1:
        return multihost_utils.process_allgather(tree, tiled=True)
    return jax.tree.map(np.asarray, tree)


def local_devices(mesh) -> list[tuple[int, Any]]:
    """``(position, device)`` of this process's devices in the flattened ``mesh`` (all of them on one host)."""
    me = jax.process_index()
    return [(d, dev) for d, dev in enumerate(mesh.devices.flat) if dev.process_index == me]


def on_device(tree, device):
    """``tree``'s arrays placed on ``device``; Python scalars are left as they are (weakly typed)."""
    return jax.tree.map(lambda a: jax.device_put(a, device) if isinstance(a, (np.ndarray, np.generic, jax.Array))
                        else a, tree)


def gather(outs) -> Any:
    """The outputs of this process's devices (a list of pytrees with a leading row axis, in mesh order)
    concatenated to numpy, then across processes (a mesh from :func:`make_mesh` lists each process's
    devices together, in process order): identical on every process."""
    out = jax.tree.map(lambda *a: np.concatenate([np.asarray(x) for x in a]), *outs)
    if jax.process_count() > 1:
        out = multihost_utils.process_allgather(out, tiled=True)
    return out


def map_seeds(fn: Callable[..., Any], seed: int, n_seeds: int, *args, mesh=None, per_device: int | None = None,
              salt: int | None = None) -> Any:
    """Run ``fn(key, *args)`` for seeds 0..n_seeds-1, vmapped, the seeds split over the devices of
    ``mesh``: :func:`map_batch` over the seed indices, each turned into its key by :func:`seed_key`.

    Args:
      fn: per-seed function of a key and shared (replicated) arguments, returning a pytree of arrays.
      seed, salt: root seed, and None or a second family's salt: seed ``i`` uses :func:`seed_key` ``(seed, i, salt)``.
      n_seeds: number of seeds (>= 1); padded internally (:func:`batch_chunks`).
      mesh: a 1-D mesh from :func:`make_mesh` (default: all devices).
      per_device: seeds per device per compiled call (default: :func:`chunk_size`'s rule).
    Returns:
      The pytree of numpy arrays with leading axis ``[n_seeds]``, identical on every process.
    Raises:
      ValueError: ``n_seeds`` is not in ``[1, 2**31 - 1]``; ``per_device`` not an integer >= 1; a bad ``salt``.
    """
    _check_n_seeds(n_seeds)
    return map_batch(_per_seed(fn, seed, salt), np.arange(n_seeds, dtype=np.int32), *args, mesh=mesh,
                     per_device=per_device)


# map_batch's compiled functions, kept per function object as jax.jit keeps its traces (the _FN_CACHE most
# recent): a loop calling map_seeds again with one function (network_sweep) reuses its program.
_FN_CACHE = 32


@functools.lru_cache(maxsize=_FN_CACHE)
def _per_seed(fn: Callable[..., Any], seed: int, salt: int | None) -> Callable[..., Any]:
    """``i -> fn(seed_key(seed, i, salt), ...)``, one function object per ``(fn, seed, salt)``."""
    per_seed = lambda i, *a: fn(seed_key(seed, i, salt), *a)  # noqa: E731
    per_seed.__qualname__ = f"map_seeds({getattr(fn, '__qualname__', 'fn')})"  # its name in the plan
    return per_seed


@functools.lru_cache(maxsize=_FN_CACHE)
def _vmapped(fn: Callable[..., Any], name: str) -> Plannable:
    """``fn`` vmapped over its first argument's axis 0 (the others shared): one :func:`jit` per ``(fn, name)``."""
    return jit(lambda b, *args: jax.vmap(fn, in_axes=(0,) + (None,) * len(args))(b, *args), name=name)


def map_batch(fn: Callable[..., Any], batch: Any, *args, mesh=None, per_device: int | None = None) -> Any:
    """Run ``fn(item, *args)`` for every entry of the leading axis of the pytree ``batch`` (e.g. the runs
    of a sweep: seed index x buffer size x setting), vmapped, that axis split over the devices of ``mesh``.

    ``fn`` derives its randomness from what ``item`` holds (a seed index for :func:`seed_key`), so a run
    draws the same random numbers whatever the batch, device or process count.

    The batch runs in consecutive calls of :func:`chunk_size` ``(n, per_device)`` entries per device (the
    last call padded by repeating the last entry, :func:`batch_chunks`), each device running the one-device
    program on its entries, all devices side by side: memory is bounded by that many runs per device
    whatever ``n``, and each device runs the same compiled code on the same shapes on 1 or many devices,
    so the numbers do not depend on the device count (bitwise, on one backend). Without it they did:
    other vmap widths, or one program partitioned over the mesh (XLA fuses it differently), round
    differently, and long float32 training grows that into different results. Each device compiles the
    program once. While planning (:mod:`sims.plan`) each call is compiled as one program over the mesh,
    the same work per device.

    Args:
      fn: per-item function of one entry of ``batch`` and shared (replicated) arguments.
      batch: pytree of arrays with a common leading axis ``[n]``, ``n >= 1``.
      mesh: a 1-D mesh from :func:`make_mesh` (default: all devices).
      per_device: entries per device per compiled call, an integer >= 1 (default: :func:`chunk_size`'s
        rule, ``ceil(n / CHUNKS)``).
    Returns:
      The pytree of numpy arrays with leading axis ``[n]``, identical on every process.
    Raises:
      ValueError: an empty batch, leaves with different leading sizes, or ``per_device`` < 1.
      TypeError: ``per_device`` not an integer.
    """
    leaves = jax.tree.leaves(batch)
    sizes = {np.shape(a)[0] if np.ndim(a) else None for a in leaves}
    if not leaves or len(sizes) != 1 or None in sizes or 0 in sizes:
        raise ValueError(f"batch needs leaves with one common, non-zero leading axis, got sizes {sizes}")
    n = sizes.pop()
    mesh = mesh if mesh is not None else make_mesh()
    name = getattr(fn, "__qualname__", "map_batch")
    k = chunk_size(n, per_device)
    run = _vmapped(fn, name)
    if is_planning():  # the plan compiles each call as one program over the mesh: the same work per device
        sharding = NamedSharding(mesh, P(AXIS))
        spmd = jit(lambda b, *a: jax.lax.with_sharding_constraint(run.jitted(b, *a), sharding), name=name)
        parts = [to_host(spmd(jax.tree.map(lambda a: shard_rows(np.asarray(a)[rows], mesh), batch), *args))
                 for rows in batch_chunks(n, mesh, per_device)]
        return jax.tree.map(lambda *a: np.concatenate(a)[:n], *parts)
    # Each device runs the one-device program on its k rows, dispatched asynchronously so that the devices run
    # side by side (why not one program partitioned over the mesh: the docstring).
    local = local_devices(mesh)
    placed = {d: on_device(args, dev) for d, dev in local}
    parts = []
    chunks = batch_chunks(n, mesh, per_device)
    # Calls done so far, when there are several (a bar of its own below an experiment's, gone when done).
    for rows in progress(len(chunks) if len(chunks) > 1 else 0, name.replace(".<locals>", ""), unit="call",
                         leave=False, items=chunks):
        outs = [run(on_device(jax.tree.map(lambda a: np.asarray(a)[rows[d * k:(d + 1) * k]], batch), dev),
                    *placed[d]) for d, dev in local]
        parts.append(gather(outs))
    return jax.tree.map(lambda *a: np.concatenate(a)[:n], *parts)


def mean_over_seeds(fn: Callable[..., Any], seed: int, n_seeds: int, *args, mesh=None):
    """Monte Carlo mean and standard error of ``fn(key, *args)`` over seeds, reduced per device.

    Each device evaluates its shard of seeds (vmapped) and reduces its valid (non-padded) seeds to a
    count ``n_i``, a mean ``c_i`` and centred sums; one ``jax.shard_map`` combines them over the mesh with
    ``psum`` by Chan et al.'s parallel formula: ``mean = psum(n_i c_i + r_i) / N`` and
    ``M2 = psum(q_i + n_i d_i**2 + 2 d_i r_i)`` with ``d_i = c_i - mean``, ``q_i = sum (x - c_i)**2`` and
    ``r_i = sum (x - c_i)``. ``r_i`` is 0 in exact arithmetic; keeping it (the corrected two-pass term)
    makes ``M2`` exact to rounding even though ``c_i`` is itself rounded, which matters when the mean is
    large against the spread (one-pass ``E[x^2] - mean^2`` cancels to 0 there). Padded seeds are left out
    (weight 0, even if not finite) and a device holding only padded seeds contributes nothing. Across
    device counts the result is equal to rounding, not bitwise: each device's share and the order of the
    ``psum`` change with the count (use it for Monte Carlo means, not for runs that amplify rounding).

    Returns:
      ``(mean, stderr)`` pytrees of numpy arrays shaped like one seed's output; ``stderr`` is the
      sample standard deviation over seeds divided by sqrt(n_seeds) (0 when ``n_seeds == 1``).
    Raises:
      ValueError: ``n_seeds`` is not in ``[1, 2**31 - 1]``.
    """
    _check_n_seeds(n_seeds)
    mesh = mesh if mesh is not None else make_mesh()
    idx, _ = seed_indices(n_seeds, mesh)
    valid = jax.device_put(np.arange(idx.shape[0]) < n_seeds, NamedSharding(mesh, P(AXIS)))

    def local(idx, valid, *args):
        keys = jax.vmap(lambda i: seed_key(seed, i))(idx)
        vals = jax.vmap(fn, in_axes=(0,) + (None,) * len(args))(keys, *args)
        ftype = jnp.result_type(float)
        n_i = jnp.sum(valid.astype(ftype))
        n = jax.lax.psum(n_i, AXIS)

        def moments(v):
            v = v.astype(jnp.result_type(v.dtype, ftype))
            ok = valid.reshape((-1,) + (1,) * (v.ndim - 1))
            c = jnp.sum(jnp.where(ok, v, 0), 0) / jnp.maximum(n_i, 1)  # 0 on an all-padding device
            dev = jnp.where(ok, v - c, 0)
            r, q = jnp.sum(dev, 0), jnp.sum(dev * dev, 0)
            mean = jax.lax.psum(n_i * c + r, AXIS) / n
            d = c - mean
            return mean, jax.lax.psum(q + d * (n_i * d + 2 * r), AXIS)

        return jax.tree.map(moments, vals)

    in_specs = (P(AXIS), P(AXIS)) + (P(),) * len(args)
    # check_vma=False: per-seed functions are written for vmap and need not annotate varying values.
    sm = jit(jax.shard_map(local, mesh=mesh, in_specs=in_specs, out_specs=P(), check_vma=False),
             name=f"mean_over_seeds({getattr(fn, '__qualname__', 'fn')})")
    moments = jax.tree.map(np.asarray, sm(idx, valid, *args))
    is_pair = lambda x: isinstance(x, tuple) and len(x) == 2 and not isinstance(x[0], tuple)  # noqa: E731
    mean = jax.tree.map(lambda m: m[0], moments, is_leaf=is_pair)
    if n_seeds == 1:
        return mean, jax.tree.map(np.zeros_like, mean)
    # M2 >= 0 in exact arithmetic; clip a rounding-negative one (all values equal) before the root.
    return mean, jax.tree.map(lambda m: np.sqrt(np.maximum(m[1], 0) / (n_seeds - 1) / n_seeds), moments,
                              is_leaf=is_pair)


def progress(total: int, desc: str, unit: str = "step", leave: bool = True, items=None):
    """A progress bar (``total`` steps: done, rate, remaining time) on stderr of process 0; silent on the
    others, when ``PBE_PROGRESS=0``, or when ``total`` is 0. ``leave=False``: the bar is erased when closed
    (a bar shown below an experiment's own). ``items``: an iterable the bar yields from, one step each
    (tqdm's own iteration; :func:`tracked`)."""
    quiet = not is_writer() or os.environ.get("PBE_PROGRESS", "1") == "0" or total == 0
    return tqdm(items, total=total, desc=desc, unit=unit, disable=quiet, file=sys.stderr, dynamic_ncols=True,
                leave=leave)


def tracked(items, desc: str, unit: str = "step"):
    """``items`` (a sequence), iterated with a :func:`progress` bar of ``len(items)`` steps: a loop over an
    experiment's pieces or a host loop (probes, metrics) that takes more than a few seconds."""
    return progress(len(items), desc, unit, items=items)


def device_summary() -> dict[str, Any]:
    """Backend, device and process counts, for provenance."""
    return {"backend": jax.default_backend(), "device_count": jax.device_count(),
            "local_device_count": jax.local_device_count(), "process_count": jax.process_count(),
            "x64": bool(jax.config.jax_enable_x64)}
