"""The ``"turns"`` report's unit items, kept between selections.

A chat is trimmed again on every turn, over a transcript that only grew, and a report built each
time makes one item per unit (a message, or a tool call with its results): the same items as the
turn before, but for the newest units and the one whose pin moved. So the items of the last report
are kept, by position, with what each was made from. Per message: the message object itself (by
identity: a kept item holds its messages in its metadata, so no other object can take that identity
while it is kept), its role, and its text (a plain message) or its rendering (any other, as a
one-element tuple, so that it never equals a text). Per unit: its message positions, its tokens and
whether it is pinned. A later selection reuses the items of the longest prefix of units where all of
these agree for the unit and each of its messages, and builds the rest; every other field of an item
depends on these and its position alone. An item is immutable, so reports sharing it cannot tell
(items compare by identity; a report's entries compare equal either way, field by field).

At most :data:`~cupel.chat._position_columns.KEPT` units are kept (a longer transcript's items are
built for the call alone), and only the last transcript's: selections over two transcripts in turn
each reuse what the other left. :func:`clear_items` forgets them.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import ne

from cupel.chat._position_columns import KEPT
from cupel.model import ContextItem

__all__ = ["MessageKey", "UnitKey", "clear_items", "kept_items"]

MessageKey = tuple[list[int], list[str], list[object]]
"""Per message: its ``id``, its role, and its text (plain) or ``(rendering,)`` (any other)."""

UnitKey = tuple[list[tuple[int, ...]] | None, list[int], list[bool]]
"""Per unit: its message positions (``None``: every message is a unit of its own), its tokens and
whether it is pinned."""

_lock = _thread.allocate_lock()
# The last transcript's keys and items; replaced as a whole, never changed in place.
_kept: tuple[MessageKey, UnitKey, list[ContextItem]] | None = None


def _agreeing(old: Sequence[object], new: Sequence[object], limit: int) -> int:
    """How many leading positions (at most ``limit``) hold equal values in both columns."""
    if old[:limit] == new[:limit]:  # one C-level pass in the usual case (nothing changed)
        return limit
    return next(compress(count(), map(ne, old[:limit], new[:limit])))


def _reusable(
    old: tuple[MessageKey, UnitKey, list[ContextItem]], messages: MessageKey, units: UnitKey
) -> int:
    """How many leading units of the old items are the new transcript's."""
    old_messages, old_units, old_items = old
    if (old_units[0] is None) is not (units[0] is None):
        return 0
    agreed = min(len(messages[0]), len(old_messages[0]))
    olds: tuple[Sequence[object], ...] = old_messages
    news: tuple[Sequence[object], ...] = messages
    for old_column, new_column in zip(olds, news, strict=True):
        agreed = _agreeing(old_column, new_column, agreed)
    start = min(len(units[1]), len(old_items))
    for old_unit_column, new_unit_column in zip(old_units, units, strict=True):
        if new_unit_column is not None:
            start = _agreeing(old_unit_column, new_unit_column, start)  # type: ignore[arg-type]
    if units[0] is None:
        return min(start, agreed)
    # The leading units whose messages all lie within the agreeing messages.
    return next(compress(count(), map(agreed.__le__, map(max, units[0][:start]))), start)


def kept_items(
    messages: MessageKey, units: UnitKey, build: Callable[[int], list[ContextItem]]
) -> list[ContextItem]:
    """The items of every unit: those kept where the keys agree, then ``build(start)``'s (the items
    of units ``start`` onwards). The list may be shared with later calls: read it only."""
    global _kept
    size = len(units[1])
    kept = _kept
    start = 0 if kept is None else _reusable(kept, messages, units)
    if kept is not None and start == size == len(kept[2]):
        return kept[2]
    items = build(start)
    if start:
        assert kept is not None
        items[:0] = kept[2][:start]
    if size <= KEPT and len(messages[0]) <= KEPT:
        stored_messages: MessageKey = (list(messages[0]), list(messages[1]), list(messages[2]))
        layout = None if units[0] is None else list(units[0])
        stored_units: UnitKey = (layout, list(units[1]), list(units[2]))
        with _lock:
            _kept = (stored_messages, stored_units, items)
    return items


def clear_items() -> None:
    """Forget the kept items."""
    global _kept
    with _lock:
        _kept = None
