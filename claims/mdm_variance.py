"""Claims of "Bringing stability to diffusion: decomposing and reducing variance of training masked
diffusion models" (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159), checked with
``theory.mdm_variance`` and the ``mdm_variance_*`` figure results.

Monte Carlo decisions use 3 standard errors (jackknife over independent sequences or draws); the
Monte Carlo figures store their draws in 16 blocks (the seed axis), so every estimate below is computed
from the blocks it is handed and the ledger re-decides each claim with one block left out. The training
claim decides on seed-paired Student-t intervals (:func:`claims.ledger.paired`) and the F interval of
the ratio of seed variances. Every claim carries controls: cases just outside its hypothesis that the
same test runs on and must reject ("fails").
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from claims import ledger
from theory import mdm_variance as th
from theory.numerics import float64

Z = 3.0  # standard errors for every Monte Carlo decision
CONSISTENT = (f"|a - b| / combined SE <= {Z:g} (consistency at {Z:g} standard errors; jackknife SEs over "
              "sequences)")


def _z(a, b, se_a, se_b) -> float:
    se = math.hypot(float(se_a), float(se_b))
    return abs(float(a) - float(b)) / se if se > 0 else (0.0 if a == b else math.inf)


def _consistent(name: str, a, b, se_a, se_b) -> ledger.Decision:
    """The two estimates agree within ``Z`` combined standard errors (statistic: the z value)."""
    z = _z(a, b, se_a, se_b)
    return ledger.check(name, z <= Z, z, Z, CONSISTENT)


def _setting(meta) -> str:
    return f"{meta.get('config_path', 'paper_configs')} at {meta.get('scale', '?')} scale, seed {meta.get('seed')}."


def _pool(x, axis: int) -> np.ndarray:
    """Blocks ``[G, ..., n_b, ...]`` (block axis 0, draws at ``axis``) pooled to ``[..., G * n_b, ...]``."""
    x = np.moveaxis(np.asarray(x), 0, axis - 1)
    return x.reshape(*x.shape[:axis - 1], -1, *x.shape[axis + 1:])


# ---------------------------------------------------------------------------------------------------
# 1. decomposition and 2. ARM / oracle identities (mdm_variance_decomposition)
# ---------------------------------------------------------------------------------------------------


def decomposition_estimates(a, meta) -> dict:
    """Per method: the nested A, B, C (and plug-in) estimates and the direct variance, from the blocks
    ``nested_stats [G, m, n_b, 3]`` and ``direct_losses [G, m, n_b']`` of the decomposition result."""
    c = meta["config"]
    stats, direct = _pool(a["nested_stats"], 2), _pool(a["direct_losses"], 2)  # [m, n, 3], [m, n']
    out = {}
    for i, m in enumerate(str(x) for x in a["methods"]):
        est = th.nested_estimates_from_stats(stats[i], c["n_t"], c["n_masks"])
        est["direct"], est["direct_se"] = th.variance_with_se(direct[i])
        out[m] = est
    return out


@ledger.claim("mdm_variance.decomposition", source="Sec. 3 (variance decomposition, law of total variance)",
              statement="Var(l) = A + B + C (masking pattern, masking rate, data): the unbiased nested estimate "
                        "of A + B + C equals the directly measured i.i.d. variance within 3 SE, for the MDM and "
                        "the ARM, with the exact and an estimated denoiser.",
              reads=("mdm_variance_decomposition",))
def _check_decomposition(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_decomposition"]
    e = decomposition_estimates(a, meta)
    decisions = [_consistent(f"{m}: A+B+C = direct", v["total"], v["direct"], v["total_se"], v["direct_se"])
                 for m, v in e.items()]
    controls = [ledger.Control(f"{m}: plug-in nested estimate (B and C without the bias corrections)",
                               _consistent(f"{m}: plug-in A+B+C = direct", v["naive_total"], v["direct"],
                                           v["naive_total_se"], v["direct_se"]))
                for m, v in e.items() if m.startswith("mdm")]
    o = e["mdm_oracle"]
    controls.append(ledger.Control("mdm_oracle: B + C only (masking-pattern noise A left out, the ARM view)",
                                   _consistent("mdm_oracle: B+C = direct", o["B"] + o["C"], o["direct"],
                                               math.hypot(o["B_se"], o["C_se"]), o["direct_se"])))
    return ledger.Evidence(
        measured={m: {"A": v["A"], "B": v["B"], "C": v["C"], "A+B+C": v["total"], "direct": v["direct"],
                      "z": _z(v["total"], v["direct"], v["total_se"], v["direct_se"])} for m, v in e.items()},
        predicted={m: "A+B+C = direct" for m in e},
        tolerance=CONSISTENT, decisions=decisions, controls=controls,
        stderr={m: {"A+B+C": v["total_se"], "direct": v["direct_se"]} for m, v in e.items()},
        notes=_setting(meta) + f" A is {o['A'] / o['total']:.0%} of the oracle MDM's variance (t ~ U[eps, 1] "
              f"with eps = {meta['config']['eps']}).")


@ledger.claim("mdm_variance.arm_only_data_noise", source="Sec. 3 (ARM comparison) and the oracle corollary",
              statement="The teacher-forced ARM loss has A = B = 0 exactly; with the exact denoiser the MDM's "
                        "E[l | x0] = -log p(x0) / L (t ~ U[0, 1]) and its data noise C equals the ARM's.",
              reads=("mdm_variance_decomposition",))
def _check_arm(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_decomposition"]
    e = decomposition_estimates(a, meta)
    mo, ao, ml = e["mdm_oracle"], e["arm_oracle"], e["mdm_learned"]
    arm_ab = [ao["A"], ao["B"], e["arm_learned"]["A"], e["arm_learned"]["B"]]
    ident = float(np.max(np.abs(a["exact_mean_eps0"] - a["neglogp"])))
    dc = mo["C"] - ao["C"]
    tol_c = 0.1 * ao["C"] + Z * math.hypot(mo["C_se"], ao["C_se"])
    ident_test = "max |E[l|x0] + log p(x0) / L| <= 1e-9 (float64, 2^L masks enumerated, t integrated in closed form)"
    decisions = [
        ledger.exact("ARM A, B = 0 (oracle and learned chain)", arm_ab, [0.0] * 4),
        ledger.compare("oracle MDM: E[l | x0] = -log p(x0) / L at eps = 0", ident, "<=", 1e-9, ident_test),
        ledger.check("C_MDM = C_ARM", abs(dc) <= tol_c, abs(dc), tol_c,
                     f"|C_MDM - C_ARM| <= 10% of C_ARM + {Z:g} combined SE (the clamp eps > 0 shifts C slightly)"),
    ]
    learned = float(np.max(np.abs(a["exact_mean_learned_eps0"] - a["neglogp"])))
    clamp = float(np.max(np.abs(a["exact_mean_eps"] - a["neglogp"])))
    controls = [
        ledger.Control("the MDM's A and B under the same 'A = B = 0' test",
                       ledger.exact("MDM A, B = 0", [mo["A"], mo["B"]], [0.0, 0.0])),
        ledger.Control("a learned (estimated-chain) denoiser under the exact identity, against the true -log p / L",
                       ledger.compare("learned MDM: E[l | x0] = -log p(x0) / L", learned, "<=", 1e-9, ident_test)),
        ledger.Control(f"t clamped to [eps, 1] (eps = {meta['config']['eps']}) under the exact identity",
                       ledger.compare("clamped MDM: E[l | x0] = -log p(x0) / L", clamp, "<=", 1e-9, ident_test)),
    ]
    return ledger.Evidence(
        measured={"ARM A, B (oracle, learned)": arm_ab, "max |NELBO - (-log p / L)| (eps=0, exact)": ident,
                  "C_MDM": mo["C"], "C_ARM": ao["C"], "C_MDM - C_ARM": dc, "C_MDM_learned": ml["C"]},
        predicted={"ARM A, B": 0.0, "NELBO identity": 0.0, "C_MDM - C_ARM": 0.0},
        tolerance=f"A = B = 0 exactly; identity to 1e-9 (float64); |C_MDM - C_ARM| <= 10% of C_ARM + {Z:g} SE",
        decisions=decisions, controls=controls,
        stderr={"C_MDM": mo["C_se"], "C_ARM": ao["C_se"]},
        notes=_setting(meta) + f" The identity is checked on {a['neglogp'].size} sequences of the chain.")


# ---------------------------------------------------------------------------------------------------
# 3. MIRROR (mdm_variance_mirror)
# ---------------------------------------------------------------------------------------------------


def pair_summaries(a) -> dict:
    """``{model}_{pair}`` (and ``oracle_positive``) -> :func:`theory.mdm_variance.pair_summary` of the
    per-sequence blocks ``..._rows [G, R, n_b, 3]`` of the mirror result."""
    return {k[:-5]: th.pair_summary(_pool(a[k], 2)) for k in a if k.endswith("_rows")}


def _worst(name: str, est, se, threshold, kind: str, t) -> ledger.Decision:
    """The ``kind`` test of ``est`` against ``threshold`` at the rate closest to failing (all rates at once)."""
    est, se = np.asarray(est, float), np.asarray(se, float)
    gap = threshold - est if kind == "below" else est - threshold
    with np.errstate(invalid="ignore", divide="ignore"):
        m = np.where(se > 0, gap / np.where(se > 0, se, 1.0), np.sign(gap) * np.inf)
    j = int(np.argmin(np.nan_to_num(m, nan=0.0)))  # an undecidable rate counts as 0 SE
    return ledger.ztest(f"{name} at every t (closest: t = {float(t[j]):g})", est[j], se[j], threshold, kind, Z)


@ledger.claim("mdm_variance.mirror_halves_A", source="Sec. 4.2 (MIRROR, complementary masks)",
              statement="MIRROR's pair correlation is negative and it cuts A by at least half at every t, "
                        "leaving B and C unchanged; in the context-free model the ratio is (1-2t)/(2(1-t)) for "
                        "t <= 1/2 and (2t-1)/(2t) above; it beats two independent masks at equal cost.",
              reads=("mdm_variance_mirror",))
def _check_mirror(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_mirror"]
    t, s = a["t_grid"], pair_summaries(a)
    om, cf, ms2, pos = s["oracle_mirror"], s["context_free_mirror"], s["oracle_multisample2"], s["oracle_positive"]
    cfg = meta["config"]
    pr = [str(p) for p in a["pairings"]]
    dec = {p: th.nested_estimates_from_stats(x, cfg["n_t"], cfg["n_decomp_masks"])
           for p, x in zip(pr, _pool(a["dec_stats"], 2))}
    sg, mi = dec["single"], dec["mirror"]

    def closed_z(x):
        return float(np.max(np.abs(x["ratio"] - a["closed_form"]) / np.maximum(x["ratio_se"], 1e-12)))

    # the max over len(t) rates: Bonferroni, so the family keeps the two-sided level of one Z-SE test
    zf = float(scipy.stats.norm.isf(scipy.stats.norm.sf(Z) / t.size))
    closed = (f"max_t |ratio - closed form| / SE <= {zf:.3g} ({Z:g}-SE level, Bonferroni over the {t.size} "
              "rates)")
    decisions = [
        _worst("oracle: ratio < 1/2", om["ratio"], om["ratio_se"], 0.5, "below", t),
        _worst("oracle: rho < 0", om["rho"], om["rho_se"], 0.0, "below", t),
        _worst("context-free: ratio < 1/2", cf["ratio"], cf["ratio_se"], 0.5, "below", t),
        _worst("context-free: rho < 0", cf["rho"], cf["rho_se"], 0.0, "below", t),
        ledger.check("context-free ratio = closed form", closed_z(cf) <= zf, closed_z(cf), zf, closed),
        _consistent("B unchanged (single vs MIRROR)", sg["B"], mi["B"], sg["B_se"], mi["B_se"]),
        _consistent("C unchanged (single vs MIRROR)", sg["C"], mi["C"], sg["C_se"], mi["C_se"]),
        _worst("oracle: MultiSample-2 ratio - MIRROR ratio > 0", ms2["ratio"] - om["ratio"],
               np.hypot(om["ratio_se"], ms2["ratio_se"]), 0.0, "above", t),
    ]
    share = th.POSITIVE_SHARE
    controls = [
        ledger.Control(f"a positively correlated pair (mask 2 reuses each token's U with probability {share:g}; "
                       f"context-free ratio {(1 + share) / 2:g}) under the 'ratio < 1/2' test",
                       _worst("positive pair: ratio < 1/2", pos["ratio"], pos["ratio_se"], 0.5, "below", t)),
        ledger.Control("the same positively correlated pair under the 'rho < 0' test",
                       _worst("positive pair: rho < 0", pos["rho"], pos["rho_se"], 0.0, "below", t)),
        ledger.Control("the context-free closed form applied to the context-dependent (oracle) denoiser",
                       ledger.check("oracle ratio = context-free closed form", closed_z(om) <= zf, closed_z(om), zf,
                                    closed)),
    ]
    return ledger.Evidence(
        measured={"t": t.tolist(), "oracle ratio": np.round(om["ratio"], 4).tolist(),
                  "oracle rho": np.round(om["rho"], 4).tolist(),
                  "context-free ratio": np.round(cf["ratio"], 4).tolist(),
                  "MultiSample-2 ratio": np.round(ms2["ratio"], 4).tolist(),
                  "positive-pair ratio": np.round(pos["ratio"], 4).tolist(),
                  "B single/mirror": [sg["B"], mi["B"]], "C single/mirror": [sg["C"], mi["C"]],
                  "context-free max z vs closed form": closed_z(cf)},
        predicted={"ratio": "<= 1/2 at every t", "rho": "< 0",
                   "context-free ratio": np.round(a["closed_form"], 4).tolist(), "B, C": "unchanged",
                   "MultiSample-2": "ratio 1/2 > MIRROR's"},
        tolerance=f"ratio + {Z:g} SE < 1/2 and rho + {Z:g} SE < 0 at every t (normal z test at the closest t; "
                  f"fails beyond {Z:g} SE on the other side); context-free within {zf:.3g} SE of the closed form at "
                  f"every t ({Z:g}-SE level, Bonferroni over {t.size} rates); "
                  f"B and C within {Z:g} SE; MIRROR below MultiSample-2 by {Z:g} SE",
        decisions=decisions, controls=controls,
        stderr={"oracle ratio": np.round(om["ratio_se"], 4).tolist(), "B": [sg["B_se"], mi["B_se"]],
                "C": [sg["C_se"], mi["C_se"]]},
        notes=_setting(meta) + " The oracle ratio exceeds the context-free one at mid t: context dependence "
              "makes the pair losses less anti-correlated. MIRROR costs two forward passes, as MultiSample-2; "
              "MultiSample-2 itself sits on the boundary (ratio 1/2, rho 0), so the control is a pair just past it.")


# ---------------------------------------------------------------------------------------------------
# 4. P-POTS (mdm_variance_pots)
# ---------------------------------------------------------------------------------------------------


def pots_estimates(a) -> dict:
    """Bin-formula variances per eps, the independent prediction and the direct check, from the blocks
    ``moment_losses [G, e, b, n_b]``, ``check_moment_losses [G, b, n_b]``, ``check_losses [G, 2, n_b']``."""
    mom = _pool(a["moment_losses"], 3)  # [e, b, n]
    vu, vp, first = [], [], None
    for i, edges in enumerate(a["edges_all"]):
        m = th.binned_summary(mom[i])
        vu.append(th.binned_is_variance(edges, np.diff(edges), m["m2"], m["g"]))
        vp.append(th.binned_optimal_variance(edges, m["m2"], m["g"]))
        first = m if i == 0 else first
    edges, probs = a["edges"], a["probs_pots"]
    val = th.binned_summary(_pool(a["check_moment_losses"], 2))
    out = {"var_uniform": np.asarray(vu), "var_pots": np.asarray(vp), "first": first,
           "pred_uniform": th.binned_is_variance(edges, np.diff(edges), val["m2"], val["g"]),
           "pred_pots": th.binned_is_variance(edges, probs, val["m2"], val["g"])}
    for name, x in zip(("uniform", "pots"), _pool(a["check_losses"], 2)):
        out[f"meas_{name}"], out[f"meas_{name}_se"] = th.variance_with_se(x)
        out[f"mean_{name}"], out[f"mean_{name}_se"] = float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))
    return out


@ledger.claim("mdm_variance.pots_optimal", source="Sec. 4.1 (P-POTS, Pareto-optimal t-sampler)",
              statement="With p* proportional to sqrt(E[l^2 | t]) the importance-weighted loss stays unbiased, its "
                        "variance equals (int sqrt(E[l^2|t]))^2 - (int g)^2, never exceeds uniform sampling, and "
                        "the gain grows as eps shrinks.",
              reads=("mdm_variance_pots",))
def _check_pots(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_pots"]
    e = pots_estimates(a)
    ratio = e["var_pots"] / e["var_uniform"]
    decisions = [
        _consistent("unbiased: mean under P-POTS = mean under uniform", e["mean_pots"], e["mean_uniform"],
                    e["mean_pots_se"], e["mean_uniform_se"]),
        _consistent("direct P-POTS variance = bin formula (independent moments)", e["meas_pots"], e["pred_pots"],
                    e["meas_pots_se"], 0.0),
        _consistent("direct uniform variance = bin formula (independent moments)", e["meas_uniform"],
                    e["pred_uniform"], e["meas_uniform_se"], 0.0),
        ledger.compare("bin formula: var P-POTS - var uniform <= 0 at every eps",
                       float(np.max(e["var_pots"] - e["var_uniform"])), "<=", 0.0,
                       "float64 bin formula on the measured moments (Cauchy-Schwarz)"),
        ledger.compare("direct draws: var P-POTS < var uniform", e["meas_pots"], "<", e["meas_uniform"],
                       "point estimates of the direct draws compared"),
        ledger.compare("gain grows as eps shrinks: max step of P-POTS / uniform", float(np.max(np.diff(ratio))),
                       "<", 0.0, "the ratio strictly decreasing over eps (float64 bin formula)"),
    ]
    edges, m = a["edges"], e["first"]
    w = np.diff(edges)
    v_sq = th.binned_is_variance(edges, w * m["m2"] / np.sum(w * m["m2"]), m["m2"], m["g"])
    u = 1.0 / (edges[-1] - edges[0])
    pots = a["probs_pots"]
    bias = float(np.sum(pots * m["g"]) - np.sum(u * w * m["g"]))
    bias_se = float(math.sqrt(np.sum(((pots - u * w) * m["g_se"]) ** 2)))
    controls = [
        ledger.Control("p proportional to E[l^2 | t] (the square, not the root) under the 'no density does better "
                       "than p*' test", ledger.compare("var(p ~ E[l^2|t]) <= var(p*)", v_sq, "<=",
                                                       float(e["var_pots"][0]), "float64 bin formula")),
        ledger.Control("t ~ p* without the 1/p weight under the unbiasedness test",
                       _consistent("unweighted mean under p* = uniform mean", bias, 0.0, bias_se, 0.0)),
    ]
    return ledger.Evidence(
        measured={"eps": a["eps_list"].tolist(), "var uniform": np.round(e["var_uniform"], 4).tolist(),
                  "var P-POTS": np.round(e["var_pots"], 4).tolist(), "P-POTS / uniform": np.round(ratio, 4).tolist(),
                  "direct var P-POTS (eps0)": e["meas_pots"], "predicted (independent moments)": e["pred_pots"],
                  "direct var uniform": e["meas_uniform"], "predicted uniform": e["pred_uniform"],
                  "mean P-POTS / uniform": [e["mean_pots"], e["mean_uniform"]],
                  "EPR fit loses (var_EPR / var_P-POTS - 1)": np.round(a["var_epr"] / a["var_pots"] - 1, 4).tolist(),
                  "p ~ E[l^2|t] variance": v_sq},
        predicted={"mean": "unchanged", "var P-POTS": "(sum u w sqrt(M2))^2 - mu^2 <= uniform",
                   "ratio": "decreasing as eps -> 0"},
        tolerance=f"{Z:g} SE for the direct checks (consistency); exact float64 inequalities for the bin formula; "
                  "ratio strictly decreasing over eps = " + ", ".join(f"{x:g}" for x in a["eps_list"]),
        decisions=decisions, controls=controls,
        stderr={"direct var P-POTS": e["meas_pots_se"], "direct var uniform": e["meas_uniform_se"],
                "means": [e["mean_pots_se"], e["mean_uniform_se"]]},
        notes=_setting(meta) + f" p* is the bin optimum (prob_j ~ width_j sqrt(M2_j), {edges.size - 1} bins: "
              "exact among piecewise-constant densities), chosen on the first moment draws and judged on "
              "independent moment and direct draws. The paper's 7-parameter EPR form, fitted by KL to p*, loses "
              "the fraction listed against the exact optimum. M2 is the full E[l^2|t].",
        seeds={"chosen on": "moment_losses at eps_list[0] (the P-POTS bin probabilities)",
               "judged on": "check_moment_losses and check_losses (independent draws)"})

# ---------------------------------------------------------------------------------------------------
# 5. StraTS and EMA (the claim's own draws, seeds shifted by the replication offset)
# ---------------------------------------------------------------------------------------------------


def _paired_var_diff_se(x, y) -> float:
    """Delete-one jackknife SE of ``Var(x) - Var(y)`` for paired samples (ddof 1, closed-form LOO)."""
    def loo(v):
        n = v.size
        d = v - v.mean()
        return (np.sum(d * d) - n * d * d / (n - 1)) / (n - 2)
    diff = loo(np.asarray(x, np.float64)) - loo(np.asarray(y, np.float64))
    n = diff.size
    return float(math.sqrt((n - 1) / n * np.sum((diff - diff.mean()) ** 2)))


STRATS = {"vocab": 8, "length": 16, "concentration": 0.3, "eps": 1e-2, "batch": 64, "n_rep": 1200, "n_masks": 2,
          "seed": 5, "n_bins": 8, "rate": 0.05, "n_batches": 400, "bs": 64, "warmup": 20}


def strats_ema_numbers(seed_offset: int = 0) -> dict:
    """The StraTS and EMA measurements (:data:`STRATS`; root key ``STRATS["seed"] + seed_offset``):
    ``nB`` and SE of a fixed batch's masking-rate noise under iid, stratified and batch-shared t; the
    loss-value variances (raw, EMA-adjusted, EMA with the sign flipped) with paired SEs of the
    differences; max |grad difference| of the EMA-adjusted and of the attached-baseline loss against
    the raw one."""
    c = STRATS
    with float64():
        key = jax.random.key(c["seed"] + int(seed_offset))
        trans, init = th.random_chain(jax.random.fold_in(key, 0), c["vocab"], c["concentration"])
        batch = th.sample_chain(jax.random.fold_in(key, 1), trans, init, c["batch"], c["length"])
        fn = th.oracle_mdm_loss_fn(trans, init, c["length"])
        kw = dict(n_rep=c["n_rep"], n_masks=c["n_masks"], eps=c["eps"])
        iid = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 2), stratified=False, **kw)
        strat = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 3), stratified=True, **kw)
        shared = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 4), stratified=False, shared=True, **kw)
        # EMA: a learnable context-free denoiser theta [L, V]; a stream of batches of (x0, t, mask).
        theta = 0.1 * jax.random.normal(jax.random.fold_in(key, 5), (c["length"], c["vocab"]))
        pos = jnp.arange(c["length"])

        def losses(th_, x, t, m):
            lp = jax.nn.log_softmax(th_, -1)[pos, x]
            return jax.vmap(th.mdm_loss)(lp, t, m)

        nb, bs, n_bins, eps = c["n_batches"], c["bs"], c["n_bins"], c["eps"]
        data = th.sample_chain(jax.random.fold_in(key, 6), trans, init, nb * bs, c["length"])
        ts = th.uniform_t(jax.random.fold_in(key, 7), (nb, bs), eps)
        ms = jax.random.uniform(jax.random.fold_in(key, 8), (nb, bs, c["length"])) < ts[..., None]
        data = data.reshape(nb, bs, -1)

        def step(state, inp):
            # the value stream uses the oracle MDM (B > 0; a context-free loss has E[l | t] flat, B = 0)
            x, t, m = inp
            raw = jax.vmap(fn)(x, t, m)
            adj = th.ema_adjusted_loss(raw, t, state, eps=eps)
            neg = th.ema_adjusted_loss(raw, t, state, eps=eps, coef=-1.0)
            return th.ema_update(state, t, raw, eps=eps, rate=c["rate"]), (raw, adj, neg)

        _, vals = jax.lax.scan(step, th.ema_init(n_bins), (data, ts, ms))
        raw, adj, neg = (np.asarray(v[c["warmup"]:]).ravel() for v in vals)  # after the warm-up
        state = th.ema_update(th.ema_init(n_bins), ts[0], losses(theta, data[0], ts[0], ms[0]), eps=eps,
                              rate=c["rate"])
        x, t, m = data[1], ts[1], ms[1]
        g_raw = jax.grad(lambda p: jnp.mean(losses(p, x, t, m)))(theta)
        g_adj = jax.grad(lambda p: jnp.mean(th.ema_adjusted_loss(losses(p, x, t, m), t, state, eps=eps)))(theta)

        def attached(p):  # the baseline left in the graph (the batch's own per-bin mean, not detached)
            lv = losses(p, x, t, m)
            j = th.ema_bin(t, eps, n_bins)
            bm = jax.ops.segment_sum(lv, j, n_bins) / jnp.maximum(jax.ops.segment_sum(jnp.ones_like(lv), j, n_bins), 1)
            return jnp.mean(lv - bm[j])
        g_att = jax.grad(attached)(theta)
    out = {f"nB_{k}": v["nB"] for k, v in (("iid", iid), ("strat", strat), ("shared", shared))}
    out.update({f"nB_{k}_se": v["nB_se"] for k, v in (("iid", iid), ("strat", strat), ("shared", shared))})
    for k, v in (("raw", raw), ("adj", adj), ("neg", neg)):
        out[f"var_{k}"], out[f"var_{k}_se"] = th.variance_with_se(v)
    out["dvar_adj_se"], out["dvar_neg_se"] = _paired_var_diff_se(raw, adj), _paired_var_diff_se(raw, neg)
    out["grad_diff_ema"] = float(np.max(np.abs(np.asarray(g_adj) - np.asarray(g_raw))))
    out["grad_diff_attached"] = float(np.max(np.abs(np.asarray(g_att) - np.asarray(g_raw))))
    return out


