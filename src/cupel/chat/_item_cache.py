"""The ``"turns"`` report's items of plain messages, kept between selections.

A chat is trimmed again on every turn, over a transcript that only grew, and a report built each
time makes one item per message: the same items as the turn before, but for the newest messages and
the one whose pin moved. So the items of the last report are kept, by position, with what each was
made from: the message object itself (by identity: a kept item holds its message in its metadata,
so no other object can take that identity while it is kept), its role, its text, its tokens and
whether it is pinned. A later selection reuses the items of the longest prefix of positions where
all five agree and builds the rest; every other field of an item depends on its position alone.
An item is immutable, so reports sharing it cannot tell (items compare by identity; a report's
entries compare equal either way, field by field).

At most :data:`~cupel.chat._position_columns.KEPT` positions are kept (a longer transcript's items
are built for the call alone), and only the last transcript's: selections over two transcripts in
turn each reuse what the other left. :func:`clear_items` forgets them.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Sequence
from itertools import compress, count
from operator import ne

from cupel.chat._position_columns import KEPT
from cupel.model import ContextItem

__all__ = ["ItemKey", "clear_items", "kept_items"]

ItemKey = tuple[list[int], list[str], list[str], list[int], list[bool]]
"""Per position: the message's ``id``, its role, its text, its tokens and whether it is pinned."""

_lock = _thread.allocate_lock()
# The last transcript's key columns and items; replaced as a whole, never changed in place.
_kept: tuple[ItemKey, list[ContextItem]] | None = None


def _agreeing(old: Sequence[object], new: Sequence[object], limit: int) -> int:
    """How many leading positions (at most ``limit``) hold equal values in both columns."""
    if old[:limit] == new[:limit]:  # one C-level pass in the usual case (nothing changed)
        return limit
    return next(compress(count(), map(ne, old[:limit], new[:limit])))


def kept_items(key: ItemKey, build: Callable[[int], list[ContextItem]]) -> list[ContextItem]:
    """The items for ``key``'s positions: those kept where the key agrees, then ``build(start)``'s
    (the items of positions ``start`` onwards). The list may be shared with later calls: read it only."""
    global _kept
    size = len(key[0])
    kept = _kept
    start = 0
    if kept is not None:
        old_key, old_items = kept
        start = min(size, len(old_items))
        olds: tuple[Sequence[object], ...] = old_key
        news: tuple[Sequence[object], ...] = key
        for old, new in zip(olds, news, strict=True):
            start = _agreeing(old, new, start)
            if not start:
                break
        if start == size == len(old_items):
            return old_items
    items = build(start)
    if start:
        items[:0] = old_items[:start]
    if size <= KEPT:
        stored: ItemKey = (list(key[0]), list(key[1]), list(key[2]), list(key[3]), list(key[4]))
        with _lock:
            _kept = (stored, items)
    return items


def clear_items() -> None:
    """Forget the kept items."""
    global _kept
    with _lock:
        _kept = None
