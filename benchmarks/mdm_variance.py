"""MDM-variance benchmarks: the nested Monte Carlo decomposition on 1 device vs all devices, the standard
error per second of the unbiased estimator against the plug-in one, and the tiny MDM's training step
against the machine's measured matmul rate."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from benchmarks.timing import timed
from sims import mdm_variance as sim
from sims import runtime
from theory import mdm_variance as th


def run() -> list[dict]:
    trans, init = th.random_chain(jax.random.key(0), 8, 0.3)
    n, nt, k, L = 2048, 4, 4, 16
    data = np.asarray(th.sample_chain(jax.random.key(1), trans, init, n, L))
    fn = th.oracle_mdm_loss_fn(trans, init, L)
    n_all = jax.device_count()

    def dec(mesh):
        return th.nested_losses(fn, data, jax.random.key(2), n_t=nt, n_masks=k, eps=1e-2, mesh=mesh)

    l1, t1 = timed(lambda: dec(runtime.make_mesh(1)))
    ln, tn = timed(lambda: dec(runtime.make_mesh()))
    samples = n * nt * k
    r = th.nested_estimates(ln)
    rows = [{
        "benchmark": "mdm_variance nested MC (losses/s)", "case": f"{n} x {nt} x {k}, oracle chain V=8 L={L}",
        "baseline": f"1 device {samples / t1:.3g}/s", "baseline_s": t1,
        "ours": f"{n_all} devices {samples / tn:.3g}/s", "ours_s": tn, "ratio": t1 / tn,
        "check": f"identical samples: {bool(np.array_equal(l1, ln))}",
    }]
    # The unbiased and plug-in estimators use the same samples (same cost); compare the error per second on
    # C, counting the plug-in's bias as error: RMSE = sqrt(se^2 + bias^2) with bias = naive_C - C.
    bias = r["naive_C"] - r["C"]
    rmse_naive = float(np.hypot(r["C_se"], bias))
    rows.append({
        "benchmark": "mdm_variance C: error reached in the same time", "case": f"{samples} losses, {tn:.2f} s",
        "baseline": f"plug-in RMSE {rmse_naive:.3g}", "baseline_s": tn, "ours": f"unbiased SE {r['C_se']:.3g}",
        "ours_s": tn, "ratio": rmse_naive / r["C_se"],
        "check": f"C = {r['C']:.4f} ± {r['C_se']:.4f}, plug-in {r['naive_C']:.4f}",
    })
    # Tiny MDM training step against the measured matmul rate.
    p = sim.TrainingParams(n_chars=20_000, seq_len=32, d_model=32, n_heads=2, n_layers=2, batch=16, steps=2,
                           n_evals=2, n_seeds=2)
    model = p.model(vocab=sim.MASK + 1, n_out=256, causal=False)
    params = model.init(jax.random.key(3), jnp.zeros((1, p.seq_len), jnp.int32))
    opt = optax.adamw(1e-3)
    toks = jax.random.randint(jax.random.key(4), (p.batch, p.seq_len), 0, 256)

    @jax.jit
    def step(params, os, key):
        def loss(pr):
            fn_ = sim._model_loss_fn(model, pr)
            t = th.uniform_t(key, (p.batch,), 1e-3)
            m = jax.random.uniform(jax.random.fold_in(key, 1), (p.batch, p.seq_len)) < t[:, None]
            return jnp.mean(jax.vmap(fn_)(toks, t, m))
        g = jax.grad(loss)(params)
        upd, os = opt.update(g, os, params)
        return optax.apply_updates(params, upd), os

    os = opt.init(params)
    _, t_step = timed(lambda: step(params, os, jax.random.key(5)))
    n_par = sum(x.size for x in jax.tree.leaves(params))
    flops = 6 * n_par * p.batch * p.seq_len  # forward + backward, dense layers (attention is small here)
    a = jnp.ones((512, 512), jnp.float32)
    mm = jax.jit(lambda x: x @ x)
    _, t_mm = timed(lambda: mm(a))
    peak = 2 * 512**3 / t_mm
    rows.append({
        "benchmark": "mdm_variance tiny MDM train step", "case": f"{n_par} params, batch {p.batch} x {p.seq_len}",
        "baseline": f"matmul 512^3 {peak / 1e9:.3g} GFLOP/s", "baseline_s": t_mm,
        "ours": f"step {flops / t_step / 1e9:.3g} GFLOP/s", "ours_s": t_step, "ratio": flops / t_step / peak,
        "check": "ratio = share of the measured matmul rate",
    })
    return rows
