"""Learning-rate and batch schedules of the Seesaw figures: linear warmup, cosine decay, Seesaw (Meterez et
al., Algorithm 1, as in the released scheduler) and the phase schedules (alpha, beta) of Figure 2.
Pure numpy; shared by the recursion experiments and the language-model runs."""

from __future__ import annotations

import math

import numpy as np

from theory import seesaw as th


def warmup_ramp(t: np.ndarray, warmup_frac: float) -> np.ndarray:
    """lr multiplier of the linear warmup 0.1 -> 1 at training fraction ``t`` (tokens or samples)."""
    return 0.1 + 0.9 * t / warmup_frac if warmup_frac > 0 else np.ones_like(t)


def cosine_lrs(n_steps: int, warmup_frac: float, final_lr_frac: float) -> np.ndarray:
    """``[n_steps]`` lr multipliers: linear warmup 0.1 -> 1, then cosine to ``final_lr_frac``."""
    t = np.arange(n_steps) / n_steps
    post = np.clip((t - warmup_frac) / (1 - warmup_frac), 0, 1)
    cos = final_lr_frac + (1 - final_lr_frac) * 0.5 * (1 + np.cos(np.pi * post))
    return np.where(t < warmup_frac, warmup_ramp(t, warmup_frac), cos)


def seesaw_schedule(total, b0, gamma, warmup_frac, final_lr_frac, unit=1, fixed_lr=False, integer=True):
    """Per-step (lr multiplier, batch) of Seesaw in sample units; warmup lr as in :func:`cosine_lrs`.

    ``fixed_lr=True`` gives the fixed-lr ramp (same batch ramp, no lr decay after warmup)."""
    batches, mults = th.seesaw_batches(total, unit, b0, warmup_frac=warmup_frac,
                                       final_lr_frac=final_lr_frac, gamma=gamma, integer=integer)
    t = np.r_[0, np.cumsum(batches[:-1])] * unit / total
    lr = np.where(t < warmup_frac, warmup_ramp(t, warmup_frac), 1.0 if fixed_lr else mults)
    return lr, batches.astype(np.float64)


def switch_tokens(total_tokens, warmup_frac, final_lr_frac, gamma) -> list[int]:
    """Token counts where the post-warmup reference cosine (to ``final_lr_frac``) crosses ``gamma^-k``,
    k = 1..floor(ln final_lr_frac / ln(1/gamma)): the switch points of Seesaw Algorithm 1 (the same formula
    as ``theory.seesaw._seesaw_milestones``, which is private; for gamma = 2 they are the points where the
    cosine halves, Fig. 2: 53.54%, 73.23%, 89.34% of the post-warmup tokens)."""
    warm = warmup_frac * total_tokens
    k_max = int(math.log(final_lr_frac) / math.log(1.0 / gamma) + 1e-12)
    out = []
    for k in range(1, k_max + 1):
        c = 2.0 * (gamma ** (-k) - final_lr_frac) / (1.0 - final_lr_frac) - 1.0
        out.append(int(warm + round((total_tokens - warm) * math.acos(max(-1.0, min(1.0, c))) / math.pi)))
    return out


def line_schedule(total_tokens, seq_len, b0, alpha, beta, *, gamma, warmup_frac, final_lr_frac):
    """Per-step (lr multiplier, batch in sequences) of the phase process (alpha, beta) on the switch
    points of :func:`switch_tokens`: warmup at ``b0`` with the lr ramp 0.1 -> 1 of :func:`cosine_lrs`; at
    switch k the lr multiplier is ``alpha^-k`` and the batch ``floor(b0 beta^k)`` (the running float
    value floored, as in the released scheduler). Steps continue until ``total_tokens`` are consumed.

    Source: Seesaw Fig. 2 (150M, equivalence line alpha sqrt(beta) = 2, switch points where cosine
    halves). ``(sqrt(gamma), gamma)`` is Seesaw (:func:`theory.seesaw.seesaw_batches`); ``(gamma, 1)`` the
    step-decay base.
    Returns ``(lr_mult [steps], batches [steps] int64)``.
    Raises ValueError: ``alpha <= 0``, ``beta < 1`` or ``b0 < 1``.
    """
    if alpha <= 0 or beta < 1 or b0 < 1:
        raise ValueError(f"need alpha > 0, beta >= 1, b0 >= 1; got {alpha}, {beta}, {b0}")
    ms = switch_tokens(total_tokens, warmup_frac, final_lr_frac, gamma)
    cur_f, k, tokens = float(b0), 0, 0
    lrs, batches = [], []
    while tokens < total_tokens:
        if k < len(ms) and tokens >= ms[k]:
            k += 1
            cur_f *= beta
        b = math.floor(cur_f + 1e-9)
        t = tokens / total_tokens
        lrs.append(float(warmup_ramp(np.asarray(t), warmup_frac)) if t < warmup_frac else alpha ** (-k))
        batches.append(b)
        tokens += b * seq_len
    return np.asarray(lrs), np.asarray(batches, np.int64)
