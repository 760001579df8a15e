"""NC-forgetting claims about the replay buffer's statistics and the heads built from them (Sec. 5, Fig. 5-6)."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.nc_forgetting.common import (
    CORRECTIONS,
    LDA,
    _alive,
    _dead,
    _dead_note,
    _mean,
    NORM_INFLATED,
    _pooled,
    SELECT_SEEDS,
    _setting,
    SHARE_MIN_GAP,
    STATS,
    T95,
)
from theory import nc_forgetting as th

# ---------------------------------------------------------------------------------------------------
# 6. buffer artifacts and strong collapse
# ---------------------------------------------------------------------------------------------------


@ledger.claim("nc_forgetting.buffer_artifacts", source="Sec. 5 and Fig. 5 (covariance deficiency, mean-norm "
              "inflation); the equal-size comparison goes beyond the paper, which compares with the full split",
              reads=(STATS,),
              statement="After the last CIL task, trained-on buffer features have a lower within-class effective "
                        "rank (of the pooled covariance Sigma-hat) than an equal number of held-out samples of the "
                        "same classes at every buffer size with two or more samples per class, and at small buffers "
                        "(<= 5%) their class means are inflated: > 1.05 x the population's norm about mu_G and farther "
                        "out than equal-size held-out means.",
              expected="fails",
              why="the rank half fails in our measurement: the buffer's within-class spread is much smaller (NC1 "
                  "on the buffer is 1.3-20x below held-out: see nc_forgetting.buffer_strong_collapse) but its "
                  "within-class effective rank, which is scale-free, is not lower; it is higher at most sizes "
                  "(quick scale, digits: 9.30 vs 8.82 at 100%, 9.18 vs 8.43 at 20%; Gaussian classes: 16.7 vs 15.0 "
                  "at 100%, 14.8 vs 11.9 at 20%). The inflation half holds (buffer means 1.3-1.5x the population's "
                  "norm on digits and 3.1-4.3x on the Gaussian classes at <= 5%, beyond equal-size held-out means).")
def _check_buffer_artifacts(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[STATS]
    P = a["buffer_percents"]
    small = [b for b in range(len(P)) if P[b] <= 5]
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        dead = _dead(a, d)
        ew_b, ew_h = a["within_rank_buffer"][d], a["within_rank_heldout"][d]
        sized = [b for b in range(len(P)) if np.all(np.isfinite(ew_b[b][~dead[b]]))]  # two or more per class
        lr, lh = (np.log(a[k][d]).mean(axis=-1) for k in ("mean_norm_ratio", "mean_norm_ratio_heldout"))  # [B, N]
        decisions += [ledger.paired(f"{dn} at {P[b]:g}%: log within-class rank held-out - buffer > 0",
                                    _pooled(np.log(ew_h) - np.log(ew_b), [b], _alive(dead, [b])), 0.0, "above")
                      for b in sized]
        decisions += [ledger.paired(f"{dn} over <= 5%: log mean-norm ratio > log 1.05",
                                    _pooled(lr, small, _alive(dead, small)), NORM_INFLATED, "above"),
                      ledger.paired(f"{dn} over <= 5%: log ratio buffer - equal-size held-out > 0",
                                    _pooled(lr - lh, small, _alive(dead, small)), 0.0, "above")]
        measured[f"{dn}: within-class effective rank buffer / held-out"] = {
            f"{P[b]:g}%": [round(float(_pooled(x, [b], _alive(dead, [b])).mean()), 3) for x in (ew_b, ew_h)]
            for b in sized}
        measured[f"{dn}: mean-norm ratio to the population, buffer / equal-size held-out (geometric mean)"] = {
            f"{p:g}%": [round(float(np.exp(_pooled(x, [b], _alive(dead, [b])).mean())), 4) for x in (lr, lh)]
            for b, p in enumerate(P)}
        # Controls just outside "small buffers": the largest buffer (the whole past), same inflation test.
        bmax = len(P) - 1
        controls.append(ledger.Control(f"{dn}: {P[bmax]:g}% replay (not a small buffer), same 'ratio > 1.05' test",
                                       ledger.paired(f"{dn} at {P[bmax]:g}%: log mean-norm ratio > log 1.05",
                                                     _pooled(lr, [bmax], _alive(dead, [bmax])), NORM_INFLATED,
                                                     "above")))
    return ledger.Evidence(
        measured=measured,
        predicted={"within-class effective rank": "buffer < held-out",
                   "mean norm": "buffer > 1.05 x population and > equal-size held-out at buffers <= 5%"},
        tolerance=f"{T95} of per-seed log ratios (mean over the 8 old classes; inflation pooled per seed over "
                  "the buffers <= 5%)",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + _dead_note(a) + " mu_G = mean of the test population's class means (all 10 classes). A "
              "small sample's mean lies farther from mu_G than the class mean by its own spread (the equal-size "
              "held-out means are inflated too: the second column), hence the paired comparison.",
        controls=controls)


@ledger.claim("nc_forgetting.buffer_strong_collapse", source="Sec. 5 ('strong collapse' of trained-on samples, "
              "after Hui et al. 2022; our reading, labelled)", reads=(STATS,), expected="inconclusive",
              why="the effect is large on both data sets (quick scale: held-out NC1 is 11x and 2.9x the buffer's, "
                  "log ratio 2.40 and 1.07 at 11.5 and 7.0 SE), but the one case just outside 'trained on' that the "
                  "simulation measures, a second equal-size held-out draw in place of the buffer, is a null "
                  "difference the one-sided test leaves undecided (0.0 and -2.0 SE): the test is not shown to reject "
                  "anything. The old rule counted an undecided control as rejected and said 'holds'. A set of the "
                  "same classes that is less collapsed than held-out samples (a case the test could reject) is not "
                  "measured.",
              statement="After the last CIL task the trained-on buffer is more collapsed than held-out samples of the "
                        "same classes: NC1 on the buffer's features is below NC1 on an equal number of held-out "
                        "samples (pooled over buffers up to 10% with two or more samples per class).")
def _check_strong_collapse(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[STATS]
    P = a["buffer_percents"]
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        dead = _dead(a, d)
        nb, nh, nh2 = (a[k][d] for k in ("nc1_buffer", "nc1_heldout", "nc1_heldout_b"))
        sized = [b for b in range(len(P)) if np.all(np.isfinite(nb[b][~dead[b]]))]  # two or more per class
        rows = [b for b in sized if P[b] <= 10]
        live = _alive(dead, rows)
        decisions.append(ledger.paired(f"{dn}: log NC1 held-out - log NC1 buffer, pooled over "
                                       f"{[f'{P[b]:g}%' for b in rows]}, > 0",
                                       _pooled(np.log(nh) - np.log(nb), rows, live), 0.0, "above"))
        measured[f"{dn}: NC1 buffer / held-out (geometric mean)"] = {
            f"{P[b]:g}%": [round(float(np.exp(_pooled(np.log(x), [b], _alive(dead, [b])).mean())), 4) for x in (nb, nh)]
            for b in sized}
        controls.append(ledger.Control(f"{dn}: a second equal-size held-out draw in place of the buffer, same test",
                                       ledger.paired(f"{dn}: log NC1 held-out - log NC1 second held-out > 0",
                                                     _pooled(np.log(nh) - np.log(nh2), rows, live), 0.0, "above")))
    return ledger.Evidence(
        measured=measured, predicted={"NC1": "buffer < held-out"},
        tolerance=f"{T95} of the per-seed log ratio, pooled over the buffer sizes", decisions=decisions,
        notes=_setting(meta, r.scale, a) + _dead_note(a) + " NC1 = Tr(Sigma_W Sigma_B^+)/K over the 8 old classes.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 7. LDA counterfactuals, 8. corrected heads
# ---------------------------------------------------------------------------------------------------


def isotropic_identity_gap(seed: int = 0, K: int = 10, d: int = 32, n: int = 150, draws: int = 20) -> np.ndarray:
    """Control data for the 'identity hurts' test: ``[draws]`` paired accuracy differences LDA(mu, Sigma-hat)
    - LDA(mu, I) on isotropic Gaussian classes (Sigma = I: the identity is the true covariance, so the
    estimated one can only add noise), each draw from ``default_rng([seed, r])``. The sizes are those of the
    claim's population heads: 10 classes, 32 features, 150 training samples per class (quick scale)."""
    out = []
    for r in range(draws):
        rng = np.random.default_rng([seed, r])
        mu = rng.standard_normal((K, d)) * 0.6
        y = np.repeat(np.arange(K), n)
        x, xt = mu[y] + rng.standard_normal((K * n, d)), mu[y] + rng.standard_normal((K * n, d))
        out.append(th.lda_head(x, y).accuracy(xt, y) - th.lda_head(x, y, covariance=np.eye(d)).accuracy(xt, y))
    return np.array(out)


