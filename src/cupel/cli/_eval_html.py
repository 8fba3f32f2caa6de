"""The HTML evaluation report: recall-vs-budget curves per policy with the baselines and the oracle,
and the metric tables -- built with the explain report's page, palette and table machinery."""

from __future__ import annotations

import math
from html import escape

from cupel._plural import counted
from cupel.cli._html import _PALETTE, _Column, _table, page
from cupel.eval.report import describe_cases, label
from cupel.eval.result import EvalResult

_BASELINE_STYLE = {
    "recent": ("#5b6577", "6 4"),
    "bm25": ("#7a5b9a", "4 2"),
    "random": ("#a0a8b8", "2 4"),
    "oracle": ("#1d2430", "10 3"),
}


def _curves(result: EvalResult) -> str:
    width, height, left, bottom, top, right = 760, 300, 48, 36, 14, 170
    plot_w, plot_h = width - left - right, height - top - bottom
    budgets = result.budgets
    logs = [math.log(budget) for budget in budgets]
    low, high = min(logs), max(logs)

    def x(budget: int) -> float:
        if high == low:
            return left + plot_w / 2
        return left + plot_w * (math.log(budget) - low) / (high - low)

    def y(value: float) -> float:
        return top + plot_h * (1 - value)

    parts = [
        f'<svg id="recall-curves" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
        f'style="width:100%;max-width:{width * 1.3:.0f}px;height:auto" role="img" '
        'aria-label="gold recall by budget">',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#8a94a6"/>',
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" stroke="#8a94a6"/>',
    ]
    for tick in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.2f}</text>'
            f'<line x1="{left}" y1="{y(tick):.1f}" x2="{left + plot_w}" y2="{y(tick):.1f}" stroke="#eef1f5"/>'
        )
    for budget in budgets:
        parts.append(
            f'<text x="{x(budget):.1f}" y="{top + plot_h + 16}" text-anchor="middle">{budget:,}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle">'
        "budget (tokens, log scale)</text>"
    )
    for position, selector in enumerate(result.selectors):
        colour, dash = _BASELINE_STYLE.get(selector, (_PALETTE[position % len(_PALETTE)], ""))
        points = [
            (budget, mean)
            for budget in budgets
            if (mean := result.summary(selector, budget, "recall_items").mean) is not None
        ]
        coordinates = " ".join(f"{x(b):.1f},{y(v):.1f}" for b, v in points)
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(
            f'<polyline class="curve" data-selector="{escape(selector)}" points="{coordinates}" fill="none" '
            f'stroke="{colour}" stroke-width="2"{dashes}><title>{escape(label(selector))}</title></polyline>'
        )
        for budget, value in points:
            parts.append(
                f'<circle cx="{x(budget):.1f}" cy="{y(value):.1f}" r="3.5" fill="{colour}">'
                f"<title>{escape(label(selector))} · budget {budget:,} · recall {value:.3f}</title></circle>"
            )
        legend_y = top + 14 * position + 6
        parts.append(
            f'<line x1="{left + plot_w + 14}" y1="{legend_y}" x2="{left + plot_w + 38}" y2="{legend_y}" '
            f'stroke="{colour}" stroke-width="2"{dashes}/>'
            f'<text x="{left + plot_w + 44}" y="{legend_y + 4}">{escape(label(selector))}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _recall_table(result: EvalResult, tag: str | None = None) -> str:
    columns: list[_Column] = [("policy", 170, False)] + [
        (counted(b, "token", grouped=True), None, True) for b in result.budgets
    ]
    rows = []
    for selector in result.selectors:
        cells = [escape(label(selector))]
        for budget in result.budgets:
            summary = result.summary(selector, budget, "recall_items", tag)
            share = result.share_of_oracle(selector, budget, tag)
            text = (
                "–"
                if summary.mean is None
                else (
                    f"{summary.mean:.2f} [{summary.ci_low:.2f}, {summary.ci_high:.2f}]"
                    + ("" if share is None else f" · {100 * share:.0f}%")
                )
            )
            cells.append(escape(text))
        rows.append(cells)
    return _table("recall" if tag is None else f"recall-{escape(tag)}", columns, rows)


_METRIC_COLUMNS: list[tuple[str, str]] = [
    ("recall_items", "recall"),
    ("recall_tokens", "recall (tokens)"),
    ("all_gold", "all gold"),
    ("middle_exposure", "middle third"),
    ("budget_use", "budget use"),
    ("valid", "valid chats"),
]


def _metrics_table(result: EvalResult, budget: int) -> str:
    columns: list[_Column] = [("policy", 170, False)] + [(name, None, True) for _, name in _METRIC_COLUMNS]
    columns += [("median ms", None, True), ("errors", 70, True)]
    rows = []
    for selector in result.selectors:
        cells = [escape(label(selector))]
        cells += [_fmt(result.summary(selector, budget, metric).mean) for metric, _ in _METRIC_COLUMNS]
        cells.append(_fmt(result.summary(selector, budget, "time_ms").median, 3))
        cells.append(str(result.errors(selector, budget)))
        rows.append(cells)
    return _table(f"metrics-{budget}", columns, rows)


def render_eval_html(result: EvalResult) -> str:
    """The whole evaluation report as one HTML document."""
    body = [
        "<h2>Gold recall by budget</h2>",
        _curves(result),
        "<h2>Gold recall by items: mean [95% CI] · share of the oracle</h2>",
        _recall_table(result),
    ]
    for budget in result.budgets:
        body.append(f"<h2>Budget {budget:,}: metric means</h2>{_metrics_table(result, budget)}")
    for tag in result.task_types if len(result.task_types) > 1 else ():
        body.append(f"<h2>Tag {escape(tag)}: gold recall by items</h2>{_recall_table(result, tag)}")
    return page(
        "cupel evaluation report",
        f"{describe_cases(result)} · {counted(len(result.policies), 'policy', 'policies')} · "
        f"seed {result.seed}",
        "".join(body),
    )
