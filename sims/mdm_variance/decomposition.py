"""The ``decomposition`` experiment: A + B + C against the directly measured variance (Sec. 3), for MDM and ARM, oracle and learned models."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.mdm_variance import chain as salts
from sims.mdm_variance.chain import _blocks, _chain, _sample, ChainParams, N_BLOCKS
from theory import mdm_variance as th

# ---------------------------------------------------------------------------------------------------
# decomposition
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DecompositionParams(ChainParams):
    n_data: int = param(8192, ge=3, doc="sequences of the nested estimate", smoke=512)
    n_t: int = param(4, ge=2)
    n_masks: int = param(4, ge=2)
    n_direct: int = param(160_000, ge=3, doc="sequences of the flat i.i.d. estimate", smoke=4096)
    n_fit: int = param(200, ge=1, doc="sequences the 'learned' chain is estimated from")
    n_exact: int = param(4, ge=1, doc="sequences checked by exact mask enumeration", smoke=2)
    n_grad: int = param(1024, ge=48, doc="sequences of the nested gradient estimate (16 blocks of >= 3)",
                        smoke=64)
    n_grad_direct: int = param(16384, ge=32, doc="flat draws of the gradient's trace variance", smoke=256)


METHODS = ("mdm_oracle", "arm_oracle", "mdm_learned", "arm_learned")
GRAD_MODELS = ("mdm_oracle", "arm_oracle")


def _nested_values(value_fn, data, key, n_t: int, n_masks: int, eps: float, chunk: int = 256,
                   name: str = "nested_values") -> np.ndarray:
    """``[n, n_t, n_masks, D]`` float64 values of a vector ``value_fn(x0, t, mask) -> [D]`` (a per-sample
    gradient) on a nested sample: per row of ``data [n, L]``, ``n_t`` rates t ~ U[eps, 1] and per (row, t)
    ``n_masks`` forward masks; rows ``chunk`` at a time, chunk c from ``fold_in(key, c)``. ``name``: its
    label in the paper-scale plan."""
    per = runtime.jit(jax.vmap(jax.vmap(jax.vmap(value_fn, (None, None, 0)), (None, 0, 0)), (0, 0, 0)),
                      name=name)
    data = np.asarray(data)
    out = []
    for c, s in enumerate(range(0, data.shape[0], chunk)):
        xs = jnp.asarray(data[s:s + chunk])
        kt, km = jax.random.split(jax.random.fold_in(key, c))
        t = th.uniform_t(kt, (xs.shape[0], n_t), eps)
        u = jax.random.uniform(km, (xs.shape[0], n_t, n_masks, data.shape[1]))
        out.append(np.asarray(per(xs, t, u < t[:, :, None, None]), np.float64))
    return np.concatenate(out, 0)


def run_decomposition(p: DecompositionParams, ctx: cli.Context) -> dict:
    """A + B + C against the flat variance, MDM vs ARM, oracle vs learned.

    Source: Sec. 3 (decomposition, ARM comparison, oracle corollary),
    ``paper_configs/mdm_variance_decomposition.yaml``. Data: :func:`theory.mdm_variance.random_chain`
    (seed ``fold_in(key(seed), CHAIN_SALT)``); 'learned' = the chain re-estimated by smoothed counts from
    ``p.n_fit`` samples, its exact denoiser / ARM applied to true-chain data. t ~ U[eps, 1].

    Returns (``m = len(METHODS)`` = 4, in the order mdm_oracle, arm_oracle, mdm_learned, arm_learned):
      methods [m]: names.
      A, B, C, total [m]: unbiased nested estimates (``p.n_data`` x ``p.n_t`` x ``p.n_masks``).
      A_se, B_se, C_se, total_se [m]: jackknife standard errors over sequences.
      naive_B, naive_C, naive_total, naive_total_se [m]: the plug-in (biased) estimates.
      direct_var, direct_var_se, direct_mean [m]: flat i.i.d. variance (``p.n_direct`` fresh sequences,
        one (t, mask) each), its SE, and the mean loss.
      nested_stats [G, m, n_data // G, 3]: per-sequence statistics of the nested sample
        (:func:`theory.mdm_variance.nested_stats`), in G = 16 blocks of sequences (the seed axis).
      direct_losses [G, m, n_direct // G]: the flat draws, in blocks (the seed axis).
      exact_mean_eps0 [n_exact]: exact ``E_{t ~ U[0,1], mask}[l | x0]`` of the oracle MDM (enumeration).
      exact_mean_eps [n_exact]: the same with t ~ U[eps, 1].
      exact_mean_learned_eps0 [n_exact]: the learned MDM's exact mean at eps = 0.
      neglogp [n_exact]: ``-log p(x0) / L`` under the true chain.
      grad_nested_sums [G, 2, V * V, 4]: for GRAD_MODELS (mdm_oracle, arm_oracle), the gradient of the loss
        with respect to the transition logits (:func:`theory.mdm_variance.oracle_mdm_grad_fn`) on a nested
        sample of ``p.n_grad`` sequences x ``p.n_t`` x ``p.n_masks``, as per-block
        :func:`theory.mdm_variance.trace_nested_sums` (G = 16 blocks of sequences: the seed axis).
      grad_direct_sums [G, 2, V * V + 1]: ``p.n_grad_direct`` flat gradient draws (fresh sequences, one
        (t, mask) each) as per-block :func:`theory.mdm_variance.trace_direct_sums` (the seed axis).
      grad_block_n [2]: sequences per block of the nested and of the flat gradient sample.
    """
    if p.n_grad > p.n_data or p.n_grad_direct > p.n_direct:
        raise ValueError(f"n_grad ({p.n_grad}) must be <= n_data ({p.n_data}) and n_grad_direct "
                         f"({p.n_grad_direct}) <= n_direct ({p.n_direct}): the gradients reuse those sequences")
    seed = ctx.config.seed
    trans, init = _chain(p, seed)
    data = _sample(p, seed, salts.DATA_SALT, p.n_data, trans, init)
    direct = _sample(p, seed, salts.DIRECT_DATA_SALT, p.n_direct, trans, init)
    lt, li = th.estimate_chain(_sample(p, seed, salts.FIT_DATA_SALT, p.n_fit, trans, init), p.vocab)
    fns = {"mdm_oracle": th.oracle_mdm_loss_fn(trans, init, p.length), "arm_oracle": th.arm_loss_fn(trans, init),
           "mdm_learned": th.oracle_mdm_loss_fn(lt, li, p.length), "arm_learned": th.arm_loss_fn(lt, li)}
    rows = {k: [] for k in ("A", "B", "C", "total", "A_se", "B_se", "C_se", "total_se", "naive_B", "naive_C",
                            "naive_total", "naive_total_se", "direct_var", "direct_var_se", "direct_mean")}
    key = jax.random.fold_in(jax.random.key(seed), salts.DECOMPOSITION_SALT)
    stats, draws = [], []
    for i, name in enumerate(runtime.tracked(METHODS, "decomposition", unit="estimator")):
        def piece(name=name, i=i):
            with runtime.planned_theory_jits(name):
                d = th.decompose(fns[name], data, jax.random.fold_in(key, i), n_t=p.n_t, n_masks=p.n_masks,
                                 eps=p.eps, mesh=ctx.mesh)
                f = th.direct_variance(fns[name], direct, jax.random.fold_in(key, salts.DIRECT_OFFSET + i), eps=p.eps,
                                       mesh=ctx.mesh)
            return {**{k: np.asarray(d[k]) for k in rows if k in d},
                    "direct_var": np.asarray(f["var"]), "direct_var_se": np.asarray(f["var_se"]),
                    "direct_mean": np.asarray(f["mean"]), "stats": d["stats"], "direct_losses": f["losses"]}
        r = ctx.parts.get(name, piece)
        for k in rows:
            rows[k].append(float(r[k]))
        stats.append(r["stats"]), draws.append(r["direct_losses"])
    out = {"methods": np.asarray(METHODS), **{k: np.asarray(v) for k, v in rows.items()},
           "nested_stats": _blocks(np.stack(stats), 1), "direct_losses": _blocks(np.stack(draws), 1)}
    pw, lpw = th.chain_powers(trans, p.length), th.chain_powers(lt, p.length)
    orc = lambda x0, m: th.oracle_token_logprobs(trans, init, x0, m, pw)  # noqa: E731
    lrn = lambda x0, m: th.oracle_token_logprobs(lt, li, x0, m, lpw)  # noqa: E731
    exact = runtime.jit(lambda x0, e: th.exact_mean_loss(orc, x0, e), static_argnums=1,
                        name="exact_mean_loss")
    exact_l = runtime.jit(lambda x0: th.exact_mean_loss(lrn, x0, 0.0), name="exact_mean_loss_learned")
    xs = np.asarray(data[:p.n_exact])
    out["exact_mean_eps0"] = np.array([float(exact(x, 0.0)) for x in xs])
    out["exact_mean_eps"] = np.array([float(exact(x, p.eps)) for x in xs])
    out["exact_mean_learned_eps0"] = np.array([float(exact_l(x)) for x in xs])
    out["neglogp"] = np.array([-th.markov_oracle_logprob(trans, init, x) / p.length for x in xs])

    def gradient():
        nb, nd = p.n_grad // N_BLOCKS, p.n_grad_direct // N_BLOCKS
        gfns = {"mdm_oracle": th.oracle_mdm_grad_fn(trans, init, p.length), "arm_oracle": th.arm_grad_fn(trans, init)}
        kg = jax.random.fold_in(key, salts.GRADIENT_OFFSET)
        nested, flat = [], []
        for i, name in enumerate(GRAD_MODELS):
            x = _nested_values(gfns[name], data[:nb * N_BLOCKS], jax.random.fold_in(kg, i), p.n_t, p.n_masks,
                               p.eps, name=f"{name} gradient")
            f = _nested_values(gfns[name], direct[:nd * N_BLOCKS], jax.random.fold_in(kg, salts.DIRECT_OFFSET + i), 1, 1,
                               p.eps, name=f"{name} gradient")[:, 0, 0]
            nested.append(np.stack([th.trace_nested_sums(b) for b in np.split(x, N_BLOCKS)]))
            flat.append(np.stack([th.trace_direct_sums(b) for b in np.split(f, N_BLOCKS)]))
        return {"grad_nested_sums": np.stack(nested, 1), "grad_direct_sums": np.stack(flat, 1),
                "grad_block_n": np.array([nb, nd])}

    out.update(ctx.parts.get("gradient", gradient))
    ctx.summary["A_share_mdm_oracle"] = float(out["A"][0] / out["total"][0])
    return out
