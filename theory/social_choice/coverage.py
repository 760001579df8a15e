"""Uniform coverage (Hollender & Kraiczy, ICLR 2026, §5, Theorems 5.1-5.2, the pair-data limit).

The loss under uniform coverage is ``L(theta) = sum_i w_i E_x[l(<theta, x> sign<v_i, x>)]`` with x uniform
on the unit sphere S^{d-1} (a comparison's difference vector, labelled by every voter). Since
``l(<theta, x> s_i(x)) = l(<theta, s_i(x) x>)`` and ``s_i(x) x`` is uniform on voter i's hemisphere
``{<v_i, x> > 0}``, each voter's term is the mean of ``l(<theta, x>)`` over its own hemisphere, a smooth
integrand on a domain with no discontinuity inside. So uniform coverage is a weighted node set of
comparison rows (:func:`coverage_rows`) and every fit of ``model.py`` applies:

* d = 2: x = cos(b) v_hat + sin(b) e, b in (-pi/2, pi/2), uniform: Gauss-Legendre in b (smooth losses) or
  the midpoint rule (hinge, whose kinks move with theta).
* d = 3: x = cos(b) v_hat + sin(b) (cos(f) e1 + sin(f) e2), density sin(b): Gauss-Legendre in b on
  (0, pi/2), the trapezoid rule (spectral for periodic integrands) in f.
* d >= 4: Monte Carlo sample of the sphere (normalised Gaussians, ``jax.random.key(seed)``).

The hinge fit on such rows is an LP whose vertex sits on the node grid (error of order the node spacing),
and hinge optima in d >= 4 need the sphere too, so :func:`uniform_loss` also reduces the loss exactly to a
one-dimensional integral (any d, any loss): the default for hinge and for d >= 4.

For BTL the optimum is explicit (a closed form derived here, not in the paper): with
``l = l_even + odd part -m/2``, ``L = W E[l_even(|theta| x_1)] - (kappa_d / 2) <theta, u>``, ``u = sum_i w_i
v_i/|v_i|``, ``W = sum w_i``, ``kappa_d = E|x_1|``; so theta* points along u and its length rho* solves
``W E[(sigma(rho x_1) - 1/2) x_1] = (kappa_d / 2) |u|`` (:func:`btl_uniform_closed_form`); a finite optimum
exists iff ``|u| < W`` (the voters are not all one direction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import jax
import jax.numpy as jnp
import numpy as np
from scipy import integrate, optimize, special

from theory.numerics import float64
from theory.social_choice.model import (
    SMOOTH_LOSSES,
    Rows,
    check_loss,
    d2loss,
    dloss,
    ell,
    fit_rows,
    validate,
)

# Nodes per voter: (d=2 nodes, d=3 polar nodes); the azimuth uses twice the polar count.
RESOLUTION = {"smooth": {2: 96, 3: 40}, "hinge": {2: 4000, 3: 60}}  # hinge: midpoint rule, O(h) in theta
MC_SAMPLES = 200_000


def _frame(v: np.ndarray) -> np.ndarray:
    """``[d, d]`` orthonormal basis whose first row is ``v / |v|``."""
    d = v.shape[0]
    M = np.eye(d)
    M[:, 0] = v / np.linalg.norm(v)
    q, _ = np.linalg.qr(M)
    if q[:, 0] @ v < 0:
        q = -q
    return q.T


def hemisphere_nodes(v, n: int, *, rule: str = "gauss") -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes of the uniform distribution on the hemisphere ``{x in S^{d-1}: <v, x> > 0}``.

    Args:
      v: ``[d]`` nonzero, d in {2, 3}.
      n: polar nodes (d = 3 uses ``2 n`` azimuth nodes).
      rule: ``"gauss"`` (Gauss-Legendre in the polar angle) or ``"midpoint"``.
    Returns:
      ``(X [M, d], w [M])`` unit vectors and weights summing to 1.
    """
    v = np.asarray(v, np.float64)
    d = v.shape[0]
    B = _frame(v)

    def polar(a, b):
        if rule == "gauss":
            t, wt = special.roots_legendre(n)
        elif rule == "midpoint":
            t, wt = (np.arange(n) + 0.5) / n * 2 - 1, np.full(n, 2.0 / n)
        else:
            raise ValueError(f"rule must be 'gauss' or 'midpoint', got {rule!r}")
        return a + (t + 1) * (b - a) / 2, wt * (b - a) / 2

    if d == 2:
        beta, wb = polar(-math.pi / 2, math.pi / 2)
        X = np.cos(beta)[:, None] * B[0] + np.sin(beta)[:, None] * B[1]
        return X, wb / math.pi
    if d == 3:
        beta, wb = polar(0.0, math.pi / 2)
        nphi = 2 * n
        phi = 2 * math.pi * np.arange(nphi) / nphi
        cb, sb = np.cos(beta)[:, None], np.sin(beta)[:, None]
        X = (cb[..., None] * B[0] + (sb * np.cos(phi))[..., None] * B[1]
             + (sb * np.sin(phi))[..., None] * B[2]).reshape(-1, 3)
        w = (wb * np.sin(beta))[:, None] * np.full(nphi, 1.0 / nphi)
        return X, (w / w.sum()).reshape(-1)
    raise ValueError(f"hemisphere quadrature is implemented for d = 2 and 3, got d = {d}")


