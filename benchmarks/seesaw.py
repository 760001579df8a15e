"""Seesaw benchmarks: sharded Monte Carlo SGD on 1 device vs all devices, and the exact recursion vs
Monte Carlo at equal precision on the final risk."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.timing import timed
from sims import runtime
from theory import seesaw as th


def run() -> list[dict]:
    d, n_seeds = 32, 512
    lam = jnp.asarray(th.power_law_eigs(d))
    lrs, bs = th.phase_schedule(0.5, 8, 1.0, 2.0, 2048, 3)
    steps = lrs.size

    def mc(mesh, n=n_seeds):
        return runtime.mean_over_seeds(lambda k: th.sgd_risk_path(k, lam, jnp.ones(d), 1.0, lrs, bs)[-1],
                                       0, n, mesh=mesh)

    n_all = jax.device_count()
    (m1, _), t1 = timed(lambda: mc(runtime.make_mesh(1)))
    (mn, se), tn = timed(lambda: mc(runtime.make_mesh()))
    rows = [{
        "benchmark": "seesaw MC SGD (seeds x steps/s)", "case": f"{n_seeds} seeds x {steps} steps, d={d}",
        "baseline": f"1 device {n_seeds * steps / t1:.3g}/s", "baseline_s": t1,
        "ours": f"{n_all} devices {n_seeds * steps / tn:.3g}/s", "ours_s": tn, "ratio": t1 / tn,
        "check": f"means equal to rel {abs(mn / m1 - 1):.1e}",
    }]
    exact, t_rec = timed(lambda: th.expected_risk(lam, 1.0, 1.0, lrs, bs))
    # Seeds Monte Carlo needs for a 1% relative standard error on the final risk, from the measured SE.
    need = int(np.ceil(n_seeds * (float(se) / float(mn) / 0.01) ** 2))
    t_mc = tn * need / n_seeds
    rows.append({
        "benchmark": "seesaw final risk at 1% precision", "case": f"{steps} steps, d={d}",
        "baseline": f"MC {need} seeds (extrap.)", "baseline_s": t_mc, "ours": "exact recursion",
        "ours_s": t_rec, "ratio": t_mc / t_rec,
        "check": f"MC/exact = {float(mn) / float(exact[-1]):.4f} ± {float(se) / float(exact[-1]):.4f}",
    })
    return rows
