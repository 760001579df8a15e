"""Exact optimality certificates for the hinge-loss fit with rational data.

The hinge fit (Ge et al. 2024 Section 2) with integer multiplicities ``n_j`` is the LP

    (P)  min  sum_j n_j xi_j   s.t.  xi_j + <theta, z_j> >= 1,  xi >= 0,  <theta, c_l> >= 0 (optional),

whose dual is

    (D)  max  sum_j y_j        s.t.  sum_j y_j z_j + sum_l mu_l c_l = 0,  0 <= y_j <= n_j,  mu >= 0.

HiGHS solves (P) in floating point; we read off its optimal basis (the tight hinge rows, the tight
constraints and the dual values strictly inside their bounds), re-solve those square systems exactly in
the rationals (python-flint ``fmpq_mat``), and verify, exactly, primal feasibility, dual feasibility and
equal objectives. By weak duality the common value is the exact infimum. When the check fails (a
degenerate basis the float solution did not pin down) we try the reduced dual LP's own vertex; if that
fails too, :class:`CertificateError` is raised: an unverified Fraction is never returned.

A positive gap ``inf{L : r(a) >= r(b)} - inf L`` proves that *every* optimal theta ranks b strictly
above a (Ge et al.'s rule takes infima over closed cones).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint
import numpy as np
from scipy.optimize import linprog

from theory.numerics import exact_rank, to_fmpq
from theory.social_choice.model import Rows, comparison_rows, hinge_lp, validate


class CertificateError(RuntimeError):
    """The floating-point basis could not be turned into an exact certificate."""


@dataclass(frozen=True)
class HingeCertificate:
    """An exactly verified optimum of (P).

    Attributes:
      value: the exact infimum (``Fraction``), equal to the primal and the dual objective.
      theta: ``[p]`` Fractions, an optimal theta.
      y: ``[m]`` Fractions, optimal dual values of the hinge rows (``0 <= y_j <= n_j``).
      mu: ``[c]`` Fractions, optimal multipliers of the constraints (``>= 0``).
      float_value: HiGHS's objective, for comparison.
    """

    value: Fraction
    theta: tuple[Fraction, ...]
    y: tuple[Fraction, ...]
    mu: tuple[Fraction, ...]
    float_value: float


def _q(v) -> flint.fmpq:
    return to_fmpq(v)


def _frac(q: flint.fmpq) -> Fraction:
    return Fraction(int(q.p), int(q.q))


def _dot(a, b) -> flint.fmpq:
    s = flint.fmpq(0)
    for x, y in zip(a, b):
        s += x * y
    return s


def _independent(rows: list[list[flint.fmpq]], order: list[int], limit: int) -> list[int]:
    """Greedy maximal linearly independent subset of ``rows`` (exact), visiting ``order``."""
    chosen: list[int] = []
    for i in order:
        trial = chosen + [i]
        if flint.fmpq_mat([rows[j] for j in trial]).rank() == len(trial):
            chosen = trial
            if len(chosen) == limit:
                break
    return chosen


def _solve_square(A: list[list[flint.fmpq]], b: list[flint.fmpq]) -> list[flint.fmpq]:
    x = flint.fmpq_mat(A).solve(flint.fmpq_mat([[v] for v in b]))
    return [x[i, 0] for i in range(len(b))]


def _primal_from_basis(Zq, Cq, theta_hat, tol) -> list[flint.fmpq] | None:
    """theta from the tight rows (<theta, z_j> = 1, <theta, c_l> = 0) of the float solution, exactly."""
    p = len(theta_hat)
    eqs, rhs = [], []
    for j, z in enumerate(Zq):
        zf = np.array([float(v) for v in z])
        if abs(1 - zf @ theta_hat) <= tol * (1 + np.abs(zf) @ np.abs(theta_hat)):
            eqs.append(z)
            rhs.append(flint.fmpq(1))
    for c in Cq:
        cf = np.array([float(v) for v in c])
        if abs(cf @ theta_hat) <= tol * (1 + np.abs(cf) @ np.abs(theta_hat)):
            eqs.append(c)
            rhs.append(flint.fmpq(0))
    chosen = _independent(eqs, list(range(len(eqs))), p)
    A = [eqs[i] for i in chosen]
    b = [rhs[i] for i in chosen]
    # Free directions the tight rows leave open: fix coordinates at rationalised float values.
    for k in range(p):
        if len(A) == p:
            break
        e = [flint.fmpq(int(i == k)) for i in range(p)]
        if flint.fmpq_mat(A + [e]).rank() == len(A) + 1:
            A.append(e)
            f = Fraction(float(theta_hat[k])).limit_denominator(10**9)
            b.append(flint.fmpq(f.numerator, f.denominator))
    if len(A) < p:
        return None
    return _solve_square(A, b)


def _dual_from_basis(Zq, nq, Cq, theta, y_hat, mu_hat, reduced_lp: bool):
    """Dual values complementary to ``theta``: y_j = n_j where the hinge is active (<theta, z_j> < 1),
    0 where it is slack, unknown where tight; mu_l = 0 unless the constraint is tight. The unknowns are
    fixed at their bounds where the float duals say so and the rest solved exactly."""
    p = len(theta)
    y = [None] * len(Zq)
    mu = [None] * len(Cq)
    unknown = []  # ("y", j) / ("mu", l)
    for j, z in enumerate(Zq):
        m = _dot(theta, z)
        if m < 1:
            y[j] = nq[j]
        elif m > 1:
            y[j] = flint.fmpq(0)
        else:
            unknown.append(("y", j))
    for l, c in enumerate(Cq):
        if _dot(theta, c) > 0:
            mu[l] = flint.fmpq(0)
        else:
            unknown.append(("mu", l))
    # right-hand side: sum_unknown col * val = -sum_known y_j z_j
    r = [flint.fmpq(0)] * p
    for j, z in enumerate(Zq):
        if y[j] is not None and y[j] != 0:
            for k in range(p):
                r[k] -= y[j] * z[k]
    cols = [Zq[j] if kind == "y" else Cq[j] for kind, j in unknown]
    upper = [nq[j] if kind == "y" else None for kind, j in unknown]
    if reduced_lp and unknown:
        A = np.array([[float(v) for v in col] for col in cols]).T
        res = linprog(np.zeros(len(cols)), A_eq=A, b_eq=np.array([float(v) for v in r]),
                      bounds=[(0, None if u is None else float(u)) for u in upper], method="highs-ds")
        if res.status != 0:
            return None
        guess = res.x
    else:
        guess = [y_hat[j] if kind == "y" else mu_hat[j] for kind, j in unknown]
    basic = []
    vals: list[flint.fmpq | None] = [None] * len(unknown)
    for i, g in enumerate(guess):
        u = None if upper[i] is None else float(upper[i])
        scale = 1.0 if u is None else max(1.0, u)
        if abs(g) <= 1e-9 * scale:
            vals[i] = flint.fmpq(0)
        elif u is not None and abs(g - u) <= 1e-9 * scale:
            vals[i] = upper[i]
        else:
            basic.append(i)
    for i in range(len(unknown)):
        if vals[i] is not None and vals[i] != 0:
            for k in range(p):
                r[k] -= vals[i] * cols[i][k]
    if basic:
        # Solve cols[basic] y_B = r exactly on an independent set of coordinates (equations).
        M = [[cols[i][k] for i in basic] for k in range(p)]  # p x |B|
        if flint.fmpq_mat(M).rank() < len(basic):
            return None
        rows_idx = _independent(M, list(range(p)), len(basic))
        sol = _solve_square([M[k] for k in rows_idx], [r[k] for k in rows_idx])
        for i, v in zip(basic, sol):
            vals[i] = v
    for (kind, j), v in zip(unknown, vals):
        if kind == "y":
            y[j] = v
        else:
            mu[j] = v
    return y, mu


def hinge_exact(rows: Rows, constraints=None) -> HingeCertificate:
    """The exact minimum of ``sum_j n_j max(0, 1 - <theta, z_j>)`` over theta in R^p, optionally subject to
    ``<theta, c_l> >= 0`` for each row ``c_l`` of ``constraints``, with its exact certificate.

    Args:
      rows: :class:`Rows` with rational ``Z`` and non-negative rational weights (ints, Fractions, floats
        taken exactly).
      constraints: ``[c, p]`` rational rows, or None.
    Returns:
      :class:`HingeCertificate` (value, an optimal theta, the dual, all exact).
    Raises:
      CertificateError: the float basis could not be verified exactly (never an unverified value).
    """
    Zq = [[_q(v) for v in row] for row in np.asarray(rows.Z, dtype=object).tolist()]
    nq = [_q(v) for v in np.asarray(rows.w, dtype=object).tolist()]
    p = len(Zq[0])
    Cq = [] if constraints is None else [[_q(v) for v in row] for row in
                                          np.asarray(constraints, dtype=object).reshape(-1, p).tolist()]
    Zf = np.array([[float(v) for v in r] for r in Zq])
    nf = np.array([float(v) for v in nq])
    Cf = np.array([[float(v) for v in r] for r in Cq]).reshape(-1, p)
    res = hinge_lp(Zf, nf, Cf if len(Cq) else None)
    theta_hat = res.x[:p]
    marg = -np.asarray(res.ineqlin.marginals)
    y_hat, mu_hat = marg[:len(Zq)], marg[len(Zq):]
    for tol in (1e-9, 1e-7, 1e-11):
        theta = _primal_from_basis(Zq, Cq, theta_hat, tol)
        if theta is None or any(_dot(theta, c) < 0 for c in Cq):
            continue
        for reduced in (False, True):
            dual = _dual_from_basis(Zq, nq, Cq, theta, y_hat, mu_hat, reduced)
            if dual is None:
                continue
            y, mu = dual
            ok = all(0 <= y[j] <= nq[j] for j in range(len(Zq))) and all(m >= 0 for m in mu)
            ok = ok and all(sum((y[j] * Zq[j][k] for j in range(len(Zq))), flint.fmpq(0))
                            + sum((mu[l] * Cq[l][k] for l in range(len(Cq))), flint.fmpq(0)) == 0
                            for k in range(p))
            if not ok:
                continue
            primal = sum((nq[j] * max(flint.fmpq(0), 1 - _dot(theta, Zq[j])) for j in range(len(Zq))),
                         flint.fmpq(0))
            dual_obj = sum(y, flint.fmpq(0))
            if primal == dual_obj:
                return HingeCertificate(_frac(primal), tuple(_frac(t) for t in theta),
                                        tuple(_frac(v) for v in y), tuple(_frac(v) for v in mu),
                                        float(res.fun))
    raise CertificateError("could not verify the HiGHS basis exactly (degenerate optimum); no certified "
                           "value is returned")


def _check_counts(counts, k: int) -> list[Fraction]:
    c = list(np.asarray(counts, dtype=object).reshape(-1))
    if len(c) != k:
        raise ValueError(f"counts must have one entry per voter ({k}), got {len(c)}")
    out = []
    for v in c:
        try:
            if isinstance(v, (bool, np.bool_)):
                raise TypeError
            f = Fraction(v)
        except (TypeError, ValueError):
            raise ValueError(f"counts must be non-negative integers, got {v!r}") from None
        if f.denominator != 1 or f < 0:
            raise ValueError(f"counts must be non-negative integers, got {v!r}")
        out.append(f)
    if sum(out) == 0:
        raise ValueError("at least one count must be positive")
    return out


def hinge_certificate(candidates, voters, counts, pair) -> tuple[Fraction, Fraction]:
    """Exact hinge infima on a candidate instance (Ge et al. Theorem 3.1 for hinge; values derived here).

    Args:
      candidates: ``[n, d]`` rational feature vectors (ints, ``Fraction``, sympy Rationals; floats are
        taken at their exact binary value).
      voters: ``[k, d]`` rational direction vectors.
      counts: ``[k]`` non-negative integer multiplicities of the voters.
      pair: ``(a, b)`` candidate indices.
    Returns:
      ``(global_inf, constrained_inf)`` as ``fractions.Fraction``: the minimum over R^d of
      ``sum_i counts_i sum_{pairs voter i ranks} max(0, 1 - (r(preferred) - r(other)))`` and the minimum
      subject to ``r(a) >= r(b)``. Each is exactly verified (:func:`hinge_exact`); ``constrained_inf >
      global_inf`` proves every optimum ranks b strictly above a.
    Raises:
      ValueError: mismatched dimensions, duplicate candidates, bad counts, a bad pair.
      CertificateError: the exact verification failed (no unverified value is returned).
    """
    X, V, _ = validate(candidates, voters, None, exact=True)
    w = _check_counts(counts, V.shape[0])
    n = X.shape[0]
    try:
        a, b = (int(pair[0]), int(pair[1]))
    except (TypeError, ValueError, IndexError):
        raise ValueError(f"pair must be two candidate indices, got {pair!r}") from None
    if not (0 <= a < n and 0 <= b < n) or a == b:
        raise ValueError(f"pair must be two distinct indices in [0, {n}), got {pair!r}")
    rows = comparison_rows(X, V, np.array(w, dtype=object), exact=True)
    glob = hinge_exact(rows)
    cons = hinge_exact(rows, np.array([X[a] - X[b]], dtype=object))
    return glob.value, cons.value


def exact_rank_of_rows(rows: Rows) -> int:
    """Exact rank of the comparison rows (the dimension the hinge and BTL fits can identify)."""
    return exact_rank(np.asarray(rows.Z, dtype=object))


def majority_pairs(candidates, voters, counts) -> list[tuple[int, int]]:
    """Pairs ``(a, b)`` that voters of total count above one half prefer a to b (exact; voters tying a
    pair cast no vote but count in the total, Ge et al. 2024 Section 2)."""
    X, V, _ = validate(candidates, voters, None, exact=True)
    w = _check_counts(counts, V.shape[0])
    total = sum(w)
    out = []
    for a in range(X.shape[0]):
        for b in range(X.shape[0]):
            if a != b and 2 * sum(wi for v, wi in zip(V, w) if v.dot(X[a] - X[b]) > 0) > total:
                out.append((a, b))
    return out


def pmc_gaps(candidates, voters, counts, *, majority_loss: bool) -> tuple[Fraction, list[tuple[int, int, Fraction]]]:
    """Exact hinge certificates of pairwise majority consistency for a loss-based rule (Ge et al. 2024,
    Theorem 3.6 and the certificate of Theorem 3.1): the global infimum of the loss and, for every majority
    pair (a, b), the infimum subject to ``r(b) >= r(a)`` minus the global infimum. A positive gap for every
    majority pair proves that every optimum (every ranking whose cone attains the infimum) ranks every
    majority pair the majority's way.

    Args:
      candidates ``[n, d]``, voters ``[k, d]``: rationals; counts ``[k]``: non-negative integers.
      majority_loss: True for Ge's majority loss ``sum_{a beats b by majority} max(0, 1 - (r(a) - r(b)))``
        (one unit per majority pair); False for the ordinary loss (every voter's every vote, ``counts``).
    Returns: ``(global_inf, [(a, b, gap), ...])`` as Fractions.
    Raises: ValueError: bad input, no majority pair; CertificateError: as :func:`hinge_exact`.
    """
    X, V, _ = validate(candidates, voters, None, exact=True)
    w = _check_counts(counts, V.shape[0])
    maj = majority_pairs(X, V, [int(c) for c in w])
    if not maj:
        raise ValueError("no majority pair: PMC says nothing")
    if majority_loss:
        Z = np.array([X[a] - X[b] for a, b in maj], dtype=object)
        rows = Rows(Z, np.array([Fraction(1)] * len(maj), dtype=object), np.array(maj), np.zeros(len(maj), bool))
    else:
        rows = comparison_rows(X, V, np.array(w, dtype=object), exact=True)
    glob = hinge_exact(rows).value
    return glob, [(a, b, hinge_exact(rows, np.array([X[b] - X[a]], dtype=object)).value - glob) for a, b in maj]
