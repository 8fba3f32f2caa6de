"""Rendering an EvalResult: a text report, JSON, and the Markdown comparison table used in the docs."""

from __future__ import annotations

import json
from collections import Counter

from cupel._plural import counted
from cupel.eval.metrics import METRICS
from cupel.eval.result import BASELINES, EvalResult
from cupel.eval.stats import Summary

__all__ = ["render_json", "render_markdown", "render_text"]

_LABELS = {
    "recent": "recent (baseline)",
    "bm25": "bm25 (baseline)",
    "random": "random (baseline)",
    "oracle": "oracle (bound)",
}


def label(selector: str) -> str:
    """A selector's display name: baselines are marked as such."""
    return _LABELS.get(selector, selector)


def _number(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _share(result: EvalResult, selector: str, budget: int, tag: str | None = None) -> str:
    share = result.share_of_oracle(selector, budget, tag)
    return "–" if share is None else f"{100 * share:.0f}%"


def _interval(summary: Summary) -> str:
    if summary.mean is None:
        return "–"
    return f"{summary.mean:.2f} [{summary.ci_low:.2f}, {summary.ci_high:.2f}]"


def describe_cases(result: EvalResult) -> str:
    tags = Counter(tag for case in result.cases for tag in case.tags[:1])
    listed = ", ".join(f"{tag} {count}" for tag, count in tags.items())
    return counted(len(result.cases), "case") + (f" ({listed})" if listed else "")


def render_text(result: EvalResult, *, timings: bool = True) -> str:
    """The report a terminal shows: recall with CIs per budget, then every metric per budget."""
    width = max(len(label(selector)) for selector in result.selectors) + 2
    lines = [
        f"cupel eval · {describe_cases(result)} · budgets "
        f"{', '.join(f'{b:,}' for b in result.budgets)} tokens",
        "",
        "Gold recall by items: mean [95% CI] (share of the oracle)",
        " " * width + "".join(f"{'budget ' + format(b, ','):<27}" for b in result.budgets),
    ]
    for selector in result.selectors:
        cells = [
            f"{_interval(result.summary(selector, b, 'recall_items')):<19}{_share(result, selector, b):>5}   "
            for b in result.budgets
        ]
        lines.append(f"{label(selector):<{width}}" + "".join(cells).rstrip())
    header = f"{'':<{width}}{'recall':>7}{'tokens':>8}{'all':>6}{'middle':>8}{'used':>6}{'valid':>7}"
    if timings:
        header += f"{'ms':>8}"
    header += f"{'errors':>8}"
    for budget in result.budgets:
        lines += [
            "",
            f"Budget {budget:,}: means (recall by items and by tokens, all-gold rate, middle-third "
            "exposure, budget use, valid chats" + (", median ms" if timings else "") + ")",
            header,
        ]
        for selector in result.selectors:
            summary = {m: result.summary(selector, budget, m) for m in METRICS}
            row = (
                f"{label(selector):<{width}}{_number(summary['recall_items'].mean):>7}"
                f"{_number(summary['recall_tokens'].mean):>8}{_number(summary['all_gold'].mean):>6}"
                f"{_number(summary['middle_exposure'].mean):>8}{_number(summary['budget_use'].mean):>6}"
                f"{_number(summary['valid'].mean):>7}"
            )
            if timings:
                row += f"{_number(summary['time_ms'].median, 3):>8}"
            lines.append(row + f"{result.errors(selector, budget):>8}")
    types = result.task_types
    if len(types) > 1:
        column = max(6, *(len(tag) + 2 for tag in types))
        for budget in result.budgets:
            lines += ["", f"Gold recall by items per task type (first tag), budget {budget:,}"]
            lines.append(f"{'':<{width}}" + "".join(f"{tag:>{column}}" for tag in types))
            for selector in result.selectors:
                means = [result.summary(selector, budget, "recall_items", tag).mean for tag in types]
                lines.append(
                    f"{label(selector):<{width}}" + "".join(f"{_number(m):>{column}}" for m in means)
                )
    return "\n".join(line.rstrip() for line in lines) + "\n"


def render_json(result: EvalResult, *, timings: bool = True) -> str:
    return json.dumps(result.to_dict(timings=timings), indent=2, ensure_ascii=False) + "\n"


def render_markdown(result: EvalResult) -> str:
    """The comparison table: mean gold recall by items and its share of the oracle, per budget."""
    head = "| policy | " + " | ".join(f"{b:,} tokens" for b in result.budgets) + " |"
    rule = "| --- | " + " | ".join("---" for _ in result.budgets) + " |"
    rows = []
    for selector in result.selectors:
        cells = []
        for budget in result.budgets:
            mean = result.summary(selector, budget, "recall_items").mean
            cell = _number(mean)
            if selector != "oracle":
                cell += f" ({_share(result, selector, budget)})"
            cells.append(cell)
        name = f"`{selector}`" if selector not in BASELINES else label(selector)
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join([head, rule, *rows]) + "\n"
