"""Variance of masked-diffusion (MDM) training losses: the A + B + C decomposition, P-POTS, MIRROR,
StraTS and the EMA control variate (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159).

Conventions (``/work/shared/papers/mdm_variance.md``, sections 1-4 and 7, whose errata override the body):

* Sequences are ``[L]`` integer tokens; a mask is a boolean ``[L]`` (True = masked). The forward process
  masks each token independently with probability ``t``; ``t`` is drawn on ``[eps, 1]`` (the clamp away
  from 0 that keeps Var(l) finite: with t ~ U[0, 1] and the 1/t weight the variance diverges
  logarithmically, section 7).
* The MDM per-sample loss is ``l = -(1 / (L t)) sum_{i masked} log p(x0_i | x_t)`` (normalised by the
  sequence length L, never by the masked count, which would break the NELBO identity); the ARM loss is
  ``-(1/L) sum_i log p(x_i | x_<i)``.
* Decomposition (law of total variance, order x0 -> t -> mask, section 2):
  ``A = E_{x0,t} Var(l | x0, t)``, ``B = E_x0 Var_t E(l | x0, t)``, ``C = Var_x0 E(l | x0)``.
  :func:`decompose` estimates each one without bias by nested Monte Carlo (section 7) with delete-one
  jackknife standard errors over the data points (keys ``A_se``, ``B_se``, ``C_se``, ``total_se``).
* P-POTS exactly in t: :func:`exact_mask_sums` enumerates the 2^L masks of a sequence once, which makes
  E[l | x0, t] and E[l^2 | x0, t] polynomials in t (:func:`exact_t_moments`); :func:`pots_exact` then
  integrates the importance-sampling variance of any t-density by Gauss-Legendre (:func:`t_quadrature`),
  so only the sample of sequences is random (jackknife SEs over it).
* Variance estimates are two-pass (centred) in float64, never ``E[x^2] - mean^2``.

Everything here is pure JAX/numpy/scipy; the flax denoiser lives in ``sims/mdm_variance.py``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Literal, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
import scipy.special
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from theory.numerics import check_int, check_limit, check_real

Pairing = Literal["single", "mirror", "multisample2"]
PAIRINGS = ("single", "mirror", "multisample2")
POSITIVE_SHARE = 0.25  # pair_stats(pairing="positive"): per-token probability that mask 2 reuses U
MAX_EXACT_LEN = 20  # exact mask enumeration costs 2^L loss terms per sequence
LossFn = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]

# ---------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------


def check_eps(eps) -> float:
    """``eps`` as a float in (0, 1): the clamp t >= eps. Raises ValueError (eps <= 0, eps >= 1, NaN) or
    TypeError (not a real number)."""
    return check_real(eps, "eps", gt=0.0, lt=1.0)


def check_t(t, name: str = "t"):
    """Refuse a mask rate outside (0, 1] when ``t`` is concrete (inside ``jit`` it is not checked).

    Raises:
      ValueError: some entry of ``t`` is not finite or lies outside (0, 1].
    """
    if isinstance(t, jax.core.Tracer):
        return t
    a = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a <= 0) or np.any(a > 1):
        bad = a[~(np.isfinite(a) & (a > 0) & (a <= 1))].ravel()[:3]
        raise ValueError(f"{name} must lie in (0, 1] (the masking rate; clamp t >= eps > 0), got {bad.tolist()}")
    return t


# ---------------------------------------------------------------------------------------------------
# Forward process, MIRROR pairs, losses
# ---------------------------------------------------------------------------------------------------


def uniform_t(key, shape, eps) -> jax.Array:
    """``t ~ U[eps, 1]`` of ``shape`` (the clamped LLaDA/MDM rate). Raises ValueError for eps not in (0, 1)."""
    eps = check_eps(eps)
    return eps + (1.0 - eps) * jax.random.uniform(key, shape)


def forward_mask(key, t, length: int) -> jax.Array:
    """The forward (absorbing) process: each of ``length`` tokens masked independently with probability
    ``t`` (the paper's objective). Returns a bool ``[length]`` mask. Raises ValueError for t outside (0, 1]."""
    check_t(t)
    return jax.random.uniform(key, (length,)) < t


def fixed_count_mask(key, length: int, n_masked: int) -> jax.Array:
    """A uniformly random mask with exactly ``n_masked`` of ``length`` tokens masked (bool ``[length]``).

    Raises:
      ValueError: ``n_masked`` not in [1, length] (a rate that cannot be met), ``length < 1``.
    """
    length = check_int(length, "length", ge=1)
    n_masked = check_int(n_masked, "n_masked")
    if not 1 <= n_masked <= length:
        raise ValueError(f"cannot mask {n_masked} of {length} tokens: n_masked must be in [1, {length}]")
    return jnp.argsort(jax.random.uniform(key, (length,))) < n_masked


def mirror_masks(key, t, length: int) -> tuple[jax.Array, jax.Array]:
    """MIRROR's complementary pair (Sec. 4.2): one shared ``U_i ~ U[0, 1]`` per token,
    mask 1 = ``{U < t}``, mask 2 = ``{U > 1 - t}`` (i.e. ``1 - U < t``). Both have rate t; disjoint for
    t <= 1/2, exact complements at t = 1/2, overlapping on ``{1 - t < U < t}`` above.
    Returns two bool ``[length]`` masks. Raises ValueError for t outside (0, 1]."""
    check_t(t)
    u = jax.random.uniform(key, (length,))
    return u < t, u > 1.0 - t


def pair_masks(key, t, length: int, pairing: Pairing) -> tuple[jax.Array, jax.Array]:
    """Two masks at rate ``t``: ``"mirror"`` (:func:`mirror_masks`), ``"multisample2"`` (two independent
    masks at the same cost) or ``"single"`` (the same mask twice, so the pair mean is one mask's loss)."""
    if pairing == "mirror":
        return mirror_masks(key, t, length)
    k1, k2 = jax.random.split(key)
    m1 = jax.random.uniform(k1, (length,)) < t
    if pairing == "single":
        return m1, m1
    if pairing == "multisample2":
        return m1, jax.random.uniform(k2, (length,)) < t
    raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")


def mdm_loss(token_logp, t, mask) -> jax.Array:
    """The MDM per-sample loss with the 1/t weight, normalised by the sequence length L:
    ``-(1 / (L t)) sum_i mask_i log p(x0_i | x_t)``.

    Args:
      token_logp: ``[..., L]`` log-probabilities the denoiser gives the true token at each position
        (only masked positions count).
      t: masking rate, scalar or broadcastable to ``[...]``, in (0, 1].
      mask: bool ``[..., L]``.
    Returns: ``[...]`` loss in nats per token.
    Raises: ValueError for t outside (0, 1] (concrete inputs).
    Source: MDM NELBO (the paper's objective; LLaDA's loss with P = L)."""
    check_t(t)
    length = token_logp.shape[-1]
    return -jnp.sum(jnp.where(mask, token_logp, 0.0), axis=-1) / (length * jnp.asarray(t))


def arm_loss(token_logp) -> jax.Array:
    """The autoregressive (teacher-forced) per-sample loss ``-(1/L) sum_i log p(x_i | x_<i)``:
    ``[..., L]`` -> ``[...]``. A deterministic function of x0, hence A = B = 0 (Sec. 3)."""
    return -jnp.mean(token_logp, axis=-1)


# ---------------------------------------------------------------------------------------------------
# The Markov-chain oracle
# ---------------------------------------------------------------------------------------------------


def random_chain(key, vocab: int, concentration: float = 0.3) -> tuple[jax.Array, jax.Array]:
    """A random Markov chain: transition rows ~ Dirichlet(concentration * 1), uniform initial law.
    Returns ``(transition [V, V], initial [V])`` (float64 under x64). Brief section 6's proxy uses
    V = 8, concentration 0.3. Raises ValueError for vocab < 2 or concentration <= 0."""
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


def exact_mask_weights(length: int, eps: float = 0.0) -> np.ndarray:
    """``w_k = E_t[t^(k-1) (1-t)^(L-k)]`` with ``t ~ U[eps, 1]``, k = 0..L (``w_0 = 0``): the weight of a
    given mask with k masked tokens in ``E_{t, mask}[l | x0]`` (the 1/t factor included), float64.
    At eps = 0, ``w_k = B(k, L - k + 1)``. Raises ValueError for eps not in [0, 1)."""
    length = check_int(length, "length", ge=1)
    eps = check_real(eps, "eps", ge=0.0, lt=1.0)
    k = np.arange(1, length + 1)
    a, b = k.astype(float), (length - k + 1).astype(float)
    w = np.exp(scipy.special.betaln(a, b)) * scipy.special.betaincc(a, b, eps) / (1.0 - eps)
    return np.r_[0.0, w]


def exact_mean_loss(token_logp_fn, x0, eps: float = 0.0) -> jax.Array:
    """``E_{t ~ U[eps, 1], mask}[l | x0]`` exactly, by enumerating all ``2^L`` masks and integrating t in
    closed form (:func:`exact_mask_weights`).

    At eps = 0 this is the continuous-time NELBO, equal to ``-log p(x0) / L`` for the exact denoiser
    (any-order autoregression; Sec. 3, oracle corollary).

    Args: token_logp_fn(x0, mask) -> ``[L]`` log-probabilities; x0 int ``[L]`` (L <= 20); eps in [0, 1).
    Returns: scalar.
    Raises: ValueError: L above :data:`MAX_EXACT_LEN`.
    """
    length = x0.shape[-1]
    check_limit(length, MAX_EXACT_LEN, "MAX_EXACT_LEN", "the sequence length for exact enumeration")
    w = jnp.asarray(exact_mask_weights(length, eps))
    codes = jnp.arange(2**length, dtype=jnp.int32)
    masks = ((codes[:, None] >> jnp.arange(length)) & 1).astype(bool)  # [2^L, L]
    s = jax.vmap(lambda m: -jnp.sum(jnp.where(m, token_logp_fn(x0, m), 0.0)))(masks)
    return jnp.sum(s * w[masks.sum(1)]) / length


def estimate_chain(data, vocab: int, smoothing: float = 0.5) -> tuple[jax.Array, jax.Array]:
    """A 'learned' chain: transition and initial law estimated by smoothed counts from ``data [n, L]``."""
    x = np.asarray(data)
    counts = np.full((vocab, vocab), smoothing)
    np.add.at(counts, (x[:, :-1].ravel(), x[:, 1:].ravel()), 1.0)
    init = np.full(vocab, smoothing)
    np.add.at(init, x[:, 0], 1.0)
    return jnp.asarray(counts / counts.sum(1, keepdims=True)), jnp.asarray(init / init.sum())


# ---------------------------------------------------------------------------------------------------
# Variance estimators
# ---------------------------------------------------------------------------------------------------


def variance_with_se(x) -> tuple[float, float]:
    """Unbiased sample variance (ddof = 1, two-pass in float64) of ``x [n]`` and its delete-one jackknife
    standard error (closed form ``s2_{-i} = (Q - n d_i^2 / (n - 1)) / (n - 2)`` with centred d).
    Raises ValueError for fewer than 3 values or a non-finite one."""
    v = np.asarray(x, np.float64).ravel()
    n = v.size
    if n < 3 or not np.all(np.isfinite(v)):
        raise ValueError(f"variance_with_se needs >= 3 finite values, got {n}")
    d = v - v.mean()
    q = np.sum(d * d)
    s2 = q / (n - 1)
    loo = (q - n * d * d / (n - 1)) / (n - 2)
    return float(s2), float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def _jackknife_se(loo: np.ndarray) -> float:
    n = loo.shape[0]
    return float(math.sqrt((n - 1) / n * np.sum((loo - loo.mean()) ** 2)))


def nested_estimates(losses) -> dict[str, float]:
    """Unbiased A, B, C (and total = A + B + C) from a nested sample ``losses [n, n_t, K]`` (n data
    points, n_t iid t-values per point, K iid masks per (point, t)), with jackknife SEs over points.

    ``A = mean s2_K``; ``B = mean_x s2_t(g_hat) - A / K``; ``C = s2_x(G_hat) - mean_x s2_t(g_hat) / n_t``
    (the plug-in versions overstate B and C). Keys: ``A, B, C, total, A_se, B_se, C_se,
    total_se``, the plug-in ``naive_B, naive_C, naive_total, naive_total_se`` (for comparison) and
    ``n, n_t, n_masks``.
    Raises: ValueError: n < 3, n_t < 2, K < 2 or a non-finite loss.
    """
    x = np.asarray(losses, np.float64)
    if x.ndim != 3:
        raise ValueError(f"losses must be [n, n_t, n_masks], got shape {x.shape}")
    n, nt, k = x.shape
    if n < 3 or nt < 2 or k < 2:
        raise ValueError(f"need n >= 3 data points, n_t >= 2, n_masks >= 2; got {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{int(np.sum(~np.isfinite(x)))} non-finite losses")
    return nested_estimates_from_stats(nested_stats(x), nt, k)


def nested_stats(losses) -> np.ndarray:
    """Per data point sufficient statistics of a nested sample ``losses [n, n_t, K]``: ``[n, 3]`` with
    columns (mean within-(x0, t) mask variance, variance over t of the mask means, mean over t of the
    mask means), all ddof 1. :func:`nested_estimates_from_stats` turns any subset of rows into A, B, C."""
    x = np.asarray(losses, np.float64)
    g = x.mean(2)  # [n, nt]
    return np.stack([x.var(2, ddof=1).mean(1), g.var(1, ddof=1), g.mean(1)], -1)


def nested_estimates_from_stats(stats, n_t: int, n_masks: int) -> dict[str, float]:
    """:func:`nested_estimates` from the per-point statistics ``stats [n, 3]`` of :func:`nested_stats`
    (``n_t`` t-values and ``n_masks`` masks per point); also ``A_minus_BC = A - B - C`` with its joint
    jackknife SE ``A_minus_BC_se``. Raises ValueError: n < 3 or non-finite stats."""
    st = np.asarray(stats, np.float64)
    if st.ndim != 2 or st.shape[1] != 3 or st.shape[0] < 3 or not np.all(np.isfinite(st)):
        raise ValueError(f"stats must be [n >= 3, 3] and finite, got shape {st.shape}")
    n, nt, k = st.shape[0], int(n_t), int(n_masks)
    a_x, b_x, big = st[:, 0], st[:, 1], st[:, 2]
    a, bm = a_x.mean(), b_x.mean()
    d = big - big.mean()
    q = np.sum(d * d)
    s2 = q / (n - 1)
    est = {"A": a, "B": bm - a / k, "C": s2 - bm / nt}
    # delete-one jackknife over the data points
    a_l = (n * a - a_x) / (n - 1)
    b_l = (n * bm - b_x) / (n - 1)
    s2_l = (q - n * d * d / (n - 1)) / (n - 2)
    loo = {"A": a_l, "B": b_l - a_l / k, "C": s2_l - b_l / nt}
    loo["total"] = loo["A"] + loo["B"] + loo["C"]
    loo["A_minus_BC"] = loo["A"] - loo["B"] - loo["C"]
    est["naive_total"] = a + bm + s2
    loo["naive_total"] = a_l + b_l + s2_l
    est["total"] = est["A"] + est["B"] + est["C"]
    est["A_minus_BC"] = est["A"] - est["B"] - est["C"]
    out: dict[str, float] = {key: float(v) for key, v in est.items()}
    out.update({f"{key}_se": _jackknife_se(v) for key, v in loo.items()})
    out.update(naive_B=float(bm), naive_C=float(s2), n=n, n_t=nt, n_masks=k)
    return out


TSampler = Callable[[jax.Array, tuple], tuple[jax.Array, jax.Array]]


def uniform_sampler(eps: float) -> TSampler:
    """``sampler(key, shape) -> (t, weight)`` with t ~ U[eps, 1] and weight 1."""
    eps = check_eps(eps)
    return lambda key, shape: (uniform_t(key, shape, eps), jnp.ones(shape))


def nested_losses(loss_fn: LossFn, data, key, *, n_t: int, n_masks: int, eps: float = 1e-2,
                  pairing: Pairing = "single", t_sampler: TSampler | None = None, mesh=None,
                  chunk: int = 512) -> np.ndarray:
    """The nested sample behind :func:`decompose`: ``[n, n_t, n_masks]`` float64 losses.

    Data points are processed ``chunk`` at a time (the last chunk padded); chunk c draws all its
    uniforms at once from ``fold_in(key, c)`` (partitionable threefry: the same numbers on any number of
    devices), its points sharded over ``mesh`` (a 1-D mesh; None: the default device). Each point gets
    ``n_t`` rates from ``t_sampler`` (default U[eps, 1], weight 1) and each (point, t) ``n_masks`` masks
    from the forward process. The value is ``weight * loss``, or for a pairing other than ``"single"``
    ``weight * (l1 + l2) / 2`` over the pair (:func:`pair_masks`: MIRROR shares U, MultiSample-2 draws
    a second U).
    """
    data = np.asarray(data)
    if data.ndim != 2:
        raise ValueError(f"data must be [n, L], got shape {data.shape}")
    n_t, n_masks = check_int(n_t, "n_t", ge=1), check_int(n_masks, "n_masks", ge=1)
    if pairing not in PAIRINGS:
        raise ValueError(f"pairing must be one of {PAIRINGS}, got {pairing!r}")
    sampler = uniform_sampler(eps) if t_sampler is None else t_sampler
    n, length = data.shape
    chunk = min(check_int(chunk, "chunk", ge=1), n)
    if mesh is not None:
        chunk = -(-chunk // mesh.devices.size) * mesh.devices.size
    per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (None, 0, 0)), (0, 0, 0))
    sharding = NamedSharding(mesh, P(mesh.axis_names[0])) if mesh is not None else None

    @jax.jit
    def fn(xs, c):
        kt, km, k2 = jax.random.split(jax.random.fold_in(key, c), 3)
        t, w = sampler(kt, (xs.shape[0], n_t))
        u = jax.random.uniform(km, (xs.shape[0], n_t, n_masks, length))
        if sharding is not None:
            t, w, u = (jax.lax.with_sharding_constraint(a, sharding) for a in (t, w, u))
        t4 = t[:, :, None, None]
        if pairing == "single":
            val = per(xs, t, u < t4)
        elif pairing == "mirror":
            val = 0.5 * (per(xs, t, u < t4) + per(xs, t, u > 1.0 - t4))
        else:
            u2 = jax.random.uniform(k2, u.shape)
            val = 0.5 * (per(xs, t, u < t4) + per(xs, t, u2 < t4))
        return w[:, :, None] * val

    out = []
    for c, s in enumerate(range(0, n, chunk)):
        xs = data[s:s + chunk]
        m = xs.shape[0]
        if m < chunk:
            xs = np.concatenate([xs, np.repeat(xs[-1:], chunk - m, 0)])
        xs = jax.device_put(xs, sharding) if sharding is not None else jnp.asarray(xs)
        out.append(np.asarray(fn(xs, c), np.float64)[:m])
    return np.concatenate(out, 0)


