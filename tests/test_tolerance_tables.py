"""Every test module takes its tolerances from one table at its top, each with the reason for its size.

The rule (as neural-tangents' test utilities keep one tolerance table): a module that compares floats
defines

    TOLERANCES = {"name": (value, "why the error the assertion allows is this large"), ...}
    TOL = {name: value for name, (value, _why) in TOLERANCES.items()}

and every ``atol=`` / ``rtol=`` / ``abs=`` / ``rel=`` / ``tol=`` (``math.isclose``'s ``rel_tol=`` /
``abs_tol=``) it passes, and every small threshold it compares an error with (``err < 1e-9``), is a
``TOL[...]`` entry, possibly scaled by a quantity of the test (``TOL["roundoff"] * n``), never a bare
number. A float comparison with no tolerance at all (``pytest.approx(x)``, ``assert_allclose(a, b)``)
silently takes the library's default, so it is refused too. Zero is allowed anywhere: it means "exact"
and needs no reason. Every entry is used, its value is a positive finite number written in the table
itself, and its reason is a sentence.

The checker reads the source (``ast``); it imports no test module. ``test_the_checker_*`` plant each kind
of violation and see that it is named.
"""

import ast
import math
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
TOLERANCE_KEYWORDS = frozenset({"atol", "rtol", "abs", "rel", "tol", "decimal", "rel_tol", "abs_tol"})
FLOAT_COMPARISONS = frozenset({"approx", "isclose", "allclose", "assert_allclose", "assert_almost_equal",
                               "assert_array_almost_equal"})
# A literal right of ``<`` / ``<=`` below this is an error bound, not a statistic's threshold (0.05, 0.5).
SMALL_BOUND = 1e-2
MIN_REASON_WORDS = 4


def _numbers(node):
    """The non-zero numeric literals inside ``node``, outside ``TOL[...]`` subscripts."""
    found = []

    def walk(n):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "TOL":
            return
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            if n.value != 0:
                found.append(n.value)
            return
        for child in ast.iter_child_nodes(n):
            walk(child)

    walk(node)
    return found


def _table(tree):
    """The module-level ``TOLERANCES`` dict node, or None."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "TOLERANCES"
                                                for t in node.targets):
            return node.value
    return None


def _evaluate(node):
    """Value of a table entry written with numbers, + - * / ** and ``math``; ValueError otherwise."""
    for n in ast.walk(node):
        ok = isinstance(n, (ast.Expression, ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop,
                            ast.Call, ast.Attribute, ast.Load)) or (isinstance(n, ast.Name) and n.id == "math")
        if not ok:
            raise ValueError(f"uses {type(n).__name__} (write the number in the table itself)")
    return eval(compile(ast.Expression(node), "<table>", "eval"), {"__builtins__": {}, "math": math})


def problems(source, name="<module>"):
    """Every breach of the rule in one module's source, as ``"name:line: what"`` strings."""
    tree = ast.parse(source)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            given = [k for k in node.keywords if k.arg in TOLERANCE_KEYWORDS]
            if fname in FLOAT_COMPARISONS and not given:
                out.append(f"{name}:{node.lineno}: {fname}() without a tolerance takes the library's "
                           "default; pass TOL[...] (or 0 for exact)")
            for k in given:
                if _numbers(k.value):
                    out.append(f"{name}:{k.value.lineno}: {k.arg}= holds the bare number(s) "
                               f"{_numbers(k.value)}; take it from TOL")
        elif isinstance(node, ast.Compare):
            for op, right in zip(node.ops, node.comparators):
                if (isinstance(op, (ast.Lt, ast.LtE)) and isinstance(right, ast.Constant)
                        and isinstance(right.value, float) and 0 < right.value < SMALL_BOUND):
                    out.append(f"{name}:{node.lineno}: compares with the bare bound {right.value!r}; "
                               "take it from TOL")
    subscripts = {n.slice.value for n in ast.walk(tree)
                  if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == "TOL"
                  and isinstance(n.slice, ast.Constant)}
    table = _table(tree)
    if table is None:
        return out + ([f"{name}: takes tolerances from TOL but defines no TOLERANCES table"] if subscripts else [])
    if not isinstance(table, ast.Dict):
        return out + [f"{name}:{table.lineno}: TOLERANCES is not a dict literal"]
    for key, entry in zip(table.keys, table.values):
        label = f"{name}:{entry.lineno}: TOLERANCES[{ast.unparse(key)}]"
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            out.append(f"{label}: the name is not a string")
            continue
        if not (isinstance(entry, ast.Tuple) and len(entry.elts) == 2):
            out.append(f"{label}: not a (value, reason) pair")
            continue
        value, reason = entry.elts
        try:
            v = float(_evaluate(value))
        except (ValueError, TypeError, NameError, ZeroDivisionError, OverflowError) as e:
            out.append(f"{label}: the value is not a number written in the table ({e})")
        else:
            if not (math.isfinite(v) and v > 0):
                out.append(f"{label}: the value {v!r} is not positive and finite (write 0 where the test "
                           "means exact)")
        text = " ".join(s.value for s in ast.walk(reason)
                        if isinstance(s, ast.Constant) and isinstance(s.value, str))
        if len(text.split()) < MIN_REASON_WORDS:
            out.append(f"{label}: the reason {text!r} does not say why the value is this large")
        if key.value not in subscripts:
            out.append(f"{label}: never used")
    return out


