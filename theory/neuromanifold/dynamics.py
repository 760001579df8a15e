"""Critical exposure and the sparsity bias of gradient descent on ``L_u(W) = ||coef(f_W) - u||^2``
(Thm 4.3, Prop 4.5; JAX, float64 when the caller enables it)."""

from __future__ import annotations

from typing import Any, Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax

from theory.neuromanifold.activations import activation
from theory.neuromanifold.architectures import (
    MAX_JACOBIAN_ENTRIES,
    _unflatten_cnn,
    _unflatten_mlp,
    check_cnn,
    check_numeric_size,
    check_widths,
)
from theory.neuromanifold.dimension import monomial_basis
from theory.neuromanifold.networks import network_apply
from theory.numerics import check_int, check_limit, check_real, spd_solve


def coefficient_projector(kind: str, shape: Any, activation_coeffs, seed: int = 0):
    """``(X0, P)`` with ``coef(f) = P @ f(X0)`` exactly for every ``f`` in the span ``V`` of the monomials
    that occur: ``X0`` is ``(2 dim V + 8, d_0)`` fixed Gaussian points, ``P`` the pseudo-inverse of their
    monomial evaluation matrix. Then ``||coef(f_W) - u||^2`` is the MSE loss with ``Q = I`` (the
    paper's quadratic form ``Q``).

    Returns:
      ``X0 [2 dim V + 8, d_0]`` and ``P [dim V, 2 dim V + 8]`` (float64 numpy).
    Raises:
      ValueError: a non-scalar output, ``dim V > MAX_BASIS`` (see :func:`monomial_basis`), or an
        evaluation tensor above ``MAX_JACOBIAN_ENTRIES``; TypeError / ValueError: invalid architecture.
    """
    basis = np.array(monomial_basis(kind, shape, activation_coeffs))
    _, _, d0 = check_numeric_size(kind, shape)
    check_limit((2 * len(basis) + 8) * len(basis) * d0, MAX_JACOBIAN_ENTRIES, "MAX_JACOBIAN_ENTRIES",
                "the monomial evaluation tensor (points * monomials * inputs)")
    rng = np.random.default_rng(seed)
    X0 = rng.normal(size=(2 * len(basis) + 8, d0)) * 0.8
    E = np.prod(X0[:, None, :] ** basis[None, :, :], axis=-1)
    return X0, np.linalg.pinv(E)


def _levenberg_marquardt(resid, theta0, n_steps: int):
    """Levenberg-Marquardt on ``||resid(theta)||^2`` for ``n_steps`` fixed steps (no line search, so it
    vmaps cheaply): a step is accepted when it lowers the loss (damping / 3), else damping * 4."""
    def step(carry, _):
        th, lam = carry
        r = resid(th)
        J = jax.jacfwd(resid)(th)
        A = J.T @ J
        g = J.T @ r
        # SPD for lam > 0 (A = J^T J is PSD); a Cholesky in plain jnp, since this runs vmapped (a failed
        # factorisation gives NaN, rejected below like a step that does not lower the loss)
        d = spd_solve(A + lam * (jnp.diag(jnp.diag(A)) + 1e-12 * jnp.eye(th.shape[0])), -g)
        new = th + d
        better = jnp.sum(resid(new) ** 2) < jnp.sum(r ** 2)
        better = better & jnp.all(jnp.isfinite(new))
        return (jnp.where(better, new, th), jnp.where(better, lam / 3, lam * 4)), None

    (th, _), _ = jax.lax.scan(step, (theta0, jnp.asarray(1e-2, theta0.dtype)), None, length=n_steps)
    return th


