"""Symbolic networks (sympy) and the coefficient map ``phi``; small architectures only."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import sympy as sp
from sympy.polys.matrices import DomainMatrix

from theory.neuromanifold.activations import _to_fraction, activation
from theory.neuromanifold.architectures import (
    _shape_info,
    check_cnn,
    check_symbolic_size,
    check_widths,
    cnn_layer_sizes,
    mlp_num_params,
)


def _sympy_coeffs(activation_coeffs):
    return [sp.Rational(c.numerator, c.denominator) for c in activation(activation_coeffs)]


def _sympy_sigma(cs, z):
    return sum(c * z**i for i, c in enumerate(cs) if c != 0)


def mlp_sympy(widths: Sequence[int], activation_coeffs: Sequence[Any], params: Sequence[Any] | None = None):
    """The MLP as sympy expressions.

    Args:
      params: ``N`` values or symbols (default: symbols ``W{l}_{i}_{j}``), flattened as ``W_1..W_L``.
    Returns:
      ``(outputs, xs, params)``: ``d_L`` expanded expressions in the inputs ``x0..x{d_0-1}``.
    Raises:
      ValueError / TypeError: invalid widths, activation or parameter count; ValueError naming
        ``MAX_SYMBOLIC_PARAMS`` or ``MAX_SYMBOLIC_DEGREE`` for networks too large to expand.
    """
    w = check_widths(widths)
    check_symbolic_size("mlp", w, activation_coeffs)
    cs = _sympy_coeffs(activation_coeffs)
    xs = sp.symbols(f"x0:{w[0]}")
    if params is None:
        params = [sp.Symbol(f"W{l + 1}_{i}_{j}") for l, (a, b) in enumerate(zip(w[:-1], w[1:]))
                  for i in range(b) for j in range(a)]
    params = [sp.nsimplify(sp.Rational(*_frac_pair(p))) if _is_number(p) else p for p in params]
    if len(params) != mlp_num_params(w):
        raise ValueError(f"params must have {mlp_num_params(w)} entries, got {len(params)}")
    h, i = list(xs), 0
    for l, (a, b) in enumerate(zip(w[:-1], w[1:])):
        W = [params[i + r * a:i + (r + 1) * a] for r in range(b)]
        i += a * b
        z = [sum(W[r][c] * h[c] for c in range(a)) for r in range(b)]
        h = z if l == len(w) - 2 else [_sympy_sigma(cs, zz) for zz in z]
    return [sp.expand(e) for e in h], tuple(xs), tuple(params)


def cnn_sympy(filter_sizes: Sequence[int], strides: Sequence[int], activation_coeffs: Sequence[Any],
              params: Sequence[Any] | None = None):
    """The CNN as a sympy expression: ``([output], xs, params)`` with params ``w{l}_{m}`` by default.

    Raises: as :func:`mlp_sympy`."""
    k, s = check_cnn(filter_sizes, strides)
    check_symbolic_size("cnn", (k, s), activation_coeffs)
    cs = _sympy_coeffs(activation_coeffs)
    d = cnn_layer_sizes(k, s)
    xs = sp.symbols(f"x0:{d[0]}")
    if params is None:
        params = [sp.Symbol(f"w{l + 1}_{m}") for l in range(len(k)) for m in range(k[l])]
    params = [sp.Rational(*_frac_pair(p)) if _is_number(p) else p for p in params]
    if len(params) != sum(k):
        raise ValueError(f"params must have {sum(k)} entries, got {len(params)}")
    h, i = list(xs), 0
    for l in range(len(k)):
        wl = params[i:i + k[l]]
        i += k[l]
        stride = s[l] if l < len(s) else 1
        z = [sum(wl[m] * h[stride * j + m] for m in range(k[l])) for j in range(d[l + 1])]
        h = z if l == len(k) - 1 else [_sympy_sigma(cs, zz) for zz in z]
    return [sp.expand(h[0])], tuple(xs), tuple(params)


def _is_number(p) -> bool:
    if isinstance(p, sp.Basic):
        return bool(p.is_number)
    return isinstance(p, (numbers.Number, Fraction))


def _frac_pair(p) -> tuple[int, int]:
    f = _to_fraction(p, "parameter")
    return f.numerator, f.denominator


def network_sympy(kind: str, shape: Any, activation_coeffs, params=None):
    """:func:`mlp_sympy` or :func:`cnn_sympy` by ``kind``. Raises: as those, and ValueError / TypeError
    for an invalid kind or shape."""
    shp, _, _ = _shape_info(kind, shape)
    if kind == "mlp":
        return mlp_sympy(shp, activation_coeffs, params)
    return cnn_sympy(shp[0], shp[1], activation_coeffs, params)


def coefficient_map(kind: str, shape: Any, activation_coeffs, params=None):
    """``phi``: the coefficients of ``f_W`` in the monomial basis of the inputs.

    Returns:
      ``(monomials, coeffs, params)``: the list of ``(output, exponent tuple)`` keys (sorted) and the
      matching coefficient expressions in ``params`` (symbols by default).
    Raises: as :func:`mlp_sympy`. Source: the paper's parametrisation ``phi``.
    """
    outs, xs, ps = network_sympy(kind, shape, activation_coeffs, params)
    keys, vals = [], []
    for o, e in enumerate(outs):
        d = sp.Poly(e, *xs).as_dict() if e != 0 else {}
        for mono in sorted(d):
            keys.append((o, mono))
            vals.append(d[mono])
    return keys, vals, ps


def coefficient_jacobian(kind: str, shape: Any, activation_coeffs, point: Sequence[Any]):
    """Exact Jacobian of ``phi`` (coefficient space) at a rational ``point``, as a sympy DomainMatrix
    over QQ, rows = monomials that occur generically (:func:`coefficient_map` with symbols), columns the
    ``N`` parameters. Raises: as :func:`mlp_sympy`, and ValueError for a ``point`` of the wrong length."""
    _, vals, ps = coefficient_map(kind, shape, activation_coeffs)
    pt = [sp.Rational(*_frac_pair(v)) for v in point]
    if len(pt) != len(ps):
        raise ValueError(f"point must have {len(ps)} entries, got {len(pt)}")
    sub = dict(zip(ps, pt))
    rows = [[sp.diff(v, p).subs(sub) for p in ps] for v in vals]
    return DomainMatrix.from_list_sympy(len(rows), len(ps), rows).convert_to(sp.QQ)


def satisfies(kind: str, shape: Any, activation_coeffs, w: Sequence[Any], w0: Sequence[Any]) -> bool:
    """True when ``f_w == f_{w0}`` exactly (sympy expansion; ``w`` may hold symbols). Raises: as
    :func:`mlp_sympy`."""
    a, _, _ = network_sympy(kind, shape, activation_coeffs, list(w))
    b, _, _ = network_sympy(kind, shape, activation_coeffs, list(w0))
    return all(sp.expand(x - y) == 0 for x, y in zip(a, b))
