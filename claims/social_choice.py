"""Claims of linear social choice: Hollender & Kraiczy, "Enforcing Axioms for AI Alignment under Loss-Based
Rules" (ICLR 2026), and Ge et al., "Axioms for AI Alignment from Human Feedback" (NeurIPS 2024), checked
with ``theory.social_choice``. Brief: ``shared/papers/social_choice.md`` (its Errata override its body).

Each claim is registered with :func:`claims.ledger.claim` and returns :class:`claims.ledger.Evidence`.
Claims about a figure (``polynomial_po_violation``, ``finite_sample_rate``, ``coverage_dose_response``)
read that figure's result through :func:`claims.ledger.figure_result`.
"""

from __future__ import annotations

import math
from fractions import Fraction

import jax
import numpy as np

from claims import ledger
from sims.social_choice import ge_fits
from theory import social_choice as sc
from theory.numerics import binomial_se, float64, zero_count_upper

# ---------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------


def _frac(q: Fraction) -> str:
    return sc.jsonable_fraction(q)


def _random_voters(seed: int, k: int, d: int) -> tuple[np.ndarray, np.ndarray]:
    """k voters in d dimensions with a pointed cone (angles in [0, 150] deg for d = 2, positive orthant
    above) and weights in [0.2, 1], from ``jax.random.key(seed)``."""
    kv, kw = jax.random.split(jax.random.key(seed))
    with float64():
        if d == 2:
            ang = np.sort(np.asarray(jax.random.uniform(kv, (k,), minval=0.0, maxval=150.0)))
            V = sc.voters_from_angles(ang)
        else:
            V = np.abs(np.asarray(jax.random.normal(kv, (k, d))))
        w = np.asarray(jax.random.uniform(kw, (k,), minval=0.2, maxval=1.0))
    return V, w


# ---------------------------------------------------------------------------------------------------
# 1. Ge's violation
# ---------------------------------------------------------------------------------------------------

GE_BTL = {"theta": (0.259133, 0.023988), "margin": -2.112e-3}
GE_HINGE = {"global": Fraction(2003, 50), "constrained": Fraction(6156, 149), "gap": Fraction(9353, 7450)}


def _ge_check(p, eps, delta, voter=(1, 1)) -> dict:
    """BTL and exp on one Ge instance: the certified margin on (c', c) and the axiom checks."""
    inst = sc.ge_instance(p, eps, delta, voter)
    fits = ge_fits(p, eps, delta, voter)
    a, b = inst.pareto_pair
    unanimous = (a, b) in sc.pareto_pairs(inst.candidates, inst.voters)
    out = {}
    for loss, f in fits.items():
        out[loss] = {"margin": f["margin"], "certified": f["certified"], "radius": f["radius"],
                     "violates": unanimous and f["certified"] and f["margin"] < 0
                     and (a, b) in f["po_violations"] and (a, b) in f["pmc_violations"],
                     "ranking": " ".join(inst.names[i] for i in f["ranking"]),
                     "theta": [round(float(t), 6) for t in f["theta"]]}
    return out


@ledger.claim("social_choice.ge_po_violation",
              source="Ge et al. 2024, Theorem 3.1 and its construction (sign slip fixed: voter (1, 1), "
                     "delta = 2); brief §4.1-4.2 and Errata",
              statement="On Ge's six-candidate construction every BTL, hinge and exponential optimum ranks the "
                        "Pareto-dominated c above c' (BTL, exp: certified margin; hinge: exact infimum gap > 0), "
                        "and so also violates pairwise majority consistency.")
