"""The sharded runtime: same draws and per-seed results on 1, 2, 4, 8 devices (Monte Carlo means reduced
across devices equal to rounding), bit-identical reruns,
a two-process jax.distributed run on localhost that agrees with one process; ``map_batch`` equals a Python
loop and is identical on 8 simulated devices vs 1."""

import ast
import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import threadpoolctl
from filelock import FileLock

from sims import runtime, xla

REPO = Path(__file__).resolve().parent.parent
WORKER = str(REPO / "tests" / "_sweep_worker.py")

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "sum_order": (1e-12, "a mean over 13 or 37 seeds summed in another order (per-device partial sums, the psum "
                         "across devices or processes, numpy's pairwise sum): <= n eps times the cancellation "
                         "sum|x| / |sum x| <= ~8 here, <= 7e-14 (measured <= 4.1e-16)"),
    "chan_se": (1e-9, "the SE by Chan's combination of per-device (count, mean, M2) against another device count or "
                      "numpy's two-pass: ~n eps with mean / sd <= ~2, no cancellation (measured equal); the "
                      "1e8-mean case below shows where cancellation starts to cost"),
    "same_program": (1e-12, "per-seed risk paths of the same 64-step program run on another process: the same bits "
                            "in practice (measured equal), 1e-12 allows a different compile of it"),
    "big_mean": (1e-14, "a mean of <= 256 values near 1e8 summed in another order, no cancellation: ~log2(256) eps "
                        "(measured <= 4.5e-16)"),
    "big_mean_se": (1e-6, "values 1e8 + 1e-3 z carry ulp(1e8) = 1.5e-8, 1.5e-5 of their spread; Chan's combination "
                          "against numpy's two-pass then differs by <= 7.8e-10 (measured, meshes 1, 3, 8), while "
                          "E[x^2] - mean^2 cancels to 0"),
    "vmap_vs_single": (1e-14, "the same per-item arithmetic (a 4-term dot, tanh) run vmapped, chunked or alone: "
                              "XLA may vectorise tanh differently, a few ulp (measured equal)"),
    "fma_contraction": (1e-12, "XLA's level 3 fuses multiply-adds, moving last bits: measured draws 3.5e-16, 64-step "
                               "risk paths 1.1e-15, means 2.2e-16"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


def _start(out, sizes, env_extra, n_proc=1):
    """Start the sweep worker (``n_proc`` processes of one run) writing ``out``; :func:`_finish` collects it."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu", **env_extra}
    procs = []
    for pid in range(n_proc):
        e = dict(env)
        if n_proc > 1:
            e["PBE_PROCESS_ID"] = str(pid)
        procs.append(subprocess.Popen([sys.executable, WORKER, str(out), *map(str, sizes)], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return out, procs


def _finish(started):
    out, procs = started
    for p in procs:
        log, _ = p.communicate(timeout=300)
        assert p.returncode == 0, log[-3000:]
    return dict(np.load(out))


def _run(out, sizes, env_extra, n_proc=1):
    return _finish(_start(out, sizes, env_extra, n_proc))


EIGHT = "--xla_force_host_platform_device_count=8"


@pytest.fixture(scope="module")
def eight(tmp_path_factory, worker_id):
    """Three runs of the worker: the 8-device sweep and, beside it, the same at XLA's default optimisation
    level 3 (the process's level is 0 on the CPU); then the sweep's rerun, which reads the programs the
    first run left in the persistent compilation cache, as a user's rerun does (compiling the same programs
    a second time, side by side, checked nothing a rerun needs: on an empty cache a worker takes 20 s of
    CPU, reading the cache 7 s).

    Made once per test session: under pytest-xdist the first test process to need it runs the workers and
    the others wait on a lock and read its files (pytest-xdist's recipe for a fixture made once)."""
    root = tmp_path_factory.getbasetemp()
    d = (root.parent if worker_id != "master" else root) / "eight"
    d.mkdir(exist_ok=True)
    names = ("a.npz", "b.npz", "opt3.npz")
    with FileLock(str(d / ".lock")):
        if not (d / "done").exists():
            opt3 = _start(d / "opt3.npz", [1, 8], {"XLA_FLAGS": f"{EIGHT} --xla_backend_optimization_level=3"})
            _run(d / "a.npz", [1, 2, 4, 8], {"XLA_FLAGS": EIGHT})
            rerun = _start(d / "b.npz", [1, 2, 4, 8], {"XLA_FLAGS": EIGHT})
            _finish(opt3)
            _finish(rerun)
            (d / "done").touch()
    return tuple(dict(np.load(d / n)) for n in names)


def test_eight_simulated_devices_draw_bit_identical_numbers(eight):
    first = eight[0]
    assert int(first["device_count"]) == 8
    for n in (2, 4, 8):
        np.testing.assert_array_equal(first[f"draws{n}"], first["draws1"])


def test_results_agree_across_device_counts(eight):
    """map_seeds' SGD risk paths: bitwise (a fixed number of seeds per device per call, runtime.chunk_size);
    mean_over_seeds: to rounding (each device's share and the psum's order change with the count)."""
    first = eight[0]
    for n in (2, 4, 8):
        np.testing.assert_array_equal(first[f"paths{n}"], first["paths1"])
        np.testing.assert_allclose(first[f"mean{n}"], first["mean1"], rtol=TOL["sum_order"], atol=0)
        np.testing.assert_allclose(first[f"se{n}"], first["se1"], rtol=TOL["chan_se"], atol=0)


def test_reruns_are_bit_identical(eight):
    first, again, _ = eight
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])