MODULES = sorted([*TESTS.glob("test_*.py"), TESTS / "conftest.py"])


@pytest.mark.parametrize("path", MODULES, ids=[p.name for p in MODULES])
def test_every_tolerance_comes_from_the_modules_table(path):
    found = problems(path.read_text(), path.name)
    assert not found, "\n".join(found)


GOOD = '''
import numpy as np, pytest
TOLERANCES = {
    "roundoff": (64 * 2.0**-52, "float64 sums of at most 64 terms of size one"),
    "fd": (1e-6, "central differences with h = 1e-4 err by O(h^2) times the third derivative"),
}
TOL = {name: value for name, (value, _why) in TOLERANCES.items()}
def test_x(n):
    np.testing.assert_allclose(1.0, 1.0, rtol=TOL["roundoff"] * n, atol=0)
    assert abs(1.0 - 1.0) < TOL["fd"]
    assert 1.0 == pytest.approx(1.0, abs=0)
'''


def test_the_checker_accepts_a_module_that_keeps_the_rule():
    assert problems(GOOD) == []


@pytest.mark.parametrize("old, new, says", [
    ('rtol=TOL["roundoff"] * n', 'rtol=1e-12', "bare number(s) [1e-12]"),
    ('rtol=TOL["roundoff"] * n', 'rtol=TOL["roundoff"] * 10', "bare number(s) [10]"),
    ('assert 1.0 == pytest.approx(1.0, abs=0)', 'assert math.isclose(1.0, 1.0, rel_tol=1e-9)',
     "bare number(s) [1e-09]"),
    ('< TOL["fd"]', '< 1e-9', "bare bound 1e-09"),
    ('pytest.approx(1.0, abs=0)', 'pytest.approx(1.0)', "approx() without a tolerance"),
    ('"float64 sums of at most 64 terms of size one"', '"roundoff"', "does not say why"),
    ('(1e-6, "central', '(0.0, "central', "not positive and finite"),
    ('(1e-6, "central', '(EPS, "central', "not a number written in the table"),
    ('assert abs(1.0 - 1.0) < TOL["fd"]', 'pass', "TOLERANCES['fd']: never used"),
])
def test_the_checker_names_each_kind_of_breach(old, new, says):
    assert GOOD.count(old) == 1
    found = problems(GOOD.replace(old, new))
    assert any(says in p for p in found), found


def test_the_checker_wants_the_table_that_tol_comes_from():
    exact = "import pytest\ndef test_y():\n    assert 0.5 + 0.25 == pytest.approx(0.75, rel=0)\n"
    assert problems(exact) == []  # exact comparisons need no table
    found = problems(exact.replace("rel=0", 'rel=TOL["roundoff"]'))
    assert found == ["<module>: takes tolerances from TOL but defines no TOLERANCES table"]
