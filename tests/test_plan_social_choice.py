"""The paper-scale plan of the social-choice simulations (Hollender & Kraiczy, ICLR 2026;
sims/social_choice/): the finite-sample coverage sweep planned at small shapes finds one compiled fit per
sample size (named apart: every size takes the same arguments, the seed indices), each called once, with
FLOPs linear in the padded sample count and above a count of its Gram and Hessian products from the
shapes."""

from __future__ import annotations

import pytest

from conftest import batch_calls
from sims import plan

SIZES, NARROW, S, DIM = (2000, 4000), (300, 1000), 2, 3

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "fixed_flops": (0.01, "the FLOPs that do not grow with N (the d x d solves, the seed's key; measured 2 small - "
                          "big = 827 of small = 794827) pull big / small below 2 by 5.2e-4 relative here; 1% "
                          "leaves ~20x room, and a count growing as N log N instead of N would be 9% off"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _config(tmp_path):
    p = tmp_path / "social_choice_coverage.yaml"
    p.write_text("sim: social_choice\nexperiment: coverage\nseed: 0\nparams:\n  dim: 3\n"
                 "  voters: [1.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.6, 0.0, 0.8]\n  weights: [0.6, 0.3, 0.1]\n"
                 "  narrow_dim: 2\n  narrow_voters: [1.0, 0.0, 0.9961946980917455, 0.08715574274765817]\n"
                 "  narrow_weights: [0.6, 0.4]\n  dose_p: 0.9\n  dose_s: 0.01\n"
                 "  dose_control_arcs: [-90.0, 0.0]\n"
                 f"quick:\n  sample_sizes: {list(SIZES)}\n  narrow_sample_sizes: {list(NARROW)}\n"
                 f"  n_seeds: {S}\n  constant_samples: 1024\n  dose_alphas: 3\n  dose_resolution: 16\n"
                 "paper: {}\n")
    return p


@pytest.fixture(scope="module")
def coverage_plan(tmp_path_factory):
    return plan.plan_config(_config(tmp_path_factory.mktemp("sc_plan")), "quick")


def test_coverage_plan_has_one_fit_per_padded_sample_size(coverage_plan):
    p = coverage_plan
    assert p.runnable and not p.error, p.error
    # one compiled fit per padded shape: a size of at least 1000 is its own, the smaller ones are computed at
    # 1000 rows (the first N used), so the narrow family's 300 and 1000 share one, called for each
    calls = batch_calls(S)[0]
    want = {f"map_seeds(coverage.fit[main, {n} draws])": calls for n in SIZES}
    want["map_seeds(coverage.fit[narrow, 1000 draws])"] = len(NARROW) * calls
    assert {s.name: s.calls for s in p.stages} == want
    # Newton's loop and its line search have no static trip count: counted once, and said so
    assert all(s.cost.while_loops == 2 and any("counted once" in q for q in s.problems) for s in p.stages)


def test_coverage_fit_flops_follow_the_sample_count(coverage_plan):
    stages = {s.name: s for s in coverage_plan.stages}
    small, big = (stages[f"map_seeds(coverage.fit[main, {n} draws])"].cost.flops for n in SIZES)
    # Every operation of a fit is over the 2N comparison rows except the d x d solves (d = 3) and the
    # seed's key: doubling N doubles the FLOPs up to those (below 1% here).
    assert big / small == pytest.approx(2.0, rel=TOL["fixed_flops"])
    # Independent count from the shapes: per seed, rows Z [2N, d]; the Gram matrix of the contested rows and
    # the Newton Hessian (once in the loop, once after it) are each a [d, 2N] @ [2N, d] product, 2 (2N) d^2
    # FLOPs; per call, ceil(S / 8) seeds per device (conftest.batch_calls).
    padded = batch_calls(S)[1]
    n = SIZES[0]
    grams = padded * 3 * 2 * (2 * n) * DIM**2
    # The rest (margins, losses and their derivatives, gradient, line search, the random draw) is a few dozen
    # FLOPs per row against the products' 2 d^2 = 18 each: the total stays within 5x of the Gram count (3.7x).
    assert grams <= small <= 5 * grams
