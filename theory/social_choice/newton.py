"""The certified Newton fit of a smooth loss (JAX: jit-able, vmap-able): the damped Newton iteration (its
linear algebra is the vmap-safe Cholesky of :mod:`theory.numerics`) and the certificate ``|theta_hat - theta*| <= |grad| / mu`` over a
ball, which the exact minimiser must lie in. Used by :func:`theory.social_choice.model.fit_rows` and by
the simulations."""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from theory.social_choice.losses import SMOOTH_LOSSES, _d2_min, d2loss, dloss, ell
from theory.numerics import chol_solve, cholesky, pd_above, spd_solve  # noqa: F401 - re-exported
from theory.social_choice.rows import EPS

def eigmin_lower(A, iters: int = 8):
    """A certified lower bound on the smallest eigenvalue of a symmetric ``[p, p]`` matrix (plain jnp,
    vmap-able): inverse iteration on one Cholesky factor gives the Rayleigh estimate ``e >= lambda_min``;
    the bound is ``c = 0.999 e``, or ``e / 2`` if that fails, whichever :func:`pd_above` ``(A, c)``
    confirms, less a bound on that test's rounding (``4 (p + 1) eps max|A_ii|``). ``-inf`` when A is not
    positive definite (or the estimate missed, which only weakens a certificate, never fakes one)."""
    p = A.shape[-1]
    L, ok = cholesky(A)
    v = 1.0 + jnp.arange(p, dtype=A.dtype) / (p + 1.0)  # fixed start, not orthogonal to typical vectors

    def step(_, v):
        v = chol_solve(L, v)
        return v / jnp.linalg.norm(v)

    v = jax.lax.fori_loop(0, iters, step, v)
    e = v @ A @ v
    tight = pd_above(A, 0.999 * e)
    c = jnp.where(tight, 0.999 * e, 0.5 * e)
    good = ok & (tight | pd_above(A, c)) & (c > 0)
    return jnp.where(good, c - 4 * (p + 1) * EPS * jnp.max(jnp.abs(jnp.diagonal(A))), -jnp.inf)


def newton_fit(Z, w, loss: str = "btl", max_iter: int = 100, theta0=None, free=None):
    """Minimise ``sum_j w_j l(<theta, Z_j>)`` for a smooth loss by damped Newton (Armijo backtracking,
    skipped once the Newton decrement is at rounding level), starting at ``theta0`` (default 0).

    Args:
      Z: ``[m, p]`` rows; w: ``[m]`` weights (0 for padding rows); loss: ``"btl"`` or ``"exp"``.
      free: ``[p]`` bool, the coordinates in use (default all); Z's other columns must be zero (padding,
        so that problems of different p share one compiled shape); theta stays 0 there.
    Returns:
      ``(theta [p], grad_norm, iterations)``: the iterate with the smallest gradient norm seen. The loop
      stops once the gradient norm reaches its float64 rounding floor (``8 eps sum_j w_j |l'| |z_j|``),
      after two Newton steps in the quadratic regime that fail to halve it (rounding level), or after
      ``max_iter``; non-finite iterates (no finite optimum) stop it too, leaving a non-finite norm.
    Pure JAX without LAPACK calls (:func:`spd_solve`): call under ``jax.jit`` with ``loss`` static, or
    inside ``vmap``. The Hessian must be positive definite (the rows span R^p and a finite optimum
    exists; see :func:`check_finite_optimum`).
    """
    if loss not in SMOOTH_LOSSES:
        raise ValueError(f"newton_fit needs a smooth loss {SMOOTH_LOSSES}, got {loss!r}")
    p = Z.shape[1]
    th0 = jnp.zeros(p, Z.dtype) if theta0 is None else jnp.asarray(theta0, Z.dtype)
    zn = jnp.linalg.norm(Z, axis=1)
    pad = jnp.zeros(p, Z.dtype) if free is None else (~jnp.asarray(free)).astype(Z.dtype)

    def f(th):
        return jnp.sum(w * ell(loss, Z @ th))

    def gh(th):
        m = Z @ th
        d1 = dloss(loss, m)
        g = Z.T @ (w * d1)
        H = (Z * (w * d2loss(loss, m))[:, None]).T @ Z + jnp.diag(pad)
        return g, H, 8 * EPS * jnp.sum(w * jnp.abs(d1) * zn)

    def cond(s):
        it, th, _, _, stall, done = s
        return (it < max_iter) & (stall < 2) & ~done & jnp.all(jnp.isfinite(th))

    def body(s):
        it, th, best, best_g, stall, _ = s
        g, H, floor = gh(th)
        gn = jnp.linalg.norm(g)
        delta = -spd_solve(H, g)
        dec = -g @ delta
        f0 = f(th)
        quad = dec <= 1e-10 * (1.0 + jnp.abs(f0))
        # In the quadratic regime a Newton step at least halves the gradient; when it does not, the
        # iterates sit at the rounding floor (a stall). Far from the optimum nothing counts as a stall.
        stall = jnp.where((gn < 0.5 * best_g) | ~quad, 0, stall + 1)
        better = gn < best_g
        best = jnp.where(better, th, best)
        best_g = jnp.minimum(gn, best_g)

        def ls_cond(t):
            return (~quad) & (~(f(th + t * delta) <= f0 - 1e-4 * t * dec)) & (t > 1e-12)

        t = jax.lax.while_loop(ls_cond, lambda t: 0.5 * t, jnp.asarray(1.0, Z.dtype))
        return it + 1, th + t * delta, best, best_g, stall, gn <= floor

    init = (0, th0, th0, jnp.asarray(jnp.inf, Z.dtype), 0, False)
    it, th, best, best_g, _, done = jax.lax.while_loop(cond, body, init)
    # The last iterate is scored only if the loop did not stop on an already converged one.
    g, _, _ = gh(th)
    gn = jnp.linalg.norm(g)
    better = (gn < best_g) & ~done
    return jnp.where(better, th, best), jnp.where(better, gn, best_g), it


