"""The neuromanifold claims decide on what they are given: fabricated figure results (no simulation)
where the answer is known, handed to the registered checks as :class:`claims.ledger.Reads`.

Each claim decided from data gets a result where the theorem holds ("holds"), one where it is violated
("fails"), one where a control is accepted (the test cannot tell the claim from its negation: "fails"),
and, for the Monte Carlo claims, one at the threshold ("inconclusive"). The dimension claims are exact
(integer ranks), so no fabricated result sits "at the threshold" there.
"""

from __future__ import annotations

import numpy as np
import pytest

from claims import ledger
from claims import neuromanifold as C  # noqa: F401  (registers the claims)
from theory import neuromanifold as nm

# --------------------------------------------------------------------------- dimensions (exact)

RAMP = (3, 4, 5)
NETS = [(2, 2, 1), (1, 1, 3, 1), (2, 4, 3), (3, 3, 1)]


def _dims(rank_of, expected_of) -> ledger.FigureResult:
    """A dimensions result over :data:`NETS` for the activations the dimension claims read:
    ``rank_of(name, widths)`` and ``expected_of(name, widths)`` give the exact rank and E(w)."""
    names = (["x3+x2", "generic cubic", "monomial x3", "quadratic", "x^3+x^2+x"]
             + [f"dense({r},{s})" for r in RAMP for s in (0, 1)] + [f"x^{r}" for r in RAMP]
             + [f"x^{r}+x^{r - 1}" for r in RAMP])
    L = max(len(w) for w in NETS)
    widths = np.array([list(w) + [0] * (L - len(w)) for w in NETS])
    n = np.array([nm.mlp_num_params(w) for w in NETS])
    exact = np.array([[rank_of(a, w) for w in NETS] for a in names])
    expd = np.array([[expected_of(a, w) for w in NETS] for a in names])
    numeric = np.where(np.array([a in ("x3+x2", "generic cubic", "monomial x3", "quadratic") for a in names])[:, None],
                       exact, -1)
    arrays = {"widths": widths, "depth": np.array([len(w) - 1 for w in NETS]), "n_params": n,
              "activations": np.array(names), "exact_rank": exact, "numeric_rank": numeric,
              "expected": expd, "ambient": np.full_like(exact, 10**6)}
    return ledger.FigureResult(arrays, {"config": {}, "seed_axes": {}})


def _n(w):
    return nm.mlp_num_params(w)


def _mono(name):
    return name == "monomial x3" or (name.startswith("x^") and "+" not in name)


def _theorem_grid(name, w, override=None):
    """Ranks as the claims say: dense of degree 3 stop at E(w) = N - 1 on (1,1,3,1) (a width-1 cut),
    degree >= 4 reach N; monomials lose one per hidden neuron, sparse sums one on (3,3,1); x^3 + x^2 and
    the quadratic have rank 19 < E = 20 on (2,4,3), the quadratic 5 < 6 on (2,2,1)."""
    if override and (name, w) in override:
        return override[(name, w)]
    if _mono(name):
        return _n(w) - sum(w[1:-1])
    if name in ("x3+x2", "quadratic") and w == (2, 4, 3):
        return 19
    if name == "quadratic" and w == (2, 2, 1):
        return 5
    if (name.startswith("dense(3,") or name == "quadratic") and w == (1, 1, 3, 1):
        return _n(w) - 1
    if name.startswith("x^") and w == (3, 3, 1):
        return _n(w) - 1
    return _n(w)


def _expected(name, w):
    if _mono(name):
        return _n(w) - sum(w[1:-1])
    if name.startswith("dense(3,") and w == (1, 1, 3, 1):
        return _n(w) - 1
    return _n(w)


def _decide(claim_id: str, name: str, result: ledger.FigureResult) -> ledger.Evidence:
    return ledger.REGISTRY[claim_id].decide(ledger.Reads({name: result}, claim_id=claim_id))


def test_mlp_dimension_holds_on_a_grid_where_the_theorem_holds():
    ev = _decide("neuromanifold.mlp_dimension", C.DIMS, _dims(_theorem_grid, _expected))
    assert ev.verdict == "holds", ev.decisions
    assert ev.measured["r* (rank = N on all from here)"] == 4 and ev.measured["architectures"] == len(NETS)
    assert len(ev.controls) == 4 and all(c.rejected for c in ev.controls)  # x^4, x^4+x^3, dense(3,0), dense(3,1)