def _check_ge_po_violation() -> ledger.Evidence:
    main = _ge_check(0.6, 0.01, 2.0)
    inst = sc.ge_instance(0.6, 0.01, 2.0)
    pmc_rank, pmc_feasible = sc.pmc_ranking(inst.candidates, inst.voters, inst.weights)
    voter1_rank = sc.ranking_of(inst.candidates, inst.voters[0])
    hinst = sc.ge_instance(eps=Fraction(1, 100), delta=Fraction(2), counts=(3, 1), exact=True)
    a, b = hinst.pareto_pair
    g, c = sc.hinge_certificate(hinst.candidates, hinst.voters, [3, 1], (a, b))
    # Every hinge optimum ranks c strictly above c' (c > g), and (c', c) is a majority pair of the PMC
    # ranking (voter (1, 1)'s, feasible), so every hinge optimum violates PMC as well.
    hinge_ok = c > g
    variants = {"voter (1,3), delta 1/2, p 0.75, eps 0.1": _ge_check(0.75, 0.1, 0.5, (1, 3))["btl"]["margin"],
                "voter (1,3), delta 1/2, p 0.9, eps 0.2": _ge_check(0.9, 0.2, 0.5, (1, 3))["btl"]["margin"],
                "voter (1,1), delta 2, p 0.75, eps 0.01": _ge_check(0.75, 0.01, 2.0)["btl"]["margin"],
                "voter (1,1), delta 2, p 0.75, eps 0.1": _ge_check(0.75, 0.1, 2.0)["btl"]["margin"]}
    ok = (main["btl"]["violates"] and main["exp"]["violates"] and hinge_ok and pmc_feasible
          and tuple(pmc_rank) == tuple(voter1_rank)
          and (c - g) == GE_HINGE["gap"] and g == GE_HINGE["global"] and c == GE_HINGE["constrained"]
          and all(m < 0 for m in variants.values()))
    # Controls: instances where each rule is Pareto-correct, and Ge's printed parameters.
    ctrl = _ge_check(0.6, 0.05, 2.0)
    controls = [ledger.Control(f"{loss} at eps = 0.05 (p = 0.6, delta = 2): the rule ranks c' above c",
                               {"margin": ctrl[loss]["margin"], "certified": ctrl[loss]["certified"]},
                               rejected=not ctrl[loss]["violates"]) for loss in ("btl", "exp")]
    for counts in ((3, 2), (2, 1)):
        gg, cc = sc.hinge_certificate(hinst.candidates, hinst.voters, list(counts), (a, b))
        controls.append(ledger.Control(f"hinge with counts {counts[0]}:{counts[1]}: some optimum ranks c' >= c",
                                       {"gap": _frac(cc - gg)}, rejected=not cc > gg))
    try:
        sc.ge_instance(0.6, 0.01, 0.5, (1, 1))
        printed = "accepted"
    except ValueError as e:
        printed = str(e).split(":")[0]
    controls.append(ledger.Control("Ge's printed parameters (voter (1, 1), delta = 1/2): <(1,1), c' - c> = "
                                   "-eps/2 < 0, so (c', c) is not a Pareto pair", printed,
                                   rejected=printed != "accepted"))
    return ledger.Evidence(
        measured={"btl": main["btl"], "exp": main["exp"],
                  "hinge_counts_3_1": {"global_inf": _frac(g), "constrained_inf": _frac(c), "gap": _frac(c - g)},
                  "pmc_ranking": " ".join(inst.names[i] for i in pmc_rank), "other_btl_margins": variants},
        predicted={"btl": GE_BTL, "exp": "margin < 0 at (0.6, 0.01, 2) (Errata)",
                   "hinge_counts_3_1": {k: _frac(v) for k, v in GE_HINGE.items()},
                   "pmc_ranking": "voter (1, 1)'s ranking a a' b b' c' c", "other_btl_margins":
                   "-0.0673, -0.2724, -6.97e-3, -3.12e-3 (brief §4.1)"},
        tolerance="BTL/exp: margin < 0 with |margin| > certified radius |c' - c|; hinge: exact Fractions equal "
                  "and constrained infimum > global infimum; PMC: the fit reverses the majority pair (c', c)",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes="p = 0.6, eps = 0.01, delta = 2; hinge with counts 3:1 (p = 3/4) and eps = 1/100 (errata: hinge needs "
              "p > 2/3). The violation theorem is existential: BTL and exp violate here but not at eps = 0.05. "
              "BTL ranking as the brief says: a a' b b' c c' (c above c'). Certified radius = |grad| / "
              "lambda_min over the ball, float64.")


# ---------------------------------------------------------------------------------------------------
# 2. BTL core identity
# ---------------------------------------------------------------------------------------------------

CORE_ROOTS = {0.6: 0.271541, 0.75: 0.756308}


@ledger.claim("social_choice.btl_core_identity",
              source="Ge et al. 2024, Lemmas 3.2-3.3 (core instance); brief §3 '[derived] BTL core optimum' "
                     "and Errata §3",
              statement="On Ge's core instance the BTL optimum has theta_2 = 0 and tanh(theta_1/2) + tanh(theta_1) "
                        "= 2(2p - 1).")
