"""The paper-scale plan of the MDM-variance simulations (Jia et al., ICLR 2026; sims/mdm_variance/): the
Sec. 3 decomposition planned at small shapes finds the compiled closures of the theory estimators (nested
and flat losses per model, the exact enumeration, the gradient draws), each called once per chunk of rows as
the run calls them; the Sec. 5 training plan's FLOPs match a count of the transformer's matrix products
(slow)."""

from __future__ import annotations

import math

import pytest

from conftest import batch_calls
from sims import plan, results

# Decomposition: N_DATA sequences x N_T rates x N_MASKS masks (theory.mdm_variance.decompose, 256 rows per
# compiled chunk), N_DIRECT flat draws (512 rows per chunk), N_EXACT sequences enumerated, N_GRAD and
# N_GRAD_DIRECT rows of gradient draws (sims.mdm_variance.decomposition._nested_values, 256 rows per chunk).
N_DATA, N_DIRECT, N_EXACT, N_GRAD, N_GRAD_DIRECT = 600, 1600, 2, 48, 320
METHODS = ("mdm_oracle", "arm_oracle", "mdm_learned", "arm_learned")
GRAD_MODELS = ("mdm_oracle", "arm_oracle")


def _decomposition_config(tmp_path):
    p = tmp_path / "mdm_variance_decomposition.yaml"
    p.write_text("sim: mdm_variance\nexperiment: decomposition\nseed: 0\nparams:\n  vocab: 4\n  length: 4\n"
                 "  concentration: 0.3\n  eps: 0.01\n  n_fit: 50\n  n_t: 2\n  n_masks: 2\n"
                 f"quick:\n  n_data: {N_DATA}\n  n_direct: {N_DIRECT}\n  n_exact: {N_EXACT}\n"
                 f"  n_grad: {N_GRAD}\n"
                 f"  n_grad_direct: {N_GRAD_DIRECT}\npaper: {{}}\n")
    return p


@pytest.fixture(scope="module")
def decomposition_plan(tmp_path_factory):
    return plan.plan_config(_decomposition_config(tmp_path_factory.mktemp("mdm_plan")), "quick")


def test_decomposition_plan_counts_every_chunk_of_every_estimator(decomposition_plan):
    p = decomposition_plan
    assert p.runnable and not p.error, p.error
    got = sorted((s.name, s.calls) for s in p.stages if s.name != "sample_chain")
    # the chain's draws: one compiled sampler per sample size (n is static), each called once per draw set
    draws = sorted(s.calls for s in p.stages if s.name == "sample_chain")
    assert draws and all(c >= 1 for c in draws) and len(draws) <= 4
    rows16 = lambda n: n // 16 * 16  # noqa: E731 - the gradient draws keep whole blocks of the 16 (N_BLOCKS)
    want = sorted(
        # per model: the nested sample in chunks of 256 rows, the flat draws in chunks of 512, two signatures
        [(f"{m}: nested_losses.<locals>.fn", math.ceil(N_DATA / 256)) for m in METHODS]
        + [(f"{m}: nested_losses.<locals>.fn", math.ceil(N_DIRECT / 512)) for m in METHODS]
        # the exact enumeration per sequence: at eps = 0 and at eps (a static argument: two compilations), and
        # the learned chain's at eps = 0
        + [("exact_mean_loss", N_EXACT), ("exact_mean_loss", N_EXACT), ("exact_mean_loss_learned", N_EXACT)]
        # gradient draws per model in chunks of 256 rows, the last one shorter (not padded: its own
        # signature):
        # the nested rows (48: one short chunk) and the flat rows (320: one full chunk and one of 64)
        + [(f"{m} gradient", 1) for m in GRAD_MODELS for _ in range(3)])
    assert rows16(N_GRAD) == 48 and rows16(N_GRAD_DIRECT) == 256 + 64
    assert got == want


