"""Singular points: subnetworks of MLPs (Thm 4.2, stacked Jacobians; App. D implicit cubic) and nodes of
CNNs (Thm 4.6)."""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
import sympy as sp

from theory.neuromanifold.activations import _to_fraction, activation
from theory.neuromanifold.architectures import (
    MAX_POINTS,
    MAX_STACKED_COLUMNS,
    MAX_SYMMETRIES,
    _positive_ints,
    _shape_info,
    _unflatten_cnn,
    _unflatten_mlp,
    check_cnn,
    check_widths,
    cnn_layer_sizes,
    mlp_num_params,
)
from theory.neuromanifold.dimension import mlp_ambient_dimension
from theory.neuromanifold.fibers import fiber
from theory.neuromanifold.ranks import (
    P_BOUND,
    _Ring,
    eval_jacobian,
    exact_rank,
    generic_rank,
    random_point,
)
from theory.neuromanifold.symbolic import coefficient_map, satisfies
from theory.numerics import PRIME, check_int, check_limit, check_prime


@dataclass(frozen=True)
class StackCertificate:
    """Jacobians stacked along one fiber: ``stacked_rank > dim`` certifies a singular point.

    ``rank_at_point``: Jacobian rank at the first sample; ``n_samples`` points of the fiber used."""

    dim: int
    rank_at_point: int
    stacked_rank: int
    n_samples: int

    @property
    def singular(self) -> bool:
        """``stacked_rank > dim``: two tangent spaces at one function, so the point is singular."""
        return self.stacked_rank > self.dim


def dead_neuron_certificate(widths: Sequence[int], activation_coeffs, layer: int, neuron: int = 0,
                            n_samples: int | None = None, seed: int = 0, p: int = PRIME) -> StackCertificate:
    """Certificate that the function of a subnetwork (hidden neuron ``neuron`` of hidden layer ``layer``,
    1-based, removed) is a singular point of the MLP neuromanifold (Thm 4.2).

    The neuron's outgoing weights are 0, so its ``d_{layer-1}`` incoming weights are free along the
    fiber; ``n_samples`` (default free + 4) random values give Jacobians at points of one fiber. Their
    column spans are stacked (common evaluation points, exact over ``F_p``): a smooth point has one
    tangent space of dimension ``dim M``, so ``rank > dim M`` proves the point singular (the rank over
    ``F_p`` never exceeds the true rank, so the certificate cannot be spurious).

    Returns:
      A :class:`StackCertificate`.
    Raises:
      TypeError: ``layer``, ``neuron`` or ``n_samples`` not an integer.
      ValueError: ``layer`` not a hidden layer, ``neuron`` out of range, ``p`` not a prime below 2^31,
        ``n_samples`` outside ``1..MAX_POINTS``, more than ``MAX_STACKED_COLUMNS`` stacked columns
        (``n_samples * N``), or the limits of :func:`generic_rank`.
    """
    w = check_widths(widths)
    layer, neuron = check_int(layer, "layer"), check_int(neuron, "neuron")
    if not 1 <= layer <= len(w) - 2:
        raise ValueError(f"layer must be a hidden layer 1..{len(w) - 2}, got {layer}")
    if not 0 <= neuron < w[layer]:
        raise ValueError(f"neuron must be in 0..{w[layer] - 1}, got {neuron}")
    p = check_prime(p, below=P_BOUND)
    cs = activation(activation_coeffs)
    n = mlp_num_params(w)
    free = w[layer - 1]
    ns = free + 4 if n_samples is None else check_int(n_samples, "n_samples", ge=1)
    check_limit(ns, MAX_POINTS, "MAX_POINTS", "n_samples")
    check_limit(ns * n, MAX_STACKED_COLUMNS, "MAX_STACKED_COLUMNS", "the stacked columns n_samples * N")
    rng = random.Random(seed)
    dim = generic_rank("mlp", w, cs, seed=seed).rank
    amb = mlp_ambient_dimension(w, cs)
    m = min(amb, ns * n) // w[-1] + 8
    theta, X = random_point("mlp", w, rng, "modp", p, m)
    Ws = _unflatten_mlp(theta, w)
    Ws[layer][:, neuron] = 0  # outgoing weights of the dead neuron (W_{layer+1} column)
    blocks, r0 = [], None
    for _ in range(ns):
        Ws[layer - 1][neuron, :] = [rng.randrange(1, p) for _ in range(free)]
        th = np.concatenate([W.ravel() for W in Ws])
        J = eval_jacobian("mlp", w, cs, th, X, "modp", p)
        if r0 is None:
            r0 = exact_rank(J, "modp", p)
        blocks.append(J)
    return StackCertificate(dim, int(r0), exact_rank(np.concatenate(blocks, axis=1), "modp", p), ns)


