"""The claims ledger: registration rules, expected verdicts, the CLI's exit status and reports."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from claims import ledger

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

    good = ledger.Claim("t.good", "src", "s", lambda: ledger.Evidence({"x": 1.0}, {"x": 1.0}, "exact", "holds",
                                                                    no_control="an identity"))
    known_fail = ledger.Claim("t.kf", "src", "s", lambda: ledger.Evidence({}, {}, "", "fails", no_control="x"),
                              "fails", "why")
    wrong = ledger.Claim("t.wrong", "src", "s", lambda: ledger.Evidence({}, {}, "", "fails", no_control="x"))
    broken = ledger.Claim("t.broken", "src", "s", boom)
    out = ledger.run([good, known_fail, wrong, broken])
    assert [o.as_expected for o in out] == [True, True, False, False]
    assert out[3].verdict == "error" and "broken check" in out[3].error
    md = ledger.to_markdown(out)
    assert "`t.kf`" in md and "Expected fails: why" in md
    assert "2 of 4 measured claims gave their expected verdict" in md
    piped = ledger.Outcome(ledger.Claim("t.p", "s", "s", good.check), ledger.Evidence(
        {"|x|": 1.0}, {}, "|a - b| < 1", "holds"), 0.0)
    row = next(ln for ln in ledger.to_markdown([piped]).splitlines() if ln.startswith("| `t.p`"))
    assert row.count(" | ") == 7 and "\\|x\\|" in row
    json.dumps([o.to_dict() for o in out])


def test_every_registered_claim_is_well_formed():
    reg = ledger.discover()
    assert {"seesaw.sgd_equivalence", "seesaw.paper_step_counts"} <= set(reg)
    for c in reg.values():
        assert c.paper in ledger.papers() and c.source and c.statement


def test_cli_list_and_unknown_claim():
    r = subprocess.run([sys.executable, "-m", "claims", "list", "--paper", "seesaw"], capture_output=True,
                       text=True, cwd=REPO, timeout=120)
    assert r.returncode == 0 and "seesaw.nsgd_equivalence" in r.stdout
    r = subprocess.run([sys.executable, "-m", "claims", "verify", "--claim", "seesaw.nope"],
                       capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "unknown claim" in r.stderr


def test_cli_verify_writes_reports(tmp_path):
    js, md = tmp_path / "c.json", tmp_path / "c.md"
    r = subprocess.run([sys.executable, "-m", "claims", "verify", "--claim", "seesaw.paper_step_counts",
                        "--json", str(js), "--markdown", str(md)], capture_output=True, text=True, cwd=REPO,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = json.loads(js.read_text())
    assert rows[0]["id"] == "seesaw.paper_step_counts" and rows[0]["verdict"] == "holds"
    assert rows[0]["evidence"]["measured"]["B0=256"] == [12589, 7756]
    assert "seesaw.paper_step_counts" in md.read_text()


def test_expected_verdict_may_differ_by_scale():
    c = ledger.Claim("t.s", "src", "s", lambda: ledger.Evidence({}, {}, "", "inconclusive", no_control="x"),
                     {"quick": "inconclusive", "paper": "holds"}, "why")
    assert ledger.run([c], scale="quick")[0].as_expected
    assert not ledger.run([c], scale="paper")[0].as_expected
    with pytest.raises(ValueError, match="scale"):
        ledger.claim("p.y", source="s", statement="x", expected={"quick": "holds"})
    with pytest.raises(ValueError, match="why"):
        ledger.claim("p.z", source="s", statement="x", expected={"quick": "inconclusive", "paper": "holds"})


def test_cli_selection_matching_no_claim_exits_2():
    r = subprocess.run([sys.executable, "-m", "claims", "verify", "--claim", "seesaw.paper_step_counts",
                        "--paper", "relu_dag"], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "no claim matches" in r.stderr and "Traceback" not in r.stderr


def test_cli_checks_report_paths_before_running_any_claim(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = subprocess.run([sys.executable, "-m", "claims", "verify", "--paper", "seesaw",
                        "--json", str(blocker / "c.json")], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and str(blocker) in r.stderr
    assert "seesaw." not in r.stdout  # no claim ran


def test_cli_verify_at_paper_scale_reports_not_measured_without_computing(tmp_path):
    js = tmp_path / "c.json"
    r = subprocess.run([sys.executable, "-m", "claims", "verify", "--scale", "paper", "--claim",
                        "seesaw.adam_lm_match", "--json", str(js)], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 0, r.stdout + r.stderr
    row = json.loads(js.read_text())[0]
    assert row["scale"] == "paper" and row["verdict"] == "not measured" and row["expected"] == "holds"
    assert not (tmp_path / "results").exists()


def test_a_check_without_controls_or_a_reason_is_an_error():
    bare = ledger.Claim("t.bare", "src", "s", lambda: ledger.Evidence({"x": 1}, {"x": 1}, "exact", "holds"))
    out = ledger.run([bare])[0]
    assert out.verdict == "error" and "no controls" in out.error


def test_controls_must_be_rejected_for_a_claim_to_hold():
    ok = ledger.Control("off-line member", {"spread": 0.4}, rejected=True)
    bad = ledger.Control("off-line member", {"spread": 0.01}, rejected=False)
    ev = ledger.Evidence({"x": 1}, {"x": 1}, "exact", "holds", controls=[ok])
    assert ev.controls == (ok,) and ev.controls_rejected
    with pytest.raises(ValueError, match="accepts a control"):
        ledger.Evidence({"x": 1}, {"x": 1}, "exact", "holds", controls=[ok, bad])
    assert ledger.verdict(True, [ok, bad]) == "fails" and ledger.verdict(True, [ok]) == "holds"
    md = ledger.to_markdown([ledger.Outcome(ledger.Claim("t.c", "s", "s", lambda: ev), ev, 0.0)])
    assert "control (rejected): off-line member" in md and "1/1 rejected" in md
