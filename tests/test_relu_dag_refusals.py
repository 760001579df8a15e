"""ReLU networks on DAGs (theory/relu_dag/): bad input is refused with a clear error (a cycle, an isolated
node, wrong keys, types and numbers), and exponential searches refuse sizes beyond their named limits."""


import jax
import jax.numpy as jnp
import networkx as nx
import numpy as np
import pytest
from conftest import outcomes_by_statement, statement_outcomes

from theory import relu_dag as R

# --------------------------------------------------------------------------------------------------
# Bad input
# --------------------------------------------------------------------------------------------------


def test_cycle_is_refused_with_the_cycle():
    G = nx.DiGraph([("x", "a"), ("a", "b"), ("b", "a"), ("b", "y")])
    with pytest.raises(ValueError, match=r"cycle.*'a'.*'b'"):
        R.count_components(G, {"a": 1.0, "b": 1.0})
    G = nx.DiGraph([("x", "a"), ("a", "a"), ("a", "y")])
    with pytest.raises(ValueError, match="cycle"):
        R.balance(G, {("x", "a"): 1.0, ("a", "a"): 1.0, ("a", "y"): 1.0})


def test_isolated_node_is_refused():
    G = nx.DiGraph([("x", "h"), ("h", "y")])
    G.add_node("lost")
    with pytest.raises(ValueError, match="'lost'"):
        R.forced_edges(G, {"h": 1.0})


def test_wrong_c_keys_are_named():
    G = R.chain_graph(2)
    with pytest.raises(ValueError, match="missing.*'h2'"):
        R.count_components(G, {"h1": 1.0})
    with pytest.raises(ValueError, match="'y'"):
        R.count_components(G, {"h1": 1.0, "h2": 0.0, "y": 3.0})
    with pytest.raises(ValueError, match="'zz'"):
        R.forced_edges(G, {"h1": 1.0, "h2": 0.0, "zz": 3.0})
    with pytest.raises(ValueError, match="finite"):
        R.forced_edges(G, {"h1": float("nan"), "h2": 0.0})


def test_wrong_types_and_theta_keys():
    G = R.chain_graph(1)
    with pytest.raises(TypeError, match="DiGraph"):
        R.balance(nx.Graph([("x", "h1"), ("h1", "y")]), {})
    with pytest.raises(TypeError, match="DiGraph"):
        R.count_components(nx.MultiDiGraph([("x", "h1"), ("h1", "y")]), {"h1": 1})
    with pytest.raises(TypeError, match="dict"):
        R.balance(G, [1.0, 2.0])
    with pytest.raises(TypeError, match="dict"):
        R.count_components(G, [1.0])
    with pytest.raises(TypeError, match="real number"):
        R.balance(G, {("x", "h1"): "1", ("h1", "y"): 1.0})
    with pytest.raises(TypeError, match="bool"):
        R.count_components(G, {"h1": True})
    with pytest.raises(ValueError, match=r"missing.*\('h1', 'y'\)"):
        R.jacobian_rank(G, {("x", "h1"): 1.0})
    with pytest.raises(ValueError, match=r"\('y', 'x'\)"):
        R.is_singular(G, {("x", "h1"): 1.0, ("h1", "y"): 1.0, ("y", "x"): 2.0})
    assert R.jacobian_rank(G, {("x", "h1"): np.float32(1.0), ("h1", "y"): jnp.float64(2.0)}) == 1


def test_no_hidden_nodes():
    G = nx.DiGraph([("x", "y")])
    assert R.count_components(G, {}) == 1 and R.balance(G, {("x", "y"): 2.0}) == {}
    assert R.jacobian_rank(G, {("x", "y"): 0.0}) == 0 and not R.is_singular(G, {("x", "y"): 0.0})
    v = R.edge_lp_minima(G, {})[("x", "y")]   # P(c) has no constraint: s = 0 certifies "not forced"
    assert (v.edge, v.minimum, v.forced, v.ray, v.residual) == (("x", "y"), 0.0, False, None, 0.0)
    assert v.point.tolist() == [0.0]


def test_brute_force_singular_search_refuses_more_than_12_edges_by_default():
    """has_singular_points_bruteforce enumerates 2^|E| zero patterns: by default it stops above 12 edges
    (its signature), and a caller may raise that up to MAX_BRUTEFORCE_EDGES = 14."""
    G = R.layered_graph([1, 3, 3, 1])                      # 3 + 9 + 3 = 15 edges
    G.remove_edges_from([((1, 0), (2, 0)), ((1, 1), (2, 1))])   # 13 edges, every node still on a path
    assert G.number_of_edges() == 13
    c = {v: 1 for v in R.structure(G).hidden}
    with pytest.raises(ValueError, match="max_edges"):
        R.has_singular_points_bruteforce(G, c)



_PRELUDE = ("import numpy as np\nfrom theory import relu_dag as R\n"
            "chain = R.chain_graph(30); c = {f'h{i + 1}': (-1) ** i for i in range(30)}\n"
            "ones = {v: 1 for v in c}; deep = R.layered_graph([1] + [2] * 40 + [1])\n")


