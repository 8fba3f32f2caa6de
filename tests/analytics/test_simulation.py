"""Budget simulation (spec: Budget Simulation): guards, preconditions, examples, and agreement with
literal ``dry_run`` implementations and a brute-force scan."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import (
    BudgetOverflowError,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    InvalidConfigurationError,
    OverflowStrategy,
    PinnedItemsExceedBudgetError,
    Pipeline,
    PriorityScorer,
    ReflexiveScorer,
    ScoredItem,
    UShapedPlacer,
)
from cupel.analytics import (
    MARGINAL_ITEMS_MONOTONICITY_MESSAGE,
    MIN_BUDGET_MONOTONICITY_MESSAGE,
    find_min_budget_for,
    get_marginal_items,
)
from cupel.errors import MonotonicityError
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaSlice,
)
from tests.profiles import examples
from tests.strategies import item_lists

# --- literal reference implementations over dry_run ------------------------------------------------


def dry_included(
    pipeline: Pipeline, items: Sequence[ContextItem], budget: ContextBudget
) -> list[ContextItem]:
    return [entry.item for entry in pipeline.dry_run(items, budget).included]


def naive_marginal(
    pipeline: Pipeline, items: Sequence[ContextItem], budget: ContextBudget, slack: int
) -> list[ContextItem]:
    """GET-MARGINAL-ITEMS as the spec writes it: two DRY-RUNs and a reference-identity difference."""
    reduced = ContextBudget(
        budget.max_tokens - slack,
        budget.target_tokens - slack,
        output_reserve=budget.output_reserve,
        reserved_slots={str(kind): count for kind, count in budget.reserved_slots.items()},
        estimation_safety_margin_percent=budget.estimation_safety_margin_percent,
    )
    primary = dry_included(pipeline, items, budget)
    margin = dry_included(pipeline, items, reduced)
    return [item for item in primary if not any(item is other for other in margin)]


def included_at(pipeline: Pipeline, items: Sequence[ContextItem], target: ContextItem, budget: int) -> bool:
    """One probe, with DRY-RUN: a run that refuses the budget does not include the target."""
    try:
        included = dry_included(pipeline, items, ContextBudget(budget, budget))
    except (PinnedItemsExceedBudgetError, BudgetOverflowError):
        return False
    return any(item is target for item in included)


def naive_min_budget(
    pipeline: Pipeline,
    items: Sequence[ContextItem],
    target: ContextItem,
    ceiling: int,
    *,
    literal: bool = False,
) -> int | None:
    """FIND-MIN-BUDGET-FOR with one DRY-RUN per probe. ``literal=True`` starts ``low`` at
    ``target.tokens`` exactly as the spec's pseudocode does; cupel starts it one lower."""
    # A negative-token item is excluded at Classify: searching from budget 0 finds nothing, as cupel does.
    low = target.tokens if literal else max(target.tokens, 0) - 1
    high = ceiling
    while high - low > 1:
        mid = low + (high - low) // 2
        if included_at(pipeline, items, target, mid):
            high = mid
        else:
            low = mid
    return high if included_at(pipeline, items, target, high) else None


def linear_scan(
    pipeline: Pipeline, items: Sequence[ContextItem], target: ContextItem, ceiling: int
) -> int | None:
    """The smallest budget b in [target.tokens, ceiling] whose run includes the target."""
    for budget in range(max(target.tokens, 0), ceiling + 1):
        if included_at(pipeline, items, target, budget):
            return budget
    return None


def greedy(**kwargs: object) -> Pipeline:
    return Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer(), **kwargs)  # type: ignore[arg-type]


def item(content: str, tokens: int, hint: float, **fields: object) -> ContextItem:
    return ContextItem(content, tokens, future_relevance_hint=hint, **fields)  # type: ignore[arg-type]


# --- get_marginal_items --------------------------------------------------------------------------


