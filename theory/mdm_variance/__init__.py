"""Variance of masked-diffusion (MDM) training losses: the A + B + C decomposition, P-POTS, MIRROR,
StraTS and the EMA control variate (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159).

Conventions (the objective, the decomposition, P-POTS and MIRROR as the paper states them; the eps clamp
follows the authors' code, Qwen-Applications/StableDLLM; our own derivations are marked):

* Sequences are ``[L]`` integer tokens; a mask is a boolean ``[L]`` (True = masked). The forward process
  masks each token independently with probability ``t``; ``t`` is drawn on ``[eps, 1]`` (the clamp away
  from 0 that keeps Var(l) finite: with t ~ U[0, 1] and the 1/t weight the variance diverges
  logarithmically: our own derivation, not in the paper).
* The MDM per-sample loss is ``l = -(1 / (L t)) sum_{i masked} log p(x0_i | x_t)`` (normalised by the
  sequence length L, never by the masked count, which would break the NELBO identity); the ARM loss is
  ``-(1/L) sum_i log p(x_i | x_<i)``.
* Decomposition (the paper's: law of total variance, order x0 -> t -> mask):
  ``A = E_{x0,t} Var(l | x0, t)``, ``B = E_x0 Var_t E(l | x0, t)``, ``C = Var_x0 E(l | x0)``.
  :func:`decompose` estimates each one without bias by nested Monte Carlo (our own estimators) with
  delete-one jackknife standard errors over the data points (keys ``A_se``, ``B_se``, ``C_se``,
  ``total_se``).
* P-POTS exactly in t: :func:`exact_mask_sums` enumerates the 2^L masks of a sequence once, which makes
  E[l | x0, t] and E[l^2 | x0, t] polynomials in t (:func:`exact_t_moments`); :func:`pots_exact` then
  integrates the importance-sampling variance of any t-density by Gauss-Legendre (:func:`t_quadrature`),
  so only the sample of sequences is random (jackknife SEs over it).
* Variance estimates are two-pass (centred) in float64, never ``E[x^2] - mean^2``.

Everything here is pure JAX/numpy/scipy; the flax denoiser is ``sims.models.Transformer`` (bidirectional), trained in ``sims/mdm_variance/training.py``.

Submodules (everything public is re-exported here, so ``from theory import mdm_variance as th`` reaches
all of it): :mod:`~theory.mdm_variance.masks` (argument checks, the forward process, MIRROR pairs, the
MDM and ARM losses), :mod:`~theory.mdm_variance.chain` (the Markov-chain oracle and its exact
denoiser), :mod:`~theory.mdm_variance.exact` (exact mask enumeration and the t quadrature),
:mod:`~theory.mdm_variance.decomposition` (A + B + C by nested Monte Carlo, jackknife SEs),
:mod:`~theory.mdm_variance.mirror` (MIRROR's variance ratio), :mod:`~theory.mdm_variance.pots` (P-POTS:
binned densities, the EPR form, variances exactly in t) and :mod:`~theory.mdm_variance.strats` (StraTS,
batch masking-rate noise, the EMA control variate).
"""

from __future__ import annotations

from typing import Any

from theory.mdm_variance.chain import (
    arm_grad_fn,
    arm_loss_fn,
    chain_logprob,
    chain_powers,
    chain_token_logprobs,
    estimate_chain,
    markov_oracle_logprob,
    oracle_mdm_grad_fn,
    oracle_mdm_loss_fn,
    oracle_token_logprobs,
    random_chain,
    sample_chain,
)
from theory.mdm_variance.decomposition import (
    TSampler,
    decompose,
    direct_variance,
    jackknife_se_of,
    nested_estimates,
    nested_estimates_from_stats,
    nested_losses,
    trace_direct_sums,
    trace_estimates_from_sums,
    trace_nested_sums,
    trace_variance_from_sums,
    nested_stats,
    uniform_sampler,
    variance_with_se,
)
from theory.mdm_variance.exact import (
    MAX_EXACT_LEN,
    exact_mask_sums,
    exact_mask_weights,
    exact_mean_loss,
    exact_t_moments,
    t_quadrature,
)
from theory.mdm_variance.masks import (
    PAIRINGS,
    POSITIVE_SHARE,
    LossFn,
    Pairing,
    arm_loss,
    check_eps,
    check_t,
    fixed_count_mask,
    mdm_loss,
    mirror_masks,
    uniform_t,
)
from theory.mdm_variance.mirror import (
    mirror_ratio_context_free,
    mirror_rho_context_free,
    pair_stats,
    pair_summary,
)
from theory.mdm_variance.pots import (
    POTS_DENSITIES,
    binned_is_variance,
    binned_moments,
    binned_optimal_variance,
    binned_sample,
    binned_sampler,
    binned_summary,
    binned_tables,
    epr_bin_probs,
    epr_unnormalised,
    fit_epr,
    pots_bin_probs,
    pots_exact,
    t_bin_edges,
)
from theory.mdm_variance.strats import (
    EMAState,
    batch_t_noise,
    ema_adjusted_loss,
    ema_bin,
    ema_init,
    ema_update,
    stratified_t,
)


def describe() -> dict[str, Any]:
    """Module constants, for provenance."""
    return {"MAX_EXACT_LEN": MAX_EXACT_LEN, "pairings": PAIRINGS}


__all__ = [
    "EMAState",
    "LossFn",
    "MAX_EXACT_LEN",
    "PAIRINGS",
    "POSITIVE_SHARE",
    "POTS_DENSITIES",
    "Pairing",
    "TSampler",
    "arm_loss",
    "arm_grad_fn",
    "arm_loss_fn",
    "batch_t_noise",
    "binned_is_variance",
    "binned_moments",
    "binned_optimal_variance",
    "binned_sample",
    "binned_sampler",
    "binned_summary",
    "binned_tables",
    "chain_logprob",
    "chain_powers",
    "chain_token_logprobs",
    "check_eps",
    "check_t",
    "decompose",
    "describe",
    "direct_variance",
    "ema_adjusted_loss",
    "ema_bin",
    "ema_init",
    "ema_update",
    "epr_bin_probs",
    "epr_unnormalised",
    "estimate_chain",
    "exact_mask_sums",
    "exact_mask_weights",
    "exact_mean_loss",
    "exact_t_moments",
    "fit_epr",
    "fixed_count_mask",
    "jackknife_se_of",
    "markov_oracle_logprob",
    "mdm_loss",
    "mirror_masks",
    "mirror_ratio_context_free",
    "mirror_rho_context_free",
    "nested_estimates",
    "nested_estimates_from_stats",
    "nested_losses",
    "trace_direct_sums",
    "trace_estimates_from_sums",
    "trace_nested_sums",
    "trace_variance_from_sums",
    "nested_stats",
    "oracle_mdm_grad_fn",
    "oracle_mdm_loss_fn",
    "oracle_token_logprobs",
    "pair_stats",
    "pair_summary",
    "pots_bin_probs",
    "pots_exact",
    "random_chain",
    "sample_chain",
    "stratified_t",
    "t_bin_edges",
    "t_quadrature",
    "uniform_sampler",
    "uniform_t",
    "variance_with_se",
]
