"""Leximax Copeland subject to Pareto optimality (``lcpo``): its axioms on random profiles with and
without a majority voter."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import social_choice as sc


@dataclasses.dataclass(frozen=True)
class LCPOParams:
    """Random profiles with no voter weight above one half (theory ``random_profile``), LCPO on each."""

    n_draws: int = param(150, ge=2, doc="draws per family", smoke=8)
    families: tuple[str, ...] = param(("generic", "compromise"))
    n_candidates: tuple[int, ...] = param((5, 8), ge=3, doc="generic family: candidates drawn in [lo, hi]")
    n_voters: tuple[int, ...] = param((3, 5), ge=3, doc="generic family: voters drawn in [lo, hi]")

    def __post_init__(self):
        bad = [f for f in self.families if f not in sc.PROFILE_FAMILIES]
        if bad or not self.families:
            raise ValueError(f"families must be a nonempty subset of {sc.PROFILE_FAMILIES}, got {self.families}")
        for name in ("n_candidates", "n_voters"):
            lo_hi = getattr(self, name)
            if len(lo_hi) != 2 or lo_hi[0] > lo_hi[1]:
                raise ValueError(f"{name} needs two entries lo <= hi, got {lo_hi}")


def _winner_after(X, V, w, i, v_new) -> int:
    V2 = np.array(V, np.float64)
    V2[i] = v_new
    return sc.lcpo_winner(X, V2, w)


def lcpo_draw(X, V, w) -> dict:
    """Everything the LCPO claims read about one profile: axioms of LCPO and of its ablation without the
    Pareto constraints, the majority and plurality tops, and winner monotonicity (each voter's ranking
    with the winner raised one position, where a linear voter has that ranking; lowered one position as
    the control)."""
    res = sc.lcpo(X, V, w)
    abl = sc.lcpo(X, V, w, pareto=False)
    ax = sc.check_ranking_axioms(X, V, w, res.ranking)
    axa = sc.check_ranking_axioms(X, V, w, abl.ranking)
    M = sc.majority_matrix(X, V, w)
    n = X.shape[0]
    wins = ((M > 0.5) & ~np.eye(n, dtype=bool)).sum(1)
    halves = np.isclose(M, 0.5) & ~np.eye(n, dtype=bool)
    cycle = not halves.any() and sorted(wins.tolist()) != list(range(n))
    share = np.zeros(n)
    for v, wi in zip(V, w):
        share[sc.voter_top(X, v)] += wi
    share /= share.sum()
    mt = sc.majority_top(X, V, w)
    top = res.ranking[0]
    raised = [(i, sc.raise_candidate(X, V[i], top)) for i in range(V.shape[0])]
    lowered = [(i, sc.lower_candidate(X, V[i], top)) for i in range(V.shape[0])]
    raised = [(i, v) for i, v in raised if v is not None]
    lowered = [(i, v) for i, v in lowered if v is not None]
    return {"n": n, "k": V.shape[0], "max_weight": float(w.max() / w.sum()),
            "po_violations": len(ax["po_violations"]), "pmc_applies": ax["pmc_applies"],
            "pmc_holds": ax["pmc_holds"], "cycle": cycle,
            "pmc_infeasible": ax["pmc_ranking"] is not None and not ax["pmc_applies"],
            "ablation_po_violations": len(axa["po_violations"]), "ablation_differs": abl.ranking != res.ranking,
            "ablation_pmc_holds": axa["pmc_holds"], "lcpo_top": top, "majority_top": -1 if mt is None else mt,
            "plurality_top": int(np.argmax(share)), "plurality_share": float(share.max()),
            "raises": len(raised), "raise_changed": sum(_winner_after(X, V, w, i, v) != top for i, v in raised),
            "lowers": len(lowered),
            "lower_changed": sum(_winner_after(X, V, w, i, v) != top for i, v in lowered)}


def run_lcpo(p: LCPOParams, ctx: cli.Context) -> dict:
    """Arrays, one row per draw (axis 0: draws, independent seeds; ``family [N]`` indexes ``families``):
    ``n, k [N]``; ``max_weight [N]`` (largest voter share, below 1/2 by construction);
    ``po_violations [N]`` (Pareto pairs LCPO reverses); ``pmc_applies, pmc_holds [N]``; ``cycle [N]``
    (the majority relation has no half-half pair and is not transitive); ``pmc_infeasible [N]`` (a
    majority ranking that no linear reward induces); ``ablation_po_violations, ablation_differs,
    ablation_pmc_holds [N]`` (leximax Copeland without the Pareto constraints); ``lcpo_top,
    majority_top [N]`` (-1: no candidate is first for voters above one half); ``plurality_top,
    plurality_share [N]`` (the largest first-place share); ``raises, raise_changed [N]`` (voters whose
    ranking with the LCPO winner raised one position is linear, and how many of those change the winner);
    ``lowers, lower_changed [N]`` (the same with the winner lowered one position: the control). Draw j of
    family f uses ``fold_in(seed_key(seed, j), f)``."""
    rng_n, rng_k = p.n_candidates, p.n_voters
    rows, fam = [], []
    for f, family in enumerate(p.families):
        def piece(f=f, family=family):
            out = []
            for j in runtime.tracked(range(p.n_draws), f"lcpo {family}", unit="draw"):
                key = jax.random.fold_in(runtime.seed_key(ctx.config.seed, j), f)
                kn, kk, kp = jax.random.split(key, 3)
                n = int(jax.random.randint(kn, (), rng_n[0], rng_n[1] + 1))
                k = int(jax.random.randint(kk, (), rng_k[0], rng_k[1] + 1))
                out.append(lcpo_draw(*sc.random_profile(kp, family, n, k)))
            return {key: np.asarray([r[key] for r in out]) for key in out[0]}

        r = ctx.parts.get(f"lcpo_{family}", piece)
        rows.append(r)
        fam.append(np.full(p.n_draws, f))
    out = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    out.update({"family": np.concatenate(fam), "families": np.asarray(p.families)})
    ctx.summary.update({"cycles": int(out["cycle"].sum()), "ablation_po_violating": int(
        (out["ablation_po_violations"] > 0).sum()), "majority_top_draws": int((out["majority_top"] >= 0).sum())})
    return out