def test_marginal_items_example() -> None:
    a, b, c = item("a", 30, 0.9), item("b", 30, 0.6), item("c", 30, 0.3)
    pipeline = greedy()
    budget = ContextBudget(100, 90)
    assert get_marginal_items(pipeline, [a, b, c], budget, 30) == [c]
    assert get_marginal_items(pipeline, [a, b, c], budget, 31) == [b, c]
    assert get_marginal_items(pipeline, [a, b, c], budget, 0) == []
    assert pipeline.get_marginal_items([a, b, c], budget, 30) == [c]


def test_marginal_items_keep_the_placed_order_and_identity() -> None:
    late = item("late", 10, 0.1, timestamp=datetime(2024, 1, 2, tzinfo=UTC))
    early = item("early", 10, 0.2, timestamp=datetime(2024, 1, 1, tzinfo=UTC))
    top = item("top", 10, 0.9)
    marginal = get_marginal_items(greedy(), [late, top, early], ContextBudget(30, 30), 20)
    assert marginal == [early, late]  # chronological, as placed
    assert marginal[0] is early and marginal[1] is late


def test_reduced_budget_keeps_reserve_slots_and_margin() -> None:
    items = [item(f"i{n}", 10, 1.0 - n / 10) for n in range(8)]
    budget = ContextBudget(
        100, 80, output_reserve=20, reserved_slots={"Memory": 5}, estimation_safety_margin_percent=10
    )
    pipeline = greedy()
    for slack in (0, 5, 17, 40, 75):
        assert get_marginal_items(pipeline, items, budget, slack) == naive_marginal(
            pipeline, items, budget, slack
        )


def test_marginal_guard_quota_slice() -> None:
    pipeline = Pipeline(
        ReflexiveScorer(), QuotaSlice([("Message", 10, 90)], GreedySlice()), ChronologicalPlacer()
    )
    with pytest.raises(MonotonicityError) as raised:
        get_marginal_items(pipeline, [], ContextBudget(10, 10), 1)
    assert str(raised.value) == (
        "GetMarginalItems requires monotonic item inclusion. QuotaSlice produces non-monotonic inclusion as "
        "budget changes shift percentage allocations."
    )
    assert str(raised.value) == MARGINAL_ITEMS_MONOTONICITY_MESSAGE
    # A count-quota slicer around a QuotaSlice inherits the non-monotonicity.
    wrapped = CountQuotaSlice([], QuotaSlice([], GreedySlice()))
    with pytest.raises(MonotonicityError):
        get_marginal_items(
            Pipeline(ReflexiveScorer(), wrapped, ChronologicalPlacer()), [], ContextBudget(10, 10), 1
        )


def test_marginal_count_quota_slice_is_not_guarded() -> None:
    # The spec guards QuotaSlice only (spec: CountQuotaSlice, Monotonicity).
    slicer = CountQuotaSlice([CountQuotaEntry("Message", 0, 5)], GreedySlice())
    pipeline = Pipeline(ReflexiveScorer(), slicer, ChronologicalPlacer())
    a, b = item("a", 10, 0.9), item("b", 10, 0.1)
    assert get_marginal_items(pipeline, [a, b], ContextBudget(20, 20), 10) == [b]


@pytest.mark.parametrize(
    ("slack", "error", "message"),
    [
        (-1, InvalidConfigurationError, "slack_tokens must be >= 0, got -1"),
        (81, InvalidConfigurationError, r"slack_tokens must be <= budget.target_tokens \(80\), got 81"),
        (
            75,
            InvalidConfigurationError,
            r"slack_tokens must be <= budget.max_tokens - budget.output_reserve \(70\), got 75",
        ),
        (True, CupelTypeError, "slack_tokens must be an int, got True"),
        (1.0, CupelTypeError, "slack_tokens must be an int, got 1.0"),
    ],
)
def test_marginal_slack_validation(slack: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        get_marginal_items(greedy(), [], ContextBudget(100, 80, output_reserve=30), slack)  # type: ignore[arg-type]


def test_marginal_argument_types() -> None:
    with pytest.raises(CupelTypeError, match="pipeline must be a Pipeline"):
        get_marginal_items(object(), [], ContextBudget(1, 1), 0)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="budget must be a ContextBudget"):
        get_marginal_items(greedy(), [], 100, 0)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        get_marginal_items(greedy(), ["x"], ContextBudget(1, 1), 0)  # type: ignore[list-item]