def decide_strats_ema(n: dict, seed_offset: int = 0) -> ledger.Evidence:
    """The StraTS / EMA evidence from :func:`strats_ema_numbers`' measurements ``n``."""
    c = STRATS
    lowers_b = f"reduction of n B_batch > 0 at {Z:g} SE (normal z, jackknife over {c['n_rep']} replicates)"
    lowers_v = f"reduction of the loss-value variance > 0 at {Z:g} SE (paired jackknife on the same loss samples)"

    def b_test(name, other):
        return ledger.ztest(name, n["nB_iid"] - n[f"nB_{other}"], math.hypot(n["nB_iid_se"], n[f"nB_{other}_se"]),
                            0.0, "above", Z, lowers_b)

    grad = "max |grad(adjusted) - grad(raw)| == 0 (bitwise, float64)"
    decisions = [
        b_test("StraTS lowers the batch's masking-rate noise", "strat"),
        ledger.ztest("EMA lowers the loss-value variance", n["var_raw"] - n["var_adj"], n["dvar_adj_se"], 0.0,
                     "above", Z, lowers_v),
        ledger.exact("EMA leaves the gradient unchanged", n["grad_diff_ema"], 0.0, grad),
    ]
    controls = [
        ledger.Control("one t shared by the whole batch (marginally uniform, positively dependent: the opposite of "
                       "stratifying) under the 'lowers B' test", b_test("shared t lowers B", "shared")),
        ledger.Control("the EMA baseline with the sign flipped (c_j = -1) under the 'lowers variance' test",
                       ledger.ztest("flipped EMA lowers the variance", n["var_raw"] - n["var_neg"], n["dvar_neg_se"],
                                    0.0, "above", Z, lowers_v)),
        ledger.Control("the baseline kept in the graph (not detached) under the 'gradient unchanged' test",
                       ledger.exact("attached baseline leaves the gradient unchanged", n["grad_diff_attached"], 0.0,
                                    grad)),
    ]
    return ledger.Evidence(
        measured={"n B_batch iid t": n["nB_iid"], "n B_batch StraTS": n["nB_strat"],
                  "n B_batch shared t": n["nB_shared"], "loss-value var raw": n["var_raw"],
                  "loss-value var EMA-adjusted": n["var_adj"], "loss-value var EMA flipped": n["var_neg"],
                  "max |grad diff| EMA": n["grad_diff_ema"]},
        predicted={"StraTS": "lower B", "EMA": "lower loss-value variance, identical gradients"},
        tolerance=f"{lowers_b}; {lowers_v}; gradients compared exactly",
        decisions=decisions, controls=controls,
        stderr={"n B_batch iid t": n["nB_iid_se"], "n B_batch StraTS": n["nB_strat_se"], "var raw": n["var_raw_se"],
                "var adjusted": n["var_adj_se"], "var raw - adjusted": n["dvar_adj_se"]},
        notes=f"The claim's own draws (root key {c['seed']} + seed offset {seed_offset}): oracle MDM on a Markov "
              f"chain (V={c['vocab']}, L={c['length']}), a fixed batch of {c['batch']} sequences, {c['n_rep']} "
              f"replicates, k = floor(sqrt({c['batch']})) strata, eps = {c['eps']}. EMA: {c['n_bins']} equal t-bins, "
              f"rate {c['rate']}, c_j = 1; loss values of the oracle MDM over {c['n_batches']} batches of {c['bs']} "
              f"(the first {c['warmup']} discarded as warm-up); gradients of a context-free softmax denoiser.")