def _check_coverage(voters, weights):
    _, V, w = validate(None, voters, weights, need_candidates=False)
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    active = Vh[w > 0]
    if np.all(np.linalg.norm(active - active[0], axis=1) <= 1e-12):
        raise ValueError("all voters (with positive weight) point the same way: under uniform coverage the "
                         "loss decreases forever along that direction (no finite optimum)")
    return V, w


def coverage_rows(voters, weights=None, *, loss: str = "btl", resolution: int | None = None,
                  n_samples: int = MC_SAMPLES, seed: int = 0) -> Rows:
    """Rows whose fit is the uniform-coverage optimum: ``sum_j w_j l(<theta, z_j>)`` equals
    ``sum_i w_i E_x[l(<theta, x> sign<v_i, x>)]`` (x uniform on the sphere) up to quadrature error
    (d = 2, 3) or Monte Carlo error (d >= 4, ``n_samples`` directions).

    Raises: ValueError: all voters one direction (no finite optimum), bad voters or weights.
    """
    check_loss(loss)
    V, w = _check_coverage(voters, weights)
    d = V.shape[1]
    if d >= 4 or d < 2:
        if d < 2:
            raise ValueError("uniform coverage needs dimension >= 2")
        with float64():
            x = jax.random.normal(jax.random.key(seed), (n_samples, d))
            x = np.asarray(x / jnp.linalg.norm(x, axis=1, keepdims=True))
        return sampled_rows(x, V, w)
    kind = "smooth" if loss in SMOOTH_LOSSES else "hinge"
    n = resolution or RESOLUTION[kind][d]
    rule = "gauss" if kind == "smooth" else "midpoint"
    Zs, ws = [], []
    for v, wi in zip(V, w):
        if wi > 0:
            X, wq = hemisphere_nodes(v, n, rule=rule)
            Zs.append(X)
            ws.append(wi * wq)
    Z = np.concatenate(Zs)
    return Rows(Z, np.concatenate(ws), -np.ones((Z.shape[0], 2), np.int64), np.ones(Z.shape[0], bool))


def sampled_rows(x, voters, weights) -> Rows:
    """Rows of N sampled comparisons ``x [N, d]`` labelled by every voter, normalised to total weight
    ``sum w_i`` (each direction enters with weight ``sum_{i: <v_i,x> > 0} w_i / N`` and its negative with
    the rest)."""
    x = np.asarray(x, np.float64)
    V = np.asarray(voters, np.float64)
    w = np.asarray(weights, np.float64)
    S = x @ V.T
    n = x.shape[0]
    plus, minus = (S > 0) @ w / n, (S < 0) @ w / n
    Z = np.concatenate([x, -x])
    W = np.concatenate([plus, minus])
    keep = W > 0
    both = np.concatenate([(plus > 0) & (minus > 0)] * 2)
    return Rows(Z[keep], W[keep], -np.ones((int(keep.sum()), 2), np.int64), both[keep])


