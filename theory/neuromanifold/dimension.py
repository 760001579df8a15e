"""The ambient space ``V`` (monomials that occur), the paper's expected dimension, and the neuromanifold
dimension as a generic rank (Thm 4.1 for MLPs, Thm 4.4 for CNNs)."""

from __future__ import annotations

import functools
import itertools
import math
import random
from collections.abc import Sequence
from typing import Any, Literal

import flint
import numpy as np

from theory.neuromanifold.activations import activation, exponents, is_monomial
from theory.neuromanifold.architectures import (
    MAX_BASIS,
    MAX_DEGREE,
    MAX_INPUT_SIZE,
    check_cnn,
    check_widths,
    cnn_layer_sizes,
    mlp_num_params,
    output_degree,
)
from theory.neuromanifold.ranks import _Ring, generic_rank
from theory.numerics import PRIME, check_int, check_limit


def _sumset(a: np.ndarray, e: int) -> np.ndarray:
    """The ``e``-fold sumset of the degree set with indicator ``a`` (``a[t]`` true iff degree t), as an
    indicator: ``e`` convolutions of 0/1 vectors, each thresholded back to 0/1 (exact integer counts)."""
    out = np.ones(1, dtype=np.int64)
    for _ in range(e):
        out = (np.convolve(out, a.astype(np.int64)) > 0).astype(np.int64)
    return out


def mlp_degrees(widths: Sequence[int], activation_coeffs: Sequence[Any]) -> tuple[int, ...]:
    """Total degrees of the monomials that occur in a generic ``f_W``.

    Layer inputs start with degrees ``{1}``; each activation maps a degree set ``D`` to
    ``union_{e: c_e != 0} (e-fold sumset of D)``; applied ``L - 1`` times. Every monomial of each such
    degree occurs generically (the family is invariant under ``x -> A x``).

    Returns:
      The degrees, increasing.
    Raises:
      TypeError / ValueError: invalid widths or activation, or an output degree ``r^(L-1)`` above
        ``MAX_DEGREE``.
    Source: the paper's setup (the ambient space ``V`` of the neuromanifold).
    """
    w = check_widths(widths)
    ex = exponents(activation_coeffs)
    check_limit(output_degree("mlp", w, activation_coeffs), MAX_DEGREE, "MAX_DEGREE",
                f"the output degree of mlp {w}")
    return _degree_set(len(w) - 2, ex)


@functools.lru_cache(maxsize=1024)
def _degree_set(n_activations: int, ex: tuple[int, ...]) -> tuple[int, ...]:
    """The degree set of :func:`mlp_degrees` after ``n_activations`` activations with exponents ``ex``
    (it depends on nothing else, so it is memoised)."""
    D = np.array([0, 1], dtype=np.int64)  # indicator of {1}
    for _ in range(n_activations):
        parts = [_sumset(D, e) for e in ex]
        new = np.zeros(max(len(q) for q in parts), dtype=np.int64)
        for q in parts:
            new[:len(q)] |= q
        D = new
    return tuple(int(t) for t in np.flatnonzero(D))


def mlp_ambient_dimension(widths: Sequence[int], activation_coeffs: Sequence[Any]) -> int:
    """``dim V = d_L * sum_{t in degrees} C(t + d_0 - 1, d_0 - 1)``: the monomials that occur, per output.

    Raises: as :func:`mlp_degrees`. Source: the paper's setup (the ambient space ``V``)."""
    w = check_widths(widths)
    d0 = w[0]
    return w[-1] * sum(math.comb(t + d0 - 1, d0 - 1) for t in mlp_degrees(w, activation_coeffs))


def cnn_support(filter_sizes: Sequence[int], strides: Sequence[int], activation_coeffs: Sequence[Any],
                cap: int | None = None, budget: int = 200_000, seed: int = 0) -> set[tuple[int, ...]] | None:
    """Exponent vectors of the monomials of a generic CNN output (over the ``d_0`` inputs).

    Weight sharing makes some monomials of the naive support cancel, so the support is read off an
    expansion (python-flint ``nmod_mpoly`` over ``F_p``) at two random filter tuples (union; a monomial
    that occurs generically vanishes at a random point with probability ``O(deg / p)``).

    Returns None when ``cap`` is given and an expansion exceeds ``cap`` terms at the output, or exceeds
    ``budget`` terms on the way (then the support is far larger than any parameter count).
    Raises:
      ValueError: no ``cap`` and an expansion larger than ``budget`` terms; an input size ``d_0`` above
        ``MAX_INPUT_SIZE``; invalid architecture or activation (TypeError for non-integers).
    Source: the paper's setup (the ambient space of CNNs, where weight sharing cancels monomials).
    """
    k, s = check_cnn(filter_sizes, strides)
    cs = activation(activation_coeffs)
    d = cnn_layer_sizes(k, s)
    check_limit(d[0], MAX_INPUT_SIZE, "MAX_INPUT_SIZE", f"the input size d_0 of cnn {(k, s)}")
    budget = check_int(budget, "budget", ge=1)
    cap = None if cap is None else check_int(cap, "cap", ge=0)
    ctx = flint.nmod_mpoly_ctx.get(("x", d[0]), modulus=PRIME)
    ring = _Ring(PRIME)
    cc = [ring.const(c) for c in cs]
    rng = random.Random(seed)
    support: set[tuple[int, ...]] = set()
    for _ in range(2):
        h = list(ctx.gens())
        for l in range(len(k)):
            w = [rng.randrange(1, PRIME) for _ in range(k[l])]
            stride = s[l] if l < len(s) else 1
            z = [sum((w[m] * h[stride * j + m] for m in range(k[l])), ctx.from_dict({}))
                 for j in range(d[l + 1])]
            if l < len(k) - 1:
                h = []
                for zz in z:
                    acc = ctx.from_dict({}) + cc[-1]
                    for c in reversed(cc[:-1]):
                        acc = acc * zz + c
                        if len(acc) > budget:
                            if cap is not None:
                                return None
                            raise ValueError(f"the CNN output has more than {budget} monomials")
                    h.append(acc)
            else:
                support |= {tuple(int(e) for e in mono) for mono in z[0].monoms()}
        if cap is not None and len(support) > cap:
            return None
    return support


