"""Shared pieces of the mdm_variance claims: test constants and helpers."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger

Z = 3.0  # standard errors for every Monte Carlo decision
CONSISTENT = (f"|a - b| / combined SE <= {Z:g} (consistency at {Z:g} standard errors; jackknife SEs over "
              "sequences)")


def _z(a, b, se_a, se_b) -> float:
    se = math.hypot(float(se_a), float(se_b))
    return abs(float(a) - float(b)) / se if se > 0 else (0.0 if a == b else math.inf)


def _consistent(name: str, a, b, se_a, se_b) -> ledger.Decision:
    """The two estimates agree within ``Z`` combined standard errors (statistic: the z value)."""
    z = _z(a, b, se_a, se_b)
    return ledger.check(name, z <= Z, z, Z, CONSISTENT)


def _setting(meta) -> str:
    return f"{meta.get('config_path', 'paper_configs')} at {meta.get('scale', '?')} scale, seed {meta.get('seed')}."


def _pool(x, axis: int) -> np.ndarray:
    """Blocks ``[G, ..., n_b, ...]`` (block axis 0, draws at ``axis``) pooled to ``[..., G * n_b, ...]``."""
    x = np.moveaxis(np.asarray(x), 0, axis - 1)
    return x.reshape(*x.shape[:axis - 1], -1, *x.shape[axis + 1:])
