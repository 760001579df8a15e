"""Benchmarks, one module per paper: ``benchmarks/<paper>.py`` defines ``run() -> list[dict]``.

Each row compares two ways of computing the same thing, timed side by side in one run:
``{"benchmark", "case", "baseline", "baseline_s", "ours", "ours_s", "ratio", "check"}`` where ``ratio`` is
``baseline_s / ours_s`` (above 1: ours is faster) and ``check`` says the outputs agree (e.g. same rank).
"""

import sims  # noqa: F401  (first: pins the host kernels before NumPy loads, see sims.portable)
