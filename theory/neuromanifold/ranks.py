"""Exact Jacobians of ``W -> (f_W(x_1), ..., f_W(x_M))`` over ``F_p`` or ``Q`` and the generic rank."""

from __future__ import annotations

import functools
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import flint
import numpy as np

from theory import numerics
from theory.neuromanifold.activations import _to_fraction, activation
from theory.neuromanifold.architectures import (
    MAX_POINTS,
    _unflatten_cnn,
    _unflatten_mlp,
    check_rank_size,
    cnn_layer_sizes,
)
from theory.numerics import PRIME, check_int, check_limit

P_BOUND = 2**31  # residues are int64: a product of two must fit, so p < 2^31


def _check_field_p(field: str, p) -> int | None:
    """The modulus for ``field`` (None for ``"QQ"``). Raises ValueError: unknown field, or a ``p`` that
    is not a prime below 2^31 (int64 residue products; flint aborts on a composite modulus)."""
    if field == "modp":
        return numerics.check_prime(p, below=P_BOUND)
    if field == "QQ":
        return None
    raise ValueError(f"field must be 'modp' or 'QQ', got {field!r}")


def _derivative(cs: Sequence[Fraction]) -> tuple[Fraction, ...]:
    """Coefficients of ``s'`` from those of ``s`` (lowest degree first; ``(0,)`` for a constant)."""
    return tuple(i * c for i, c in enumerate(cs))[1:] or (Fraction(0),)


class _Ring:
    """Arithmetic on numpy arrays: int64 residues mod p (``p`` set) or object arrays of flint.fmpq."""

    def __init__(self, p: int | None):
        self.p = p

    def red(self, a):
        """``a`` reduced mod p (unchanged over Q)."""
        return a % self.p if self.p is not None else a

    def const(self, c: Fraction):
        if self.p is None:
            return flint.fmpq(c.numerator, c.denominator)
        den = c.denominator % self.p
        if den == 0:
            raise ValueError(f"coefficient {c} has a denominator divisible by the prime {self.p}")
        return (c.numerator % self.p) * pow(den, -1, self.p) % self.p

    def array(self, ints):
        a = np.asarray(ints)
        if self.p is not None:
            return np.asarray(a, dtype=np.int64) % self.p
        out = np.empty(a.shape, dtype=object)
        for idx, v in np.ndenumerate(a):
            out[idx] = v if isinstance(v, flint.fmpq) else flint.fmpq(_to_fraction(v, "entry").numerator,
                                                                     _to_fraction(v, "entry").denominator)
        return out

    def zeros(self, shape):
        if self.p is not None:
            return np.zeros(shape, dtype=np.int64)
        out = np.empty(shape, dtype=object)
        out.fill(flint.fmpq(0))
        return out

    def one(self):
        if self.p is not None:
            return 1
        return flint.fmpq(1)

    def coeffs(self, cs) -> tuple:
        """The Fractions ``cs`` (lowest degree first) as ring elements, for :meth:`horner`: an MLP Jacobian
        converts them once, not at every layer and output (neuromanifold_dimensions converted 800 thousand).
        Raises ValueError: a denominator divisible by ``p``."""
        return tuple(self.const(c) for c in cs)

    def horner(self, cc: tuple, z):
        """``sum c_i z^i`` elementwise, ``cc`` the ring elements of :meth:`coeffs`."""
        acc = self.zeros(z.shape) + cc[-1]
        for c in reversed(cc[:-1]):
            acc = self.red(self.red(acc * z) + c)
        return acc

    def poly(self, cs, z):
        """``sum c_i z^i`` (Horner), elementwise; ``cs`` a sequence of Fractions, lowest degree first."""
        return self.horner(self.coeffs(cs), z)

    def dpoly(self, cs, z):
        """``s'(z)`` elementwise."""
        return self.poly(_derivative(cs), z)

    def matmul(self, a, b):
        """``a @ b`` for ``a`` (M, n), ``b`` (n, q), each product reduced before summing."""
        return self.red(self.red(a[:, :, None] * b[None, :, :]).sum(axis=1))


def _mlp_eval_jacobian(widths, cs, theta, X, ring: _Ring):
    """Rows ``(output k, point m)``, columns the flattened parameters; entries in ``ring``."""
    Ws = _unflatten_mlp(theta, widths)
    L = len(Ws)
    # converted once here, and only when a hidden layer applies the activation
    s, ds = (ring.coeffs(cs), ring.coeffs(_derivative(cs))) if L > 1 else ((), ())
    hs, zs = [X], []
    for l, W in enumerate(Ws):
        z = ring.matmul(hs[-1], W.T)
        zs.append(z)
        if l < L - 1:
            hs.append(ring.horner(s, z))
    dzs = [ring.horner(ds, z) for z in zs[:-1]]  # s'(z) of each hidden layer, shared by every output
    M = X.shape[0]
    blocks = []
    for k in range(widths[-1]):
        g = ring.zeros((M, widths[-1]))
        g[:, k] = ring.one()
        cols = [None] * L
        for l in reversed(range(L)):
            cols[l] = ring.red(g[:, :, None] * hs[l][:, None, :]).reshape(M, -1)
            if l > 0:
                g = ring.red(ring.matmul(g, Ws[l]) * dzs[l - 1])
        blocks.append(np.concatenate(cols, axis=1))
    return np.concatenate(blocks, axis=0)


