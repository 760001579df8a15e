"""The forward (absorbing) process, MIRROR's paired masks and the MDM and ARM per-sample losses, with
the argument checks every module of :mod:`theory.mdm_variance` uses (Jia et al., ICLR 2026, Sec. 3 and
Sec. 4.2)."""

from __future__ import annotations

from typing import Callable, Literal

import jax
import jax.numpy as jnp
import numpy as np

from theory.numerics import check_int, check_real

Pairing = Literal["single", "mirror", "multisample2"]
PAIRINGS = ("single", "mirror", "multisample2")
POSITIVE_SHARE = 0.25  # pair_stats(pairing="positive"): per-token probability that mask 2 reuses U
LossFn = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]


def check_eps(eps) -> float:
    """``eps`` as a float in (0, 1): the clamp t >= eps. Raises ValueError (eps <= 0, eps >= 1, NaN) or
    TypeError (not a real number)."""
    return check_real(eps, "eps", gt=0.0, lt=1.0)


def check_t(t, name: str = "t"):
    """Refuse a mask rate outside (0, 1] when ``t`` is concrete (inside ``jit`` it is not checked).

    Raises:
      ValueError: some entry of ``t`` is not finite or lies outside (0, 1].
    """
    if isinstance(t, jax.core.Tracer):
        return t
    a = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a <= 0) or np.any(a > 1):
        bad = a[~(np.isfinite(a) & (a > 0) & (a <= 1))].ravel()[:3]
        raise ValueError(f"{name} must lie in (0, 1] (the masking rate; clamp t >= eps > 0), got {bad.tolist()}")
    return t


def uniform_t(key, shape, eps) -> jax.Array:
    """``t ~ U[eps, 1]`` of ``shape`` (the clamped LLaDA/MDM rate). Raises ValueError for eps not in (0, 1)."""
    eps = check_eps(eps)
    return eps + (1.0 - eps) * jax.random.uniform(key, shape)


def fixed_count_mask(key, length: int, n_masked: int) -> jax.Array:
    """A uniformly random mask with exactly ``n_masked`` of ``length`` tokens masked (bool ``[length]``).

    Raises:
      ValueError: ``n_masked`` not in [1, length] (a rate that cannot be met), ``length < 1``.
    """
    length = check_int(length, "length", ge=1)
    n_masked = check_int(n_masked, "n_masked")
    if not 1 <= n_masked <= length:
        raise ValueError(f"cannot mask {n_masked} of {length} tokens: n_masked must be in [1, {length}]")
    return jnp.argsort(jax.random.uniform(key, (length,))) < n_masked


def mirror_masks(key, t, length: int) -> tuple[jax.Array, jax.Array]:
    """MIRROR's complementary pair (Sec. 4.2): one shared ``U_i ~ U[0, 1]`` per token,
    mask 1 = ``{U < t}``, mask 2 = ``{U > 1 - t}`` (i.e. ``1 - U < t``). Both have rate t; disjoint for
    t <= 1/2, exact complements at t = 1/2, overlapping on ``{1 - t < U < t}`` above.
    Returns two bool ``[length]`` masks. Raises ValueError for t outside (0, 1]."""
    check_t(t)
    u = jax.random.uniform(key, (length,))
    return u < t, u > 1.0 - t


def mdm_loss(token_logp, t, mask) -> jax.Array:
    """The MDM per-sample loss with the 1/t weight, normalised by the sequence length L:
    ``-(1 / (L t)) sum_i mask_i log p(x0_i | x_t)``.

    Args:
      token_logp: ``[..., L]`` log-probabilities the denoiser gives the true token at each position
        (only masked positions count).
      t: masking rate, scalar or broadcastable to ``[...]``, in (0, 1].
      mask: bool ``[..., L]``.
    Returns: ``[...]`` loss in nats per token.
    Raises: ValueError for t outside (0, 1] (concrete inputs).
    Source: MDM NELBO (the paper's objective; LLaDA's loss with P = L)."""
    check_t(t)
    length = token_logp.shape[-1]
    return -jnp.sum(jnp.where(mask, token_logp, 0.0), axis=-1) / (length * jnp.asarray(t))


def arm_loss(token_logp) -> jax.Array:
    """The autoregressive (teacher-forced) per-sample loss ``-(1/L) sum_i log p(x_i | x_<i)``:
    ``[..., L]`` -> ``[...]``. A deterministic function of x0, hence A = B = 0 (Sec. 3)."""
    return -jnp.mean(token_logp, axis=-1)
