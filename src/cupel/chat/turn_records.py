"""The ``"turns"`` strategy over light unit records: the fast path beside :mod:`cupel.chat.whole_turns`.

:func:`~cupel.chat.whole_turns.select_turns` is the plain reference: it works on one ContextItem per
unit. :func:`select_turn_records` chooses exactly the same messages from per-unit records (message
positions, roles, tokens) and builds items only where the policy needs them: for the older turns
and unpinned system units that compete by score. The property tests run both on random transcripts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from cupel._trusted import trusted_constructor
from cupel.chat._choice import available_tokens
from cupel.chat._parse import SYSTEM_ROLES, ParsedMessage, link_units
from cupel.chat.convert import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, SYNTHETIC_EPOCH, parsed_costs
from cupel.chat.options import ChatOptions
from cupel.chat.selection import ChatSelection
from cupel.chat.whole_turns import select_turns
from cupel.diagnostics.report import SelectionReport
from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import BudgetOverflowError
from cupel.model import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    OverflowStrategy,
    _ReadOnlyMap,
    epoch_microseconds,
)
from cupel.pipeline import Pipeline
from cupel.placers import ChronologicalPlacer
from cupel.policy.chat_settings import ChatSettings
from cupel.tokens.base import CounterLike

__all__ = ["TurnRecords", "UnitRecord", "select_turn_records", "select_turns_fast", "turn_records"]


class UnitRecord(NamedTuple):
    """One unit: its message positions (ascending), roles, tokens and whether it is pinned."""

    indices: tuple[int, ...]
    roles: tuple[str, ...]
    tokens: int
    pinned: bool


@dataclass(frozen=True, slots=True)
class TurnRecords:
    """A parsed transcript's units as records, and what building an item for one of them needs."""

    units: list[UnitRecord]
    parsed: dict[int, ParsedMessage]
    originals: Sequence[object]


def turn_records(
    parsed: Sequence[ParsedMessage],
    originals: Sequence[object],
    *,
    counter: CounterLike | None,
    options: ChatOptions,
) -> TurnRecords:
    """Unit records for a parsed transcript, as :func:`~cupel.chat.convert.items_of_parsed` groups it.

    Counting, linking and their errors come in the same order as the item conversion's.
    """
    costs = parsed_costs(parsed, counter)
    last_user = max((message.index for message in parsed if message.role == "user"), default=None)
    if not any(
        message.calls or message.results or message.function_call is not None or message.function_result
        for message in parsed
    ):
        # No tool calls: every message is a unit of its own (what linking would find, without its cost).
        return TurnRecords(
            [
                UnitRecord(
                    (message.index,),
                    (message.role,),
                    cost,
                    (options.pin_system and message.role in SYSTEM_ROLES)
                    or (options.pin_last_user and message.index == last_user),
                )
                for message, cost in zip(parsed, costs, strict=True)
            ],
            {message.index: message for message in parsed},
            originals,
        )
    units = link_units(parsed)
    by_index = {message.index: message for message in parsed}
    tokens = {message.index: cost for message, cost in zip(parsed, costs, strict=True)}
    records: list[UnitRecord] = []
    for unit in units:
        roles = tuple(by_index[index].role for index in unit)
        pinned = options.pin_system and roles[0] in SYSTEM_ROLES
        if options.pin_last_user and last_user in unit:
            pinned = True
        total = tokens[unit[0]] if len(unit) == 1 else sum(tokens[index] for index in unit)
        records.append(UnitRecord(unit, roles, total, pinned))
    return TurnRecords(records, by_index, originals)


