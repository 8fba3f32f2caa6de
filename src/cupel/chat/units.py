"""Stage 2 of a chat selection: units and turns over the transcript's columns, and their items.

:class:`TurnRecords` holds, per unit, its messages, tokens, roles and pin; a turn is a run of unit positions
(a user message and everything up to the next one). A unit's ContextItem (:func:`unit_item`, or
:func:`unit_items` column by column for a report) is built only when asked for, equal field by field to what
:func:`~cupel.chat.messages_to_items` builds.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from itertools import accumulate, compress, islice, repeat
from itertools import count as naturals
from operator import eq, gt, sub
from typing import Any

from cupel._frozen import made_on_read
from cupel._trusted import trusted_batch, trusted_constructor
from cupel.chat.options import ChatOptions
from cupel.chat.parse import SYSTEM_ROLES
from cupel.chat.read import (
    INDICES_KEY,
    MESSAGES_KEY,
    ROLES_KEY,
    SYNTHETIC_EPOCH,
    TranscriptColumns,
)
from cupel.model import ContextItem, ContextKind, ContextSource, _ReadOnlyMap, epoch_microseconds

__all__ = [
    "TurnRecords",
    "Turns",
    "split_from",
    "turn_contents",
    "turn_item_of",
    "turn_kind",
    "turn_presence",
    "turn_records",
    "turn_roles",
    "turn_split",
    "turn_units",
    "unit_item",
    "unit_items",
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

    def pinned_units(self, system: Sequence[int]) -> list[bool]:
        """:meth:`pinned` of every unit, ``system`` being the system units' positions."""
        pinned = [False] * len(self.first_roles)
        if self.pin_system:
            for position in system:
                pinned[position] = True
        if self.last_user_unit is not None:
            pinned[self.last_user_unit] = True
        return pinned


def turn_records(
    columns: TranscriptColumns, originals: Sequence[object], options: ChatOptions
) -> TurnRecords:
    """The unit columns of a transcript read by :func:`~cupel.chat.read.read_columns`."""
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
    """The item :func:`~cupel.chat.read.items_of_parsed` builds for unit ``position``."""
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
        _metadata_of(records)(position),
        SYNTHETIC_EPOCH + timedelta(seconds=indices[0]),
        records.pinned(position),
    )


def _metadata_of(records: TurnRecords) -> Callable[[int], dict[str, object]]:
    """The metadata of a unit's item, by unit position: its messages, their positions and roles (from
    the records' columns, which no later call changes)."""
    originals = records.originals
    roles = records.columns.roles
    units = records.units
    if units is None:

        def single(position: int) -> dict[str, object]:
            return {
                MESSAGES_KEY: (originals[position],),
                INDICES_KEY: (position,),
                ROLES_KEY: (roles[position],),
            }

        return single

    def grouped(position: int) -> dict[str, object]:
        unit = units[position]
        return {
            MESSAGES_KEY: tuple(originals[index] for index in unit),
            INDICES_KEY: unit,
            ROLES_KEY: tuple(roles[index] for index in unit),
        }

    return grouped


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
    """The item :func:`~cupel.chat.choose_units.turn_item` builds for a turn of ``units``."""
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


@dataclass(frozen=True, slots=True)
class Turns:
    """Turn ``t`` spans unit positions ``starts[t]`` to ``ends[t] - 1`` (system units skipped) and holds
    ``tokens[t]`` (the first is a preamble, turn 0, unless it opens with a user message); ``system``:
    the system units' positions. Read the lists only: a session may keep them."""

    starts: list[int]
    ends: list[int]
    tokens: list[int]
    system: list[int]


def turn_split(records: TurnRecords) -> Turns:
    """The turns and the system units, grouped as :func:`~cupel.chat.choose_units.split_turns` groups
    units; a session keeps a plain transcript's (:meth:`~cupel.chat.ChatSession.turn_split`)."""
    columns = records.columns
    split = partial(split_from, records.first_roles, records.tokens)
    if columns.session is None or columns.parsed:
        return split(None, 0)
    return columns.session.turn_split(columns.roles, split)


def _positions_of(values: list[str], wanted: frozenset[str]) -> list[int]:
    """Where ``values`` holds one of ``wanted``, ascending: a C-level scan (``list.index``) per value
    found, for values that are few (the system roles)."""
    found: list[int] = []
    for value in wanted:
        position = -1
        while True:
            try:
                position = values.index(value, position + 1)
            except ValueError:
                break
            found.append(position)
    found.sort()
    return found


