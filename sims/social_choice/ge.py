"""Ge et al.'s six-candidate construction (``ge_instance``): the BTL and exponential optima with their
certified margins, the exact hinge infima, the rankings and the PMC ranking."""

from __future__ import annotations

import dataclasses
import re
from fractions import Fraction

import numpy as np

from sims import cli
from sims.config import param
from theory import social_choice as sc


@dataclasses.dataclass(frozen=True)
class GeParams:
    """Ge's construction: voter ``voter`` (share p) and (-1, 0); candidates spread by eps and delta."""

    p: float = param(0.6, gt=0.5, lt=1)
    eps: float = param(0.01, gt=0)
    delta: float = param(2.0, gt=0)
    voter: tuple[float, ...] = param((1.0, 1.0))
    hinge_counts: tuple[int, ...] = param((3, 1), ge=0)
    hinge_eps: str = param("1/100", doc="exact rational, e.g. 1/100")
    hinge_delta: str = param("2", doc="exact rational")
    control_eps: float = param(0.05, gt=0, doc="eps at which BTL and exp are Pareto-correct")
    control_hinge_counts: tuple[int, ...] = param((3, 2, 2, 1), ge=0,
                                                  doc="hinge counts (n1, n2) pairs with p <= 2/3 (no certificate)")
    variants: tuple[float, ...] = param((0.75, 0.1, 0.5, 1.0, 3.0, 0.9, 0.2, 0.5, 1.0, 3.0,
                                         0.75, 0.01, 2.0, 1.0, 1.0, 0.75, 0.1, 2.0, 1.0, 1.0),
                                        doc="further (p, eps, delta, voter_x, voter_y) rows where BTL violates")

    def __post_init__(self):
        if len(self.voter) != 2 or len(self.hinge_counts) != 2:
            raise ValueError("voter and hinge_counts need two entries")
        if len(self.control_hinge_counts) % 2 or len(self.variants) % 5:
            raise ValueError("control_hinge_counts needs pairs (n1, n2) and variants rows of 5 numbers "
                             "(p, eps, delta, voter_x, voter_y)")
        for k in ("hinge_eps", "hinge_delta"):
            # digits bounded before Fraction(), which takes unbounded time on "1e-1000000000"
            if not _RATIONAL.fullmatch(getattr(self, k).strip()):
                raise ValueError(f"{k} must be a rational like 1/100 or 0.01 (at most 40 digits a part), "
                                 f"got {getattr(self, k)!r}")
            try:
                positive = Fraction(getattr(self, k)) > 0
            except ZeroDivisionError:
                positive = False
            if not positive:
                raise ValueError(f"{k} must be a rational > 0, got {getattr(self, k)!r}")
        pairs = [self.hinge_counts] + [self.control_hinge_counts[i:i + 2]
                                       for i in range(0, len(self.control_hinge_counts), 2)]
        if not all(any(pair) for pair in pairs):
            raise ValueError("hinge_counts and each control_hinge_counts pair need a positive count")
        # the instances the run builds, checked by the theory now (one line) rather than mid-run (traceback)
        try:
            sc.ge_instance(self.p, self.eps, self.delta, self.voter)
            sc.ge_instance(eps=Fraction(self.hinge_eps), delta=Fraction(self.hinge_delta),
                           voter=tuple(Fraction(v) for v in self.voter), counts=self.hinge_counts, exact=True)
        except ValueError as e:
            raise ValueError(f"the instance of voter, eps, delta, hinge_* is refused by the theory: {e}") from None


_RATIONAL = re.compile(r"[+-]?\d{1,40}(/\d{1,40}|\.\d{1,40})?")


def ge_fits(p: float, eps: float, delta: float, voter) -> dict:
    """BTL and exponential fits on Ge's instance: theta, margin r(c') - r(c), certified radius, ranking,
    and ``violates``: (c', c) is unanimous and the fit ranks c above c' with a certified margin, so it
    violates Pareto optimality and pairwise majority consistency on that pair."""
    inst = sc.ge_instance(p, eps, delta, tuple(voter))
    a, b = inst.pareto_pair
    z = inst.candidates[a] - inst.candidates[b]
    unanimous = (a, b) in sc.pareto_pairs(inst.candidates, inst.voters)
    out = {}
    for loss in sc.SMOOTH_LOSSES:
        f = sc.fit_reward_certified(inst.candidates, inst.voters, inst.weights, loss=loss)
        m, certified = f.margin(z)
        pmc = sc.pmc_violations(inst.candidates, inst.voters, inst.weights, f.theta)
        po = sc.pareto_violations(inst.candidates, inst.voters, f.theta)
        out[loss] = {"theta": f.theta, "margin": m, "certified": certified, "radius": f.radius, "mu": f.mu,
                     "grad_norm": f.grad_norm, "ranking": sc.ranking_of(inst.candidates, f.theta),
                     "po_violations": po, "pmc_violations": pmc.violations, "pmc_ranking": pmc.ranking,
                     "violates": bool(unanimous and certified and m < 0 and (a, b) in po
                                      and (a, b) in pmc.violations)}
    return out


