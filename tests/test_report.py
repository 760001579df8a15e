"""The static report (``python -m claims report``, :mod:`claims.report`): built from a small fixture (a
ledger JSON of two papers' real claims with made-up evidence, result sidecars whose hashes are today's,
tiny rendered figures), then opened page by page in headless Chromium.

The fixture's outcomes are made by the ledger's own serialiser (``Outcome.to_dict``), so the report reads
the same JSON shape ``make verify`` writes; nothing is simulated and no claim runs.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from claims import __main__ as claims_main  # noqa: E402
from claims import ledger, report  # noqa: E402
from claims.decisions import Control, Decision  # noqa: E402
from claims.report import pages  # noqa: E402
from sims import cli, results  # noqa: E402
from sims.results import dumps  # noqa: E402

try:
    from playwright.sync_api import sync_playwright
except ImportError:
    sync_playwright = None

PAPERS = ("relu_dag", "neuromanifold")
FINISHED = "2026-01-02T03:04:05+0000"


def _evidence(verdict: str) -> ledger.Evidence:
    """Evidence whose computed verdict is ``verdict``, with a decision on a standard error and a control."""
    own = Decision("gap above 0.1", "holds" if verdict == "holds" else verdict, 0.31, 0.1, 7.0, 1.96,
                   "mean > 0.1 on the 95% normal interval")
    ctl = Control("same component", Decision("gap above 0.1", "fails", 0.0, 0.1, -9.0, 1.96, "same test"))
    return ledger.Evidence(measured={"gap": 0.31, "counts": [1, 2, 3]}, predicted={"gap": "> 0.1"},
                           tolerance="95% normal interval", decisions=(own,), stderr={"gap": 0.03},
                           controls=(ctl,), notes="fixture evidence (arXiv 2602.00693)")


def _outcomes() -> tuple[list[dict], set[str]]:
    """One outcome per registered claim of :data:`PAPERS` (holds, fails, inconclusive and fragile, an error,
    in turn; one not measured), and the figures whose results exist: all those read, except the one the
    not-measured claim alone reads (a claim is not measured exactly when its result is missing)."""
    claims = [c for c in sorted(ledger.discover().values(), key=lambda c: c.id) if c.paper in PAPERS]
    kinds = {c.id: ("holds", "fails", "fragile", "error")[i % 4] for i, c in enumerate(claims)}
    alone = [c for c in claims if c.reads and not set(c.reads) & {n for d in claims if d is not c for n in d.reads}]
    assert alone, f"the fixture needs a claim of {PAPERS} that alone reads its figures"
    kinds[alone[0].id] = "not measured"
    out = []
    for c in claims:
        kind = kinds[c.id]
        stab = {"agree": 3, "total": 4, "n_seeds": 4, "design": "leave one seed out", "min_margin_se": 1.2,
                "min_slack_se": -0.7, "fragile": True, "changed": [{"left_out": [2], "verdict": "fails"}]} \
            if kind == "fragile" else None
        if kind == "not measured":
            o = ledger.Outcome(c, None, 0.1, not_measured="no current quick-scale result; run make fig-x")
        elif kind == "error":
            o = ledger.Outcome(c, None, 0.1, error="Traceback ...\nValueError: fixture")
        else:
            o = ledger.Outcome(c, _evidence("inconclusive" if kind == "fragile" else kind), 1.5, stability=stab)
        out.append(o.to_dict())
    return out, {n for c in claims if kinds[c.id] != "not measured" for n in c.reads}


def _png_pdf(folder: Path, name: str) -> None:
    fig, ax = plt.subplots(figsize=(2, 1.5))
    ax.plot([0, 1], [0, 1])
    for ext in ("png", "pdf"):
        fig.savefig(folder / f"{name}.{ext}", dpi=40)
    plt.close(fig)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> dict:
    """The fixture's folders, its ledger JSON and the built site."""
    root = tmp_path_factory.mktemp("report")
    res, figs = root / "results", root / "figures"
    (figs / "quick").mkdir(parents=True)
    outcomes, names = _outcomes()
    for n in sorted(names):
        cfg, _ = cli.load_config(cli.figure_config(n), "quick")
        meta = {"name": n, "sim": cfg.sim, "experiment": cfg.experiment, "scale": "quick", "config": cfg.params_dict(),
                "config_hash": cfg.hash(), "code_hash": results.code_hash(cli.code_files(cfg.sim)), "seed": cfg.seed,
                "seed_offset": 0, "seed_axes": {"x": 0}, "git_commit": "0123456789abcdef", "versions": results.versions(),
                "backend": "cpu", "device_count": 1, "process_count": 1, "x64": True, "wall_time_s": 1.0,
                "finished": FINISHED, "summary": {}, "non_finite": {"x": 2}}
        results.save(n, {"x": np.zeros(3)}, meta, res / "quick")
        _png_pdf(figs / "quick", n)
    js = root / "claims.json"
    js.write_bytes(dumps(outcomes))
    inp = report.load("quick", json_path=js, results_dir=res, figures_dir=figs)
    out = root / "site"
    report.build(inp, out)
    return {"root": root, "json": js, "results": res, "figures": figs, "site": out, "inputs": inp}


def test_site_pages_and_copies(site):
    out, inp = site["site"], site["inputs"]
    assert sorted(p.name for p in out.glob("*.html")) == sorted(["index.html"] + [f"{p}.html" for p in PAPERS])
    assert (out / "claims.json").is_file() and inp.missing_papers  # the other papers are named on the index
    for name in {n for o in inp.outcomes if not o["not_measured"] for n in pages.reads_of(o)}:
        assert (out / "figures" / f"{name}.png").is_file() and (out / "results" / f"{name}.json").is_file()
        assert (out / "configs" / f"{name}.yaml").read_bytes() == cli.figure_config(name).read_bytes()
    html = (out / "relu_dag.html").read_text()
    assert 'id="relu_dag.conservation"' in html
    assert "python -m claims verify --claim relu_dag.conservation --scale quick" in html
    assert "https://arxiv.org/abs/2602.00693" in html
    assert "x: 2" in html  # the sidecar's non-finite count is shown


