"""What a compiled function costs, counted on its jaxpr, and the accelerator the paper-scale plan
(:mod:`sims.plan`) estimates time for.

FLOPs and bytes per primitive come from JAX's own roofline rules (``jax.experimental.roofline``: a dot is
``2 * M * N * K``, an elementwise op one FLOP per output element, bytes are inputs plus outputs), dense
factorisations from textbook counts, and loops are multiplied out (a ``scan`` body ``length`` times, a
``shard_map`` body once per device, a ``cond`` its costliest branch); XLA's ``cost_analysis()`` counts a
loop body once whatever its trip count, so it is not used for totals.
"""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import NamedTuple

import jax
import numpy as np
from jax.extend import core
from jax.experimental.roofline import roofline as _roofline_fn  # noqa: F401 - registers the rules
from jax.experimental.roofline import rooflines as _rules  # noqa: F401 - registers the rules

_ROOFLINE = sys.modules["jax.experimental.roofline.roofline"]


class Accelerator(NamedTuple):
    """Peak rates of the accelerator the plan estimates time for."""

    name: str
    f32_flops: float  # FLOP/s, float32 and narrower
    f64_flops: float  # FLOP/s, float64
    bandwidth: float  # bytes/s of device memory
    memory: float  # bytes of device memory
    source: str


# NVIDIA H200 SXM datasheet (https://www.nvidia.com/en-us/data-center/h200/): FP32 67 TFLOPS and FP64
# 34 TFLOPS (the CUDA-core peaks; tensor-core TF32/FP64 peaks are higher, so the estimate is an upper
# bound for matrix-heavy work), 4.8 TB/s of HBM3e, 141 GB.
ACCELERATOR = Accelerator("NVIDIA H200 SXM", 67e12, 34e12, 4.8e12, 141e9,
                          "NVIDIA H200 datasheet: FP32 67 TFLOPS, FP64 34 TFLOPS, 4.8 TB/s, 141 GB")
LAUNCH_S = 20e-6  # seconds per call: dispatch and launch overhead, an assumption (order of a jit dispatch)
# seconds per iteration of a sequential loop (scan/while): its body's kernel launches, which no parallelism
# hides; an assumption (a few fused kernels of ~5 us each on a GPU)
STEP_S = 10e-6
# Primitives that move, reinterpret or index data without arithmetic: 0 FLOPs, inputs plus outputs as bytes.
MOVEMENT = frozenset({
    "convert_element_type", "bitcast_convert_type", "sharding_constraint", "reshape", "broadcast_in_dim",
    "squeeze", "expand_dims", "transpose", "slice", "dynamic_slice", "dynamic_update_slice", "concatenate",
    "pad", "copy", "copy_p", "iota", "rev", "select_n", "gather", "scatter", "device_put", "random_wrap",
    "random_unwrap", "random_seed", "stop_gradient", "optimization_barrier", "pvary", "split"})
MAX_ELEMENTS = 2**62  # beyond this an array's element count overflows XLA's int64 extent product


@dataclasses.dataclass
class Cost:
    """Work of one call of a compiled function, summed over its jaxpr (all devices together)."""

    flops_f32: float = 0.0
    flops_f64: float = 0.0
    bytes: float = 0.0
    approximated: dict[str, int] = dataclasses.field(default_factory=dict)  # primitive -> count, 1 FLOP/element
    while_loops: int = 0  # while loops counted once (trip count not static)
    serial_steps: float = 0.0  # loop iterations that run one after another (scan lengths, nested: multiplied)
    max_elements: int = 0  # the largest array's elements
    max_bytes: int = 0  # and the largest array's bytes

    def add(self, other: Cost, times: float = 1.0) -> None:
        self.flops_f32 += times * other.flops_f32
        self.flops_f64 += times * other.flops_f64
        self.bytes += times * other.bytes
        for k, v in other.approximated.items():
            self.approximated[k] = self.approximated.get(k, 0) + v
        self.while_loops += other.while_loops
        self.serial_steps += times * other.serial_steps
        self.max_elements = max(self.max_elements, other.max_elements)
        self.max_bytes = max(self.max_bytes, other.max_bytes)

    @property
    def flops(self) -> float:
        return self.flops_f32 + self.flops_f64


def elements_of(aval) -> int:
    """Elements of an abstract array (1 for a scalar)."""
    shape = getattr(aval, "shape", ())
    return math.prod(int(d) for d in shape)


def _is_f64(outvars) -> bool:
    return any(hasattr(v.aval, "dtype") and jax.dtypes.issubdtype(v.aval.dtype, np.floating)
               and v.aval.dtype.itemsize == 8 for v in outvars)


def nbytes_of(avals) -> float:
    """Bytes of the abstract arrays ``avals`` together (tokens and other non-arrays count 0)."""
    return float(sum(elements_of(a) * a.dtype.itemsize for a in avals if hasattr(a, "dtype")))


def _dense_linalg_flops(name: str, avals_in, avals_out) -> float | None:
    """Textbook FLOP counts (Golub & Van Loan, Matrix Computations, 4th ed.) of the dense factorisations JAX's
    roofline rules leave at zero; ``None`` for other primitives. Batch dimensions multiply."""
    a = avals_in[0] if avals_in else None  # primitives without operands (iota, constants) are not linalg
    if len(getattr(a, "shape", ())) < 2:
        return None
    n, batch = a.shape[-1], math.prod(a.shape[:-2])
    if name == "cholesky":
        return batch * n**3 / 3
    if name == "lu":
        return batch * 2 * n**3 / 3
    if name in ("eigh", "eig"):
        return batch * 9 * n**3  # tridiagonalisation plus implicit QR with eigenvectors (about 9 n^3)
    if name in ("svd", "qr", "householder_product"):
        return batch * 4 * n**3  # Householder QR / Golub-Kahan bidiagonalisation, order 4 n^3 for square
    if name == "triangular_solve":
        b = avals_in[1]
        m = b.shape[-1] if b.shape[-2] == n else b.shape[-2]
        return batch * n * n * m
    return None