def decompose(loss_fn: LossFn, data, key, *, n_t: int, n_masks: int, eps: float = 1e-2,
              pairing: Pairing = "single", t_sampler: TSampler | None = None, mesh=None,
              chunk: int = 256) -> dict[str, float]:
    """Unbiased nested Monte Carlo estimates of the decomposition ``Var(l) = A + B + C`` (Sec. 3).

    ``A = E[Var(l | x0, t)]`` (masking-pattern noise), ``B = E_x0[Var_t E(l | x0, t)]`` (masking-rate
    noise), ``C = Var_x0 E(l | x0)`` (data noise), with x0 uniform over the rows of ``data``, t ~ U[eps, 1]
    and each token masked independently with probability t.

    Args:
      loss_fn: ``loss_fn(x0 [L] int, t scalar, mask [L] bool) -> scalar`` loss (traceable).
      data: ``[n, L]`` integer sequences (n >= 3).
      key: a ``jax.random.key``.
      n_t: iid t-values per sequence (>= 2); n_masks: masks per (sequence, t) (>= 2).
      eps: the clamp t >= eps, in (0, 1).
      pairing: ``"single"`` (one mask), ``"mirror"`` or ``"multisample2"`` (the loss is the pair mean).
      t_sampler: optional ``(key, shape) -> (t, weight)`` replacing U[eps, 1] (importance sampling: the
        loss is multiplied by the weight).
      mesh: optional 1-D device mesh; the sequences are sharded over it.
    Returns:
      dict with ``A, B, C, total`` and their standard errors ``A_se, B_se, C_se, total_se`` (delete-one
      jackknife over the sequences), the plug-in ``naive_B, naive_C``, ``n, n_t, n_masks``, and
      ``stats [n, 3]``, the per-sequence statistics (:func:`nested_stats`) they are computed from.
    Raises:
      ValueError: eps not in (0, 1), ``n < 3``, ``n_t < 2``, ``n_masks < 2``, data not 2-D, an unknown
        pairing, or a non-finite loss.
    """
    check_eps(eps)
    check_int(n_t, "n_t", ge=2), check_int(n_masks, "n_masks", ge=2)
    losses = nested_losses(loss_fn, data, key, n_t=n_t, n_masks=n_masks, eps=eps, pairing=pairing,
                           t_sampler=t_sampler, mesh=mesh, chunk=chunk)
    return {**nested_estimates(losses), "stats": nested_stats(losses)}