def exposure_trial_fn(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs, n_restarts: int = 8,
                      n_steps: int = 200, tol: float = 1e-6, bound: float = 100.0):
    """Per-target check of critical exposure (Thm 4.3 / Prop 4.5), as ``fn(key) -> dict``.

    Target ``u ~ N(0, I_{dim V})``; loss ``L_u(W) = ||coef(f_W) - u||^2``.

    * ``mlp``: the last hidden layer's neuron 0 is removed (its in- and out-weights are 0); the
      subnetwork loss is minimised from ``n_restarts`` Gaussian starts (Levenberg-Marquardt); the best
      run whose
      gradient is below ``tol`` with ``|W| < bound`` is embedded. ``critical`` = the full network's
      gradient there is below ``tol`` (a positive fraction of ``u`` predicted).
    * ``cnn``: for each end entry of each filter (the possible padding), that entry is fixed to 0 and
      the rest minimised; ``pruned_grad`` is ``|dL/dw_pruned|`` at the best converged run (NaN if none
      converged); ``critical`` = some pruned gradient below ``tol`` (probability 0 predicted).

    Returns a function of a key giving ``{"critical", "converged", "full_grad", "pruned_grad", "loss"}``
    (``pruned_grad`` has one entry per pruned coordinate for the CNN, one for the MLP).

    Raises:
      TypeError: ``n_restarts`` or ``n_steps`` not an integer.
      ValueError: ``n_restarts``, ``n_steps`` < 1, ``tol`` or ``bound`` not finite and > 0, an MLP without
        a hidden layer, or the limits of :func:`coefficient_projector` and ``MAX_NUMERIC_PARAMS``.
    """
    n_restarts = check_int(n_restarts, "n_restarts", ge=1)
    n_steps = check_int(n_steps, "n_steps", ge=1)
    tol = check_real(tol, "tol", gt=0)
    bound = check_real(bound, "bound", gt=0)
    _, n, _ = check_numeric_size(kind, shape)
    cs = activation(activation_coeffs)
    X0, P = coefficient_projector(kind, shape, cs)
    X0, P = jnp.asarray(X0), jnp.asarray(P)
    f = network_apply(kind, shape, cs)
    dimv = P.shape[0]
    if kind == "mlp":
        w = check_widths(shape)
        if len(w) < 3:
            raise ValueError("the exposure experiment needs a hidden layer")
        Ws = _unflatten_mlp(np.ones(n), w)
        masks_l = [np.ones_like(W) for W in Ws]
        masks_l[-2][0, :] = 0  # in-weights of neuron 0 of the last hidden layer
        masks_l[-1][:, 0] = 0  # its out-weights
        masks = np.concatenate([m.ravel() for m in masks_l])[None, :]
        pruned = [int(np.flatnonzero(masks[0] == 0)[-1])]
    else:
        k, _ = check_cnn(*shape)
        ends = []
        off = 0
        for kk in k:
            ends += sorted({off, off + kk - 1}) if kk > 1 else []
            off += kk
        masks = np.ones((len(ends), n))
        for i, j in enumerate(ends):
            masks[i, j] = 0
        pruned = ends
    masks = jnp.asarray(masks)

    def loss_full(th, u):
        c = P @ f(th, X0).reshape(-1)
        return jnp.sum((c - u) ** 2)

    def one_subnet(key, u, mask):
        th0 = jax.random.normal(key, (n_restarts, n))
        sub = lambda th: loss_full(th * mask, u)
        res = lambda th: P @ f(th * mask, X0).reshape(-1) - u
        ths = jax.vmap(lambda t: _levenberg_marquardt(res, t, n_steps))(th0) * mask
        vals = jax.vmap(sub)(ths)
        gs = jax.vmap(jax.grad(sub))(ths)
        ok = (jnp.linalg.norm(gs, axis=1) < tol) & (jnp.linalg.norm(ths, axis=1) < bound) & jnp.isfinite(vals)
        best = jnp.argmin(jnp.where(ok, vals, jnp.inf))
        th = ths[best]
        g_full = jax.grad(loss_full)(th, u)
        return ok.any(), jnp.linalg.norm(g_full), g_full, vals[best]

    def trial(key):
        ku, kr = jax.random.split(key)
        u = jax.random.normal(ku, (dimv,))
        keys = jax.random.split(kr, masks.shape[0])
        conv, gnorm, gfull, val = jax.vmap(lambda kk, m: one_subnet(kk, u, m))(keys, masks)
        pg = jnp.abs(gfull[jnp.arange(len(pruned)), jnp.asarray(pruned)])
        pg = jnp.where(conv, pg, jnp.nan)
        if kind == "mlp":
            critical = conv[0] & (gnorm[0] < tol)
        else:
            critical = jnp.any(conv & (pg < tol))
        return {"critical": critical, "converged": conv, "full_grad": jnp.where(conv, gnorm, jnp.nan),
                "pruned_grad": pg, "loss": val}

    return trial