def test_in_process_single_device_matches_worker(eight):
    """The test process itself (1 device) draws the same numbers as the 8-device worker."""
    first = eight[0]
    draws = runtime.map_seeds(lambda k: jax.random.normal(k, (5,)), 3, 13)
    np.testing.assert_array_equal(draws, first["draws8"])


def test_seed_draws_do_not_depend_on_sweep_size():
    small = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 0, 4)
    large = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 0, 11)
    np.testing.assert_array_equal(small, large[:4])


def test_mean_over_seeds_matches_numpy():
    vals = runtime.map_seeds(lambda k: jax.random.normal(k, (2,)), 5, 37)
    mean, se = runtime.mean_over_seeds(lambda k: jax.random.normal(k, (2,)), 5, 37)
    np.testing.assert_allclose(mean, vals.mean(0), rtol=TOL["sum_order"])
    np.testing.assert_allclose(se, vals.std(0, ddof=1) / np.sqrt(37), rtol=TOL["chan_se"])


def test_float64_is_on():
    assert jax.config.jax_enable_x64
    assert jax.numpy.zeros(()).dtype == np.float64


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="n_seeds"):
        runtime.map_seeds(lambda k: k, 0, 0)
    with pytest.raises(ValueError, match="n_devices"):
        runtime.make_mesh(10_000)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_process_distributed_run_matches_one_process(tmp_path, eight):
    """Two jax.distributed processes on localhost CPU (one device each): float64 on in both, same draws
    bit for bit and the same results to rounding as one process; only process 0 writes."""
    env = {"PBE_DISTRIBUTED": "1", "PBE_COORDINATOR": f"127.0.0.1:{_free_port()}",
           "PBE_NUM_PROCESSES": "2"}
    two = _run(tmp_path / "two.npz", [2], env, n_proc=2)
    first = eight[0]
    assert int(two["process_count"]) == 2 and int(two["device_count"]) == 2
    np.testing.assert_array_equal(two["draws2"], first["draws1"])
    np.testing.assert_allclose(two["paths2"], first["paths1"], rtol=TOL["same_program"], atol=0)
    np.testing.assert_allclose(two["mean2"], first["mean1"], rtol=TOL["sum_order"], atol=0)