def sampled_rows_jax(x, V, w, n_used=None):
    """JAX version of :func:`sampled_rows` with fixed shapes (vmap-able): ``(Z [2N, d], W [2N], contested
    [2N])``; rows nobody votes for keep weight 0. With ``n_used``, only the first ``n_used`` directions
    count (the rest get weight 0: one compiled shape serves several sample sizes)."""
    S = x @ V.T
    n = x.shape[0] if n_used is None else n_used
    used = (jnp.arange(x.shape[0]) < n).astype(x.dtype)
    plus = ((S > 0).astype(x.dtype) @ w) * used / n
    minus = ((S < 0).astype(x.dtype) @ w) * used / n
    both = (plus > 0) & (minus > 0)
    return jnp.concatenate([x, -x]), jnp.concatenate([plus, minus]), jnp.concatenate([both, both])


# ---------------------------------------------------------------------------------------------------
# The exact one-dimensional reduction (any d, any loss)
# ---------------------------------------------------------------------------------------------------

_GAUSS = 40  # Gauss-Legendre nodes per piece (at least)


@lru_cache(maxsize=16)
def _smoothstep_rule(n: int):
    """Gauss-Legendre on [0, 1] after the smoothstep map (flat at both ends of a piece)."""
    s, ws = special.roots_legendre(n)
    s, ws = (s + 1) / 2, ws / 2
    return 3 * s**2 - 2 * s**3, 6 * s * (1 - s) * ws


