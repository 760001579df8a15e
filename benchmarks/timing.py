"""The one benchmark timer: warm up (compilation, caches), then the best of ``repeat`` timed calls, each
blocked until its result is ready (JAX dispatch is asynchronous)."""

from __future__ import annotations

import time
from typing import Any, Callable

import jax


def timed(fn: Callable[[], Any], repeat: int = 3, warmup: int = 1) -> tuple[Any, float]:
    """Run ``fn()`` ``warmup`` times untimed, then ``repeat`` times timed.

    Returns:
      ``(result of the last call, best wall time in seconds)``; every call's output passes through
      ``jax.block_until_ready`` before the clock stops.
    Raises:
      ValueError: ``repeat < 1`` or ``warmup < 0``.
    """
    if repeat < 1 or warmup < 0:
        raise ValueError(f"repeat must be >= 1 and warmup >= 0, got {repeat}, {warmup}")
    out = None
    for _ in range(warmup):
        out = jax.block_until_ready(fn())
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = jax.block_until_ready(fn())
        best = min(best, time.perf_counter() - t0)
    return out, best
