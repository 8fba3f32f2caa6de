"""ScoreSlice: fill the budget by score, highest first (an extension; docs/spec-notes.md, "Relevance").

GreedySlice ranks by score per token, which under a relevance score prefers short, barely relevant
items to the longer one that answers the question; on the LoCoMo dev split, ranking the same BM25
scores by score keeps more evidence than by score per token (docs/eval.md, "Relevance").
"""

from __future__ import annotations

from collections.abc import Sequence

from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers.greedy import fill_in_order

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from cupel.slicers._base import SliceOutcome

__all__ = ["ScoreSlice", "score_select"]


def score_select(
    order: Sequence[int], tokens: Sequence[int], target: int, skipped: list[tuple[int, int]] | None = None
) -> list[int]:
    """SCORE-SLICE on parallel lists: ``order`` holds the candidates' indices by score, highest first
    (the pipeline's Stage 4 order: ties by index, NaN last). Each is kept if it still fits; zero-token
    items always fit. With ``skipped``, every index left out is appended with the tokens remaining."""
    return fill_in_order(order, tokens, target, skipped)


class ScoreSlice:
    """Walk the candidates by score, highest first, keeping each one that still fits the target.

    No backtracking; zero-token items are always kept. Deterministic: equal scores keep the order the
    pipeline sorted them in (input order).
    """

    __slots__ = ()

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        # ``scored`` comes sorted by score; a caller's own list is ranked the same way first.
        order = _by_score(scored)
        tokens = [entry.item.tokens for entry in scored]
        return [scored[index].item for index in score_select(order, tokens, budget.target_tokens)]

    def slice_indices(
        self, order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], budget: ContextBudget
    ) -> list[int]:
        """``slice`` on parallel lists (the pipeline's allocation-free form)."""
        return score_select(order, tokens, budget.target_tokens)

    def slice_indices_detailed(
        self, order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], budget: ContextBudget
    ) -> tuple[list[int], list[tuple[int, int]]]:
        """The selected indices, and each index left out with the tokens remaining when it was
        considered (its BudgetExceeded)."""
        skipped: list[tuple[int, int]] = []
        return score_select(order, tokens, budget.target_tokens, skipped), skipped

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        from cupel.slicers._base import budget_outcome

        tokens = [entry.item.tokens for entry in scored]
        skipped: list[tuple[int, int]] = []
        chosen = score_select(_by_score(scored), tokens, budget.target_tokens, skipped)
        return budget_outcome(scored, tokens, chosen, skipped)

    def __repr__(self) -> str:
        return "ScoreSlice()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ScoreSlice

    def __hash__(self) -> int:
        return hash(ScoreSlice)


def _by_score(scored: Sequence[ScoredItem]) -> list[int]:
    from cupel._score_order import descending_indices

    return descending_indices(range(len(scored)), [entry.score for entry in scored])
