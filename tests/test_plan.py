"""The paper-scale planner's core (sims/plan.py, runtime.planning): FLOPs against hand counts from the shapes,
loops multiplied out, calls counted as the run makes them, nothing run, sizes refused before compiling."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sims import cli, plan, runtime
from sims.config import param, smoke_params

M, K, L, B = 6, 5, 7, 3  # matrix rows, width, scan length, vmapped batch: all distinct, so a swap shows

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "roundoff_f64": (1e-12, "the roofline estimates and the power/exponential extrapolations are a dozen "
                            "float64 operations (divisions, log, pow), each one rounding of 1.1e-16 relative: "
                            "below ~3e-15 (measured 0 on these inputs); the launch overhead alone is 1e-5 of "
                            "these estimates, so a dropped term fails by far"),
    "float32_tanh": (1e-6, "tanh(2K) = tanh(10) evaluated in float32 (the products of ones and twos are exact) "
                           "is within an ulp or two of 1 (float32 eps 1.2e-7) and the float64 reference is "
                           "1 - 4e-9 (measured 4.1e-9 relative); the planner's zeros are off by 1"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _chain(x, w):
    """L steps of x <- x @ w: 2 M K K FLOPs a step (a K-wide multiply-add per output entry)."""
    def step(c, _):
        return c @ w, None

    return jax.lax.scan(step, x, None, length=L)[0]


def test_scan_flops_are_multiplied_by_length_and_batch():
    x = jax.ShapeDtypeStruct((B, M, K), jnp.float32)
    w = jax.ShapeDtypeStruct((K, K), jnp.float32)
    cost = plan.jaxpr_cost(jax.make_jaxpr(jax.vmap(_chain, in_axes=(0, None)))(x, w))
    assert cost.flops_f32 == B * L * 2 * M * K * K
    assert cost.flops_f64 == 0
    # bytes: each step reads the batched c [B,M,K] and w [K,K] (once) and writes c [B,M,K], float32
    assert cost.bytes == L * 4 * (2 * B * M * K + K * K)
    assert cost.while_loops == 0 and not cost.approximated
    assert cost.serial_steps == L  # vmap batches inside the loop: still L steps one after another


def test_float64_flops_are_counted_apart():
    x = jax.ShapeDtypeStruct((M, K), jnp.float64)
    w = jax.ShapeDtypeStruct((K, K), jnp.float64)
    cost = plan.jaxpr_cost(jax.make_jaxpr(_chain)(x, w))
    assert cost.flops_f64 == L * 2 * M * K * K and cost.flops_f32 == 0


def test_cond_takes_its_costliest_branch_and_while_is_flagged():
    def f(p, x, w):
        y = jax.lax.cond(p, lambda a: a @ w @ w, lambda a: a @ w, x)  # 2 matmuls vs 1
        return jax.lax.while_loop(lambda c: c[0, 0] < 1.0, lambda c: c @ w, y)

    x, w = jnp.ones((M, K), jnp.float32), jnp.ones((K, K), jnp.float32)
    cost = plan.jaxpr_cost(jax.make_jaxpr(f)(True, x, w))
    # two matmuls from the costlier branch, one from the while body (counted once, flagged)
    assert cost.flops_f32 >= 3 * 2 * M * K * K
    assert cost.flops_f32 < 4 * 2 * M * K * K
    assert cost.while_loops == 1


_TRACES: list[int] = []  # a global, not a closure value (closure values are part of a stage's key)


def test_planning_counts_calls_runs_nothing_and_returns_zero_outputs():
    calls = _TRACES
    calls.clear()

    def body(x, w):
        _TRACES.append(1)  # runs at trace time only
        return jnp.tanh(x @ w)

    step = runtime.jit(body, name="step")
    rec = plan.Recorder()
    x, w = np.ones((M, K), np.float32), np.full((K, K), 2.0, np.float32)
    with runtime.planning(rec):
        for _ in range(4):
            x = step(x, w)
    assert len(rec.stages) == 1
    (stage,) = rec.stages.values()
    assert stage.name == "step" and stage.calls == 4
    assert stage.cost.flops_f32 == 2 * M * K * K + M * K  # the matmul and one tanh per entry
    assert stage.peak_bytes > 0 and not stage.problems
    assert isinstance(x, np.ndarray) and x.shape == (M, K) and not x.any()  # zeros, not tanh(...)
    assert len(calls) == 1  # traced once, never executed again
    # outside planning the same function runs
    assert np.allclose(step(np.ones((M, K), np.float32), w), np.tanh(2.0 * K), rtol=TOL["float32_tanh"], atol=0)


def _theory_style(x, w, chunk):
    """A theory function that compiles a closure with plain ``jax.jit`` when called (theory/ cannot use
    runtime.jit), and calls it with a Python int, as theory.mdm_variance's chunked estimators do."""
    return jax.jit(lambda a, b, i: jnp.tanh(a @ b) * i)(x, w, chunk)


