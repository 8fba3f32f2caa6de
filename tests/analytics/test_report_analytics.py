"""Report analytics: budget utilization, kind diversity, timestamp coverage, quota utilization."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest
from hypothesis import given

from cupel import (
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    IncludedItem,
    InclusionReason,
    Pipeline,
    ReflexiveScorer,
    SelectionReport,
)
from cupel.analytics import (
    KindQuotaUtilization,
    QuotaMode,
    budget_utilization,
    kind_diversity,
    quota_utilization,
    timestamp_coverage,
)
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaSlice,
)
from tests.strategies import budgets, item_lists

T = datetime(2024, 1, 1, tzinfo=UTC)


def report_of(*items: ContextItem) -> SelectionReport:
    included = tuple(IncludedItem(item, 0.5, InclusionReason.SCORED) for item in items)
    return SelectionReport((), included, (), len(items), sum(item.tokens for item in items))


def test_budget_utilization_uses_max_tokens() -> None:
    report = report_of(ContextItem("a", 30), ContextItem("b", 20))
    assert budget_utilization(report, ContextBudget(200, 50)) == 0.25
    assert budget_utilization(report_of(), ContextBudget(200, 50)) == 0.0


def test_budget_utilization_with_zero_max_tokens() -> None:
    assert budget_utilization(report_of(ContextItem("free", 0)), ContextBudget(0, 0)) == 0.0
    assert budget_utilization(report_of(ContextItem("a", 1)), ContextBudget(0, 0)) == math.inf


def test_kind_diversity_is_case_insensitive() -> None:
    report = report_of(
        ContextItem("a", 1, kind="Message"),
        ContextItem("b", 1, kind="message"),
        ContextItem("c", 1, kind="ToolOutput"),
    )
    assert kind_diversity(report) == 2
    assert kind_diversity(report_of()) == 0


def test_timestamp_coverage() -> None:
    report = report_of(
        ContextItem("a", 1, timestamp=T), ContextItem("b", 1), ContextItem("c", 1), ContextItem("d", 1)
    )
    assert timestamp_coverage(report) == 0.25
    assert timestamp_coverage(report_of()) == 0.0
    assert timestamp_coverage(report_of(ContextItem("a", 1, timestamp=T))) == 1.0


def test_argument_types() -> None:
    with pytest.raises(CupelTypeError, match="report must be a SelectionReport"):
        kind_diversity([])  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="budget must be a ContextBudget"):
        budget_utilization(report_of(), 100)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="quota_slicer must be a QuotaSlice"):
        quota_utilization(report_of(), GreedySlice(), ContextBudget(10, 10))


@given(items=item_lists(allow_pinned=False), budget=budgets())
def test_metrics_on_real_runs(items: list[ContextItem], budget: ContextBudget) -> None:
    report = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer()).dry_run(items, budget)
    included = [entry.item for entry in report.included]
    if budget.max_tokens:
        assert budget_utilization(report, budget) == sum(item.tokens for item in included) / budget.max_tokens
        assert 0.0 <= budget_utilization(report, budget) <= 1.0
    assert kind_diversity(report) == len({item.kind for item in included})
    coverage = timestamp_coverage(report)
    assert 0.0 <= coverage <= 1.0
    if included:
        assert coverage == sum(item.timestamp is not None for item in included) / len(included)


def test_quota_utilization_percentage_mode() -> None:
    slicer = QuotaSlice([("Message", 10, 50), ("Document", 0, 20), ("Memory", 0, 0)], GreedySlice())
    report = report_of(
        ContextItem("m1", 20),
        ContextItem("m2", 10, kind="message"),
        ContextItem("d1", 30, kind="Document"),  # 30% of the target against a 20% cap: clamped to 1.0
        ContextItem("t1", 40, kind="ToolOutput"),  # no quota entry: not reported
    )
    rows = quota_utilization(report, slicer, ContextBudget(100, 100))
    assert rows == (
        KindQuotaUtilization(rows[0].kind, QuotaMode.PERCENTAGE, 0.0, 20.0, 30.0, 1.0),
        KindQuotaUtilization(rows[1].kind, QuotaMode.PERCENTAGE, 0.0, 0.0, 0.0, 0.0),
        KindQuotaUtilization(rows[2].kind, QuotaMode.PERCENTAGE, 10.0, 50.0, 30.0, 0.6),
    )
    assert [str(row.kind) for row in rows] == ["Document", "Memory", "Message"]  # sorted by kind
    zero_target = quota_utilization(report, slicer, ContextBudget(100, 0))
    assert all(row.actual == 0.0 and row.utilization == 0.0 for row in zero_target)


@pytest.mark.parametrize(
    "slicer",
    [
        CountQuotaSlice(
            [CountQuotaEntry("ToolOutput", 1, 4), CountQuotaEntry("Memory", 0, 0)], GreedySlice()
        ),
        CountConstrainedKnapsackSlice(
            [CountQuotaEntry("ToolOutput", 1, 4), CountQuotaEntry("Memory", 0, 0)], KnapsackSlice(1)
        ),
    ],
    ids=["CountQuotaSlice", "CountConstrainedKnapsackSlice"],
)
def test_quota_utilization_count_mode(slicer: object) -> None:
    report = report_of(
        ContextItem("t1", 5, kind="ToolOutput"),
        ContextItem("t2", 5, kind="tooloutput"),
        ContextItem("t3", 5, kind="ToolOutput", pinned=True),  # pinned items count: they are in the window
        ContextItem("m", 5),
    )
    rows = quota_utilization(report, slicer, ContextBudget(100, 100))
    assert [(str(r.kind), r.mode, r.require, r.cap, r.actual, r.utilization) for r in rows] == [
        ("Memory", QuotaMode.COUNT, 0.0, 0.0, 0.0, 0.0),
        ("ToolOutput", QuotaMode.COUNT, 1.0, 4.0, 3.0, 0.75),
    ]


def test_quota_utilization_on_a_real_run() -> None:
    slicer = QuotaSlice([("Document", 0, 30)], GreedySlice())
    items = [ContextItem(f"doc {n}", 10, kind="Document", future_relevance_hint=0.9) for n in range(5)]
    items += [ContextItem(f"msg {n}", 10, future_relevance_hint=0.1) for n in range(5)]
    budget = ContextBudget(100, 100)
    report = Pipeline(ReflexiveScorer(), slicer, ChronologicalPlacer()).dry_run(items, budget)
    (row,) = quota_utilization(report, slicer, budget)
    assert row.actual == 30.0 and row.utilization == 1.0
