"""The initialisation obstruction of d-l-1 networks: the probability that a Gaussian init lands in a
disconnected ``H`` (closed form) and its Monte Carlo samplers."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from theory.numerics import check_int


def init_stds(d: int, l: int, init: str) -> tuple[float, float]:
    """Standard deviations ``(sigma_in, sigma_out)`` of the two weight layers of a d-l-1 network.

    ``kaiming``: He-normal, ``sqrt(2 / fan_in)`` (ReLU gain), i.e. ``sqrt(2/d)`` and ``sqrt(2/l)``;
    ``xavier``: Glorot-normal, ``sqrt(2 / (fan_in + fan_out))``, i.e. ``sqrt(2/(d+l))`` and
    ``sqrt(2/(l+1))``.

    Raises: TypeError / ValueError: ``d`` or ``l`` not an integer >= 1, or an unknown init.
    """
    d, l = check_int(d, "d", ge=1), check_int(l, "l", ge=1)
    if init == "kaiming":
        return math.sqrt(2.0 / d), math.sqrt(2.0 / l)
    if init == "xavier":
        return math.sqrt(2.0 / (d + l)), math.sqrt(2.0 / (l + 1))
    raise ValueError(f"init must be 'kaiming' or 'xavier', got {init!r}")


def disconnection_probability(d: int, l: int, init: str) -> float:
    """Probability that a Gaussian-initialised d-l-1 network (d >= 2) has a disconnected ``H``, i.e. some
    ``c_k = |w_k|^2 - a_k^2 < 0`` (Nurisso et al., NeurIPS 2024). With ``|w_k|^2 = s_in^2 chi2_d`` and
    ``a_k^2 = s_out^2 chi2_1``, ``P(c_k >= 0) = P(F_{d,1} >= s_out^2 / (d s_in^2))`` and the answer is
    ``1 - P(c_k >= 0)^l``.

    Raises:
      TypeError: ``d`` or ``l`` not an integer. ValueError: ``d < 2`` or ``l < 1`` or an unknown init.
    """
    d, l = check_int(d, "d"), check_int(l, "l")
    if d < 2 or l < 1:
        raise ValueError(f"need d >= 2 and l >= 1, got d={d}, l={l}")
    s_in, s_out = init_stds(d, l, init)
    p_ok = float(stats.f.sf(s_out**2 / (d * s_in**2), d, 1))
    return float(-np.expm1(l * np.log(p_ok)))


def sample_disconnected(key, d: int, l: int, init: str) -> jax.Array:
    """One Monte Carlo draw (JAX): 1.0 if a fresh init of the d-l-1 network has some ``c_k < 0``.

    Raises: as :func:`init_stds`."""
    s_in, s_out = init_stds(d, l, init)
    kw, ka = jax.random.split(key)
    W = s_in * jax.random.normal(kw, (l, d))
    a = s_out * jax.random.normal(ka, (l,))
    return jnp.any(jnp.sum(W**2, axis=1) - a**2 < 0).astype(jnp.result_type(float))


def disconnection_monte_carlo(key, ds, ls) -> jax.Array:
    """One Monte Carlo draw for every ``(init, d, l)`` cell: ``[2, len(ds), len(ls)]`` indicators of a
    disconnected ``H`` (Kaiming first, then Xavier), from one shared Gaussian sample (cells are correlated,
    each is exact in law). Uses ``c_k < 0 <=> |z_k|^2 / z_a^2 < s_out^2 / s_in^2``.

    Args: key: a JAX key (may be traced); ds, ls: non-empty sequences of integers >= 1 (static).
    Raises: TypeError / ValueError for ``ds`` or ``ls``.
    Source: the initialisation obstruction of d-l-1 networks (Nurisso et al., NeurIPS 2024).
    """
    ds = [check_int(d, "ds[]", ge=1) for d in ds]
    ls = [check_int(l, "ls[]", ge=1) for l in ls]
    if not ds or not ls:
        raise ValueError("ds and ls must be non-empty")
    dmax, lmax = max(ds), max(ls)
    kw, ka = jax.random.split(key)
    Zw = jax.random.normal(kw, (lmax, dmax)) ** 2
    Za = jax.random.normal(ka, (lmax,)) ** 2
    S = jnp.cumsum(Zw, axis=1)[:, jnp.array(ds) - 1]            # [lmax, nd]
    ratio = S / Za[:, None]
    runmin = jax.lax.cummin(ratio, axis=0)[jnp.array(ls) - 1]   # [nl, nd]: min over k < l
    thr = np.array([[[init_stds(d, l, ini)[1] ** 2 / init_stds(d, l, ini)[0] ** 2 for l in ls] for d in ds]
                    for ini in ("kaiming", "xavier")])          # [2, nd, nl]
    return (runmin.T[None] < thr).astype(jnp.result_type(float))
