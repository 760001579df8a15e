"""XLA settings of a process, read from the environment before JAX starts its backend: the persistent
compilation cache's compile-time threshold and the compiler flags of a CPU-only process; and the host
BLAS's threads. Used by :func:`sims.runtime.setup`; the heavy functions' compile options that undo part
of these live beside the compiled-function wrapper (``sims.runtime._HEAVY_COMPILE``)."""

from __future__ import annotations

import importlib.util
import math
import os

import jax
import jaxlib.version
import numpy as np
import threadpoolctl

from sims import portable

# Programs that compile in less than this many seconds are not written to the persistent compilation cache
# (a run's cache holds what is slow to compile). PBE_CACHE_MIN_COMPILE_S overrides it: the test suite sets 0
# for itself and every process it starts, whose small programs a warm rerun then reads back (an 8-device
# sweep worker: 12.5 s of CPU at 0.5, 5.4 s at 0, warm, 2026-12-04).
CACHE_MIN_COMPILE_S = 0.5


def cache_min_compile_s() -> float:
    """``PBE_CACHE_MIN_COMPILE_S`` (seconds, >= 0), or :data:`CACHE_MIN_COMPILE_S` when it is unset or empty.
    Raises ValueError: not a finite non-negative number (``sims.runtime.setup`` reports it as a SetupError)."""
    raw = os.environ.get("PBE_CACHE_MIN_COMPILE_S", "").strip()
    if not raw:
        return CACHE_MIN_COMPILE_S
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"PBE_CACHE_MIN_COMPILE_S must be a non-negative number of seconds, got {raw!r}")
    return value


# XLA flags of a CPU-only process (see cpu_flags): LLVM optimisation level 0, expensive LLVM passes off.
CPU_OPT_FLAGS = ("--xla_backend_optimization_level=0", "--xla_llvm_disable_expensive_passes=true")
# Also for a CPU-only process at level 0: XLA's older elementwise-fusion code generator, not the MLIR fusion
# emitters. Measured side by side on the 2-core machine (2026-12-03, benchmarks/compile_levels.py): at level
# 0 it compiles 40-55% faster (a 2-layer transformer's 200 training steps 4.1 -> 2.5 s, 38 small programs
# 3.6 -> 1.8 s) and runs as fast or faster, with the same bits on those programs (29 of the 35 quick results
# kept their bits, 6 moved at rounding level: exp and log are generated differently); at level 3 it compiles
# and runs slower (8.1 -> 11.9 s), so a heavy function, compiled optimised (sims.runtime._HEAVY_COMPILE, now
# level 2, where it was measured again on 2026-12-05: MDM training 32 s with the emitters, 37 s without),
# keeps the emitters on. Added only for the jaxlib minor versions it was measured on: an XLA that does not
# know a flag aborts the process, so a newer jaxlib runs without it until measured.
CPU_FUSION_FLAGS = ("--xla_cpu_use_fusion_emitters=false",)
CPU_FUSION_FLAG_JAXLIB = ((0, 10),)
# For every CPU-only process: dots and other library fusions go to XLA's own kernels (Eigen, compiled into
# jaxlib, and LLVM's code), not to YNNPACK, which picks its kernels by the CPU at run time: on an AMD EPYC
# with AVX-512 its float32 products rounded differently from one without, and three nc_forgetting verdicts
# at quick scale moved with that rounding (2026-12-05). With YNNPACK off the results did not change when
# XLA's own code generation was held to AVX2 (--xla_cpu_max_isa=AVX2: bit-identical), and
# nc_forgetting_buffer_sweep ran 35 s against 39 s with YNNPACK (2 cores). Host libraries are pinned apart
# (sims.portable). Added only for the jaxlib minor versions of CPU_PORTABLE_FLAG_JAXLIB, where the flag was
# measured (tests/test_portable.py fails on another, so that it gets measured); a user's setting is kept.
CPU_PORTABLE_FLAGS = ("--xla_cpu_experimental_ynn_fusion_type=",)
CPU_PORTABLE_FLAG_JAXLIB = ((0, 10),)
# Packages that bring JAX an accelerator backend: with none installed the process can only use the CPU.
_ACCELERATOR_PLUGINS = ("jax_plugins", "jax_cuda12_plugin", "jax_cuda13_plugin", "libtpu")