def _big_mean_small_spread(k):
    """Values of mean 1e8 and spread 1e-3: E[x^2] - mean^2 cancels to 0 in float64."""
    return 1e8 + 1e-3 * jax.random.normal(k, (3,))


@pytest.mark.parametrize("n_seeds", [256, 250, 2])
def test_mean_over_seeds_stderr_survives_a_large_mean(n_seeds):
    """Default mesh: the standard error matches numpy's two-pass std(ddof=1)/sqrt(n) to rel 1e-6."""
    vals = runtime.map_seeds(_big_mean_small_spread, 7, n_seeds)
    mean, se = runtime.mean_over_seeds(_big_mean_small_spread, 7, n_seeds)
    np.testing.assert_allclose(mean, vals.mean(0), rtol=TOL["big_mean"])
    np.testing.assert_allclose(se, vals.std(0, ddof=1) / np.sqrt(n_seeds), rtol=TOL["big_mean_se"])
    assert np.all(se > 0)


_STDERR_SCRIPT = """
import sys
import numpy as np
from sims import runtime
runtime.setup()
import jax
from tests.test_runtime import TOL
assert jax.device_count() == 8
fn = lambda k: 1e8 + 1e-3 * jax.random.normal(k, (3,))
for n in (256, 250, 13, 3, 1):  # 3: five of the eight devices hold only padded seeds
    for size in (8, 3):
        mesh = runtime.make_mesh(size)
        vals = runtime.map_seeds(fn, 7, n, mesh=mesh)
        mean, se = runtime.mean_over_seeds(fn, 7, n, mesh=mesh)
        want = vals.std(0, ddof=1) / np.sqrt(n) if n > 1 else np.zeros(3)
        assert np.all(np.isfinite(mean)) and np.all(np.isfinite(se)), (n, size, mean, se)
        np.testing.assert_allclose(mean, vals.mean(0), rtol=TOL["big_mean"], err_msg=f"n={n} size={size}")
        np.testing.assert_allclose(se, want, rtol=TOL["big_mean_se"], err_msg=f"n={n} size={size}")
print("ok")
"""


def test_mean_over_seeds_stderr_on_eight_devices_with_padding():
    """Eight simulated devices, meshes of 8 and 3, n_seeds not a multiple of the mesh size (and a mesh
    where some devices hold only padded seeds): Chan's combination agrees with numpy's two-pass."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    r = subprocess.run([sys.executable, "-c", _STDERR_SCRIPT], env=env, capture_output=True, text=True,
                       timeout=300, check=False)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


@pytest.mark.parametrize("call", ["seed_indices", "map_seeds", "mean_over_seeds"])
@pytest.mark.parametrize("n", [2**31, 2**40])
def test_n_seeds_beyond_int32_indices_is_refused(call, n):
    def fn(k):
        return jax.random.normal(k, ())

    with pytest.raises(ValueError, match=r"2\*\*31"):
        if call == "seed_indices":
            runtime.seed_indices(n, runtime.make_mesh())
        else:
            getattr(runtime, call)(fn, 0, n)


def test_mean_over_seeds_refuses_no_seeds():
    with pytest.raises(ValueError, match="n_seeds"):
        runtime.mean_over_seeds(lambda k: jax.random.normal(k, ()), 0, 0)


def test_largest_config_seed_is_a_valid_key():
    """sims.config accepts seeds in [0, 2**63 - 1]: the largest one makes a key (x64 on)."""
    a, b = (runtime.map_seeds(lambda k: jax.random.normal(k, ()), 2**63 - 1, 2) for _ in range(2))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(OverflowError):
        jax.random.key(2**63)


def test_runtime_and_config_have_no_function_local_imports():
    """Hard dependencies are imported at the top of the module, not inside functions."""
    for name in ("runtime.py", "config.py"):
        tree = ast.parse((REPO / "sims" / name).read_text())
        local = [f"{name}:{node.lineno}" for fn in ast.walk(tree)
                 if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                 for node in ast.walk(fn) if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not local, local


def _root_seed_offsets(source: str, filename: str) -> list[str]:
    """Where ``source`` adds anything to (or takes it from) a name or attribute called ``seed``, except the
    replication's own shift by a ``seed_offset``."""
    def name(node):
        return getattr(node, "id", None) or getattr(node, "attr", None)

    return [f"{filename}:{node.lineno}" for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub))
            and "seed" in (name(node.left), name(node.right))
            and "seed_offset" not in (name(node.left), name(node.right))]


