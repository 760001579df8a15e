"""The kernels that would make numbers depend on the CPU are pinned (sims.portable and
sims.xla.CPU_PORTABLE_FLAGS): the settings themselves, and their effect in this test process (which imports
sims before NumPy)."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import threadpoolctl

from sims import cli, portable, runtime, xla

ZEN4 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu sse2 avx avx2 fma avx512f avx512bw\n"
ZEN3 = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx avx2 fma bmi2\n"
SANDY_BRIDGE = "processor\t: 0\nflags\t\t: fpu sse2 sse4_2 avx\n"  # AVX but no AVX2: the libraries choose
AVX2_NO_FMA = "flags\t\t: sse2 avx avx2\n"


@pytest.mark.parametrize("cpuinfo, expected", [(ZEN4, True), (ZEN3, True), (SANDY_BRIDGE, False),
                                               (AVX2_NO_FMA, False), ("processor\t: 0\n", False),
                                               ("", False)])
def test_avx2_and_fma_are_read_from_the_flags_line(cpuinfo, expected):
    assert portable.has_avx2_fma(cpuinfo) is expected


def test_both_host_libraries_are_pinned_on_an_avx2_cpu_and_a_users_choice_is_kept():
    env = {}
    assert portable.pin_host_kernels(env, cpuinfo=ZEN4) == env == {
        "OPENBLAS_CORETYPE": "Haswell", "NPY_DISABLE_CPU_FEATURES": "X86_V4 AVX512_ICL AVX512_SPR"}
    env = {"OPENBLAS_CORETYPE": "Zen"}
    added = portable.pin_host_kernels(env, cpuinfo=ZEN3)
    assert added == {"NPY_DISABLE_CPU_FEATURES": portable.NUMPY_DISABLED_FEATURES}
    assert env["OPENBLAS_CORETYPE"] == "Zen"


@pytest.mark.parametrize("env, cpuinfo", [({}, SANDY_BRIDGE), ({"PBE_NATIVE_KERNELS": "1"}, ZEN4),
                                          ({"PBE_NATIVE_KERNELS": " True "}, ZEN4)])
def test_nothing_is_pinned_without_avx2_or_when_native_kernels_are_asked_for(env, cpuinfo):
    before = dict(env)
    assert portable.pin_host_kernels(env, cpuinfo=cpuinfo) == {}
    assert env == before


@pytest.mark.parametrize("value, native", [(None, False), ("", False), ("0", False), ("FALSE", False),
                                           ("1", True), ("yes", True)])
def test_native_kernels_are_asked_for_by_any_value_but_off(value, native):
    assert portable.native_kernels({} if value is None else {"PBE_NATIVE_KERNELS": value}) is native


@pytest.mark.skipif(not portable.has_avx2_fma() or portable.native_kernels(),
                    reason="host kernels are pinned only on an x86-64 Linux CPU with AVX2 and FMA")
def test_this_process_runs_the_pinned_host_kernels():
    """conftest imports sims before NumPy, so NumPy's SIMD loops stop at x86-64-v3 and every OpenBLAS loaded
    (NumPy's, SciPy's) runs its Haswell kernels, on an AVX-512 CPU too."""
    import scipy.linalg  # noqa: F401  (loads SciPy's OpenBLAS)

    blas = [i for i in threadpoolctl.threadpool_info() if i.get("internal_api") == "openblas"]
    assert blas and {i["architecture"] for i in blas} == {os.environ["OPENBLAS_CORETYPE"]}, blas
    features = np._core._multiarray_umath.__cpu_features__
    assert not any(features.get(f, False) for f in portable.NUMPY_DISABLED_FEATURES.split())


def test_a_cpu_dot_runs_xlas_own_kernels_not_ynnpack():
    """runtime.setup (conftest) adds CPU_PORTABLE_FLAGS on a CPU-only process: the compiled dot is XLA's own,
    not a YNNPACK fusion (whose kernels the CPU picks; without the flag jaxlib 0.10 compiles this dot to one),
    and it computes the product. A jaxlib the flag was not measured on fails here, so that it is measured
    before results depend on it."""
    if jax.default_backend() != "cpu":
        pytest.skip("the flag is for a CPU-only process")
    assert xla.jaxlib_minor() in xla.CPU_PORTABLE_FLAG_JAXLIB, (
        f"jaxlib {xla.jaxlib.version.__version__}: measure --xla_cpu_experimental_ynn_fusion_type= on it "
        "(bits with and without --xla_cpu_max_isa=AVX2, figure times) and add it to CPU_PORTABLE_FLAG_JAXLIB")
    a = np.arange(64 * 96, dtype=np.float32).reshape(64, 96) % 7 - 3
    b = np.arange(96 * 32, dtype=np.float32).reshape(96, 32) % 5 - 2
    f = jax.jit(lambda x, y: x @ y)
    text = f.lower(jnp.asarray(a), jnp.asarray(b)).compile().as_text()
    assert "__ynn_fusion" not in text and "dot(" in text
    # XLA's own dot gives the product exactly: small integers, whose float32 sums are exact
    np.testing.assert_array_equal(np.asarray(f(a, b)), a.astype(np.float64) @ b.astype(np.float64))


@pytest.mark.parametrize("env, portable_added", [
    ({"JAX_PLATFORMS": "cpu"}, True),
    ({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_backend_optimization_level=3"}, True),
    ({"JAX_PLATFORMS": "cpu", "XLA_FLAGS": "--xla_cpu_experimental_ynn_fusion_type=individual_dot"}, False),
    ({"JAX_PLATFORMS": "cuda"}, False),
])
def test_the_portable_flag_goes_to_every_cpu_only_process_unless_the_user_set_ynnpack(monkeypatch, env,
                                                                                     portable_added):
    monkeypatch.setattr(xla.jaxlib.version, "__version__", "0.10.2")
    monkeypatch.setattr(runtime, "_HEAVY_COMPILE", {"xla_backend_optimization_level": 2})
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    runtime._fast_cpu_compiles()
    flags = os.environ.get("XLA_FLAGS", "").split()
    assert (xla.CPU_PORTABLE_FLAGS[0] in flags) == portable_added, flags
    assert sum("ynn_fusion_type" in f for f in flags) == ("ynn" in env.get("XLA_FLAGS", "") or portable_added)
    assert set(env.get("XLA_FLAGS", "").split()) <= set(flags)


def test_the_portable_flag_waits_for_a_measured_jaxlib(monkeypatch):
    """An XLA that does not know a flag aborts the process: jaxlib 0.11 gets no YNNPACK setting until it is
    measured."""
    monkeypatch.setattr(xla.jaxlib.version, "__version__", "0.11.0")
    monkeypatch.setattr(runtime, "_HEAVY_COMPILE", {"xla_backend_optimization_level": 2})
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    monkeypatch.delenv("XLA_FLAGS", raising=False)
    runtime._fast_cpu_compiles()
    assert "ynn" not in os.environ["XLA_FLAGS"]


def test_a_results_kernels_are_named_in_its_provenance(monkeypatch, toy_sim, tmp_path):
    """xla.kernel_summary names the kernels in effect (this process: YNNPACK off and, on an AVX2 CPU, Haswell
    OpenBLAS and NumPy's v3 loops), says 'default' when XLA_FLAGS lacks the flag, and a result's sidecar
    carries it (the report's provenance table shows it)."""
    line = xla.kernel_summary()
    assert line.startswith("XLA:CPU YNNPACK off; OpenBLAS "), line
    if portable.has_avx2_fma() and not portable.native_kernels():
        assert line.endswith("; OpenBLAS Haswell; NumPy SIMD up to x86-64-v3"), line
    _, meta = cli.run_config(toy_sim[1](), "quick", quiet=True, outdir=tmp_path / "results")
    assert meta["kernels"] == line
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0")
    assert xla.kernel_summary().startswith("XLA:CPU YNNPACK default; ")
