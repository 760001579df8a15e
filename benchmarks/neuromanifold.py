"""Benchmarks of the neuromanifold toolkit (``python -m benchmarks --paper neuromanifold``, ~1 minute).

* Exact rank of the Jacobian of ``W -> (f_W(x_1..x_M))`` at a rational point: sympy's plain
  ``Matrix.rank`` against python-flint (``fmpq_mat`` over Q, ``nmod_mat`` over F_p), same rank. sympy is
  run in a separate process with a time limit; a timeout is reported as such (the ratio is then a lower
  bound).
* Numeric rank (float64 JAX): one compiled Jacobian per architecture against the padded, vmapped batch
  of ``mlp_numeric_ranks``, seconds per architecture.
"""

from __future__ import annotations

import multiprocessing as mp
import random
import time

import sympy as sp

from benchmarks.timing import timed
from theory import neuromanifold as nm

SYMPY_LIMIT_S = 20.0
ACT = [0, 0, 1, 1]


def _jacobian_qq(widths, seed=0):
    rng = random.Random(seed)
    theta, X = nm.random_point("mlp", widths, rng, "QQ")
    return nm.eval_jacobian("mlp", widths, ACT, theta, X, field="QQ"), theta, X


def _sympy_rank_worker(widths, q):
    J, _, _ = _jacobian_qq(widths)
    M = sp.Matrix([[sp.Rational(int(v.p), int(v.q)) for v in row] for row in J.tolist()])
    t0 = time.perf_counter()
    r = M.rank()
    q.put((r, time.perf_counter() - t0))


def _sympy_rank(widths, limit=SYMPY_LIMIT_S):
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_sympy_rank_worker, args=(widths, q))
    p.start()
    try:
        r, s = q.get(timeout=limit + 15)  # + start-up of the child
    except Exception:  # noqa: BLE001 - queue.Empty: the child ran out of time
        r, s = None, limit
    p.join(timeout=1)
    if p.is_alive():
        p.terminate()
        p.join()
    return r, s


def _exact_rows():
    rows = []
    for widths in ((2, 2, 2, 1), (4, 4, 4, 4, 4)):
        J, theta, X = _jacobian_qq(widths)
        r_q, t_q = timed(lambda: nm.exact_rank(J, "QQ"))
        Jp = nm.eval_jacobian("mlp", widths, ACT, theta, X, field="modp")
        r_p, t_p = timed(lambda: nm.exact_rank(Jp, "modp"))
        r_s, t_s = _sympy_rank(widths)
        shape = f"{J.shape[0]}x{J.shape[1]}"
        base = "sympy Matrix.rank" if r_s is not None else f"sympy (>{SYMPY_LIMIT_S:.0f}s, stopped)"
        for name, r, t in (("flint fmpq_mat (Q)", r_q, t_q), ("flint nmod_mat (F_p)", r_p, t_p)):
            check = (f"same rank {r}" if r_s == r else
                     f"rank {r}; sympy gave {r_s}" if r_s is not None else f"rank {r}; sympy timed out")
            rows.append({"benchmark": "exact Jacobian rank", "case": f"MLP {widths} {shape}",
                         "baseline": base, "baseline_s": t_s, "ours": name, "ours_s": t,
                         "ratio": t_s / max(t, 1e-9), "check": check})
    # The 200 x 200 scale: 210 parameters, no sympy (minutes); F_p against Q.
    widths = (10, 10, 10, 1)
    J, theta, X = _jacobian_qq(widths)
    r_q, t_q = timed(lambda: nm.exact_rank(J, "QQ"), repeat=1, warmup=0)
    Jp = nm.eval_jacobian("mlp", widths, ACT, theta, X, field="modp")
    r_p, t_p = timed(lambda: nm.exact_rank(Jp, "modp"))
    rows.append({"benchmark": "exact Jacobian rank", "case": f"MLP {widths} {J.shape[0]}x{J.shape[1]}",
                 "baseline": "flint fmpq_mat (Q)", "baseline_s": t_q, "ours": "flint nmod_mat (F_p)",
                 "ours_s": t_p, "ratio": t_q / max(t_p, 1e-9),
                 "check": "same rank %d" % r_p if r_p == r_q else f"F_p {r_p} vs Q {r_q}"})
    _, t_all = timed(lambda: nm.mlp_dimension(widths, ACT), repeat=1, warmup=0)
    rows.append({"benchmark": "mlp_dimension end to end", "case": f"MLP {widths}", "baseline": "-",
                 "baseline_s": float("nan"), "ours": "mlp_dimension", "ours_s": t_all, "ratio": float("nan"),
                 "check": f"rank {nm.mlp_dimension(widths, ACT)} of N=210"})
    return rows


def _numeric_rows():
    archs = sorted(random.Random(0).sample(nm.mlp_grid(4, (4,)), 16))
    # Compilation included on purpose (no warm-up): one compile per architecture is what is compared.
    single, t_single = timed(lambda: [nm.numeric_rank("mlp", w, ACT, n_points=3, seed=0).rank for w in archs],
                             repeat=1, warmup=0)
    batch, t_batch = timed(lambda: [r.rank for r in nm.mlp_numeric_ranks(archs, ACT, n_points=3, seed=0)],
                           repeat=1, warmup=0)
    t_single, t_batch = t_single / len(archs), t_batch / len(archs)
    exact = [nm.mlp_dimension(w, ACT) for w in archs]
    agree = sum(int(a == b == c) for a, b, c in zip(single, batch, exact))
    return [{"benchmark": "numeric rank (s / architecture)", "case": f"{len(archs)} depth-4 MLPs x3+x2",
             "baseline": "one jit per net", "baseline_s": t_single, "ours": "padded vmapped batch",
             "ours_s": t_batch, "ratio": t_single / max(t_batch, 1e-9),
             "check": f"{agree}/{len(archs)} equal to exact"}]


def run() -> list[dict]:
    return _exact_rows() + _numeric_rows()


if __name__ == "__main__":
    from sims import runtime

    runtime.setup()
    for row in run():
        print(row)
