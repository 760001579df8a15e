"""Neural collapse and forgetting benchmarks: the NC metrics on 10^5 x 512 features (our SVD of the K
centred means, no d x d matrix) against a plain numpy implementation that forms Sigma_W and Sigma_B and
takes a pseudo-inverse; continual-learning runs per minute (the quick buffer_sweep grid) trained as one
vmapped batch on 1 device vs all devices."""

from __future__ import annotations

import jax
import numpy as np
from scipy.spatial.distance import cdist

from benchmarks.timing import timed
from sims import nc_forgetting as S
from sims import runtime
from sims.cli import figure_config
from sims.config import load
from theory import nc_forgetting as th

BENCH_STEPS_PER_TASK = 60  # the quick config trains 200 steps per task; fewer keep the benchmark short


def nc_metrics_plain(x: np.ndarray, y: np.ndarray, W: np.ndarray, b: np.ndarray) -> dict[str, float]:
    """NC1-NC4 written out (Papyan et al. 2020): ``Sigma_W [d, d]`` from the residuals (over n), ``Sigma_B
    [d, d] = M~^T M~ / K``, ``Tr(Sigma_W pinv(Sigma_B)) / K`` (pinv cut at 1e-10 relative: Sigma_B has rank
    K - 1 and its rounding eigenvalues must not be inverted), nearest centres by ``cdist``, the head with its
    bias ``b [K]``."""
    classes = np.unique(y)
    K, n = classes.size, x.shape[0]
    means = np.stack([x[y == c].mean(axis=0) for c in classes])
    mt = means - means.mean(axis=0)
    resid = x - means[np.searchsorted(classes, y)]
    sigma_w = resid.T @ resid / n
    sigma_b = mt.T @ mt / K
    nc1 = float(np.trace(sigma_w @ np.linalg.pinv(sigma_b, rtol=1e-10, hermitian=True)) / K)
    norms = np.linalg.norm(mt, axis=1)
    cos = (mt @ mt.T) / np.outer(norms, norms)
    off = ~np.eye(K, dtype=bool)
    nc3 = float(np.sum((W / np.linalg.norm(W) - mt / np.linalg.norm(mt)) ** 2))
    nc4 = float(np.mean(np.argmax(x @ W.T + b, axis=1) != np.argmin(cdist(x, means), axis=1)))
    return {"nc1": nc1, "nc2_equinorm": float(norms.std() / norms.mean()),
            "nc2_equiangular": float(np.mean(np.abs(cos[off] + 1 / (K - 1)))), "nc3": nc3, "nc4": nc4}


def _nc_row() -> dict:
    n, d, K = 100_000, 512, 10
    rng = np.random.default_rng(0)
    y = np.arange(n) % K
    means = 3.0 * rng.standard_normal((K, d))
    x = means[y] + rng.standard_normal((n, d))
    W = means - means.mean(axis=0) + 0.5 * rng.standard_normal((K, d))
    b = -W @ means.mean(axis=0)
    ref, t_plain = timed(lambda: nc_metrics_plain(x, y, W, b), repeat=2, warmup=0)
    ours, t_ours = timed(lambda: th.nc_metrics(x, y, W, b), repeat=2, warmup=0)
    rel = {k: abs(ours[k] - ref[k]) / max(abs(ref[k]), 1e-300) for k in ref}
    worst = max(rel, key=rel.get)
    return {"benchmark": "nc_forgetting NC1-NC4 metrics", "case": f"n={n}, d={d}, K={K}, float64",
            "baseline": "numpy: d x d Sigma_W, Sigma_B, pinv", "baseline_s": t_plain,
            "ours": "nc_metrics: SVD of the K centred means", "ours_s": t_ours, "ratio": t_plain / t_ours,
            "check": f"max rel diff {rel[worst]:.1e} ({worst}); nc1 {ours['nc1']:.6g}"}


def _sweep_row() -> dict:
    cfg = load(figure_config("nc_forgetting_buffer_sweep"), "quick",
               {k: v.params for k, v in S.EXPERIMENTS.items()}, sim="nc_forgetting")
    p = cfg.params
    steps = min(p.steps_per_task, BENCH_STEPS_PER_TASK)
    tr = p.trainer(steps=steps)
    data = S.load_data(p, "digits", cfg.seed)
    specs = [{"seed": s, "setting": st, "schedule": h, "percent": b} for st in p.settings for h in p.schedules
             for b in p.buffer_percents for s in range(p.n_seeds)]
    n_runs = len(specs)

    def train(mesh):
        return S.train_grid(tr, data, specs, cfg.seed, mesh)[0]

    one, t1 = timed(lambda: train(runtime.make_mesh(1)), repeat=1)
    alln, tn = timed(lambda: train(runtime.make_mesh()), repeat=1)
    diffs = [float(np.max(np.abs(np.asarray(a, np.float64) - np.asarray(b, np.float64))))
             for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(alln), strict=True)]
    scale = max(float(np.max(np.abs(np.asarray(a)))) for a in jax.tree.leaves(one))
    bitwise = all(np.array_equal(a, b) for a, b in zip(jax.tree.leaves(one), jax.tree.leaves(alln), strict=True))
    loss_diff = float(np.max(np.abs(one["loss"] - alln["loss"])))
    return {"benchmark": "nc_forgetting continual-learning runs (runs/min)",
            "case": f"quick buffer_sweep grid, digits: {n_runs} runs ({len(p.settings)} settings x "
                    f"{len(p.schedules)} schedules x {len(p.buffer_percents)} buffers x {p.n_seeds} seeds), "
                    f"5 tasks x {steps} steps, widths {tuple(p.widths)}",
            "baseline": f"1 device {60 * n_runs / t1:.3g}/min", "baseline_s": t1,
            "ours": f"{jax.device_count()} devices {60 * n_runs / tn:.3g}/min", "ours_s": tn, "ratio": t1 / tn,
            "check": f"bitwise equal: {bitwise}; max |diff| params+losses {max(diffs):.1e} "
                     f"(largest value {scale:.3g}), final losses {loss_diff:.1e}"}


def run() -> list[dict]:
    return [_nc_row(), _sweep_row()]
