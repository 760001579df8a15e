"""The neural-collapse forgetting claims decide on what they are given: synthetic figure results (no
training) where the answer is known, through the one route (``ledger.figure_result``, monkeypatched)."""

from __future__ import annotations

import numpy as np
import pytest

from claims import ledger
from claims import nc_forgetting as C

P = np.array([0.0, 1.0, 5.0, 20.0, 100.0])
SETTINGS = np.array(["til", "cil", "dil"])


def _sweep(gap_by_setting: dict, deep_by_setting: dict | None = None, n: int = 6, seed: int = 0) -> dict:
    """A buffer_sweep result with F_shallow = deep + gap and F_deep = deep per (setting, buffer), plus
    per-seed noise of 0.3 pp; every task is learned at accuracy 1."""
    rng = np.random.default_rng(seed)
    D, S, H, B = 2, len(SETTINGS), 1, P.size
    head = np.full((D, S, H, B, n, 5, 5), np.nan)
    probe = np.full_like(head, np.nan)
    for s, name in enumerate(SETTINGS):
        g = np.asarray(gap_by_setting[name], float)  # [B]
        dp = np.zeros(B) if deep_by_setting is None else np.asarray(deep_by_setting[name], float)
        for i in range(5):
            for j in range(i + 1):
                head[:, s, :, :, :, i, j] = 1.0
                probe[:, s, :, :, :, i, j] = 1.0
        noise = 0.003 * rng.standard_normal((D, H, B, n, 4))
        probe[:, s, :, :, :, 4, :4] = 1.0 - dp[None, None, :, None, None] + noise
        head[:, s, :, :, :, 4, :4] = 1.0 - dp[None, None, :, None, None] - g[None, None, :, None, None] + noise
    return {"datasets": np.array(["digits", "gaussian"]), "settings": SETTINGS, "schedules": np.array(["concat"]),
            "buffer_percents": P, "head_acc": head, "probe_acc": probe}


META = {"config": {"n_seeds": 6, "widths": [8], "steps_per_task": 1, "lr": 0.1, "momentum": 0.0,
                   "weight_decay": 1e-3, "batch_size": 4, "probe_C": 10.0, "probe_standardize": True}}


@pytest.fixture
def serve(monkeypatch):
    def use(arrays):
        monkeypatch.setattr(ledger, "figure_result", lambda name, scale: (arrays, META))
    return use


def test_forgetting_is_the_drop_from_learned_to_final():
    a = _sweep({"til": [0.1] * 5, "cil": [0.4, 0.5, 0.2, 0.05, 0.0], "dil": [0.1] * 5},
               {"til": [0.0] * 5, "cil": [0.3] * 5, "dil": [0.0] * 5})
    fs, fd = C.forgetting(a, 0, 1, 0)
    np.testing.assert_allclose(fd.mean(axis=1), 0.3, atol=0.01)
    np.testing.assert_allclose(fs.mean(axis=1), 0.3 + np.array([0.4, 0.5, 0.2, 0.05, 0.0]), atol=0.01)


def test_deep_le_shallow_holds_when_the_head_forgets_more(serve):
    serve(_sweep({"til": [0.05, 0.03, 0.02, 0.01, 0.0], "cil": [0.5, 0.6, 0.2, 0.05, 0.0],
                  "dil": [0.1, 0.1, 0.05, 0.01, 0.0]}))
    ev = C._check_deep_le_shallow("quick")
    assert ev.verdict == "holds" and all(c.rejected for c in ev.controls)


def test_deep_le_shallow_fails_when_the_probe_forgets_more_somewhere(serve):
    # TIL at 5%: the features forget 10 pp more than the head (a re-fitted head would do worse)
    serve(_sweep({"til": [0.05, 0.03, -0.10, 0.01, 0.0], "cil": [0.5, 0.6, 0.2, 0.05, 0.0],
                  "dil": [0.1, 0.1, 0.05, 0.01, 0.0]}))
    ev = C._check_deep_le_shallow("quick")
    assert ev.verdict == "fails" and ev.measured["fails"] == 2  # one case per data set


def test_deep_le_shallow_rejects_nothing_when_the_head_never_fails(serve):
    """Without a head failure in CIL the reversed-inequality control is accepted: the claim cannot hold."""
    serve(_sweep({"til": [0.0] * 5, "cil": [0.0] * 5, "dil": [0.0] * 5}))
    ev = C._check_deep_le_shallow("quick")
    assert ev.verdict == "fails" and not any(c.rejected for c in ev.controls)


def test_head_needs_big_buffer_fails_when_the_gap_never_closes(serve):
    serve(_sweep({"til": [0.05, 0.03, 0.02, 0.01, 0.0], "cil": [0.5, 0.6, 0.2, 0.1, 0.1],
                  "dil": [0.1, 0.1, 0.05, 0.03, 0.0]}))
    assert C._check_head_needs_big_buffer("quick").verdict == "fails"
    serve(_sweep({"til": [0.05, 0.03, 0.02, 0.01, 0.0], "cil": [0.5, 0.6, 0.2, 0.1, 0.0],
                  "dil": [0.1, 0.1, 0.05, 0.03, 0.0]}))
    assert C._check_head_needs_big_buffer("quick").verdict == "holds"


def test_log_snr_ratio_counts_dead_features_at_the_floor():
    snr = np.full((1, 3, 1, 2, 3, 5, 5), np.nan)
    for i in range(5):
        for j in range(i + 1):
            snr[..., i, j] = 4.0 if i == j else 1.0
    snr[0, 1, 0, 0, :, 4, 0] = 0.0  # task 0's two classes collapsed onto one point
    a = {"snr": snr}
    lr = C.log_snr_ratio(a, 0, 1, 0)  # [B, N]
    np.testing.assert_allclose(lr[1], np.log(0.25))
    np.testing.assert_allclose(lr[0], (np.log(C.SNR_FLOOR / 4) + 3 * np.log(0.25)) / 4)


def test_isotropic_control_gives_no_identity_gap():
    gap = C.isotropic_identity_gap()
    assert gap.shape == (5,) and abs(gap.mean()) < 0.02
