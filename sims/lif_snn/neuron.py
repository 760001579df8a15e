"""One sLIF/LIF neuron by Monte Carlo: uniform draws, the currents (w.x, w.y) from their exact joint law, flip rates; the ``single_neuron`` experiment (Figure 1)."""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from sims import cli, runtime
from sims.config import param
from theory import boolean
from theory import lif_snn as th
from theory.numerics import float64

KindName = Literal["slif", "lif"]
NuRule = Literal["sqrt", "sqrt_log", "fixed"]

# fold_in(key, KIND_STRIDE * kind index + width index): one stream per (kind, width) of a width sweep
# (single_neuron, depth), distinct while a sweep has at most KIND_STRIDE widths (single_neuron: at most
# LAW_LEVELS_SALT, so that its slif streams stay below its law check's level streams on the same seed key).
KIND_STRIDE = 1000
# fold_in salts of law_check's draws, plus the case: exactly d bits flipped (d < LAW_MIXTURE_SALT -
# LAW_FIXED_SALT, so that these stay below the next), each bit w.p. law_nu at width n, level-weight case c.
LAW_FIXED_SALT, LAW_MIXTURE_SALT, LAW_LEVELS_SALT = 100, 200, 300


def uniform_parts(key, shapes):
    """Uniform [0, 1) float64 arrays of the given shapes from ONE draw: each random-number call site
    costs a separate compilation of the threefry hash, which dominates the compile time of these
    simulations on CPU."""
    sizes = [math.prod(s) for s in shapes]
    u = jax.random.uniform(key, (sum(sizes),), jnp.float64)
    ends = np.cumsum(sizes)
    return [u[e - m:e].reshape(s) for e, m, s in zip(ends, sizes, shapes)]


def _normal(u):
    """Standard normals from uniforms by the inverse CDF (0 maps to the smallest float64 above 0)."""
    return jax.scipy.special.ndtri(jnp.clip(u, jnp.finfo(jnp.float64).tiny, None))


def _signs(u, dtype=jnp.float32):
    """Fair +-1 values from uniforms."""
    return jnp.where(u < 0.5, 1.0, -1.0).astype(dtype)


# ---------------------------------------------------------------------------------------------------
# Monte Carlo of one neuron: the currents (w.x, w.y) drawn from their exact joint law
# ---------------------------------------------------------------------------------------------------


D_TAIL = 1e-16  # the flipped-bit count d is capped at its (1 - D_TAIL) quantile (a change of law <= 1e-16)


def binomial_cdf_table(n: int, p: float, size: int) -> np.ndarray:
    """CDF of ``Bin(n, p)`` at ``0..size-1`` (1 beyond ``n``), float64 ``[size]``: inverse-CDF sampling
    with a shape that does not depend on ``n``.

    Raises: ValueError: ``size < n + 1``."""
    if size < n + 1:
        raise ValueError(f"size must be >= n + 1 = {n + 1}, got {size}")
    return np.minimum(stats.binom.cdf(np.arange(size), n, p), 1.0)


def neuron_tables(n: int, nu: float, size: int) -> dict:
    """What :func:`drive_pairs` needs for width ``n``: the CDF of ``d ~ Bin(n, nu)`` (``cdf_d``), the cap
    ``d_hi`` (the ``1 - D_TAIL`` quantile), and the CDF of ``Bin(n - d_hi, 1/2)`` (``cdf_k``); tables of
    length ``size``."""
    d_hi = int(min(n, stats.binom.isf(D_TAIL, n, nu) + 1))
    return {"cdf_d": binomial_cdf_table(n, nu, size), "cdf_k": binomial_cdf_table(n - d_hi, 0.5, size),
            "d_hi": np.float64(d_hi), "n": np.float64(n)}


