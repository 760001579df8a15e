"""The sLIF and LIF models in JAX (neurons, networks, the readout, the surrogate gradient), with the argument checks shared by the package."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np

from theory import boolean
from theory.numerics import check_int, check_real

Kind = Literal["slif", "lif"]
KINDS = ("slif", "lif")
SURROGATE_ALPHA = 2.0  # ATan surrogate width (snnTorch default)
PMF_FLOOR = 1e-20  # Bin(n, nu) outcomes below this probability are left out of the exact mixtures
MAX_EXACT_N = 1000  # expected_level_weights: ~n^3.5 work (0.1 s at n = 100, 6 s at 500, ~1 min at 1000)

# ---------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------


def _check_kind(kind) -> str:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    return kind


# Time steps of the neuron recursion unrolled per loop iteration (all of them for T <= this): XLA fuses the
# unrolled elementwise updates, and their surrogate gradients, into a few kernels instead of a loop of small
# ones. Surrogate-gradient training (T = 5, 300 Adam steps, 4 seeds on 2 CPU cores) ran 2.3x faster, 4.5 s ->
# 2.0 s a call, with bit-identical results (2026-12-03); the cap bounds the compile time of a long T.
UNROLL_STEPS = 16


def _check_model(theta, beta, T, kind):
    theta = check_real(theta, "theta", ge=0.0)
    beta = check_real(beta, "beta", ge=0.0, le=1.0)
    T = check_int(T, "T", ge=1)
    return theta, beta, T, _check_kind(kind)


# ---------------------------------------------------------------------------------------------------
# The models (JAX)
# ---------------------------------------------------------------------------------------------------


@jax.custom_vjp
def heaviside(v: jax.Array) -> jax.Array:
    """``H(v) = 1[v > 0]`` (so ``H(0) = 0``) with the ATan surrogate gradient
    ``(alpha/2) / (1 + (pi alpha v / 2)^2)``, ``alpha = SURROGATE_ALPHA``. Shape and dtype of ``v``.
    Source: snnTorch's ``surrogate.atan`` (the paper does not state its surrogate)."""
    v = jnp.asarray(v)
    return (v > 0).astype(v.dtype)


def _heaviside_fwd(v):
    return heaviside(v), v


def _heaviside_bwd(v, g):
    a = SURROGATE_ALPHA
    return (g * (a / 2) / (1 + (jnp.pi * a * v / 2) ** 2),)


heaviside.defvjp(_heaviside_fwd, _heaviside_bwd)


def encode_input(x: jax.Array, kind: Kind) -> jax.Array:
    """A +-1 input in the model's alphabet: unchanged for sLIF, ``(x + 1) / 2`` in {0, 1} for LIF."""
    return x if _check_kind(kind) == "slif" else (x + 1) / 2


def _step(u, fired, drive, theta, beta, kind):
    """One neuron update: ``u_t = beta u_{t-1} + drive - theta * fired_{t-1}``; returns
    ``(u_t, fired_t, spike_t)`` with ``fired = H(u - theta)`` and spike in the kind's alphabet."""
    u = beta * u + drive - theta * fired
    fired = heaviside(u - theta)
    return u, fired, (2 * fired - 1 if kind == "slif" else fired)


def static_neuron_spikes(drive: jax.Array, theta, beta, T, kind: Kind = "slif") -> jax.Array:
    """Spike trains of neurons with constant input current ``drive`` (``= w.x`` for a static input).

    Args:
      drive: ``[...]`` currents. theta >= 0, beta in [0, 1], T >= 1 steps, kind ``"slif"`` | ``"lif"``.
    Returns:
      ``[T, ...]`` spikes (+-1 for sLIF, {0, 1} for LIF) in ``drive``'s dtype.
    Raises:
      TypeError, ValueError: a bad ``theta``, ``beta``, ``T`` or ``kind``.
    Source: Araya et al. §2 (sLIF dynamics).
    """
    theta, beta, T, kind = _check_model(theta, beta, T, kind)
    drive = jnp.asarray(drive)

    def body(carry, _):
        u, fired = carry
        u, fired, s = _step(u, fired, drive, theta, beta, kind)
        return (u, fired), s

    zero = jnp.zeros_like(drive)
    return jax.lax.scan(body, (zero, zero), None, length=T, unroll=min(T, UNROLL_STEPS))[1]


def init_weights(key: jax.Array, widths: Sequence[int], dtype=jnp.float32) -> tuple[jax.Array, ...]:
    """Weights of an L-layer fully connected network, ``W_l ~ N(0, 1/fan_in)``, no bias.

    Args:
      key: a ``jax.random`` key. widths: ``(n_0, n_1, ..., n_L)``, each >= 1, ``L >= 1``.
      dtype: float dtype of the weights.
    Returns:
      ``L`` arrays, ``W_l`` of shape ``[n_{l-1}, n_l]``.
    Raises:
      ValueError: fewer than two widths or a width < 1.
    Source: Araya et al. §2 (Gaussian initialisation, variance 1/fan_in).
    """
    widths = [check_int(w, "width", ge=1) for w in widths]
    if len(widths) < 2:
        raise ValueError(f"widths must list n_0, ..., n_L with L >= 1, got {widths}")
    sizes = [a * b for a, b in itertools.pairwise(widths)]
    z = jax.random.normal(key, (sum(sizes),), dtype)  # one draw: one random-number site to compile
    ends = np.cumsum(sizes)
    return tuple(z[e - m:e].reshape(a, b) / math.sqrt(a)
                 for e, m, a, b in zip(ends, sizes, widths[:-1], widths[1:]))


