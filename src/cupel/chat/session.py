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
- **per-position values** (rendering openings) for up to ``KEPT`` positions.
- **the last transcript read**, when every message of it is plain (a role and a text), and what
  later stages made of it: its roles, texts and costs, the turn split and the older turns' contents,
  for at most ``KEPT`` messages. The next call compares its roles and texts, as read on that call,
  with those kept, position by position (a plain message's cost, rendering and turn depend on its
  position, role and text alone, all read afresh, so a message edited in place, replaced, moved or
  dropped is seen; an equal one, whatever its object or shape, is reused): the leading messages on
  which they agree keep their costs (when the counter and overhead are the same too), and the turns
  lying within them keep their split and contents. The kept strings are the transcript's own, plus
  the turns' contents (about as many characters again). A later stage reuses and keeps what it made
  only with its own call's read (the kept read's roles are the very list it was given), so a call
  never mixes another thread's read into its own.
- **the relevance term's counts** (:class:`~cupel.scorers.term_counts.TermCounts`): the last call's older
  turns' texts, their lower-cased copy and an index of its words (where numpy is installed; each about
  the texts' size again), how often each held each term of the latest queries (up to ``KEPT_TERMS``
  terms and ``KEPT_COUNTS`` counts), the word tallies of the latest turns, each word's term (up to
  ``KEPT_WORDS`` words) and each term's candidate words (up to ``KEPT_TERMS`` terms), so that on a
  transcript that grew a term asked for before is counted in the new turns only (one not asked for in
  64 turns is counted afresh), and a new term is looked up in the word index (made once for the turns
  that did not change), else searched for in the kept lower-cased copy.

Without a session nothing is kept: every call reads, counts and builds afresh, and the result is the
same. A session may be shared between threads (a lock guards each replacement, and what it keeps is
replaced whole, never changed in place, so a reader sees one call's state or the next's); it is meant
for one conversation, whose transcript grows.
"""

from __future__ import annotations

import _thread
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from itertools import compress, count, repeat
from operator import is_
from typing import Any, TypeVar

from cupel._frozen import dataclass
from cupel._prefix import agreeing
from cupel.model import ContextItem
from cupel.scorers.term_counts import TermCounts
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

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class _Read:
    """The last plain transcript read and what later stages made of it, each with the number of leading
    messages it still holds for (``turns``: the older turns' spans and contents; ``split``: the turn
    split). ``key``: the counter and overhead of the costs (``None``: an unhashable counter, no reuse)."""

    key: object
    roles: list[str]
    texts: list[str]
    costs: list[int]
    turns: tuple[list[int], list[int], list[str]] | None = None
    turns_holds: int = 0
    split: object = None
    split_holds: int = 0


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
        # The last plain transcript read, and what later stages made of it; replaced whole.
        self._read: _Read | None = None
        self._terms = TermCounts()

    def __repr__(self) -> str:
        units = 0 if self._items is None else len(self._items[2])
        kept = self._read
        read = 0 if kept is None else len(kept.roles)
        turns = 0 if kept is None or kept.turns is None else len(kept.turns[2])
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
        columns: tuple[list[str], list[str]],
        cost_of: Callable[[list[str]], list[int]],
    ) -> list[int]:
        """The cost of each plain message (``columns``: their roles and texts, kept by reference: never
        change them): the leading messages whose roles and texts equal the last read's keep their
        costs when it was costed with an equal ``key`` (counter and overhead); ``cost_of`` costs the
        texts of the others. As with counts, an unhashable counter keeps no cost."""
        roles, texts = columns
        try:
            hash(key)
        except TypeError:
            key = None
        kept = self._read
        agreed = start = 0
        if kept is not None:
            agreed = agreeing(
                kept.texts, texts, agreeing(kept.roles, roles, min(len(kept.roles), len(roles)))
            )
            start = agreed if key is not None and kept.key == key else 0
        rest = texts[start:]
        costs = [*kept.costs[:start], *cost_of(rest)] if kept is not None and start else cost_of(rest)
        if len(roles) <= KEPT:
            read = _Read(key, roles, texts, costs)
            if kept is not None:  # what later stages made holds for the messages that agree
                holds = (min(kept.turns_holds, agreed), min(kept.split_holds, start))
                read = _Read(key, roles, texts, costs, kept.turns, holds[0], kept.split, holds[1])
            with self._lock:
                self._read = read
        return costs

    def _this_read(self, roles: list[str]) -> _Read | None:
        """The kept read when it is the one of the call that read ``roles`` (not another thread's)."""
        kept = self._read
        return kept if kept is not None and kept.roles is roles else None

    def _keep(self, kept: _Read, **made: Any) -> None:
        """Keep what a stage made of the read ``kept``, unless another call's read replaced it."""
        with self._lock:
            if self._read is kept:
                self._read = replace(kept, **made)

    # The turn split and the older turns' contents ------------------------------------------------

    def turn_split(self, roles: list[str], make: Callable[[Any, int], T]) -> T:
        """The turn split of the plain transcript whose roles this call read as ``roles``:
        ``make(kept, holds)`` splits it, reusing ``kept`` (the last split, or ``None``) for the turns
        within its first ``holds`` messages (their roles and costs unchanged since)."""
        kept = self._this_read(roles)
        if kept is None:
            return make(None, 0)
        split = make(kept.split, kept.split_holds)
        self._keep(kept, split=split, split_holds=len(roles))
        return split

    def turn_contents(
        self,
        roles: list[str],
        spans: tuple[list[int], list[int]],
        make: Callable[[int], list[str]],
    ) -> list[str]:
        """The contents of the older turns of the plain transcript whose roles this call read as
        ``roles``; turn ``t`` spans messages ``spans[0][t]`` to ``spans[1][t] - 1``, consecutive turns
        ascending. The leading turns the last call made with the same spans, within the messages
        unchanged since, keep their contents; ``make(t)`` makes those of turns ``t`` onwards. Read the
        list only: it is kept."""
        kept = self._this_read(roles)
        if kept is None:
            return make(0)
        starts, ends = spans
        reused = 0
        old: list[str] = []
        if kept.turns is not None:
            old_starts, old_ends, old = kept.turns
            reused = agreeing(old_ends, ends, agreeing(old_starts, starts, min(len(old_starts), len(starts))))
            reused = bisect_right(ends, kept.turns_holds, 0, reused)  # the turns ending within those
        contents = old[:reused] if reused else make(0)
        if 0 < reused < len(starts):
            contents += make(reused)  # the turns after those kept
        self._keep(kept, turns=(list(starts), list(ends), contents), turns_holds=len(roles))
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
