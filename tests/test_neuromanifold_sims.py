"""Neuromanifold simulations (sims/neuromanifold.py) at toy size, and the exposure dynamics vmapped over seeds
on 2 simulated devices (the linear algebra that must not hang under vmap on CPU)."""

from __future__ import annotations

import numpy as np
import pytest

from sims import neuromanifold as sim


def test_dimensions_experiment_toy(toy_ctx):
    p = sim.DimensionsParams(max_width=2, depths=(2, 3), max_per_depth=(100000,),
                             activations=("x3+x2", "monomial x3"), n_points=2)
    out = sim.run_dimensions(p, toy_ctx(p, "neuromanifold"))
    assert out["exact_rank"].shape == (2, 8 + 16)
    np.testing.assert_array_equal(out["exact_rank"], out["numeric_rank"])
    assert np.all(out["exact_rank"] <= np.minimum(out["n_params"][None], out["ambient"]))
    i = [tuple(w[:3]) for w in out["widths"]].index((2, 2, 1))
    assert out["exact_rank"][0, i] == 6 and out["exact_rank"][1, i] == 4
    with pytest.raises(ValueError, match="unknown activations"):
        sim.DimensionsParams(activations=("relu",))


_VMAPPED_DYNAMICS = """
from sims import runtime
runtime.setup()
import numpy as np
import theory.neuromanifold as nm
assert len(runtime.jax.devices()) == 2
fn = nm.exposure_trial_fn(*nm.COMPARED_MLP, n_restarts=3, n_steps=30)
out = runtime.map_seeds(fn, 7, 6, mesh=runtime.make_mesh())
assert out["loss"].shape[0] == 6 and np.all(np.isfinite(out["loss"])), out["loss"]
print("ok")
"""


def test_exposure_dynamics_vmapped_over_seeds_on_two_devices_finishes():
    """Levenberg-Marquardt solves vmapped over seeds and sharded over 2 simulated CPU devices: the pattern
    that hangs with LAPACK solves on 2 cores (theory.numerics.spd_solve has none); a hang fails here."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=2", "JAX_PLATFORMS": "cpu"}
    r = subprocess.run([sys.executable, "-c", _VMAPPED_DYNAMICS], env=env, capture_output=True, text=True,
                       timeout=240, cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]


def test_exposure_experiment_toy(toy_ctx):
    p = sim.ExposureParams(n_targets=6, mlp_restarts=4, mlp_steps=200, cnn_restarts=2, cnn_steps=60)
    out = sim.run_exposure(p, toy_ctx(p, "neuromanifold"))
    assert out["mlp_critical"].shape == (6,) and out["cnn_pruned_grad"].shape == (6, 4)
    # P(no critical subnetwork among 6 targets) ~ 0.1^6 at the measured rate 0.9.
    assert out["mlp_critical"].sum() >= 1
    assert np.all(out["mlp_full_grad"][out["mlp_critical"]] < p.tol)
    assert not out["cnn_critical"].any()


def test_sparsity_experiment_toy(toy_ctx):
    p = sim.SparsityParams(n_runs=8, n_steps=50, thresholds=(0.1, 0.01))
    out = sim.run_sparsity(p, toy_ctx(p, "neuromanifold"))
    for k in ("mlp", "cnn"):
        d = out[f"{k}_distance"]
        assert d.shape == (8,) and np.all((d >= 0) & (d <= 1))
        assert out[f"{k}_share"].shape == (2,) and out[f"{k}_share"][0] >= out[f"{k}_share"][1]
