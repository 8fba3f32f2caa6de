"""Token counts of message texts, cached per counter and text across selections.

A chat is trimmed again on every turn, over a transcript that only grew: every text but the newest was
counted the turn before. Counts are kept per counter (by equality, so ``HeuristicCounter()`` built
anew each call shares one table) and text, as the :class:`~cupel.tokens.TokenCounter` protocol allows:
a count depends on the text alone. A counter that cannot be hashed is not cached. A table holds at most
``TABLE_LIMIT`` texts and ``CHAR_LIMIT`` characters of them (the keys keep the texts alive, so the bound
is on what they weigh, not only their number) and is emptied when full; at most ``COUNTERS`` counters
keep a table (the oldest goes first). A text longer than ``CHAR_LIMIT`` is counted and not kept.
Misses are counted in one ``count_many`` call, each distinct text once, in first-seen order,
so a counter's errors read as without the cache.
"""

from __future__ import annotations

import _thread  # the lock alone: threading itself is not loaded on the command line's path
from collections.abc import Sequence
from itertools import compress, repeat
from operator import is_

from cupel.tokens.base import CounterLike, TokenCounter, count_texts
from cupel.tokens.items import count_distinct
from cupel.tokens.resolve import resolve_counter

__all__ = ["CHAR_LIMIT", "COUNTERS", "TABLE_LIMIT", "clear_counts", "count_texts_once"]

TABLE_LIMIT = 1 << 18
CHAR_LIMIT = 1 << 25  # 32 Mi characters a table: at most 8 × 32 Mi characters retained in all
COUNTERS = 8


class _Table:
    __slots__ = ("chars", "counts")

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self.chars = 0


_tables: dict[object, _Table] = {}
_lock = _thread.allocate_lock()


def _table(counter: TokenCounter) -> _Table | None:
    try:
        hash(counter)
    except TypeError:
        return None
    with _lock:
        table = _tables.get(counter)
        if table is None:
            if len(_tables) >= COUNTERS:
                del _tables[next(iter(_tables))]
            table = _tables[counter] = _Table()
        return table


def count_texts_once(texts: Sequence[str], counter: CounterLike | None) -> list[int]:
    """One count per text, with ``counter`` (default ``HeuristicCounter()``), from the table when known."""
    resolved = resolve_counter(counter)
    table = _table(resolved)
    if table is None:
        return count_distinct(texts, resolved)
    if not table.counts:  # nothing known: a transcript seen for the first time
        return _count_new(table, resolved, texts)[1]
    counts: list[int | None] = list(map(table.counts.get, texts))
    if None not in counts:
        return counts  # type: ignore[return-value]
    found = _count_new(table, resolved, list(compress(texts, map(is_, counts, repeat(None)))))[0]
    # A known text is not in ``found``: its count from the table is the default.
    return list(map(found.get, texts, counts))  # type: ignore[arg-type]


def _count_new(
    table: _Table, counter: TokenCounter, texts: Sequence[str]
) -> tuple[dict[str, int], list[int]]:
    """Count ``texts`` (each distinct one once) and keep the counts: the counts by text, and per text."""
    found = dict.fromkeys(texts, 0)
    if len(found) == len(texts):  # no repeat (the usual case): the texts as they are, no second list
        counted = count_texts(counter, texts)
        found.update(zip(texts, counted, strict=True))
    else:
        unique = list(found)
        found.update(zip(unique, count_texts(counter, unique), strict=True))
        counted = list(map(found.__getitem__, texts))
    _keep(table, found)
    return found, counted


def _keep(table: _Table, found: dict[str, int]) -> None:
    chars = sum(map(len, found))
    if chars > CHAR_LIMIT:
        found = {text: count for text, count in found.items() if len(text) <= CHAR_LIMIT}
        chars = sum(map(len, found))
    with _lock:
        if len(table.counts) + len(found) > TABLE_LIMIT or table.chars + chars > CHAR_LIMIT:
            table.counts.clear()
            table.chars = 0
        if len(found) <= TABLE_LIMIT and chars <= CHAR_LIMIT:
            table.counts.update(found)
            table.chars += chars


def clear_counts() -> None:
    """Forget every cached count."""
    with _lock:
        _tables.clear()
