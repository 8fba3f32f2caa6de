"""ChatSession: what a running chat reuses from one selection to the next, held by the caller.

A chat is trimmed again on every turn, over a transcript that only grew. A session passed to
:func:`~cupel.chat.select_messages` (``session=``) keeps, for the next call:

- **token counts** per text, for the counter it last counted with (a count depends on the text alone,
  as the :class:`~cupel.tokens.TokenCounter` protocol says; counters are matched by equality, so
  ``HeuristicCounter()`` built anew each call shares one table). At most ``TABLE_LIMIT`` texts and
  ``CHAR_LIMIT`` characters of them; the table is emptied when full, and a text longer than that is
  counted and not kept.
- **the last report's unit items**, by position, with the keys they were made from (each message's
  object, role and text; each unit's messages, tokens and pin), for at most ``KEPT`` units: the next
  report reuses the leading units on which all of them agree. The kept items hold their messages
  alive until the next report or :meth:`ChatSession.clear`.
- **per-position values** (synthetic timestamps, rendering openings) for up to ``KEPT`` positions.
- **the last transcript read**, when every message of it is plain (a role and a text): the message
  objects, their roles, texts and costs, for at most ``KEPT`` messages. The next call reuses the
  costs of the leading messages that are the same objects with the same roles and texts (so a message
  edited in place, replaced or moved is read afresh), and counts only the rest. The kept list holds
  the messages alive until the next call or :meth:`ChatSession.clear`.
- **the last older turns' contents** (the text a turn's scoring reads), when every message is plain:
  the roles and texts they were made from, each turn's message span, and its content, for at most
  ``KEPT`` messages. The next call reuses the content of each leading turn with the same span whose
  messages all hold the same roles and texts at the same positions (compared as read on that call, so
  a message edited in place, replaced, moved or dropped makes its turn afresh).
- **the relevance term's counts** (:class:`~cupel.scorers.terms.TermCounts`): the last call's older
  turns' texts and how often each held each query term, so that on a transcript that grew only the
  new turns are searched for the terms searched before (a new term is searched for in every turn).

Without a session nothing is kept: every call reads, counts and builds afresh, and the result is the
same. A session may be shared between threads (a lock guards each replacement, and what it keeps is
replaced whole, never changed in place, so a reader sees one call's state or the next's); it is meant
for one conversation, whose transcript grows.
"""

from __future__ import annotations

import _thread
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from itertools import compress, count, repeat
from operator import is_, is_not
from typing import Any

from cupel._prefix import agreeing
from cupel.model import ContextItem
from cupel.scorers.terms import TermCounts
from cupel.tokens.base import CounterLike, TokenCounter, count_texts
from cupel.tokens.items import count_distinct
from cupel.tokens.resolve import resolve_counter

__all__ = [
    "CHAR_LIMIT",
    "KEPT",
    "TABLE_LIMIT",
    "ChatSession",
    "MessageKey",
    "UnitKey",
    "count_texts_once",
]


TABLE_LIMIT = 1 << 18
CHAR_LIMIT = 1 << 27  # 128 Mi characters: the texts are the caller's transcript, alive anyway

KEPT = 1 << 18
"""Units (and positions) a session keeps at most; a longer transcript is built for the call alone."""

MessageKey = tuple[list[int], list[str], list[object]]
"""Per message: its ``id``, its role, and its text (plain) or ``(rendering,)`` (any other)."""

_Read = tuple[object, list[object], list[str], list[str], list[int]]
_Turns = tuple[list[str], list[str | None], list[int], list[int], list[str]]

UnitKey = tuple[list[tuple[int, ...]] | None, list[int], list[bool]]
"""Per unit: its message positions (``None``: every message is a unit of its own), its tokens and
whether it is pinned."""


