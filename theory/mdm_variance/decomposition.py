"""The variance decomposition Var(l) = A + B + C by unbiased nested Monte Carlo, the flat estimate of
Var(l), and the jackknife standard errors the other estimators share (Jia et al., ICLR 2026, Sec. 3)."""

from __future__ import annotations

import math
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from theory.mdm_variance.masks import PAIRINGS, LossFn, Pairing, check_eps, uniform_t
from theory.numerics import check_int

def variance_with_se(x) -> tuple[float, float]:
    """Unbiased sample variance (ddof = 1, two-pass in float64) of ``x [n]`` and its delete-one jackknife
    standard error (closed form ``s2_{-i} = (Q - n d_i^2 / (n - 1)) / (n - 2)`` with centred d).
    Raises ValueError for fewer than 3 values or a non-finite one."""
    v = np.asarray(x, np.float64).ravel()
    n = v.size
    if n < 3 or not np.all(np.isfinite(v)):
        raise ValueError(f"variance_with_se needs >= 3 finite values, got {n}")
    d = v - v.mean()
    q = np.sum(d * d)
    s2 = q / (n - 1)
    loo = (q - n * d * d / (n - 1)) / (n - 2)
    return float(s2), float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def _jackknife_se(loo: np.ndarray) -> float:
    n = loo.shape[0]
    return float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def jackknife_se_of(loo) -> float:
    """Delete-one jackknife standard error from the leave-one-out values ``loo [n]`` of an estimator
    (``sqrt((n - 1) / n * sum (loo_i - mean)^2)``). Raises ValueError for fewer than 2 values."""
    v = np.asarray(loo, np.float64).ravel()
    if v.size < 2:
        raise ValueError(f"a jackknife needs >= 2 leave-one-out values, got {v.size}")
    return _jackknife_se(v)


def nested_estimates(losses) -> dict[str, float]:
    """Unbiased A, B, C (and total = A + B + C) from a nested sample ``losses [n, n_t, K]`` (n data
    points, n_t iid t-values per point, K iid masks per (point, t)), with jackknife SEs over points.

    ``A = mean s2_K``; ``B = mean_x s2_t(g_hat) - A / K``; ``C = s2_x(G_hat) - mean_x s2_t(g_hat) / n_t``
    (the plug-in versions overstate B and C). Keys: ``A, B, C, total, A_se, B_se, C_se,
    total_se``, the plug-in ``naive_B, naive_C, naive_total, naive_total_se`` (for comparison) and
    ``n, n_t, n_masks``.
    Raises: ValueError: n < 3, n_t < 2, K < 2 or a non-finite loss.
    """
    x = np.asarray(losses, np.float64)
    if x.ndim != 3:
        raise ValueError(f"losses must be [n, n_t, n_masks], got shape {x.shape}")
    n, nt, k = x.shape
    if n < 3 or nt < 2 or k < 2:
        raise ValueError(f"need n >= 3 data points, n_t >= 2, n_masks >= 2; got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{int(np.sum(~np.isfinite(x)))} non-finite losses")
    return nested_estimates_from_stats(nested_stats(x), nt, k)


def nested_stats(losses) -> np.ndarray:
    """Per data point sufficient statistics of a nested sample ``losses [n, n_t, K]``: ``[n, 3]`` with
    columns (mean within-(x0, t) mask variance, variance over t of the mask means, mean over t of the
    mask means), all ddof 1. :func:`nested_estimates_from_stats` turns any subset of rows into A, B, C."""
    x = np.asarray(losses, np.float64)
    g = x.mean(2)  # [n, nt]
    return np.stack([x.var(2, ddof=1).mean(1), g.var(1, ddof=1), g.mean(1)], -1)