def implicit_cubic_221():
    """The (2,2,1) MLP with ``s = x^3 + x^2``: its neuromanifold lies in ``{F = 0}`` with
    ``F = 18 det [[m20, m11/2, m02], [m30, m21/3, m12/3], [m21/3, m12/3, m03]]`` (App. D example;
    derived here: ``Q`` lies in the catalecticant row space of the Waring decomposition
    ``C = l_1^3 + l_2^3``).

    Returns ``(F, m)`` with ``m`` the symbols ``(m30, m21, m12, m03, m20, m11, m02)``.
    """
    m = sp.symbols("m30 m21 m12 m03 m20 m11 m02")
    m30, m21, m12, m03, m20, m11, m02 = m
    F = 18 * sp.Matrix([[m20, m11 / 2, m02], [m30, m21 / 3, m12 / 3], [m21 / 3, m12 / 3, m03]]).det()
    return sp.expand(F), m


def cubic_gradient_on_manifold():
    """``grad F(phi(W))`` for the (2,2,1) MLP with ``x^3 + x^2`` as polynomials in ``W``.

    Returns ``(grads, params, F_of_phi)`` where ``F_of_phi`` is ``F(phi(W))`` expanded."""
    keys, vals, ps = coefficient_map("mlp", (2, 2, 1), [0, 0, 1, 1])
    coef = {k[1]: v for k, v in zip(keys, vals)}
    F, m = implicit_cubic_221()
    order = [(3, 0), (2, 1), (1, 2), (0, 3), (2, 0), (1, 1), (0, 2)]
    sub = {s: coef.get(o, 0) for s, o in zip(m, order)}
    grads = [sp.expand(sp.diff(F, s).subs(sub)) for s in m]
    return grads, ps, sp.expand(F.subs(sub))


def cnn_node_pair(filter_sizes: Sequence[int], strides: Sequence[int], layer: int, q: int = 1,
                  seed: int = 0, p: int = PRIME):
    """Two distinct filter tuples with the same CNN function: zero padding moved across a stride.

    Filter ``w_layer`` (1-based, ``layer < L``) gets ``s_layer * q`` leading zeros and ``w_{layer+1}`` ``q``
    trailing zeros; the pair partner shifts ``w_layer`` left by ``s_layer * q`` and ``w_{layer+1}`` right by
    ``q`` (``z_layer`` shifts by ``q`` positions, which the next filter absorbs). Other filters random.

    Returns:
      ``(theta, theta_prime)`` as integer arrays (random residues mod ``p``, padding entries 0).
    Raises:
      TypeError: ``layer`` or ``q`` not an integer.
      ValueError: the padding does not fit (``s_layer q >= k_layer`` or ``q >= k_{layer+1}``), or ``p``
        not a prime below 2^31.
    Source: Thm 4.6 (CNN singularities are nodes); the App. D CNN, k = (3, 2), s = 2.
    """
    k, s = check_cnn(filter_sizes, strides)
    layer, q = check_int(layer, "layer"), check_int(q, "q")
    p = check_prime(p, below=P_BOUND)
    if not 1 <= layer < len(k):
        raise ValueError(f"layer must be in 1..{len(k) - 1}, got {layer}")
    sh = s[layer - 1] * q
    if sh >= k[layer - 1] or q >= k[layer] or q < 1:
        raise ValueError(f"padding s*q={sh} (layer {layer}) and q={q} (layer {layer + 1}) do not fit "
                         f"filter sizes {k[layer - 1]}, {k[layer]}")
    rng = random.Random(seed)
    ws = [[rng.randrange(1, p) for _ in range(kk)] for kk in k]
    a, b = ws[layer - 1], ws[layer]
    a = [0] * sh + a[sh:]
    b = b[:len(b) - q] + [0] * q
    a2 = a[sh:] + [0] * sh
    b2 = [0] * q + b[:len(b) - q]
    t1 = [a if i == layer - 1 else b if i == layer else ws[i] for i in range(len(k))]
    t2 = [a2 if i == layer - 1 else b2 if i == layer else ws[i] for i in range(len(k))]
    return (np.array([x for f in t1 for x in f], dtype=object), np.array([x for f in t2 for x in f], dtype=object))


