"""Simulations for ReLU networks on DAGs (Nurisso et al., ICLR 2026, arXiv 2602.00693); math in
``theory/relu_dag/``.

Experiments (one config each, ``paper_configs/relu_dag_<name>.yaml``):

* ``obstruction``: a d-l-1 network with biases (a constant-1 input) on scikit-learn's breast-cancer data
  (standardised), started in different components of ``H_G(c)`` (every ``c_k < 0``, so every output
  weight's sign is frozen); components are grouped by the number of positive output weights.
* ``init_probability``: probability that Kaiming/Xavier-normal initialisation of a d-l-1 network lands in
  a disconnected ``H``, closed form against Monte Carlo over a (d, l) grid.
* ``pruning``: loss, number of cut-off sub-networks ``kappa`` and distance to the singular locus along
  training for each regulariser, and what magnitude pruning of the final weights cuts off and costs.
* ``conservation``: drift of the balance vector against step size for GD, RK4 gradient flow and Adam.

Seeds run through ``sims.runtime.map_seeds`` / ``mean_over_seeds`` (sharded over all devices).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax
from sklearn.datasets import load_breast_cancer

from sims import cli, runtime
from sims.config import param
from theory import relu_dag as R

# fold_in salt of the second data set of the conservation-law check (its theta0 uses the seed key itself).
LAW_DATA_SALT = 1
# Salt of the pruning check's test inputs, numpy's default_rng([seed, PRUNING_TEST_SALT]): a stream of its own
# (default_rng(seed + 1) is root seed + 1's, from which a replication at seed offset 1 permutes its data).
PRUNING_TEST_SALT = 0x7E57


# ---------------------------------------------------------------------------------------------------
# obstruction: different components of H, real data
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObstructionParams:
    hidden: int = param(4, ge=1, doc="hidden width l")
    margin: float = param(1.0, gt=0, doc="c_k = -margin for every hidden neuron")
    lr: float = param(0.05, gt=0)
    n_steps: int = param(2000, ge=1, smoke=200)
    n_save: int = param(100, ge=1, smoke=10)
    n_seeds: int = param(6, ge=1, le=runtime.MAX_SEEDS, doc="runs per component class")
    n_data: int = param(569, ge=10, doc="first n_data points of the (shuffled) data set")

    def __post_init__(self):
        if self.n_steps % self.n_save:
            raise ValueError(f"n_steps={self.n_steps} must be a multiple of n_save={self.n_save}")


def breast_cancer(n: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled breast-cancer data, shuffled with ``seed``, features standardised, a
    constant-1 column appended (the bias input). Returns ``X [n, 31]``, ``y [n, 1]`` in {0, 1}."""
    X, y = load_breast_cancer(return_X_y=True)
    perm = np.random.default_rng(seed).permutation(len(y))[:n]
    X, y = X[perm], y[perm].astype(np.float64)
    X = (X - X.mean(0)) / X.std(0)
    return np.concatenate([X, np.ones((len(y), 1))], axis=1), y[:, None]


def component_init(key, d: int, l: int, n_pos, margin: float):
    """Weights of the d-l-1 net with ``c_k = -margin`` for all k and output signs ``+`` for the first
    ``n_pos`` neurons, ``-`` for the rest (Kaiming-normal in-weights). Returns ``theta [d*l + l]``."""
    W = jnp.sqrt(2.0 / d) * jax.random.normal(key, (l, d))
    signs = jnp.where(jnp.arange(l) < n_pos, 1.0, -1.0)
    return R.dl1_theta(W, signs * jnp.sqrt(jnp.sum(W**2, axis=1) + margin))


