"""The tracing hook of ``select_messages``: one ``cupel.chat`` span per call, whatever the strategy.

Inside ``cupel.otel.tracing()``, a chat selection is one operation whose span is current while it runs,
so a pipeline run inside it (the ranking of older turns, the message scoring, a summary's second pass)
is its child. The span carries what the caller asked for and got: the caller's budget, the strategy, the
policy name when known, the kept transcript's tokens (pinned messages and a summary included) and the
kept and dropped message counts; at the verbose tiers, one ``cupel.exclusion`` event per dropped unit.
Untraced calls never reach this module.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from cupel.chat.convert import INDICES_KEY
from cupel.chat.selection import ChatSelection, resolve_budget
from cupel.diagnostics.hooks import TraceSink, current_attributes, start_operation
from cupel.diagnostics.identity import item_id
from cupel.errors import CupelError

__all__ = ["SPAN_NAME", "atraced_selection", "traced_selection"]

SPAN_NAME = "cupel.chat"

S = TypeVar("S", bound=ChatSelection[Any])


def _start(sink: TraceSink, budget: object, attributes: Mapping[str, object]) -> Any:
    opening: dict[str, object] = {**current_attributes()}
    opening.update((key, value) for key, value in attributes.items() if value is not None)
    try:
        resolved = resolve_budget(budget)  # type: ignore[arg-type]
    except CupelError:
        pass  # the selection raises this itself, and the span records it
    else:
        opening["cupel.budget.max_tokens"] = resolved.max_tokens
        opening["cupel.budget.target_tokens"] = resolved.target_tokens
    return start_operation(sink, SPAN_NAME, opening)


def outcome(selection: ChatSelection[Any], originals: Sequence[Any]) -> dict[str, object]:
    """The root span's result attributes: tokens and message counts of what was kept and dropped."""
    remaining = Counter(map(id, selection.messages))
    kept = 0
    for message in originals:
        if remaining[id(message)]:
            remaining[id(message)] -= 1
            kept += 1
    return {
        "cupel.chat.message_count": len(originals),
        "cupel.result.tokens": selection.tokens,
        "cupel.result.included_count": len(selection.messages),
        "cupel.result.excluded_count": len(originals) - kept,
        # Kept messages are the caller's own objects; anything else in the result is the summary.
        "cupel.chat.summarized": len(selection.messages) > kept,
    }


def exclusions(selection: ChatSelection[Any]) -> list[tuple[str, Mapping[str, object]]]:
    """One ``cupel.exclusion`` event per dropped unit (a tool call and its results travel together)."""
    excluded = selection.report.excluded  # built untraced: explanation, not selection
    return [
        (
            "cupel.exclusion",
            {
                "cupel.exclusion.reason": entry.reason.name,
                "cupel.exclusion.item_kind": str(entry.item.kind),
                "cupel.exclusion.item_tokens": entry.item.tokens,
                "cupel.exclusion.item_id": item_id(entry.item),
                "cupel.chat.message_count": len(entry.item.metadata.get(INDICES_KEY, ())),
            },
        )
        for entry in excluded
    ]


def _finished(operation: Any, selection: ChatSelection[Any], originals: Sequence[Any]) -> None:
    events = exclusions(selection) if operation.exclusions else []
    operation.finish(outcome(selection, originals), events, None)


def traced_selection(
    sink: TraceSink,
    originals: Sequence[Any],
    budget: object,
    attributes: Mapping[str, object],
    select: Callable[[], S],
) -> S:
    """``select()`` inside a ``cupel.chat`` span opened with ``attributes`` (``None`` values skipped)."""
    operation = _start(sink, budget, attributes)
    try:
        selection = select()
    except BaseException as error:
        operation.finish({}, [], error)
        raise
    _finished(operation, selection, originals)
    return selection


async def atraced_selection(
    sink: TraceSink,
    budget: object,
    attributes: Mapping[str, object],
    select: Callable[[], Awaitable[tuple[S, Sequence[Any]]]],
) -> S:
    """:func:`traced_selection` for async code; ``select`` also returns the transcript it drained."""
    operation = _start(sink, budget, attributes)
    try:
        selection, originals = await select()
    except BaseException as error:
        operation.finish({}, [], error)
        raise
    _finished(operation, selection, originals)
    return selection
