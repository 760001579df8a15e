"""Neural collapse and forgetting under replay (Lanzillotta, Meier, Hofmann, ICLR 2026, arXiv 2512.07400,
"Heads collapse, features stay: why replay needs big buffers").

The toolkit, on frozen features (numpy, float64):

- neural-collapse metrics NC1-NC4 in Papyan et al.'s (2020) conventions (0 at exact collapse);
- the separability proxy SNR (Sec. 4.1), the effective rank, the active subspace S_t = span of the centred
  class means (Definition 1) and projections onto it;
- linear probes (scikit-learn's logistic regression, one fixed protocol) and Gaussian (LDA) heads built from
  chosen means and covariances (Sec. 5, Fig. 6), with the statistics corrections we add beyond the paper
  (covariance transfer, Ledoit-Wolf shrinkage, radial mean correction);
- the linear-feature model in which the subspace theorem (T1) is exact: plain GD on ``phi = V x`` with a
  linear head and coupled weight decay on ``V``, where the component of any feature outside S shrinks by
  ``upsilon = 1 - eta * lambda`` per step.

Shapes: ``n`` samples, ``d`` feature dimensions, ``K`` classes. Labels are integers; class ``k`` of a
``[K, ...]`` array is the ``k``-th smallest label present. Every public function refuses non-finite
features and classes with fewer than two samples with a ValueError naming the argument.
"""

from __future__ import annotations

from theory.nc_forgetting.heads import (  # noqa: F401 - public names of theory.nc_forgetting
    fit_probe,
    gaussian_head,
    lda_head,
    LinearHead,
    mean_norm_ratio,
    probe_accuracy,
    radial_correction,
    shrunk_covariance,
)
from theory.nc_forgetting.linear_model import (  # noqa: F401 - public names of theory.nc_forgetting
    bayes_accuracy_lda,
    collapsed_linear_model,
    decay_error,
    decay_law_fit_error,
    decay_rounding_bound,
    linear_feature_gd,
    snr_replay_theory,
)
from theory.nc_forgetting.metrics import (  # noqa: F401 - public names of theory.nc_forgetting
    LDA_RIDGE,
    PROBE_C,
    PROBE_MAX_ITER,
    _centred_rank_mask,
    _unit_scale,
    active_subspace,
    check_features,
    check_labelled,
    class_means,
    effective_rank,
    nc_metrics,
    pooled_covariance,
    projection_norm,
    snr,
    within_class_residuals,
)
from theory.nc_forgetting.settings import (  # noqa: F401 - public names of theory.nc_forgetting
    head_rank_bound,
    minority_collapse_stats,
    multihead_ufm_gd,
)

