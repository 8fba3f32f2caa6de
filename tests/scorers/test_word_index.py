"""The word index a session keeps: its counts are the reference's, and a key never stands for two words."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel.scorers import term_counts, terms, word_index
from cupel.scorers.relevance import query_terms
from cupel.scorers.term_counts import TermCounts
from cupel.scorers.word_index import WordIndex, WordKeys
from tests.scorers.test_terms import _WORDS as term_words
from tests.scorers.test_terms import _reference

# The term tests' words, and words that differ from one of them in their last byte only, or in a
# letter beyond ASCII, and a long word of letters and digits.
_WORDS = [*term_words, "caféteria", "internationalisatiox", "deploymentsystemsengineerinx", "a1b2c3d4e"]


def _counting(wanted: list[str], texts: Sequence[str], runs: Sequence[terms.Run]) -> list[list[int]]:
    return _reference(wanted, texts)


def _indexed(wanted: list[str], texts: Sequence[str]) -> list[list[int]] | None:
    """The counts from the word indexes of the texts' runs; None where a run has none."""
    indexes = [WordIndex.of(np, run) for run in terms.lowered_runs(texts)]
    if None in indexes:
        return None
    keys = _keys(wanted)
    accepts = _accepting(keys, wanted)
    tables = [index.counts(keys, len(wanted), accepts) for index in indexes if index is not None]
    found: list[list[int]] = np.concatenate(tables, axis=1).tolist()
    return found


def _keys(wanted: list[str]) -> WordKeys:
    return _words([terms.candidate_words(term, stemming=True) for term in wanted])


def _accepting(keys: WordKeys, wanted: list[str]) -> Any:
    """Whether a word found is one of its row's term's."""

    def accepts(position: int) -> bool:
        term = terms.term_of(keys.words[position], stemming=True, stop_words=True)
        return term == wanted[int(keys.rows[position])]

    return accepts


_TEXT = st.lists(st.one_of(st.sampled_from(_WORDS), st.text(min_size=1, max_size=6)), max_size=12).map(
    " ".join
)


@given(
    st.lists(_TEXT, min_size=1, max_size=40),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4),
    st.integers(1, 200),
)
def test_the_index_counts_as_the_reference(texts: list[str], query: list[str], run: int) -> None:
    wanted = [term for term in query_terms(" ".join(query)) if term.isascii()]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "_RUN", run)  # runs of a few texts each
        found = _indexed(wanted, texts)
    if found is None:  # only where a lower case grows: a key stands for one word here
        assert any(len(text.lower()) != len(text) for text in texts)
    else:
        assert found == _reference(wanted, texts)


def test_words_sharing_a_key_make_no_index(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the multipliers at 0 every long word of a length hashes alike.
    monkeypatch.setattr(word_index, "_MULTIPLIERS", (0, 0, 0, 0))
    (run,) = terms.lowered_runs(["internationalisation and internationalisatiox"])
    assert WordIndex.of(np, run) is None
    (alone,) = terms.lowered_runs(["internationalisation again: internationalisation"])
    index = WordIndex.of(np, alone)
    assert index is not None
    # A word the text lacks with the key of one it holds is compared whole, and not found.
    keys = _words([["internationalisatiox"], ["internationalisation"]])
    assert index.counts(keys, 2, _ANY).tolist() == [[0], [2]]


def test_a_short_word_is_its_own_key() -> None:
    (run,) = terms.lowered_runs(["deploy deploys deployed", "a deploy"])
    index = WordIndex.of(np, run)
    assert index is not None
    keys = _words([["deploy", "deploys"], ["deployed", "deploye"]])
    assert index.counts(keys, 2, _ANY).tolist() == [[2, 1], [1, 0]]
    # A word found counts only where it is accepted as its row's.
    assert index.counts(keys, 2, lambda position: position != 0).tolist() == [[1, 0], [1, 0]]


def _words(rows: list[list[str]]) -> WordKeys:
    """The words of each row, keyed."""
    return WordKeys.of(
        np, [word for words in rows for word in words], [row for row, words in enumerate(rows) for _ in words]
    )


def _ANY(position: int) -> bool:
    return True


@given(
    st.lists(_TEXT, min_size=terms.WHOLE_LIST_MINIMUM, max_size=90),
    st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3), min_size=4, max_size=4),
    st.integers(20, 400),
)
def test_a_session_counts_from_its_indexes_as_the_reference(
    texts: list[str], queries: list[list[str]], run: int
) -> None:
    kept = TermCounts()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "_RUN", run)
        patch.setattr(term_counts, "INDEXED_MINIMUM", 0)  # indexes for these few texts too
        half = len(texts) // 2
        lists = (texts[:-2], texts, [*texts[:half], "deploy", *texts[half + 1 :]], texts)
        for current, query in zip(lists, queries, strict=True):
            # A list that grows, changes in the middle, and comes back; new terms each call.
            wanted = query_terms(" ".join(query))
            if wanted:
                columns = kept.columns(wanted, current, _counting, stemming=True, stop_words=True)
                assert columns == _reference(wanted, current)


