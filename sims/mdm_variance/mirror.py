"""The ``mirror`` experiment: complementary masks (MIRROR, Sec. 4.2)."""

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

# fold_in(key, 10 * model + pairing) keys the pair statistics (0, 1, 10, 11); the oracle's positive pairing
# takes the next free value.
ORACLE_PAIRS = 20

# ---------------------------------------------------------------------------------------------------
# mirror
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class MirrorParams(ChainParams):
    t_grid: tuple[float, ...] = param((0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), gt=0, le=1)
    n_data: int = param(512, ge=3, smoke=64)
    n_masks: int = param(16, ge=2, smoke=8)
    n_decomp: int = param(2048, ge=3, doc="sequences of the decomposition under each pairing", smoke=256)
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
    data = _sample(p, seed, salts.DATA_SALT, p.n_data, trans, init)
    marg = init @ th.chain_powers(trans, p.length)[:p.length]  # [L, V]
    logm = jnp.log(marg)
    cf = lambda x0, t, m: th.mdm_loss(logm[jnp.arange(p.length), x0], t, m)  # noqa: E731
    fns = {"oracle": th.oracle_mdm_loss_fn(trans, init, p.length), "context_free": cf}
    key = jax.random.fold_in(jax.random.key(seed), salts.MIRROR_SALT)
    out: dict[str, np.ndarray] = {"t_grid": np.asarray(p.t_grid)}
    out["closed_form"] = np.asarray([th.mirror_ratio_context_free(t) for t in p.t_grid])
    out["closed_rho"] = np.asarray([th.mirror_rho_context_free(t) if t < 1 else np.nan for t in p.t_grid])
    for mi, model in enumerate(runtime.tracked(PAIR_MODELS, "mirror", unit="model")):
        for pi, pair in enumerate(("mirror", "multisample2")):
            def piece(model=model, pair=pair, mi=mi, pi=pi):
                with runtime.planned_theory_jits(f"{model} {pair}"):
                    r = th.pair_stats(fns[model], data, jax.random.fold_in(key, 10 * mi + pi),
                                      np.asarray(p.t_grid), n_masks=p.n_masks, pairing=pair, mesh=ctx.mesh)
                return {k: np.asarray(v) for k, v in r.items()}
            r = ctx.parts.get(f"{model}_{pair}", piece)
            for k in ("ratio", "ratio_se", "rho", "rho_se", "A_single", "A_pair"):
                out[f"{model}_{pair}_{k}"] = r[k]
            out[f"{model}_{pair}_rows"] = _blocks(r["rows"], 1)

    def positive():
        with runtime.planned_theory_jits("oracle positive"):
            r = th.pair_stats(fns["oracle"], data, jax.random.fold_in(key, ORACLE_PAIRS), np.asarray(p.t_grid),
                              n_masks=p.n_masks, pairing="positive", mesh=ctx.mesh)
        return {**{f"oracle_positive_{k}": np.asarray(r[k]) for k in ("ratio", "ratio_se", "rho", "rho_se")},
                "oracle_positive_rows": _blocks(r["rows"], 1)}

    out.update(ctx.parts.get("oracle_positive", positive))
    pairings = ("single", "mirror", "multisample2")
    dec_data = _sample(p, seed, salts.DIRECT_DATA_SALT, p.n_decomp, trans, init)

    def dec():
        rs = []
        for pr in pairings:
            with runtime.planned_theory_jits(f"decomposition {pr}"):
                rs.append(th.decompose(fns["oracle"], dec_data, jax.random.fold_in(key, salts.GRADIENT_OFFSET), n_t=p.n_t,
                                       n_masks=p.n_decomp_masks, eps=p.eps, pairing=pr, mesh=ctx.mesh))
        return {**{f"dec_{k}": np.asarray([r[k] for r in rs]) for k in
                   ("A", "B", "C", "total", "A_se", "B_se", "C_se", "total_se")},
                "dec_stats": _blocks(np.stack([r["stats"] for r in rs]), 1)}

    out["pairings"] = np.asarray(pairings)
    out.update(ctx.parts.get("decomposition", dec))
    return out