def layer_spikes(drive: jax.Array, theta, beta, kind: Kind = "slif") -> jax.Array:
    """Spike trains of one layer of neurons from their input currents, one recursion step per entry of
    the leading axis.

    Args:
      drive: ``[T, ..., n]`` currents ``W^T s^{(l-1)}_t`` (repeat a static current along the first axis).
      theta >= 0, beta in [0, 1], kind ``"slif"`` | ``"lif"``.
    Returns:
      ``[T, ..., n]`` spikes (+-1 for sLIF, {0, 1} for LIF).
    Raises:
      TypeError, ValueError: a bad ``theta``, ``beta`` or ``kind``.
    Source: Araya et al. §2 (the sLIF recursion).
    """

    def body(carry, d):
        u, fired = carry
        u, fired, s = _step(u, fired, d, theta, beta, kind)
        return (u, fired), s

    theta, beta, _, kind = _check_model(theta, beta, 1, kind)
    zero = jnp.zeros(drive.shape[1:], drive.dtype)
    return jax.lax.scan(body, (zero, zero), drive, unroll=min(drive.shape[0], UNROLL_STEPS))[1]


def run_network(weights: Sequence[jax.Array], x: jax.Array, theta, beta, T, kind: Kind = "slif",
                static: bool = True):
    """Spike trains of an L-layer sLIF/LIF network.

    Layer by layer: the currents of all ``T`` steps are one matrix product, then the neuron recursion
    scans over time (a static input's current is computed once and held).

    Args:
      weights: ``L`` arrays ``[n_{l-1}, n_l]`` (:func:`init_weights`); vmap over a stacked ensemble.
      x: ``[..., n_0]`` static input (the same at every step), or ``[T, ..., n_0]`` with ``static=False``;
        already in the model's alphabet (:func:`encode_input`).
      theta >= 0, beta in [0, 1], T >= 1, kind ``"slif"`` | ``"lif"``.
    Returns:
      ``[T, ..., n_L]`` spikes of the last layer (+-1 or {0, 1}).
    Raises:
      TypeError, ValueError: bad model parameters, or a dynamic input whose first axis is not ``T``.
    Source: Araya et al. §2 (layer l reads layer l - 1's spikes at the same step).
    """
    theta, beta, T, kind = _check_model(theta, beta, T, kind)
    x = jnp.asarray(x)
    if not static and x.shape[0] != T:
        raise ValueError(f"a dynamic input needs a leading time axis of length T = {T}, got {x.shape}")
    drive = x @ weights[0]
    if static:
        drive = jnp.broadcast_to(drive, (T,) + drive.shape)
    spikes = layer_spikes(drive, theta, beta, kind)
    for w in weights[1:]:
        spikes = layer_spikes(spikes @ w, theta, beta, kind)
    return spikes


def run_stack(weights: jax.Array, x: jax.Array, theta, beta, T, kind: Kind = "slif") -> jax.Array:
    """Every layer's spike trains of an equal-width network whose weights are stacked, one compiled
    layer scanned ``L`` times (what :func:`run_network` computes, for ``n_0 = n_1 = ... = n_L``).

    Args:
      weights: ``[L, n, n]``. x: ``[..., n]`` static input in the model's alphabet.
      theta >= 0, beta in [0, 1], T >= 1, kind ``"slif"`` | ``"lif"``.
    Returns:
      ``[L, T, ..., n]``: entry ``l`` holds the spikes of layer ``l + 1``.
    Raises:
      TypeError, ValueError: bad model parameters.
    Source: as :func:`run_network`.
    """
    theta, beta, T, kind = _check_model(theta, beta, T, kind)
    x = jnp.asarray(x)
    first = layer_spikes(jnp.broadcast_to(x @ weights[0], (T,) + x.shape[:-1] + (weights.shape[-1],)),
                   theta, beta, kind)

    def body(inp, w):
        out = layer_spikes(inp @ w, theta, beta, kind)
        return out, out

    rest = jax.lax.scan(body, first, weights[1:])[1]
    return jnp.concatenate([first[None], rest], axis=0)


