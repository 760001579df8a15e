"""Simulations behind the linear social choice figures (Hollender & Kraiczy, ICLR 2026; Ge et al.,
NeurIPS 2024), with ``theory.social_choice``.

Experiments (``paper_configs/social_choice_*.yaml``):

- ``ge_instance``: Ge's six-candidate construction (sign slip fixed): the BTL and exponential optima with
  their certified margins on the Pareto pair (c', c), the exact hinge infima, the rankings and the PMC
  ranking.
- ``coverage``: (a) N uniformly sampled comparisons labelled by every voter, seeds sharded over devices:
  the angle between the BTL fit and the uniform-coverage direction, and whether the fit lies in the
  voters' cone, against N; draws with no finite MLE are refused, not fitted. (b) the coverage
  dose-response on the 3-pair counterexample: the optimum as a share alpha of uniform coverage is
  mixed in, and the two thresholds (Pareto pair fixed; whole-space PO).
- ``polynomial``: random instances (a candidate copied and shifted into the positive quadrant, so both
  voters prefer the copy), BTL rewards of each degree, seeds sharded over devices: how often the fit
  reverses a Pareto pair (certified), per degree; plus the worked instance ex7 (a Pareto pair that
  degree 2 reverses).
- ``lcpo``: leximax Copeland subject to PO on random profiles (with and without a majority voter).
- ``poly_degrees``: Theorem 4.1 for every polynomial degree it covers.
"""

from __future__ import annotations

from sims import cli
from sims.social_choice.coverage import CoverageParams, finite_sample_sweep, run_coverage
from sims.social_choice.ge import GeParams, ge_fits, run_ge
from sims.social_choice.lcpo import LCPOParams, lcpo_draw, run_lcpo
from sims.social_choice.polynomial import (
    PolyDegreesParams,
    PolynomialParams,
    certified_pareto,
    certified_pareto_unrestricted,
    poly_instance,
    run_poly_degrees,
    run_polynomial,
    theorem41_draw,
)

__all__ = ["EXPERIMENTS", "CoverageParams", "GeParams", "LCPOParams", "PolyDegreesParams", "PolynomialParams",
           "certified_pareto", "certified_pareto_unrestricted", "finite_sample_sweep", "ge_fits", "lcpo_draw",
           "poly_instance", "run_coverage", "run_ge", "run_lcpo", "run_poly_degrees", "run_polynomial",
           "theorem41_draw"]

_COVERAGE_SEEDS = {f"{pre}{k}": 0 for pre in ("", "narrow_")
                   for k in ("angle_deg", "angle_v1_deg", "in_cone", "cone_margin", "refused")}
_POLY_SEEDS = {k: 0 for k in ("valid", "violated", "uncertain", "pair_violated", "pair_margin", "instances",
                              "copy_of")}

_LCPO_SEEDS = {k: 0 for k in ("family", "n", "k", "max_weight", "po_violations", "pmc_applies", "pmc_holds", "cycle",
                            "pmc_infeasible", "ablation_po_violations", "ablation_differs", "ablation_pmc_holds",
                            "lcpo_top", "majority_top", "plurality_top", "plurality_share", "raises",
                            "raise_changed", "lowers", "lower_changed")}

_DEGREE_SEEDS = {k: 0 for k in ("valid", "pair_margin", "pair_reversed", "pair_uncertain", "po_reversed",
                              "po_uncertain", "pmc_reversed", "unr_pair_margin", "unr_po_reversed",
                              "unr_po_uncertain")}

EXPERIMENTS = {
    "ge_instance": cli.Experiment(GeParams, run_ge),
    "coverage": cli.Experiment(CoverageParams, run_coverage, seed_axes=_COVERAGE_SEEDS),
    "polynomial": cli.Experiment(PolynomialParams, run_polynomial, seed_axes=_POLY_SEEDS),
    # Host work (HiGHS LPs on every draw), planned at two small draw counts.
    "lcpo": cli.Experiment(LCPOParams, run_lcpo, seed_axes=_LCPO_SEEDS, extrapolate=cli.Extrapolate(
        "n_draws", small=(4, 16), law="power",
        why="each draw solves its own LCPO and ablation LPs (5-8 candidates, whatever n_draws): linear")),
    # Host work too (float64 refits with certificates), but planned as it runs (225 s of CPU at paper scale):
    # a fresh draw pays one-off JAX compilation (its fits' shapes differ from draw to draw), a warm re-run of
    # the same draws costs about a fifth, so no law fitted at two small draw counts holds (12 and 48 draws
    # gave n^2.6, 8 and 32 n^3.1, for a cost that grows about linearly over 200 draws).
    "poly_degrees": cli.Experiment(PolyDegreesParams, run_poly_degrees, seed_axes=_DEGREE_SEEDS),
}