def test_a_salted_seed_key_is_the_seed_key_folded_with_a_salt_above_every_index():
    """seed_key(seed, i, salt) = fold_in(fold_in(key(seed), i), salt) for a salt in [2**31, 2**32) (no seed,
    call or item index reaches it); a salt below or beyond is refused, None leaves the key as it was."""
    plain = jax.random.fold_in(jax.random.key(3), 7)
    for salt in (runtime.FAMILY_SALT_BASE, 2**32 - 1):
        want = jax.random.key_data(jax.random.fold_in(plain, salt))
        np.testing.assert_array_equal(jax.random.key_data(runtime.seed_key(3, 7, salt)), want)
    np.testing.assert_array_equal(jax.random.key_data(runtime.seed_key(3, 7, None)), jax.random.key_data(plain))
    for bad in (0, runtime.FAMILY_SALT_BASE - 1, 2**32):
        with pytest.raises(ValueError, match="salt must be in"):
            runtime.seed_key(3, 7, bad)


def test_no_simulation_draws_from_another_root_seed():
    """A simulation's second stream of draws comes from a named fold_in salt (runtime.FAMILY_SALT_BASE) or a
    numpy SeedSequence salt, never from root seed + k: a replication at seed offset k (root seed + k,
    ``claims verify --seed-offset k``) would draw it again. The control: the scan finds planted offsets."""
    found = [hit for path in sorted((REPO / "sims").rglob("*.py"))
             for hit in _root_seed_offsets(path.read_text(), str(path.relative_to(REPO)))]
    assert found == []
    planted = ("k = runtime.seed_key(ctx.config.seed + 1, i)\nr = np.random.default_rng(seed - 2)\n"
               "f = map_seeds(trial, ctx.config.seed + i, n)\nc = replace(cfg, seed=cfg.seed + seed_offset)\n")
    assert _root_seed_offsets(planted, "p.py") == ["p.py:1", "p.py:2", "p.py:3"]


# --------------------------------------------------------------------------------------------------
# sims.runtime.map_batch
# --------------------------------------------------------------------------------------------------


def _per_item(item, shift):
    """A per-run function with its own randomness (from the seed index it holds) and some arithmetic."""
    k = runtime.seed_key(5, item["seed"])
    draw = jax.random.normal(k, (3,))
    return {"draw": draw, "value": jnp.tanh(item["x"] @ item["x"] * item["scale"]) + shift,
            "index": item["seed"] * 2}


def _batch(n=5):
    rng = np.random.default_rng(0)
    return {"seed": np.arange(n, dtype=np.int32)[::-1].copy(), "x": rng.standard_normal((n, 4)),
            "scale": rng.uniform(0.1, 1.0, n)}


def test_map_seeds_traces_and_compiles_once_per_function_and_seed():
    """A second call with the same function and root seed reuses the compiled program (no new trace);
    another function or another root seed gets its own, with its own numbers."""
    f = lambda k: jax.random.normal(k, (2,))  # noqa: E731
    first = runtime.map_seeds(f, 0, 5)
    before = runtime._vmapped.cache_info()
    again = runtime.map_seeds(f, 0, 5)
    after = runtime._vmapped.cache_info()
    assert (after.hits, after.misses) == (before.hits + 1, before.misses)
    np.testing.assert_array_equal(again, first)
    shifted = runtime.map_seeds(lambda k: jax.random.normal(k, (2,)) + 1.0, 0, 5)
    np.testing.assert_array_equal(shifted, first + 1.0)
    other_seed = runtime.map_seeds(f, 1, 5)
    assert runtime._vmapped.cache_info().misses == before.misses + 2
    assert not np.array_equal(other_seed, first)