def _fair_binomial(key, count, words: int):
    """``Bin(count, 1/2)`` exactly, as the popcount of ``count`` random bits (``count <= 32 * words``).
    ``count``: ``[...]`` integers (float dtype allowed)."""
    bits = jax.random.bits(key, count.shape + (words,), jnp.uint32)
    take = jnp.clip(count[..., None].astype(jnp.int64) - 32 * jnp.arange(words), 0, 32)
    mask = jnp.where(take == 32, jnp.uint64(0xFFFFFFFF),
                     (jnp.uint64(1) << take.astype(jnp.uint64)) - jnp.uint64(1)).astype(jnp.uint32)
    return jnp.sum(jax.lax.population_count(bits & mask), axis=-1).astype(jnp.float64)


def drive_pairs(key, tables: dict, m: int, kind: KindName, words: int):
    """``m`` pairs of currents ``(X, Y) = (w.x, w.y)`` of one neuron, ``w ~ N(0, I/n)``, ``x`` uniform, each
    input bit flipped with probability ``nu``, drawn from their exact joint law in O(1) work per pair:

    * ``d ~ Bin(n, nu)`` flipped bits (inverse CDF; capped at ``d_hi``, see :data:`D_TAIL`).
    * sLIF (+-1 input): ``X = A + B``, ``Y = A - B`` with independent ``A ~ N(0, (n - d)/n)``,
      ``B ~ N(0, d/n)`` (the unflipped and flipped parts of ``w.x``).
    * LIF ({0, 1} input): of the ``d`` flipped bits ``j ~ Bin(d, 1/2)`` were ones, of the others
      ``k ~ Bin(n - d, 1/2) = Bin(n - d_hi, 1/2) + Bin(d_hi - d, 1/2)`` (inverse CDF + popcount);
      ``X = P + Q``, ``Y = P + M`` with ``P ~ N(0, k/n)``, ``Q ~ N(0, j/n)``, ``M ~ N(0, (d - j)/n)``.

    Args:
      key: a key; tables: :func:`neuron_tables` of the width (arrays may be traced); m: pairs;
      kind: ``"slif"`` | ``"lif"``; words: ``ceil(max d_hi / 32)`` (static).
    Returns:
      ``(X [m], Y [m])`` float64.
    """
    n, d_hi = tables["n"], tables["d_hi"]
    ku, kb = jax.random.split(key)
    u, uk, g = uniform_parts(ku, [(m,), (m,), (3, m)])
    d = jnp.minimum(jnp.searchsorted(tables["cdf_d"], u, side="right").astype(jnp.float64), d_hi)
    g1, g2, g3 = _normal(g)
    if kind == "slif":
        a, b = jnp.sqrt((n - d) / n) * g1, jnp.sqrt(d / n) * g2
        return a + b, a - b
    j, k2 = _fair_binomial(kb, jnp.stack([d, d_hi - d]), words)
    k = jnp.searchsorted(tables["cdf_k"], uk, side="right").astype(jnp.float64) + k2
    p = jnp.sqrt(k / n) * g1
    return p + jnp.sqrt(j / n) * g2, p + jnp.sqrt((d - j) / n) * g3


def neuron_flip_rate(key, tables, *, m: int, kind: KindName, words: int, theta: float, beta: float, T: int):
    """Share of ``m`` pairs whose spike at step ``t`` differs, ``[T]`` (one seed of the single-neuron
    Monte Carlo; ``tables``: :func:`neuron_tables`)."""
    x, y = drive_pairs(key, tables, m, kind, words)
    s = th.static_neuron_spikes(jnp.stack([x, y]), theta, beta, T, kind)  # [T, 2, m]
    return jnp.mean(s[:, 0] != s[:, 1], axis=-1)


