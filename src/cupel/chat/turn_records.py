"""The ``"turns"`` strategy over columns: the fast path beside :mod:`cupel.chat.whole_turns`.

:func:`~cupel.chat.whole_turns.select_turns` is the plain reference: it works on one ContextItem per
unit. :func:`select_turn_records` chooses exactly the same messages from the transcript's columns
(:mod:`cupel.chat._columns`: per message a role and a cost, per unit its messages): turns are runs of
unit positions, their tokens differences of one running sum, and the older turns are scored column by
column (:mod:`cupel.chat.turn_columns`). Items are built only for a policy those columns cannot
score, and for the report. The property tests run both on random transcripts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import accumulate, compress
from typing import Any

from cupel._trusted import trusted_constructor
from cupel.chat._choice import available_tokens
from cupel.chat._columns import TranscriptColumns
from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.convert import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, SYNTHETIC_EPOCH
from cupel.chat.options import ChatOptions
from cupel.chat.selection import ChatSelection
from cupel.chat.turn_columns import KINDS, CandidateColumns, choose_older
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

__all__ = ["TurnRecords", "select_turn_records", "select_turns_fast", "turn_records", "unit_item"]


@dataclass(frozen=True, slots=True)
class TurnRecords:
    """A transcript's units as columns: each unit's first role and tokens, and which units are pinned.

    ``units`` holds each unit's message positions (``None``: unit ``p`` is message ``p`` alone).
    """

    columns: TranscriptColumns
    originals: Sequence[object]
    units: list[tuple[int, ...]] | None
    first_roles: list[str]
    tokens: list[int]
    pin_system: bool
    last_user_unit: int | None

    def indices(self, position: int) -> tuple[int, ...]:
        """The message positions of unit ``position``."""
        return (position,) if self.units is None else self.units[position]

    def roles(self, position: int) -> tuple[str, ...]:
        """The roles of unit ``position``'s messages."""
        roles = self.columns.roles
        return tuple(roles[index] for index in self.indices(position))

    def pinned(self, position: int) -> bool:
        """Whether the item conversion pins unit ``position``."""
        if self.pin_system and self.first_roles[position] in SYSTEM_ROLES:
            return True
        return position == self.last_user_unit


def turn_records(
    columns: TranscriptColumns, originals: Sequence[object], options: ChatOptions
) -> TurnRecords:
    """The unit columns of a transcript read by :func:`~cupel.chat._columns.read_columns`."""
    roles = columns.roles
    units = columns.units
    last_user = len(roles) - 1 - roles[::-1].index("user") if "user" in roles else None
    if units is None:
        first_roles, tokens = roles, columns.costs
        last_user_unit = last_user
    else:
        costs = columns.costs
        first_roles = [roles[unit[0]] for unit in units]
        tokens = [costs[unit[0]] if len(unit) == 1 else sum(costs[index] for index in unit) for unit in units]
        last_user_unit = next((position for position, unit in enumerate(units) if last_user in unit), None)
    return TurnRecords(
        columns,
        originals,
        units,
        first_roles,
        tokens,
        options.pin_system,
        last_user_unit if options.pin_last_user else None,
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
    pinned: bool = False,
) -> ContextItem:
    """A ContextItem built without validation, from values valid by construction (non-empty content,
    int tokens, enum members, a tuple of str tags, an aware timestamp): one per unit or older turn,
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
        pinned,
        None,
        epoch_microseconds(timestamp),
    )


def unit_item(records: TurnRecords, position: int) -> ContextItem:
    """The item :func:`~cupel.chat.convert.items_of_parsed` builds for unit ``position``."""
    indices = records.indices(position)
    roles = records.roles(position)
    rendering = records.columns.rendering
    return _trusted_item(
        "\n".join(map(rendering, indices)),
        records.tokens[position],
        ContextKind.SYSTEM_PROMPT
        if roles[0] in SYSTEM_ROLES
        else ContextKind.TOOL_OUTPUT
        if len(indices) > 1
        else ContextKind.MESSAGE,
        ContextSource.CHAT,
        tuple(dict.fromkeys(roles)),
        {
            MESSAGES_KEY: tuple(records.originals[index] for index in indices),
            INDICES_KEY: indices,
            ROLES_KEY: roles,
        },
        SYNTHETIC_EPOCH + timedelta(seconds=indices[0]),
        records.pinned(position),
    )


def _turn_units(records: TurnRecords, start: int, end: int) -> list[int]:
    """The non-system unit positions in ``start..end-1``: a turn's units."""
    first_roles = records.first_roles
    return [position for position in range(start, end) if first_roles[position] not in SYSTEM_ROLES]


