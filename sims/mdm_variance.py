"""Simulations behind the MDM-variance figures (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159).

Experiments (``paper_configs/mdm_variance_*.yaml``):

- ``decomposition``: A, B, C of the per-sample loss for the MDM and the ARM on a known Markov chain,
  with the exact denoiser (oracle) and with a chain estimated from a few samples (learned), against the
  flat i.i.d. variance; the exact NELBO identity per sequence; the same decomposition of the trace of the
  gradient covariance (transition logits) for the oracle MDM and ARM.
- ``pots``: per-bin E[l | t] and E[l^2 | t] of the oracle MDM, the P-POTS density, the paper's fitted
  EPR form, the variances under uniform / P-POTS / EPR sampling for several eps, a direct
  importance-sampling check, and the exact-in-t moments of fresh sequences (all 2^L masks enumerated).
- ``mirror``: MIRROR's A ratio and pair correlation against t (oracle and context-free), MultiSample-2 at
  equal cost, and the decomposition under each pairing.
- ``training``: small flax transformer MDMs on the Python standard library's source (characters, read at
  run time) from several seeds: standard (one mask), P-POTS, MIRROR and P-POTS + MIRROR (the methods
  Tables 1 and 2 rank), two independent masks (MultiSample-2, MIRROR's cost) and a thinned control:
  validation NELBO per seed and gradient variance.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax

from sims import cli, runtime
from sims.config import param
from sims.data import stdlib_text
from sims.models import TransformerParams
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


def _chain(p, seed: int):
    """(transition, initial) of the chain drawn from ``fold_in(key(seed), 0)``."""
    return th.random_chain(jax.random.fold_in(jax.random.key(seed), 0), p.vocab, p.concentration)


def _sample(p, seed: int, salt: int, n: int, trans, init):
    return th.sample_chain(jax.random.fold_in(jax.random.key(seed), salt), trans, init, n, p.length)


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


# ---------------------------------------------------------------------------------------------------
# decomposition
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DecompositionParams(ChainParams):
    n_data: int = param(2048, ge=3, doc="sequences of the nested estimate")
    n_t: int = param(4, ge=2)
    n_masks: int = param(4, ge=2)
    n_direct: int = param(40000, ge=3, doc="sequences of the flat i.i.d. estimate")
    n_fit: int = param(200, ge=1, doc="sequences the 'learned' chain is estimated from")
    n_exact: int = param(4, ge=1, doc="sequences checked by exact mask enumeration")
    n_grad: int = param(1024, ge=48, doc="sequences of the nested gradient estimate (16 blocks of >= 3)")
    n_grad_direct: int = param(16384, ge=32, doc="flat draws of the gradient's trace variance")


METHODS = ("mdm_oracle", "arm_oracle", "mdm_learned", "arm_learned")
GRAD_MODELS = ("mdm_oracle", "arm_oracle")


def _nested_values(value_fn, data, key, n_t: int, n_masks: int, eps: float, chunk: int = 256) -> np.ndarray:
    """``[n, n_t, n_masks, D]`` float64 values of a vector ``value_fn(x0, t, mask) -> [D]`` (a per-sample
    gradient) on a nested sample: per row of ``data [n, L]``, ``n_t`` rates t ~ U[eps, 1] and per (row, t)
    ``n_masks`` forward masks; rows ``chunk`` at a time, chunk c from ``fold_in(key, c)``."""
    per = jax.jit(jax.vmap(jax.vmap(jax.vmap(value_fn, (None, None, 0)), (None, 0, 0)), (0, 0, 0)))
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
    (seed ``fold_in(key(seed), 0)``); 'learned' = the chain re-estimated by smoothed counts from
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
    data = _sample(p, seed, 1, p.n_data, trans, init)
    direct = _sample(p, seed, 2, p.n_direct, trans, init)
    lt, li = th.estimate_chain(_sample(p, seed, 3, p.n_fit, trans, init), p.vocab)
    fns = {"mdm_oracle": th.oracle_mdm_loss_fn(trans, init, p.length), "arm_oracle": th.arm_loss_fn(trans, init),
           "mdm_learned": th.oracle_mdm_loss_fn(lt, li, p.length), "arm_learned": th.arm_loss_fn(lt, li)}
    rows = {k: [] for k in ("A", "B", "C", "total", "A_se", "B_se", "C_se", "total_se", "naive_B", "naive_C",
                            "naive_total", "naive_total_se", "direct_var", "direct_var_se", "direct_mean")}
    key = jax.random.fold_in(jax.random.key(seed), 10)
    stats, draws = [], []
    for i, name in enumerate(METHODS):
        def piece(name=name, i=i):
            d = th.decompose(fns[name], data, jax.random.fold_in(key, i), n_t=p.n_t, n_masks=p.n_masks,
                             eps=p.eps, mesh=ctx.mesh)
            f = th.direct_variance(fns[name], direct, jax.random.fold_in(key, 100 + i), eps=p.eps, mesh=ctx.mesh)
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
    exact = jax.jit(lambda x0, e: th.exact_mean_loss(orc, x0, e), static_argnums=1)
    exact_l = jax.jit(lambda x0: th.exact_mean_loss(lrn, x0, 0.0))
    xs = np.asarray(data[:p.n_exact])
    out["exact_mean_eps0"] = np.array([float(exact(x, 0.0)) for x in xs])
    out["exact_mean_eps"] = np.array([float(exact(x, p.eps)) for x in xs])
    out["exact_mean_learned_eps0"] = np.array([float(exact_l(x)) for x in xs])
    out["neglogp"] = np.array([-th.markov_oracle_logprob(trans, init, x) / p.length for x in xs])

    def gradient():
        nb, nd = p.n_grad // N_BLOCKS, p.n_grad_direct // N_BLOCKS
        gfns = {"mdm_oracle": th.oracle_mdm_grad_fn(trans, init, p.length), "arm_oracle": th.arm_grad_fn(trans, init)}
        kg = jax.random.fold_in(key, 500)
        nested, flat = [], []
        for i, name in enumerate(GRAD_MODELS):
            x = _nested_values(gfns[name], data[:nb * N_BLOCKS], jax.random.fold_in(kg, i), p.n_t, p.n_masks, p.eps)
            f = _nested_values(gfns[name], direct[:nd * N_BLOCKS], jax.random.fold_in(kg, 100 + i), 1, 1,
                               p.eps)[:, 0, 0]
            nested.append(np.stack([th.trace_nested_sums(b) for b in np.split(x, N_BLOCKS)]))
            flat.append(np.stack([th.trace_direct_sums(b) for b in np.split(f, N_BLOCKS)]))
        return {"grad_nested_sums": np.stack(nested, 1), "grad_direct_sums": np.stack(flat, 1),
                "grad_block_n": np.array([nb, nd])}

    out.update(ctx.parts.get("gradient", gradient))
    ctx.summary["A_share_mdm_oracle"] = float(out["A"][0] / out["total"][0])
    return out


# ---------------------------------------------------------------------------------------------------
# pots
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PotsParams(ChainParams):
    eps_list: tuple[float, ...] = param((1e-2, 1e-3, 1e-4), gt=0, lt=1)
    n_bins: int = param(48, ge=4)
    n_per_bin: int = param(2048, ge=2)
    n_pool: int = param(8192, ge=1, doc="chain sequences x0 is drawn from")
    n_check: int = param(40000, ge=3, doc="direct importance-sampling draws at eps_list[0]")
    epr_restarts: int = param(8, ge=1)
    n_exact_seqs: int = param(512, ge=16, doc="fresh sequences whose 2^L masks are enumerated (exact in t)")


def run_pots(p: PotsParams, ctx: cli.Context) -> dict:
    """P-POTS on the oracle MDM: the bin moments, the optimal density, the EPR fit, and the variances.

    Source: Sec. 4.1, ``paper_configs/mdm_variance_pots.yaml``. For each eps in ``p.eps_list``,
    bins :func:`theory.mdm_variance.t_bin_edges` (``p.n_bins``) and ``p.n_per_bin`` draws per bin (x0 from
    a pool of ``p.n_pool`` chain samples) give ``g_j`` and ``M2_j``; P-POTS is
    :func:`~theory.mdm_variance.pots_bin_probs`; variances by the exact bin formula
    (:func:`~theory.mdm_variance.binned_is_variance`). At ``eps_list[0]`` a second, independent moment
    estimate predicts the variance and ``p.n_check`` direct draws measure it (t ~ uniform and t ~ P-POTS),
    and the EPR form is fitted to the P-POTS density (KL, L-BFGS-B, ``p.epr_restarts`` starts).

    Returns (``e = len(p.eps_list)``, ``b = p.n_bins``):
      eps_list [e]; var_uniform, var_pots, var_epr [e]: bin-formula variances (EPR refitted per eps).
      edges [b + 1], g [b], g_se [b], m2 [b], m2_se [b], probs_pots [b], probs_epr [b]: at eps_list[0]; the
        densities as bin probabilities.
      density_pots [b], density_epr [b]: densities (probability / width) per bin.
      epr_params [7]: (a, r, b, q, A, kappa, m) at eps_list[0]; epr_kl []: its KL.
      pred_uniform, pred_pots [] : the bin formula with the independent moment estimate.
      meas_uniform, meas_uniform_se, meas_pots, meas_pots_se []: direct sample variances and SEs.
      mean_uniform, mean_uniform_se, mean_pots, mean_pots_se []: direct means (unbiasedness check).
      edges_all [e, b + 1]: the bins of each eps.
      moment_losses [G, e, b, n_per_bin // G]: the per-bin draws behind g, m2 (G = 16 blocks: seed axis).
      check_moment_losses [G, b, n_per_bin // G]: the independent moment draws behind pred_*.
      check_losses [G, 2, n_check // G]: the direct draws (uniform, P-POTS) behind meas_*, mean_*.
      exact_sums [G, n_exact_seqs // G, 2, L + 1]: per fresh sequence, the sums over all masks of each size
        of the masked log-loss and of its square (:func:`theory.mdm_variance.exact_mask_sums`), from which
        :func:`theory.mdm_variance.pots_exact` gives every variance exactly in t (G = 16 blocks: seed axis).
      exact_var_uniform, exact_var_optimal, exact_var_paper [e]: those variances on all the sequences, for
        uniform t, p* and the paper's density sqrt(g^2 + within-x0 v) (for the figure; claims use the blocks).
      exact_t [200], exact_g [200], exact_m2 [200]: E[l | t] and E[l^2 | t] exactly in t on a log grid.
      pair_losses [G, n_per_bin // G, b, 3]: at eps_list[0], per bin of ``edges`` and draw (x0 from the pool,
        t uniform in the bin, one U per token), the losses of mask {U < t}, of MIRROR's partner {U > 1 - t}
        and of an independent mask {U' < t} (MultiSample-2's partner): P-POTS with and without each pairing.
    """
    seed = ctx.config.seed
    trans, init = _chain(p, seed)
    pool = _sample(p, seed, 1, p.n_pool, trans, init)
    fn = th.oracle_mdm_loss_fn(trans, init, p.length)
    key = jax.random.fold_in(jax.random.key(seed), 20)
    out: dict[str, np.ndarray] = {"eps_list": np.asarray(p.eps_list)}
    vu, vp, ve, edges_all, draws = [], [], [], [], []
    for i, eps in enumerate(p.eps_list):
        def piece(eps=eps, i=i):
            edges = th.t_bin_edges(eps, p.n_bins)
            mom = th.binned_moments(fn, pool, jax.random.fold_in(key, i), edges, p.n_per_bin, mesh=ctx.mesh)
            probs = th.pots_bin_probs(edges, mom["m2"])
            mid = 0.5 * (edges[1:] + edges[:-1])
            params, kl = th.fit_epr(mid, probs / np.diff(edges), restarts=p.epr_restarts, seed=seed)
            pe = th.epr_bin_probs(edges, params)
            return {"edges": edges, **mom, "probs_pots": probs, "probs_epr": pe, "epr_params": np.asarray(params),
                    "epr_kl": np.asarray(kl),
                    "var_uniform": np.asarray(th.binned_is_variance(edges, np.diff(edges), mom["m2"], mom["g"])),
                    "var_pots": np.asarray(th.binned_optimal_variance(edges, mom["m2"], mom["g"])),
                    "var_epr": np.asarray(th.binned_is_variance(edges, pe, mom["m2"], mom["g"]))}
        r = ctx.parts.get(f"eps{i}", piece)
        vu.append(float(r["var_uniform"])), vp.append(float(r["var_pots"])), ve.append(float(r["var_epr"]))
        edges_all.append(r["edges"]), draws.append(r["losses"])
        if i == 0:
            first = r
    out.update(var_uniform=np.asarray(vu), var_pots=np.asarray(vp), var_epr=np.asarray(ve),
               edges_all=np.stack(edges_all), moment_losses=_blocks(np.stack(draws), 2))
    edges = first["edges"]
    w = np.diff(edges)
    for k in ("edges", "g", "g_se", "m2", "m2_se", "probs_pots", "probs_epr", "epr_params", "epr_kl"):
        out[k] = np.asarray(first[k])
    out["density_pots"], out["density_epr"] = first["probs_pots"] / w, first["probs_epr"] / w

    def check():
        eps = p.eps_list[0]
        val = th.binned_moments(fn, pool, jax.random.fold_in(key, 1000), edges, p.n_per_bin, mesh=ctx.mesh)
        xs = _sample(p, seed, 4, p.n_check, trans, init)
        res = {"pred_uniform": th.binned_is_variance(edges, w, val["m2"], val["g"]),
               "pred_pots": th.binned_is_variance(edges, first["probs_pots"], val["m2"], val["g"]),
               "check_moment_losses": _blocks(val["losses"], 1)}
        direct = []
        for name, sampler in (("uniform", None), ("pots", th.binned_sampler(edges, first["probs_pots"]))):
            d = th.direct_variance(fn, xs, jax.random.fold_in(key, 2000 + len(name)), eps=eps,
                                   t_sampler=sampler, mesh=ctx.mesh)
            res.update({f"meas_{name}": d["var"], f"meas_{name}_se": d["var_se"], f"mean_{name}": d["mean"],
                        f"mean_{name}_se": d["mean_se"]})
            direct.append(d["losses"])
        res["check_losses"] = _blocks(np.stack(direct), 1)
        return {k: np.asarray(v) for k, v in res.items()}

    out.update(ctx.parts.get("check", check))

    def exact():
        xs = _sample(p, seed, 5, p.n_exact_seqs, trans, init)
        pw = th.chain_powers(trans, p.length)
        one = lambda x: th.exact_mask_sums(  # noqa: E731
            lambda x0, m: th.oracle_token_logprobs(trans, init, x0, m, pw), x)
        sums = jax.jit(lambda xx: jax.lax.map(one, xx))(jnp.asarray(xs))
        return {"exact_sums": _blocks(np.asarray(sums, np.float64), 0)}

    out.update(ctx.parts.get("exact", exact))
    pooled = out["exact_sums"].reshape(-1, *out["exact_sums"].shape[2:])
    for i, eps in enumerate(p.eps_list):
        ex = th.pots_exact(pooled, eps)
        for k in ("uniform", "optimal", "paper"):
            out.setdefault(f"exact_var_{k}", np.zeros(len(p.eps_list)))[i] = ex[f"V_{k}"]

    def synergy():
        ls = _binned_pairs(fn, pool, jax.random.fold_in(key, 3000), edges, p.n_per_bin)
        return {"pair_losses": _blocks(np.moveaxis(ls, 1, 0), 0)}

    out.update(ctx.parts.get("synergy", synergy))
    out["exact_t"] = np.geomspace(p.eps_list[0], 1.0, 200)
    g, m2 = th.exact_t_moments(pooled, out["exact_t"])
    out["exact_g"], out["exact_m2"] = g.mean(0), m2.mean(0)
    ctx.summary["exact_pots_over_uniform"] = (out["exact_var_optimal"] / out["exact_var_uniform"]).tolist()
    ctx.summary["pots_over_uniform"] = (out["var_pots"] / out["var_uniform"]).tolist()
    return out


def _binned_pairs(loss_fn, data, key, edges, n_per_bin: int) -> np.ndarray:
    """``[b, n_per_bin, 3]`` float64 losses per bin of ``edges``: x0 uniform over the rows of ``data``, t
    uniform in the bin, one U per token; columns: mask {U < t}, MIRROR's partner {U > 1 - t}, an independent
    mask {U' < t}. Sec. 4.1-4.2 (P-POTS with MIRROR or MultiSample-2)."""
    data = jnp.asarray(data)
    e = jnp.asarray(np.asarray(edges, np.float64))
    nb, length = e.shape[0] - 1, data.shape[1]

    @jax.jit
    def fn():
        kx, kt, ku, kv = jax.random.split(key, 4)
        rows = jax.random.randint(kx, (nb, n_per_bin), 0, data.shape[0])
        t = e[:-1, None] + (e[1:] - e[:-1])[:, None] * jax.random.uniform(kt, (nb, n_per_bin))
        u = jax.random.uniform(ku, (nb, n_per_bin, length))
        v = jax.random.uniform(kv, (nb, n_per_bin, length))
        per = jax.vmap(jax.vmap(loss_fn))
        x, t3 = data[rows], t[..., None]
        return jnp.stack([per(x, t, u < t3), per(x, t, u > 1.0 - t3), per(x, t, v < t3)], -1)

    return np.asarray(fn(), np.float64)


# ---------------------------------------------------------------------------------------------------
# mirror
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MirrorParams(ChainParams):
    t_grid: tuple[float, ...] = param((0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), gt=0, le=1)
    n_data: int = param(512, ge=3)
    n_masks: int = param(16, ge=2)
    n_decomp: int = param(1024, ge=3, doc="sequences of the decomposition under each pairing")
    n_t: int = param(4, ge=2)
    n_decomp_masks: int = param(4, ge=2)


PAIR_MODELS = ("oracle", "context_free")


def run_mirror(p: MirrorParams, ctx: cli.Context) -> dict:
    """MIRROR against one mask and MultiSample-2, per t, and A, B, C under each pairing.

    Source: Sec. 4.2, ``paper_configs/mdm_variance_mirror.yaml``. Models: the exact chain
    denoiser (``oracle``) and a context-free one (each token's log-probability is its marginal,
    whatever the mask). Per t in ``p.t_grid``: :func:`theory.mdm_variance.pair_stats` on ``p.n_data``
    sequences x ``p.n_masks`` pairs.

    Returns (``n = len(p.t_grid)``; ``{model}`` in oracle, context_free; ``{pair}`` in mirror,
    multisample2):
      t_grid [n]; closed_form [n]: :func:`~theory.mdm_variance.mirror_ratio_context_free`;
      closed_rho [n]: the context-free correlation (NaN at t = 1).
      {model}_{pair}_ratio, _ratio_se, _rho, _rho_se, _A_single, _A_pair [n].
      oracle_positive_ratio, _ratio_se, _rho, _rho_se [n]: the oracle under a positively correlated pair
        (mask 2 reuses each token's U with probability ``theory.mdm_variance.POSITIVE_SHARE``): the case
        just outside MIRROR's rho <= 0 that the claim's test must reject.
      pairings [3]: single, mirror, multisample2; dec_A, dec_B, dec_C, dec_total and ``_se`` [3]: the
        oracle's decomposition under each pairing (t ~ U[eps, 1]).
      {model}_{pair}_rows, oracle_positive_rows [G, n, n_data // G, 3]: the per-sequence values behind
        the pair statistics (:func:`theory.mdm_variance.pair_summary`), in G = 16 blocks (seed axis).
      dec_stats [G, 3, n_decomp // G, 3]: per-sequence statistics behind dec_* (seed axis).
    """
    seed = ctx.config.seed
    trans, init = _chain(p, seed)
    data = _sample(p, seed, 1, p.n_data, trans, init)
    marg = init @ th.chain_powers(trans, p.length)[:p.length]  # [L, V]
    logm = jnp.log(marg)
    cf = lambda x0, t, m: th.mdm_loss(logm[jnp.arange(p.length), x0], t, m)  # noqa: E731
    fns = {"oracle": th.oracle_mdm_loss_fn(trans, init, p.length), "context_free": cf}
    key = jax.random.fold_in(jax.random.key(seed), 30)
    out: dict[str, np.ndarray] = {"t_grid": np.asarray(p.t_grid)}
    out["closed_form"] = np.asarray([th.mirror_ratio_context_free(t) for t in p.t_grid])
    out["closed_rho"] = np.asarray([th.mirror_rho_context_free(t) if t < 1 else np.nan for t in p.t_grid])
    for mi, model in enumerate(PAIR_MODELS):
        for pi, pair in enumerate(("mirror", "multisample2")):
            def piece(model=model, pair=pair, mi=mi, pi=pi):
                r = th.pair_stats(fns[model], data, jax.random.fold_in(key, 10 * mi + pi), np.asarray(p.t_grid),
                                  n_masks=p.n_masks, pairing=pair, mesh=ctx.mesh)
                return {k: np.asarray(v) for k, v in r.items()}
            r = ctx.parts.get(f"{model}_{pair}", piece)
            for k in ("ratio", "ratio_se", "rho", "rho_se", "A_single", "A_pair"):
                out[f"{model}_{pair}_{k}"] = r[k]
            out[f"{model}_{pair}_rows"] = _blocks(r["rows"], 1)

    def positive():
        r = th.pair_stats(fns["oracle"], data, jax.random.fold_in(key, 20), np.asarray(p.t_grid),
                          n_masks=p.n_masks, pairing="positive", mesh=ctx.mesh)
        return {**{f"oracle_positive_{k}": np.asarray(r[k]) for k in ("ratio", "ratio_se", "rho", "rho_se")},
                "oracle_positive_rows": _blocks(r["rows"], 1)}

    out.update(ctx.parts.get("oracle_positive", positive))
    pairings = ("single", "mirror", "multisample2")
    dec_data = _sample(p, seed, 2, p.n_decomp, trans, init)

    def dec():
        rs = [th.decompose(fns["oracle"], dec_data, jax.random.fold_in(key, 500), n_t=p.n_t,
                           n_masks=p.n_decomp_masks, eps=p.eps, pairing=pr, mesh=ctx.mesh) for pr in pairings]
        return {**{f"dec_{k}": np.asarray([r[k] for r in rs]) for k in
                   ("A", "B", "C", "total", "A_se", "B_se", "C_se", "total_se")},
                "dec_stats": _blocks(np.stack([r["stats"] for r in rs]), 1)}

    out["pairings"] = np.asarray(pairings)
    out.update(ctx.parts.get("decomposition", dec))
    return out


# ---------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class TrainingParams(TransformerParams):
    seq_len: int = param(32, ge=4, doc="tokens per training window")
    d_model: int = param(32, ge=8)
    n_heads: int = param(2, ge=1)
    n_chars: int = param(400_000, ge=10_000, doc="characters of stdlib source to read")
    val_frac: float = param(0.1, gt=0, lt=0.5)
    batch: int = param(16, ge=1)
    steps: int = param(400, ge=2)
    lr: float = param(3e-3, gt=0)
    eps: float = param(1e-3, gt=0, lt=1)
    n_seeds: int = param(4, ge=2, le=runtime.MAX_SEEDS - 1)
    n_evals: int = param(4, ge=1)
    val_windows: int = param(128, ge=3)
    val_draws: int = param(8, ge=1, doc="fixed (t, mask) draws per validation window")
    n_bins: int = param(16, ge=4, doc="P-POTS bins")
    n_per_bin: int = param(256, ge=2)
    grad_samples: int = param(64, ge=3, doc="single-sample gradients per seed for the gradient variance")


MASK = 256  # the mask token; bytes are 0..255


def _model_loss_fn(model, params) -> th.LossFn:
    """``loss_fn(x0 [L], t, mask [L])`` of the denoiser with ``params`` (the MDM loss, float32 logits)."""
    def loss_fn(x0, t, mask):
        return th.mdm_loss(_model_token_logp(model, params, x0, mask), t, mask)
    return loss_fn


def _model_token_logp(model, params, x0, mask) -> jax.Array:
    """``log p(x0_i | x0 masked by mask)`` per position ``[L]`` (float32 logits)."""
    logits = model.apply(params, jnp.where(mask, MASK, x0)[None])[0]
    return jnp.take_along_axis(jax.nn.log_softmax(logits), x0[:, None], 1)[:, 0]


# The trained estimators (Sec. 4.1, 4.2, 5; Table 1 and Table 2 rank the first four):
#   standard: t ~ U[eps, 1], one mask; pots: t from the P-POTS density (weight u / p(t)), one mask;
#   mirror: t ~ U[eps, 1], MIRROR's complementary pair (two forward passes); pots_mirror: both;
#   multisample2: t ~ U[eps, 1] and two independent masks averaged, two forward passes: the compute-matched
#     baseline of MIRROR's pair (at equal cost the fair baseline draws the second mask independently);
#   thinned: the standard estimator with each masked token's term kept with probability 1/2 and doubled
#     (unbiased, one forward pass, its variance above the standard one's by the added thinning noise): the
#     case just outside "lowers the variance" that the ordering and variance checks must reject.
# Every method sees the same windows, the same first uniform per token and (uniform-t methods) the same t.
METHODS_TRAIN = ("standard", "pots", "mirror", "pots_mirror", "multisample2", "thinned")
# Estimators whose one-sample gradient variance is measured: all of them.
GRAD_METHODS = METHODS_TRAIN


def run_training(p: TrainingParams, ctx: cli.Context) -> dict:
    """Seeds x {standard, P-POTS, MIRROR, P-POTS + MIRROR, MultiSample-2, thinned} small MDMs on stdlib
    source; validation NELBO and gradient variance.

    Source: Sec. 4.1, 4.2 and 5 (the methods Table 1 and Table 2 rank, at CPU scale),
    ``paper_configs/mdm_variance_training.yaml``. Data: :func:`stdlib_text`, the last ``p.val_frac`` held
    out; random windows of ``p.seq_len`` characters. AdamW (lr ``p.lr``, clip 1.0, linear decay to 0),
    batch ``p.batch`` windows, ``p.steps`` steps; seed i starts from the same init and sees the same
    windows under every method (paired). The estimators (:data:`METHODS_TRAIN`): ``standard``: t ~ U[eps,
    1], one mask. ``pots``: t from the P-POTS bin density (weights u/p(t)), one mask. ``mirror``: t ~
    U[eps, 1], MIRROR's complementary pair (two forward passes). ``pots_mirror``: P-POTS t and MIRROR's
    pair. ``multisample2``: t ~ U[eps, 1], the mean over two independent masks (two forward passes,
    MIRROR's cost). ``thinned``: one mask, each masked token's term kept with probability 1/2 and doubled
    (the control: unbiased, more variance). The P-POTS density is estimated once, before its runs (as the
    paper fits it once from the model it fine-tunes), from the final model of one more standard run, seed
    index ``p.n_seeds`` (the calibration seed), disjoint from the seeds 0..n_seeds-1 that are compared.
    Validation: the MDM loss on ``p.val_windows`` windows with ``p.val_draws`` fixed (t, mask) draws each
    (common random numbers across runs).

    Returns (``s = p.n_seeds``, ``e = p.n_evals``, ``b = p.n_bins``, ``k = len(METHODS_TRAIN)`` = 6):
      methods [k]; steps [e + 1]: step of each evaluation (0 first).
      {method}_val_loss [s, e + 1]: validation MDM loss (nats per character).
      grad_var_{m} [s] for m in GRAD_METHODS (= METHODS_TRAIN): trace of the
        covariance of the one-sample gradient estimator, at the final standard model of each seed (same
        parameters and the same (x0, t, first mask) draws across methods: paired, common random numbers).
      loss_var_{m} [s]: variance of the one-sample loss value, same setting.
      pots_edges [b + 1], pots_probs [b], pots_m2 [b]: the P-POTS density used (calibration seed).
      learned_A, learned_B, learned_C, learned_total and ``_se`` []: decomposition of the calibration
        seed's final standard model's loss on the validation windows.
    """
    seed = ctx.config.seed
    text = stdlib_text(p.n_chars)
    cut = int(len(text) * (1 - p.val_frac))
    train = jnp.asarray(text[:cut].astype(np.int32))
    val = text[cut:].astype(np.int32)
    starts = np.linspace(0, val.size - p.seq_len - 1, p.val_windows).astype(np.int64)
    val_toks = jnp.asarray(np.stack([val[s:s + p.seq_len] for s in starts]))
    model = p.model(vocab=MASK + 1, n_out=256, causal=False)  # bytes + the mask token in, byte logits out
    opt = optax.chain(optax.clip_by_global_norm(1.0),
                      optax.adamw(optax.linear_schedule(p.lr, 0.0, p.steps), b1=0.9, b2=0.95, weight_decay=0.0))
    L = p.seq_len
    vkey = jax.random.fold_in(jax.random.key(seed), 77)
    vt = th.uniform_t(vkey, (p.val_windows, p.val_draws), p.eps)
    vm = jax.random.uniform(jax.random.fold_in(vkey, 1), (p.val_windows, p.val_draws, L)) < vt[..., None]

    def windows(key, n):
        s = jax.random.randint(key, (n,), 0, train.shape[0] - L)
        return jax.vmap(lambda a: jax.lax.dynamic_slice(train, (a,), (L,)))(s)

    def val_loss(params):
        fn = _model_loss_fn(model, params)
        return jnp.mean(jax.vmap(lambda x, ts, ms: jax.vmap(lambda t, m: fn(x, t, m))(ts, ms))(val_toks, vt, vm))

    def estimator(params, key, method, sampler):
        """One-sample loss estimate of ``method`` (one of METHODS_TRAIN) on one random window."""
        kx, kt, km = jax.random.split(key, 3)
        x0 = windows(kx, 1)[0]
        fn = _model_loss_fn(model, params)
        if method in ("pots", "pots_mirror"):
            t, w = sampler(kt, ())
        else:
            t, w = th.uniform_t(kt, (), p.eps), 1.0
        if method in ("mirror", "pots_mirror"):
            m1, m2 = th.mirror_masks(km, t, L)
            return w * 0.5 * (fn(x0, t, m1) + fn(x0, t, m2))
        m = jax.random.uniform(km, (L,)) < t
        if method == "multisample2":
            m2 = jax.random.uniform(jax.random.fold_in(km, 2), (L,)) < t
            return 0.5 * (fn(x0, t, m) + fn(x0, t, m2))
        if method == "thinned":
            keep = jax.random.uniform(jax.random.fold_in(km, 1), (L,)) < 0.5
            return 2.0 * th.mdm_loss(_model_token_logp(model, params, x0, m), t, m & keep)
        return w * fn(x0, t, m)

    def train_runs(method, sampler, n):
        def one(i):
            k = runtime.seed_key(seed, i)
            params = model.init(jax.random.fold_in(k, 0), jnp.zeros((1, L), jnp.int32))
            state = (params, opt.init(params))

            def step(st, s):
                params, os = st
                ks = jax.random.split(jax.random.fold_in(jax.random.fold_in(k, 1), s), p.batch)
                loss = lambda pr: jnp.mean(jax.vmap(lambda kk: estimator(pr, kk, method, sampler))(ks))  # noqa: E731
                g = jax.grad(loss)(params)
                upd, os = opt.update(g, os, params)
                return (optax.apply_updates(params, upd), os), None

            marks = np.linspace(0, p.steps, p.n_evals + 1).astype(int)
            vals = [val_loss(params)]
            for a, b in zip(marks[:-1], marks[1:]):
                state, _ = jax.lax.scan(step, state, jnp.arange(a, b))
                vals.append(val_loss(state[0]))
            return state[0], jnp.stack(vals)

        idx, _ = runtime.seed_indices(n, ctx.mesh)
        params, vals = jax.jit(jax.vmap(one))(idx)
        return params, np.asarray(runtime.to_host(vals))[:n]

    def grad_var(params, key, method, sampler):
        def one(k):
            return jax.value_and_grad(lambda pr: estimator(pr, k, method, sampler))(params)
        ls, gs = jax.vmap(one)(jax.random.split(key, p.grad_samples))
        flat = jnp.concatenate([g.reshape(p.grad_samples, -1) for g in jax.tree.leaves(gs)], 1)
        dev = flat - flat.mean(0)
        return jnp.sum(dev * dev) / (p.grad_samples - 1), jnp.var(ls, ddof=1)

    std_params, std_vals = train_runs("standard", None, p.n_seeds + 1)  # the last: calibration seed
    p0 = jax.tree.map(lambda a: a[p.n_seeds], std_params)
    std_params, std_vals = jax.tree.map(lambda a: a[:p.n_seeds], std_params), std_vals[:p.n_seeds]
    edges = th.t_bin_edges(p.eps, p.n_bins)
    fn0 = _model_loss_fn(model, p0)
    tr_windows = windows(jax.random.fold_in(jax.random.key(seed), 88), 1024)
    mom = th.binned_moments(fn0, tr_windows, jax.random.fold_in(jax.random.key(seed), 89), edges, p.n_per_bin)
    probs = th.pots_bin_probs(edges, mom["m2"])
    sampler = th.binned_sampler(edges, probs)
    vals = {"standard": std_vals}
    for m in METHODS_TRAIN[1:]:
        vals[m] = train_runs(m, sampler, p.n_seeds)[1]
    gkey = jax.random.fold_in(jax.random.key(seed), 99)
    gv = {m: jax.jit(jax.vmap(lambda pr, i, m=m: grad_var(pr, jax.random.fold_in(gkey, i), m, sampler)))(
        std_params, jnp.arange(p.n_seeds)) for m in GRAD_METHODS}
    dec = th.decompose(fn0, np.asarray(val_toks), jax.random.fold_in(jax.random.key(seed), 101), n_t=4,
                       n_masks=4, eps=p.eps)
    out = {"methods": np.asarray(METHODS_TRAIN), "steps": np.linspace(0, p.steps, p.n_evals + 1).astype(int),
           **{f"{m}_val_loss": vals[m] for m in METHODS_TRAIN},
           "pots_edges": edges, "pots_probs": probs, "pots_m2": mom["m2"]}
    for m in GRAD_METHODS:
        out[f"grad_var_{m}"] = np.asarray(gv[m][0])
        out[f"loss_var_{m}"] = np.asarray(gv[m][1])
    for k in ("A", "B", "C", "total"):
        out[f"learned_{k}"], out[f"learned_{k}_se"] = np.asarray(dec[k]), np.asarray(dec[f"{k}_se"])
    ctx.summary["final_val_sd"] = {m: float(np.std(out[f"{m}_val_loss"][:, -1], ddof=1)) for m in METHODS_TRAIN}
    return out


EXPERIMENTS = {
    "decomposition": cli.Experiment(DecompositionParams, run_decomposition,
                                    seed_axes={"nested_stats": 0, "direct_losses": 0, "grad_nested_sums": 0,
                                               "grad_direct_sums": 0}),
    "pots": cli.Experiment(PotsParams, run_pots, seed_axes={
        "moment_losses": 0, "check_moment_losses": 0, "check_losses": 0, "exact_sums": 0, "pair_losses": 0}),
    "mirror": cli.Experiment(MirrorParams, run_mirror, seed_axes={
        **{f"{m}_{pr}_rows": 0 for m in PAIR_MODELS for pr in ("mirror", "multisample2")},
        "oracle_positive_rows": 0, "dec_stats": 0}),
    "training": cli.Experiment(TrainingParams, run_training, seed_axes={
        **{f"{m}_val_loss": 0 for m in METHODS_TRAIN}, **{f"grad_var_{m}": 0 for m in GRAD_METHODS},
        **{f"loss_var_{m}": 0 for m in GRAD_METHODS}}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
