"""Linear social choice benchmarks: the exact (rational) hinge certificate against the float HiGHS LP it
starts from; certified reward fits per second per loss; the polynomial violation sweep sharded over 1
device vs all devices."""

from __future__ import annotations

from fractions import Fraction

import jax
import numpy as np

from benchmarks.timing import timed
from sims import runtime
from sims.cli import figure_config
from sims.config import load
from sims.social_choice import EXPERIMENTS, poly_instance
from theory import social_choice as sc


def _rational_instance(seed: int, n: int, k: int = 3):
    """n candidates with coordinates in {-10..10}/4 and k integer voters (exact), from a numpy seed."""
    rng = np.random.default_rng(seed)
    pts = set()
    while len(pts) < n:
        pts.add(tuple(int(v) for v in rng.integers(-10, 11, 2)))
    X = np.array([[Fraction(x, 4), Fraction(y, 4)] for x, y in sorted(pts)], dtype=object)
    V = np.array([[int(v) for v in rng.integers(-3, 4, 2)] for _ in range(k)], dtype=object)
    V[np.all(V == 0, axis=1)] = [1, 1]
    return X, V, [int(c) for c in rng.integers(1, 4, k)]


def run() -> list[dict]:
    rows = []
    # 1. Exact hinge certificate vs the float LP it re-solves (same optimum).
    for n in (6, 12, 24, 48):
        X, V, counts = _rational_instance(n, n)
        r = sc.comparison_rows(X, V, np.array([Fraction(c) for c in counts], dtype=object), exact=True)
        Zf, wf = np.asarray(r.Z, float), np.asarray(r.w, float)
        lp, t_float = timed(lambda Zf=Zf, wf=wf: sc.hinge_lp(Zf, wf), repeat=3)
        cert, t_exact = timed(lambda r=r: sc.hinge_exact(r), repeat=1, warmup=0)
        rows.append({
            "benchmark": "social_choice exact hinge certificate", "case": f"n={n} candidates, {len(r.w)} rows, d=2",
            "baseline": "HiGHS float LP", "baseline_s": t_float, "ours": "HiGHS basis re-solved in rationals",
            "ours_s": t_exact, "ratio": t_float / t_exact,
            "check": f"exact {sc.jsonable_fraction(cert.value)} vs float {lp.fun:.12g} "
                     f"(|diff| {abs(float(cert.value) - lp.fun):.1e})"})
    # 2. Certified reward fits per second (10 candidates, 3 voters; hinge: the LP).
    rng = np.random.default_rng(1)
    X, V, w = rng.normal(size=(10, 2)), np.array([[1.0, 0.2], [0.3, 1.0], [-0.5, 0.8]]), np.array([0.5, 0.3, 0.2])
    for loss in sc.LOSSES:
        f, t = timed(lambda loss=loss: sc.fit_reward_certified(X, V, w, loss=loss), repeat=5)
        rows.append({
            "benchmark": "social_choice reward fit with certificate", "case": f"{loss}, 10 candidates, 3 voters",
            "baseline": "-", "baseline_s": float("nan"), "ours": f"{1 / t:.0f} fits/s", "ours_s": t,
            "ratio": float("nan"),
            "check": f"radius {f.radius:.1e}" if loss != "hinge" else f"duality gap {f.duality_gap:.1e}"})
    # 3. The violation-rate sweep (quick config, 512 instances) on 1 device vs all.
    cfg = load(figure_config("social_choice_polynomial"), "quick",
               {k: v.params for k, v in EXPERIMENTS.items()}, sim="social_choice")
    p = cfg.params
    n_inst = 512

    def sweep(mesh):
        return runtime.map_seeds(lambda k: poly_instance(k, p), 0, n_inst, mesh=mesh)["violated_2"]

    one, t1 = timed(lambda: sweep(runtime.make_mesh(1)), repeat=1)
    alln, tn = timed(lambda: sweep(runtime.make_mesh()), repeat=1)
    rows.append({
        "benchmark": "social_choice polynomial violation sweep (instances/s)",
        "case": f"{n_inst} instances x degrees {p.degrees}, {p.n_base + 1} candidates",
        "baseline": f"1 device {n_inst / t1:.3g}/s", "baseline_s": t1,
        "ours": f"{jax.device_count()} devices {n_inst / tn:.3g}/s", "ours_s": tn, "ratio": t1 / tn,
        "check": f"same verdicts: {bool(np.array_equal(np.asarray(one), np.asarray(alln)))}"})
    return rows
