"""The ``pots`` experiment: P-POTS against uniform t on the chain (Sec. 4.1)."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.mdm_variance import chain as salts
from sims.mdm_variance.chain import _blocks, _chain, _sample, ChainParams
from theory import mdm_variance as th

# ---------------------------------------------------------------------------------------------------
# pots
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class PotsParams(ChainParams):
    eps_list: tuple[float, ...] = param((1e-2, 1e-3, 1e-4), gt=0, lt=1)
    n_bins: int = param(48, ge=4)
    n_per_bin: int = param(2048, ge=2, smoke=64)
    n_pool: int = param(8192, ge=1, doc="chain sequences x0 is drawn from")
    n_check: int = param(40000, ge=3, doc="direct importance-sampling draws at eps_list[0]", smoke=4096)
    epr_restarts: int = param(8, ge=1, smoke=2)
    n_exact_seqs: int = param(512, ge=16, doc="fresh sequences whose 2^L masks are enumerated (exact in t)",
                              smoke=32)


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
    pool = _sample(p, seed, salts.DATA_SALT, p.n_pool, trans, init)
    fn = th.oracle_mdm_loss_fn(trans, init, p.length)
    key = jax.random.fold_in(jax.random.key(seed), salts.POTS_SALT)
    out: dict[str, np.ndarray] = {"eps_list": np.asarray(p.eps_list)}
    vu, vp, ve, edges_all, draws = [], [], [], [], []
    for i, eps in enumerate(runtime.tracked(p.eps_list, "pots", unit="eps")):
        def piece(eps=eps, i=i):
            edges = th.t_bin_edges(eps, p.n_bins)
            with runtime.planned_theory_jits(f"eps{i}"):
                mom = th.binned_moments(fn, pool, jax.random.fold_in(key, i), edges, p.n_per_bin,
                                        mesh=ctx.mesh)
            if runtime.is_planning():  # the planner's zero draws give the density 0/0: fit a flat one instead
                mom = {**th.binned_summary(np.ones_like(mom["losses"])), "losses": mom["losses"]}
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
        with runtime.planned_theory_jits("check"):
            val = th.binned_moments(fn, pool, jax.random.fold_in(key, salts.VALIDATION_OFFSET), edges, p.n_per_bin,
                                    mesh=ctx.mesh)
        xs = _sample(p, seed, salts.CHECK_DATA_SALT, p.n_check, trans, init)
        res = {"pred_uniform": th.binned_is_variance(edges, w, val["m2"], val["g"]),
               "pred_pots": th.binned_is_variance(edges, first["probs_pots"], val["m2"], val["g"]),
               "check_moment_losses": _blocks(val["losses"], 1)}
        direct = []
        for name, sampler in (("uniform", None), ("pots", th.binned_sampler(edges, first["probs_pots"]))):
            with runtime.planned_theory_jits(f"direct {name}"):
                d = th.direct_variance(fn, xs, jax.random.fold_in(key, salts.CHECK_OFFSET + len(name)), eps=eps,
                                       t_sampler=sampler, mesh=ctx.mesh)
            res.update({f"meas_{name}": d["var"], f"meas_{name}_se": d["var_se"], f"mean_{name}": d["mean"],
                        f"mean_{name}_se": d["mean_se"]})
            direct.append(d["losses"])
        res["check_losses"] = _blocks(np.stack(direct), 1)
        return {k: np.asarray(v) for k, v in res.items()}

    out.update(ctx.parts.get("check", check))

    def exact():
        xs = _sample(p, seed, salts.EXACT_DATA_SALT, p.n_exact_seqs, trans, init)
        pw = th.chain_powers(trans, p.length)
        one = lambda x: th.exact_mask_sums(  # noqa: E731
            lambda x0, m: th.oracle_token_logprobs(trans, init, x0, m, pw), x)
        sums = runtime.jit(lambda xx: jax.lax.map(one, xx), name="exact_mask_sums")(jnp.asarray(xs))
        return {"exact_sums": _blocks(np.asarray(sums, np.float64), 0)}

    out.update(ctx.parts.get("exact", exact))
    pooled = out["exact_sums"].reshape(-1, *out["exact_sums"].shape[2:])
    for i, eps in enumerate(p.eps_list):
        ex = th.pots_exact(pooled, eps)
        for k in ("uniform", "optimal", "paper"):
            out.setdefault(f"exact_var_{k}", np.zeros(len(p.eps_list)))[i] = ex[f"V_{k}"]

    def synergy():
        ls = _binned_pairs(fn, pool, jax.random.fold_in(key, salts.PAIRS_OFFSET), edges, p.n_per_bin)
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

    @runtime.jit(name="binned_pairs")
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
