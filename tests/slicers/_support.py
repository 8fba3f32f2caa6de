"""Helpers for the slicer tests: item builders, a spying slicer, and the spec's knapsack transcribed."""

from __future__ import annotations

import math
from collections.abc import Sequence

from hypothesis import strategies as st

from cupel import ContextBudget, ContextItem, GreedySlice, ScoredItem
from cupel.slicers import SliceOutcome


def scored(content: str, tokens: int, score: float, kind: str = "Message") -> ScoredItem:
    return ScoredItem(ContextItem(content, tokens, kind=kind), score)


def budget(target: int, max_tokens: int | None = None) -> ContextBudget:
    return ContextBudget(target if max_tokens is None else max_tokens, target)


def contents(items: Sequence[ContextItem]) -> list[str]:
    return [item.content for item in items]


class SpySlicer:
    """Records what it is given (contents and budget) and selects like GreedySlice."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[str], int, int]] = []

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        self.calls.append(([entry.item.content for entry in items], budget.max_tokens, budget.target_tokens))
        return GreedySlice().slice(items, budget)


class PlainSlicer:
    """A slicer without slice_detailed: selects every item."""

    def slice(self, items: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return [entry.item for entry in items]


def spec_knapsack(items: Sequence[ScoredItem], budget: ContextBudget, bucket_size: int) -> list[ContextItem]:
    """KNAPSACK-SLICE exactly as the spec's pseudocode reads (finite scores only)."""
    if len(items) == 0 or budget.target_tokens <= 0:
        return []
    zero_token_items = [entry.item for entry in items if entry.item.tokens == 0]
    candidates = [entry for entry in items if entry.item.tokens > 0]
    if len(candidates) == 0:
        return zero_token_items
    n = len(candidates)
    weights = [entry.item.tokens for entry in candidates]
    values = [max(0, math.floor(entry.score * 10000)) for entry in candidates]
    capacity = budget.target_tokens // bucket_size
    if capacity == 0:
        return zero_token_items
    discretized = [-(-weight // bucket_size) for weight in weights]
    dp = [0] * (capacity + 1)
    keep = [[False] * (capacity + 1) for _ in range(n)]
    for i in range(n):
        dw = discretized[i]
        dv = values[i]
        for w in range(capacity, dw - 1, -1):
            with_item = dp[w - dw] + dv
            if with_item > dp[w]:
                dp[w] = with_item
                keep[i][w] = True
    selected = []
    remaining = capacity
    for i in range(n - 1, -1, -1):
        if keep[i][remaining]:
            selected.append(candidates[i].item)
            remaining -= discretized[i]
    return zero_token_items + selected


def outcome_contents(outcome: SliceOutcome) -> list[str]:
    return contents(outcome.selected)


KINDS = ["Message", "message", "Document", "ToolOutput", "tooloutput", "Memory"]

scores = st.one_of(
    st.floats(min_value=0.0, max_value=1.0),
    st.sampled_from([0.0, 0.5, 1.0, 0.25]),
    st.floats(min_value=-0.5, max_value=1.5),
)


@st.composite
def scored_lists(draw: st.DrawFn, *, max_size: int = 14, max_tokens: int = 120) -> list[ScoredItem]:
    """Distinct items in no particular order, with repeated kinds (in varying case) and scores."""
    size = draw(st.integers(min_value=0, max_value=max_size))
    return [
        ScoredItem(
            ContextItem(
                f"item-{index}",
                draw(st.integers(min_value=0, max_value=max_tokens)),
                kind=draw(st.sampled_from(KINDS)),
            ),
            draw(scores),
        )
        for index in range(size)
    ]
