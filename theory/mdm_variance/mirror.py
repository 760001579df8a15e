"""MIRROR: the closed-form context-free variance ratio and pair correlation, and the measured
within-sequence variance of one mask's loss against the pair mean (Jia et al., ICLR 2026, Sec. 4.2)."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from theory.mdm_variance.masks import PAIRINGS, POSITIVE_SHARE, LossFn, Pairing, check_t
from theory.numerics import check_int, check_real

def mirror_ratio_context_free(t) -> float:
    """Closed-form ``Var_MIRROR / Var_single`` of the pair-mean loss at rate t when each token's loss does
    not depend on the mask (context-free denoiser): ``(1 - 2t) / (2 (1 - t))`` for t <= 1/2 and
    ``(2t - 1) / (2t)`` above; at most 1/2, exactly 0 at t = 1/2.

    Derivation: per token ``Cov(1[U < t], 1[U > 1 - t]) = -min(t, 1 - t)^2`` against ``Var = t (1 - t)``.
    Source: Sec. 4.2 (exact context-free case). Raises ValueError for t outside (0, 1]
    (at t = 1 the limit 1/2 is returned)."""
    t = check_real(t, "t", gt=0.0, le=1.0)
    return (1 - 2 * t) / (2 * (1 - t)) if t <= 0.5 else (2 * t - 1) / (2 * t)


def mirror_rho_context_free(t) -> float:
    """Closed-form pair correlation ``-min(t, 1-t) / max(t, 1-t)`` of MIRROR in the context-free model
    (t in (0, 1); raises ValueError otherwise)."""
    t = check_real(t, "t", gt=0.0, lt=1.0)
    return -min(t, 1 - t) / max(t, 1 - t)


def pair_stats(loss_fn: LossFn, data, key, t, *, n_masks: int, pairing: Pairing = "mirror",
               mesh=None) -> dict[str, Any]:
    """Within-sequence variance of one mask's loss and of the pair mean at fixed rates ``t``.

    For each rate (``t`` a scalar or a ``[n_rates]`` grid, each in (0, 1]) and each row of
    ``data [n, L]`` draw ``n_masks`` pairs (l1, l2) by ``pairing`` (one of :data:`PAIRINGS`, or
    ``"positive"``: the second mask reuses each token's U with probability :data:`POSITIVE_SHARE`, else an
    independent one, a positively correlated pair whose context-free ratio is (1 + share) / 2, the case
    just outside MIRROR's rho <= 0); per row compute the ddof-1 variances
    of l1 and l2, their covariance and the variance of (l1 + l2) / 2.
    Returns (floats for a scalar t, ``[n_rates]`` arrays for a grid): ``A_single`` (mean of the two
    one-mask variances), ``A_pair`` (pair-mean variance), ``cov``, ``ratio = A_pair / A_single``,
    ``rho = cov / A_single``, and jackknife SEs over rows ``A_single_se, A_pair_se, ratio_se, rho_se``
    (:func:`pair_summary`), and ``rows [n_rates, n, 3]``, the per-row values they are computed from.
    Raises: ValueError for a rate outside (0, 1], n < 3 or n_masks < 2.
    Source: Sec. 4.2 (Var(pair mean) = sigma^2 (1 + rho) / 2).
    """
    check_t(t)
    scalar = np.ndim(t) == 0
    ts = jnp.atleast_1d(jnp.asarray(t, jnp.result_type(float)))
    data = np.asarray(data)
    n_masks = check_int(n_masks, "n_masks", ge=2)
    n, length = data.shape
    if n < 3:
        raise ValueError("pair_stats needs at least 3 sequences")
    if pairing not in PAIRINGS + ("positive",):
        raise ValueError(f"pairing must be one of {PAIRINGS + ('positive',)}, got {pairing!r}")
    per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (0, None, 0)), (None, 0, 0))

    @jax.jit
    def fn(xs):
        k1, k2 = jax.random.split(key)
        u = jax.random.uniform(k1, (ts.shape[0], xs.shape[0], n_masks, length))
        t4 = ts[:, None, None, None]
        m1 = u < t4
        if pairing == "positive":  # each token reuses its U with probability POSITIVE_SHARE
            ka, kb = jax.random.split(k2)
            u2 = jnp.where(jax.random.uniform(ka, u.shape) < POSITIVE_SHARE, u, jax.random.uniform(kb, u.shape))
            m2 = u2 < t4
        else:
            m2 = u > 1.0 - t4 if pairing == "mirror" else (
                jax.random.uniform(k2, u.shape) < t4 if pairing == "multisample2" else m1)
        return jnp.stack([per(xs, ts, m1), per(xs, ts, m2)], -1)  # [R, n, K, 2]

    ll = np.asarray(fn(jnp.asarray(data)), np.float64)
    d = ll - ll.mean(2, keepdims=True)
    v1, v2 = (d[..., 0] ** 2).sum(2) / (n_masks - 1), (d[..., 1] ** 2).sum(2) / (n_masks - 1)
    c = (d[..., 0] * d[..., 1]).sum(2) / (n_masks - 1)
    rows = np.stack([0.5 * (v1 + v2), ll.mean(3).var(2, ddof=1), c], -1)  # [R, n, 3]
    out = pair_summary(rows)
    out["rows"] = rows
    return {k: (float(v[0]) if scalar else np.asarray(v)) if k != "rows" else v for k, v in out.items()}


def pair_summary(rows) -> dict[str, np.ndarray]:
    """The pair statistics of :func:`pair_stats` from its per-row values ``rows [R, n, 3]`` (one-mask
    variance, pair-mean variance, covariance of the two masks' losses; n >= 3 rows per rate): ``A_single,
    A_pair, cov, ratio, rho`` and jackknife SEs over rows ``A_single_se, A_pair_se, ratio_se, rho_se``
    (each ``[R]``). Any subset of rows gives the same estimates on fewer sequences."""
    rows = np.asarray(rows, np.float64)
    n = rows.shape[1]
    if rows.ndim != 3 or rows.shape[2] != 3 or n < 3:
        raise ValueError(f"rows must be [R, n >= 3, 3], got shape {rows.shape}")
    vs, vp, c = rows[..., 0], rows[..., 1], rows[..., 2]

    def loo(v):
        return (v.sum(1, keepdims=True) - v) / (n - 1)

    def jk(v):
        return np.sqrt((n - 1) / n * np.sum((v - v.mean(1, keepdims=True)) ** 2, 1))

    out = {"A_single": vs.mean(1), "A_pair": vp.mean(1), "cov": c.mean(1)}
    out.update(ratio=out["A_pair"] / out["A_single"], rho=out["cov"] / out["A_single"],
               A_single_se=jk(loo(vs)), A_pair_se=jk(loo(vp)), ratio_se=jk(loo(vp) / loo(vs)),
               rho_se=jk(loo(c) / loo(vs)))
    return out