def split_from(first_roles: list[str], tokens: list[int], kept: Turns | None, holds: int) -> Turns:
    """The turn split of units with ``first_roles`` and ``tokens``, where ``kept`` (or ``None``) split
    units whose first ``holds`` agree with these: its turns up to the last that opens within them stay,
    the units from that one on are split afresh (all of them without ``kept``)."""
    start, system, starts, turn_tokens = 0, [], [], []
    reopened = 0 if kept is None else bisect_left(kept.starts, holds)  # the turns opening within
    if kept is not None and reopened:
        start = kept.starts[reopened - 1]  # an opening still: its role and those before are unchanged
        system = kept.system[: bisect_left(kept.system, start)]
        starts, turn_tokens = kept.starts[: reopened - 1], kept.tokens[: reopened - 1]
    roles = first_roles[start:] if start else first_roles
    new_system = [start + offset for offset in _positions_of(roles, SYSTEM_ROLES)]
    opening = list(compress(naturals(start), map(eq, roles, repeat("user"))))
    # The first unit not a system one: past the few leading system units.
    first = next((start + offset for offset, role in enumerate(roles) if role not in SYSTEM_ROLES), None)
    if first is not None and (not opening or opening[0] != first):
        opening.insert(0, first)  # a preamble before the first user message: turn 0
    rest = tokens[start:] if start or new_system else tokens
    for position in new_system:
        rest[position - start] = 0  # a system unit belongs to no turn
    at = list(accumulate(rest, initial=0)).__getitem__
    bounds = (opening, [*opening[1:], len(tokens)] if opening else [])
    if start:  # positions in ``rest``; few, the new turns'
        bounds = ([begin - start for begin in bounds[0]], [end - start for end in bounds[1]])
    turn_tokens += map(sub, map(at, bounds[1]), map(at, bounds[0]))
    starts += opening
    return Turns(starts, [*starts[1:], len(tokens)] if starts else [], turn_tokens, system + new_system)


def turn_contents(records: TurnRecords, spans: tuple[list[int], list[int]], systems: list[int]) -> list[str]:
    """The contents :func:`turn_item_of` gives turns of consecutive messages (turn ``t``: messages
    ``spans[0][t]`` to ``spans[1][t] - 1``), then :func:`unit_item` single system messages; a session
    keeps those of a plain transcript's turns (:meth:`~cupel.chat.ChatSession.turn_contents`)."""
    columns = records.columns

    def make(turn: int) -> list[str]:  # turns ``turn`` onwards (``turn == 0`` or one of them)
        first = spans[0][turn] if turn else 0
        lines = list(columns.renderings(first))
        bounds = (spans[0][turn:], spans[1][turn:])
        if first:  # positions in ``lines``; few, the new turns'
            bounds = ([start - first for start in bounds[0]], [end - first for end in bounds[1]])
        return list(map("\n".join, map(lines.__getitem__, map(slice, *bounds))))

    session = columns.session
    kept = None if session is None or columns.parsed else session.turn_contents(columns.roles, spans, make)
    contents = make(0) if kept is None else list(kept)  # a copy: the session keeps its list
    contents += map(columns.rendering, systems)
    return contents


def turn_presence(
    records: TurnRecords, spans: tuple[list[int], list[int]], systems: list[int], tag: str
) -> list[bool]:
    """Whether each turn (as :func:`turn_contents`), then each system message, holds role ``tag``."""
    roles = records.columns.roles
    if tag == "user":  # every user message opens a turn: a turn holds one if it opens with one
        found = list(map(tag.__eq__, map(roles.__getitem__, spans[0])))
    else:
        seen = list(accumulate(map(tag.__eq__, roles), initial=0))
        found = list(map(gt, map(seen.__getitem__, spans[1]), map(seen.__getitem__, spans[0])))
    return [*found, *map(tag.__eq__, map(roles.__getitem__, systems))]


_items = trusted_batch(ContextItem)
_SET_KIND = ContextItem.__dict__["kind"].__set__
_SET_PINNED = ContextItem.__dict__["pinned"].__set__
_SYSTEM = ContextKind.SYSTEM_PROMPT
_EPOCH_US = epoch_microseconds(SYNTHETIC_EPOCH)


