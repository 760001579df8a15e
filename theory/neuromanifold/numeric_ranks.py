"""Numeric (float64 JAX) Jacobian ranks read at the largest singular-value gap, one architecture at a time or
many MLPs in one padded, vmapped batch."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np

from theory import numerics
from theory.neuromanifold.activations import _float_coeffs, _jsigma
from theory.neuromanifold.architectures import (
    MAX_JACOBIAN_ENTRIES,
    MAX_POINTS,
    _unflatten_mlp,
    check_numeric_size,
    check_widths,
    mlp_num_params,
)
from theory.neuromanifold.networks import network_apply
from theory.numerics import check_int, check_limit, check_real, gap_rank


def _equilibrated_svals(J: np.ndarray, sweeps: int = 3) -> np.ndarray:
    """Singular values after scaling rows and columns to unit norm (a few alternating sweeps; scaling
    by invertible diagonals keeps the rank and evens out points where ``|f|`` is large or small)."""
    J = np.asarray(J)
    J = J[:, np.linalg.norm(J, axis=0) > 0]
    J = J[np.linalg.norm(J, axis=1) > 0]
    for _ in range(sweeps):
        J = J / np.linalg.norm(J, axis=1, keepdims=True)
        J = J / np.linalg.norm(J, axis=0, keepdims=True)
    return np.linalg.svd(J, compute_uv=False) if J.size else np.zeros(0)


@dataclass(frozen=True)
class NumericRankReport:
    """Numeric generic rank: the maximum of ``ranks``, one per random point, each read by
    :func:`theory.numerics.gap_rank` at the gap whose ``log10`` is in ``gaps`` (``inf`` when the next
    singular value is exactly 0)."""

    rank: int
    ranks: tuple[int, ...]
    gaps: tuple[float, ...]


def _read_rank(sv: np.ndarray) -> tuple[int, float]:
    r, gap = gap_rank(sv)
    return r, float(np.log10(gap))


def _check_points(n_points) -> int:
    n_points = check_int(n_points, "n_points", ge=1)
    check_limit(n_points, MAX_POINTS, "MAX_POINTS", "n_points")
    return n_points


def numeric_rank(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs, n_points: int = 3,
                 seed: int = 0, n_eval: int | None = None, scale: float = 1.0) -> NumericRankReport:
    """Generic Jacobian rank in float64 JAX (a local :func:`theory.numerics.float64` scope, whatever the
    process-wide setting).

    At each of ``n_points`` points: parameters ``N(0, scale^2)``, ``n_eval`` (default ``2N + 8``) inputs
    uniform in ``[-1, 1]``; Jacobian of ``theta -> f_theta(X)`` by ``jax.jacfwd`` (``[d_L n_eval, N]``),
    rows and columns equilibrated, rank and gap by :func:`theory.numerics.gap_rank`. Returns the maximum
    rank over points, with every point's rank and gap.

    Raises:
      TypeError / ValueError: invalid architecture, activation, ``n_points`` (``1..MAX_POINTS``),
        ``n_eval`` or ``scale`` (finite, > 0); ValueError naming ``MAX_NUMERIC_PARAMS``,
        ``MAX_INPUT_SIZE``, ``MAX_EVAL_POINTS`` or ``MAX_JACOBIAN_ENTRIES`` for sizes too large.
    Source: Thm 4.1 / Thm 4.4 (the dimension); a numeric cross-check of the exact rank.
    """
    n_points = _check_points(n_points)
    scale = check_real(scale, "scale", gt=0)
    _, n, _ = check_numeric_size(kind, shape)
    m = 2 * n + 8 if n_eval is None else check_int(n_eval, "n_eval", ge=1)
    _, n, d0 = check_numeric_size(kind, shape, m)
    f = network_apply(kind, shape, activation_coeffs)
    rng = np.random.default_rng(seed)
    ranks, gaps = [], []
    with numerics.float64():
        jac = jax.jit(lambda th, X: jax.jacfwd(lambda t: f(t, X).reshape(-1))(th))
        for _ in range(n_points):
            theta = jnp.asarray(rng.normal(size=n) * scale)
            X = jnp.asarray(rng.uniform(-1, 1, size=(m, d0)))
            r, g = _read_rank(_equilibrated_svals(np.asarray(jac(theta, X))))
            ranks.append(r)
            gaps.append(g)
    return NumericRankReport(max(ranks), tuple(ranks), tuple(gaps))


@functools.lru_cache(maxsize=64)
def _masked_mlp_jacobian_fn(depth: int, width: int, cs: tuple[float, ...]):
    """Compiled, vmapped Jacobian of padded MLPs (all widths ``width``) with masked neurons."""
    full = (width,) * (depth + 1)

    def f(theta, X, pm, hm):
        Ws = _unflatten_mlp(theta * pm, full)
        h = X * hm[0]
        for l, W in enumerate(Ws):
            h = h @ W.T
            if l < len(Ws) - 1:
                h = _jsigma(cs, h) * hm[l + 1]
        return h.T.reshape(-1)  # rows: output-major, then points

    return jax.jit(jax.vmap(jax.jacfwd(f)))


def mlp_numeric_ranks(widths_list: Sequence[Sequence[int]], activation_coeffs, n_points: int = 3,
                      seed: int = 0) -> list[NumericRankReport]:
    """:func:`numeric_rank` for many MLPs at once: each depth is padded to width ``max d`` with masked
    neurons (a masked neuron outputs 0 and its weights get no gradient), so one compiled, vmapped
    Jacobian serves every architecture of that depth. Masked rows/columns are dropped before the SVD.
    float64 in a local :func:`theory.numerics.float64` scope.

    Returns:
      One :class:`NumericRankReport` per architecture, in order.
    Raises:
      TypeError / ValueError: invalid widths, activation or ``n_points``; ValueError naming
        ``MAX_NUMERIC_PARAMS`` (one architecture) or ``MAX_JACOBIAN_ENTRIES`` (one padded batch).
    """
    cs = _float_coeffs(activation_coeffs)
    n_points = _check_points(n_points)
    ws = [check_widths(w) for w in widths_list]
    for w in ws:
        check_numeric_size("mlp", w, 2 * mlp_num_params(w) + 8)
    out: list[NumericRankReport | None] = [None] * len(ws)
    rng = np.random.default_rng(seed)
    for depth in sorted({len(w) - 1 for w in ws}):
        idx = [i for i, w in enumerate(ws) if len(w) - 1 == depth]
        width = max(max(ws[i]) for i in idx)
        full = (width,) * (depth + 1)
        n_full = mlp_num_params(full)
        m = 2 * max(mlp_num_params(ws[i]) for i in idx) + 8
        check_limit(len(idx) * width * m * n_full, MAX_JACOBIAN_ENTRIES, "MAX_JACOBIAN_ENTRIES",
                    f"the padded Jacobian batch of the depth-{depth} MLPs (architectures * rows * columns)")
        pm, hm, keep_cols, keep_rows = [], [], [], []
        for i in idx:
            w = ws[i]
            masks = [np.outer(np.arange(width) < b, np.arange(width) < a).astype(float).ravel()
                     for a, b in zip(w[:-1], w[1:])]
            pm.append(np.concatenate(masks))
            hm.append(np.array([np.arange(width) < d for d in w[:-1]], dtype=float))
            keep_cols.append(pm[-1] > 0)
            m_arch = min(m, 2 * mlp_num_params(w) + 8)
            keep_rows.append(np.outer(np.arange(width) < w[-1], np.arange(m) < m_arch).ravel())
        pm, hm = np.array(pm), np.array(hm)
        ranks = {i: [] for i in idx}
        gaps = {i: [] for i in idx}
        for _ in range(n_points):
            thetas = rng.normal(size=(len(idx), n_full))
            Xs = rng.uniform(-1, 1, size=(len(idx), m, width))
            with numerics.float64():
                J = np.asarray(_masked_mlp_jacobian_fn(depth, width, cs)(
                    jnp.asarray(thetas), jnp.asarray(Xs), jnp.asarray(pm), jnp.asarray(hm)))
            for b, i in enumerate(idx):
                r, g = _read_rank(_equilibrated_svals(J[b][keep_rows[b]][:, keep_cols[b]]))
                ranks[i].append(r)
                gaps[i].append(g)
        for i in idx:
            out[i] = NumericRankReport(max(ranks[i]), tuple(ranks[i]), tuple(gaps[i]))
    return out  # type: ignore[return-value]