def test_mlp_dimension_fails_when_a_generic_rank_misses_its_expected_dimension():
    bad = {("dense(5,1)", (3, 3, 1)): _n((3, 3, 1)) - 1}
    ev = _decide("neuromanifold.mlp_dimension", C.DIMS, _dims(lambda a, w: _theorem_grid(a, w, bad), _expected))
    assert ev.verdict == "fails" and ev.decisions[0].decision == "fails"


def test_mlp_dimension_fails_when_the_monomial_control_also_reaches_n():
    """If x^4 had rank N everywhere, 'rank = N' would not tell generic from monomial activations."""
    full = {("x^4", w): _n(w) for w in NETS}
    ev = _decide("neuromanifold.mlp_dimension", C.DIMS, _dims(lambda a, w: _theorem_grid(a, w, full), _expected))
    assert all(d.decision == "holds" for d in ev.decisions)
    assert ev.verdict == "fails" and not ev.controls[0].rejected


def test_mlp_dimension_fails_without_a_degree_from_which_rank_is_n():
    low = {(f"dense({r},{s})", (3, 3, 1)): _n((3, 3, 1)) - 1 for r in RAMP for s in (0, 1)}
    exp = {k: v for k, v in low.items()}
    ev = _decide("neuromanifold.mlp_dimension", C.DIMS,
                 _dims(lambda a, w: _theorem_grid(a, w, low), lambda a, w: exp.get((a, w), _expected(a, w))))
    assert ev.measured["r* (rank = N on all from here)"] is None and ev.verdict == "fails"


def test_low_degree_defects_holds_and_fails():
    ev = _decide("neuromanifold.low_degree_defects", C.DIMS, _dims(_theorem_grid, _expected))
    assert ev.verdict == "holds", [d for d in ev.decisions if d.decision != "holds"]
    assert all(c.rejected for c in ev.controls)
    # x^3 + x^2 read at rank 20 = E on (2,4,3): no defect there (and Q / F_p disagree with the figure).
    no_defect = {("x3+x2", (2, 4, 3)): 20}
    ev = _decide("neuromanifold.low_degree_defects", C.DIMS,
                 _dims(lambda a, w: _theorem_grid(a, w, no_defect), _expected))
    assert ev.verdict == "fails" and ev.decisions[0].decision == "fails"
    # A generic cubic with the same defect: the control is accepted, the family is not the cause.
    cubic = {("generic cubic", (2, 4, 3)): 19}
    ev = _decide("neuromanifold.low_degree_defects", C.DIMS, _dims(lambda a, w: _theorem_grid(a, w, cubic), _expected))
    assert ev.verdict == "fails" and not ev.controls[0].rejected


# --------------------------------------------------------------------------- Monte Carlo claims

def _exposure(mlp_hits: int, cnn_hits: int, n: int = 100, cnn_grad: float = 3.0) -> ledger.FigureResult:
    perm = np.random.default_rng(1).permutation(n)  # the critical targets spread over the seeds
    mlp, cnn = perm < mlp_hits, perm < cnn_hits
    pg = np.full((n, 4), cnn_grad)
    pg[cnn, 0] = 1e-8
    arrays = {"mlp_critical": mlp, "mlp_full_grad": np.where(mlp, 1e-8, np.nan), "mlp_converged": mlp,
              "cnn_critical": cnn, "cnn_pruned_grad": pg, "cnn_full_grad": pg.copy(), "tol": np.array(1e-6)}
    axes = {k: 0 for k in arrays if k != "tol"}
    cfg = {"tol": 1e-6, "mlp_restarts": 8, "mlp_steps": 300, "cnn_restarts": 4, "cnn_steps": 150}
    return ledger.FigureResult(arrays, {"config": cfg, "seed_axes": axes})


@pytest.mark.parametrize("mlp_hits, cnn_hits, cnn_grad, verdict", [
    (90, 0, 3.0, "holds"),          # Thm 4.3 and Prop 4.5 as measured
    (0, 0, 3.0, "fails"),           # no exposed MLP subnetwork: the rate is below 10% at 3 SE
    (10, 0, 3.0, "inconclusive"),   # 10 of 100: the rate sits at the threshold
    (90, 50, 3.0, "fails"),         # the CNN control exposed too: the test cannot tell them apart
    (90, 0, 5e-5, "fails"),         # the CNN misses tol only narrowly (< 100 tol): the loose control holds
])
def test_critical_exposure(mlp_hits, cnn_hits, cnn_grad, verdict):
    ev = _decide("neuromanifold.critical_exposure", "neuromanifold_exposure",
                 _exposure(mlp_hits, cnn_hits, cnn_grad=cnn_grad))
    assert ev.verdict == verdict, (ev.decisions, ev.controls)