def test_the_oracle_mdm_costs_more_than_the_arm_at_equal_draws(decomposition_plan):
    flops = {}
    for s in decomposition_plan.stages:
        flops.setdefault(s.name, []).append(s.cost.flops)
    # the oracle denoiser finds each masked position's anchors (L x L comparisons) and mixes chain powers; the
    # teacher-forced ARM only reads its transition log-probabilities: planned apart, not as one stage
    mdm, arm = flops["mdm_oracle: nested_losses.<locals>.fn"], flops["arm_oracle: nested_losses.<locals>.fn"]
    assert min(mdm) > max(arm)


# Training: a non-causal transformer (sims.models.Transformer) of width D on windows of SEQ characters.
SEQ, D, LAYERS, BATCH, STEPS, EVALS, VAL_W, VAL_D, SEEDS = 8, 64, 1, 8, 2, 1, 3, 1, 7


def _training_config(tmp_path):
    p = tmp_path / "mdm_variance_training.yaml"
    p.write_text("sim: mdm_variance\nexperiment: training\nseed: 0\nparams:\n  val_frac: 0.1\n  lr: 3e-3\n"
                 f"  eps: 0.001\n  n_bins: 4\nquick:\n  n_chars: 20000\n  seq_len: {SEQ}\n  d_model: {D}\n"
                 f"  n_heads: 2\n  n_layers: {LAYERS}\n  batch: {BATCH}\n  steps: {STEPS}\n"
                 f"  n_seeds: {SEEDS}\n"
                 f"  n_evals: {EVALS}\n  val_windows: {VAL_W}\n  val_draws: {VAL_D}\n  n_per_bin: 2\n"
                 "  grad_samples: 3\npaper: {}\n")
    return p


@pytest.mark.slow
def test_standard_training_flops_match_the_transformer_products(tmp_path):
    p = plan.plan_config(_training_config(tmp_path), "quick")
    assert p.runnable and not p.error, p.error
    calls = {s.name: s.calls for s in p.stages}
    # one program per pass count, called per method with its switches: the standard method's seeds (with the
    # calibration seed), pots and thinned one pass; mirror, pots_mirror and multisample2 two (conftest.batch_calls)
    assert {n: calls[n] for n in calls if n.startswith("train ")} == {
        "train (one pass)": batch_calls(SEEDS + 1)[0] + 2 * batch_calls(SEEDS)[0],
        "train (two passes)": 3 * batch_calls(SEEDS)[0]}
    rows = batch_calls(SEEDS + 1)[1]  # seeds per call (padded): the same for SEEDS
    assert rows == batch_calls(SEEDS)[1]
    # One forward pass of one window: per token and layer the q, k, v and output projections and the MLP,
    # 24 d^2 FLOPs; per layer the attention scores and their product with v, 2 T^2 d each; per token the
    # read-out to 256 byte logits, 2 d 256 (the embedding is a gather).
    fwd = LAYERS * (24 * D * D * SEQ + 4 * SEQ * SEQ * D) + 2 * D * 256 * SEQ
    for name, passes in (("train (one pass)", 1), ("train (two passes)", 2)):
        (stage,) = [s for s in p.stages if s.name == name]
        # Per seed of a call (rows: the calibration seed's call pads, every row does the work): flax's init
        # runs one forward pass; each of EVALS + 1 validations VAL_W x VAL_D; each of STEPS steps BATCH windows
        # forward and backward per pass, the backward twice the forward's products (the gradients of both
        # operands of each product).
        dots = rows * fwd * (1 + (EVALS + 1) * VAL_W * VAL_D + passes * 3 * STEPS * BATCH)
        # The rest is elementwise: layer norms, softmaxes, gelu, the loss, and AdamW on the ~8e4 parameters per
        # step; under 20% on top at these sizes.
        assert dots <= stage.cost.flops <= 1.2 * dots, name


@pytest.mark.slow
def test_smoke_run_of_the_mirror_config_writes_a_result_and_a_figure(tmp_path):
    meta = plan.smoke_config(results.REPO / "paper_configs" / "mdm_variance_mirror.yaml", tmp_path)
    assert meta["smoke"] and meta["figure_rc"] == 0
    assert (tmp_path / "paper" / "mdm_variance_mirror.npz").exists()