def run_obstruction(p: ObstructionParams, ctx) -> dict:
    """Training curves of a d-l-1 ReLU network started in different components of ``H_G(c)``.

    Source: Nurisso et al., frozen output signs (paper line 358) and the component count of
    Theorem 1 (``2^l`` when every ``c_k < 0``), ``paper_configs/relu_dag_obstruction.yaml``. Data:
    :func:`breast_cancer` (``d = 31`` inputs with the bias), ``l = p.hidden``, logistic loss (BCE on
    logits). Each seed draws one Kaiming-normal in-weight matrix and starts from it in every component
    class ``n_pos = 0..l`` (:func:`component_init`, ``c_k = -p.margin``); full-batch GD with lr ``p.lr``
    for ``p.n_steps`` steps, saved every ``p.n_steps // p.n_save``.

    Returns (``l = p.hidden``):
      steps [p.n_save + 1]: GD step of each saved point (0 first).
      n_pos [l + 1]: number of positive output weights of each component class (0..l).
      loss [l + 1, p.n_seeds, p.n_save + 1]: training BCE (nats) at the saved points.
      acc [l + 1, p.n_seeds]: final training accuracy (fraction of ``(logit > 0) == (y = 1)``).
      flips [l + 1, p.n_seeds]: output weights whose sign differs from the initial one, summed over the
        saved points (0: the signs are frozen).
      drift [l + 1, p.n_seeds]: ``max |c_k + p.margin|`` over hidden neurons and saved points: the drift
        of the balance vector from its initial value (GD's O(lr) drift).
      bounds [2]: BCE lower bounds ``(frac(y=1) ln 2, frac(y=0) ln 2)`` for all output weights negative /
        all positive.

    ``ctx.summary``: ``n_components`` (exact component count of ``H_G(c)`` at seed 0's initial point,
    ``2^l``), ``bound_all_positive``, ``bound_all_negative`` (as in ``bounds``), ``max_sign_flips`` (the
    largest ``flips``).
    """
    X, y = breast_cancer(p.n_data, ctx.config.seed)
    d, l = X.shape[1], p.hidden
    G = R.dl1_graph(d, l)
    info = R.structure(G)
    f, lf = R.forward_fn(G), R.loss_fn("bce")
    Xj, yj = jnp.asarray(X), jnp.asarray(y)
    L = lambda t: lf(f(t, Xj), yj)  # noqa: E731
    grad = jax.grad(L)
    out_idx = jnp.arange(d * l, d * l + l)

    def one(key, n_pos):
        t0 = component_init(key, d, l, n_pos, p.margin)
        sg0 = jnp.sign(t0[out_idx])

        def block(t, _):
            t = jax.lax.fori_loop(0, p.n_steps // p.n_save, lambda i, u: u - p.lr * grad(u), t)
            acc = jnp.mean((f(t, Xj) > 0) == (yj > 0.5))
            return t, (L(t), acc, jnp.sum(jnp.sign(t[out_idx]) != sg0),
                       jnp.max(jnp.abs(R.balance_array(info.B, t) + p.margin)))

        _, (ls, acc, flips, drift) = jax.lax.scan(block, t0, None, length=p.n_save)
        return {"loss": jnp.concatenate([L(t0)[None], ls]), "acc": acc[-1], "flips": jnp.sum(flips),
                "drift": jnp.max(drift), "theta0": t0}

    def all_classes(key):
        # Every component class from the same key, one compiled function for all of them.
        return jax.vmap(lambda k: one(key, k))(jnp.arange(l + 1))

    out = ctx.parts.get("runs", lambda: runtime.map_seeds(all_classes, ctx.config.seed, p.n_seeds,
                                                          mesh=ctx.mesh))
    res = {k: {name: np.asarray(v)[:, k] for name, v in out.items()} for k in range(l + 1)}
    # The exact component count at one initial point (every c_k = -margin < 0): 2^l.
    th0 = R.theta_dict(G, res[0]["theta0"][0])
    ctx.summary["n_components"] = R.count_components(G, R.balance(G, th0))
    frac1 = float(y.mean())
    ctx.summary["bound_all_positive"] = (1 - frac1) * np.log(2.0)
    ctx.summary["bound_all_negative"] = frac1 * np.log(2.0)
    ctx.summary["max_sign_flips"] = int(max(int(r["flips"].max()) for r in res.values()))
    return {
        "steps": np.arange(p.n_save + 1) * (p.n_steps // p.n_save),
        "n_pos": np.arange(l + 1),
        "loss": np.stack([res[k]["loss"] for k in range(l + 1)]),        # [l+1, seeds, n_save+1]
        "acc": np.stack([res[k]["acc"] for k in range(l + 1)]),          # [l+1, seeds]
        "flips": np.stack([res[k]["flips"] for k in range(l + 1)]),
        "drift": np.stack([res[k]["drift"] for k in range(l + 1)]),
        "bounds": np.array([ctx.summary["bound_all_negative"], ctx.summary["bound_all_positive"]]),
    }


# ---------------------------------------------------------------------------------------------------
# init_probability: closed form against Monte Carlo
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class InitProbabilityParams:
    ds: tuple[int, ...] = param((2, 3, 4, 6, 8, 12, 16), ge=2, doc="input dimensions d")
    ls: tuple[int, ...] = param((1, 2, 4, 8, 16, 32), ge=1, doc="hidden widths l")
    n_samples: int = param(4000, ge=2, le=runtime.MAX_SEEDS, smoke=1600)
    n_batches: int = param(16, ge=2, doc="disjoint batches of draws (the seed axis of the stored counts)")

    def __post_init__(self):
        if self.n_samples % self.n_batches:
            raise ValueError(f"n_samples={self.n_samples} must be a multiple of n_batches={self.n_batches}")


def run_init_probability(p: InitProbabilityParams, ctx) -> dict:
    """Probability that Kaiming-/Xavier-normal initialisation of a d-l-1 ReLU network lands in a
    disconnected ``H_G(c)`` (some ``c_k < 0``): closed form against Monte Carlo.

    Source: Nurisso, Leroy, Vaccarino, NeurIPS 2024 (obstruction probability figure), the d-l-1 count of
    Theorem 1, ``paper_configs/relu_dag_init_probability.yaml``; formula ``R.disconnection_probability``, draws
    ``R.disconnection_monte_carlo`` (``p.n_samples`` of them, one seed each, counted in ``p.n_batches``
    disjoint batches of consecutive seeds so that a claim can leave a batch out).

    Returns (axis 0 of the grids: init ``kaiming``, ``xavier``; ``n_d = len(p.ds)``, ``n_l = len(p.ls)``):
      ds [n_d]: input dimensions d.
      ls [n_l]: hidden widths l.
      monte_carlo [2, n_d, n_l]: fraction of the draws with a disconnected ``H``.
      stderr [2, n_d, n_l]: its standard error over the draws.
      formula [2, n_d, n_l]: the closed-form probability ``1 - P(F_{d,1} >= s_out^2 / (d s_in^2))^l``.
      z [2, n_d, n_l]: ``(monte_carlo - formula) / sqrt(formula (1 - formula) / p.n_samples)`` (0 where
        that standard deviation is 0).
      batch_disconnected [p.n_batches, 2, n_d, n_l]: draws with a disconnected ``H`` in each batch (int).
      batch_draws [p.n_batches]: draws per batch (``p.n_samples / p.n_batches``).

    ``ctx.summary``: ``max_abs_z``, the largest ``|z|``.
    """
    draws = ctx.parts.get("draws", lambda: {"draws": runtime.map_seeds(
        lambda k: R.disconnection_monte_carlo(k, p.ds, p.ls), ctx.config.seed, p.n_samples, mesh=ctx.mesh)})
    draws = np.asarray(draws["draws"])                                 # [n_samples, 2, n_d, n_l] in {0, 1}
    counts = draws.reshape((p.n_batches, -1) + draws.shape[1:]).sum(1).astype(np.int64)
    mean = counts.sum(0) / p.n_samples
    se = np.sqrt(mean * (1 - mean) / (p.n_samples - 1))               # sample sd / sqrt(n) of 0/1 draws
    formula = np.array([[[R.disconnection_probability(d, l, ini) for l in p.ls] for d in p.ds]
                        for ini in ("kaiming", "xavier")])
    sd = np.sqrt(formula * (1 - formula) / p.n_samples)
    z = np.where(sd > 0, (mean - formula) / np.maximum(sd, 1e-300), 0.0)
    ctx.summary["max_abs_z"] = float(np.max(np.abs(z)))
    return {"ds": np.array(p.ds), "ls": np.array(p.ls), "monte_carlo": mean, "stderr": se,
            "formula": formula, "z": z, "batch_disconnected": counts,
            "batch_draws": np.full(p.n_batches, p.n_samples // p.n_batches)}


# ---------------------------------------------------------------------------------------------------
# pruning: cut-off sub-networks along training, per regulariser
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruningParams:
    regularisers: tuple[str, ...] = param(("none", "l2", "l1", "prox_l1", "nuclear"))
    lam: float = param(0.01, ge=0)
    lr: float = param(0.05, gt=0)
    n_steps: int = param(4000, ge=1, smoke=200)
    n_save: int = param(40, ge=1, smoke=10)
    n_seeds: int = param(12, ge=1, le=runtime.MAX_SEEDS)
    n_data: int = param(128, ge=4)
    prune_tau: float = param(1e-3, gt=0, doc="magnitude threshold of the pruning comparison (2 lr lam: the "
                                               "amplitude of the L1 subgradient's chatter around 0)")

    def __post_init__(self):
        bad = [r for r in self.regularisers if r not in R.REGULARISERS]
        if bad:
            raise ValueError(f"unknown regulariser(s) {bad}; known: {R.REGULARISERS}")
        if self.n_steps % self.n_save:
            raise ValueError(f"n_steps={self.n_steps} must be a multiple of n_save={self.n_save}")


def run_pruning(p: PruningParams, ctx) -> dict:
    """Self-pruning: loss and number ``kappa`` of cut-off sub-networks along training, per regulariser.

    Source: Nurisso et al., self-pruning section and the theorem on singular points (rank
    ``|V_hid| - kappa``), ``paper_configs/relu_dag_pruning.yaml``. The 2-8-8-1 network on
    ``y = ReLU(x1 + x2) - ReLU(x1 - x2)`` (``R.pruning_problem``, ``p.n_data`` points), trained by
    ``R.make_trainer`` (half-MSE, lr ``p.lr``, strength ``p.lam``) for ``p.n_steps`` steps, saved every
    ``p.n_steps // p.n_save``; the final network is pruned (``R.prune``) and compared on 256 fresh inputs.
    Every seed starts from the same initial weights under every regulariser (seed-paired comparisons).

    The regularisers are compared as the paper's self-pruning section does (by convergence to isolated
    sub-networks and the loss after pruning): the distance to the singular locus along training
    (``R.singular_value_ratio``), and magnitude pruning of the final weights at ``p.prune_tau`` (weights
    with ``|theta| < tau`` set to 0): how many sub-networks it cuts off and what it costs in training loss.

    Returns (``n_reg = len(p.regularisers)``, ``|E| = 88``):
      steps [p.n_save + 1]: optimisation step of each saved point (0 first).
      regularisers [n_reg]: regulariser names (strings).
      loss [n_reg, p.n_seeds, p.n_save + 1]: training loss (half mean squared error, regulariser excluded).
      kappa [n_reg, p.n_seeds, p.n_save + 1]: number of cut-off sub-networks (support components touching
        no input or output, ``R.support_components``).
      zeros [n_reg, p.n_seeds, p.n_save + 1]: number of weights that are exactly 0 (of the 88 edges).
      sv_ratio [n_reg, p.n_seeds, p.n_save + 1]: ``s_min / s_max`` of ``B~ diag(theta)`` (0 at a singular
        point).
      bit_equal [n_reg, p.n_seeds]: whether the pruned final network's outputs equal the unpruned ones
        bit for bit (bool).
      theta_final [n_reg, p.n_seeds, |E|]: the final weights.
      kappa_tau [n_reg, p.n_seeds]: cut-off sub-networks after magnitude pruning at ``p.prune_tau``.
      pruned_tau [n_reg, p.n_seeds]: weights set to 0 by that pruning (exact zeros included).
      loss_tau [n_reg, p.n_seeds]: training loss after that pruning (compare ``loss[..., -1]``).

    ``ctx.summary``: ``pruned_bit_equal`` (all of ``bit_equal``), ``final_kappa`` (``{regulariser: [final
    kappa per seed]}``), ``kappa_tau`` (``{regulariser: [kappa_tau per seed]}``).
    """
    G, X, Y = R.pruning_problem(p.n_data, ctx.config.seed)
    info = R.structure(G)
    Xt = np.random.default_rng([ctx.config.seed, PRUNING_TEST_SALT]).normal(size=(256, 2))
    f, lf = R.forward_fn(G), R.loss_fn("mse")
    train_loss = runtime.jit(jax.vmap(lambda t: lf(f(t, X), Y)), name="pruning.train_loss")
    loss, kappa, zeros, bit_equal, ratio, final, kappa_tau, pruned_tau, loss_tau = ([] for _ in range(9))
    for reg in runtime.tracked(p.regularisers, "pruning", unit="regulariser"):
        run = R.make_trainer(G, X, Y, reg=reg, lr=p.lr, lam=p.lam, n_steps=p.n_steps, n_save=p.n_save)
        # Its name in the plan: the trainers share code and arguments but not their steps (nuclear runs SVDs),
        # so each regulariser is its own stage.
        run.__qualname__ = f"pruning.train[{reg}]"
        out = ctx.parts.get(reg, lambda run=run: runtime.map_seeds(run, ctx.config.seed, p.n_seeds,
                                                                   mesh=ctx.mesh))
        ks = np.array([[len(R.support_components(G, R.theta_dict(G, t), info)) for t in ths]
                       for ths in out["theta"]])
        eq = []
        # Not while planned: the planner's all-zero weights prune to a network with no input-output path.
        for th in [] if runtime.is_planning() else out["theta"][:, -1]:
            td = R.theta_dict(G, th)
            H, thp = R.prune(G, td)
            eq.append(R.forward_sequential(G, td, Xt).tobytes() == R.forward_sequential(H, thp, Xt).tobytes())
        th_T = np.asarray(out["theta"][:, -1])                               # [n_seeds, |E|]
        th_tau = np.where(np.abs(th_T) < p.prune_tau, 0.0, th_T)
        loss.append(out["loss"])
        kappa.append(ks)
        zeros.append((out["theta"] == 0).sum(-1))
        bit_equal.append(eq)
        ratio.append(R.singular_value_ratio(info.B, out["theta"]))
        final.append(th_T)
        kappa_tau.append([len(R.support_components(G, R.theta_dict(G, t), info)) for t in th_tau])
        pruned_tau.append((th_tau == 0).sum(-1))
        loss_tau.append(np.asarray(train_loss(jnp.asarray(th_tau))))
    ctx.summary["pruned_bit_equal"] = bool(np.all(bit_equal))
    ctx.summary["final_kappa"] = {r: [int(k) for k in ks[:, -1]] for r, ks in zip(p.regularisers, kappa)}
    ctx.summary["kappa_tau"] = {r: [int(k) for k in ks] for r, ks in zip(p.regularisers, kappa_tau)}
    return {"steps": np.arange(p.n_save + 1) * (p.n_steps // p.n_save),
            "regularisers": np.array(p.regularisers), "loss": np.stack(loss), "kappa": np.stack(kappa),
            "zeros": np.stack(zeros), "sv_ratio": np.stack(ratio), "bit_equal": np.array(bit_equal),
            "theta_final": np.stack(final), "kappa_tau": np.array(kappa_tau),
            "pruned_tau": np.stack(pruned_tau), "loss_tau": np.stack(loss_tau)}


# ---------------------------------------------------------------------------------------------------
# conservation: drift of c against step size
# ---------------------------------------------------------------------------------------------------


# The law's checks beside the figure: (slope, loss) pairs of the homogeneity identity, (lr, weight decay)
# pairs of the one-step GD identity, and step sizes of the momentum control.
HOMOGENEITY_CASES = ((0.0, "mse"), (0.0, "bce"), (0.1, "softmax"), (0.1, "huber"))
STEP_CASES = ((0.1, 0.0), (0.01, 0.0), (0.1, 0.3), (0.05, 1.0))
MOMENTUM_LRS = (0.1, 0.01)


@dataclass(frozen=True)
class ConservationParams:
    etas: tuple[float, ...] = param((0.2, 0.1, 0.05, 0.02, 0.01), gt=0, doc="step sizes", smoke=3)
    horizon: float = param(2.0, gt=0, doc="training time T; n_steps = T / eta")
    n_hidden: int = param(8, ge=1)
    n_seeds: int = param(4, ge=1, le=runtime.MAX_SEEDS)
    graph_seed: int = param(3, ge=0)
    flow_h: float = param(5e-4, gt=0, doc="RK4 step of the fine gradient-flow run (and Adam's lr beside it)")
    symbolic_seed: int = param(12, ge=0, doc="seed of the 3 small random DAGs of the symbolic check")


def _symbolic_patterns(seed: int) -> tuple[int, int]:
    """``(#activation patterns with B~(theta * grad L) = 0 symbolically, #patterns)`` over every activation
    pattern of 3 random DAGs (2 inputs, 3 hidden nodes, 1 output, edge probability 0.5), MSE, symbolic
    data (``R.symbolic_conservation``): the conservation law as an exact identity."""
    rng = np.random.default_rng(seed)
    n_sym, n_zero = 0, 0
    for _ in range(3):
        G = R.random_dag(rng, 2, 3, 1, 0.5)
        hid = R.structure(G).hidden
        for r in range(len(hid) + 1):
            for act in itertools.combinations(hid, r):
                n_sym += 1
                n_zero += all(x == 0 for x in R.symbolic_conservation(G, set(act)))
    return n_zero, n_sym


def run_conservation(p: ConservationParams, ctx) -> dict:
    """Drift of the balance vector ``c = B~ theta^2`` against the step size for GD, RK4 gradient flow
    and Adam over a fixed training time, and the conservation law's identities per seed.

    Source: the conservation law ``<<theta, grad L>>_v = 0`` (Def. 1; Du, Hu & Lee 2018) of Nurisso et al.,
    ``paper_configs/relu_dag_conservation.yaml``. A random DAG (``R.random_dag`` with seed
    ``p.graph_seed``: 3 inputs, ``p.n_hidden`` hidden nodes, 2 outputs, edge probability 0.35), 32
    Gaussian data points, MSE; ``theta0 ~ 0.7 N(0, I)`` per seed; ``n = max(1, round(p.horizon / eta))``
    steps of GD (step eta), RK4 on the gradient flow (step eta) and Adam (``optax.scale_by_adam``, lr eta).
    GD changes ``c`` by exactly ``eta^2 B~ g^2`` per step, RK4 only by its integration error, Adam by O(1).

    Returns (``n_etas = len(p.etas)``, ``S = p.n_seeds``; every array with an ``S`` axis is per seed):
      etas [n_etas]: step sizes eta.
      methods [3]: method names, ``GD``, ``RK4 flow``, ``Adam`` (the first axis of ``drift``).
      drift [3, n_etas, S]: ``max_t max_v |c_v(theta_t) - c_v(theta_0)|`` over the n steps.
      gd_identity_err [n_etas, S]: GD's error in the exact identity ``c(theta_n) - c(theta_0) =
        sum_t eta^2 B~ g_t^2``, max over hidden nodes, relative to ``1 + max |c(theta_0)|`` (rounding only).
      horizon []: the training time T.
      homogeneity_rel [2, 4, S]: ``max_v |B~(theta * g)|_v / (|B~| |theta * g|)_v`` at the seed's theta0 on
        fresh Gaussian data, for the 4 (slope, loss) pairs of ``HOMOGENEITY_CASES``; row 0 (leaky) ReLU,
        row 1 tanh hidden units (not positively homogeneous: the control).
      fine_drift [2, S]: drift of ``c`` over ``[0, p.horizon]`` for RK4 gradient flow with step ``p.flow_h``
        (row 0) and for Adam (``optax.adam``, lr ``p.flow_h``, the same number of steps; row 1). RK4's is
        its integration error, only first order in the step where the trajectory crosses a ReLU kink.
      flow_rate_rel [2, S]: the rate ``dc/dt = 2 B~(theta * theta')`` at every step of those two runs, max over
        steps and nodes of ``|B~(theta * v)| / (|B~| |theta * v|)`` with ``v`` a velocity: each sample's gradient
        for the flow (whose velocity is their sum; the law holds sample by sample), Adam's update for Adam.
        0 up to rounding (a few eps times the fan of a node) where ``c`` is conserved.
      step_identity_err [4, S]: one GD step with weight decay, ``|c(theta') - (1 - lr lam)^2 c(theta) -
        lr^2 B~ g^2|`` max over nodes, relative to ``1 + max |c(theta)|``, for ``STEP_CASES``.
      momentum_identity_err [2, S]: the same one-step identity with a heavy-ball update ``v = g + 0.9 m``
        (``m``: the gradient at ``0.8 theta + 0.1``) in place of ``g``, lr in ``MOMENTUM_LRS`` (the control).
      symbolic [2]: ``(#patterns with B~(theta * grad L) = 0 exactly, #patterns)`` (:func:`_symbolic_patterns`).

    ``ctx.summary``: ``gd_identity_max_err``, the largest ``gd_identity_err``.
    """
    G = R.random_dag(np.random.default_rng(p.graph_seed), 3, p.n_hidden, 2, 0.35)
    info = R.structure(G)
    f, lf = R.forward_fn(G), R.loss_fn("mse")
    kx, ky = jax.random.split(jax.random.key(p.graph_seed))
    X, Y = jax.random.normal(kx, (32, 3)), jax.random.normal(ky, (32, 2))
    L = lambda t: lf(f(t, X), Y)  # noqa: E731
    grad = jax.grad(L)
    c_of = lambda t: R.balance_array(info.B, t)  # noqa: E731
    m = len(info.edges)
    n_max = max(max(1, int(round(p.horizon / eta))) for eta in p.etas)
    opt = optax.scale_by_adam()
    B, absB = jnp.asarray(info.B, float), jnp.abs(jnp.asarray(info.B, float))

    def one(key, eta, n):
        # One compiled function for every step size: a scan of n_max steps, frozen after step n.
        t0 = 0.7 * jax.random.normal(key, (m,))
        c0 = c_of(t0)
        rk4_step = lambda t: R.rk4(lambda u: -grad(u), t, eta, 1)[-1]  # noqa: E731

        def body(carry, i):
            tg, acc, ta, sa, tr = carry
            live = i < n
            g = grad(tg)
            u, sa_new = opt.update(grad(ta), sa, ta)
            new = (tg - eta * g, acc + eta**2 * c_of(g), ta - eta * u, sa_new, rk4_step(tr))
            carry = jax.tree.map(lambda x, y: jnp.where(live, x, y), new, carry)
            tg, acc, ta, sa, tr = carry
            d = jnp.stack([jnp.max(jnp.abs(c_of(t) - c0)) for t in (tg, tr, ta)])
            return carry, d

        init = (t0, jnp.zeros_like(c0), t0, opt.init(t0), t0)
        (tg, acc, *_), d = jax.lax.scan(body, init, jnp.arange(n_max))
        ident = jnp.max(jnp.abs(c_of(tg) - c0 - acc)) / (1 + jnp.max(jnp.abs(c0)))
        return {"drift": jnp.max(d, axis=0), "ident": ident}

    n_fine = max(1, int(round(p.horizon / p.flow_h)))
    adam = optax.adam(p.flow_h)

    def law(key):
        # The identities at the seed's theta0 (the same key as `one`), data drawn from a second key.
        t0 = 0.7 * jax.random.normal(key, (m,))
        kx2, ky2 = jax.random.split(jax.random.fold_in(key, LAW_DATA_SALT))
        X2, Y2 = jax.random.normal(kx2, (32, 3)), jax.random.normal(ky2, (32, 2))
        targets = {"mse": Y2, "huber": Y2, "bce": (Y2 > 0).astype(float),
                   "softmax": jax.nn.one_hot(jnp.argmax(Y2, 1), Y2.shape[1])}
        rel = []
        for act in (None, jnp.tanh):
            row = []
            for slope, name in HOMOGENEITY_CASES:
                fa, la = R.forward_fn(G, slope, activation=act), R.loss_fn(name)
                tg = t0 * jax.grad(lambda t, fa=fa, la=la, name=name: la(fa(t, X2), targets[name]))(t0)
                row.append(jnp.max(jnp.abs(B @ tg) / (absB @ jnp.abs(tg) + 1e-300)))
            rel.append(jnp.stack(row))
        c0 = c_of(t0)

        def rate(t, v):
            # dc/dt = 2 B~(theta * theta') for the velocity theta' = v, relative to |B~| |theta * v|.
            tv = t * v
            return jnp.max(jnp.abs(B @ tv) / (absB @ jnp.abs(tv) + 1e-300))

        def flow(t, _):
            # The law holds per sample (the batch gradient's cancellation across samples would hide the
            # rounding scale), so the flow's rate is judged on each sample's gradient.
            r = jnp.max(jax.vmap(lambda x, y: rate(t, jax.grad(lambda u: lf(f(u, x[None]), y[None]))(t)))(X, Y))
            t = R.rk4(lambda u: -grad(u), t, p.flow_h, 1)[-1]
            return t, (jnp.max(jnp.abs(c_of(t) - c0)), r)

        def adam_step(carry, _):
            t, st = carry
            u, st = adam.update(grad(t), st, t)
            r = rate(t, u)
            t = optax.apply_updates(t, u)
            return (t, st), (jnp.max(jnp.abs(c_of(t) - c0)), r)

        _, (d_flow, r_flow) = jax.lax.scan(flow, t0, None, length=n_fine)
        _, (d_adam, r_adam) = jax.lax.scan(adam_step, (t0, adam.init(t0)), None, length=n_fine)
        g = grad(t0)
        scale = 1 + jnp.max(jnp.abs(c0))
        step = jnp.stack([jnp.max(jnp.abs(c_of((1 - lr * lam) * t0 - lr * g) - (1 - lr * lam) ** 2 * c0
                                          - lr**2 * c_of(g))) / scale for lr, lam in STEP_CASES])
        v = g + 0.9 * grad(0.8 * t0 + 0.1)
        mom = jnp.stack([jnp.max(jnp.abs(c_of(t0 - lr * v) - c0 - lr**2 * c_of(v))) / scale
                         for lr in MOMENTUM_LRS])
        return {"rel": jnp.stack(rel), "fine": jnp.stack([jnp.max(d_flow), jnp.max(d_adam)]), "step": step,
                "mom": mom, "rate": jnp.stack([jnp.max(r_flow), jnp.max(r_adam)])}

    drift = np.zeros((3, len(p.etas), p.n_seeds))
    gd_identity = np.zeros((len(p.etas), p.n_seeds))
    for i, eta in enumerate(runtime.tracked(p.etas, "conservation", unit="step size")):
        n = max(1, int(round(p.horizon / eta)))
        out = ctx.parts.get(f"eta{i}", lambda eta=eta, n=n: runtime.map_seeds(
            one, ctx.config.seed, p.n_seeds, jnp.asarray(eta), jnp.asarray(n), mesh=ctx.mesh))
        drift[:, i] = out["drift"].T
        gd_identity[i] = out["ident"]
    checks = ctx.parts.get("law", lambda: runtime.map_seeds(law, ctx.config.seed, p.n_seeds, mesh=ctx.mesh))
    ctx.summary["gd_identity_max_err"] = float(gd_identity.max())
    return {"etas": np.array(p.etas), "methods": np.array(["GD", "RK4 flow", "Adam"]), "drift": drift,
            "gd_identity_err": gd_identity, "horizon": np.array(p.horizon),
            "homogeneity_rel": np.moveaxis(np.asarray(checks["rel"]), 0, -1),
            "fine_drift": np.asarray(checks["fine"]).T, "flow_rate_rel": np.asarray(checks["rate"]).T,
            "step_identity_err": np.asarray(checks["step"]).T,
            "momentum_identity_err": np.asarray(checks["mom"]).T,
            "symbolic": np.array(_symbolic_patterns(p.symbolic_seed))}


EXPERIMENTS = {
    "obstruction": cli.Experiment(ObstructionParams, run_obstruction,
                                  seed_axes={"loss": 1, "acc": 1, "flips": 1, "drift": 1}),
    "init_probability": cli.Experiment(InitProbabilityParams, run_init_probability,
                                       seed_axes={"batch_disconnected": 0, "batch_draws": 0}),
    "pruning": cli.Experiment(PruningParams, run_pruning, seed_axes={
        k: 1 for k in ("loss", "kappa", "zeros", "sv_ratio", "bit_equal", "theta_final", "kappa_tau",
                       "pruned_tau", "loss_tau")}),
    "conservation": cli.Experiment(ConservationParams, run_conservation, seed_axes={
        "drift": 2, "gd_identity_err": 1, "homogeneity_rel": 2, "fine_drift": 1, "flow_rate_rel": 1,
        "step_identity_err": 1, "momentum_identity_err": 1}),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
