"""The linear-feature model in which T1 is exact, the decay law's checks, the Bayes accuracy of Gaussian classes and the replay SNR formula of Theorem 3 / Corollary 2."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import multivariate_normal, norm

from theory.nc_forgetting.metrics import active_subspace, check_features

# ---------------------------------------------------------------------------------------------------
# The linear-feature model (T1, exact)
# ---------------------------------------------------------------------------------------------------


def linear_feature_gd(X, onehot, V, W, b, *, eta: float, lam: float, steps: int, momentum: float = 0.0,
                      probes=None, depth: int = 1) -> dict[str, np.ndarray]:
    """Full-batch GD on cross-entropy of ``softmax(W phi(x) + b)`` with ``phi(x) = V x`` and coupled weight
    decay ``lam`` on the feature map (the paper's T1 setting, SGD with step ``eta``), float64.

    ``depth = 2`` uses ``phi(x) = V2 V x`` (a two-layer linear feature map, V2 = I at the start; the
    decay law is then not exact: a control). ``momentum > 0`` uses heavy-ball momentum (also a control).

    Args:
      X: ``[n, p]`` training inputs; onehot: ``[n, K]`` targets; V: ``[d, p]``; W: ``[K, d]``; b: ``[K]``.
      probes: ``[m, p]`` inputs whose features are tracked (any inputs: forgotten or OOD data).
    Returns:
      ``perp [steps + 1, m]`` = ||P_{S_t perp} phi_t(x)|| for the probes, with S_t the span of the
      centred class means of the training features at step t, and ``rank [steps + 1]`` (dim S_t).
    Raises:
      ValueError: shapes disagree, ``steps < 1``, ``eta <= 0``, ``lam < 0``, ``momentum`` not in [0, 1).
    """
    X = check_features(X, "X")
    Y = check_features(onehot, "onehot")
    V = check_features(V, "V").copy()
    W = check_features(W, "W").copy()
    b = np.asarray(b, np.float64).copy()
    n, p = X.shape
    K = Y.shape[1]
    if Y.shape[0] != n or V.shape[1] != p or W.shape != (K, V.shape[0]) or b.shape != (K,):
        raise ValueError(f"shapes disagree: X {X.shape}, onehot {Y.shape}, V {V.shape}, W {W.shape}, b {b.shape}")
    if steps < 1 or not eta > 0 or lam < 0 or not 0 <= momentum < 1 or depth not in (1, 2):
        raise ValueError("need steps >= 1, eta > 0, lam >= 0, 0 <= momentum < 1, depth in {1, 2}")
    P = X if probes is None else check_features(probes, "probes")
    labels = np.argmax(Y, axis=1)
    d = V.shape[0]
    V2 = np.eye(d)
    mom = [np.zeros_like(V), np.zeros_like(V2), np.zeros_like(W), np.zeros_like(b)]
    perp, ranks = [], []

    def record():
        F = X @ V.T @ V2.T
        q = active_subspace(F, labels)
        pf = P @ V.T @ V2.T
        perp.append(np.linalg.norm(pf - (pf @ q) @ q.T, axis=1))
        ranks.append(q.shape[1])

    record()
    for _ in range(steps):
        H1 = X @ V.T
        F = H1 @ V2.T
        z = F @ W.T + b
        z -= z.max(axis=1, keepdims=True)
        sm = np.exp(z)
        sm /= sm.sum(axis=1, keepdims=True)
        G = (sm - Y) / n  # dL/dz
        gF = G @ W  # [n, d]
        gW = G.T @ F
        gb = G.sum(axis=0)
        if depth == 2:
            gV2 = gF.T @ H1 + lam * V2
            gV = (gF @ V2).T @ X + lam * V
        else:
            gV2 = np.zeros_like(V2)
            gV = gF.T @ X + lam * V
        grads = [gV, gV2, gW, gb]
        for i, g in enumerate(grads):
            mom[i] = momentum * mom[i] + g
        V -= eta * mom[0]
        if depth == 2:
            V2 -= eta * mom[1]
        W -= eta * mom[2]
        b -= eta * mom[3]
        record()
    return {"perp": np.array(perp), "rank": np.array(ranks)}


def collapsed_linear_model(K: int, p: int, d: int, n_per_class: int, rng: np.random.Generator, *,
                           collapsed: bool = True, noise: float = 0.3) -> dict[str, np.ndarray]:
    """The constructed instance in which T1 (subspace stabilisation) is exact (our construction): ``K``
    class prototypes in R^p summing to 0 (so mu_G = 0 lies in S), ``n_per_class`` identical copies of
    each (training features exactly collapsed at every step), ``V [d, p]`` random, ``W = 0`` and ``b = 0``
    (row(W) stays in S). With ``collapsed=False`` each copy gets Gaussian noise of std ``noise`` (generic
    data: a control).

    Returns ``X [K n, p]``, ``onehot [K n, K]``, ``V [d, p]``, ``W [K, d]``, ``b [K]``.
    """
    protos = rng.standard_normal((K, p))
    protos -= protos.mean(axis=0)
    X = np.repeat(protos, n_per_class, axis=0)
    if not collapsed:
        X = X + noise * rng.standard_normal(X.shape)
    Y = np.repeat(np.eye(K), n_per_class, axis=0)
    V = rng.standard_normal((d, p)) / math.sqrt(p)
    return {"X": X, "onehot": Y, "V": V, "W": np.zeros((K, d)), "b": np.zeros(K)}


def decay_law_fit_error(perp, eta: float, lam: float) -> float:
    """Largest relative deviation of ``perp [steps + 1, m]`` (from :func:`linear_feature_gd`) from the decay
    law of T1/T2 with its rate and constant fixed in advance: ``perp_t = perp_0 (1 - eta lam)^t`` (rate
    ``upsilon = 1 - eta lam`` at the run's step and weight decay, constant ``perp_0`` = the value at t0 = 0),
    over every step and probe with ``perp_0 > 0``: ``max |perp_t / (perp_0 upsilon^t) - 1|``.

    Raises:
      ValueError: ``perp`` not two-dimensional with at least two steps, non-finite, or no probe with
        ``perp_0 > 0``; ``eta lam`` outside ``(0, 1)``.
    """
    x = check_features(perp, "perp", min_rows=2)
    if not 0 < eta * lam < 1:
        raise ValueError(f"eta * lam must lie in (0, 1), got {eta * lam}")
    ok = x[0] > 0
    if not np.any(ok):
        raise ValueError("no probe has a component outside S at t0 (perp_0 = 0): the law has nothing to fit")
    t = np.arange(x.shape[0])[:, None]
    pred = x[0, ok] * np.exp(t * math.log1p(-eta * lam))
    return float(np.max(np.abs(x[:, ok] / pred - 1.0)))


def decay_rounding_bound(steps: int, n: int, p: int, d: int) -> float:
    """The float64 rounding budget of the decay law in the linear-feature model: the law is exact in real
    arithmetic, and each GD step computes sums of at most ``n + p + d`` terms (the gradient over ``n``
    samples, ``phi = V x`` over ``p`` inputs, the projection over ``d`` features), each with a relative
    forward error of at most ``gamma_m = m u / (1 - m u)`` (Higham 2002, Sec. 3.1; ``u`` = 2^-53), and the
    ``steps`` multiplicative updates add their errors: ``steps * gamma_{n + p + d}``.

    Raises:
      ValueError: a non-positive count.
    """
    if min(steps, n, p, d) < 1:
        raise ValueError(f"steps, n, p, d must be >= 1, got {steps}, {n}, {p}, {d}")
    u = 2.0**-53
    m = n + p + d
    return steps * m * u / (1 - m * u)


def bayes_accuracy_lda(means, covariance, *, abseps: float = 1e-5, seed: int = 0) -> float:
    """Bayes accuracy of ``K`` equiprobable Gaussian classes ``N(mu_c, Sigma)`` with a shared covariance:
    ``(1/K) sum_c P(all D_ck > 0 | c)``, where ``D_ck = (mu_c - mu_k)^T Sigma^-1 (x - (mu_c + mu_k) / 2)``
    is, for ``x ~ N(mu_c, Sigma)``, jointly Gaussian over ``k != c`` with mean ``Delta_ck^2 / 2`` and
    covariance ``(mu_c - mu_k)^T Sigma^-1 (mu_c - mu_l)`` (``Delta`` the Mahalanobis distance). Each
    orthant probability is a ``K - 1``-dimensional Gaussian integral computed by Genz's numerical
    integration (scipy ``multivariate_normal.cdf``, absolute error ``abseps``, fixed ``seed``); ``K = 2``
    gives the closed form ``Phi(Delta / 2)``.

    Args:
      means: ``[K, d]``; covariance: ``[d, d]`` symmetric positive definite.
    Returns:
      the accuracy of the Bayes classifier, in ``[1/K, 1]``.
    Raises:
      ValueError: shapes disagree, non-finite entries, ``K < 2``, coinciding means, or ``covariance`` not
        positive definite.
    """
    m = check_features(means, "means", min_rows=2)
    K, d = m.shape
    s = check_features(covariance, "covariance")
    if s.shape != (d, d):
        raise ValueError(f"covariance must be [d, d] = [{d}, {d}], got {s.shape}")
    try:
        c = np.linalg.cholesky(0.5 * (s + s.T))
    except np.linalg.LinAlgError:
        raise ValueError("covariance is not positive definite") from None
    z = np.linalg.solve(c, m.T).T  # whitened means [K, d]: Sigma^-1 inner products become dot products
    rng = np.random.default_rng(seed)
    total = 0.0
    for k in range(K):
        diff = z[k] - np.delete(z, k, axis=0)  # [K - 1, d]
        gram = diff @ diff.T
        if np.any(np.diag(gram) == 0):
            raise ValueError("two class means coincide: the Bayes accuracy is not that of distinct classes")
        mean = 0.5 * np.diag(gram)
        if K == 2:
            total += float(norm.cdf(math.sqrt(gram[0, 0]) / 2))
            continue
        # P(D > 0) = P(-D < 0), -D ~ N(-mean, gram)
        total += float(multivariate_normal.cdf(np.zeros(K - 1), mean=-mean, cov=gram, allow_singular=True,
                                               maxpts=200_000 * (K - 1), abseps=abseps, releps=0.0, rng=rng))
    return total / K


def decay_error(perp, eta: float, lam: float) -> float:
    """Largest relative deviation of ``perp [steps + 1, m]`` (from :func:`linear_feature_gd`) from the law
    ``perp_{t+1} = (1 - eta lam) perp_t``, over steps and probes with ``perp_t > 0``."""
    ups = 1.0 - eta * lam
    a, b = np.asarray(perp[:-1]), np.asarray(perp[1:])
    ok = a > 0
    return float(np.max(np.abs(b[ok] / (ups * a[ok]) - 1.0)))


def snr_replay_theory(pi, beta, delta, upsilon_power) -> np.ndarray:
    """The order of the old-class SNR under replay (Corollary 2 / T3, up to constants):
    ``(r^2 beta + u) / (r^2 delta + beta + u)`` with ``r^2 = pi^2 / (1 - pi)^2`` and ``u =
    upsilon^(2 (t - t0))`` (``upsilon_power``); ``pi = 0`` gives T2's ``u / (beta + u)`` -> 0."""
    pi = np.asarray(pi, np.float64)
    if np.any((pi < 0) | (pi >= 1)):
        raise ValueError("pi must lie in [0, 1)")
    r2 = pi**2 / (1 - pi) ** 2
    return (r2 * beta + upsilon_power) / (r2 * delta + beta + upsilon_power)