def nested_estimates_from_stats(stats, n_t: int, n_masks: int) -> dict[str, float]:
    """:func:`nested_estimates` from the per-point statistics ``stats [n, 3]`` of :func:`nested_stats`
    (``n_t`` t-values and ``n_masks`` masks per point); also ``A_minus_BC = A - B - C`` with its joint
    jackknife SE ``A_minus_BC_se``. Raises ValueError: n < 3 or non-finite stats."""
    st = np.asarray(stats, np.float64)
    if st.ndim != 2 or st.shape[1] != 3 or st.shape[0] < 3 or not np.all(np.isfinite(st)):
        raise ValueError(f"stats must be [n >= 3, 3] and finite, got shape {st.shape}")
    n, nt, k = st.shape[0], int(n_t), int(n_masks)
    a_x, b_x, big = st[:, 0], st[:, 1], st[:, 2]
    a, bm = a_x.mean(), b_x.mean()
    d = big - big.mean()
    q = np.sum(d * d)
    s2 = q / (n - 1)
    est = {"A": a, "B": bm - a / k, "C": s2 - bm / nt}
    # delete-one jackknife over the data points
    a_l = (n * a - a_x) / (n - 1)
    b_l = (n * bm - b_x) / (n - 1)
    s2_l = (q - n * d * d / (n - 1)) / (n - 2)
    loo = {"A": a_l, "B": b_l - a_l / k, "C": s2_l - b_l / nt}
    loo["total"] = loo["A"] + loo["B"] + loo["C"]
    loo["A_minus_BC"] = loo["A"] - loo["B"] - loo["C"]
    est["naive_total"] = a + bm + s2
    loo["naive_total"] = a_l + b_l + s2_l
    est["total"] = est["A"] + est["B"] + est["C"]
    est["A_minus_BC"] = est["A"] - est["B"] - est["C"]
    out: dict[str, float] = {key: float(v) for key, v in est.items()}
    out.update({f"{key}_se": _jackknife_se(v) for key, v in loo.items()})
    out.update(naive_B=float(bm), naive_C=float(s2), n=n, n_t=nt, n_masks=k)
    return out


TSampler = Callable[[jax.Array, tuple], tuple[jax.Array, jax.Array]]


def uniform_sampler(eps: float) -> TSampler:
    """``sampler(key, shape) -> (t, weight)`` with t ~ U[eps, 1] and weight 1."""
    eps = check_eps(eps)
    return lambda key, shape: (uniform_t(key, shape, eps), jnp.ones(shape))


def nested_losses(loss_fn: LossFn, data, key, *, n_t: int, n_masks: int, eps: float = 1e-2,
                  pairing: Pairing = "single", t_sampler: TSampler | None = None, mesh=None,
                  chunk: int = 512) -> np.ndarray:
    """The nested sample behind :func:`decompose`: ``[n, n_t, n_masks]`` float64 losses.

    Data points are processed ``chunk`` at a time (the last chunk padded); chunk c draws all its
    uniforms at once from ``fold_in(key, c)`` (partitionable threefry: the same numbers on any number of
    devices), its points sharded over ``mesh`` (a 1-D mesh; None: the default device). Each point gets
    ``n_t`` rates from ``t_sampler`` (default U[eps, 1], weight 1) and each (point, t) ``n_masks`` masks
    from the forward process. The value is ``weight * loss``, or for a pairing other than ``"single"``
    ``weight * (l1 + l2) / 2`` over the pair (MIRROR shares U, :func:`mirror_masks`; MultiSample-2 draws a second U).
    """
    data = np.asarray(data)
    if data.ndim != 2:
        raise ValueError(f"data must be [n, L], got shape {data.shape}")
    n_t, n_masks = check_int(n_t, "n_t", ge=1), check_int(n_masks, "n_masks", ge=1)
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")
    sampler = uniform_sampler(eps) if t_sampler is None else t_sampler
    n, length = data.shape
    chunk = min(check_int(chunk, "chunk", ge=1), n)
    if mesh is not None:
        chunk = -(-chunk // mesh.devices.size) * mesh.devices.size
    per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (None, 0, 0)), (0, 0, 0))
    sharding = NamedSharding(mesh, P(mesh.axis_names[0])) if mesh is not None else None

    @jax.jit
    def fn(xs, c):
        kt, km, k2 = jax.random.split(jax.random.fold_in(key, c), 3)
        t, w = sampler(kt, (xs.shape[0], n_t))
        u = jax.random.uniform(km, (xs.shape[0], n_t, n_masks, length))
        if sharding is not None:
            t, w, u = (jax.lax.with_sharding_constraint(a, sharding) for a in (t, w, u))
        t4 = t[:, :, None, None]
        if pairing == "single":
            val = per(xs, t, u < t4)
        elif pairing == "mirror":
            val = 0.5 * (per(xs, t, u < t4) + per(xs, t, u > 1.0 - t4))
        else:
            u2 = jax.random.uniform(k2, u.shape)
            val = 0.5 * (per(xs, t, u < t4) + per(xs, t, u2 < t4))
        return w[:, :, None] * val

    out = []
    for c, s in enumerate(range(0, n, chunk)):
        xs = data[s:s + chunk]
        m = xs.shape[0]
        if m < chunk:
            xs = np.concatenate([xs, np.repeat(xs[-1:], chunk - m, 0)])
        xs = jax.device_put(xs, sharding) if sharding is not None else jnp.asarray(xs)
        out.append(np.asarray(fn(xs, c), np.float64)[:m])
    return np.concatenate(out, 0)