def _eqn_cost(eqn) -> tuple[float, float, bool]:
    """``(flops, bytes, exact)`` of one primitive: JAX's roofline rule where it has a real one (dots,
    convolutions, elementwise arithmetic, gathers, collectives); textbook counts for dense factorisations;
    otherwise (transcendentals such as tanh, reductions, random bits, which JAX's table leaves at zero) one
    FLOP per element of the larger of input and output, and inputs plus outputs as bytes, marked inexact."""
    avals_in = [v.aval for v in eqn.invars]
    avals_out = [v.aval for v in eqn.outvars]
    name = eqn.primitive.name
    rule = _ROOFLINE._rooflines.get(eqn.primitive)
    if rule is not None and rule.__name__ != "standard_rule":
        ctx = _ROOFLINE.RooflineRuleContext(
            name_stack=eqn.source_info.name_stack, primitive=eqn.primitive, avals_in=avals_in,
            avals_out=avals_out, jaxpr_eqn_ctx=eqn.ctx, mesh=None, pin_lhs_in_vmem=False, pin_rhs_in_vmem=False)
        try:
            r = rule(ctx, *[_ROOFLINE.RooflineShape.from_aval(a) for a in avals_in], **eqn.params)
            return float(max(r.flops, r.unfused_flops)), float(max(r.hbm_bytes, r.unfused_hbm_bytes)), True
        except (TypeError, ValueError, KeyError):  # operands the rule cannot read (keys, tokens)
            pass
    nbytes = nbytes_of(avals_in) + nbytes_of(avals_out)
    if name in MOVEMENT:
        return 0.0, nbytes, True
    dense = _dense_linalg_flops(name, avals_in, avals_out)
    if dense is not None:
        return float(dense), nbytes, True
    elements = max([0, *(elements_of(a) for a in avals_in), *(elements_of(a) for a in avals_out)])
    return float(elements), nbytes, False


def jaxpr_cost(jaxpr) -> Cost:
    """FLOPs and bytes of one evaluation of ``jaxpr`` (a ``Jaxpr`` or ``ClosedJaxpr``), loops multiplied out.

    Per primitive see :func:`_eqn_cost` (JAX's roofline rules: a dot is ``2 * M * N * K``, an elementwise op
    one FLOP per output element, bytes are inputs plus outputs). Float64 FLOPs are counted apart (the
    accelerator's float64 peak is lower). Primitives counted by the one-per-element fallback are listed by
    name in ``Cost.approximated``.
    """
    jaxpr = jaxpr.jaxpr if isinstance(jaxpr, core.ClosedJaxpr) else jaxpr
    cost = Cost()
    for eqn in jaxpr.eqns:
        name, params = eqn.primitive.name, eqn.params
        cost.max_elements = max([cost.max_elements, *(elements_of(v.aval) for v in eqn.outvars)])
        cost.max_bytes = max(cost.max_bytes, int(max([0.0, *(nbytes_of([v.aval]) for v in eqn.outvars)])))
        if name == "scan":
            cost.add(jaxpr_cost(params["jaxpr"]), params["length"])
            cost.serial_steps += params["length"]
        elif name == "while":
            cost.add(jaxpr_cost(params["body_jaxpr"]))
            cost.add(jaxpr_cost(params["cond_jaxpr"]))
            cost.while_loops += 1
            cost.serial_steps += 1
        elif name == "cond":
            branches = [jaxpr_cost(b) for b in params["branches"]]
            cost.add(max(branches, key=lambda c: (c.flops, c.bytes)))
        elif name == "shard_map":
            cost.add(jaxpr_cost(params["jaxpr"]), params["mesh"].size)
        elif any(k in params for k in ("jaxpr", "call_jaxpr", "fun_jaxpr")):
            sub = next(params[k] for k in ("jaxpr", "call_jaxpr", "fun_jaxpr") if k in params)
            cost.add(jaxpr_cost(sub))
        else:
            flops, nbytes, exact = _eqn_cost(eqn)
            if _is_f64(eqn.outvars):
                cost.flops_f64 += flops
            else:
                cost.flops_f32 += flops
            cost.bytes += nbytes
            if not exact:
                cost.approximated[name] = cost.approximated.get(name, 0) + 1
    return cost


def size_problems(max_elements: int, max_bytes: float, memory: float, device: str) -> list[str]:
    """Why an array of ``max_elements`` elements and ``max_bytes`` bytes cannot be held (empty when it can):
    past the elements XLA can index (:data:`MAX_ELEMENTS`), or past ``memory`` bytes of ``device``. The one
    size check of ``python -m sims plan`` and of every real run (:func:`sims.runtime.jit`)."""
    out = []
    if max_elements > MAX_ELEMENTS:
        out.append(f"an array of {max_elements:.3g} elements (XLA indexes at most 2^62)")
    if max_bytes > memory:
        out.append(f"an array of {max_bytes / 1e9:.3g} GB > {memory / 1e9:.3g} GB of {device}")
    return out
