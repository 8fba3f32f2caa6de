"""The aggregate summary of a replay, per policy × budget, built from mergeable partial counts.

Each partition's rows are folded into counts and fixed-bin histograms (:func:`partial_summary`);
partials merge by addition (:func:`merge_partials`), so the summary is the same whatever the
partitioning, the worker count or the merge order. Percentiles are read from the histograms: budget
use in 5 % bins, selection time in logarithmic bins 12 % wide, each reported as its bin's upper edge.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Iterable, Mapping
from typing import Any

from cupel._plural import counted
from cupel.distributed.partition import GOLD_METRICS, MALFORMED, PINNED_OVERFLOW

__all__ = ["finish_summary", "merge_partials", "partial_summary", "render_summary"]

_USE_BINS = 20  # 0-5 %, ..., 95-100 %, then one bin for over 100 %
_TIME_STEPS_PER_DECADE = 20
_TIME_LOWEST = -4  # 10**-4 ms = 0.1 µs
_TIME_BINS = (4 - _TIME_LOWEST) * _TIME_STEPS_PER_DECADE + 1
# Sums are kept in fixed point (integers), so that they do not depend on the order of addition.
_FIXED = 10**12


def _fixed(value: float) -> int:
    return round(value * _FIXED)


def _use_bin(use: float) -> int:
    return min(_USE_BINS, max(0, math.ceil(use * _USE_BINS) - 1)) if use <= 1.0 else _USE_BINS


def _time_bin(ms: float) -> int:
    if ms <= 0:
        return 0
    position = math.ceil((math.log10(ms) - _TIME_LOWEST) * _TIME_STEPS_PER_DECADE)
    return min(_TIME_BINS - 1, max(0, position))


def _time_edge(index: int) -> float:
    return float(10 ** (_TIME_LOWEST + index / _TIME_STEPS_PER_DECADE))


def _empty() -> dict[str, Any]:
    return {
        "sessions": 0,
        "selected": 0,
        "malformed": 0,
        "pinned_overflow": 0,
        "selection_failed": 0,
        "use_sum": 0,
        "use_count": 0,
        "use_histogram": [0] * (_USE_BINS + 1),
        "time_histogram": [0] * _TIME_BINS,
        "time_max_ms": 0.0,
        "exclusions": {},
        "gold_sessions": 0,
        **{f"{name}_sum": 0 for name in GOLD_METRICS},
        **{f"{name}_count": 0 for name in GOLD_METRICS},
    }


def partial_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Counts and histograms for some rows, keyed by ``"policy @ budget"``."""
    partial: dict[str, dict[str, Any]] = {}
    for row in rows:
        key = f"{row['policy']} @ {row['budget']}"
        entry = partial.get(key)
        if entry is None:
            entry = partial[key] = {"policy": row["policy"], "budget": row["budget"], **_empty()}
        entry["sessions"] += 1
        kind = row["error_kind"]
        if isinstance(kind, str) and kind:
            field = {MALFORMED: "malformed", PINNED_OVERFLOW: "pinned_overflow"}.get(kind, "selection_failed")
            entry[field] += 1
            continue
        entry["selected"] += 1
        use = float(row["budget_use"])
        if not math.isnan(use):
            entry["use_sum"] += _fixed(use)
            entry["use_count"] += 1
            entry["use_histogram"][_use_bin(use)] += 1
        elapsed = float(row["elapsed_ms"])
        entry["time_histogram"][_time_bin(elapsed)] += 1
        entry["time_max_ms"] = max(entry["time_max_ms"], elapsed)
        for item_kind, reasons in json.loads(row["exclusions"]).items():
            target = entry["exclusions"].setdefault(item_kind, {})
            for reason, count in reasons.items():
                target[reason] = target.get(reason, 0) + count
        if not math.isnan(float(row["recall_items"])):
            entry["gold_sessions"] += 1
            for name in GOLD_METRICS:
                value = float(row[name])
                if not math.isnan(value):
                    entry[f"{name}_sum"] += _fixed(value)
                    entry[f"{name}_count"] += 1
    return partial


