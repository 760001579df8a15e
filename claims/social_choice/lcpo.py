"""Claims about LCPO, Hollender & Kraiczy's rule (figure social_choice_lcpo): Pareto optimality and PMC,
majority consistency and winner monotonicity."""

from __future__ import annotations

import math

import numpy as np

from claims import ledger
from theory import social_choice as sc

# LCPO (figure social_choice_lcpo) ------------------------------------------------------------------


def _lcpo_named_instances() -> dict:
    """Ge's constructions and the core instance (a voter above one half in each)."""
    inst = {}
    for p, eps, delta, voter in ((0.6, 0.01, 2.0, (1, 1)), (0.75, 0.01, 2.0, (1, 1)), (0.75, 0.1, 2.0, (1, 1)),
                                 (0.6, 0.05, 2.0, (1, 1)), (0.75, 0.1, 0.5, (1, 3)), (0.9, 0.2, 0.5, (1, 3))):
        g = sc.ge_instance(p, eps, delta, voter)
        inst[f"Ge p={p} eps={eps} delta={delta} voter={voter}"] = (g.candidates, g.voters, g.weights)
    inst["Ge core p=0.6"] = tuple(getattr(sc.ge_core(0.6), k) for k in ("candidates", "voters", "weights"))
    return inst


def _axiom_tests(who: str, po: int, pmc_fail: int) -> tuple[ledger.Decision, ledger.Decision]:
    return (ledger.exact(f"{who}: Pareto pairs reversed", po, 0, "exact signs"),
            ledger.exact(f"{who}: feasible PMC rankings not output", pmc_fail, 0, "exact majority matrix, LP"))


def _exercised(name: str, count: int) -> ledger.Decision:
    """The draws exercise a case: holds with count > 0, undecided (nan) with none (not a failure of the
    theorem, a design that did not reach the case)."""
    return ledger.compare(name, float(count) if count > 0 else math.nan, ">", 0.0,
                          "exact count > 0 (nan = the draws never reach the case: undecided)")


def _lcpo_families(a) -> str:
    fams = [str(f) for f in a["families"]]
    return ", ".join(f"{f}: {int(np.sum(a['family'] == i))}" for i, f in enumerate(fams))


@ledger.claim("social_choice.lcpo_axioms",
              source="Ge et al. 2024, Theorem 4.3 (leximax Copeland subject to PO: Pareto optimality and "
                     "pairwise majority consistency)",
              statement="LCPO is Pareto optimal and pairwise-majority consistent on every finite profile: random "
                        "profiles where no voter holds a weight above one half (majorities are coalitions, the "
                        "majority relation can cycle), Ge's constructions and the core instance; its Pareto "
                        "constraints are needed (leximax Copeland without them reverses Pareto pairs).",
              reads=("social_choice_lcpo",))
def _check_lcpo(r: ledger.Reads) -> ledger.Evidence:
    a, meta = r["social_choice_lcpo"]
    named, po_named, pmc_named = {}, 0, 0
    for name, (X, V, w) in _lcpo_named_instances().items():
        res = sc.lcpo(X, V, w)
        ax = sc.check_ranking_axioms(X, V, w, res.ranking)
        po_named += len(ax["po_violations"])
        pmc_named += not ax["pmc_holds"]
        named[name] = {"po_violations": len(ax["po_violations"]), "pmc_applies": ax["pmc_applies"],
                       "pmc_holds": ax["pmc_holds"]}
    N = int(a["po_violations"].shape[0])
    po, pmc_fail = int(a["po_violations"].sum()), int((~a["pmc_holds"].astype(bool)).sum())
    applies, cycles = int(a["pmc_applies"].sum()), int(a["cycle"].sum())
    no_major = int((a["max_weight"] < 0.5).sum())
    try:
        sc.lcpo(sc.ex7().candidates, sc.ex7().voters, sc.ex7().weights)
        ex7_note = "accepted"
    except ValueError as e:
        ex7_note = f"refused: {e}"
    decisions = [*_axiom_tests(f"LCPO over {N} random draws", po, pmc_fail),
                 *_axiom_tests(f"LCPO over {len(named)} of Ge's instances", po_named, pmc_named),
                 ledger.exact("draws with every voter weight below one half", no_major, N, "exact count"),
                 _exercised("draws whose majority relation cycles (no PMC ranking; Copeland decides)", cycles),
                 _exercised("draws where PMC applies (a coalition majority ranking, linear)", applies),
                 ledger.check("LCPO refuses ex7 (voter ties: not a strict-ranking profile)",
                              ex7_note.startswith("refused"), ex7_note, "refused", "ValueError raised")]
    abl_po, abl_bad = int(a["ablation_po_violations"].sum()), int((a["ablation_po_violations"] > 0).sum())
    controls = [ledger.Control(
        "leximax Copeland without the Pareto constraints (LCPO minus PO), same draws",
        ledger.exact(f"LCPO minus PO over {N} random draws: Pareto pairs reversed", abl_po, 0, "exact signs"),
        {"draws_reversing_a_pareto_pair": abl_bad, "draws_where_it_differs_from_lcpo":
            int(a["ablation_differs"].sum())})]
    g = sc.ge_instance(0.6, 0.01, 2.0)
    for loss in sc.SMOOTH_LOSSES:
        th = sc.fit_reward(g.candidates, g.voters, g.weights, loss=loss)
        axr = sc.check_ranking_axioms(g.candidates, g.voters, g.weights, sc.ranking_of(g.candidates, th))
        d_po, d_pmc = _axiom_tests(f"{loss} rule on Ge's instance", len(axr["po_violations"]),
                                   int(not axr["pmc_holds"]))
        case = f"the {loss} rule's ranking instead of LCPO's on Ge's instance (p=0.6, eps=0.01)"
        controls += [ledger.Control(f"{case}: Pareto optimality", d_po),
                     ledger.Control(f"{case}: PMC", d_pmc)]
    return ledger.Evidence(
        measured={"draws": N, "per_family": _lcpo_families(a), "cycles": cycles, "pmc_applies": applies,
                  "pmc_ranking_not_linear": int(a["pmc_infeasible"].sum()), "largest_voter_weight":
                      float(a["max_weight"].max()), "lcpo_po_violations": po, "lcpo_pmc_failures": pmc_fail,
                  "ablation_draws_reversing_pareto": abl_bad, "ge_instances": named, "ex7": ex7_note},
        predicted={"po_violations": 0, "pmc": "holds wherever a feasible PMC ranking exists",
                   "ablation": "reverses Pareto pairs on the compromise family", "ex7": "not defined (voter ties)"},
        tolerance="exact: no Pareto pair reversed; output equals the PMC ranking whenever it exists and is "
                  "feasible (HiGHS LP); counts of cycling and PMC draws > 0",
        decisions=decisions, controls=controls,
        notes=f"paper_configs/social_choice_lcpo.yaml at {r.scale} scale ({_lcpo_families(a)} draws), every "
              "voter weight below one half. LCPO is defined on finite candidate sets with strict rankings "
              "only: not on pair data, uniform coverage or ex7. Feasibility LPs <theta, x_a - x_b> >= 1 by "
              "HiGHS; Copeland ties go to the lower index. The compromise family puts a Copeland winner w "
              "whose every reward ranks c above a although all voters prefer a: without the Pareto "
              "constraints the leximax places w, then c above a.")


