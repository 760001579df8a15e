"""Polynomial activations: exact coefficients (``Fraction``), their exponents, and float evaluation in JAX
(``s(t) = sum_i c_i t^i``, coefficients lowest degree first)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import jax.numpy as jnp
import numpy as np
import sympy as sp


def _to_fraction(c: Any, where: str) -> Fraction:
    """One coefficient as an exact Fraction (floats converted exactly, never via sympy Float)."""
    if isinstance(c, bool) or c is None or isinstance(c, (str, bytes, complex)):
        raise TypeError(f"{where}: expected an int, float, Fraction or sympy Rational, got {c!r}")
    if isinstance(c, Fraction):
        return c
    if isinstance(c, numbers.Integral):
        return Fraction(int(c))
    if isinstance(c, float) or isinstance(c, np.floating):
        if not math.isfinite(float(c)):
            raise ValueError(f"{where}: coefficient must be finite, got {c!r}")
        return Fraction(float(c))
    if isinstance(c, sp.Basic):
        if c.is_Rational:
            return Fraction(int(c.p), int(c.q))
        if c.is_Float:
            v = float(c)
            if not math.isfinite(v):
                raise ValueError(f"{where}: coefficient must be finite, got {c!r}")
            return Fraction(v)
        raise TypeError(f"{where}: expected a rational number, got the sympy expression {c!r}")
    if isinstance(c, numbers.Rational):
        return Fraction(int(c.numerator), int(c.denominator))
    raise TypeError(f"{where}: expected an int, float, Fraction or sympy Rational, got {type(c).__name__}")


def activation(coeffs: Sequence[Any]) -> tuple[Fraction, ...]:
    """The activation ``s(t) = sum_i c_i t^i`` as exact Fractions, trailing zeros removed.

    Args:
      coeffs: ``c_0, ..., c_r`` lowest degree first; ints, floats (converted exactly with
        ``Fraction(x)``), ``Fraction`` or sympy Rationals.
    Returns:
      ``(c_0, ..., c_r)`` with ``c_r != 0``.
    Raises:
      TypeError: not a sequence, or a coefficient that is not a real rational/float number.
      ValueError: empty, non-finite, or identically zero.
    """
    if isinstance(coeffs, (str, bytes, dict)) or not hasattr(coeffs, "__iter__"):
        raise TypeError(f"activation_coeffs must be a sequence of numbers c_0..c_r, got {coeffs!r}")
    cs = [_to_fraction(c, f"activation_coeffs[{i}]") for i, c in enumerate(coeffs)]
    if not cs:
        raise ValueError("activation_coeffs is empty: give c_0..c_r, lowest degree first")
    while cs and cs[-1] == 0:
        cs.pop()
    if not cs:
        raise ValueError("activation_coeffs are all zero: the activation must be a nonzero polynomial")
    return tuple(cs)


def exponents(coeffs: Sequence[Any]) -> tuple[int, ...]:
    """Exponents with a nonzero coefficient, increasing. Raises: as :func:`activation`."""
    return tuple(i for i, c in enumerate(activation(coeffs)) if c != 0)


def is_monomial(coeffs: Sequence[Any]) -> bool:
    """True when the activation has exactly one nonzero coefficient (``c x^r``). Raises: as
    :func:`activation`."""
    return len(exponents(coeffs)) == 1


def _float_coeffs(activation_coeffs) -> tuple[float, ...]:
    """The activation's coefficients as floats (validated by :func:`activation`)."""
    return tuple(float(c) for c in activation(activation_coeffs))


def _jsigma(cs, z):
    """``s(z)`` by Horner's rule in JAX, ``cs`` float coefficients lowest degree first."""
    acc = jnp.zeros_like(z) + cs[-1]
    for c in reversed(cs[:-1]):
        acc = acc * z + c
    return acc
