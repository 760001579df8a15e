"""MLP and CNN architectures: validation, sizes, parameter layout, and the work limits of the package."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

from theory.neuromanifold.activations import activation
from theory.numerics import check_limit

# Work limits. Each public function checks the ones it needs before any work starts and refuses larger
# inputs with a ValueError naming the limit (measured on one core: an exact F_p rank at N = 2000 takes
# about 4 s; the same rank over Q at output degree 3^10 about as long).
MAX_EXACT_PARAMS = 2000  # parameters N (or |k|) of an exact Jacobian rank: an (N + 8) x N matrix
MAX_QQ_DEGREE = 3**10  # output degree r^(L-1) of a Jacobian over Q (its entries' size grows with it)
MAX_INPUT_SIZE = 4096  # input length d_0 (a strided CNN's grows geometrically with its depth)
MAX_EVAL_POINTS = 10**4  # evaluation points of one Jacobian
MAX_POINTS = 64  # random points (or fiber samples) of one rank computation
MAX_STACKED_COLUMNS = 4000  # columns of the Jacobians stacked by a singularity certificate
MAX_NUMERIC_PARAMS = 2000  # parameters of a float64 Jacobian SVD
MAX_JACOBIAN_ENTRIES = 10**8  # entries of one Jacobian (or of one padded batch of Jacobians)
MAX_DEGREE = 10**4  # output degree r^(L-1) for the degree sets of the ambient space V
MAX_BASIS = 2000  # dim V of an explicit monomial basis (and its pseudo-inverse)
MAX_GRID = 10**6  # architectures enumerated by a grid
MAX_SYMMETRIES = 10**4  # points of a symmetry orbit
MAX_SYMBOLIC_PARAMS = 24  # parameters of a sympy expansion of a network
MAX_SYMBOLIC_DEGREE = 27  # output degree of a sympy expansion of a network
MAX_FIBER_UNKNOWNS = 8  # unknowns of a Groebner basis
MAX_STANDARD_MONOMIALS = 10**6  # monomials enumerated to count the points of a zero-dimensional fiber


def _positive_ints(xs: Any, name: str, min_len: int) -> tuple[int, ...]:
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        raise TypeError(f"{name} must be a sequence of positive integers, got {xs!r}")
    out = []
    for i, v in enumerate(xs):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise TypeError(f"{name}[{i}] must be an integer, got {v!r}")
        if int(v) < 1:
            raise ValueError(f"{name}[{i}] must be >= 1, got {v}")
        out.append(int(v))
    if len(out) < min_len:
        raise ValueError(f"{name} needs at least {min_len} entries, got {tuple(out)}")
    return tuple(out)


def check_widths(widths: Sequence[int]) -> tuple[int, ...]:
    """Validated MLP widths ``(d_0, ..., d_L)``, ``L >= 1``, every width ``>= 1``.

    Raises:
      TypeError: not a sequence of integers. ValueError: fewer than two widths or a width below 1.
    """
    return _positive_ints(widths, "widths", 2)


def check_cnn(filter_sizes: Sequence[int], strides: Sequence[int],
              input_size: int | None = None) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Validated CNN ``(filter_sizes (k_1..k_L), strides (s_1..s_{L-1}))``.

    ``strides`` may have ``L - 1`` entries or ``L`` (the last stride does not matter for a scalar
    output and is dropped). A stride larger than its filter would skip input entries between windows,
    so ``s_l <= k_l`` is required. If ``input_size`` is given it must equal the input length the
    architecture needs for a scalar output, ``d_0`` of :func:`cnn_layer_sizes`.

    Raises:
      TypeError: non-integer entries. ValueError: no filter, a filter size or stride below 1, a stride
        count other than ``L - 1`` or ``L``, a stride above its filter size, or an ``input_size`` that
        the strides do not fit.
    """
    k = _positive_ints(filter_sizes, "filter_sizes", 1)
    s = _positive_ints(strides, "strides", 0)
    L = len(k)
    if len(s) == L:
        s = s[:-1]
    if len(s) != L - 1:
        raise ValueError(f"strides must have {L - 1} (or {L}) entries for {L} layers, got {len(s)}")
    for l, (st, kk) in enumerate(zip(s, k)):
        if st > kk:
            raise ValueError(f"strides do not fit the input: stride {st} of layer {l + 1} exceeds its filter "
                             f"size {kk}, so the windows skip input entries")
    if input_size is not None:
        d0 = cnn_layer_sizes(k, s)[0]
        if isinstance(input_size, bool) or not isinstance(input_size, numbers.Integral):
            raise TypeError(f"input_size must be an integer, got {input_size!r}")
        if input_size != d0:
            raise ValueError(f"strides {s} and filter sizes {k} do not fit input_size={input_size}: a valid "
                             f"convolution down to one output needs an input of length {d0}")
    return k, s


def cnn_layer_sizes(filter_sizes: Sequence[int], strides: Sequence[int]) -> tuple[int, ...]:
    """``(d_0, ..., d_L)`` with ``d_L = 1`` and ``d_{l-1} = s_l (d_l - 1) + k_l`` (valid convolution).

    Raises: TypeError / ValueError: sizes or strides that are not integers >= 1 (see :func:`check_cnn`
    for the full validation)."""
    k = _positive_ints(filter_sizes, "filter_sizes", 1)
    s = _positive_ints(strides, "strides", 0)
    d = [1]
    for l in range(len(k) - 1, -1, -1):
        stride = s[l] if l < len(s) else 1
        d.append(stride * (d[-1] - 1) + k[l])
    return tuple(reversed(d))