def cnn_ambient_dimension(filter_sizes: Sequence[int], strides: Sequence[int],
                          activation_coeffs: Sequence[Any], cap: int | None = None) -> int | None:
    """Number of monomials in a generic CNN output (None when above ``cap``); see :func:`cnn_support`.
    Raises: as :func:`cnn_support`."""
    sup = cnn_support(filter_sizes, strides, activation_coeffs, cap)
    return None if sup is None else len(sup)


def _base_mlp_bound(w: tuple[int, ...], cs: tuple, mono: bool) -> int:
    """``min(N - [monomial] sum of hidden widths, dim V)``: the parameter count (less the per-neuron
    rescalings of a monomial activation), capped by the ambient dimension."""
    n = mlp_num_params(w) - (sum(w[1:-1]) if mono else 0)
    return min(n, mlp_ambient_dimension(w, cs))


@functools.lru_cache(maxsize=4096)
def _mlp_bound(w: tuple[int, ...], cs: tuple, cuts: str) -> int:
    """The recursive factorization bound of :func:`expected_dimension` (memoised on exact inputs)."""
    mono = is_monomial(cs)
    best = _base_mlp_bound(w, cs, mono)
    for l in range(1, len(w) - 1):
        if cuts == "all" or (cuts == "width1" and w[l] == 1):
            best = min(best, _mlp_bound(w[:l + 1], cs, cuts) + _mlp_bound(w[l:], cs, cuts)
                       - (w[l] if mono else 0))
    return best


