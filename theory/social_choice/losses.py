"""The comparison losses of the loss-based rules (JAX; ``m`` is the margin of the preferred candidate):
BTL ``log(1 + e^-m)``, hinge ``max(0, 1 - m)``, exponential ``e^-m``, and the derivatives of the smooth
ones (Ge et al., NeurIPS 2024, Section 2)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

LOSSES = ("btl", "hinge", "exp")
SMOOTH_LOSSES = ("btl", "exp")


def check_loss(loss: str) -> str:
    """Raise ValueError unless ``loss`` is one of :data:`LOSSES`."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def ell(loss: str, m, xp=jnp):
    """The loss of a comparison won by margin ``m``: BTL ``log(1+e^-m)``, hinge ``max(0, 1-m)``, exp
    ``e^-m`` (elementwise; ``xp`` is ``jax.numpy`` or ``numpy``)."""
    if loss == "btl":
        return xp.logaddexp(0.0, -m)
    if loss == "exp":
        return xp.exp(-m)
    if loss == "hinge":
        return xp.maximum(0.0, 1.0 - m)
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def dloss(loss: str, m):
    """``l'(m)`` of a smooth loss (BTL ``-sigma(-m)``, exp ``-e^-m``), elementwise, JAX."""
    return -jax.nn.sigmoid(-m) if loss == "btl" else -jnp.exp(-m)


def d2loss(loss: str, m):
    """``l''(m)`` of a smooth loss (BTL ``1 / (4 cosh^2(m/2))``, exp ``e^-m``), elementwise, JAX."""
    return 0.25 / jnp.cosh(0.5 * m) ** 2 if loss == "btl" else jnp.exp(-m)


def _d2_min(loss, m, r):
    """min of l'' over [m - r, m + r] (l'' of BTL decreases in |m|; e^-m decreases in m)."""
    return d2loss(loss, jnp.abs(m) + r) if loss == "btl" else jnp.exp(-(m + r))