def _outcomes(stmts, timeout=20):
    """Outcomes of the statements (``R`` = theory.relu_dag), see ``conftest.statement_outcomes``."""
    return statement_outcomes(_PRELUDE, stmts, timeout)


_LIMITS = [
    ("R.forced_edges_bruteforce(chain, c, max_hidden=64)", "MAX_BRUTEFORCE_HIDDEN"),
    ("R.singular_subnetworks(chain, c, max_hidden=64)", "MAX_SUBSET_HIDDEN"),
    ("R.has_singular_points_bruteforce(chain, ones, max_edges=64)", "MAX_BRUTEFORCE_EDGES"),
    ("R.sample_point(chain, c, n_vertices=10**9)", "MAX_VERTICES"),
    ("R.symbolic_conservation(deep, set(R.structure(deep).hidden))", "MAX_PATHS"),
]


@pytest.fixture(scope="module")
def limit_outcomes():
    """Each statement of ``_LIMITS`` -> its outcome, all run in one interpreter (one start-up, not 5)."""
    return outcomes_by_statement(_PRELUDE, [s for s, _ in _LIMITS])


@pytest.mark.parametrize("stmt, limit", _LIMITS)
def test_exponential_searches_are_refused_naming_the_limit(stmt, limit, limit_outcomes):
    """A caller-raised max_hidden / max_edges cannot unlock an exponential search past a hard limit."""
    out = limit_outcomes[stmt]
    assert out.startswith("ValueError") and limit in out, out


_BAD = [
    ("R.rk4(lambda y: -y, jnp.ones(2), 0.1, 10, save_every=0)", ValueError, "save_every"),
    ("R.rk4(lambda y: -y, jnp.ones(2), nan, 10)", ValueError, "h"),
    ("R.rk4(lambda y: -y, jnp.ones(2), 0.1, 10.5)", TypeError, "n_steps"),
    ("R.make_trainer(R.chain_graph(1), jnp.ones((4, 1)), jnp.ones((4, 1)), n_save=0)", ValueError, "n_save"),
    ("R.make_trainer(R.chain_graph(1), jnp.ones((4, 1)), jnp.ones((4, 1)), lr=nan)", ValueError, "lr"),
    ("R.make_trainer(R.chain_graph(1), jnp.ones((4, 1)), jnp.ones((4, 1)), init_scale=inf)", ValueError,
     "init_scale"),
    ("R.regulariser_step('l2', np.ones((1, 2)), 0.1, nan)", ValueError, "lam"),
    ("R.forward_fn(R.chain_graph(1), slope=nan)", ValueError, "slope"),
    ("R.numerical_rank(R.chain_graph(1), {('x', 'h1'): 1.0, ('h1', 'y'): 1.0}, gap=nan)", ValueError, "gap"),
    ("R.edge_lp_minima(R.chain_graph(1), {'h1': 1.0}, rtol=nan)", ValueError, "rtol"),
    ("R.chain_law_u([0.1], nan)", ValueError, "u0"),
    ("R.chain_law_u([nan], 1.0)", ValueError, "t"),
    ("R.init_stds(2.5, 3, 'kaiming')", TypeError, "d"),
    ("R.disconnection_probability(3, 2.5, 'kaiming')", TypeError, "l"),
    ("R.sample_disconnected(jax.random.key(0), 3, 0, 'kaiming')", ValueError, "l"),
    ("R.disconnection_monte_carlo(jax.random.key(0), (1.5,), (1,))", TypeError, "ds"),
    ("R.disconnection_monte_carlo(jax.random.key(0), (), (1,))", ValueError, "non-empty"),
    ("R.disconnection_monte_carlo(jax.random.key(0), (2,), ())", ValueError, "non-empty"),
    ("R.layered_graph([2, 2.5, 1])", TypeError, "widths"),
    ("R.dl1_graph(2.5, 3)", TypeError, "d"),
    ("R.chain_graph(-1)", ValueError, "n_hidden"),
    ("R.chain_graph(1.5)", TypeError, "n_hidden"),
    ("R.random_dag(np.random.default_rng(0), 0, 3, 1)", ValueError, "n_in"),
    ("R.random_dag(np.random.default_rng(0), 1, 3, 1, p=nan)", ValueError, "p"),
    ("R.connect(R.chain_graph(1), {'h1': 1.0}, np.ones(2), np.ones(2), n_per_leg=1)", ValueError,
     "n_per_leg"),
    ("R.pruning_problem(n=0)", ValueError, "n"),
]


@pytest.mark.parametrize("code, err, match", _BAD, ids=[c for c, _, _ in _BAD])
def test_bad_numbers_are_refused(code, err, match):
    with pytest.raises(err, match=match):
        eval(code, {"R": R, "np": np, "jnp": jnp, "jax": jax, "nan": float("nan"), "inf": float("inf")})