def merge_partials(partials: Iterable[Mapping[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """The sum of partial summaries (order does not matter)."""
    merged: dict[str, dict[str, Any]] = {}
    for partial in partials:
        for key, entry in partial.items():
            target = merged.setdefault(
                key, {"policy": entry["policy"], "budget": entry["budget"], **_empty()}
            )
            for field, value in entry.items():
                if field in ("policy", "budget"):
                    continue
                if field == "time_max_ms":
                    target[field] = max(target[field], value)
                elif field.endswith("histogram"):
                    target[field] = [a + b for a, b in zip(target[field], value, strict=True)]
                elif field == "exclusions":
                    for kind, reasons in value.items():
                        inner = target[field].setdefault(kind, {})
                        for reason, count in reasons.items():
                            inner[reason] = inner.get(reason, 0) + count
                else:
                    target[field] += value
    return merged


def _percentile(histogram: list[int], fraction: float) -> int | None:
    total = sum(histogram)
    if total == 0:
        return None
    wanted = max(1, math.ceil(fraction * total))
    running = 0
    for index, count in enumerate(histogram):
        running += count
        if running >= wanted:
            return index
    return len(histogram) - 1


def _use_edge(index: int | None) -> float | None:
    if index is None:
        return None
    return None if index == _USE_BINS else (index + 1) / _USE_BINS


def finish_summary(merged: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The summary document: one entry per policy × budget, in sorted order (JSON-ready)."""
    entries = []
    for key in sorted(merged):
        entry = merged[key]
        use_histogram = list(entry["use_histogram"])
        time_histogram = list(entry["time_histogram"])
        quality: dict[str, Any] = {"sessions_with_gold": entry["gold_sessions"]}
        for name in GOLD_METRICS:
            count = entry[f"{name}_count"]
            quality[name] = entry[f"{name}_sum"] / _FIXED / count if count else None
        entries.append(
            {
                "policy": entry["policy"],
                "budget": entry["budget"],
                "sessions": entry["sessions"],
                "selected": entry["selected"],
                "malformed": entry["malformed"],
                "pinned_overflow": entry["pinned_overflow"],
                "selection_failed": entry["selection_failed"],
                "budget_use": {
                    "mean": entry["use_sum"] / _FIXED / entry["use_count"] if entry["use_count"] else None,
                    **{
                        f"p{round(q * 100)}": _use_edge(_percentile(use_histogram, q))
                        for q in (0.1, 0.5, 0.9)
                    },
                    "over_budget": use_histogram[_USE_BINS],
                    "histogram_5pct": use_histogram,
                },
                "exclusions_by_kind": {
                    kind: dict(sorted(reasons.items()))
                    for kind, reasons in sorted(entry["exclusions"].items())
                },
                "selection_ms": {
                    **{
                        f"p{round(q * 100)}": _time_percentile(time_histogram, q, entry["time_max_ms"])
                        for q in (0.5, 0.9, 0.99)
                    },
                    "max": entry["time_max_ms"] if entry["selected"] else None,
                },
                "eval": quality,
            }
        )
    return {"format": "cupel-replay-summary/1", "runs": entries}


def _time_percentile(histogram: list[int], fraction: float, maximum: float) -> float | None:
    """The upper edge of the bin holding the percentile, never above the largest time seen."""
    index = _percentile(histogram, fraction)
    return None if index is None else min(_time_edge(index), maximum)


def render_summary(summary: Mapping[str, Any], format: str = "text") -> str:
    """The summary as ``text``, ``json`` or ``html``."""
    if format == "json":
        return json.dumps(summary, indent=2, ensure_ascii=False) + "\n"
    if format == "html":
        return _html(summary)
    if format != "text":
        raise ValueError(f"format: expected text, json or html, got {format!r}")
    lines = []
    for run in summary["runs"]:
        use = run["budget_use"]
        times = run["selection_ms"]
        lines.append(f"{run['policy']} @ budget {run['budget']}: {counted(run['sessions'], 'session')}")
        lines.append(
            f"  selected {run['selected']}, malformed {run['malformed']}, "
            f"pinned overflow {run['pinned_overflow']}, other selection errors {run['selection_failed']}"
        )
        lines.append(
            f"  budget use: mean {_pct(use['mean'])}, p10 {_pct(use['p10'])}, p50 {_pct(use['p50'])}, "
            f"p90 {_pct(use['p90'])}, over budget {use['over_budget']}"
        )
        lines.append(
            f"  selection time: p50 {_ms(times['p50'])}, p90 {_ms(times['p90'])}, "
            f"p99 {_ms(times['p99'])}, max {_ms(times['max'], exact=True)}"
        )
        for kind, reasons in run["exclusions_by_kind"].items():
            counts = ", ".join(f"{reason} {count}" for reason, count in reasons.items())
            lines.append(f"  excluded {kind}: {counts}")
        quality = run["eval"]
        if quality["sessions_with_gold"]:
            means = ", ".join(f"{name} {_mean(quality[name])}" for name in GOLD_METRICS)
            lines.append(
                f"  eval means ({counted(quality['sessions_with_gold'], 'session')} with gold): {means}"
            )
    return "\n".join(lines) + "\n"


def _mean(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _ms(value: float | None, *, exact: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:.3g} ms" if exact or value == 0 else f"≤{value:.3g} ms"


def _html(summary: Mapping[str, Any]) -> str:
    head = (
        "<tr><th>policy</th><th>budget</th><th>sessions</th><th>malformed</th><th>pinned overflow</th>"
        "<th>budget use p50</th><th>p90</th><th>selection p50</th><th>p99</th><th>exclusions</th>"
        "<th>recall (items)</th><th>all gold</th></tr>"
    )
    body = []
    for run in summary["runs"]:
        use, times, quality = run["budget_use"], run["selection_ms"], run["eval"]
        exclusions = "; ".join(
            f"{kind}: " + ", ".join(f"{reason} {count}" for reason, count in reasons.items())
            for kind, reasons in run["exclusions_by_kind"].items()
        )
        cells = [
            run["policy"],
            run["budget"],
            run["sessions"],
            run["malformed"],
            run["pinned_overflow"],
            _pct(use["p50"]),
            _pct(use["p90"]),
            _ms(times["p50"]),
            _ms(times["p99"]),
            exclusions,
            _mean(quality["recall_items"]),
            _mean(quality["all_gold"]),
        ]
        body.append("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in cells) + "</tr>")
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>cupel replay</title>'
        "<style>table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px}</style>"
        "</head><body><h1>cupel replay</h1><table>" + head + "".join(body) + "</table></body></html>\n"
    )
