"""HTML of the report: the index, one page per paper, and one section per claim. Plain string templates,
inline CSS, no script: every page opens from disk with no network.

Links inside the site are relative: ``<paper>.html#<claim id>`` for a claim, ``figures/<name>.png|pdf``,
``results/<name>.json`` (the sidecar) and ``configs/<name>.yaml`` (the config), all copied into the site
by :func:`claims.report.build`.
"""

from __future__ import annotations

import json
import math
import re
from html import escape
from typing import Any

from claims import ledger
from claims.report import graph
from claims.report.inputs import Inputs
from claims.report.papers import paper as paper_info
from sims.results import SCALES

COUNTED = ("holds", "fails", "inconclusive", "not measured", "error")
COUNT_HEAD = ("holds", "fails", "inconclusive", "not measured", "fragile", "error")
DECISION_HEAD = ("decision", "statistic", "threshold", "margin (SE)", "needs", "test")

CSS = """
body{font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b2733;margin:0;background:#fafbfc}
main{max-width:1180px;margin:0 auto;padding:18px 28px 60px}
h1{font-size:1.55em;margin:.3em 0}h2{font-size:1.2em;margin:0 0 .3em}h3{font-size:1em;margin:1em 0 .3em}
a{color:#1f5fbf}code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.88em}
pre{background:#f1f3f5;padding:8px;overflow-x:auto;white-space:pre-wrap}
table{border-collapse:collapse;margin:.4em 0 .8em;font-size:.9em}
th,td{border:1px solid #d5dbe1;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#eef1f4}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.claim{background:#fff;border:1px solid #d5dbe1;border-radius:6px;padding:14px 18px;margin:18px 0}
.claim:target{outline:3px solid #1f5fbf}
.badge{display:inline-block;padding:0 7px;border-radius:9px;font-size:.82em;font-weight:600;margin-right:4px}
.holds{background:#d9f2dd;color:#14592a}.fails{background:#f9d6d5;color:#8a1c17}
.inconclusive{background:#fdf0c8;color:#7a5800}.not-measured{background:#e8e8e8;color:#444}
.error,.unexpected{background:#f4c7f0;color:#6b0f63}.fragile{background:#ffe0b8;color:#7a3d00}
.muted{color:#5b6b7b}.small{font-size:.86em}
figure{margin:10px 0;display:inline-block;vertical-align:top;max-width:100%}
figure img{max-width:min(100%,760px);border:1px solid #d5dbe1;background:#fff}
figcaption{font-size:.86em;color:#3b4b5b;max-width:760px}
.graphbox{overflow-x:auto;background:#fff;border:1px solid #d5dbe1;padding:6px}
ul.toc{columns:2;padding-left:1.2em}nav{font-size:.9em;margin-bottom:6px}
details summary{cursor:pointer;color:#1f5fbf}
"""


def page(title: str, body: str) -> str:
    """A complete HTML document with the shared style."""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{CSS}</style></head>"
            f"<body><main>{body}</main></body></html>\n")


def badge(verdict: str, text: str | None = None) -> str:
    return f'<span class="badge {verdict.replace(" ", "-")}">{escape(text or verdict)}</span>'


def linkify(text: str) -> str:
    """``text`` escaped, with every ``arXiv NNNN.NNNNN`` linked to its arXiv page."""
    return re.sub(r"arXiv[: ]?(\d{4}\.\d{4,5})",
                  lambda m: f'<a href="https://arxiv.org/abs/{m.group(1)}">{m.group(0)}</a>', escape(text))


def ok(o: dict) -> bool:
    """The ledger's own rule (:attr:`claims.ledger.Outcome.ok`) on a JSON outcome."""
    if o.get("not_measured"):
        return True
    return bool(o.get("as_expected")) and (not o.get("fragile") or o["expected"] == "inconclusive")


def counts(outcomes: list[dict]) -> dict[str, int]:
    c = {v: sum(o["verdict"] == v for o in outcomes) for v in COUNTED}
    c["fragile"] = sum(bool(o.get("fragile")) for o in outcomes)
    c["as expected"] = sum(bool(o.get("as_expected")) for o in outcomes)
    c["measured"] = sum(not o.get("not_measured") for o in outcomes)
    return c