@ledger.claim("mdm_variance.strats_ema", source="Sec. 4.3 (StraTS and the EMA control variate)",
              statement="Stratified t (StraTS) lowers the masking-rate noise B of a batch; the bin-wise EMA control "
                        "variate lowers the variance of the loss value and leaves the gradient exactly unchanged.")
def _check_strats_ema(r: ledger.Reads) -> ledger.Evidence:
    return decide_strats_ema(strats_ema_numbers(r.seed_offset), r.seed_offset)


# ---------------------------------------------------------------------------------------------------
# 6. training stability (mdm_variance_training)
# ---------------------------------------------------------------------------------------------------


def spread_decision(name: str, x, y, level: float = 0.95) -> ledger.Decision:
    """``Var(x) < Var(y)`` for two samples of the same size on the ``level`` F interval of the ratio of
    their variances (scipy F quantiles): holds when it lies below 1, fails when above. With equal
    degrees of freedom the interval is symmetric on the log scale, so this is the z test of
    ``log(s_x^2 / s_y^2)`` against 0 with the large-sample SE ``sqrt(2/df_x + 2/df_y)`` and critical
    value ``log F_{(1+level)/2}(df, df) / SE``: the same decision, reported with a margin in SE.

    Raises ValueError: samples of different sizes or fewer than 2 values."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.size != y.size or x.size < 2:
        raise ValueError(f"need two samples of the same size >= 2, got {x.size} and {y.size}")
    df = x.size - 1
    se = math.sqrt(4.0 / df)
    crit = math.log(scipy.stats.f.ppf((1 + level) / 2, df, df)) / se
    lr = math.log(np.var(x, ddof=1) / np.var(y, ddof=1)) if np.var(y, ddof=1) > 0 else math.nan
    return ledger.ztest(name, lr, se, 0.0, "below", crit,
                        f"log variance ratio < 0 on the {level:.0%} F interval (scipy F({df}, {df}) quantiles)")


@ledger.claim("mdm_variance.training_stability", source="Sec. 5, Table 1 (training stability at small scale)",
              statement="Small flax MDMs trained on real text from several seeds: P-POTS + MIRROR lowers the "
                        "gradient variance of the training estimator and the seed-to-seed spread of the final "
                        "validation loss against standard training.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="with 4 seeds neither test can decide at quick scale (measured at 240 steps, batch 8, the P-POTS "
                  "density fitted on a fifth, calibration seed): the gradient variance of the P-POTS + MIRROR "
                  "estimator is lower on every seed (ratios 1.13-2.97, geometric mean 1.49) but the 4-seed Student-t "
                  "interval of the log ratio (t = 3.18) is [-0.34, 1.14] and still spans 0; the seed sd of the final "
                  "validation loss is 0.0070 (standard) vs 0.0109 (P-POTS + MIRROR), an F interval of [0.16, 38] "
                  "for the variance ratio. An earlier longer quick run (400 steps, batch 16) gave gradient-variance "
                  "ratios 1.6-3.6 but a LARGER spread for P-POTS + MIRROR (sd 0.026 vs 0.0019): the spread claim is "
                  "not supported at this scale. The control (a thinned standard estimator, variance ratio 0.56) is "
                  "rejected. The paper's 7-8 point gains come from 8B models and are not expected here; the ledger "
                  "reports the paper scale as not measured until it is run.",
              reads=("mdm_variance_training",))
def _check_training(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["mdm_variance_training"]
    fs, fp = a["standard_val_loss"][:, -1], a["pots_mirror_val_loss"][:, -1]
    lr = np.log(a["grad_var_standard"]) - np.log(a["grad_var_pots_mirror"])
    decisions = [ledger.paired("P-POTS + MIRROR lowers the gradient variance (per-seed log ratio > 0)", lr, 0.0,
                               "above"),
                 spread_decision("P-POTS + MIRROR lowers the seed spread of the final validation loss", fp, fs)]
    thin = np.log(a["grad_var_standard"]) - np.log(a["grad_var_thinned"])
    controls = [ledger.Control(
        "the standard estimator with each masked token's term kept with probability 1/2 and doubled (unbiased, "
        "more variance) under the same 'lowers the gradient variance' test",
        ledger.paired("thinned estimator lowers the gradient variance (per-seed log ratio > 0)", thin, 0.0, "above"))]
    dl = fp - fs
    n, c = len(fs), meta["config"]
    return ledger.Evidence(
        measured={"final val loss standard (per seed)": np.round(fs, 4).tolist(),
                  "final val loss P-POTS+MIRROR (per seed)": np.round(fp, 4).tolist(),
                  "seed sd standard / P-POTS+MIRROR": [float(np.std(fs, ddof=1)), float(np.std(fp, ddof=1))],
                  "seed-variance ratio (P+M / std)": float(np.var(fp, ddof=1) / np.var(fs, ddof=1)),
                  "grad-variance ratio std / P+M (geometric mean over seeds)": float(np.exp(np.mean(lr))),
                  "grad-variance ratio std / thinned (geometric mean)": float(np.exp(np.mean(thin))),
                  "loss-value variance ratio std / P+M": float(np.exp(np.mean(
                      np.log(a["loss_var_standard"]) - np.log(a["loss_var_pots_mirror"])))),
                  "mean final loss difference P+M - std": float(np.mean(dl)),
                  "learned MDM A, B, C (val)": [float(a["learned_A"]), float(a["learned_B"]), float(a["learned_C"])]},
        predicted={"gradient variance": "lower with P-POTS + MIRROR", "seed spread": "smaller"},
        tolerance="gradient variance: 95% Student-t interval of the per-seed log ratio above 0 (statsmodels); "
                  "spread: 95% F interval of the ratio of seed variances below 1 (holds), above 1 (fails), else "
                  "inconclusive",
        decisions=decisions, controls=controls,
        stderr={"log grad-variance ratio": float(np.std(lr, ddof=1) / math.sqrt(n)),
                "loss difference": float(np.std(dl, ddof=1) / math.sqrt(n))},
        notes=_setting(meta) + f" {n} seeds x {c['steps']} steps, d_model {c['d_model']}; the three estimators' "
              "gradient variance measured at the same (final standard) parameters with the same (x0, t, mask) "
              "draws. P-POTS + MIRROR costs two forward passes per sample.",
        seeds={"chosen on": f"seed index {n} (calibration run: the P-POTS density)",
               "judged on": f"seed indices 0..{n - 1}"})
