"""``make mutate``'s scoring (tests/mutation.py): which survivors count, read off mutmut's names and diffs."""

import sys

import yaml
from conftest import statement_outcomes

from tests import mutation


def test_function_of_reads_mutmuts_names_for_functions_and_methods():
    assert mutation.function_of("theory.seesaw.x_expected_risk__mutmut_3") == "theory.seesaw.expected_risk"
    assert mutation.function_of("theory.a.xǁModelǁfit__mutmut_12") == "theory.a.Model.fit"


def test_a_survivor_on_an_argument_check_or_an_error_message_is_not_scored():
    label = '-    V = as_points(voters, "voters")\n+    V = as_points(voters, "XXvotersXX")'
    check = "-    n = check_int(n, \"n\", ge=0)\n+    n = check_int(n, \"n\", ge=1)"
    message = '-        raise ValueError("bad")\n+        raise ValueError("XXbadXX")'
    assert mutation.is_excluded(label) and mutation.is_excluded(check) and mutation.is_excluded(message)
    # the name a check gives in its message, passed inside a computing line: only the string differs
    name = ('-    k = min(check_int(chunk, "chunk", ge=1), n)\n'
            '+    k = min(check_int(chunk, "XXchunkXX", ge=1), n)')
    assert mutation.is_excluded(name)
    inner = ('-    r = lift(as_points(candidates, "candidates"), degree) @ theta\n'
             '+    r = lift(as_points(candidates, "CANDIDATES"), degree) @ theta')
    assert mutation.is_excluded(inner)
    assert not mutation.is_excluded('-    k = min(check_int(chunk, "chunk", ge=1), n)\n'
                                    '+    k = min(check_int(chunk, "chunk", ge=2), n)')  # the bound is scored
    # a line that computes is scored, even when it also names a check in a comment or a string
    compute = "-    phi = (np.arange(n) + 0.5) * np.pi / n\n+    phi = (np.arange(n) - 0.5) * np.pi / n"
    assert not mutation.is_excluded(compute)
    assert not mutation.is_excluded('-    y = f(x, "validate(")\n+    y = f(x, "XXvalidate(XX")')
    assert not mutation.is_excluded("")


def test_an_equivalent_is_matched_by_function_and_mutated_line_not_by_number():
    eq = [{"function": "theory.s.f", "mutated": "a = b - 1", "reason": "r"}]
    assert mutation.is_listed("theory.s.x_f__mutmut_7", "-a = b + 1\n+a = b - 1", eq)
    assert not mutation.is_listed("theory.s.x_g__mutmut_7", "-a = b + 1\n+a = b - 1", eq)  # another function
    assert not mutation.is_listed("theory.s.x_f__mutmut_7", "-a = b + 1\n+a = b * 1", eq)  # another mutation


def test_every_listed_equivalent_sits_under_its_papers_key():
    """tests/mutation_equivalents.yaml is read per paper: an entry under another paper's key is never
    matched (so its mutant would count as a survivor), and each says why it is equivalent."""
    data = yaml.safe_load((mutation.ROOT / "tests" / "mutation_equivalents.yaml").read_text())
    for paper, entries in data.items():
        extra = mutation.EXTRA.get(paper, ([],))[0]  # e.g. lif_snn's theory/boolean.py
        own = ("theory.numerics.",) if paper == "numerics" else (
            f"theory.{paper}.", *(f"theory.{p[len('theory/'):-len('.py')]}." for p in extra))
        for e in entries:
            assert e["function"].startswith(own), (paper, e["function"])
            assert e["mutated"].strip() and len(e["reason"]) > 20, e


def test_bad_usage_is_one_line_and_exit_2(capsys):
    assert mutation.main(["no_such_paper"]) == 2
    assert mutation.main(["seesaw", "--sample", "-3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "PAPER must be one of" in err[0] and "SAMPLE must be" in err[1]


def test_statements_run_in_a_child_are_attributed_to_their_test_in_mutmuts_coverage_pass(monkeypatch):
    """mutmut selects, for each mutant, the tests its coverage pass saw calling the mutated function, and it
    sees this process only: in that pass (MUTANT_UNDER_TEST=stats) statement_outcomes also runs the
    statements here, so a refusal tested in a child interpreter still selects its test."""
    stmt = "sys.__dict__.setdefault('_pbe_attributed', []).append(1)"
    monkeypatch.delattr(sys, "_pbe_attributed", raising=False)
    assert statement_outcomes("import sys", [stmt]) == ["returned"]
    assert not hasattr(sys, "_pbe_attributed")           # a normal run: the child alone
    monkeypatch.setenv("MUTANT_UNDER_TEST", "stats")
    assert statement_outcomes("import sys", [stmt, "raise ValueError('no')"]) == ["returned", "ValueError: no"]
    assert sys._pbe_attributed == [1]