def uniform_loss(theta, voters, weights, loss: str, n_gauss: int = _GAUSS) -> float:
    """The uniform-coverage loss ``sum_i w_i E_x[l(<theta, x> sign<v_i, x>)]``, x uniform on S^{d-1}, by an
    exact reduction to one dimension (numpy, float64, any d >= 2).

    With ``t = <theta_hat, x> = sin(a) >= 0`` (x and -x give the same term) and ``alpha_i`` the angle
    between theta and ``v_i``, ``P(sign<v_i, x> = -1 | t) = F(-tan(a) cot(alpha_i))``, F the CDF of one
    coordinate of a uniform point on S^{d-2} (a step for d = 2, ``betainc((d-2)/2, (d-2)/2, (1 + c)/2)``
    above). So ``L = int_0^{pi/2} sum_i w_i [(1 - F_i) l(rho sin a) + F_i l(-rho sin a)] cos(a)^(d-2) da /
    N_d``, two non-negative terms (the even/odd split ``W e + o sum_i w_i (1 - 2 F_i)`` is the same sum,
    but for exp its terms, cosh and -sinh of m, cancel: the exp fit erred 1.2e-6 in |theta| with voters
    1 deg apart, and overflowed at 0.04 deg). The
    integrand is smooth between the breakpoints ``a = min(alpha_i, pi - alpha_i)`` and (hinge)
    ``a = arcsin(1/rho)``, so Gauss-Legendre per piece, after a smoothstep map that also absorbs the
    square-root behaviour of F at a breakpoint, is accurate to rounding level (checked against the
    hemisphere quadrature in the tests).

    Args: theta ``[d]`` nonzero; voters ``[k, d]``; weights ``[k]``; loss: a name in LOSSES; n_gauss:
      nodes per piece (the integrand varies on the scale 1/|theta| near a = 0: use a few times |theta|).
    """
    th = np.asarray(theta, np.float64)
    V = np.asarray(voters, np.float64)
    w = np.asarray(weights, np.float64)
    d = th.shape[0]
    rho = float(np.linalg.norm(th))
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    # alpha_i = 2 atan2(|u - v_i|, |u + v_i|) for unit u, v_i (Kahan): accurate to rounding at small
    # angles, where sqrt(1 - cos^2) errs by ~1e-9 relative (voters 0.04 deg apart) and the misplaced
    # breakpoint of F's step makes the loss noisy at 1e-9 relative, which is a 1e-7 error in |theta*|
    uh = th / rho
    alpha = 2.0 * np.arctan2(np.linalg.norm(uh - Vh, axis=1), np.linalg.norm(uh + Vh, axis=1))
    cos_a, sin_a = np.cos(alpha), np.sin(alpha)
    pts = [0.0, math.pi / 2, *np.minimum(alpha, math.pi - alpha).tolist()]
    if loss == "hinge" and rho > 1:
        pts.append(math.asin(1.0 / rho))
    pts = np.sort(np.asarray(pts))
    a, b = pts[:-1, None], pts[1:, None]
    h, wh = _smoothstep_rule(int(n_gauss))
    ang = (a + (b - a) * h).reshape(-1)
    wq = ((b - a) * wh).reshape(-1)
    t = np.sin(ang)
    dens = np.cos(ang) ** (d - 2) / (special.beta(0.5, (d - 1) / 2) / 2)
    m = rho * t
    with np.errstate(divide="ignore", invalid="ignore"):
        c = np.where(sin_a > 0, -np.tan(ang)[:, None] * cos_a / np.where(sin_a > 0, sin_a, 1.0),
                     -np.sign(cos_a) * np.inf)
    c = np.clip(c, -1.0, 1.0)

    def F(c):
        if d == 2:
            return np.where(c <= -1.0, 0.0, np.where(c >= 1.0, 1.0, 0.5))
        return special.betainc((d - 2) / 2, (d - 2) / 2, (1.0 + c) / 2)

    # P(sign<v_i, x> = -1 | t) = F(c), P(+1 | t) = 1 - F(c) = F(-c) (F is symmetric); a zero probability
    # zeroes its term (exp's e^m overflows beyond the voters' wedge, where F = 0)
    total = np.zeros_like(m)
    for sign, p in ((1.0, F(-c) @ w), (-1.0, F(c) @ w)):
        with np.errstate(over="ignore"):
            total += np.multiply(ell(loss, sign * m, np), p, out=np.zeros_like(m), where=p > 0)
    return float(np.sum(wq * dens * total))


def _fd_grad_hess(f, th, steps):
    """Gradient (4-point central stencil, error O(h^4)) and Hessian (O(h^2)) by finite differences.

    ``steps`` ``[d, d]``: column i is the step vector of axis i (columns orthogonal, so one step size per
    direction); the derivatives are returned in the coordinates of ``th``."""
    d = th.shape[0]
    h = np.linalg.norm(steps, axis=0)
    E = steps.T
    g = np.array([(8 * (f(th + e) - f(th - e)) - (f(th + 2 * e) - f(th - 2 * e))) / (12 * hi)
                  for e, hi in zip(E, h)])
    f0 = f(th)
    H = np.empty((d, d))
    for i in range(d):
        H[i, i] = (f(th + E[i]) - 2 * f0 + f(th - E[i])) / h[i] ** 2
        for j in range(i):
            H[i, j] = H[j, i] = (f(th + E[i] + E[j]) - f(th + E[i] - E[j]) - f(th - E[i] + E[j])
                                 + f(th - E[i] - E[j])) / (4 * h[i] * h[j])
    B = steps / h
    return B @ g, B @ H @ B.T


