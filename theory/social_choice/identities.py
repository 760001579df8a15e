"""The BTL core identity of Ge's construction, exactly (sympy) and to high precision.

Core instance (Ge et al. 2024, Lemmas 3.2-3.3): a = (2, 1), b = (1, 1), c = (0, 0); a share p
ranks a > b > c (voter (1, 1)), the rest c > b > a (voter (-1, 0)). With ``u = r_b = theta_1 + theta_2``
and ``w = r_a - r_b = theta_1`` the loss is ``g(w) + g(u) + g(u + w)``, ``g(x) = p l(x) + (1 - p) l(-x)``
in our margin convention. It is symmetric under ``u <-> w``; a strictly convex loss has a unique,
hence symmetric, optimum ``u = w``, i.e. ``theta_2 = 0`` (derived here, for any strictly convex loss).
For BTL the remaining stationarity condition ``sigma(theta_1) + sigma(2 theta_1) = 2p`` is
``tanh(theta_1/2) + tanh(theta_1) = 2(2p - 1)`` (derived here).
"""

from __future__ import annotations

import sympy as sp

T1, T2, P, U, W = sp.symbols("theta1 theta2 p u w", real=True)


def _ell(loss: str, m):
    if loss == "btl":
        return sp.log(1 + sp.exp(-m))
    if loss == "exp":
        return sp.exp(-m)
    raise ValueError(f"symbolic core loss needs 'btl' or 'exp', got {loss!r}")


def core_loss(loss: str = "btl", p=P) -> sp.Expr:
    """The core instance's loss as a sympy expression in ``theta1, theta2`` (and ``p``)."""
    ra, rb, rc = 2 * T1 + T2, T1 + T2, sp.Integer(0)
    total = sp.Integer(0)
    for hi, lo in ((ra, rb), (rb, rc), (ra, rc)):  # voter (1, 1) order: a > b > c
        total += p * _ell(loss, hi - lo) + (1 - p) * _ell(loss, lo - hi)
    return total


def _zero(expr) -> bool:
    e = sp.simplify(sp.expand(sp.simplify(expr.rewrite(sp.exp))))
    return e == 0


def btl_core_identity() -> dict:
    """Exact checks (sympy) of the BTL core identity, for symbolic p.

    Returns a dict of booleans:
      ``core_is_g_sum``: the core loss equals ``g(w) + g(u) + g(u + w)`` with ``u = theta1 + theta2``,
        ``w = theta1``;
      ``symmetric``: ``g(u) + g(w) + g(u + w)`` equals itself with u and w swapped (so theta_2 = 0 at the
        unique optimum of a strictly convex loss);
      ``grad2_at_0``: ``dL/dtheta2 |_(theta2 = 0) = sigma(theta1) + sigma(2 theta1) - 2p``;
      ``grad1_at_0``: ``dL/dtheta1 |_(theta2 = 0) = 2 (sigma(theta1) + sigma(2 theta1) - 2p)`` (so both
        vanish together);
      ``tanh_form``: ``sigma(t) + sigma(2t) - 2p = (tanh(t/2) + tanh(t) - 2(2p - 1)) / 2``.
    """
    sig = lambda x: 1 / (1 + sp.exp(-x))
    g = lambda x: P * sp.log(1 + sp.exp(-x)) + (1 - P) * sp.log(1 + sp.exp(x))
    L = core_loss("btl")
    stat = sig(T1) + sig(2 * T1) - 2 * P
    sym = g(U) + g(W) + g(U + W)
    return {
        "core_is_g_sum": _zero(L - sym.xreplace({U: T1 + T2, W: T1})),
        "symmetric": sp.simplify(sym - sym.xreplace({U: W, W: U})) == 0,
        "grad2_at_0": _zero(sp.diff(L, T2).subs(T2, 0) - stat),
        "grad1_at_0": _zero(sp.diff(L, T1).subs(T2, 0) - 2 * stat),
        "tanh_form": _zero(stat - (sp.tanh(T1 / 2) + sp.tanh(T1) - 2 * (2 * P - 1)) / 2),
    }


def btl_core_theta1(p, digits: int = 50) -> sp.Float:
    """The root theta_1 > 0 of ``tanh(theta_1/2) + tanh(theta_1) = 2(2p - 1)`` to ``digits`` digits
    (sympy ``nsolve``), for ``1/2 < p < 1``."""
    p = sp.nsimplify(p)
    if not sp.Rational(1, 2) < p < 1:
        raise ValueError(f"need 1/2 < p < 1, got {p}")
    t = sp.Symbol("t", positive=True)
    return sp.nsolve(sp.tanh(t / 2) + sp.tanh(t) - 2 * (2 * p - 1), t, 0.5, prec=digits)