def _turn_roles(records: TurnRecords, units: Sequence[int]) -> tuple[str, ...]:
    """A turn item's tags: its messages' roles, each once, in order of first appearance."""
    if records.units is None:
        roles = records.columns.roles
        return tuple(dict.fromkeys(map(roles.__getitem__, units)))
    return tuple(dict.fromkeys(role for position in units for role in records.roles(position)))


def _turn_kind(records: TurnRecords, units: Sequence[int]) -> ContextKind:
    # A turn holds no system unit, so its kind is a tool output's if any unit has tool messages.
    multi = records.units is not None and any(len(records.units[position]) > 1 for position in units)
    return ContextKind.TOOL_OUTPUT if multi else ContextKind.MESSAGE


def _turn_item(records: TurnRecords, number: int, units: Sequence[int]) -> ContextItem:
    """The item :func:`~cupel.chat.whole_turns.turn_item` builds for a turn of ``units``."""
    rendering = records.columns.rendering
    return _trusted_item(
        "\n".join(rendering(index) for position in units for index in records.indices(position)),
        sum(records.tokens[position] for position in units),
        _turn_kind(records, units),
        ContextSource.CHAT,
        _turn_roles(records, units),
        {"cupel:chat.turn": number},
        SYNTHETIC_EPOCH + timedelta(seconds=records.indices(units[0])[0]),
    )


@dataclass(slots=True)
class _Turns:
    """Turn ``t`` spans unit positions ``starts[t]`` to ``ends[t] - 1`` (system units skipped)."""

    starts: list[int]
    ends: list[int]
    tokens: list[int]
    first_number: int


def _split(records: TurnRecords) -> tuple[_Turns, list[int]]:
    """The turns and the system unit positions, as :func:`~cupel.chat.turns.split_turns` groups units."""
    first_roles = records.first_roles
    system = [position for position, role in enumerate(first_roles) if role in SYSTEM_ROLES]
    opening = [position for position, role in enumerate(first_roles) if role == "user"]
    first = next((position for position, role in enumerate(first_roles) if role not in SYSTEM_ROLES), None)
    number = 1
    if first is not None and (not opening or opening[0] != first):
        opening.insert(0, first)  # a preamble before the first user message: turn 0
        number = 0
    tokens = records.tokens
    if system:
        tokens = list(tokens)
        for position in system:
            tokens[position] = 0  # a system unit belongs to no turn
    running = list(accumulate(tokens, initial=0))
    ends = [*opening[1:], len(tokens)] if opening else []
    turn_tokens = [running[end] - running[start] for start, end in zip(opening, ends, strict=True)]
    return _Turns(opening, ends, turn_tokens, number), system


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
    turns, system = _split(records)
    unit_tokens = records.tokens
    kept = [False] * len(unit_tokens)
    pinned_tokens = 0
    loose_system: list[int] = []
    for position in system:
        if records.pinned(position):
            pinned_tokens += unit_tokens[position]
        else:
            loose_system.append(position)
    available = available_tokens(budget, pinned_tokens)
    turn_tokens = turns.tokens

    def keep(turn: int) -> None:
        start, end = turns.starts[turn], turns.ends[turn]
        kept[start:end] = [True] * (end - start)  # system units among them are decided at the end

    remaining = available
    open_end = len(turn_tokens)  # turns[oldest:open_end] are still open
    if open_end:
        open_end -= 1
        if turn_tokens[open_end] <= remaining:
            keep(open_end)
            remaining -= turn_tokens[open_end]
        else:
            latest = _turn_units(records, turns.starts[open_end], turns.ends[open_end])
            remaining = _overflow(records, latest, remaining, pinned_tokens, budget, pipeline, kept)
    oldest = 0
    if keep_first_turn and open_end and turn_tokens[0] <= remaining:
        keep(0)
        remaining -= turn_tokens[0]
        oldest = 1
    run_budget = math.floor(remaining * recent_share)
    while open_end > oldest and turn_tokens[open_end - 1] <= run_budget:
        open_end -= 1
        keep(open_end)
        run_budget -= turn_tokens[open_end]
        remaining -= turn_tokens[open_end]
    chosen_system = _choose_older(
        records, turns, (oldest, open_end), system, loose_system, remaining, pipeline, keep
    )
    for position in system:
        kept[position] = position in chosen_system or records.pinned(position)
    return _positions(records, kept, system)


