"""The claims ledger: registration rules, expected verdicts, the CLI's exit status and reports."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from theory import ledger

REPO = Path(__file__).resolve().parent.parent


def test_claim_ids_and_expectations_are_validated():
    with pytest.raises(ValueError, match="paper"):
        ledger.claim("noslug", source="s", statement="x")
    with pytest.raises(ValueError, match="why"):
        ledger.claim("p.x", source="s", statement="x", expected="fails")
    with pytest.raises(ValueError, match="verdict"):
        ledger.Evidence({}, {}, "", "maybe")


def test_run_reports_errors_and_expected_verdicts():
    def boom():
        raise RuntimeError("broken check")

    good = ledger.Claim("t.good", "src", "s", lambda: ledger.Evidence({"x": 1.0}, {"x": 1.0}, "exact", "holds"))
    known_fail = ledger.Claim("t.kf", "src", "s", lambda: ledger.Evidence({}, {}, "", "fails"), "fails", "why")
    wrong = ledger.Claim("t.wrong", "src", "s", lambda: ledger.Evidence({}, {}, "", "fails"))
    broken = ledger.Claim("t.broken", "src", "s", boom)
    out = ledger.run([good, known_fail, wrong, broken])
    assert [o.as_expected for o in out] == [True, True, False, False]
    assert out[3].verdict == "error" and "broken check" in out[3].error
    md = ledger.to_markdown(out)
    assert "`t.kf`" in md and "Expected fails: why" in md
    assert "2 of 4 claims gave their expected verdict" in md
    piped = ledger.Outcome(ledger.Claim("t.p", "s", "s", good.check), ledger.Evidence(
        {"|x|": 1.0}, {}, "|a - b| < 1", "holds"), 0.0)
    row = next(ln for ln in ledger.to_markdown([piped]).splitlines() if ln.startswith("| `t.p`"))
    assert row.count(" | ") == 6 and "\\|x\\|" in row
    json.dumps([o.to_dict() for o in out])


def test_every_registered_claim_is_well_formed():
    reg = ledger.discover()
    assert {"seesaw.sgd_equivalence", "seesaw.paper_step_counts"} <= set(reg)
    for c in reg.values():
        assert c.paper in ledger.papers() and c.source and c.statement


def test_cli_list_and_unknown_claim():
    r = subprocess.run([sys.executable, "-m", "theory", "list", "--paper", "seesaw"], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0 and "seesaw.nsgd_equivalence" in r.stdout
    r = subprocess.run([sys.executable, "-m", "theory", "verify", "--claim", "seesaw.nope"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "unknown claim" in r.stderr


def test_cli_verify_writes_reports(tmp_path):
    js, md = tmp_path / "c.json", tmp_path / "c.md"
    r = subprocess.run([sys.executable, "-m", "theory", "verify", "--claim", "seesaw.paper_step_counts",
                        "--json", str(js), "--markdown", str(md)], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(js.read_text())
    assert rows[0]["id"] == "seesaw.paper_step_counts" and rows[0]["verdict"] == "holds"
    assert rows[0]["evidence"]["measured"]["B0=256"] == [12589, 7756]
    assert "seesaw.paper_step_counts" in md.read_text()
