"""P-POTS, the importance sampling of the masking rate t: piecewise-constant densities on bins of t
(sampler, optimum, exact variance, measured moments), the paper's 7-parameter EPR form and its fit, and
the variances of every density exactly in t from the exact mask sums (Jia et al., ICLR 2026, Sec. 4.1)."""

from __future__ import annotations

import functools
import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from theory.mdm_variance.decomposition import TSampler, jackknife_se_of
from theory.mdm_variance.exact import exact_t_moments, t_quadrature
from theory.mdm_variance.masks import LossFn, check_eps
from theory.numerics import check_int

def t_bin_edges(eps: float, n_bins: int) -> np.ndarray:
    """``[n_bins + 1]`` increasing edges covering [eps, 1]: half geometric (resolving the 1/t blow-up near
    eps), half linear, merged. Raises ValueError for eps not in (0, 1) or n_bins < 2."""
    eps = check_eps(eps)
    n_bins = check_int(n_bins, "n_bins", ge=2)
    geo = np.geomspace(eps, 1.0, n_bins // 2 + 1)
    lin = np.linspace(eps, 1.0, n_bins - n_bins // 2 + 1)
    # both grids start at eps and end at 1 exactly, so the union has at most n_bins points (never too
    # many): split the widest gap until there are n_bins + 1
    e = np.unique(np.r_[geo, lin])
    while e.size < n_bins + 1:
        i = int(np.argmax(np.diff(e)))
        e = np.insert(e, i + 1, 0.5 * (e[i] + e[i + 1]))
    return e


def binned_tables(edges, probs) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The arrays :func:`binned_sample` draws from, for the piecewise-constant density with bin ``j``'s
    probability ``probs[j]`` on the bins of ``edges`` (``[n_bins + 1]``): ``(lo, width, log_prob, weight)``,
    each ``[n_bins]`` float64, ``weight_j = u width_j / probs_j`` with ``u = 1 / (edges[-1] - edges[0])``.
    ``probs`` is normalised here. Raises ValueError for negative or non-finite probabilities, or a bin with
    zero probability (the sampler must cover [eps, 1])."""
    e = np.asarray(edges, np.float64)
    pr = np.asarray(probs, np.float64)
    if pr.shape != (e.size - 1,) or not np.all(np.isfinite(pr)) or np.any(pr <= 0):
        raise ValueError("probs must be positive and finite, one per bin (the sampler must cover [eps, 1])")
    pr = pr / pr.sum()
    width, u = np.diff(e), 1.0 / (e[-1] - e[0])
    return tuple(jnp.asarray(a) for a in (e[:-1], width, np.log(pr), u * width / pr))


def binned_sample(tables, key, shape) -> tuple[jax.Array, jax.Array]:
    """Draws ``t`` of ``shape`` from the density of ``tables`` (:func:`binned_tables`, traced or not): bin j
    with probability ``probs[j]``, t uniform inside it; and the importance weight ``u / p(t)`` of each,
    ``p(t) = probs[j] / width_j`` (unbiased for the U[eps, 1] mean: Sec. 4.1). Returns ``(t, weight)``."""
    lo, wid, logp, wts = tables
    kb, ku = jax.random.split(key)
    j = jax.random.categorical(kb, logp, shape=shape)
    return lo[j] + wid[j] * jax.random.uniform(ku, shape), wts[j]


def binned_sampler(edges, probs) -> TSampler:
    """Importance sampler ``(key, shape) -> (t, weight)`` of a piecewise-constant density on the bins:
    :func:`binned_sample` on :func:`binned_tables` ``(edges, probs)`` (Sec. 4.1). Raises ValueError for
    negative or non-finite probabilities, or a bin with zero probability."""
    return functools.partial(binned_sample, binned_tables(edges, probs))


def pots_bin_probs(edges, m2) -> np.ndarray:
    """P-POTS on bins: ``probs_j prop. width_j sqrt(M2_j)`` with ``M2_j = E[l^2 | t in bin j]`` (the exact
    optimum among piecewise-constant densities; the bin version of ``p* prop. sqrt(E[l^2 | t])``,
    Sec. 4.1). Raises ValueError for a negative or non-finite M2."""
    m2 = np.asarray(m2, np.float64)
    if not np.all(np.isfinite(m2)) or np.any(m2 < 0):
        raise ValueError("m2 must be finite and non-negative")
    p = np.diff(np.asarray(edges, np.float64)) * np.sqrt(m2)
    return p / p.sum()


def binned_is_variance(edges, probs, m2, g) -> float:
    """Exact variance of the importance-weighted loss ``l u / p(t)`` under the piecewise-constant density
    ``probs``: ``sum_j u^2 width_j^2 M2_j / probs_j - mu^2`` with ``mu = sum_j u width_j g_j`` (the bin
    form of ``int m2 / p - (int g)^2``, Sec. 4.1)."""
    e = np.asarray(edges, np.float64)
    w, u = np.diff(e), 1.0 / (e[-1] - e[0])
    pr = np.asarray(probs, np.float64) / np.sum(probs)
    mu = np.sum(u * w * np.asarray(g))
    return float(np.sum(u**2 * w**2 * np.asarray(m2) / pr) - mu**2)


def binned_optimal_variance(edges, m2, g) -> float:
    """``(sum_j u width_j sqrt(M2_j))^2 - mu^2``: the P-POTS minimum on these bins."""
    e = np.asarray(edges, np.float64)
    w, u = np.diff(e), 1.0 / (e[-1] - e[0])
    return float((np.sum(u * w * np.sqrt(m2))) ** 2 - np.sum(u * w * np.asarray(g)) ** 2)


def binned_moments(loss_fn: LossFn, data, key, edges, n_per_bin: int, mesh=None) -> dict[str, np.ndarray]:
    """Per-bin mean ``g_j``, second moment ``M2_j = E[l^2 | t in bin j]`` and variance of the loss with
    x0 drawn uniformly from the rows of ``data [n, L]``, t uniform in bin j and the forward mask;
    ``n_per_bin`` iid draws per bin. Returns ``g, m2, var, g_se, m2_se`` (each ``[n_bins]``,
    :func:`binned_summary`) and the draws ``losses [n_bins, n_per_bin]``."""
    data = jnp.asarray(data)
    e = jnp.asarray(np.asarray(edges, np.float64))
    n_per_bin = check_int(n_per_bin, "n_per_bin", ge=2)
    length = data.shape[1]

    nb = e.shape[0] - 1
    sharding = NamedSharding(mesh, P(mesh.axis_names[0])) if mesh is not None else None

    @jax.jit
    def fn():
        kx, kt, km = jax.random.split(key, 3)
        rows = jax.random.randint(kx, (nb, n_per_bin), 0, data.shape[0])
        t = e[:-1, None] + (e[1:] - e[:-1])[:, None] * jax.random.uniform(kt, (nb, n_per_bin))
        u = jax.random.uniform(km, (nb, n_per_bin, length))
        if sharding is not None and nb % mesh.devices.size == 0:
            rows, t, u = (jax.lax.with_sharding_constraint(a, sharding) for a in (rows, t, u))
        return jax.vmap(jax.vmap(loss_fn))(data[rows], t, u < t[..., None])

    ls = np.asarray(fn(), np.float64)
    return {**binned_summary(ls), "losses": ls}


def binned_summary(losses) -> dict[str, np.ndarray]:
    """Per-bin ``g, m2, var, g_se, m2_se`` (each ``[n_bins]``) of the draws ``losses [n_bins, n]`` of
    :func:`binned_moments` (n >= 2); any subset of the draws gives the same estimates on fewer."""
    ls = np.asarray(losses, np.float64)
    n = ls.shape[1]
    sq = ls**2
    return {"g": ls.mean(1), "m2": sq.mean(1), "var": ls.var(1, ddof=1),
            "g_se": ls.std(1, ddof=1) / math.sqrt(n), "m2_se": sq.std(1, ddof=1) / math.sqrt(n)}


def epr_unnormalised(t, params) -> np.ndarray:
    """The paper's 7-parameter 'EPR' form ``sqrt(a t^r + b (1-t)^q + A^2 exp(2 kappa t^m))``;
    ``params = (a, r, b, q, A, kappa, m)`` with a, b, A, kappa > 0, r, q >= 0, m > 1 (Sec. 4.1)."""
    a, r, b, q, amp, kappa, m = params
    t = np.asarray(t, np.float64)
    return np.sqrt(a * t**r + b * (1 - t) ** q + amp**2 * np.exp(2 * kappa * t**m))


def _epr_from_raw(z):
    sp = lambda v: np.logaddexp(0.0, v)  # noqa: E731 - softplus
    return (sp(z[0]), sp(z[1]), sp(z[2]), sp(z[3]), sp(z[4]), sp(z[5]), 1.0 + sp(z[6]))


def fit_epr(t_grid, p_hat, *, restarts: int = 8, seed: int = 0) -> tuple[tuple[float, ...], float]:
    """Fit the EPR form to a density estimate by minimising KL(p_hat || p_EPR), both normalised by
    trapezoid on ``t_grid``, with L-BFGS-B over a softplus parametrisation and ``restarts`` random starts
    (the released code uses 20). Returns ``(params, kl)``. Source: Sec. 4.1 [code]."""
    t = np.asarray(t_grid, np.float64)
    ph = np.asarray(p_hat, np.float64)
    ph = ph / np.trapezoid(ph, t)
    rng = np.random.default_rng(seed)

    def kl(z):
        q = epr_unnormalised(t, _epr_from_raw(z))
        q = q / np.trapezoid(q, t)
        return float(np.trapezoid(ph * (np.log(ph + 1e-300) - np.log(q + 1e-300)), t))

    best = None
    for _ in range(check_int(restarts, "restarts", ge=1)):
        r = scipy.optimize.minimize(kl, rng.normal(0, 1.5, 7), method="L-BFGS-B")
        if np.isfinite(r.fun) and (best is None or r.fun < best.fun):
            best = r
    if best is None:
        raise RuntimeError("EPR fit failed on every restart")
    return tuple(float(v) for v in _epr_from_raw(best.x)), float(best.fun)


def epr_bin_probs(edges, params, points_per_bin: int = 16) -> np.ndarray:
    """Bin probabilities of the EPR density (integrated per bin by Gauss-Legendre, then normalised)."""
    e = np.asarray(edges, np.float64)
    x, w = np.polynomial.legendre.leggauss(points_per_bin)
    mid, half = 0.5 * (e[1:] + e[:-1]), 0.5 * np.diff(e)
    vals = epr_unnormalised(mid[:, None] + half[:, None] * x[None], params)
    p = (vals * w[None]).sum(1) * half
    return p / p.sum()


POTS_DENSITIES = ("uniform", "optimal", "paper", "square", "mean_only")


def _pots_functionals(g_sum, gg_sum, m2_sum, n, w, u, bins_p=None) -> dict[str, np.ndarray]:
    """The exact-in-t variances of the importance-weighted loss for each density, from the sums over
    ``n`` sequences (leading batch axis: the full sample or its leave-one-out copies)."""
    big_g, m2 = g_sum / n, m2_sum / n  # [..., Q]
    within = m2 - gg_sum / n  # E_x0 Var(l | x0, t): the mask variance within each x0
    mu = u * np.sum(w * big_g, -1)

    def var_of(f):  # density p = f / int f on [eps, 1]
        return u**2 * np.sum(w * f, -1) * np.sum(w * m2 / f, -1) - mu**2

    dens = {"uniform": np.ones_like(m2), "optimal": np.sqrt(m2), "paper": np.sqrt(big_g**2 + within),
            "square": m2, "mean_only": np.abs(big_g)}
    if bins_p is not None:
        dens["bins"] = np.broadcast_to(bins_p, m2.shape)
    out = {f"V_{k}": var_of(f) for k, f in dens.items()}
    out["mu"] = mu
    return out


def pots_exact(sums, eps: float, *, bin_edges=None, bin_probs=None, n_panels: int = 48,
               order: int = 12) -> dict[str, Any]:
    """Variances of the P-POTS importance-weighted loss ``l u / p(t)`` (u = 1 / (1 - eps), t on
    [eps, 1]) exactly in t, over the empirical law of the sequences behind ``sums``, for the densities

    * ``uniform``: p = u (standard training);
    * ``optimal``: p* prop. sqrt(M2(t)), M2(t) = E[l^2 | t] over x0 and masks (the exact optimum,
      Sec. 4.1; variance ``u^2 (int sqrt M2)^2 - mu^2``);
    * ``paper``: p prop. sqrt(G(t)^2 + V_w(t)), G = E[l | t] and V_w = E_x0 Var(l | x0, t), the paper's
      estimator, which averages the within-x0 mask variance and so leaves out Var_x0 E[l | x0, t];
    * ``square``: p prop. M2 (the square, not the root); ``mean_only``: p prop. |G| (v left out);
    * ``bins`` (when ``bin_edges`` and ``bin_probs`` are given): the piecewise-constant density.

    ``V = u^2 int M2 / p dt - mu^2`` with ``mu = u int G dt``, integrals by :func:`t_quadrature`; the
    only randomness is the sample of sequences, and delete-one jackknife SEs over them are returned.

    Args: sums ``[n, 2, L + 1]`` (:func:`exact_mask_sums` per sequence, n >= 3); eps in (0, 1).
    Returns: dict with ``V_{name}`` and ``V_{name}_se`` (floats), ``mu``, ``mu_se``, and ``loo``
      (``{key: [n]}`` leave-one-out values of every ``V_{name}`` and ``mu``, for jackknife SEs of
      combinations: :func:`jackknife_se_of`).
    Raises: ValueError for eps, fewer than 3 sequences, non-finite sums, bins not covering [eps, 1].
    """
    eps = check_eps(eps)
    s = np.asarray(sums, np.float64)
    if s.ndim != 3 or s.shape[0] < 3 or s.shape[1] != 2 or not np.all(np.isfinite(s)):
        raise ValueError(f"sums must be [n >= 3, 2, L + 1] and finite, got shape {s.shape}")
    bins_p, breaks = None, ()
    if bin_edges is not None:
        e = np.asarray(bin_edges, np.float64)
        pr = np.asarray(bin_probs, np.float64)
        if pr.shape != (e.size - 1,) or np.any(pr <= 0) or not np.isclose(e[0], eps) or not np.isclose(e[-1], 1.0):
            raise ValueError("bin_edges must cover [eps, 1] and bin_probs be positive, one per bin")
        breaks = e
    t, w = t_quadrature(eps, breaks, n_panels=n_panels, order=order)
    if bin_edges is not None:
        j = np.clip(np.searchsorted(e, t, side="right") - 1, 0, pr.size - 1)
        bins_p = pr[j] / np.diff(e)[j]  # probability per unit t, up to the factor var_of normalises away
    g, m2 = exact_t_moments(s, t)  # [n, Q]
    n, u = s.shape[0], 1.0 / (1.0 - eps)
    tot = (g.sum(0), (g * g).sum(0), m2.sum(0))
    full = _pots_functionals(*tot, n, w, u, bins_p)
    loo = _pots_functionals(tot[0] - g, tot[1] - g * g, tot[2] - m2, n - 1, w, u, bins_p)
    out: dict[str, Any] = {k: float(v) for k, v in full.items()}
    out.update({f"{k}_se": jackknife_se_of(v) for k, v in loo.items()})
    out["loo"] = loo
    return out
