"""A seed's numbers do not depend on how many devices run it: a small quick-scale config of every paper,
run end to end on 1 and on 4 simulated CPU devices, gives bitwise the same arrays.

The exceptions stay one program partitioned over the mesh: Monte Carlo means reduced across devices
(``runtime.mean_over_seeds``) and the MDM decomposition's losses over sharded data points. XLA compiles
such a program differently for another device count and the sums change order, so those arrays agree to
rounding (relative 1e-12: far below any standard error they carry, far above float64 rounding of sums of
a few thousand terms, about 1e-13); they are listed by name in ``ROUNDING``. The runtime rule that makes the rest bitwise (a fixed number of
entries per device per compiled call, ``runtime.chunk_size``, each device running the one-device program)
is tested quickly below and in ``tests/test_runtime.py``; the two slow tests run the real sims.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sims import runtime

ROOT = Path(__file__).resolve().parents[1]
# A small quick-scale config of each paper, chosen for each to pass its seeds through runtime.map_batch /
# map_seeds (and, for MDM, through a sharded decomposition).
CONFIGS = ["social_choice_ge_instance", "relu_dag_init_probability", "seesaw_large_batch",
           "neuromanifold_exposure", "mdm_variance_mirror", "lif_snn_time_varying",
           "nc_forgetting_buffer_stats"]
# Arrays reduced across devices: equal to rounding only (see the module docstring).
ROUNDING = {"mdm_variance_mirror": ("dec_",)}

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "cross_device_sum_rel": (1e-12, "the MDM decomposition's sums over 2048 sharded points are reordered on 4 "
                                    "devices: a worst case of ~2048 u = 2.3e-13 relative for sums of like-signed "
                                    "terms; measured max 9.2e-15 (dec_stats, quick scale, 1 vs 4 devices), far "
                                    "below the standard errors of A, B, C (>= 3% relative)"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _start(out: Path, devices: int) -> subprocess.Popen:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PBE_PROGRESS": "0",
           "XLA_FLAGS": f"--xla_force_host_platform_device_count={devices}"}
    return subprocess.Popen([sys.executable, "-m", "sims", *CONFIGS, "--out", str(out), "--force"], cwd=ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.mark.slow
def test_every_paper_is_bitwise_identical_on_one_and_four_devices(tmp_path):
    procs = {d: _start(tmp_path / f"d{d}", d) for d in (1, 4)}  # side by side: one core each
    for d, proc in procs.items():
        out, _ = proc.communicate(timeout=1800)
        assert proc.returncode == 0, f"{d} device(s):\n{out[-3000:]}"
    for name in CONFIGS:
        one, four = (np.load(tmp_path / f"d{d}" / "quick" / f"{name}.npz") for d in (1, 4))
        assert sorted(one.files) == sorted(four.files), name
        for key in one.files:
            a, b = one[key], four[key]
            assert a.shape == b.shape and a.dtype == b.dtype, (name, key)
            if key.startswith(ROUNDING.get(name, ())):
                np.testing.assert_allclose(a, b, rtol=TOL["cross_device_sum_rel"], atol=0, err_msg=f"{name}: {key}")
            else:
                assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), \
                    f"{name}: {key} differs between 1 and 4 devices"


def test_chunk_size_rule_does_not_read_the_device_count():
    """The default rule, typed in: ceil(n / 8) entries per device per call; an explicit per_device wins.
    It takes no mesh, so it cannot depend on the device count."""
    expected = {1: 1, 5: 1, 8: 1, 9: 2, 16: 2, 17: 3, 128: 16, 129: 17, 1000: 125, 1001: 126}
    assert {n: runtime.chunk_size(n) for n in expected} == expected
    assert runtime.chunk_size(1000, per_device=3) == 3
    with pytest.raises(ValueError, match="per_device"):
        runtime.chunk_size(10, per_device=0)
    with pytest.raises(ValueError):
        runtime.chunk_size(0)


@pytest.mark.parametrize("n, per_device", [(1, None), (40, None), (40, 7), (300, None)])
def test_batch_chunks_cover_every_row_once_then_pad_with_the_last(n, per_device):
    mesh = runtime.make_mesh(1)
    chunks = runtime.batch_chunks(n, mesh, per_device)
    k = runtime.chunk_size(n, per_device)
    assert all(c.shape == (k,) for c in chunks)
    rows = np.concatenate(chunks)
    assert np.array_equal(rows[:n], np.arange(n)) and np.all(rows[n:] == n - 1)
    assert rows.size - n < k  # padding only in the last call


_LM_SCRIPT = """
import sys
import numpy as np
from sims import runtime
runtime.setup()
import jax
from sims.seesaw import lm
p = lm.LMParams(n_chars=100000, seq_len=32, d_model=32, n_heads=2, n_layers=2, batch_sizes=(8,),
                total_tokens=20000, n_seeds=3, n_evals=2, val_windows=16, noise_scale_batches=4, lr=1e-2)
text = lm.stdlib_text(p.n_chars)
data = (jax.numpy.asarray(text[:90000]), jax.numpy.asarray(text[90000:]))
out = {d: lm.train_lm(p, 8, "cosine", 0, runtime.make_mesh(d), data) for d in (1, 4)}
np.savez(sys.argv[1], **{f"{k}{d}": v for d, r in out.items() for k, v in r.items()})
"""


@pytest.mark.slow
def test_seesaw_lm_training_loop_is_bitwise_identical_on_one_and_four_devices(tmp_path):
    """The Seesaw LM keeps its own training loop (state between evaluations): each device trains its own
    seeds with the one-device programs, so 3 seeds (padded to 4 devices) train to the same bits as on one."""
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PBE_PROGRESS": "0",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=4"}
    r = subprocess.run([sys.executable, "-c", _LM_SCRIPT, str(tmp_path / "lm.npz")], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=900, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    res = np.load(tmp_path / "lm.npz")
    assert res["val_loss1"].shape == (3, 3)
    for k in ("val_loss", "noise_scale"):
        assert np.array_equal(res[f"{k}1"], res[f"{k}4"]), k
