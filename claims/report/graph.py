"""The dependency graph of a report as inline SVG, laid out in four columns: configs -> results ->
figures -> claims. Each node links to the file it names inside the site (the copied config, sidecar and
figure) or to the claim's section; a node whose file does not exist is drawn dashed, without a link.
Claims are ordered by the mean row of the figures they read (the barycentre heuristic), which keeps
most edges short; a claim that reads no figure has no edge and is left out (its section says so)."""

from __future__ import annotations

from html import escape
from typing import Callable, NamedTuple

ROW = 17          # px per row of the densest column
CHAR = 6.6        # px per character at the label font size (11 px monospace)
PAD, GAP, TOP = 8, 46, 26
VERDICT_FILL = {"holds": "#d9f2dd", "fails": "#f9d6d5", "inconclusive": "#fdf0c8",
                "not measured": "#e8e8e8", "error": "#f4c7f0"}


class Node(NamedTuple):
    """One box: its label, link (``""``: none, drawn dashed), fill colour and tooltip."""

    label: str
    href: str
    fill: str = "#eef3fb"
    title: str = ""


def _box(x: float, y: float, w: float, n: Node) -> str:
    dash = "" if n.href else ' stroke-dasharray="3 2"'
    body = (f'<rect x="{x:.1f}" y="{y - ROW / 2 + 1.5:.1f}" width="{w:.1f}" height="{ROW - 3}" rx="3" '
            f'fill="{n.fill}" stroke="#8a9bb5"{dash}/><text x="{x + PAD / 2:.1f}" y="{y + 4:.1f}">'
            f'{escape(n.label)}</text><title>{escape(n.title or n.label)}</title>')
    return f'<a href="{escape(n.href)}">{body}</a>' if n.href else f"<g>{body}</g>"


def svg(figures: list[str], columns: Callable[[str], tuple[Node, Node, Node]],
        claims: list[tuple[Node, list[str]]], caption: str) -> str:
    """The SVG of the graph.

    Args:
      figures: figure names, one row each (config, result, figure).
      columns: figure name -> its (config, result, figure) nodes.
      claims: (claim node, names of the figures it reads) for each claim that reads at least one.
      caption: the accessible name of the graph (``aria-label``).

    Returns:
      ``<svg>...</svg>``, width and height in px from the labels and the row count.
    """
    rows = {f: i for i, f in enumerate(figures)}
    claims = [(n, [r for r in reads if r in rows]) for n, reads in claims]
    claims = sorted((c for c in claims if c[1]), key=lambda c: (sum(rows[r] for r in c[1]) / len(c[1]), c[0].label))
    cols = [[columns(f)[k] for f in figures] for k in range(3)] + [[n for n, _ in claims]]
    widths = [max((len(n.label) for n in col), default=4) * CHAR + PAD for col in cols]
    xs = [PAD + sum(widths[:k]) + GAP * k for k in range(4)]
    height = max(len(figures), len(claims), 1) * ROW
    fig_y = {f: TOP + (i + 0.5) * height / max(len(figures), 1) for i, f in enumerate(figures)}
    claim_y = [TOP + (i + 0.5) * height / max(len(claims), 1) for i in range(len(claims))]
    out = []
    for k in range(2):  # config -> result -> figure: straight edges along a row
        for f in figures:
            out.append(f'<line x1="{xs[k] + widths[k]:.1f}" y1="{fig_y[f]:.1f}" x2="{xs[k + 1]:.1f}" '
                       f'y2="{fig_y[f]:.1f}" class="e"/>')
    for (_, reads), y in zip(claims, claim_y):
        x0, x1 = xs[2] + widths[2], xs[3]
        for r in reads:
            mid = (x0 + x1) / 2
            out.append(f'<path d="M{x0:.1f},{fig_y[r]:.1f} C{mid:.1f},{fig_y[r]:.1f} {mid:.1f},{y:.1f} '
                       f'{x1:.1f},{y:.1f}" class="e"/>')
    for k in range(3):
        out += [_box(xs[k], fig_y[f], widths[k], cols[k][i]) for i, f in enumerate(figures)]
    out += [_box(xs[3], y, widths[3], n) for (n, _), y in zip(claims, claim_y)]
    heads = "".join(f'<text x="{xs[k]:.1f}" y="14" class="h">{h}</text>'
                    for k, h in enumerate(("config", "result (sidecar)", "figure", "claim")))
    w, h = xs[3] + widths[3] + PAD, TOP + height + PAD
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{w:.0f}" height="{h:.0f}" '
            f'viewBox="0 0 {w:.0f} {h:.0f}" role="img" aria-label="{escape(caption)}">'
            '<style>text{font:11px ui-monospace,Menlo,Consolas,monospace;fill:#1b2733}'
            '.h{font-weight:bold;fill:#4a5968}.e{fill:none;stroke:#9fb0c6;stroke-width:1}'
            'a:hover rect{stroke:#1f5fbf;stroke-width:2}</style>'
            f"{heads}{''.join(out)}</svg>")