@ledger.claim("nc_forgetting.lda_counterfactuals", source="Sec. 5, Fig. 6 (the authors' four shared-covariance "
              "LDA heads)", reads=(LDA,),
              statement="Gaussian heads on the network's features after the last CIL task order as "
                        "acc(mu_pop, Sigma_pop) > acc(mu_pop, I) >= acc(mu_buf, I) (up to 1 pp), averaged over the "
                        "buffer sizes: second-order statistics matter (the identity covariance hurts) and buffer "
                        "means are no better than population means.")
def _check_lda(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[LDA]
    H, P = list(a["heads"]), a["buffer_percents"]
    ps, pi, bi, bs, net = (H.index(k) for k in ("lda_pop_mu_pop_sigma", "lda_pop_mu_identity",
                                                "lda_buf_mu_identity", "lda_buf_mu_buf_sigma", "network"))
    measured, decisions = {}, []
    every = list(range(len(P)))
    for d, dn in enumerate(a["datasets"]):
        acc = a["accuracy_all"][d]  # [B, N, H]
        decisions += [ledger.paired(f"{dn}: pop-Sigma - pop-I > 0 (pooled over buffers)",
                                    _pooled(acc[:, :, ps] - acc[:, :, pi], every), 0.0, "above"),
                      ledger.paired(f"{dn}: pop-I - buf-I > -0.01 (pooled over buffers)",
                                    _pooled(acc[:, :, pi] - acc[:, :, bi], every), -0.01, "above")]
        measured[f"{dn}: accuracy (all test) pop-Sigma / pop-I / buf-I / buf-Sigma / network"] = {
            f"{p:g}%": [round(float(acc[b, :, k].mean()), 4) for k in (ps, pi, bi, bs, net)] for b, p in enumerate(P)}
    iso = isotropic_identity_gap(seed=r.seed_offset)
    controls = [ledger.Control("isotropic Gaussian classes (the identity is the true covariance), same "
                               "'Sigma beats I' test", ledger.paired("isotropic: LDA(Sigma-hat) - LDA(I) > 0", iso,
                                                                      0.0, "above"))]
    return ledger.Evidence(
        measured=measured, predicted={"order": "pop-Sigma > pop-I >= buf-I"},
        tolerance=f"{T95} of paired accuracy differences, each seed's averaged over the buffer sizes; '>=' up to "
                  "1 pp", decisions=decisions,
        notes=_setting(meta, r.scale, a) + " Heads as in the authors' code: Sigma + 1e-6 I, priors = class "
              "frequencies; population = the full training split; buffer = the old classes' buffer and the last "
              "task's data.",
        controls=controls)


@ledger.claim("nc_forgetting.lda_buffer_below_head", source="Sec. 5, Fig. 6 (an observation of the paper, not a "
              "theorem: the authors' buffer LDA, buffer means and pooled buffer covariance, scores below the "
              "network's own head)", reads=(LDA,), expected="fails",
              why="our measurement contradicts it on both data sets: the authors' buffer LDA scores above the "
                  "network's head, not below (quick scale, 12 seeds, all test samples: digits +8.3 pp at 1%, +1.1 "
                  "pp at 2%, -0.7 and -1.0 pp at 5% and 20%; Gaussian classes +0.4 to +1.2 pp at every buffer; "
                  "pooled over buffers +1.6 pp at 3.9 SE and +0.6 pp at 5.5 SE). Why the paper's networks differ "
                  "(deeper, longer training, larger buffers in samples) is not measured here.",
              statement="After the last CIL task the Gaussian head built from the buffer's statistics (buffer means, "
                        "pooled buffer covariance, class-frequency priors: the authors' buffer LDA) is less accurate "
                        "on the test set than the network's own head, averaged over the buffer sizes.")
def _check_lda_buffer_below_head(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[LDA]
    H, P = list(a["heads"]), a["buffer_percents"]
    bs, ps, net = (H.index(k) for k in ("lda_buf_mu_buf_sigma", "lda_pop_mu_pop_sigma", "network"))
    every = list(range(len(P)))
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        acc = a["accuracy_all"][d]  # [B, N, H]
        decisions.append(ledger.paired(f"{dn}: buf-Sigma LDA - network head < 0 (pooled over buffers)",
                                       _pooled(acc[:, :, bs] - acc[:, :, net], every), 0.0, "below"))
        measured[f"{dn}: buf-Sigma LDA - network head (all test), by buffer"] = {
            f"{p:g}%": _mean(acc[b, :, bs] - acc[b, :, net]) for b, p in enumerate(P)}
        # Control just outside "buffer statistics": the same Gaussian head from the population's statistics
        # (full training split), same test: it must not score below the network's head.
        controls.append(ledger.Control(
            f"{dn}: the population LDA (population means and covariance) in place of the buffer's, same "
            "'below the network head' test", ledger.paired(
                f"{dn}: pop-Sigma LDA - network head < 0 (pooled over buffers)",
                _pooled(acc[:, :, ps] - acc[:, :, net], every), 0.0, "below")))
    return ledger.Evidence(
        measured=measured, predicted={"buf-Sigma LDA - network head": "< 0"},
        tolerance=f"{T95} of the per-seed paired difference (same run, same test features), each seed's averaged "
                  "over the buffer sizes",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + " Heads as in the authors' code: Sigma + 1e-6 I, priors = class "
              "frequencies; buffer statistics = the old classes' buffer and the last task's training data.",
        controls=controls)


def choose_correction(acc, heads, seeds, small) -> tuple[str | None, dict]:
    """The candidate of :data:`CORRECTIONS` with the largest mean, over the data sets, the buffers ``small``
    and the seeds ``seeds``, of its smaller gain (over the network's head and over the uncorrected head at
    uniform priors) in old-task accuracy; ``acc [D, B, N, H]``. A candidate that cannot be built somewhere
    (NaN) is not eligible. Returns ``(name or None, {name: score})``."""
    net, raw = heads.index("network"), heads.index("uniform_prior")
    x = acc[:, small][:, :, seeds]  # [D, b, n, H]
    scores = {}
    for k in CORRECTIONS:
        c = x[..., heads.index(k)]
        gain = np.minimum(c - x[..., net], c - x[..., raw])
        scores[k] = round(float(gain.mean()), 4) if np.all(np.isfinite(gain)) else float("nan")
    ok = {k: v for k, v in scores.items() if np.isfinite(v)}
    return (max(ok, key=ok.get) if ok else None), scores


@ledger.claim("nc_forgetting.corrected_head", source="beyond the paper: Sec. 5 suggests to 'explicitly correct "
              "the statistical artifacts' without a method", reads=(LDA,),
              expected={"quick": "inconclusive", "paper": "holds"},
              why="at quick scale (7 judged seeds) the Gaussian classes sit at the test's edge: on root seed 0 "
                  "shrinkage beats the uncorrected head by 1.4 pp (3.5 SE against a critical 2.45) and the control "
                  "candidate (transfer) is rejected at -3.1 SE, but 3 of 12 leave-one-seed-out re-decisions differ, "
                  "so the 'holds' is fragile. Replications at seed offset 1000: 'inconclusive' (the transfer control "
                  "undecided at -1.9 SE); at 2000: 'holds' but fragile (3.6 SE, 5 of 12 re-decisions differ); "
                  "digits decide clearly everywhere (5.7 to 11.5 SE). Numbers of 2026-12-05, with the host and XLA "
                  "kernels pinned (sims.portable); before, the same verdicts came with other roundings (0.8 pp at "
                  "2.5 SE on root seed 0). Paper scale (15 seeds, 1000 samples per class) is not measured yet.",
              statement="At equal memory, after the last CIL task, a Gaussian head fitted with corrected buffer "
                        "statistics (the correction chosen on other seeds) is more accurate on old tasks than the "
                        "network's own head and than the same head with uncorrected buffer statistics (averaged over "
                        "buffers up to 10%), recovering a measured share of the probe-minus-head gap.")
def _check_corrected(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[LDA]
    H, P = list(a["heads"]), a["buffer_percents"]
    ids = np.asarray(a["seed_index"]) if "seed_index" in a else np.arange(a["accuracy_old"].shape[2])
    select, judge = np.flatnonzero(ids < SELECT_SEEDS), np.flatnonzero(ids >= SELECT_SEEDS)
    net, probe, raw, bs = (H.index(k) for k in ("network", "probe", "uniform_prior", "lda_buf_mu_buf_sigma"))
    small = [b for b in range(len(P)) if P[b] <= 10]
    name, scores = choose_correction(a["accuracy_old"], H, select, small)
    ranked = sorted((v, k) for k, v in scores.items() if np.isfinite(v) and k != name)
    worst = ranked[0][1] if ranked else None
    measured = {"correction chosen on the selection seeds": name, "selection scores (mean smaller gain)": scores,
                "control: the candidate ranked last on the selection seeds": worst}
    decisions, controls = [], []
    for d, dn in enumerate(a["datasets"]):
        acc = a["accuracy_old"][d][:, judge]  # [B, n, H], judged seeds only
        gap = acc[:, :, probe] - acc[:, :, net]
        ok = gap >= SHARE_MIN_GAP  # below 2 pp the share is noise over a near-zero gap: not reported
        measured[f"{dn}: probe - network head (old tasks)"] = {f"{P[b]:g}%": _mean(gap[b]) for b in range(len(P))}
        if name is None:
            continue
        k = H.index(name)
        sh = np.where(ok, (acc[:, :, k] - acc[:, :, net]) / np.where(ok, gap, 1), np.nan)
        measured[f"{dn}: share of the probe-minus-head gap recovered by {name}"] = {
            f"{P[b]:g}%": (round(float(np.nanmean(sh[b])), 3) if np.any(np.isfinite(sh[b])) else None)
            for b in range(len(P))}
        decisions += [ledger.paired(f"{dn}: {name} - network head, pooled over <= 10%, > 0",
                                    _pooled(acc[:, :, k] - acc[:, :, net], small), 0.0, "above"),
                      ledger.paired(f"{dn}: {name} - uncorrected (uniform priors), pooled over <= 10%, > 0",
                                    _pooled(acc[:, :, k] - acc[:, :, raw], small), 0.0, "above")]
        # Controls just outside "corrected statistics", same 'beats the uncorrected head' test: (i) the
        # authors' buffer LDA (the uncorrected statistics themselves, with class-frequency priors); (ii) the
        # candidate correction the selection seeds ranked last (a correction that does not repair the
        # statistics), both on the judged seeds.
        controls.append(ledger.Control(
            f"{dn}: the authors' uncorrected buffer LDA (frequency priors) in place of the correction, same "
            "'beats the uncorrected head' test", ledger.paired(
                f"{dn}: buf-Sigma (frequency priors) - uncorrected, pooled over <= 10%, > 0",
                _pooled(acc[:, :, bs] - acc[:, :, raw], small), 0.0, "above")))
        if worst is not None:
            w = H.index(worst)
            controls.append(ledger.Control(
                f"{dn}: {worst} (the candidate the selection seeds ranked last) in place of {name}, same 'beats "
                "the uncorrected head' test", ledger.paired(
                    f"{dn}: {worst} - uncorrected (uniform priors), pooled over <= 10%, > 0",
                    _pooled(acc[:, :, w] - acc[:, :, raw], small), 0.0, "above")))
    return ledger.Evidence(
        measured=measured,
        predicted={"corrected - network and corrected - uncorrected (old tasks)": "> 0, averaged over buffers <= 10%"},
        tolerance=f"{T95} of paired accuracy differences (same run, same features), each seed's averaged over the "
                  "buffers <= 10%, on the judged seeds only",
        decisions=decisions,
        seeds={"chosen on": [int(i) for i in ids[select]], "judged on": [int(i) for i in ids[judge]]},
        notes=_setting(meta, r.scale, a) + f" The correction is the candidate of {list(CORRECTIONS)} with the largest "
              "mean smaller gain on the selection seeds (choose_correction), judged on disjoint seeds. Shares are "
              "(head - network head) / (probe - network head) per seed, averaged over the seeds whose gap is >= 2 pp "
              "(None: no such seed). 'calibration' and 'radial' use a second run at equal memory that replays half "
              "of each class's memory and never trains on the other half (NaN where a class keeps none, so they "
              "are not eligible when a small buffer keeps one sample per class).",
        controls=controls)
