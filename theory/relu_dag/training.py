"""The network function (JAX and a sequential numpy reference), losses, regularised gradient steps, RK4
gradient flow and per-seed training runs (shared by the claims and ``sims/relu_dag.py``)."""

from __future__ import annotations

import math
from collections.abc import Callable

import jax
import jax.numpy as jnp
import numpy as np
import optax

from theory.numerics import check_int, check_real
from theory.relu_dag.graphs import layered_graph, structure


def _concrete_real(x, name: str, **bounds):
    """Check ``x`` as :func:`theory.numerics.check_real` unless it is a JAX value (possibly traced, e.g.
    a step size vmapped over), which is left to the caller."""
    if isinstance(x, jax.Array):
        return x
    return check_real(x, name, **bounds)


def forward_fn(G, slope: float = 0.0, activation: Callable | None = None) -> Callable:
    """The network function ``f(theta, X)`` of ``G`` (JAX-traceable).

    Nodes are evaluated level by level (a level = nodes with the same longest distance from the inputs),
    one dense product per level.

    Args:
      G: the network DAG; slope: leaky-ReLU slope gamma (0 = ReLU) on hidden nodes; outputs are linear.
      activation: optional elementwise JAX function used on hidden nodes instead of the (leaky) ReLU, for
        the controls of the conservation law (a non-homogeneous activation such as ``jnp.tanh`` breaks
        ``B~(theta * grad L) = 0``, which needs ``z sigma'(z) = sigma(z)``).
    Returns:
      ``f(theta [|E|], X [n, |V_in|]) -> [n, |V_out|]``, columns of ``X`` in input-node order.
    Raises:
      TypeError, ValueError: as :func:`structure`, ``slope`` not a finite real, or ``activation`` not
        callable.
    """
    slope = _concrete_real(slope, "slope")
    if activation is not None and not callable(activation):
        raise TypeError(f"activation must be callable, got {type(activation).__name__}")
    sigma = activation if activation is not None else (lambda z: jnp.where(z <= 0, slope * z, z))
    info = structure(G)
    nodes = list(info.inputs) + [v for v in info.topo if v not in set(info.inputs)]
    pos = {v: i for i, v in enumerate(nodes)}
    depth = {}
    for v in info.topo:
        depth[v] = 1 + max((depth[u] for u in G.predecessors(v)), default=-1)
    hidden = set(info.hidden)
    plan = []
    for lev in range(1, max(depth.values()) + 1):
        lv = [v for v in nodes if depth[v] == lev]
        col = {v: k for k, v in enumerate(lv)}
        es = [(j, pos[u], col[v]) for j, (u, v) in enumerate(info.edges) if v in col]
        plan.append((np.array([pos[v] for v in lv]), np.array([e[0] for e in es]),
                     np.array([e[1] for e in es]), np.array([e[2] for e in es]),
                     np.array([v in hidden for v in lv]), len(lv)))
    n_in, N = len(info.inputs), len(nodes)
    out_idx = np.array([pos[w] for w in info.outputs])

    def f(theta, X):
        act = jnp.zeros((X.shape[0], N), jnp.result_type(theta, X)).at[:, :n_in].set(X)
        for nidx, eidx, src, dst, is_hid, width in plan:
            M = jnp.zeros((N, width), act.dtype).at[src, dst].add(theta[eidx])
            z = act @ M
            act = act.at[:, nidx].set(jnp.where(is_hid, sigma(z), z))
        return act[:, out_idx]

    return f