def random_stack_spikes(key: jax.Array, depth: int, x: jax.Array, theta, beta, T, kind: Kind = "slif",
                        dtype=jnp.float32, readout: jax.Array | None = None) -> jax.Array:
    """Every layer's spike trains of a random equal-width network (``depth`` layers ``n -> n``), layer
    ``l``'s weights ``N(0, 1/n)`` drawn from ``fold_in(key, l)`` when the layer is computed (the first before
    the layer scan, the others inside it), so that no ``[depth, n, n]`` stack is ever held (what a
    width-10^4 ensemble needs); or, given ``readout``, every layer's spikes read out as soon as they are
    computed, so that no ``[depth, T, ..., n]`` stack of spikes is held either.

    Args:
      key: a ``jax.random`` key. depth: number of layers (>= 1). x: ``[..., n]`` static input in the
        model's alphabet. theta >= 0, beta in [0, 1], T >= 1, kind ``"slif"`` | ``"lif"``; dtype of weights.
      readout: None, or ``[depth, n, k]`` matrices (array-like, taken in ``dtype``), entry ``l`` applied to
        layer ``l + 1``'s spikes.
    Returns:
      ``[depth, T, ..., n]``: entry ``l`` holds the spikes of layer ``l + 1``; with ``readout``,
      ``[depth, T, ..., k]``: entry ``l`` holds ``spikes_{l+1} @ readout[l]`` (the same products as on the
      spikes returned without it).
    Raises:
      TypeError, ValueError: bad model parameters, ``depth < 1``, or a ``readout`` of another shape.
    Source: as :func:`run_network`, with the initialisation of :func:`init_weights`.
    """
    depth = check_int(depth, "depth", ge=1)
    theta, beta, T, kind = _check_model(theta, beta, T, kind)
    x = jnp.asarray(x, dtype)
    n = x.shape[-1]
    if readout is not None:
        readout = jnp.asarray(readout, dtype)
        if readout.ndim != 3 or readout.shape[:2] != (depth, n):
            raise ValueError(f"readout must have shape [depth, n, k] = [{depth}, {n}, k], "
                             f"got {list(readout.shape)}")

    def weights(l):
        return jax.random.normal(jax.random.fold_in(key, l), (n, n), dtype) / math.sqrt(n)

    def read(spikes, l):
        return spikes if readout is None else spikes @ readout[l]

    def body(inp, l):
        out = layer_spikes(inp @ weights(l), theta, beta, kind)
        return out, read(out, l)

    # Layer 1 reads the static input: its current is the same at every step, one product held for all T
    # (as run_network does; fed through the scan, it had been computed T times, 40% of the products of a
    # 2-layer stack at T = 5). The deeper layers share one scanned body. With a readout, each layer's
    # spikes are read out in the scan: lif_snn_depth's every-depth counts of 8 networks at n = 256 ran
    # 116 -> 59 ms a call, measured bit-identical to reading out the stacked spikes (2-core CPU, 2026-12-05).
    first = static_neuron_spikes(x @ weights(0), theta, beta, T, kind)
    rest = jax.lax.scan(body, first, jnp.arange(1, depth))[1]
    return jnp.concatenate([read(first, 0)[None], rest])


def spike_counts(spikes: jax.Array, kind: Kind = "slif") -> jax.Array:
    """Number of spikes per neuron, ``sum_t 1[spike]``: ``[T, ..., n] -> [..., n]`` (differentiable
    through the surrogate)."""
    return jnp.sum((spikes + 1) / 2 if _check_kind(kind) == "slif" else spikes, axis=0)


def classify(counts: jax.Array) -> jax.Array:
    """Argmax readout ``[..., n_L] -> [...]`` int; ties go to the lowest index (class 0).
    Source: Araya et al. §2, f^{L,T}(x) = argmax_i sum_t s_{t,i}; the tie rule is ours
    (the paper does not state one)."""
    return jnp.argmax(counts, axis=-1)


def binary_readout(counts: jax.Array) -> tuple[jax.Array, jax.Array]:
    """A 2-output classifier as a Boolean function: ``f = +1`` for class 0 (``count_0 >= count_1``, ties
    included) and ``-1`` for class 1, and the tie indicator. ``[..., 2] -> ([...], [...] bool)``."""
    return jnp.where(counts[..., 0] >= counts[..., 1], 1, -1), counts[..., 0] == counts[..., 1]


def network_table(weights: Sequence[jax.Array], n, theta, beta, T, kind: Kind = "slif",
                  chunk: int = 1 << 14) -> tuple[np.ndarray, np.ndarray]:
    """The Boolean function of a binary (``n_L = 2``) static-input network on all of {-1,1}^n.

    Returns:
      ``(table [2^n] float64 in {-1, 1}, ties [2^n] bool)``, table order of :mod:`theory.boolean`.
    Raises:
      ValueError: ``n`` differs from the input width, or the output width is not 2.
    """
    n = check_int(n, "n", ge=1, le=boolean.MAX_N)
    if weights[0].shape[0] != n or weights[-1].shape[1] != 2:
        raise ValueError(f"need input width {n} and 2 outputs, got {weights[0].shape[0]} and "
                         f"{weights[-1].shape[1]}")
    pts = boolean.cube(n)
    tables, ties = [], []
    for s in range(0, pts.shape[0], chunk):
        x = encode_input(jnp.asarray(pts[s:s + chunk], weights[0].dtype), kind)
        f, tie = binary_readout(spike_counts(run_network(weights, x, theta, beta, T, kind), kind))
        tables.append(np.asarray(f))
        ties.append(np.asarray(tie))
    return np.concatenate(tables).astype(np.float64), np.concatenate(ties)