def full_vector_flip_rate(key, n: int, *, theta: float, m: int, nu: float | None = None, d: int | None = None):
    """t = 1 flip share of ``m`` full simulations of one sLIF neuron: ``w ~ N(0, I_n/n)``, ``x`` uniform
    on {-1,1}^n, ``y`` = ``x`` with each bit flipped with probability ``nu``, or with exactly ``d`` random
    bits flipped. Returns a scalar (one seed of the check in ``lif_snn.single_neuron_exact``)."""
    uw, ux, uf = uniform_parts(key, [(m, n)] * 3)
    w = _normal(uw) / math.sqrt(n)
    x = _signs(ux, jnp.float64)
    if d is None:
        flip = uf < nu
    else:  # exactly d coordinates: the d smallest of n uniform keys
        flip = _le_kth_smallest(uf, d) if d > 0 else jnp.zeros((m, n), bool)
    y = jnp.where(flip, -x, x)
    sx = th.static_neuron_spikes(jnp.sum(w * x, -1), theta, 1.0, 1, "slif")[0]
    sy = th.static_neuron_spikes(jnp.sum(w * y, -1), theta, 1.0, 1, "slif")[0]
    return jnp.mean(sx != sy)


def _le_kth_smallest(u, k: int):
    """``u <= (the k-th smallest entry of each row)``: the ``k`` smallest of each row of ``u [..., n]`` (more
    where they tie), for ``u >= +0``. Compared as their IEEE bit patterns, which order non-negative floats
    as their values do, so the set is the same; XLA's integer sort is about 10x faster on the CPU than its
    float sort, whose comparator orders NaNs and signed zeros (an [8, 8192, 100] float64 block at k = 10:
    0.19 s against 1.94 s, the same masks; 2 cores, 2026-12-04)."""
    bits = jax.lax.bitcast_convert_type(u, jnp.dtype(f"int{8 * u.dtype.itemsize}"))
    return bits <= jnp.sort(bits, axis=-1)[..., k - 1:k]


def _check_stride(widths, most: int = KIND_STRIDE) -> None:
    """Raise ValueError when a sweep has more than ``most`` widths (:data:`KIND_STRIDE`: their streams would
    meet; see there)."""
    if len(widths) > most:
        raise ValueError(f"at most {most} widths (one random stream each per kind), got {len(widths)}")


def _check_kinds(kinds) -> None:
    if len(set(kinds)) != len(kinds) or any(k not in th.KINDS for k in kinds):
        raise ValueError(f"kinds must be distinct entries of {th.KINDS}, got {kinds}")


# theory.boolean's two compiled steps of the level weights, the same functions under runtime.jit (so that the
# paper-scale plan counts the transforms of 2^20-entry tables as compiled work, not host work).
_fwht = runtime.jit(boolean.fwht.__wrapped__, static_argnums=1, name="walsh_hadamard")
_levels = runtime.jit(boolean.level_sums.__wrapped__, static_argnums=1, name="level_weights")


def level_weights(table) -> np.ndarray:
    """:func:`theory.boolean.level_weights` (``table [..., 2^n]`` -> ``[..., n + 1]`` float64, the Fourier
    weight per level, O'Donnell Def. 1.27) by the same compiled transform, called through
    :func:`sims.runtime.jit`.

    Raises:
      TypeError, ValueError: as :func:`theory.boolean.level_weights`.
    """
    if runtime.is_planning():  # the planner's zero tables: no checked float64 copy (GBs at n = 20) to make
        shape = np.shape(table)
        a, n = np.broadcast_to(np.float64(0), shape), shape[-1].bit_length() - 1
    else:
        a, n = boolean.as_table(table, boolean=False)
        a = jnp.asarray(a)
    with float64():
        return np.asarray(_levels(_fwht(a, n), n, jnp.asarray(boolean.subset_sizes(n))))


