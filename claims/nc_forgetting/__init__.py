"""Claims of Lanzillotta, Meier, Hofmann, *Heads collapse, features stay: why replay needs big buffers*
(ICLR 2026, arXiv 2512.07400; v1 "Asymptotic analysis of shallow and deep forgetting in replay with Neural
Collapse"), checked with ``theory.nc_forgetting`` on the ``sims.nc_forgetting`` results each claim reads.

Every claim is decided per data set (8x8 digits and anisotropic Gaussian classes): each (data set, case)
is one :class:`ledger.Decision` and the ledger's one rule combines them, so a claim holds only when it
holds on both. Comparisons of trained networks are seed-paired (every run of seed i starts from the same
initialisation) and decided by :func:`ledger.paired` (95% Student-t interval over seeds, statsmodels). A
control is a case just outside the claim's hypothesis on which the same test must fail.

Forgetting of an old task j (j < 4, after the last session 4): F_shallow = A_jj - A_4j (the network's
head), F_deep = A*_jj - A*_4j (a fresh probe on frozen features, the authors' protocol); the gap
F_shallow - F_deep is what a re-fitted head would recover.

The claims live in :mod:`~claims.nc_forgetting.forgetting`, :mod:`~claims.nc_forgetting.subspace`,
:mod:`~claims.nc_forgetting.snr`, :mod:`~claims.nc_forgetting.buffers`, :mod:`~claims.nc_forgetting.rates`,
:mod:`~claims.nc_forgetting.settings` and :mod:`~claims.nc_forgetting.minority` (shared constants and
helpers in :mod:`~claims.nc_forgetting.common`), imported here so that importing ``claims.nc_forgetting``
registers all of them.
"""

from __future__ import annotations

from claims.nc_forgetting import buffers, forgetting, minority, rates, settings, snr, subspace  # noqa: F401 - registers the claims
from claims.nc_forgetting.common import CORRECTIONS, DEEP_TOL, GAP_CLOSED, GAP_LARGE, GAP_MUCH, JOINT_TOL, LAST, NORM_INFLATED, OLD, RATIO, SELECT_SEEDS, SHARE_MIN_GAP, SNR_FLOOR, SNR_HALF, T95  # noqa: F401 - re-exported
from claims.nc_forgetting.common import LAST, LDA, RATIO, SNR, STATS, SUBSPACE, SWEEP, forgetting  # noqa: F401
from claims.nc_forgetting.buffers import isotropic_identity_gap  # noqa: F401 - re-exported
from claims.nc_forgetting.rates import end_exponent, perp_energy, r2_exponent, replay_fractions  # noqa: F401
from claims.nc_forgetting.settings import chance_normalised_deep  # noqa: F401 - re-exported
from claims.nc_forgetting.snr import log_snr_ratio  # noqa: F401 - re-exported