def test_marginal_errors_propagate() -> None:
    pinned = item("pinned", 50, 0.0, pinned=True)
    with pytest.raises(PinnedItemsExceedBudgetError):
        get_marginal_items(greedy(), [pinned], ContextBudget(60, 60), 20)


def test_marginal_does_not_mutate_inputs() -> None:
    items = [item("a", 10, 0.5), item("b", 10, 0.4)]
    copy = list(items)
    get_marginal_items(greedy(), items, ContextBudget(20, 20), 10)
    assert items == copy


@given(
    items=item_lists(max_size=12),
    max_tokens=st.integers(0, 400),
    data=st.data(),
    knapsack=st.booleans(),
    dedup=st.booleans(),
)
def test_marginal_equals_the_literal_algorithm(
    items: list[ContextItem], max_tokens: int, data: st.DataObject, knapsack: bool, dedup: bool
) -> None:
    target = data.draw(st.integers(0, max_tokens))
    reserve = data.draw(st.integers(0, max_tokens - target))
    budget = ContextBudget(max_tokens, target, output_reserve=reserve)
    slack = data.draw(st.integers(0, min(target, max_tokens - reserve)))
    slicer = KnapsackSlice(10) if knapsack else GreedySlice()
    pipeline = Pipeline(
        PriorityScorer(), slicer, UShapedPlacer(), deduplication=dedup, overflow_strategy="truncate"
    )
    try:
        expected = naive_marginal(pipeline, items, budget, slack)
    except PinnedItemsExceedBudgetError:
        with pytest.raises(PinnedItemsExceedBudgetError):
            get_marginal_items(pipeline, items, budget, slack)
        return
    assert get_marginal_items(pipeline, items, budget, slack) == expected


# --- find_min_budget_for -------------------------------------------------------------------------


def test_min_budget_example() -> None:
    a, b, target = item("a", 25, 0.9), item("b", 25, 0.8), item("t", 25, 0.5)
    items = [a, b, target]
    pipeline = greedy()
    assert find_min_budget_for(pipeline, items, target, 200) == 75
    assert linear_scan(pipeline, items, target, 200) == 75
    assert pipeline.find_min_budget_for(items, target, 200) == 75
    assert find_min_budget_for(pipeline, items, target, 74) is None
    assert find_min_budget_for(pipeline, items, a, 200) == 25


def test_binary_search_assumes_monotonic_inclusion() -> None:
    """GreedySlice is not monotonic in general: here t (density 0.02) fits beside b alone at 45-49, is
    crowded out by a once a fits (50-74), and fits again from 75. The search confirms 75."""
    a, b, target = item("a", 30, 0.9), item("b", 20, 0.8), item("t", 25, 0.5)
    items = [a, b, target]
    pipeline = greedy()
    assert [included_at(pipeline, items, target, budget) for budget in (44, 45, 49, 50, 74, 75)] == [
        False,
        True,
        True,
        False,
        False,
        True,
    ]
    assert linear_scan(pipeline, items, target, 200) == 45
    assert find_min_budget_for(pipeline, items, target, 200) == 75
    assert naive_min_budget(pipeline, items, target, 200) == 75


def test_min_budget_can_be_the_items_own_size() -> None:
    """The spec's pseudocode never probes targetItem.tokens itself, so it answers tokens + 1 where the
    item fits exactly; cupel starts the exclusive lower bound one lower."""
    target = item("alone", 10, 0.5)
    pipeline = greedy()
    assert find_min_budget_for(pipeline, [target], target, 100) == 10
    assert naive_min_budget(pipeline, [target], target, 100, literal=True) == 11
    assert find_min_budget_for(pipeline, [target], target, 10) == 10


def test_zero_token_target_needs_a_positive_budget() -> None:
    target = item("free", 0, 0.5)
    assert find_min_budget_for(greedy(), [target], target, 5) == 1


