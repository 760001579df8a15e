"""A static site of the claims ledger: ``python -m claims report --scale S`` (``make report``) writes
``reports/<scale>/site/``: ``index.html`` and one ``<paper>.html`` per paper, opened straight from disk.

It reads what ``make figures`` and ``make verify`` wrote (the ledger JSON ``reports/<scale>/claims.json``,
the result sidecars ``results/<scale>/<name>.json`` and the figures ``figures/out/<scale>/``) and runs
nothing: a missing or stale ledger JSON is refused with one line naming the ``make verify`` command
(:mod:`claims.report.inputs` says when it is stale). The configs, sidecars and figures the pages show
are copied into the site (``configs/``, ``results/``, ``figures/``), so the folder can be zipped and
sent; styles are inline and there is no script. With Chromium installed (Playwright drives it), a
screenshot of the index at 1280 px width is written beside it as ``index.png``.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

from claims.report import pages
from claims.report.inputs import Inputs, ReportError, default_json, load
from sims.results import dumps, git_commit, write_atomic

try:  # the `test` extra: only the screenshot needs it
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright
except ImportError:
    sync_playwright = None

__all__ = ["build", "screenshot", "ReportError", "Inputs", "load", "default_json", "site_dir", "CHROMIUM_ARGS"]

#: Flags for headless Chromium with no network side traffic (also used by the browser test).
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def site_dir(scale: str, seed_offset: int = 0, reports_dir: str | Path = "reports") -> Path:
    """``reports/<scale>/site`` (``reports/<scale>/seed-offset-N/site`` for a replication)."""
    return default_json(scale, seed_offset, reports_dir).parent / "site"


def chromium() -> str | None:
    """The path of a Chromium binary (``chromium``, ``chromium-browser``, ``google-chrome``), or None."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _copy(src: Path, dst: Path) -> None:
    write_atomic(dst, src.read_bytes())


def build(inp: Inputs, out: str | Path) -> list[Path]:
    """Write the site of ``inp`` into ``out`` (created; files of an earlier build are replaced, the
    rest of the folder is left alone). Returns the pages written, index first.

    Raises:
      ResultError: a file of the site cannot be written (one line naming it).
    """
    out = Path(out)
    built = {"commit": git_commit(), "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}
    for name, cfg in inp.configs.items():
        _copy(cfg, out / "configs" / f"{name}.yaml")
    for name, side in inp.sidecar_paths.items():
        _copy(side, out / "results" / f"{name}.json")
    for name, files in inp.figures.items():
        for ext, path in files.items():
            _copy(path, out / "figures" / f"{name}.{ext}")
    write_atomic(out / "claims.json", dumps(inp.outcomes))
    written = [out / "index.html"]
    write_atomic(written[0], pages.index_page(inp, built).encode())
    for paper in inp.papers():
        written.append(out / f"{paper}.html")
        write_atomic(written[-1], pages.paper_page(paper, inp).encode())
    return written


def screenshot(page: Path, png: Path, width: int = 1280) -> str:
    """A full-page screenshot of ``page`` at ``width`` px in headless Chromium. Returns ``""`` when
    written, else one line saying why not (no Chromium, no Playwright): the site is complete without it."""
    exe = chromium()
    if exe is None:
        return "no screenshot: Chromium is not installed (apt-get install chromium)"
    if sync_playwright is None:
        return "no screenshot: the playwright package is not installed (pip install -e '.[test]')"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=exe, args=CHROMIUM_ARGS)
            try:
                tab = browser.new_page(viewport={"width": width, "height": 900})
                tab.goto(page.resolve().as_uri())
                shot = tab.screenshot(full_page=True)
            finally:
                browser.close()
    except PlaywrightError as e:
        return f"no screenshot: Chromium failed ({str(e).splitlines()[0][:120]})"
    write_atomic(png, shot)
    return ""
