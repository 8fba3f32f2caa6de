"""SelectionReport contents and reason rules (spec: Diagnostics, SelectionReport; docs/spec-notes.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from tests.strategies import SAMPLE_PIPELINES as PIPELINES
from tests.strategies import budgets, item_lists

from cupel import (
    BudgetExceeded,
    BudgetOverflowError,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    Deduplicated,
    Filtered,
    GreedySlice,
    InclusionReason,
    KindScorer,
    NegativeTokens,
    PinnedItemsExceedBudgetError,
    PinnedOverride,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ScoredItem,
    ScoredTooLow,
    SelectionReport,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_every_reason_in_one_report() -> None:
    items = [
        ContextItem("neg", -3),
        ContextItem("dup", 10, timestamp=T0),
        ContextItem("dup", 10, timestamp=T0 + timedelta(hours=1)),
        ContextItem("huge", 900, timestamp=T0 + timedelta(hours=2)),
        ContextItem("pin", 60, pinned=True),
        ContextItem("free", 0),
        ContextItem("displaced", 50, timestamp=T0 + timedelta(hours=3)),
    ]
    report = Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer()).dry_run(
        items, ContextBudget(1000, 100)
    )
    assert [(e.item.content, e.reason) for e in report.included] == [
        ("dup", InclusionReason.SCORED),
        ("pin", InclusionReason.PINNED),
        ("free", InclusionReason.ZERO_TOKEN),
    ]
    reasons = {e.item.content: e.reason for e in report.excluded}
    assert reasons["neg"] == NegativeTokens(-3)
    assert reasons["dup"] == Deduplicated("dup")
    assert reasons["huge"] == BudgetExceeded(900, 30)
    assert reasons["displaced"] == PinnedOverride("pin")
    scores = [e.score for e in report.excluded]
    assert scores == sorted(scores, reverse=True)
    assert report.total_candidates == len(items)
    assert report.total_tokens_considered == sum(i.tokens for i in items)
    assert report.items == [i for i in report.items]


def test_excluded_ties_keep_exclusion_order() -> None:
    items = [ContextItem("n1", -1), ContextItem("a", 500), ContextItem("n2", -2), ContextItem("b", 600)]
    report = Pipeline(KindScorer({}), GreedySlice(), ChronologicalPlacer()).dry_run(
        items, ContextBudget(100, 100)
    )
    # all scores 0.0: Classify exclusions (n1, n2) come before Slice exclusions (a, b).
    assert [e.item.content for e in report.excluded] == ["n1", "n2", "a", "b"]


class TakeFirst:
    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return [scored[0].item] if scored else []


def test_available_tokens_defaults_to_leftover_for_plain_slicers() -> None:
    items = [ContextItem("a", 30, priority=2), ContextItem("b", 80, priority=1)]
    report = Pipeline(PriorityScorer(), TakeFirst(), ChronologicalPlacer()).dry_run(
        items, ContextBudget(100, 100)
    )
    assert report.excluded[0].reason == BudgetExceeded(80, 70)


def test_an_unexplained_item_that_fitted_is_scored_too_low_or_filtered() -> None:
    # b fitted (10 of the 70 left) and scored below a, the lowest score TakeFirst kept.
    items = [ContextItem("a", 30, priority=2), ContextItem("b", 10, priority=1)]
    pipeline = Pipeline(PriorityScorer(), TakeFirst(), ChronologicalPlacer(), deduplication=False)
    report = pipeline.dry_run(items, ContextBudget(100, 100))
    assert report.excluded[0].reason == ScoredTooLow(0.0, 1.0)
    # Equal scores: the slicer's choice is its own, so the report names the slicer.
    twins = [ContextItem("a", 30, priority=1), ContextItem("b", 10, priority=1)]
    report = pipeline.dry_run(twins, ContextBudget(100, 100))
    assert report.excluded[0].reason == Filtered("TakeFirst")
    assert report.excluded[0].reason.describe() == "Filtered: left out by TakeFirst"


def test_pinned_override_names_the_largest_pinned_item() -> None:
    items = [
        ContextItem("p-small", 10, pinned=True),
        ContextItem("p-large", 80, pinned=True),
        ContextItem("m", 40),
    ]
    report = Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer()).dry_run(
        items, ContextBudget(1000, 100)
    )
    assert report.excluded[0].reason == PinnedOverride("p-large")


def test_item_too_big_even_without_pinned_is_budget_exceeded() -> None:
    items = [ContextItem("pin", 10, pinned=True), ContextItem("m", 500)]
    report = Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer()).dry_run(
        items, ContextBudget(1000, 100)
    )
    assert report.excluded[0].reason == BudgetExceeded(500, 90)


@given(items=item_lists(allow_negative=True), budget=budgets(), which=st.integers(0, len(PIPELINES) - 1))
def test_dry_run_agrees_with_run(items: list[ContextItem], budget: ContextBudget, which: int) -> None:
    pipeline = PIPELINES[which]
    try:
        expected = pipeline.run(items, budget)
    except (PinnedItemsExceedBudgetError, BudgetOverflowError):
        return
    report = pipeline.dry_run(items, budget)
    assert [id(i) for i in report.items] == [id(i) for i in expected]
    assert report.total_candidates == len(report.included) + len(report.excluded) == len(items)
    considered = sorted(id(e.item) for e in (*report.included, *report.excluded))
    assert considered == sorted(id(i) for i in items)
    assert report.total_tokens_considered == sum(i.tokens for i in items)
    scores = [e.score for e in report.excluded]
    assert scores == sorted(scores, reverse=True)
    text = report.to_json()
    assert SelectionReport.from_json(text).to_json() == text
