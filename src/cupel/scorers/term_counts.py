"""TermCounts: a caller's relevance counts, kept from one call to the next (a chat session's).

How often each text of a list holds each query term (:mod:`cupel.scorers.terms` counts them), kept
so that a list that grew is counted only in its new texts, and a term new to the list only in the
texts it kept lowered (:func:`~cupel.scorers.terms.lowered_runs`).
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Sequence

from cupel._prefix import agreeing
from cupel.scorers.terms import WHOLE_LIST_MINIMUM, Run, columns_of, count_words, lowered_runs, tally

__all__ = ["TermCounts"]


#: A :class:`TermCounts` keeps the columns of at most this many terms, and of this many counts in all
#: (a count a term a text): the terms of the latest calls first.
KEPT_TERMS = 4096
KEPT_COUNTS = 1 << 22

#: The words whose terms a :class:`TermCounts` remembers at most (then it starts again).
KEPT_WORDS = 1 << 16

_Kept = tuple[
    tuple[bool, bool],  # the analysis settings of the counts and word terms
    list[str],  # the texts
    dict[str, list[int]],  # a column a term
    list[Run],  # the texts lowered
    dict[str, dict[str, int]],  # the latest texts' tallies, by text
    dict[str, str | None],  # each word's term (a memo, added to)
]


class TermCounts:
    """How often each text of a list holds each query term, kept from one call to the next.

    :meth:`columns` counts, with the caller's ``count``, only what it did not count before: a term it
    kept a column of is counted only in the texts after those its column still holds for (the leading
    texts that equal the ones it was counted on: a list that grew), and a term new to it (or whose
    column lags :data:`~cupel.scorers.terms.WHOLE_LIST_MINIMUM` texts or more) in every text,
    searching the lowered texts it kept (:func:`lowered_runs`) for those that did not change.
    It keeps the columns (a count per text) of the terms of the latest calls, this call's first, up to
    :data:`KEPT_TERMS` terms and :data:`KEPT_COUNTS` counts, for one pair of analysis settings; the
    texts and their lowered runs (about the texts' size again); the word tallies of the texts it last
    tallied (a term it knows is counted in the few texts its column lacks from these); and each word's
    term, up to :data:`KEPT_WORDS` words. All but that memo (which only grows, the same word always
    having the same term) are replaced whole under a lock and never changed in place, so threads
    sharing it see one call's counts or the next's. A chat session holds one (a conversation's queries
    share many of their terms); the counts are the same with it or without (a test compares).
    """

    __slots__ = ("_kept", "_lock")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._kept: _Kept | None = None

    def columns(
        self,
        wanted: list[str],
        texts: Sequence[str],
        count: Callable[[list[str], Sequence[str], list[Run]], list[list[int]]],
        *,
        stemming: bool,
        stop_words: bool,
    ) -> list[list[int]]:
        """How often each text holds each term of ``wanted``: a column a term, a count a text.
        ``count(terms, texts, runs)`` gives the same for what was not kept (``runs``: the texts
        lowered, :func:`lowered_runs`, when they are at hand, else empty)."""
        settings = (stemming, stop_words)
        texts = list(texts)
        with self._lock:
            kept = self._kept
        old: dict[str, list[int]] = {}
        same = 0  # how many leading texts equal last call's
        runs: list[Run] = []
        tallies: dict[str, dict[str, int]] = {}
        word_terms: dict[str, str | None] = {}
        if kept is not None:
            same = agreeing(kept[1], texts, min(len(kept[1]), len(texts)))
            runs, tallies = kept[3], kept[4]
            if kept[0] == settings:
                old = kept[2]
                word_terms = kept[5] if len(kept[5]) < KEPT_WORDS else {}
        # A kept column holds for the texts it was counted on that still lead the list. One that holds
        # for all but a few of those is extended; one that lags further (a term not asked for in many
        # turns) is counted afresh with the new terms, in the pass over every text.
        known: dict[str, int] = {}
        fresh: list[str] = []
        for term in wanted:
            holds = min(len(old[term]), same) if term in old else -1
            if holds >= 0 and same - holds < WHOLE_LIST_MINIMUM:
                known[term] = holds
            else:
                fresh.append(term)
        columns: dict[str, list[int]] = {}
        if fresh:
            runs = list(lowered_runs(texts, runs, same))
            columns.update(zip(fresh, count(fresh, texts, runs), strict=True))
        else:  # those still true of these texts
            runs = [run for run in runs if run[0] + len(run[2]) <= same]
        # The known terms are counted together from the first text one of them lacks, each column
        # taking its own tail: a few texts, tallied (the latest texts' tallies are kept for this).
        latest: dict[str, dict[str, int]] = {}
        if known:
            first = min(known.values())
            tail = texts[first:]
            if len(tail) < WHOLE_LIST_MINIMUM:
                tallied = [tallies.get(text) or tally(text) for text in tail]
                latest = dict(zip(tail, tallied, strict=True))
                options = {"stemming": stemming, "stop_words": stop_words}
                rows = count_words(list(known), tail, **options, tallies=tallied, word_terms=word_terms)
                rest = columns_of(rows, len(known), len(tail))
            else:
                rest = count(list(known), tail, [])
            for (term, start), counted in zip(known.items(), rest, strict=True):
                columns[term] = old[term][:start] + counted[start - first :]
        found = [columns[term] for term in wanted]
        # This call's columns, then the others kept, as far as they still hold, while within bounds.
        cells = sum(map(len, columns.values()))
        for term, column in old.items():
            if term in columns or not same:
                continue
            if len(columns) >= KEPT_TERMS or cells + min(len(column), same) > KEPT_COUNTS:
                break
            columns[term] = column if len(column) <= same else column[:same]
            cells += len(columns[term])
        with self._lock:
            self._kept = (settings, texts, columns, runs, latest, word_terms)
        return found
