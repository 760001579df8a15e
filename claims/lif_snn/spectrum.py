"""LIF-SNN claims about the Walsh-Hadamard spectrum (Corollary 1) and training (Figure 3)."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from claims.lif_snn.common import Z_MC, log_log_fit, _mean_se
from theory import boolean

# ---------------------------------------------------------------------------------------------------
# 4. Spectral simplicity (Corollary 1)
# ---------------------------------------------------------------------------------------------------


def _width_falls(label: str, widths, per) -> ledger.Decision:
    """Weighted log-log slope over ``widths`` of the mean of ``per [W, N]`` (per-network shares; SE over
    networks by the delta method) below 0 at :data:`Z_MC` SE: holds below -Z_MC SE, fails above +Z_MC SE."""
    m, s = _mean_se(per, axis=1)
    slope, se = log_log_fit(widths, m, s)
    return ledger.ztest(label, slope, se, 0.0, "below", Z_MC,
                        f"weighted log-log slope over n (delta-method SE over networks) below 0 at {Z_MC:g} SE "
                        "(three-way, normal approximation)")


def _corollary_cutoff(n) -> float:
    """Corollary 1's cut-off degree ``1/nu' = sqrt(n) ln n``."""
    return math.sqrt(n) * math.log(n)


@ledger.claim("lif_snn.spectral_simplicity",
              source="Araya et al. Corollary 1 (with Theorem 2 and O'Donnell Prop. 3.3, the bridge "
                     "W^{>=1/nu} <= 2.313 NS_nu)",
              statement="Random binary sIF classifiers of fixed depth L are, in expectation, concentrated up to the "
                        "degree sqrt(n) ln n with an error eps(n) -> 0: the bridge bound 2.313 ENS_nu' (nu' = "
                        "1/(sqrt(n) ln n)) on E W^{>= sqrt(n) ln n} falls with the width n at every L (n = 64..1024), "
                        "and the bridge holds for every network of the exhaustive transforms (n <= 16).",
              expected={"quick": "holds", "paper": "holds"},
              why="quick scale (128 networks x 256 pairs, n = 64..1024, L = 1..3): the fitted width exponent of "
                  "ENS_nu' is -0.31, -0.18, -0.10 (9-34 SE below 0, when this was written), while the same networks "
                  "and inputs at the fixed rate nu = 0.03 (the cut-off 1/nu = 33 frozen at its n = 64 value, below "
                  "the corollary's sqrt(n) ln n at every larger n) rise with n (+0.03, +0.06, +0.07, 5-8 SE above "
                  "0) and a uniformly random function's bound rises to its maximum: both controls rejected (replicated at "
                  "seed offset 1: -0.31, -0.21, -0.11 against +0.045, +0.042, +0.061, 5.4-6.4 SE). Paper "
                  "scale (n to 16384, L to 5) is not measured; the quick trend predicts 'holds'. Earlier this claim "
                  "judged the tail above sqrt(n) (1/nu at nu = 1/sqrt(n)) against half a random function's, a "
                  "threshold of ours, not the corollary's: that tail grows with depth (0.25, 0.38, 0.46 of a random "
                  "function's at n = 16, L = 1..3) and is now a labelled observation, not decided.",
              reads=("lif_snn_spectrum", "lif_snn_corollary"))
def _check_spectral_simplicity(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["lif_snn_spectrum"]
    c, cmeta = r["lif_snn_corollary"]
    decisions, controls = [], []
    # (a) The bridge, function by function, at the corollary's nu' and at nu = 1/sqrt(n): an inequality that
    # holds for every Boolean function (a check of the transforms; no control can fail it).
    gaps, observed = {}, {}
    for i, n in enumerate(a["widths"].tolist()):
        w = a["weights"][i, ..., : n + 1]  # [N, D, n + 1]
        k = np.arange(n + 1)
        for name, cut in (("sqrt(n) ln n", _corollary_cutoff(n)), ("sqrt(n)", math.sqrt(n))):
            ns = w @ (0.5 * (1 - (1 - 2 / cut) ** k))  # NS at nu = 1/cut from the exact spectrum
            gaps[f"n={n}, 1/nu = {name}"] = float(np.max(boolean.tail_weight(w, cut) - boolean.BRIDGE_CONSTANT * ns))
        # Labelled observations (not decided): the exact tails at the two cut-offs against a random function's.
        rand = a["random_expected"][i, : n + 1]
        for name, cut in (("sqrt(n) ln n", _corollary_cutoff(n)), ("sqrt(n)", math.sqrt(n))):
            m, s = _mean_se(boolean.tail_weight(w, cut))
            rt = float(boolean.tail_weight(rand, cut))
            observed[f"n={n}, k >= {math.ceil(cut)} ({name})"] = {
                "E_W>=k by L": m.round(4).tolist(), "se": s.round(4).tolist(), "random_function": round(rt, 4),
                "ratio by L": (m / rt).round(3).tolist()}
    decisions.append(ledger.compare("max over networks, n <= 16 and both cut-offs of W^{>=1/nu} - 2.313 NS_nu",
                                    max(gaps.values()), "<=", 1e-12,
                                    "O'Donnell Prop. 3.3 holds for every function (float64, to 1e-12)"))
    # (b) eps(n) -> 0 beyond exhaustive sizes: the bridge bound 2.313 ENS_nu' falls with n at every depth.
    widths, nus = c["widths"], c["nus"]
    k_s = list(c["kinds"]).index("slif")
    t_idx = c["steps"].size - 1
    per, fixed = c["per_network"][k_s, ..., t_idx], c["per_network_fixed"][k_s, ..., t_idx]  # [W, N, D]
    fixed_nu = float(c["fixed_nu"])
    rand = np.array([boolean.random_function_noise_sensitivity(int(n), float(v)) for n, v in zip(widths, nus)])
    rs = log_log_fit(widths, rand)[0]
    rows = {}
    for j, L in enumerate(c["depths"].tolist()):
        dec = _width_falls(f"L={L}: bridge bound 2.313 ENS_nu' on E W^(>= sqrt(n) ln n) falls with n", widths,
                           per[:, :, j])
        decisions.append(dec)
        ctl = _width_falls(f"L={L}: bound at the fixed nu = {fixed_nu:g} falls with n", widths, fixed[:, :, j])
        controls.append(ledger.Control(
            f"L={L}: the same networks and inputs at the fixed rate nu = {fixed_nu:g} (the cut-off degree "
            f"{1 / fixed_nu:.0f} frozen at its n = {int(widths[0])} value, below sqrt(n) ln n beyond), same test",
            ctl, {"exponent": ctl.statistic}))
        m, s = _mean_se(per[:, :, j], axis=1)
        rows[f"L={L}"] = {"exponent": dec.statistic, "margin_se": dec.margin_se,
                          "bound_2.313_ENS_by_n": (boolean.BRIDGE_CONSTANT * m).round(4).tolist(),
                          "se_ENS_by_n": s.round(4).tolist(), "fixed_nu_exponent": ctl.statistic}
    controls.append(ledger.Control(
        "a uniformly random function at the same nu' (exact ENS 1/2 - (1 - nu')^n / 2, no simplicity bias), "
        f"same 'exponent {Z_MC:g} SE below 0' test",
        ledger.ztest("random function: bound falls with n", rs, 0.0, 0.0, "below", Z_MC),
        {"exponent": rs, "bound": (boolean.BRIDGE_CONSTANT * rand).round(4).tolist()}))
    return ledger.Evidence(
        measured={"bound_by_depth": rows, "nu_prime": nus.round(5).tolist(), "bridge_max_gap": gaps,
                  "exact_tails (observation, not decided)": observed},
        predicted={"bound": "2.313 ENS_nu' -> 0 with n at every fixed L (eps = O(n^(-1/2^(2(L+1))) polylog n))",
                   "bridge": "W^{>=1/nu} <= 2.313 NS_nu for every function"},
        tolerance=f"per depth: weighted log-log slope of ENS_nu' over n (delta-method SE over networks) below 0 "
                  f"at {Z_MC:g} SE (three-way); the controls (the fixed rate {fixed_nu:g}, a random function) must "
                  "fail the same test; the bridge must hold for every network to 1e-12",
        decisions=decisions,
        stderr={k: v["se_ENS_by_n"] for k, v in rows.items()},
        notes=f"{cmeta.get('config_path')} at {r.scale} scale: T = {cmeta['config']['T']}, 2 outputs, ties to class "
              f"0, {per.shape[1]} networks x {cmeta['config']['pairs']} pairs per width. The corollary's cut-off "
              "sqrt(n) ln n is architecture-free by its choice; the constant eps grows with L. Observation (not "
              "decided): at n <= 16 the exact tail above sqrt(n) ln n falls with n at every L but so does a random "
              "function's (the cut-off lies above n/2 there), so the exhaustive sizes cannot test the corollary; "
              "the tail above sqrt(n) (the figure's 1/nu) grows with depth (ratio by L in exact_tails), as the "
              "corollary allows (its eps grows with L). Weight above degree k cannot be estimated by Monte Carlo "
              "beyond n ~ 20 (variance ~ C(n, k)): the bridge bound is what the corollary itself uses.",
        controls=controls)


# ---------------------------------------------------------------------------------------------------
# 5. Training lowers noise sensitivity (Figure 3)
# ---------------------------------------------------------------------------------------------------

FIT_ACC = {"digits2": 0.9, "digits10": 0.8, "parity": 0.95}


def _training_evidence(r: ledger.Reads, kind: str) -> ledger.Evidence:
    """The paired before/after decisions of one model kind (``"slif"`` or ``"lif"``): every digits case, both
    NS measures, decided on the Student-t interval of the per-seed drop; the parity case of the same kind is
    the control (it must rise)."""
    a, meta = r["lif_snn_training"]
    cfg = meta["config"]
    nus = a["nus"]
    dims = dict(zip(("digits2", "digits10", "parity"), a["input_dims"].tolist()))
    decisions, controls, rows, unfit = [], [], {}, []
    for j, case in enumerate(str(c) for c in a["cases"]):
        task, k = case.rsplit("_", 1)
        if k != kind:
            continue
        v = int(np.argmin(np.abs(nus - 1 / math.sqrt(dims[task]))))
        acc = float(np.mean(a["test_acc"][:, j]))
        fitted = acc >= FIT_ACC[task]
        if not fitted and task != "parity":
            unfit.append(f"{case} (test accuracy {acc:.3f} < {FIT_ACC[task]})")
        row = {"nu": float(nus[v]), "test_acc": acc}
        for measure, key in (("uniform", "ns"), ("data", "data_ns")):
            before, after = a[f"{key}_before"][:, j, v], a[f"{key}_after"][:, j, v]
            d = ledger.paired(f"{case}, x {measure}: NS drop before - after > 0", before - after, 0.0, "above")
            row[measure] = {"before": float(before.mean()), "after": float(after.mean()), "drop": d.statistic,
                            "margin_se": d.margin_se, "decision": d.decision}
            if task == "parity":
                if not fitted:  # a network that did not learn the parity tests the optimiser: not a control
                    d = ledger.Decision(d.name, "inconclusive", d.statistic, d.threshold, d.margin_se, d.critical,
                                        f"not fitted (test accuracy {acc:.3f} < {FIT_ACC[task]}): the control is "
                                        "untested; " + d.test)
                controls.append(ledger.Control(
                    f"{kind} trained on the {cfg['parity_bits']}-bit parity of {dims[task]} bits (a high-degree "
                    f"target; test accuracy {acc:.3f}), NS with x {measure}, same 'drop > 0' test", d))
            else:
                decisions.append(d)
        rows[case] = row
    # A network that did not fit its task tests the optimiser, not the claim: nothing is testable then.
    return ledger.Evidence(
        measured={**rows, "not fitted": unfit,
                  "parity control not fitted": [c for c, v in rows.items() if c.startswith("parity")
                                                and v["test_acc"] < FIT_ACC["parity"]]},
        predicted={"digits": "NS before - after > 0 (95% Student-t over seeds)",
                   "parity control": "NS rises (drop < 0): rejected",
                   "parity NS of the target": dict(zip(nus.round(4).tolist(), a["parity_ns_exact"].round(4).tolist()))},
        tolerance="per-seed paired drop NS_before - NS_after at nu = 1/sqrt(n) (0.125 for the 64-bit digits, 0.25 for "
                  "the 16-bit parity), the same network and the same input pairs before and after training, decided "
                  "on its 95% Student-t interval over seeds (statsmodels): holds above 0, fails below; every digits "
                  "case must hold for both measures, the parity control must fail; a mean test accuracy below "
                  f"{FIT_ACC} leaves nothing decided (inconclusive)",
        decisions=[] if unfit else decisions,
        notes=f"{meta.get('config_path')} at {r.scale} scale: {cfg['n_seeds']} seeds (one network each), depth "
              f"{cfg['depth']}, hidden {cfg['hidden']}, T = {cfg['T']}, theta = {cfg['theta']}, beta = {cfg['beta']}, "
              f"Adam lr {cfg['lr']}, {cfg['steps']} steps, {cfg['ns_pairs']} pairs per NS. Over the whole nu grid "
              "the drop holds at small nu; at nu >= 0.25 on 64 bits (16+ flipped bits) trained networks can be more "
              "sensitive than random ones (see the figure).",
        controls=controls)


@ledger.claim("lif_snn.training_lowers_sensitivity",
              source="Araya et al. Figure 3 (trained SNNs; sLIF curves)",
              statement="sIF classifiers trained with a surrogate gradient on the bundled 8x8 digits (binarised, 3 vs "
                        "8 and all ten) have lower noise sensitivity at nu = 1/sqrt(n) than the same networks at "
                        "initialisation, both with x uniform (the definition) and on held-out digits; training on a "
                        "sparse parity (which it fits) raises it.",
              expected={"quick": "holds", "paper": "holds"},
              why="paired design: each seed's network is measured before and after training on the same input "
                  "pairs, and the per-seed drops are decided on their Student-t interval. With 4 seeds two cells "
                  "were undecided; with 32 seeds every sIF drop is decided: 3 vs 8 with x uniform 0.290 -> 0.223 (5.5 SE), on "
                  "held-out digits 0.275 -> 0.062; ten classes 0.664 -> 0.498 and 0.660 -> 0.317 (numbers when this "
                  "was written). The parity control rises 0.321 -> 0.427 (towards the 3-bit parity's 0.4375 at nu = "
                  "1/4; 6 SE), rejected. Replicated at seed offset 1 (every sIF drop decided, 5.9-12.5 SE; parity "
                  "rises, 4.5 SE). Paper scale not measured.",
              reads=("lif_snn_training",))
def _check_training(r: ledger.Reads) -> ledger.Evidence:
    return _training_evidence(r, "slif")


@ledger.claim("lif_snn.training_lowers_sensitivity_if",
              source="Araya et al. Figure 3 (trained SNNs; IF curves: 'sLIF and IF behave similarly')",
              statement="IF classifiers (Heaviside spikes, {0,1} input) trained with a surrogate gradient on the "
                        "bundled 8x8 digits have lower noise sensitivity at nu = 1/sqrt(n) than at initialisation, "
                        "with x uniform and on held-out digits; training on a sparse parity raises it.",
              expected={"quick": "fails", "paper": "fails"},
why="quick scale, 32 seeds, paired (numbers when this was written): on held-out digits IF NS drops (3 vs 8: "
                  "0.172 -> 0.095, 2.9 SE; ten classes 0.472 -> 0.324, 4.6 SE), but with x uniform on {-1,1}^64 (the "
                  "definition) it rises on 3 vs 8 (0.151 -> 0.224, the drop -0.073 is 3.3 SE below 0; decided) and "
                  "does not drop on ten classes (0.460 -> 0.517, -1.7 SE): the paper's 'IF behaves like sLIF' is "
                  "not what we measure for the noise sensitivity as defined, hence 'fails'. The IF parity control "
                  "is untested: IF networks do not fit the 3-bit parity in 300 steps (test accuracy 0.52; they "
                  "collapse to a near-constant output, NS 0.21 -> 0.03). Replication (seed offset 1, 32 fresh seeds): "
                  "the x-uniform drops are -0.010 (3 vs 8) and -0.005 (ten classes), both undecided, and on held-out "
                  "digits 3 vs 8 +0.028 (undecided), ten classes +0.176 (decided): the verdict there is "
                  "'inconclusive', not 'fails'. What replicates is that IF shows no decided drop of the noise "
                  "sensitivity as defined (x uniform) in either seed set, while sIF drops in both. Paper scale not "
                  "measured.",
              reads=("lif_snn_training",))
def _check_training_if(r: ledger.Reads) -> ledger.Evidence:
    return _training_evidence(r, "lif")
