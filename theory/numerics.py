"""Shared numerics, one home for every paper: exact ranks, numeric ranks read at a singular-value gap,
binomial standard errors, and the float64 policy.

* **Exact rank** (:func:`exact_rank`): python-flint over the rationals (``fmpq_mat``) or a prime field
  (``nmod_mat``); entries are converted exactly, never through floats or sympy.
* **Numeric rank** (:func:`gap_rank`): read off the largest ratio ``s_i / s_{i+1}`` of the sorted singular
  values, with a floor ``s_1 * eps * n`` so that a well-conditioned full-rank matrix reads as full rank;
  the gap itself is returned so every caller can report it.
* **Binomial standard error** (:func:`binomial_se`): ``sqrt(p (1 - p) / n)``, and the rule-of-three bound
  for a zero count (:func:`zero_count_upper`).
* **float64 policy** (:func:`float64`): exact claims compute under a local ``jax.enable_x64`` scope, so
  they are float64 whatever the process-wide setting and need no process setup; entry points still call
  ``sims.runtime.setup()`` so that simulations are float64 throughout.
* **Linear algebra under vmap** (:func:`cholesky`, :func:`chol_solve`, :func:`spd_solve`,
  :func:`pd_above`): plain jnp loops instead of LAPACK custom calls, which can deadlock when vmapped on
  a 2-core CPU; every vmapped solve of the simulations goes through them.
* **Long loops compiled optimised** (:func:`loop_jit`): a recursion or ODE integration compiled outside
  ``sims.runtime.jit`` gets XLA's level 2 (:data:`HEAVY_COMPILE`), the level the runtime gives its own heavy
  functions (which also get XLA's fusion emitters back; these keep the process's code generator).
* **Checks at the public boundary** (:func:`check_real`, :func:`check_int`, :func:`check_limit`,
  :func:`check_prime`): NaN passes every ``x <= 0`` test, so finiteness is checked explicitly; a float is
  never silently truncated to an integer; work that grows with an argument is refused up front, the
  message naming the limit constant.
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
from fractions import Fraction
from numbers import Rational
from typing import Literal

import flint
import jax
import jax.numpy as jnp
import numpy as np

PRIME = 2**31 - 1  # products of two residues fit in int64


def float64():
    """Context manager: float64 JAX inside, whatever the process-wide ``jax_enable_x64``."""
    return jax.enable_x64(True)


# The compiler options of a heavy function's compile: XLA's optimisation level 2 (LLVM's default code
# generation level, CodeGenOptLevel::Default; 3, XLA's own default, is Aggressive). A CPU-only process of this
# project compiles at level 0 (sims.xla.cpu_flags: small programs compile twice as fast), and
# sims.runtime.jit compiles a heavy function (a while loop, or many FLOPs) with these options instead
# (sims.runtime._HEAVY_COMPILE starts from them). Elsewhere the same rule is applied where a function is
# written: see loop_jit. Level 2 rather than 3, measured paper by paper on the 2-core machine (empty
# compilation cache, 2026-12-05): the 35 quick figures took 848 CPU-s against 904 (compiles 9-39% shorter,
# the loops as fast: lif_snn 327 against 333 CPU-s with the same bits), and a fresh-clone make -j2 figures
# 494 s against 510. On 2026-12-04 level 2 had run lif_snn_training 185 -> 276 s; its code has changed since
# (the neuron recursion unrolled), and the same figure now runs 67 s at level 2, 69 s at level 3.
HEAVY_COMPILE = {"xla_backend_optimization_level": 2}


def loop_jit(fn, **kwargs):
    """``jax.jit(fn, **kwargs)`` compiled at a heavy function's level (:data:`HEAVY_COMPILE`) on the CPU, for
    a function built around a long ``lax.scan`` or ``fori_loop`` (an exact recursion, an ODE integration)
    that is called outside ``sims.runtime.jit``: the theory layer's own, and a claim's. sims.runtime.jit's
    rule, a while loop counts as heavy, applied where the function is written. At level 0 such loops ran
    6-8x slower than at level 3: Seesaw's exact risk recursion (d = 1000, 2e5 steps) 7.2 -> 1.0 s for SGD
    and 10.3 -> 1.2 s for NSGD, a ReLU-DAG claim's RK4 flows 23.8 -> 7.4 s (2 cores, 2026-12-04). Results
    agree with a level-0 compile to rounding (level 2 fuses multiply-adds). On an accelerator the function
    is compiled with XLA's defaults, as ``sims.runtime.jit`` compiles it there; the backend is read at
    each call, not when ``loop_jit`` runs (a module may call it at import, before the process's setup). On
    the CPU the level is 2 whatever the process's own level (a level in ``XLA_FLAGS`` is kept by
    ``sims.runtime.jit``). Call the result at top level (its callers convert its output to NumPy): jax
    refuses compiler options on a jit nested in another trace (ValueError). Other attributes (``trace``,
    ``lower``) are the chosen jit's."""
    return _LoopJit(fn, kwargs)