def direct_variance(loss_fn: LossFn, data, key, *, eps: float = 1e-2, pairing: Pairing = "single",
                    t_sampler: TSampler | None = None, mesh=None) -> dict[str, float]:
    """The flat estimate of Var(l): one iid (t, mask) per row of ``data [n, L]``; returns ``var``,
    ``var_se`` (jackknife), ``mean``, ``mean_se`` and the draws ``losses [n]``. Raises ValueError as
    :func:`variance_with_se`."""
    x = nested_losses(loss_fn, data, key, n_t=1, n_masks=1, eps=eps, pairing=pairing, t_sampler=t_sampler,
                      mesh=mesh)[:, 0, 0]
    var, se = variance_with_se(x)
    return {"var": var, "var_se": se, "mean": float(x.mean()), "mean_se": float(x.std(ddof=1) / math.sqrt(x.size)),
            "losses": x}


# ---------------------------------------------------------------------------------------------------
# MIRROR
# ---------------------------------------------------------------------------------------------------


def mirror_ratio_context_free(t) -> float:
    """Closed-form ``Var_MIRROR / Var_single`` of the pair-mean loss at rate t when each token's loss does
    not depend on the mask (context-free denoiser): ``(1 - 2t) / (2 (1 - t))`` for t <= 1/2 and
    ``(2t - 1) / (2t)`` above; at most 1/2, exactly 0 at t = 1/2.

    Derivation: per token ``Cov(1[U < t], 1[U > 1 - t]) = -min(t, 1 - t)^2`` against ``Var = t (1 - t)``.
    Source: Sec. 4.2 (exact context-free case). Raises ValueError for t outside (0, 1]
    (at t = 1 the limit 1/2 is returned)."""
    t = check_real(t, "t", gt=0.0, le=1.0)
    return (1 - 2 * t) / (2 * (1 - t)) if t <= 0.5 else (2 * t - 1) / (2 * t)


