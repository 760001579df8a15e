"""Simulations behind the MDM-variance figures (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159).

Experiments (``paper_configs/mdm_variance_*.yaml``):

- ``decomposition``: A, B, C of the per-sample loss for the MDM and the ARM on a known Markov chain,
  with the exact denoiser (oracle) and with a chain estimated from a few samples (learned), against the
  flat i.i.d. variance; the exact NELBO identity per sequence; the same decomposition of the trace of the
  gradient covariance (transition logits) for the oracle MDM and ARM.
- ``pots``: per-bin E[l | t] and E[l^2 | t] of the oracle MDM, the P-POTS density, the paper's fitted
  EPR form, the variances under uniform / P-POTS / EPR sampling for several eps, a direct
  importance-sampling check, and the exact-in-t moments of fresh sequences (all 2^L masks enumerated).
- ``mirror``: MIRROR's A ratio and pair correlation against t (oracle and context-free), MultiSample-2 at
  equal cost, and the decomposition under each pairing.
- ``training``: small flax transformer MDMs on the Python standard library's source (characters, read at
  run time) from several seeds: standard (one mask), P-POTS, MIRROR and P-POTS + MIRROR (the methods
  Tables 1 and 2 rank), two independent masks (MultiSample-2, MIRROR's cost) and a thinned control:
  validation NELBO per seed and gradient variance.
"""

from __future__ import annotations

from sims import cli
from sims.mdm_variance.chain import (  # noqa: F401 - public names of sims.mdm_variance
    N_BLOCKS,
    ChainParams,
)
from sims.mdm_variance.decomposition import (  # noqa: F401 - public names of sims.mdm_variance
    DecompositionParams,
    run_decomposition,
)
from sims.mdm_variance.mirror import (  # noqa: F401 - public names of sims.mdm_variance
    PAIR_MODELS,
    MirrorParams,
    run_mirror,
)
from sims.mdm_variance.pots import (  # noqa: F401 - public names of sims.mdm_variance
    PotsParams,
    run_pots,
)
from sims.mdm_variance.training import (  # noqa: F401 - public names of sims.mdm_variance
    ESTIMATORS,
    GRAD_METHODS,
    MASK,
    METHODS_TRAIN,
    _model_loss_fn,
    estimator_switches,
    one_sample_loss,
    run_training,
    TrainingParams,
)

EXPERIMENTS = {
    "decomposition": cli.Experiment(DecompositionParams, run_decomposition,
                                    seed_axes={"nested_stats": 0, "direct_losses": 0, "grad_nested_sums": 0,
                                               "grad_direct_sums": 0}),
    "pots": cli.Experiment(PotsParams, run_pots, seed_axes={
        "moment_losses": 0, "check_moment_losses": 0, "check_losses": 0, "exact_sums": 0, "pair_losses": 0}),
    "mirror": cli.Experiment(MirrorParams, run_mirror, seed_axes={
        **{f"{m}_{pr}_rows": 0 for m in PAIR_MODELS for pr in ("mirror", "multisample2")},
        "oracle_positive_rows": 0, "dec_stats": 0}),
    "training": cli.Experiment(TrainingParams, run_training, seed_axes={
        **{f"{m}_val_loss": 0 for m in METHODS_TRAIN}, **{f"grad_var_{m}": 0 for m in GRAD_METHODS},
        **{f"loss_var_{m}": 0 for m in GRAD_METHODS}}),
}