def _unit_item(records: TurnRecords, unit: UnitRecord) -> ContextItem:
    """The item :func:`~cupel.chat.convert.items_of_parsed` builds for ``unit`` (synthetic timestamps)."""
    system = unit.roles[0] in SYSTEM_ROLES
    return ContextItem(
        "\n".join(records.parsed[index].rendering for index in unit.indices),
        unit.tokens,
        kind=ContextKind.SYSTEM_PROMPT
        if system
        else ContextKind.TOOL_OUTPUT
        if len(unit.indices) > 1
        else ContextKind.MESSAGE,
        source=ContextSource.CHAT,
        tags=tuple(dict.fromkeys(unit.roles)),
        metadata={
            MESSAGES_KEY: tuple(records.originals[index] for index in unit.indices),
            INDICES_KEY: unit.indices,
            ROLES_KEY: unit.roles,
        },
        timestamp=SYNTHETIC_EPOCH + timedelta(seconds=unit.indices[0]),
        pinned=unit.pinned,
    )


# Every ContextItem field, positionally, in declaration order, without ``__init__``'s validation.
_new_item = trusted_constructor(ContextItem)


def _trusted_item(
    content: str,
    tokens: int,
    kind: ContextKind,
    source: ContextSource,
    tags: tuple[str, ...],
    metadata: Mapping[str, Any],
    timestamp: datetime,
) -> ContextItem:
    """An unpinned ContextItem built without validation, from values valid by construction (non-empty
    content, int tokens, enum members, a tuple of str tags, an aware timestamp): one per older turn,
    where validation would dominate the strategy's time.
    """
    return _new_item(
        content,
        tokens,
        kind,
        source,
        None,
        tags,
        _ReadOnlyMap(metadata),
        timestamp,
        None,
        False,
        None,
        epoch_microseconds(timestamp),
    )


def _turn_item(records: TurnRecords, number: int, units: Sequence[UnitRecord]) -> ContextItem:
    """The item :func:`~cupel.chat.whole_turns.turn_item` builds for a turn of ``units``."""
    # A turn holds no system unit, so its kind is a tool output's if any unit has tool messages.
    multi = any(len(unit.indices) > 1 for unit in units)
    parsed = records.parsed
    # Valid by construction (renderings are never empty), so built without the constructor's checks.
    return _trusted_item(
        "\n".join(parsed[index].rendering for unit in units for index in unit.indices),
        sum(unit.tokens for unit in units),
        ContextKind.TOOL_OUTPUT if multi else ContextKind.MESSAGE,
        ContextSource.CHAT,
        tuple(dict.fromkeys(role for unit in units for role in unit.roles)),
        {"cupel:chat.turn": number},
        SYNTHETIC_EPOCH + timedelta(seconds=units[0].indices[0]),
    )


