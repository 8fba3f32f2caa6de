"""Token counts of message texts, cached per counter and text across selections.

A chat is trimmed again on every turn, over a transcript that only grew: every text but the newest was
counted the turn before. Counts are kept per counter (by equality, so ``HeuristicCounter()`` built
anew each call shares one table) and text, as the :class:`~cupel.tokens.TokenCounter` protocol allows:
a count depends on the text alone. A counter that cannot be hashed is not cached. A table holds at most
``TABLE_LIMIT`` texts and is emptied when full; at most ``COUNTERS`` counters keep a table (the oldest
goes first). Misses are counted in one ``count_many`` call, each distinct text once, in first-seen
order, so a counter's errors read as without the cache.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from cupel.tokens.base import CounterLike, TokenCounter, count_texts
from cupel.tokens.items import count_distinct
from cupel.tokens.resolve import resolve_counter

__all__ = ["COUNTERS", "TABLE_LIMIT", "clear_counts", "count_texts_once"]

TABLE_LIMIT = 1 << 18
COUNTERS = 8

_tables: dict[object, dict[str, int]] = {}
_lock = threading.Lock()


def _table(counter: TokenCounter) -> dict[str, int] | None:
    try:
        hash(counter)
    except TypeError:
        return None
    with _lock:
        table = _tables.get(counter)
        if table is None:
            if len(_tables) >= COUNTERS:
                del _tables[next(iter(_tables))]
            table = _tables[counter] = {}
        return table


def count_texts_once(texts: Sequence[str], counter: CounterLike | None) -> list[int]:
    """One count per text, with ``counter`` (default ``HeuristicCounter()``), from the table when known."""
    resolved = resolve_counter(counter)
    table = _table(resolved)
    if table is None:
        return count_distinct(texts, resolved)
    counts: list[int | None] = list(map(table.get, texts))
    if None not in counts:
        return counts  # type: ignore[return-value]
    missing = list(dict.fromkeys(text for text, count in zip(texts, counts, strict=True) if count is None))
    found = dict(zip(missing, count_texts(resolved, missing), strict=True))
    if len(table) + len(found) > TABLE_LIMIT:
        table.clear()
    table.update(found)
    return [found[text] if count is None else count for text, count in zip(texts, counts, strict=True)]


def clear_counts() -> None:
    """Forget every cached count."""
    with _lock:
        _tables.clear()
