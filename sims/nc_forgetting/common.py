"""Parameters shared by the NC-forgetting experiments and the per-dataset driver."""

from __future__ import annotations

import dataclasses

import jax
import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.nc_forgetting.data import Data, DatasetName, digits_data, gaussian_data
from sims.nc_forgetting.training import Trainer

# ---------------------------------------------------------------------------------------------------
# Parameters shared by the experiments
# ---------------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class CommonParams:
    """Data, network and training shared by every experiment."""

    datasets: tuple[DatasetName, ...] = param(("digits", "gaussian"))
    n_seeds: int = param(3, ge=2, le=runtime.MAX_SEEDS)
    widths: tuple[int, ...] = param((64, 64, 32), ge=1, doc="hidden widths; the last is the feature dim")
    steps_per_task: int = param(200, ge=1, smoke=20)
    batch_size: int = param(64, ge=2)
    lr: float = param(0.05, gt=0)
    momentum: float = param(0.9, ge=0, lt=1)
    weight_decay: float = param(5e-4, ge=0, doc="coupled L2 (optax.add_decayed_weights before sgd)")
    replay_ratio: float = param(0.5, gt=0, lt=1, doc="share of each batch drawn from the buffer (ratio)")
    probe_C: float = param(10.0, gt=0, doc="inverse L2 strength of the probe (the authors': 10)")
    probe_standardize: bool = param(True, doc="standardise features before the probe (the authors: no)")
    digits_test_fraction: float = param(0.3, gt=0, lt=1)
    gaussian_n_train: int = param(150, ge=4, doc="training samples per class", smoke=200)
    gaussian_n_test: int = param(60, ge=4, doc="test samples per class", smoke=100)
    gaussian_spike_rank: int = param(8, ge=1)
    gaussian_spike_scale: float = param(0.5, gt=0)
    gaussian_separation: float = param(1.0, gt=0, doc="class-mean scale; 1.0 with spike 0.5 (root seed 0): "
                                       "Bayes accuracy 0.891, room for forgetting to show (3.0: 0.99999984)")

    def __post_init__(self):
        _distinct("datasets", self.datasets)

    def trainer(self, snapshots: int = 1, steps: int | None = None) -> Trainer:
        return Trainer(self.widths, steps or self.steps_per_task, self.batch_size, self.lr, self.momentum,
                       self.weight_decay, self.replay_ratio, snapshots)

    def check_snapshots(self, snapshots: int) -> None:
        if self.steps_per_task % snapshots:
            raise ValueError(f"steps_per_task ({self.steps_per_task}) must be a multiple of snapshots ({snapshots})")


def load_data(p: CommonParams, name: str, seed: int) -> Data:
    """The data set ``name`` of the experiment (same split and draw for a given root seed)."""
    if name == "digits":
        return digits_data(p.digits_test_fraction, seed)
    return gaussian_data(p.gaussian_n_train, p.gaussian_n_test, 64, p.gaussian_spike_rank,
                         p.gaussian_spike_scale, p.gaussian_separation, seed)


def _distinct(name: str, values) -> None:
    if len(set(values)) != len(values):
        raise ValueError(f"{name} must not repeat an entry, got {list(values)}")


def _percents(values) -> tuple[float, ...]:
    if len(set(values)) != len(values) or list(values) != sorted(values):
        raise ValueError(f"buffer_percents must be increasing and distinct, got {list(values)}")
    return tuple(values)


def per_dataset(p: CommonParams, ctx: cli.Context, tag: str, fn, datas: dict | None = None) -> dict:
    """``fn(p, data, seed, mesh) -> arrays`` on every data set of ``p`` (one resumable piece each), the
    arrays stacked on a leading data-set axis ``[D, ...]``, with ``datasets [D]`` and ``bayes_accuracy [D]``
    (NaN where unknown: digits)."""
    datas = datas or {name: load_data(p, name, ctx.config.seed) for name in p.datasets}
    parts = {name: ctx.parts.get(f"{tag}_{name}", lambda data=data: fn(p, data, ctx.config.seed, ctx.mesh))
             for name, data in datas.items()}
    out = {k: np.stack([parts[n][k] for n in p.datasets]) for k in parts[p.datasets[0]]}
    bayes = np.array([datas[n].bayes_accuracy for n in p.datasets])
    return {"datasets": np.asarray(p.datasets), "bayes_accuracy": bayes, **out}


def evaluated(n: int, dead=None) -> list[int]:
    """The runs ``0..n-1`` whose frozen features the host evaluates (probes, metrics, heads), or none while
    the run is planned (:func:`sims.runtime.is_planning`): the planner's stand-in features are zeros, on
    which that evaluation measures nothing real (and the metrics refuse zero variance); its cost at paper
    scale is measured apart (the configs' headers) and the arrays it fills stay NaN. The runs where ``dead
    [n]`` (:func:`dead_runs`: a dead network, every unit of the last hidden layer off, whose features are
    all 0) are left out too: there is nothing to measure, and their statistics stay NaN (which the
    ledger's decisions refuse to average)."""
    if runtime.is_planning():
        return []
    return [r for r in range(n) if dead is None or not dead[r]]


def dead_runs(feats) -> np.ndarray:
    """``[n]`` True where the run's features ``feats [n, m, f]`` are identical on all ``m`` samples."""
    f = np.asarray(feats)
    return np.all(f == f[:, :1], axis=(1, 2))


def _params_at(params, r: int, s: int, k: int = -1):
    return jax.tree.map(lambda a: a[r, s, k], params)
