"""Simulations behind the LIF-SNN figures (Araya, Datres, Kutyniok, ICLR 2026, arXiv 2511.00904), with the
models and exact formulas of ``theory.lif_snn`` and the Boolean toolkit ``theory.boolean``.

Experiments (``paper_configs/lif_snn_*.yaml``; the figure name is the config name):

- ``single_neuron``: the paper's Figure 1. ENS at ``nu = nu_scale / sqrt(n)`` of one random neuron
  against ``n``, for every step ``t = 1..T``, sIF (sign spikes) and IF (Heaviside spikes, {0, 1} input):
  the exact curves (``beta = 1``) and sharded Monte Carlo over the exact joint law of the two currents
  (kept per seed), plus the full-vector draws that check that t = 1 law (:func:`law_check`).
- ``depth``: Figure 2. ENS of random L-layer binary classifiers against width, depth and T (sIF and IF),
  sharded Monte Carlo over networks (kept per network); every depth and every T comes from the same
  networks and inputs (common random numbers).
- ``spectrum``: expected level weights of random sLIF classifiers by full Walsh–Hadamard transforms at
  small n, per depth, against sampled uniformly random functions.
- ``training``: Figure 3. Noise sensitivity against ``nu`` before and after surrogate-gradient training on
  scikit-learn's bundled 8x8 digits (binarised to {-1, 1}^64; two classes and all ten), and on a sparse
  parity (the negative control), sLIF and LIF.

Network simulations run in float32 (weights, currents, potentials); exact formulas in float64.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

import jax
import jax.numpy as jnp
import numpy as np
import optax
from scipy import stats
from sklearn.datasets import load_digits

from sims import cli, runtime
from sims.config import param
from theory import boolean
from theory import lif_snn as th

KindName = Literal["slif", "lif"]
NuRule = Literal["sqrt", "sqrt_log", "fixed"]

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
        flip = uf <= jnp.sort(uf, axis=-1)[:, d - 1:d] if d > 0 else jnp.zeros((m, n), bool)
    y = jnp.where(flip, -x, x)
    sx = th.static_neuron_spikes(jnp.sum(w * x, -1), theta, 1.0, 1, "slif")[0]
    sy = th.static_neuron_spikes(jnp.sum(w * y, -1), theta, 1.0, 1, "slif")[0]
    return jnp.mean(sx != sy)


def _check_kinds(kinds) -> None:
    if len(set(kinds)) != len(kinds) or any(k not in th.KINDS for k in kinds):
        raise ValueError(f"kinds must be distinct entries of {th.KINDS}, got {kinds}")


# ---------------------------------------------------------------------------------------------------
# single_neuron (Figure 1)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SingleNeuronParams:
    """One random neuron, static input, ENS at nu = nu_scale / sqrt(n) per step t."""

    widths: tuple[int, ...] = param((100, 1000, 10000), ge=1, doc="input dimensions n")
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
    law_distances: tuple[int, ...] = param((1, 10, 30), ge=1, doc="Hamming distances d of that check")
    law_nu: float = param(0.1, gt=0, le=1, doc="per-bit flip rate of the mixture check")
    law_mixture_widths: tuple[int, ...] = param((100, 30), ge=2, doc="widths of the mixture check")
    law_samples_per_seed: int = param(8192, ge=1, doc="full-vector simulations per seed and case")
    law_level_widths: tuple[int, ...] = param((10, 10, 12), ge=2, le=16, doc="n of the level-weight check")
    law_level_thetas: tuple[float, ...] = param((0.0, 0.5, 0.5), ge=0, doc="theta of the level-weight check")
    law_neurons_per_seed: int = param(32, ge=1, doc="random neurons transformed per seed and case")

    def __post_init__(self):
        _check_kinds(self.kinds)
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

    fixed = np.stack([rates(100 + d, p.law_n, d=d) for d in p.law_distances], axis=1)
    mixture = np.stack([rates(200 + n, n, nu=p.law_nu) for n in p.law_mixture_widths], axis=1)
    k_max = max(p.law_level_widths) + 1
    m = p.law_neurons_per_seed
    levels = np.zeros((len(p.law_level_widths), p.n_seeds, k_max))
    for c, (n, theta) in enumerate(zip(p.law_level_widths, p.law_level_thetas)):
        pts = boolean.cube(n).astype(np.float64).T
        for s0 in range(p.n_seeds):
            w = np.asarray(jax.random.normal(jax.random.fold_in(runtime.seed_key(seed, s0), 300 + c), (m, n),
                                             jnp.float64))
            tables = np.where((w / math.sqrt(n)) @ pts > theta, 1.0, -1.0)
            levels[c, s0, : n + 1] = boolean.level_weights(tables).mean(axis=0)
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
                                                      1000 * th.KINDS.index(kind) + i, mesh=ctx.mesh)}
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


# ---------------------------------------------------------------------------------------------------
# depth (Figure 2)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DepthParams:
    """Random L-layer binary classifiers (width n, 2 outputs), ENS at nu = nu_scale / sqrt(n)."""

    widths: tuple[int, ...] = param((64, 256, 1024), ge=2)
    max_depth: int = param(5, ge=1, le=32, doc="depths 1..max_depth: L - 1 hidden layers + the readout")
    T: int = param(10, ge=1, le=64, doc="steps 1..T")
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    nu_scale: float = param(1.0, gt=0)
    nu_rule: NuRule = param("sqrt", doc="nu = nu_scale / sqrt(n) (Theorem 2), nu_scale / (sqrt(n) ln n) "
                            "(Corollary 1's nu'), or nu_scale at every n (a fixed cut-off degree)")
    fixed_nu: float = param(0.0, ge=0, le=1, doc="also measure the same networks and inputs at this rate at "
                            "every n (0: not measured): a control whose cut-off degree 1/nu does not grow")
    kinds: tuple[KindName, ...] = param(("slif", "lif"))
    n_networks: int = param(64, ge=2, le=runtime.MAX_SEEDS)
    pairs: int = param(32, ge=1, doc="input pairs (x, y) per network")
    networks_per_call: int = param(16, ge=1, doc="networks vmapped at once (memory ~ this * n^2)")
    n_out: int = param(2, ge=2, doc="output neurons (classes) of the readout; argmax, ties to the lowest index")
    dropout_rates: tuple[float, ...] = param((0.0,), ge=0, lt=1, doc="also measure the same networks and x "
                                             "under input dropout at the positive rates listed (each bit set to "
                                             "its 'off' value, 0 in {0,1} / -1 in {-1,1}, with this probability); "
                                             "[0]: none")

    @property
    def dropouts(self) -> tuple[float, ...]:
        """The positive entries of ``dropout_rates`` (the rates measured)."""
        return tuple(q for q in self.dropout_rates if q > 0)

    def __post_init__(self):
        _check_kinds(self.kinds)
        if np.any(noise_rates(self.widths, self.nu_scale, self.nu_rule) > 1):
            raise ValueError(f"nu ({self.nu_rule} rule, nu_scale = {self.nu_scale}) must be <= 1 for every width")


def noise_rates(widths, nu_scale: float, rule: str) -> np.ndarray:
    """Per-bit flip rates ``[W]`` of the depth experiment: ``nu_scale / sqrt(n)`` (``"sqrt"``, Theorem 2),
    ``nu_scale / (sqrt(n) ln n)`` (``"sqrt_log"``, Corollary 1's nu', whose cut-off degree 1/nu' is
    ``sqrt(n) ln n``), or ``nu_scale`` at every width (``"fixed"``: a cut-off degree that does not grow).

    Raises ValueError: an unknown rule, or ``n < 2`` with ``"sqrt_log"`` (ln n = 0 at n = 1)."""
    n = np.asarray(widths, np.float64)
    if rule == "sqrt":
        return nu_scale / np.sqrt(n)
    if rule == "sqrt_log":
        if np.any(n < 2):
            raise ValueError("the sqrt_log rule needs every width >= 2")
        return nu_scale / (np.sqrt(n) * np.log(n))
    if rule == "fixed":
        return np.full(n.shape, float(nu_scale))
    raise ValueError(f"nu_rule must be one of sqrt, sqrt_log, fixed, got {rule!r}")


def readout_weights(key, depth: int, n: int, n_out: int = 2, dtype=jnp.float32):
    """``[depth, n, n_out]`` readout matrices, ``N(0, 1/n)``; entry ``L - 1`` reads layer ``L - 1`` (the
    input for ``L = 1``) in the every-depth ensembles."""
    return jax.vmap(lambda l: jax.random.normal(jax.random.fold_in(key, l), (n, n_out), dtype))(
        jnp.arange(depth)) / math.sqrt(n)


def every_depth_counts(key, x, depth: int, theta: float, beta: float, T: int, kind: KindName, n_out: int = 2):
    """Cumulative output spike counts of the random classifiers of every depth ``L = 1..depth`` built on
    one random network: ``L - 1`` hidden layers of width ``n`` (shared, :func:`theory.lif_snn.random_stack_spikes`)
    and an independent ``n_out``-neuron readout per depth. Each depth's classifier has exactly the law of an
    ``L``-layer random network; different depths share their hidden layers (common random numbers).

    Args:
      key: the network's key. x: ``[..., n]`` static input in the model's alphabet. n_out: output neurons.
    Returns:
      ``[depth, T, ..., n_out]``: entry ``[L - 1, t - 1]`` is the spike count over steps ``1..t``.
    """
    k_hidden, k_read = jax.random.split(key)
    n = x.shape[-1]
    inputs = jnp.broadcast_to(x, (1, T) + x.shape).astype(x.dtype)
    if depth > 1:
        inputs = jnp.concatenate([inputs, th.random_stack_spikes(k_hidden, depth - 1, x, theta, beta, T, kind,
                                                                 x.dtype)])
    drive = jnp.einsum("lt...n,lnk->lt...k", inputs, readout_weights(k_read, depth, n, n_out, x.dtype))
    spikes = jax.vmap(lambda d: th.layer_spikes(d, theta, beta, kind))(drive)
    fired = (spikes + 1) / 2 if kind == "slif" else spikes
    return jnp.cumsum(fired, axis=1)


def dropout(u, x, rate):
    """Input dropout on a +-1 input: each bit set to its 'off' value -1 (0 in the {0,1} encoding) where
    ``u < rate``; bits already off are unchanged, so on a uniform ``x`` it changes each bit with probability
    ``rate / 2``. ``u``: uniforms of ``x``'s shape."""
    return jnp.where((u < rate) & (x > 0), -x, x)


