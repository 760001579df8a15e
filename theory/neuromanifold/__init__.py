"""Neuromanifolds of polynomial MLPs and CNNs: dimension, fibers, singularities, critical exposure.

Paper: Shahverdi, Marchetti, Kohn, *Learning on a Razor's Edge: Identifiability and Singularity of
Polynomial Neural Networks*, ICLR 2026 (arXiv 2505.11846).

Conventions (the paper's setup; the CNN conventions follow the authors' monomial-CNN paper,
arXiv 2410.00722):

* **MLP** with widths ``(d_0, ..., d_L)``, no biases: ``f_W(x) = W_L s(W_{L-1} s(... s(W_1 x)))``, the
  activation ``s`` entrywise, none after the last layer. Parameters ``W_l`` of shape ``(d_l, d_{l-1})``,
  flattened row-major and concatenated ``W_1, ..., W_L``: ``N = sum_l d_l d_{l-1}``.
* **CNN**, single channel, 1-D, valid convolution, scalar output: layer ``l`` has a filter ``w_l`` of size
  ``k_l`` and stride ``s_l``, ``(conv z)_j = sum_m w_l[m] z[s_l j + m]``. The layer sizes are
  ``d_L = 1`` and ``d_{l-1} = s_l (d_l - 1) + k_l``, so the last stride is irrelevant; strides are given for
  layers ``1..L-1`` (a tuple of length ``L - 1``, or ``L`` with the last entry ignored). Parameters: the
  filters concatenated, ``|k| = sum_l k_l``.
* The **activation** is a coefficient list ``c_0, ..., c_r`` (lowest degree first) of ints, floats
  (converted exactly with ``fractions.Fraction``), ``Fraction`` or sympy Rationals.
* The **neuromanifold** is the image of ``phi: W -> f_W`` in the space ``V`` spanned by the monomials that
  occur; its dimension is the generic rank of the Jacobian of ``phi``.

Exact ranks are computed at random points of a large prime field (``p = 2^31 - 1``, python-flint
``nmod_mat``) or at rational points (``fmpq_mat``), from the Jacobian of ``W -> (f_W(x_1), ..., f_W(x_M))``
at ``M >= N`` random evaluation points (evaluation at generic points is injective on the image of the
Jacobian, so the rank is the coefficient-space rank; :func:`coefficient_jacobian` computes the latter
directly for small cases and the tests check they agree). A rank at a random point never exceeds the
generic rank, so the maximum over a few points is taken.

Exact ranks use :func:`theory.numerics.exact_rank` (python-flint); numeric ranks are read at the largest
singular-value gap by :func:`theory.numerics.gap_rank`, in float64 under :func:`theory.numerics.float64`.

Bounded work: every public function finishes in bounded time or refuses up front with a ``ValueError``
naming the limit it would exceed (``MAX_EXACT_PARAMS``, ``MAX_DEGREE``, ... in
:mod:`theory.neuromanifold.architectures`); arguments that must be integers refuse floats (``TypeError``)
and real arguments refuse NaN and infinities.

Submodules: :mod:`~theory.neuromanifold.activations`, :mod:`~theory.neuromanifold.architectures` (shapes,
limits), :mod:`~theory.neuromanifold.ranks` (exact Jacobians and generic ranks),
:mod:`~theory.neuromanifold.dimension` (ambient space, expected and actual dimension),
:mod:`~theory.neuromanifold.networks` and :mod:`~theory.neuromanifold.numeric_ranks` (JAX),
:mod:`~theory.neuromanifold.symbolic` (sympy), :mod:`~theory.neuromanifold.fibers`,
:mod:`~theory.neuromanifold.singularities`, :mod:`~theory.neuromanifold.patterns` (sweeps over CNN zero
patterns), :mod:`~theory.neuromanifold.dynamics` (critical exposure,
sparsity bias) and :mod:`~theory.neuromanifold.grids`. Everything is re-exported here.
"""

