"""Benchmarks for theory/relu_dag.py, measured side by side in one run.

* counting components: the exact closure criterion (one integer min-cut per bottleneck edge) against one
  certified HiGHS LP per edge, and against brute-force closure enumeration;
* the init-obstruction Monte Carlo: seeds sharded over every device against one device.
"""

from __future__ import annotations

import time

import numpy as np


def _time(fn, repeat: int = 3):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def run() -> list[dict]:
    import jax

    from sims import runtime
    from theory import relu_dag as R

    rows = []
    rng = np.random.default_rng(0)
    for n_hid, p in ((12, 0.2), (20, 0.12)):
        G = R.random_dag(rng, 3, n_hid, 2, p)
        c = {v: float(rng.normal()) for v in R.structure(G).hidden}
        t_cl, a = _time(lambda: R.forced_edges(G, c))
        t_lp, b = _time(lambda: R.forced_edges_lp(G, c), repeat=1)
        case = f"{n_hid} hidden, {G.number_of_edges()} edges"
        rows.append({"benchmark": "relu_dag.forced_edges", "case": case,
                     "baseline": "LP per edge (HiGHS)", "baseline_s": t_lp, "ours": "closure min-cut",
                     "ours_s": t_cl, "ratio": t_lp / t_cl, "check": "agree" if a == b else "DIFFER"})
        if n_hid <= 12:
            t_bf, d = _time(lambda: R.forced_edges_bruteforce(G, c), repeat=1)
            rows.append({"benchmark": "relu_dag.forced_edges", "case": case,
                         "baseline": "brute-force closure", "baseline_s": t_bf, "ours": "closure min-cut",
                         "ours_s": t_cl, "ratio": t_bf / t_cl, "check": "agree" if a == d else "DIFFER"})
    ds, ls, n = (2, 3, 5, 10, 20), (1, 2, 4, 8, 16, 32), 40000
    fn = lambda k: R.disconnection_monte_carlo(k, ds, ls)  # noqa: E731
    one, all_ = runtime.make_mesh(1), runtime.make_mesh()
    runtime.mean_over_seeds(fn, 0, n, mesh=one)
    runtime.mean_over_seeds(fn, 0, n, mesh=all_)
    t1, (m1, _) = _time(lambda: runtime.mean_over_seeds(fn, 0, n, mesh=one))
    tn, (mn, _) = _time(lambda: runtime.mean_over_seeds(fn, 0, n, mesh=all_))
    rows.append({"benchmark": "relu_dag.init_probability_mc", "case": f"{n} seeds x 60 cells",
                 "baseline": "1 device", "baseline_s": t1, "ours": f"{jax.device_count()} devices",
                 "ours_s": tn, "ratio": t1 / tn,
                 "check": "same mean" if np.allclose(m1, mn, rtol=0, atol=1e-12) else "DIFFER"})
    return rows
