"""LIF-SNN claim about Figure 3's accuracy dependence: training lowers NS more when accuracy is higher."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from claims.lif_snn.common import _mean_se
from claims.lif_snn.spectrum import FIT_ACC


def kendall_tau_a(x, y) -> np.ndarray:
    """Kendall's tau-a of ``x`` and ``y`` along the last axis (``[..., K]`` each, K >= 2): the mean over the
    K(K-1)/2 pairs of levels of ``sign(x_i - x_j) sign(y_i - y_j)``, in [-1, 1]. Unlike tau-b
    (``scipy.stats.kendalltau``) it is defined when ``x`` is constant (a seed whose levels did not change
    its accuracy counts as no association, 0, instead of an undefined value). Returns ``[...]`` float64.

    Raises ValueError: fewer than two levels or shapes that differ."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    if x.shape != y.shape or x.shape[-1] < 2:
        raise ValueError(f"need two arrays of one shape [..., K >= 2], got {x.shape} and {y.shape}")
    i, j = np.triu_indices(x.shape[-1], k=1)
    return np.mean(np.sign(x[..., i] - x[..., j]) * np.sign(y[..., i] - y[..., j]), axis=-1)


def _nu_index(nus, n: int) -> int:
    """Index of the grid rate nearest the paper's nu = 1/sqrt(n)."""
    return int(np.argmin(np.abs(np.asarray(nus) - 1 / math.sqrt(n))))


def _drop(a, pre: str, key: str, v: int) -> np.ndarray:
    """Per-seed NS drop before - after training [S, K] at rate index ``v``."""
    return (np.asarray(a[f"{pre}_{key}_before"], np.float64)[:, :, v]
            - np.asarray(a[f"{pre}_{key}_after"], np.float64)[:, :, v])


def fitted_seeds(train_acc, fit: float) -> np.ndarray:
    """Seeds (``[S]`` bool) whose network reaches training accuracy ``fit`` at every level (``train_acc``
    ``[S, K]``): trained classifiers in the sense of the paper's Figure 3 (its networks reach 84.38% and about
    98%). The selection is on the accuracy (the relation's abscissa) alone, never on the drop."""
    return np.all(np.asarray(train_acc) >= fit, axis=1)


@ledger.claim("lif_snn.training_drop_grows_with_accuracy",
              source="Araya et al. Figure 3 (trained SNNs: NS before and after training on MNIST, about 98% training "
                     "accuracy, and CIFAR-10, 84.38%; training lowers NS, and more where accuracy is higher)",
              statement="For 3-layer sIF classifiers trained with a surrogate gradient on one ten-class task made "
                        "harder step by step (the bundled 8x8 digits, binarised, with training labels replaced by "
                        "random classes at rates 0, 0.1, 0.2), the level trained to the higher accuracy has the "
                        "larger drop of noise sensitivity at nu = 1/sqrt(n) (Kendall's tau between accuracy and drop "
                        "over the levels, per seed, above 0, among the seeds whose networks fit every level: "
                        "training accuracy >= 0.8), with x uniform (the definition) and on held-out digits; "
                        "on a sparse parity (a high-degree target, where fitting raises NS) the same test must not "
                        "find it.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="quick scale, 16 seeds, label noise 0 / 0.1 / 0.2 (numbers when this was written): 9 seeds fit every "
                  "level (training accuracy >= 0.8), and among them accuracy falls 0.924 -> 0.898 -> 0.828 (tau "
                  "-0.85, decided). On held-out digits the more accurate level drops NS more (drop 0.293 -> 0.269 "
                  "-> 0.247, tau +0.85, 8.7 SE): the paper's relation. With x uniform on {-1,1}^64 (NS as the paper "
                  "defines it) the drop does not follow accuracy (0.149, 0.150, 0.148; tau -0.22, -1.4 SE, "
                  "undecided). The parity control is untestable here: its fitted networks reach 99-100% at every "
                  "level, so the levels do not move its accuracy (tau -0.07). Hence 'inconclusive', the same in all "
                  "16 leave-one-seed-out re-decisions. Over all 16 seeds (not decided) the relation reverses with "
                  "x uniform (tau -0.31): the seeds that fail to fit (accuracy 0.39, 0.20, 0.27) collapse towards "
                  "a constant output, whose NS is near 0. An earlier per-seed correlation of accuracy and drop "
                  "within one task was not significant; the levels here vary the task, as the paper's two datasets "
                  "do. Replicated at seed offset 1 (16 fresh seeds, 9 fitted): held-out digits tau +0.63 (3.9 SE, "
                  "holds), x uniform -0.22 (-1.3 SE), parity control 4 fitted seeds, undecided: 'inconclusive' "
                  "again. The x-uniform decision is 0.9 SE from 'fails' at quick scale; paper scale (64 seeds) not "
                  "measured.",
              reads=("lif_snn_accuracy",))