def forward_sequential(G, theta, X, slope: float = 0.0) -> np.ndarray:
    """Reference numpy forward pass summing each node's inputs one edge at a time in ``G.in_edges`` order
    (used to compare networks bit for bit). ``theta``: dict edge -> float; ``X``: ``[n, |V_in|]``.
    Returns ``[n, |V_out|]`` float64. Raises: as :func:`structure`, or ``slope`` not a finite real."""
    slope = check_real(slope, "slope")
    info = structure(G)
    X = np.asarray(X, np.float64)
    act = {v: X[:, i] for i, v in enumerate(info.inputs)}
    hidden = set(info.hidden)
    for v in info.topo:
        if v in act:
            continue
        z = np.zeros(X.shape[0])
        for (u, _) in G.in_edges(v):
            z = z + theta[(u, v)] * act[u]
        act[v] = np.where(z > 0, z, slope * z) if v in hidden else z
    return np.stack([act[w] for w in info.outputs], axis=1)


def rk4(field: Callable, y0, h: float, n_steps: int, save_every: int = 1):
    """Classical RK4 for ``y' = field(y)`` with step ``h`` (``lax.scan``). Returns ``[n_steps // save_every
    + 1, ...]`` states, the first being ``y0``.

    Args: h: a finite real (or a JAX scalar, unchecked); n_steps >= 0 and save_every >= 1: integers
    (static). Raises: TypeError / ValueError for those.
    """
    h = _concrete_real(h, "h")
    n_steps = check_int(n_steps, "n_steps", ge=0)
    save_every = check_int(save_every, "save_every", ge=1)

    def step(y, _):
        k1 = field(y)
        k2 = field(y + 0.5 * h * k1)
        k3 = field(y + 0.5 * h * k2)
        k4 = field(y + h * k3)
        return y + (h / 6.0) * (k1 + 2 * k2 + 2 * k3 + k4), None

    def block(y, _):
        y, _ = jax.lax.scan(step, y, None, length=save_every)
        return y, y

    _, ys = jax.lax.scan(block, y0, None, length=n_steps // save_every)
    return jnp.concatenate([y0[None], ys], axis=0)


REGULARISERS = ("none", "l2", "l1", "prox_l1", "nuclear")


def loss_fn(name: str) -> Callable:
    """``loss(pred [n, k], Y [n, k]) -> scalar``: ``mse`` (half mean squared error), ``bce`` (logistic loss
    on logits, targets in {0, 1}), ``softmax`` (cross-entropy, one-hot targets), ``huber``.

    Raises: ValueError for an unknown name."""
    if name == "mse":
        return lambda p, y: 0.5 * jnp.mean(jnp.sum((p - y) ** 2, axis=-1))
    if name == "bce":
        return lambda p, y: jnp.mean(optax.sigmoid_binary_cross_entropy(p, y))
    if name == "softmax":
        return lambda p, y: jnp.mean(optax.softmax_cross_entropy(p, y))
    if name == "huber":
        return lambda p, y: jnp.mean(optax.huber_loss(p, y, delta=0.5))
    raise ValueError(f"unknown loss {name!r}")


def regulariser_step(name: str, B: np.ndarray, lr: float, lam: float) -> Callable:
    """``step(theta, g) -> theta'``: one gradient step of size ``lr`` on ``L + lam * R(theta)``.

    ``none``: plain GD; ``l2``: weight decay ``R = |theta|^2 / 2``; ``l1``: subgradient of ``|theta|_1``;
    ``prox_l1``: GD then soft-thresholding by ``lr * lam`` (reaches exact zeros); ``nuclear``: subgradient
    of ``|B~ diag(theta)|_*``, the nuclear-norm surrogate of the rank drop ``kappa`` (our reading of the
    paper's nuclear-norm-based regulariser, self-pruning section).

    Raises: ValueError for an unknown name, or ``lr`` / ``lam`` not finite reals >= 0 (JAX scalars are
    left unchecked).
    """
    lr = _concrete_real(lr, "lr", ge=0)
    lam = _concrete_real(lam, "lam", ge=0)
    Bf = jnp.asarray(B, jnp.result_type(float))
    if name == "none":
        return lambda t, g: t - lr * g
    if name == "l2":
        return lambda t, g: t - lr * (g + lam * t)
    if name == "l1":
        return lambda t, g: t - lr * (g + lam * jnp.sign(t))
    if name == "prox_l1":
        def prox(t, g):
            u = t - lr * g
            return jnp.sign(u) * jnp.maximum(jnp.abs(u) - lr * lam, 0.0)
        return prox
    if name == "nuclear":
        nuc = jax.grad(lambda t: jnp.sum(jnp.linalg.svd(Bf * t[None, :], compute_uv=False)))
        return lambda t, g: t - lr * (g + lam * nuc(t))
    raise ValueError(f"unknown regulariser {name!r}; known: {REGULARISERS}")


def make_trainer(G, X, Y, *, loss: str = "mse", reg: str = "none", lr: float = 0.05, lam: float = 0.0,
                 n_steps: int = 1000, n_save: int = 50, init_scale: float | None = None,
                 slope: float = 0.0) -> Callable:
    """A per-seed training run for ``sims.runtime.map_seeds``: ``fn(key) -> dict`` with ``theta0 [|E|]``,
    ``theta [n_save+1, |E|]`` and ``loss [n_save+1]`` at evenly spaced steps (step 0 first).

    The initialisation is ``N(0, init_scale^2)`` per edge (default ``sqrt(2 / mean in-degree)``); each step
    is :func:`regulariser_step` ``reg`` on the loss ``loss``.

    Args:
      G: the network DAG; X ``[n, |V_in|]``, Y ``[n, |V_out|]``: finite data; n_steps, n_save: integers
      >= 1 with ``n_save`` dividing ``n_steps``; lr, lam >= 0, init_scale > 0, slope: finite reals.
    Raises:
      TypeError / ValueError: any of those violated, an unknown loss or regulariser, or as
        :func:`structure`.
    """
    n_steps = check_int(n_steps, "n_steps", ge=1)
    n_save = check_int(n_save, "n_save", ge=1)
    if init_scale is not None:
        init_scale = check_real(init_scale, "init_scale", gt=0)
    info = structure(G)
    f, lf = forward_fn(G, slope), loss_fn(loss)
    X, Y = jnp.asarray(X), jnp.asarray(Y)
    if not (bool(jnp.all(jnp.isfinite(X))) and bool(jnp.all(jnp.isfinite(Y)))):
        raise ValueError("X and Y must be finite")
    if n_steps % n_save:
        raise ValueError(f"n_steps={n_steps} must be a multiple of n_save={n_save}")
    mean_in = len(info.edges) / max(1, len(info.hidden) + len(info.outputs))
    scale = init_scale if init_scale is not None else math.sqrt(2.0 / mean_in)
    step = regulariser_step(reg, info.B, lr, lam)
    L = lambda t: lf(f(t, X), Y)
    grad = jax.grad(L)

    def run(key):
        t0 = scale * jax.random.normal(key, (len(info.edges),))

        def block(t, _):
            t = jax.lax.fori_loop(0, n_steps // n_save, lambda _, u: step(u, grad(u)), t)
            return t, (t, L(t))

        _, (ts, ls) = jax.lax.scan(block, t0, None, length=n_save)
        return {"theta0": t0, "theta": jnp.concatenate([t0[None], ts]),
                "loss": jnp.concatenate([L(t0)[None], ls])}

    return run


def pruning_problem(n: int = 128, seed: int = 0):
    """The synthetic regression task of the pruning experiment: 2-8-8-1 layered net,
    ``X ~ N(0, I_2)`` (``[n, 2]``), ``y = ReLU(x1 + x2) - ReLU(x1 - x2)`` (``[n, 1]``).

    Raises: TypeError / ValueError: ``n`` not an integer >= 1 or ``seed`` not an integer."""
    n = check_int(n, "n", ge=1)
    seed = check_int(seed, "seed")
    X = jax.random.normal(jax.random.key(seed), (n, 2))
    Y = (jnp.maximum(X[:, 0] + X[:, 1], 0) - jnp.maximum(X[:, 0] - X[:, 1], 0))[:, None]
    return layered_graph([2, 8, 8, 1]), X, Y