def network_sweep(fn, seed: int, n_networks: int, per_call: int, mesh, *args, post=None) -> dict:
    """``fn(key, *args)`` for networks ``0..n_networks-1`` in calls of ``per_call`` networks (seeds sharded
    over ``mesh``, ``args`` replicated); network ``c * per_call + i`` uses ``fold_in(seed_key(seed, i), c)``.
    ``post`` (host side) reduces each call's output before the calls are joined (large tables).
    Returns the stacked pytree with leading axis ``[n_networks]``."""
    parts = []

    def per_network(k, c_, *a):
        return fn(jax.random.fold_in(k, c_), *a)

    for c in range(-(-n_networks // per_call)):
        m = min(per_call, n_networks - c * per_call)
        # the call index as an int32 array and one function for every call: one signature, traced and
        # compiled once (the plan keys a Python int by value)
        out = runtime.map_seeds(per_network, seed, m, np.int32(c), *args, mesh=mesh)
        parts.append(post(out) if post is not None else out)
    return jax.tree.map(lambda *a: np.concatenate(a), *parts)


# ---------------------------------------------------------------------------------------------------
# single_neuron (Figure 1)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SingleNeuronParams:
    """One random neuron, static input, ENS at nu = nu_scale / sqrt(n) per step t."""

    widths: tuple[int, ...] = param((100, 300, 1000, 3000, 10000), ge=1, doc="input dimensions n", smoke=2)
    nu_scale: float = param(1.0, gt=0, doc="nu = nu_scale / sqrt(n)")
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    T: int = param(10, ge=1, le=64)
    kinds: tuple[KindName, ...] = param(("slif", "lif"))
    n_seeds: int = param(64, ge=2, le=runtime.MAX_SEEDS)
    samples_per_seed: int = param(4096, ge=1)
    large_widths: tuple[float, ...] = param((1e12, 1e14, 1e16), gt=1,
                                            doc="widths of the large-n limit curves (plug-in rho = 1 - 2 nu)")
    law_n: int = param(100, ge=2, doc="width of the full-vector check of the t = 1 law at fixed distance")
    law_distances: tuple[int, ...] = param((1, 10, 30), ge=1, le=LAW_MIXTURE_SALT - LAW_FIXED_SALT - 1,
                                           doc="Hamming distances d of that check")
    law_nu: float = param(0.1, gt=0, le=1, doc="per-bit flip rate of the mixture check")
    law_mixture_widths: tuple[int, ...] = param((100, 30), ge=2, doc="widths of the mixture check")
    law_samples_per_seed: int = param(8192, ge=1, doc="full-vector simulations per seed and case")
    law_level_widths: tuple[int, ...] = param((10, 10, 12), ge=2, le=16, doc="n of the level-weight check")
    law_level_thetas: tuple[float, ...] = param((0.0, 0.5, 0.5), ge=0, doc="theta of the level-weight check")
    law_neurons_per_seed: int = param(32, ge=1, doc="random neurons transformed per seed and case")

    def __post_init__(self):
        _check_kinds(self.kinds)
        _check_stride(self.widths, LAW_LEVELS_SALT)
        if any(self.nu_scale / math.sqrt(n) > 1 for n in self.widths + self.large_widths):
            raise ValueError("nu = nu_scale / sqrt(n) must be <= 1 for every width and large width")
        if any(d > self.law_n for d in self.law_distances):
            raise ValueError(f"law_distances must be <= law_n = {self.law_n}, got {self.law_distances}")
        if len(self.law_level_widths) != len(self.law_level_thetas):
            raise ValueError("law_level_widths and law_level_thetas must have the same length")


def law_check(p: SingleNeuronParams, seed: int, mesh) -> dict:
    """Full-vector simulations of one sLIF neuron at t = 1 and full transforms of random neurons, the raw
    draws of the claim ``lif_snn.single_neuron_exact`` (the exact law that :func:`drive_pairs` samples).

    Uses the experiment's ``p.n_seeds`` seeds, so that every seed axis of the result has one length.

    Returns (``S = p.n_seeds``, ``C = len(p.law_level_widths)``):
      law_fixed_per_seed [S, len(law_distances)]: flip share per seed at width ``law_n``, exactly ``d``
        bits flipped (:func:`full_vector_flip_rate`, ``law_samples_per_seed`` simulations per seed).
      law_mixture_per_seed [S, len(law_mixture_widths)]: the same with each bit flipped w.p. ``law_nu``.
      law_levels [C, S, max(law_level_widths) + 1]: level weights of ``sign(w.x - theta)``
        (``w ~ N(0, I/n)``, full Walsh–Hadamard transform; zero beyond level ``n``), averaged over the
        ``p.law_neurons_per_seed`` neurons of each seed.
    """
    chunk = 8  # seeds per call: 8 x 8192 x 100 x 3 float64 uniforms ~ 160 MB

    def rates(salt, n, **kw):
        fn = lambda k: full_vector_flip_rate(jax.random.fold_in(k, salt), n, theta=p.theta,
                                             m=p.law_samples_per_seed, **kw)
        return network_sweep(fn, seed, p.n_seeds, chunk, mesh)

    fixed = np.stack([rates(LAW_FIXED_SALT + d, p.law_n, d=d) for d in p.law_distances], axis=1)
    mixture = np.stack([rates(LAW_MIXTURE_SALT + n, n, nu=p.law_nu) for n in p.law_mixture_widths],
                       axis=1)
    k_max = max(p.law_level_widths) + 1
    m = p.law_neurons_per_seed
    levels = np.zeros((len(p.law_level_widths), p.n_seeds, k_max))
    for c, (n, theta) in enumerate(zip(p.law_level_widths, p.law_level_thetas)):
        pts = boolean.cube(n).astype(np.float64).T
        for s0 in range(p.n_seeds):
            key = jax.random.fold_in(runtime.seed_key(seed, s0), LAW_LEVELS_SALT + c)
            w = np.asarray(jax.random.normal(key, (m, n), jnp.float64))
            tables = np.where((w / math.sqrt(n)) @ pts > theta, 1.0, -1.0)
            levels[c, s0, : n + 1] = level_weights(tables).mean(axis=0)
    return {"law_fixed_per_seed": fixed.astype(np.float64), "law_mixture_per_seed": mixture.astype(np.float64),
            "law_levels": levels}


def run_single_neuron(p: SingleNeuronParams, ctx: cli.Context) -> dict:
    """ENS of one random neuron at ``nu = p.nu_scale / sqrt(n)`` against the width, per step (Figure 1).

    Source: Araya et al., Theorem 1 and Figure 1; ``paper_configs/lif_snn_single_neuron.yaml``. Monte
    Carlo: ``p.n_seeds`` seeds (sharded) of ``p.samples_per_seed`` pairs each, the currents drawn from
    their exact joint law (:func:`drive_pairs`; :func:`law_check` checks that law against full-vector
    simulation), the neuron run by ``theory.lif_snn.static_neuron_spikes``.

    Returns (``W = len(p.widths)``, ``K = len(p.kinds)``, ``S = p.n_seeds``):
      widths [W] int, nus [W], steps [T] (1..T), kinds [K] (str).
      slif_exact [W, T]: exact sIF flip probability per step (:func:`theory.lif_snn.static_flip_probabilities`;
        NaN unless ``beta = 1``).
      slif_plugin_t1 [W]: the t = 1 plug-in (rho = 1 - 2 nu) large-n limit; lif_plugin_t1 [W]: its IF
        analogue (:func:`theory.lif_snn.if_plugin_flip_probability`).
      small_noise_constants [T]: lim P_t / sqrt(nu) of the sIF neuron (NaN unless beta = 1).
      large_widths [W2]; slif_plugin_large [W2, T]: the large-n limit of the sIF curves at
        ``nu = nu_scale / sqrt(n)`` for those widths (:func:`theory.lif_snn.static_plugin_flip_probabilities`;
        NaN unless ``beta = 1``).
      mc_per_seed [S, K, W, T]: Monte Carlo flip share of each seed (the seed axis is 0).
      {kind}_mc_mean [W, T], {kind}_mc_se [W, T]: its mean and standard error over seeds, per kind.
      mc_pairs []: pairs per width and kind (``n_seeds * samples_per_seed``).
      law_*: the arrays of :func:`law_check` (law_distances, law_mixture_widths, law_level_widths,
        law_level_thetas echo the config).
    ``ctx.summary``: ``max_abs_z_slif_mc_vs_exact``.
    """
    widths = np.asarray(p.widths, np.int64)
    nus = p.nu_scale / np.sqrt(widths)
    size = int(widths.max()) + 1
    tables = [neuron_tables(int(n), float(v), size) for n, v in zip(widths, nus)]
    words = -(-int(max(t["d_hi"] for t in tables)) // 32)
    exact_ok = p.beta == 1.0
    out = {"widths": widths, "nus": nus, "steps": np.arange(1, p.T + 1), "kinds": np.asarray(p.kinds),
           "slif_plugin_t1": np.asarray([th.plugin_flip_probability(p.theta, v) for v in nus]),
           "lif_plugin_t1": np.asarray([th.if_plugin_flip_probability(p.theta, v) for v in nus]),
           "small_noise_constants": th.small_noise_constants(p.theta, p.T) if exact_ok else np.full(p.T, np.nan),
           "slif_exact": np.stack([th.static_flip_probabilities(int(n), p.theta, float(v), p.T) if exact_ok
                                   else np.full(p.T, np.nan) for n, v in zip(widths, nus)]),
           "mc_pairs": np.asarray(p.n_seeds * p.samples_per_seed),
           "large_widths": np.asarray(p.large_widths, np.float64),
           "slif_plugin_large": np.stack([th.static_plugin_flip_probabilities(p.theta, p.nu_scale / math.sqrt(n), p.T)
                                         if exact_ok else np.full(p.T, np.nan) for n in p.large_widths])}
    bar = runtime.progress(len(p.kinds) * widths.size + 1, "single_neuron", unit="width")
    per_kind = []
    for kind in p.kinds:
        per_width = []
        for i, n in enumerate(widths):
            def piece(i=i, kind=kind):
                fn = lambda key, tab, stream: neuron_flip_rate(
                    jax.random.fold_in(key, stream), tab, m=p.samples_per_seed, kind=kind, words=words,
                    theta=p.theta, beta=p.beta, T=p.T)
                return {"per_seed": runtime.map_seeds(fn, ctx.config.seed, p.n_seeds, tables[i],
                                                      KIND_STRIDE * th.KINDS.index(kind) + i, mesh=ctx.mesh)}
            per_width.append(np.asarray(ctx.parts.get(f"{kind}_n{n}", piece)["per_seed"], np.float64))
            bar.update(1)
        per = np.stack(per_width, axis=1)  # [S, W, T]
        per_kind.append(per)
        out[f"{kind}_mc_mean"] = per.mean(axis=0)
        out[f"{kind}_mc_se"] = per.std(axis=0, ddof=1) / math.sqrt(p.n_seeds)
    out["mc_per_seed"] = np.stack(per_kind, axis=1)
    out.update(ctx.parts.get("law", lambda: law_check(p, ctx.config.seed, ctx.mesh)))
    out.update(law_distances=np.asarray(p.law_distances), law_mixture_widths=np.asarray(p.law_mixture_widths),
               law_level_widths=np.asarray(p.law_level_widths), law_level_thetas=np.asarray(p.law_level_thetas))
    bar.update(1)
    bar.close()
    if exact_ok and "slif" in p.kinds:
        z = (out["slif_mc_mean"] - out["slif_exact"]) / out["slif_mc_se"]
        ctx.summary["max_abs_z_slif_mc_vs_exact"] = float(np.max(np.abs(z)))
    return out