def _check_drop_grows_with_accuracy(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_accuracy"]
    cfg = meta["config"]
    nus, levels = np.asarray(a["nus"]), np.asarray(a["label_noise"]).tolist()
    dims = dict(zip(("task", "parity"), np.asarray(a["input_dims"]).tolist()))
    decisions, controls, rows = [], [], {}
    falls = None
    for pre in ("task", "parity"):
        task = cfg["task"] if pre == "task" else "parity"
        v = _nu_index(nus, dims[pre])
        acc = np.asarray(a[f"{pre}_train_acc"], np.float64)
        keep = fitted_seeds(acc, FIT_ACC[task])
        fit = acc[keep]
        row = {"nu": float(nus[v]), "fit_accuracy": FIT_ACC[task], "fitted_seeds": f"{int(keep.sum())} of {keep.size}",
               "train_acc_by_level (fitted)": fit.mean(axis=0).round(4).tolist() if keep.any() else [],
               "train_acc_by_level (all)": acc.mean(axis=0).round(4).tolist(),
               "min_train_acc_by_level (all)": acc.min(axis=0).round(3).tolist()}
        if pre == "task":
            # The design's premise: among fitted seeds the levels do lower the accuracy.
            falls = ledger.paired(f"{task}: accuracy falls with the label-noise level (tau < 0), fitted seeds",
                                  kendall_tau_a(np.broadcast_to(levels, fit.shape), fit), 0.0, "below")
            decisions.append(falls)
        for measure, key in (("uniform", "ns"), ("data", "data_ns")):
            drop = _drop(a, pre, key, v)
            d = ledger.paired(f"{task}, x {measure}: tau(accuracy, NS drop) over levels > 0, fitted seeds",
                              kendall_tau_a(fit, drop[keep]), 0.0, "above")
            dm, ds = _mean_se(drop[keep]) if keep.sum() >= 2 else (np.full(len(levels), np.nan),) * 2
            row[measure] = {"drop_by_level (fitted)": dm.round(4).tolist(), "se": ds.round(4).tolist(),
                            "drop_by_level (all)": drop.mean(axis=0).round(4).tolist(),
                            "tau (all seeds, not decided)": float(kendall_tau_a(acc, drop).mean()),
                            "before": float(np.mean(a[f"{pre}_{key}_before"][:, :, v])),
                            "tau": d.statistic, "margin_se": d.margin_se, "decision": d.decision}
            if pre == "task":
                decisions.append(d)
            else:
                controls.append(ledger.Control(
                    f"the {cfg['parity_bits']}-bit parity of {dims[pre]} uniform bits at the same label-noise "
                    f"levels (a high-degree target: fitting it raises NS), x {measure}, same fit rule and same "
                    "'tau > 0' test", d))
        rows[task] = row
    return ledger.Evidence(
        measured={"label_noise": levels, **rows, "accuracy falls with the level (tau, fitted)": falls.statistic},
        predicted={cfg["task"]: "tau(accuracy, drop) > 0: the more accurate level drops NS more (Figure 3)",
                   "parity control": "tau <= 0 (the better the parity is fitted, the more NS rises): rejected"},
        tolerance="per seed (one initialisation, minibatch order and NS pair set shared by every level: paired), "
                  "Kendall's tau-a between the training accuracy (clean labels) and the NS drop before - after at "
                  "nu = 1/sqrt(n) over the label-noise levels; its mean over the fitted seeds (training accuracy >= "
                  f"{FIT_ACC} at every level, the fit rule of lif_snn.training_lowers_sensitivity; the paper's "
                  "networks reach 84.38% and 98%) decided on the 95% Student-t interval (statsmodels): holds above "
                  "0, fails below; both NS measures must hold, accuracy must fall with the level (tau < 0, same "
                  "test), and the parity control must fail the same test",
        decisions=decisions,
        stderr={f"{k}, x {m}: drop": v[m]["se"] for k, v in rows.items() for m in ("uniform", "data")},
        notes=f"{meta.get('config_path')} at {r.scale} scale: {cfg['n_seeds']} seeds, depth {cfg['depth']}, hidden "
              f"{cfg['hidden']}, T = {cfg['T']}, theta = {cfg['theta']}, beta = {cfg['beta']}, Adam lr {cfg['lr']}, "
              f"batch {cfg['batch']}, {cfg['steps']} steps, {cfg['ns_pairs']} pairs per NS. The paper compares two "
              "datasets; here one task's accuracy is lowered by label noise, so the levels share everything but the "
              "labels. A network that fails to fit tends to a near-constant output, whose NS is near 0: such "
              "a seed has a low accuracy and a large drop, which reverses the relation over all seeds ('tau (all "
              "seeds, not decided)'); the fit rule keeps the comparison among trained classifiers, as in the paper.",
        controls=controls)
