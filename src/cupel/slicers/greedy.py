"""GreedySlice (spec: Slicers, GreedySlice)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers._base import SliceOutcome

_MAX_FLOAT = sys.float_info.max


def _density_order(scored: Sequence[ScoredItem], tokens: list[int]) -> list[int]:
    """Indices by value density descending, ties by index ascending; zero-token items first."""
    densities = [
        _MAX_FLOAT if count == 0 else entry.score / count for entry, count in zip(scored, tokens, strict=True)
    ]
    # sorted() with reverse=True is stable, so equal densities keep ascending index order.
    return sorted(range(len(densities)), key=densities.__getitem__, reverse=True)


class GreedySlice:
    """Fill the budget by value density (score per token) in one pass, skipping what does not fit.

    Zero-token items come first (by index only) and are always selected. Deterministic: equal
    densities keep their input order, which budget simulation relies on.
    """

    __slots__ = ()

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        if not scored or budget.target_tokens <= 0:
            return []
        remaining = budget.target_tokens
        tokens = [entry.item.tokens for entry in scored]
        chosen: list[int] = []
        for index in _density_order(scored, tokens):
            count = tokens[index]
            if count <= remaining:
                chosen.append(index)
                remaining -= count
        return [scored[index].item for index in chosen]

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        if not scored:
            return SliceOutcome(())
        remaining = budget.target_tokens
        selected: list[ContextItem] = []
        exclusions: list[tuple[ContextItem, ExclusionReason]] = []
        if remaining <= 0:
            exclusions = [
                (entry.item, BudgetExceeded(entry.item.tokens, max(remaining, 0))) for entry in scored
            ]
            return SliceOutcome((), tuple(exclusions))
        for index in _density_order(scored, [entry.item.tokens for entry in scored]):
            item = scored[index].item
            tokens = item.tokens
            if tokens == 0:
                selected.append(item)
            elif tokens <= remaining:
                selected.append(item)
                remaining -= tokens
            else:
                exclusions.append((item, BudgetExceeded(tokens, remaining)))
        return SliceOutcome(tuple(selected), tuple(exclusions))

    def __repr__(self) -> str:
        return "GreedySlice()"

    def __eq__(self, other: object) -> bool:
        return type(other) is GreedySlice

    def __hash__(self) -> int:
        return hash(GreedySlice)
