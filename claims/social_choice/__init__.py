"""Claims of linear social choice: Hollender & Kraiczy, "Enforcing Axioms for AI Alignment under Loss-Based
Rules" (ICLR 2026), and Ge et al., "Axioms for AI Alignment from Human Feedback" (NeurIPS 2024), checked
with ``theory.social_choice``.

Each claim is registered with :func:`claims.ledger.claim` and returns :class:`claims.ledger.Evidence`
built from :class:`claims.ledger.Decision` s (the ledger computes the verdict). Claims about a figure
(``ge_po_violation``, ``polynomial_po_violation``, ``finite_sample_rate``, ``coverage_dose_response``)
declare it in ``reads=`` and decide on its stored arrays only; the other claims are exact or
deterministic computations on instances of the papers (they read no figure).

The claims live in four modules, imported here so that importing ``claims.social_choice`` (as
:func:`claims.ledger.discover` does) registers all of them: :mod:`~claims.social_choice.pareto` (Pareto
violations of the loss-based rules: Ge's instance, the BTL core identity, polynomial rewards, Theorem 4.1
for every degree, the implicit norm budget), :mod:`~claims.social_choice.coverage` (uniform coverage: PO,
PMC, the finite-sample rate, the dose-response), :mod:`~claims.social_choice.lcpo` (LCPO) and
:mod:`~claims.social_choice.majority_rules` (Ge et al. Theorems 3.6 and 3.7).
"""

from __future__ import annotations

from claims.social_choice import coverage, lcpo, majority_rules, pareto  # noqa: F401 - registers the claims
from claims.social_choice.coverage import (
    ANGLE_TEST,
    CONE_TEST,
    DOSE_PREDICTED,
    DOSE_TOL,
    PMC_CASES,
    RATE_TOL,
    RATE_Z,
    UC_NAMED,
    UC_PREDICTED,
)
from claims.social_choice.pareto import (
    CORE_ROOTS,
    GE_BTL,
    GE_HINGE,
    GE_TEST,
    NB_LAMBDAS,
    NORM_BUDGET,
    THREE_SIGMA,
)

__all__ = [
    "ANGLE_TEST",
    "CONE_TEST",
    "CORE_ROOTS",
    "DOSE_PREDICTED",
    "DOSE_TOL",
    "GE_BTL",
    "GE_HINGE",
    "GE_TEST",
    "NB_LAMBDAS",
    "NORM_BUDGET",
    "PMC_CASES",
    "RATE_TOL",
    "RATE_Z",
    "THREE_SIGMA",
    "UC_NAMED",
    "UC_PREDICTED",
]