def expected_dimension(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs: Sequence[Any],
                       cuts: Literal["all", "width1", "none"] = "all") -> int:
    """The paper's dimension formula, capped by the ambient dimension and (MLPs) by the factorization
    bound at every hidden layer: an upper bound of the generic rank that the paper's theorems say is
    attained for generic activations of large degree.

    * MLP (Thm 4.1): ``N = sum d_l d_{l-1}``; for a monomial activation ``N - sum_{hidden} d_l``
      (per-neuron rescaling, Kileel-Trager-Bruna 2019); capped by ``dim V``
      (:func:`mlp_ambient_dimension`), and by the **factorization bound**, recursively::

          E(d_0..d_L) = min( min(N', dim V),
                             min_{0<l<L} E(d_0..d_l) + E(d_l..d_L) - [s monomial] d_l )

      Justification: at every hidden layer ``l``, ``f_W = T o s o z_l`` where ``z_l`` (the layer's
      pre-activations, ``R^{d_0} -> R^{d_l}``) is the network of widths ``(d_0..d_l)`` and ``T`` the
      network of widths ``(d_l..d_L)``. So ``phi`` factors through the pair ``(z_l, T)``, which lies in
      the product of those two neuromanifolds, and ``dim M <= dim M_head + dim M_tail``. For a monomial
      ``s = c t^r`` the pairs ``(D z_l, T o D^{-r})`` (``D`` invertible diagonal; ``T o D^{-r}`` is again
      a tail network) give the same ``f``: a ``d_l``-dimensional family, subtracted. The case the plain
      cap misses is a width-1 hidden layer: the tail then maps a scalar into univariate polynomials of
      degree ``r^(L-l-1)`` (``r + 1`` coefficients for one more layer), e.g. ``(1,1,4,1)`` with a dense
      degree-6 activation: ``E = E(1,1) + E(1,4,1) = 1 + min(8, 7) = 8``, not ``min(N, dim V) = 9``;
      ``(3,1,5,1)``: ``3 + 7 = 10`` at degree 6 and ``3 + 5 = 8`` at degree 4, not 13. Cuts at wider
      layers matter too at low degree (``(1,3,2,2)``, cubic: ``E(1,3,2) + E(2,2) = 8 + 4 = 12 < 13``).
    * CNN (Thm 4.4): ``|k| = sum k_l``; for a monomial activation ``|k| - (L - 1)`` (filter rescaling,
      arXiv 2410.00722); capped by ``dim V`` (:func:`cnn_ambient_dimension`).

    Args:
      kind: ``"mlp"`` or ``"cnn"``. shape: the widths, or ``(filter_sizes, strides)``.
      activation_coeffs: ``c_0..c_r`` (see :func:`theory.neuromanifold.activations.activation`).
      cuts: MLP only, for comparison: ``"all"`` (default, the bound above), ``"width1"`` (cuts at
        width-1 hidden layers only) or ``"none"`` (the plain ``min(N', dim V)``).
    Returns:
      The expected dimension, an int.
    Raises:
      ValueError/TypeError: unknown kind or ``cuts``, invalid shape/activation; ValueError naming
        ``MAX_DEGREE`` (MLP output degree) or ``MAX_INPUT_SIZE`` (CNN input).
    Source: Thm 4.1 and Thm 4.4; the factorization bound is derived here and checked
    against exact ranks on the grid (tests, ``neuromanifold.mlp_dimension``).
    """
    cs = activation(activation_coeffs)
    mono = is_monomial(cs)
    if cuts not in ("all", "width1", "none"):
        raise ValueError(f"cuts must be 'all', 'width1' or 'none', got {cuts!r}")
    if kind == "mlp":
        w = check_widths(shape)
        check_limit(output_degree("mlp", w, cs), MAX_DEGREE, "MAX_DEGREE", f"the output degree of mlp {w}")
        return _mlp_bound(w, cs, cuts)
    if kind == "cnn":
        if not (isinstance(shape, (tuple, list)) and len(shape) == 2):
            raise TypeError(f"cnn shape must be (filter_sizes, strides), got {shape!r}")
        k, s = check_cnn(*shape)
        n = sum(k) - ((len(k) - 1) if mono else 0)
        amb = cnn_ambient_dimension(k, s, cs, cap=n)
        return n if amb is None else min(n, amb)
    raise ValueError(f"kind must be 'mlp' or 'cnn', got {kind!r}")


def mlp_dimension(widths: Sequence[int], activation_coeffs: Sequence[Any]) -> int:
    """Dimension of the MLP neuromanifold: the generic rank of ``phi`` (exact over ``F_p``, max over 3
    random points). Paper Thm 4.1 predicts ``N`` for generic activations of large degree.

    Raises:
      ValueError/TypeError: invalid widths (a width below 1, fewer than two) or activation; ValueError
        naming ``MAX_EXACT_PARAMS`` or ``MAX_INPUT_SIZE`` for architectures too large (see
        :func:`generic_rank`).
    """
    return generic_rank("mlp", widths, activation_coeffs).rank


def cnn_dimension(filter_sizes: Sequence[int], strides: Sequence[int],
                  activation_coeffs: Sequence[Any]) -> int:
    """Dimension of the CNN neuromanifold: the generic rank of ``phi`` (exact over ``F_p``, max over 3
    random points). Paper Thm 4.4 predicts ``|k|`` for generic activations.

    Raises:
      ValueError/TypeError: invalid filter sizes, strides or activation; ValueError naming
        ``MAX_EXACT_PARAMS`` or ``MAX_INPUT_SIZE`` (see :func:`generic_rank`).
    """
    return generic_rank("cnn", (filter_sizes, strides), activation_coeffs).rank


def monomial_basis(kind: str, shape: Any, activation_coeffs) -> list[tuple[int, ...]]:
    """Exponent vectors of the monomials that occur generically (scalar-output networks), sorted.

    Returns:
      ``dim V`` tuples of length ``d_0``.
    Raises:
      ValueError: a non-scalar output, or ``dim V`` above ``MAX_BASIS``; TypeError / ValueError: invalid
        architecture or activation.
    """
    if kind == "mlp":
        w = check_widths(shape)
        if w[-1] != 1:
            raise ValueError(f"monomial_basis needs a scalar output, got d_L={w[-1]}")
        check_limit(mlp_ambient_dimension(w, activation_coeffs), MAX_BASIS, "MAX_BASIS",
                    f"dim V of mlp {w}")
        out = []
        for t in mlp_degrees(w, activation_coeffs):
            for c in itertools.combinations_with_replacement(range(w[0]), t):
                out.append(tuple(c.count(i) for i in range(w[0])))
        return sorted(out)
    if kind != "cnn":
        raise ValueError(f"kind must be 'mlp' or 'cnn', got {kind!r}")
    k, s = check_cnn(*shape)
    sup = cnn_support(k, s, activation_coeffs, cap=MAX_BASIS)
    if sup is None:
        check_limit(MAX_BASIS + 1, MAX_BASIS, "MAX_BASIS", f"dim V of cnn {(k, s)} (at least)")
    return sorted(sup)
