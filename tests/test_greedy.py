"""GreedySlice (spec: Slicers, GreedySlice)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cupel import ContextBudget, ContextItem, GreedySlice, ScoredItem


def reference_greedy(scored: list[ScoredItem], target: int) -> list[ContextItem]:
    """The spec's pseudocode, literally."""
    if not scored or target <= 0:
        return []
    densities = [
        (float("inf") if e.item.tokens == 0 else e.score / e.item.tokens, i) for i, e in enumerate(scored)
    ]
    densities.sort(key=lambda d: (-d[0], d[1]))
    remaining = target
    selected = []
    for _, index in densities:
        item = scored[index].item
        if item.tokens == 0:
            selected.append(item)
        elif item.tokens <= remaining:
            selected.append(item)
            remaining -= item.tokens
    return selected


scored_lists = st.lists(st.tuples(st.integers(0, 50), st.floats(0, 1, allow_nan=False)), max_size=25).map(
    lambda rows: [ScoredItem(ContextItem(f"i{n}", t), s) for n, (t, s) in enumerate(rows)]
)


@given(scored=scored_lists, target=st.integers(-5, 400))
def test_matches_reference_pseudocode(scored: list[ScoredItem], target: int) -> None:
    budget = ContextBudget(max(target, 0) + 10, max(target, 0))
    expected = reference_greedy(scored, budget.target_tokens)
    assert GreedySlice().slice(scored, budget) == expected
    outcome = GreedySlice().slice_detailed(scored, budget)
    assert list(outcome.selected) == expected
    excluded = {id(item) for item, _ in outcome.exclusions}
    assert excluded.isdisjoint(id(i) for i in expected)
    assert len(excluded) + len(expected) == len(scored)


def test_zero_token_order_ignores_score() -> None:
    scored = [ScoredItem(ContextItem("z1", 0), 0.1), ScoredItem(ContextItem("z2", 0), 0.9)]
    assert [i.content for i in GreedySlice().slice(scored, ContextBudget(5, 5))] == ["z1", "z2"]


def test_budget_exceeded_reports_remaining_at_the_moment() -> None:
    scored = [
        ScoredItem(ContextItem("a", 60), 0.9),
        ScoredItem(ContextItem("b", 60), 0.8),
        ScoredItem(ContextItem("c", 30), 0.1),
    ]
    outcome = GreedySlice().slice_detailed(scored, ContextBudget(100, 100))
    assert [i.content for i in outcome.selected] == ["a", "c"]
    assert [(i.content, r.to_dict()) for i, r in outcome.exclusions] == [
        ("b", {"reason": "BudgetExceeded", "item_tokens": 60, "available_tokens": 40})
    ]
