"""The paper-scale plan of the NC-forgetting simulations (Lanzillotta, Meier, Hofmann, ICLR 2026;
sims/nc_forgetting/): the buffer sweep (Fig. 2) planned at small shapes finds its compiled functions, called as
often as the run calls them, and the feature pass's FLOPs match a count of the MLP's matrix products."""

from __future__ import annotations

import pytest
import yaml

from conftest import batch_calls
from sims import plan, results
from sims.nc_forgetting import N_TASKS

# One data set (scikit-learn's digits: 1257 training and 540 test images with the 0.3 test split; the Gaussian
# classes' Bayes accuracy integral would cost seconds), CIL, both schedules, two buffer sizes, two seeds:
# 2 x 2 x 2 = 8 runs and 2 joint runs in one training batch.
WIDTHS, N_TRAIN, N_TEST, SEEDS, STEPS = (16, 8), 1257, 540, 2, 4
SCHEDULES, PERCENTS = ("concat", "ratio"), (0.0, 50.0)
RUNS = len(SCHEDULES) * len(PERCENTS) * SEEDS + SEEDS  # + the joint runs (one setting)


def _config(tmp_path):
    """The repository's buffer_sweep config with its quick scale cut down to the sizes above."""
    cfg = yaml.safe_load((results.REPO / "paper_configs" / "nc_forgetting_buffer_sweep.yaml").read_text())
    cfg["params"].update(datasets=["digits"], widths=list(WIDTHS), batch_size=8, settings=["cil"],
                         measure_probes=True, head_correction="shrinkage")
    cfg["quick"] = dict(n_seeds=SEEDS, schedules=list(SCHEDULES), steps_per_task=STEPS,
                        buffer_percents=list(PERCENTS), gaussian_n_train=8, gaussian_n_test=4)
    p = tmp_path / "nc_forgetting_buffer_sweep.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


@pytest.fixture(scope="module")
def sweep_plan(tmp_path_factory):
    return plan.plan_config(_config(tmp_path_factory.mktemp("nc_forgetting_plan")), "quick")


def test_sweep_plan_counts_every_compiled_call_of_the_run(sweep_plan):
    p = sweep_plan
    assert p.runnable and not p.error, p.error
    calls = sorted((s.name, s.calls) for s in p.stages)
    # Per data set: every run (sweep and joint) trained in vmapped calls of ceil(RUNS / 8) runs per device
    # (conftest.batch_calls), then the features of every run, session and snapshot on the training split and
    # on the test split: one call each, two signatures.
    assert calls == [("all_features", 1), ("all_features", 1), ("train_grid", batch_calls(RUNS)[0])]


def test_feature_pass_flops_match_the_mlp_products(sweep_plan):
    feats = sorted((s for s in sweep_plan.stages if s.name == "all_features"), key=lambda s: s.cost.flops)
    # Per sample and parameter set: the three dense layers' products, 2 (64 x 16 + 16 x 8 + 8 x 10) (the head
    # too: flax computes the logits and the jaxpr keeps them; XLA drops them, the count does not), and one
    # FLOP per element for the bias adds (16 + 8 + 10) and the ReLUs (16 + 8).
    dots = 2 * (64 * WIDTHS[0] + WIDTHS[0] * WIDTHS[1] + WIDTHS[1] * 10)
    elementwise = 2 * sum(WIDTHS) + 10
    sets = RUNS * N_TASKS  # parameter sets: runs x sessions x one snapshot
    for stage, n in zip(feats, (N_TEST, N_TRAIN)):
        # exact: the count is a float64 sum of integer FLOP counts far below 2^53 (1.6e8 here)
        assert stage.cost.flops == pytest.approx(sets * n * (dots + elementwise), rel=0, abs=0)
        assert stage.cost.flops_f64 == 0  # float32 parameters and inputs


@pytest.mark.slow
def test_smoke_run_of_the_ratio_config_writes_a_result_and_a_figure(tmp_path):
    meta = plan.smoke_config(results.REPO / "paper_configs" / "nc_forgetting_ratio.yaml", tmp_path)
    assert meta["smoke"] and meta["figure_rc"] == 0
    assert (tmp_path / "paper" / "nc_forgetting_ratio.npz").exists()
