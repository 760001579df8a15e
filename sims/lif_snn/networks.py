"""Deep sLIF/LIF networks: the ``depth`` experiment (Theorem 2, Figure 2, the beta = 0.5 table) and ``time_varying`` (Theorem 1 for input sequences)."""

from __future__ import annotations

import dataclasses
import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.lif_snn.neuron import (_check_kinds, _check_stride, _signs, KIND_STRIDE, KindName, network_sweep,
                                 NuRule, uniform_parts)
from theory import lif_snn as th

# ---------------------------------------------------------------------------------------------------
# depth (Figure 2)
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DepthParams:
    """Random L-layer binary classifiers (width n, 2 outputs), ENS at nu = nu_scale / sqrt(n)."""

    widths: tuple[int, ...] = param((64, 128, 256, 512, 1024), ge=2, smoke=2)
    max_depth: int = param(4, ge=1, le=32, doc="depths 1..max_depth: L - 1 hidden layers + the readout")
    T: int = param(5, ge=1, le=64, doc="steps 1..T")
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    nu_scale: float = param(1.0, gt=0)
    nu_rule: NuRule = param("sqrt", doc="nu = nu_scale / sqrt(n) (Theorem 2), nu_scale / (sqrt(n) ln n) "
                            "(Corollary 1's nu'), or nu_scale at every n (a fixed cut-off degree)")
    fixed_nu: float = param(0.125, ge=0, le=1, doc="also measure the same networks and inputs at this rate at "
                            "every n (0: not measured): a control whose cut-off degree 1/nu does not grow")
    kinds: tuple[KindName, ...] = param(("slif", "lif"))
    n_networks: int = param(128, ge=2, le=runtime.MAX_SEEDS, smoke=8)
    pairs: int = param(96, ge=1, doc="input pairs (x, y) per network")
    networks_per_call: int = param(8, ge=1, doc="networks vmapped at once (memory ~ this * n^2)")
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
        _check_stride(self.widths)
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
    readout = readout_weights(k_read, depth, n, n_out, x.dtype)  # [depth, n, n_out]
    # The readout currents of every depth: the input's (static, one product held for all T) and each hidden
    # layer's, read out as the layer is computed (no stack of hidden spikes is held: the same products;
    # bit-identical to one einsum over the stack on the CPU, 2026-12-05).
    drive = jnp.broadcast_to(x @ readout[0], (1, T) + x.shape[:-1] + (n_out,))
    if depth > 1:
        drive = jnp.concatenate([drive, th.random_stack_spikes(k_hidden, depth - 1, x, theta, beta, T, kind,
                                                               x.dtype, readout=readout[1:])])
    spikes = jax.vmap(lambda d: th.layer_spikes(d, theta, beta, kind))(drive)
    fired = (spikes + 1) / 2 if kind == "slif" else spikes
    # The running counts as T - 1 elementwise adds (exact: sums of 0/1). A cumsum became a reduction that XLA
    # hands to YNNPACK, slow on this layout: lif_snn_spectrum's n = 16 networks ran 132 -> 77 ms a call, the
    # same tables (2 cores, 2026-12-04).
    return jnp.stack(list(itertools.accumulate(fired[:, t] for t in range(T))), axis=1)


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
                fn = lambda k: depth_network(jax.random.fold_in(k, KIND_STRIDE * th.KINDS.index(kind) + i),
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

    widths: tuple[int, ...] = param((100, 300, 1000, 3000, 10000), ge=2, doc="input dimensions n", smoke=2)
    nu_scale: float = param(1.0, gt=0, doc="per-step flip rate nu = nu_scale / sqrt(n)")
    fixed_nu: float = param(0.1, gt=0, lt=1, doc="the control: the same neurons and inputs at this rate at "
                            "every n (outside nu = O(1/sqrt(n)))")
    theta: float = param(0.5, gt=0)
    betas: tuple[float, ...] = param((1.0, 0.5), ge=0, le=1, doc="leaks, each run on the same neurons and inputs")
    T: int = param(10, ge=1, le=64)
    n_seeds: int = param(32, ge=2, le=runtime.MAX_SEEDS)
    neurons_per_seed: int = param(128, ge=1, doc="weight vectors w per seed")
    sequences_per_seed: int = param(16, ge=1, doc="input sequences per seed, each run on every neuron of the seed")
    seeds_per_call: int = param(8, ge=1, doc="seeds vmapped at once (memory ~ this * sequences * T * n)")

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
    per_width = []
    for i, (n, c) in enumerate(runtime.tracked(list(zip(widths, codes)), "time_varying", unit="width")):
        def piece(i=i, n=int(n), c=c):
            fn = lambda k: time_varying_seed(jax.random.fold_in(k, i), n=n, p=p, codes=(c, fixed_code))
            return network_sweep(fn, ctx.config.seed, p.n_seeds, p.seeds_per_call, ctx.mesh)
        per_width.append(ctx.parts.get(f"n{n}", piece))
    for name in ("dynamic", "static", "dynamic_fixed", "static_fixed"):
        out[f"{name}_per_seed"] = np.stack([np.asarray(r[name], np.float64) for r in per_width], axis=2)
    if 1.0 in p.betas:
        b = list(p.betas).index(1.0)
        per = out["static_per_seed"][:, b]
        z = (per.mean(0) - out["static_exact"]) / (per.std(0, ddof=1) / math.sqrt(p.n_seeds))
        ctx.summary["max_abs_z_static_mc_vs_exact"] = float(np.max(np.abs(z)))
    return out
