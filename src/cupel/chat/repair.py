"""Repair of broken histories: drop orphaned tool results and tool calls that never got a result.

Crashed agent runs leave exactly these: a call whose result never came, a result whose call was
trimmed away. Repair drops the offending messages (a call's whole incomplete unit goes: the results of
its sibling calls become orphans and go next) until every call has its result and every result its call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cupel.chat._parse import ParsedMessage
from cupel.chat.reasons import OrphanedToolResult, UnansweredToolCall
from cupel.diagnostics.reasons import ExclusionReason

__all__ = ["Repair", "repair_links"]

_FUNCTION = "function_call"


@dataclass(frozen=True, slots=True)
class Repair:
    """One message repair dropped: its position in the transcript and why."""

    index: int
    reason: ExclusionReason


def _broken(parsed: Sequence[ParsedMessage]) -> dict[int, ExclusionReason]:
    """Positions (in ``parsed``) of the messages breaking a call/result link, with the reason."""
    broken: dict[int, ExclusionReason] = {}
    open_calls: dict[str, int] = {}
    open_functions: list[int] = []
    for position, message in enumerate(parsed):
        for call_id, _ in message.results:
            if open_calls.pop(call_id, None) is None:
                broken.setdefault(position, OrphanedToolResult(call_id))
        if message.function_result and not open_functions:
            broken.setdefault(position, OrphanedToolResult(_FUNCTION))
        elif message.function_result:
            open_functions.pop()
        for call_id, _ in message.calls:
            earlier = open_calls.get(call_id)
            if earlier is not None:
                # The id came again before its result: the earlier call never got one.
                broken.setdefault(earlier, UnansweredToolCall(call_id))
            open_calls[call_id] = position
        if message.function_call is not None:
            open_functions.append(position)
    for call_id, position in open_calls.items():
        broken.setdefault(position, UnansweredToolCall(call_id))
    for position in open_functions:
        broken.setdefault(position, UnansweredToolCall(_FUNCTION))
    return broken


def repair_links(parsed: Sequence[ParsedMessage]) -> tuple[list[ParsedMessage], list[Repair]]:
    """The messages that remain after repair (in order) and every repair made, by message position."""
    alive = list(parsed)
    repairs: list[Repair] = []
    while True:
        broken = _broken(alive)
        if not broken:
            break
        repairs.extend(Repair(alive[position].index, reason) for position, reason in broken.items())
        alive = [message for position, message in enumerate(alive) if position not in broken]
    repairs.sort(key=lambda repair: repair.index)
    return alive, repairs
