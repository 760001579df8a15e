"""The same numbers on every x86-64 CPU: the host libraries' kernels pinned below the instruction set, set
before NumPy loads (``import sims`` does it; standard library only, as NumPy must not be imported yet).

NumPy's SIMD loops and its and SciPy's OpenBLAS pick their kernels by the CPU at load time: on a CPU with
AVX-512 (x86-64-v4) they take other code paths than on one with AVX2 (x86-64-v3), which round differently
in the last bit. The last bit matters where a computation amplifies it: a probe's L-BFGS fit changed a test
prediction (nc_forgetting's probe accuracy moved by 0.009) when only OpenBLAS's kernels changed (AMD EPYC with
AVX-512, 2026-12-05). :func:`pin_host_kernels` pins both to their AVX2 paths where the CPU has AVX2 and FMA,
the instruction set of the CPUs this project's numbers come from. XLA's own kernels are pinned by
:data:`sims.xla.CPU_PORTABLE_FLAGS`. A user who sets ``OPENBLAS_CORETYPE`` or ``NPY_DISABLE_CPU_FEATURES``
keeps theirs; ``PBE_NATIVE_KERNELS=1`` leaves the libraries' own choice (faster on a large matrix, not
reproducible across CPUs).
"""

from __future__ import annotations

import os
import platform

# OpenBLAS's kernel family for every x86-64 CPU with AVX2 and FMA (AMD Zen 1-3 take these kernels by
# themselves; an AVX-512 CPU would take SkylakeX's or Cooperlake's).
OPENBLAS_CORETYPE = "Haswell"
# NumPy's dispatch targets above x86-64-v3 (AVX2, FMA), by their names since NumPy 2.4 (pyproject requires it:
# an older NumPy names them otherwise and only warns): turning them off leaves NumPy the v3 loops. Names a
# CPU lacks are ignored by NumPy (no warning), so the list is the same on every machine.
NUMPY_DISABLED_FEATURES = "X86_V4 AVX512_ICL AVX512_SPR"


def native_kernels(environ=None) -> bool:
    """Whether ``PBE_NATIVE_KERNELS`` (in ``environ``, default ``os.environ``) asks for the libraries' own
    kernel choice: any value but unset, empty, ``0`` or ``false`` (any case)."""
    env = os.environ if environ is None else environ
    return env.get("PBE_NATIVE_KERNELS", "0").strip().lower() not in ("", "0", "false")


def has_avx2_fma(cpuinfo: str | None = None) -> bool:
    """Whether this is an x86-64 Linux CPU with AVX2 and FMA (read from ``cpuinfo``, the text of
    ``/proc/cpuinfo``, or that file); False elsewhere (another architecture or OS, or no such file)."""
    if cpuinfo is None:
        if platform.system() != "Linux" or platform.machine().lower() not in ("x86_64", "amd64"):
            return False
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
                cpuinfo = f.read()
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.partition(":")[2].split())
            return {"avx2", "fma"} <= flags
    return False


def pin_host_kernels(environ=None, *, cpuinfo: str | None = None) -> dict[str, str]:
    """Set ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` in ``environ`` (default ``os.environ``) on
    an x86-64 CPU with AVX2 and FMA, unless :func:`native_kernels` or the user set them.
    Returns the settings it added (empty where it added none). Takes effect only in a process whose NumPy
    and OpenBLAS load afterwards (and in every process it starts)."""
    env = os.environ if environ is None else environ
    if native_kernels(env) or not has_avx2_fma(cpuinfo):
        return {}
    added = {}
    for name, value in (("OPENBLAS_CORETYPE", OPENBLAS_CORETYPE),
                        ("NPY_DISABLE_CPU_FEATURES", NUMPY_DISABLED_FEATURES)):
        if name not in env:
            env[name] = added[name] = value
    return added