def test_a_session_reuses_the_indexes_of_unchanged_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    of = WordIndex.of

    def spy(np_: object, run: terms.Run) -> WordIndex | None:
        made.append(run[0])
        return of(np_, run)

    monkeypatch.setattr(term_counts.WordIndex, "of", spy)
    monkeypatch.setattr(terms, "_RUN", 200)
    monkeypatch.setattr(term_counts, "INDEXED_MINIMUM", 0)
    texts = [f"{index}: deploy the webhook" for index in range(100)]
    kept = TermCounts()
    kept.columns(["deploy"], texts, _counting, stemming=True, stop_words=True)
    first = list(made)
    assert first == sorted(set(first)) and first[0] == 0  # every run indexed once
    made.clear()
    grown = [*texts, "100: retry", "101: retried"]
    assert kept.columns(["retr"], grown, _counting, stemming=True, stop_words=True) == _reference(
        ["retr"], grown
    )
    assert made and min(made) > 0  # only the runs at the end, lowered again with the new texts


@given(
    st.lists(
        st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=40), max_size=20
    )
)
def test_words_are_keyed_in_whole_arrays_as_one_by_one(words: list[str]) -> None:
    keys = WordKeys.of(np, words, list(range(len(words))))
    assert keys.keys.tolist() == [word_index._key(word.encode("ascii")) for word in words]
    assert keys.rows.tolist() == list(range(len(words)))


def test_a_kept_column_holds_no_more_memory_than_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    # A kept column that held a whole table in memory would outgrow the session's bounds.
    monkeypatch.setattr(term_counts, "INDEXED_MINIMUM", 0)
    texts = [f"{index}: deploy the webhook, retry {index % 5}" for index in range(300)]
    kept = TermCounts()
    for query in ("deploy webhook", "retry 3", "deploy 7 again"):
        wanted = query_terms(query)
        kept.columns(wanted, texts, _counting, stemming=True, stop_words=True)
        texts = [*texts, f"{len(texts)}: {query}"]
    assert kept._kept is not None
    arrays = [column for column in kept._kept[2].values() if not isinstance(column, list)]
    assert len(arrays) >= 5
    for column in arrays:
        owner = column
        while owner.base is not None:
            owner = owner.base
        assert owner.size <= len(texts), (owner.shape, column.shape)


def test_short_texts_are_searched_not_indexed(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[int] = []
    monkeypatch.setattr(term_counts.WordIndex, "of", lambda np_, run: made.append(run[0]))
    calls: list[list[str]] = []

    def counting(wanted: list[str], texts: Sequence[str], runs: Sequence[terms.Run]) -> list[list[int]]:
        calls.append(wanted)
        return _reference(wanted, texts)

    texts = [f"{index}: deploy the webhook" for index in range(100)]  # far fewer characters than the minimum
    assert sum(map(len, texts)) < term_counts.INDEXED_MINIMUM
    kept = TermCounts()
    kept.columns(["deploy"], texts, counting, stemming=True, stop_words=True)
    assert kept.columns(["webhook"], texts, counting, stemming=True, stop_words=True) == _reference(
        ["webhook"], texts
    )
    assert calls == [["deploy"], ["webhook"]] and not made
