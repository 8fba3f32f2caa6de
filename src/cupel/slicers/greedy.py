"""GreedySlice (spec: Slicers, GreedySlice)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from cupel import _numeric
from cupel._prepared import score_order
from cupel._score_order import descending_indices
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers._greedy_fill import greedy_fill_unordered

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.slicers._base import SliceOutcome

_MAX_FLOAT = sys.float_info.max


def greedy_select(
    order: Sequence[int],
    tokens: Sequence[int],
    scores: Sequence[float],
    target: int,
    skipped: list[tuple[int, int]] | None = None,
) -> list[int]:
    """GREEDY-SLICE on parallel lists; ``order`` holds the candidates' indices in their input order.

    Returns the selected indices in greedy order: value density (score per token) descending, ties by
    position in ``order``; zero-token items first. With ``skipped``, every index left out is appended
    with the tokens remaining when it was considered.
    """
    if not order or target <= 0:
        return []
    if skipped is None:
        filled = _numeric.greedy_fill(order, tokens, scores, target)
        if filled is not None:
            return filled
    by_density = _numeric.greedy_order(order, tokens, scores)
    if by_density is None:
        densities = [_MAX_FLOAT if tokens[index] == 0 else scores[index] / tokens[index] for index in order]
        # A stable sort, so equal densities keep their position in ``order``; NaN densities go last.
        positions = descending_indices(range(len(densities)), densities)
        by_density = [order[position] for position in positions]
    return fill_in_order(by_density, tokens, target, skipped)


def fill_in_order(
    order: Sequence[int], tokens: Sequence[int], target: int, skipped: list[tuple[int, int]] | None = None
) -> list[int]:
    """Keep each index of ``order`` whose tokens still fit ``target``, in that order, no backtracking
    (the fill of GreedySlice and ScoreSlice); with ``skipped``, each index left out is appended with the
    tokens remaining when it was considered."""
    remaining = target
    chosen: list[int] = []
    for index in order:
        count = tokens[index]
        # Zero-token items always pass: remaining never drops below zero.
        if count <= remaining:
            chosen.append(index)
            remaining -= count
        elif skipped is not None:
            skipped.append((index, remaining))
    return chosen


class GreedySlice:
    """Fill the budget by value density (score per token) in one pass, skipping what does not fit.

    Zero-token items come first (by index only) and are always selected. Deterministic: equal
    densities keep their input order, which budget simulation relies on.
    """

    __slots__ = ()

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        tokens = [entry.item.tokens for entry in scored]
        scores = [entry.score for entry in scored]
        chosen = greedy_select(range(len(scored)), tokens, scores, budget.target_tokens)
        return [scored[index].item for index in chosen]

    def slice_indices(
        self, order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], budget: ContextBudget
    ) -> list[int]:
        """``slice`` on parallel lists: ``order`` lists candidate indices in score order; returns the
        selected indices (the pipeline's allocation-free form)."""
        return greedy_select(order, tokens, scores, budget.target_tokens)

    def _slice_unordered(
        self, survivors: Sequence[int], tokens: Sequence[int], scores: Sequence[float], budget: ContextBudget
    ) -> list[int]:
        """``slice_indices`` on the candidates in index order (the pipeline's untraced run skips the
        score sort, which only breaks density ties: see ``_greedy_fill``)."""
        target = budget.target_tokens
        if not survivors or target <= 0:
            return []
        fast = greedy_fill_unordered(survivors, tokens, scores, target)
        if fast is not None:
            return fast
        return greedy_select(score_order(scores, survivors), tokens, scores, target)

    def slice_indices_detailed(
        self, order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], budget: ContextBudget
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """``slice_detailed`` on parallel lists: the selected indices, and each index left out with the
        tokens remaining when it was considered (its BudgetExceeded)."""
        if budget.target_tokens <= 0:
            return [], [(index, 0) for index in order]
        skipped: list[tuple[int, int]] = []
        return greedy_select(order, tokens, scores, budget.target_tokens, skipped), skipped

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        # Imported here: only a traced run asks for the reasons, and ``slice`` must not load them.
        from cupel.diagnostics.reasons import BudgetExceeded
        from cupel.slicers._base import SliceOutcome, budget_outcome

        target = budget.target_tokens
        if target <= 0:
            return SliceOutcome(
                (), tuple((entry.item, BudgetExceeded(entry.item.tokens, 0)) for entry in scored)
            )
        tokens = [entry.item.tokens for entry in scored]
        scores = [entry.score for entry in scored]
        skipped: list[tuple[int, int]] = []
        chosen = greedy_select(range(len(scored)), tokens, scores, target, skipped)
        return budget_outcome(scored, tokens, chosen, skipped)

    def __repr__(self) -> str:
        return "GreedySlice()"

    def __eq__(self, other: object) -> bool:
        return type(other) is GreedySlice

    def __hash__(self) -> int:
        return hash(GreedySlice)