def _check_btl_core_identity() -> ledger.Evidence:
    exact = sc.btl_core_identity()
    roots, fits = {}, {}
    ok = all(exact.values())
    for p, printed in CORE_ROOTS.items():
        root = sc.btl_core_theta1(p, 50)
        roots[p] = str(root)[:22]
        core = sc.ge_core(p)
        for loss in ("btl", "exp"):
            f = sc.fit_reward_certified(core.candidates, core.voters, core.weights, loss=loss)
            fits[f"{loss}, p={p}"] = {"theta": [float(t) for t in f.theta], "radius": f.radius}
            ok &= abs(f.theta[1]) <= f.radius
            if loss == "btl":
                ok &= abs(f.theta[0] - float(root)) <= f.radius + 1e-15
        ok &= abs(float(root) - printed) < 5e-7
    # Control: move b to (1.2, 1); the u <-> w symmetry then forces theta_2 = -0.4 theta_1, not 0.
    pert = sc.Instance(np.array([[2.0, 1.0], [1.2, 1.0], [0.0, 0.0]]), np.array([[1.0, 1.0], [-1.0, 0.0]]),
                       np.array([0.6, 0.4]), ("a", "b", "c"), (-1, -1))
    fp = sc.fit_reward_certified(pert.candidates, pert.voters, pert.weights)
    controls = [ledger.Control("core with b moved to (1.2, 1) (the symmetry no longer gives theta_2 = 0)",
                               {"theta": [float(t) for t in fp.theta], "radius": fp.radius},
                               rejected=abs(fp.theta[1]) > fp.radius)]
    return ledger.Evidence(
        measured={"sympy": exact, "theta1_root_50_digits": roots, "float64_fits": fits},
        predicted={"sympy": "all identities exact", "theta1": CORE_ROOTS, "theta2": 0.0},
        tolerance="sympy simplifies each difference to 0; |theta_2| and |theta_1 - root| within the certified "
                  "radius; root equals the brief's 6 decimals",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes="theta_2 = 0 follows from the u <-> w symmetry of g(u) + g(w) + g(u + w) for any strictly convex "
              "loss (errata): the exponential fit has it too. Roots by sympy nsolve at 50 digits.")


# ---------------------------------------------------------------------------------------------------
# 3. Polynomial rewards (figure social_choice_polynomial)
# ---------------------------------------------------------------------------------------------------


def _instance_verdict(X, V, w, degree) -> dict:
    """Refit one instance on the host: certified Pareto violations at ``degree``."""
    f = sc.fit_reward_certified(X, V, w, degree=degree)
    F = sc.lift(X, degree)
    pairs = sc.pareto_pairs(X, V)
    margins = [f.margin(F[a] - F[b]) for a, b in pairs]
    return {"violations": sum(1 for m, c in margins if c and m < 0),
            "uncertain": sum(1 for m, c in margins if not c),
            "min_margin": min(m for m, _ in margins) if margins else math.nan, "radius": f.radius}


@ledger.claim("social_choice.polynomial_po_violation",
              source="Hollender & Kraiczy 2026, Theorem 4.1 (polynomial rewards); brief §4.4",
              statement="BTL rewards that are polynomials of degree 2 and 3 still violate Pareto optimality on "
                        "instances that a linear reward gets right; how often random instances violate, per "
                        "degree.")
