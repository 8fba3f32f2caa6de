"""A transcript's units as columns, and the chat items built from them only where needed.

The ``"turns"`` fast path (:mod:`cupel.chat.turn_records`) works on these columns; an item is built
for a unit or a turn only when a policy cannot be scored by columns, for an overflow event, and for
the report. Each item equals, field by field, the one the item conversion builds
(:func:`~cupel.chat.convert.items_of_parsed`, :func:`~cupel.chat.whole_turns.turn_item`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from cupel._trusted import trusted_constructor
from cupel.chat._columns import TranscriptColumns
from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.convert import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, SYNTHETIC_EPOCH
from cupel.chat.options import ChatOptions
from cupel.model import ContextItem, ContextKind, ContextSource, _ReadOnlyMap, epoch_microseconds

__all__ = [
    "TurnRecords",
    "turn_item_of",
    "turn_kind",
    "turn_records",
    "turn_roles",
    "turn_units",
    "unit_item",
]


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

    def pinned_units(self) -> list[bool]:
        """:meth:`pinned` of every unit."""
        if self.pin_system:
            pinned = [role in SYSTEM_ROLES for role in self.first_roles]
        else:
            pinned = [False] * len(self.first_roles)
        if self.last_user_unit is not None:
            pinned[self.last_user_unit] = True
        return pinned


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


def turn_units(records: TurnRecords, start: int, end: int) -> list[int]:
    """The non-system unit positions in ``start..end-1``: a turn's units."""
    first_roles = records.first_roles
    return [position for position in range(start, end) if first_roles[position] not in SYSTEM_ROLES]


def turn_roles(records: TurnRecords, units: Sequence[int]) -> tuple[str, ...]:
    """A turn item's tags: its messages' roles, each once, in order of first appearance."""
    if records.units is None:
        roles = records.columns.roles
        return tuple(dict.fromkeys(map(roles.__getitem__, units)))
    return tuple(dict.fromkeys(role for position in units for role in records.roles(position)))


def turn_kind(records: TurnRecords, units: Sequence[int]) -> ContextKind:
    # A turn holds no system unit, so its kind is a tool output's if any unit has tool messages.
    multi = records.units is not None and any(len(records.units[position]) > 1 for position in units)
    return ContextKind.TOOL_OUTPUT if multi else ContextKind.MESSAGE


def turn_item_of(records: TurnRecords, number: int, units: Sequence[int]) -> ContextItem:
    """The item :func:`~cupel.chat.whole_turns.turn_item` builds for a turn of ``units``."""
    rendering = records.columns.rendering
    return _trusted_item(
        "\n".join(rendering(index) for position in units for index in records.indices(position)),
        sum(records.tokens[position] for position in units),
        turn_kind(records, units),
        ContextSource.CHAT,
        turn_roles(records, units),
        {"cupel:chat.turn": number},
        SYNTHETIC_EPOCH + timedelta(seconds=records.indices(units[0])[0]),
    )