def test_pinned_items_raise_the_minimum() -> None:
    pinned = item("system", 50, 0.0, pinned=True)
    target = item("t", 10, 0.5)
    # Below 50 every probe raises PinnedItemsExceedBudgetError: "not included".
    assert find_min_budget_for(greedy(), [pinned, target], target, 1000) == 60
    assert find_min_budget_for(greedy(), [pinned, target], pinned, 1000) == 50
    assert naive_min_budget(greedy(), [pinned, target], target, 1000) == 60


def test_overflow_probes_count_as_not_included() -> None:
    class Overfill:
        """A slicer that ignores the budget, so THROW overflows at small budgets."""

        def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
            return [entry.item for entry in scored]

    items = [item("a", 30, 0.9), item("t", 30, 0.1)]
    pipeline = Pipeline(
        ReflexiveScorer(), Overfill(), ChronologicalPlacer(), overflow_strategy=OverflowStrategy.THROW
    )
    assert find_min_budget_for(pipeline, items, items[1], 100) == 60
    assert naive_min_budget(pipeline, items, items[1], 100) == 60


def test_unreachable_targets_return_none() -> None:
    negative = item("neg", -5, 0.9)
    assert find_min_budget_for(greedy(), [negative], negative, 100) is None
    original, duplicate = item("same", 10, 0.9), item("same", 10, 0.1)
    # Deduplication keeps the higher-scored copy: the other can never be included.
    assert find_min_budget_for(greedy(), [original, duplicate], duplicate, 100) is None
    assert find_min_budget_for(greedy(deduplication=False), [original, duplicate], duplicate, 100) == 20


@pytest.mark.parametrize(
    "slicer",
    [
        QuotaSlice([("Message", 10, 90)], GreedySlice()),
        CountQuotaSlice([CountQuotaEntry("Message", 1, 3)], GreedySlice()),
        CountConstrainedKnapsackSlice([CountQuotaEntry("Message", 1, 3)]),
    ],
    ids=["QuotaSlice", "CountQuotaSlice", "CountConstrainedKnapsackSlice"],
)
def test_min_budget_guards(slicer: object) -> None:
    pipeline = Pipeline(ReflexiveScorer(), slicer, ChronologicalPlacer())  # type: ignore[arg-type]
    target = item("t", 10, 0.5)
    with pytest.raises(MonotonicityError) as raised:
        find_min_budget_for(pipeline, [target], target, 100)
    assert str(raised.value) == (
        "FindMinBudgetFor requires monotonic item inclusion. QuotaSlice and CountQuotaSlice produce "
        "non-monotonic inclusion as budget changes shift allocations. Use a GreedySlice or KnapsackSlice "
        "inner slicer for budget simulation."
    )
    assert str(raised.value) == MIN_BUDGET_MONOTONICITY_MESSAGE


def test_min_budget_preconditions() -> None:
    target = item("t", 10, 0.5)
    twin = item("t", 10, 0.5)  # equal fields, another instance: identity is by reference
    with pytest.raises(InvalidConfigurationError, match=r"^target_item must be an element of items$"):
        find_min_budget_for(greedy(), [twin], target, 100)
    with pytest.raises(
        InvalidConfigurationError, match=r"^search_ceiling must be >= target_item.tokens \(10\), got 9$"
    ):
        find_min_budget_for(greedy(), [target], target, 9)
    with pytest.raises(CupelTypeError, match="search_ceiling must be an int"):
        find_min_budget_for(greedy(), [target], target, 10.0)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="target_item must be a ContextItem"):
        find_min_budget_for(greedy(), [target], "t", 10)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="pipeline must be a Pipeline"):
        find_min_budget_for(None, [target], target, 10)  # type: ignore[arg-type]