def subnetwork_distance(kind: str, shape: Any, theta):
    """How close ``theta`` is to a subnetwork, scale-free, in ``[0, 1]`` (JAX).

    * MLP: ``min_i |out_i| |in_i| / sum_i |out_i| |in_i|`` over the neurons ``i`` of the last hidden
      layer (0 at a dead neuron).
    * CNN: ``min`` over the end entries of each filter of ``|w_l[end]| / |w_l|`` (0 at a padded filter).

    Args: theta ``[N]`` (JAX-traceable). Returns a scalar. Raises: TypeError / ValueError for an invalid
    kind or shape.
    """
    if kind == "mlp":
        w = check_widths(shape)
        Ws = _unflatten_mlp(theta, w)
        s = jnp.linalg.norm(Ws[-2], axis=1) * jnp.linalg.norm(Ws[-1], axis=0)
        return jnp.min(s) / jnp.maximum(jnp.sum(s), 1e-300)
    if kind != "cnn":
        raise ValueError(f"kind must be 'mlp' or 'cnn', got {kind!r}")
    k, _ = check_cnn(*shape)
    ws = _unflatten_cnn(theta, k)
    vals = []
    for wl in ws:
        nrm = jnp.maximum(jnp.linalg.norm(wl), 1e-300)
        if wl.shape[0] > 1:
            vals += [jnp.abs(wl[0]) / nrm, jnp.abs(wl[-1]) / nrm]
    return jnp.min(jnp.stack(vals))


def sparsity_trial_fn(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs, n_steps: int = 2000,
                      lr: float = 0.01, init_scale: float = 0.5):
    """One gradient-descent run (optax.sgd, gradients clipped at norm 10) from a Gaussian init (std ``init_scale``) on a random target
    ``u ~ N(0, I)`` for ``L_u(W) = ||coef(f_W) - u||^2``, as ``fn(key) -> dict`` with ``distance``
    (:func:`subnetwork_distance` at the end), ``loss`` and ``grad`` (final gradient norm).

    Raises:
      TypeError: ``n_steps`` not an integer. ValueError: ``n_steps < 1``, ``lr`` or ``init_scale`` not
        finite and > 0, or the limits of :func:`coefficient_projector` and ``MAX_NUMERIC_PARAMS``.
    Source: the sparsity bias of Prop 4.5 / Thm 4.3 (subnetworks attract gradient descent).
    """
    n_steps = check_int(n_steps, "n_steps", ge=1)
    lr = check_real(lr, "lr", gt=0)
    init_scale = check_real(init_scale, "init_scale", gt=0)
    _, n, _ = check_numeric_size(kind, shape)
    cs = activation(activation_coeffs)
    X0, P = coefficient_projector(kind, shape, cs)
    X0, P = jnp.asarray(X0), jnp.asarray(P)
    f = network_apply(kind, shape, cs)
    # Global-norm clipping at 10 only stops the rare run that would overflow (the loss has degree 2 r L
    # in W); below that it is plain gradient descent.
    opt = optax.chain(optax.clip_by_global_norm(10.0), optax.sgd(lr))

    def trial(key):
        ku, ki = jax.random.split(key)
        u = jax.random.normal(ku, (P.shape[0],))
        loss = lambda th: jnp.sum((P @ f(th, X0).reshape(-1) - u) ** 2)
        th0 = init_scale * jax.random.normal(ki, (n,))

        def step(carry, _):
            th, st = carry
            g = jax.grad(loss)(th)
            upd, st = opt.update(g, st, th)
            return (optax.apply_updates(th, upd), st), None

        (th, _), _ = jax.lax.scan(step, (th0, opt.init(th0)), None, length=n_steps)
        return {"distance": subnetwork_distance(kind, shape, th), "loss": loss(th),
                "grad": jnp.linalg.norm(jax.grad(loss)(th))}

    return trial