def select_turn_records(
    records: TurnRecords,
    budget: ContextBudget,
    pipeline: Pipeline,
    *,
    keep_first_turn: bool = False,
    recent_share: float = 0.75,
) -> tuple[list[int], int]:
    """The message positions :func:`~cupel.chat.whole_turns.select_turns` keeps (system first, then in
    transcript order) and their tokens.

    Raises as the reference does when the latest turn alone overflows under ``THROW``.
    """
    units = records.units
    kept = [False] * len(units)
    pinned_tokens = 0
    loose_system: list[int] = []
    turns: list[tuple[int, list[int], int]] = []  # (number, unit positions, tokens)
    current: list[int] = []
    current_tokens = 0
    number = 0
    for position, unit in enumerate(units):
        first_role = unit.roles[0]
        if first_role in SYSTEM_ROLES:
            if unit.pinned:
                kept[position] = True
                pinned_tokens += unit.tokens
            else:
                loose_system.append(position)
            continue
        if first_role == "user" and (current or number == 0):
            if current:
                turns.append((number, current, current_tokens))
            number += 1
            current = []
            current_tokens = 0
        current.append(position)
        current_tokens += unit.tokens
    if current:
        turns.append((number, current, current_tokens))
    available = available_tokens(budget, pinned_tokens)

    def keep(positions: Sequence[int]) -> None:
        for position in positions:
            kept[position] = True

    remaining = available
    if turns:
        _, latest, latest_tokens = turns.pop()
        if latest_tokens <= remaining:
            keep(latest)
            remaining -= latest_tokens
        else:
            remaining = _overflow(
                records, latest, latest_tokens, remaining, pinned_tokens, budget, pipeline, keep
            )
    oldest = 0  # turns[oldest:] are still open
    if keep_first_turn and turns and turns[0][2] <= remaining:
        keep(turns[0][1])
        remaining -= turns[0][2]
        oldest = 1
    run_budget = math.floor(remaining * recent_share)
    end = len(turns)
    while end > oldest and turns[end - 1][2] <= run_budget:
        end -= 1
        keep(turns[end][1])
        run_budget -= turns[end][2]
        remaining -= turns[end][2]
    older = turns[oldest:end]
    if older or loose_system:
        candidates = [
            _turn_item(records, turn_number, [units[position] for position in positions])
            for turn_number, positions, _ in older
        ] + [_unit_item(records, units[position]) for position in loose_system]
        members = [positions for _, positions, _ in older] + [[position] for position in loose_system]
        scored = Pipeline(
            pipeline.scorer,
            pipeline.slicer,
            ChronologicalPlacer(),
            deduplication=pipeline.deduplication,
        )
        chosen = {id(item) for item in scored.run(candidates, ContextBudget(remaining, remaining))}
        for candidate, positions in zip(candidates, members, strict=True):
            if id(candidate) in chosen:
                keep(positions)
    system: list[int] = []
    rest: list[int] = []
    tokens = 0
    for position, unit in enumerate(units):
        if kept[position]:
            tokens += unit.tokens
            for index, role in zip(unit.indices, unit.roles, strict=True):
                (system if role in SYSTEM_ROLES else rest).append(index)
    system.sort()
    rest.sort()
    return system + rest, tokens


def _overflow(
    records: TurnRecords,
    latest: list[int],
    latest_tokens: int,
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    pipeline: Pipeline,
    keep: Callable[[Sequence[int]], None],
) -> int:
    """As the reference's overflow: raise, keep the whole latest turn, or keep its prefix that fits."""
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.THROW:
        raise BudgetOverflowError(pinned_tokens + latest_tokens, budget.target_tokens)
    if strategy is OverflowStrategy.PROCEED:
        keep(latest)
        if pipeline.on_overflow is not None:
            over = pinned_tokens + latest_tokens - budget.target_tokens
            items = tuple(_unit_item(records, records.units[position]) for position in latest)
            pipeline.on_overflow(OverflowEvent(over, items, budget))
        return 0
    used = 0
    cut = len(latest)
    for offset, position in enumerate(latest):
        tokens = records.units[position].tokens
        if used + tokens > remaining:
            cut = offset
            break
        used += tokens
    keep(latest[:cut])
    return remaining - used


def select_turns_fast(
    parsed: Sequence[ParsedMessage],
    originals: Sequence[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    counter: CounterLike | None,
    options: ChatOptions,
    to_items: Callable[[], list[ContextItem]],
) -> ChatSelection[Any]:
    """The ``"turns"`` strategy on unit records; the report, when read, comes from the unit items.

    ``parsed`` holds every message parsed with its rendering; ``to_items`` converts the transcript
    into one item per unit (as :func:`cupel.chat.select.select_units` takes them), for the report only.
    """
    records = turn_records(parsed, originals, counter=counter, options=options)
    kept, tokens = select_turn_records(
        records,
        budget,
        pipeline,
        keep_first_turn=settings.keep_first_turn,
        recent_share=settings.recent_share,
    )

    def report() -> SelectionReport:
        choice = select_turns(
            to_items(),
            budget,
            pipeline,
            keep_first_turn=settings.keep_first_turn,
            recent_share=settings.recent_share,
            notify=False,
        )
        return choice.report(pipeline.scorer)

    return ChatSelection(tuple(originals[index] for index in kept), report, tokens=tokens)