from theory.neuromanifold.activations import _to_fraction, activation, exponents, is_monomial
from theory.neuromanifold.architectures import (
    MAX_BASIS,
    MAX_DEGREE,
    MAX_EVAL_POINTS,
    MAX_EXACT_PARAMS,
    MAX_FIBER_UNKNOWNS,
    MAX_GRID,
    MAX_INPUT_SIZE,
    MAX_JACOBIAN_ENTRIES,
    MAX_NUMERIC_PARAMS,
    MAX_POINTS,
    MAX_QQ_DEGREE,
    MAX_STACKED_COLUMNS,
    MAX_STANDARD_MONOMIALS,
    MAX_SYMBOLIC_DEGREE,
    MAX_SYMBOLIC_PARAMS,
    MAX_SYMMETRIES,
    _shape_info,
    check_cnn,
    check_widths,
    cnn_layer_sizes,
    mlp_num_params,
    output_degree,
)
from theory.neuromanifold.dimension import (
    cnn_ambient_dimension,
    cnn_dimension,
    cnn_support,
    expected_dimension,
    mlp_ambient_dimension,
    mlp_degrees,
    mlp_dimension,
    monomial_basis,
)
from theory.neuromanifold.dynamics import (
    coefficient_projector,
    exposure_trial_fn,
    sparsity_trial_fn,
    subnetwork_distance,
)
from theory.neuromanifold.fibers import FiberReport, fiber, fiber_equations, mlp_symmetries
from theory.neuromanifold.grids import (
    ACTIVATIONS,
    COMPARED_CNN,
    COMPARED_MLP,
    cnn_grid,
    dense_activation,
    grid_sample,
    mlp_grid,
)
from theory.neuromanifold.networks import cnn_apply, mlp_apply, network_apply
from theory.neuromanifold.numeric_ranks import NumericRankReport, mlp_numeric_ranks, numeric_rank
from theory.neuromanifold.ranks import RankReport, eval_jacobian, exact_rank, generic_rank, random_point
from theory.neuromanifold.singularities import (
    CubicNormal,
    FiberStack,
    NodeCertificate,
    PaddingReport,
    StackCertificate,
    cnn_node_certificate,
    cnn_node_pair,
    cnn_padding_orbit,
    cnn_padding_report,
    cnn_zero_patterns,
    cubic_gradient_on_manifold,
    dead_neuron_certificate,
    fiber_stack,
    implicit_cubic_221,
    implicit_cubic_normal,
)
from theory.neuromanifold.patterns import (
    cnn_pattern_ranks,
    cnn_sparse_full_rank,
    poly_name,
    two_layer_move,
)
from theory.neuromanifold.symbolic import (
    cnn_sympy,
    coefficient_jacobian,
    coefficient_map,
    mlp_sympy,
    network_sympy,
    satisfies,
)
from theory.numerics import PRIME, gap_rank

__all__ = [
    "cnn_pattern_ranks",
    "cnn_sparse_full_rank",
    "poly_name",
    "two_layer_move",
    "ACTIVATIONS",
    "COMPARED_CNN",
    "COMPARED_MLP",
    "MAX_BASIS",
    "MAX_DEGREE",
    "MAX_EVAL_POINTS",
    "MAX_EXACT_PARAMS",
    "MAX_FIBER_UNKNOWNS",
    "MAX_GRID",
    "MAX_INPUT_SIZE",
    "MAX_JACOBIAN_ENTRIES",
    "MAX_NUMERIC_PARAMS",
    "MAX_POINTS",
    "MAX_QQ_DEGREE",
    "MAX_STACKED_COLUMNS",
    "MAX_STANDARD_MONOMIALS",
    "MAX_SYMBOLIC_DEGREE",
    "MAX_SYMBOLIC_PARAMS",
    "MAX_SYMMETRIES",
    "PRIME",
    "CubicNormal",
    "FiberReport",
    "FiberStack",
    "NodeCertificate",
    "NumericRankReport",
    "PaddingReport",
    "RankReport",
    "StackCertificate",
    "_shape_info",
    "_to_fraction",
    "activation",
    "check_cnn",
    "check_widths",
    "cnn_ambient_dimension",
    "cnn_apply",
    "cnn_dimension",
    "cnn_grid",
    "cnn_layer_sizes",
    "cnn_node_certificate",
    "cnn_node_pair",
    "cnn_padding_orbit",
    "cnn_padding_report",
    "cnn_support",
    "cnn_sympy",
    "cnn_zero_patterns",
    "coefficient_jacobian",
    "coefficient_map",
    "coefficient_projector",
    "cubic_gradient_on_manifold",
    "dead_neuron_certificate",
    "dense_activation",
    "eval_jacobian",
    "exact_rank",
    "expected_dimension",
    "exponents",
    "exposure_trial_fn",
    "fiber",
    "fiber_equations",
    "fiber_stack",
    "gap_rank",
    "generic_rank",
    "grid_sample",
    "implicit_cubic_221",
    "implicit_cubic_normal",
    "is_monomial",
    "mlp_ambient_dimension",
    "mlp_apply",
    "mlp_degrees",
    "mlp_dimension",
    "mlp_grid",
    "mlp_num_params",
    "mlp_numeric_ranks",
    "mlp_symmetries",
    "mlp_sympy",
    "monomial_basis",
    "network_apply",
    "network_sympy",
    "numeric_rank",
    "output_degree",
    "random_point",
    "satisfies",
    "sparsity_trial_fn",
    "subnetwork_distance",
]