@dataclass(frozen=True)
class NodeCertificate:
    """Two parameter points with the same function: ``same_function`` (exact, mod p on common points),
    the Jacobian ranks at each (``= |k|`` means both branches are smooth immersions) and the rank of the
    two Jacobians side by side (``> dim``: the two tangent spaces differ, a node, not a cusp)."""

    dim: int
    rank_a: int
    rank_b: int
    joint_rank: int
    same_function: bool
    distinct_params: bool


def cnn_node_certificate(filter_sizes, strides, activation_coeffs, layer: int = 1, q: int = 1,
                         seed: int = 0, p: int = PRIME) -> NodeCertificate:
    """:func:`cnn_node_pair` checked exactly over ``F_p`` (CNN singularities are nodes, Thm 4.6).

    Returns a :class:`NodeCertificate`. Raises: as :func:`cnn_node_pair` and :func:`generic_rank`."""
    k, s = check_cnn(filter_sizes, strides)
    cs = activation(activation_coeffs)
    ta, tb = cnn_node_pair(k, s, layer, q, seed, p)
    rng = random.Random(seed + 1)
    n = sum(k)
    _, X = random_point("cnn", (k, s), rng, "modp", p, 2 * n + 8)
    Ja = eval_jacobian("cnn", (k, s), cs, ta, X, "modp", p)
    Jb = eval_jacobian("cnn", (k, s), cs, tb, X, "modp", p)
    ring = _Ring(p)
    fa = _cnn_values(k, s, cs, ring.array(ta), ring.array(X), ring)
    fb = _cnn_values(k, s, cs, ring.array(tb), ring.array(X), ring)
    dim = generic_rank("cnn", (k, s), cs, seed=seed).rank
    return NodeCertificate(dim, exact_rank(Ja, "modp", p), exact_rank(Jb, "modp", p),
                           exact_rank(np.concatenate([Ja, Jb], 1), "modp", p),
                           bool(np.array_equal(fa, fb)), bool(any(x != y for x, y in zip(ta, tb))))


def _cnn_values(k, s, cs, theta, X, ring):
    ws = _unflatten_cnn(theta, k)
    d = cnn_layer_sizes(k, s)
    h = X
    for l in range(len(k)):
        stride = s[l] if l < len(s) else 1
        idx = stride * np.arange(d[l + 1])[:, None] + np.arange(k[l])[None, :]
        h = ring.red(ring.red(h[:, idx] * ws[l][None, None, :]).sum(-1))
        if l < len(k) - 1:
            h = ring.poly(cs, h)
    return h[:, 0]


# ---------------------------------------------------------------------------------------------------
# The normal of the (2,2,1) hypersurface at a point; Jacobians stacked over a fiber; CNN padding orbits
# ---------------------------------------------------------------------------------------------------

_CUBIC_ORDER = ((3, 0), (2, 1), (1, 2), (0, 3), (2, 0), (1, 1), (0, 2))  # (m30, m21, m12, m03, m20, m11, m02)


@dataclass(frozen=True)
class CubicNormal:
    """``grad F`` at ``phi(W0)`` for the (2,2,1) MLP with ``x^3 + x^2`` and its products with the tangent
    columns ``d phi / d W`` at ``W0`` (all zero: ``grad F`` is a normal vector of ``M``, as it must be
    on a hypersurface containing ``M``). Exact rationals (``Fraction``), order
    ``(m30, m21, m12, m03, m20, m11, m02)``; ``tangent`` is the 7 x 6 tangent matrix (rows in that order,
    columns the parameters ``l1, l2, a``) and ``tangent_rank`` its rank."""

    gradient: tuple[Fraction, ...]
    tangent_products: tuple[Fraction, ...]
    tangent_rank: int
    tangent: tuple[tuple[Fraction, ...], ...]


