"""Claims of "Bringing stability to diffusion: decomposing and reducing variance of training masked
diffusion models" (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159), checked with
``theory.mdm_variance`` and the ``mdm_variance_*`` figure results.

Monte Carlo decisions use 3 standard errors (jackknife over independent sequences or draws); the
Monte Carlo figures store their draws in 16 blocks (the seed axis), so every estimate below is computed
from the blocks it is handed and the ledger re-decides each claim with one block left out. The training
claims (training stability, and the orderings of Table 1 and Table 2) decide on seed-paired Student-t
intervals (:func:`claims.ledger.paired`) and the F interval of the ratio of seed variances. Every claim
carries controls: cases just outside its hypothesis that the same test runs on and must reject ("fails").

The paper's bin-wise EMA control variate (Sec. 4.3) has no claim: as released its baseline is detached,
so the training gradient is exactly the raw one and only the logged loss value changes; the earlier
``strats_ema`` claim tested that a stop_gradient stops gradients, which cannot fail. StraTS keeps its
claim (``strats``). P-POTS is judged exactly in t (every mask of each sequence enumerated, t integrated
by Gauss-Legendre), so only the sample of sequences is random.

The claims live in :mod:`~claims.mdm_variance.decomposition`, :mod:`~claims.mdm_variance.samplers` and
:mod:`~claims.mdm_variance.training` (shared constants and helpers in :mod:`~claims.mdm_variance.common`),
imported here so that importing ``claims.mdm_variance`` registers all of them.
"""

from __future__ import annotations

from claims.mdm_variance import decomposition, samplers, training  # noqa: F401 - registers the claims
from claims.mdm_variance.common import CONSISTENT, Z  # noqa: F401 - re-exported
from claims.mdm_variance.common import _consistent  # noqa: F401 - re-exported
from claims.mdm_variance.samplers import bin_average, shape_gof  # noqa: F401 - re-exported
from claims.mdm_variance.training import (  # noqa: F401 - re-exported
    decide_strats,
    final_val_loss,
    ordering_decision,
    spread_decision,
)