# Per position: its synthetic timestamp in microseconds (``SYNTHETIC_EPOCH`` + that many seconds).
def _micros(positions: range) -> range:
    return range(_EPOCH_US + positions.start * 1_000_000, _EPOCH_US + positions.stop * 1_000_000, 1_000_000)


def _unit_kinds(records: TurnRecords, system: Sequence[int], start: int) -> dict[int, ContextKind]:
    """The kinds of units ``start`` onwards that are not a message's, by offset from ``start``, as
    :func:`unit_item` gives them (``system``: the system units' positions, ascending)."""
    kinds = dict.fromkeys([position - start for position in system[bisect_left(system, start) :]], _SYSTEM)
    if records.units is not None:
        for offset, unit in enumerate(records.units[start:]):
            if len(unit) > 1:
                kinds.setdefault(offset, ContextKind.TOOL_OUTPUT)
    return kinds


def unit_items(records: TurnRecords, pinned: list[bool], system: Sequence[int]) -> list[ContextItem]:
    """Every unit's item, as :func:`unit_item` builds it, column by column; each item's metadata is
    made when first read. A session keeps the list for the next call: read it only."""
    columns = records.columns
    texts: list[object] = columns.contents  # type: ignore[assignment]
    if columns.parsed:
        parsed = columns.parsed
        texts = [
            (parsed[index].rendering,) if content is None else content
            for index, content in enumerate(columns.contents)
        ]
    session = columns.session
    build = _single_items if records.units is None else _unit_items
    if session is None:
        return build(records, pinned, system, 0)
    messages = (list(map(id, records.originals)), columns.roles, texts)
    units = (records.units, records.tokens, pinned)
    return session.items(messages, units, lambda start: build(records, pinned, system, start))


def _single_items(
    records: TurnRecords, pinned: list[bool], system: Sequence[int], start: int
) -> list[ContextItem]:
    """The items of units ``start`` onwards when every message is a unit of its own; each content is
    set as its rendering is made, so each text is read once for the items, while it is at hand."""
    count = len(records.tokens)
    roles = records.columns.roles[start:] if start else records.columns.roles
    role_tags: dict[str, tuple[str, ...]] = {role: (role,) for role in set(roles)}
    return _build(
        (count, start),
        records.columns.renderings(start),
        records.tokens[start:] if start else records.tokens,
        _unit_kinds(records, system, start),
        map(role_tags.__getitem__, roles),
        made_on_read(_metadata_of(records), range(start, count), count - start),
        pinned,
        _micros(range(start, count)),
    )


def _unit_items(
    records: TurnRecords, pinned: list[bool], system: Sequence[int], start: int
) -> list[ContextItem]:
    """The items of units ``start`` onwards when some hold several messages (a call and its results)."""
    count = len(records.tokens)
    assert records.units is not None
    units = records.units[start:]
    firsts = [unit[0] for unit in units]
    micros = _micros(range(max(firsts, default=-1) + 1))
    rendering = records.columns.rendering
    unit_roles = [records.roles(position) for position in range(start, count)]
    return _build(
        (count, start),
        ["\n".join(map(rendering, unit)) for unit in units],
        records.tokens[start:] if start else records.tokens,
        _unit_kinds(records, system, start),
        [tuple(dict.fromkeys(roles)) for roles in unit_roles],
        made_on_read(_metadata_of(records), range(start, count), count - start),
        pinned,
        list(map(micros.__getitem__, firsts)),
    )


def _build(
    span: tuple[int, int],
    contents: Iterable[str],
    tokens: list[int],
    kinds: Mapping[int, ContextKind],
    tags: Iterable[tuple[str, ...]],
    metadata: Sequence[Mapping[str, object]],
    pinned: list[bool],
    micros: Iterable[int],
) -> list[ContextItem]:
    """The items of units ``span[1]`` to ``span[0] - 1`` from their columns (the fields a unit's item
    does not share with every other; ``kinds`` by offset where not a message's, ``pinned`` by unit
    position); each timestamp is made from its microseconds, and the fields left at their defaults
    (a message from a chat, unpinned, no priority, hint or original tokens) are made when first read
    (:class:`~cupel.ContextItem`): a column pass each would cost as much as the contents' own."""
    count, start = span
    items = _items(
        count - start, contents, tokens, None, None, None, tags, metadata, None, None, None, None, micros
    )
    for offset, kind in kinds.items():
        _SET_KIND(items[offset], kind)
    for position in compress(range(start, count), islice(pinned, start, None)):
        _SET_PINNED(items[position - start], True)
    return items