def implicit_cubic_normal(w0: Sequence[Any]) -> CubicNormal:
    """``grad F(phi(W0))`` and its orthogonality to the tangent space ``im J_W0 phi`` (exact, sympy).

    Args:
      w0: the 6 parameters ``(l1, l2, a)`` flattened as ``W1`` (2 x 2, rows ``l1``, ``l2``) then ``W2``
        (``a``), rationals.
    Returns:
      A :class:`CubicNormal`: the 7 gradient entries, the 6 products ``(d phi / d W_j) . grad F``, the
      tangent rank and the tangent matrix. At a generic ``W0`` the gradient is nonzero and the rank 6: ``phi(W0)`` is a smooth
      point of the hypersurface, with normal ``grad F``.
    Raises:
      ValueError: ``w0`` not of length 6; TypeError: non-rational entries.
    Source: App. D example (the polynomial ``F`` and its gradient derived here).
    """
    if len(w0) != 6:
        raise ValueError(f"w0 must have 6 entries (l1, l2, a), got {len(w0)}")
    pt = [sp.Rational(f.numerator, f.denominator) for f in (_to_fraction(v, "w0") for v in w0)]
    keys, vals, ps = coefficient_map("mlp", (2, 2, 1), [0, 0, 1, 1])
    coef = {k[1]: v for k, v in zip(keys, vals)}
    sub = dict(zip(ps, pt))
    F, m = implicit_cubic_221()
    image = {s: sp.expand(coef.get(o, 0)).subs(sub) for s, o in zip(m, _CUBIC_ORDER)}
    grad = sp.Matrix([sp.diff(F, s).subs(image) for s in m])
    T = sp.Matrix([[sp.diff(coef.get(o, 0), q).subs(sub) for q in ps] for o in _CUBIC_ORDER])
    prods = T.T * grad

    def frac(x):
        x = sp.Rational(x)
        return Fraction(int(x.p), int(x.q))

    return CubicNormal(tuple(frac(g) for g in grad), tuple(frac(v) for v in prods), int(T.rank()),
                       tuple(tuple(frac(v) for v in T.row(i)) for i in range(T.rows)))


@dataclass(frozen=True)
class FiberStack:
    """Jacobians at several parameter points stacked side by side (exact over ``F_p``, common evaluation
    points).

    ``dim``: the generic rank (``dim M``); ``ranks``: the Jacobian rank at each point; ``joint_rank``:
    the rank of all of them side by side; ``same_function``: every point gives the same function (equal
    values mod p at the evaluation points); ``n_points``: how many distinct points."""

    dim: int
    ranks: tuple[int, ...]
    joint_rank: int
    same_function: bool
    n_points: int

    @property
    def singular(self) -> bool:
        """One function, tangent spaces spanning more than ``dim M``: a singular point of ``M``."""
        return self.same_function and self.joint_rank > self.dim


def _network_values(kind, shape, cs, theta, X, ring):
    """``f_theta(X)`` in ``ring``: ``[M, d_L]`` (MLP) or ``[M]`` (CNN)."""
    if kind == "cnn":
        return _cnn_values(*shape, cs, theta, X, ring)
    h = X
    Ws = _unflatten_mlp(theta, shape)
    for l, W in enumerate(Ws):
        h = ring.matmul(h, W.T)
        if l < len(Ws) - 1:
            h = ring.poly(cs, h)
    return h


