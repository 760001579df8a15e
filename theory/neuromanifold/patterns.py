"""Exact ranks of CNNs at sparse parameter points and the two-layer reading of padding moves (Thm 4.4,
Thm 4.6): the sweeps the claims run over zero patterns, kept with the mathematics they use."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Any

import numpy as np

from theory.neuromanifold.activations import activation
from theory.neuromanifold.architectures import check_cnn
from theory.neuromanifold.ranks import eval_jacobian, exact_rank, random_point
from theory.neuromanifold.singularities import cnn_padding_orbit
from theory.numerics import PRIME, check_int


def poly_name(activation_coeffs: Sequence[Any], var: str = "x") -> str:
    """``x^3 + x^2``-style name of an activation (highest degree first) in the variable ``var``.

    Raises: as :func:`theory.neuromanifold.activations.activation`."""
    terms = []
    for i, c in reversed(list(enumerate(activation(activation_coeffs)))):
        if c == 0:
            continue
        if i == 0:  # the constant term is its coefficient alone
            terms.append(f"{c}")
            continue
        mono = var if i == 1 else f"{var}^{i}"
        terms.append(mono if c == 1 else f"({c}){mono}")
    return " + ".join(terms)


def cnn_pattern_ranks(filter_sizes: Sequence[int], strides: Sequence[int], activation_coeffs: Sequence[Any],
                      seed: int = 0) -> dict[tuple[int, ...], int]:
    """Exact (F_p) Jacobian rank at a random point of every 0/1 support pattern of the filters, zero
    filters included (Thm 4.4: rank ``|k|`` off ``phi^{-1}(0)``, i.e. where no filter is all zero).

    Returns:
      pattern (one 0/1 entry per parameter) -> rank, over all ``2^|k|`` patterns.
    Raises:
      TypeError / ValueError: invalid filter sizes, strides, activation or seed; ValueError for more
        than 2^12 patterns.
    """
    k, s = check_cnn(filter_sizes, strides)
    if sum(k) > 12:
        raise ValueError(f"cnn_pattern_ranks enumerates 2^|k| patterns; |k| = {sum(k)} > 12")
    rng = random.Random(check_int(seed, "seed"))
    out = {}
    for pat in itertools.product((0, 1), repeat=sum(k)):
        theta = np.array([rng.randrange(1, PRIME) * b for b in pat], dtype=object)
        _, X = random_point("cnn", (k, s), rng, "modp", PRIME, 2 * sum(k) + 10)
        out[pat] = exact_rank(eval_jacobian("cnn", (k, s), activation_coeffs, theta, X))
    return out


def cnn_sparse_full_rank(cnns: Sequence[tuple], activation_coeffs: Sequence[Any], per_cnn: int = 6,
                         density: float = 0.6, seed: int = 0) -> tuple[int, int]:
    """How many random sparse points (each entry kept with probability ``density``, redrawn until no
    filter is all zero) of each CNN ``(filter_sizes, strides)`` have Jacobian rank ``|k|`` over F_p.

    Returns:
      ``(points with rank |k|, points)``; Thm 4.4 predicts all of them.
    Raises:
      TypeError / ValueError: an invalid CNN, activation, count or density outside ``(0, 1]``.
    """
    per_cnn = check_int(per_cnn, "per_cnn", ge=1)
    if not 0 < density <= 1:
        raise ValueError(f"density must be in (0, 1], got {density}")
    rng = random.Random(check_int(seed, "seed"))
    ok = total = 0
    for kk, ss in cnns:
        kk, ss = check_cnn(kk, ss)
        n, offs = sum(kk), np.cumsum((0,) + kk)
        for _ in range(per_cnn):
            while True:
                pat = [rng.random() < density for _ in range(n)]
                if all(any(pat[a:b]) for a, b in itertools.pairwise(offs)):
                    break
            theta = np.array([rng.randrange(1, PRIME) * int(b) for b in pat], dtype=object)
            _, X = random_point("cnn", (kk, ss), rng, "modp", PRIME, 2 * n + 8)
            ok += int(exact_rank(eval_jacobian("cnn", (kk, ss), activation_coeffs, theta, X)) == n)
            total += 1
    return ok, total


def two_layer_move(filter_sizes: Sequence[int], strides: Sequence[int], theta: Sequence[Any]) -> bool:
    """Whether a padding move between two consecutive layers alone (no shift passed through a third
    layer) exists at ``theta``: the simple reading of Thm 4.6 that the accumulated rule of
    :func:`~theory.neuromanifold.singularities.cnn_padding_orbit` extends.

    Raises: as :func:`~theory.neuromanifold.singularities.cnn_padding_orbit`."""
    k, s = check_cnn(filter_sizes, strides)
    for l in range(len(k) - 1):
        off = sum(k[:l])
        if len(cnn_padding_orbit((k[l], k[l + 1]), (s[l],), list(theta)[off:off + k[l] + k[l + 1]])) > 1:
            return True
    return False