@ledger.claim("social_choice.lcpo_majority_consistency",
              source="Ge et al. 2024, Theorem 4.3 (LCPO satisfies majority consistency)",
              statement="If voters of total weight above one half rank the same candidate first, LCPO ranks it "
                        "first.",
              reads=("social_choice_lcpo",))
def _check_lcpo_majority(r: ledger.Reads) -> ledger.Evidence:
    a, _ = r["social_choice_lcpo"]
    mt, top, pt = a["majority_top"], a["lcpo_top"], a["plurality_top"]
    has = mt >= 0
    n_has, miss = int(has.sum()), int(np.sum(has & (mt != top)))
    n_not = int((~has).sum())
    miss_plur = int(np.sum(~has & (pt != top)))
    decisions = [_exercised("draws with a majority top (a coalition above one half; no single voter is)", n_has),
                 ledger.exact(f"draws with a majority top where LCPO ranks another first (of {n_has})", miss, 0,
                              "exact count")]
    controls = [ledger.Control(
        "the candidate with the largest first-place share at most one half (plurality, no majority)",
        ledger.exact(f"draws without a majority top where LCPO ranks another than the plurality top first "
                     f"(of {n_not})", miss_plur, 0, "exact count"),
        {"largest_plurality_share_in_these": float(a["plurality_share"][~has].max()) if n_not else math.nan})]
    return ledger.Evidence(
        measured={"draws_with_majority_top": n_has, "lcpo_top_differs": miss, "draws_without": n_not,
                  "plurality_top_not_first": miss_plur},
        predicted={"lcpo_top_differs": 0},
        tolerance="exact counts: no draw with a majority top where LCPO ranks another candidate first",
        decisions=decisions, controls=controls,
        notes="Voters rank by <v_i, x> (exact signs); no single voter holds one half, so every majority top is "
              "a coalition's. The control drops the hypothesis to a plurality (share <= 1/2): nothing forces "
              "LCPO to rank that candidate first.")


@ledger.claim("social_choice.lcpo_winner_monotonicity",
              source="Ge et al. 2024, Theorem 4.3 (LCPO satisfies winner monotonicity)",
              statement="If the LCPO winner is moved up one position in one voter's ranking (the other candidates' "
                        "order kept, the new ranking induced by a linear voter), it stays the LCPO winner.",
              reads=("social_choice_lcpo",))
def _check_lcpo_monotone(r: ledger.Reads) -> ledger.Evidence:
    a, _ = r["social_choice_lcpo"]
    raises, changed = int(a["raises"].sum()), int(a["raise_changed"].sum())
    lowers, lchanged = int(a["lowers"].sum()), int(a["lower_changed"].sum())
    decisions = [_exercised("raises of the winner by one position (linear new voter)", raises),
                 ledger.exact(f"raises that change the LCPO winner (of {raises})", changed, 0, "exact count")]
    controls = [ledger.Control("the winner moved down one position instead (outside the axiom's hypothesis)",
                               ledger.exact(f"lowerings that change the LCPO winner (of {lowers})", lchanged, 0,
                                            "exact count"))]
    return ledger.Evidence(
        measured={"raises": raises, "winner_changed": changed, "lowerings": lowers, "lowering_changed": lchanged},
        predicted={"winner_changed": 0},
        tolerance="exact count: no raise changes the winner",
        decisions=decisions, controls=controls,
        notes="For each draw and each voter whose ranking has the LCPO winner below the top, the winner is "
              "swapped with the candidate just above it; the profile is kept only when a linear voter has the "
              "new ranking (LP with margins >= 1, which also gives the new voter vector), and LCPO is rerun.")