def run_ge(p: GeParams, ctx: cli.Context) -> dict:
    """Arrays: ``candidates [6, 2]``, ``voters [2, 2]``, ``weights [2]``, ``names [6]``,
    ``losses [3]`` (btl, hinge, exp), ``theta [3, 2]`` (hinge: an exactly optimal vertex),
    ``margin [3]`` (r(c') - r(c)), ``radius_smooth [2]`` (certified |theta - theta*| of BTL and exp),
    ``certified [3]``, ``violates [3]`` (BTL, exp: certified reversal of the unanimous pair (c', c),
    which is also a majority pair; hinge: constrained infimum > global infimum), ``rankings [3, 6]``,
    ``pmc_ranking [6]`` and ``pmc_feasible``, ``voter_ranking [6]`` (voter ``voter``'s ranking),
    ``pareto_pair [2]``, ``hinge_weights [2]``, ``hinge_inf [2]`` (global, constrained; floats),
    ``hinge_inf_exact [2]`` (the same as "p/q" strings), ``hinge_gap`` (float); controls:
    ``control_margin, control_certified, control_violates [2]`` (BTL, exp at ``control_eps``),
    ``control_hinge_counts [H, 2]`` with ``control_hinge_gap [H]`` and ``control_hinge_gap_exact [H]``;
    variants: ``variant_params [R, 5]`` (p, eps, delta, voter) with the BTL ``variant_margin [R]``,
    ``variant_certified [R]`` and ``variant_violates [R]``."""
    inst = sc.ge_instance(p.p, p.eps, p.delta, p.voter)
    fits = ge_fits(p.p, p.eps, p.delta, p.voter)
    he, hd = Fraction(p.hinge_eps), Fraction(p.hinge_delta)
    hinst = sc.ge_instance(eps=he, delta=hd, voter=tuple(Fraction(v) for v in p.voter),
                           counts=p.hinge_counts, exact=True)
    a, b = hinst.pareto_pair
    g, c = sc.hinge_certificate(hinst.candidates, hinst.voters, list(p.hinge_counts), (a, b))
    hrows = sc.comparison_rows(hinst.candidates, hinst.voters, np.array(
        [Fraction(int(k)) for k in p.hinge_counts], dtype=object), exact=True)
    hcert = sc.hinge_exact(hrows)
    htheta = np.array([float(t) for t in hcert.theta])
    hX = np.array([[float(v) for v in r] for r in hinst.candidates])
    hcounts = np.asarray(p.control_hinge_counts, int).reshape(-1, 2)
    gaps_h = []
    for counts in hcounts:
        gg, cc = sc.hinge_certificate(hinst.candidates, hinst.voters, [int(k) for k in counts], (a, b))
        gaps_h.append(cc - gg)
    ctrl = ge_fits(p.p, p.control_eps, p.delta, p.voter)
    rows = np.asarray(p.variants, np.float64).reshape(-1, 5)
    var = [ge_fits(r[0], r[1], r[2], (r[3], r[4]))["btl"] for r in rows]
    pmc_rank, pmc_feasible = sc.pmc_ranking(inst.candidates, inst.voters, inst.weights)
    ctx.summary.update({"hinge_global_inf": sc.jsonable_fraction(g),
                        "hinge_constrained_inf": sc.jsonable_fraction(c),
                        "hinge_gap": sc.jsonable_fraction(c - g)})
    thetas = np.stack([fits["btl"]["theta"], htheta, fits["exp"]["theta"]])
    return {
        "candidates": inst.candidates, "voters": inst.voters, "weights": inst.weights,
        "names": np.asarray(inst.names), "losses": np.asarray(["btl", "hinge", "exp"]),
        "theta": thetas,
        "margin": np.array([fits["btl"]["margin"], float(htheta @ (hX[a] - hX[b])), fits["exp"]["margin"]]),
        "radius_smooth": np.array([fits["btl"]["radius"], fits["exp"]["radius"]]),
        "certified": np.array([fits["btl"]["certified"], c > g, fits["exp"]["certified"]]),
        "violates": np.array([fits["btl"]["violates"], c > g, fits["exp"]["violates"]]),
        "rankings": np.array([fits["btl"]["ranking"], sc.ranking_of(hX, htheta), fits["exp"]["ranking"]]),
        "pmc_ranking": np.asarray(pmc_rank if pmc_rank is not None else [-1] * len(inst.names)),
        "pmc_feasible": np.asarray(bool(pmc_feasible)),
        "voter_ranking": np.asarray(sc.ranking_of(inst.candidates, inst.voters[0])),
        "pareto_pair": np.asarray(inst.pareto_pair), "hinge_weights": np.asarray(p.hinge_counts, float),
        "hinge_inf": np.array([float(g), float(c)]),
        "hinge_inf_exact": np.asarray([sc.jsonable_fraction(g), sc.jsonable_fraction(c)]),
        "hinge_gap": np.asarray(float(c - g)),
        "control_margin": np.array([ctrl["btl"]["margin"], ctrl["exp"]["margin"]]),
        "control_certified": np.array([ctrl["btl"]["certified"], ctrl["exp"]["certified"]]),
        "control_violates": np.array([ctrl["btl"]["violates"], ctrl["exp"]["violates"]]),
        "control_hinge_counts": hcounts,
        "control_hinge_gap": np.asarray([float(x) for x in gaps_h]),
        "control_hinge_gap_exact": np.asarray([sc.jsonable_fraction(x) for x in gaps_h]),
        "variant_params": rows, "variant_margin": np.array([v["margin"] for v in var]),
        "variant_certified": np.array([v["certified"] for v in var]),
        "variant_violates": np.array([v["violates"] for v in var]),
    }
