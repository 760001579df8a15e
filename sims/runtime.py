"""The sharded simulation runtime: process setup, a 1-D device mesh, and seed sweeps over it.

Seeds (and sweeps) are a leading array axis: a per-seed function is ``vmap``-ed and the seed axis is
sharded over a mesh of every device (``jax.make_mesh`` + ``NamedSharding``), which is what ``pmap``
became in current JAX. Per-device reductions (Monte Carlo means) use ``jax.shard_map`` with a ``psum``.
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
import importlib.util
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

from sims import costs
from theory.numerics import check_int

AXIS = "seeds"
MAX_SEEDS = 2**31 - 1  # seed indices are int32
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
    ``PBE_CACHE_DIR``, default ``~/.cache/proofs-by-example/jax``) and, if asked, ``jax.distributed``.

    Raises:
      SetupError: JAX has no backend for ``JAX_PLATFORMS``, or a ``PBE_*`` distributed setting is bad.
      RuntimeError: float64 was requested but is not in effect afterwards.
    """
    if not _STATE["done"]:
        _fast_cpu_compiles()
        jax.config.update("jax_threefry_partitionable", True)
        cache = cache_dir or os.environ.get("PBE_CACHE_DIR") or str(
            Path.home() / ".cache" / "proofs-by-example" / "jax")
        jax.config.update("jax_compilation_cache_dir", cache)
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.5)
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


# XLA's LLVM optimisation level for a CPU-only process (see _fast_cpu_compiles).
CPU_OPT_FLAG = "--xla_backend_optimization_level=0"
# Packages that bring JAX an accelerator backend: with none installed the process can only use the CPU.
_ACCELERATOR_PLUGINS = ("jax_plugins", "jax_cuda12_plugin", "jax_cuda13_plugin", "libtpu")


