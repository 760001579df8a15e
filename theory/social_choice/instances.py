"""Concrete instances (Ge et al.'s construction and our own examples), exact where they are
rational, and the random-instance generator of the polynomial sweep.

Ge's construction (Ge et al. 2024, proof of Theorem 3.1) with its sign slip fixed: the paper takes
delta in (0, 1) with voter (1, 1), but then ``<(1,1), c' - c> = (delta - 1) eps < 0`` and c' is not
unanimously preferred (the paper's footnote 7 has the sign wrong). We use delta > 1 with voter (1, 1)
(valid for BTL, whose core optimum has theta_2 = 0), or voter (1, t) with t > 1/delta.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np

from theory.numerics import float64

GE_NAMES = ("a", "b", "c", "a'", "b'", "c'")


@dataclass(frozen=True)
class Instance:
    """A finite instance.

    Attributes:
      candidates: ``[n, d]`` (float64, or Fractions when built exact).
      voters: ``[k, d]``; weights: ``[k]`` (population shares or integer counts).
      names: candidate names.
      pareto_pair: ``(a, b)``: the pair every voter ranks a above b that the claim is about.
    """

    candidates: np.ndarray
    voters: np.ndarray
    weights: np.ndarray
    names: tuple[str, ...]
    pareto_pair: tuple[int, int]


def _num(x, exact: bool):
    return Fraction(x) if exact else float(x)


def ge_instance(p=0.6, eps=0.01, delta=2.0, voter=(1, 1), *, counts=None, exact: bool = False) -> Instance:
    """Ge et al.'s six-candidate instance (Theorem 3.1): a = (2, 1), b = (1, 1), c = (0, 0),
    a' = a - (eps, 0), b' = b - (eps, 0), c' = (-eps, delta eps); voter ``voter`` (weight ``p``) ranks
    a > a' > b > b' > c' > c and voter (-1, 0) (weight ``1 - p``) the reverse order of the core, with
    c' > c. ``counts = (n1, n2)`` replaces the weights by integer multiplicities (exact hinge).

    Args:
      p, eps, delta: floats, or ``Fraction``/str like ``"1/100"`` when ``exact``.
    Raises:
      ValueError: the pair (c', c) is not unanimous (e.g. voter (1, 1) with delta <= 1: Ge's sign slip).
    """
    e, dl = _num(eps, exact), _num(delta, exact)
    one, zero = _num(1, exact), _num(0, exact)
    X = np.array([[2 * one, one], [one, one], [zero, zero], [2 * one - e, one], [one - e, one],
                  [-e, dl * e]], dtype=object if exact else np.float64)
    V = np.array([[_num(voter[0], exact), _num(voter[1], exact)], [-one, zero]],
                 dtype=object if exact else np.float64)
    if counts is not None:
        w = np.array([Fraction(int(counts[0])), Fraction(int(counts[1]))], dtype=object) if exact else \
            np.asarray(counts, np.float64)
    else:
        pp = _num(p, exact)
        w = np.array([pp, one - pp], dtype=object if exact else np.float64)
    d = X[5] - X[2]
    if not all(v.dot(d) > 0 for v in V):
        raise ValueError(f"c' - c = {[str(x) for x in d]} is not preferred by every voter (voter {voter}, "
                         f"delta {delta}): use delta > 1 with voter (1, 1), or voter (1, t) with t > 1/delta")
    return Instance(X, V, w, GE_NAMES, (5, 2))


def ge_core(p=0.6) -> Instance:
    """Ge et al.'s core instance (Lemmas 3.2-3.3): a = (2, 1), b = (1, 1), c = (0, 0); a share ``p``
    ranks a > b > c (voter (1, 1)), the rest c > b > a (voter (-1, 0))."""
    X = np.array([[2.0, 1.0], [1.0, 1.0], [0.0, 0.0]])
    V = np.array([[1.0, 1.0], [-1.0, 0.0]])
    return Instance(X, V, np.array([p, 1 - p]), ("a", "b", "c"), (-1, -1))


EX7 = np.array([[-1.0, 0.5], [2.0, -1.5], [-1.5, 1.5], [0.5, 1.0], [-1.0, 2.0], [0.5, 0.5], [0.54, 0.52]])


def ex7() -> Instance:
    """Our polynomial-reward instance ex7 (not in the paper): voters (1, 0) with weight 0.9 and (0, 1)
    with 0.1; c = (.5, .5), c' = (.54, .52) is the Pareto pair. Three voter ties cast no vote (our tie
    rule)."""
    return Instance(EX7.copy(), np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.9, 0.1]),
                    tuple(f"x{i}" for i in range(5)) + ("c", "c'"), (6, 5))


def pair_counterexample(p=0.9, s=0.01, *, exact: bool = False):
    """Our minimal pair-data counterexample (not in the paper): voters (1, 0) (weight ``p``) and (0, 1)
    (``1 - p``) label the differences x1 = (2, -1), x2 = (1, -3) (contested) and x3 = s (1, 3) (unanimous).

    Returns: ``(diffs [3, 2], voters [2, 2], weights [2], unanimous index 2)``.
    """
    one = _num(1, exact)
    ss = _num(s, exact)
    dt = object if exact else np.float64
    D = np.array([[2 * one, -one], [one, -3 * one], [ss, 3 * ss]], dtype=dt)
    V = np.array([[one, 0 * one], [0 * one, one]], dtype=dt)
    pp = _num(p, exact)
    return D, V, np.array([pp, one - pp], dtype=dt), 2


D3_VOTERS = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.6, 0.0, 0.8]])
D3_WEIGHTS = np.array([0.6, 0.3, 0.1])


def random_po_instance(key, n_base: int, box: float, eps: float):
    """One random instance of the polynomial sweep (JAX, vmap-able): ``n_base`` candidates uniform in
    ``[-box, box]^2`` and a copy of candidate ``j`` shifted by ``eps u`` with ``u`` a uniform unit vector
    of the positive quadrant, so voters (1, 0) and (0, 1) both prefer the copy (our random search).

    Returns: ``(X [n_base + 1, 2], j)``; the Pareto pair is ``(n_base, j)``.
    """
    k1, k2, k3 = jax.random.split(key, 3)
    base = jax.random.uniform(k1, (n_base, 2), minval=-box, maxval=box)
    j = jax.random.randint(k2, (), 0, n_base)
    phi = jax.random.uniform(k3, (), minval=0.0, maxval=jnp.pi / 2)
    new = base[j] + eps * jnp.stack([jnp.cos(phi), jnp.sin(phi)])
    return jnp.concatenate([base, new[None]], axis=0), j


PROFILE_FAMILIES = ("generic", "compromise")


def random_profile(key, family: str = "generic", n: int = 7, k: int = 3, noise: float = 0.1):
    """A random finite instance with no voter weight above one half (numpy float64 from ``key``).

    * ``generic``: ``n`` candidates N(0, I_3), ``k`` voters |N(0, I_3)| (a pointed cone, so Pareto pairs
      exist), weights uniform in [0.6, 1] (a share at most 1 / (1 + 0.6 (k - 1)) < 1/2 for k >= 3):
      majority cycles and coalition majorities occur.
    * ``compromise``: Ge et al.'s Copeland-versus-Pareto tension made concrete: a compromise candidate
      w ~ (1, 1, 1) that beats x_j ~ 4 e_j (j = 1..3) and c ~ 4.5 e_1 by majority, with a = c + 0.2 u
      (u a uniform direction of the positive orthant) Pareto-dominating c, every point perturbed by
      N(0, noise^2); 3 voters e_j + |N(0, 0.15^2)|, weights uniform in [0.6, 1]. Every reward that ranks
      w first ranks c above a (the sum of w - x_j is -(1, 1, 1) before the noise), so leximax Copeland
      without the Pareto constraints reverses (a, c) (``n``, ``k`` ignored: 6 candidates, 3 voters).

    Returns: ``(X [n, 3], V [k, 3], w [k])`` with w normalised to sum 1.
    Raises: ValueError: an unknown family, k < 3 (a voter could hold a majority), n < 3.
    """
    if family not in PROFILE_FAMILIES:
        raise ValueError(f"family must be one of {PROFILE_FAMILIES}, got {family!r}")
    if family == "generic" and (k < 3 or n < 3):
        raise ValueError(f"need k >= 3 voters (no voter above one half) and n >= 3 candidates, got k={k}, n={n}")
    with float64():
        return _random_profile(key, family, n, k, noise)


def _random_profile(key, family, n, k, noise):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    f64 = jnp.float64
    if family == "generic":
        X = jax.random.normal(k1, (n, 3), f64)
        V = jnp.abs(jax.random.normal(k2, (k, 3), f64))
    else:
        k = 3
        base = jnp.array([[1.0, 1.0, 1.0], [4.0, 0, 0], [0, 4.0, 0], [0, 0, 4.0], [4.5, 0, 0]], f64)
        base = base + noise * jax.random.normal(k1, base.shape, f64)
        u = jnp.abs(jax.random.normal(k4, (3,), f64))
        X = jnp.concatenate([base, (base[4] + 0.2 * u / jnp.linalg.norm(u))[None]])
        V = jnp.eye(3, dtype=f64) + jnp.abs(0.15 * jax.random.normal(k2, (3, 3), f64))
    w = jax.random.uniform(k3, (k,), f64, minval=0.6, maxval=1.0)
    return np.asarray(X), np.asarray(V), np.asarray(w / w.sum())


def theorem41_layout(key, degree: int, delta: float = 0.02, box: float = 1.0, spread: float = 2.0):
    """A random instance with the layout of Hollender & Kraiczy's Theorem 4.1 for reward degree ``degree``
    (the paper's exact coordinates are not available to us): ``degree`` lines y = -2 x + b_j (b_j uniform
    in [-spread, spread]) with ``degree + 1`` points each (x uniform in [-box, box]), a candidate c0
    uniform in [-box, box]^2 and c1 = c0 + delta u with u a uniform direction of the positive quadrant, so
    voters (1, 0) and (0, 1) both prefer c1: ``degree (degree + 1) + 2`` candidates.

    Returns: ``(X [degree (degree + 1) + 2, 2] float64 numpy, (i1, i0))`` the Pareto pair (c1 first).
    Raises: ValueError: degree < 1, delta <= 0.
    """
    if int(degree) < 1 or not delta > 0:
        raise ValueError(f"need degree >= 1 and delta > 0, got degree={degree}, delta={delta}")
    D = int(degree)
    with float64():
        k1, k2, k3, k4 = jax.random.split(key, 4)
        b = jax.random.uniform(k1, (D,), jnp.float64, -spread, spread)
        x = jax.random.uniform(k2, (D, D + 1), jnp.float64, -box, box)
        lines = jnp.stack([x, -2 * x + b[:, None]], -1).reshape(-1, 2)
        c0 = jax.random.uniform(k3, (2,), jnp.float64, -box, box)
        phi = jax.random.uniform(k4, (), jnp.float64, 0.0, jnp.pi / 2)
        c1 = c0 + delta * jnp.stack([jnp.cos(phi), jnp.sin(phi)])
        X = np.asarray(jnp.concatenate([lines, c0[None], c1[None]]))
    n = X.shape[0]
    return X, (n - 1, n - 2)
