"""Fibers ``phi^{-1}(phi(W0))`` over C by Groebner bases, and the MLP symmetries that generate them
(Thm 4.1: finite fibers)."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import sympy as sp

from theory.neuromanifold.architectures import (
    MAX_FIBER_UNKNOWNS,
    MAX_STANDARD_MONOMIALS,
    MAX_SYMMETRIES,
    _shape_info,
    _unflatten_mlp,
    check_widths,
    mlp_num_params,
)
from theory.neuromanifold.symbolic import coefficient_map
from theory.numerics import check_limit


@dataclass(frozen=True)
class FiberReport:
    """The fiber ``phi^{-1}(phi(W0))`` over C.

    ``zero_dimensional``: finitely many complex solutions; ``degree``: their number counted with
    multiplicity (standard monomials of a grevlex basis; None when positive-dimensional);
    ``n_equations``, ``n_unknowns``: size of the system; ``seconds``: Groebner time."""

    zero_dimensional: bool
    degree: int | None
    n_equations: int
    n_unknowns: int
    seconds: float


def _standard_monomial_count(G, gens) -> int:
    """Number of monomials outside the initial ideal of a zero-dimensional Groebner basis (enumerated in
    the box of the pure-power leading monomials; ValueError naming ``MAX_STANDARD_MONOMIALS`` when that
    box is larger)."""
    lms = [sp.Poly(g, *gens).monoms(order=G.order)[0] for g in G.exprs]
    bound = []
    for i in range(len(gens)):
        pure = [lm[i] for lm in lms if all(e == 0 for j, e in enumerate(lm) if j != i) and lm[i] > 0]
        bound.append(min(pure))
    check_limit(math.prod(bound), MAX_STANDARD_MONOMIALS, "MAX_STANDARD_MONOMIALS",
                "the monomial box to enumerate")
    count = 0
    for mono in itertools.product(*(range(b) for b in bound)):
        if not any(all(m >= l for m, l in zip(mono, lm)) for lm in lms):
            count += 1
    return count


def fiber_equations(kind: str, shape: Any, activation_coeffs, w0: Sequence[Any]):
    """``(equations, unknowns)``: the coefficients of ``f_W - f_{W0}`` as polynomials in ``W``.

    Raises: as :func:`theory.neuromanifold.coefficient_map`."""
    keys, vals, ps = coefficient_map(kind, shape, activation_coeffs)
    keys0, vals0, _ = coefficient_map(kind, shape, activation_coeffs, params=w0)
    target = dict(zip(keys0, vals0))
    eqs = [v - target.get(k, 0) for k, v in zip(keys, vals)]
    eqs += [-v for k, v in target.items() if k not in set(keys)]
    return eqs, ps


def fiber(kind: Literal["mlp", "cnn"], shape: Any, activation_coeffs, w0: Sequence[Any]) -> FiberReport:
    """Solve ``phi(W) = phi(W0)`` over C with a grevlex Groebner basis (sympy); small architectures only.

    Args:
      w0: ``N`` rational parameters (flattened as in the package docstring).
    Returns:
      A :class:`FiberReport`; ``degree`` equals the number of distinct points when the ideal is radical
      (check by exhibiting that many distinct solutions, as the claims do).
    Raises:
      ValueError: more than ``MAX_FIBER_UNKNOWNS`` parameters (a Groebner basis has no useful time bound
        beyond that), or as :func:`theory.neuromanifold.coefficient_map`.
    Source: Thm 4.1 (finite fibers); the (2,2,1) fiber of the App. D example, computed here.
    """
    _, n, _ = _shape_info(kind, shape)
    check_limit(n, MAX_FIBER_UNKNOWNS, "MAX_FIBER_UNKNOWNS", f"the parameter count of {kind} {shape}")
    eqs, ps = fiber_equations(kind, shape, activation_coeffs, w0)
    t0 = time.perf_counter()
    G = sp.groebner(eqs, *ps, order="grevlex")
    zd = bool(G.is_zero_dimensional)
    deg = _standard_monomial_count(G, ps) if zd else None
    return FiberReport(zd, deg, len(eqs), len(ps), time.perf_counter() - t0)


def mlp_symmetries(widths: Sequence[int], w0: Sequence[Any], signs: bool = False) -> list[tuple]:
    """Parameters equivalent to ``w0`` under hidden-neuron permutations (and, with ``signs``, sign flips
    ``W_l[i,:] -> -W_l[i,:]``, valid for even activations). Returns distinct flattened tuples, sorted.

    Raises:
      ValueError: ``w0`` not of length ``N``, or a symmetry group (``prod d_l!``, times ``2^d_l`` with
        signs, over hidden layers) larger than ``MAX_SYMMETRIES``; TypeError / ValueError: invalid widths.
    Source: Thm 4.1 (generic fibers are the hidden-neuron symmetries).
    """
    w = check_widths(widths)
    if len(w0) != mlp_num_params(w):
        raise ValueError(f"w0 must have {mlp_num_params(w)} entries, got {len(w0)}")
    order = math.prod(math.factorial(d) * (2**d if signs else 1) for d in w[1:-1])
    check_limit(order, MAX_SYMMETRIES, "MAX_SYMMETRIES", f"the symmetry group order of mlp {w}")
    base = [np.array(_unflatten_mlp(np.array(list(w0), dtype=object), w)[l]) for l in range(len(w) - 1)]
    out = {tuple(np.concatenate([b.ravel() for b in base]).tolist())}
    changed = True
    while changed:
        changed = False
        for t in list(out):  # noqa: PERF101 - out grows inside the loop
            Ws = _unflatten_mlp(np.array(t, dtype=object), w)
            for l in range(len(w) - 2):
                n = w[l + 1]
                moves = [("swap", i, j) for i in range(n) for j in range(i + 1, n)]
                if signs:
                    moves += [("sign", i, i) for i in range(n)]
                for kind_, i, j in moves:
                    new = [W.copy() for W in Ws]
                    if kind_ == "swap":
                        new[l][[i, j], :] = new[l][[j, i], :]
                        new[l + 1][:, [i, j]] = new[l + 1][:, [j, i]]
                    else:
                        new[l][i, :] = -new[l][i, :]
                    key = tuple(np.concatenate([W.ravel() for W in new]).tolist())
                    if key not in out:
                        out.add(key)
                        changed = True
    return sorted(out)