def fiber_stack(kind: str, shape: Any, activation_coeffs, thetas: Sequence[Sequence[int]], seed: int = 0,
                p: int = PRIME) -> FiberStack:
    """Stack the Jacobians of ``phi`` at the parameter points ``thetas`` (meant to lie in one fiber).

    A smooth point of ``M`` has one tangent space, of dimension ``dim M``; if the points give one
    function and their Jacobians together span more than ``dim M``, that function is a singular point
    (a node when every point has rank ``dim M``). Conversely ``joint_rank == dim`` over a whole fiber
    (e.g. a generic MLP point with its neuron permutations) finds one tangent space.

    Args:
      kind, shape, activation_coeffs: the architecture. thetas: integer parameter vectors (length ``N``).
      seed: evaluation points; p: a prime below 2^31.
    Returns:
      A :class:`FiberStack` (``len(thetas) N + 8`` evaluation points, enough for any joint rank).
    Raises:
      ValueError: no points, a point of the wrong length, more than ``MAX_STACKED_COLUMNS`` stacked
        columns, more than ``MAX_POINTS`` points, or the limits of :func:`generic_rank`; TypeError:
        non-integer parameters.
    Source: the stacked-Jacobian test of singularity (Thm 4.2, Thm 4.6; the stacked test is ours).
    """
    p = check_prime(p, below=P_BOUND)
    cs = activation(activation_coeffs)
    shp, n, _ = _shape_info(kind, shape)
    thetas = [tuple(t) for t in thetas]
    if not thetas:
        raise ValueError("thetas is empty")
    check_limit(len(thetas), MAX_POINTS, "MAX_POINTS", "the number of stacked points")
    check_limit(len(thetas) * n, MAX_STACKED_COLUMNS, "MAX_STACKED_COLUMNS", "the stacked columns")
    for t in thetas:
        if len(t) != n:
            raise ValueError(f"every theta must have {n} entries, got {len(t)}")
        for v in t:
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"fiber_stack needs integer parameters, got {v!r}")
    rng = random.Random(seed)
    _, X = random_point(kind, shp, rng, "modp", p, len(thetas) * n + 8)
    ring = _Ring(p)
    Js = [eval_jacobian(kind, shp, cs, np.array(t, dtype=object), X, "modp", p) for t in thetas]
    vals = [_network_values(kind, shp, cs, ring.array(t), ring.array(X), ring) for t in thetas]
    same = all(np.array_equal(vals[0], v) for v in vals[1:])
    dim = generic_rank(kind, shp, cs, seed=seed).rank
    return FiberStack(dim, tuple(exact_rank(J, "modp", p) for J in Js),
                      exact_rank(np.concatenate(Js, axis=1), "modp", p), bool(same), len(set(thetas)))


def _padding_shifts(k, s, theta) -> list[tuple[int, ...]]:
    """Nonzero shift vectors ``delta`` (filter ``l`` moved right by ``delta_l``) that keep ``f``."""
    ws, i = [], 0
    for kk in k:
        ws.append(list(theta[i:i + kk]))
        i += kk

    def lead(v):
        return next((j for j, x in enumerate(v) if x != 0), len(v))

    ranges = [range(-lead(w), lead(w[::-1]) + 1) for w in ws]
    check_limit(math.prod(len(r) for r in ranges), MAX_SYMMETRIES, "MAX_SYMMETRIES",
                f"the padding shifts to try for filter sizes {k}")
    out = []
    for delta in itertools.product(*ranges):
        if not any(delta):
            continue
        e, ok = 0, True
        for l in range(len(k) - 1):
            if (delta[l] + e) % s[l]:
                ok = False
                break
            e = (delta[l] + e) // s[l]
        if ok and delta[-1] + e == 0:
            out.append(delta)
    return out


def cnn_padding_orbit(filter_sizes: Sequence[int], strides: Sequence[int], theta: Sequence[Any]) -> list[tuple]:
    """Every filter tuple reachable from ``theta`` by moving zero padding (Thm 4.6's proper
    subnetworks), ``theta`` first.

    Moving filter ``l`` right by ``delta_l`` positions (it needs ``delta_l`` trailing zeros; left: leading
    zeros) shifts layer ``l``'s output by ``e_l = (delta_l + e_{l-1}) / s_l`` positions (``e_0 = 0``), which
    must be an integer; the function is unchanged when the last filter absorbs the shift,
    ``delta_L + e_{L-1} = 0``. This is the paper's integrality condition on the accumulated padding
    ``t~_i = t_i + t~_{i-1} / s_{i-1}``: a shift can pass through a layer without padding when its stride
    divides it (e.g. ``k = (2,2,2)``, ``s = (1,1)``: ``((0,a), (b,c), (d,0))`` and ``((a,0), (b,c), (0,d))``).

    Returns:
      Distinct parameter tuples; length 1 when no padding can move (Thm 4.6: then ``f_theta`` is a
      smooth point of the neuromanifold).
    Raises:
      ValueError: ``theta`` not of length ``|k|``, more shift vectors to try than ``MAX_SYMMETRIES``;
      TypeError / ValueError: invalid filter sizes or strides.
    Source: Thm 4.6 (CNN singularities are exactly the proper subnetworks, nodes).
    """
    k, s = check_cnn(filter_sizes, strides)
    t0 = tuple(theta)
    if len(t0) != sum(k):
        raise ValueError(f"theta must have {sum(k)} entries, got {len(t0)}")
    seen, order, frontier = {t0}, [t0], [t0]
    while frontier:
        t = frontier.pop()
        for delta in _padding_shifts(k, s, t):
            new, i = [], 0
            for kk, d in zip(k, delta):
                w = list(t[i:i + kk])
                i += kk
                new += ([0] * d + w[:kk - d]) if d >= 0 else (w[-d:] + [0] * (-d))
            new = tuple(new)
            if new not in seen:
                seen.add(new)
                order.append(new)
                frontier.append(new)
    return order


