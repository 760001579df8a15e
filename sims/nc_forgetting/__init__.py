"""Simulations behind the neural-collapse forgetting figures (Lanzillotta, Meier, Hofmann, ICLR 2026), with
``theory.nc_forgetting``.

Continual learning on two data sets: scikit-learn's bundled 8x8 digits and synthetic anisotropic Gaussian
classes (10 classes in R^64, a shared rank-``spike_rank`` spike plus isotropic noise), both split into
five tasks of two classes. Settings: TIL (one head per task: the logits are masked to the task's classes),
CIL (one head growing with the classes seen) and DIL (one head, label = class mod 2). Experience replay
with a class-balanced buffer holding ``p`` percent of each past class's training data (at least one
sample per class when ``p > 0``), either concatenated to the current task's data (``concat``) or drawn at
a fixed share of every batch (``ratio``); joint training on all tasks is the reference. The network is an
MLP with ReLU (no BatchNorm) and a linear head, trained with SGD + momentum and coupled weight decay
(``optax.add_decayed_weights`` before ``optax.sgd``) to near-zero loss on every task. Runs (seed x buffer x
setting x schedule) are one vmapped axis sharded over the device mesh (:func:`sims.runtime.map_batch`);
seed ``i`` starts from the same initialisation in every run.

Experiments (``paper_configs/nc_forgetting_*.yaml``):

- ``buffer_sweep``: deep and shallow forgetting against buffer size, per setting and schedule, the
  paper's Fig. 2; the old tasks' SNR after every session (Corollary 2); the corrected head's accuracy.
- ``subspace``: the exact (1 - eta lambda) decay in the linear-feature model (T1) with its controls, the
  projection of old classes' means onto the current span S_t against an OOD set during CIL training
  without replay (Fig. 4, H1), and the rank of the features with one head per task against a single head
  in the unconstrained-features model (Sec. 3.2).
- ``buffer_stats``: effective rank of trained-on buffer features against an equal number of held-out
  samples, buffer-over-population class-mean norms and NC1 of both, against buffer size (Fig. 5).
- ``lda``: Gaussian heads from population or buffer statistics (Fig. 6) and our corrected heads, with the
  network's head and the probe, against buffer size; the held-out calibration buffer (never trained on).
"""

from __future__ import annotations

from sims import cli
from sims.nc_forgetting.buffers import (  # noqa: F401 - public names of sims.nc_forgetting
    BufferParams,
    LdaParams,
    run_buffer_stats,
    run_lda,
)
from sims.nc_forgetting.common import (  # noqa: F401 - public names of sims.nc_forgetting
    CommonParams,
    load_data,
)
from sims.nc_forgetting.data import (  # noqa: F401 - public names of sims.nc_forgetting
    N_CLASSES,
    N_TASKS,
    SCHEDULES,
    SETTINGS,
    Data,
    digits_data,
    gaussian_data,
)
from sims.nc_forgetting.evaluation import (  # noqa: F401 - public names of sims.nc_forgetting
    allowed_np,
    head_accuracy,
)
from sims.nc_forgetting.subspace import (  # noqa: F401 - public names of sims.nc_forgetting
    run_subspace,
    SubspaceParams,
    ufm_ranks,
)
from sims.nc_forgetting.sweep import (  # noqa: F401 - public names of sims.nc_forgetting
    run_buffer_sweep,
    SweepParams,
)
from sims.nc_forgetting.training import (  # noqa: F401 - public names of sims.nc_forgetting
    MLP,
    allowed_logits,
    buffer_count,
    class_orders,
    masked_loss,
    session_rows,
    target_of,
    train_grid,
    Trainer,
)

# The axis of every per-seed array (seed i of every run starts from the same initialisation), for the
# ledger's leave-one-seed-out re-decisions.
_SWEEP_SEEDS = {**dict.fromkeys(("head_acc", "probe_acc", "snr", "corrected_acc", "train_loss", "buffer_loss"), 4),
                **dict.fromkeys(("joint_head_acc", "joint_probe_acc", "joint_loss"), 2)}
_STATS_SEEDS = dict.fromkeys(
    ("effective_rank_buffer", "effective_rank_heldout", "effective_rank_heldout_b", "within_rank_buffer",
     "within_rank_heldout", "within_rank_heldout_b", "mean_norm_ratio", "mean_norm_ratio_heldout",
     "minority_head_cosine", "minority_norm_ratio",
     "mean_norm_ratio_heldout_b", "nc1_buffer", "nc1_heldout", "nc1_heldout_b", "compared_per_class",
     "buffer_loss", "dead_runs"), 2)

EXPERIMENTS = {
    "buffer_sweep": cli.Experiment(SweepParams, run_buffer_sweep, seed_axes=_SWEEP_SEEDS),
    "subspace": cli.Experiment(SubspaceParams, run_subspace,
                               seed_axes={"class_projection": 2, "ood_projection": 2, "nc_trained": 2, "nc1_old": 2}),
    "buffer_stats": cli.Experiment(BufferParams, run_buffer_stats, seed_axes=_STATS_SEEDS),
    "lda": cli.Experiment(LdaParams, run_lda, seed_axes={"accuracy_old": 2, "accuracy_all": 2, "seed_index": 0}),
}
