"""Stage 6's overflow handling: what happens when the placed items exceed the target (spec: Stage 6,
OverflowStrategy). The pipeline's tracer, when it has one, is passed in as ``tracer``."""

from __future__ import annotations

from cupel._score_order import sort_by_score
from cupel.errors import BudgetOverflowError
from cupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from cupel.diagnostics.events import OverflowEvent

__all__ = ["handle_overflow"]


def handle_overflow(
    merged: list[ScoredItem],
    merged_tokens: int,
    budget: ContextBudget,
    pinned: list[ContextItem],
    pinned_tokens: int,
    tracer: Any,
    strategy: OverflowStrategy,
    on_overflow: Callable[[OverflowEvent], None] | None,
) -> list[ScoredItem]:
    """The placed items under ``strategy``: raise, report and keep them all, or truncate.

    ``pinned_tokens`` is the total of the ``pinned`` items' token counts (Stage 1 summed them)."""
    target = budget.target_tokens
    if strategy is OverflowStrategy.THROW:
        raise BudgetOverflowError(merged_tokens, target)
    if strategy is OverflowStrategy.PROCEED:
        from cupel.diagnostics.events import OverflowEvent

        event = OverflowEvent(merged_tokens - target, tuple(entry.item for entry in merged), budget)
        if on_overflow is not None:
            on_overflow(event)
        if tracer is not None and tracer.observer is not None:
            tracer.observer.on_overflow(event)
        return merged
    # Truncate (spec-notes, Truncate): the lowest-scored non-pinned items go first (NaN lowest; among
    # equal scores the one placed later), until the rest fits. Removing a zero-token item never helps.
    candidates = [position for position, entry in enumerate(merged) if not entry.item.pinned]
    candidates.reverse()
    removal_order = sort_by_score(candidates, lambda position: merged[position].score, reverse=False)
    total = merged_tokens
    removed: list[int] = []
    for position in removal_order:
        if total <= target:
            break
        tokens = merged[position].item.tokens
        if tokens <= 0:
            continue
        removed.append(position)
        total -= tokens
    # Then the removed items that fit in what is left go back, highest score first (among equal
    # scores the one placed earlier): removing the lowest-scored first may have freed more than needed.
    restored: set[int] = set()
    for position in sort_by_score(sorted(removed), lambda position: merged[position].score):
        entry = merged[position]
        tokens = entry.item.tokens
        if total + tokens <= target:
            restored.add(position)
            total += tokens
        elif tracer is not None:
            from cupel.diagnostics.attribution import truncation_reason

            # What the items kept at that moment left for this one; later items only take more.
            reason = truncation_reason(tokens, target - total, pinned_tokens, pinned)
            tracer.excluded(tracer.stages.PLACE, entry.item, entry.score, reason)
    dropped = set(removed) - restored
    return [entry for position, entry in enumerate(merged) if position not in dropped]