def test_map_batch_equals_a_python_loop():
    batch = _batch()
    out = runtime.map_batch(_per_item, batch, 0.25)
    for i in range(5):
        one = _per_item(jax.tree.map(lambda a, i=i: a[i], batch), 0.25)
        np.testing.assert_array_equal(out["draw"][i], np.asarray(one["draw"]))
        np.testing.assert_allclose(out["value"][i], np.asarray(one["value"]), rtol=TOL["vmap_vs_single"])
        assert out["index"][i] == 2 * batch["seed"][i]
    # an item's output does not depend on the rest of the batch
    part = runtime.map_batch(_per_item, jax.tree.map(lambda a: a[1:3], batch), 0.25)
    np.testing.assert_array_equal(part["draw"], out["draw"][1:3])


def test_map_batch_per_device_runs_in_calls_of_that_many_entries(monkeypatch):
    """per_device = 2 on one device: 5 entries run as 3 calls of 2 (the last padded by repeating entry 4),
    each entry's outputs those of the one-call run (the draws bitwise: they depend on the entry alone)."""
    batch = _batch()
    calls, gather = [], runtime.gather
    monkeypatch.setattr(runtime, "gather", lambda outs: calls.append([o["index"].shape for o in outs]) or gather(outs))
    out = runtime.map_batch(_per_item, batch, 0.25, per_device=2)
    assert calls == [[(2,)]] * 3 and len(out["draw"]) == 5
    monkeypatch.undo()
    whole = runtime.map_batch(_per_item, batch, 0.25)
    np.testing.assert_array_equal(out["draw"], whole["draw"])
    np.testing.assert_array_equal(out["index"], whole["index"])
    np.testing.assert_allclose(out["value"], whole["value"], rtol=TOL["vmap_vs_single"], atol=0)
    with pytest.raises(ValueError, match="per_device"):
        runtime.map_batch(_per_item, batch, 0.25, per_device=0)
    with pytest.raises(TypeError, match="per_device"):
        runtime.map_batch(_per_item, batch, 0.25, per_device=1.5)


def test_map_batch_refuses_empty_or_ragged_batches():
    with pytest.raises(ValueError, match="common, non-zero leading axis"):
        runtime.map_batch(_per_item, {"seed": np.zeros(0, np.int32), "x": np.zeros((0, 4)),
                                      "scale": np.zeros(0)}, 0.0)
    with pytest.raises(ValueError, match="common, non-zero leading axis"):
        runtime.map_batch(_per_item, {"seed": np.arange(3, dtype=np.int32), "x": np.zeros((4, 4)),
                                      "scale": np.ones(3)}, 0.0)
    with pytest.raises(ValueError, match="common, non-zero leading axis"):
        runtime.map_batch(_per_item, {}, 0.0)
    with pytest.raises(ValueError, match="common, non-zero leading axis"):
        runtime.map_batch(_per_item, {"seed": np.int32(1), "x": np.zeros((1, 4)), "scale": np.ones(1)}, 0.0)


_MAP_BATCH_SCRIPT = """
import sys
import numpy as np
from sims import runtime
runtime.setup()
import jax
from tests.test_runtime import _batch, _per_item
assert jax.device_count() == 8
res = {}
for size in (8, 3, 1):  # 5 items: padded on 8 and on 3 devices
    out = runtime.map_batch(_per_item, _batch(), 0.25, mesh=runtime.make_mesh(size))
    fixed = runtime.map_batch(_per_item, _batch(), 0.25, mesh=runtime.make_mesh(size), per_device=2)
    for k, v in out.items():
        res[f"{k}{size}"], res[f"{k}{size}fixed"] = v, fixed[k]
# The optimisation level is chosen on the work per device: 48 rows split over 8 devices are 6 rows' work
# each (2 * 6 * 16 * 16 = 3072 FLOPs, under the bar of 4096), the same 48 rows on one device 24576 (over).
runtime._STATE["fast_cpu"], runtime.OPTIMIZE_FLOPS = True, 4096.0
f = runtime.jit(lambda x: x @ np.ones((16, 16)))
x = np.ones((48, 16))
f(runtime.shard_rows(x, runtime.make_mesh(8)))
f(x)
assert list(f._chosen.values()) == [f.jitted, f._optimized], f._chosen
np.savez(sys.argv[1], **res)
"""


