"""The Markov-chain oracle: a random chain, its samples and log-probabilities, the exact optimal denoiser
of a chain (any mask) and the MDM / ARM losses built on it, and a chain estimated from data
(Jia et al., ICLR 2026, Sec. 3, oracle corollary)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from theory.mdm_variance.masks import LossFn, arm_loss, mdm_loss
from theory.numerics import check_int, check_real

def random_chain(key, vocab: int, concentration: float = 0.3) -> tuple[jax.Array, jax.Array]:
    """A random Markov chain: transition rows ~ Dirichlet(concentration * 1), uniform initial law.
    Returns ``(transition [V, V], initial [V])`` (float64 under x64). Our CPU-scale proxy of the
    paper's experiments uses V = 8, concentration 0.3. Raises ValueError for vocab < 2 or
    concentration <= 0."""
    vocab = check_int(vocab, "vocab", ge=2)
    concentration = check_real(concentration, "concentration", gt=0)
    trans = jax.random.dirichlet(key, jnp.full((vocab,), concentration), (vocab,))
    # Dirichlet draws at small concentration can underflow to exact zeros; keep every path possible.
    trans = jnp.maximum(trans, 1e-12)
    return trans / trans.sum(1, keepdims=True), jnp.full((vocab,), 1.0 / vocab)


def _check_chain(transition, initial):
    tr, ini = np.asarray(transition, np.float64), np.asarray(initial, np.float64)
    if tr.ndim != 2 or tr.shape[0] != tr.shape[1] or ini.shape != (tr.shape[0],):
        raise ValueError(f"transition must be [V, V] and initial [V], got {tr.shape} and {ini.shape}")
    if not (np.all(np.isfinite(tr)) and np.all(tr >= 0) and np.allclose(tr.sum(1), 1, atol=1e-8)):
        raise ValueError("transition must be a row-stochastic matrix (non-negative rows summing to 1)")
    if not (np.all(np.isfinite(ini)) and np.all(ini >= 0) and abs(ini.sum() - 1) < 1e-8):
        raise ValueError("initial must be a probability vector")
    return tr, ini


def sample_chain(key, transition, initial, n: int, length: int) -> jax.Array:
    """``n`` sequences of ``length`` tokens from the chain: int32 ``[n, length]``."""
    n, length = check_int(n, "n", ge=1), check_int(length, "length", ge=1)
    k0, ks = jax.random.split(key)
    logt = jnp.log(transition)
    x = jax.random.categorical(k0, jnp.log(initial), shape=(n,))

    def step(x, k):
        nxt = jax.random.categorical(k, logt[x])
        return nxt, nxt

    _, rest = jax.lax.scan(step, x, jax.random.split(ks, length - 1))
    return jnp.concatenate([x[None], rest], 0).T.astype(jnp.int32)


def chain_logprob(transition, initial, x0) -> jax.Array:
    """``log p(x0)`` under the chain, traceable: ``[..., L]`` int -> ``[...]``."""
    x0 = jnp.asarray(x0)
    return jnp.log(initial)[x0[..., 0]] + jnp.sum(jnp.log(transition)[x0[..., :-1], x0[..., 1:]], -1)


def chain_token_logprobs(transition, initial, x0) -> jax.Array:
    """The ARM's teacher-forced ``log p(x_i | x_<i)`` under the chain: ``[..., L]`` -> ``[..., L]``."""
    x0 = jnp.asarray(x0)
    first = jnp.log(initial)[x0[..., :1]]
    return jnp.concatenate([first, jnp.log(transition)[x0[..., :-1], x0[..., 1:]]], -1)


def markov_oracle_logprob(transition, initial, x0) -> float:
    """``log p(x0)`` of one sequence under a Markov chain, in float64.

    Args:
      transition: ``[V, V]`` row-stochastic matrix, ``transition[a, b] = p(x_{i+1} = b | x_i = a)``.
      initial: ``[V]`` law of ``x_0``.
      x0: ``[L]`` integer tokens in ``[0, V)``, L >= 1.
    Returns: ``log initial[x0_0] + sum_i log transition[x0_{i-1}, x0_i]`` (``-inf`` for an impossible
      sequence).
    Raises: ValueError for a malformed chain or tokens out of range / not 1-D / not integers.
    """
    tr, ini = _check_chain(transition, initial)
    x = np.asarray(x0)
    if x.ndim != 1 or x.size < 1 or not np.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x0 must be a non-empty 1-D integer sequence, got dtype {x.dtype}, shape {x.shape}")
    if np.any(x < 0) or np.any(x >= tr.shape[0]):
        raise ValueError(f"tokens of x0 must lie in [0, {tr.shape[0]})")
    with np.errstate(divide="ignore"):
        return float(np.log(ini[x[0]]) + np.sum(np.log(tr[x[:-1], x[1:]])))


