"""The paper-scale plan of the Seesaw simulations (Meterez et al., ICLR 2026; sims/seesaw/): the
character-level LM experiment (Fig. 1) planned at small shapes finds its four compiled functions, called as
often as the run calls them, and the validation forward pass's FLOPs match a count of the transformer's
matrix products."""

from __future__ import annotations

import math

import pytest

from conftest import batch_calls
from sims import plan, results
from sims.seesaw import CHUNK

# Two initial batches, the cosine schedule only, N_EVALS evaluations; 8 seeds so that the vmapped seed axis is
# not padded on 1, 2, 4 or 8 devices.
SEQ, D, HEADS, LAYERS, VOCAB = 16, 64, 2, 2, 256
B0S, TOKENS, N_EVALS, SEEDS, VAL_WINDOWS, NOISE_BATCHES = (4, 8), 2048, 2, 8, 8, 4


def _config(tmp_path):
    p = tmp_path / "seesaw_lm.yaml"
    p.write_text(
        "sim: seesaw\nexperiment: lm\nseed: 0\nparams:\n  lr: 1e-2\n  gamma: 1.1\n  warmup_frac: 0.1\n"
        "  final_lr_frac: 0.1\n  micro_batch: 4\n  val_frac: 0.1\n  schedules: [cosine]\n"
        f"quick:\n  n_chars: 20000\n  seq_len: {SEQ}\n  d_model: {D}\n  n_heads: {HEADS}\n"
        f"  n_layers: {LAYERS}\n"
        f"  batch_sizes: [{', '.join(map(str, B0S))}]\n  total_tokens: {TOKENS}\n  n_seeds: {SEEDS}\n"
        f"  n_evals: {N_EVALS}\n  val_windows: {VAL_WINDOWS}\n  noise_scale_batches: {NOISE_BATCHES}\n"
        "paper: {}\n")
    return p


@pytest.fixture(scope="module")
def lm_plan(tmp_path_factory):
    return plan.plan_config(_config(tmp_path_factory.mktemp("seesaw_plan")), "quick")


def test_lm_plan_counts_every_compiled_call_of_the_run(lm_plan):
    p = lm_plan
    assert p.runnable and not p.error, p.error
    calls = {s.name: s.calls for s in p.stages}
    # Per B0 (cosine at constant batch): ceil(TOKENS / (SEQ B0)) steps, cut at each 1/N_EVALS of the tokens
    # into segments of at most CHUNK steps per compiled call (B0 = 4: 32 steps, 16 per evaluation; B0 = 8: 16
    # steps, 8 per evaluation); one initialisation, an evaluation at 0 and after each segment, and the noise
    # scale after evaluations N_EVALS // 2 and N_EVALS (both, for N_EVALS = 2).
    # All of it once per call of seeds (conftest.batch_calls).
    chunks = sum(N_EVALS * math.ceil(math.ceil(TOKENS / (SEQ * b0)) / N_EVALS / CHUNK) for b0 in B0S)
    assert chunks == 4
    s = batch_calls(SEEDS)[0]
    assert calls == {"init_all": s * len(B0S), "run_chunk": s * chunks,
                     "evaluate": s * len(B0S) * (N_EVALS + 1), "measure_noise": s * 2 * len(B0S)}
    # one signature each: every chunk and batch size shares one compiled step (batches are arguments)
    assert len(p.stages) == 4


def test_validation_forward_flops_match_the_transformer_products(lm_plan):
    (stage,) = [s for s in lm_plan.stages if s.name == "evaluate"]
    # sims.models.Transformer on VAL_WINDOWS windows of SEQ inputs, per seed: per token and layer the q, k, v
    # and output projections (4 d x d) and the MLP (d x 4d, 4d x d): 2 (4 + 8) d^2 = 24 d^2 FLOPs; per window
    # and layer the attention scores and their product with v, 2 T^2 d each; per token the read-out to 256
    # logits, 2 d 256.
    per_window = LAYERS * (24 * D * D * SEQ + 4 * SEQ * SEQ * D) + 2 * D * VOCAB * SEQ
    dots = batch_calls(SEEDS)[1] * VAL_WINDOWS * per_window  # per call: its seeds
    # The rest is elementwise (layer norms, softmax over T x T per head, gelu on 4d, the log-softmax over 256
    # logits): a few FLOPs per element against the products' hundreds, under 15% on top at d = 64.
    assert dots <= stage.cost.flops <= 1.15 * dots
    assert stage.cost.flops_f32 >= 0.9 * stage.cost.flops  # float32 parameters and activations


@pytest.mark.slow
def test_smoke_run_of_the_large_batch_config_writes_a_result_and_a_figure(tmp_path):
    meta = plan.smoke_config(results.REPO / "paper_configs" / "seesaw_large_batch.yaml", tmp_path)
    assert meta["smoke"] and meta["figure_rc"] == 0
    assert (tmp_path / "paper" / "seesaw_large_batch.npz").exists()
