"""Benchmarks for theory/relu_dag/, measured side by side in one run.

* counting components: the exact closure criterion (one integer min-cut per bottleneck edge) against one
  certified HiGHS LP per edge, and against brute-force closure enumeration;
* the init-obstruction Monte Carlo: seeds sharded over every device against one device.
"""

from __future__ import annotations

import jax
import numpy as np

from benchmarks.timing import timed
from sims import runtime
from theory import relu_dag as R


def run() -> list[dict]:
    rows = []
    rng = np.random.default_rng(0)
    for n_hid, p in ((12, 0.2), (20, 0.12)):
        G = R.random_dag(rng, 3, n_hid, 2, p)
        c = {v: float(rng.normal()) for v in R.structure(G).hidden}
        a, t_cl = timed(lambda: R.forced_edges(G, c))
        b, t_lp = timed(lambda: R.forced_edges_lp(G, c), repeat=1, warmup=0)
        case = f"{n_hid} hidden, {G.number_of_edges()} edges"
        rows.append({"benchmark": "relu_dag.forced_edges", "case": case,
                     "baseline": "LP per edge (HiGHS)", "baseline_s": t_lp, "ours": "closure min-cut",
                     "ours_s": t_cl, "ratio": t_lp / t_cl, "check": "agree" if a == b else "DIFFER"})
        if n_hid <= 12:
            d, t_bf = timed(lambda: R.forced_edges_bruteforce(G, c), repeat=1, warmup=0)
            rows.append({"benchmark": "relu_dag.forced_edges", "case": case,
                         "baseline": "brute-force closure", "baseline_s": t_bf, "ours": "closure min-cut",
                         "ours_s": t_cl, "ratio": t_bf / t_cl, "check": "agree" if a == d else "DIFFER"})
    ds, ls, n = (2, 3, 5, 10, 20), (1, 2, 4, 8, 16, 32), 40000
    fn = lambda k: R.disconnection_monte_carlo(k, ds, ls)  # noqa: E731
    one, all_ = runtime.make_mesh(1), runtime.make_mesh()
    runtime.mean_over_seeds(fn, 0, n, mesh=one)
    runtime.mean_over_seeds(fn, 0, n, mesh=all_)
    (m1, _), t1 = timed(lambda: runtime.mean_over_seeds(fn, 0, n, mesh=one))
    (mn, _), tn = timed(lambda: runtime.mean_over_seeds(fn, 0, n, mesh=all_))
    rows.append({"benchmark": "relu_dag.init_probability_mc", "case": f"{n} seeds x 60 cells",
                 "baseline": "1 device", "baseline_s": t1, "ours": f"{jax.device_count()} devices",
                 "ours_s": tn, "ratio": t1 / tn,
                 "check": "same mean" if np.allclose(m1, mn, rtol=0, atol=1e-12) else "DIFFER"})
    return rows