def test_map_batch_is_identical_on_eight_simulated_devices(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu", "PBE_PROGRESS": "0",
           "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    r = subprocess.run([sys.executable, "-c", _MAP_BATCH_SCRIPT, str(tmp_path / "mb.npz")], env=env,
                       capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    res = dict(np.load(tmp_path / "mb.npz"))
    here = runtime.map_batch(_per_item, _batch(), 0.25)  # this process: one device
    fixed = runtime.map_batch(_per_item, _batch(), 0.25, per_device=2)
    for size in (8, 3, 1):
        # a fixed number of items per device per call (runtime.chunk_size's default rule, or two): the same
        # shapes on every device count, so the same bits
        for k in ("draw", "index", "value"):
            np.testing.assert_array_equal(res[f"{k}{size}"], here[k])
            np.testing.assert_array_equal(res[f"{k}{size}fixed"], fixed[k])


_ENTRY_POINTS = (["-m", "sims.social_choice", "--config", "paper_configs/social_choice_ge_instance.yaml"],
                 ["-m", "claims", "list"], ["-m", "figures.build", "relu_dag"], ["-m", "sims", "relu_dag"])


@pytest.mark.parametrize("env, says, commands", [
    ({"JAX_PLATFORMS": "cuda"}, "JAX could not start a backend (JAX_PLATFORMS='cuda')", _ENTRY_POINTS),
    ({"PBE_DISTRIBUTED": "1", "PBE_COORDINATOR": "localhost:1", "PBE_NUM_PROCESSES": "abc", "PBE_PROCESS_ID": "0"},
     "PBE_NUM_PROCESSES must be a non-negative integer", _ENTRY_POINTS[:2]),
    ({"PBE_DISTRIBUTED": "1", "PBE_COORDINATOR": "localhost:1", "PBE_NUM_PROCESSES": "2"},
     "PBE_PROCESS_ID must be a non-negative integer", _ENTRY_POINTS[2:3]),
    ({"PBE_DISTRIBUTED": "1", "PBE_COORDINATOR": "localhost:1", "PBE_NUM_PROCESSES": "2", "PBE_PROCESS_ID": "2"},
     "PBE_PROCESS_ID (2) must be below PBE_NUM_PROCESSES (2)", _ENTRY_POINTS[3:]),
    ({"PBE_CACHE_MIN_COMPILE_S": "soon"}, "PBE_CACHE_MIN_COMPILE_S must be a non-negative number", _ENTRY_POINTS[1:2]),
])
def test_a_backend_or_distributed_setting_that_cannot_work_is_one_line(env, says, commands):
    """No CUDA on this machine, PBE_* settings that cannot start jax.distributed, or a bad cache threshold:
    the entry point prints one line naming the setting and exits 2 (no traceback, no hang). Every entry point meets the
    backend error; the distributed errors (the same runtime.SetupError path) are spread over them, so each
    entry point also meets one of those, with one interpreter start per pair rather than sixteen."""
    e = {**os.environ, "PYTHONPATH": str(REPO), **env}
    e.pop("XLA_FLAGS", None)
    procs = [(cmd, subprocess.Popen([sys.executable, *cmd], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, cwd=REPO)) for cmd in commands]  # side by side: each is a start-up
    for cmd, proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 2 and "Traceback" not in err, (cmd, err[-2000:])
        assert len(err.strip().splitlines()) == 1 and says in err, (cmd, err)


def _blas_threads() -> dict[str, int]:
    return {i["filepath"]: i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"}


def test_host_blas_runs_on_one_thread_unless_the_user_set_it(monkeypatch):
    """After setup (conftest), every BLAS loaded, SciPy's included (JAX's CPU LAPACK loads it), is on one
    thread; xla.one_blas_thread sets a BLAS running more threads back to one, and leaves a user's
    OPENBLAS_NUM_THREADS alone."""
    jnp.linalg.cholesky(jnp.eye(3)).block_until_ready()  # JAX's first linear algebra: SciPy's LAPACK
    import scipy.linalg  # noqa: F401  (loaded after setup: reached through OPENBLAS_NUM_THREADS)
    assert len(_blas_threads()) >= 1 and set(_blas_threads().values()) == {1}, _blas_threads()
    with threadpoolctl.threadpool_limits(2, user_api="blas"):
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
        xla.one_blas_thread()
        assert set(_blas_threads().values()) == {2}, _blas_threads()
        monkeypatch.delenv("OPENBLAS_NUM_THREADS")
        xla.one_blas_thread()
        assert set(_blas_threads().values()) == {1}, _blas_threads()
        assert os.environ["OPENBLAS_NUM_THREADS"] == "1"


@pytest.mark.parametrize("env, added", [
    ({"JAX_PLATFORMS": "cpu"}, True),
    ({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_force_host_platform_device_count=8"}, True),
    ({"JAX_PLATFORMS": "cuda"}, False),
    ({"JAX_PLATFORMS": "cpu,tpu"}, False),
    ({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_backend_optimization_level=3"}, False),
])
def test_fast_cpu_compiles_only_for_a_cpu_only_process_and_never_over_the_users_level(monkeypatch, env, added):
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    runtime._fast_cpu_compiles()
    flags = os.environ.get("XLA_FLAGS", "").split()
    assert all(f in flags for f in xla.CPU_OPT_FLAGS) == added, flags
    assert any(f in flags for f in xla.CPU_OPT_FLAGS) == added, flags
    fusion = added and xla.jaxlib_minor() in xla.CPU_FUSION_FLAG_JAXLIB
    assert all(f in flags for f in xla.CPU_FUSION_FLAGS) == fusion, flags
    assert set(env.get("XLA_FLAGS", "").split()) <= set(flags)  # the user's flags are kept
    assert sum("xla_backend_optimization_level" in f for f in flags) <= 1


@pytest.mark.parametrize("raw, seconds", [(None, 0.5), ("", 0.5), ("0", 0.0), (" 2.5 ", 2.5), ("-1", None),
                                          ("abc", None), ("nan", None), ("inf", None)])
def test_the_cache_threshold_comes_from_the_environment_or_is_refused(monkeypatch, raw, seconds):
    """PBE_CACHE_MIN_COMPILE_S: unset or empty is the runs' 0.5 s; a bad value is one ValueError naming it (which
    runtime.setup reports as a SetupError: the one-line-error test's case)."""
    if raw is None:
        monkeypatch.delenv("PBE_CACHE_MIN_COMPILE_S", raising=False)
    else:
        monkeypatch.setenv("PBE_CACHE_MIN_COMPILE_S", raw)
    if seconds is None:
        with pytest.raises(ValueError, match=r"PBE_CACHE_MIN_COMPILE_S must be a non-negative number"):
            xla.cache_min_compile_s()
    else:
        assert xla.cache_min_compile_s() == seconds


def test_the_suite_caches_every_program_in_its_processes():
    """conftest sets the threshold to 0 for the suite and, through the environment, every process it starts."""
    assert os.environ["PBE_CACHE_MIN_COMPILE_S"] == "0"
    assert jax.config.jax_persistent_cache_min_compile_time_secs == 0


@pytest.mark.parametrize("version, added", [("0.10.2", True), ("0.10.0.dev20261201", True), ("0.11.0", False),
                                            ("0.9.1", False), ("1.0.0", False), ("unknown", False)])
def test_the_fusion_flag_is_added_only_for_the_jaxlib_versions_it_was_measured_on(monkeypatch, version, added):
    """An XLA that does not know a flag aborts the process (no Python error to catch), so the flag goes only
    to the jaxlib minor versions of CPU_FUSION_FLAG_JAXLIB (0.10); the level-0 flags go to every version."""
    monkeypatch.setattr(xla.jaxlib.version, "__version__", version)
    monkeypatch.setattr(runtime, "_HEAVY_COMPILE", {"xla_backend_optimization_level": 2})
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    runtime._fast_cpu_compiles()
    flags = os.environ["XLA_FLAGS"].split()
    assert set(xla.CPU_OPT_FLAGS) <= set(flags)
    assert ("--xla_cpu_use_fusion_emitters=false" in flags) == added, flags
    # a heavy function's compile turns the emitters back on only where the process turned them off
    level2 = {"xla_backend_optimization_level": 2}
    assert runtime._HEAVY_COMPILE == ({**level2, "xla_cpu_use_fusion_emitters": True} if added else level2)


def test_the_cpu_optimisation_level_changes_a_sweep_only_by_rounding(eight):
    """The level :func:`runtime.setup` picks on the CPU (0) and XLA's own default (3) give the seed sweep of the
    multi-device tests (draws, SGD risk paths, Monte Carlo means and SEs) to rounding, not bit for bit: level
    3 fuses multiply-adds, so even a normal draw (an erfinv polynomial) can differ in its last bit. The
    fixture's workers run at level 0 (JAX_PLATFORMS=cpu, no level in XLA_FLAGS)."""
    first, _, opt3 = eight
    assert set(xla.CPU_OPT_FLAGS) <= set(str(first["xla_flags"]).split())
    assert "--xla_backend_optimization_level=3" in str(opt3["xla_flags"]).split()
    assert not set(xla.CPU_FUSION_FLAGS) & set(str(opt3["xla_flags"]).split())  # XLA's defaults there
    for k in set(opt3) - {"xla_flags", "device_count", "process_count"}:
        np.testing.assert_allclose(opt3[k], first[k], rtol=TOL["fma_contraction"], atol=0, err_msg=k)


def test_a_heavy_compiled_function_is_compiled_optimised_on_the_cpu(monkeypatch):
    """runtime.jit compiles a call at level 2 when its work reaches OPTIMIZE_FLOPS (a long loop) and leaves a
    light one at the process's level 0; the choice is made once per argument shape and both give the
    same numbers."""
    monkeypatch.setitem(runtime._STATE, "fast_cpu", True)
    f = runtime.jit(lambda x: jax.lax.while_loop(lambda c: c[0] < 1.0, lambda c: c + 0.5, x))  # trip count unknown
    light = runtime.jit(lambda x: jnp.sin(x) + x)
    n = int(runtime.OPTIMIZE_FLOPS) // 2 + 1
    heavy = runtime.jit(lambda x: jax.lax.scan(lambda c, _: (jnp.sin(c) + c, None), x, None, length=2)[0])
    small, big = jnp.linspace(0.0, 1.0, 8), jnp.linspace(0.0, 1.0, n)
    np.testing.assert_array_equal(light(small), np.sin(np.linspace(0.0, 1.0, 8)) + np.linspace(0.0, 1.0, 8))
    assert light._optimized is None
    heavy(small)
    assert heavy._optimized is None  # 2 x 8 x 2 FLOPs
    heavy(big)
    assert heavy._chosen[(((big.shape, "float64"),), 1)] is heavy._optimized is not None
    assert heavy._chosen[(((small.shape, "float64"),), 1)] is heavy.jitted
    f(small)
    assert f._optimized is not None
