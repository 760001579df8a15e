"""The layer contract: ``benchmarks -> claims | figures -> sims -> theory``, figures read results only.
Checked by import-linter with the contracts in ``pyproject.toml``; the control shows that the same
contract rejects a theory module importing the simulations."""

import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LINT = str(Path(sys.executable).parent / "lint-imports")


def test_layer_contract_holds():
    r = subprocess.run([LINT, str(REPO / "pyproject.toml"), "--no-cache"], cwd=REPO,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def test_layer_contract_rejects_theory_importing_sims(tmp_path):
    for pkg in ("theory", "sims", "claims", "figures", "benchmarks"):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
    for mod in ("results", "runtime", "cli", "config"):
        (tmp_path / "sims" / f"{mod}.py").write_text("")
    # the two entry points exempted by name in pyproject.toml (an exemption that matches nothing is an error)
    (tmp_path / "figures" / "build.py").write_text("from sims import cli, config, runtime\n")
    (tmp_path / "figures" / "__main__.py").write_text("from sims import cli, config\n")
    (tmp_path / "theory" / "bad.py").write_text("def f():\n    from sims import results\n    return results\n")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    r = subprocess.run([LINT, "pyproject.toml", "--no-cache"], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)})
    assert r.returncode == 1 and "BROKEN" in r.stdout and "theory.bad" in r.stdout


def test_no_dead_code_in_the_packages(tmp_path):
    """vulture at 80% confidence (unused imports and variables, unreachable code) finds nothing in the five
    packages; the control: the same scan finds a planted unused import and unreachable line."""
    import vulture

    def unused(paths):
        v = vulture.Vulture()
        v.scavenge([str(p) for p in paths])
        return [f"{u.filename}:{u.first_lineno}: {u.message}" for u in v.get_unused_code(min_confidence=80)]

    assert unused([REPO / p for p in ("theory", "sims", "claims", "figures", "benchmarks")]) == []
    planted = tmp_path / "planted.py"
    planted.write_text("import os\n\n\ndef f():\n    return 1\n    print('never')\n")
    assert len(unused([planted])) == 2
