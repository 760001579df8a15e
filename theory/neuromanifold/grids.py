"""The activations, architecture grids and compared pairs used by the claims, the sims and the figures."""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from fractions import Fraction

from theory.neuromanifold.activations import activation
from theory.neuromanifold.architectures import MAX_GRID
from theory.numerics import check_int, check_limit

ACTIVATIONS: dict[str, tuple[Fraction, ...]] = {
    "x3+x2": activation([0, 0, 1, 1]),                                            # the paper's App. D
    "generic cubic": activation([Fraction(1, 3), Fraction(2, 7), Fraction(-5, 4), 1]),
    "generic quintic": activation([Fraction(1, 3), Fraction(2, 7), Fraction(-5, 4), Fraction(3, 5),
                                   Fraction(-1, 6), 1]),
    "monomial x3": activation([0, 0, 0, 1]),
    "quadratic": activation([Fraction(1, 3), Fraction(2, 7), 1]),
}


def dense_activation(degree: int, seed: int = 0) -> tuple[Fraction, ...]:
    """A dense activation of the given degree with random rational coefficients: ``c_r = 1`` and every
    ``c_i`` (``i < r``) nonzero, ``+-n/d`` with ``n, d`` uniform in ``1..9`` (fixed seed).

    Thm 4.1 assumes a *sufficiently generic* activation: coefficients outside a proper Zariski-closed
    set. A random dense rational polynomial avoids any fixed such set except with small probability;
    every coefficient nonzero excludes the sparse families that are known to be special (monomials,
    even/odd activations, ``a x^3 + b x^2``).

    Returns:
      ``(c_0, ..., c_r)`` as Fractions, ``r + 1`` entries, all nonzero.
    Raises:
      TypeError: ``degree`` or ``seed`` not an integer. ValueError: ``degree < 1`` or above 64.
    Source: the hypothesis of Thm 4.1 (generic activation of large degree).
    """
    degree = check_int(degree, "degree", ge=1, le=64)
    seed = check_int(seed, "seed")
    rng = random.Random(1000 * seed + degree)
    cs = [Fraction(rng.choice((-1, 1)) * rng.randint(1, 9), rng.randint(1, 9)) for _ in range(degree)]
    return activation(cs + [Fraction(1)])


def mlp_grid(max_width: int = 4, depths: Sequence[int] = (2, 3, 4)) -> list[tuple[int, ...]]:
    """Every MLP with ``L`` in ``depths`` weight layers and all widths (input, hidden, output) in
    ``1..max_width`` (1344 architectures for the defaults).

    Raises: TypeError (non-integer ``max_width`` or depth) / ValueError (below 1, or more than
    ``MAX_GRID`` architectures)."""
    max_width = check_int(max_width, "max_width", ge=1)
    depths = [check_int(L, "depths[]", ge=1) for L in depths]
    check_limit(sum(max_width ** (L + 1) for L in depths), MAX_GRID, "MAX_GRID",
                f"the number of MLPs of widths 1..{max_width} and depths {tuple(depths)}")
    return [w for L in depths for w in itertools.product(range(1, max_width + 1), repeat=L + 1)]


def grid_sample(n_depth4: int, seed: int = 0, max_width: int = 4) -> list[tuple[int, ...]]:
    """Depths 2 and 3 of :func:`mlp_grid` in full plus a fixed-seed sample of ``n_depth4`` depth-4 nets.

    Raises: as :func:`mlp_grid`, and for ``n_depth4`` not an integer >= 0."""
    n_depth4 = check_int(n_depth4, "n_depth4", ge=0)
    d4 = mlp_grid(max_width, (4,))
    rng = random.Random(seed)
    return mlp_grid(max_width, (2, 3)) + sorted(rng.sample(d4, min(n_depth4, len(d4))))


def cnn_grid() -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """CNNs with 2 or 3 layers, filter sizes 2..3, every stride ``1..k_l`` (2 layers) or ``1..2``, as
    ``(filter_sizes, strides)`` pairs (fixed: nothing raises)."""
    out = []
    for L in (2, 3):
        for k in itertools.product((2, 3), repeat=L):
            for s in itertools.product(*(range(1, (k[l] if L == 2 else 2) + 1) for l in range(L - 1))):
                out.append((k, s))
    return out


# The MLP and CNN of comparable size compared by critical_exposure and sparsity_bias (and their sims).
COMPARED_MLP = ("mlp", (2, 2, 1), ACTIVATIONS["x3+x2"])
COMPARED_CNN = ("cnn", ((3, 2), (2,)), activation([0, 1, 1]))
