"""Simulations behind the Seesaw figures (Meterez et al., ICLR 2026, arXiv 2510.14717).

Experiments (``paper_configs/seesaw_*.yaml``):

- ``equivalence``: excess risk against samples for SGD and NSGD phase schedules (alpha, beta) on noisy
  Gaussian linear regression; the exact recursion (``theory.seesaw.expected_risk``) as curves and
  Monte Carlo SGD over sharded seeds as points with standard errors.
- ``large_batch``: final-risk gap of Seesaw and of the fixed-lr ramp over cosine decay against the batch
  size, in the variance- and mean-dominated regimes (Figure 3's message), from the exact NSGD recursion.
- ``lm``: Figure 1 at small scale: a character-level transformer (flax + optax AdamW) on the Python
  standard library's source read at run time; cosine vs Seesaw (and the fixed-lr ramp) at equal tokens,
  validation loss against tokens and steps, with the measured gradient noise scale.
- ``adam_line``: Figure 2 at small scale: the same model under phase schedules (alpha, beta) on the
  switch points where the reference cosine halves, members on the alpha*sqrt(beta) = 2 line and off it.
"""

from __future__ import annotations

from sims import cli
from sims.seesaw.lm import (
    CHUNK,
    AdamLineParams,
    LMParams,
    lm_schedule,
    run_adam_line,
    run_lm,
    train_lm,
)
from sims.seesaw.recursion import (
    NSGD_MEMBERS,
    SGD_MEMBERS,
    EquivalenceParams,
    LargeBatchParams,
    run_equivalence,
    run_large_batch,
)
from sims.seesaw.schedules import cosine_lrs, line_schedule, seesaw_schedule, switch_tokens, warmup_ramp

__all__ = ["CHUNK", "EXPERIMENTS", "NSGD_MEMBERS", "SGD_MEMBERS", "AdamLineParams", "EquivalenceParams",
           "LMParams", "LargeBatchParams", "cosine_lrs", "line_schedule", "lm_schedule", "run_adam_line",
           "run_equivalence", "run_large_batch", "run_lm", "seesaw_schedule", "switch_tokens", "train_lm",
           "warmup_ramp"]

EXPERIMENTS = {
    "equivalence": cli.Experiment(EquivalenceParams, run_equivalence, seed_axes={
        **{f"sgd{i}_mc": 0 for i in range(len(SGD_MEMBERS))},
        **{f"nsgd{i}_mc": 0 for i in range(len(NSGD_MEMBERS))}}),
    "large_batch": cli.Experiment(LargeBatchParams, run_large_batch),  # the exact recursion: no seeds
    "lm": cli.Experiment(LMParams, run_lm, seed_axes={"val_loss": 2, "noise_scale": 2}),
    "adam_line": cli.Experiment(AdamLineParams, run_adam_line,
                                seed_axes={"val_loss": 1, "final_val_loss": 1, "noise_scale": 1}),
}