def cnn_zero_patterns(filter_sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """Every 0/1 support pattern of the concatenated filters with no all-zero filter (the parameter
    points off ``phi^{-1}(0)`` that Thm 4.4 and Thm 4.6 speak about), in lexicographic order.

    Raises: TypeError / ValueError: invalid filter sizes, or more than ``MAX_SYMMETRIES`` patterns."""
    k = _positive_ints(filter_sizes, "filter_sizes", 1)
    check_limit(2 ** sum(k), MAX_SYMMETRIES, "MAX_SYMMETRIES", f"the zero patterns of filter sizes {k}")
    offs = np.cumsum((0,) + k)
    return [pat for pat in itertools.product((0, 1), repeat=sum(k))
            if all(any(pat[a:b]) for a, b in itertools.pairwise(offs))]


@dataclass(frozen=True)
class PaddingReport:
    """Thm 4.6 at one CNN parameter point: its padding orbit, its complex fiber and the Jacobians over the
    orbit.

    ``orbit``: the size of :func:`cnn_padding_orbit` (1: no movable padding); ``fiber_degree``: the
    number of complex points of the fiber with multiplicity (Groebner; None when positive-dimensional);
    ``orbit_in_fiber``: every orbit point gives the same function (exact, sympy); ``stack``: the
    :class:`FiberStack` over the orbit."""

    orbit: int
    fiber_degree: int | None
    orbit_in_fiber: bool
    stack: FiberStack

    @property
    def movable(self) -> bool:
        return self.orbit >= 2

    @property
    def fiber_is_orbit(self) -> bool:
        """The complex fiber is exactly the padding orbit (as many points as the Groebner degree)."""
        return self.orbit_in_fiber and self.fiber_degree == self.orbit

    @property
    def immersed(self) -> bool:
        """Every orbit point has Jacobian rank ``dim M``."""
        return all(r == self.stack.dim for r in self.stack.ranks)

    @property
    def smooth(self) -> bool:
        """One fiber point, an immersion there: one smooth branch through ``f``."""
        return self.fiber_degree == 1 and self.immersed

    @property
    def node(self) -> bool:
        """Several fiber points, each an immersion, tangent spaces spanning more than ``dim M``."""
        return self.orbit >= 2 and self.fiber_is_orbit and self.immersed and self.stack.singular


def cnn_padding_report(filter_sizes: Sequence[int], strides: Sequence[int], activation_coeffs,
                       theta: Sequence[int], seed: int = 0, p: int = PRIME) -> PaddingReport:
    """:func:`cnn_padding_orbit`, :func:`theory.neuromanifold.fiber` and :func:`fiber_stack` at one
    integer parameter point (Thm 4.6 says: ``node`` when the orbit has two or more points, ``smooth``
    otherwise, for generic activations with ``s(0) = 0``).

    Returns:
      A :class:`PaddingReport`.
    Raises:
      ValueError: ``|k| > MAX_FIBER_UNKNOWNS`` (Groebner basis), or as :func:`cnn_padding_orbit` and
        :func:`fiber_stack`; TypeError: non-integer parameters.
    Source: Thm 4.6 (both directions of the "if and only if").
    """
    k, s = check_cnn(filter_sizes, strides)
    orbit = cnn_padding_orbit(k, s, theta)
    fb = fiber("cnn", (k, s), activation_coeffs, list(theta))
    same = all(satisfies("cnn", (k, s), activation_coeffs, list(t), list(theta)) for t in orbit[1:])
    return PaddingReport(len(orbit), fb.degree, bool(same),
                         fiber_stack("cnn", (k, s), activation_coeffs, orbit, seed=seed, p=p))
