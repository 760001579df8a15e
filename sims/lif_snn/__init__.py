"""Simulations behind the LIF-SNN figures (Araya, Datres, Kutyniok, ICLR 2026, arXiv 2511.00904), with the
models and exact formulas of ``theory.lif_snn`` and the Boolean toolkit ``theory.boolean``.

Experiments (``paper_configs/lif_snn_*.yaml``; the figure name is the config name):

- ``single_neuron``: the paper's Figure 1. ENS at ``nu = nu_scale / sqrt(n)`` of one random neuron
  against ``n``, for every step ``t = 1..T``, sIF (sign spikes) and IF (Heaviside spikes, {0, 1} input):
  the exact curves (``beta = 1``) and sharded Monte Carlo over the exact joint law of the two currents
  (kept per seed), plus the full-vector draws that check that t = 1 law (:func:`law_check`).
- ``depth``: Figure 2. ENS of random L-layer binary classifiers against width, depth and T (sIF and IF),
  sharded Monte Carlo over networks (kept per network); every depth and every T comes from the same
  networks and inputs (common random numbers).
- ``spectrum``: expected level weights of random sLIF classifiers by full Walsh–Hadamard transforms at
  small n, per depth, against sampled uniformly random functions.
- ``training``: Figure 3. Noise sensitivity against ``nu`` before and after surrogate-gradient training on
  scikit-learn's bundled 8x8 digits (binarised to {-1, 1}^64; two classes and all ten), and on a sparse
  parity (the negative control), sLIF and LIF.
- ``accuracy``: Figure 3's accuracy dependence. Accuracy and the NS drop of training on ten-class digits at
  several label-noise levels (same seeds, paired), and the sparse parity at the same levels (the control).

Network simulations run in float32 (weights, currents, potentials); exact formulas in float64.
"""

from __future__ import annotations

from sims import cli
from sims.lif_snn.accuracy import (  # noqa: F401 - public names of sims.lif_snn
    AccuracyParams,
    run_accuracy,
)
from sims.lif_snn.networks import (  # noqa: F401 - public names of sims.lif_snn
    depth_network,
    DepthParams,
    dropout,
    every_depth_counts,
    noise_rates,
    rate_code,
    run_depth,
    run_time_varying,
    sign_sequences,
    time_varying_seed,
    TimeVaryingParams,
)
from sims.lif_snn.neuron import (  # noqa: F401 - public names of sims.lif_snn
    drive_pairs,
    full_vector_flip_rate,
    KindName,
    neuron_flip_rate,
    neuron_tables,
    NuRule,
    run_single_neuron,
    SingleNeuronParams,
)
from sims.lif_snn.spectrum import (  # noqa: F401 - public names of sims.lif_snn
    run_spectrum,
    SpectrumParams,
)
from sims.lif_snn.training import (  # noqa: F401 - public names of sims.lif_snn
    digits_data,
    run_training,
    TrainingParams,
)

EXPERIMENTS = {
    "single_neuron": cli.Experiment(SingleNeuronParams, run_single_neuron, seed_axes={
        "mc_per_seed": 0, "law_fixed_per_seed": 0, "law_mixture_per_seed": 0, "law_levels": 1}),
    "depth": cli.Experiment(DepthParams, run_depth, seed_axes={"per_network": 2, "per_network_fixed": 2,
                                                               "per_network_dropout": 2}),
    "time_varying": cli.Experiment(TimeVaryingParams, run_time_varying, seed_axes={
        "static_per_seed": 0, "dynamic_per_seed": 0, "static_fixed_per_seed": 0, "dynamic_fixed_per_seed": 0}),
    "spectrum": cli.Experiment(SpectrumParams, run_spectrum, seed_axes={
        "weights": 1, "ns": 1, "tie": 1, "random_weights": 1, "random_ns": 1}),
    "training": cli.Experiment(TrainingParams, run_training, seed_axes={
        k: 0 for k in ("ns_before", "ns_after", "data_ns_before", "data_ns_after", "train_acc", "test_acc",
                       "init_test_acc", "loss")}),
    "accuracy": cli.Experiment(AccuracyParams, run_accuracy, seed_axes={
        f"{pre}_{k}": 0 for pre in ("task", "parity")
        for k in ("train_acc", "test_acc", "ns_before", "ns_after", "data_ns_before", "data_ns_after")}),
}