def _sparsity(mlp_near: float, cnn_near: float, mlp_far: float = 0.2, cnn_far: float = 0.4,
              n: int = 800) -> ledger.FigureResult:
    """Distances: a share ``*_near`` of runs at 1e-5, up to a share ``*_far`` at 0.05, the rest at 0.5."""
    def d(near, far):
        i = np.random.default_rng(0).permutation(n)  # the near runs spread over the seeds
        return np.where(i < near * n, 1e-5, np.where(i < far * n, 0.05, 0.5))
    arrays = {f"{k}_{v}": (d(a, b) if v == "distance" else np.ones(n)) for k, a, b in
              (("mlp", mlp_near, mlp_far), ("cnn", cnn_near, cnn_far)) for v in ("distance", "loss", "grad")}
    cfg = {"n_steps": 4000, "lr": 0.01, "init_scale": 0.5}
    return ledger.FigureResult(arrays, {"config": cfg, "seed_axes": {k: 0 for k in arrays}})


@pytest.mark.parametrize("mlp_near, cnn_near, mlp_far, cnn_far, verdict", [
    (0.04, 0.005, 0.2, 0.4, "holds"),
    (0.005, 0.04, 0.2, 0.4, "fails"),         # the CNN ends near subnetworks more often
    (0.02, 0.02, 0.2, 0.4, "inconclusive"),   # equal shares: the difference sits at its threshold 0
    (0.04, 0.005, 0.4, 0.2, "fails"),         # the MLP wins even far from subnetworks: the control holds
])
def test_sparsity_bias(mlp_near, cnn_near, mlp_far, cnn_far, verdict):
    ev = _decide("neuromanifold.sparsity_bias", "neuromanifold_sparsity", _sparsity(mlp_near, cnn_near, mlp_far, cnn_far))
    assert ev.verdict == verdict, (ev.decisions, ev.controls)


def test_monte_carlo_claims_are_stable_on_a_clear_result():
    for cid, name, res in (("neuromanifold.critical_exposure", "neuromanifold_exposure", _exposure(90, 0)),
                           ("neuromanifold.sparsity_bias", "neuromanifold_sparsity", _sparsity(0.08, 0.0))):
        c = ledger.REGISTRY[cid]
        reads = ledger.Reads({name: res}, claim_id=cid)
        st = ledger.stability(c, reads, c.decide(reads))
        assert st["total"] == 8 and not st["fragile"], st


# --------------------------------------------------------------------------- the grid the claims read

def test_dimensions_activation_names_and_the_claims_grid():
    from sims import neuromanifold as sim

    assert sim.activation_of("dense(5,1)") == nm.dense_activation(5, 1)
    assert sim.activation_of("x^4+x^3") == nm.activation([0, 0, 0, 1, 1])
    assert sim.activation_of("x^3+x^2+x") == nm.activation([0, 1, 1, 1])
    assert sim.activation_of("x3+x2") == nm.ACTIVATIONS["x3+x2"]
    for bad in ("x^2+x^2", "dense(3)", "x**3", "relu"):
        with pytest.raises(ValueError):
            sim.activation_of(bad)
    # The quick config's grid is the claims' 400-net grid: depths 2-3 in full, 80 fixed-seed depth-4 nets.
    p = sim.DimensionsParams(max_per_depth=(100000, 100000, 80))
    assert sim._architectures(p, 0) == nm.grid_sample(80, seed=0)
    with pytest.raises(ValueError, match="max_per_depth"):
        sim.DimensionsParams(max_per_depth=(1, 2))


def test_dimensions_figure_from_a_toy_ramp(toy_ctx):
    """The dimensions experiment with a small degree ramp renders both panels (plotting only)."""
    import matplotlib

    matplotlib.use("Agg")
    from figures import neuromanifold as fig
    from sims import neuromanifold as sim

    acts = ("x3+x2", "dense(3,0)", "dense(4,0)", "x^3", "x^4", "x^3+x^2", "x^4+x^3")
    p = sim.DimensionsParams(max_width=2, depths=(2,), max_per_depth=(100000,), activations=acts,
                             n_points=2)
    out = sim.run_dimensions(p, toy_ctx(p, "neuromanifold"))
    assert out["exact_rank"].shape == (7, 8) and np.all(out["numeric_rank"][1:] == -1)
    f = fig.plot_dimensions(out, {})
    left, right = f.axes
    assert len(left.lines) == 4 and fig._ramp(list(acts)) == [3, 4]
    assert len(right.patches) == 1  # one named activation (x3+x2), one depth
