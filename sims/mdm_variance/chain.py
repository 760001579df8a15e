"""The Markov-chain data of the exact MDM experiments, drawn and stored in blocks (the replicates of the ledger's leave-one-block-out checks)."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from sims import runtime
from sims.config import param
from theory import mdm_variance as th

# ---------------------------------------------------------------------------------------------------
# Shared: the chain
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ChainParams:
    """The Markov-chain CPU-scale proxy of the paper's setting (V = 8, L = 16, Dirichlet(0.3) rows)."""

    vocab: int = param(8, ge=2)
    length: int = param(16, ge=2, le=th.MAX_EXACT_LEN)
    concentration: float = param(0.3, gt=0)
    eps: float = param(0.01, gt=0, lt=1)


# fold_in salts of a figure's root key ``key(seed)``: each names one draw, so that no two draws of a
# figure share a key. Sequences from the chain (``_sample``), then each experiment's own draws.
CHAIN_SALT = 0  # the random Markov chain (_chain)
DATA_SALT = 1  # the training-set sequences (decomposition, mirror) or the pool of sequences (pots)
DIRECT_DATA_SALT = 2  # decomposition: the direct estimator's sequences; mirror: the decomposition's
FIT_DATA_SALT = 3  # decomposition: the sequences the 'learned' chain is estimated from
CHECK_DATA_SALT = 4  # pots: the sequences of the direct-variance check
EXACT_DATA_SALT = 5  # pots: the sequences of the exact (quadrature in t) variances
DECOMPOSITION_SALT = 10  # decomposition: masks and times of the estimators
POTS_SALT = 20  # pots: masks and times of the binned moments and checks
MIRROR_SALT = 30  # mirror: masks and times of the pair statistics
VALIDATION_SALT = 77  # training: the validation windows' masks
TRAIN_WINDOWS_SALT = 88  # training: the windows whose loss moments fit p(t)
MOMENTS_SALT = 89  # training: the masks of those moments
GRAD_VAR_SALT = 99  # training: the gradient-variance draws
TRAINED_DECOMPOSITION_SALT = 101  # training: the decomposition of the trained model

# Offsets within one experiment's key: runs of per-item keys fold_in(key, OFFSET + i) kept apart from the
# plain per-item keys fold_in(key, i), i < 100 (models, estimators).
DIRECT_OFFSET = 100  # the direct estimator's items
GRADIENT_OFFSET = 500  # the gradient-level estimators
VALIDATION_OFFSET = 1000  # pots: the validation moments
CHECK_OFFSET = 2000  # pots: the direct-variance checks, + len(schedule name)
PAIRS_OFFSET = 3000  # pots: the paired losses


def _chain(p, seed: int):
    """(transition, initial) of the chain drawn from ``fold_in(key(seed), CHAIN_SALT)``."""
    return th.random_chain(jax.random.fold_in(jax.random.key(seed), CHAIN_SALT), p.vocab, p.concentration)


# Compiled (and so planned and size-checked before it allocates: n sequences x length tokens).
_SAMPLE_CHAIN = runtime.jit(th.sample_chain, static_argnums=(3, 4), name="sample_chain")


def _sample(p, seed: int, salt: int, n: int, trans, init):
    return _SAMPLE_CHAIN(jax.random.fold_in(jax.random.key(seed), salt), trans, init, n, p.length)


# Independent draws (sequences, per-bin draws) are stored in this many equal blocks on a leading axis
# (the remainder dropped), declared as the seed axis: the ledger re-decides each claim with one block
# left out, so the blocks are the replicates its stability is measured on.
N_BLOCKS = 16


def _blocks(x, axis: int = 0) -> np.ndarray:
    """``x`` with its ``axis`` split into ``min(N_BLOCKS, n)`` equal blocks, as a new leading axis
    (``[..., n, ...] -> [G, ..., n // G, ...]``, the last ``n % G`` draws dropped)."""
    x = np.moveaxis(np.asarray(x), axis, 0)
    g = min(N_BLOCKS, x.shape[0])
    x = x[:x.shape[0] - x.shape[0] % g].reshape(g, -1, *x.shape[1:])
    return np.moveaxis(x, 1, axis + 1)