def chain_powers(transition, length: int) -> jax.Array:
    """``[length + 1, V, V]``: the matrix powers ``T^0 .. T^length``."""
    def step(m, _):
        nxt = m @ transition
        return nxt, nxt

    eye = jnp.eye(transition.shape[0], dtype=transition.dtype)
    _, pw = jax.lax.scan(step, eye, None, length=length)
    return jnp.concatenate([eye[None], pw], 0)


def oracle_token_logprobs(transition, initial, x0, mask, powers=None) -> jax.Array:
    """The exact optimal denoiser of a Markov chain: ``log p(x0_i | x0 at the unmasked positions)`` for
    every position (0 at unmasked ones). Traceable.

    By the Markov property a masked position i depends only on its nearest unmasked neighbours
    a < i < b: ``p(x_i = v | .) prop. [T^{i-a}]_{x_a, v} [T^{b-i}]_{v, x_b}``; with no left anchor the
    left factor is the marginal ``initial T^i``, with no right anchor the right factor is 1 (the exact
    posterior of a Markov chain).

    Args:
      transition ``[V, V]``, initial ``[V]``, x0 int ``[L]``, mask bool ``[L]``, powers: optional
      :func:`chain_powers` ``(transition, L)`` to reuse.
    Returns: ``[L]`` float log-probabilities.
    """
    length = x0.shape[-1]
    pw = chain_powers(transition, length) if powers is None else powers
    pos = jnp.arange(length)
    marg = initial @ pw[:length]  # [L, V]: law of x_i
    # nearest unmasked position at or before / at or after i (O(L^2) masks: cheap and fast to compile)
    keep = ~mask[None, :]
    left = jnp.max(jnp.where(keep & (pos[None, :] <= pos[:, None]), pos[None, :], -1), axis=1)
    right = jnp.min(jnp.where(keep & (pos[None, :] >= pos[:, None]), pos[None, :], length), axis=1)
    la = jnp.where((left >= 0)[:, None], pw[jnp.clip(pos - left, 0, length), x0[jnp.clip(left, 0)], :], marg)
    rb = jnp.where((right < length)[:, None],
                   pw[jnp.clip(right - pos, 0, length), :, x0[jnp.clip(right, 0, length - 1)]], 1.0)
    w = la * rb
    logp = jnp.log(w[pos, x0]) - jnp.log(jnp.sum(w, -1))
    return jnp.where(mask, logp, 0.0)


def oracle_mdm_loss_fn(transition, initial, length: int) -> LossFn:
    """``loss_fn(x0, t, mask)`` of the MDM with the exact chain denoiser (for :func:`decompose`)."""
    pw = chain_powers(transition, length)
    return lambda x0, t, mask: mdm_loss(oracle_token_logprobs(transition, initial, x0, mask, pw), t, mask)


def arm_loss_fn(transition, initial) -> LossFn:
    """``loss_fn(x0, t, mask)`` of the teacher-forced ARM under a chain; it ignores ``t`` and ``mask``."""
    return lambda x0, t, mask: arm_loss(chain_token_logprobs(transition, initial, x0))


def estimate_chain(data, vocab: int, smoothing: float = 0.5) -> tuple[jax.Array, jax.Array]:
    """A 'learned' chain: transition and initial law estimated by smoothed counts from ``data [n, L]``."""
    x = np.asarray(data)
    counts = np.full((vocab, vocab), smoothing)
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1.0)
    init = np.full(vocab, smoothing)
    np.add.at(init, x[:, 0], 1.0)
    return jnp.asarray(counts / counts.sum(1, keepdims=True)), jnp.asarray(init / init.sum())


def oracle_mdm_grad_fn(transition, initial, length: int):
    """``grad_fn(x0, t, mask) -> [V * V]``: the gradient of the MDM loss of the chain denoiser with respect
    to the transition logits ``theta`` (rows ``T = softmax(theta)``), at ``theta = log transition``: the
    per-sample gradient a model parameterised by its chain would be trained on (the gradient analogue of
    :func:`oracle_mdm_loss_fn`; the decomposition of Sec. 3 applied coordinate-wise). Traceable."""
    theta0 = jnp.log(jnp.asarray(transition))

    def loss(theta, x0, t, mask):
        tr = jax.nn.softmax(theta, axis=-1)
        return mdm_loss(oracle_token_logprobs(tr, initial, x0, mask, chain_powers(tr, length)), t, mask)

    g = jax.grad(loss)
    return lambda x0, t, mask: g(theta0, x0, t, mask).ravel()


def arm_grad_fn(transition, initial):
    """``grad_fn(x0, t, mask) -> [V * V]``: the teacher-forced ARM loss's gradient with respect to the
    transition logits at ``log transition`` (ignores ``t`` and ``mask``, as :func:`arm_loss_fn`)."""
    theta0 = jnp.log(jnp.asarray(transition))
    g = jax.grad(lambda theta, x0: arm_loss(chain_token_logprobs(jax.nn.softmax(theta, -1), initial, x0)))
    return lambda x0, t, mask: g(theta0, x0).ravel()