def test_min_budget_scores_once() -> None:
    """Scores do not depend on the budget: one scoring pass serves every probe."""
    calls = 0

    class Counting(ReflexiveScorer):
        __slots__ = ()

        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            nonlocal calls
            calls += 1
            return super().score_all(items)

    items = [item(f"i{n}", 7 + n, n / 20) for n in range(20)]
    pipeline = Pipeline(Counting(), GreedySlice(), ChronologicalPlacer())
    assert find_min_budget_for(pipeline, items, items[3], 10_000) is not None
    assert calls == 1
    calls = 0
    get_marginal_items(pipeline, items, ContextBudget(100, 100), 50)
    assert calls == 1


# --- agreement with the literal algorithm and the brute-force scan ---------------------------------


@st.composite
def simulation_cases(
    draw: st.DrawFn, *, uniform: bool
) -> tuple[Pipeline, list[ContextItem], ContextItem, int]:
    """Small cases. ``uniform``: every item has the same size or none (monotonic for GreedySlice)."""
    size = draw(st.sampled_from([5, 10]))
    items = []
    for index in range(draw(st.integers(1, 8))):
        # Uniform: one size, or zero tokens. Otherwise anything, negative counts included.
        tokens = (size if draw(st.integers(0, 4)) else 0) if uniform else draw(st.integers(-2, 25))
        items.append(
            ContextItem(
                f"item {index}" if draw(st.integers(0, 5)) else "dup",
                tokens,
                priority=draw(st.one_of(st.none(), st.integers(0, 4))),
                future_relevance_hint=draw(st.floats(0, 1)),
                pinned=draw(st.integers(0, 9)) == 0,
            )
        )
    target = draw(st.sampled_from(items))
    ceiling = draw(st.integers(max(target.tokens, 0), 90))
    scorer = draw(st.sampled_from([ReflexiveScorer(), PriorityScorer()]))
    slicer = GreedySlice() if uniform else draw(st.sampled_from([GreedySlice(), KnapsackSlice(5)]))
    pipeline = Pipeline(
        scorer,
        slicer,
        ChronologicalPlacer(),
        deduplication=draw(st.booleans()),
        overflow_strategy=draw(st.sampled_from(list(OverflowStrategy))),
    )
    return pipeline, items, target, ceiling


@settings(max_examples=examples(60))
@given(simulation_cases(uniform=False))
def test_min_budget_equals_the_literal_binary_search(
    case: tuple[Pipeline, list[ContextItem], ContextItem, int],
) -> None:
    """Same probes, same answers: reusing the scores changes nothing (greedy and knapsack)."""
    pipeline, items, target, ceiling = case
    assert find_min_budget_for(pipeline, items, target, ceiling) == naive_min_budget(
        pipeline, items, target, ceiling
    )


@settings(max_examples=examples(60))
@given(simulation_cases(uniform=True))
def test_min_budget_equals_the_linear_scan_when_inclusion_is_monotonic(
    case: tuple[Pipeline, list[ContextItem], ContextItem, int],
) -> None:
    """With equal-sized (or zero-token) items GreedySlice takes a prefix of one fixed order, so inclusion
    is monotonic in the budget and the binary search finds the smallest budget."""
    pipeline, items, target, ceiling = case
    low = max(target.tokens, 0)
    flags = [included_at(pipeline, items, target, budget) for budget in range(low, ceiling + 1)]
    assert flags == sorted(flags), "the generated case must be monotonic"
    assert find_min_budget_for(pipeline, items, target, ceiling) == linear_scan(
        pipeline, items, target, ceiling
    )


@settings(max_examples=examples(60))
@given(simulation_cases(uniform=False))
def test_min_budget_is_sound(case: tuple[Pipeline, list[ContextItem], ContextItem, int]) -> None:
    """Whatever the slicer, a returned budget includes the target, and equals the scan when the scan's
    inclusion pattern happens to be monotonic."""
    pipeline, items, target, ceiling = case
    found = find_min_budget_for(pipeline, items, target, ceiling)
    if found is not None:
        assert target.tokens <= found <= ceiling
        assert included_at(pipeline, items, target, found)
    flags = [
        included_at(pipeline, items, target, budget) for budget in range(max(target.tokens, 0), ceiling + 1)
    ]
    if flags == sorted(flags):
        assert found == linear_scan(pipeline, items, target, ceiling)