def test_planned_theory_jits_plans_a_theory_closure_and_leaves_a_normal_run_alone():
    x, w = np.ones((M, K), np.float32), np.full((K, K), 2.0, np.float32)
    rec = plan.Recorder()
    with runtime.planning(rec):
        with runtime.planned_theory_jits("chunks"):
            outs = [_theory_style(x, w, i) for i in (1, 2, 3)]
        assert jax.jit is not None and not isinstance(jax.jit(lambda a: a), runtime.Plannable)  # restored
    (stage,) = rec.stages.values()  # three Python ints, one signature: one stage of three calls
    assert stage.name.startswith("chunks: ") and stage.calls == 3
    assert stage.cost.flops_f32 >= 2 * M * K * K
    assert all(isinstance(o, np.ndarray) and not o.any() for o in outs)  # planned, not run
    with runtime.planned_theory_jits("chunks"):  # not planning: the closure runs
        assert np.allclose(_theory_style(x, w, 3), 3 * np.tanh(2.0 * K), rtol=TOL["float32_tanh"], atol=0)


def test_map_seeds_is_planned_under_its_function_name():
    def per_seed(key, v):
        return jax.random.normal(key, (K,)) @ v

    rec = plan.Recorder()
    with runtime.planning(rec):
        out = runtime.map_seeds(per_seed, 0, 5, jnp.ones((K, M)))
    assert out.shape == (5, M) and not out.any()
    (stage,) = rec.stages.values()
    # ceil(5 / 8) = 1 seed per device per call (runtime.chunk_size): ceil(5 / devices) calls, each of one
    # [K] @ [K, M] product per device
    d = jax.device_count()
    assert "per_seed" in stage.name and stage.calls == -(-5 // d)
    assert stage.cost.flops >= d * 2 * K * M


def test_an_array_beyond_the_accelerator_is_refused_before_compiling():
    big = runtime.jit(lambda s: jnp.zeros((10**6, 10**6), jnp.float32) + s, name="big")  # 4 TB
    rec = plan.Recorder()
    with runtime.planning(rec), pytest.raises(plan.Unrunnable, match="big: an array of 4e\\+03 GB"):
        big(np.float32(1.0))
    (stage,) = rec.stages.values()
    assert stage.compile_s == 0 and stage.peak_bytes == 0  # refused before compiling


def test_estimate_is_the_roofline_bound_per_call():
    cost = plan.Cost(flops_f32=67e12, flops_f64=34e12, bytes=4.8e12)  # 1 s + 1 s compute, 1 s memory
    stage = plan.Stage("s", 3, cost, 0, 0.0, [])
    assert stage.seconds(1) == pytest.approx(3 * (2.0 + plan.LAUNCH_S), rel=TOL["roundoff_f64"])
    assert stage.seconds(8) == pytest.approx(3 * (2.0 / 8 + plan.LAUNCH_S), rel=TOL["roundoff_f64"])
    looped = plan.Stage("l", 2, dataclasses.replace(cost, serial_steps=1000), 0, 0.0, [])
    assert looped.seconds(8) == pytest.approx(2 * (2.0 / 8 + plan.LAUNCH_S + 1000 * plan.STEP_S),
                                              rel=TOL["roundoff_f64"])


def test_extrapolation_by_power_and_exponential_laws():
    x = cli.Extrapolate("n", (10, 20), "power")
    pred, note = plan.extrapolate(x, 40, (1.0, 8.0))  # t = c n^3
    assert pred == pytest.approx(64.0, rel=TOL["roundoff_f64"]) and "a = 3.00" in note
    pred, _ = plan.extrapolate(x, (10, 20, 40), (1.0, 8.0))  # a sweep: the sum of its points
    assert pred == pytest.approx(1 + 8 + 64, rel=TOL["roundoff_f64"])
    pred, _ = plan.extrapolate(cli.Extrapolate("n", (3, 5), "exponential"), 9, (1.0, 4.0))  # t = c 2^n
    assert pred == pytest.approx(64.0, rel=TOL["roundoff_f64"])  # 2^(9 - 3)
    with pytest.raises(ValueError, match="law"):
        plan.extrapolate(cli.Extrapolate("n", (3, 5), "cubic"), 9, (1.0, 4.0))


@dataclasses.dataclass(frozen=True)
class _Params:
    steps: int = param(1000, ge=1, smoke=3)
    widths: tuple[int, ...] = param((8, 16, 32), smoke=1)
    n_seeds: int = param(50, ge=1)
    lr: float = param(0.1, gt=0)


def test_smoke_params_truncate_marked_loops_and_seeds_only():
    p = smoke_params(_Params())
    assert (p.steps, p.widths, p.n_seeds, p.lr) == (3, (8,), 2, 0.1)
    assert smoke_params(_Params(steps=2, n_seeds=1)).steps == 2  # never grows a loop


def test_plan_cli_refuses_bad_input_with_one_line():
    for args in (["plan", "--devices", "0"], ["plan", "seesaw_equivalnce"]):
        r = subprocess.run([sys.executable, "-m", "sims", *args], capture_output=True, text=True, check=False)
        assert r.returncode == 2
        assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert "did you mean 'seesaw_equivalence'" in r.stderr


def test_a_run_keeps_the_plans_estimate_beside_its_measured_time(tmp_path):
    p = plan.Plan("fig_a", "paper", 8, [plan.Stage("s", 2, plan.Cost(flops_f32=67e12), 0, 0.0, [])], 3.0, "")
    (tmp_path / "reports" / "paper").mkdir(parents=True)
    (tmp_path / "reports" / "paper" / "plan.json").write_text(json.dumps([plan.plan_dict(p)]))
    got = cli.planned_estimate("fig_a", "paper", root=tmp_path)
    assert got == {"estimate_s": pytest.approx(2 * (1 / 8 + plan.LAUNCH_S), rel=TOL["roundoff_f64"]),
                   "host_s": 3.0, "devices": 8, "accelerator": plan.ACCELERATOR.name}
    assert cli.planned_estimate("fig_b", "paper", root=tmp_path) is None  # not planned
    (tmp_path / "reports" / "paper" / "plan.json").write_text("{broken")
    assert cli.planned_estimate("fig_a", "paper", root=tmp_path) is None


def test_calls_of_one_code_with_different_captured_settings_are_costed_apart():
    def make(width):
        return runtime.jit(lambda x: jnp.ones((width, width)) @ x, name="layer")

    rec = plan.Recorder()
    with runtime.planning(rec):
        for width in (4, 8, 8):
            make(width)(np.ones((width, 2)))
        step = runtime.jit(lambda x, t: x * t, name="scale")
        for t in (0.5, 1.5, 2.5):  # a traced Python scalar: one compiled function, three calls
            step(np.ones(3), t)
    by = {(s.name, s.calls, s.cost.flops) for s in rec.stages.values()}
    assert by == {("layer", 1, 2 * 4 * 4 * 2), ("layer", 2, 2 * 8 * 8 * 2), ("scale", 3, 3)}


def test_a_normal_call_beyond_the_machine_is_refused_before_compiling():
    big = runtime.jit(lambda s: jnp.zeros((10**7, 10**7), jnp.float32) + s, name="huge")  # 400 TB
    with pytest.raises(runtime.ResourceError, match=r"huge: an array of 4e\+05 GB > [0-9.e+]+ GB of this device's memory"):
        big(np.float32(1.0))
    small = runtime.jit(lambda s: jnp.zeros((3, 3), jnp.float32) + s, name="small")
    assert np.allclose(small(np.float32(2.0)), 2.0, rtol=0, atol=0)  # checked once, then run as jax.jit (exact)


def test_a_config_beyond_the_machine_is_one_line_exit_2(tmp_path):
    src = (cli.CONFIGS / "lif_snn_depth.yaml").read_text()
    quick = src.split("\nquick:\n", 1)[1].split("\npaper:", 1)[0]
    widths = next(ln for ln in quick.splitlines() if ln.strip().startswith("widths:"))
    cfg = tmp_path / "lif_snn_depth.yaml"
    cfg.write_text(src.replace(widths, "  widths: [1000000000]", 1))
    r = subprocess.run([sys.executable, "-m", "sims.lif_snn", "--config", str(cfg), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, check=False, env={**os.environ, "PBE_PROGRESS": "0"},
                       cwd=cli.REPO)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert "quick (sizes)" in line and "GB" in line and "python -m sims plan lif_snn_depth" in line
