"""Claims about rules that look at the majority relation (Ge et al. 2024): the majority loss satisfies
pairwise majority consistency (Theorem 3.6) and every C1 linear rule fails Pareto optimality (Theorem 3.7)."""

from __future__ import annotations

from fractions import Fraction

import jax
import numpy as np

from claims import ledger
from theory import social_choice as sc
from theory.numerics import float64

# helpers -------------------------------------------------------------------------------------------

_frac = sc.jsonable_fraction


# Ge et al. Theorem 3.6: the majority loss satisfies PMC --------------------------------------------


def _rational_profiles(offset: int = 0, count: int = 6) -> dict:
    """Small integer instances in d = 3 with PMC applying and no voter count above one half: 6 candidates
    in {-4..4}^3, 3 voters in {1..4}^3 with counts in {1, 2, 3} (none above half the total), from
    ``jax.random.key(700 + offset)``; draws where PMC does not apply (a cycle, a half-half pair, an
    infeasible majority ranking) or candidates repeat are skipped."""
    out, s = {}, 0
    with float64():
        while len(out) < count and s < 500:
            k1, k2, k3 = jax.random.split(jax.random.key(700 + offset + s), 3)
            s += 1
            X = np.asarray(jax.random.randint(k1, (6, 3), -4, 5))
            V = np.asarray(jax.random.randint(k2, (3, 3), 1, 5))
            c = np.asarray(jax.random.randint(k3, (3,), 1, 4))
            if 2 * c.max() >= c.sum() or len({tuple(x) for x in X.tolist()}) < 6:
                continue
            order, feasible = sc.pmc_ranking(X.astype(float), V.astype(float), c.astype(float))
            if order is None or not feasible:
                continue
            out[f"integer profile, key {700 + offset + s - 1}, counts {c.tolist()}"] = (X, V, c)
    return out


@ledger.claim("social_choice.majority_loss_pmc",
              source="Ge et al. 2024, Theorem 3.6 (the majority loss satisfies pairwise majority consistency)",
              statement="The loss that counts one unit per majority pair, sum_{a beats b} l(r(b) - r(a)), ranks "
                        "every majority pair the majority's way at every optimum wherever a feasible PMC ranking "
                        "exists (hinge, exact).")
def _check_majority_loss_pmc(r: ledger.Reads) -> ledger.Evidence:
    g = sc.ge_instance(eps="1/100", delta="2", voter=(Fraction(1), Fraction(1)), counts=(3, 1), exact=True)
    inst = {"Ge's instance (counts 3:1, eps 1/100, delta 2)": (g.candidates, g.voters, [3, 1]),
            **_rational_profiles(r.seed_offset)}
    measured, gmin, glob_max = {}, None, Fraction(0)
    for name, (X, V, c) in inst.items():
        glob, gaps = sc.pmc_gaps(X, V, [int(x) for x in c], majority_loss=True)
        m = min(gp for _, _, gp in gaps)
        gmin = m if gmin is None else min(gmin, m)
        glob_max = max(glob_max, glob)
        measured[name] = {"global_inf": _frac(glob), "majority_pairs": len(gaps), "smallest_gap": _frac(m)}
    test = ("exact Fractions (hinge LP basis verified in python-flint): infimum subject to r(b) >= r(a) minus "
            "the global infimum, smallest over every majority pair (a, b) of every instance")
    decisions = [ledger.compare(f"majority loss: smallest gap over {len(inst)} instances", gmin, ">", Fraction(0),
                                test),
                 ledger.exact("majority loss: largest global infimum (0: the PMC ranking attains it)", glob_max,
                              Fraction(0), "exact Fractions")]
    glob_o, gaps_o = sc.pmc_gaps(g.candidates, g.voters, [3, 1], majority_loss=False)
    zero = [(a, b) for a, b, gp in gaps_o if gp == 0]
    controls = [ledger.Control(
        "the ordinary loss (every vote counted) on Ge's instance instead of the majority loss",
        ledger.compare("ordinary loss: smallest gap over the majority pairs", min(gp for _, _, gp in gaps_o), ">",
                       Fraction(0), test),
        {"global_inf": _frac(glob_o), "majority_pairs_with_gap_0": [(g.names[a], g.names[b]) for a, b in zero]})]
    return ledger.Evidence(
        measured={"smallest_gap": _frac(gmin), "per_instance": measured},
        predicted={"smallest_gap": "> 0 (every optimum ranks every majority pair the majority's way)",
                   "global_inf": "0"},
        tolerance="exact rational certificates (hinge); no tolerance",
        decisions=decisions, controls=controls,
        notes="Hinge loss, so the infima are exact LPs (Ge's certificate: constrained infimum above the global "
              "one). Instances: Ge's construction and integer profiles in d = 3 whose majority relation is a "
              "feasible ranking with no voter above one half. The ordinary loss leaves gap 0 on (c', c): some "
              "optimum ranks c above c' (Theorem 3.1).")