def mirror_rho_context_free(t) -> float:
    """Closed-form pair correlation ``-min(t, 1-t) / max(t, 1-t)`` of MIRROR in the context-free model
    (t in (0, 1); raises ValueError otherwise)."""
    t = check_real(t, "t", gt=0.0, lt=1.0)
    return -min(t, 1 - t) / max(t, 1 - t)


def pair_stats(loss_fn: LossFn, data, key, t, *, n_masks: int, pairing: Pairing = "mirror",
               mesh=None) -> dict[str, Any]:
    """Within-sequence variance of one mask's loss and of the pair mean at fixed rates ``t``.

    For each rate (``t`` a scalar or a ``[n_rates]`` grid, each in (0, 1]) and each row of
    ``data [n, L]`` draw ``n_masks`` pairs (l1, l2) by ``pairing`` (one of :data:`PAIRINGS`, or
    ``"positive"``: the second mask reuses each token's U with probability :data:`POSITIVE_SHARE`, else an
    independent one, a positively correlated pair whose context-free ratio is (1 + share) / 2, the case
    just outside MIRROR's rho <= 0); per row compute the ddof-1 variances
    of l1 and l2, their covariance and the variance of (l1 + l2) / 2.
    Returns (floats for a scalar t, ``[n_rates]`` arrays for a grid): ``A_single`` (mean of the two
    one-mask variances), ``A_pair`` (pair-mean variance), ``cov``, ``ratio = A_pair / A_single``,
    ``rho = cov / A_single``, and jackknife SEs over rows ``A_single_se, A_pair_se, ratio_se, rho_se``
    (:func:`pair_summary`), and ``rows [n_rates, n, 3]``, the per-row values they are computed from.
    Raises: ValueError for a rate outside (0, 1], n < 3 or n_masks < 2.
    Source: Sec. 4.2 (Var(pair mean) = sigma^2 (1 + rho) / 2).
    """
    check_t(t)
    scalar = np.ndim(t) == 0
    ts = jnp.atleast_1d(jnp.asarray(t, jnp.result_type(float)))
    data = np.asarray(data)
    n_masks = check_int(n_masks, "n_masks", ge=2)
    n, length = data.shape
    if n < 3:
        raise ValueError("pair_stats needs at least 3 sequences")
    if pairing not in PAIRINGS + ("positive",):
        raise ValueError(f"pairing must be one of {PAIRINGS + ('positive',)}, got {pairing!r}")
    per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (0, None, 0)), (None, 0, 0))

    @jax.jit
    def fn(xs):
        k1, k2 = jax.random.split(key)
        u = jax.random.uniform(k1, (ts.shape[0], xs.shape[0], n_masks, length))
        t4 = ts[:, None, None, None]
        m1 = u < t4
        if pairing == "positive":  # each token reuses its U with probability POSITIVE_SHARE
            ka, kb = jax.random.split(k2)
            u2 = jnp.where(jax.random.uniform(ka, u.shape) < POSITIVE_SHARE, u, jax.random.uniform(kb, u.shape))
            m2 = u2 < t4
        else:
            m2 = u > 1.0 - t4 if pairing == "mirror" else (
                jax.random.uniform(k2, u.shape) < t4 if pairing == "multisample2" else m1)
        return jnp.stack([per(xs, ts, m1), per(xs, ts, m2)], -1)  # [R, n, K, 2]

    ll = np.asarray(fn(jnp.asarray(data)), np.float64)
    d = ll - ll.mean(2, keepdims=True)
    v1, v2 = (d[..., 0] ** 2).sum(2) / (n_masks - 1), (d[..., 1] ** 2).sum(2) / (n_masks - 1)
    c = (d[..., 0] * d[..., 1]).sum(2) / (n_masks - 1)
    rows = np.stack([0.5 * (v1 + v2), ll.mean(3).var(2, ddof=1), c], -1)  # [R, n, 3]
    out = pair_summary(rows)
    out["rows"] = rows
    return {k: (float(v[0]) if scalar else np.asarray(v)) if k != "rows" else v for k, v in out.items()}


