"""What a chat strategy decided, and the SelectionReport built from it only when asked for."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.errors import PinnedItemsExceedBudgetError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import compute_effective_budget
from cupel.protocols import Scorer
from cupel.scorers._base import score_items

__all__ = ["Choice", "available_tokens"]


def available_tokens(budget: ContextBudget, pinned_tokens: int) -> int:
    """Tokens left for unpinned units: the spec's effective target; pinned overflow raises as in Classify."""
    if pinned_tokens > budget.max_tokens - budget.output_reserve:
        raise PinnedItemsExceedBudgetError(pinned_tokens, budget.max_tokens - budget.output_reserve)
    return compute_effective_budget(budget, pinned_tokens).target_tokens


@dataclass(slots=True)
class Choice:
    """Units (chat items in transcript order), which are kept, and why each other one is not.

    ``scores`` overrides the scorer for some units (by position): a strategy that scored turns
    reports the turn's score on each of its units.
    """

    items: Sequence[ContextItem]
    kept: list[bool]
    reasons: dict[int, ExclusionReason] = field(default_factory=dict)
    scores: dict[int, float] = field(default_factory=dict)
    extra: Callable[[], Mapping[int, ExclusionReason]] | None = None

    def kept_items(self) -> list[ContextItem]:
        return [item for item, keep in zip(self.items, self.kept, strict=True) if keep]

    def report(self, scorer: Scorer) -> SelectionReport:
        """Included units in transcript order (the placed order), excluded ones by score descending."""
        if self.extra is not None:
            self.reasons.update(self.extra())
            self.extra = None
        loose = [position for position, item in enumerate(self.items) if not item.pinned]
        scored = score_items(scorer, [self.items[position] for position in loose]) if loose else []
        scores = dict(zip(loose, scored, strict=True))
        scores.update(self.scores)
        included: list[IncludedItem] = []
        excluded: list[tuple[int, ExcludedItem]] = []
        for position, item in enumerate(self.items):
            score = 1.0 if item.pinned else scores[position]
            if self.kept[position]:
                reason = (
                    InclusionReason.PINNED
                    if item.pinned
                    else InclusionReason.ZERO_TOKEN
                    if item.tokens == 0
                    else InclusionReason.SCORED
                )
                included.append(IncludedItem(item, score, reason))
            else:
                excluded.append((position, ExcludedItem(item, score, self.reasons[position])))
        excluded.sort(key=lambda entry: (-entry[1].score, entry[0]))
        return SelectionReport(
            events=(),
            included=tuple(included),
            excluded=tuple(entry for _, entry in excluded),
            total_candidates=len(self.items),
            total_tokens_considered=sum(item.tokens for item in self.items),
        )