def depth_network(key, *, n: int, nu: float, p: DepthParams, kind: KindName):
    """One random network of the depth experiment: ``p.pairs`` input pairs, the disagreement share and
    tie share for every depth and T. With ``p.fixed_nu > 0`` the same network and the same ``x`` are also
    run against ``x`` flipped at the rate ``p.fixed_nu``, and for each rate of ``p.dropout_rates`` against
    ``x`` under dropout at that rate (:func:`dropout`); all perturbations are nested (one uniform per bit).
    Returns ``{"disagree": [max_depth, T], "tie": [max_depth, T]}`` (tie: the largest of the ``p.n_out``
    counts of ``x`` attained more than once), with ``p.fixed_nu > 0`` ``"disagree_fixed": [max_depth, T]``,
    and with dropout rates ``"disagree_dropout": [R, max_depth, T]``."""
    kn, ku = jax.random.split(key)
    ux, uf = uniform_parts(ku, [(p.pairs, n), (p.pairs, n)])
    x = _signs(ux)
    inputs = [x, jnp.where(uf < nu, -x, x)]
    if p.fixed_nu > 0:
        inputs.append(jnp.where(uf < p.fixed_nu, -x, x))
    inputs += [dropout(uf, x, q) for q in p.dropouts]
    counts = every_depth_counts(kn, th.encode_input(jnp.stack(inputs), kind), p.max_depth, p.theta, p.beta,
                                p.T, kind, p.n_out)  # [L, T, inputs, P, n_out]
    cls = th.classify(counts)
    c0 = counts[:, :, 0]
    out = {"disagree": jnp.mean(cls[:, :, 0] != cls[:, :, 1], axis=-1),
           "tie": jnp.mean(jnp.sum(c0 == jnp.max(c0, axis=-1, keepdims=True), axis=-1) > 1, axis=-1)}
    if p.fixed_nu > 0:
        out["disagree_fixed"] = jnp.mean(cls[:, :, 0] != cls[:, :, 2], axis=-1)
    if p.dropouts:
        first = 3 if p.fixed_nu > 0 else 2
        out["disagree_dropout"] = jnp.stack([jnp.mean(cls[:, :, 0] != cls[:, :, first + r], axis=-1)
                                             for r in range(len(p.dropouts))])
    return out