def _fast_cpu_compiles() -> None:
    """Add :data:`CPU_OPT_FLAG` to ``XLA_FLAGS`` when this process can only run on the CPU (``JAX_PLATFORMS``
    is ``cpu``, or no accelerator plugin is installed) and ``XLA_FLAGS`` does not set the level already.

    On the CPU most of a quick-scale run is XLA compiling (LLVM optimising each fused kernel); at level 0
    the 2-core machine compiles about twice as fast, while matrix products and convolutions still call
    the same library kernels. A compiled function whose call does much work (:data:`OPTIMIZE_FLOPS`) is
    compiled at full optimisation all the same (:class:`Plannable`), so long simulation loops run at full
    speed. The two levels round differently in the last bit (level 3 fuses multiply-adds, even in a normal
    draw's erfinv), so results agree with a level-3 run to rounding, not bit for bit (tests/test_runtime.py);
    reruns at one level, and runs on any device count, stay bit-identical in their draws. An
    accelerator's compiler is left at its default, and a user who sets ``--xla_backend_optimization_level``
    in ``XLA_FLAGS`` keeps theirs. Takes effect only before JAX starts its backend (as :func:`setup` is
    called)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_backend_optimization_level" in flags:
        return
    platforms = os.environ.get("JAX_PLATFORMS", "") or (jax.config.jax_platforms or "")
    if platforms:
        cpu_only = {p.strip() for p in platforms.split(",") if p.strip()} <= {"cpu"}
    else:
        cpu_only = not any(importlib.util.find_spec(m) for m in _ACCELERATOR_PLUGINS)
    if cpu_only:
        os.environ["XLA_FLAGS"] = f"{flags} {CPU_OPT_FLAG}".strip()
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


# Work per call (FLOPs, sims.costs) from which a CPU-only process compiles a function at XLA's full
# optimisation (level 3) rather than at CPU_OPT_FLAG's level 0. Measured side by side on the idle 2-core
# machine (benchmarks/compile_levels.py, make bench): level 0 compiles a function 0.02 to 0.5 s faster and
# runs it 0.04 s (matrix products) to 1.8 s (elementwise tanh/exp, ten times slower) per 1e9 FLOPs
# slower. A wrong level 3 costs at most that compile difference; a wrong level 0 can run a long loop ten
# times slower. So the bar sits where the code that level 0 slows most starts to lose (~1e8 FLOPs): a
# safe side, not a tuned optimum. A while loop (trip count unknown) also counts as heavy. The FLOPs are those of the call's global
# shapes, so a seed batch padded to another device count could cross the bar and round differently: only
# for a function within a padding's few percent of 1e8 FLOPs.
OPTIMIZE_FLOPS = 1e8
_FULL_OPT = {"xla_backend_optimization_level": 3}


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
        self._make_optimized = optimized  # builds the same function compiled at full optimisation
        self._optimized = None
        # argument signature -> the jitted function that runs it, chosen at its first call (sizes checked)
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
        signature = tuple((np.shape(x), str(getattr(x, "dtype", type(x).__name__))) for x in leaves)
        chosen = self._chosen.get(signature)
        if chosen is None:
            cost = _check_fits(self.name, self.jitted, args, kwargs)
            chosen = self.jitted
            if _STATE.get("fast_cpu") and self._make_optimized and (cost.flops >= OPTIMIZE_FLOPS or cost.while_loops):
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
                     functools.partial(jax.jit, fn, compiler_options=_FULL_OPT, **kwargs))


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


def seed_key(seed: int, index) -> jax.Array:
    """The key of seed ``index`` in a sweep with root ``seed``: ``fold_in(key(seed), index)``."""
    return jax.random.fold_in(jax.random.key(seed), index)


def _check_n_seeds(n_seeds: int) -> None:
    """Raise ValueError unless ``1 <= n_seeds < 2**31`` (seed indices are int32)."""
    if not 1 <= n_seeds <= MAX_SEEDS:
        raise ValueError(f"n_seeds must be in [1, 2**31 - 1] (seed indices are int32), got {n_seeds}")


def padded_rows(n: int, mesh) -> np.ndarray:
    """Row indices ``0..n-1`` padded by repeating the last to a multiple of the mesh size: ``[padded]``
    int64. The one padding rule of every sharded batch (:func:`seed_indices`, :func:`map_batch`)."""
    size = mesh.devices.size
    return np.minimum(np.arange(-(-n // size) * size), n - 1)


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


def map_seeds(fn: Callable[..., Any], seed: int, n_seeds: int, *args, mesh=None, per_device: int | None = None) -> Any:
    """Run ``fn(key, *args)`` for seeds 0..n_seeds-1, vmapped, with the seed axis sharded over ``mesh``:
    :func:`map_batch` over the seed indices, each turned into its key by :func:`seed_key`.

    Args:
      fn: per-seed function of a key and shared (replicated) arguments, returning a pytree of arrays.
      seed: root seed; seed ``i`` uses :func:`seed_key` ``(seed, i)``.
      n_seeds: number of seeds (>= 1); padded internally to a multiple of the device count.
      mesh: a 1-D mesh from :func:`make_mesh` (default: all devices).
      per_device: seeds per device per compiled call (see :func:`map_batch`; default: all at once).
    Returns:
      The pytree of numpy arrays with leading axis ``[n_seeds]``, identical on every process.
    Raises:
      ValueError: ``n_seeds`` is not in ``[1, 2**31 - 1]``; ``per_device`` not an integer >= 1.
    """
    _check_n_seeds(n_seeds)
    def per_seed(i, *a):
        return fn(seed_key(seed, i), *a)

    per_seed.__qualname__ = f"map_seeds({getattr(fn, '__qualname__', 'fn')})"  # its name in the plan
    return map_batch(per_seed, np.arange(n_seeds, dtype=np.int32), *args, mesh=mesh, per_device=per_device)


def map_batch(fn: Callable[..., Any], batch: Any, *args, mesh=None, per_device: int | None = None) -> Any:
    """Run ``fn(item, *args)`` for every entry of the leading axis of the pytree ``batch`` (e.g. the runs
    of a sweep: seed index x buffer size x setting), vmapped, with that axis sharded over ``mesh``.

    ``fn`` derives its randomness from what ``item`` holds (a seed index for :func:`seed_key`), so a run
    draws the same random numbers whatever the batch, device or process count (its arithmetic may
    still differ by rounding, which long float32 training amplifies). The axis is padded (by repeating
    the last entry) to a multiple of the device count.

    With ``per_device`` set, the batch runs in consecutive calls of ``per_device`` entries per device (one
    compiled function; the last call padded likewise): memory is bounded by ``per_device`` runs per device
    whatever ``n``, and each device computes the same shapes on 1 or many devices, so the numbers do not
    depend on the device count (bitwise, on one backend).

    Args:
      fn: per-item function of one entry of ``batch`` and shared (replicated) arguments.
      batch: pytree of arrays with a common leading axis ``[n]``, ``n >= 1``.
      mesh: a 1-D mesh from :func:`make_mesh` (default: all devices).
      per_device: entries per device per compiled call, an integer >= 1 (default: all in one call).
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
    sharding = NamedSharding(mesh, P(AXIS))

    @jit(name=getattr(fn, "__qualname__", "map_batch"))
    def run(b, *args):
        out = jax.vmap(fn, in_axes=(0,) + (None,) * len(args))(b, *args)
        return jax.lax.with_sharding_constraint(out, sharding)

    if per_device is None:
        out = to_host(run(jax.tree.map(lambda a: shard_rows(a, mesh), batch), *args))
        return jax.tree.map(lambda a: a[:n], out)
    step = check_int(per_device, "per_device", ge=1) * mesh.devices.size
    rows = np.minimum(np.arange(-(-n // step) * step), n - 1)   # padded_rows' rule, to a multiple of step
    parts = [to_host(run(jax.tree.map(lambda a: shard_rows(np.asarray(a)[rows[i:i + step]], mesh), batch), *args))
             for i in range(0, rows.size, step)]
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
    (weight 0, even if not finite) and a device holding only padded seeds contributes nothing.

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


def progress(total: int, desc: str, unit: str = "step"):
    """A progress bar (steps done, rate, remaining time) on process 0; silent elsewhere or when
    ``PBE_PROGRESS=0``."""
    quiet = not is_writer() or os.environ.get("PBE_PROGRESS", "1") == "0"
    return tqdm(total=total, desc=desc, unit=unit, disable=quiet, file=sys.stderr, dynamic_ncols=True)


def device_summary() -> dict[str, Any]:
    """Backend, device and process counts, for provenance."""
    return {"backend": jax.default_backend(), "device_count": jax.device_count(),
            "local_device_count": jax.local_device_count(), "process_count": jax.process_count(),
            "x64": bool(jax.config.jax_enable_x64)}