def _polar_steps(th):
    """Finite-difference steps ``[r, r]`` at ``th`` (columns): 1e-3 max(1, |th|) along th (the loss
    varies with |th| on the scale max(1, |th|)) and 1e-3 min(1, |th|) along an orthonormal basis of its
    complement (with the direction on the angular scale min(1, 1/|th|), the width of l(|th| sin a)).
    Voters 1 deg apart put the Hessian's eigenvalues at ~2e-7 (radial) and ~4e-3 (across), 0.04 deg apart
    at ~1e-11 and ~2e-4: steps along the coordinate axes mix the two, and one isotropic step of
    1e-3 |th| biased the hinge optimum's length by 4e-6 relative at 1 deg (3% at 0.04 deg)."""
    r = th.shape[0]
    n = float(np.linalg.norm(th))
    if n == 0:
        return 1e-3 * np.eye(r)
    B = np.linalg.qr(np.column_stack([th / n, np.eye(r)]))[0][:, :r]
    return B * np.array([1e-3 * max(1.0, n)] + [1e-3 * min(1.0, n)] * (r - 1))


def _uniform_newton(theta0, V, w, loss, Q, n_gauss=_GAUSS, max_iter=60):
    """Damped Newton on ``beta -> uniform_loss(Q beta)`` with finite-difference derivatives (steps
    :func:`_polar_steps`); Q ``[d, r]`` has orthonormal columns.

    Returns ``(beta, grad_norm, lambda_min(H), iterations)`` at the iterate with the smallest Newton
    decrement."""

    def f(b):
        return uniform_loss(Q @ b, V, w, loss, n_gauss)

    th = np.asarray(theta0, np.float64)
    best, best_dec, stall = th, math.inf, 0
    it = 0
    for it in range(1, max_iter + 1):
        g, H = _fd_grad_hess(f, th, _polar_steps(th))
        lam, E = np.linalg.eigh(H)
        # eigenvalues floored relative to the largest (the radial one is ~1e-17 beside a tangential 1e-6
        # when |theta*| ~ 2e5: an absolute floor would cap each step at |g| / floor)
        delta = -E @ ((E.T @ g) / np.maximum(lam, max(1e-12 * abs(lam).max(), np.finfo(float).tiny)))
        # the Newton decrement g^T H^-1 g (affine invariant) ranks the iterates: |g| would be ruled by
        # the stiff tangential term's rounding and miss a radial error (Hessian eigenvalues 1e-11, 1e-4)
        dec = float(-g @ delta)
        if dec < best_dec:
            best, best_dec, stall = th, dec, 0
        else:
            stall += 1
        if stall >= 3 or dec == 0:
            break
        f0, t = f(th), 1.0
        while f(th + t * delta) > f0 - 1e-4 * t * dec and t > 1e-10:
            t *= 0.5
        if dec <= 1e-13 * (1 + abs(f0)):
            t = 1.0
        th = th + t * delta
    g, H = _fd_grad_hess(f, best, _polar_steps(best))
    return best, float(np.linalg.norm(g)), float(np.linalg.eigvalsh(H)[0]), it


@dataclass(frozen=True)
class CoverageFit:
    """The uniform-coverage optimum.

    Attributes:
      theta: ``[d]``; direction: ``theta / |theta|``.
      method: ``"nodes"`` (hemisphere quadrature rows, smooth losses in d = 2, 3) or ``"1d"`` (the exact
        one-dimensional reduction :func:`uniform_loss`).
      grad_norm: gradient norm at theta (``"1d"``: by finite differences); mu: smallest Hessian eigenvalue
        (over the certification ball for ``"nodes"``, at theta for ``"1d"``); radius: certified
        ``|theta - theta*|`` of the quadrature problem (``"nodes"``; ``nan`` for ``"1d"``, where
        ``grad_norm / mu`` is the first-order estimate).
      nodes: quadrature rows (``"nodes"``) or 1-D quadrature points (``"1d"``).
    """

    theta: np.ndarray
    direction: np.ndarray
    method: str
    grad_norm: float
    mu: float
    radius: float
    nodes: int


