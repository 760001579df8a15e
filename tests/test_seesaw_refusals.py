"""Seesaw (arXiv 2510.14717), bounded work and boundary checks: every public function of theory/seesaw
finishes in bounded time or refuses, naming the limit; non-finite and non-integer inputs are refused with a
clear error; the schedules equal Algorithm 1 stepped one batch at a time. Split from test_seesaw.py.
float64 throughout (tests/conftest.py turns it on)."""

import math
from fractions import Fraction

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from conftest import statement_outcomes

from sims import results
from theory import seesaw as th

# Every tolerance of this module, with why it is that size (the rule: tests/test_tolerance_tables.py).
TOLERANCES = {
    "closed_form": (1e-13, "a closed form (rho^t with rho = 0.61, the Isserlis moment) against the float64 "
                           "recursion or formula: tens of roundings of O(1) terms, measured <= 3.8e-16; a dropped "
                           "tr H, noise or 1/B term moves E||g||^2 by >= 3%"),
    "stepped_multipliers": (1e-14, "the same divisions by sqrt(gamma) in the same order as the scheduler (measured "
                                   "equal); even another order stays within <= 24 eps = 5e-15"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}


_PRELUDE = ("import math, numpy as np\nfrom theory import seesaw as th\nnan = float('nan')\n")


def _outcomes(stmts, timeout=20):
    """Outcomes of the statements (``th`` = theory.seesaw), see ``conftest.statement_outcomes``."""
    return statement_outcomes(_PRELUDE, stmts, timeout)


def test_gamma_near_one_is_refused_not_looped():
    """gamma = 1 + 1e-10 means ~2e10 milestones: refused up front, naming MAX_MILESTONES."""
    out = _outcomes(["th.seesaw_batches(3.3e9, 1024, 256, gamma=1.0000000001)",
                     "th.paper_step_counts(3.3e9, 1024, 256, gamma=1.0000000001)",
                     "th.discrete_serial_step_reduction('half_cosine', 1.0000000001, final_lr_frac=0.1)",
                     "th.discrete_serial_step_reduction('quarter_cosine', 1.0000001)"])
    assert all(o.startswith("ValueError") and "MAX_MILESTONES" in o for o in out), out


def test_step_counts_are_bounded():
    """paper_step_counts counts steps per constant-batch run, never enumerates them; the per-step
    schedules refuse more than MAX_STEPS steps (or MAX_PHASES phases) before allocating them."""
    out = _outcomes(["print(th.paper_step_counts(1e13, 1, 1))",
                     "th.seesaw_batches(1e13, 1, 1)",
                     "th.phase_schedule(0.5, 1, 1.0, 1.0, 1e13, 1)",
                     "th.phase_schedule(0.5, 8, 1.0, 1.0, 8, 10**12)"])
    cosine, seesaw = eval(out[0])
    assert out[1] == "returned" and cosine == 10**13 and 0 < seesaw < cosine
    assert out[2].startswith("ValueError") and "MAX_STEPS" in out[2], out[2]
    assert out[3].startswith("ValueError") and "MAX_STEPS" in out[3], out[3]
    assert out[4].startswith("ValueError") and "MAX_PHASES" in out[4], out[4]


def test_step_counts_equal_the_enumerated_schedule():
    """The run-length count of paper_step_counts equals the length of the per-step schedule."""
    for total, seq, b0, gamma, w, f in ((3.3e9, 1024, 256, 1.1, 0.1, 0.1), (10**6, 7, 3, 1.5, 0.0, 0.3),
                                        (12345, 1, 1, 2.0, 0.5, 0.01), (64, 64, 1, 1.01, 0.2, 0.5)):
        b, _ = th.seesaw_batches(total, seq, b0, warmup_frac=w, final_lr_frac=f, gamma=gamma)
        assert th.paper_step_counts(total, seq, b0, warmup_frac=w, final_lr_frac=f, gamma=gamma)[1] == b.size
        assert (b[:-1].sum() * seq < total <= b.sum() * seq)


def test_expected_risk_checks_its_schedule_at_the_boundaries():
    """Exact inputs are their float64 values; m0 = 0 and lr = 0 are allowed; a zero eigenvalue or batch, an
    infinite or negative m0 or lr, a 2-D schedule are refused."""
    want = th.expected_risk([1.0, 0.5], [1.0, 0.25], 0.3, [0.1, 0.2], [2.0, 4.0])
    got = th.expected_risk([Fraction(1), Fraction(1, 2)], [Fraction(1), Fraction(1, 4)], 0.3,
                           [Fraction(1, 10), Fraction(1, 5)], [Fraction(2), Fraction(4)])
    np.testing.assert_array_equal(got, want)
    # m0 = 0, no noise: the risk stays 0; lr = 0: no step
    np.testing.assert_array_equal(th.expected_risk([1.0, 0.5], 0.0, 0.0, [0.1], [2.0]), 0.0)
    r = th.expected_risk([1.0, 0.5], 1.0, 0.3, [0.0], [2.0])
    assert r[1] == r[0] == 0.75
    for args, match in [(([1.0, 0.0], 1.0, 0.3, [0.1], [2.0]), "eigs"), (([[1.0, 0.5]], 1.0, 0.3, [0.1], [2.0]), "eigs"),
                        (([1.0], -1.0, 0.3, [0.1], [2.0]), "m0"), (([1.0], math.inf, 0.3, [0.1], [2.0]), "m0"),
                        (([1.0], 1.0, 0.3, [0.1], [0.0]), "batch sizes"),
                        (([1.0], 1.0, 0.3, [math.inf], [2.0]), "learning rates"),
                        (([1.0], 1.0, 0.3, [-0.1], [2.0]), "learning rates"),
                        (([1.0], 1.0, 0.3, [[0.1]], [[2.0]]), "lrs and batch_sizes")]:
        with pytest.raises(ValueError, match=match):
            th.expected_risk(*args)


def _seesaw_by_steps(total, seq, b0, gamma, w, f, integer):
    """Algorithm 1 stepped one batch at a time, written apart from theory.seesaw: switch k at the token
    count where the post-warmup cosine f + (1 - f)(1 + cos(pi u)) / 2 equals gamma^-k (by its inverse,
    rounded to a token), checked at the start of each step, at most one switch per step."""
    warm = w * total
    ms = [warm + round((total - warm) * math.acos(2 * (gamma**-k - f) / (1 - f) - 1) / math.pi)
          for k in range(1, 200) if gamma**-k >= f]
    batches, mults, tokens, run, mult, i = [], [], 0, float(b0), 1.0, 0
    while tokens < total:
        if i < len(ms) and tokens >= ms[i]:
            run, mult, i = run * gamma, mult / math.sqrt(gamma), i + 1
        b = math.floor(run) if integer else run
        batches.append(b)
        mults.append(mult)
        tokens += b * seq
    return batches, mults


def test_seesaw_batches_equal_algorithm_1_stepped_one_batch_at_a_time():
    # seq_len = b0 = 1: a step lands exactly on each milestone (switch when tokens >= the milestone, not >)
    # the paper's setting too (150M tokens of Fig. 2 scaled: 12589 steps of up to 256 x 1024 tokens)
    for total, seq, b0, gamma, w, f in ((12345, 1, 1, 2.0, 0.5, 0.01), (10**5, 7, 3, 1.5, 0.0, 0.3),
                                        (4000, 1, 1, 1.3, 0.2, 0.05), (3.3e9, 1024, 256, 1.1, 0.1, 0.1)):
        for integer in (True, False):
            b, m = th.seesaw_batches(total, seq, b0, warmup_frac=w, final_lr_frac=f, gamma=gamma, integer=integer)
            want_b, want_m = _seesaw_by_steps(total, seq, b0, gamma, w, f, integer)
            assert b.size == len(want_b), (total, integer)
            np.testing.assert_array_equal(b, want_b)
            np.testing.assert_allclose(m, want_m, rtol=TOL["stepped_multipliers"])


_BAD = [
    ("th.expected_risk([1.0, nan], 1.0, 1.0, [0.1], [1.0])", ValueError, "eigs"),
    ("th.expected_risk([1.0, inf], 1.0, 1.0, [0.1], [1.0])", ValueError, "eigs"),
    ("th.expected_risk([1.0], nan, 1.0, [0.1], [1.0])", ValueError, "m0"),
    ("th.expected_risk([1.0], 1.0, nan, [0.1], [1.0])", ValueError, "noise_var"),
    ("th.expected_risk([1.0], 1.0, inf, [0.1], [1.0])", ValueError, "noise_var"),
    ("th.expected_risk([1.0], 1.0, '1', [0.1], [1.0])", TypeError, "noise_var"),
    ("th.expected_risk([1.0], 1.0, 1.0, [nan], [1.0])", ValueError, "learning rates"),
    ("th.expected_risk([1.0], 1.0, 1.0, [0.1], [nan])", ValueError, "batch sizes"),
    ("th.expected_risk([1.0], 1.0, 1.0, [0.1], [inf])", ValueError, "batch sizes"),
    ("th.phase_schedule(nan, 8, 1, 1, 64, 1)", ValueError, "eta0"),
    ("th.phase_schedule(0.5, 8, nan, 1, 64, 1)", ValueError, "alpha"),
    ("th.phase_schedule(0.5, 8, 1, 1, 64, 1.5)", TypeError, "n_phases"),
    ("th.seesaw_batches(nan, 1024, 256)", ValueError, "total_tokens"),
    ("th.seesaw_batches(3.3e9, 1024, 256, gamma=nan)", ValueError, "gamma"),
    ("th.seesaw_batches(3.3e9, 1024, 256, gamma=inf)", ValueError, "gamma"),
    ("th.seesaw_batches(3.3e9, 1024, 256, warmup_frac=nan)", ValueError, "warmup_frac"),
    ("th.paper_step_counts(3.3e9, 1024, 1.5)", TypeError, "b0"),
    ("th.paper_step_counts(3.3e9, 1024.5, 256)", TypeError, "seq_len"),
    ("th.paper_step_counts(3.3e9, 1024, True)", TypeError, "b0"),
    ("th.seesaw_batches(3.3e9, 1024, 0)", ValueError, "b0"),
    ("th.discrete_serial_step_reduction('half_cosine', nan)", ValueError, "gamma"),
    ("th.discrete_serial_step_reduction('half_cosine', 1.1, final_lr_frac=1.0)", ValueError,
     "final_lr_frac"),
    ("th.discrete_serial_step_reduction('half_cosine', 1.1, warmup_frac=nan)", ValueError,
     "warmup_frac"),
    ("th.discrete_serial_step_reduction('quarter_cosine', 1.1, lr_cut=0.0)", ValueError, "lr_cut"),
    ("th.serial_step_reduction_limit('half_cosine', nan)", ValueError, "final_lr_frac"),
    ("th.power_law_eigs(8, nan)", ValueError, "exponent"),
    ("th.power_law_eigs(8.5)", TypeError, "d"),
    ("th.stability_radius([1.0], nan, 8)", ValueError, "lr"),
    ("th.noise_scale([1.0], [1.0], nan)", ValueError, "noise_var"),
    ("th.sgd_risk_path(jax.random.key(0), jnp.ones(2), jnp.ones(2), nan, [0.1], [1])",
     ValueError, "noise_var"),
]


@pytest.mark.parametrize("code, err, match", _BAD, ids=[c for c, _, _ in _BAD])
def test_non_finite_and_non_integer_inputs_are_refused(code, err, match):
    with pytest.raises(err, match=match):
        eval(code, {"th": th, "jax": jax, "jnp": jnp, "nan": math.nan, "inf": math.inf})


def test_expected_risk_is_float64_without_process_setup():
    """A caller that never ran sims.runtime.setup() (x64 off) still gets the exact float64 recursion."""
    import subprocess
    import sys

    code = ("import jax, numpy as np; from theory import seesaw as th; assert not jax.config.jax_enable_x64; "
            "r = th.expected_risk([0.8], 2.0, 0.5, np.full(50, 0.3), np.full(50, 4.0)); "
            "assert r.dtype == np.float64; print(repr(float(r[-1])))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=results.REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    lam, lr, b, s2, m0, t = 0.8, 0.3, 4.0, 0.5, 2.0, 50
    rho = 1 - 2 * lr * lam + lr**2 * lam**2 * (1 + 2 / b)
    m_t = rho**t * m0 + lr**2 * lam * s2 / b * (1 - rho**t) / (1 - rho)
    assert float(out.stdout) == pytest.approx(0.5 * lam * m_t, rel=TOL["closed_form"])
