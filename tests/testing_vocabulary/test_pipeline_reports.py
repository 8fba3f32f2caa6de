"""The testing vocabulary over reports from real ``Pipeline.dry_run`` runs."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    BudgetExceeded,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    ContextKind,
    Deduplicated,
    GreedySlice,
    NegativeTokens,
    OverflowStrategy,
    PinnedOverride,
    Pipeline,
    ReflexiveScorer,
    ScoredItem,
    SelectionReport,
    UShapedPlacer,
)
from cupel.testing import SelectionReportAssertionError, should


def item(content: str, tokens: int, hint: float = 0.5, **fields: object) -> ContextItem:
    return ContextItem(content, tokens, future_relevance_hint=hint, **fields)  # type: ignore[arg-type]


def mixed_run() -> SelectionReport:
    """One run that excludes an item for each of NegativeTokens, Deduplicated, BudgetExceeded and
    PinnedOverride (at Slice)."""
    items = [
        item("negative", -1),
        item("answer", 10, 0.9),
        item("answer", 10, 0.3),
        item("big", 100, 0.8),
        item("system", 30, pinned=True, kind="SystemPrompt"),
        # 35 tokens: over the effective target (60 - 30 pinned) but within the target itself.
        item("tool", 35, 0.4, kind="ToolOutput"),
    ]
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer())
    return pipeline.dry_run(items, ContextBudget(100, 60))


class TakeEverything:
    """A slicer that ignores the budget, so Place has to truncate."""

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return [entry.item for entry in scored]


def test_mixed_run_passes_a_full_chain() -> None:
    report = mixed_run()
    (
        should(report)
        .include_item_with_kind("SystemPrompt")
        .include_item_with_kind(ContextKind.MESSAGE)
        .include_item_matching(lambda entry: entry.item.pinned and entry.score == 1.0)
        .include_exactly_n_items_with_kind("message", 1)
        .include_exactly_n_items_with_kind("ToolOutput", 0)
        .exclude_item_with_reason(NegativeTokens)
        .exclude_item_with_reason("Deduplicated")
        .exclude_item_with_reason(BudgetExceeded(0, 0))
        .exclude_item_with_reason(PinnedOverride)
        .exclude_item_matching_with_reason(lambda candidate: candidate.content == "answer", Deduplicated)
        .exclude_item_matching_with_reason(lambda candidate: candidate.kind == "ToolOutput", PinnedOverride)
        .exclude_item_with_budget_details(lambda candidate: candidate.content == "big", 100, 20)
        .have_no_exclusions_for_kind("SystemPrompt")
        .have_at_least_n_exclusions(4)
        .excluded_items_are_sorted_by_score_descending()
        .have_budget_utilization_above(0.4, ContextBudget(100, 60))
        .have_kind_coverage_count(2)
        .place_item_at_edge(lambda entry: entry.item.content == "system")
        .place_top_n_scored_at_edges(2)
    )


def test_mixed_run_failure_messages() -> None:
    report = mixed_run()
    cases: list[tuple[Callable[[], object], str]] = [
        (
            lambda: should(report).include_item_with_kind("Memory"),
            "IncludeItemWithKind(Memory) failed: Included contained 0 items with Kind=Memory. "
            "Included had 2 items with kinds: [SystemPrompt, Message].",
        ),
        (
            lambda: should(report).exclude_item_with_reason("Filtered"),
            "ExcludeItemWithReason(Filtered) failed: no excluded item had reason Filtered. Excluded had 4 "
            "items with reasons: [BudgetExceeded, PinnedOverride, Deduplicated, NegativeTokens].",
        ),
        (
            lambda: should(report).exclude_item_with_budget_details(lambda c: c.content == "big", 100, 50),
            "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=100, "
            "available_tokens=50, but found item_tokens=100, available_tokens=20.",
        ),
        (
            lambda: should(report).have_no_exclusions_for_kind("ToolOutput"),
            "HaveNoExclusionsForKind(ToolOutput) failed: found 1 excluded item(s) with Kind=ToolOutput. "
            "First: score=0.4, reason=PinnedOverride.",
        ),
        (
            lambda: should(report).have_at_least_n_exclusions(5),
            "HaveAtLeastNExclusions(5) failed: expected at least 5 excluded items, but Excluded had 4.",
        ),
        (
            lambda: should(report).have_budget_utilization_above(0.5, ContextBudget(100, 60)),
            "HaveBudgetUtilizationAbove(0.5) failed: computed utilization was 0.400000 "
            "(includedTokens=40, budget.MaxTokens=100).",
        ),
        (
            lambda: should(report).place_item_at_edge(lambda entry: entry.item.content == "big"),
            "PlaceItemAtEdge failed: no item in Included matched the predicate.",
        ),
    ]
    for action, message in cases:
        with pytest.raises(SelectionReportAssertionError) as info:
            action()
        assert str(info.value) == message


def test_truncation_at_place_reports_pinned_override_and_budget_exceeded() -> None:
    items = [
        item("pinned", 50, pinned=True),
        item("fits after pinned", 30, 0.9),
        item("never fits", 70, 0.2),
        item("small", 10, 0.1),
    ]
    pipeline = Pipeline(
        ReflexiveScorer(),
        TakeEverything(),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    report = pipeline.dry_run(items, ContextBudget(100, 60))
    # Truncate removes the lowest-scored first: small (160 > 60), never fits (150 > 60), then
    # fits after pinned (80 > 60), which alone with the pinned item would have fitted. Of those, only
    # small fits back in the 10 tokens the pinned item leaves.
    (
        should(report)
        .exclude_item_with_budget_details(lambda c: c.content == "never fits", 70, 10)
        .exclude_item_matching_with_reason(lambda c: c.content == "fits after pinned", PinnedOverride)
        .include_item_matching(lambda entry: entry.item.content == "pinned")
        .include_item_matching(lambda entry: entry.item.content == "small")
        .have_at_least_n_exclusions(2)
        .excluded_items_are_sorted_by_score_descending()
    )


def test_empty_run() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer())
    report = pipeline.dry_run([], ContextBudget(100, 50))
    (
        should(report)
        .have_at_least_n_exclusions(0)
        .include_exactly_n_items_with_kind("Message", 0)
        .have_kind_coverage_count(0)
        .have_budget_utilization_above(0.0, ContextBudget(100, 50))
        .place_top_n_scored_at_edges(0)
        .excluded_items_are_sorted_by_score_descending()
        .have_no_exclusions_for_kind("Message")
    )
    with pytest.raises(SelectionReportAssertionError, match=r"^IncludeItemWithKind\(Message\) failed"):
        should(report).include_item_with_kind("Message")


kinds = st.sampled_from(["Message", "ToolOutput", "Memory", "message", "Document"])
candidates = st.lists(
    st.builds(
        lambda n, tokens, hint, kind: item(f"c{n}", tokens, hint, kind=kind),
        st.integers(0, 3),
        st.integers(-2, 40),
        st.floats(0.0, 1.0),
        kinds,
    ),
    max_size=12,
)


@given(candidates, st.integers(0, 200))
def test_pipeline_invariants_hold_for_u_shaped_runs(items: list[ContextItem], max_tokens: int) -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer())
    budget = ContextBudget(max_tokens, max_tokens)
    report = pipeline.dry_run(items, budget)
    chain = should(report).excluded_items_are_sorted_by_score_descending()
    for n in range(len(report.included) + 1):
        chain.place_top_n_scored_at_edges(n)
    distinct = {entry.item.kind for entry in report.included}
    chain.have_kind_coverage_count(len(distinct))
    chain.have_at_least_n_exclusions(len(report.excluded))
    chain.have_budget_utilization_above(0.0, budget)
    for kind in distinct:
        chain.include_item_with_kind(kind)
        count = sum(1 for entry in report.included if entry.item.kind == kind)
        chain.include_exactly_n_items_with_kind(kind, count)
    if any(entry.item.tokens < 0 for entry in report.excluded):
        chain.exclude_item_with_reason(NegativeTokens)
    if report.included:
        chain.place_item_at_edge(lambda entry: entry is report.included[-1])