def _cnn_eval_jacobian(k, s, cs, theta, X, ring: _Ring):
    """Rows the points, columns the concatenated filters; entries in ``ring``."""
    ws = _unflatten_cnn(theta, k)
    d = cnn_layer_sizes(k, s)
    L = len(k)
    hs, zs, idxs = [X], [], []
    for l in range(L):
        stride = s[l] if l < len(s) else 1
        idx = stride * np.arange(d[l + 1])[:, None] + np.arange(k[l])[None, :]
        idxs.append(idx)
        G = hs[-1][:, idx]
        z = ring.red(ring.red(G * ws[l][None, None, :]).sum(axis=-1))
        zs.append(z)
        if l < L - 1:
            hs.append(ring.poly(cs, z))
    M = X.shape[0]
    g = ring.zeros((M, 1)) + ring.one()
    cols = [None] * L
    for l in reversed(range(L)):
        G = hs[l][:, idxs[l]]
        cols[l] = ring.red(ring.red(g[:, :, None] * G).sum(axis=1))
        if l > 0:
            C = ring.red(g[:, :, None] * ws[l][None, None, :])
            dh = ring.zeros((M, d[l]))
            for j in range(idxs[l].shape[0]):
                for m in range(idxs[l].shape[1]):
                    dh[:, idxs[l][j, m]] = dh[:, idxs[l][j, m]] + C[:, j, m]
            g = ring.red(ring.red(dh) * ring.dpoly(cs, zs[l - 1]))
    return np.concatenate(cols, axis=1)


def eval_jacobian(kind: str, shape: Any, activation_coeffs: Sequence[Any], theta, X,
                  field: Literal["modp", "QQ"] = "modp", p: int = PRIME) -> np.ndarray:
    """Exact Jacobian of ``W -> (f_W(x_1), ..., f_W(x_M))`` at ``theta``.

    Args:
      kind: ``"mlp"`` or ``"cnn"``; shape: widths or ``(filter_sizes, strides)``.
      theta: the ``N`` parameters (integers, or rationals for ``field="QQ"``), flattened as in the package
        docstring. X: ``(M, d_0)`` evaluation points.
      field: ``"modp"`` (int64 residues mod ``p``) or ``"QQ"`` (object array of ``flint.fmpq``).
      p: a prime below 2^31.
    Returns:
      ``(d_L * M, N)`` array (rows: output-major, then points).
    Raises:
      ValueError / TypeError: an invalid architecture, activation, field or ``p``, shapes of ``theta`` or
        ``X`` that do not match, or a size above the limits of :func:`check_rank_size`.
    Source: the paper's parametrisation ``phi``; its rank is the neuromanifold dimension (Thm 4.1, Thm 4.4).
    """
    cs = activation(activation_coeffs)
    ring = _Ring(_check_field_p(field, p))
    shp, n, d0 = check_rank_size(kind, shape, cs, field)
    th, Xr = ring.array(theta), ring.array(X)
    if th.shape != (n,):
        raise ValueError(f"theta must have shape ({n},), got {th.shape}")
    if Xr.ndim != 2 or Xr.shape[1] != d0:
        raise ValueError(f"X must have shape (M, {d0}), got {Xr.shape}")
    if kind == "mlp":
        return _mlp_eval_jacobian(shp, cs, th, Xr, ring)
    return _cnn_eval_jacobian(*shp, cs, th, Xr, ring)


def exact_rank(matrix: np.ndarray, field: Literal["modp", "QQ"] = "modp", p: int = PRIME) -> int:
    """Rank of an integer (mod ``p``) or rational matrix: :func:`theory.numerics.exact_rank`, with this
    package's default ``field="modp"`` (the Jacobians of :func:`eval_jacobian` are residues mod p).

    Args: matrix ``[m, n]``; field ``"modp"`` or ``"QQ"``; p a prime (``"modp"``).
    Returns: the rank, an int. Raises: as :func:`theory.numerics.exact_rank`.
    """
    return numerics.exact_rank(matrix, field, p)


@dataclass(frozen=True)
class RankReport:
    """Generic rank as the maximum of exact ranks at ``len(ranks)`` random points.

    ``n_params`` is ``N`` (or ``|k|``); ``n_eval`` the number of evaluation points per Jacobian."""

    rank: int
    ranks: tuple[int, ...]
    n_params: int
    n_eval: int
    field: str