def reads_of(o: dict) -> list[str]:
    """The figures a claim reads: from its evidence, else (not measured, error) from the registry."""
    ev = o.get("evidence") or {}
    if "reads" in ev:
        return list(ev["reads"])
    c = ledger.REGISTRY.get(o["id"])
    return list(c.reads) if c else []


def reproduce(o: dict) -> str:
    off = int(o.get("seed_offset", 0))
    return (f"python -m claims verify --claim {o['id']} --scale {o['scale']}"
            + (f" --seed-offset {off}" if off else ""))


def _num(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _at(d: Any, key: Any) -> Any:
    """``d[key]``, or along a path of keys (a list), or ``None``."""
    for k in (key if isinstance(key, (list, tuple)) else [key]):
        if not isinstance(d, dict) or k not in d:
            return None
        d = d[k]
    return d


def paper_rows(o: dict) -> str:
    """The paper's numbers beside ours: value, where the paper reports it, ours with its SE, and the
    difference (in our SE where one exists)."""
    pvs = o.get("paper_values")
    if pvs is None:  # a JSON written before the field existed: the registry has the same static values
        c = ledger.REGISTRY.get(o["id"])
        pvs = [{"value": p.value, "where": p.where, "measured": p.measured} for p in (c.paper_values if c else ())]
    if not pvs:
        return ""
    ev = o.get("evidence") or {}
    rows = []
    for p in pvs:
        key = p.get("measured") or ""
        label = " / ".join(key) if isinstance(key, (list, tuple)) else key
        ours = _at(ev.get("measured") or {}, key) if key else None
        se = _num(_at(ev.get("stderr") or {}, key)) if key else None
        a, b = _num(ours), _num(p["value"])
        if a is None or b is None:
            diff = "not comparable" if key else "no measured counterpart"
        else:
            diff = ledger.fmt(a - b) + (f" ({(a - b) / se:+.2f} SE)" if se else " (no SE: exact or deterministic)")
        ours_se = ("-" if ours is None else escape(ledger.fmt(ours))) + (f" &plusmn; {ledger.fmt(se)}" if se else "")
        rows.append(f"<tr><td class='mono'>{escape(label or '-')}</td><td class='n'>{escape(ledger.fmt(p['value']))}"
                    f"</td><td>{linkify(p['where'])}</td><td class='n'>{ours_se}</td><td>{escape(diff)}</td></tr>")
    return ("<h3>The paper's number beside ours</h3><table><tr><th>quantity</th><th>paper</th><th>where in the "
            "paper</th><th>ours &plusmn; SE</th><th>ours &minus; paper</th></tr>" + "".join(rows) + "</table>")


def _decision_cells(d: dict) -> str:
    m = d.get("margin_se")
    margin = "-" if m is None else f"{m:+.3g}" if isinstance(m, (int, float)) else escape(str(m))
    c = d.get("critical")
    need = "-" if c is None else f"{c:.3g}" if isinstance(c, (int, float)) else escape(str(c))
    return (f"<td>{badge(d['decision'])}</td><td class='n'>{escape(ledger.fmt(d.get('statistic')))}</td>"
            f"<td class='n'>{escape(ledger.fmt(d.get('threshold')))}</td><td class='n'>{margin}</td>"
            f"<td class='n'>{need}</td><td class='small'>{escape(d.get('test') or '')}</td>")


def evidence_html(o: dict) -> str:
    """Measured against predicted, the decisions, the controls, stability, seeds and notes."""
    ev = o["evidence"]
    meas, pred, se = ev.get("measured") or {}, ev.get("predicted") or {}, ev.get("stderr") or {}
    keys = list(meas) + [k for k in pred if k not in meas]
    rows = "".join(f"<tr><td class='mono'>{escape(k)}</td><td>{escape(ledger.fmt(meas.get(k, '-')))}</td>"
                   f"<td>{escape(ledger.fmt(pred.get(k, '-')))}</td>"
                   f"<td>{escape(ledger.fmt(se[k])) if k in se else ''}</td></tr>" for k in keys)
    out = [f"<p><b>Tolerance:</b> {escape(ev.get('tolerance') or '')}</p>",
           "<table><tr><th>quantity</th><th>measured</th><th>predicted</th><th>SE</th></tr>" + rows + "</table>"]
    head = "<tr><th>{}</th>" + "".join(f"<th>{h}</th>" for h in DECISION_HEAD) + "</tr>"
    if ev.get("decisions"):
        out.append("<h3>Decisions</h3><table>" + head.format("what was tested") + "".join(
            f"<tr><td>{escape(d['name'])}</td>{_decision_cells(d)}</tr>" for d in ev["decisions"]) + "</table>")
    else:
        out.append("<p>No decision: nothing was testable, so the verdict is inconclusive.</p>")
    if ev.get("controls"):
        out.append("<h3>Controls</h3><p class='small muted'>Cases just outside the hypothesis; the claim holds only "
                   "when the same test rejects every one (its decision is &ldquo;fails&rdquo;).</p><table>"
                   + head.format("case (rejected?)") + "".join(
                       f"<tr><td>{escape(c['case'])} <b>{'rejected' if c.get('rejected') else 'NOT rejected'}</b>"
                       + (f"<div class='small muted'>{escape(ledger.fmt(c['measured']))}</div>"
                          if c.get("measured") else "")
                       + f"</td>{_decision_cells(c['decision'])}</tr>" for c in ev["controls"]) + "</table>")
    if ev.get("no_control"):
        out.append(f"<p><b>No control:</b> {escape(ev['no_control'])}</p>")
    st = ev.get("stability")
    if st:
        changed = "".join(f"<li>without {escape(str(c['left_out']))}: {badge(c['verdict'])}</li>"
                          for c in st.get("changed", []))
        out.append(f"<p><b>Stability</b> (re-decided with seeds left out, nothing rerun): "
                   f"{escape(ledger.fmt_stability(st))}</p>" + (f"<ul>{changed}</ul>" if changed else ""))
    else:
        out.append("<p><b>Stability:</b> not applicable (no array read has a seed axis: an exact or "
                   "deterministic check).</p>")
    if o.get("non_finite"):
        out.append(f"<p><b>Non-finite values:</b> {escape(ledger.fmt_non_finite(o['non_finite']))}</p>")
    if ev.get("seeds"):
        out.append(f"<p><b>Seeds:</b> {escape(ledger.fmt(ev['seeds']))}</p>")
    if ev.get("notes"):
        out.append(f"<p><b>Notes:</b> {linkify(ev['notes'])}</p>")
    return "".join(out)


def sidecar_table(meta: dict) -> str:
    """The provenance of one result: config, hashes, seeds, wall time, device, non-finite counts."""
    nf = meta.get("non_finite") or {}
    rows = [("config", f"<code>{escape(json.dumps(meta.get('config', {}), sort_keys=True))}</code>"),
            ("config hash / code hash", f"<code>{escape(str(meta.get('config_hash', '?'))[:12])}</code> / "
                                        f"<code>{escape(str(meta.get('code_hash', '?'))[:12])}</code>"),
            ("root seed (offset)", escape(f"{meta.get('seed', '?')} ({meta.get('seed_offset', 0)})")),
            ("seed axes", escape(ledger.fmt(meta.get("seed_axes") or {}) or "none")),
            ("wall time", f"{meta.get('wall_time_s', '?')} s, finished {escape(str(meta.get('finished', '?')))}"),
            ("device", escape(f"{meta.get('backend', '?')}, {meta.get('device_count', '?')} device(s), "
                              f"{meta.get('process_count', '?')} process(es), x64 {meta.get('x64', '?')}")),
            ("non-finite values", escape(", ".join(f"{k}: {n}" for k, n in nf.items()) or "none")),
            ("git commit", f"<code>{escape(str(meta.get('git_commit', '?'))[:20])}</code>")]
    return "<table class='small'>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def figure_html(name: str, inp: Inputs, scale: str) -> str:
    """One figure a claim reads: the PNG linking to the PDF, with its result's provenance."""
    fig, meta = inp.figures.get(name, {}), inp.sidecars.get(name)
    links = [f'<a href="configs/{name}.yaml">config</a>'] if name in inp.configs else []
    if meta is not None:
        links.append(f'<a href="results/{name}.json">sidecar (JSON)</a>')
    if "pdf" in fig:
        links.append(f'<a href="figures/{name}.pdf">PDF</a>')
    make = f"<code>make fig-{escape(name)} SCALE={scale}</code>"
    if "png" in fig:
        img = f'<a href="figures/{name}.pdf"><img src="figures/{name}.png" alt="figure {escape(name)}"></a>' \
            if "pdf" in fig else f'<img src="figures/{name}.png" alt="figure {escape(name)}">'
    elif meta is not None:
        img = f"<p class='muted'>The result exists but its figure is not rendered: run {make}.</p>"
    else:
        img = f"<p class='muted'>No result at {scale} scale yet: run {make}.</p>"
    note = " (rendered from the default seeds)" if inp.seed_offset else ""
    prov = f"<details><summary>result provenance</summary>{sidecar_table(meta)}</details>" if meta else ""
    return (f"<figure>{img}<figcaption><b>{escape(name)}</b>{note}: "
            f"{' &middot; '.join(links)}{prov}</figcaption></figure>")


def _other_scales(o: dict) -> str:
    """`` (expected at paper scale: holds)`` where the registered expectation differs at another scale."""
    c = ledger.REGISTRY.get(o["id"])
    if c is None:
        return ""
    other = {s: c.expected_at(s) for s in SCALES if s != o["scale"] and c.expected_at(s) != o["expected"]}
    return "".join(f" <span class='small muted'>(expected at {s} scale: {v})</span>" for s, v in other.items())


def claim_section(o: dict, inp: Inputs) -> str:
    """The section of one claim, anchored at its id."""
    info = paper_info(o["paper"])
    src = linkify(o["source"]) + (f' (<a href="{escape(info.url)}">the paper</a>)' if info.url else "")
    marks = [badge(o["verdict"])] + ([badge("fragile")] if o.get("fragile") else []) \
        + ([] if ok(o) else [badge("unexpected", "not as expected")])
    out = [f'<section class="claim" id="{escape(o["id"])}"><h2><a href="#{escape(o["id"])}">{escape(o["id"])}</a> ',
           " ".join(marks), "</h2>",
           f"<p><b>Source in the paper:</b> {src}</p><p><b>Statement:</b> {linkify(o['statement'])}</p>",
           f"<p><b>Verdict:</b> {badge(o['verdict'])} <b>expected at {escape(o['scale'])} scale:</b> "
           f"{badge(o['expected'])}{_other_scales(o)}</p>"
           + (f"<p><b>Why this expectation:</b> {linkify(o['why'])}</p>" if o.get("why") else ""),
           paper_rows(o)]
    if o.get("not_measured"):
        out.append(f"<p><b>Not measured at {escape(o['scale'])} scale:</b> {escape(o['not_measured'])}</p>")
    elif o.get("evidence"):
        out.append(evidence_html(o))
    else:
        out.append(f"<p><b>The check raised an error:</b></p><pre>{escape(o.get('error') or '')}</pre>")
    reads = reads_of(o)
    if reads:
        out.append("<h3>Figures it reads</h3>" + "".join(figure_html(n, inp, o["scale"]) for n in reads))
    else:
        out.append("<p class='muted small'>Reads no figure: the check computes its evidence itself.</p>")
    out.append(f"<p><b>Reproduce:</b> <code>{escape(reproduce(o))}</code>"
               + "".join(f" &middot; <code>make fig-{escape(n)} SCALE={o['scale']}</code>" for n in reads)
               + f" <span class='muted small'>({o.get('seconds', 0):.1f} s in the ledger)</span></p></section>")
    return "".join(out)


def count_cells(c: dict[str, int]) -> str:
    return "".join(f"<td class='n'>{c[v]}</td>" for v in COUNT_HEAD)


def _graph(inp: Inputs, outcomes: list[dict], figures: list[str], caption: str) -> str:
    def columns(f: str) -> tuple[graph.Node, graph.Node, graph.Node]:
        has_fig = "png" in inp.figures.get(f, {})
        return (graph.Node(f"{f}.yaml", f"configs/{f}.yaml" if f in inp.configs else ""),
                graph.Node(f"{f}.json", f"results/{f}.json" if f in inp.sidecars else "",
                           title=f"{f}: result sidecar"
                           + ("" if f in inp.sidecars else " (no result at this scale)")),
                graph.Node(f"{f}.png", f"figures/{f}.png" if has_fig else "",
                           title=f"{f}: figure" + ("" if has_fig else " (not rendered)")))
    claims = [(graph.Node(o["id"], f"{o['paper']}.html#{o['id']}", graph.VERDICT_FILL.get(o["verdict"], "#fff"),
                          f"{o['id']}: {o['verdict']}"), reads_of(o)) for o in outcomes]
    return f"<div class='graphbox'>{graph.svg(figures, columns, claims, caption)}</div>"


def paper_page(name: str, inp: Inputs) -> str:
    """The page of one paper: what it claims, its counts, a contents list and every claim's section."""
    info, outs = paper_info(name), inp.of_paper(name)
    c = counts(outs)
    toc = "".join(f'<li><a href="#{escape(o["id"])}">{escape(o["id"])}</a> {badge(o["verdict"])}'
                  + (badge("fragile") if o.get("fragile") else "") + "</li>" for o in outs)
    figs = sorted({f for o in outs for f in reads_of(o)} | {f for f in inp.configs if f.startswith(name + "_")})
    link = f' &middot; <a href="{escape(info.url)}">{escape(info.url)}</a>' if info.url else ""
    body = (f'<nav><a href="index.html">&larr; all papers</a></nav><h1>{escape(info.title)}</h1>'
            f"<p class='muted'>{escape(info.authors)} &middot; {escape(info.venue)}{link}</p>"
            f"<p>{linkify(info.summary)}</p>"
            f"<p>{len(outs)} claims at {escape(inp.scale)} scale: {c['as expected']} of {c['measured']} measured "
            f"gave their expected verdict.</p><table><tr>{''.join(f'<th>{h}</th>' for h in COUNT_HEAD)}</tr>"
            f"<tr>{count_cells(c)}</tr></table>"
            f"<ul class='toc'>{toc}</ul>" + "".join(claim_section(o, inp) for o in outs)
            + f"<h2>Dependencies</h2>{_graph(inp, outs, figs, f'dependency graph of {name}')}")
    return page(f"{info.title} — claims at {inp.scale} scale", body)


def _provenance(inp: Inputs, built: dict[str, str]) -> str:
    metas = list(inp.sidecars.values())

    def distinct(key: str, short: int = 0) -> str:
        vals = sorted({str(m.get(key, "?"))[:short or None] for m in metas})
        return escape(", ".join(vals) or "no result")
    times = sorted(str(m.get("finished")) for m in metas if m.get("finished"))
    versions: dict[str, set] = {}
    for m in metas:
        for k, v in (m.get("versions") or {}).items():
            versions.setdefault(k, set()).add(str(v))
    rows = [("ledger report", f"<code>{escape(str(inp.json_path))}</code>, written "
             f"{inp.written:%Y-%m-%d %H:%M:%S} UTC (<a href='claims.json'>copy</a>)"),
            ("scale, seed offset", f"{escape(inp.scale)}, {inp.seed_offset}"),
            ("results", f"{len(metas)} sidecars, finished {escape(times[0]) if times else '-'} to "
                        f"{escape(times[-1]) if times else '-'}"),
            ("git commit of the results", distinct("git_commit", 20)),
            ("git commit of this report",
             f"<code>{escape(built['commit'][:20])}</code>, built {escape(built['date'])}"),
            ("devices, processes", f"{distinct('backend')}; {distinct('device_count')} device(s); "
                                   f"{distinct('process_count')} process(es)"),
            ("kernels", distinct("kernels")),
            ("packages", escape(", ".join(f"{k} {'/'.join(sorted(v))}" for k, v in sorted(versions.items()))
                                or "-"))]
    return "<table class='small'>" + "".join(f"<tr><th>{k}</th><td>{v}</td></tr>" for k, v in rows) + "</table>"


def _reason(o: dict) -> str:
    """Why a claim is listed among those that do not hold: the error's last line, the reason it was not
    measured, or the registered reason for its expectation."""
    if o["verdict"] == "error":
        return ((o.get("error") or "").strip().splitlines() or ["error"])[-1]
    return o.get("not_measured") or o.get("why") or ""


def index_page(inp: Inputs, built: dict[str, str]) -> str:
    """The index: per paper its counts and what it claims, the claims that do not hold, the run's
    provenance and the dependency graph of every figure and claim."""
    total = counts(inp.outcomes)
    rows = []
    for name in inp.papers():
        info, c = paper_info(name), counts(inp.of_paper(name))
        link = f' (<a href="{escape(info.url)}">paper</a>)' if info.url else ""
        rows.append(f"<tr><td><a href='{escape(name)}.html'><b>{escape(name)}</b></a><div class='small'>"
                    f"{escape(info.title)}{link}</div><div class='small muted'>{linkify(info.summary)}</div></td>"
                    f"{count_cells(c)}</tr>")
    not_holding = "".join(
        f"<li><a href='{o['paper']}.html#{escape(o['id'])}'>{escape(o['id'])}</a> {badge(o['verdict'])}"
        + (badge("fragile") if o.get("fragile") else "")
        + (badge("unexpected", "not as expected") if not ok(o) else "")
        + f" <span class='small muted'>{escape(_reason(o)[:220])}</span></li>"
        for o in inp.outcomes if o["verdict"] != "holds" or o.get("fragile"))
    missing = (f"<p class='muted'>Not in this report (no claim of theirs in the ledger JSON): "
               f"{escape(', '.join(inp.missing_papers))}.</p>" if inp.missing_papers else "")
    figs = sorted({f for o in inp.outcomes for f in reads_of(o)}
                  | {f for f in inp.configs if any(f.startswith(p + "_") for p in inp.papers())})
    unread = sorted(set(figs) - {f for o in inp.outcomes for f in reads_of(o)})
    unread_html = (f"<p class='small'>Figures no claim reads: {escape(', '.join(unread))}.</p>" if unread else "")
    offset = f", seed offset {inp.seed_offset}" if inp.seed_offset else ""
    body = (f"<h1>Claims ledger at {escape(inp.scale)} scale{offset}</h1>"
            f"<p>{len(inp.outcomes)} claims from {len(inp.papers())} paper{'s' * (len(inp.papers()) != 1)}: "
            f"{total['as expected']} of "
            f"{total['measured']} measured claims gave their expected verdict. A claim &ldquo;holds&rdquo; when each of "
            "its own tests holds and each control (a case just outside the paper's hypothesis) is rejected; "
            "&ldquo;fragile&rdquo; when leaving one seed out changes the verdict.</p>"
            f"<table><tr><th>paper</th>{''.join(f'<th>{h}</th>' for h in COUNT_HEAD)}</tr>{''.join(rows)}"
            f"<tr><th>all</th>{count_cells(total)}</tr></table>{missing}"
            + (f"<h2>Claims that do not hold, or are fragile</h2><ul>{not_holding}</ul>" if not_holding else "")
            + f"<h2>Provenance</h2>{_provenance(inp, built)}"
            "<h2>Dependencies</h2><p class='small muted'>Each config makes a result, each result a figure, and "
            "each claim reads the results of its figures. Every box links to the file or the claim; a dashed box "
            "has no file at this scale. Claims that read no figure compute their evidence themselves and are not "
            f"shown.</p>{_graph(inp, inp.outcomes, figs, 'dependency graph: configs, results, figures, claims')}"
            f"{unread_html}"
            f"<p class='small muted'>Built {escape(built['date'])} by <code>python -m claims report --scale "
            f"{escape(inp.scale)}</code> from files written by <code>make figures</code> and <code>make verify</code>; "
            "it ran nothing.</p>")
    return page(f"Claims ledger at {inp.scale} scale", body)
