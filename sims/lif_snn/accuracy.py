"""The ``accuracy`` experiment (Figure 3's accuracy dependence): the NS drop of training against accuracy.

Araya et al., Figure 3, observe that training lowers noise sensitivity *more* on the dataset trained to the
higher accuracy (MNIST, about 98% training accuracy, against CIFAR-10, 84.38%). Here the accuracy of one
ten-class task is varied by a graded difficulty, label noise (:func:`sims.lif_snn.training.noisy_labels`),
with every level of a seed sharing its initial network, minibatch order and NS input pairs (paired), so a
seed's levels differ only in the labels trained on. The same levels on a sparse parity of uniform bits (a
high-degree target, where fitting raises NS) are the control.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

import numpy as np

from sims import cli, runtime
from sims.config import param
from sims.lif_snn.neuron import _check_kinds, KindName
from sims.lif_snn.training import (digits_data, NetworkTraining, parity_placeholder, parity_sample, train_network,
                                   TrainingParams)

TaskName = Literal["digits2", "digits10"]


@dataclasses.dataclass(frozen=True)
class AccuracyParams(NetworkTraining):
    """Surrogate-gradient training at several label-noise levels (same seeds): accuracy and NS drop. The
    data, network, optimiser and NS settings are :class:`~sims.lif_snn.training.NetworkTraining`'s."""

    task: TaskName = param("digits10", doc="the data task (ten classes: the paper's MNIST/CIFAR-10 setting)")
    kind: KindName = param("slif")
    label_noise: tuple[float, ...] = param((0.0, 0.1, 0.2), ge=0, le=1,
                                           doc="rates at which training labels are replaced by random classes")
    n_seeds: int = param(16, ge=2, le=runtime.MAX_SEEDS)
    ns_pairs: int = param(1024, ge=1, doc="(x, y) pairs per nu for each NS estimate", smoke=1024)
    nus: tuple[float, ...] = param((0.0625, 0.125, 0.25), gt=0, le=0.5)
    parity_sample: bool = param(True, doc="the parity control trains on a fixed sample as large as the task's data "
                                "(parity_sample), split and corrupted as the task's; false: fresh inputs every "
                                "batch, whose label noise the network averages out (its accuracy cannot fall)")

    def __post_init__(self):
        super().__post_init__()
        _check_kinds((self.kind,))
        if len(self.label_noise) < 2 or len(set(self.label_noise)) != len(self.label_noise):
            raise ValueError(f"label_noise needs at least two distinct levels, got {self.label_noise}")

    def training(self) -> TrainingParams:
        """The :class:`~sims.lif_snn.training.TrainingParams` of one training run at these settings."""
        shared = {f.name: getattr(self, f.name) for f in dataclasses.fields(NetworkTraining)}
        return TrainingParams(**shared, n_seeds=self.n_seeds, nus=self.nus, tasks=(self.task, "parity"),
                              kinds=(self.kind,), parity_kinds=(self.kind,), log_every=1)


def run_accuracy(p: AccuracyParams, ctx: cli.Context) -> dict:
    """Accuracy and NS before/after training at each label-noise level, on ``p.task`` and (the control) on
    the ``p.parity_bits``-bit parity of ``p.parity_n`` uniform bits.

    Source: Araya et al., Figure 3 (training lowers NS more at higher accuracy);
    ``paper_configs/lif_snn_accuracy.yaml``. Seed ``i`` trains one network per level from the same
    initialisation, on the same minibatches and with the same NS pairs (:func:`train_network` with
    ``label_noise``); the levels differ only in the training labels (nested corruptions).

    With ``p.parity_sample`` the parity control trains on a fixed sample of as many inputs as the task's
    data (:func:`~sims.lif_snn.training.parity_sample`, split by ``p.test_fraction``), its labels corrupted
    per seed as the task's are, so label noise acts on both tasks the same way.

    Returns (``S = p.n_seeds``, ``K = len(p.label_noise)``, ``V = len(p.nus)``): label_noise [K], nus [V],
    input_dims [2] (the task's n = 64 and ``p.parity_n``), and for ``pre`` in ``("task", "parity")``, seeds on
    axis 0:
      {pre}_train_acc [S, K]: accuracy on the training inputs against their clean labels (parity without
        ``parity_sample``: fresh uniform inputs); {pre}_test_acc [S, K]: on held-out inputs.
      {pre}_ns_before, {pre}_ns_after [S, K, V]: NS with x uniform on {-1,1}^n (the definition), MC over
        ``p.ns_pairs`` pairs per nu (the same pairs before and after, and at every level).
      {pre}_data_ns_before, {pre}_data_ns_after [S, K, V]: the same with x drawn from held-out inputs.
    """
    tp = p.training()
    levels = np.asarray(p.label_noise, np.float32)
    k = levels.size
    items = (np.repeat(np.arange(p.n_seeds, dtype=np.int32), k), np.tile(levels, p.n_seeds))
    out = {"label_noise": np.asarray(p.label_noise, np.float64), "nus": np.asarray(p.nus),
           "input_dims": np.asarray([64, p.parity_n])}
    keep = ("train_acc", "test_acc", "ns_before", "ns_after", "data_ns_before", "data_ns_after")
    tasks = [("task", p.task), ("parity", "parity")]
    task_data = digits_data(tp, p.task, ctx.config.seed)
    n_data = task_data[1].size + task_data[3].size
    parity_data = (parity_sample(tp, n_data, ctx.config.seed) if p.parity_sample else parity_placeholder(tp))
    for pre, task in runtime.tracked(tasks, "accuracy", unit="task"):
        data = parity_data if task == "parity" else task_data

        def piece(task=task, data=data):
            fn = lambda it, *d: train_network(runtime.seed_key(ctx.config.seed, it[0]), *d, p=tp, task=task,
                                              kind=p.kind, label_noise=it[1], fresh_parity=not p.parity_sample)
            r = runtime.map_batch(fn, items, *data, mesh=ctx.mesh, per_device=p.per_device)
            return {name: np.asarray(r[name]).reshape((p.n_seeds, k) + np.shape(r[name])[1:]) for name in keep}

        for name, arr in ctx.parts.get(pre, piece).items():
            out[f"{pre}_{name}"] = arr
    return out
