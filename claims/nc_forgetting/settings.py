"""NC-forgetting claims about the settings: the TIL feature rank (Sec. 3.2), DIL deep forgetting (Fig. 2), a fixed replay fraction (Corollary 2)."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.nc_forgetting.common import (
    forgetting,
    _idx,
    LAST,
    _mean,
    _pooled,
    RATIO,
    _setting,
    SUBSPACE,
    SWEEP,
    T95,
)
from claims.nc_forgetting.snr import log_snr_ratio
from theory import nc_forgetting as th
from theory.numerics import gap_rank

# ---------------------------------------------------------------------------------------------------
# 9. TIL: the rank of the features with one head per task (Sec. 3.2)
# ---------------------------------------------------------------------------------------------------


def _rank_row(s) -> tuple[np.ndarray, int, float]:
    """``(singular values without the NaN padding, gap rank, gap)`` (:func:`theory.numerics.gap_rank`)."""
    s = np.asarray(s, np.float64)
    s = s[np.isfinite(s)]
    r, gap = gap_rank(s)
    return s, r, gap


GAP_RULE = ("numeric rank read at the largest ratio of consecutive singular values (theory.numerics.gap_rank, "
            "float64), equal to the exact integer")


@ledger.claim("nc_forgetting.til_feature_rank",
              source="Sec. 3.2, Finding 3 (neural collapse in TIL: collapse holds per head, tasks are misaligned "
                     "with one another; the global feature rank is at most n(K - 1), against nK - 1 for a single head)",
              reads=(SUBSPACE,),
              paper=(ledger.PaperValue("n(K - 1)", "Sec. 3.2, Finding 3: global feature rank with one head per task "
                                       "(TIL), at most"),
                     ledger.PaperValue("nK - 1", "Sec. 3.2, Finding 3: global feature rank with a single head")),
              statement="With n tasks of K classes, every task's data trained on to a stationary point with weight "
                        "decay (the terminal phase, where neural collapse holds for the data trained on), the "
                        "features span at most n(K - 1) dimensions with one head per task (TIL), against nK - 1 "
                        "with a single head over all nK classes; with independently initialised (misaligned) heads "
                        "both bounds are attained: the rank read at the singular-value gap is exactly n(K - 1) and "
                        "nK - 1, and the singular values past n(K - 1) lie below the Weyl bound ||R||_2 / lambda set "
                        "by the measured stationarity residual R.")
def _check_til_feature_rank(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SUBSPACE]
    c = meta["config"]
    cases = list(a["ufm_cases"])
    mh, sh, nd = (cases.index(k) for k in ("multi_head", "single_head", "multi_head_no_decay"))
    measured, decisions, controls = {}, [], []
    for j, (n, K) in enumerate(zip(a["ufm_tasks"], a["ufm_classes_per_task"])):
        n, K = int(n), int(K)
        til, cil = th.head_rank_bound(n, K, multi_head=True), th.head_rank_bound(n, K, multi_head=False)
        inst = f"n = {n} tasks x K = {K}"
        s_mh, r_mh, g_mh = _rank_row(a["ufm_singular_values"][mh, j])
        s_sh, r_sh, g_sh = _rank_row(a["ufm_singular_values"][sh, j])
        s_nd, r_nd, g_nd = _rank_row(a["ufm_singular_values"][nd, j])
        weyl_mh, weyl_sh = float(a["ufm_weyl_bound"][mh, j]), float(a["ufm_weyl_bound"][sh, j])
        decisions += [
            ledger.exact(f"{inst}, one head per task: feature rank = n(K - 1) = {til}", r_mh, til, GAP_RULE),
            ledger.compare(f"{inst}, one head per task: sigma_{til + 1} <= ||R||_2 / lambda", float(s_mh[til]), "<=",
                           weyl_mh, "Weyl's inequality: H = A + R / lambda with rank A <= n(K - 1) (deterministic)"),
            ledger.compare(f"{inst}, one head per task: sigma_{til} > ||R||_2 / lambda (not fewer)",
                           float(s_mh[til - 1]), ">", weyl_mh, "Weyl's inequality (deterministic)"),
            ledger.exact(f"{inst}, single head: feature rank = nK - 1 = {cil}", r_sh, cil, GAP_RULE)]
        measured[f"{inst}: gap rank and gap (one head per task / single head / per task without weight decay)"] = [
            [r_mh, float(f"{g_mh:.3g}")], [r_sh, float(f"{g_sh:.3g}")], [r_nd, float(f"{g_nd:.3g}")]]
        measured[f"{inst}: one head per task, sigma_{til} / sigma_{til + 1} / Weyl bound"] = [
            float(f"{s_mh[til - 1]:.4g}"), float(f"{s_mh[til]:.3g}"), float(f"{weyl_mh:.3g}")]
        measured[f"{inst}: one head per task, the {til} nonzero singular values (unequal: tasks misaligned)"] = [
            round(float(x), 4) for x in s_mh[:til]]
        measured[f"{inst}: single head, sigma_{cil} / sigma_{cil + 1} / Weyl bound"] = [
            float(f"{s_sh[cil - 1]:.4g}"), float(f"{s_sh[cil]:.3g}"), float(f"{weyl_sh:.3g}")]
        measured[f"{inst}: single head, the {cil} nonzero singular values (a global simplex)"] = [
            round(float(x), 4) for x in s_sh[:cil]]
        controls += [
            ledger.Control(f"{inst}: a single head over all {n * K} classes (CIL, outside 'one head per task'), "
                           f"same 'rank = n(K - 1)' test", ledger.exact(
                               f"{inst}, single head: feature rank = n(K - 1) = {til}", r_sh, til, GAP_RULE)),
            ledger.Control(f"{inst}: one head per task without weight decay (lambda = 0: no terminal-phase "
                           "stationary point, the initial features never decay), same 'rank = n(K - 1)' test",
                           ledger.exact(f"{inst}, lambda = 0: feature rank = n(K - 1) = {til}", r_nd, til, GAP_RULE))]
    return ledger.Evidence(
        measured=measured,
        predicted={"one head per task (TIL)": "rank n(K - 1)", "single head (CIL)": "rank nK - 1"},
        tolerance="exact integers; the rank is read at the largest singular-value gap (reported) and certified "
                  "by Weyl's inequality against the measured stationarity residual",
        decisions=decisions,
        notes=f"Unconstrained-features model (theory.nc_forgetting.multihead_ufm_gd), float64: free features, "
              f"d = {c.get('ufm_dim')}, {c.get('ufm_per_class')} samples per class, plain GD (eta {c.get('ufm_eta')}, "
              f"{c.get('ufm_steps')} steps) with weight decay lambda = {c.get('ufm_lambda')} on features and head, "
              "bias unregularised; all tasks' data trained on together (the paper's hypothesis that collapse holds "
              "for the data being trained on; in the UFM a task's features interact only with its own head, so "
              "training order does not matter). The paper states the bound; equality is the generic case (the "
              "tasks' heads are independent and misaligned). Not measured on the MLP's features: they are not "
              "exactly collapsed, so their rank has no clean gap.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 10. DIL: deep forgetting stays high
# ---------------------------------------------------------------------------------------------------

FEW_PERCENT = 5.0  # "a few percent" of replay (Fig. 2: deep forgetting flattens after a few percent in CIL)


def chance_normalised_deep(a, d: int, s: int, h: int, chance: float) -> np.ndarray:
    """``[B, N]`` F_deep as a share of the above-chance probe accuracy when learned: the mean over old tasks
    of (A*_jj - A*_4j) / (A*_jj - chance), comparable across probes with different chance levels."""
    probe = a["probe_acc"][d, s, h]
    j = np.arange(LAST)
    return ((probe[..., j, j] - probe[..., LAST, j]) / (probe[..., j, j] - chance)).mean(axis=-1)


@ledger.claim("nc_forgetting.dil_deep_forgetting", source="Fig. 2 and Sec. 1 (in DIL deep forgetting stays high "
              "with small buffers, unlike TIL; the paper puts it at about the CIL level)", reads=(SWEEP,),
              statement="In domain-incremental learning (one head, the label set fixed, the inputs shifting) deep "
                        "forgetting F_deep = A*_jj - A*_4j is higher than in task-incremental learning (one head per "
                        "task) on the same tasks, paired per seed, at every buffer up to a few percent (<= 5%) of "
                        "replay.")
def _check_dil_deep_forgetting(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SWEEP]
    P = a["buffer_percents"]
    settings = list(a["settings"])
    measured, decisions, controls = {}, [], []
    if not {"til", "dil"} <= set(settings):
        return ledger.Evidence(measured={"settings": settings}, predicted={}, tolerance="", decisions=[],
                               notes="needs both the TIL and the DIL setting in the buffer_sweep result",
                               no_control="nothing measured: no setting pair to compare")
    til, dil = settings.index("til"), settings.index("dil")
    small = [b for b in range(len(P)) if P[b] <= FEW_PERCENT]
    for d, dn in enumerate(a["datasets"]):
        for h, hn in enumerate(a["schedules"]):
            case = f"{dn}/{hn}"
            fd = {sn: forgetting(a, d, s, h)[1] for s, sn in enumerate(settings)}  # [B, N] each
            decisions += [ledger.paired(f"{case} at {P[b]:g}%: F_deep(DIL) - F_deep(TIL) > 0",
                                        fd["dil"][b] - fd["til"][b], 0.0, "above") for b in small]
            measured[f"{case}: F_deep by buffer, mean (SE over seeds)"] = {
                sn: {f"{p:g}%": [_mean(fd[sn][b]), round(float(fd[sn][b].std(ddof=1) / np.sqrt(fd[sn][b].size)), 4)]
                     for b, p in enumerate(P)} for sn in settings}
            if "cil" in settings:
                cn = chance_normalised_deep(a, d, settings.index("cil"), h, 1.0 / (2 * (LAST + 1)))
                dn_ = chance_normalised_deep(a, d, dil, h, 0.5)
                measured[f"{case}: F_deep / (A*_jj - chance), DIL (chance 1/2) vs CIL (chance 1/10), by buffer"] = {
                    f"{p:g}%": [_mean(dn_[b]), _mean(cn[b])] for b, p in enumerate(P)}
            controls.append(ledger.Control(
                f"{case}: the swapped inequality F_deep(TIL) > F_deep(DIL), pooled over buffers <= {FEW_PERCENT:g}%",
                ledger.paired(f"{case}: F_deep(TIL) - F_deep(DIL) > 0, pooled over <= {FEW_PERCENT:g}%",
                              _pooled(fd["til"] - fd["dil"], small), 0.0, "above")))
    return ledger.Evidence(
        measured=measured,
        predicted={"F_deep(DIL) - F_deep(TIL)": f"> 0 at every buffer <= {FEW_PERCENT:g}%"},
        tolerance=f"{T95} of the per-seed paired difference (the same seed's initialisation in both settings)",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + " Both probes are 2-way (chance 1/2): the TIL probe per task, the DIL probe "
              "one global probe over the two shared labels of every seen task (the authors' protocol for a single "
              "head). 'About the level of CIL' is not decided: the CIL probe is 10-way (chance 1/10) and the paper "
              "gives no tolerance; the chance-normalised F_deep of both is reported.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 11. a fixed replay fraction (Corollary 2 / T3 with pi held fixed)
# ---------------------------------------------------------------------------------------------------


@ledger.claim("nc_forgetting.fixed_ratio_snr", source="Corollary 2 / T3 (Sec. 4.2: any non-zero replay fraction pi "
              "keeps old classes linearly separable, SNR -> Theta(r^2) with r = pi / (1 - pi), an order that grows "
              "with pi)", reads=(RATIO,),
              statement="With the replay fraction held fixed (a share pi = replay_ratio of every batch drawn from "
                        "the buffer, whatever its size), after the last CIL task the old classes' SNR (test features, "
                        "final over learned) ends above the no-replay level even with a 1% buffer, and above the "
                        "concatenated buffer of the same memory, whose replay fraction is only that buffer's share of "
                        "the training rows.")
def _check_fixed_ratio_snr(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[RATIO]
    P = a["buffer_percents"]
    s = _idx(a, "settings", "cil")
    sched = list(a["schedules"])
    if not {"concat", "ratio"} <= set(sched) or not np.any(P == 0) or not np.any(P > 0):
        return ledger.Evidence(measured={"schedules": sched, "buffer_percents": P.tolist()}, predicted={},
                               tolerance="", decisions=[], notes="needs both schedules, a 0% and a non-zero buffer",
                               no_control="nothing measured: no schedule pair to compare")
    hc, hr = sched.index("concat"), sched.index("ratio")
    b0, b1 = int(np.flatnonzero(P == 0)[0]), int(np.flatnonzero(P > 0)[0])
    pi = float(meta["config"]["replay_ratio"])
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        lc, lr = log_snr_ratio(a, d, s, hc), log_snr_ratio(a, d, s, hr)  # [B, N]
        fixed_vs_none, fixed_vs_concat = lr[b1] - lr[b0], lr[b1] - lc[b1]
        decisions += [ledger.paired(f"{dn}/cil: log SNR ratio, pi = {pi:g} at {P[b1]:g}% - no replay > 0",
                                    fixed_vs_none, 0.0, "above"),
                      ledger.paired(f"{dn}/cil at {P[b1]:g}%: log SNR ratio, pi = {pi:g} - concatenated > 0",
                                    fixed_vs_concat, 0.0, "above")]
        measured[f"{dn}/cil: SNR final / learned (geometric mean over seeds and old tasks), concatenated / "
                 f"pi = {pi:g}"] = {f"{p:g}%": [round(float(np.exp(x[b].mean())), 4) for x in (lc, lr)]
                                  for b, p in enumerate(P)}
        controls += [
            ledger.Control(f"{dn}: the swapped inequality (no replay above pi = {pi:g} at {P[b1]:g}%)", ledger.paired(
                f"{dn}/cil: log SNR ratio, no replay - pi = {pi:g} at {P[b1]:g}% > 0", -fixed_vs_none, 0.0, "above")),
            ledger.Control(f"{dn}: the swapped inequality (concatenated above pi = {pi:g} at {P[b1]:g}%)",
                           ledger.paired(f"{dn}/cil at {P[b1]:g}%: log SNR ratio, concatenated - pi = {pi:g} > 0",
                                         -fixed_vs_concat, 0.0, "above"))]
    return ledger.Evidence(
        measured=measured,
        predicted={"fixed pi > 0": "SNR ends above the no-replay level", "larger pi at equal memory": "higher SNR "
                   "(the order r^2 beta / (r^2 delta + beta) grows with r)"},
        tolerance=f"{T95} of the per-seed log ratio (mean over the 4 old tasks), paired between runs of the same "
                  "seed",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + f" Fixed fraction: the last {pi:g} of every batch is drawn from the buffer "
              "when it is not empty ('ratio'); no replay is the same sampler with an empty buffer. Concatenated: the "
              "buffer's rows join the current task's and are drawn uniformly (a few percent of the rows at a 1% "
              "buffer). The theory's limit is not reached: even at the fixed fraction the SNR still falls over the "
              "five tasks (the measured ratios), so 'levels off' is not tested, only the ordering T3 predicts.",
        controls=controls)