def network_sweep(fn, seed: int, n_networks: int, per_call: int, mesh, *args, post=None) -> dict:
    """``fn(key, *args)`` for networks ``0..n_networks-1`` in calls of ``per_call`` networks (seeds sharded
    over ``mesh``, ``args`` replicated); network ``c * per_call + i`` uses ``fold_in(seed_key(seed, i), c)``.
    ``post`` (host side) reduces each call's output before the calls are joined (large tables).
    Returns the stacked pytree with leading axis ``[n_networks]``."""
    parts = []
    for c in range(-(-n_networks // per_call)):
        m = min(per_call, n_networks - c * per_call)
        out = runtime.map_seeds(lambda k, c_, *a: fn(jax.random.fold_in(k, c_), *a), seed, m, c, *args, mesh=mesh)
        parts.append(post(out) if post is not None else out)
    return jax.tree.map(lambda *a: np.concatenate(a), *parts)


def run_depth(p: DepthParams, ctx: cli.Context) -> dict:
    """ENS of random binary sIF / IF classifiers against width, depth and steps (Figure 2).

    Source: Araya et al., Theorem 2 and Figure 2; ``paper_configs/lif_snn_depth.yaml``. Each network has
    ``max_depth - 1`` hidden layers of width ``n`` and one 2-neuron readout per depth
    (:func:`every_depth_counts`); the classifier of depth ``L`` and ``t`` steps is the argmax of the
    readout's spike counts over steps ``1..t``, ties to class 0. ``x`` uniform on {-1,1}^n (IF reads it as
    {0, 1}), ``y`` = ``x`` with each bit flipped with probability ``nu`` (:func:`noise_rates` of ``p.nu_rule``;
    ``nu_scale / sqrt(n)`` by default).

    Returns (``W = len(p.widths)``, ``N = p.n_networks``, ``D = p.max_depth``):
      widths [W], nus [W], depths [D] (1..D), steps [T] (1..T).
      kinds [K] (str); per_network [K, W, N, D, T]: each network's disagreement share over its ``p.pairs``
        pairs (networks are the independent seeds: axis 2).
      {kind}_ens [W, D, T], {kind}_se [W, D, T]: mean over networks and its standard error (networks are
        independent; pairs within a network are not, so the error is over networks).
      {kind}_tie [W, D, T]: share of inputs x whose two output counts tie (assigned to class 0).
      bound_width_exponent [D]: Theorem 2's exponent of n at nu = c/sqrt(n), -1/2^(2L+2).
      fixed_nu []; per_network_fixed [K, W, N, D, T]: the disagreement share of the same networks and the
        same ``x`` at the rate ``p.fixed_nu`` at every width (axis 2: networks); ``[K, W, N, 0, 0]`` when
        ``p.fixed_nu = 0``.
      n_out [] (classes); dropout_rates [R] (the positive rates); per_network_dropout [K, W, N, R, D, T]: the
        disagreement share of the same networks and ``x`` under input dropout at each rate (axis 2: networks;
        R = 0 when none).
    """
    widths = np.asarray(p.widths, np.int64)
    nus = noise_rates(widths, p.nu_scale, p.nu_rule)
    out = {"widths": widths, "nus": nus, "depths": np.arange(1, p.max_depth + 1), "steps": np.arange(1, p.T + 1),
           "kinds": np.asarray(p.kinds),
           "bound_width_exponent": np.asarray([th.theorem2_width_exponent(L) for L in range(1, p.max_depth + 1)])}
    bar = runtime.progress(len(p.kinds) * widths.size, "depth", unit="width")
    all_per, all_fixed, all_drop = [], [], []
    for kind in p.kinds:
        per, tie, fixed, drop = [], [], [], []
        for i, (n, v) in enumerate(zip(widths, nus)):
            def piece(i=i, n=int(n), v=float(v), kind=kind):
                fn = lambda k: depth_network(jax.random.fold_in(k, 1000 * th.KINDS.index(kind) + i),
                                             n=n, nu=v, p=p, kind=kind)
                return network_sweep(fn, ctx.config.seed, p.n_networks, p.networks_per_call, ctx.mesh)
            r = ctx.parts.get(f"{kind}_n{n}", piece)
            per.append(r["disagree"])
            tie.append(r["tie"].mean(axis=0))
            if p.fixed_nu > 0:
                fixed.append(r["disagree_fixed"])
            if p.dropouts:
                drop.append(r["disagree_dropout"])
            bar.update(1)
        per = np.stack(per).astype(np.float64)
        all_per.append(per)
        if p.fixed_nu > 0:
            all_fixed.append(np.stack(fixed).astype(np.float64))
        if p.dropouts:
            all_drop.append(np.stack(drop).astype(np.float64))
        out[f"{kind}_ens"] = per.mean(axis=1)
        out[f"{kind}_se"] = per.std(axis=1, ddof=1) / math.sqrt(p.n_networks)
        out[f"{kind}_tie"] = np.stack(tie)
    out["per_network"] = np.stack(all_per)
    out["fixed_nu"] = np.asarray(p.fixed_nu)
    # Without the fixed-rate control the array is empty (its seed axis still exists for the ledger).
    out["per_network_fixed"] = (np.stack(all_fixed) if p.fixed_nu > 0
                                else np.zeros(out["per_network"].shape[:3] + (0, 0)))
    out["n_out"] = np.asarray(p.n_out)
    out["dropout_rates"] = np.asarray(p.dropouts, np.float64)
    out["per_network_dropout"] = (np.stack(all_drop) if p.dropouts
                                  else np.zeros(out["per_network"].shape[:3] + (0, p.max_depth, p.T)))
    bar.close()
    return out


# ---------------------------------------------------------------------------------------------------
# time_varying (Theorem 1 for input sequences)
# ---------------------------------------------------------------------------------------------------

RATE_BITS = 16  # flip rates are drawn as 16-bit integers below round(nu 2^16): the exact rate is that / 2^16


@dataclasses.dataclass(frozen=True)
class TimeVaryingParams:
    """One random neuron driven by a fresh uniform input and a fresh perturbation at every step (Theorem 1's
    input sequences), against the static input held from step 1; flip probability per step."""

    widths: tuple[int, ...] = param((100, 300, 1000, 3000, 10000), ge=2, doc="input dimensions n")
    nu_scale: float = param(1.0, gt=0, doc="per-step flip rate nu = nu_scale / sqrt(n)")
    fixed_nu: float = param(0.1, gt=0, lt=1, doc="the control: the same neurons and inputs at this rate at "
                            "every n (outside nu = O(1/sqrt(n)))")
    theta: float = param(0.5, gt=0)
    betas: tuple[float, ...] = param((1.0, 0.5), ge=0, le=1, doc="leaks, each run on the same neurons and inputs")
    T: int = param(10, ge=1, le=64)
    n_seeds: int = param(32, ge=2, le=runtime.MAX_SEEDS)
    neurons_per_seed: int = param(32, ge=1, doc="weight vectors w per seed")
    sequences_per_seed: int = param(64, ge=1, doc="input sequences per seed, each run on every neuron of the seed")
    seeds_per_call: int = param(4, ge=1, doc="seeds vmapped at once (memory ~ this * sequences * T * n)")

    def __post_init__(self):
        if len(set(self.betas)) != len(self.betas):
            raise ValueError(f"betas must be distinct, got {self.betas}")
        if any(self.nu_scale / math.sqrt(n) >= 1 for n in self.widths):
            raise ValueError("nu = nu_scale / sqrt(n) must be < 1 for every width")


def rate_code(nu: float) -> int:
    """The 16-bit threshold of a flip rate: a bit flips where a uniform 16-bit integer is below it, so the
    exact rate is ``rate_code(nu) / 2^16`` (within 2^-17 of ``nu``)."""
    return int(round(nu * 2**RATE_BITS))


def sign_sequences(key, shape):
    """Fair +-1 float32 values of ``shape`` (last axis ``n``) from packed random bits (32 per word)."""
    *lead, n = shape
    words = -(-n // 32)
    b = jax.random.bits(key, (*lead, words), jnp.uint32)
    bits = (b[..., None] >> jnp.arange(32, dtype=jnp.uint32)) & jnp.uint32(1)
    return (2.0 * bits.reshape(*lead, 32 * words)[..., :n] - 1.0).astype(jnp.float32)


def time_varying_seed(key, *, n: int, p: TimeVaryingParams, codes: tuple[int, int]):
    """One seed of the time-varying experiment: ``K = p.neurons_per_seed`` neurons ``w ~ N(0, I/n)`` and
    ``M = p.sequences_per_seed`` input sequences ``x_1..x_T`` uniform on {-1,1}^n, drawn afresh at every step;
    ``y_t`` is ``x_t`` with each bit flipped at the rate ``codes[0] / 2^16`` (fresh at every step), ``z_t`` at
    ``codes[1] / 2^16`` (the control; nested: one 16-bit uniform per bit). Every (neuron, sequence) pair is run
    with the time-varying input and with the static input ``x_1`` (and ``y_1``, ``z_1``) held at every step,
    for each leak of ``p.betas``.

    Returns ``{"dynamic", "static", "dynamic_fixed", "static_fixed"}``, each ``[B, T]``: the share of the
    ``K M`` pairs whose spike at step ``t`` differs between ``x`` and ``y`` (``_fixed``: ``x`` and ``z``)."""
    kw, kx, kf = jax.random.split(key, 3)
    K, M, T = p.neurons_per_seed, p.sequences_per_seed, p.T
    w = jax.random.normal(kw, (n, K), jnp.float32) / math.sqrt(n)
    x = sign_sequences(kx, (M, T, n))
    u = jax.random.bits(kf, (M, T, n), jnp.uint16)
    inputs = jnp.stack([x, jnp.where(u < codes[0], -x, x), jnp.where(u < codes[1], -x, x)])  # [3, M, T, n]
    drive = jnp.moveaxis(inputs @ w, 2, 0)  # [T, 3, M, K]
    both = jnp.stack([drive, jnp.broadcast_to(drive[:1], drive.shape)], axis=1)  # [T, 2 (dynamic, static), 3, M, K]
    s = jnp.stack([th.layer_spikes(both, p.theta, beta, "slif") for beta in p.betas])  # [B, T, 2, 3, M, K]
    main = jnp.mean(s[:, :, :, 0] != s[:, :, :, 1], axis=(-2, -1))  # [B, T, 2]
    fixed = jnp.mean(s[:, :, :, 0] != s[:, :, :, 2], axis=(-2, -1))
    return {"dynamic": main[..., 0], "static": main[..., 1], "dynamic_fixed": fixed[..., 0],
            "static_fixed": fixed[..., 1]}


def run_time_varying(p: TimeVaryingParams, ctx: cli.Context) -> dict:
    """Flip probability of one random sLIF neuron per step under time-varying input sequences (a fresh
    uniform input and a fresh perturbation at rate nu at every step) and under the static input, against n.

    Source: Araya et al., Theorem 1 (input sequences with per-step distance nu_t; the log n factor dropped for
    static input); ``paper_configs/lif_snn_time_varying.yaml``. Full-vector Monte Carlo: per seed
    ``p.neurons_per_seed`` weight vectors times ``p.sequences_per_seed`` input sequences (one matrix product;
    the pairs of a seed share weights or inputs, so the standard error is over seeds). Theorem 1 bounds the
    probability over the weights for fixed inputs, uniformly over the inputs at the given distances, so the
    average over uniformly drawn sequences is an instance of it.

    Returns (``S = p.n_seeds``, ``B = len(p.betas)``, ``W = len(p.widths)``):
      widths [W], betas [B], steps [T] (1..T); nus [W], fixed_nu []: the exact flip rates (16-bit codes, see
        :func:`rate_code`).
      dynamic_per_seed, static_per_seed [S, B, W, T]: each seed's share of flipped spikes at step ``t`` at
        ``nus`` (time-varying and static input; the same neurons and first input).
      dynamic_fixed_per_seed, static_fixed_per_seed [S, B, W, T]: the same at ``fixed_nu`` (the control).
      static_exact [W, T]: the exact static sIF flip probability at ``nus`` (beta = 1,
        :func:`theory.lif_snn.static_flip_probabilities`); NaN if 1 is not among ``p.betas``.
      pairs_per_seed []: neurons x sequences per seed.
    ``ctx.summary``: ``max_abs_z_static_mc_vs_exact`` (beta = 1).
    """
    widths = np.asarray(p.widths, np.int64)
    codes = [rate_code(p.nu_scale / math.sqrt(n)) for n in widths]
    fixed_code = rate_code(p.fixed_nu)
    nus = np.asarray(codes, np.float64) / 2**RATE_BITS
    out = {"widths": widths, "betas": np.asarray(p.betas, np.float64), "steps": np.arange(1, p.T + 1), "nus": nus,
           "fixed_nu": np.asarray(fixed_code / 2**RATE_BITS),
           "pairs_per_seed": np.asarray(p.neurons_per_seed * p.sequences_per_seed),
           "static_exact": np.stack([th.static_flip_probabilities(int(n), p.theta, float(v), p.T) if 1.0 in p.betas
                                     else np.full(p.T, np.nan) for n, v in zip(widths, nus)])}
    bar = runtime.progress(widths.size, "time_varying", unit="width")
    per_width = []
    for i, (n, c) in enumerate(zip(widths, codes)):
        def piece(i=i, n=int(n), c=c):
            fn = lambda k: time_varying_seed(jax.random.fold_in(k, i), n=n, p=p, codes=(c, fixed_code))
            return network_sweep(fn, ctx.config.seed, p.n_seeds, p.seeds_per_call, ctx.mesh)
        per_width.append(ctx.parts.get(f"n{n}", piece))
        bar.update(1)
    bar.close()
    for name in ("dynamic", "static", "dynamic_fixed", "static_fixed"):
        out[f"{name}_per_seed"] = np.stack([np.asarray(r[name], np.float64) for r in per_width], axis=2)
    if 1.0 in p.betas:
        b = list(p.betas).index(1.0)
        per = out["static_per_seed"][:, b]
        z = (per.mean(0) - out["static_exact"]) / (per.std(0, ddof=1) / math.sqrt(p.n_seeds))
        ctx.summary["max_abs_z_static_mc_vs_exact"] = float(np.max(np.abs(z)))
    return out


# ---------------------------------------------------------------------------------------------------
# spectrum
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class SpectrumParams:
    """Exhaustive spectra of random binary sLIF classifiers at small n, per depth."""

    widths: tuple[int, ...] = param((8, 12, 16), ge=2, le=20)
    max_depth: int = param(3, ge=1, le=16)
    T: int = param(5, ge=1, le=64)
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    kind: KindName = "slif"
    n_networks: int = param(60, ge=2, le=runtime.MAX_SEEDS)
    networks_per_call: int = param(16, ge=1)
    input_block: int = param(4096, ge=1, doc="inputs per evaluation block")


def network_tables(key, pts, *, p: SpectrumParams):
    """The Boolean functions (``+1`` = class 0, ties included) of the classifiers of every depth built on
    one random network (:func:`every_depth_counts` at ``T = p.T``), on the points ``pts [blocks, B, n]``.
    Returns ``{"table": [max_depth, blocks * B] int8, "tie": [max_depth, blocks * B] bool}``."""
    def block(xb):
        c = every_depth_counts(key, th.encode_input(xb, p.kind), p.max_depth, p.theta, p.beta, p.T, p.kind)[:, -1]
        f, tie = th.binary_readout(c)
        return f.astype(jnp.int8), tie

    f, tie = jax.lax.map(block, pts)  # [blocks, D, B]
    return {"table": jnp.moveaxis(f, 1, 0).reshape(p.max_depth, -1),
            "tie": jnp.moveaxis(tie, 1, 0).reshape(p.max_depth, -1)}


def run_spectrum(p: SpectrumParams, ctx: cli.Context) -> dict:
    """Expected Fourier level weights of random binary sLIF classifiers, exactly per network by full
    Walsh–Hadamard transform over all 2^n inputs, per depth, against uniformly random functions.

    Source: Araya et al., Corollary 1 (spectral simplicity), with exhaustive transforms at small n;
    ``paper_configs/lif_snn_spectrum.yaml``. Networks as in :func:`run_depth` (``T = p.T`` steps); the
    noise rate of the NS columns is ``nu = 1/sqrt(n)``.

    Returns (``W = len(p.widths)``, ``N = p.n_networks``, ``D = p.max_depth``, ``K = max(p.widths) + 1``;
    level axes are zero beyond ``n``; networks and sampled functions are the seeds, axis 1):
      widths [W], depths [D].
      weights [W, N, D, K]: each network's level weights W^k (exact; rows sum to 1).
      ns [W, N, D]: each network's exact NS at nu = 1/sqrt(n) (from its spectrum).
      tie [W, N, D]: share of the 2^n inputs with tied output counts.
      random_weights [W, N, K]: level weights of N sampled uniformly random functions.
      random_ns [W, N]: their exact NS at nu = 1/sqrt(n).
      random_expected [W, K]: E W^k = C(n, k) / 2^n of a uniformly random function.
      neuron_expected [W, K]: exact E W^k of one random sLIF neuron at t = 1
        (:func:`theory.lif_snn.expected_level_weights`), for reference.
    """
    W, N, D, K = len(p.widths), p.n_networks, p.max_depth, max(p.widths) + 1
    out = {"widths": np.asarray(p.widths, np.int64), "depths": np.arange(1, D + 1),
           "weights": np.zeros((W, N, D, K)), "ns": np.zeros((W, N, D)), "tie": np.zeros((W, N, D)),
           "random_weights": np.zeros((W, N, K)), "random_ns": np.zeros((W, N)),
           "random_expected": np.zeros((W, K)), "neuron_expected": np.zeros((W, K))}
    bar = runtime.progress(W, "spectrum", unit="width")
    for i, n in enumerate(p.widths):
        block = min(p.input_block, 2**n)
        pts = boolean.cube(n).astype(np.float32).reshape(-1, block, n)

        def piece(i=i, n=n, pts=pts):
            fn = lambda k, x: network_tables(jax.random.fold_in(k, i), x, p=p)
            r = network_sweep(fn, ctx.config.seed, p.n_networks, p.networks_per_call, ctx.mesh, pts,
                              post=lambda o: {"weights": boolean.level_weights(o["table"]),
                                              "tie": np.asarray(o["tie"]).mean(axis=-1)})
            rand = []
            for j0 in range(0, p.n_networks, p.networks_per_call):
                rand.append(boolean.level_weights(np.stack([
                    boolean.random_function(runtime.seed_key(ctx.config.seed + 1, 1000 * i + j), n)
                    for j in range(j0, min(j0 + p.networks_per_call, p.n_networks))])))
            return {"weights": r["weights"], "tie": r["tie"], "random_weights": np.concatenate(rand)}
        r = ctx.parts.get(f"n{n}", piece)
        nu = 1 / math.sqrt(n)
        factor = 0.5 * (1 - (1 - 2 * nu) ** np.arange(n + 1))
        out["weights"][i, ..., : n + 1] = r["weights"]
        out["ns"][i] = r["weights"] @ factor
        out["tie"][i] = r["tie"]
        out["random_weights"][i, :, : n + 1] = r["random_weights"]
        out["random_ns"][i] = r["random_weights"] @ factor
        out["random_expected"][i, : n + 1] = boolean.random_function_level_weights(n)
        out["neuron_expected"][i, : n + 1] = th.expected_level_weights(n, p.theta)
        bar.update(1)
    bar.close()
    return out


# ---------------------------------------------------------------------------------------------------
# training (Figure 3)
# ---------------------------------------------------------------------------------------------------

TaskName = Literal["digits2", "digits10", "parity"]


@dataclasses.dataclass(frozen=True)
class TrainingParams:
    """Surrogate-gradient training of L-layer SNN classifiers; NS against nu before and after."""

    tasks: tuple[TaskName, ...] = param(("digits2", "digits10", "parity"))
    kinds: tuple[KindName, ...] = param(("slif", "lif"))
    digit_pair: tuple[int, ...] = param((3, 8), ge=0, le=9, doc="the two classes of digits2")
    binarize_at: int = param(8, ge=1, le=16, doc="pixel (0..16) >= this is +1, else -1")
    test_fraction: float = param(0.3, gt=0, lt=1)
    parity_n: int = param(16, ge=1, doc="input dimension of the parity task (inputs uniform on {-1,1}^n)")
    parity_kinds: tuple[KindName, ...] = param(("slif",), doc="kinds trained on the parity control")
    parity_bits: int = param(3, ge=1, doc="parity target: product of the first k input bits")
    hidden: int = param(64, ge=1)
    depth: int = param(3, ge=1, doc="layers including the output layer")
    T: int = param(8, ge=1, le=64)
    theta: float = param(0.5, gt=0)
    beta: float = param(0.9, ge=0, le=1)
    steps: int = param(300, ge=1)
    batch: int = param(128, ge=1)
    lr: float = param(1e-2, gt=0)
    logit_scale: float = param(1.0, gt=0, doc="softmax logits = logit_scale * spike counts")
    n_seeds: int = param(4, ge=2, le=runtime.MAX_SEEDS)
    nus: tuple[float, ...] = param((0.01, 0.03, 0.1, 0.2, 0.3), gt=0, le=0.5)
    ns_pairs: int = param(4096, ge=1, doc="(x, y) pairs per nu for each NS estimate")
    log_every: int = param(10, ge=1)

    def __post_init__(self):
        _check_kinds(self.kinds)
        _check_kinds(self.parity_kinds)
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"tasks must be distinct, got {self.tasks}")
        if self.parity_bits > self.parity_n:
            raise ValueError(f"parity_bits must be <= parity_n, got {self.parity_bits} > {self.parity_n}")
        if len(self.digit_pair) != 2 or self.digit_pair[0] == self.digit_pair[1]:
            raise ValueError(f"digit_pair must be two different digits, got {self.digit_pair}")


def digits_data(p: TrainingParams, task: str, seed: int):
    """scikit-learn's bundled 8x8 digits (no download), binarised to {-1, 1}^64 (pixel >= binarize_at is
    +1), for ``"digits2"`` (labels 0/1 for ``digit_pair``) or ``"digits10"``; a seeded split.
    Returns ``(x_train, y_train, x_test, y_test)`` float32 / int32 numpy arrays."""
    d = load_digits()
    x = np.where(d.data >= p.binarize_at, 1.0, -1.0).astype(np.float32)
    y = d.target.astype(np.int32)
    if task == "digits2":
        keep = np.isin(y, p.digit_pair)
        x, y = x[keep], (y[keep] == p.digit_pair[1]).astype(np.int32)
    perm = np.random.default_rng(seed).permutation(y.size)
    n_test = round(p.test_fraction * y.size)
    te, tr = perm[:n_test], perm[n_test:]
    return x[tr], y[tr], x[te], y[te]


def parity_placeholder(p: TrainingParams):
    """Stand-in data arrays for the parity task (its inputs are drawn fresh; only the width is read)."""
    x, y = np.zeros((1, p.parity_n), np.float32), np.zeros((1,), np.int32)
    return x, y, x, y


def parity_labels(x, k: int):
    """Class of the k-bit parity target: 0 where ``prod_{i<k} x_i = +1``, 1 where it is -1."""
    return (jnp.sum(x[..., :k] < 0, axis=-1) % 2).astype(jnp.int32)


def _flip(u, x, nus):
    """``[V, P, n]``: ``x [P, n]`` with each bit flipped with probability ``nus[v]`` (``u``: ``[V, P, n]``
    uniforms)."""
    return jnp.where(u < jnp.asarray(nus, x.dtype)[:, None, None], -x, x)


def train_network(key, x_train, y_train, x_test, y_test, *, p: TrainingParams, task: str, kind: KindName):
    """Train one network with Adam and the ATan surrogate (:func:`theory.lif_snn.heaviside`); measure NS
    before and after on the same pairs (common random numbers).

    Returns a dict: ``ns_before``/``ns_after`` [V] (x uniform on {-1,1}^64: the definition),
    ``data_ns_before``/``data_ns_after`` [V] (x drawn from the test inputs), ``train_acc``, ``test_acc``,
    ``init_test_acc`` [], ``loss`` [steps // log_every].
    """
    n_in = x_train.shape[1]
    n_out = 2 if task != "digits10" else 10
    k_init, k_train, k_eval = jax.random.split(key, 3)
    weights = th.init_weights(k_init, (n_in,) + (p.hidden,) * (p.depth - 1) + (n_out,), jnp.float32)

    def counts(w, x):
        return th.spike_counts(th.run_network(w, th.encode_input(x, kind), p.theta, p.beta, p.T, kind), kind)

    def loss_fn(w, x, y):
        return optax.softmax_cross_entropy_with_integer_labels(p.logit_scale * counts(w, x), y).mean()

    opt = optax.adam(p.lr)

    def batch(k):
        if task == "parity":
            x = _signs(jax.random.uniform(k, (p.batch, n_in)))
            return x, parity_labels(x, p.parity_bits)
        idx = jnp.minimum(jax.random.uniform(k, (p.batch,)) * x_train.shape[0], x_train.shape[0] - 1).astype(jnp.int32)
        return x_train[idx], y_train[idx]

    def step(carry, k):
        w, s = carry
        loss, g = jax.value_and_grad(loss_fn)(w, *batch(k))
        upd, s = opt.update(g, s, w)
        return (optax.apply_updates(w, upd), s), loss

    (trained, _), losses = jax.lax.scan(step, (weights, opt.init(weights)), jax.random.split(k_train, p.steps))

    v, pairs = len(p.nus), p.ns_pairs
    u_test, u_x, u_idx, u_fu, u_fd = uniform_parts(k_eval, [(2, pairs, n_in), (pairs, n_in), (pairs,),
                                                            (v, pairs, n_in), (v, pairs, n_in)])
    if task == "parity":
        xt = _signs(u_test)
        tr_x, tr_y, te_x, te_y = xt[0], parity_labels(xt[0], p.parity_bits), xt[1], parity_labels(xt[1], p.parity_bits)
    else:
        tr_x, tr_y, te_x, te_y = x_train, y_train, x_test, y_test
    x_u = _signs(u_x)
    x_d = te_x[jnp.minimum(u_idx * te_x.shape[0], te_x.shape[0] - 1).astype(jnp.int32)]
    y_u, y_d = _flip(u_fu, x_u, p.nus), _flip(u_fd, x_d, p.nus)
    # One evaluation of both weight sets on every input (a single call site keeps compilation short).
    pieces = [tr_x, te_x, x_u, y_u.reshape(-1, n_in), x_d, y_d.reshape(-1, n_in)]
    ends = np.cumsum([a.shape[0] for a in pieces])
    both = jax.tree.map(lambda a, b: jnp.stack([a, b]), weights, trained)
    cls = jax.vmap(lambda w: th.classify(counts(w, jnp.concatenate(pieces))))(both)  # [2, M]
    tr_c, te_c, xu_c, yu_c, xd_c, yd_c = (cls[:, a:b] for a, b in zip(np.r_[0, ends[:-1]], ends))
    def ns(cx, cy):  # [2, P], [2, V * P] -> [2, V]
        return jnp.mean(cx[:, None] != cy.reshape(2, v, -1), axis=-1)

    ns_u, ns_d = ns(xu_c, yu_c), ns(xd_c, yd_c)
    test_acc = jnp.mean(te_c == te_y, axis=-1)
    return {"ns_before": ns_u[0], "ns_after": ns_u[1], "data_ns_before": ns_d[0], "data_ns_after": ns_d[1],
            "train_acc": jnp.mean(tr_c[1] == tr_y), "test_acc": test_acc[1], "init_test_acc": test_acc[0],
            "loss": losses.reshape(-1, p.log_every).mean(axis=1) if p.steps % p.log_every == 0
            else losses[:: p.log_every]}


def run_training(p: TrainingParams, ctx: cli.Context) -> dict:
    """NS against nu before and after surrogate-gradient training (Figure 3), per task and kind.

    Source: Araya et al., Figure 3 (trained networks are less sensitive), surrogate gradient as in snnTorch;
    ``paper_configs/lif_snn_training.yaml``. Seeds (one network each) are sharded over devices; every
    seed trains from its own initialisation and measures NS on its own pairs, the same pairs before and
    after training.

    Returns (``S = p.n_seeds``, ``V = len(p.nus)``, ``C`` cases: each task with each kind, the parity
    task with ``p.parity_kinds`` only): nus [V]; parity_ns_exact [V] (NS of the target parity,
    ``1/2 - 1/2 (1 - 2 nu)^k``); input_dims [3] (n of digits2, digits10, parity: 64, 64, ``p.parity_n``);
    cases [C] (str, ``"{task}_{kind}"``); and, with the seeds (one network each) on axis 0:
      ns_before [S, C, V], ns_after [S, C, V]: NS with x uniform on {-1,1}^n (the definition), MC over
        ``p.ns_pairs`` pairs per nu, the same pairs before and after training.
      data_ns_before [S, C, V], data_ns_after [S, C, V]: the same with x drawn from the test inputs.
      train_acc [S, C], test_acc [S, C], init_test_acc [S, C]; loss [S, C, steps / log_every].
    """
    out = {"nus": np.asarray(p.nus), "parity_ns_exact": 0.5 - 0.5 * (1 - 2 * np.asarray(p.nus)) ** p.parity_bits,
           "input_dims": np.asarray([64, 64, p.parity_n])}
    cases, per_case = [], []
    bar = runtime.progress(sum(len(p.parity_kinds if t == "parity" else p.kinds) for t in p.tasks), "training",
                           unit="model")
    for ti, task in enumerate(p.tasks):
        if task == "parity":
            data = parity_placeholder(p)
        else:
            data = digits_data(p, task, ctx.config.seed)
        for kind in (p.parity_kinds if task == "parity" else p.kinds):
            def piece(task=task, kind=kind, data=data, ti=ti):
                fn = lambda k, *d: train_network(
                    jax.random.fold_in(k, 1000 * ti + th.KINDS.index(kind)), *d, p=p, task=task, kind=kind)
                return runtime.map_seeds(fn, ctx.config.seed, p.n_seeds, *data, mesh=ctx.mesh)
            cases.append(f"{task}_{kind}")
            per_case.append(ctx.parts.get(f"{task}_{kind}", piece))
            bar.update(1)
    bar.close()
    out["cases"] = np.asarray(cases)
    for name in per_case[0]:
        out[name] = np.stack([np.asarray(r[name]) for r in per_case], axis=1)
    return out


EXPERIMENTS = {
    "single_neuron": cli.Experiment(SingleNeuronParams, run_single_neuron, seed_axes={
        "mc_per_seed": 0, "law_fixed_per_seed": 0, "law_mixture_per_seed": 0, "law_levels": 1}),
    "depth": cli.Experiment(DepthParams, run_depth, seed_axes={"per_network": 2, "per_network_fixed": 2,
                                                               "per_network_dropout": 2}),
    "time_varying": cli.Experiment(TimeVaryingParams, run_time_varying, seed_axes={
        "static_per_seed": 0, "dynamic_per_seed": 0, "static_fixed_per_seed": 0, "dynamic_fixed_per_seed": 0}),
    "spectrum": cli.Experiment(SpectrumParams, run_spectrum, seed_axes={
        "weights": 1, "ns": 1, "tie": 1, "random_weights": 1, "random_ns": 1}),
    "training": cli.Experiment(TrainingParams, run_training, seed_axes={
        k: 0 for k in ("ns_before", "ns_after", "data_ns_before", "data_ns_after", "train_acc", "test_acc",
                       "init_test_acc", "loss")}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