def pair_summary(rows) -> dict[str, np.ndarray]:
    """The pair statistics of :func:`pair_stats` from its per-row values ``rows [R, n, 3]`` (one-mask
    variance, pair-mean variance, covariance of the two masks' losses; n >= 3 rows per rate): ``A_single,
    A_pair, cov, ratio, rho`` and jackknife SEs over rows ``A_single_se, A_pair_se, ratio_se, rho_se``
    (each ``[R]``). Any subset of rows gives the same estimates on fewer sequences."""
    rows = np.asarray(rows, np.float64)
    n = rows.shape[1]
    if rows.ndim != 3 or rows.shape[2] != 3 or n < 3:
        raise ValueError(f"rows must be [R, n >= 3, 3], got shape {rows.shape}")
    vs, vp, c = rows[..., 0], rows[..., 1], rows[..., 2]

    def loo(v):
        return (v.sum(1, keepdims=True) - v) / (n - 1)

    def jk(v):
        return np.sqrt((n - 1) / n * np.sum((v - v.mean(1, keepdims=True)) ** 2, 1))

    out = {"A_single": vs.mean(1), "A_pair": vp.mean(1), "cov": c.mean(1)}
    out.update(ratio=out["A_pair"] / out["A_single"], rho=out["cov"] / out["A_single"],
               A_single_se=jk(loo(vs)), A_pair_se=jk(loo(vp)), ratio_se=jk(loo(vp) / loo(vs)),
               rho_se=jk(loo(c) / loo(vs)))
    return out


# ---------------------------------------------------------------------------------------------------
# P-POTS
# ---------------------------------------------------------------------------------------------------


