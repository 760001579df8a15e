"""The papers the ledger checks: title, authors, where to read them, and what they claim in one line
(from each paper's abstract). A paper missing here is shown under its module name, with the first line
of its claims module's docstring and the first arXiv id found there."""

from __future__ import annotations

import importlib
import re
from typing import NamedTuple


class Paper(NamedTuple):
    """One paper: ``url`` is its arXiv abstract page (OpenReview where no arXiv version is known)."""

    title: str
    authors: str
    venue: str
    url: str
    summary: str


PAPERS: dict[str, Paper] = {
    "seesaw": Paper(
        "Seesaw: Accelerating Training by Balancing Learning Rate and Batch Size Scheduling",
        "A. Meterez, D. Morwani, J. Wu, C.-A. Oncescu, C. Pehlevan, S. Kakade", "ICLR 2026",
        "https://arxiv.org/abs/2510.14717",
        "Where a scheduler would halve the learning rate, multiplying it by 1/sqrt(2) and doubling the batch "
        "size keeps the loss dynamics while cutting serial steps: exact for SGD on noisy linear regression, "
        "and for normalized SGD (a proxy for Adam) in a variance-dominated regime."),
    "relu_dag": Paper(
        "Topology and Geometry of the Learning Space of ReLU Networks: Connectivity and Singularities",
        "M. Nurisso, P. Leroy, G. Petri, F. Vaccarino", "ICLR 2026", "https://arxiv.org/abs/2602.00693",
        "For ReLU networks on any DAG, gradient flow conserves a balance vector; the set it confines the "
        "weights to is connected unless bottleneck nodes split it into components, and its singular points "
        "are tied to sub-networks that training can prune."),
    "neuromanifold": Paper(
        "Learning on a Razor's Edge: Identifiability and Singularity of Polynomial Neural Networks",
        "Shahverdi, Marchetti, Kohn", "ICLR 2026", "https://arxiv.org/abs/2505.11846",
        "For polynomial MLPs and CNNs the neuromanifold has the expected dimension (finite "
        "identifiability) for generic activations, and its singular points come from sub-networks, which "
        "biases learning towards sparse networks."),
    "lif_snn": Paper(
        "Random Spiking Neural Networks are Stable and Spectrally Simple",
        "E. Araya, M. Datres, G. Kutyniok", "ICLR 2026", "https://arxiv.org/abs/2511.00904",
        "Random leaky integrate-and-fire networks, seen as Boolean functions, are noise stable, and their "
        "Fourier weight concentrates on low degrees: a bias towards simple functions."),
    "social_choice": Paper(
        "Enforcing Axioms for AI Alignment under Loss-Based Rules", "Hollender, Kraiczy", "ICLR 2026",
        "https://openreview.net/forum?id=MpYSoTK65s",
        "Linear reward models fitted by a loss over pairwise comparisons (Bradley-Terry, as in RLHF) can "
        "violate Pareto optimality even with polynomial features, and uniform coverage of the comparisons "
        "restores it; the setting is that of Ge et al., NeurIPS 2024 (arXiv 2405.14758)."),
    "mdm_variance": Paper(
        "Bringing Stability to Diffusion: Decomposing and Reducing Variance of Training Masked Diffusion "
        "Models", "M. Jia, M. Zhou, Y. Liu, X. Jiang, G. Jiang", "ICLR 2026", "https://arxiv.org/abs/2511.18159",
        "The training variance of masked diffusion models splits into masking-pattern, masking-rate and "
        "data noise; a Pareto-optimal t-sampler (P-POTS) and negatively correlated masks (MIRROR) reduce it."),
    "nc_forgetting": Paper(
        "Heads collapse, features stay: Why Replay needs big buffers", "G. Lanzillotta, D. Meier, T. Hofmann",
        "ICLR 2026", "https://arxiv.org/abs/2512.07400",
        "Under replay, the features keep what past tasks need (little deep forgetting) while the head "
        "forgets (shallow forgetting); neural collapse of the replay buffer explains why small buffers "
        "fail and how the gap closes as the buffer grows."),
}


def paper(name: str) -> Paper:
    """The paper of claims module ``name``: from :data:`PAPERS`, else from the module's docstring."""
    if name in PAPERS:
        return PAPERS[name]
    try:
        doc = importlib.import_module(f"claims.{name}").__doc__ or ""
    except ImportError:
        doc = ""
    m = re.search(r"arXiv[: ]+(\d{4}\.\d{4,5})", doc)
    return Paper(name, "", "", f"https://arxiv.org/abs/{m.group(1)}" if m else "",
                 doc.strip().splitlines()[0] if doc.strip() else "")