def uniform_coverage_fit(voters, weights=None, *, loss: str = "btl", method: str = "auto",
                         resolution: int | None = None) -> CoverageFit:
    """Minimise ``sum_i w_i E_x[l(<theta, x> sign<v_i, x>)]`` over theta, x uniform on S^{d-1} (H&K §5).

    Args:
      voters: ``[k, d]``; weights: ``[k]``; loss: ``"btl"``, ``"hinge"``, ``"exp"``.
      method: ``"nodes"`` (hemisphere quadrature rows and the certified Newton fit: smooth losses, d = 2,
        3), ``"1d"`` (exact one-dimensional reduction, any loss and d), or ``"auto"`` (nodes for smooth
        losses in d <= 3 unless the optimum is long, |theta| > 50 by BTL's closed form; else 1d).
      resolution: polar nodes per voter for ``"nodes"``.
    Raises:
      ValueError: all voters one direction (no finite optimum), bad voters or weights, a method that
        does not apply.
    """
    check_loss(loss)
    V, w = _check_coverage(voters, weights)
    d = V.shape[1]
    # l(<theta, x>) varies on the angular scale 1/|theta|; BTL's closed-form length is the guide
    rho = btl_uniform_closed_form(V, w)[1]
    if method == "auto":
        method = "nodes" if (loss in SMOOTH_LOSSES and d <= 3 and rho <= 50) else "1d"
    if method == "nodes":
        if loss not in SMOOTH_LOSSES or d > 3:
            raise ValueError("method 'nodes' needs a smooth loss and d <= 3")
        if resolution is None:
            resolution = max(RESOLUTION["smooth"][d], math.ceil((8 if d == 2 else 4) * rho))
        rows = coverage_rows(V, w, loss=loss, resolution=resolution)
        f = fit_rows(rows, loss, check=False)
        th = f.theta
        return CoverageFit(th, th / np.linalg.norm(th), "nodes", f.grad_norm, f.mu, f.radius, rows.Z.shape[0])
    if method != "1d":
        raise ValueError(f"method must be 'auto', 'nodes' or '1d', got {method!r}")
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    u = (w[:, None] * Vh).sum(0)
    # start at BTL's closed-form length (the scale of every loss's optimum): from |theta| = 2 Newton grows
    # |theta| by ~1.5x a step and runs out of steps before |theta*| ~ 2e4 (voters 0.01 deg apart)
    th0 = max(2.0, rho) * (u / np.linalg.norm(u) if np.linalg.norm(u) > 1e-9 else Vh[np.argmax(w)])
    # The loss is invariant under reflections that fix span(V), so an optimum lies in that span: fit
    # there (exactly in the span, which matters when the voters' cone is flat, k < d).
    _, sv, vt = np.linalg.svd(Vh)
    Q = vt[:int(np.sum(sv > 1e-12 * sv[0]))].T
    n_gauss = min(2000, max(_GAUSS, math.ceil(2 * rho)))
    b, gn, mu, _ = _uniform_newton(Q.T @ th0, V, w, loss, Q, n_gauss)
    th = Q @ b
    # uniform_loss's pieces: between 0, pi/2, one breakpoint per voter and (hinge, |theta| > 1) asin(1/|theta|)
    pieces = V.shape[0] + 1 + int(loss == "hinge" and np.linalg.norm(th) > 1)
    return CoverageFit(th, th / np.linalg.norm(th), "1d", float(gn), float(mu), math.nan, pieces * n_gauss)


def uniform_coverage_direction(voters, weights=None, *, loss: str = "btl") -> np.ndarray:
    """The direction (unit vector ``[d]``) of the minimiser of ``sum_i w_i E_x[l(<theta, x> sign<v_i, x>)]``
    over difference vectors x uniform on the unit sphere: the pair-data limit (H&K §5).

    Args:
      voters: ``[k, d]`` with at least two distinct directions among positive weights; weights: ``[k]``
        (default all 1); loss: ``"btl"``, ``"hinge"`` or ``"exp"``.
    Returns: ``[d]`` float64 unit vector, to about 1e-11 degrees: BTL and exp in d = 2, 3 by hemisphere
      quadrature with the certified Newton fit; hinge, every loss in d >= 4, and nearly parallel voters
      (|theta*| > 50) by the exact one-dimensional reduction :func:`uniform_loss` with a
      finite-difference Newton (the sampled loss :func:`coverage_rows` is its Monte Carlo cross-check in
      d >= 4).
    Raises:
      ValueError: all voters one direction (no finite optimum), bad voters or weights, unknown loss.
    """
    return uniform_coverage_fit(voters, weights, loss=loss).direction


