"""Claims of Araya, Datres, Kutyniok, *Random Spiking Neural Networks are Stable and Spectrally Simple* (ICLR
2026, arXiv 2511.00904), checked with ``theory.lif_snn``, ``theory.boolean`` and the ``sims.lif_snn`` results.

Each claim reads the figures it names in ``reads=`` and returns :class:`claims.ledger.Evidence` built from
ledger decisions (its own tests) and controls (cases just outside the hypothesis, decided by the same test);
the ledger computes the verdict. Every random quantity decided on comes from a figure's per-seed arrays
(seeds, networks), so the ledger can re-decide each claim with seeds left out.

The claims live in :mod:`~claims.lif_snn.single_neuron`, :mod:`~claims.lif_snn.networks`,
:mod:`~claims.lif_snn.spectrum` and :mod:`~claims.lif_snn.accuracy` (shared constants and helpers in
:mod:`~claims.lif_snn.common`), imported here so that importing ``claims.lif_snn`` registers all of them.
"""

from __future__ import annotations

from claims.lif_snn import accuracy, networks, single_neuron, spectrum  # noqa: F401 - registers the claims
from claims.lif_snn.common import Z_MANY, Z_MC, log_log_fit  # noqa: F401 - re-exported