def _browser():
    exe = report.chromium()
    if exe is None or sync_playwright is None:
        pytest.skip("no Chromium or no playwright package: apt-get install chromium; pip install -e '.[test]'")
    return exe


def test_every_page_in_chromium(site):
    """No console error, every image decodes, every link inside the site resolves (file and anchor),
    and each paper page has one claim section per outcome of that paper in the ledger JSON."""
    exe = _browser()
    out = site["site"].resolve()
    outcomes = json.loads(site["json"].read_text())
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=exe, args=report.CHROMIUM_ARGS)
        tab = browser.new_page()
        errors: list[str] = []
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        tab.on("pageerror", lambda e: errors.append(str(e)))
        ids: dict[Path, set] = {}
        links: list[tuple[Path, str]] = []
        for html in sorted(out.glob("*.html")):
            tab.goto(html.as_uri())
            tab.wait_for_load_state("load")
            bad = tab.eval_on_selector_all("img", "els => els.filter(i => !(i.complete && i.naturalWidth > 0))"
                                           ".map(i => i.getAttribute('src'))")
            assert bad == [], f"{html.name}: images that do not decode: {bad}"
            ids[html] = set(tab.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
            links += [(html, h) for h in tab.eval_on_selector_all("a", "els => els.map(a => a.getAttribute('href'))")]
            if html.name != "index.html":
                paper = html.stem
                assert tab.locator("section.claim").count() == sum(o["paper"] == paper for o in outcomes)
        assert errors == []
        checked = 0
        for page, href in links:
            parts = urlsplit(href)
            if parts.scheme in ("http", "https"):
                assert parts.scheme == "https", href
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            assert target.is_file() and out in target.parents, f"{page.name}: link {href} does not resolve in the site"
            if parts.fragment:
                if target not in ids:
                    tab.goto(target.as_uri())
                    ids[target] = set(tab.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
                assert unquote(parts.fragment) in ids[target], f"{page.name}: anchor {href} is missing"
            checked += 1
        browser.close()
    assert checked > 2 * len(outcomes)  # claim links from the index, the contents and the graphs


def test_paper_value_round_trips_into_json_and_site(site):
    """A claim's ``paper=`` value reaches the ledger JSON and is shown beside ours with the difference in SE."""
    c = ledger.Claim("relu_dag.fixture", "Theorem 1", "a statement", lambda: None,
                     paper_values=(ledger.PaperValue(0.25, "Table 1", "gap"), ledger.PaperValue("0.3-0.4", "Figure 2")))
    o = json.loads(dumps(ledger.Outcome(c, _evidence("holds"), 1.0).to_dict()))
    assert o["paper_values"] == [{"value": 0.25, "where": "Table 1", "measured": "gap"},
                                 {"value": "0.3-0.4", "where": "Figure 2", "measured": ""}]
    html = pages.claim_section(o, site["inputs"])
    assert "Table 1" in html and "0.25" in html and "+2.00 SE" in html  # (0.31 - 0.25) / 0.03
    assert "no measured counterpart" in html
    with pytest.raises(ValueError, match="PaperValue"):
        ledger.claim("relu_dag.bad", source="s", statement="t", paper=0.3)
    # a JSON written before the field existed: the registered value is shown, found along its key path
    registered = ledger.discover()["seesaw.paper_step_counts"]
    assert registered.paper_values and isinstance(registered.paper_values[0].measured, tuple)
    ev = ledger.Evidence({"reduction": {"256": 0.40}}, {}, "exact", no_control="an identity")
    old = {k: v for k, v in json.loads(dumps(ledger.Outcome(registered, ev, 0.0).to_dict())).items()
           if k != "paper_values"}
    html = pages.paper_rows(old)
    assert "reduction / 256" in html and f"{0.40 - registered.paper_values[0].value:.4g} (no SE" in html


def _run_report(*args: str) -> int:
    return claims_main.main(["report", "--no-screenshot", *args])


def test_missing_or_stale_json_is_one_line_and_exit_2(site, tmp_path, capsys):
    assert _run_report("--json", str(tmp_path / "none.json"), "--out", str(tmp_path / "s")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no ledger report" in err and "make verify SCALE=quick" in err
    fewer = json.loads(site["json"].read_text())[1:]  # a claim registered since the JSON was written
    (tmp_path / "old.json").write_bytes(dumps(fewer))
    assert _run_report("--json", str(tmp_path / "old.json"), "--out", str(tmp_path / "s")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "stale" in err and "1 added" in err
    (tmp_path / "paper.json").write_bytes(dumps([{**o, "scale": "paper"} for o in fewer]))
    assert _run_report("--json", str(tmp_path / "paper.json")) == 2
    assert "was run at scale paper" in capsys.readouterr().err


def test_result_rewritten_after_the_json_is_stale(site):
    """A result whose sidecar finished after the ledger JSON was written makes the JSON stale."""
    js = site["json"]
    old = js.stat().st_mtime
    try:
        os.utime(js, (time.time(), 1_000_000_000))  # the JSON now looks written in 2001
        with pytest.raises(report.ReportError, match="rewritten .* after the ledger report"):
            report.load("quick", json_path=js, results_dir=site["results"], figures_dir=site["figures"])
    finally:
        os.utime(js, (old, old))
