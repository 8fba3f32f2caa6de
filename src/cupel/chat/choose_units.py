"""Stage 3 over unit items: :func:`split_turns`, the item-based ``"turns"`` reference
(:func:`select_turns`, compared with :func:`~cupel.chat.choose.select_turn_records` by the property
tests) and the ``"last"`` window, read from the end (:func:`scan_last`) or over items
(:func:`select_last`), as ``trim_messages(strategy="last")`` keeps it without orphaned tool results."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cupel.chat.choose import Choice, latest_overflow
from cupel.chat.options import ChatOptions, IncompleteTurn, available_tokens
from cupel.chat.parse import SYSTEM_ROLES, MessageView, ParsedMessage, parse_message
from cupel.chat.read import INDICES_KEY, ROLES_KEY, parsed_costs
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextKind, OverflowStrategy
from cupel.pipeline import Pipeline
from cupel.placers import ChronologicalPlacer
from cupel.tokens.base import CounterLike

__all__ = [
    "LastWindow",
    "Transcript",
    "Turn",
    "lacks_question",
    "last_with_question",
    "scan_last",
    "select_last",
    "select_turns",
    "split_turns",
    "turn_item",
    "unit_indices",
    "unit_roles",
]


def unit_roles(item: ContextItem) -> tuple[str, ...]:
    """The roles of a chat item's messages, in transcript order."""
    roles: tuple[str, ...] = tuple(item.metadata[ROLES_KEY])
    return roles


def unit_indices(item: ContextItem) -> tuple[int, ...]:
    """The transcript positions of a chat item's messages, ascending."""
    indices: tuple[int, ...] = tuple(item.metadata[INDICES_KEY])
    return indices


def _opens_turn(item: ContextItem) -> bool:
    return bool(unit_roles(item)[0] == "user")


def _is_system(item: ContextItem) -> bool:
    return unit_roles(item)[0] in SYSTEM_ROLES


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: its number (0 for a preamble before the first user message) and its units in order."""

    number: int
    items: tuple[ContextItem, ...]

    @property
    def tokens(self) -> int:
        """Tokens of every unit in the turn."""
        return sum(item.tokens for item in self.items)

    @property
    def indices(self) -> tuple[int, ...]:
        """Transcript positions of the turn's messages (system units excluded), ascending."""
        return tuple(index for item in self.items for index in unit_indices(item))

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles of the turn's messages, in transcript order."""
        return tuple(role for item in self.items for role in unit_roles(item))

    @property
    def start(self) -> int:
        """Position of the turn's first message."""
        return unit_indices(self.items[0])[0]


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript's units split into system units and turns, both in transcript order."""

    system: tuple[ContextItem, ...]
    turns: tuple[Turn, ...]

    @property
    def latest(self) -> Turn | None:
        """The turn the model is asked to answer: the last one."""
        return self.turns[-1] if self.turns else None

    def turn_of(self) -> dict[int, int]:
        """Message position -> turn number, for every non-system message."""
        return {index: turn.number for turn in self.turns for index in turn.indices}


def split_turns(items: Sequence[ContextItem]) -> Transcript:
    """Group chat items (one per unit, in transcript order) into system units and turns.

    The items must come from :func:`cupel.chat.messages_to_items` (or the LangChain twin), whose
    units are ordered by their first message.
    """
    system: list[ContextItem] = []
    turns: list[Turn] = []
    current: list[ContextItem] = []
    number = 0
    for item in items:
        if _is_system(item):
            system.append(item)
            continue
        if _opens_turn(item) and (current or number == 0):
            if current:
                turns.append(Turn(number, tuple(current)))
            number += 1
            current = []
        current.append(item)
    if current:
        turns.append(Turn(number, tuple(current)))
    return Transcript(tuple(system), tuple(turns))


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
    strict: bool = False,
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
                latest, remaining, pinned_tokens, budget, pipeline, keep, reasons, position_of, notify, strict
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
        units = {
            id(candidate): [position_of[id(unit)] for unit in group]
            for candidate, group in zip(candidates, members, strict=True)
        }
        return choice.ranked(older.dry_run(candidates, window), units)

    # Only the older candidates were ranked: the other units were kept or dropped by the rules above.
    choice = Choice(items, kept, reasons, extra=older_reasons, by_rule=True)
    return choice


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
    strict: bool,
) -> int:
    """The latest turn does not fit: keep it anyway (PROCEED), or keep what the agent rule keeps."""
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.PROCEED:
        keep(latest.items)
        if notify and pipeline.on_overflow is not None:
            over = pinned_tokens + latest.tokens - budget.target_tokens
            pipeline.on_overflow(OverflowEvent(over, latest.items, budget))
        return 0
    tokens = [item.tokens for item in latest.items]
    kept, why, used = latest_overflow(tokens, remaining, pinned_tokens, budget, strategy, strict=strict)
    keep([item for item, flag in zip(latest.items, kept, strict=True) if flag])
    for offset, reason in why.items():
        reasons[position_of[id(latest.items[offset])]] = reason
    return remaining - used


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
    if start_on == "user" and any("user" in unit_roles(item) for item in items[lead:]):  # else start anywhere
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
    if start_on == "user" and any(views(index).role == "user" for index in range(lead, count)):
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


def lacks_question(roles: Callable[[int], object], count: int, start: int, lead: int) -> bool:
    """Whether a ``"last"`` window (``0..lead-1``, then ``start`` on) holds no user message although
    the transcript has one after its leading messages, or (a transcript without one) holds no unit."""
    return not any(roles(index) == "user" for index in range(start, count)) and (
        lead < start == count or any(roles(index) == "user" for index in range(lead, min(start, count)))
    )


def last_with_question(items: Sequence[ContextItem], budget: ContextBudget, rule: OverflowStrategy) -> Choice:
    """The ``"last"`` window when no user message fits in it: the leading system units, the last user
    message's unit (the task; else the newest unit) and what ``latest_overflow`` keeps after it."""
    lead = 0
    while lead < len(items) and items[lead].pinned and unit_roles(items[lead])[0] in SYSTEM_ROLES:
        lead += 1
    pinned_tokens = sum(item.tokens for item in items[:lead])
    available = available_tokens(budget, pinned_tokens)
    asks = [p for p in range(lead, len(items)) if unit_roles(items[p])[0] == "user"]
    task = asks[-1] if asks else len(items) - 1
    if rule is OverflowStrategy.PROCEED:
        rule = OverflowStrategy.TRUNCATE  # a question is what must fit
    tokens = [item.tokens for item in items[task:]]
    flags, why, used = latest_overflow(tokens, available, pinned_tokens, budget, rule)
    kept = [position < lead for position in range(task)] + flags
    reasons: dict[int, ExclusionReason] = {task + offset: reason for offset, reason in why.items()}
    needed = 0  # a unit before the task could only come with every unit between it and the task
    for position in range(task - 1, lead - 1, -1):
        needed += items[position].tokens
        reasons[position] = BudgetExceeded(needed, available - used)
    return Choice(items, kept, reasons)
