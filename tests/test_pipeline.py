"""The six-stage pipeline (spec: Pipeline, Stages 1-6)."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    BudgetOverflowError,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelError,
    CupelTypeError,
    GreedySlice,
    OverflowEvent,
    OverflowStrategy,
    PinnedItemsExceedBudgetError,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ScoredItem,
    compute_effective_budget,
)
from tests.strategies import SAMPLE_PIPELINES as PIPELINES
from tests.strategies import budgets, item_lists

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def at(hours: int) -> datetime:
    return T0 + timedelta(hours=hours)


def recency_pipeline(**kwargs: object) -> Pipeline:
    return Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer(), **kwargs)  # type: ignore[arg-type]


class TestEffectiveBudget:
    def test_formula_as_written(self) -> None:
        budget = ContextBudget(
            1000,
            900,
            output_reserve=100,
            reserved_slots={"Message": 50, "Memory": 25},
            estimation_safety_margin_percent=10,
        )
        effective = compute_effective_budget(budget, pinned_tokens=200)
        # max = 1000-100-200-75 = 625; target = min(900-200-75, 625) = 625; x0.9 floored -> 562
        assert (effective.max_tokens, effective.target_tokens) == (562, 562)
        assert effective.output_reserve == 0 and not effective.reserved_slots

    def test_target_clamped_to_max(self) -> None:
        effective = compute_effective_budget(ContextBudget(100, 100, output_reserve=60), 0)
        assert (effective.max_tokens, effective.target_tokens) == (40, 40)

    def test_floors_at_zero(self) -> None:
        effective = compute_effective_budget(ContextBudget(100, 50), 500)
        assert (effective.max_tokens, effective.target_tokens) == (0, 0)

    @given(budget=budgets(), pinned=st.integers(0, 2000))
    def test_properties(self, budget: ContextBudget, pinned: int) -> None:
        effective = compute_effective_budget(budget, pinned)
        assert 0 <= effective.target_tokens <= effective.max_tokens
        assert effective.max_tokens <= max(0, budget.max_tokens - budget.output_reserve - pinned)


class TestClassify:
    def test_pinned_budget_error_message(self) -> None:
        items = [ContextItem("p", 80, pinned=True), ContextItem("q", 30, pinned=True)]
        with pytest.raises(PinnedItemsExceedBudgetError) as raised:
            recency_pipeline().run(items, ContextBudget(120, 100, output_reserve=20))
        assert str(raised.value) == "Pinned items require 110 tokens, but only 100 are available"
        assert (raised.value.pinned_tokens, raised.value.available_tokens) == (110, 100)

    def test_scorer_sees_only_scoreable_items(self) -> None:
        seen: list[list[str]] = []

        class Spy:
            def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
                seen.append([i.content for i in all_items])
                return 0.5

        items = [
            ContextItem("pin", 1, pinned=True),
            ContextItem("neg", -1),
            ContextItem("a", 1),
            ContextItem("b", 1),
        ]
        Pipeline(Spy(), GreedySlice(), ChronologicalPlacer()).run(items, ContextBudget(100, 100))
        assert seen == [["a", "b"], ["a", "b"]]  # once per item, full scoreable list

    def test_scorer_not_invoked_for_empty_scoreable(self) -> None:
        class Exploding:
            def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
                raise AssertionError("must not be called")

        out = Pipeline(Exploding(), GreedySlice(), ChronologicalPlacer()).run(
            [ContextItem("pin", 1, pinned=True)], ContextBudget(10, 10)
        )
        assert [i.content for i in out] == ["pin"]


class TestOverflow:
    items = (ContextItem("pin", 90, pinned=True), ContextItem("m", 5, timestamp=T0))

    def test_throw(self) -> None:
        with pytest.raises(
            BudgetOverflowError, match="Selected items require 90 tokens, exceeding target budget of 50"
        ):
            recency_pipeline().run(self.items, ContextBudget(100, 50))

    def test_proceed_notifies_callback(self) -> None:
        events: list[OverflowEvent] = []
        out = recency_pipeline(overflow_strategy=OverflowStrategy.PROCEED, on_overflow=events.append).run(
            self.items, ContextBudget(100, 50)
        )
        assert [i.content for i in out] == ["pin"]
        assert len(events) == 1
        assert events[0].tokens_over_budget == 40
        assert [i.content for i in events[0].overflowing_items] == ["pin"]
        assert events[0].budget == ContextBudget(100, 50)

    def test_truncate_drops_the_lowest_scored_first_and_keeps_pinned(self) -> None:
        class Overshoot:
            """A custom slicer that ignores the budget, to exercise truncation."""

            def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
                return [entry.item for entry in scored]

        items = [
            ContextItem("pin", 40, pinned=True),
            ContextItem("best", 30, priority=3),
            ContextItem("mid", 30, priority=2),
            ContextItem("low", 30, priority=1),
        ]
        pipeline = Pipeline(
            PriorityScorer(), Overshoot(), ChronologicalPlacer(), overflow_strategy="truncate"
        )  # type: ignore[arg-type]
        out = pipeline.run(items, ContextBudget(200, 95))
        # merged 130 > 95: low goes (100), then mid (70); neither fits back in the 25 left, and without
        # the pinned 40 both would have fitted.
        assert [i.content for i in out] == ["pin", "best"]
        report = pipeline.dry_run(items, ContextBudget(200, 95))
        excluded = {e.item.content: e.reason for e in report.excluded}
        assert excluded["mid"].to_dict() == {"reason": "PinnedOverride", "displaced_by": "pin"}
        assert excluded["low"].to_dict() == {"reason": "PinnedOverride", "displaced_by": "pin"}


class TestComponents:
    def test_bad_components_rejected(self) -> None:
        with pytest.raises(CupelTypeError, match="scorer must have a score"):
            Pipeline(object(), GreedySlice(), ChronologicalPlacer())  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match="slicer"):
            Pipeline(RecencyScorer(), object(), ChronologicalPlacer())  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match="placer"):
            Pipeline(RecencyScorer(), GreedySlice(), None)  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match="overflow_strategy"):
            recency_pipeline(overflow_strategy="explode")
        with pytest.raises(CupelTypeError, match="deduplication"):
            recency_pipeline(deduplication="yes")

    def test_bad_inputs_rejected(self) -> None:
        with pytest.raises(CupelTypeError, match=r"items\[1\] must be a ContextItem"):
            recency_pipeline().run([ContextItem("a", 1), "b"], ContextBudget(10, 10))  # type: ignore[list-item]
        with pytest.raises(CupelTypeError, match="budget must be a ContextBudget"):
            recency_pipeline().run([], 100)  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match="not a string"):
            recency_pipeline().run("abc", ContextBudget(10, 10))  # type: ignore[arg-type]

    def test_generator_input_accepted(self) -> None:
        out = recency_pipeline().run((ContextItem(str(n), 1) for n in range(3)), ContextBudget(10, 10))  # type: ignore[arg-type]
        assert [i.content for i in out] == ["0", "1", "2"]

    def test_slicer_returning_foreign_item_is_an_error(self) -> None:
        class Rogue:
            def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
                return [ContextItem("stranger", 1)]

        with pytest.raises(CupelError, match="not in its input"):
            Pipeline(RecencyScorer(), Rogue(), ChronologicalPlacer()).run(
                [ContextItem("a", 1)], ContextBudget(10, 10)
            )

    def test_same_instance_twice_without_dedup(self) -> None:
        item = ContextItem("a", 1, timestamp=T0)
        out = recency_pipeline(deduplication=False).run([item, item], ContextBudget(10, 10))
        assert out == [item, item]


def _snapshot(items: list[ContextItem]) -> list[tuple[object, ...]]:
    return [
        (id(i), i.content, i.tokens, i.kind, i.priority, i.tags, dict(i.metadata), i.timestamp, i.pinned)
        for i in items
    ]


@given(items=item_lists(allow_negative=True), budget=budgets(), which=st.integers(0, len(PIPELINES) - 1))
def test_run_never_mutates_inputs_and_is_deterministic(
    items: list[ContextItem], budget: ContextBudget, which: int
) -> None:
    pipeline = PIPELINES[which]
    before = _snapshot(items)
    listed = list(items)
    try:
        first = pipeline.run(items, budget)
    except (PinnedItemsExceedBudgetError, BudgetOverflowError) as error:
        with pytest.raises(type(error)):
            pipeline.run(items, budget)
        assert _snapshot(items) == before
        return
    second = pipeline.run(copy.copy(items), budget)
    assert [id(i) for i in first] == [id(i) for i in second]
    assert items == listed and _snapshot(items) == before
    # Output: a sub-multiset of the non-negative inputs, pinned items always present.
    assert all(any(o is i for i in items) for o in first)
    assert all(any(p is o for o in first) for p in items if p.pinned and p.tokens >= 0)
    assert all(o.tokens >= 0 for o in first)
    if pipeline.overflow_strategy is not OverflowStrategy.PROCEED:
        assert sum(o.tokens for o in first) <= max(
            budget.target_tokens, sum(p.tokens for p in first if p.pinned)
        )


@given(items=item_lists(), budget=budgets())
def test_selection_respects_effective_budget(items: list[ContextItem], budget: ContextBudget) -> None:
    pipeline = PIPELINES[0]
    try:
        out = pipeline.run(items, budget)
    except (PinnedItemsExceedBudgetError, BudgetOverflowError):
        return
    pinned_tokens = sum(i.tokens for i in items if i.pinned)
    scored_tokens = sum(i.tokens for i in out if not i.pinned)
    assert scored_tokens <= compute_effective_budget(budget, pinned_tokens).target_tokens
    assert not math.isnan(scored_tokens)