def _check_polynomial(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("social_choice_polynomial", scale)
    degs = [int(d) for d in a["degrees"]]
    valid, viol, unc = a["valid"], a["violated"], a["uncertain"]
    lin = degs.index(1)
    lin_ok = valid[:, lin] & ~viol[:, lin] & ~unc[:, lin]
    rates, cond, se, z = {}, {}, {}, {}
    for i, d in enumerate(degs):
        n = int(valid[:, i].sum())
        rates[d] = float(viol[:, i].sum() / max(n, 1))
        nb = int((lin_ok & valid[:, i]).sum())
        k = int((lin_ok & valid[:, i] & viol[:, i]).sum())
        cond[d] = {"violating": k, "of": nb, "rate": k / max(nb, 1)}
        se[d] = binomial_se(k / nb, nb) if nb else math.nan
        z[d] = cond[d]["rate"] / se[d] if se[d] > 0 else (math.inf if k else 0.0)
    ok = all(d not in degs or (cond[d]["violating"] > 0 and z[d] >= 3) for d in (2, 3))
    # ex7 (brief §4.4) and the first sweep instance per degree, refitted and certified on the host.
    ex = sc.ex7()
    V, w = ex.voters, ex.weights
    ex_res = {d: _instance_verdict(ex.candidates, V, w, d) for d in (1, 2)}
    ok &= ex_res[2]["violations"] > 0 and ex_res[1]["violations"] == 0 and ex_res[1]["uncertain"] == 0
    Vs = np.eye(2)
    ws = np.array([meta["config"]["p_major"], 1 - meta["config"]["p_major"]])
    examples = {}
    controls = [ledger.Control("ex7 at degree 1 (linear reward: Pareto optimal there)",
                               {"min_margin": ex_res[1]["min_margin"]}, rejected=ex_res[1]["violations"] == 0)]
    for i, d in enumerate(degs):
        idx = int(a["example"][i])
        if d == 1 or idx < 0:
            continue
        X = a["instances"][idx]
        hi, lo = _instance_verdict(X, Vs, ws, d), _instance_verdict(X, Vs, ws, 1)
        examples[f"degree {d}, instance {idx}"] = {"violations": hi["violations"], "min_margin": hi["min_margin"],
                                                   "radius": hi["radius"]}
        ok &= hi["violations"] > 0
        controls.append(ledger.Control(f"sweep instance {idx} at degree 1 (its linear fit is Pareto optimal)",
                                       {"min_margin": lo["min_margin"], "uncertain": lo["uncertain"]},
                                       rejected=lo["violations"] == 0))
    return ledger.Evidence(
        measured={"violation_rate_any_pair": rates, "given_linear_pareto_optimal": cond,
                  "ex7_margin": {d: ex_res[d]["min_margin"] for d in (1, 2)}, "certified_examples": examples,
                  "instances": int(valid.shape[0])},
        predicted={"degrees 2, 3": "violations on instances a linear reward gets right (Thm 4.1)",
                   "ex7_margin": {1: "+0.0717", 2: "-0.0323"},
                   "brief's random search": "about 4% at degree 2, 1% at degree 3 (its own protocol)"},
        tolerance="at degrees 2 and 3, violating instances among those whose linear fit is certified Pareto "
                  "optimal, at least 3 binomial SE above 0; every counted violation certified (|margin| > "
                  "radius |z|); sweep examples and ex7 refitted in float64 on the host",
        verdict=ledger.verdict(ok, controls),
        stderr={"given_linear_pareto_optimal": se},
        controls=controls,
        notes=f"paper_configs/social_choice_polynomial.yaml at {scale} scale: {meta['config']['n_base']} random "
              f"candidates in [-{meta['config']['box']}, {meta['config']['box']}]^2 and a copy of one shifted by "
              f"{meta['config']['eps']} into the positive quadrant; voters (1, 0) w = {meta['config']['p_major']} "
              "and (0, 1). Polynomials violate more often than linear rewards here. The brief's 4% / 1% came from "
              "an unstated protocol; ours is this config. ex7 at degree 3 saturates its 7 candidates (lifted "
              "rank 6 = n - 1): the fit is the unrestricted BTL, which is Pareto optimal (the figure shows it).")


# ---------------------------------------------------------------------------------------------------
# 4. Uniform coverage restores whole-space PO
# ---------------------------------------------------------------------------------------------------

UC_NAMED = {
    "d2 voters 0/90 deg, w .5/.5": (sc.voters_from_angles((0, 90)), np.array([0.5, 0.5])),
    "d2 voters 0/90 deg, w .7/.3": (sc.voters_from_angles((0, 90)), np.array([0.7, 0.3])),
    "d2 voters 10/60 deg, w .8/.2": (sc.voters_from_angles((10, 60)), np.array([0.8, 0.2])),
    "d3 brief voters": (sc.D3_VOTERS, sc.D3_WEIGHTS),
}
UC_PREDICTED = {"d2 voters 0/90 deg, w .5/.5": {"btl": "45 deg, |theta| 2.3737"},
                "d2 voters 0/90 deg, w .7/.3": {"btl": "23.1986 deg, rho 2.7376"},
                "d2 voters 10/60 deg, w .8/.2": {"btl": "19.370 deg (brief; the closed form gives 19.3692)",
                                                 "hinge": "16.83 deg", "exp": "23.56 deg"},
                "d3 brief voters": {"btl": "5.0547 u_hat, cone coordinates proportional to (.6, .3, .1)"}}


def _uc_instances() -> dict:
    inst = dict(UC_NAMED)
    for s in range(3):
        inst[f"random d2, 2 voters, seed {s}"] = _random_voters(100 + s, 2, 2)
    inst["random d2, 3 voters, seed 0"] = _random_voters(200, 3, 2)
    for s in range(2):
        inst[f"random d3, 4 voters, seed {s}"] = _random_voters(300 + s, 4, 3)
    inst["random d4, 4 voters, seed 0"] = _random_voters(400, 4, 4)
    return inst


@ledger.claim("social_choice.uniform_coverage_po",
              source="Hollender & Kraiczy 2026, Theorem 5.1; brief §3 '[derived] closed form' and §4.5",
              statement="Under uniform coverage every BTL, hinge and exponential optimum lies in the cone of the "
                        "voters (Pareto optimal on the whole space); for BTL it points along sum_i w_i v_i/|v_i| "
                        "with the length given by the one-dimensional equation.")
def _check_uniform_coverage_po() -> ledger.Evidence:
    measured, worst = {}, {"cone_margin_min": math.inf, "btl_angle_max_deg": 0.0, "btl_rho_rel_max": 0.0}
    ok = True
    for name, (V, w) in _uc_instances().items():
        row = {}
        u, rho = sc.btl_uniform_closed_form(V, w)
        for loss in sc.LOSSES:
            f = sc.uniform_coverage_fit(V, w, loss=loss)
            ct = sc.cone_coordinates(f.theta, V)
            row[loss] = {"cone_margin": round(ct.margin, 6), "method": f.method}
            ok &= ct.inside and ct.margin > 1e-6
            worst["cone_margin_min"] = min(worst["cone_margin_min"], ct.margin)
            if loss == "btl":
                ang = sc.angle_deg(f.theta, u)
                rel = abs(np.linalg.norm(f.theta) - rho) / rho
                res = sc.rho_equation(rho, float(np.sum(w)), float(np.linalg.norm((w[:, None] * V / np.linalg.norm(
                    V, axis=1, keepdims=True)).sum(0))), V.shape[1])
                row[loss].update({"angle_to_u_deg": ang, "rho": float(np.linalg.norm(f.theta)), "rho_star": rho,
                                  "rho_equation_residual": res})
                ok &= ang < 1e-6 and rel < 1e-8 and abs(res) < 1e-12
                worst["btl_angle_max_deg"] = max(worst["btl_angle_max_deg"], ang)
                worst["btl_rho_rel_max"] = max(worst["btl_rho_rel_max"], rel)
            if V.shape[1] == 2:
                row[loss]["angle_deg"] = round(math.degrees(math.atan2(f.theta[1], f.theta[0])), 4)
        measured[name] = row
    # Controls: non-uniform coverage, the 3-pair data of brief §4.3.
    D, V, w, u = sc.pair_counterexample(0.9, 0.01)
    controls = []
    for loss in sc.SMOOTH_LOSSES:
        th = sc.fit_rows(sc.pair_rows(D, V, w), loss).theta
        ct = sc.cone_coordinates(th, V)
        controls.append(ledger.Control(f"{loss}, 3-pair data (p = 0.9, s = 0.01) instead of uniform coverage",
                                       {"theta": [round(float(t), 6) for t in th], "cone_margin": ct.margin},
                                       rejected=not ct.inside))
    Dq, Vq, _, _ = sc.pair_counterexample(Fraction(3, 4), Fraction(1, 10), exact=True)
    hc = sc.hinge_exact(sc.pair_rows(Dq, Vq, [3, 1], exact=True))
    th = [float(t) for t in hc.theta]
    ct = sc.cone_coordinates(th, np.asarray(Vq, float))
    controls.append(ledger.Control("hinge, 3-pair data (counts 3:1, s = 1/10), exact optimum",
                                   {"theta": [_frac(t) for t in hc.theta], "value": _frac(hc.value),
                                    "cone_margin": ct.margin}, rejected=not ct.inside))
    return ledger.Evidence(
        measured={"worst": worst, **measured},
        predicted={"cone": "every optimum inside cone(v) (margin > 0)", "btl": "along u, |theta| = rho*",
                   **UC_PREDICTED},
        tolerance="NNLS residual <= 1e-9 and cone margin > 1e-6 for every loss; BTL: angle to u < 1e-6 deg, "
                  "|theta|/rho* - 1 < 1e-8, rho* equation residual < 1e-12",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes="BTL and exp in d = 2, 3: hemisphere quadrature rows, certified Newton fit; hinge and d = 4: the "
              "exact 1-D reduction of the sphere integral (finite-difference Newton). Hinge is beyond the paper "
              "(H&K assume a strictly convex loss; errata): an observation. Random voter sets from "
              "jax.random.key(100..400), pointed cones.")


# ---------------------------------------------------------------------------------------------------
# 5. Uniform coverage does not give PMC
# ---------------------------------------------------------------------------------------------------

PMC_CASES = {
    "d2 voters 0/90 deg, p 0.6": (sc.voters_from_angles((0, 90)), np.array([0.6, 0.4])),
    "d2 voters 0/90 deg, p 0.7": (sc.voters_from_angles((0, 90)), np.array([0.7, 0.3])),
    "d2 voters 0/90 deg, p 0.99": (sc.voters_from_angles((0, 90)), np.array([0.99, 0.01])),
    "d2 voters 10/60 deg, p 0.8": (sc.voters_from_angles((10, 60)), np.array([0.8, 0.2])),
    "d3 brief voters (majority voter w 0.6)": (sc.D3_VOTERS, sc.D3_WEIGHTS),
}


@ledger.claim("social_choice.uniform_coverage_pmc_fails",
              source="Hollender & Kraiczy 2026, Theorem 5.2; brief §4.5",
              statement="Under uniform coverage the optimum is not parallel to the majority voter, so pairwise "
                        "majority consistency still fails.")
def _check_uniform_coverage_pmc() -> ledger.Evidence:
    measured, ok, min_angle = {}, True, math.inf
    for name, (V, w) in PMC_CASES.items():
        vmaj = V[int(np.argmax(w))]
        row = {}
        for loss in sc.LOSSES:
            f = sc.uniform_coverage_fit(V, w, loss=loss)
            ang = sc.angle_deg(f.theta, vmaj)
            row[loss] = round(ang, 6)
            if V.shape[1] == 2:
                row[f"{loss}_disagreement_share"] = round(sc.majority_disagreement(f.theta, V, w), 5)
            ok &= ang > 1e-3 and sc.in_cone(f.theta, V)
            min_angle = min(min_angle, ang)
        measured[name] = row
    # Control: a symmetric profile whose weighted mean is the majority voter: theta* is parallel to it.
    V = sc.voters_from_angles((0, 40, -40))
    w = np.array([0.6, 0.2, 0.2])
    controls = []
    for loss in sc.LOSSES:
        f = sc.uniform_coverage_fit(V, w, loss=loss)
        ang = sc.angle_deg(f.theta, V[0])
        controls.append(ledger.Control(f"{loss}, voters at 0 (w .6) and +-40 deg (w .2 each): symmetric, so "
                                       "theta* is parallel to the majority voter", {"angle_deg": ang},
                                       rejected=not ang > 1e-3))
    return ledger.Evidence(
        measured={"angle_to_majority_voter_deg": measured, "min_angle_deg": min_angle},
        predicted={"angle": "> 0 for every strictly convex loss (Thm 5.2)", "d2 0/90 p 0.7": {
            "btl": 23.1986, "hinge": 18.7}, "d2 0/90 p 0.99": {"hinge": 0.32},
            "d2 10/60 p 0.8": {"btl": 9.369, "hinge": 6.83, "exp": 13.56}},
        tolerance="angle to the majority voter > 1e-3 deg (quadrature error is below 1e-9 deg) with theta* in "
                  "the cone, i.e. theta* interpolates between the voters; in d = 2 the share of directions "
                  "where the reward disagrees with the majority equals angle / 180",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes="With weights p > 1/2 the majority relation on every comparison is the heaviest voter's, so PMC "
              "needs theta* parallel to it. Hinge is beyond the paper (strictly convex losses; errata): an "
              "observation, which holds here too.")


# ---------------------------------------------------------------------------------------------------
# 6. Finite samples (figure social_choice_coverage)
# ---------------------------------------------------------------------------------------------------


def _loglog_slope(N, angles, nmin):
    """Weighted least-squares slope of log(mean angle) on log N over N >= nmin, with its standard error
    (delta method: var(log mean) = (SE/mean)^2 per N)."""
    keep = N >= nmin
    m = np.nanmean(angles, axis=0)[keep]
    n = np.sum(np.isfinite(angles), axis=0)[keep]
    se = np.nanstd(angles, axis=0, ddof=1)[keep] / np.sqrt(n)
    x, y, wt = np.log(N[keep]), np.log(m), (m / se) ** 2
    xb = np.sum(wt * x) / wt.sum()
    sxx = np.sum(wt * (x - xb) ** 2)
    slope = np.sum(wt * (x - xb) * (y - np.sum(wt * y) / wt.sum())) / sxx
    return float(slope), float(1 / math.sqrt(sxx))


@ledger.claim("social_choice.finite_sample_rate",
              source="Hollender & Kraiczy 2026, Theorem 5.1 'in the limit'; the rate is our derivation (brief, "
                     "Errata §4.5)",
              statement="With N uniformly sampled comparisons the angle between the fitted and the limiting "
                        "direction shrinks like N^(-1/2), and the probability of landing in the cone tends to 1.")
def _check_finite_sample_rate(scale: str) -> ledger.Evidence:
    a, _ = ledger.figure_result("social_choice_coverage", scale)
    N = a["sample_sizes"].astype(float)
    S = a["angle_deg"].shape[0]
    slope, slope_se = _loglog_slope(N, a["angle_deg"], 1000)
    z_slope = (0.1 - abs(slope + 0.5)) / slope_se
    m = np.nanmean(a["angle_deg"], axis=0)
    se = np.nanstd(a["angle_deg"], axis=0, ddof=1) / np.sqrt(S)
    c = float(a["predicted_c_deg"])
    ratio, ratio_se = float(m[-1] * math.sqrt(N[-1]) / c), float(se[-1] * math.sqrt(N[-1]) / c)
    out_main = np.nansum(1 - a["in_cone"], axis=0)
    fitted_main = np.sum(np.isfinite(a["in_cone"]), axis=0)
    big = N >= 1000
    out_big, n_big = int(out_main[big].sum()), int(fitted_main[big].sum())
    out_nar = np.nansum(1 - a["narrow_in_cone"], axis=0)
    ref_nar = a["narrow_refused"].sum(0)
    ok = (z_slope >= 3 and out_main[-1] == 0 and out_main[0] >= out_main[-1] and out_big == 0
          and out_nar[-1] == 0)
    # Control: the same rate check on the angle to a direction that is not the limit (the heaviest voter).
    s_v1, se_v1 = _loglog_slope(N, a["angle_v1_deg"], 1000)
    controls = [ledger.Control("angle to the heaviest voter instead of the limit direction (the fit converges "
                               "elsewhere)", {"slope": s_v1, "slope_se": se_v1},
                               rejected=not (0.1 - abs(s_v1 + 0.5)) / se_v1 >= 3)]
    return ledger.Evidence(
        measured={"slope_N>=1000": slope, "mean_angle_deg": dict(zip(N.astype(int).tolist(), m.round(4).tolist())),
                  "sqrtN_angle_over_predicted_at_max_N": ratio,
                  "outside_cone_main": dict(zip(N.astype(int).tolist(), out_main.astype(int).tolist())),
                  "outside_cone_N>=1000": f"{out_big} of {n_big}",
                  "narrow_refused_no_MLE": dict(zip(a["narrow_sample_sizes"].tolist(), ref_nar.astype(int).tolist())),
                  "narrow_outside_cone": dict(zip(a["narrow_sample_sizes"].tolist(), out_nar.astype(int).tolist()))},
        predicted={"slope": -0.5, "sqrtN_angle_over_predicted_at_max_N": 1.0,
                   "mean_angle_deg_brief": "5.57 / 0.93 / 0.085 at N = 50 / 1e3 / 1e5 (20 seeds)",
                   "outside_cone": "-> 0 (brief: 2 of 20 at N = 50)",
                   "narrow_refused_brief": "12 of 40 at N = 50"},
        tolerance="|slope + 0.5| <= 0.1 with the margin at least 3 SE (WLS on log mean angle, N >= 1000); no fit "
                  "outside the cone at the largest N nor at any N >= 1000, and no more outside at the largest N "
                  "than at the smallest; the predicted constant is reported, not tested",
        verdict=ledger.verdict(ok, controls),
        stderr={"slope": slope_se, "sqrtN_angle_over_predicted_at_max_N": ratio_se,
                "outside_cone_N>=1000_upper95": zero_count_upper(n_big) if out_big == 0 else binomial_se(
                    out_big / n_big, n_big)},
        controls=controls,
        notes=f"paper_configs/social_choice_coverage.yaml at {scale} scale: {S} seeds per N (jax.random.key "
              f"folds), x = normalised N(0, I_{a['voters'].shape[1]}), every voter labels every comparison, BTL, "
              f"theta compared with the closed-form limit. Predicted constant {c:.2f} deg from the sandwich "
              "covariance (our derivation). The narrow pair (5 deg) refuses draws with no finite MLE; its fits "
              "that exist all landed in the cone. Margin of the slope check in SE: " + f"{z_slope:.1f}.")


# ---------------------------------------------------------------------------------------------------
# 7. Dose-response (figure social_choice_coverage)
# ---------------------------------------------------------------------------------------------------

DOSE_PREDICTED = {"alpha_fix": 0.0314, "alpha_po": 0.2600}


@ledger.claim("social_choice.coverage_dose_response",
              source="Hollender & Kraiczy 2026, §5 (coverage); brief Errata §4.3 (dose-response)",
              statement="Mixing a share alpha of uniform comparisons into the violating 3-pair data removes the "
                        "violation: the Pareto pair is fixed from alpha_fix and whole-space Pareto optimality holds "
                        "from alpha_po.")
def _check_dose_response(scale: str) -> ledger.Evidence:
    a, meta = ledger.figure_result("social_choice_coverage", scale)
    al, pm, cm = a["alphas"], a["dose_pair_margin"], a["dose_cone_margin"]
    a_fix, a_po = float(a["alpha_fix"]), float(a["alpha_po"])
    ok = (pm[0] < 0 and cm[0] < 0 and pm[-1] > 0 and cm[-1] > 0 and a_fix < a_po
          and abs(a_fix - DOSE_PREDICTED["alpha_fix"]) <= 5e-5 and abs(a_po - DOSE_PREDICTED["alpha_po"]) <= 5e-5
          and np.all(pm[al > a_fix] > 0) and np.all(cm[al > a_po] > 0))
    below_fix, below_po = int(np.nonzero(al < a_fix)[0][-1]), int(np.nonzero(al < a_po)[0][-1])
    controls = [ledger.Control(f"alpha = {al[below_fix]:.4f}, just below alpha_fix: the pair is still reversed",
                               {"pair_cosine": float(pm[below_fix])}, rejected=not pm[below_fix] > 0),
                ledger.Control(f"alpha = {al[below_po]:.4f}, just below alpha_po: theta still outside the cone",
                               {"cone_margin": float(cm[below_po])}, rejected=not cm[below_po] > 0)]
    return ledger.Evidence(
        measured={"alpha_fix": a_fix, "alpha_po": a_po, "pair_cosine_at_0": float(pm[0]),
                  "cone_margin_at_0": float(cm[0]), "theta_at_0": a["dose_theta"][0].round(6).tolist()},
        predicted={**DOSE_PREDICTED, "theta_at_0": [0.935167, -0.3955]},
        tolerance="thresholds within 5e-5 of the brief's 4 decimals (brentq to 1e-10); margins negative at "
                  "alpha = 0, positive above each threshold on the whole grid",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes=f"BTL; voters (1, 0) w = {float(a['dose_p'])} and (0, 1); differences (2, -1), (1, -3) contested and "
              f"{float(a['dose_s'])} (1, 3) unanimous, weight 1 - alpha spread equally over them; alpha on "
              f"uniform directions (quadrature, {meta['config']['dose_resolution']} nodes per voter).")


# ---------------------------------------------------------------------------------------------------
# 8. LCPO
# ---------------------------------------------------------------------------------------------------


def _lcpo_instances() -> dict:
    inst = {}
    for p, eps, delta, voter in ((0.6, 0.01, 2.0, (1, 1)), (0.75, 0.01, 2.0, (1, 1)), (0.75, 0.1, 2.0, (1, 1)),
                                 (0.6, 0.05, 2.0, (1, 1)), (0.75, 0.1, 0.5, (1, 3)), (0.9, 0.2, 0.5, (1, 3))):
        g = sc.ge_instance(p, eps, delta, voter)
        inst[f"Ge p={p} eps={eps} delta={delta} voter={voter}"] = (g.candidates, g.voters, g.weights)
    core = sc.ge_core(0.6)
    inst["Ge core p=0.6"] = (core.candidates, core.voters, core.weights)
    with float64():
        for s in range(12):
            X, _ = sc.random_po_instance(jax.random.key(500 + s), 12, 2.0, 0.05)
            inst[f"random polynomial-sweep instance, key {500 + s}"] = (np.asarray(X), np.eye(2),
                                                                       np.array([0.9, 0.1]))
    return inst


@ledger.claim("social_choice.lcpo_axioms",
              source="Ge et al. 2024, Theorem 4.3 (leximax Copeland subject to PO)",
              statement="LCPO satisfies Pareto optimality and pairwise majority consistency on every finite "
                        "instance above (Ge's constructions, the core instance, random instances).")
def _check_lcpo() -> ledger.Evidence:
    measured, ok, applies = {}, True, 0
    for name, (X, V, w) in _lcpo_instances().items():
        r = sc.lcpo(X, V, w)
        ax = sc.check_ranking_axioms(X, V, w, r.ranking)
        ok &= not ax["po_violations"] and ax["pmc_holds"]
        applies += ax["pmc_applies"]
        measured[name] = {"po_violations": len(ax["po_violations"]), "pmc_applies": ax["pmc_applies"],
                          "pmc_holds": ax["pmc_holds"], "lps": r.lps}
    try:
        ex = sc.ex7()
        sc.lcpo(ex.candidates, ex.voters, ex.weights)
        ex7_note = "accepted"
    except ValueError as e:
        ex7_note = f"refused: {e}"
    ok &= ex7_note.startswith("refused")
    g = sc.ge_instance(0.6, 0.01, 2.0)
    controls = []
    for loss in sc.SMOOTH_LOSSES:
        th = sc.fit_reward(g.candidates, g.voters, g.weights, loss=loss)
        axr = sc.check_ranking_axioms(g.candidates, g.voters, g.weights, sc.ranking_of(g.candidates, th))
        controls.append(ledger.Control(f"the {loss} rule's ranking on Ge's instance (p=0.6, eps=0.01)",
                                       {"po_violations": axr["po_violations"], "pmc_holds": axr["pmc_holds"]},
                                       rejected=bool(axr["po_violations"]) or not axr["pmc_holds"]))
    return ledger.Evidence(
        measured={"instances": len(measured), "pmc_applies_on": applies, "ex7": ex7_note, "per_instance": measured},
        predicted={"po_violations": 0, "pmc": "holds wherever a feasible PMC ranking exists",
                   "ex7": "not defined (voter ties)"},
        tolerance="exact: no Pareto pair reversed; output equals the PMC ranking whenever it exists and is "
                  "feasible (LP)",
        verdict=ledger.verdict(ok, controls),
        controls=controls,
        notes="LCPO is defined on finite candidate sets with strict rankings only (errata): not on pair data, "
              "uniform coverage or ex7. Feasibility LPs <theta, x_a - x_b> >= 1 by HiGHS; ties in Copeland score "
              "go to the lower index.")