# Ge et al. Theorem 3.7: every C1 linear rule fails PO ----------------------------------------------


def _c1_rule_violations(X, profiles, pareto: bool) -> tuple[int, set]:
    """Profiles on which leximax Copeland (with or without its Pareto constraints) reverses a Pareto pair,
    and the set of rankings it outputs over the profiles."""
    bad, outs = 0, set()
    for P in profiles:
        V = np.asarray(P, np.float64)
        rk = sc.lcpo(X, V, pareto=pareto).ranking
        outs.add(rk)
        bad += bool(sc.check_ranking_axioms(X, V, None, rk)["po_violations"])
    return bad, outs


@ledger.claim("social_choice.ge_c1_fails_po",
              source="Ge et al. 2024, Theorem 3.7 (every C1 linear rule fails Pareto optimality; candidates "
                     "+-e_i and c* = (1/5, ..., 1/5) in R^4, five voters)",
              statement="No reward ranks c* first, and eight five-voter profiles share one majority graph (c* its "
                        "Condorcet winner) while in the t-th every voter prefers c* to t, for each t = +-e_i: a rule "
                        "whose output depends only on the majority graph ranks some t first everywhere and so "
                        "violates Pareto optimality on profile t.")
def _check_ge_c1() -> ledger.Evidence:
    key = sc.c_star_top_certificate(Fraction(1, 5))
    facts = sc.c1_construction_facts()
    X = np.array([[float(v) for v in r] for r in sc.c1_candidates()])
    abl_bad, abl_out = _c1_rule_violations(X, sc.C1_PROFILES, pareto=False)
    lcpo_bad, lcpo_out = _c1_rule_violations(X, sc.C1_PROFILES, pareto=True)
    zero = [Fraction(0)] * 4
    key_test = "exact Farkas certificate (Fractions): positive multipliers summing the differences c* - x to 0"
    decisions = [
        ledger.check("no theta ranks c* = (1/5, ...) first", not key["c_star_can_be_first"],
                     [str(x) for x in key["combination"]], "0 with lambda > 0", key_test),
        ledger.exact("Farkas combination sum lambda (c* - x)", key["combination"], zero, "exact Fractions"),
        ledger.check("every voter ranks strictly (no ties)", facts["strict"], facts["strict"], True, "exact signs"),
        ledger.check("the eight profiles share one majority graph", facts["same_majority_graph"],
                     facts["same_majority_graph"], True, "exact signs, 5 voters"),
        ledger.check("c* is the Condorcet winner of that graph", facts["c_star_condorcet"], facts["c_star_condorcet"],
                     True, "exact signs"),
        ledger.exact("profiles t whose every voter prefers c* to t (of 8)", sum(facts["c_star_pareto_over_t"]), 8,
                     "exact signs"),
        ledger.compare("a C1 rule (leximax Copeland, no Pareto constraints): profiles with a Pareto reversal",
                       abl_bad, ">", 0, "exact signs; HiGHS feasibility LPs"),
        ledger.exact("that C1 rule: distinct rankings output over the 8 profiles", len(abl_out), 1,
                     "one majority graph, one output")]
    k3 = sc.c_star_top_certificate(Fraction(3, 10))
    controls = [
        ledger.Control("c* = (3/10, ...) instead of (1/5, ...) (coordinates above 1/4: c* can be first)",
                       ledger.check("no theta ranks c* = (3/10, ...) first", not k3["c_star_can_be_first"],
                                    [str(x) for x in k3["combination"]], "0 with lambda > 0", key_test),
                       {"theta": [str(x) for x in k3["theta"]], "min_margin": str(k3["min_margin"])}),
        ledger.Control("LCPO (not C1: its Pareto constraints look beyond the majority graph) on the same profiles",
                       ledger.compare("LCPO: profiles with a Pareto reversal", lcpo_bad, ">", 0,
                                      "exact signs; HiGHS feasibility LPs"),
                       {"distinct_rankings": len(lcpo_out)})]
    return ledger.Evidence(
        measured={"farkas_lambda": [str(x) for x in key["lambda"]], "facts": {k: v for k, v in facts.items()
                                                                               if k != "graph"},
                  "c1_rule_profiles_violating": abl_bad, "c1_rule_rankings": len(abl_out),
                  "lcpo_profiles_violating": lcpo_bad, "lcpo_rankings": len(lcpo_out)},
        predicted={"c_star_first": "impossible", "c1_rule": "violates PO on the profile of its top candidate"},
        tolerance="exact: Fractions for the certificate and every vote; LP feasibility for the rules' rankings",
        decisions=decisions, controls=controls,
        notes="Ge et al.'s own five voters are not available to us: the eight integer profiles "
              "(theory/social_choice/c1.py) were found by a HiGHS mixed-integer feasibility search and are "
              "verified exactly here. The C1 rule shown is leximax Copeland over feasible rankings without "
              "Pareto constraints: a function of the majority graph (the candidates are fixed).")
