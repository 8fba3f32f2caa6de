"""The ``"turns"`` strategy: whole turns, so every reply keeps its question and roles alternate.

Pinned system messages first; then the latest turn (the one the model must answer); then, with
``keep_first_turn``, the first turn; then a contiguous run of the most recent whole turns, taking at most
``recent_share`` of what is left; then older whole turns chosen by the policy's scorer and slicer in
what remains. Everything is placed in transcript order.

If the latest turn alone does not fit, ``OverflowStrategy.THROW`` raises
:class:`~cupel.errors.BudgetOverflowError`; ``TRUNCATE`` keeps the longest run of the turn's units
from its start (its question first) that fits; ``PROCEED`` keeps the whole turn over budget.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from cupel.chat._choice import Choice, available_tokens
from cupel.chat.turns import Turn, split_turns
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import BudgetOverflowError
from cupel.model import ContextBudget, ContextItem, ContextKind, OverflowStrategy
from cupel.pipeline import Pipeline
from cupel.placers import ChronologicalPlacer

__all__ = ["select_turns", "turn_item"]


def turn_item(turn: Turn) -> ContextItem:
    """One item standing for a whole turn, for the policy's scorer and slicer to rank."""
    first = turn.items[0]
    kinds = {item.kind for item in turn.items}
    tags = tuple(dict.fromkeys(tag for item in turn.items for tag in item.tags))
    priorities = [item.priority for item in turn.items if item.priority is not None]
    return ContextItem(
        "\n".join(item.content for item in turn.items),
        turn.tokens,
        kind=ContextKind.TOOL_OUTPUT if ContextKind.TOOL_OUTPUT in kinds else first.kind,
        source=first.source,
        tags=tags,
        timestamp=first.timestamp,
        priority=max(priorities) if priorities else None,
        metadata={"cupel:chat.turn": turn.number},
    )


def select_turns(
    items: Sequence[ContextItem],
    budget: ContextBudget,
    pipeline: Pipeline,
    *,
    keep_first_turn: bool = False,
    recent_share: float = 0.75,
    notify: bool = True,
) -> Choice:
    """Choose whole turns over chat items (one per unit, in transcript order).

    ``notify=False`` leaves out the pipeline's ``on_overflow`` call (a report rebuilt after the
    selection already made it).
    """
    transcript = split_turns(items)
    position_of = {id(item): position for position, item in enumerate(items)}
    kept = [False] * len(items)
    reasons: dict[int, ExclusionReason] = {}
    pinned_tokens = 0
    loose_system: list[ContextItem] = []
    for item in transcript.system:
        if item.pinned:
            kept[position_of[id(item)]] = True
            pinned_tokens += item.tokens
        else:
            loose_system.append(item)
    available = available_tokens(budget, pinned_tokens)
    turns = list(transcript.turns)

    def keep(turn_items: Sequence[ContextItem]) -> None:
        for item in turn_items:
            kept[position_of[id(item)]] = True

    remaining = available
    if turns:
        latest = turns.pop()
        if latest.tokens <= remaining:
            keep(latest.items)
            remaining -= latest.tokens
        else:
            remaining = _overflow(
                latest, remaining, pinned_tokens, budget, pipeline, keep, reasons, position_of, notify
            )
    if keep_first_turn and turns and turns[0].tokens <= remaining:
        first = turns.pop(0)
        keep(first.items)
        remaining -= first.tokens
    run_budget = math.floor(remaining * recent_share)
    while turns and turns[-1].tokens <= run_budget:
        turn = turns.pop()
        keep(turn.items)
        run_budget -= turn.tokens
        remaining -= turn.tokens
    # Older turns (and unpinned system units) compete by the policy's scores for what is left.
    candidates = [turn_item(turn) for turn in turns] + list(loose_system)
    members: list[tuple[ContextItem, ...]] = [turn.items for turn in turns] + [
        (item,) for item in loose_system
    ]
    older = Pipeline(
        pipeline.scorer,
        pipeline.slicer,
        ChronologicalPlacer(),
        deduplication=pipeline.deduplication,
    )
    window = ContextBudget(remaining, remaining)
    chosen = {id(item) for item in older.run(candidates, window)} if candidates else set()
    for candidate, units in zip(candidates, members, strict=True):
        if id(candidate) in chosen:
            keep(units)

    def older_reasons() -> dict[int, ExclusionReason]:
        if not candidates:
            return {}
        report = older.dry_run(candidates, window)
        found: dict[int, ExclusionReason] = {}
        by_id = {id(candidate): units for candidate, units in zip(candidates, members, strict=True)}
        for entry in report.excluded:
            for unit in by_id[id(entry.item)]:
                found[position_of[id(unit)]] = entry.reason
        return found

    return Choice(items, kept, reasons, extra=older_reasons)


def _overflow(
    latest: Turn,
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    pipeline: Pipeline,
    keep: Callable[[Sequence[ContextItem]], None],
    reasons: dict[int, ExclusionReason],
    position_of: dict[int, int],
    notify: bool,
) -> int:
    """The latest turn does not fit: raise, keep it anyway, or keep the prefix of it that fits."""
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.THROW:
        raise BudgetOverflowError(pinned_tokens + latest.tokens, budget.target_tokens)
    if strategy is OverflowStrategy.PROCEED:
        keep(latest.items)
        if notify and pipeline.on_overflow is not None:
            over = pinned_tokens + latest.tokens - budget.target_tokens
            pipeline.on_overflow(OverflowEvent(over, latest.items, budget))
        return 0
    used = 0
    cut = len(latest.items)
    for index, item in enumerate(latest.items):
        if used + item.tokens > remaining:
            cut = index
            break
        used += item.tokens
    keep(latest.items[:cut])
    # A unit after the cut could only come with every unit between the cut and it.
    needed = 0
    for dropped in latest.items[cut:]:
        needed += dropped.tokens
        reasons[position_of[id(dropped)]] = BudgetExceeded(needed, remaining - used)
    return remaining - used
