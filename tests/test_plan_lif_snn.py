"""The paper-scale plan of the LIF-SNN simulations (Araya, Datres, Kutyniok, ICLR 2026; sims/lif_snn/): the
exact spectra of Corollary 1 (``spectrum``) planned at small widths find the network evaluation and the
Walsh-Hadamard transforms, called as often as the run calls them, and a transform's FLOPs match the butterfly
count."""

from __future__ import annotations

import collections

import pytest
import yaml

from conftest import batch_calls
from sims import plan, results

# Two widths, two depths, 8 networks in calls of 4: per width 2 network calls, each followed by the level
# weights of its 4 x 2 tables, and 2 calls of level weights of 4 sampled random functions.
WIDTHS, DEPTH, NETWORKS, PER_CALL = (4, 6), 2, 8, 4
CALLS = NETWORKS // PER_CALL


def _config(tmp_path):
    """The repository's spectrum config with its quick scale cut down to the sizes above."""
    cfg = yaml.safe_load((results.REPO / "paper_configs" / "lif_snn_spectrum.yaml").read_text())
    cfg["quick"] = dict(cfg["quick"], widths=list(WIDTHS), max_depth=DEPTH, n_networks=NETWORKS,
                        networks_per_call=PER_CALL)
    p = tmp_path / "lif_snn_spectrum.yaml"
    p.write_text(yaml.safe_dump(cfg))
    return p


@pytest.fixture(scope="module")
def spectrum_plan(tmp_path_factory):
    return plan.plan_config(_config(tmp_path_factory.mktemp("lif_snn_plan")), "quick")


def test_spectrum_plan_counts_every_compiled_call_of_the_run(spectrum_plan):
    p = spectrum_plan
    assert p.runnable and not p.error, p.error
    calls = collections.Counter()
    for s in p.stages:
        calls[s.name] += s.calls
    # per width: CALLS network evaluations, and a transform plus level sums for each of them and for each
    # chunk of random functions
    # each network call a map_seeds over PER_CALL networks, in conftest.batch_calls(PER_CALL) compiled calls
    assert calls == {"map_seeds(network_sweep.<locals>.per_network)": len(WIDTHS) * CALLS * batch_calls(PER_CALL)[0],
                     "walsh_hadamard": 2 * len(WIDTHS) * CALLS, "level_weights": 2 * len(WIDTHS) * CALLS}
    # signatures: tables of networks (PER_CALL x DEPTH) and of random functions (PER_CALL) per width
    assert sum(s.name == "walsh_hadamard" for s in p.stages) == 2 * len(WIDTHS)


def test_walsh_hadamard_flops_match_the_butterfly_count(spectrum_plan):
    # n butterflies over a table of 2^n entries, each an add and a subtract per pair (2^n FLOPs), then the
    # division by 2^n (2^n FLOPs): (n + 1) 2^n per table, float64; PER_CALL x DEPTH network tables or
    # PER_CALL random functions per call. Each butterfly also stacks its two halves (2^n elements): data
    # movement, which the plan counts at one FLOP per element when it has no rule for it (then (2n + 1) 2^n).
    stages = [s for s in spectrum_plan.stages if s.name == "walsh_hadamard"]
    assert len(stages) == 2 * len(WIDTHS)
    stacked = {bool({"stack", "concatenate"} & set(s.cost.approximated)) for s in stages}
    assert len(stacked) == 1
    per_table = (lambda n: (2 * n + 1) * 2**n) if stacked.pop() else (lambda n: (n + 1) * 2**n)
    expected = sorted(t * per_table(n) for n in WIDTHS for t in (PER_CALL, PER_CALL * DEPTH))
    assert sorted(s.cost.flops for s in stages) == expected
    assert all(s.cost.flops_f64 == s.cost.flops for s in stages)


@pytest.mark.slow
def test_smoke_run_of_the_spectrum_config_writes_a_result_and_a_figure(tmp_path):
    meta = plan.smoke_config(results.REPO / "paper_configs" / "lif_snn_spectrum.yaml", tmp_path)
    assert meta["smoke"] and meta["figure_rc"] == 0
    assert (tmp_path / "paper" / "lif_snn_spectrum.npz").exists()