class ChatSession:
    """What one conversation's selections reuse: token counts, report items, per-position values.

    Pass it as ``session=`` to :func:`~cupel.chat.select_messages` (or the LangChain twin) on every
    turn; :class:`~cupel.chat.StableWindow` holds one of its own. See the module docstring for what
    it keeps and how much.
    """

    __slots__ = (
        "_chars",
        "_counter",
        "_counts",
        "_items",
        "_lock",
        "_positions",
        "_read",
        "_terms",
        "_turns",
    )

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._counter: object = None
        self._counts: dict[str, int] = {}
        self._chars = 0
        # The last transcript's keys and items; replaced as a whole, never changed in place.
        self._items: tuple[MessageKey, UnitKey, list[ContextItem]] | None = None
        # Per-position values by name; each list replaced, never grown in place.
        self._positions: dict[str, list[Any]] = {}
        # The last plain transcript read: (counter and overhead, messages, roles, texts, costs).
        self._read: _Read | None = None
        # The last older turns' contents: (roles, texts, starts, ends, contents).
        self._turns: _Turns | None = None
        self._terms = TermCounts()

    def __repr__(self) -> str:
        units = 0 if self._items is None else len(self._items[2])
        read = 0 if self._read is None else len(self._read[1])
        turns = 0 if self._turns is None else len(self._turns[4])
        return f"ChatSession(counts={len(self._counts)}, items={units}, read={read}, turns={turns})"

    def clear(self) -> None:
        """Forget everything kept."""
        with self._lock:
            self._counter = None
            self._counts = {}
            self._chars = 0
            self._items = None
            self._positions = {}
            self._read = None
            self._turns = None
            self._terms = TermCounts()

    @property
    def term_counts(self) -> TermCounts:
        """The relevance term's counts kept from the last call (see the module docstring)."""
        return self._terms

    # Token counts ---------------------------------------------------------------------------------

    def count(self, texts: Sequence[str], counter: TokenCounter) -> list[int]:
        """One count per text, from the table when known; misses counted in one ``count_many`` call,
        each distinct text once, in first-seen order (so a counter's errors read as without it)."""
        try:
            hash(counter)
        except TypeError:
            return count_distinct(texts, counter)
        with self._lock:
            if self._counter != counter:
                self._counter, self._counts, self._chars = counter, {}, 0
            table = self._counts
        if not table:
            return self._count_new(texts, counter)[1]
        counts: list[int | None] = list(map(table.get, texts))
        if None not in counts:
            return counts  # type: ignore[return-value]
        found = self._count_new(list(compress(texts, map(is_, counts, repeat(None)))), counter)[0]
        return list(map(found.get, texts, counts))  # type: ignore[arg-type]

    def _count_new(self, texts: Sequence[str], counter: TokenCounter) -> tuple[dict[str, int], list[int]]:
        found, counted = _counted(texts, counter)
        kept = found
        chars = sum(map(len, kept))
        if chars > CHAR_LIMIT and max(map(len, kept)) > CHAR_LIMIT:  # a text too long to keep
            kept = {text: tokens for text, tokens in found.items() if len(text) <= CHAR_LIMIT}
            chars = sum(map(len, kept))
        with self._lock:
            if self._counter != counter:
                return found, counted
            if len(self._counts) + len(kept) > TABLE_LIMIT or self._chars + chars > CHAR_LIMIT:
                self._counts, self._chars = {}, 0
            if len(kept) <= TABLE_LIMIT and chars <= CHAR_LIMIT:
                self._counts.update(kept)
                self._chars += chars
        return found, counted

    # The last transcript read -------------------------------------------------------------------

    def plain_costs(
        self,
        key: object,
        messages: Sequence[object],
        columns: tuple[list[str], list[str]],
        cost_of: Callable[[list[str]], list[int]],
    ) -> list[int]:
        """The cost of each plain message (``columns``: their roles and texts): the leading messages
        the last call read with the same ``key`` (counter and overhead), as the same objects with the
        same roles and texts, keep their costs; ``cost_of`` costs the texts of the others. As with
        counts, an unhashable counter keeps nothing."""
        roles, contents = columns
        try:
            hash(key)
        except TypeError:
            return cost_of(contents)
        kept = self._read
        start = 0
        if kept is not None and kept[0] == key:
            _, old_messages, old_roles, old_contents, old_costs = kept
            start = min(len(old_messages), len(messages))
            start = next(compress(count(), map(is_not, old_messages[:start], messages[:start])), start)
            start = agreeing(old_roles, roles, start)
            start = agreeing(old_contents, contents, start)
        costs = [*old_costs[:start], *cost_of(contents[start:])] if start else cost_of(contents)
        if len(messages) <= KEPT:
            with self._lock:
                self._read = (key, list(messages), roles, contents, costs)
        return costs

    # The older turns' contents -----------------------------------------------------------------

    def turn_contents(
        self,
        read: tuple[list[str], list[str | None]],
        spans: tuple[list[int], list[int]],
        make: Callable[[int], list[str]],
    ) -> list[str]:
        """The contents of turns over a plain transcript (``read``: its roles and texts); turn ``t``
        spans messages ``spans[0][t]`` to ``spans[1][t] - 1``, consecutive turns ascending. The leading
        turns the last call made with the same spans, over messages with the same roles and texts, keep
        their contents; ``make(t)`` makes those of turns ``t`` onwards. Read the list only: it is kept."""
        roles, texts = read
        starts, ends = spans
        kept = self._turns
        reused = 0
        if kept is not None:
            old_roles, old_texts, old_starts, old_ends, old_contents = kept
            agreed = agreeing(old_texts, texts, agreeing(old_roles, roles, min(len(old_roles), len(roles))))
            reused = agreeing(old_ends, ends, agreeing(old_starts, starts, min(len(old_starts), len(starts))))
            reused = bisect_right(ends, agreed, 0, reused)  # the turns that end within those messages
        contents = [*old_contents[:reused], *make(reused)] if reused else make(0)
        if len(roles) <= KEPT:
            with self._lock:
                self._turns = (roles, texts, list(starts), list(ends), contents)
        return contents

    # Per-position values --------------------------------------------------------------------------

    def positions(self, name: str, make: Callable[[range], Iterable[Any]], needed: int) -> list[Any]:
        """The values of positions ``0 .. needed - 1`` made by ``make`` (or a longer list: read by index)."""
        with self._lock:
            values = self._positions.get(name, [])
        if len(values) >= needed:
            return values
        values = [*values, *make(range(len(values), needed))]
        if needed <= KEPT:
            with self._lock:
                self._positions[name] = values
        return values

    # Report items ---------------------------------------------------------------------------------

    def items(
        self, messages: MessageKey, units: UnitKey, build: Callable[[int], list[ContextItem]]
    ) -> list[ContextItem]:
        """The items of every unit: those kept where the keys agree, then ``build(start)``'s (the items
        of units ``start`` onwards). The list may be shared with later calls: read it only."""
        size = len(units[1])
        kept = self._items
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
            with self._lock:
                self._items = (stored_messages, stored_units, items)
        return items