def fit_certificate(Z, w, theta, loss: str = "btl", free=None):
    """Certified distance from ``theta`` to the exact minimiser ``theta*`` of a smooth-loss fit.

    With ``g`` the gradient at ``theta`` (norm inflated by a bound on its float64 rounding error) and
    ``mu(r)`` a lower bound on the Hessian's smallest eigenvalue over the ball ``B(theta, r)`` (each row's
    ``l''`` minimised over the margins the ball allows; the eigenvalue bound by :func:`eigmin_lower`,
    within a factor 2), ``|g| / mu(r) <= r`` implies that ``theta*`` lies in that ball and
    ``|theta - theta*| <= |g| / mu(r)`` (strong convexity on the ball; derived here). Here
    ``r = 4 |g| / mu(0)``. With ``free`` (see :func:`newton_fit`) everything is on those coordinates.

    Returns:
      dict of JAX scalars: ``grad_norm``, ``grad_bound`` (inflated), ``mu0`` (at ``theta``), ``mu``
      (over the ball), ``ball`` (r), ``radius`` (the certified bound; ``inf`` when the check fails).
    """
    m = Z @ theta
    d1 = dloss(loss, m)
    g = Z.T @ (w * d1)
    gn = jnp.linalg.norm(g)
    zn = jnp.linalg.norm(Z, axis=1)
    p = Z.shape[1]
    gb = gn + 4 * (p + 2) * EPS * jnp.sum(w * jnp.abs(d1) * zn) * (1 + jnp.sqrt(p))
    H = (Z * (w * d2loss(loss, m))[:, None]).T @ Z
    # padded coordinates get a diagonal above every eigenvalue of the rest, so they never set the minimum
    pad = 0.0 if free is None else jnp.diag((~jnp.asarray(free)).astype(Z.dtype) * (1.0 + jnp.trace(H)))
    mu0 = eigmin_lower(H + pad)
    r = jnp.where(mu0 > 0, 4 * gb / mu0, jnp.inf)
    c = _d2_min(loss, m, jnp.where(jnp.isfinite(r), r, 0.0) * zn)
    mu = eigmin_lower((Z * (w * c)[:, None]).T @ Z + pad)
    mu = jnp.where(jnp.isfinite(r), mu, -jnp.inf)
    radius = gb / mu
    ok = (mu > 0) & (radius <= r)
    return {"grad_norm": gn, "grad_bound": gb, "mu0": mu0, "mu": mu, "ball": r,
            "radius": jnp.where(ok, radius, jnp.inf)}


@partial(jax.jit, static_argnames=("loss", "max_iter"))
def _fit_and_certify(Z, w, loss, max_iter=100):
    th, _, it = newton_fit(Z, w, loss, max_iter)
    return th, it, fit_certificate(Z, w, th, loss)


def _bucket(m: int) -> int:
    """Row count padded to the next power of two (>= 8): fewer distinct compiled shapes."""
    return max(8, 1 << (m - 1).bit_length())
