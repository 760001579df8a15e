"""The paper-scale plan of the ReLU-DAG simulations (Nurisso et al., ICLR 2026; sims/relu_dag.py): the
self-pruning experiment planned at small shapes finds one training stage per regulariser and the loss of the
magnitude-pruned weights, called as often as the run calls them, and the loss stage's FLOPs match a count
from the shapes."""

from __future__ import annotations

import pytest

from conftest import batch_calls
from sims import plan, results

# A 2-8-8-1 network (19 nodes, 88 edges; sims.relu_dag.run_pruning) on N_DATA points, S seeds, two
# regularisers.
N_DATA, S, REGS = 16, 3, ("none", "l2")
NODES, LEVEL_WIDTHS = 2 + 8 + 8 + 1, (8, 8, 1)


def _config(tmp_path):
    p = tmp_path / "relu_dag_pruning.yaml"
    p.write_text(f"sim: relu_dag\nexperiment: pruning\nseed: 0\nparams:\n"
                 f"  regularisers: [{', '.join(REGS)}]\n  lam: 0.01\n  lr: 0.05\n  n_data: {N_DATA}\n"
                 f"  prune_tau: 0.001\nquick:\n  n_steps: 4\n  n_save: 2\n  n_seeds: {S}\npaper: {{}}\n")
    return p


@pytest.fixture(scope="module")
def pruning_plan(tmp_path_factory):
    return plan.plan_config(_config(tmp_path_factory.mktemp("relu_plan")), "quick")


def test_pruning_plan_has_a_stage_per_regulariser_and_the_pruned_loss(pruning_plan):
    p = pruning_plan
    assert p.runnable and not p.error, p.error
    calls = {s.name: s.calls for s in p.stages}
    # one map_seeds per regulariser (each its own stage: their steps differ), in conftest.batch_calls(S)
    # calls, and the training loss of the magnitude-pruned weights once per regulariser, at one signature
    # ([S, 88])
    n = batch_calls(S)[0]
    assert calls == {**{f"map_seeds(pruning.train[{r}])": n for r in REGS}, "pruning.train_loss": len(REGS)}
    train = {s.name: s.cost.flops for s in p.stages}
    # weight decay adds work to every step of plain GD: the two trainers are planned apart, not as one
    assert train["map_seeds(pruning.train[l2])"] > train["map_seeds(pruning.train[none])"]


def test_pruned_loss_flops_match_the_dense_level_products(pruning_plan):
    (stage,) = [s for s in pruning_plan.stages if s.name == "pruning.train_loss"]
    # theory.relu_dag.forward_fn: one dense product act [n, 19] @ M [19, width] per level (widths 8, 8,
    # 1), 2 n N width FLOPs each, per seed; float64 (x64 is on in every entry point)
    dots = S * sum(2 * N_DATA * NODES * w for w in LEVEL_WIDTHS)
    # The rest is elementwise (ReLU compare and select, scatter of the level's outputs, squared error): a
    # few FLOPs per element of the [n, width] level outputs, 17 of them per point against the products'
    # 2 * 19 * 17, so at most 20% on top.
    assert dots <= stage.cost.flops_f64 <= stage.cost.flops <= 1.2 * dots


@pytest.mark.slow
def test_smoke_run_of_the_init_probability_config_writes_a_result_and_a_figure(tmp_path):
    meta = plan.smoke_config(results.REPO / "paper_configs" / "relu_dag_init_probability.yaml", tmp_path)
    assert meta["smoke"] and meta["figure_rc"] == 0
    assert (tmp_path / "paper" / "relu_dag_init_probability.npz").exists()
