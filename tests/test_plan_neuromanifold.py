"""The paper-scale plan of the neuromanifold simulations (Shahverdi, Marchetti, Kohn, ICLR 2026;
sims/neuromanifold.py): the sparsity-bias runs planned at small shapes find one compiled trial per
architecture (named apart: MLP and CNN take the same arguments), each called once, with FLOPs above a count
of the coefficient projections from the shapes; the exact-rank sweep is host work, extrapolated in
max_width."""

from __future__ import annotations

from conftest import batch_calls
from sims import plan
from theory import neuromanifold as nm

RUNS, STEPS = 4, 50


def _write(tmp_path, name, body):
    p = tmp_path / f"{name}.yaml"
    p.write_text(f"sim: neuromanifold\n{body}paper: {{}}\n")
    return p


def test_sparsity_plan_has_one_trial_per_architecture_with_its_projection_flops(tmp_path):
    body = ("experiment: sparsity\nseed: 0\nparams:\n  lr: 0.01\n  init_scale: 0.5\n"
            f"  thresholds: [0.1, 0.01]\nquick:\n  n_runs: {RUNS}\n  n_steps: {STEPS}\n")
    p = plan.plan_config(_write(tmp_path, "neuromanifold_sparsity", body), "quick")
    assert p.runnable and not p.error, p.error
    calls, padded = batch_calls(RUNS)  # per call: ceil(RUNS / 8) runs per device
    assert {s.name: s.calls for s in p.stages} == {"map_seeds(sparsity.trial[mlp])": calls,
                                                   "map_seeds(sparsity.trial[cnn])": calls}
    for kind, spec in (("mlp", nm.COMPARED_MLP), ("cnn", nm.COMPARED_CNN)):
        (stage,) = [s for s in p.stages if s.name == f"map_seeds(sparsity.trial[{kind}])"]
        _, P = nm.coefficient_projector(spec[0], spec[1], nm.activation(spec[2]))
        # theory.neuromanifold.sparsity_trial_fn: every GD step projects the network's values onto the
        # coefficients, P @ f (2 |P| FLOPs), and back in the gradient, P^T r (2 |P|); the scan runs STEPS
        # steps.
        projections = padded * STEPS * 4 * P.size
        # The rest of a step is the small network's own products, its polynomial activation and the
        # clipped SGD update: less than three times the projections again (totals: CNN 1.9x, MLP 3.2x).
        assert projections <= stage.cost.flops <= 4 * projections, kind


def test_dimensions_plan_is_host_work_extrapolated_in_max_width(tmp_path):
    body = ("experiment: dimensions\nseed: 0\nparams:\n  depths: [2]\n  max_width: 4\n"
            "  numeric: [quadratic]\n  activations: [quadratic]\n  max_per_depth: [100000]\n"
            "quick:\n  n_points: 1\n")
    p = plan.plan_config(_write(tmp_path, "neuromanifold_dimensions", body), "quick")
    assert not p.error, p.error
    assert p.stages == []  # exact F_p ranks and host SVDs: nothing is a runtime.jit function
    # planned at max_width 2 and 3 (small=(2, 3) in EXPERIMENTS), extrapolated to the config's 4
    assert "max_width = 2:" in p.note and "3:" in p.note and p.note.endswith("to max_width = 4")
    assert p.host_s > 0
