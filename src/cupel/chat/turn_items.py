"""Every unit's item for the ``"turns"`` report, built column by column.

Each item equals, field by field, what :func:`~cupel.chat.turn_units.unit_item` builds (the fast-path
tests compare the reports entry by entry). The columns are filled by C-level passes, and the parts
that depend on a message's position alone -- its timestamp, the timestamp's microseconds and the
one-index tuple -- are kept between selections: a chat re-trimmed every turn asks for the same
positions again. All are immutable values, so sharing them between items and reports is safe.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from itertools import repeat
from typing import Any

from cupel._trusted import trusted_batch
from cupel.chat._item_cache import kept_items
from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat._position_columns import PositionColumn
from cupel.chat.convert import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, SYNTHETIC_EPOCH
from cupel.chat.turn_columns import KINDS
from cupel.chat.turn_units import TurnRecords
from cupel.model import ContextItem, ContextSource, _ReadOnlyMap, epoch_microseconds

__all__ = ["kind_codes", "unit_items"]

_items = trusted_batch(ContextItem)
_EPOCH_US = epoch_microseconds(SYNTHETIC_EPOCH)
_new = object.__new__
_set_data: Callable[[object, dict[str, object]], None] = _ReadOnlyMap.__dict__["_data"].__set__


# Per position: its synthetic timestamp, that stamp in microseconds, and ``(position,)``.
_STAMPS: PositionColumn[datetime] = PositionColumn(
    lambda positions: map(SYNTHETIC_EPOCH.__add__, map(timedelta, repeat(0), positions))
)
_MICROS: PositionColumn[int] = PositionColumn(
    lambda positions: map(_EPOCH_US.__add__, map((1_000_000).__mul__, positions))
)
_SINGLES: PositionColumn[tuple[int]] = PositionColumn(zip)
_SYSTEM_CODE = dict.fromkeys(SYSTEM_ROLES, 2)


def kind_codes(records: TurnRecords) -> list[int]:
    """Each unit's kind, as its position in :data:`~cupel.chat.turn_columns.KINDS`."""
    codes = list(map(_SYSTEM_CODE.get, records.first_roles, repeat(0)))
    if records.units is not None:
        for position, unit in enumerate(records.units):
            if len(unit) > 1 and codes[position] == 0:
                codes[position] = 1
    return codes


def _read_only(data: list[dict[str, object]]) -> list[Mapping[str, object]]:
    """``_ReadOnlyMap(d)`` for each dict, taking the dict as its data (each is fresh: no copy)."""
    maps: list[Any] = list(map(_new, repeat(_ReadOnlyMap, len(data))))
    deque(map(_set_data, maps, data), maxlen=0)
    return maps


def unit_items(records: TurnRecords, pinned: list[bool]) -> list[ContextItem]:
    """Every unit's item, as :func:`~cupel.chat.turn_units.unit_item` builds it, column by column.

    Items are kept between selections (:mod:`cupel.chat._item_cache`): read the list only, it may be
    shared.
    """
    columns = records.columns
    texts: list[object] = columns.contents  # type: ignore[assignment]
    if columns.parsed:
        parsed = columns.parsed
        texts = [
            (parsed[index].rendering,) if content is None else content
            for index, content in enumerate(columns.contents)
        ]
    messages = (list(map(id, records.originals)), columns.roles, texts)
    units = (records.units, records.tokens, pinned)
    if records.units is None:
        return kept_items(messages, units, lambda start: _single_items(records, pinned, start))
    return kept_items(messages, units, lambda start: _unit_items(records, pinned, start))


def _single_items(records: TurnRecords, pinned: list[bool], start: int) -> list[ContextItem]:
    """The items of units ``start`` onwards when every message is a unit of its own."""
    count = len(records.tokens)
    stamps, micros, singles = _STAMPS.upto(count), _MICROS.upto(count), _SINGLES.upto(count)
    roles = records.columns.roles[start:]
    role_tags: dict[str, tuple[str, ...]] = {role: (role,) for role in set(roles)}
    tags: list[tuple[str, ...]] = list(map(role_tags.__getitem__, roles))
    # ``singles`` may be longer than the transcript (kept from a longer one): zip stops at the tags.
    metadata = _read_only(
        [
            {MESSAGES_KEY: message, INDICES_KEY: single, ROLES_KEY: tag}
            for message, single, tag in zip(
                zip(records.originals[start:]), singles[start:], tags, strict=False
            )
        ]
    )
    return _build(
        count - start,
        records.columns.renderings(start),
        records.tokens[start:],
        kind_codes(records)[start:],
        tags,
        metadata,
        stamps[start:],
        pinned[start:],
        micros[start:],
    )


def _unit_items(records: TurnRecords, pinned: list[bool], start: int) -> list[ContextItem]:
    """The items of units ``start`` onwards when some hold several messages (a call and its results)."""
    count = len(records.tokens)
    assert records.units is not None
    units = records.units[start:]
    firsts = [unit[0] for unit in units]
    needed = max(firsts, default=-1) + 1
    stamps, micros = _STAMPS.upto(needed), _MICROS.upto(needed)
    rendering = records.columns.rendering
    originals = records.originals
    unit_roles = [records.roles(position) for position in range(start, count)]
    metadata = _read_only(
        [
            {
                MESSAGES_KEY: tuple(originals[index] for index in unit),
                INDICES_KEY: unit,
                ROLES_KEY: roles,
            }
            for unit, roles in zip(units, unit_roles, strict=True)
        ]
    )
    return _build(
        count - start,
        ["\n".join(map(rendering, unit)) for unit in units],
        records.tokens[start:],
        kind_codes(records)[start:],
        [tuple(dict.fromkeys(roles)) for roles in unit_roles],
        metadata,
        list(map(stamps.__getitem__, firsts)),
        pinned[start:],
        list(map(micros.__getitem__, firsts)),
    )


def _build(
    count: int,
    contents: list[str],
    tokens: list[int],
    codes: list[int],
    tags: list[tuple[str, ...]],
    metadata: list[Mapping[str, object]],
    stamps: list[datetime],
    pinned: list[bool],
    micros: list[int],
) -> list[ContextItem]:
    """``count`` items from their columns (the fields a unit's item does not share with every other)."""
    return _items(
        count,
        contents,
        tokens,
        list(map(KINDS.__getitem__, codes)),
        repeat(ContextSource.CHAT),
        repeat(None),
        tags,
        metadata,
        stamps,
        repeat(None),
        pinned,
        repeat(None),
        micros,
    )