# ---------------------------------------------------------------------------------------------------
# BTL closed form
# ---------------------------------------------------------------------------------------------------


def kappa(d: int) -> float:
    """``E|x_1|`` for x uniform on S^{d-1}: ``Gamma(d/2) / (sqrt(pi) Gamma((d+1)/2))`` (2/pi, 1/2, ...)."""
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


def _x1_mean(f, d: int, width: float = 1.0) -> float:
    """``E f(x_1)`` for x uniform on S^{d-1} (density of x_1 proportional to (1 - t^2)^((d-3)/2)).

    The quadrature is split at x_1 = 0 and at ``+-k width`` (k = 1, 4, 16, 64, those inside (-1, 1)):
    ``width`` is the scale of a feature of ``f`` at 0 (a kink or a spike of width 1/rho), which adaptive
    quadrature would otherwise step over when it is far below its first nodes' spacing."""
    ts = sorted({0.0} | {s * k * width for k in (1, 4, 16, 64) for s in (-1, 1) if k * width < 1})
    if d == 2:
        return integrate.quad(lambda a: f(math.cos(a)), 0, math.pi, epsabs=1e-14, epsrel=1e-13,
                              limit=400, points=[math.acos(t) for t in ts])[0] / math.pi
    k = (d - 3) / 2
    norm = special.beta(0.5, (d - 1) / 2)
    return integrate.quad(lambda t: f(t) * (1 - t * t) ** k, -1, 1, epsabs=1e-14, epsrel=1e-13,
                          limit=400, points=ts)[0] / norm


def rho_equation(rho: float, W: float, u_norm: float, d: int, *, gap: float | None = None) -> float:
    """Residual of the BTL length equation ``W E[(sigma(rho x_1) - 1/2) x_1] - (kappa_d/2) |u|``, evaluated as
    ``(kappa_d/2) (W - |u|) - W E[|x_1| sigma(-rho |x_1|)]`` (the same, since ``(sigma(r t) - 1/2) t =
    |t|/2 - |t| sigma(-r |t|)`` and ``E|x_1| = kappa_d``): both terms are small when the voters nearly
    agree, and this form computes them without the cancellation of two O(1) terms, so rho* stays accurate
    as ``W - |u|`` -> 0 (rho* ~ pi sqrt(W / (6 (W - |u|))) in d = 2). ``gap``: ``W - |u|`` computed without
    cancellation (default ``W - u_norm``)."""
    gap = W - u_norm if gap is None else gap
    return (0.5 * kappa(d) * gap
            - W * _x1_mean(lambda t: abs(t) * special.expit(-rho * abs(t)), d, width=1.0 / max(rho, 1.0)))