def mlp_num_params(widths: Sequence[int]) -> int:
    """``N = sum_l d_l d_{l-1}``. Raises: as :func:`check_widths`."""
    w = check_widths(widths)
    return sum(a * b for a, b in zip(w[:-1], w[1:]))


def _shape_info(kind, shape) -> tuple[Any, int, int]:
    """``(validated shape, N or |k|, d_0)`` for ``kind`` ``"mlp"`` (widths) or ``"cnn"``
    (``(filter_sizes, strides)``). Raises TypeError / ValueError on an invalid kind or shape."""
    if kind == "mlp":
        w = check_widths(shape)
        return w, mlp_num_params(w), w[0]
    if kind == "cnn":
        if not (isinstance(shape, (tuple, list)) and len(shape) == 2):
            raise TypeError(f"cnn shape must be (filter_sizes, strides), got {shape!r}")
        k, s = check_cnn(*shape)
        return (k, s), sum(k), cnn_layer_sizes(k, s)[0]
    raise ValueError(f"kind must be 'mlp' or 'cnn', got {kind!r}")


def output_degree(kind: str, shape: Any, activation_coeffs) -> int:
    """Degree ``r^(L-1)`` of ``f_W`` in the inputs: ``r`` the activation's degree, ``L`` the number of
    (weight or filter) layers. Raises: as :func:`_shape_info` and
    :func:`theory.neuromanifold.activations.activation`."""
    shp, _, _ = _shape_info(kind, shape)
    n_act = len(shp) - 2 if kind == "mlp" else len(shp[0]) - 1
    return (len(activation(activation_coeffs)) - 1) ** n_act


def check_rank_size(kind: str, shape: Any, activation_coeffs, field: str = "modp",
                    n_eval: int | None = None) -> tuple[Any, int, int]:
    """:func:`_shape_info`, after refusing an exact Jacobian rank too large to compute.

    Raises:
      ValueError: ``N > MAX_EXACT_PARAMS``, ``d_0 > MAX_INPUT_SIZE``, ``n_eval > MAX_EVAL_POINTS``, a
        Jacobian ``(d_L n_eval) x N`` above ``MAX_JACOBIAN_ENTRIES``, or (``field="QQ"``) an output degree
        above ``MAX_QQ_DEGREE``.
    """
    shp, n, d0 = _shape_info(kind, shape)
    check_limit(n, MAX_EXACT_PARAMS, "MAX_EXACT_PARAMS", f"the parameter count of {kind} {shape}")
    _check_evaluation(kind, shape, shp, n, d0, n_eval)
    if field == "QQ":
        check_limit(output_degree(kind, shape, activation_coeffs), MAX_QQ_DEGREE, "MAX_QQ_DEGREE",
                    f"the output degree of {kind} {shape} (Jacobian entries over Q grow with it)")
    return shp, n, d0


def check_numeric_size(kind: str, shape: Any, n_eval: int | None = None) -> tuple[Any, int, int]:
    """:func:`_shape_info`, after refusing a float64 Jacobian SVD too large to compute.

    Raises:
      ValueError: ``N > MAX_NUMERIC_PARAMS``, ``d_0 > MAX_INPUT_SIZE``, ``n_eval > MAX_EVAL_POINTS`` or
        a Jacobian ``(d_L n_eval) x N`` above ``MAX_JACOBIAN_ENTRIES``.
    """
    shp, n, d0 = _shape_info(kind, shape)
    check_limit(n, MAX_NUMERIC_PARAMS, "MAX_NUMERIC_PARAMS", f"the parameter count of {kind} {shape}")
    _check_evaluation(kind, shape, shp, n, d0, n_eval)
    return shp, n, d0


def _check_evaluation(kind, shape, shp, n: int, d0: int, n_eval: int | None) -> None:
    check_limit(d0, MAX_INPUT_SIZE, "MAX_INPUT_SIZE", f"the input size d_0 of {kind} {shape}")
    if n_eval is not None:
        check_limit(n_eval, MAX_EVAL_POINTS, "MAX_EVAL_POINTS", "the number of evaluation points")
        d_out = shp[-1] if kind == "mlp" else 1
        check_limit(d_out * n_eval * n, MAX_JACOBIAN_ENTRIES, "MAX_JACOBIAN_ENTRIES",
                    f"the Jacobian size (d_L * points * parameters) of {kind} {shape}")


def check_symbolic_size(kind: str, shape: Any, activation_coeffs) -> None:
    """Refuse a sympy expansion of a network that is too large.

    Raises:
      ValueError: more than ``MAX_SYMBOLIC_PARAMS`` parameters or an output degree above
        ``MAX_SYMBOLIC_DEGREE``.
    """
    _, n, _ = _shape_info(kind, shape)
    check_limit(n, MAX_SYMBOLIC_PARAMS, "MAX_SYMBOLIC_PARAMS", f"the parameter count of {kind} {shape}")
    check_limit(output_degree(kind, shape, activation_coeffs), MAX_SYMBOLIC_DEGREE, "MAX_SYMBOLIC_DEGREE",
                f"the output degree of {kind} {shape}")


def _unflatten_mlp(theta, widths):
    out, i = [], 0
    for a, b in zip(widths[:-1], widths[1:]):
        out.append(theta[i:i + a * b].reshape(b, a))
        i += a * b
    return out


def _unflatten_cnn(theta, k):
    out, i = [], 0
    for kk in k:
        out.append(theta[i:i + kk])
        i += kk
    return out
