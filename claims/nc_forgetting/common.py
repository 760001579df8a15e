"""Shared pieces of the nc_forgetting claims: test constants and helpers."""

from __future__ import annotations

import numpy as np

SWEEP, SUBSPACE, SNR = "nc_forgetting_buffer_sweep", "nc_forgetting_subspace", "nc_forgetting_snr"
RATIO = "nc_forgetting_ratio"
STATS, LDA = "nc_forgetting_buffer_stats", "nc_forgetting_lda"
LAST = 4
OLD = slice(0, LAST)
DEEP_TOL = 0.02  # F_shallow >= F_deep - 2 pp (Sec. 2: the difference is a change of the probe-minus-head gap)
JOINT_TOL = 0.05  # "close to joint training": within 5 pp (Sec. 1, Fig. 1)
GAP_MUCH = 0.10  # "the head loses much more": a gap of at least 10 pp
GAP_CLOSED = 0.03  # the gap "closes near 100%": within 3 pp (Fig. 2)
SHARE_MIN_GAP = 0.02  # shares of the probe-minus-head gap are reported only where that gap is >= 2 pp
GAP_LARGE = 0.05  # a gap that needs a big buffer to close: at least 5 pp at the smallest buffer
SNR_HALF = np.log(0.5)  # "decays": the SNR at least halves (T2)
SNR_FLOOR = 1e-6  # an SNR of exactly 0 (all-zero features of a forgotten task) enters logs as 1e-6
NORM_INFLATED = np.log(1.05)  # "inflated": buffer class-mean norm > 1.05 x the population's (Fig. 5)
CORRECTIONS = ("transfer", "shrinkage", "calibration", "radial")  # candidate corrected heads (lda result)
SELECT_SEEDS = 5  # corrected_head: the correction is chosen on seeds 0..4 (where shrinkage was first picked)
T95 = "95% Student-t intervals over seeds (statsmodels, ledger.paired)"


def _idx(a, key, name) -> int:
    return int(list(a[key]).index(name))


def _mean(x) -> float:
    return round(float(np.mean(x)), 4)


def forgetting(a, d: int, s: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """``(F_shallow, F_deep)``, each ``[B, N]``: the mean over old tasks of the drop from session j to the
    last session, for data set ``d``, setting ``s``, schedule ``h``."""
    head, probe = a["head_acc"][d, s, h], a["probe_acc"][d, s, h]  # [B, N, 5, 5]
    j = np.arange(LAST)
    fs = (head[..., j, j] - head[..., LAST, j]).mean(axis=-1)
    fd = (probe[..., j, j] - probe[..., LAST, j]).mean(axis=-1)
    return fs, fd


def _pooled(x, rows, keep=None) -> np.ndarray:
    """``[N]`` per-seed mean of ``x [B, N]`` over the buffer indices ``rows`` (only the seeds where ``keep
    [N]`` is True, when given: :func:`_alive`)."""
    m = np.asarray(x)[list(rows)].mean(axis=0)
    return m if keep is None else m[np.asarray(keep, bool)]


def _dead(a, d: int) -> np.ndarray:
    """``[B, N]`` True where data set ``d``'s network died in the buffer-statistics run (the same features on
    every sample: ``dead_runs``, sims.nc_forgetting.buffers); its statistics there are NaN."""
    return np.asarray(a["dead_runs"][d], bool)


def _alive(dead, rows) -> np.ndarray:
    """``[N]`` True for the seeds whose network is alive at every buffer index in ``rows``: a dead network
    (outside 'a trained network') is left out of a paired comparison, and the evidence says so."""
    return ~np.asarray(dead)[list(rows)].any(axis=0)


def _dead_note(a) -> str:
    """The evidence's line on the dead networks left out (empty when none died)."""
    dead = np.asarray(a["dead_runs"], bool)
    if not dead.any():
        return ""
    where = [f"{a['datasets'][d]} at {a['buffer_percents'][b]:g}% seed {n}" for d, b, n in zip(*np.nonzero(dead))]
    return (f" {int(dead.sum())} network(s) died (every last-layer unit off: the same features on every sample) "
            f"and are left out of every comparison that reads them: {', '.join(where)}.")


def _tally(decisions) -> dict:
    return {"cases": len(decisions), **{v: sum(d.decision == v for d in decisions)
                                        for v in ("holds", "fails", "inconclusive")}}


def _setting(meta, scale, a=None) -> str:
    c = meta["config"]
    out = (f"{scale} scale: {c['n_seeds']} seeds, MLP {c['widths']}, {c['steps_per_task']} SGD steps per task "
           f"(lr {c['lr']}, momentum {c['momentum']}, coupled weight decay {c['weight_decay']}), batch "
           f"{c['batch_size']}; probe LogisticRegression(C={c['probe_C']}, standardised={c['probe_standardize']}).")
    if a is not None and "bayes_accuracy" in a and "gaussian" in list(a["datasets"]):
        bayes = float(a["bayes_accuracy"][list(a["datasets"]).index("gaussian")])
        out += (f" Gaussian classes: separation {c.get('gaussian_separation')}, Bayes accuracy {bayes:.4f} "
                "(numerical integration, theory.nc_forgetting.bayes_accuracy_lda): below 1, so the forgetting of a "
                "class that stays learnable has room to show.")
    return out