class _LoopJit:
    """:func:`loop_jit`'s function: the jit with :data:`HEAVY_COMPILE` on the CPU, the plain jit elsewhere."""

    def __init__(self, fn, kwargs):
        functools.update_wrapper(self, fn)
        self._heavy = jax.jit(fn, compiler_options=HEAVY_COMPILE, **kwargs)
        self._plain = jax.jit(fn, **kwargs)

    def _chosen(self):
        return self._heavy if jax.default_backend() == "cpu" else self._plain

    def __call__(self, *args, **kwargs):
        return self._chosen()(*args, **kwargs)

    def __getattr__(self, attr):
        if attr.startswith("_"):  # not set yet (a copy before __init__): no recursion through _chosen
            raise AttributeError(attr)
        getattr(self._plain, attr)  # a missing attribute raises here, without starting a backend
        return getattr(self._chosen(), attr)


def to_fmpq(v) -> flint.fmpq:
    """An exact python-flint rational from an int, a finite float (exactly, ``Fraction(x)``), a
    ``Fraction``/``numbers.Rational`` or a sympy Rational.

    Raises:
      TypeError: not a number (bools included). ValueError: a non-finite float.
    """
    if isinstance(v, flint.fmpq):
        return v
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"matrix entry must be a number, got {v!r}")
    if isinstance(v, (int, np.integer)):
        return flint.fmpq(int(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            raise ValueError(f"matrix entry must be finite, got {v!r}")
        f = Fraction(*v.as_integer_ratio())  # exact for every width, long double included
    elif isinstance(v, Rational):  # Fraction, and sympy's Rational and Integer (registered as Rational)
        f = Fraction(int(v.numerator), int(v.denominator))
    else:
        raise TypeError(f"matrix entry must be an int, float or rational, got {type(v).__name__}")
    return flint.fmpq(f.numerator, f.denominator)


def exact_rank(matrix, field: Literal["QQ", "modp"] = "QQ", p: int = PRIME) -> int:
    """Exact rank of a 2-D matrix with python-flint.

    Args:
      matrix: ``[m, n]`` array-like of ints (any field), or floats / ``Fraction`` / sympy Rationals
        (``"QQ"`` only; floats are converted exactly, ``Fraction(x)``).
      field: ``"QQ"`` (rationals, ``fmpq_mat``) or ``"modp"`` (integers mod ``p``, ``nmod_mat``).
      p: the prime for ``"modp"``, below ``2^63`` (flint's word-size modulus).
    Returns:
      The rank, an int in ``[0, min(m, n)]``.
    Raises:
      ValueError: not 2-D, a non-finite entry, an unknown field, a ``p`` that is not a prime below
        ``2^63`` (flint aborts the process on a rank modulo a composite).
      TypeError: an entry that is not a number (or not an integer for ``"modp"``).
    """
    if field == "modp":
        check_prime(p, below=2**63)
    # a numpy integer matrix needs no per-entry check: tolist() gives Python ints (flint reduces them mod p)
    exact_ints = isinstance(matrix, np.ndarray) and matrix.dtype.kind in "iu"
    a = matrix if exact_ints else np.asarray(matrix, dtype=object)
    if a.ndim != 2:
        raise ValueError(f"matrix must be 2-D, got shape {a.shape}")
    if a.size == 0:
        return 0
    if field == "modp":
        rows = a.tolist()
        if not (exact_ints or set(map(type, itertools.chain.from_iterable(rows))) <= {int}):
            for v in itertools.chain.from_iterable(rows):
                if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                    raise TypeError(f"modp rank needs integer entries, got {type(v).__name__}")
            rows = [[int(v) for v in r] for r in rows]
        # Through fmpz_mat, which converts Python ints faster than nmod_mat does (and nmod_mat reduces its
        # entries mod p): a 56 x 48 matrix of residues 1.9 -> 1.25 ms with its rank (python-flint 0.9; the
        # rank itself is 0.1 ms).
        return int(flint.nmod_mat(flint.fmpz_mat(rows), p).rank())
    if field == "QQ":
        return int(flint.fmpq_mat([[to_fmpq(v) for v in r] for r in a.tolist()]).rank())
    raise ValueError(f"field must be 'QQ' or 'modp', got {field!r}")


def gap_rank(singular_values) -> tuple[int, float]:
    """Numeric rank read at the largest gap of the singular values, and that gap.

    Args:
      singular_values: ``[n]`` singular values (any order, float64).
    Returns:
      ``(rank, gap)``: ``rank = argmax_i s_i / s_{i+1} + 1`` over the sorted values with the floor
      ``s_1 * eps * n`` appended (so a well-conditioned full-rank matrix has rank n); ``gap`` is that
      largest ratio (``inf`` when the next value is exactly 0; ``(0, inf)`` for an all-zero matrix).
      A caller states the gap it requires (e.g. ``> 1e6``) and reports the gap it saw.
    Raises:
      ValueError: a non-finite singular value.
    """
    s = np.sort(np.abs(np.asarray(singular_values, dtype=np.float64)))[::-1]
    if not np.all(np.isfinite(s)):
        raise ValueError("singular values must be finite")
    if s.size == 0 or s[0] == 0:
        return 0, math.inf
    floor = s[0] * np.finfo(np.float64).eps * s.size
    ext = np.maximum(np.append(s, floor), floor * 1e-3)
    ratios = ext[:-1] / ext[1:]
    k = int(np.argmax(ratios))
    gap = math.inf if k + 1 < s.size and s[k + 1] == 0 else float(ratios[k])
    return k + 1, gap


def binomial_se(p: float, n: int) -> float:
    """Standard error ``sqrt(p (1 - p) / n)`` of a share ``p`` measured on ``n`` independent trials.

    Raises:
      ValueError: ``p`` outside [0, 1] or not finite, or ``n < 1``.
    """
    if not (0.0 <= p <= 1.0) or n < 1:
        raise ValueError(f"binomial_se needs 0 <= p <= 1 and n >= 1, got p={p}, n={n}")
    return math.sqrt(p * (1.0 - p) / n)


def zero_count_upper(n: int) -> float:
    """The 95% upper confidence bound ``3 / n`` on a share observed as 0 of ``n`` (rule of three), since
    a zero count has binomial standard error 0."""
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    return 3.0 / n


# ---------------------------------------------------------------------------------------------------
# Checks at the public boundary
# ---------------------------------------------------------------------------------------------------


def _scalar(x):
    """A 0-d numpy/JAX array as its numpy scalar; anything else unchanged."""
    if not isinstance(x, (numbers.Number, str, bytes)) and hasattr(x, "shape") and hasattr(x, "dtype") \
            and np.shape(x) == ():
        return np.asarray(x)[()]
    return x


def check_real(x, name: str, *, gt=None, ge=None, lt=None, le=None) -> float:
    """``x`` as a finite float, within the given bounds.

    Args:
      x: a real number: int, float, ``Fraction``, numpy or sympy real, or a 0-d numeric array.
      name: the argument's name, used in the messages.
      gt, ge, lt, le: optional bounds ``x > gt``, ``x >= ge``, ``x < lt``, ``x <= le``.
    Returns:
      ``float(x)``.
    Raises:
      TypeError: a bool, complex, string or other non-real value.
      ValueError: NaN, an infinity, or a bound violated (the message names ``name`` and the bound).
    """
    v = _scalar(x)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    try:
        f = float(v)
    except OverflowError:
        raise ValueError(f"{name} must be finite (within float64), got a number of "
                         f"{len(str(abs(int(v))))} digits") from None
    if not math.isfinite(f):
        raise ValueError(f"{name} must be finite, got {x!r}")
    for ok, op, bound in ((gt is None or f > gt, ">", gt), (ge is None or f >= ge, ">=", ge),
                          (lt is None or f < lt, "<", lt), (le is None or f <= le, "<=", le)):
        if not ok:
            raise ValueError(f"{name} must be {op} {bound}, got {x!r}")
    return f


def check_int(x, name: str, *, ge=None, le=None) -> int:
    """``x`` as an int, within the given bounds; a float is refused even when integral (``2.0``), so no
    caller ever sees one value used as ``x`` in one place and ``int(x)`` in another.

    Raises:
      TypeError: not an integer (floats, bools and strings included).
      ValueError: a bound violated (the message names ``name`` and the bound).
    """
    v = _scalar(x)
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    i = int(v)
    if ge is not None and i < ge:
        raise ValueError(f"{name} must be >= {ge}, got {i}")
    if le is not None and i > le:
        raise ValueError(f"{name} must be <= {le}, got {i}")
    return i


def check_limit(count, limit: int, limit_name: str, what: str) -> None:
    """Refuse work whose size ``count`` exceeds ``limit``.

    Raises:
      ValueError: ``count > limit``; the message says ``what`` is counted and names ``limit_name``.
    """
    if not count <= limit:  # also refuses a NaN count
        c = f"{count:,}" if isinstance(count, int) else f"{count:.4g}"
        raise ValueError(f"{what} is {c}, above the limit {limit_name} = {limit:,}")


def check_prime(p, name: str = "p", *, below: int) -> int:
    """``p`` as an int that is a prime below ``below``.

    Raises:
      TypeError: not an integer. ValueError: not a prime, or not below ``below``.
    """
    p = check_int(p, name)
    if not 2 <= p < below:
        raise ValueError(f"{name} must be a prime below 2^{below.bit_length() - 1}, got {p}")
    if not flint.fmpz(p).is_prime():
        raise ValueError(f"{name} must be a prime, got {p} (a composite modulus has no field ranks)")
    return p


# Small dense linear algebra under vmap, one home for every simulation: plain jnp operations. jnp.linalg on CPU calls jaxlib's LAPACK kernels,
# which split a batch over XLA's intra-op thread pool and wait for it; two such kernels running at once
# in a vmapped graph can hold every pool thread (2 on a 2-core machine) and deadlock (seen with jaxlib
# 0.10.2: both tf_XLAEigen threads blocked in ParallelBatchMap of dsyevd). These are fori_loops over the
# (small) dimension p with no custom call (unrolled Python loops compiled 15x slower).


def cholesky(A):
    """``(L, ok)``: the lower Cholesky factor ``L [p, p]`` (``A = L L^T``) of a symmetric ``A [p, p]`` and
    whether every pivot was positive (A positive definite up to rounding). Only the lower triangle of A
    is read. Plain jnp in a ``fori_loop`` over columns (no LAPACK call), so jit- and vmap-safe on CPU;
    where a pivot is not positive ``ok`` is False and L is not a factor."""
    p = A.shape[-1]
    rows = jnp.arange(p)

    def col(j, carry):
        L, ok = carry
        lj = L[j]  # row j: only its first j entries are set so far
        s = A[j, j] - lj @ lj
        ok = ok & (s > 0)
        d = jnp.sqrt(jnp.where(s > 0, s, 1.0))
        c = (A[:, j] - L @ lj) / d
        return L.at[:, j].set(jnp.where(rows > j, c, jnp.where(rows == j, d, 0.0))), ok

    return jax.lax.fori_loop(0, p, col, (jnp.zeros_like(A), jnp.asarray(True)))


def chol_solve(L, b):
    """``x [p]`` solving ``L L^T x = b`` for a lower-triangular ``L [p, p]`` with non-zero diagonal and
    ``b [p]``, by forward then back substitution (plain jnp, ``fori_loop``; vmap-safe)."""
    p = L.shape[-1]
    # unset entries are 0, so full dot products only see the already solved ones
    y = jax.lax.fori_loop(0, p, lambda i, y: y.at[i].set((b[i] - L[i] @ y) / L[i, i]), jnp.zeros_like(b))
    return jax.lax.fori_loop(0, p, lambda k, x: x.at[p - 1 - k].set(
        (y[p - 1 - k] - L[:, p - 1 - k] @ x) / L[p - 1 - k, p - 1 - k]), jnp.zeros_like(b))


def spd_solve(A, b):
    """``x [p]`` solving ``A x = b`` for a symmetric positive definite ``A [p, p]`` and ``b [p]``, by
    :func:`cholesky` (plain jnp, vmap-safe on CPU where ``jnp.linalg.solve`` under vmap can deadlock);
    all NaN where A is not positive definite, so a caller can reject the step with ``isfinite``."""
    L, ok = cholesky(A)
    return jnp.where(ok, chol_solve(L, b), jnp.nan)


def pd_above(A, c):
    """Whether ``A - c I`` is positive definite, for a symmetric ``A [p, p]`` and a scalar ``c`` (one
    :func:`cholesky`; plain jnp, vmap-safe): a certificate that every eigenvalue of A exceeds c, up to
    the rounding of one Cholesky factorisation."""
    return cholesky(A - c * jnp.eye(A.shape[-1], dtype=A.dtype))[1]
