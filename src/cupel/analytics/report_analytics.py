"""Analytics over a :class:`~cupel.diagnostics.report.SelectionReport` (spec: Cupel.Testing, Notes on
BudgetUtilization, KindDiversity and TimestampCoverage; QuotaUtilization is cupel's own).

All functions are pure: they read the report (and budget or slicer) and never run a pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextKind
from cupel.slicers import CountQuotaEntry, QuotaSet

__all__ = [
    "KindQuotaUtilization",
    "QuotaMode",
    "budget_utilization",
    "kind_diversity",
    "quota_utilization",
    "timestamp_coverage",
]


def _check_report(report: object) -> SelectionReport:
    if not isinstance(report, SelectionReport):
        raise CupelTypeError(f"report must be a SelectionReport, got {type(report).__name__}")
    return report


def _check_budget(budget: object) -> ContextBudget:
    if not isinstance(budget, ContextBudget):
        raise CupelTypeError(f"budget must be a ContextBudget, got {type(budget).__name__}")
    return budget


def budget_utilization(report: SelectionReport, budget: ContextBudget) -> float:
    """Included tokens over ``budget.max_tokens`` (spec: PD-2, the denominator is max_tokens).

    cupel allows ``max_tokens == 0``: the utilization is then 0.0 with no included tokens and
    ``math.inf`` otherwise, as in :mod:`cupel.testing`'s HaveBudgetUtilizationAbove.
    """
    included_tokens = _check_report(report).included_tokens
    max_tokens = _check_budget(budget).max_tokens
    if max_tokens > 0:
        return included_tokens / max_tokens
    return 0.0 if included_tokens == 0 else float("inf")


def kind_diversity(report: SelectionReport) -> int:
    """How many distinct kinds are included, compared case-insensitively (spec: ContextKind)."""
    return len({entry.item.kind.folded for entry in _check_report(report).included})


def timestamp_coverage(report: SelectionReport) -> float:
    """The share of included items that carry a timestamp; 0.0 when nothing is included."""
    included = _check_report(report).included
    if not included:
        return 0.0
    return sum(1 for entry in included if entry.item.timestamp is not None) / len(included)


class QuotaMode(StrEnum):
    """What a quota constrains: a percentage of the target budget, or an item count."""

    PERCENTAGE = "percentage"
    COUNT = "count"


@dataclass(frozen=True, slots=True)
class KindQuotaUtilization:
    """How much of one kind's quota cap the included items use.

    In ``PERCENTAGE`` mode ``require``, ``cap`` and ``actual`` are percentages of
    ``budget.target_tokens``; in ``COUNT`` mode they are item counts. ``utilization`` is
    ``actual / cap`` clamped to [0.0, 1.0], and 0.0 when ``cap`` is 0.
    """

    kind: ContextKind
    mode: QuotaMode
    require: float
    cap: float
    actual: float
    utilization: float


def _utilization(actual: float, cap: float) -> float:
    if cap <= 0:
        return 0.0
    return min(max(actual / cap, 0.0), 1.0)


def quota_utilization(
    report: SelectionReport, quota_slicer: Any, budget: ContextBudget
) -> tuple[KindQuotaUtilization, ...]:
    """Per configured kind, the included items measured against the slicer's quota; sorted by kind.

    ``quota_slicer`` is a :class:`~cupel.slicers.QuotaSlice` (percentage mode: the kind's included
    tokens as a percentage of ``budget.target_tokens``, 0.0 when the target is 0) or a
    :class:`~cupel.slicers.CountQuotaSlice` / :class:`~cupel.slicers.CountConstrainedKnapsackSlice`
    (count mode: the kind's included items). Every included item of the kind counts, pinned ones too:
    this measures the window, not the slicer's share of it. Kinds without a quota entry are not
    reported. Kinds sort by their case-folded name.
    """
    report = _check_report(report)
    budget = _check_budget(budget)
    included = report.included
    rows: list[KindQuotaUtilization] = []
    quotas = getattr(quota_slicer, "quotas", None)
    entries = getattr(quota_slicer, "entries", None)
    if isinstance(quotas, QuotaSet):
        target = budget.target_tokens
        for quota in quotas:
            tokens = sum(entry.item.tokens for entry in included if entry.item.kind == quota.kind)
            actual = tokens / target * 100.0 if target > 0 else 0.0
            rows.append(
                KindQuotaUtilization(
                    quota.kind,
                    QuotaMode.PERCENTAGE,
                    quota.require,
                    quota.cap,
                    actual,
                    _utilization(actual, quota.cap),
                )
            )
    elif isinstance(entries, tuple) and all(isinstance(entry, CountQuotaEntry) for entry in entries):
        for count_entry in entries:
            count = sum(1 for entry in included if entry.item.kind == count_entry.kind)
            rows.append(
                KindQuotaUtilization(
                    count_entry.kind,
                    QuotaMode.COUNT,
                    float(count_entry.require_count),
                    float(count_entry.cap_count),
                    float(count),
                    _utilization(count, count_entry.cap_count),
                )
            )
    else:
        raise CupelTypeError(
            "quota_slicer must be a QuotaSlice, CountQuotaSlice or CountConstrainedKnapsackSlice, "
            f"got {quota_slicer!r}"
        )
    rows.sort(key=lambda row: row.kind.folded)
    return tuple(rows)