def decompose(loss_fn: LossFn, data, key, *, n_t: int, n_masks: int, eps: float = 1e-2,
              pairing: Pairing = "single", t_sampler: TSampler | None = None, mesh=None,
              chunk: int = 256) -> dict[str, float]:
    """Unbiased nested Monte Carlo estimates of the decomposition ``Var(l) = A + B + C`` (Sec. 3).

    ``A = E[Var(l | x0, t)]`` (masking-pattern noise), ``B = E_x0[Var_t E(l | x0, t)]`` (masking-rate
    noise), ``C = Var_x0 E(l | x0)`` (data noise), with x0 uniform over the rows of ``data``, t ~ U[eps, 1]
    and each token masked independently with probability t.

    Args:
      loss_fn: ``loss_fn(x0 [L] int, t scalar, mask [L] bool) -> scalar`` loss (traceable).
      data: ``[n, L]`` integer sequences (n >= 3).
      key: a ``jax.random.key``.
      n_t: iid t-values per sequence (>= 2); n_masks: masks per (sequence, t) (>= 2).
      eps: the clamp t >= eps, in (0, 1).
      pairing: ``"single"`` (one mask), ``"mirror"`` or ``"multisample2"`` (the loss is the pair mean).
      t_sampler: optional ``(key, shape) -> (t, weight)`` replacing U[eps, 1] (importance sampling: the
        loss is multiplied by the weight).
      mesh: optional 1-D device mesh; the sequences are sharded over it.
    Returns:
      dict with ``A, B, C, total`` and their standard errors ``A_se, B_se, C_se, total_se`` (delete-one
      jackknife over the sequences), the plug-in ``naive_B, naive_C``, ``n, n_t, n_masks``, and
      ``stats [n, 3]``, the per-sequence statistics (:func:`nested_stats`) they are computed from.
    Raises:
      ValueError: eps not in (0, 1), ``n < 3``, ``n_t < 2``, ``n_masks < 2``, data not 2-D, an unknown
        pairing, or a non-finite loss.
    """
    check_eps(eps)
    check_int(n_t, "n_t", ge=2), check_int(n_masks, "n_masks", ge=2)
    losses = nested_losses(loss_fn, data, key, n_t=n_t, n_masks=n_masks, eps=eps, pairing=pairing,
                           t_sampler=t_sampler, mesh=mesh, chunk=chunk)
    return {**nested_estimates(losses), "stats": nested_stats(losses)}