def btl_uniform_closed_form(voters, weights=None) -> tuple[np.ndarray, float]:
    """``(direction [d], rho*)`` of the BTL uniform-coverage optimum: direction ``u/|u|`` with
    ``u = sum_i w_i v_i/|v_i|`` and rho* the root of :func:`rho_equation` (derived here).

    Raises: ValueError: ``|u| >= W`` (all voters one direction: no finite optimum).
    """
    _, V, w = validate(None, voters, weights, need_candidates=False)
    d = V.shape[1]
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    u = (w[:, None] * Vh).sum(0)
    W, un = float(w.sum()), float(np.linalg.norm(u))
    # W - |u| = (W^2 - |u|^2) / (W + |u|), W^2 - |u|^2 = sum_ij w_i w_j |v_i - v_j|^2 / 2: no cancellation
    # (W - |u| itself loses ~1e-16 / (W - |u|) relative, 4e-9 for voters 0.04 deg apart)
    diff = np.linalg.norm(Vh[:, None, :] - Vh[None, :, :], axis=-1)
    gap = float(0.5 * (w @ diff**2 @ w) / (W + un))
    if gap <= 1e-12 * W:
        raise ValueError("|u| = W: all voters point the same way, no finite optimum")
    hi = 1.0
    while rho_equation(hi, W, un, d, gap=gap) < 0:
        hi *= 2
    rho = optimize.brentq(lambda r: rho_equation(r, W, un, d, gap=gap), 0.0, hi, xtol=1e-15,
                          rtol=4 * np.finfo(float).eps)
    return u / un, float(rho)


# ---------------------------------------------------------------------------------------------------
# Finite samples: the asymptotic angle
# ---------------------------------------------------------------------------------------------------


def asymptotic_angle_constant(voters, weights=None, *, loss: str = "btl", n_mc: int = 2**20,
                              seed: int = 0) -> dict:
    """Predicted mean angle between the fit on N uniform comparisons and the uniform-coverage optimum:
    ``E angle ~ c / sqrt(N)`` (our derivation, not the paper's: the M-estimator's sandwich covariance
    ``H^-1 G H^-1 / N`` with ``H = E grad^2 f``, ``G = E grad f grad f^T`` of the per-comparison loss
    ``f(theta; x) = sum_i w_i l(<theta, x> s_i(x))`` at theta*, projected orthogonally to theta*).

    H comes from the quadrature rows (d <= 3), G and the Gaussian norm mean from ``n_mc`` Monte Carlo
    draws (``jax.random.key(seed)``; relative error about ``1/sqrt(n_mc)``).

    Returns: ``{"c_rad": c (radians), "c_deg": c in degrees, "theta": theta*, "cov": N * Cov}``.
    """
    check_loss(loss)
    if loss not in SMOOTH_LOSSES:
        raise ValueError("the asymptotic angle needs a smooth loss")
    V, w = _check_coverage(voters, weights)
    d = V.shape[1]
    cf = uniform_coverage_fit(V, w, loss=loss)
    th = cf.theta
    rows = coverage_rows(V, w, loss=loss)
    with float64():
        m = rows.Z @ th
        H = np.asarray((rows.Z * np.asarray(rows.w * d2loss(loss, jnp.asarray(m)))[:, None]).T @ rows.Z)
        k1, k2 = jax.random.split(jax.random.key(seed))
        x = jax.random.normal(k1, (n_mc, d))
        x = x / jnp.linalg.norm(x, axis=1, keepdims=True)
        s = jnp.sign(x @ jnp.asarray(V.T))
        mx = (x @ jnp.asarray(th))[:, None] * s
        c = jnp.sum(jnp.asarray(w) * dloss(loss, mx) * s, axis=1)
        G = np.asarray((x * (c**2)[:, None]).T @ x / n_mc)
        Hi = np.linalg.inv(H)
        C = Hi @ G @ Hi
        t = th / np.linalg.norm(th)
        P = np.eye(d) - np.outer(t, t)
        lam = np.clip(np.linalg.eigvalsh(P @ C @ P), 0, None)
        g = jax.random.normal(k2, (n_mc, d))
        mean_norm = float(jnp.mean(jnp.sqrt(g**2 @ jnp.asarray(lam))))
    c_rad = mean_norm / float(np.linalg.norm(th))
    return {"c_rad": c_rad, "c_deg": math.degrees(c_rad), "theta": th, "cov": C}


def voters_from_angles(angles_deg) -> np.ndarray:
    """``[k, 2]`` unit voters at the given angles (degrees)."""
    a = np.radians(np.asarray(angles_deg, np.float64))
    return np.stack([np.cos(a), np.sin(a)], 1)