def t_bin_edges(eps: float, n_bins: int) -> np.ndarray:
    """``[n_bins + 1]`` increasing edges covering [eps, 1]: half geometric (resolving the 1/t blow-up near
    eps), half linear, merged. Raises ValueError for eps not in (0, 1) or n_bins < 2."""
    eps = check_eps(eps)
    n_bins = check_int(n_bins, "n_bins", ge=2)
    geo = np.geomspace(eps, 1.0, n_bins // 2 + 1)
    lin = np.linspace(eps, 1.0, n_bins - n_bins // 2 + 1)
    e = np.unique(np.r_[geo, lin])
    while e.size > n_bins + 1:  # merge the narrowest interior gap to land on exactly n_bins
        i = 1 + int(np.argmin(np.diff(e)[1:]))
        e = np.delete(e, i)
    while e.size < n_bins + 1:  # the two grids share end points: split the widest gap
        i = int(np.argmax(np.diff(e)))
        e = np.insert(e, i + 1, 0.5 * (e[i] + e[i + 1]))
    return e


def binned_sampler(edges, probs) -> TSampler:
    """Importance sampler of a piecewise-constant density on the bins: bin j with probability
    ``probs[j]``, t uniform inside it; weight ``u / p(t)`` with ``u = 1 / (1 - eps)`` the U[eps, 1]
    density and ``p(t) = probs[j] / width_j`` (unbiased for the U[eps, 1] mean: Sec. 4.1).
    Raises ValueError for negative or non-finite probabilities, or a bin with zero probability."""
    e = np.asarray(edges, np.float64)
    pr = np.asarray(probs, np.float64)
    if pr.shape != (e.size - 1,) or not np.all(np.isfinite(pr)) or np.any(pr <= 0):
        raise ValueError("probs must be positive and finite, one per bin (the sampler must cover [eps, 1])")
    pr = pr / pr.sum()
    width, u = np.diff(e), 1.0 / (e[-1] - e[0])
    lo, wid, logp, wts = (jnp.asarray(a) for a in (e[:-1], width, np.log(pr), u * width / pr))

    def sample(key, shape):
        kb, ku = jax.random.split(key)
        j = jax.random.categorical(kb, logp, shape=shape)
        return lo[j] + wid[j] * jax.random.uniform(ku, shape), wts[j]

    return sample


def pots_bin_probs(edges, m2) -> np.ndarray:
    """P-POTS on bins: ``probs_j prop. width_j sqrt(M2_j)`` with ``M2_j = E[l^2 | t in bin j]`` (the exact
    optimum among piecewise-constant densities; the bin version of ``p* prop. sqrt(E[l^2 | t])``,
    Sec. 4.1). Raises ValueError for a negative or non-finite M2."""
    m2 = np.asarray(m2, np.float64)
    if not np.all(np.isfinite(m2)) or np.any(m2 < 0):
        raise ValueError("m2 must be finite and non-negative")
    p = np.diff(np.asarray(edges, np.float64)) * np.sqrt(m2)
    return p / p.sum()


def binned_is_variance(edges, probs, m2, g) -> float:
    """Exact variance of the importance-weighted loss ``l u / p(t)`` under the piecewise-constant density
    ``probs``: ``sum_j u^2 width_j^2 M2_j / probs_j - mu^2`` with ``mu = sum_j u width_j g_j`` (the bin
    form of ``int m2 / p - (int g)^2``, Sec. 4.1)."""
    e = np.asarray(edges, np.float64)
    w, u = np.diff(e), 1.0 / (e[-1] - e[0])
    pr = np.asarray(probs, np.float64) / np.sum(probs)
    mu = np.sum(u * w * np.asarray(g))
    return float(np.sum(u**2 * w**2 * np.asarray(m2) / pr) - mu**2)


def binned_optimal_variance(edges, m2, g) -> float:
    """``(sum_j u width_j sqrt(M2_j))^2 - mu^2``: the P-POTS minimum on these bins."""
    e = np.asarray(edges, np.float64)
    w, u = np.diff(e), 1.0 / (e[-1] - e[0])
    return float((np.sum(u * w * np.sqrt(m2))) ** 2 - np.sum(u * w * np.asarray(g)) ** 2)


def binned_moments(loss_fn: LossFn, data, key, edges, n_per_bin: int, mesh=None) -> dict[str, np.ndarray]:
    """Per-bin mean ``g_j``, second moment ``M2_j = E[l^2 | t in bin j]`` and variance of the loss with
    x0 drawn uniformly from the rows of ``data [n, L]``, t uniform in bin j and the forward mask;
    ``n_per_bin`` iid draws per bin. Returns ``g, m2, var, g_se, m2_se`` (each ``[n_bins]``,
    :func:`binned_summary`) and the draws ``losses [n_bins, n_per_bin]``."""
    data = jnp.asarray(data)
    e = jnp.asarray(np.asarray(edges, np.float64))
    n_per_bin = check_int(n_per_bin, "n_per_bin", ge=2)
    length = data.shape[1]

    nb = e.shape[0] - 1
    sharding = NamedSharding(mesh, P(mesh.axis_names[0])) if mesh is not None else None

    @jax.jit
    def fn():
        kx, kt, km = jax.random.split(key, 3)
        rows = jax.random.randint(kx, (nb, n_per_bin), 0, data.shape[0])
        t = e[:-1, None] + (e[1:] - e[:-1])[:, None] * jax.random.uniform(kt, (nb, n_per_bin))
        u = jax.random.uniform(km, (nb, n_per_bin, length))
        if sharding is not None and nb % mesh.devices.size == 0:
            rows, t, u = (jax.lax.with_sharding_constraint(a, sharding) for a in (rows, t, u))
        return jax.vmap(jax.vmap(loss_fn))(data[rows], t, u < t[..., None])

    ls = np.asarray(fn(), np.float64)
    return {**binned_summary(ls), "losses": ls}


def binned_summary(losses) -> dict[str, np.ndarray]:
    """Per-bin ``g, m2, var, g_se, m2_se`` (each ``[n_bins]``) of the draws ``losses [n_bins, n]`` of
    :func:`binned_moments` (n >= 2); any subset of the draws gives the same estimates on fewer."""
    ls = np.asarray(losses, np.float64)
    n = ls.shape[1]
    sq = ls**2
    return {"g": ls.mean(1), "m2": sq.mean(1), "var": ls.var(1, ddof=1),
            "g_se": ls.std(1, ddof=1) / math.sqrt(n), "m2_se": sq.std(1, ddof=1) / math.sqrt(n)}


def pots_density(t_grid, m2) -> np.ndarray:
    """The continuous P-POTS density on a grid: ``p*(t) = sqrt(m2(t)) / int sqrt(m2)`` (trapezoid over
    ``t_grid``, the support actually sampled). Source: Sec. 4.1 (Cauchy-Schwarz optimum)."""
    t = np.asarray(t_grid, np.float64)
    r = np.sqrt(np.asarray(m2, np.float64))
    return r / np.trapezoid(r, t)


def epr_unnormalised(t, params) -> np.ndarray:
    """The paper's 7-parameter 'EPR' form ``sqrt(a t^r + b (1-t)^q + A^2 exp(2 kappa t^m))``;
    ``params = (a, r, b, q, A, kappa, m)`` with a, b, A, kappa > 0, r, q >= 0, m > 1 (Sec. 4.1)."""
    a, r, b, q, amp, kappa, m = params
    t = np.asarray(t, np.float64)
    return np.sqrt(a * t**r + b * (1 - t) ** q + amp**2 * np.exp(2 * kappa * t**m))


def _epr_from_raw(z):
    sp = lambda v: np.logaddexp(0.0, v)  # noqa: E731 - softplus
    return (sp(z[0]), sp(z[1]), sp(z[2]), sp(z[3]), sp(z[4]), sp(z[5]), 1.0 + sp(z[6]))


def fit_epr(t_grid, p_hat, *, restarts: int = 8, seed: int = 0) -> tuple[tuple[float, ...], float]:
    """Fit the EPR form to a density estimate by minimising KL(p_hat || p_EPR), both normalised by
    trapezoid on ``t_grid``, with L-BFGS-B over a softplus parametrisation and ``restarts`` random starts
    (the released code uses 20). Returns ``(params, kl)``. Source: Sec. 4.1 [code]."""
    t = np.asarray(t_grid, np.float64)
    ph = np.asarray(p_hat, np.float64)
    ph = ph / np.trapezoid(ph, t)
    rng = np.random.default_rng(seed)

    def kl(z):
        q = epr_unnormalised(t, _epr_from_raw(z))
        q = q / np.trapezoid(q, t)
        return float(np.trapezoid(ph * (np.log(ph + 1e-300) - np.log(q + 1e-300)), t))

    best = None
    for _ in range(check_int(restarts, "restarts", ge=1)):
        r = scipy.optimize.minimize(kl, rng.normal(0, 1.5, 7), method="L-BFGS-B")
        if np.isfinite(r.fun) and (best is None or r.fun < best.fun):
            best = r
    if best is None:
        raise RuntimeError("EPR fit failed on every restart")
    return tuple(float(v) for v in _epr_from_raw(best.x)), float(best.fun)


def epr_bin_probs(edges, params, points_per_bin: int = 16) -> np.ndarray:
    """Bin probabilities of the EPR density (integrated per bin by Gauss-Legendre, then normalised)."""
    e = np.asarray(edges, np.float64)
    x, w = np.polynomial.legendre.leggauss(points_per_bin)
    mid, half = 0.5 * (e[1:] + e[:-1]), 0.5 * np.diff(e)
    vals = epr_unnormalised(mid[:, None] + half[:, None] * x[None], params)
    p = (vals * w[None]).sum(1) * half
    return p / p.sum()


# ---------------------------------------------------------------------------------------------------
# P-POTS exactly in t (mask enumeration per sequence, Gauss-Legendre quadrature over t)
# ---------------------------------------------------------------------------------------------------

POTS_DENSITIES = ("uniform", "optimal", "paper", "square", "mean_only")


def exact_mask_sums(token_logp_fn, x0) -> jax.Array:
    """Per mask size k = 0..L, the sums over all masks with k masked tokens of ``s(m)`` and ``s(m)^2``,
    ``s(m) = -sum_{i in m} log p(x0_i | x0 outside m)`` (the unweighted masked log-loss).

    They make E[l | x0, t] and E[l^2 | x0, t] exact polynomials in t (:func:`exact_t_moments`), since a
    given mask of size k has probability ``t^k (1 - t)^(L - k)`` and ``l = s(m) / (L t)``.

    Args: token_logp_fn(x0, mask) -> ``[L]`` log-probabilities; x0 int ``[L]`` (L <= 20).
    Returns: ``[2, L + 1]`` float (row 0: sums of s, row 1: sums of s^2; column k = mask size).
    Raises: ValueError: L above :data:`MAX_EXACT_LEN`.
    Source: Sec. 3-4.1 (the forward process; the moments P-POTS is built on).
    """
    length = x0.shape[-1]
    check_limit(length, MAX_EXACT_LEN, "MAX_EXACT_LEN", "the sequence length for exact enumeration")
    codes = jnp.arange(2**length, dtype=jnp.int32)
    masks = ((codes[:, None] >> jnp.arange(length)) & 1).astype(bool)  # [2^L, L]
    s = jax.vmap(lambda m: -jnp.sum(jnp.where(m, token_logp_fn(x0, m), 0.0)))(masks)
    k = masks.sum(1)
    return jnp.stack([jax.ops.segment_sum(s, k, length + 1), jax.ops.segment_sum(s * s, k, length + 1)])


def exact_t_moments(sums, t) -> tuple[np.ndarray, np.ndarray]:
    """``g(x0, t) = E[l | x0, t]`` and ``m2(x0, t) = E[l^2 | x0, t]`` of the MDM loss at rates ``t``,
    exactly, from :func:`exact_mask_sums`:
    ``g = sum_k S1_k t^(k-1) (1-t)^(L-k) / L``, ``m2 = sum_k S2_k t^(k-2) (1-t)^(L-k) / L^2``.

    Args: sums ``[..., 2, L + 1]``; t ``[Q]`` in (0, 1].
    Returns: ``(g, m2)``, each ``[..., Q]`` float64 (nats per token and its square).
    Raises: ValueError for t outside (0, 1] or malformed sums.
    """
    s = np.asarray(sums, np.float64)
    if s.ndim < 2 or s.shape[-2] != 2 or s.shape[-1] < 2:
        raise ValueError(f"sums must be [..., 2, L + 1] with L >= 1, got shape {s.shape}")
    t = np.asarray(check_t(np.asarray(t, np.float64)), np.float64).ravel()
    length = s.shape[-1] - 1
    k = np.arange(1, length + 1)[:, None]
    base = (1.0 - t[None]) ** (length - k) * t[None] ** (k - 1)  # [L, Q]: t^(k-1) (1-t)^(L-k), k >= 1
    g = s[..., 0, 1:] @ base / length
    m2 = s[..., 1, 1:] @ (base / t[None]) / length**2
    return g, m2


def t_quadrature(eps: float, breaks=(), *, n_panels: int = 48, order: int = 12) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights for ``int_eps^1 f(t) dt``: panels equal in log t (``n_panels``
    over [eps, 1], refined at the points ``breaks``, e.g. bin edges where a density jumps), ``order``
    nodes per panel in s = log t (``dt = t ds``). Integrands like ``t^(k-1) (1-t)^(L-k)`` and
    ``sqrt(m2)`` are analytic in s, so the rule converges exponentially (tested against the closed Beta
    integrals). Returns ``(t [Q], w [Q])``. Raises ValueError for eps not in (0, 1), a break outside
    [eps, 1], n_panels or order < 1."""
    eps = check_eps(eps)
    n_panels, order = check_int(n_panels, "n_panels", ge=1), check_int(order, "order", ge=1)
    b = np.asarray(breaks, np.float64).ravel()
    if np.any(~np.isfinite(b)) or np.any(b < eps * (1 - 1e-12)) or np.any(b > 1 + 1e-12):
        raise ValueError(f"breaks must lie in [eps, 1] = [{eps:g}, 1]")
    edges = np.unique(np.r_[np.geomspace(eps, 1.0, n_panels + 1), np.clip(b, eps, 1.0)])
    x, w = np.polynomial.legendre.leggauss(order)
    lo, hi = np.log(edges[:-1])[:, None], np.log(edges[1:])[:, None]
    s = 0.5 * (lo + hi) + 0.5 * (hi - lo) * x[None]
    t = np.exp(s)
    return t.ravel(), (0.5 * (hi - lo) * w[None] * t).ravel()


def _pots_functionals(g_sum, gg_sum, m2_sum, n, w, u, bins_p=None) -> dict[str, np.ndarray]:
    """The exact-in-t variances of the importance-weighted loss for each density, from the sums over
    ``n`` sequences (leading batch axis: the full sample or its leave-one-out copies)."""
    big_g, m2 = g_sum / n, m2_sum / n  # [..., Q]
    within = m2 - gg_sum / n  # E_x0 Var(l | x0, t): the mask variance within each x0
    mu = u * np.sum(w * big_g, -1)

    def var_of(f):  # density p = f / int f on [eps, 1]
        return u**2 * np.sum(w * f, -1) * np.sum(w * m2 / f, -1) - mu**2

    dens = {"uniform": np.ones_like(m2), "optimal": np.sqrt(m2), "paper": np.sqrt(big_g**2 + within),
            "square": m2, "mean_only": np.abs(big_g)}
    if bins_p is not None:
        dens["bins"] = np.broadcast_to(bins_p, m2.shape)
    out = {f"V_{k}": var_of(f) for k, f in dens.items()}
    out["mu"] = mu
    return out


def pots_exact(sums, eps: float, *, bin_edges=None, bin_probs=None, n_panels: int = 48,
               order: int = 12) -> dict[str, Any]:
    """Variances of the P-POTS importance-weighted loss ``l u / p(t)`` (u = 1 / (1 - eps), t on
    [eps, 1]) exactly in t, over the empirical law of the sequences behind ``sums``, for the densities

    * ``uniform``: p = u (standard training);
    * ``optimal``: p* prop. sqrt(M2(t)), M2(t) = E[l^2 | t] over x0 and masks (the exact optimum,
      Sec. 4.1; variance ``u^2 (int sqrt M2)^2 - mu^2``);
    * ``paper``: p prop. sqrt(G(t)^2 + V_w(t)), G = E[l | t] and V_w = E_x0 Var(l | x0, t), the paper's
      estimator, which averages the within-x0 mask variance and so leaves out Var_x0 E[l | x0, t];
    * ``square``: p prop. M2 (the square, not the root); ``mean_only``: p prop. |G| (v left out);
    * ``bins`` (when ``bin_edges`` and ``bin_probs`` are given): the piecewise-constant density.

    ``V = u^2 int M2 / p dt - mu^2`` with ``mu = u int G dt``, integrals by :func:`t_quadrature`; the
    only randomness is the sample of sequences, and delete-one jackknife SEs over them are returned.

    Args: sums ``[n, 2, L + 1]`` (:func:`exact_mask_sums` per sequence, n >= 3); eps in (0, 1).
    Returns: dict with ``V_{name}`` and ``V_{name}_se`` (floats), ``mu``, ``mu_se``, and ``loo``
      (``{key: [n]}`` leave-one-out values of every ``V_{name}`` and ``mu``, for jackknife SEs of
      combinations: :func:`jackknife_se_of`).
    Raises: ValueError for eps, fewer than 3 sequences, non-finite sums, bins not covering [eps, 1].
    """
    eps = check_eps(eps)
    s = np.asarray(sums, np.float64)
    if s.ndim != 3 or s.shape[0] < 3 or s.shape[1] != 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"sums must be [n >= 3, 2, L + 1] and finite, got shape {s.shape}")
    bins_p, breaks = None, ()
    if bin_edges is not None:
        e = np.asarray(bin_edges, np.float64)
        pr = np.asarray(bin_probs, np.float64)
        if pr.shape != (e.size - 1,) or np.any(pr <= 0) or not np.isclose(e[0], eps) or not np.isclose(e[-1], 1.0):
            raise ValueError("bin_edges must cover [eps, 1] and bin_probs be positive, one per bin")
        breaks = e
    t, w = t_quadrature(eps, breaks, n_panels=n_panels, order=order)
    if bin_edges is not None:
        j = np.clip(np.searchsorted(e, t, side="right") - 1, 0, pr.size - 1)
        bins_p = pr[j] / np.diff(e)[j] / pr.sum()
    g, m2 = exact_t_moments(s, t)  # [n, Q]
    n, u = s.shape[0], 1.0 / (1.0 - eps)
    tot = (g.sum(0), (g * g).sum(0), m2.sum(0))
    full = _pots_functionals(*tot, n, w, u, bins_p)
    loo = _pots_functionals(tot[0] - g, tot[1] - g * g, tot[2] - m2, n - 1, w, u, bins_p)
    out: dict[str, Any] = {k: float(v) for k, v in full.items()}
    out.update({f"{k}_se": jackknife_se_of(v) for k, v in loo.items()})
    out["loo"] = loo
    return out


def jackknife_se_of(loo) -> float:
    """Delete-one jackknife standard error from the leave-one-out values ``loo [n]`` of an estimator
    (``sqrt((n - 1) / n * sum (loo_i - mean)^2)``). Raises ValueError for fewer than 2 values."""
    v = np.asarray(loo, np.float64).ravel()
    if v.size < 2:
        raise ValueError(f"a jackknife needs >= 2 leave-one-out values, got {v.size}")
    return _jackknife_se(v)


# ---------------------------------------------------------------------------------------------------
# StraTS and the EMA control variate
# ---------------------------------------------------------------------------------------------------


def stratified_t(key, n: int, eps: float, n_strata: int | None = None) -> jax.Array:
    """StraTS: ``n`` rates on [eps, 1] from ``k`` equal-width strata (``k = floor(sqrt(n))`` by default, as
    the released code), each stratum getting ``n // k`` or one more uniform draws, then shuffled.
    Each t is marginally U[eps, 1] when k divides n. Raises ValueError for eps, n < 1 or k not in [1, n].
    Source: Sec. 4.3 (StraTS)."""
    eps = check_eps(eps)
    n = check_int(n, "n", ge=1)
    k = math.isqrt(n) if n_strata is None else check_int(n_strata, "n_strata", ge=1, le=n)
    stratum = jnp.asarray(np.arange(n) * k // n)  # counts differ by at most one
    ku, kp = jax.random.split(key)
    t = eps + (1 - eps) * (stratum + jax.random.uniform(ku, (n,))) / k
    return jax.random.permutation(kp, t)


def batch_t_noise(loss_fn: LossFn, batch, key, *, n_rep: int, n_masks: int, eps: float,
                  stratified: bool, n_strata: int | None = None, shared: bool = False) -> dict[str, float]:
    """Masking-rate noise of a batch-mean loss at a fixed batch ``[n, L]``: over ``n_rep`` replicates, draw
    one t per sequence (iid U[eps, 1] or :func:`stratified_t`; with ``shared``, one U[eps, 1] draw for the
    whole batch: each t still marginally uniform, but positively dependent, the opposite of
    stratification) and ``n_masks`` masks per (sequence, t).
    With ``M_r`` the replicate's batch mean of the per-sequence mask means and ``s2_ri`` the within-mask
    variances, ``B_batch = s2_r(M) - mean(s2) / (K n)`` estimates ``Var_t(mean_i g(x_i, t_i))`` without
    bias; ``n B_batch`` is on the scale of B. Returns ``B_batch, B_batch_se`` (jackknife over replicates)
    and ``nB, nB_se``."""
    batch = jnp.asarray(batch)
    n, length = batch.shape
    n_rep, k = check_int(n_rep, "n_rep", ge=3), check_int(n_masks, "n_masks", ge=2)
    check_eps(eps)

    @jax.jit
    def fn():
        kt, km = jax.random.split(key)
        if shared:
            t = jnp.broadcast_to(uniform_t(kt, (n_rep, 1), eps), (n_rep, n))
        elif stratified:
            t = jax.vmap(lambda kk: stratified_t(kk, n, eps, n_strata))(jax.random.split(kt, n_rep))
        else:
            t = uniform_t(kt, (n_rep, n), eps)
        u = jax.random.uniform(km, (n_rep, n, k, length))
        per = jax.vmap(jax.vmap(jax.vmap(loss_fn, (None, None, 0)), (0, 0, 0)), (None, 0, 0))
        return per(batch, t, u < t[..., None, None])  # [R, n, K]

    ls = np.asarray(fn(), np.float64)
    m = ls.mean(2).mean(1)
    a = ls.var(2, ddof=1).mean(1) / (k * n)  # [R]
    d = m - m.mean()
    q = np.sum(d * d)
    b = q / (n_rep - 1) - a.mean()
    loo = (q - n_rep * d * d / (n_rep - 1)) / (n_rep - 2) - (a.sum() - a) / (n_rep - 1)
    se = _jackknife_se(loo)
    return {"B_batch": float(b), "B_batch_se": se, "nB": float(n * b), "nB_se": n * se}


class EMAState(NamedTuple):
    """Bin-wise EMA baseline: ``mean [m]`` (EMA of the loss in each t-bin) and ``seen [m]`` (bool)."""

    mean: jax.Array
    seen: jax.Array


def ema_init(n_bins: int) -> EMAState:
    """An empty bin-wise baseline with ``n_bins`` equal-width bins of t (Sec. 4.3, EMA)."""
    n_bins = check_int(n_bins, "n_bins", ge=1)
    return EMAState(jnp.zeros(n_bins), jnp.zeros(n_bins, bool))


def ema_bin(t, eps: float, n_bins: int) -> jax.Array:
    """Bin index in [0, n_bins) of rates ``t`` on [eps, 1] (equal-width bins)."""
    return jnp.clip(((t - eps) / (1 - eps) * n_bins).astype(jnp.int32), 0, n_bins - 1)


def ema_update(state: EMAState, t, loss, *, eps: float, rate: float) -> EMAState:
    """Fold a batch of (t, loss) into the baseline: per bin, ``b <- (1 - rate) b + rate * batch mean``
    (a bin's first batch sets it). The losses are detached. Raises ValueError for rate not in (0, 1]."""
    rate = check_real(rate, "rate", gt=0, le=1)
    nb = state.mean.shape[0]
    j = ema_bin(t, eps, nb)
    loss = jax.lax.stop_gradient(loss)
    s = jax.ops.segment_sum(loss, j, nb)
    c = jax.ops.segment_sum(jnp.ones_like(loss), j, nb)
    bm = s / jnp.maximum(c, 1)
    upd = jnp.where(state.seen, (1 - rate) * state.mean + rate * bm, bm)
    return EMAState(jnp.where(c > 0, upd, state.mean), state.seen | (c > 0))


def ema_adjusted_loss(loss, t, state: EMAState, *, eps: float, coef=1.0) -> jax.Array:
    """The control-variate loss ``l - c_j * stop_gradient(b_j)`` for t in bin j (0 baseline for unseen
    bins). The baseline is detached, so the gradient is exactly that of ``l``; only the loss value's
    variance changes (Sec. 4.3 [code]). ``coef`` is c_j (a scalar or ``[m]``; 1 by default)."""
    j = ema_bin(t, eps, state.mean.shape[0])
    b = jax.lax.stop_gradient(jnp.where(state.seen, state.mean, 0.0) * coef)
    return loss - b[j]


def describe() -> dict[str, Any]:
    """Module constants, for provenance."""
    return {"MAX_EXACT_LEN": MAX_EXACT_LEN, "pairings": PAIRINGS}