def direct_variance(loss_fn: LossFn, data, key, *, eps: float = 1e-2, pairing: Pairing = "single",
                    t_sampler: TSampler | None = None, mesh=None) -> dict[str, float]:
    """The flat estimate of Var(l): one iid (t, mask) per row of ``data [n, L]``; returns ``var``,
    ``var_se`` (jackknife), ``mean``, ``mean_se`` and the draws ``losses [n]``. Raises ValueError as
    :func:`variance_with_se`."""
    x = nested_losses(loss_fn, data, key, n_t=1, n_masks=1, eps=eps, pairing=pairing, t_sampler=t_sampler,
                      mesh=mesh)[:, 0, 0]
    var, se = variance_with_se(x)
    return {"var": var, "var_se": se, "mean": float(x.mean()), "mean_se": float(x.std(ddof=1) / math.sqrt(x.size)),
            "losses": x}


def trace_nested_sums(values) -> np.ndarray:
    """Additive sufficient statistics of a nested sample of vectors ``values [n, n_t, K, D]`` (a gradient
    per draw): ``[D, 4]`` sums over the n data points of the per-point, per-coordinate within-(x0, t) mask
    variance, variance over t of the mask means, mean over t of the mask means, and its square (ddof 1).
    Sums of disjoint sets of points add, so blocks of points can be left out. Raises ValueError for a
    non-finite value or a shape other than ``[n, n_t >= 2, K >= 2, D]``."""
    x = np.asarray(values, np.float64)
    if x.ndim != 4 or x.shape[1] < 2 or x.shape[2] < 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"values must be [n, n_t >= 2, K >= 2, D] and finite, got shape {x.shape}")
    g = x.mean(2)  # [n, n_t, D]
    big = g.mean(1)
    return np.stack([x.var(2, ddof=1).mean(1).sum(0), g.var(1, ddof=1).sum(0), big.sum(0), (big**2).sum(0)], -1)


def trace_estimates_from_sums(sums, n: int, n_t: int, n_masks: int) -> dict[str, float]:
    """The decomposition of the trace of the covariance, ``tr Cov = A + B + C`` summed over coordinates,
    from :func:`trace_nested_sums` ``sums [D, 4]`` of ``n`` data points (the unbiased per-coordinate
    estimators of :func:`nested_estimates`: ``A = mean s2_K``, ``B = mean s2_t - A / K``,
    ``C = s2_x(G) - mean s2_t / n_t``). Returns ``A, B, C, total, A_minus_BC``. Raises ValueError: n < 3."""
    s = np.asarray(sums, np.float64)
    n = check_int(n, "n", ge=3)
    a, bm = s[:, 0] / n, s[:, 1] / n
    s2 = (s[:, 3] - s[:, 2] ** 2 / n) / (n - 1)
    est = {"A": float(a.sum()), "B": float((bm - a / n_masks).sum()), "C": float((s2 - bm / n_t).sum())}
    est["total"] = est["A"] + est["B"] + est["C"]
    est["A_minus_BC"] = est["A"] - est["B"] - est["C"]
    return est


def trace_direct_sums(values) -> np.ndarray:
    """``[D + 1]`` additive statistics of flat draws ``values [n, D]``: the coordinate sums and the sum of
    squared norms (the trace of the sample covariance is :func:`trace_variance_from_sums`)."""
    x = np.asarray(values, np.float64)
    if x.ndim != 2 or not np.all(np.isfinite(x)):
        raise ValueError(f"values must be [n, D] and finite, got shape {x.shape}")
    return np.r_[x.sum(0), (x**2).sum()]


def trace_variance_from_sums(sums, n: int) -> float:
    """``sum_i ||x_i - mean||^2 / (n - 1)`` (the trace of the ddof-1 sample covariance) from
    :func:`trace_direct_sums` of ``n`` draws. Raises ValueError: n < 2."""
    s = np.asarray(sums, np.float64)
    n = check_int(n, "n", ge=2)
    return float((s[-1] - np.sum(s[:-1] ** 2) / n) / (n - 1))
