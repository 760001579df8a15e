"""The sharded runtime: same draws on 1, 2, 4, 8 devices, results equal to rounding, bit-identical reruns,
and a two-process jax.distributed run on localhost that agrees with one process."""

import os
import socket
import subprocess
import sys
from pathlib import Path

import jax
import numpy as np
import pytest

from sims import runtime

REPO = Path(__file__).resolve().parent.parent
WORKER = str(REPO / "tests" / "_sweep_worker.py")


def _run(out, sizes, env_extra, n_proc=1):
    env = {**os.environ, "PYTHONPATH": str(REPO), "JAX_PLATFORMS": "cpu", **env_extra}
    procs = []
    for pid in range(n_proc):
        e = dict(env)
        if n_proc > 1:
            e["PBE_PROCESS_ID"] = str(pid)
        procs.append(subprocess.Popen([sys.executable, WORKER, str(out), *map(str, sizes)], env=e,
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for p in procs:
        log, _ = p.communicate(timeout=300)
        assert p.returncode == 0, log[-3000:]
    return dict(np.load(out))


@pytest.fixture(scope="module")
def eight(tmp_path_factory):
    d = tmp_path_factory.mktemp("eight")
    flags = {"XLA_FLAGS": "--xla_force_host_platform_device_count=8"}
    first = _run(d / "a.npz", [1, 2, 4, 8], flags)
    again = _run(d / "b.npz", [1, 2, 4, 8], flags)
    return first, again


def test_eight_simulated_devices_draw_bit_identical_numbers(eight):
    first, _ = eight
    assert int(first["device_count"]) == 8
    for n in (2, 4, 8):
        np.testing.assert_array_equal(first[f"draws{n}"], first["draws1"])


def test_results_agree_to_rounding_across_device_counts(eight):
    first, _ = eight
    for n in (2, 4, 8):
        np.testing.assert_allclose(first[f"paths{n}"], first["paths1"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(first[f"mean{n}"], first["mean1"], rtol=1e-12, atol=0)
        np.testing.assert_allclose(first[f"se{n}"], first["se1"], rtol=1e-9, atol=0)


def test_reruns_are_bit_identical(eight):
    first, again = eight
    for k in first:
        np.testing.assert_array_equal(first[k], again[k])


def test_in_process_single_device_matches_worker(eight):
    """The test process itself (1 device) draws the same numbers as the 8-device worker."""
    first, _ = eight
    draws = runtime.map_seeds(lambda k: jax.random.normal(k, (5,)), 3, 13)
    np.testing.assert_array_equal(draws, first["draws8"])


def test_seed_draws_do_not_depend_on_sweep_size():
    small = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 0, 4)
    large = runtime.map_seeds(lambda k: jax.random.normal(k, (3,)), 0, 11)
    np.testing.assert_array_equal(small, large[:4])


def test_mean_over_seeds_matches_numpy():
    vals = runtime.map_seeds(lambda k: jax.random.normal(k, (2,)), 5, 37)
    mean, se = runtime.mean_over_seeds(lambda k: jax.random.normal(k, (2,)), 5, 37)
    np.testing.assert_allclose(mean, vals.mean(0), rtol=1e-12)
    np.testing.assert_allclose(se, vals.std(0, ddof=1) / np.sqrt(37), rtol=1e-9)


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
    first, _ = eight
    assert int(two["process_count"]) == 2 and int(two["device_count"]) == 2
    np.testing.assert_array_equal(two["draws2"], first["draws1"])
    np.testing.assert_allclose(two["paths2"], first["paths1"], rtol=1e-12, atol=0)
    np.testing.assert_allclose(two["mean2"], first["mean1"], rtol=1e-12, atol=0)
