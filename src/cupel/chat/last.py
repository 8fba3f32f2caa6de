"""The ``"last"`` strategy: the leading system messages, then the longest suffix of whole units that fits.

LangChain's ``trim_messages(strategy="last", include_system=True, start_on="human")`` without its
orphaned tool results: the window is cut between units, never between a tool call and its result,
and with ``start_on="user"`` it starts on a user message. Later system messages are part of the
window like any other message, as in ``trim_messages``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cupel.chat._choice import Choice, available_tokens
from cupel.chat._parse import SYSTEM_ROLES, MessageView, ParsedMessage, parse_message
from cupel.chat.convert import parsed_costs
from cupel.chat.options import ChatOptions
from cupel.chat.reasons import IncompleteTurn
from cupel.chat.turns import unit_roles
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.errors import InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem
from cupel.tokens.base import CounterLike

__all__ = ["LastWindow", "scan_last", "select_last"]


def select_last(items: Sequence[ContextItem], budget: ContextBudget, *, start_on: str = "user") -> Choice:
    """Choose the ``"last"`` window over chat items (one per unit, in transcript order)."""
    count = len(items)
    lead = 0
    while lead < count and items[lead].pinned and unit_roles(items[lead])[0] in SYSTEM_ROLES:
        lead += 1
    kept = [False] * count
    pinned_tokens = 0
    for position in range(lead):
        if items[position].pinned:
            kept[position] = True
            pinned_tokens += items[position].tokens
    available = available_tokens(budget, pinned_tokens)
    used = 0
    start = count
    while start > lead and used + items[start - 1].tokens <= available:
        start -= 1
        used += items[start].tokens
    fitted = start
    if start_on == "user":
        while start < count and unit_roles(items[start])[0] != "user":
            used -= items[start].tokens
            start += 1
    for position in range(start, count):
        kept[position] = True

    def reasons() -> dict[int, ExclusionReason]:
        found: dict[int, ExclusionReason] = {}
        for position in range(fitted, start):
            found[position] = IncompleteTurn(_turn_number(items, position))
        # A unit before the window could only come with every unit between it and the window.
        needed = sum(items[position].tokens for position in range(fitted, start))
        for position in range(fitted - 1, lead - 1, -1):
            needed += items[position].tokens
            found[position] = BudgetExceeded(needed, available - used)
        return found

    return Choice(items, kept, extra=reasons)


def _turn_number(items: Sequence[ContextItem], position: int) -> int:
    """The 1-based number of the turn holding unit ``position`` (0 before the first user message)."""
    return sum(1 for item in items[: position + 1] if unit_roles(item)[0] == "user")


@dataclass(frozen=True, slots=True)
class LastWindow:
    """Where a ``"last"`` window lies: the pinned leading system messages, then ``start`` to the end."""

    pinned: tuple[int, ...]
    start: int
    tokens: int


_CHUNK = 64


def scan_last(
    views: Callable[[int], MessageView],
    count: int,
    plain: Callable[[int], ParsedMessage | None],
    budget: ContextBudget,
    *,
    counter: CounterLike | None,
    options: ChatOptions,
    start_on: str = "user",
) -> LastWindow:
    """The ``"last"`` window read from the end: only the messages it may keep are read and counted.

    Gives the same window as :func:`select_last` over the whole transcript's items. Broken tool-call
    links are found (and raised as conversion does) only among the messages read.
    """
    lead_parsed: list[ParsedMessage] = []
    if options.pin_system:
        while len(lead_parsed) < count:
            view = views(len(lead_parsed))
            if view.role not in SYSTEM_ROLES:
                break
            lead_parsed.append(parse_message(view, len(lead_parsed), options))
    lead = len(lead_parsed)
    pinned_tokens = sum(parsed_costs(lead_parsed, counter))
    available = available_tokens(budget, pinned_tokens)
    used = 0
    start = count  # the window so far: start..count-1, closed units only
    unit_tokens = 0
    pending: set[str] = set()
    pending_functions = 0
    position = count
    done = False
    while position > lead and not done:
        low = max(lead, position - _CHUNK)
        chunk = [
            plain(index) or parse_message(views(index), index, options) for index in range(low, position)
        ]
        costs = parsed_costs(chunk, counter)
        for message, cost in zip(reversed(chunk), reversed(costs), strict=True):
            unit_tokens += cost
            pending.update(call_id for call_id, _ in message.results)
            pending_functions += message.function_result
            for call_id, where in message.calls:
                if call_id not in pending:
                    raise InvalidConfigurationError(
                        f"{where}: tool call {call_id!r} has no result in the transcript; every tool "
                        "call needs its result, or providers reject the request"
                    )
                pending.discard(call_id)
            if message.function_call is not None:
                if not pending_functions:
                    raise InvalidConfigurationError(
                        f"{message.function_call} has no function result after it; every function "
                        "call needs its result, or providers reject the request"
                    )
                pending_functions -= 1
            if pending or pending_functions:
                continue
            if used + unit_tokens > available:
                done = True
                break
            used += unit_tokens
            start = message.index
            unit_tokens = 0
        position = low
    if not done and (pending or pending_functions):
        raise InvalidConfigurationError(
            f"messages[{lead}]..: a tool result answers no tool call made by an earlier assistant message "
            "(a tool result must follow its call)"
        )
    if start_on == "user":
        while start < count:
            # A unit never opens on a user message that answers calls: that one joins its call's unit.
            if views(start).role == "user":
                break
            # Drop the unit opening at start: a message and, if it makes calls, its results.
            start, tokens = _skip_unit(views, start, count, counter, options)
            used -= tokens
    return LastWindow(tuple(range(lead)), start, pinned_tokens + used)


def _skip_unit(
    views: Callable[[int], MessageView],
    start: int,
    count: int,
    counter: CounterLike | None,
    options: ChatOptions,
) -> tuple[int, int]:
    """The position after the unit opening at ``start`` (inside the window), and the unit's tokens."""
    parsed = [parse_message(views(start), start, options)]
    open_calls = {call_id for call_id, _ in parsed[0].calls}
    functions = 1 if parsed[0].function_call is not None else 0
    position = start + 1
    while (open_calls or functions) and position < count:
        message = parse_message(views(position), position, options)
        parsed.append(message)
        open_calls.difference_update(call_id for call_id, _ in message.results)
        functions -= message.function_result
        open_calls.update(call_id for call_id, _ in message.calls)
        functions += message.function_call is not None
        position += 1
    return position, sum(parsed_costs(parsed, counter))
