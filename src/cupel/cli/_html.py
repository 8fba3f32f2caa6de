"""A self-contained HTML report of one selection: tables, a stacked budget bar by kind, a score plot.

No scripts and no network assets: a Content-Security-Policy forbids both, and every piece of item text is
escaped, because item content comes from users, tools and web pages.
"""

from __future__ import annotations

from html import escape

from cupel import __version__
from cupel._plural import counted
from cupel.diagnostics.report import SelectionReport
from cupel.model import ContextBudget, ascii_fold

_PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#9c755f"]

_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1d2430}
body{background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#5b6577;margin:0 0 16px}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{border-bottom:1px solid #e3e7ee;padding:5px 8px;text-align:left;vertical-align:top}
th{background:#f4f6f9;font-weight:600}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
td.content{white-space:pre-wrap;word-break:break-word;font-size:12px}
td.content{font-family:ui-monospace,Menlo,Consolas,monospace}
.bar{display:flex;height:26px;border:1px solid #c8cfda;border-radius:4px;overflow:hidden}
.bar{position:relative;background:#fafbfc}
.seg{height:100%}
.free{background:repeating-linear-gradient(45deg,#eef1f5,#eef1f5 6px,#fafbfc 6px,#fafbfc 12px)}
.legend{display:flex;flex-wrap:wrap;gap:12px;margin:8px 0 0;color:#3b4556}
.swatch{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.target{position:absolute;top:-2px;bottom:-2px;width:2px;background:#1d2430}
svg text{font:11px system-ui,sans-serif;fill:#3b4556}
.reason{font-weight:600}
summary{cursor:pointer;color:#4e79a7;font-family:system-ui,sans-serif}
tbody.turn{border-top:2px solid #c8cfda}
tr.turn-head td{background:#f4f6f9;font-weight:600}
tr.unit.dropped td{color:#6b7484}
tr.unit.summary td{background:#fff8e1}
.status-kept{color:#2e7d32}.status-dropped{color:#b3261e}.status-partly{color:#b26a00}
"""


def _kind_colours(report: SelectionReport) -> dict[str, str]:
    colours: dict[str, str] = {}
    for item in [entry.item for entry in report.included] + [entry.item for entry in report.excluded]:
        key = ascii_fold(item.kind)
        if key not in colours:
            colours[key] = _PALETTE[len(colours) % len(_PALETTE)]
    return colours


def _budget_bar(report: SelectionReport, budget: ContextBudget, colours: dict[str, str]) -> str:
    scale = max(budget.max_tokens, report.included_tokens, 1)
    by_kind: dict[str, tuple[str, int]] = {}
    for entry in report.included:
        key = ascii_fold(entry.item.kind)
        label, tokens = by_kind.get(key, (str(entry.item.kind), 0))
        by_kind[key] = (label, tokens + entry.item.tokens)
    segments = []
    legend = []
    for key, (label, tokens) in by_kind.items():
        percent = 100 * tokens / scale
        title = escape(f"{label}: {counted(tokens, 'token', grouped=True)}")
        segments.append(
            f'<div class="seg" style="width:{percent:.3f}%;background:{colours[key]}" title="{title}"></div>'
        )
        legend.append(
            f'<span><span class="swatch" style="background:{colours[key]}"></span>{escape(label)} '
            f"{tokens:,}</span>"
        )
    free = max(0.0, 100 - sum(100 * tokens / scale for _, tokens in by_kind.values()))
    segments.append(f'<div class="seg free" style="width:{free:.3f}%"></div>')
    target_left = min(100.0, 100 * budget.target_tokens / scale)
    segments.append(f'<div class="target" style="left:{target_left:.3f}%" title="target"></div>')
    pinned = sum(entry.item.tokens for entry in report.included if entry.item.pinned)
    legend.append(
        f"<span>used {report.included_tokens:,} / target {budget.target_tokens:,} / max "
        f"{budget.max_tokens:,} · pinned {pinned:,}</span>"
    )
    return (
        f'<div class="bar" role="img" aria-label="budget by kind">{"".join(segments)}</div>'
        f'<div class="legend">{"".join(legend)}</div>'
    )


def _score_plot(report: SelectionReport, colours: dict[str, str]) -> str:
    width, height, left, bottom, top, right = 760, 244, 44, 38, 12, 16
    count = len(report.included)
    plot_w = width - left - right
    plot_h = height - top - bottom
    scores = [entry.score for entry in report.included]
    high = max([1.0, *scores]) if scores else 1.0
    low = min([0.0, *scores]) if scores else 0.0
    span = (high - low) or 1.0

    def x(index: int) -> float:
        return left + (plot_w / 2 if count == 1 else plot_w * index / max(1, count - 1))

    def y(score: float) -> float:
        return top + plot_h * (1 - (score - low) / span)

    parts = [
        f'<svg id="score-plot" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'style="width:100%;max-width:{width * 1.3:.0f}px;height:auto" role="img" '
        'aria-label="score by position">',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#8a94a6"/>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#8a94a6"/>',
    ]
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>'
            f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + plot_w}" y2="{y(tick):.1f}" '
            f'stroke="#eef1f5"/>'
        )
    for position in _position_ticks(count):
        tick_x = x(position - 1)
        parts.append(
            f'<line x1="{tick_x:.1f}" y1="{top + plot_h}" x2="{tick_x:.1f}" y2="{top + plot_h + 4}" '
            f'stroke="#8a94a6"/><text class="xtick" x="{tick_x:.1f}" y="{top + plot_h + 15}" '
            f'text-anchor="middle">{position}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 2}" text-anchor="middle">position in the context '
        f"window (1 = first)</text>"
    )
    if count:
        points = " ".join(f"{x(i):.1f},{y(s):.1f}" for i, s in enumerate(scores))
        parts.append(f'<polyline points="{points}" fill="none" stroke="#8a94a6" stroke-width="1.5"/>')
        for index, entry in enumerate(report.included):
            colour = colours[ascii_fold(entry.item.kind)]
            label = escape(f"#{index + 1} {entry.item.kind} score {entry.score:.3f}")
            parts.append(
                f'<circle cx="{x(index):.1f}" cy="{y(entry.score):.1f}" r="5" fill="{colour}">'
                f"<title>{label}</title></circle>"
            )
    parts.append("</svg>")
    return "".join(parts)


def _position_ticks(count: int, most: int = 12) -> list[int]:
    """Positions 1..count to label on the x axis: all of them when few, else a round step and the last."""
    if count <= 0:
        return []
    step = 1
    for candidate in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        step = candidate
        if count / candidate <= most:
            break
    else:
        step = -(-count // most)
    ticks = [1, *range(step, count + 1, step)] if step > 1 else list(range(1, count + 1))
    if ticks[-1] != count:
        if count - ticks[-1] < step / 2 and len(ticks) > 1:
            ticks[-1] = count
        else:
            ticks.append(count)
    return sorted(set(ticks))


_PREVIEW_CHARS = 400


def _content(text: str) -> str:
    """Escaped item text; long text is folded into a <details> element (no script needed)."""
    if len(text) <= _PREVIEW_CHARS:
        return escape(text)
    return (
        f"{escape(text[:_PREVIEW_CHARS])}…<details><summary>show all {len(text):,} characters</summary>"
        f"{escape(text)}</details>"
    )


# (header, width in px or None for the rest, numeric)
_Column = tuple[str, int | None, bool]


def _table(table_id: str, columns: list[_Column], rows: list[list[str]]) -> str:
    """A fixed-layout table; cells are already-escaped HTML, numeric columns right-aligned."""
    widths = "".join(
        f'<col style="width:{width}px">' if width is not None else "<col>" for _, width, _ in columns
    )
    head = "".join(
        f'<th class="num">{header}</th>' if numeric else f"<th>{header}</th>"
        for header, _, numeric in columns
    )
    body = "".join(
        "<tr>"
        + "".join(f"<td{_cell_class(columns[n], n, len(columns))}>{cell}</td>" for n, cell in enumerate(row))
        + "</tr>"
        for row in rows
    )
    return (
        f'<table id="{table_id}"><colgroup>{widths}</colgroup><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _cell_class(column: _Column, position: int, count: int) -> str:
    if column[2]:
        return ' class="num"'
    # The last column always holds the item's text.
    return ' class="content"' if position == count - 1 else ""


def _included_table(report: SelectionReport) -> str:
    columns: list[_Column] = [
        ("#", 44, True),
        ("kind", 120, False),
        ("tokens", 80, True),
        ("score", 70, True),
        ("reason", 100, False),
        ("content", None, False),
    ]
    rows = [
        [
            str(position),
            escape(str(entry.item.kind)),
            f"{entry.item.tokens:,}",
            f"{entry.score:.3f}",
            f'<span class="reason">{escape(entry.reason.value)}</span>',
            _content(entry.item.content),
        ]
        for position, entry in enumerate(report.included, start=1)
    ]
    return _table("included", columns, rows)


def _excluded_table(report: SelectionReport) -> str:
    columns: list[_Column] = [
        ("score", 70, True),
        ("kind", 120, False),
        ("tokens", 80, True),
        ("reason", 260, False),
        ("content", None, False),
    ]
    rows = [
        [
            f"{entry.score:.3f}",
            escape(str(entry.item.kind)),
            f"{entry.item.tokens:,}",
            _reason_cell(entry.reason.name, entry.reason.details()),
            _content(entry.item.content),
        ]
        for entry in report.excluded
    ]
    return _table("excluded", columns, rows)


def _reason_cell(variant: str, details: str) -> str:
    """The variant once, in bold, then what its data says."""
    cell = f'<span class="reason">{escape(variant)}</span>'
    return f"{cell}<br>{escape(details)}" if details else cell


def render_html(
    report: SelectionReport, budget: ContextBudget, policy: str, entries: str | None = None
) -> str:
    """The whole report as one HTML document; ``entries`` replaces the included and excluded tables
    (a transcript's report is shown turn by turn, see ``cupel.cli._html_turns``)."""
    colours = _kind_colours(report)
    if entries is None:
        entries = (
            f"<h2>Included ({len(report.included)}, placed order)</h2>{_included_table(report)}"
            f"<h2>Excluded ({len(report.excluded)}, highest score first)</h2>{_excluded_table(report)}"
        )
    return page(
        f"cupel selection report · policy {policy}",
        f"{len(report.included)} of {counted(report.total_candidates, 'candidate')} included · "
        f"{counted(report.total_tokens_considered, 'token', grouped=True)} considered",
        f"<h2>Budget by kind</h2>{_budget_bar(report, budget, colours)}"
        f"<h2>Score by position</h2>{_score_plot(report, colours)}{entries}",
    )


def page(title: str, subtitle: str, body: str) -> str:
    """A self-contained document: no scripts, no network assets (CSP), the shared style."""
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; img-src data:\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1>"
        f'<p class="sub">{escape(subtitle)} · cupel {escape(__version__)}</p>'
        f"{body}</body></html>\n"
    )
