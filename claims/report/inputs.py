"""What the report reads: the ledger's JSON (``make verify``), the result sidecars, the configs and the
rendered figures. Nothing here runs a check or a simulation.

A ledger JSON is *stale* when it no longer describes what ``make verify`` would find today: it was
written at another scale or seed offset, the registered claims have changed since, or a result one of
its measured claims read is no longer the one today's config and code make (or was rewritten after the
JSON). The report refuses a stale JSON (:class:`ReportError`, one line saying to rerun ``make verify``)
rather than rerunning the ledger itself: a rerun can take many minutes at quick scale and is never
started as a side effect at paper scale.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from claims import ledger
from sims import cli
from sims.config import ConfigError
from sims.results import SCALES

#: Keys of an outcome in the ledger JSON that the report relies on.
OUTCOME_KEYS = ("id", "paper", "source", "statement", "scale", "expected", "verdict", "evidence")


class ReportError(Exception):
    """The report cannot be built: ``str(err)`` is one line naming the file and what to do."""


@dataclass
class Inputs:
    """Everything one report shows.

    Attributes:
      scale, seed_offset: the run the ledger JSON describes.
      json_path: the ledger JSON; ``written``: its modification time (UTC).
      outcomes: the JSON's outcome objects (``ledger.Outcome.to_dict``), sorted by claim id.
      sidecars: figure name -> its result sidecar (``results/<scale>/<name>.json``), where one exists.
      sidecar_paths, configs: figure name -> the sidecar file, the config file (``paper_configs``).
      figures: figure name -> ``{"png": path, "pdf": path}`` of the rendered files that exist.
      current: figure name -> whether its result is the one today's config and code make.
      missing_papers: papers with registered claims that the JSON does not cover.
    """

    scale: str
    seed_offset: int
    json_path: Path
    written: datetime
    outcomes: list[dict[str, Any]]
    sidecars: dict[str, dict] = field(default_factory=dict)
    sidecar_paths: dict[str, Path] = field(default_factory=dict)
    configs: dict[str, Path] = field(default_factory=dict)
    figures: dict[str, dict[str, Path]] = field(default_factory=dict)
    current: dict[str, bool] = field(default_factory=dict)
    missing_papers: list[str] = field(default_factory=list)

    def papers(self) -> list[str]:
        """The papers with at least one claim in the JSON, sorted."""
        return sorted({o["paper"] for o in self.outcomes})

    def of_paper(self, paper: str) -> list[dict[str, Any]]:
        return [o for o in self.outcomes if o["paper"] == paper]


def default_json(scale: str, seed_offset: int = 0, reports_dir: str | Path = "reports") -> Path:
    """``reports/<scale>/claims.json`` (``reports/<scale>/seed-offset-N/claims.json`` for a replication),
    where ``make verify`` writes it."""
    base = Path(reports_dir) / scale
    return (base / f"seed-offset-{seed_offset}" if seed_offset else base) / "claims.json"


def _verify_hint(scale: str, seed_offset: int) -> str:
    return f"run `make verify SCALE={scale}" + (f" SEED_OFFSET={seed_offset}" if seed_offset else "") + "` first"


def read_outcomes(path: Path, scale: str, seed_offset: int) -> list[dict[str, Any]]:
    """The outcome objects of the ledger JSON at ``path``, checked for shape, scale and seed offset.

    Raises:
      ReportError: the file is missing, is not the JSON list ``python -m claims verify --json`` writes,
        or describes another scale or seed offset.
    """
    hint = _verify_hint(scale, seed_offset)
    if not path.is_file():
        raise ReportError(f"{path}: no ledger report; {hint}")
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ReportError(f"{path}: not readable as JSON ({str(e)[:80]}); {hint}") from None
    if not isinstance(data, list) or not data:
        raise ReportError(f"{path}: expected the non-empty JSON list of claim outcomes that "
                          f"`python -m claims verify --json` writes; {hint}")
    for i, o in enumerate(data):
        missing = [k for k in OUTCOME_KEYS if not isinstance(o, dict) or k not in o]
        if missing:
            raise ReportError(f"{path}: outcome {i} lacks {', '.join(missing)} (expected the keys of "
                              f"`python -m claims verify --json`); {hint}")
        if o["scale"] != scale or int(o.get("seed_offset", 0)) != seed_offset:
            raise ReportError(f"{path}: claim {o['id']} was run at scale {o['scale']}, seed offset "
                              f"{o.get('seed_offset', 0)}; the report asked for scale {scale}, seed offset "
                              f"{seed_offset}; {hint}")
    return sorted(data, key=lambda o: o["id"])


def _finished(meta: dict) -> datetime | None:
    try:
        return datetime.strptime(str(meta.get("finished")), "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def load(scale: str, seed_offset: int = 0, *, json_path: str | Path | None = None,
         results_dir: str | Path = "results", figures_dir: str | Path = "figures/out") -> Inputs:
    """Read the ledger JSON of ``scale`` (and ``seed_offset``) and every figure's sidecar, config and
    rendered files; refuse a stale JSON.

    For each paper in the JSON its claim ids must be the registered ones; a paper the JSON lacks (a
    ``verify --paper`` selection) is listed in ``missing_papers``. Figures are looked up in
    ``<figures_dir>/<scale>/`` (the default seeds' rendering, also for a replication, whose results are
    not rendered).

    Raises:
      ReportError: a missing, malformed or stale ledger JSON (one line: the file, what is wrong, and
        the ``make verify`` command that refreshes it).
    """
    if scale not in SCALES:
        raise ReportError(f"--scale must be one of {', '.join(SCALES)}, got {scale!r}")
    path = Path(json_path) if json_path else default_json(scale, seed_offset)
    outcomes = read_outcomes(path, scale, seed_offset)
    written = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    hint = _verify_hint(scale, seed_offset)
    have = {o["id"] for o in outcomes}
    papers = {o["paper"] for o in outcomes}
    known = {i for i, c in ledger.discover().items() if c.paper in papers}
    added, removed = sorted(known - have), sorted(have - known)
    if added or removed:
        raise ReportError(f"{path}: stale, the registered claims changed since it was written ("
                          f"{len(added)} added{f', e.g. {added[0]}' if added else ''}; {len(removed)} removed"
                          f"{f', e.g. {removed[0]}' if removed else ''}); {hint}")
    inp = Inputs(scale, seed_offset, path, written, outcomes)
    inp.missing_papers = sorted({c.paper for c in ledger.REGISTRY.values()} - papers)
    folder = cli.seed_offset_dir(results_dir, scale, seed_offset)
    for cfg in sorted(cli.CONFIGS.glob("*.yaml")):
        name = cfg.stem
        inp.configs[name] = cfg
        side = folder / f"{name}.json"
        if side.is_file():
            try:
                meta = json.loads(side.read_text())
            except (OSError, UnicodeDecodeError, ValueError):
                meta = None
            if isinstance(meta, dict):
                inp.sidecars[name], inp.sidecar_paths[name] = meta, side
        rendered = {ext: Path(figures_dir) / scale / f"{name}.{ext}" for ext in ("png", "pdf")}
        inp.figures[name] = {ext: p for ext, p in rendered.items() if p.is_file()}
    for o in outcomes:
        if o["verdict"] == ledger.NOT_MEASURED:
            _check_unmeasured(inp, o, folder, hint)
            continue
        for name in (o.get("evidence") or {}).get("reads", []):
            _check_read(inp, o["id"], name, results_dir, hint)
    return inp


def _check_read(inp: Inputs, claim_id: str, name: str, results_dir: str | Path, hint: str) -> None:
    """Refuse the JSON when the result ``name`` that claim ``claim_id`` read is gone, is not today's, or
    was rewritten after the JSON."""
    if name not in inp.current:
        try:
            inp.current[name] = cli.result_is_current(name, inp.scale, results_dir, inp.seed_offset)
        except ConfigError as e:
            raise ReportError(f"{inp.json_path}: claim {claim_id} reads figure {name}, whose config is not "
                              f"usable ({e}); {hint}") from None
    if not inp.current[name]:
        raise ReportError(f"{inp.json_path}: stale, claim {claim_id} read result {name}, which is missing or no "
                          f"longer the one today's config and code make; {hint}")
    done = _finished(inp.sidecars.get(name, {}))
    if done is not None and done > inp.written:
        raise ReportError(f"{inp.json_path}: stale, result {name} (read by {claim_id}) was rewritten at "
                          f"{done.isoformat()}, after the ledger report; {hint}")


def _check_unmeasured(inp: Inputs, o: dict, folder: Path, hint: str) -> None:
    """A claim reported as not measured is stale once a result it would read exists."""
    reads = [n for n in (ledger.REGISTRY[o["id"]].reads if o["id"] in ledger.REGISTRY else ())
             if (folder / f"{n}.json").is_file()]
    if reads:
        raise ReportError(f"{inp.json_path}: stale, claim {o['id']} was not measured but result {reads[0]} "
                          f"exists now; {hint}")


def file_time(path: Path) -> str:
    """A file's modification time, UTC, to the second."""
    return datetime.fromtimestamp(os.stat(path).st_mtime, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
