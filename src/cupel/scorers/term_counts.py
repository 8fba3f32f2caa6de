"""TermCounts: a caller's relevance counts, kept from one call to the next (a chat session's).

How often each text of a list holds each query term (:mod:`cupel.scorers.terms` counts them), kept
so that a list that grew is counted only in its new texts, and a term new to the list from the word
indexes of the texts it kept lowered (:func:`~cupel.scorers.terms.lowered_runs`,
:class:`~cupel.scorers.word_index.WordIndex`).
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Sequence

from cupel import _numeric
from cupel._prefix import agreeing
from cupel.scorers.terms import (
    WHOLE_LIST_MINIMUM,
    Run,
    candidate_words,
    columns_of,
    count_words,
    lowered_runs,
    tally,
    term_of,
)
from cupel.scorers.word_index import WordIndex, WordKeys

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    #: A column of counts (a count a text): a list, or a numpy array where numpy counted it.
    Column = list[int] | Any

    #: A caller's counting of what was not kept: ``count(terms, texts, runs)``, a column a term.
    Counting = Callable[[list[str], Sequence[str], list[Run]], Sequence[Column]]

    _Kept = tuple[
        tuple[bool, bool],  # the analysis settings of the counts and word terms
        list[str],  # the texts
        dict[str, Column],  # a column a term
        list[Run],  # the texts lowered
        dict[str, dict[str, int]],  # the latest texts' tallies, by text
        dict[str, str | None],  # each word's term (a memo, added to)
        dict[str, list[str]],  # each term's candidate words (a memo, added to)
        dict[int, tuple[Run, WordIndex | None]],  # each run's word index, by the run's identity
    ]

__all__ = ["TermCounts"]


#: A :class:`TermCounts` keeps the columns of at most this many terms, and of this many counts in all
#: (a count a term a text): the terms of the latest calls first.
KEPT_TERMS = 4096
KEPT_COUNTS = 1 << 22

#: The characters of lowered texts from which a :class:`TermCounts` answers new terms from word indexes:
#: on fewer, a pass over the texts costs about what the lookups do (1,000 short chat messages, about
#: 30k characters, gained nothing; 1,000 long ones, about 600k, a warm turn 40% less).
INDEXED_MINIMUM = 1 << 17

#: The words whose terms a :class:`TermCounts` remembers at most (then it starts again).
KEPT_WORDS = 1 << 16


class TermCounts:
    """How often each text of a list holds each query term, kept from one call to the next.

    :meth:`columns` counts, with the caller's ``count``, only what it did not count before: a term it kept
    a column of is counted only in the texts after those its column still holds for (the leading texts
    that equal the ones it was counted on: a list that grew), and a term new to it (or whose column lags
    :data:`~cupel.scorers.terms.WHOLE_LIST_MINIMUM` texts or more) in every text: where numpy is installed
    and the texts hold :data:`INDEXED_MINIMUM` characters or more, from the word index of each run of the
    texts lowered (:func:`lowered_runs`, :class:`WordIndex`), made once a run, else by searching the runs
    (kept for the texts that did not change). It keeps the columns (a count per text) of the terms of the
    latest calls, this call's first, up to :data:`KEPT_TERMS` terms and :data:`KEPT_COUNTS` counts, for
    one pair of analysis settings; the texts, their lowered runs and those runs' word indexes (each about
    the texts' size again); the word tallies of the texts it last tallied (a term it knows is counted in
    the few texts its column lacks from these); and two memos: each word's term, up to :data:`KEPT_WORDS`
    words, and each term's candidate words, up to :data:`KEPT_TERMS` terms. All but the memos (which only
    grow, the same word always having the same term) are replaced whole under a lock and never changed in
    place, so threads sharing it see one call's counts or the next's. A chat session holds one (a
    conversation's queries share many of their terms); the counts are the same with it or without (a
    test compares).
    """

    __slots__ = ("_kept", "_lock")

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._kept: _Kept | None = None

    def columns(
        self,
        wanted: list[str],
        texts: Sequence[str],
        count: Counting,
        *,
        stemming: bool,
        stop_words: bool,
    ) -> list[list[int]]:
        """How often each text holds each term of ``wanted``: a column a term, a count a text.
        ``count(terms, texts, runs)`` gives the same for what was not kept (``runs``: the texts
        lowered, :func:`lowered_runs`, when they are at hand, else empty)."""
        found = self._columns(wanted, texts, count, stemming=stemming, stop_words=stop_words)
        return [column if isinstance(column, list) else column.tolist() for column in found]

    def table(
        self,
        np: Any,
        wanted: list[str],
        texts: Sequence[str],
        count: Counting,
        *,
        stemming: bool,
        stop_words: bool,
    ) -> Any:
        """:meth:`columns` as a numpy table: a row a term, a column a text."""
        found = self._columns(wanted, texts, count, stemming=stemming, stop_words=stop_words)
        return np.array(found, dtype=np.int64)  # rows kept as arrays are copied whole

    def _columns(
        self,
        wanted: list[str],
        texts: Sequence[str],
        count: Counting,
        *,
        stemming: bool,
        stop_words: bool,
    ) -> list[Column]:
        """:meth:`columns`, each column a list or (from a word index, or numpy's counting) an array."""
        settings = (stemming, stop_words)
        texts = list(texts)
        with self._lock:
            kept = self._kept
        old: dict[str, Column] = {}
        same = 0  # how many leading texts equal last call's
        runs: list[Run] = []
        tallies: dict[str, dict[str, int]] = {}
        word_terms: dict[str, str | None] = {}
        term_words: dict[str, list[str]] = {}
        if kept is not None:
            same = agreeing(kept[1], texts, min(len(kept[1]), len(texts)))
            runs, tallies = kept[3], kept[4]
            if kept[0] == settings:
                old = kept[2]
                word_terms = kept[5] if len(kept[5]) < KEPT_WORDS else {}
                term_words = kept[6] if len(kept[6]) < KEPT_TERMS else {}
        # A kept column holds for the texts it was counted on that still lead the list. One that holds
        # for all but a few of those is extended; one that lags further (a term not asked for in many
        # turns) is counted afresh with the new terms: from the word indexes of the texts' runs, made
        # once a run (a new term's few words looked up there), or by a pass over every text.
        known: dict[str, int] = {}
        fresh: list[str] = []
        for term in wanted:
            holds = min(len(old[term]), same) if term in old else -1
            if holds >= 0 and same - holds < WHOLE_LIST_MINIMUM:
                known[term] = holds
            else:
                fresh.append(term)
        if fresh:
            runs = list(lowered_runs(texts, runs, same))
        else:  # those still true of these texts
            runs = [run for run in runs if run[0] + len(run[2]) <= same]
        indexes = _still_held(kept[7] if kept is not None else {}, runs)
        columns: dict[str, Column] = {}
        if fresh:
            memos = (term_words, word_terms)
            found = self._indexed(fresh, runs, indexes, memos, stemming=stemming, stop_words=stop_words)
            searched = [term for term in fresh if term not in found]  # the others: in every text
            if searched:
                found.update(zip(searched, count(searched, texts, runs), strict=True))
            columns = {term: found[term] for term in fresh}  # in the order asked
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
                rest: Sequence[Column] = columns_of(rows, len(known), len(tail))
            else:
                rest = count(list(known), tail, [])
            for (term, start), counted in zip(known.items(), rest, strict=True):
                columns[term] = _extended(old[term], start, counted[start - first :])
        result = [columns[term] for term in wanted]
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
            self._kept = (settings, texts, columns, runs, latest, word_terms, term_words, indexes)
        return result

    @staticmethod
    def _indexed(
        fresh: list[str],
        runs: list[Run],
        indexes: dict[int, tuple[Run, WordIndex | None]],
        memos: tuple[dict[str, list[str]], dict[str, str | None]],
        *,
        stemming: bool,
        stop_words: bool,
    ) -> dict[str, Column]:
        """The columns of the ASCII terms of ``fresh`` from the runs' word indexes (those of ``indexes``,
        the others made and added to it): none without numpy, for texts shorter than
        :data:`INDEXED_MINIMUM` in all, or where a run has no index (:meth:`WordIndex.of`). ``memos``:
        each term's candidate words, and each word's term, added to."""
        term_words, word_terms = memos
        terms = [term for term in fresh if term.isascii()]
        np = _numeric.numpy_module()
        if np is None or not terms or sum(len(run[1]) for run in runs) < INDEXED_MINIMUM:
            return {}
        tables = []
        for run in runs:
            held = indexes.get(id(run))
            if held is None or held[0] is not run:
                held = indexes[id(run)] = (run, WordIndex.of(np, run))
            if held[1] is None:
                return {}
            tables.append(held[1])
        # Each term's candidate words (kept), looked up in the indexes; a word found counts for a
        # term when it is one of its words (each word's term kept too).
        words: list[str] = []
        rows: list[int] = []
        for row, term in enumerate(terms):
            found = term_words.get(term)
            if found is None:
                found = term_words[term] = candidate_words(term, stemming=stemming)
            words += found
            rows += [row] * len(found)
        keys = WordKeys.of(np, words, rows)

        def accepts(position: int) -> bool:
            word = keys.words[position]
            term = word_terms.get(word, "")
            if term == "":  # no term is empty
                term = word_terms[word] = term_of(word, stemming=stemming, stop_words=stop_words)
            return term == terms[int(keys.rows[position])]

        parts = [index.counts(keys, len(terms), accepts) for index in tables]
        # A column an array of its own: a kept column must not hold a whole table in memory.
        return {term: np.concatenate([part[row] for part in parts]) for row, term in enumerate(terms)}


def _still_held(
    indexes: dict[int, tuple[Run, WordIndex | None]], runs: list[Run]
) -> dict[int, tuple[Run, WordIndex | None]]:
    """The word indexes of ``indexes`` whose runs are among ``runs`` (the same objects)."""
    held = {}
    for run in runs:
        found = indexes.get(id(run))
        if found is not None and found[0] is run:
            held[id(run)] = found
    return held


def _extended(column: Column, start: int, tail: Sequence[int]) -> Column:
    """``column``'s first ``start`` counts, then ``tail``'s."""
    if isinstance(column, list):
        return column[:start] + list(tail)
    np = _numeric.numpy_module()
    return np.concatenate((column[:start], np.asarray(tail, dtype=np.int64)))
