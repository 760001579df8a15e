"""ReLU networks on DAGs: balance invariants, connected components and singularities of the learning space.

Paper: Nurisso, Leroy, Petri, Vaccarino, "Topology and Geometry of the Learning Space of ReLU Networks:
Connectivity and Singularities", ICLR 2026, arXiv 2602.00693.

Setting. A network is a ``networkx.DiGraph`` without cycles; inputs are the nodes of in-degree 0, outputs
the nodes of out-degree 0, the rest hidden. There is one weight ``theta_e`` per edge (a bias is an edge
from an input node that always carries 1). Hidden nodes apply ReLU (or leaky ReLU), outputs are linear.
``B~`` is the incidence matrix restricted to hidden rows (+1 where the edge enters the node, -1 where it
leaves), so the balance vector is ``c = B~ theta^2`` (in-weights squared minus out-weights squared).

* Conservation (paper eq. for <<theta, grad L>>_v = 0; Du, Hu & Lee 2018): ``B~(theta * grad L) = 0``, so
  gradient flow keeps ``theta`` in ``H_G(c) = {theta : B~ theta^2 = c}`` (Definition 1).
* ``H_G(c)`` is the preimage under the elementwise square of the polyhedron
  ``P(c) = {s >= 0 : B~ s = c}``; an edge is *forced* when ``min_{P(c)} s_e > 0`` and the number of
  connected components is ``2^(#forced)`` (Theorem 1 made exact; the count is derived here). Only edges
  into an in-degree-1 hidden node or out of an out-degree-1 hidden node (bottlenecks) can be forced, and the
  closure criterion (Gale/Hoffman flow feasibility) decides it exactly by one max-weight closure per edge.
* The Jacobian of ``theta -> B~ theta^2`` is ``2 B~ diag(theta)``; its rank is ``|V_hid| - kappa(theta)``
  with ``kappa`` the number of components of the support graph that touch no input or output
  (the paper's theorem on singular points; the rank formula is derived here).

Every public function validates its graph (:func:`structure`): a cycle, an isolated node, a hidden node on
no input-to-output path, a ``theta`` whose keys are not the edges or a ``c`` whose keys are not the hidden
nodes raise ``ValueError`` naming the offending cycle, node or key; wrong types raise ``TypeError``.

Bounded work: the exponential searches (brute-force closures, subset and zero-pattern searches) refuse
inputs above hard limits (``MAX_BRUTEFORCE_HIDDEN``, ``MAX_SUBSET_HIDDEN``, ``MAX_BRUTEFORCE_EDGES``)
whatever their ``max_*`` argument says, and the symbolic check refuses more than ``MAX_PATHS``
input-to-output paths; integer arguments refuse floats and real arguments refuse NaN and infinities.

Submodules: :mod:`~theory.relu_dag.graphs` (structure, parameter vectors, graph families, worked examples),
:mod:`~theory.relu_dag.balance` (conservation law, feasible points), :mod:`~theory.relu_dag.components`
(forced edges, closure, LPs, paths), :mod:`~theory.relu_dag.singular` (Jacobian rank, singular points),
:mod:`~theory.relu_dag.training` (forward passes, losses, regularisers, RK4, trainers) and
:mod:`~theory.relu_dag.init` (the initialisation obstruction) and :mod:`~theory.relu_dag.checks`
(independent counts and the wrong rules the claims' controls use), :mod:`~theory.relu_dag.sweeps`
(random-DAG sweeps counting where a statement holds). Everything is re-exported here.
"""

from theory.relu_dag.balance import (
    MAX_PATHS,
    balance,
    balance_array,
    chain_law_G,
    chain_law_u,
    feasible_point,
    symbolic_conservation,
)
from theory.relu_dag.checks import (
    bottleneck_edges,
    chain_run,
    errata_chain,
    live_node_removed_equal,
    lp_point,
    min_rank_along,
    no_bottleneck_dag,
    orthant_classes,
    per_node_forced_edges,
    per_node_rank,
)
from theory.relu_dag.components import (
    MAX_BRUTEFORCE_HIDDEN,
    MAX_VERTICES,
    LPVerdict,
    _integer_weights,
    _linprog,
    connect,
    count_components,
    edge_lp_minima,
    forced_edge_certificates,
    forced_edges,
    forced_edges_bruteforce,
    forced_edges_lp,
    sample_point,
)
from theory.relu_dag.graphs import (
    DagInfo,
    _c_exact,
    _mapping_values,
    _real,
    c_vector,
    chain_graph,
    dl1_graph,
    dl1_theta,
    layered_graph,
    random_dag,
    structure,
    theta_dict,
    theta_vector,
    worked_examples,
)
from theory.relu_dag.init import (
    disconnection_monte_carlo,
    disconnection_probability,
    init_stds,
    sample_disconnected,
)
from theory.relu_dag.singular import (
    MAX_BRUTEFORCE_EDGES,
    MAX_SUBSET_HIDDEN,
    exact_jacobian_rank,
    has_singular_points_bruteforce,
    is_singular,
    jacobian,
    jacobian_rank,
    numerical_rank,
    prune,
    singular_subnetworks,
    singular_value_ratio,
    support_components,
)
from theory.relu_dag.sweeps import (
    component_count_sweep,
    connectivity_sweep,
    cut_off_point,
    dl1_count_agreement,
    feasibility_sweep,
    singular_sweep,
)
from theory.relu_dag.training import (
    REGULARISERS,
    forward_fn,
    forward_sequential,
    loss_fn,
    make_trainer,
    pruning_problem,
    regulariser_step,
    rk4,
)

__all__ = [
    "MAX_BRUTEFORCE_EDGES",
    "MAX_BRUTEFORCE_HIDDEN",
    "MAX_PATHS",
    "MAX_SUBSET_HIDDEN",
    "MAX_VERTICES",
    "REGULARISERS",
    "DagInfo",
    "LPVerdict",
    "_c_exact",
    "_integer_weights",
    "_linprog",
    "_mapping_values",
    "_real",
    "balance",
    "balance_array",
    "bottleneck_edges",
    "c_vector",
    "chain_graph",
    "chain_law_G",
    "chain_law_u",
    "chain_run",
    "connect",
    "component_count_sweep",
    "connectivity_sweep",
    "count_components",
    "cut_off_point",
    "disconnection_monte_carlo",
    "disconnection_probability",
    "dl1_count_agreement",
    "dl1_graph",
    "dl1_theta",
    "edge_lp_minima",
    "errata_chain",
    "exact_jacobian_rank",
    "feasibility_sweep",
    "feasible_point",
    "forced_edge_certificates",
    "forced_edges",
    "forced_edges_bruteforce",
    "forced_edges_lp",
    "forward_fn",
    "forward_sequential",
    "has_singular_points_bruteforce",
    "init_stds",
    "is_singular",
    "jacobian",
    "jacobian_rank",
    "layered_graph",
    "live_node_removed_equal",
    "loss_fn",
    "lp_point",
    "make_trainer",
    "min_rank_along",
    "no_bottleneck_dag",
    "numerical_rank",
    "orthant_classes",
    "per_node_forced_edges",
    "per_node_rank",
    "prune",
    "pruning_problem",
    "random_dag",
    "regulariser_step",
    "rk4",
    "sample_disconnected",
    "sample_point",
    "singular_subnetworks",
    "singular_sweep",
    "singular_value_ratio",
    "structure",
    "support_components",
    "symbolic_conservation",
    "theta_dict",
    "theta_vector",
    "worked_examples",
]
