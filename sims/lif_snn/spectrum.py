"""The ``spectrum`` experiment: exact Walsh-Hadamard level weights of small random networks (Corollary 1)."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.lif_snn.networks import every_depth_counts
from sims.lif_snn.neuron import KindName, level_weights, network_sweep
from theory import boolean
from theory import lif_snn as th

# ---------------------------------------------------------------------------------------------------
# spectrum
# ---------------------------------------------------------------------------------------------------

# seed_key salt of the uniformly random functions (the control): function j at width index i draws from
# fold_in(seed_key(seed, j, RANDOM_FUNCTIONS_SALT), i), apart from the networks' keys and from every other
# root seed's (root seed + 1 with index 1000 i + j had repeated draws beyond 1000 networks).
RANDOM_FUNCTIONS_SALT = runtime.FAMILY_SALT_BASE + 1


@dataclasses.dataclass(frozen=True)
class SpectrumParams:
    """Exhaustive spectra of random binary sLIF classifiers at small n, per depth."""

    widths: tuple[int, ...] = param((8, 12, 16), ge=2, le=20, smoke=2)
    max_depth: int = param(3, ge=1, le=16)
    T: int = param(5, ge=1, le=64)
    theta: float = param(0.5, gt=0)
    beta: float = param(1.0, ge=0, le=1)
    kind: KindName = "slif"
    n_networks: int = param(480, ge=2, le=runtime.MAX_SEEDS, smoke=50)
    networks_per_call: int = param(20, ge=1)
    input_block: int = param(1024, ge=1, doc="inputs per evaluation block")


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
    for i, n in enumerate(runtime.tracked(p.widths, "spectrum", unit="width")):
        block = min(p.input_block, 2**n)
        pts = boolean.cube(n).astype(np.float32).reshape(-1, block, n)

        def piece(i=i, n=n, pts=pts):
            fn = lambda k, x: network_tables(jax.random.fold_in(k, i), x, p=p)
            r = network_sweep(fn, ctx.config.seed, p.n_networks, p.networks_per_call, ctx.mesh, pts,
                              post=lambda o: {"weights": level_weights(o["table"]),
                                              "tie": np.asarray(o["tie"]).mean(axis=-1)})
            rand = []
            for j0 in range(0, p.n_networks, p.networks_per_call):
                js = jnp.arange(j0, min(j0 + p.networks_per_call, p.n_networks))
                keys = jax.vmap(lambda j: jax.random.fold_in(
                    runtime.seed_key(ctx.config.seed, j, RANDOM_FUNCTIONS_SALT), i))(js)
                rand.append(level_weights(boolean.random_functions(keys, n)))
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
    return out
