"""An instance of linear social choice reduced to comparison rows: validation (exact or float64), the
lifted monomial features, exact vote signs (ties detected exactly) and the rows ``(Z, w)`` of candidate data,
pair data and the unrestricted reward (Ge et al., NeurIPS 2024, Section 2). The setting is described in
:mod:`theory.social_choice.model`."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from numbers import Rational

import jax
import jax.numpy as jnp
import numpy as np

EPS = float(np.finfo(np.float64).eps)


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
    """An exact ``Fraction`` from an int, float (exactly), ``Fraction``, sympy Rational or python-flint fmpq.

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
    if hasattr(v, "p") and hasattr(v, "q"):  # python-flint fmpq (sympy's Rational is a numbers.Rational)
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
        w = np.vectorize(to_fraction, otypes=[object])(w) if exact else np.asarray(w, np.float64)
        if not exact and not np.all(np.isfinite(w)):
            raise ValueError("weights must be finite")
        if any(x < 0 for x in w.tolist()):
            raise ValueError("weights must be non-negative")
        if not any(x > 0 for x in w.tolist()):
            raise ValueError("at least one weight must be positive")
    return X, V, w


def check_degree(degree) -> int:
    """Raise ValueError unless ``degree`` is an integer >= 1."""
    if isinstance(degree, bool) or not isinstance(degree, (int, np.integer)) or degree < 1:
        raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
    return int(degree)


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
    float value is within its rounding bound of 0, so ties are detected exactly (a tie casts no vote).
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
    """Comparison rows of pair data (H&K §5, pair-data limit): each difference vector ``diffs[j]`` is
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
