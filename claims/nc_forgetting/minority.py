"""NC-forgetting claims about minority collapse of under-replayed classes (Sec. 3.2, after Fang et al. 2021)."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.nc_forgetting.common import _alive, _dead, _dead_note, _mean, _pooled, _setting, STATS, T95

# ---------------------------------------------------------------------------------------------------
# 12. minority collapse of under-replayed classes (Sec. 3.2, after Fang et al. 2021)
# ---------------------------------------------------------------------------------------------------

SMALL_BUFFER = 5.0  # under-replayed: buffers of at most 5% (every old class 20x or more below a current one)
MINORITY_SOURCE = ("Sec. 3.2 (CIL: under-replayed old classes become minority classes, after Fang et al. 2021: their "
                   "features collapse toward the origin and their head weights converge; balanced replay restores a "
                   "global ETF)")


def _minority_rows(P) -> tuple[list[int], int]:
    small = [b for b in range(len(P)) if P[b] <= SMALL_BUFFER]
    return small, int(np.argmax(P))


@ledger.claim("nc_forgetting.minority_features_shrink", source=MINORITY_SOURCE, reads=(STATS,),
              statement="After the last CIL task with an under-replayed buffer (<= 5% of each past class), the old "
                        "classes' centred test-feature means are shorter than the current classes' (mean norm ratio "
                        "below 1, pooled over the small buffers): their features collapse toward the global mean.")
def _check_minority_features(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[STATS]
    P = a["buffer_percents"]
    small, bmax = _minority_rows(P)
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        dead = _dead(a, d)
        lr = np.log(a["minority_norm_ratio"][d])  # [B, N]
        decisions.append(ledger.paired(f"{dn}: log norm ratio old / current, pooled over <= {SMALL_BUFFER:g}%, < 0",
                                       _pooled(lr, small, _alive(dead, small)), 0.0, "below"))
        measured[f"{dn}: old / current centred feature-mean norm (geometric mean)"] = {
            f"{p:g}%": round(float(np.exp(_pooled(lr, [b], _alive(dead, [b])).mean())), 4) for b, p in enumerate(P)}
        controls.append(ledger.Control(f"{dn}: balanced replay ({P[bmax]:g}%), same 'old features shorter' test",
                                       ledger.paired(f"{dn} at {P[bmax]:g}%: log norm ratio old / current < 0",
                                                     _pooled(lr, [bmax], _alive(dead, [bmax])), 0.0, "below")))
    return ledger.Evidence(
        measured=measured, predicted={"old / current norm ratio at small buffers": "< 1"},
        tolerance=f"{T95} of the per-seed log ratio, pooled per seed over the buffers <= {SMALL_BUFFER:g}%",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + _dead_note(a) + " Class means of the test features after the last task, centred by mu_G = "
              "the mean of all 10 class means (theory.nc_forgetting.minority_collapse_stats); the 8 old classes are "
              "the minority, the last task's 2 classes the majority.", controls=controls)


@ledger.claim("nc_forgetting.minority_heads_converge", source=MINORITY_SOURCE, reads=(STATS,), expected="fails",
              why="our measurement contradicts it at quick scale: the under-replayed old classes' centred head rows "
                  "stay near the simplex-ETF angle (mean pairwise cosine -0.09 on digits and -0.05 on the Gaussian "
                  "classes at 1%, against -1/9 = -0.111 for an ETF and 1 for converged rows), far below the midpoint "
                  "4/9; they are only slightly more aligned than with the full buffer (+0.02 and +0.07, 3.6 and 12 "
                  "SE). Five tasks of 200 steps may be too short for the head to reach the minority-collapse regime.",
              statement="After the last CIL task with an under-replayed buffer (<= 5%), the old classes' head rows "
                        "(centred by the mean row) have converged: their mean pairwise cosine lies nearer 1 (collinear) "
                        "than the simplex ETF's -1/(C - 1), i.e. above the midpoint (1 - 1/(C - 1)) / 2, pooled over the "
                        "small buffers.")
def _check_minority_heads(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[STATS]
    P = a["buffer_percents"]
    small, bmax = _minority_rows(P)
    C = 10
    mid = (1.0 - 1.0 / (C - 1)) / 2.0
    measured, decisions, controls = {"ETF cosine -1/(C - 1)": round(-1.0 / (C - 1), 4), "midpoint": round(mid, 4)}, [], []
    for d, dn in enumerate(a["datasets"]):
        dead = _dead(a, d)
        cos = a["minority_head_cosine"][d]  # [B, N]
        decisions.append(ledger.paired(f"{dn}: old classes' head-row cosine, pooled over <= {SMALL_BUFFER:g}%, > "
                                       f"{mid:.4g}", _pooled(cos, small, _alive(dead, small)), mid, "above"))
        measured[f"{dn}: old classes' mean pairwise head-row cosine"] = {
            f"{p:g}%": _mean(_pooled(cos, [b], _alive(dead, [b]))) for b, p in enumerate(P)}
        both = _alive(dead, small + [bmax])
        measured[f"{dn}: cosine at <= {SMALL_BUFFER:g}% minus at {P[bmax]:g}% (paired, mean)"] = _mean(
            _pooled(cos, small, both) - _pooled(cos, [bmax], both))
        controls.append(ledger.Control(f"{dn}: balanced replay ({P[bmax]:g}%: a global ETF), same 'converged' test",
                                       ledger.paired(f"{dn} at {P[bmax]:g}%: head-row cosine > {mid:.4g}",
                                                     _pooled(cos, [bmax], _alive(dead, [bmax])), mid, "above")))
    return ledger.Evidence(
        measured=measured, predicted={"old classes' head-row cosine at small buffers": f"> {mid:.4g} (nearer 1 than "
                                      f"{-1.0 / (C - 1):.4g})"},
        tolerance=f"{T95} of the per-seed cosine, pooled per seed over the buffers <= {SMALL_BUFFER:g}%; the "
                  "threshold is the midpoint of the two reference levels (no free parameter)",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + _dead_note(a) + " Head rows of the network after the last task, centred by the mean of all "
              "10 rows (theory.nc_forgetting.minority_collapse_stats).", controls=controls)