def _choose_older(
    records: TurnRecords,
    turns: _Turns,
    span: tuple[int, int],
    system: list[int],
    loose_system: list[int],
    remaining: int,
    pipeline: Pipeline,
    keep: Callable[[int], None],
) -> set[int]:
    """Keep the older turns the policy chooses in ``remaining`` tokens; the loose system units chosen."""
    oldest, end = span
    older = range(oldest, end)
    if not older and not loose_system:
        return set()
    count = len(older)
    starts = turns.starts
    ends = turns.ends
    indices = records.indices
    # One message per unit and no system message inside a turn: a turn's roles are a slice of them.
    sliced = records.units is None and (not older or not system or system[-1] < starts[0])

    def units_of(turn: int) -> list[int]:
        return _turn_units(records, starts[turn], ends[turn])

    def kinds() -> list[int]:
        if records.units is None:
            turn_kinds = [0] * count
        else:
            turn_kinds = [KINDS.index(_turn_kind(records, units_of(turn))) for turn in older]
        return turn_kinds + [2] * len(loose_system)

    def tags() -> list[tuple[str, ...]]:
        if sliced:
            roles = records.columns.roles
            turn_tags = [tuple(dict.fromkeys(roles[starts[turn] : ends[turn]])) for turn in older]
        else:
            turn_tags = [_turn_roles(records, units_of(turn)) for turn in older]
        return turn_tags + [tuple(dict.fromkeys(records.roles(position))) for position in loose_system]

    def presence(tag: str) -> list[bool] | None:
        if not sliced:
            return None
        seen = list(accumulate(map(tag.__eq__, records.columns.roles), initial=0))
        found = [seen[ends[turn]] > seen[starts[turn]] for turn in older]
        return found + [tag in records.roles(position) for position in loose_system]

    keys = [indices(starts[turn])[0] for turn in older] + [indices(p)[0] for p in loose_system]
    tokens = turns.tokens[oldest:end] + [records.tokens[position] for position in loose_system]
    chosen = choose_older(pipeline, CandidateColumns(keys, tokens, kinds, tags, presence), remaining)
    if chosen is None:
        candidates = [_turn_item(records, turns.first_number + turn, units_of(turn)) for turn in older] + [
            unit_item(records, position) for position in loose_system
        ]
        scored = Pipeline(
            pipeline.scorer, pipeline.slicer, ChronologicalPlacer(), deduplication=pipeline.deduplication
        )
        ids = {id(item) for item in scored.run(candidates, ContextBudget(remaining, remaining))}
        chosen = [position for position, item in enumerate(candidates) if id(item) in ids]
    chosen_system: set[int] = set()
    for candidate in chosen:
        if candidate < count:
            keep(oldest + candidate)
        else:
            chosen_system.add(loose_system[candidate - count])
    return chosen_system


def _positions(records: TurnRecords, kept: list[bool], system: list[int]) -> tuple[list[int], int]:
    """The kept units' message positions, system units first, and their tokens."""
    tokens = sum(compress(records.tokens, kept))
    if records.units is None:
        leading = [position for position in system if kept[position]]
        if not leading:
            return list(compress(range(len(kept)), kept)), tokens
        lifted = set(leading)
        return leading + [p for p in compress(range(len(kept)), kept) if p not in lifted], tokens
    roles = records.columns.roles
    first: list[int] = []
    rest: list[int] = []
    for position, keep in enumerate(kept):
        if keep:
            for index in records.units[position]:
                (first if roles[index] in SYSTEM_ROLES else rest).append(index)
    first.sort()
    rest.sort()
    return first + rest, tokens


def _overflow(
    records: TurnRecords,
    latest: list[int],
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    pipeline: Pipeline,
    kept: list[bool],
) -> int:
    """As the reference's overflow: raise, keep the whole latest turn, or keep its prefix that fits."""
    latest_tokens = sum(records.tokens[position] for position in latest)
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.THROW:
        raise BudgetOverflowError(pinned_tokens + latest_tokens, budget.target_tokens)
    if strategy is OverflowStrategy.PROCEED:
        for position in latest:
            kept[position] = True
        if pipeline.on_overflow is not None:
            over = pinned_tokens + latest_tokens - budget.target_tokens
            items = tuple(unit_item(records, position) for position in latest)
            pipeline.on_overflow(OverflowEvent(over, items, budget))
        return 0
    used = 0
    for position in latest:
        tokens = records.tokens[position]
        if used + tokens > remaining:
            break
        used += tokens
        kept[position] = True
    return remaining - used


def select_turns_fast(
    columns: TranscriptColumns,
    originals: Sequence[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    options: ChatOptions,
) -> ChatSelection[Any]:
    """The ``"turns"`` strategy on a transcript's columns; the report, when read, from its unit items."""
    records = turn_records(columns, originals, options)
    kept, tokens = select_turn_records(
        records,
        budget,
        pipeline,
        keep_first_turn=settings.keep_first_turn,
        recent_share=settings.recent_share,
    )

    def report() -> SelectionReport:
        choice = select_turns(
            [unit_item(records, position) for position in range(len(records.tokens))],
            budget,
            pipeline,
            keep_first_turn=settings.keep_first_turn,
            recent_share=settings.recent_share,
            notify=False,
        )
        return choice.report(pipeline.scorer)

    return ChatSelection(tuple(originals[index] for index in kept), report, tokens=tokens)
