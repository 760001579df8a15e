"""Simulations for ReLU networks on DAGs (Nurisso et al., ICLR 2026, arXiv 2602.00693); math in
``theory/relu_dag.py``.

Experiments (one config each, ``paper_configs/relu_dag_<name>.yaml``):

* ``obstruction``: a d-l-1 network with biases (a constant-1 input) on scikit-learn's breast-cancer data
  (standardised), started in different components of ``H_G(c)`` (every ``c_k < 0``, so every output
  weight's sign is frozen); components are grouped by the number of positive output weights.
* ``init_probability``: probability that Kaiming/Xavier-normal initialisation of a d-l-1 network lands in
  a disconnected ``H``, closed form against Monte Carlo over a (d, l) grid.
* ``pruning``: loss and number of cut-off sub-networks ``kappa`` along training for each regulariser.
* ``conservation``: drift of the balance vector against step size for GD, RK4 gradient flow and Adam.

Seeds run through ``sims.runtime.map_seeds`` / ``mean_over_seeds`` (sharded over all devices).
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np

from sims import cli, runtime
from sims.config import param
from theory import relu_dag as R

# ---------------------------------------------------------------------------------------------------
# obstruction: different components of H, real data
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ObstructionParams:
    hidden: int = param(4, ge=1, doc="hidden width l")
    margin: float = param(1.0, gt=0, doc="c_k = -margin for every hidden neuron")
    lr: float = param(0.05, gt=0)
    n_steps: int = param(2000, ge=1)
    n_save: int = param(100, ge=1)
    n_seeds: int = param(4, ge=1, doc="runs per component class")
    n_data: int = param(569, ge=10, doc="first n_data points of the (shuffled) data set")

    def __post_init__(self):
        if self.n_steps % self.n_save:
            raise ValueError(f"n_steps={self.n_steps} must be a multiple of n_save={self.n_save}")


def breast_cancer(n: int | None = None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """scikit-learn's bundled breast-cancer data, shuffled with ``seed``, features standardised, a
    constant-1 column appended (the bias input). Returns ``X [n, 31]``, ``y [n, 1]`` in {0, 1}."""
    from sklearn.datasets import load_breast_cancer

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
    n_samples: int = param(4000, ge=2)


def run_init_probability(p: InitProbabilityParams, ctx) -> dict:
    mean, se = runtime.mean_over_seeds(lambda k: R.disconnection_monte_carlo(k, p.ds, p.ls),
                                       ctx.config.seed, p.n_samples, mesh=ctx.mesh)
    formula = np.array([[[R.disconnection_probability(d, l, ini) for l in p.ls] for d in p.ds]
                        for ini in ("kaiming", "xavier")])
    sd = np.sqrt(formula * (1 - formula) / p.n_samples)
    z = np.where(sd > 0, (mean - formula) / np.maximum(sd, 1e-300), 0.0)
    ctx.summary["max_abs_z"] = float(np.max(np.abs(z)))
    return {"ds": np.array(p.ds), "ls": np.array(p.ls), "monte_carlo": mean, "stderr": se,
            "formula": formula, "z": z}


# ---------------------------------------------------------------------------------------------------
# pruning: cut-off sub-networks along training, per regulariser
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PruningParams:
    regularisers: tuple[str, ...] = param(("none", "l2", "l1", "prox_l1", "nuclear"))
    lam: float = param(0.01, ge=0)
    lr: float = param(0.05, gt=0)
    n_steps: int = param(2000, ge=1)
    n_save: int = param(40, ge=1)
    n_seeds: int = param(3, ge=1)
    n_data: int = param(128, ge=4)

    def __post_init__(self):
        bad = [r for r in self.regularisers if r not in R.REGULARISERS]
        if bad:
            raise ValueError(f"unknown regulariser(s) {bad}; known: {R.REGULARISERS}")
        if self.n_steps % self.n_save:
            raise ValueError(f"n_steps={self.n_steps} must be a multiple of n_save={self.n_save}")


def run_pruning(p: PruningParams, ctx) -> dict:
    G, X, Y = R.pruning_problem(p.n_data, ctx.config.seed)
    Xt = np.random.default_rng(ctx.config.seed + 1).normal(size=(256, 2))
    loss, kappa, zeros, bit_equal = [], [], [], []
    for reg in p.regularisers:
        run = R.make_trainer(G, X, Y, reg=reg, lr=p.lr, lam=p.lam, n_steps=p.n_steps, n_save=p.n_save)
        out = ctx.parts.get(reg, lambda run=run: runtime.map_seeds(run, ctx.config.seed, p.n_seeds,
                                                                   mesh=ctx.mesh))
        ks = np.array([[len(R.support_components(G, R.theta_dict(G, t))) for t in ths]
                       for ths in out["theta"]])
        eq = []
        for th in out["theta"][:, -1]:
            td = R.theta_dict(G, th)
            H, thp = R.prune(G, td)
            eq.append(R.forward_sequential(G, td, Xt).tobytes() == R.forward_sequential(H, thp, Xt).tobytes())
        loss.append(out["loss"])
        kappa.append(ks)
        zeros.append((out["theta"] == 0).sum(-1))
        bit_equal.append(eq)
    ctx.summary["pruned_bit_equal"] = bool(np.all(bit_equal))
    ctx.summary["final_kappa"] = {r: [int(k) for k in ks[:, -1]] for r, ks in zip(p.regularisers, kappa)}
    return {"steps": np.arange(p.n_save + 1) * (p.n_steps // p.n_save),
            "regularisers": np.array(p.regularisers), "loss": np.stack(loss), "kappa": np.stack(kappa),
            "zeros": np.stack(zeros), "bit_equal": np.array(bit_equal)}


# ---------------------------------------------------------------------------------------------------
# conservation: drift of c against step size
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConservationParams:
    etas: tuple[float, ...] = param((0.2, 0.1, 0.05, 0.02, 0.01), gt=0, doc="step sizes")
    horizon: float = param(2.0, gt=0, doc="training time T; n_steps = T / eta")
    n_hidden: int = param(8, ge=1)
    n_seeds: int = param(4, ge=1)
    graph_seed: int = param(3, ge=0)


def run_conservation(p: ConservationParams, ctx) -> dict:
    import optax

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

    drift = np.zeros((3, len(p.etas), p.n_seeds))
    gd_identity = np.zeros((len(p.etas), p.n_seeds))
    for i, eta in enumerate(p.etas):
        n = max(1, int(round(p.horizon / eta)))
        out = ctx.parts.get(f"eta{i}", lambda eta=eta, n=n: runtime.map_seeds(
            one, ctx.config.seed, p.n_seeds, jnp.asarray(eta), jnp.asarray(n), mesh=ctx.mesh))
        drift[:, i] = out["drift"].T
        gd_identity[i] = out["ident"]
    ctx.summary["gd_identity_max_err"] = float(gd_identity.max())
    return {"etas": np.array(p.etas), "methods": np.array(["GD", "RK4 flow", "Adam"]), "drift": drift,
            "gd_identity_err": gd_identity, "horizon": np.array(p.horizon)}


EXPERIMENTS = {
    "obstruction": (ObstructionParams, run_obstruction),
    "init_probability": (InitProbabilityParams, run_init_probability),
    "pruning": (PruningParams, run_pruning),
    "conservation": (ConservationParams, run_conservation),
}

if __name__ == "__main__":
    raise SystemExit(cli.main(__name__))
