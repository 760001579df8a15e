"""StraTS (stratified masking rates), the masking-rate noise of a batch-mean loss, and the bin-wise EMA
control variate (Jia et al., ICLR 2026, Sec. 4.3)."""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from theory.mdm_variance.decomposition import _jackknife_se
from theory.mdm_variance.masks import LossFn, check_eps, uniform_t
from theory.numerics import check_int, check_real

def stratified_t(key, n: int, eps: float, n_strata: int | None = None) -> jax.Array:
    """StraTS: ``n`` rates on [eps, 1] from ``k`` equal-width strata (``k = floor(sqrt(n))`` by default, as
    the released code), each stratum getting ``n // k`` or one more uniform draws, then shuffled.
    Each t is marginally U[eps, 1] when k divides n. Raises ValueError for eps, n < 1 or k not in [1, n].
    Source: Sec. 4.3 (StraTS)."""
    eps = check_eps(eps)
    n = check_int(n, "n", ge=1)
    k = math.isqrt(n) if n_strata is None else check_int(n_strata, "n_strata", ge=1, le=n)
    stratum = jnp.asarray(np.arange(n) * k // n)  # counts differ by at most one
    ku, kp = jax.random.split(key)
    t = eps + (1 - eps) * (stratum + jax.random.uniform(ku, (n,))) / k
    return jax.random.permutation(kp, t)


def batch_t_noise(loss_fn: LossFn, batch, key, *, n_rep: int, n_masks: int, eps: float,
                  stratified: bool, n_strata: int | None = None, shared: bool = False) -> dict[str, float]:
    """Masking-rate noise of a batch-mean loss at a fixed batch ``[n, L]``: over ``n_rep`` replicates, draw
    one t per sequence (iid U[eps, 1] or :func:`stratified_t`; with ``shared``, one U[eps, 1] draw for the
    whole batch: each t still marginally uniform, but positively dependent, the opposite of
    stratification) and ``n_masks`` masks per (sequence, t).
    With ``M_r`` the replicate's batch mean of the per-sequence mask means and ``s2_ri`` the within-mask
    variances, ``B_batch = s2_r(M) - mean(s2) / (K n)`` estimates ``Var_t(mean_i g(x_i, t_i))`` without
    bias; ``n B_batch`` is on the scale of B. Returns ``B_batch, B_batch_se`` (jackknife over replicates)
    and ``nB, nB_se``."""
    batch = jnp.asarray(batch)
    n, length = batch.shape
    n_rep, k = check_int(n_rep, "n_rep", ge=3), check_int(n_masks, "n_masks", ge=2)
    check_eps(eps)

    @jax.jit
    def fn():
        kt, km = jax.random.split(key)
        if shared:
            t = jnp.broadcast_to(uniform_t(kt, (n_rep, 1), eps), (n_rep, n))
        elif stratified:
            t = jax.vmap(lambda kk: stratified_t(kk, n, eps, n_strata))(jax.random.split(kt, n_rep))
        else:
            t = uniform_t(kt, (n_rep, n), eps)
        u = jax.random.uniform(km, (n_rep, n, k, length))
        per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (0, 0, 0)), (None, 0, 0))
        return per(batch, t, u < t[..., None, None])  # [R, n, K]

    ls = np.asarray(fn(), np.float64)
    m = ls.mean(2).mean(1)
    a = ls.var(2, ddof=1).mean(1) / (k * n)  # [R]
    d = m - m.mean()
    q = np.sum(d * d)
    b = q / (n_rep - 1) - a.mean()
    loo = (q - n_rep * d * d / (n_rep - 1)) / (n_rep - 2) - (a.sum() - a) / (n_rep - 1)
    se = _jackknife_se(loo)
    return {"B_batch": float(b), "B_batch_se": se, "nB": float(n * b), "nB_se": n * se}


class EMAState(NamedTuple):
    """Bin-wise EMA baseline: ``mean [m]`` (EMA of the loss in each t-bin) and ``seen [m]`` (bool)."""

    mean: jax.Array
    seen: jax.Array


def ema_init(n_bins: int) -> EMAState:
    """An empty bin-wise baseline with ``n_bins`` equal-width bins of t (Sec. 4.3, EMA)."""
    n_bins = check_int(n_bins, "n_bins", ge=1)
    return EMAState(jnp.zeros(n_bins), jnp.zeros(n_bins, bool))


def ema_bin(t, eps: float, n_bins: int) -> jax.Array:
    """Bin index in [0, n_bins) of rates ``t`` on [eps, 1] (equal-width bins)."""
    return jnp.clip(((t - eps) / (1 - eps) * n_bins).astype(jnp.int32), 0, n_bins - 1)


def ema_update(state: EMAState, t, loss, *, eps: float, rate: float) -> EMAState:
    """Fold a batch of (t, loss) into the baseline: per bin, ``b <- (1 - rate) b + rate * batch mean``
    (a bin's first batch sets it). The losses are detached. Raises ValueError for rate not in (0, 1]."""
    rate = check_real(rate, "rate", gt=0, le=1)
    nb = state.mean.shape[0]
    j = ema_bin(t, eps, nb)
    loss = jax.lax.stop_gradient(loss)
    s = jax.ops.segment_sum(loss, j, nb)
    c = jax.ops.segment_sum(jnp.ones_like(loss), j, nb)
    bm = s / jnp.maximum(c, 1)
    upd = jnp.where(state.seen, (1 - rate) * state.mean + rate * bm, bm)
    return EMAState(jnp.where(c > 0, upd, state.mean), state.seen | (c > 0))


def ema_adjusted_loss(loss, t, state: EMAState, *, eps: float, coef=1.0) -> jax.Array:
    """The control-variate loss ``l - c_j * stop_gradient(b_j)`` for t in bin j (0 baseline for unseen
    bins). The baseline is detached, so the gradient is exactly that of ``l``; only the loss value's
    variance changes (Sec. 4.3 [code]). ``coef`` is c_j (a scalar or ``[m]``; 1 by default)."""
    j = ema_bin(t, eps, state.mean.shape[0])
    b = jax.lax.stop_gradient(jnp.where(state.seen, state.mean, 0.0) * coef)
    return loss - b[j]
