"""Loss-based reward models of linear social choice: data, votes, features, losses, fits, certificates.

Setting (Ge et al., NeurIPS 2024, arXiv 2405.14758, Section 2; brief ``shared/papers/social_choice.md`` §1):
candidates are feature vectors ``x_c`` in R^d, voters are direction vectors ``v_i`` with weights ``w_i``,
and voter ``i`` prefers ``a`` to ``b`` when ``<v_i, x_a - x_b> > 0``; a voter who scores ``a`` and ``b``
equally casts no vote on that pair (brief, Errata §4.4). The reward of candidate ``c`` is
``r(c) = <theta, phi(x_c)>`` with ``phi`` the identity (``degree=1``) or the monomials of degree 1..D
(:func:`monomial_exponents`; the constant drops out of every difference).

A comparison won by margin ``m = r(preferred) - r(other)`` costs ``l(m)``: BTL ``log(1 + e^-m)``, hinge
``max(0, 1 - m)``, exponential ``e^-m``. The fit minimises ``sum_j w_j l(<theta, z_j>)`` over comparison
rows ``z_j`` (lifted difference preferred - other) with weights ``w_j`` (voter weights or counts summed
over the voters who cast that vote). No regularisation.

Every comparison set reduces to rows ``(Z [m, p], w [m])``; the candidate data (:func:`comparison_rows`),
pair data (:func:`pair_rows`) and uniform coverage (``coverage.py``) all do. The smooth losses are fitted
by a damped Newton method in JAX (:func:`newton_fit`, jit-able and vmap-able, used by the simulations
too) and certified by :func:`fit_certificate`: ``|theta_hat - theta*| <= |grad| / mu`` with ``mu`` a
lower bound on the Hessian's smallest eigenvalue over the whole ball that must contain ``theta*``
(brief, Errata §4.1), the gradient norm inflated by a bound on its float64 rounding error. The hinge fit
is a linear program (HiGHS); its exact rational certificate lives in ``exact.py``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import partial
from numbers import Rational

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import linprog

from theory.numerics import float64, gap_rank

LOSSES = ("btl", "hinge", "exp")
SMOOTH_LOSSES = ("btl", "exp")
EPS = float(np.finfo(np.float64).eps)


# ---------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------


def _is_exact(a: np.ndarray) -> bool:
    return a.dtype == object


def as_points(x, name: str, *, exact: bool = False) -> np.ndarray:
    """``x`` as a 2-D array of finite numbers: float64, or (``exact``) an object array of ``Fraction``s
    (ints, ``Fraction``, sympy Rationals and floats convert exactly).

    Raises:
      ValueError: not 2-D, empty, or a non-finite entry; TypeError: a non-numeric entry.
    """
    a = np.asarray(x, dtype=object)
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise ValueError(f"{name} must be a non-empty 2-D array [count, dim], got shape {a.shape}")
    if exact:
        return np.vectorize(to_fraction, otypes=[object])(a)
    try:
        f = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must hold numbers") from None
    if not np.all(np.isfinite(f)):
        raise ValueError(f"{name} must be finite")
    return f


def to_fraction(v) -> Fraction:
    """An exact ``Fraction`` from an int, float (exactly), ``Fraction`` or sympy Rational.

    Raises:
      ValueError: a non-finite float; TypeError: anything else.
    """
    if isinstance(v, Fraction):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"expected a number, got {v!r}")
    if isinstance(v, (int, np.integer)):
        return Fraction(int(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise ValueError(f"entries must be finite, got {v!r}")
        return Fraction(float(v))
    if isinstance(v, Rational):
        return Fraction(int(v.numerator), int(v.denominator))
    if hasattr(v, "p") and hasattr(v, "q"):  # sympy Rational
        return Fraction(int(v.p), int(v.q))
    raise TypeError(f"expected a rational number, got {type(v).__name__}")


def validate(candidates, voters, weights=None, *, exact: bool = False, need_candidates: bool = True):
    """Check and convert an instance. Returns ``(X [n, d], V [k, d], w [k])`` (float64, or Fractions when
    ``exact``); ``weights=None`` means weight 1 per voter.

    Raises:
      ValueError (one line each): voters and candidates of different dimension, duplicate candidates,
        fewer than two candidates, a zero voter, weights of the wrong length, a negative or non-finite
        weight, or all weights zero.
    """
    X = as_points(candidates, "candidates", exact=exact) if need_candidates else None
    V = as_points(voters, "voters", exact=exact)
    if X is not None:
        if X.shape[1] != V.shape[1]:
            raise ValueError(f"voters have dimension {V.shape[1]} but candidates have dimension {X.shape[1]}")
        if X.shape[0] < 2:
            raise ValueError(f"need at least two candidates, got {X.shape[0]}")
        seen: dict[tuple, int] = {}
        for i, row in enumerate(X.tolist()):
            key = tuple(row)
            if key in seen:
                raise ValueError(f"candidates {seen[key]} and {i} are identical ({list(key)}); candidates "
                                 "must be distinct")
            seen[key] = i
    for i, row in enumerate(V.tolist()):
        if all(v == 0 for v in row):
            raise ValueError(f"voter {i} is the zero vector and ranks nothing")
    k = V.shape[0]
    if weights is None:
        w = np.array([Fraction(1)] * k, dtype=object) if exact else np.ones(k)
    else:
        w = np.asarray(weights, dtype=object).reshape(-1)
        if w.shape[0] != k:
            raise ValueError(f"weights must have one entry per voter ({k}), got {w.shape[0]}")
        w = np.vectorize(to_fraction, otypes=[object])(w) if exact else np.asarray(weights, np.float64)
        if not exact and not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if any(x < 0 for x in w.tolist()):
            raise ValueError("weights must be non-negative")
        if not any(x > 0 for x in w.tolist()):
            raise ValueError("at least one weight must be positive")
    return X, V, w


def check_loss(loss: str) -> str:
    """Raise ValueError unless ``loss`` is one of :data:`LOSSES`."""
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    return loss


def check_degree(degree) -> int:
    """Raise ValueError unless ``degree`` is an integer >= 1."""
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
    return int(degree)


# ---------------------------------------------------------------------------------------------------
# Features and votes
# ---------------------------------------------------------------------------------------------------


def monomial_exponents(d: int, degree: int) -> tuple[tuple[int, ...], ...]:
    """Exponent vectors of the lifted features, in order: degree 1, then 2, ..., then ``degree``; within a
    degree, ``itertools.combinations_with_replacement`` order. For d = 2, degree 3:
    x, y, x^2, xy, y^2, x^3, x^2y, xy^2, y^3. The constant is left out (it cancels in every difference).

    Returns: a tuple of ``[d]`` exponent tuples; its length is the parameter count ``p``.
    """
    check_degree(degree)
    out = []
    for k in range(1, degree + 1):
        for combo in itertools.combinations_with_replacement(range(d), k):
            e = [0] * d
            for j in combo:
                e[j] += 1
            out.append(tuple(e))
    return tuple(out)


def lift(X, degree: int = 1):
    """Lifted features ``phi(X)``: ``[n, d] -> [n, p]`` in the order of :func:`monomial_exponents`.
    Works on numpy float arrays, object arrays of Fractions (exact) and JAX arrays (traceable)."""
    degree = check_degree(degree)
    if degree == 1:
        return X
    exps = monomial_exponents(X.shape[1], degree)
    xp = jnp if isinstance(X, jax.Array) else np
    cols = []
    for e in exps:
        c = None
        for j, k in enumerate(e):
            if k:
                t = X[:, j] ** k
                c = t if c is None else c * t
        cols.append(c)
    return xp.stack(cols, axis=1)


def pair_index(n: int) -> np.ndarray:
    """``[n (n - 1) / 2, 2]`` index pairs ``(a, b)`` with ``a < b``, row-major."""
    a, b = np.triu_indices(n, 1)
    return np.stack([a, b], axis=1)


def vote_signs(X: np.ndarray, V: np.ndarray, pairs: np.ndarray) -> np.ndarray:
    """Exact signs of ``<v_i, x_a - x_b>``: ``[len(pairs), k]`` ints in {-1, 0, 1}.

    Float data: computed in float64 and recomputed exactly (``Fraction`` of the floats) wherever the
    float value is within its rounding bound of 0, so ties are detected exactly (brief, Errata §4.4).
    """
    a, b = pairs[:, 0], pairs[:, 1]
    if _is_exact(X):
        D = X[a] - X[b]
        S = D.dot(V.T)
        return np.vectorize(lambda s: (s > 0) - (s < 0), otypes=[np.int64])(S)
    D = X[a] - X[b]
    S = D @ V.T
    d = X.shape[1]
    bound = 4 * (d + 2) * EPS * ((np.abs(X[a]) + np.abs(X[b])) @ np.abs(V).T)
    sign = np.sign(S).astype(np.int64)
    for r, i in zip(*np.nonzero(np.abs(S) <= bound)):
        s = sum(Fraction(float(V[i, j])) * (Fraction(float(X[a[r], j])) - Fraction(float(X[b[r], j])))
                for j in range(d))
        sign[r, i] = (s > 0) - (s < 0)
    return sign


@dataclass(frozen=True)
class Rows:
    """Comparison rows of an instance: the fit minimises ``sum_j w[j] l(<theta, Z[j]>)``.

    Attributes:
      Z: ``[m, p]`` lifted differences, preferred minus other (float64, or Fractions for exact data).
      w: ``[m]`` total weight (or count) of the voters casting that vote, all > 0.
      pairs: ``[m, 2]`` candidate indices ``(preferred, other)``; ``-1`` for pair data.
      contested: ``[m]`` whether the opposite vote is also cast (both orientations present).
    """

    Z: np.ndarray
    w: np.ndarray
    pairs: np.ndarray
    contested: np.ndarray


def comparison_rows(candidates, voters, weights=None, degree: int = 1, *, exact: bool = False) -> Rows:
    """The comparison rows of a candidate instance (every voter votes on every pair it does not tie).

    Args:
      candidates: ``[n, d]``; voters: ``[k, d]``; weights: ``[k]`` (default all 1); degree: reward degree.
      exact: keep Fractions (for the exact hinge certificate).
    Raises:
      ValueError: see :func:`validate`.
    """
    X, V, w = validate(candidates, voters, weights, exact=exact)
    degree = check_degree(degree)
    pairs = pair_index(X.shape[0])
    sign = vote_signs(X, V, pairs)
    F = lift(X, degree)
    Zab = F[pairs[:, 0]] - F[pairs[:, 1]]
    plus = (sign > 0).astype(object if exact else np.float64).dot(w)
    minus = (sign < 0).astype(object if exact else np.float64).dot(w)
    keep_p, keep_m = np.array([x > 0 for x in plus]), np.array([x > 0 for x in minus])
    Z = np.concatenate([Zab[keep_p], -Zab[keep_m]])
    wts = np.concatenate([plus[keep_p], minus[keep_m]])
    pr = np.concatenate([pairs[keep_p], pairs[keep_m][:, ::-1]])
    both = keep_p & keep_m
    contested = np.concatenate([both[keep_p], both[keep_m]])
    if Z.shape[0] == 0:
        raise ValueError("no voter prefers any candidate to another (every voter ties every pair)")
    return Rows(Z, wts, pr, contested)


def unrestricted_rows(candidates, voters, weights=None) -> Rows:
    """The comparison rows of an instance for an unrestricted reward (one free score per candidate: the
    features are the candidates' indicator vectors, ``Z = e_a - e_b``), the class every polynomial degree
    tends to and the nonparametric BTL of Noothigattu, Peters and Procaccia (NeurIPS 2020), which is
    Pareto optimal. ``theta [n]`` are the rewards themselves (defined up to a constant: the fit lives in
    the span of the rows).

    Raises: ValueError: as :func:`comparison_rows`.
    """
    rows = comparison_rows(candidates, voters, weights)
    E = np.eye(np.asarray(candidates).shape[0])
    return Rows(E[rows.pairs[:, 0]] - E[rows.pairs[:, 1]], rows.w, rows.pairs, rows.contested)


def pair_rows(diffs, voters, weights=None, *, exact: bool = False) -> Rows:
    """Comparison rows of pair data (brief §1, pair-data limit): each difference vector ``diffs[j]`` is
    labelled by every voter, who prefers the orientation ``sign<v_i, diffs[j]> diffs[j]``.

    Args:
      diffs: ``[N, d]`` difference vectors (any length; zero rows are not allowed).
      voters: ``[k, d]``; weights: ``[k]``.
    Raises:
      ValueError: a zero difference, mismatched dimensions, bad weights.
    """
    Dx = as_points(diffs, "diffs", exact=exact)
    _, V, w = validate(None, voters, weights, exact=exact, need_candidates=False)
    if Dx.shape[1] != V.shape[1]:
        raise ValueError(f"voters have dimension {V.shape[1]} but diffs have dimension {Dx.shape[1]}")
    for j, row in enumerate(Dx.tolist()):
        if all(v == 0 for v in row):
            raise ValueError(f"difference {j} is the zero vector")
    S = Dx.dot(V.T)
    sign = np.vectorize(lambda s: (s > 0) - (s < 0), otypes=[np.int64])(S) if exact else np.sign(S)
    plus = (sign > 0).astype(object if exact else np.float64).dot(w)
    minus = (sign < 0).astype(object if exact else np.float64).dot(w)
    keep_p, keep_m = np.array([x > 0 for x in plus]), np.array([x > 0 for x in minus])
    Z = np.concatenate([Dx[keep_p], -Dx[keep_m]])
    wts = np.concatenate([plus[keep_p], minus[keep_m]])
    both = keep_p & keep_m
    pr = -np.ones((Z.shape[0], 2), np.int64)
    return Rows(Z, wts, pr, np.concatenate([both[keep_p], both[keep_m]]))


# ---------------------------------------------------------------------------------------------------
# Losses (JAX; m is the margin of the preferred candidate)
# ---------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------
# Newton fit and its certificate (JAX: jit-able, vmap-able)
# ---------------------------------------------------------------------------------------------------

# Small dense linear algebra in plain jnp operations. jnp.linalg on CPU calls jaxlib's LAPACK kernels,
# which split a batch over XLA's intra-op thread pool and wait for it; two such kernels running at once
# in a vmapped graph can hold every pool thread (2 on a 2-core machine) and deadlock (seen with jaxlib
# 0.10.2: both tf_XLAEigen threads blocked in ParallelBatchMap of dsyevd). These are fori_loops over the
# (small) dimension p with no custom call (unrolled Python loops compiled 15x slower).


def cholesky(A):
    """``(L, ok)``: the lower Cholesky factor of a symmetric ``[p, p]`` matrix and whether every pivot was
    positive (A positive definite up to rounding). Plain jnp in a ``fori_loop`` over columns, vmap-able."""
    p = A.shape[-1]
    rows = jnp.arange(p)

    def col(j, carry):
        L, ok = carry
        lj = L[j]  # row j: only its first j entries are set so far
        s = A[j, j] - lj @ lj
        ok = ok & (s > 0)
        d = jnp.sqrt(jnp.where(s > 0, s, 1.0))
        c = (A[:, j] - L @ lj) / d
        return L.at[:, j].set(jnp.where(rows > j, c, jnp.where(rows == j, d, 0.0))), ok

    return jax.lax.fori_loop(0, p, col, (jnp.zeros_like(A), jnp.asarray(True)))


def _chol_solve(L, b):
    """Solve ``L L^T x = b`` by forward and back substitution (plain jnp, ``fori_loop``)."""
    p = L.shape[-1]
    # unset entries are 0, so full dot products only see the already solved ones
    y = jax.lax.fori_loop(0, p, lambda i, y: y.at[i].set((b[i] - L[i] @ y) / L[i, i]), jnp.zeros_like(b))
    return jax.lax.fori_loop(0, p, lambda k, x: x.at[p - 1 - k].set(
        (y[p - 1 - k] - L[:, p - 1 - k] @ x) / L[p - 1 - k, p - 1 - k]), jnp.zeros_like(b))


def spd_solve(A, b):
    """Solve ``A x = b`` for symmetric positive definite ``A [p, p]`` by :func:`cholesky` (plain jnp);
    NaN where A is not positive definite."""
    L, ok = cholesky(A)
    return jnp.where(ok, _chol_solve(L, b), jnp.nan)


def pd_above(A, c):
    """Whether ``A - c I`` is positive definite (one :func:`cholesky`; plain jnp, vmap-able)."""
    return cholesky(A - c * jnp.eye(A.shape[-1], dtype=A.dtype))[1]


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
        v = _chol_solve(L, v)
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
    ``|theta - theta*| <= |g| / mu(r)`` (strong convexity on the ball; brief, Errata §4.1). Here
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


# ---------------------------------------------------------------------------------------------------
# Existence of a finite optimum
# ---------------------------------------------------------------------------------------------------


def separating_direction(Z: np.ndarray, contested: np.ndarray | None = None) -> np.ndarray | None:
    """A nonzero ``theta`` with ``Z theta >= 0`` and ``Z theta != 0`` (the rows are separable, so BTL and
    exponential fits have no finite optimum: the loss keeps falling along ``theta``), or ``None``.

    Fast path: when the contested rows (both orientations present) span R^p no such direction exists.
    Otherwise an LP (HiGHS): maximise ``sum s_j`` with ``0 <= s_j <= <theta, z_j>``, ``s <= 1``,
    ``theta`` in the unit box; a direction is reported when the optimum exceeds ``1e-9 max|z|``.
    """
    Z = np.asarray(Z, np.float64)
    m, p = Z.shape
    if contested is not None and np.any(contested):
        zc = Z[np.asarray(contested, bool)]
        if gap_rank(np.linalg.svd(zc, compute_uv=False))[0] == p:
            return None
    # variables [theta (p), s (m)]; maximise sum s  <=>  minimise -sum s
    c = np.r_[np.zeros(p), -np.ones(m)]
    A = np.hstack([-Z, np.eye(m)])  # s_j - <theta, z_j> <= 0
    res = linprog(c, A_ub=A, b_ub=np.zeros(m), bounds=[(-1, 1)] * p + [(0, 1)] * m, method="highs")
    if res.status != 0:
        raise RuntimeError(f"separability LP failed: {res.message}")
    scale = max(1.0, float(np.abs(Z).max()))
    return res.x[:p] if -res.fun > 1e-9 * scale else None


def check_finite_optimum(rows: Rows, loss: str) -> None:
    """Raise ValueError when a smooth loss (BTL, exponential) has no finite optimum on ``rows`` (the
    comparisons are separable: brief §6, BTL MLE existence). Hinge always attains its minimum."""
    if loss in SMOOTH_LOSSES:
        sep = separating_direction(np.asarray(rows.Z, np.float64), rows.contested)
        if sep is not None:
            raise ValueError(f"no finite optimum for the {loss} fit: the comparisons are separable (theta ~ "
                             f"{np.round(sep, 4).tolist()} ranks every comparison correctly or tied), so "
                             "the loss decreases forever along it")


# ---------------------------------------------------------------------------------------------------
# Fits
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RewardFit:
    """A fitted reward and its certificate.

    Attributes:
      theta: ``[p]`` float64 parameters (monomial order of :func:`monomial_exponents`).
      loss: the loss; value: the loss at ``theta``.
      grad_norm: gradient norm at ``theta`` (smooth losses).
      mu: strong-convexity bound over the certification ball (smooth losses; nan for hinge).
      radius: certified ``|theta - theta*|`` (smooth losses; ``inf`` when not certified; nan for hinge,
        whose optimum need not be unique: certify hinge claims with exact infima instead).
      duality_gap: HiGHS primal - dual objective (hinge; 0.0 for smooth losses).
      iterations: Newton iterations (smooth) or 0.
      rank: dimension of the rows' span; when < p the fit lives in that span (min-norm optimum).
    """

    theta: np.ndarray
    loss: str
    value: float
    grad_norm: float
    mu: float
    radius: float
    duality_gap: float
    iterations: int
    rank: int

    def margin(self, z) -> tuple[float, bool]:
        """``(<theta, z>, certified)``: certified when the sign of ``<theta*, z>`` is provably the same
        (``|<theta, z>| > radius |z|`` plus rounding)."""
        z = np.asarray(z, np.float64)
        m = float(self.theta @ z)
        slack = self.radius * float(np.linalg.norm(z)) + 8 * EPS * float(np.abs(self.theta) @ np.abs(z))
        return m, bool(abs(m) > slack)


def hinge_lp(Z: np.ndarray, w: np.ndarray, constraints: np.ndarray | None = None):
    """The hinge fit as an LP (HiGHS dual simplex, a vertex): minimise ``sum w_j xi_j`` subject to
    ``xi_j >= 1 - <theta, z_j>``, ``xi >= 0`` and ``<theta, c> >= 0`` for each row of ``constraints``.

    Returns: scipy's ``OptimizeResult`` (``x = [theta (p), xi (m)]``).
    Raises: RuntimeError if HiGHS does not report an optimum.
    """
    Z = np.asarray(Z, np.float64)
    w = np.asarray(w, np.float64)
    m, p = Z.shape
    A = np.hstack([-Z, -np.eye(m)])
    b = -np.ones(m)
    if constraints is not None and len(constraints):
        C = np.asarray(constraints, np.float64).reshape(-1, p)
        A = np.vstack([A, np.hstack([-C, np.zeros((C.shape[0], m))])])
        b = np.r_[b, np.zeros(C.shape[0])]
    res = linprog(np.r_[np.zeros(p), w], A_ub=A, b_ub=b, bounds=[(None, None)] * p + [(0, None)] * m,
                  method="highs-ds")
    if res.status != 0:
        raise RuntimeError(f"hinge LP: {res.message}")
    return res


def fit_rows(rows: Rows, loss: str = "btl", *, check: bool = True) -> RewardFit:
    """Fit ``theta`` to comparison rows (candidate data, pair data or coverage nodes).

    Smooth losses: Newton in float64 (JAX) on the rows' span, with :func:`fit_certificate`. Hinge: the
    LP :func:`hinge_lp`. ``check`` runs :func:`check_finite_optimum` first.

    Raises:
      ValueError: unknown loss; no finite optimum (separable data, smooth losses).
    """
    check_loss(loss)
    Z = np.asarray(rows.Z, np.float64)
    w = np.asarray(rows.w, np.float64)
    m, p = Z.shape
    if loss == "hinge":
        res = hinge_lp(Z, w)
        gap = float(res.fun - (-res.ineqlin.marginals).sum())
        return RewardFit(res.x[:p], loss, float(res.fun), math.nan, math.nan, math.nan, gap, 0, p)
    if check:
        check_finite_optimum(rows, loss)
    rank, _ = gap_rank(np.linalg.svd(Z, compute_uv=False))
    Q = np.eye(p) if rank == p else np.linalg.svd(Z, full_matrices=False)[2][:rank].T
    Zr = Z @ Q
    mb = _bucket(m)
    Zp = np.zeros((mb, rank))
    Zp[:m] = Zr
    wp = np.zeros(mb)
    wp[:m] = w
    with float64():
        th, it, cert = _fit_and_certify(jnp.asarray(Zp), jnp.asarray(wp), loss)
        th = np.asarray(th)
        cert = {k: float(v) for k, v in cert.items()}
        value = float(jnp.sum(jnp.asarray(w) * ell(loss, jnp.asarray(Zr @ th))))
    if not np.all(np.isfinite(th)):
        raise ValueError(f"no finite optimum for the {loss} fit (Newton diverged)")
    return RewardFit(Q @ th, loss, value, cert["grad_norm"], cert["mu"], cert["radius"], 0.0, int(it), rank)


def fit_reward_certified(candidates, voters, weights=None, *, loss: str = "btl", degree: int = 1) -> RewardFit:
    """:func:`fit_reward` with its certificate (:class:`RewardFit`). Same arguments and errors."""
    check_loss(loss)
    return fit_rows(comparison_rows(candidates, voters, weights, degree), loss)


def fit_reward(candidates, voters, weights=None, *, loss: str = "btl", degree: int = 1) -> np.ndarray:
    """The loss-based rule of Ge et al. (Section 2; brief §1): the reward parameters minimising
    ``sum over voters i and pairs {a, b} of w_i l(r(preferred) - r(other))``, unregularised.

    Args:
      candidates: ``[n, d]`` distinct feature vectors.
      voters: ``[k, d]`` direction vectors; voter i prefers a to b when ``<v_i, x_a - x_b> > 0`` and casts
        no vote on a pair it scores equally.
      weights: ``[k]`` non-negative voter weights (default all 1).
      loss: ``"btl"`` (``log(1+e^-m)``), ``"hinge"`` (``max(0, 1-m)``) or ``"exp"`` (``e^-m``).
      degree: 1 for linear rewards, D >= 2 for polynomials of degree <= D in the monomials of
        :func:`monomial_exponents` (x, y, x^2, xy, y^2, ... for d = 2).
    Returns:
      ``theta`` ``[p]`` float64. BTL/exp: the unique minimiser on the span of the comparison rows
      (certified by :func:`fit_certificate`; see :func:`fit_reward_certified`). Hinge: an optimal vertex
      of the LP (optima need not be unique).
    Raises:
      ValueError (one line): mismatched dimensions, duplicate candidates, bad weights, unknown loss or
        degree, no vote cast, or separable data where BTL/exp has no finite optimum.
    """
    return fit_reward_certified(candidates, voters, weights, loss=loss, degree=degree).theta


def rewards(candidates, theta, degree: int = 1) -> np.ndarray:
    """``[n]`` rewards ``<theta, phi(x_c)>`` of each candidate."""
    X = as_points(candidates, "candidates")
    th = np.asarray(theta, np.float64)
    F = lift(X, degree)
    if F.shape[1] != th.shape[0]:
        raise ValueError(f"theta has {th.shape[0]} entries but degree {degree} in dimension {X.shape[1]} "
                         f"has {F.shape[1]} features")
    return F @ th


def loss_value(rows: Rows, theta, loss: str) -> float:
    """``sum_j w_j l(<theta, z_j>)`` in float64."""
    with float64():
        return float(jnp.sum(jnp.asarray(np.asarray(rows.w, np.float64)) * ell(
            loss, jnp.asarray(np.asarray(rows.Z, np.float64) @ np.asarray(theta, np.float64)))))


def angle_deg(a, b) -> float:
    """Angle in degrees between two nonzero vectors (float64, via atan2 for accuracy near 0)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    cross = np.linalg.norm(np.outer(a, b) - np.outer(b, a)) / math.sqrt(2)
    return math.degrees(math.atan2(cross, float(a @ b)))


def jsonable_fraction(q: Fraction) -> str:
    """``"p/q"`` text of a Fraction (for results and reports)."""
    return f"{q.numerator}/{q.denominator}" if q.denominator != 1 else str(q.numerator)

