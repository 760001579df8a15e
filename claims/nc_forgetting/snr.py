"""NC-forgetting claim about the old classes' SNR under replay (T2, Corollary 2 / T3)."""

from __future__ import annotations

import numpy as np

from claims import ledger
from claims.nc_forgetting.common import _idx, LAST, _setting, SNR, SNR_FLOOR, SNR_HALF, T95

# ---------------------------------------------------------------------------------------------------
# 5. SNR under replay
# ---------------------------------------------------------------------------------------------------


def log_snr_ratio(a, d: int, s: int, h: int) -> np.ndarray:
    """``[B, N]`` mean over old tasks of log(SNR after the last session / SNR when learned); an SNR of 0
    (both classes on one point: dead features) counts as :data:`SNR_FLOOR`."""
    snr = np.maximum(a["snr"][d, s, h], SNR_FLOOR)  # [B, N, 5, 5]
    j = np.arange(LAST)
    return np.log(snr[..., LAST, j] / snr[..., j, j]).mean(axis=-1)


@ledger.claim("nc_forgetting.snr_replay", source="T2 and Corollary 2 / T3 (Sec. 4.2; T2 needs lambda > 0, and "
              "'levels off' is a limit statement)", reads=(SNR,),
              expected={"quick": "fails", "paper": "holds"},
              why="at quick scale the smallest buffer's verdict moves with the seeds. With 24 seeds (CIL only, "
                  "nc_forgetting_snr) the SNR decays without replay on both data sets (digits 25.6 SE, Gaussian "
                  "classes 18.7 SE) and every other decision holds by 3.4 SE or more but two on the Gaussian classes "
                  "(Bayes accuracy 0.89): on root seed 0 '1% ends above 0%' reads -0.33 log units at -3.0 SE "
                  "(critical 2.07; all 8 folds leaving 3 seeds out agree), hence 'fails', and '5% ends above 0%' is "
                  "undecided (1.6 SE). Fresh seeds give the other sign: seed offsets 1000 and 2000 read +0.60 "
                  "(4.4 SE) and +0.97 (2.1 SE, fragile), both 'holds'. T3 expects a small finite-time effect "
                  "here: concatenated 1% replay is a replay fraction pi of 1-3%, r^2 = pi^2/(1-pi)^2 ~ 1e-3, "
                  "smaller than the spread between seed draws, so the quick scale does not decide it; that needs "
                  "far more seeds than the quick time budget allows. Numbers of 2026-12-05, with the host and XLA "
                  "kernels pinned (sims.portable); before, root seed 0 read -0.10 (-0.93 SE, 'inconclusive').",
              statement="With weight decay, old-class SNR (test features, CIL) decays without replay (at least halves "
                        "by the last task); with any non-zero replay it ends above the no-replay level, and higher "
                        "with the largest buffer than with the smallest non-zero one.")
def _check_snr(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r[SNR]  # the buffer_sweep experiment in CIL, with more seeds
    P = a["buffer_percents"]
    s = _idx(a, "settings", "cil")
    nz = np.flatnonzero(P > 0)
    b0 = int(np.flatnonzero(P == 0)[0])
    measured, decisions, controls = {}, [], []
    for d, dn in enumerate(a["datasets"]):
        lr = log_snr_ratio(a, d, s, 0)
        decisions += [ledger.paired(f"{dn}/cil: log SNR ratio at 0% < log 1/2", lr[b0], SNR_HALF, "below"),
                      ledger.paired(f"{dn}/cil: log SNR ratio at {P[nz[-1]]:g}% - at {P[nz[0]]:g}% > 0",
                                    lr[nz[-1]] - lr[nz[0]], 0.0, "above")]
        decisions += [ledger.paired(f"{dn}/cil: log SNR ratio at {P[b]:g}% - at 0% > 0", lr[b] - lr[b0], 0.0, "above")
                      for b in nz]
        measured[f"{dn}/cil: SNR final / learned (geometric mean over seeds and old tasks)"] = {
            f"{p:g}%": round(float(np.exp(lr[b].mean())), 4) for b, p in enumerate(P)}
        controls.append(ledger.Control(f"{dn}: {P[nz[-1]]:g}% replay, same 'decays' test", ledger.paired(
            f"{dn}/cil: log SNR ratio at {P[nz[-1]]:g}% < log 1/2", lr[nz[-1]], SNR_HALF, "below")))
    return ledger.Evidence(
        measured=measured,
        predicted={"0%": "ratio < 1/2", "> 0%": "above the 0% level, increasing with the buffer",
                   "theory (order, T3)": "SNR -> Theta(r^2), r^2 = pi^2/(1-pi)^2"},
        tolerance=f"{T95} of the per-seed log ratio (mean over the 4 old tasks) or of its paired difference "
                  "between buffer sizes, concatenated replay",
        decisions=decisions,
        notes=_setting(meta, r.scale, a) + f" Weight decay {float(meta['config']['weight_decay']):g} > 0 (T2's "
              f"hypothesis). An SNR of exactly 0 (dead features) enters as {SNR_FLOOR:g}. With 5 tasks the limit "
              "'levels off' is read as 'ends above the no-replay level'.", controls=controls)
