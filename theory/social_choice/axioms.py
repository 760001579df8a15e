"""Axioms of linear social choice and the axiomatic rule LCPO.

* Pareto optimality (PO; Ge et al. 2024 Section 2): if every voter prefers a to b, the output ranks a
  strictly above b. :func:`pareto_pairs`, :func:`pareto_violations`.
* Whole-space PO (Hollender & Kraiczy, ICLR 2026, §5): for every direction x with
  ``<v_i, x> > 0`` for all i, ``<theta, x> > 0``. With a nonempty comparison set this holds exactly when
  theta lies in the cone of the voters minus {0}; tested by non-negative least squares
  (:func:`cone_coordinates`, :func:`in_cone`).
* Pairwise majority consistency (PMC; Ge et al. Section 2): if the pairwise majority relation is a
  ranking that some theta induces, the rule must output it (:func:`majority_matrix`,
  :func:`pmc_ranking`, :func:`pmc_violations`).
* LCPO, leximax Copeland subject to PO (Ge et al. Section 4, Theorem 4.3): built top-down; each position
  takes, among the candidates whose placement there keeps "the prefix above everything else, every
  Pareto pair respected" feasible for a linear reward (an LP ``<theta, x_a - x_b> >= 1`` per constraint),
  one with the highest Copeland score (ties to the lower index). O(|C|^2) LPs. Defined on finite
  candidate sets with strict rankings only (Ge et al., Theorem 4.3): a voter tie is refused.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog, nnls

from theory.social_choice.model import (
    EPS,
    as_points,
    check_degree,
    lift,
    pair_index,
    validate,
    vote_signs,
)


def _sign_matrix(X, V) -> np.ndarray:
    """``[n, n, k]`` exact signs of ``<v_i, x_a - x_b>``."""
    n = X.shape[0]
    pairs = pair_index(n)
    s = vote_signs(X, V, pairs)
    out = np.zeros((n, n, V.shape[0]), np.int64)
    out[pairs[:, 0], pairs[:, 1]] = s
    out[pairs[:, 1], pairs[:, 0]] = -s
    return out


def pareto_pairs(candidates, voters) -> list[tuple[int, int]]:
    """Pairs ``(a, b)`` that every voter strictly prefers a to b (exact signs).

    Args: candidates ``[n, d]``; voters ``[k, d]``.
    Raises: ValueError as :func:`model.validate`.
    """
    X, V, _ = validate(candidates, voters)
    S = _sign_matrix(X, V)
    a, b = np.nonzero(np.all(S > 0, axis=2))
    return [(int(i), int(j)) for i, j in zip(a, b)]


def pareto_violations(candidates, voters, theta, *, degree: int = 1) -> list[tuple[int, int]]:
    """Index pairs ``(a, b)`` where every voter prefers a but the reward ranks b strictly above a.

    Args:
      candidates: ``[n, d]``; voters: ``[k, d]``; theta: ``[p]`` reward parameters (monomial order of
        :func:`model.monomial_exponents`); degree: the reward's degree.
    Returns: the list of pairs (empty when the reward is Pareto optimal on the candidate set).
    Raises: ValueError: mismatched dimensions, duplicate candidates, a theta of the wrong length.
    Source: Ge et al. 2024, Section 2 (Pareto optimality).
    """
    degree = check_degree(degree)
    X, V, _ = validate(candidates, voters)
    F = lift(X, degree)
    th = np.asarray(theta, np.float64).reshape(-1)
    if th.shape[0] != F.shape[1]:
        raise ValueError(f"theta has {th.shape[0]} entries, degree {degree} in dimension {X.shape[1]} needs "
                         f"{F.shape[1]}")
    r = F @ th
    return [(a, b) for a, b in pareto_pairs(X, V) if r[b] > r[a]]


# ---------------------------------------------------------------------------------------------------
# Whole-space Pareto optimality
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConeTest:
    """Whether theta lies in cone(v_1..v_k) (whole-space PO, H&K §5; the cone form is derived here).

    Attributes:
      coords: ``[k]`` non-negative coefficients lambda of the NNLS fit ``theta ~ sum lambda_i v_hat_i``.
      residual: ``|theta - sum lambda_i v_hat_i| / |theta|``: the sine of theta's angle to the cone
        (0 inside).
      inside: residual below ``tol``.
      margin: signed depth: outside, ``-residual``; inside, ``max min_i lambda_i`` over all
        representations ``theta / |theta| = sum_i lambda_i v_hat_i`` (an LP; for voters forming a basis,
        the smallest cone coordinate). Positive exactly in the interior of the cone.
    """

    coords: np.ndarray
    residual: float
    inside: bool
    margin: float


def cone_coordinates(theta, voters, tol: float = 1e-9) -> ConeTest:
    """NNLS test of ``theta`` in the cone of the unit voters (whole-space PO; H&K §5).

    Args: theta ``[d]`` nonzero; voters ``[k, d]``.
    Raises: ValueError: zero theta, mismatched dimension.
    """
    th = np.asarray(theta, np.float64).reshape(-1)
    V = as_points(voters, "voters")
    if V.shape[1] != th.shape[0]:
        raise ValueError(f"voters have dimension {V.shape[1]} but theta has {th.shape[0]}")
    nt = float(np.linalg.norm(th))
    if nt == 0:
        raise ValueError("theta = 0 ranks nothing (whole-space PO needs theta != 0)")
    Vh = V / np.linalg.norm(V, axis=1, keepdims=True)
    lam, res = nnls(Vh.T, th / nt)
    inside = res <= tol
    margin = -float(res)
    if inside:
        k = V.shape[0]
        # maximise t subject to Vh^T lambda = theta_hat, lambda_i >= t (variables [lambda, t])
        lp = linprog(np.r_[np.zeros(k), -1.0], A_ub=np.hstack([-np.eye(k), np.ones((k, 1))]), b_ub=np.zeros(k),
                     A_eq=np.hstack([Vh.T, np.zeros((V.shape[1], 1))]), b_eq=th / nt,
                     bounds=[(None, None)] * k + [(None, 1.0)], method="highs")
        margin = float(-lp.fun) if lp.status == 0 else 0.0
    return ConeTest(lam * nt, float(res), bool(inside), margin)


def in_cone(theta, voters, tol: float = 1e-9) -> bool:
    """Whether theta is in cone(voters) minus {0} (whole-space PO). See :func:`cone_coordinates`."""
    return cone_coordinates(theta, voters, tol).inside


def majority_disagreement(theta, voters, weights, n_angles: int = 20000) -> float:
    """For d = 2: the share of comparison directions x on the circle where ``sign <theta, x>`` differs
    from the weighted majority ``sign sum_i w_i sign <v_i, x>`` (0 iff PMC holds on the whole space;
    whole-space PMC, H&K Theorem 5.2). Midpoint rule in the angle."""
    th = np.asarray(theta, np.float64)
    V = as_points(voters, "voters")
    if V.shape[1] != 2 or th.shape[0] != 2:
        raise ValueError("majority_disagreement is implemented for d = 2")
    phi = (np.arange(n_angles) + 0.5) * np.pi / n_angles
    x = np.stack([np.cos(phi), np.sin(phi)], 1)
    maj = np.sign(np.sign(x @ V.T) @ np.asarray(weights, np.float64))
    return float(np.mean(np.sign(x @ th) != maj))


# ---------------------------------------------------------------------------------------------------
# Pairwise majority consistency
# ---------------------------------------------------------------------------------------------------


def majority_matrix(candidates, voters, weights=None) -> np.ndarray:
    """``[n, n]`` share ``w_{a > b}`` of the voter weight preferring a to b (ties cast no vote)."""
    X, V, w = validate(candidates, voters, weights)
    S = _sign_matrix(X, V)
    return (S > 0).astype(np.float64) @ w / w.sum()


def linear_feasible(diffs) -> np.ndarray | None:
    """A theta with ``<theta, z> >= 1`` for every row z of ``diffs`` ``[m, p]`` (HiGHS), or None."""
    Z = np.asarray(diffs, np.float64)
    if Z.shape[0] == 0:
        return np.zeros(Z.shape[1])
    res = linprog(np.zeros(Z.shape[1]), A_ub=-Z, b_ub=-np.ones(Z.shape[0]),
                  bounds=[(None, None)] * Z.shape[1], method="highs")
    if res.status == 0:
        return res.x
    if res.status == 2:
        return None
    raise RuntimeError(f"feasibility LP: {res.message}")


@dataclass(frozen=True)
class PMC:
    """The pairwise-majority ranking of an instance and whether a reward respects it.

    Attributes:
      ranking: candidate indices best first, when the majority relation is a strict linear order (no
        half-half pair, no cycle); else None.
      feasible: whether some theta (of the given degree) induces that ranking.
      applies: ranking exists and is feasible, so PMC constrains the rule.
      violations: majority pairs ``(a, b)`` (a beats b) that the reward ranks b strictly above a.
    """

    ranking: tuple[int, ...] | None
    feasible: bool
    applies: bool
    violations: list[tuple[int, int]]

    @property
    def consistent(self) -> bool:
        """PMC holds: it does not apply, or the reward ranks no majority pair the wrong way."""
        return not self.applies or not self.violations


def pmc_ranking(candidates, voters, weights=None, degree: int = 1) -> tuple[tuple[int, ...] | None, bool]:
    """``(ranking, feasible)``: the PMC ranking (or None) and whether a reward of ``degree`` induces it."""
    M = majority_matrix(candidates, voters, weights)
    n = M.shape[0]
    if np.any(np.isclose(M, 0.5) & ~np.eye(n, dtype=bool)):
        return None, False
    wins = (M > 0.5).sum(axis=1)
    order = tuple(int(i) for i in np.argsort(-wins, kind="stable"))
    if sorted(wins.tolist()) != list(range(n)):  # not a transitive tournament
        return None, False
    F = lift(as_points(candidates, "candidates"), check_degree(degree))
    diffs = np.array([F[order[i]] - F[order[i + 1]] for i in range(n - 1)])
    return order, linear_feasible(diffs) is not None


def pmc_violations(candidates, voters, weights, theta, *, degree: int = 1) -> PMC:
    """PMC check of the reward ``theta`` (Ge et al. Section 2): see :class:`PMC`."""
    ranking, feasible = pmc_ranking(candidates, voters, weights, degree)
    X = as_points(candidates, "candidates")
    r = lift(X, degree) @ np.asarray(theta, np.float64)
    viol = []
    if ranking is not None and feasible:
        pos = {c: i for i, c in enumerate(ranking)}
        viol = [(a, b) for a in ranking for b in ranking if pos[a] < pos[b] and r[b] > r[a]]
    return PMC(ranking, feasible, ranking is not None and feasible, viol)


def ranking_of(candidates, theta, degree: int = 1) -> tuple[int, ...]:
    """Candidates by decreasing reward (ties by index)."""
    r = lift(as_points(candidates, "candidates"), degree) @ np.asarray(theta, np.float64)
    return tuple(int(i) for i in np.lexsort((np.arange(r.size), -r)))


# ---------------------------------------------------------------------------------------------------
# LCPO
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LCPOResult:
    """Output of :func:`lcpo`.

    Attributes:
      ranking: candidate indices, best first.
      theta: ``[d]`` a reward inducing the ranking (``<theta, x_a - x_b> >= 1`` along it).
      copeland: ``[n]`` Copeland scores (wins + half the half-half pairs).
      lps: number of feasibility LPs solved.
    """

    ranking: tuple[int, ...]
    theta: np.ndarray
    copeland: np.ndarray
    lps: int


def lcpo(candidates, voters, weights=None, *, pareto: bool = True) -> LCPOResult:
    """Leximax Copeland subject to Pareto optimality (Ge et al. 2024, Section 4, Theorem 4.3).

    Position by position, among the remaining candidates c for which some linear reward ranks the prefix
    in order, above c, c above every other remaining candidate, and every Pareto pair among the remaining
    candidates (c included) in order (an LP with ``<theta, x_a - x_b> >= 1`` per constraint), place the
    one with the highest Copeland score (number of pairwise-majority wins, half for a half-half pair; ties
    to the lower index). The output is Pareto optimal by construction: a candidate is placed only when no
    remaining candidate Pareto-dominates it, and the prefix was placed the same way.

    The Pareto constraints do bind: a Pareto dominator always has the strictly higher Copeland score (every
    voter preferring the dominated c to x also prefers the dominator to x), so the greedy reaches it
    first, but the Copeland-leximax prefix can make the dominator infeasible at its position while the
    dominated candidate is feasible; ``pareto=False`` (the same leximax Copeland without the Pareto
    constraints) then outputs a ranking that reverses a Pareto pair (``lcpo_binding_instance`` holds one).

    Args: candidates ``[n, d]``; voters ``[k, d]``; weights ``[k]``; pareto: keep the Pareto constraints
      (``False``: the ablation without them, not LCPO).
    Returns: :class:`LCPOResult`.
    Raises:
      ValueError: a voter ties two candidates (LCPO is defined for strict rankings only), or the usual
        bad-input errors.
    """
    X, V, w = validate(candidates, voters, weights)
    S, copeland = _strict_copeland(X, V, w)
    ranked: list[int] = []
    lps = 0
    theta = np.zeros(X.shape[1])
    for c, th, n_lp in _lcpo_positions(X, S, copeland, pareto):
        ranked.append(c)
        theta, lps = th, lps + n_lp
    return LCPOResult(tuple(ranked), theta, copeland.astype(np.float64), lps)


def lcpo_winner(candidates, voters, weights=None, *, pareto: bool = True) -> int:
    """The candidate :func:`lcpo` ranks first, placing only that one: each position of LCPO depends on
    the positions before it alone, so the first is decided without the rest (a winner-monotonicity
    check asks for the winner of many altered profiles).

    Args: as :func:`lcpo`. Returns: the index of ``lcpo(...).ranking[0]``. Raises: as :func:`lcpo`.
    """
    X, V, w = validate(candidates, voters, weights)
    S, copeland = _strict_copeland(X, V, w)
    return next(_lcpo_positions(X, S, copeland, pareto))[0]


def _strict_copeland(X, V, w) -> tuple[np.ndarray, np.ndarray]:
    """``(S, copeland)`` of validated ``X [n, d]``, ``V [k, d]``, ``w [k]``: the voters' signs ``S [n, n, k]``
    (:func:`_sign_matrix`) and the Copeland scores ``[n]``. Raises ValueError: a voter ties two candidates
    (LCPO is defined for strict rankings only)."""
    n = X.shape[0]
    S = _sign_matrix(X, V)
    off = ~np.eye(n, dtype=bool)
    tie = np.argwhere((S == 0).any(axis=2) & off)
    if tie.size:
        a, b = tie[0]
        i = int(np.argmax(S[a, b] == 0))
        raise ValueError(f"voter {i} scores candidates {a} and {b} equally; LCPO needs strict rankings")
    return S, copeland_scores((S > 0).astype(np.float64) @ w / w.sum())


def _lcpo_positions(X, S, copeland, pareto: bool):
    """LCPO's positions in turn (see :func:`lcpo`; ``S`` and ``copeland`` from :func:`_strict_copeland`):
    yields ``(candidate, theta, lps)`` for each, ``theta`` the feasibility LP's solution that placed it
    and ``lps`` the LPs solved for that position."""
    n = X.shape[0]
    off = ~np.eye(n, dtype=bool)
    dominance = [(int(a), int(b)) for a, b in np.argwhere(np.all(S > 0, axis=2) & off)] if pareto else []
    ranked: list[int] = []
    remaining = list(range(n))
    while remaining:
        best, best_theta, lps = None, None, 0
        for c in sorted(remaining, key=lambda c: (-copeland[c], c)):
            rest = [j for j in remaining if j != c]
            cons = [X[ranked[i]] - X[ranked[i + 1]] for i in range(len(ranked) - 1)]
            if ranked:
                cons.append(X[ranked[-1]] - X[c])
            cons += [X[c] - X[j] for j in rest]
            cons += [X[a] - X[b] for a, b in dominance if a in remaining and b in remaining]
            lps += 1
            th = linear_feasible(np.array(cons).reshape(-1, X.shape[1]))
            if th is not None:
                best, best_theta = c, th
                break
        if best is None:  # impossible: the theta of the previous step induces a feasible next candidate
            raise RuntimeError("LCPO: no feasible next candidate")
        ranked.append(best)
        remaining.remove(best)
        yield best, best_theta, lps


def copeland_scores(M) -> np.ndarray:
    """``[n]`` Copeland scores of the majority matrix ``M [n, n]`` (``M[a, b]`` the weight share preferring a
    to b): pairwise-majority wins, plus one half per half-half pair (Ge et al. 2024, Section 4)."""
    M = np.asarray(M, np.float64)
    off = ~np.eye(M.shape[0], dtype=bool)
    tol = 8 * EPS
    return ((M > 0.5 + tol) & off).sum(1) + 0.5 * ((np.abs(M - 0.5) <= tol) & off).sum(1)


def majority_top(candidates, voters, weights=None) -> int | None:
    """The candidate ranked first by voters of total weight share above 1/2, or None (the hypothesis of
    majority consistency, Ge et al. 2024, Section 4).

    Args: candidates ``[n, d]``; voters ``[k, d]``; weights ``[k]``.
    Raises: ValueError: a voter whose top is tied (exact signs), or the usual bad-input errors.
    """
    X, V, w = validate(candidates, voters, weights)
    share = np.zeros(X.shape[0])
    for v, wi in zip(V, w):
        top = voter_top(X, v)
        share[top] += wi
    share /= w.sum()
    i = int(np.argmax(share))
    return i if share[i] > 0.5 else None


def voter_top(candidates, voter) -> int:
    """Index of the candidate a voter scores highest (exact signs). Raises ValueError on a tie at the top."""
    X = as_points(candidates, "candidates")
    v = np.asarray(voter, np.float64).reshape(1, -1)
    S = _sign_matrix(X, v)[:, :, 0]
    off = ~np.eye(X.shape[0], dtype=bool)
    top = np.nonzero(np.all((S > 0) | ~off, axis=1))[0]
    if top.size != 1:
        raise ValueError("the voter's top candidate is tied")
    return int(top[0])


def _strict_order(candidates, voter) -> tuple[np.ndarray, list[int]]:
    """``(X, order)``: the checked candidates and the voter's ranking, best first (exact signs).
    Raises ValueError when the voter ties two candidates. With no ties candidate a beats exactly
    ``n - 1 - rank(a)`` others, so sorting by that count is the ranking (the counts are distinct)."""
    X, V, _ = validate(candidates, np.asarray(voter, np.float64).reshape(1, -1))
    S = _sign_matrix(X, V)[:, :, 0]
    off = ~np.eye(X.shape[0], dtype=bool)
    if np.any((S == 0) & off):
        raise ValueError("the voter ties two candidates")
    return X, [int(i) for i in np.argsort(-(S > 0).sum(1))]


def raise_candidate(candidates, voter, c: int) -> np.ndarray | None:
    """A voter vector whose ranking is the given voter's with candidate ``c`` moved up one position (an
    adjacent swap with the candidate just above it, the other candidates' order kept), or None when no
    linear voter has that ranking or ``c`` is already on top (an LP with margins >= 1 along the ranking, so
    the returned voter has no ties). Used for winner monotonicity (Ge et al. 2024, Section 4).

    Args: candidates ``[n, d]``; voter ``[d]``; c: candidate index.
    Raises: ValueError: a tie in the voter's ranking, or the usual bad-input errors.
    """
    X, order = _strict_order(candidates, voter)
    pos = order.index(int(c))
    if pos == 0:
        return None
    order[pos - 1], order[pos] = order[pos], order[pos - 1]
    return linear_feasible(np.array([X[order[i]] - X[order[i + 1]] for i in range(len(order) - 1)]))


def lower_candidate(candidates, voter, c: int) -> np.ndarray | None:
    """As :func:`raise_candidate`, with ``c`` moved down one position (None when it is last): the candidate
    just below ``c`` raised. Raises as :func:`raise_candidate`."""
    X, order = _strict_order(candidates, voter)
    pos = order.index(int(c))
    if pos == len(order) - 1:
        return None
    return raise_candidate(X, voter, order[pos + 1])


def check_ranking_axioms(candidates, voters, weights, ranking) -> dict:
    """PO and PMC of an output *ranking*: ``{"po_violations": [...], "pmc_applies": bool,
    "pmc_ranking": tuple | None, "pmc_holds": bool}`` (PMC holds when it does not apply or the ranking
    equals the PMC ranking)."""
    pos = {c: i for i, c in enumerate(ranking)}
    po = [(a, b) for a, b in pareto_pairs(candidates, voters) if pos[b] < pos[a]]
    pr, feas = pmc_ranking(candidates, voters, weights)
    applies = pr is not None and feas
    return {"po_violations": po, "pmc_applies": applies, "pmc_ranking": pr,
            "pmc_holds": (not applies) or tuple(ranking) == tuple(pr)}

