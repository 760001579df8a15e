"""Exact enumeration of the 2^L masks of a sequence: E[l | x0] in closed form over t, the per-mask-size
sums that make E[l | x0, t] and E[l^2 | x0, t] exact polynomials in t, and the Gauss-Legendre rule in log t
that integrates them (Jia et al., ICLR 2026, Sec. 3-4.1)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import scipy.special

from theory.mdm_variance.masks import check_eps, check_t
from theory.numerics import check_int, check_limit, check_real

MAX_EXACT_LEN = 20  # exact mask enumeration costs 2^L loss terms per sequence


def exact_mask_weights(length: int, eps: float = 0.0) -> np.ndarray:
    """``w_k = E_t[t^(k-1) (1-t)^(L-k)]`` with ``t ~ U[eps, 1]``, k = 0..L (``w_0 = 0``): the weight of a
    given mask with k masked tokens in ``E_{t, mask}[l | x0]`` (the 1/t factor included), float64.
    At eps = 0, ``w_k = B(k, L - k + 1)``. Raises ValueError for eps not in [0, 1)."""
    length = check_int(length, "length", ge=1)
    eps = check_real(eps, "eps", ge=0.0, lt=1.0)
    k = np.arange(1, length + 1)
    a, b = k.astype(float), (length - k + 1).astype(float)
    w = np.exp(scipy.special.betaln(a, b)) * scipy.special.betaincc(a, b, eps) / (1.0 - eps)
    return np.r_[0.0, w]


def exact_mean_loss(token_logp_fn, x0, eps: float = 0.0) -> jax.Array:
    """``E_{t ~ U[eps, 1], mask}[l | x0]`` exactly, by enumerating all ``2^L`` masks and integrating t in
    closed form (:func:`exact_mask_weights`).

    At eps = 0 this is the continuous-time NELBO, equal to ``-log p(x0) / L`` for the exact denoiser
    (any-order autoregression; Sec. 3, oracle corollary).

    Args: token_logp_fn(x0, mask) -> ``[L]`` log-probabilities; x0 int ``[L]`` (L <= 20); eps in [0, 1).
    Returns: scalar.
    Raises: ValueError: L above :data:`MAX_EXACT_LEN`.
    """
    length = x0.shape[-1]
    check_limit(length, MAX_EXACT_LEN, "MAX_EXACT_LEN", "the sequence length for exact enumeration")
    w = jnp.asarray(exact_mask_weights(length, eps))
    codes = jnp.arange(2**length, dtype=jnp.int32)
    masks = ((codes[:, None] >> jnp.arange(length)) & 1).astype(bool)  # [2^L, L]
    s = jax.vmap(lambda m: -jnp.sum(jnp.where(m, token_logp_fn(x0, m), 0.0)))(masks)
    return jnp.sum(s * w[masks.sum(1)]) / length


def exact_mask_sums(token_logp_fn, x0) -> jax.Array:
    """Per mask size k = 0..L, the sums over all masks with k masked tokens of ``s(m)`` and ``s(m)^2``,
    ``s(m) = -sum_{i in m} log p(x0_i | x0 outside m)`` (the unweighted masked log-loss).

    They make E[l | x0, t] and E[l^2 | x0, t] exact polynomials in t (:func:`exact_t_moments`), since a
    given mask of size k has probability ``t^k (1 - t)^(L - k)`` and ``l = s(m) / (L t)``.

    Args: token_logp_fn(x0, mask) -> ``[L]`` log-probabilities; x0 int ``[L]`` (L <= 20).
    Returns: ``[2, L + 1]`` float (row 0: sums of s, row 1: sums of s^2; column k = mask size).
    Raises: ValueError: L above :data:`MAX_EXACT_LEN`.
    Source: Sec. 3-4.1 (the forward process; the moments P-POTS is built on).
    """
    length = x0.shape[-1]
    check_limit(length, MAX_EXACT_LEN, "MAX_EXACT_LEN", "the sequence length for exact enumeration")
    codes = jnp.arange(2**length, dtype=jnp.int32)
    masks = ((codes[:, None] >> jnp.arange(length)) & 1).astype(bool)  # [2^L, L]
    s = jax.vmap(lambda m: -jnp.sum(jnp.where(m, token_logp_fn(x0, m), 0.0)))(masks)
    k = masks.sum(1)
    return jnp.stack([jax.ops.segment_sum(s, k, length + 1), jax.ops.segment_sum(s * s, k, length + 1)])


def exact_t_moments(sums, t) -> tuple[np.ndarray, np.ndarray]:
    """``g(x0, t) = E[l | x0, t]`` and ``m2(x0, t) = E[l^2 | x0, t]`` of the MDM loss at rates ``t``,
    exactly, from :func:`exact_mask_sums`:
    ``g = sum_k S1_k t^(k-1) (1-t)^(L-k) / L``, ``m2 = sum_k S2_k t^(k-2) (1-t)^(L-k) / L^2``.

    Args: sums ``[..., 2, L + 1]``; t ``[Q]`` in (0, 1].
    Returns: ``(g, m2)``, each ``[..., Q]`` float64 (nats per token and its square).
    Raises: ValueError for t outside (0, 1] or malformed sums.
    """
    s = np.asarray(sums, np.float64)
    if s.ndim < 2 or s.shape[-2] != 2 or s.shape[-1] < 2:
        raise ValueError(f"sums must be [..., 2, L + 1] with L >= 1, got shape {s.shape}")
    t = np.asarray(check_t(np.asarray(t, np.float64)), np.float64).ravel()
    length = s.shape[-1] - 1
    k = np.arange(1, length + 1)[:, None]
    base = (1.0 - t[None]) ** (length - k) * t[None] ** (k - 1)  # [L, Q]: t^(k-1) (1-t)^(L-k), k >= 1
    g = s[..., 0, 1:] @ base / length
    m2 = s[..., 1, 1:] @ (base / t[None]) / length**2
    return g, m2


def t_quadrature(eps: float, breaks=(), *, n_panels: int = 48, order: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights for ``int_eps^1 f(t) dt``: panels equal in log t (``n_panels``
    over [eps, 1], refined at the points ``breaks``, e.g. bin edges where a density jumps), ``order``
    nodes per panel in s = log t (``dt = t ds``). Integrands like ``t^(k-1) (1-t)^(L-k)`` and
    ``sqrt(m2)`` are analytic in s, so the rule converges exponentially (tested against the closed Beta
    integrals). Returns ``(t [Q], w [Q])``. Raises ValueError for eps not in (0, 1), a break outside
    [eps, 1], n_panels or order < 1."""
    eps = check_eps(eps)
    n_panels, order = check_int(n_panels, "n_panels", ge=1), check_int(order, "order", ge=1)
    b = np.asarray(breaks, np.float64).ravel()
    if np.any(~np.isfinite(b)) or np.any(b < eps * (1 - 1e-12)) or np.any(b > 1 + 1e-12):
        raise ValueError(f"breaks must lie in [eps, 1] = [{eps:g}, 1]")
    edges = np.unique(np.r_[np.geomspace(eps, 1.0, n_panels + 1), np.clip(b, eps, 1.0)])
    x, w = np.polynomial.legendre.leggauss(order)
    lo, hi = np.log(edges[:-1])[:, None], np.log(edges[1:])[:, None]
    s = 0.5 * (lo + hi) + 0.5 * (hi - lo) * x[None]
    t = np.exp(s)
    return t.ravel(), (0.5 * (hi - lo) * w[None] * t).ravel()
