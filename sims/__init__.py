"""Simulations behind the figures, one module per paper, sharing the runtime in ``sims.runtime``.

Run one: ``python -m sims.<paper> --config paper_configs/<name>.yaml [--scale quick|paper]``.

Importing ``sims`` pins NumPy's and OpenBLAS's kernels to their AVX2 paths (:mod:`sims.portable`; on x86-64
Linux with AVX2 and FMA, unless ``PBE_NATIVE_KERNELS`` is set), so that host numbers do not depend on whether
the CPU has AVX-512; it must come before NumPy is imported, which is why ``figures``, ``claims``,
``benchmarks`` and the tests import it first.
"""

from sims import portable as _portable

_portable.pin_host_kernels()
