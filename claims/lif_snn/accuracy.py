"""LIF-SNN claim about Figure 3's accuracy dependence: training lowers NS more when accuracy is higher."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from claims.lif_snn.common import _mean_se

CLASSES = {"digits2": 2, "digits10": 10, "parity": 2}


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


def halfway_accuracy(n_classes: int) -> float:
    """The fit rule's bar: halfway from chance to perfect, ``(1 + 1/n_classes) / 2`` (0.55 for ten classes,
    0.75 for two). A network that failed to train collapses towards a near-constant output, at about chance
    accuracy; one that trained sits well above the midpoint even at the highest label-noise level, which is
    meant to lower its accuracy. Raises ValueError: ``n_classes < 2``."""
    if n_classes < 2:
        raise ValueError(f"a classifier needs at least 2 classes, got {n_classes}")
    return (1 + 1 / n_classes) / 2


def fitted_seeds(train_acc, fit: float) -> np.ndarray:
    """Seeds (``[S]`` bool) whose network reaches training accuracy ``fit`` at every level (``train_acc``
    ``[S, K]``): trained classifiers, as the paper's Figure 3 compares (its networks reach 84.38% and about
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
                        "training accuracy at least halfway from chance to perfect), with x uniform (the definition) "
                        "and on held-out digits; on a sparse parity (a high-degree target, where fitting raises NS), "
                        "a fixed sample as large as the digits data with the same label noise, the same test must "
                        "not find it.",
              expected={"quick": "inconclusive", "paper": "inconclusive"},
              why="quick scale, 16 seeds, label noise 0 / 0.1 / 0.2 (numbers when this was written): 14 seeds fit every "
                  "level (training accuracy >= 0.55; the others collapse to 0.20-0.47), and among them accuracy "
                  "falls 0.922 -> 0.892 -> 0.797 (tau -0.86, decided). On held-out digits the more accurate level "
                  "drops NS more (drop 0.294 -> 0.272 -> 0.255, tau +0.76, 6.8 SE): the paper's relation. With x "
                  "uniform on {-1,1}^64 (NS as the paper defines it) the drop does not follow accuracy (0.156, 0.156, "
                  "0.159; tau -0.26, -1.7 SE, undecided), hence 'inconclusive' (15 of 16 leave-one-seed-out "
                  "re-decisions agree; without seed 10 it reads 'fails': fragile). The parity control now varies "
                  "its accuracy: trained on a fixed sample of 1258 inputs (with fresh inputs every batch the "
                  "network averages the label noise out and fits 99-100% at every level), its 16 seeds fall 1.000 "
                  "-> 0.968 -> 0.923, NS rises in training (drop about -0.11), and with x uniform the same test "
                  "accepts it (tau +0.52, 3.4 SE): label noise memorised on a high-degree target also makes the "
                  "less accurate level raise NS more. On held-out inputs it is undecided (tau +0.25, 1.5 SE). So "
                  "with x uniform the design cannot tell the claim from the label-noise effect; on held-out data it "
                  "separates digits from parity. Replicated at seed offset 1 (16 fresh seeds, 14 fitted): held-out "
                  "digits tau +0.57 (4.3 SE, holds), x uniform -0.12 (-0.7 SE); parity control x uniform -0.08 "
                  "(-0.6 SE), held-out +0.15 (0.8 SE), neither rejected: 'inconclusive' again. The fit rule was "
                  "0.8 (0.95 for parity) on training accuracy before the fixed parity sample; at 0.95 no parity "
                  "seed fits the noisiest level, so the rule became the stated midpoint, which also keeps five "
                  "more digits seeds. Paper scale (64 seeds) not measured.",
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
        bar = halfway_accuracy(CLASSES[task])
        keep = fitted_seeds(acc, bar)
        fit = acc[keep]
        row = {"nu": float(nus[v]), "fit_accuracy": bar, "fitted_seeds": f"{int(keep.sum())} of {keep.size}",
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
                  "nu = 1/sqrt(n) over the label-noise levels; its mean over the fitted seeds (training accuracy at "
                  "every level at least halfway from chance to perfect, (1 + 1/C) / 2 for C classes: a collapsed "
                  "network sits near chance; the paper's networks reach 84.38% and 98%) decided on the 95% Student-t interval (statsmodels): holds above "
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