def cpu_flags() -> tuple[bool, bool]:
    """Add :data:`CPU_OPT_FLAGS` to ``XLA_FLAGS`` when this process can only run on the CPU (``JAX_PLATFORMS``
    is ``cpu``, or no accelerator plugin is installed) and ``XLA_FLAGS`` does not set the level already;
    with jaxlib 0.10 also :data:`CPU_FUSION_FLAGS` (unless ``XLA_FLAGS`` sets the fusion emitters), which
    the heavy functions' compiles (``sims.runtime._HEAVY_COMPILE``) turn back, and, whatever the level,
    :data:`CPU_PORTABLE_FLAGS` (unless ``XLA_FLAGS`` sets YNNPACK's fusions). Returns ``(level0, fusion_off)``:
    whether the level-0 flags and the fusion flag were added.

    On the CPU most of a quick-scale run is XLA compiling (LLVM optimising each fused kernel); at level 0
    the 2-core machine compiles about twice as fast, while matrix products and convolutions still call
    the same library kernels. A compiled function whose call does much work (``sims.runtime.OPTIMIZE_FLOPS``) is
    compiled optimised all the same (level 2, ``sims.runtime.Plannable``), so long simulation loops run at
    full speed. Levels round differently in the last bit (levels 2 and 3 fuse multiply-adds, even in a normal
    draw's erfinv), so results agree with a level-3 run to rounding, not bit for bit (tests/test_runtime.py);
    reruns at one level, and runs on any device count, stay bit-identical in their draws. LLVM's expensive
    passes off (both levels): MDM training compiled 15% faster, same bits and run time (2 cores, 2026-12-03).
    An accelerator's compiler is left at its default, and a user who sets ``--xla_backend_optimization_level``
    in ``XLA_FLAGS`` keeps theirs. Takes effect only before JAX starts its backend (in ``sims.runtime.setup``)."""
    flags = os.environ.get("XLA_FLAGS", "")
    if not cpu_only():
        return False, False
    version = jaxlib_minor()
    # a flag whose name XLA_FLAGS already holds (a user's YNNPACK setting, level, emitters) is not added
    extra = CPU_PORTABLE_FLAGS if version in CPU_PORTABLE_FLAG_JAXLIB else ()
    level0 = "xla_backend_optimization_level" not in flags
    fusion_off = level0 and version in CPU_FUSION_FLAG_JAXLIB and "xla_cpu_use_fusion_emitters" not in flags
    if level0:
        extra += CPU_OPT_FLAGS + (CPU_FUSION_FLAGS if fusion_off else ())
    os.environ["XLA_FLAGS"] = " ".join([flags, *(f for f in extra if f.split("=")[0] not in flags)]).strip()
    return level0, fusion_off


def cpu_only() -> bool:
    """Whether this process can only run on the CPU: ``JAX_PLATFORMS`` (or ``jax_platforms``) names no
    platform but ``cpu``, or, unset, no accelerator plugin is installed (:data:`_ACCELERATOR_PLUGINS`)."""
    platforms = os.environ.get("JAX_PLATFORMS", "") or (jax.config.jax_platforms or "")
    if platforms:
        return {p.strip() for p in platforms.split(",") if p.strip()} <= {"cpu"}
    return not any(importlib.util.find_spec(m) for m in _ACCELERATOR_PLUGINS)


def jaxlib_minor() -> tuple[int, int]:
    """``(major, minor)`` of the installed jaxlib (``(0, 0)`` when its version string does not parse)."""
    try:
        major, minor = jaxlib.version.__version__.split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return (0, 0)


# Threads of the host BLAS (see one_blas_thread): one, so that host linear algebra (probes, LDA heads,
# JAX's CPU LAPACK) neither depends on the core count nor competes with XLA's threads or another process.
HOST_BLAS_THREADS = 1


def one_blas_thread() -> None:
    """Host BLAS (NumPy's and SciPy's OpenBLAS, which also serves JAX's CPU LAPACK) on one thread, unless
    the user set ``OPENBLAS_NUM_THREADS``. Two reasons, both measured (2 cores, 2026-12-04): OpenBLAS's
    threads cost more than they save on this project's host matrices (a scikit-learn probe on 1797 x 32
    features: 1.13 s on two threads, 0.15 s on one; nc_forgetting fits over a thousand at quick scale), and
    are oversubscribed when two processes share the cores (``make -j2 figures``, the test workers); and the
    numbers no longer depend on the machine's core count (a probe's coefficients differ in the last bits
    between one and two threads). XLA's own kernels do not use BLAS threads and are unchanged.
    ``OPENBLAS_NUM_THREADS`` reaches the libraries loaded later (SciPy's, at JAX's first linear
    algebra); threadpoolctl sets those loaded already."""
    if "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = str(HOST_BLAS_THREADS)
    threadpoolctl.threadpool_limits(HOST_BLAS_THREADS, user_api="blas")


def kernel_summary() -> str:
    """The kernels this process's numbers come from, in one line for a result's provenance (its sidecar's
    ``kernels``; the report shows it): whether XLA:CPU's YNNPACK fusions are off (:data:`CPU_PORTABLE_FLAGS`),
    the architectures of the OpenBLAS libraries loaded (threadpoolctl's names), and NumPy's SIMD targets
    above x86-64-v3 that are on (:mod:`sims.portable` turns them off). E.g. ``"XLA:CPU YNNPACK off; OpenBLAS
    Haswell; NumPy SIMD up to x86-64-v3"``."""
    ynn = "off" if CPU_PORTABLE_FLAGS[0] in os.environ.get("XLA_FLAGS", "").split() else "default"
    blas = sorted({str(i.get("architecture")) for i in threadpoolctl.threadpool_info()
                   if i.get("internal_api") == "openblas"})
    umath = getattr(getattr(np, "_core", None), "_multiarray_umath", None)  # NumPy 2's home of the CPU table
    features = getattr(umath, "__cpu_features__", None)
    if features is None:
        simd = "unknown"
    else:
        above = [f for f in portable.NUMPY_DISABLED_FEATURES.split() if features.get(f)]
        simd = ", ".join(above) if above else "up to x86-64-v3"
    return f"XLA:CPU YNNPACK {ynn}; OpenBLAS {'/'.join(blas) or 'not loaded'}; NumPy SIMD {simd}"
