"""NC-forgetting claims about deep and shallow forgetting against buffer size (Sec. 1-2, Fig. 1-2)."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.nc_forgetting.common import (
    DEEP_TOL,
    forgetting,
    GAP_CLOSED,
    GAP_LARGE,
    GAP_MUCH,
    _idx,
    JOINT_TOL,
    LAST,
    _mean,
    OLD,
    _pooled,
    _setting,
    SWEEP,
    T95,
    _tally,
)

# ---------------------------------------------------------------------------------------------------
# 1. deep <= shallow
# ---------------------------------------------------------------------------------------------------


@ledger.claim("nc_forgetting.deep_le_shallow", source="Sec. 2 and Fig. 2 (deep vs shallow forgetting); the "
              "difference is a change in the probe-minus-head gap and can be slightly negative", reads=(SWEEP,),
              expected={"quick": "inconclusive", "paper": "holds"},
              why="the quick scale does not decide it: the verdict moves with the data draw and with the training's "
                  "rounding. On root seed 0 (6 seeds, 60 test samples per Gaussian class, Bayes accuracy 0.89) 27 of "
                  "the 30 cases hold and 3 are undecided, the lowest CIL at 100% replay on the Gaussian classes: "
                  "F_shallow - F_deep = -2.1 pp (-0.16 SE from the -2 pp bound, critical 2.57), where both "
                  "forgettings are negative after 200 steps per task (the old tasks keep improving) and the probe "
                  "gains less than the head. Replications at seed offsets 1000 and 2000 are 'inconclusive' too (that "
                  "case at -3.1 pp, -0.9 SE, and at 0.0 pp, 2.0 SE; at 1000 one of 6 leave-one-seed-out "
                  "re-decisions differs). A last-bit change in the training moves that case by up to 2.3 pp (4 "
                  "SE): before the host and XLA kernels were pinned (sims.portable, 2026-12-05) the "
                  "same root seed read -4.4 pp ('fails', 4.1 SE below the bound) on a CPU without AVX-512 and -2.3 pp "
                  "on one with it. Paper scale (10 seeds, 2000 steps per task, 1000 test samples per class) is "
                  "expected to decide it.",
              statement="Deep forgetting (the probe's) is at most shallow forgetting (the network head's) at every "
                        "buffer size, setting (TIL, CIL, DIL) and replay schedule, up to 2 percentage points.")
def _check_deep_le_shallow(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SWEEP]
    P = a["buffer_percents"]
    measured, decisions = {}, []
    for d, dn in enumerate(a["datasets"]):
        for s, sn in enumerate(a["settings"]):
            for h, hn in enumerate(a["schedules"]):
                fs, fd = forgetting(a, d, s, h)
                decisions += [ledger.paired(f"{dn}/{sn}/{hn} at {p:g}%: F_shallow - F_deep > -{DEEP_TOL:g}",
                                            fs[b] - fd[b], -DEEP_TOL, "above") for b, p in enumerate(P)]
                measured[f"{dn}/{sn}/{hn}: F_shallow - F_deep"] = {f"{p:g}%": _mean(fs[b] - fd[b])
                                                                   for b, p in enumerate(P)}
    # Control: the swapped inequality (F_deep >= F_shallow - 2 pp) in CIL at the smallest non-zero buffer, where
    # the head is known to fail: if the test accepted both, "deep <= shallow" would say nothing.
    cil = _idx(a, "settings", "cil") if "cil" in a["settings"] else 0
    b1 = int(np.flatnonzero(P > 0)[0])
    controls = []
    for d, dn in enumerate(a["datasets"]):
        fs, fd = forgetting(a, d, cil, 0)
        controls.append(ledger.Control(
            f"{dn}: the swapped inequality F_deep >= F_shallow - 2 pp in {a['settings'][cil]} at {P[b1]:g}% replay",
            ledger.paired(f"{dn}/{a['settings'][cil]} at {P[b1]:g}%: F_deep - F_shallow > -{DEEP_TOL:g}",
                          fd[b1] - fs[b1], -DEEP_TOL, "above")))
    return ledger.Evidence(
        measured={**_tally(decisions), **measured},
        predicted={"F_shallow - F_deep": f">= -{DEEP_TOL} everywhere"},
        tolerance=f"per case, the {T95} of F_shallow - F_deep lies above -{DEEP_TOL}",
        decisions=decisions, notes=_setting(meta, r.scale, a) + " F averaged over the four old tasks.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 2. a small buffer saves the features, not the head
# ---------------------------------------------------------------------------------------------------


def _nearest(a, percent: float) -> int:
    return int(np.argmin(np.abs(a["buffer_percents"] - percent)))


def _final_old(acc, b):
    """``[N]`` mean over old tasks of the final-session accuracy at buffer index ``b``."""
    return acc[b, :, LAST, OLD].mean(axis=-1)


@ledger.claim("nc_forgetting.small_buffer_saves_features", reads=(SWEEP,),
              source="Sec. 1 and Fig. 1-2 (\"features stay\"); stronger than the paper, whose Fig. 2 has deep "
                     "forgetting flatten only after a few percent",
              statement="With about 1% replay, in the single-head settings (CIL, DIL), the probe accuracy on old "
                        "tasks stays within 5 pp of joint training while the network's own head loses at least 10 "
                        "pp more than the probe (F_shallow - F_deep >= 10 pp).",
              expected="fails",
              why="this is stronger than the paper (deep forgetting flattens only after a few percent, and DIL deep "
                  "forgetting is high); on 8x8 digits 1% is one or two samples per class. Measured at quick "
                  "scale: the head's extra loss is large in CIL on digits (73 pp) and on the Gaussian classes "
                  "(37 pp), but the probe at 1% is 16 pp (digits) and 64 pp (Gaussian classes, Bayes accuracy "
                  "0.89: their features are forgotten too) below joint training in CIL, and 8 and 10 pp in DIL; at "
                  "5% digits are within 4.1 pp, the Gaussian classes still 59 pp (CIL) and 7 pp (DIL) below.")
def _check_small_buffer(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SWEEP]
    P = a["buffer_percents"]
    b1, b0, b5, bmax = _nearest(a, 1.0), _nearest(a, 0.0), _nearest(a, 5.0), len(P) - 1
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        for s in (s for s, n in enumerate(a["settings"]) if n in ("cil", "dil")):
            case = f"{dn}/{a['settings'][s]}"
            probe, joint = a["probe_acc"][d, s, 0], a["joint_probe_acc"][d, s][:, OLD].mean(axis=-1)
            fs, fd = forgetting(a, d, s, 0)
            decisions += [ledger.paired(f"{case} at {P[b1]:g}%: joint probe - probe < {JOINT_TOL}",
                                        joint - _final_old(probe, b1), JOINT_TOL, "below"),
                          ledger.paired(f"{case} at {P[b1]:g}%: F_shallow - F_deep > {GAP_MUCH}",
                                        fs[b1] - fd[b1], GAP_MUCH, "above")]
            measured[f"{case} at {P[b1]:g}%: probe, head, joint probe (old tasks)"] = [
                _mean(_final_old(probe, b1)), _mean(_final_old(a["head_acc"][d, s, 0], b1)), _mean(joint)]
            measured[f"{case}: joint probe - probe at {P[b5]:g}%"] = _mean(joint - _final_old(probe, b5))
            controls += [
                ledger.Control(f"{case}: no replay (0%), same 'within 5 pp of joint' test", ledger.paired(
                    f"{case} at 0%: joint probe - probe < {JOINT_TOL}", joint - _final_old(probe, b0), JOINT_TOL,
                    "below")),
                ledger.Control(f"{case}: {P[bmax]:g}% replay, same 'head loses >= 10 pp more' test", ledger.paired(
                    f"{case} at {P[bmax]:g}%: F_shallow - F_deep > {GAP_MUCH}", fs[bmax] - fd[bmax], GAP_MUCH,
                    "above"))]
    return ledger.Evidence(
        measured=measured,
        predicted={"joint - probe": f"< {JOINT_TOL}", "F_shallow - F_deep": f"> {GAP_MUCH}"},
        tolerance=f"{T95}, concatenated replay", decisions=decisions,
        notes=_setting(meta, r.scale, a) + " Joint training: all tasks at once, the same total steps.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 3. the head needs a big buffer
# ---------------------------------------------------------------------------------------------------


@ledger.claim("nc_forgetting.head_needs_big_buffer", source="Fig. 2 (replay efficiency gap), Sec. 5",
              reads=(SWEEP,), expected="fails",
              why="it holds in CIL on digits and in DIL on digits, but not in DIL on the Gaussian classes (Bayes "
                  "accuracy 0.89): there the gap is small at every buffer (quick scale: 1.9 pp at 0%, 0.17 pp at 1%, "
                  "4.2 SE below the 5 pp a 'large' gap needs); in CIL on the Gaussian classes the gap is large up "
                  "to 20% (35 pp) and at 100% is -2.3 pp, which the 3 pp equivalence test leaves undecided at 6 "
                  "seeds. The paper reports a persistent DIL gap.",
              statement="In the single-head settings the probe-minus-head gap F_shallow - F_deep is large at the "
                        "smallest non-zero buffer (>= 5 pp), still open at 5-25% (> 0, averaged) and closed near 100% "
                        "(within 3 pp), and it is smaller with one head per task (TIL) than with a single head (CIL) "
                        "at every buffer up to 10%.")
def _check_head_needs_big_buffer(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SWEEP]
    P = a["buffer_percents"]
    bmax, b1 = len(P) - 1, int(np.flatnonzero(P > 0)[0])
    mid = [b for b in range(len(P)) if 5 <= P[b] <= 25] or [len(P) // 2]
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        gaps = {sn: np.subtract(*forgetting(a, d, s, 0)) for s, sn in enumerate(a["settings"])}
        for sn in ("cil", "dil"):
            if sn not in gaps:
                continue
            g, case = gaps[sn], f"{dn}/{sn}"
            decisions += [ledger.paired(f"{case}: gap at {P[b1]:g}% > {GAP_LARGE}", g[b1], GAP_LARGE, "above"),
                          ledger.paired(f"{case}: gap over {[f'{P[b]:g}%' for b in mid]} > 0", _pooled(g, mid),
                                        0.0, "above"),
                          ledger.paired(f"{case}: |gap| at {P[bmax]:g}% <= {GAP_CLOSED}", g[bmax], GAP_CLOSED,
                                        "within")]
            measured[f"{case} gap by buffer"] = {f"{p:g}%": _mean(g[b]) for b, p in enumerate(P)}
            controls.append(ledger.Control(f"{case} at {P[b1]:g}% replay, same 'closed within 3 pp' test",
                                           ledger.paired(f"{case}: |gap| at {P[b1]:g}% <= {GAP_CLOSED}", g[b1],
                                                         GAP_CLOSED, "within")))
        if "til" in gaps and "cil" in gaps:
            decisions += [ledger.paired(f"{dn}: gap(CIL) - gap(TIL) at {P[b]:g}% > 0", gaps["cil"][b] - gaps["til"][b],
                                        0.0, "above") for b in range(len(P)) if P[b] <= 10]
    return ledger.Evidence(
        measured=measured,
        predicted={"gap at the smallest buffer": f">= {GAP_LARGE}", "gap at mid buffers": "> 0",
                   f"gap at {P[bmax]:g}%": f"|gap| <= {GAP_CLOSED}", "gap(CIL) - gap(TIL)": "> 0 up to 10%"},
        tolerance=f"{T95}, concatenated replay; 'open' is decided on each seed's gap averaged over the buffers of "
                  "5-25%; 'closed' by the TOST at 2.5% per side",
        decisions=decisions, notes=_setting(meta, r.scale, a), controls=controls)
