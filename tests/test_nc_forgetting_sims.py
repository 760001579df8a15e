"""NC-forgetting simulations (sims/nc_forgetting/): buffers, calibration rows, logit masks and head accuracy
on hand-made inputs; one tiny end-to-end training through ``train_grid`` (same initialisation per seed
index, bitwise reruns); the parameter checks a user can trip over."""

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import nc_forgetting as S
from sims import runtime
from sims.nc_forgetting.common import dead_runs, evaluated
from theory import nc_forgetting as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "log_softmax_f64": (1e-12, "JAX runs in float64 here (tests/conftest.py): log_softmax of two equal logits "
                               "is log 2 up to a few roundings of 1.1e-16 (measured 0); float32 would be off "
                               "by ~3e-8"),
    "scale_free": (1e-10, "features times 1e-200 or 1e200 are rounded (1.1e-16 relative per entry) and "
                          "divided by their max (one more rounding); the metrics move by that times their "
                          "condition, measured <= 8.2e-15 relative, while a squared scale that under- or "
                          "overflows gives 0, inf or NaN"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


# --------------------------------------------------------------------------------------------------
# sims/nc_forgetting helpers (no training)
# --------------------------------------------------------------------------------------------------


def test_a_dead_network_is_left_out_of_the_evaluated_runs():
    """A run whose features are the same on every sample (a dead ReLU network: all 0, or any constant row)
    is not evaluated, whatever its position; a run with one differing sample is."""
    feats = np.random.default_rng(0).standard_normal((4, 6, 3))
    feats[1] = 0.0
    feats[3] = np.array([0.5, 0.0, 2.0])  # constant, not zero
    feats[2, :5] = 0.0  # one sample differs: alive
    assert dead_runs(feats).tolist() == [False, True, False, True]
    assert evaluated(4, dead_runs(feats)) == [0, 2] and evaluated(4) == [0, 1, 2, 3]


def test_buffer_count_is_zero_at_zero_at_least_one_and_monotone():
    assert S.buffer_count(120, 0.0) == 0
    percents = [0.0, 0.01, 0.5, 1.0, 2.0, 5.0, 20.0, 50.0, 99.0, 100.0]
    for n in (1, 7, 40, 125, 1000):
        counts = [S.buffer_count(n, p) for p in percents]
        assert counts[0] == 0 and all(c >= 1 for c in counts[1:]), counts
        assert all(a <= b <= n for a, b in itertools.pairwise(counts)), counts  # nested
        assert counts[-1] == n
    assert S.buffer_count(200, 5.0) == 10 and S.buffer_count(1000, 0.01) == 1


def _orders(per_class=20):
    y = np.repeat(np.arange(S.N_CLASSES), per_class)
    return y, S.class_orders(y, 0, 0)


def test_class_orders_are_permutations_of_each_class():
    y, orders = _orders()
    for c, o in enumerate(orders):
        np.testing.assert_array_equal(np.sort(o), np.flatnonzero(y == c))
    assert any(not np.array_equal(o, np.sort(o)) for o in orders)  # shuffled
    again = S.class_orders(y, 0, 0)
    other = S.class_orders(y, 0, 1)
    assert all(np.array_equal(a, b) for a, b in zip(orders, again))
    assert not all(np.array_equal(a, b) for a, b in zip(orders, other))


def test_session_rows_buffers_are_class_balanced_and_nested():
    y, orders = _orders()
    previous = None
    for p in (0.0, 5.0, 10.0, 25.0, 50.0, 100.0):
        cur, buf, held = S.session_rows(orders, p)
        assert len(cur) == len(buf) == S.N_TASKS and all(h.size == 0 for h in held)
        assert buf[0].size == 0
        for s in range(S.N_TASKS):
            assert set(y[cur[s]]) == {2 * s, 2 * s + 1} and cur[s].size == 40  # the whole task
            counts = np.bincount(y[buf[s]], minlength=S.N_CLASSES)
            np.testing.assert_array_equal(counts[: 2 * s], S.buffer_count(20, p))  # balanced, past only
            assert np.all(counts[2 * s:] == 0)
            assert np.unique(buf[s]).size == buf[s].size
            if s:
                assert set(buf[s - 1]) <= set(buf[s])  # a class keeps its samples across sessions
        if previous is not None:
            for s in range(S.N_TASKS):
                assert set(previous[s]) <= set(buf[s])  # nested across buffer sizes
        previous = buf


def test_session_rows_calibration_rows_are_never_trained_on():
    y, orders = _orders()
    for p in (10.0, 50.0, 100.0):
        cur, buf, held = S.session_rows(orders, p, calibration=0.5)
        plain_cur, plain_buf, _ = S.session_rows(orders, p)
        trained = set(np.concatenate(cur + buf).tolist())
        held_all = np.concatenate(held)
        assert held_all.size > 0 and not trained & set(held_all.tolist())
        m = S.buffer_count(20, p)
        for c in range(S.N_CLASSES):
            assert held[c].size == int(np.floor(0.5 * m)) and set(y[held[c]]) == {c}
        for c in range(8):  # equal memory: held-out + replayed rows = the plain buffer's rows of c
            memory = set(held[c].tolist()) | set(buf[-1][y[buf[-1]] == c].tolist())
            assert memory == set(plain_buf[-1][y[plain_buf[-1]] == c].tolist())
        for s in range(S.N_TASKS):  # the current task trains on everything but its held-out rows
            assert set(cur[s].tolist()) | set(np.concatenate([held[2 * s], held[2 * s + 1]]).tolist()) \
                == set(plain_cur[s].tolist())


def test_session_rows_joint_holds_every_class_in_every_session():
    y, orders = _orders()
    cur, buf, _ = S.session_rows(orders, 0.0, joint=True)
    assert len(cur) == len(buf) == S.N_TASKS and all(b.size == 0 for b in buf)
    for c in cur:
        np.testing.assert_array_equal(np.sort(c), np.arange(y.size))


def test_allowed_np_agrees_with_allowed_logits_everywhere():
    class_task = jnp.asarray(np.arange(S.N_CLASSES) // 2, jnp.int32)
    for setting in range(3):
        for session in range(S.N_TASKS):
            for task in range(S.N_TASKS):
                want = S.allowed_np(setting, session, task)
                for cls in (2 * task, 2 * task + 1):
                    got = S.allowed_logits(jnp.int32(setting), jnp.int32(cls), jnp.int32(session), class_task,
                                           class_task)
                    np.testing.assert_array_equal(np.asarray(got), want, err_msg=f"{setting} {session} {cls}")
    assert S.allowed_np(0, 4, 2).tolist() == [k in (4, 5) for k in range(10)]  # TIL: the task's pair
    assert S.allowed_np(1, 1, 0).sum() == 4 and S.allowed_np(2, 3, 3).sum() == 2


def test_target_of_and_masked_loss():
    cls = jnp.array([0, 3, 6, 9])
    np.testing.assert_array_equal(S.target_of(2, cls), [0, 1, 0, 1])
    np.testing.assert_array_equal(S.target_of(1, cls), cls)
    logits = jnp.zeros((4, 10))
    allowed = S.allowed_logits(jnp.int32(0), cls, jnp.int32(4), jnp.arange(10) // 2, jnp.arange(10) // 2)
    np.testing.assert_allclose(S.masked_loss(logits, allowed, S.target_of(0, cls)), np.log(2.0),
                               rtol=TOL["log_softmax_f64"])


def test_head_accuracy_on_a_hand_made_head():
    y = np.repeat(np.arange(10), 3)
    feats = np.eye(10)[y]  # one-hot features: the identity head is right everywhere
    W, b = np.eye(10), np.zeros(10)
    np.testing.assert_array_equal(S.head_accuracy(W, b, feats, y, 1, 4), np.ones(5))
    at2 = S.head_accuracy(W, b, feats, y, 1, 2)
    np.testing.assert_array_equal(at2[:3], 1.0)
    assert np.all(np.isnan(at2[3:]))  # tasks not yet seen
    b9 = b.copy()
    b9[9] = 5.0  # a recency bias toward class 9
    np.testing.assert_array_equal(S.head_accuracy(W, b9, feats, y, 1, 4), [0, 0, 0, 0, 0.5])  # CIL
    np.testing.assert_array_equal(S.head_accuracy(W, b9, feats, y, 0, 4), [1, 1, 1, 1, 0.5])  # TIL masks it
    np.testing.assert_array_equal(S.head_accuracy(W, b9, feats, y, 1, 3), [1, 1, 1, 1, np.nan])  # unseen
    # DIL: two shared logits, scored on class mod 2
    Wd = np.zeros((10, 10))
    Wd[0, 0::2], Wd[1, 1::2] = 1.0, 1.0
    np.testing.assert_array_equal(S.head_accuracy(Wd, b, feats, y, 2, 4), np.ones(5))
    np.testing.assert_array_equal(S.head_accuracy(-Wd, b, feats, y, 2, 4), np.zeros(5))


# --------------------------------------------------------------------------------------------------
# A tiny end-to-end training through train_grid
# --------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_training():
    data = S.digits_data(0.3, 0)
    tr = S.Trainer(widths=(8, 4), steps_per_task=3, batch_size=8, lr=0.05, momentum=0.9, weight_decay=5e-4,
                   replay_ratio=0.5)
    specs = [{"seed": s, "setting": st_, "schedule": h, "percent": p} for st_, h, p in
             [("cil", "concat", 0.0), ("cil", "concat", 20.0), ("til", "concat", 5.0), ("dil", "concat", 100.0),
              ("cil", "ratio", 20.0)] for s in (0, 1)]
    first = S.train_grid(tr, data, specs, 0, runtime.make_mesh())
    again = S.train_grid(tr, data, specs, 0, runtime.make_mesh())
    return specs, first, again


def test_tiny_training_same_seed_index_same_start(tiny_training):
    """Session 0 has an empty buffer and the same mask in every setting (classes 0, 1), so every
    concatenating run of one seed index, whatever its buffer size or setting, ends session 0 with the same
    parameters bit for bit: they started from the same initialisation and drew the same batches."""
    specs, (out, grid), _ = tiny_training
    leaves = jax.tree.leaves(out["params"])
    assert all(a.shape[:3] == (len(specs), S.N_TASKS, 1) for a in leaves)
    concat = [r for r, sp in enumerate(specs) if sp["schedule"] == "concat"]
    for s in (0, 1):
        rows = [r for r in concat if specs[r]["seed"] == s]
        for a in leaves:
            for r in rows[1:]:
                np.testing.assert_array_equal(a[r, 0], a[rows[0], 0])
        assert len({float(out["loss"][r, 0]) for r in rows}) == 1
    # different seed indices start differently; different buffers then diverge
    assert not np.array_equal(leaves[0][0, 0], leaves[0][1, 0])
    assert not np.array_equal(leaves[0][0, 1], leaves[0][2, 1])
    assert np.all(np.isfinite(out["loss"])) and np.all(out["loss"] > 0)
    # the buffer loss is 0 exactly when the buffer is empty (no replay, or session 0)
    empty = grid["runs"]["buf_n"] == 0
    assert np.all(empty[:, 0]) and np.all(empty[:2]) and not np.any(empty[2:, 1:])
    np.testing.assert_array_equal(out["buffer_loss"][empty], 0.0)
    assert np.all(out["buffer_loss"][~empty] > 0)


def test_tiny_training_reruns_are_bitwise_identical(tiny_training):
    _, (out, grid), (again, grid2) = tiny_training
    for a, b in zip(jax.tree.leaves(out), jax.tree.leaves(again)):
        np.testing.assert_array_equal(a, b)
    for k in grid["runs"]:
        np.testing.assert_array_equal(grid["runs"][k], grid2["runs"][k])


def test_run_grid_buffers_follow_the_specs(tiny_training):
    specs, (_, grid), _ = tiny_training
    data_y = S.digits_data(0.3, 0).y_train
    for r, sp in enumerate(specs):
        final = grid["buf_rows"][r]
        n_c = np.bincount(data_y, minlength=10)
        expect = [S.buffer_count(int(n_c[c]), sp["percent"]) for c in range(8)]
        np.testing.assert_array_equal(np.bincount(data_y[final], minlength=10)[:8], expect)
        assert grid["runs"]["buf_n"][r, -1] == final.size


# ---------------------------------------------------------------------------------------------------
# Input a user can get wrong (found by a fresh-clone trial)
# ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-200, 1e200])
def test_scale_free_quantities_survive_extreme_scales(scale):
    rng = np.random.default_rng(1)
    y = np.repeat(np.arange(3), 20)
    x = rng.standard_normal((60, 5)) + 3 * np.eye(3, 5)[y]
    for name, v in th.nc_metrics(x, y).items():
        np.testing.assert_allclose(th.nc_metrics(x * scale, y)[name], v, rtol=TOL["scale_free"], err_msg=name)
    np.testing.assert_allclose(th.snr(x[y == 0] * scale, x[y == 1] * scale), th.snr(x[y == 0], x[y == 1]),
                               rtol=TOL["scale_free"])
    np.testing.assert_allclose(th.effective_rank(x * scale), th.effective_rank(x), rtol=TOL["scale_free"])


def test_repeated_sweep_entries_are_refused():
    with pytest.raises(ValueError, match="datasets must not repeat"):
        S.SweepParams(datasets=("digits", "digits"))
    with pytest.raises(ValueError, match="settings must not repeat"):
        S.SweepParams(settings=("cil", "cil"))
    with pytest.raises(ValueError, match="needs runs with a held-out buffer"):
        S.SweepParams(head_correction="calibration")


def test_lda_heads_leave_a_dead_network_out(monkeypatch):
    """run_lda's heads on a dead network (features the same on every sample) are NaN, not a crash: an ER run's
    every head, and a calibration run's three heads (the radial correction's scale is 0/0 there), while the
    other runs' heads are measured. Two runs are made dead by zeroing their features."""
    from sims.nc_forgetting import buffers as B

    real = B.final_features

    def with_dead(widths, params, x):
        f = np.array(real(widths, params, x))
        f[[0, 3]] = 0.0  # ER run of seed 0; calibration run of seed 1 (runs: ER s0, ER s1, cal s0, cal s1)
        return f

    monkeypatch.setattr(B, "final_features", with_dead)
    p = B.LdaParams(datasets=("digits",), n_seeds=2, widths=(8, 4), steps_per_task=3, batch_size=8,
                    buffer_percents=(20.0,))
    out = B._lda_dataset(p, S.digits_data(p.digits_test_fraction, 0), 0, runtime.make_mesh())
    acc = out["accuracy_all"][0]  # [seeds, heads]
    cal = [B.LDA_HEADS.index(h) for h in ("calibration", "radial", "calibration_network")]
    assert np.all(np.isnan(acc[0]))
    assert np.all(np.isnan(acc[1, cal]))
    assert np.all(np.isfinite(acc[1, [B.LDA_HEADS.index(h) for h in ("network", "probe", "shrinkage")]]))