def positions(
    session: ChatSession | None, name: str, make: Callable[[range], Iterable[Any]], needed: int
) -> list[Any]:
    """Per-position values from ``session`` (kept there), or made for this call alone."""
    if session is None:
        return list(make(range(needed)))
    return session.positions(name, make, needed)


def count_texts_once(
    texts: Sequence[str], counter: CounterLike | None, session: ChatSession | None = None
) -> list[int]:
    """One count per text with ``counter`` (default ``HeuristicCounter()``), each distinct text once;
    through ``session``'s table when one is given."""
    resolved = resolve_counter(counter)
    if session is None:
        if len(set(texts)) == len(texts):  # no repeat (the usual case): no table to build
            return count_texts(resolved, texts)
        return _counted(texts, resolved)[1]
    return session.count(texts, resolved)


def _counted(texts: Sequence[str], counter: TokenCounter) -> tuple[dict[str, int], list[int]]:
    """Count ``texts`` (each distinct one once): the counts by text, and per text."""
    found = dict.fromkeys(texts, 0)
    if len(found) == len(texts):  # no repeat (the usual case): the texts as they are, no second list
        counted = count_texts(counter, texts)
        found.update(zip(texts, counted, strict=True))
    else:
        unique = list(found)
        found.update(zip(unique, count_texts(counter, unique), strict=True))
        counted = list(map(found.__getitem__, texts))
    return found, counted


def _reusable(
    old: tuple[MessageKey, UnitKey, list[ContextItem]], messages: MessageKey, units: UnitKey
) -> int:
    """How many leading units of the old items are the new transcript's."""
    old_messages, old_units, _ = old
    if (old_units[0] is None) is not (units[0] is None):
        return 0
    agreed = min(len(messages[0]), len(old_messages[0]))
    olds: tuple[Sequence[object], ...] = old_messages
    news: tuple[Sequence[object], ...] = messages
    for old_column, new_column in zip(olds, news, strict=True):
        agreed = agreeing(old_column, new_column, agreed)
    start = min(len(units[1]), len(old[2]))
    for old_unit_column, new_unit_column in zip(old_units, units, strict=True):
        if new_unit_column is not None:
            start = agreeing(old_unit_column, new_unit_column, start)  # type: ignore[arg-type]
    if units[0] is None:
        return min(start, agreed)
    # The leading units whose messages all lie within the agreeing messages.
    return next(compress(count(), map(agreed.__le__, map(max, units[0][:start]))), start)