def random_point(kind: str, shape: Any, rng: random.Random, field: str = "modp", p: int = PRIME,
                 n_eval: int | None = None):
    """A random nonzero parameter vector and ``n_eval`` (default ``N + 8``) random evaluation points.

    ``modp``: parameters uniform in ``1..p-1``, points uniform in ``0..p-1``. ``QQ``: nonzero integers
    in ``[-20, 20]`` and points in ``[-9, 9]``.

    Returns:
      ``(theta [N], X [n_eval, d_0])`` as object arrays of Python ints.
    Raises:
      ValueError / TypeError: invalid architecture, field, ``p`` or ``n_eval`` (an integer >= 1), or a
        size above the limits of :func:`check_rank_size`.
    """
    p = _check_field_p(field, p)
    _, n, d0 = check_rank_size(kind, shape, [0, 1])  # the activation does not matter here
    m = n + 8 if n_eval is None else check_int(n_eval, "n_eval", ge=1)
    check_rank_size(kind, shape, [0, 1], n_eval=m)
    if field == "modp":
        theta = [rng.randrange(1, p) for _ in range(n)]
        X = [[rng.randrange(0, p) for _ in range(d0)] for _ in range(m)]
    else:
        theta = [rng.choice([-1, 1]) * rng.randrange(1, 21) for _ in range(n)]
        X = [[rng.randrange(-9, 10) for _ in range(d0)] for _ in range(m)]
    return np.array(theta, dtype=object), np.array(X, dtype=object)


# Points (entries of theta and X, over all n_points) up to which _random_points keeps a net's draws for the
# next activation: neuromanifold_dimensions' nets need at most a few thousand; a library caller's large net
# is drawn afresh each time rather than held.
MAX_CACHED_ENTRIES = 100_000


def _random_points(kind: str, shape: Any, seed: Any, field: str, p: int | None, m: int, n_points: int,
                   entries: int) -> tuple:
    """The ``n_points`` points of :func:`random_point` drawn in turn from ``random.Random(seed)``: those
    :func:`generic_rank` uses. They do not depend on the activation, so a grid of activations over the
    same nets draws them once (neuromanifold_dimensions: 29 activations), kept in :func:`_cached_points`
    when ``seed`` is a hashable value other than None (None draws fresh points each call) and the points
    hold at most :data:`MAX_CACHED_ENTRIES` entries (``entries``: ``n_points (N + m d_0)``). ``shape`` is the
    validated, hashable one of ``check_rank_size``, ``p`` the validated prime (None for ``"QQ"``); the
    arrays are read-only."""
    cacheable = seed is not None
    try:
        hash(seed)
    except TypeError:  # an unhashable seed (a bytearray) is drawn from, never kept
        cacheable = False
    if cacheable and entries <= MAX_CACHED_ENTRIES:
        return _cached_points(kind, shape, seed, field, p, m, n_points)
    return _draw_points(kind, shape, seed, field, p, m, n_points)


@functools.lru_cache(maxsize=2048)
def _cached_points(kind, shape, seed, field, p, m, n_points) -> tuple:
    """:func:`_draw_points`, kept (arguments as :func:`_random_points`)."""
    return _draw_points(kind, shape, seed, field, p, m, n_points)


def _draw_points(kind, shape, seed, field, p, m, n_points) -> tuple:
    """The points of :func:`_random_points`, drawn (read-only arrays)."""
    rng = random.Random(seed)
    p = PRIME if p is None else p  # "QQ": random_point ignores p
    points = tuple(random_point(kind, shape, rng, field, p, m) for _ in range(n_points))
    for a in itertools.chain.from_iterable(points):
        a.setflags(write=False)
    return points


def generic_rank(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs: Sequence[Any],
                 n_points: int = 3, field: Literal["modp", "QQ"] = "modp", seed: int = 0,
                 p: int = PRIME) -> RankReport:
    """Generic rank of the parametrisation: max of exact Jacobian ranks at ``n_points`` random points.

    Stops early once the rank reaches ``N`` (it cannot go higher). Over ``F_p`` a rank is never above
    the rank over ``Q`` of the same integer matrix, so the maximum is a lower bound of the generic rank
    that is exact with probability ``1 - O(deg / p)`` per point (Schwartz-Zippel).

    Args:
      kind, shape, activation_coeffs: the architecture; n_points: integer in ``1..MAX_POINTS``;
      field: ``"modp"`` or ``"QQ"``; seed: an int; p: a prime below 2^31.
    Returns:
      A :class:`RankReport` (``N + 8`` evaluation points per Jacobian).
    Raises:
      TypeError / ValueError: invalid arguments; ValueError naming the limit for ``N > MAX_EXACT_PARAMS``,
        ``d_0 > MAX_INPUT_SIZE``, ``n_points > MAX_POINTS`` or (over Q) output degree ``> MAX_QQ_DEGREE``.
    Source: the dimension of the neuromanifold as the generic Jacobian rank (Thm 4.1, Thm 4.4).
    """
    cs = activation(activation_coeffs)
    prime = _check_field_p(field, p)
    shp, n, d0 = check_rank_size(kind, shape, cs, field)
    n_points = check_int(n_points, "n_points", ge=1)
    check_limit(n_points, MAX_POINTS, "MAX_POINTS", "n_points")
    ranks: list[int] = []
    m = n + 8
    for theta, X in _random_points(kind, shp, seed, field, prime, m, n_points, n_points * (n + m * d0)):
        J = eval_jacobian(kind, shape, cs, theta, X, field, p)
        ranks.append(exact_rank(J, field, p))
        if ranks[-1] >= n:
            break
    return RankReport(max(ranks), tuple(ranks), n, m, field)
