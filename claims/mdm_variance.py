"""Claims of "Bringing stability to diffusion: decomposing and reducing variance of training masked
diffusion models" (Jia, Zhou, Liu, Jiang, Jiang, ICLR 2026, arXiv 2511.18159), checked with
``theory.mdm_variance`` and the ``mdm_variance_*`` figure results.

Monte Carlo decisions use 3 standard errors (jackknife over independent sequences, or over replicates);
the training claim decides on seed-paired Student-t intervals (:func:`theory.numerics.paired_decision`)
and an F interval on the ratio of seed variances. Every claim carries controls: cases just outside its
hypothesis that the same check runs on and must reject.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import scipy.stats

from claims import ledger
from theory import mdm_variance as th
from theory.numerics import float64, paired_decision

Z = 3.0  # standard errors for every Monte Carlo decision


def _z(a, b, se_a, se_b) -> float:
    se = math.hypot(float(se_a), float(se_b))
    return abs(float(a) - float(b)) / se if se > 0 else (0.0 if a == b else math.inf)


def _setting(meta, scale) -> str:
    return f"{meta.get('config_path', 'paper_configs')} at {scale} scale, seed {meta.get('seed')}."


# ---------------------------------------------------------------------------------------------------
# 1. decomposition
# ---------------------------------------------------------------------------------------------------


@ledger.claim("mdm_variance.decomposition", source="Sec. 3 (variance decomposition, law of total variance)",
              statement="Var(l) = A + B + C (masking pattern, masking rate, data): the unbiased nested estimate "
                        "of A + B + C equals the directly measured i.i.d. variance within 3 SE, for the MDM and "
                        "the ARM, with the exact and an estimated denoiser.")
def _check_decomposition(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("mdm_variance_decomposition", scale)
    names = [str(m) for m in a["methods"]]
    meas, zs = {}, {}
    for i, m in enumerate(names):
        zs[m] = _z(a["total"][i], a["direct_var"][i], a["total_se"][i], a["direct_var_se"][i])
        meas[m] = {"A": a["A"][i], "B": a["B"][i], "C": a["C"][i], "A+B+C": a["total"][i],
                   "direct": a["direct_var"][i], "z": zs[m]}
    ok = all(z <= Z for z in zs.values())
    controls = []
    for i, m in enumerate(names):
        if m.startswith("mdm"):
            zn = _z(a["naive_total"][i], a["direct_var"][i], a["naive_total_se"][i], a["direct_var_se"][i])
            controls.append(ledger.Control(f"{m}: plug-in nested estimate (B and C without the bias corrections)",
                                           {"naive": float(a["naive_total"][i]), "direct": float(a["direct_var"][i]),
                                            "z": zn}, zn > Z))
    i = names.index("mdm_oracle")
    zb = _z(a["B"][i] + a["C"][i], a["direct_var"][i], math.hypot(a["B_se"][i], a["C_se"][i]), a["direct_var_se"][i])
    controls.append(ledger.Control("mdm_oracle: B + C only (masking-pattern noise A left out, the ARM view)",
                                   {"B+C": float(a["B"][i] + a["C"][i]), "z": zb}, zb > Z))
    return ledger.Evidence(
        measured=meas, predicted={m: "A+B+C = direct" for m in names},
        tolerance=f"|A+B+C - direct| <= {Z:g} combined SE (jackknife over sequences)",
        verdict=ledger.verdict(ok, controls),
        stderr={m: {"A+B+C": a["total_se"][i], "direct": a["direct_var_se"][i]} for i, m in enumerate(names)},
        notes=_setting(meta, scale) + f" A is {a['A'][0] / a['total'][0]:.0%} of the oracle MDM's variance "
              "(the brief's numpy proxy: 82%, with a different chain draw and the (1-eps)t+eps clamp).",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 2. ARM carries only data noise; oracle identities
# ---------------------------------------------------------------------------------------------------


@ledger.claim("mdm_variance.arm_only_data_noise", source="Sec. 3 (ARM comparison) and the oracle corollary",
              statement="The teacher-forced ARM loss has A = B = 0 exactly; with the exact denoiser the MDM's "
                        "E[l | x0] = -log p(x0) / L (t ~ U[0, 1]) and its data noise C equals the ARM's.")
def _check_arm(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("mdm_variance_decomposition", scale)
    names = [str(m) for m in a["methods"]]
    io, ia, il = names.index("mdm_oracle"), names.index("arm_oracle"), names.index("mdm_learned")
    arm_ab = [float(a["A"][ia]), float(a["B"][ia]), float(a["A"][names.index("arm_learned")]),
              float(a["B"][names.index("arm_learned")])]
    ident = float(np.max(np.abs(a["exact_mean_eps0"] - a["neglogp"])))
    dc = float(a["C"][io] - a["C"][ia])
    tol_c = 0.1 * float(a["C"][ia]) + Z * math.hypot(a["C_se"][io], a["C_se"][ia])
    ok = all(v == 0.0 for v in arm_ab) and ident <= 1e-9 and abs(dc) <= tol_c
    learned = float(np.max(np.abs(a["exact_mean_learned_eps0"] - a["neglogp"])))
    clamp = float(np.max(np.abs(a["exact_mean_eps"] - a["neglogp"])))
    controls = [
        ledger.Control("the MDM's A under the same 'A = 0' check", {"A": float(a["A"][io]),
                                                                     "A/SE": float(a["A"][io] / a["A_se"][io])},
                       float(a["A"][io]) > Z * float(a["A_se"][io])),
        ledger.Control("a learned (estimated-chain) denoiser under the exact identity, against the true -log p / L",
                       {"max |E[l|x0] + log p / L|": learned}, learned > 1e-9),
        ledger.Control(f"t clamped to [eps, 1] (eps = {meta['config']['eps']}) under the exact identity",
                       {"max |E[l|x0] + log p / L|": clamp}, clamp > 1e-9),
    ]
    return ledger.Evidence(
        measured={"ARM A, B (oracle, learned)": arm_ab, "max |NELBO - (-log p / L)| (eps=0, exact)": ident,
                  "C_MDM": float(a["C"][io]), "C_ARM": float(a["C"][ia]), "C_MDM - C_ARM": dc,
                  "C_MDM_learned": float(a["C"][il])},
        predicted={"ARM A, B": 0.0, "NELBO identity": 0.0, "C_MDM - C_ARM": 0.0},
        tolerance=f"A = B = 0 exactly; identity to 1e-9 (float64, 2^L masks enumerated, t integrated in closed "
                  f"form); |C_MDM - C_ARM| <= 10% of C_ARM + {Z:g} SE (the clamp eps > 0 shifts C slightly)",
        verdict=ledger.verdict(ok, controls),
        stderr={"C_MDM": float(a["C_se"][io]), "C_ARM": float(a["C_se"][ia])},
        notes=_setting(meta, scale) + f" The identity is checked on {a['neglogp'].size} sequences of the chain.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 3. MIRROR
# ---------------------------------------------------------------------------------------------------


def _mirror_checks(a, model: str, pair: str) -> dict:
    r, rse = a[f"{model}_{pair}_ratio"], a[f"{model}_{pair}_ratio_se"]
    rho, rhose = a[f"{model}_{pair}_rho"], a[f"{model}_{pair}_rho_se"]
    return {"halves": bool(np.all(r + Z * rse < 0.5)), "negative": bool(np.all(rho + Z * rhose < 0)),
            "closed_z": float(np.max(np.abs(r - a["closed_form"]) / np.maximum(rse, 1e-12)))}


@ledger.claim("mdm_variance.mirror_halves_A", source="Sec. 4.2 (MIRROR, complementary masks)",
              statement="MIRROR's pair correlation is negative and it cuts A by at least half at every t, "
                        "leaving B and C unchanged; in the context-free model the ratio is (1-2t)/(2(1-t)) for "
                        "t <= 1/2 and (2t-1)/(2t) above; it beats two independent masks at equal cost.")
def _check_mirror(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("mdm_variance_mirror", scale)
    orc, cf = _mirror_checks(a, "oracle", "mirror"), _mirror_checks(a, "context_free", "mirror")
    pr = [str(p) for p in a["pairings"]]
    s, m = pr.index("single"), pr.index("mirror")
    zb = _z(a["dec_B"][s], a["dec_B"][m], a["dec_B_se"][s], a["dec_B_se"][m])
    zc = _z(a["dec_C"][s], a["dec_C"][m], a["dec_C_se"][s], a["dec_C_se"][m])
    beats = bool(np.all(a["oracle_mirror_ratio"] + Z * np.hypot(a["oracle_mirror_ratio_se"],
                                                                a["oracle_multisample2_ratio_se"])
                        < a["oracle_multisample2_ratio"]))
    ok = (orc["halves"] and orc["negative"] and cf["halves"] and cf["negative"] and cf["closed_z"] <= Z
          and zb <= Z and zc <= Z and beats)
    ms2 = _mirror_checks(a, "oracle", "multisample2")
    controls = [
        ledger.Control("two independent masks (MultiSample-2) under the 'ratio < 1/2 and rho < 0' check",
                       {"ratio": np.round(a["oracle_multisample2_ratio"], 3).tolist(),
                        "rho": np.round(a["oracle_multisample2_rho"], 3).tolist()},
                       not (ms2["halves"] or ms2["negative"])),
        ledger.Control("the context-free closed form applied to the context-dependent (oracle) denoiser",
                       {"max z": orc["closed_z"]}, orc["closed_z"] > Z),
    ]
    return ledger.Evidence(
        measured={"t": a["t_grid"].tolist(), "oracle ratio": np.round(a["oracle_mirror_ratio"], 4).tolist(),
                  "oracle rho": np.round(a["oracle_mirror_rho"], 4).tolist(),
                  "context-free ratio": np.round(a["context_free_mirror_ratio"], 4).tolist(),
                  "MultiSample-2 ratio": np.round(a["oracle_multisample2_ratio"], 4).tolist(),
                  "B single/mirror": [float(a["dec_B"][s]), float(a["dec_B"][m])],
                  "C single/mirror": [float(a["dec_C"][s]), float(a["dec_C"][m])],
                  "context-free max z vs closed form": cf["closed_z"]},
        predicted={"ratio": "<= 1/2 at every t", "rho": "< 0",
                   "context-free ratio": np.round(a["closed_form"], 4).tolist(), "B, C": "unchanged",
                   "MultiSample-2": "ratio 1/2 > MIRROR's"},
        tolerance=f"ratio + {Z:g} SE < 1/2 and rho + {Z:g} SE < 0 at every t (oracle); context-free within "
                  f"{Z:g} SE of the closed form; B and C within {Z:g} SE; MIRROR below MultiSample-2 by {Z:g} SE",
        verdict=ledger.verdict(ok, controls),
        stderr={"oracle ratio": np.round(a["oracle_mirror_ratio_se"], 4).tolist(),
                "B": [float(a["dec_B_se"][s]), float(a["dec_B_se"][m])],
                "C": [float(a["dec_C_se"][s]), float(a["dec_C_se"][m])]},
        notes=_setting(meta, scale) + " The oracle ratio exceeds the context-free one at mid t (0.17 vs 0 at "
              "t = 1/2): context dependence makes the pair losses less anti-correlated. MIRROR costs two "
              "forward passes, as MultiSample-2.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 4. P-POTS
# ---------------------------------------------------------------------------------------------------


@ledger.claim("mdm_variance.pots_optimal", source="Sec. 4.1 (P-POTS, Pareto-optimal t-sampler)",
              statement="With p* proportional to sqrt(E[l^2 | t]) the importance-weighted loss stays unbiased, its "
                        "variance equals (int sqrt(E[l^2|t]))^2 - (int g)^2, never exceeds uniform sampling, and "
                        "the gain grows as eps shrinks.")
def _check_pots(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("mdm_variance_pots", scale)
    z_mean = _z(a["mean_pots"], a["mean_uniform"], a["mean_pots_se"], a["mean_uniform_se"])
    z_pots = _z(a["meas_pots"], a["pred_pots"], a["meas_pots_se"], 0.0)
    z_unif = _z(a["meas_uniform"], a["pred_uniform"], a["meas_uniform_se"], 0.0)
    ratio = a["var_pots"] / a["var_uniform"]
    below = bool(np.all(a["var_pots"] <= a["var_uniform"])) and \
        float(a["meas_pots"]) + Z * float(a["meas_pots_se"]) >= 0 and float(a["meas_pots"]) < float(a["meas_uniform"])
    grows = bool(np.all(np.diff(ratio) < 0))
    ok = z_mean <= Z and z_pots <= Z and z_unif <= Z and below and grows
    edges, m2, g = a["edges"], a["m2"], a["g"]
    w = np.diff(edges)
    v_sq = th.binned_is_variance(edges, w * m2 / np.sum(w * m2), m2, g)
    u = 1.0 / (edges[-1] - edges[0])
    pots = a["probs_pots"]
    bias = float(np.sum(pots * g) - np.sum(u * w * g))
    bias_se = float(math.sqrt(np.sum(((pots - u * w) * a["g_se"]) ** 2)))
    controls = [
        ledger.Control("p proportional to E[l^2 | t] (the square, not the root) under the 'no density does better "
                       "than p*' check", {"var": v_sq, "var_pots": float(a["var_pots"][0])},
                       v_sq > float(a["var_pots"][0])),
        ledger.Control("t ~ p* without the 1/p weight under the unbiasedness check",
                       {"mean shift": bias, "z": abs(bias) / bias_se if bias_se > 0 else math.inf},
                       abs(bias) > Z * bias_se),
    ]
    return ledger.Evidence(
        measured={"eps": a["eps_list"].tolist(), "var uniform": np.round(a["var_uniform"], 4).tolist(),
                  "var P-POTS": np.round(a["var_pots"], 4).tolist(), "P-POTS / uniform": np.round(ratio, 4).tolist(),
                  "direct var P-POTS (eps0)": float(a["meas_pots"]), "predicted (independent moments)":
                  float(a["pred_pots"]), "direct var uniform": float(a["meas_uniform"]),
                  "predicted uniform": float(a["pred_uniform"]),
                  "mean P-POTS / uniform": [float(a["mean_pots"]), float(a["mean_uniform"])],
                  "EPR fit loses (var_EPR / var_P-POTS - 1)": np.round(a["var_epr"] / a["var_pots"] - 1, 4).tolist()},
        predicted={"mean": "unchanged", "var P-POTS": "(sum u w sqrt(M2))^2 - mu^2 <= uniform",
                   "ratio": "decreasing as eps -> 0"},
        tolerance=f"{Z:g} SE for the direct checks; exact inequalities for the bin formula; ratio strictly "
                  "decreasing over eps = " + ", ".join(f"{e:g}" for e in a["eps_list"]),
        verdict=ledger.verdict(ok, controls),
        stderr={"direct var P-POTS": float(a["meas_pots_se"]), "direct var uniform": float(a["meas_uniform_se"]),
                "means": [float(a["mean_pots_se"]), float(a["mean_uniform_se"])]},
        notes=_setting(meta, scale) + f" p* is the bin optimum (prob_j ~ width_j sqrt(M2_j), {edges.size - 1} bins: "
              "exact among piecewise-constant densities). The paper's 7-parameter EPR form, fitted by KL to p*, "
              "loses the fraction listed against the exact optimum. M2 is the full E[l^2|t], including "
              "Var_x0 g(x0,t) that the paper's estimator drops.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 5. StraTS and EMA
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


STRATS = {"vocab": 8, "length": 16, "concentration": 0.3, "eps": 1e-2, "batch": 64, "n_rep": 600, "n_masks": 2}


@ledger.claim("mdm_variance.strats_ema", source="Sec. 4.3 (StraTS and the EMA control variate)",
              statement="Stratified t (StraTS) lowers the masking-rate noise B of a batch; the bin-wise EMA control "
                        "variate lowers the variance of the loss value and leaves the gradient exactly unchanged.")
def _check_strats_ema() -> ledger.Evidence:
    c = STRATS
    with float64():
        key = jax.random.key(5)
        trans, init = th.random_chain(jax.random.fold_in(key, 0), c["vocab"], c["concentration"])
        batch = th.sample_chain(jax.random.fold_in(key, 1), trans, init, c["batch"], c["length"])
        fn = th.oracle_mdm_loss_fn(trans, init, c["length"])
        kw = dict(n_rep=c["n_rep"], n_masks=c["n_masks"], eps=c["eps"])
        iid = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 2), stratified=False, **kw)
        strat = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 3), stratified=True, **kw)
        one = th.batch_t_noise(fn, batch, jax.random.fold_in(key, 4), stratified=True, n_strata=1, **kw)
        z_s = (iid["nB"] - strat["nB"]) / math.hypot(iid["nB_se"], strat["nB_se"])
        z_1 = (iid["nB"] - one["nB"]) / math.hypot(iid["nB_se"], one["nB_se"])
        # EMA: a learnable context-free denoiser theta [L, V]; a stream of batches of (x0, t, mask).
        theta = 0.1 * jax.random.normal(jax.random.fold_in(key, 5), (c["length"], c["vocab"]))
        pos = jnp.arange(c["length"])

        def losses(th_, x, t, m):
            lp = jax.nn.log_softmax(th_, -1)[pos, x]
            return jax.vmap(th.mdm_loss)(lp, t, m)

        n_bins, rate, n_batches, bs = 8, 0.05, 400, 64
        data = th.sample_chain(jax.random.fold_in(key, 6), trans, init, n_batches * bs, c["length"])
        ts = th.uniform_t(jax.random.fold_in(key, 7), (n_batches, bs), c["eps"])
        ms = jax.random.uniform(jax.random.fold_in(key, 8), (n_batches, bs, c["length"])) < ts[..., None]
        data = data.reshape(n_batches, bs, -1)

        def step(state, inp):
            # the value stream uses the oracle MDM (B > 0; a context-free loss has E[l | t] flat, B = 0)
            x, t, m = inp
            raw = jax.vmap(fn)(x, t, m)
            adj = th.ema_adjusted_loss(raw, t, state, eps=c["eps"])
            return th.ema_update(state, t, raw, eps=c["eps"], rate=rate), (raw, adj)

        _, (raw, adj) = jax.lax.scan(step, th.ema_init(n_bins), (data, ts, ms))
        raw, adj = np.asarray(raw[20:]).ravel(), np.asarray(adj[20:]).ravel()  # after the warm-up
        v_raw, se_raw = th.variance_with_se(raw)
        v_adj, se_adj = th.variance_with_se(adj)
        state = th.ema_update(th.ema_init(n_bins), ts[0], losses(theta, data[0], ts[0], ms[0]), eps=c["eps"], rate=rate)
        x, t, m = data[1], ts[1], ms[1]
        g_raw = jax.grad(lambda p: jnp.mean(losses(p, x, t, m)))(theta)
        g_adj = jax.grad(lambda p: jnp.mean(th.ema_adjusted_loss(losses(p, x, t, m), t, state, eps=c["eps"])))(theta)
        same = bool(np.array_equal(np.asarray(g_raw), np.asarray(g_adj)))

        # control: the baseline left in the graph (the batch's own per-bin mean, not detached)
        def attached(p):
            lv = losses(p, x, t, m)
            j = th.ema_bin(t, c["eps"], n_bins)
            bm = jax.ops.segment_sum(lv, j, n_bins) / jnp.maximum(jax.ops.segment_sum(jnp.ones_like(lv), j, n_bins), 1)
            return jnp.mean(lv - bm[j])
        g_att = jax.grad(attached)(theta)
        diff_att = float(np.max(np.abs(np.asarray(g_att) - np.asarray(g_raw))))
    z_ema = (v_raw - v_adj) / _paired_var_diff_se(raw, adj)  # same samples: a paired jackknife
    ok = z_s > Z and z_ema > Z and same
    controls = [
        ledger.Control("StraTS with one stratum (= i.i.d. t) under the 'lowers B' check",
                       {"nB iid": iid["nB"], "nB k=1": one["nB"], "z": z_1}, z_1 <= Z),
        ledger.Control("the baseline kept in the graph (not detached) under the 'gradients identical' check",
                       {"max |grad diff|": diff_att}, diff_att > 0),
    ]
    return ledger.Evidence(
        measured={"n B_batch iid t": iid["nB"], "n B_batch StraTS": strat["nB"], "z (iid - StraTS)": z_s,
                  "loss-value var raw": v_raw, "loss-value var EMA-adjusted": v_adj, "z (raw - adjusted)": z_ema,
                  "gradients bitwise identical": same},
        predicted={"StraTS": "lower B", "EMA": "lower loss-value variance, identical gradients"},
        tolerance=f"reductions beyond {Z:g} SE (jackknife over replicates; paired jackknife of the variance "
                  "difference on the same loss samples for EMA); gradients "
                  "compared with array_equal",
        verdict=ledger.verdict(ok, controls),
        stderr={"n B_batch iid t": iid["nB_se"], "n B_batch StraTS": strat["nB_se"], "var raw": se_raw,
                "var adjusted": se_adj},
        notes=f"Oracle MDM on a Markov chain (V={c['vocab']}, L={c['length']}), a fixed batch of {c['batch']} "
              f"sequences, {c['n_rep']} replicates, k = floor(sqrt({c['batch']})) strata, eps = {c['eps']}. EMA: "
              f"{n_bins} equal t-bins, rate {rate}, c_j = 1; loss values of the oracle MDM over {n_batches} batches "
              f"of {bs} (the first 20 discarded as warm-up); gradients of a context-free softmax denoiser.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 6. training stability
# ---------------------------------------------------------------------------------------------------


def _var_ratio_interval(x, y, level=0.95) -> tuple[float, float, float]:
    """Ratio Var(x)/Var(y) of two independent samples and its F interval."""
    vx, vy = np.var(x, ddof=1), np.var(y, ddof=1)
    r = vx / vy
    dx, dy = len(x) - 1, len(y) - 1
    lo = r / scipy.stats.f.ppf((1 + level) / 2, dx, dy)
    hi = r / scipy.stats.f.ppf((1 - level) / 2, dx, dy)
    return float(r), float(lo), float(hi)


@ledger.claim("mdm_variance.training_stability", source="Sec. 5, Table 1 (training stability at small scale)",
              statement="Small flax MDMs trained on real text from several seeds: P-POTS + MIRROR lowers the "
                        "gradient variance of the training estimator and the seed-to-seed spread of the final "
                        "validation loss against standard training.",
              expected={"quick": "inconclusive", "paper": "holds"},
              why="with 4 seeds neither test can decide at quick scale. Measured when this was written (240 steps, "
                  "batch 8): the gradient variance of the P-POTS + MIRROR estimator is lower on every seed (ratios "
                  "1.14-2.97, geometric mean 1.5) but the 4-seed Student-t interval (t = 3.18) still spans 0; the "
                  "seed sd of the final validation loss is 0.0066 (standard) vs 0.0099 (P-POTS + MIRROR), an F "
                  "interval of [0.15, 34]. A longer quick run (400 steps, batch 16) gave gradient-variance ratios 1.6-3.6 "
                  "but a LARGER spread for P-POTS + MIRROR (sd 0.026 vs 0.0019, with a lower mean loss): the spread "
                  "claim is not supported at this scale. The paper's 7-8 point gains come from 8B models and are "
                  "not expected here; the ledger reports the paper scale as not measured until it is run.")
def _check_training(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("mdm_variance_training", scale)
    fs, fp = a["standard_val_loss"][:, -1], a["pots_mirror_val_loss"][:, -1]
    lr = np.log(a["grad_var_standard"]) - np.log(a["grad_var_pots_mirror"])
    gd = paired_decision(lr, 0.0, "above")
    r, lo, hi = _var_ratio_interval(fp, fs)
    spread = "holds" if hi < 1 else "fails" if lo > 1 else "inconclusive"
    dl = paired_decision(fp - fs, 0.0, "above")  # is P-POTS + MIRROR worse on average? (reported)
    verdicts = [gd["verdict"], spread]
    verdict = "fails" if "fails" in verdicts else "holds" if all(v == "holds" for v in verdicts) else "inconclusive"
    lv = np.log(a["loss_var_standard"]) - np.log(a["loss_var_pots_mirror"])
    ctl = paired_decision(np.log(a["grad_var_standard"]) - np.log(a["grad_var_standard"][::-1]), 0.0, "above")
    controls = [ledger.Control("standard against itself (seeds reversed) under the gradient-variance test",
                               {"verdict": ctl["verdict"], "mean log ratio": ctl["mean"]},
                               ctl["verdict"] != "holds")]
    if verdict == "holds" and not controls[0].rejected:
        verdict = "fails"
    return ledger.Evidence(
        measured={"final val loss standard (per seed)": np.round(fs, 4).tolist(),
                  "final val loss P-POTS+MIRROR (per seed)": np.round(fp, 4).tolist(),
                  "seed sd standard / P-POTS+MIRROR": [float(np.std(fs, ddof=1)), float(np.std(fp, ddof=1))],
                  "seed-variance ratio (P+M / std) and 95% F interval": [r, lo, hi],
                  "grad-variance ratio std / P+M (geometric mean over seeds)": float(np.exp(gd["mean"])),
                  "loss-value variance ratio std / P+M": float(np.exp(np.mean(lv))),
                  "mean final loss difference P+M - std": dl["mean"],
                  "learned MDM A, B, C (val)": [float(a["learned_A"]), float(a["learned_B"]), float(a["learned_C"])]},
        predicted={"gradient variance": "lower with P-POTS + MIRROR", "seed spread": "smaller"},
        tolerance="gradient variance: 95% Student-t interval of the per-seed log ratio above 0; spread: 95% F "
                  "interval of the ratio of seed variances below 1 (holds), above 1 (fails), else inconclusive",
        verdict=verdict,
        stderr={"log grad-variance ratio": gd["se"], "loss difference": dl["se"]},
        notes=_setting(meta, scale) + f" {meta['config']['n_seeds']} seeds x {meta['config']['steps']} steps, "
              f"d_model {meta['config']['d_model']}; both estimators' gradient variance measured at the same (final "
              "standard) parameters. P-POTS + MIRROR costs two forward passes per sample.",
        controls=controls)
