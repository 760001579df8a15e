"""XLA's CPU optimisation level, measured side by side: compile and run time at the level of a heavy function
(``theory.numerics.HEAVY_COMPILE``: 2) and at level 0 (what ``sims.runtime.setup`` picks for a CPU-only
process), for a compile-heavy function (a transformer's loss gradient, run once) and a run-heavy one (a
long elementwise scan); and at level 3 (XLA's default) against level 2. The rule that keeps run-heavy
functions optimised (``runtime.OPTIMIZE_FLOPS``) rests on each function's "level 2 vs 0" row, the choice
of level 2 on its "level 3 vs 2" row. The same two functions also compare XLA's MLIR fusion emitters (its
default) with the older elementwise code generator that ``sims.runtime.setup`` picks for a CPU-only
process (``sims.xla.CPU_FUSION_FLAGS``), at each level."""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental.compilation_cache import compilation_cache

from benchmarks.timing import timed
from sims import costs, models, runtime


def _compile_and_run(fn, args, options: dict) -> tuple[float, float, object]:
    """Seconds to lower and compile ``fn`` with XLA ``options`` (no persistent cache; a key left out takes
    the process's setting), the best seconds of a call of the compiled function
    (:func:`benchmarks.timing.timed`), and its result."""
    # a new function object each time: jax.jit's in-memory cache would hand back an earlier compile
    jitted = jax.jit(lambda *a: fn(*a), compiler_options=options)
    t0 = time.perf_counter()
    compiled = jitted.lower(*args).compile()
    t_compile = time.perf_counter() - t0
    out, t_run = timed(lambda: compiled(*args))
    return t_compile, t_run, out


def _emitters(level: int, on: bool) -> dict:
    """Compiler options: XLA's optimisation ``level`` with its MLIR fusion emitters ``on`` or off."""
    return {"xla_backend_optimization_level": level, "xla_cpu_use_fusion_emitters": on}


def _transformer_grad():
    model = models.TransformerParams(seq_len=32, d_model=64, n_heads=4, n_layers=4).model(64, 64, causal=True)
    tokens = jax.random.randint(jax.random.key(0), (8, 32), 0, 64)
    params = model.init(jax.random.key(1), tokens)

    def loss(p, t):
        logits = model.apply(p, t)
        return -jnp.mean(jax.nn.log_softmax(logits)[..., 0])

    return jax.grad(loss), (params, tokens)


def _elementwise_scan():
    def f(x):
        def body(c, _):
            return jnp.tanh(c * 1.0001 + 0.1) * jnp.exp(-c * c), None
        return jax.lax.scan(body, x, None, length=500)[0]

    return f, (jnp.linspace(0.0, 1.0, 100_000),)


def run() -> list[dict]:
    rows = []
    # Time XLA itself, not a persistent-cache hit. JAX decides once per process whether it uses the cache
    # (at its first compilation), so the flag only takes effect after reset_cache().
    cache = jax.config.jax_enable_compilation_cache
    jax.config.update("jax_enable_compilation_cache", False)
    compilation_cache.reset_cache()
    jax.jit(lambda x: x + 1).lower(1.0).compile()  # the process's first compile pays XLA's start-up: not timed
    try:
        for label, (fn, args) in (("transformer loss gradient (4 layers, d=64)", _transformer_grad()),
                                  ("elementwise scan (500 x 1e5 tanh, exp)", _elementwise_scan())):
            flops = costs.jaxpr_cost(jax.make_jaxpr(fn)(*args).jaxpr).flops
            # as runtime.jit compiles a heavy function (level 2) and any other (level 0, the process's flags)
            heavy = dict(runtime._HEAVY_COMPILE)
            lh = heavy["xla_backend_optimization_level"]
            ch, rh, oh = _compile_and_run(fn, args, heavy)
            c0, r0, o0 = _compile_and_run(fn, args, {"xla_backend_optimization_level": 0})
            c3, r3, o3 = _compile_and_run(fn, args, {**heavy, "xla_backend_optimization_level": 3})
            picks = f"level {lh}" if flops >= runtime.OPTIMIZE_FLOPS else "level 0"
            for (lb, cb, rb, ob), (lo, co, ro, oo), what in (
                    ((lh, ch, rh, oh), (0, c0, r0, o0), f"runtime.jit picks {picks}"),
                    ((3, c3, r3, o3), (lh, ch, rh, oh), "XLA's default against the heavy functions' level")):
                diff = max(float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
                           for a, b in zip(jax.tree.leaves(ob), jax.tree.leaves(oo)))
                rows.append({
                    "benchmark": f"XLA CPU level {lb} vs {lo}: compile + one call",
                    "case": f"{label}, {flops:.2g} FLOPs",
                    "baseline": f"level {lb}: compile {cb:.2f} s, run {rb:.3f} s", "baseline_s": cb + rb,
                    "ours": f"level {lo}: compile {co:.2f} s, run {ro:.3f} s", "ours_s": co + ro,
                    "ratio": (cb + rb) / (co + ro),
                    "check": f"{what}; max |diff| {diff:.1e}",
                })
            # runtime's choice (ours) against the other generator at each level: the older one at level 0,
            # XLA's MLIR fusion emitters at the heavy functions' level (sims.xla.CPU_FUSION_FLAGS)
            for level, ours_on in ((0, False), (lh, True)):
                cb, rb, ob = _compile_and_run(fn, args, _emitters(level, not ours_on))
                co, ro, oo = _compile_and_run(fn, args, _emitters(level, ours_on))
                same = all(np.array_equal(np.asarray(a), np.asarray(b))
                           for a, b in zip(jax.tree.leaves(ob), jax.tree.leaves(oo)))
                name = {True: "MLIR emitters", False: "older generator"}
                rows.append({
                    "benchmark": "XLA CPU fusion code generator at one level", "case": f"{label}, level {level}",
                    "baseline": f"{name[not ours_on]}: compile {cb:.2f} s, run {rb:.3f} s", "baseline_s": cb + rb,
                    "ours": f"{name[ours_on]}: compile {co:.2f} s, run {ro:.3f} s", "ours_s": co + ro,
                    "ratio": (cb + rb) / (co + ro),
                    "check": "same bits" if same else "results differ in their last bits",
                })
    finally:
        jax.config.update("jax_enable_compilation_cache", cache)
        compilation_cache.reset_cache()
    return rows
