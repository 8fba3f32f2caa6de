"""Term counting: the whole-array passes and the kept bags give the reference's counts, text by text."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import partial
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cupel import _optional
from cupel.scorers import relevance, term_counts, term_table, terms
from cupel.scorers.relevance import bm25_scores, query_terms
from cupel.scorers.term_counts import TermCounts

# Stems with suffixes of every length (deploy/deployments/deploymentsystems), terms beyond the
# eight-byte key (internationalisation), words ending the text, non-ASCII letters and digits,
# a lower case that grows (İ), an underscore (not a word character), a lone surrogate.
_WORDS = [
    "Deploy",
    "deployed",
    "deploying",
    "deployments",
    "deploymentsystemsengineering",
    "webhook",
    "retries",
    "retried",
    "retry",
    "retrying",
    "studies",
    "running",
    "runner",
    "bakes",
    "baking",
    "naïveties",
    "the",
    "İstanbul",
    "istanbul",
    "x_y",
    "9am",
    "٣٤",
    "naïve",
    "naïvely",
    "internationalisation",
    "internationalisations",
    "internationalisationally",
    "\ud800",
]


def _texts(words: st.SearchStrategy[str]) -> st.SearchStrategy[list[str]]:
    """Lists of 1 to 30 texts of at most 12 ``words`` each."""
    return st.lists(st.lists(words, max_size=12).map(" ".join), min_size=1, max_size=30)


_TEXTS = _texts(st.one_of(st.sampled_from(_WORDS), st.text(min_size=1, max_size=6)))
# ASCII texts, which the compiled search reads as bytes.
_ASCII_TEXTS = _texts(
    st.one_of(
        st.sampled_from([word for word in _WORDS if word.isascii()]),
        st.text(st.sampled_from("abdeginrstuy019 .,_-'\n"), min_size=1, max_size=8),
    )
)


@settings(max_examples=200, deadline=None)
@given(
    _ASCII_TEXTS | _TEXTS,
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    st.booleans(),
    st.booleans(),
)
def test_the_tally_the_array_passes_and_the_compiled_search_count_as_the_reference(
    texts: list[str], query: str, stemming: bool, stop_words: bool
) -> None:
    """ASCII texts are the ones the compiled search reads as bytes; the others too, narrowed."""
    wanted = query_terms(query, stemming=stemming, stop_words=stop_words)
    options = {"stemming": stemming, "stop_words": stop_words}
    expected = terms.count_terms(wanted, texts, **options)
    assert terms.count_words(wanted, texts, **options) == expected
    np = relevance._numeric.numpy_module()
    if np is not None and wanted:
        assert _counts(term_table.term_table(np, wanted, texts, **options)) == expected
    search = terms.term_search(wanted)
    if search is not None:  # the fast extra's ahocorasick_rs
        for _, corpus, _ in terms.lowered_runs(texts):
            assert sorted(search(corpus)) == sorted(terms.word_starts(wanted, corpus))
        assert terms.count_terms(wanted, texts, **options, search=search) == expected


@settings(max_examples=100, deadline=None)
@given(_TEXTS, st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join), st.integers(1, 40))
def test_counting_run_by_run_counts_as_one_run(texts: list[str], query: str, run: int) -> None:
    wanted = query_terms(query)
    if not wanted:
        return
    options = {"stemming": True, "stop_words": True}
    whole = terms.count_terms(wanted, texts, **options)
    table = None
    np = relevance._numeric.numpy_module()
    if np is not None:
        table = term_table.term_table(np, wanted, texts, **options).tolist()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "_RUN", run)  # many runs, some of one text longer than a run
        runs = list(terms._runs(texts))
        assert [text for _, part in runs for text in part] == texts
        assert [first for first, _ in runs] == list(accumulate([0, *(len(part) for _, part in runs[:-1])]))
        for _, part in runs[:-1]:  # each run but the last just reaches the size
            assert sum(map(len, part)) >= run > sum(map(len, part[:-1]))
        assert terms.count_terms(wanted, texts, **options) == whole
        if np is not None:
            assert term_table.term_table(np, wanted, texts, **options).tolist() == table


@settings(max_examples=500, deadline=None)
@given(
    st.text(st.sampled_from("abdeginsyzlu"), min_size=1, max_size=12) | st.sampled_from(_WORDS),
    st.booleans(),
    st.booleans(),
)
def test_every_word_is_among_the_words_of_its_term(word: str, stemming: bool, stop_words: bool) -> None:
    word = word.lower()
    term = terms.term_of(word, stemming=stemming, stop_words=stop_words)
    if term is not None:
        assert word in terms.words_of(term, stemming=stemming, stop_words=stop_words)


def test_the_words_of_a_stem_are_its_inflections() -> None:
    stud = terms.words_of("stud", stemming=True, stop_words=True)
    assert {"stud", "study", "studies", "studied", "studying", "studs"} <= set(stud)
    assert "student" not in stud and "studio" not in stud
    assert {"run", "runs", "running"} <= set(terms.words_of("run", stemming=True, stop_words=True))
    assert terms.words_of("deploy", stemming=False, stop_words=True) == ["deploy"]
    assert terms.words_of("the", stemming=False, stop_words=True) == []  # a stop word is no term's


@settings(max_examples=150, deadline=None)
@given(
    _TEXTS,
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
    st.sampled_from([(1,), (1, 3), term_table._MULTIPLIERS]),
    st.sampled_from([1, 16, 1 << 15]),
)
def test_the_word_table_counts_as_the_reference_whatever_its_hashes_and_pieces(
    texts: list[str], query: str, multipliers: tuple[int, ...], piece: int
) -> None:
    """Multipliers of 1 put many of the terms' words in one slot (so they go down level after level),
    and pieces of one text each split every run."""
    np = pytest.importorskip("numpy")
    wanted = query_terms(query)
    if not wanted:
        return
    options = {"stemming": True, "stop_words": True}
    expected = terms.count_terms(wanted, texts, **options)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(term_table, "_MULTIPLIERS", multipliers)
        patch.setattr(term_table, "_PIECE", piece)
        assert _counts(term_table.term_table(np, wanted, texts, **options)) == expected


def test_a_corpus_beyond_ascii_is_read_narrowed_when_the_words_are_ascii() -> None:
    np = pytest.importorskip("numpy")
    texts = ["naïve deploy’s — deploys", "café deploy déploy", "İstanbul deployed"]
    table = term_table._WordTable(np, ["deploy"], stemming=True, stop_words=True)
    corpus, ends = terms._lowered(texts)
    codes, wide_words = table._units(corpus)
    assert codes.itemsize == 1 and wide_words is None  # one byte a character
    assert table.count(corpus, ends).tolist() == [[2], [1], [1]]
    # The Kelvin sign's lower case is an ASCII k; a dotted capital I's is two characters (i and a dot
    # above), so its texts are lowered before they are read.
    raw = ["\u212aEYS and keys", "İstanbul keyed"]
    assert (
        _counts(term_table.term_table(np, ["key"], raw, stemming=True, stop_words=True))
        == (terms.count_terms(["key"], raw, stemming=True, stop_words=True))
        == {0: [2], 1: [1]}
    )
    assert table._units(terms._lowered(raw, lower=False)[0]) is None
    wide = term_table._WordTable(np, ["naïv"], stemming=True, stop_words=True)
    assert wide._units(corpus)[0].itemsize == 4  # a term's word beyond ASCII: UTF-32
    assert wide.count(corpus, ends).tolist() == [[1], [0], [0]]


def _counts(table: Any) -> dict[int, list[int]]:
    """A table of counts in the reference's form: the rows holding a term, by text."""
    return {doc: row for doc, row in enumerate(table.tolist()) if any(row)}


def test_a_long_list_of_common_terms_scores_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    texts = [f"{index}: deploy the webhook, retrying deployed webhooks {index % 7}" for index in range(5000)]
    wanted = query_terms("deploy webhook retry")
    assert terms.common_terms(wanted, texts)  # the whole-array path is taken
    arrays = bm25_scores("deploy webhook retry", texts)
    monkeypatch.setattr(relevance, "common_terms", lambda wanted, texts: False)
    assert arrays == bm25_scores("deploy webhook retry", texts)  # the same floats, bit for bit


def test_rare_terms_keep_the_substring_search() -> None:
    texts = [f"nothing to see in text {index}" for index in range(5000)]
    assert not terms.common_terms(query_terms("deploy webhook"), texts)


def test_padding_and_offsets_put_each_word_in_its_own_text() -> None:
    texts = ["deploy", "", "Deploy deploys", "x deploy", "deployed"]
    corpus, ends = terms._lowered(texts)
    assert corpus.startswith("\ndeploy\n\ndeploy deploys\n")
    for index, text in enumerate(texts):
        begin = 1 if index == 0 else ends[index - 1]
        assert corpus[begin : begin + len(text)] == text.lower()
    expected = {0: [1], 2: [2], 3: [1], 4: [1]}
    assert terms.count_terms(["deploy"], texts, stemming=True, stop_words=True) == expected
    np = relevance._numeric.numpy_module()
    if np is not None:
        assert (
            _counts(term_table.term_table(np, ["deploy"], texts, stemming=True, stop_words=True)) == expected
        )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["deploy", "deploys", "webhook", "retry", "the", "zz"]), max_size=20).map(
            " ".join
        ),
        min_size=64,
        max_size=120,
    ),
    st.sampled_from([0.0, 0.5, 1.2, 2.0]),
    st.sampled_from([0.0, 0.75, 1.0]),
)
def test_the_array_sums_are_the_reference_floats(texts: list[str], k1: float, b: float) -> None:
    pytest.importorskip("numpy")
    query = "deploy webhook retry"
    assume(terms.common_terms(query_terms(query), texts))  # the whole-array path is taken
    arrays = bm25_scores(query, texts, k1=k1, b=b)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(relevance, "common_terms", lambda wanted, texts: False)
        plain = bm25_scores(query, texts, k1=k1, b=b)
    assert arrays == plain  # bit for bit, k1 = 0 (0/0 in a text without the term) included


def _reference(terms_: list[str], texts: Sequence[str], runs: Sequence[terms.Run] = ()) -> list[list[int]]:
    found = terms.count_terms(terms_, texts, stemming=True, stop_words=True, runs=runs)
    return [
        [found.get(doc, [0] * len(terms_))[index] for doc in range(len(texts))]
        for index in range(len(terms_))
    ]


@settings(max_examples=150, deadline=None)
@given(
    _TEXTS,
    _TEXTS,
    st.lists(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3), min_size=5, max_size=5),
    st.integers(1, 80),
)
def test_kept_counts_are_the_reference(
    first: list[str], then: list[str], queries: list[list[str]], run: int
) -> None:
    kept = TermCounts()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(terms, "_RUN", run)  # runs of a few texts: some kept whole, one cut by a change
        lists = (first, first + then, [*first[:-1], "deploy", *then], then, first)
        for texts, query in zip(lists, queries, strict=True):
            # A list that grows, changes, is replaced, comes back; terms that repeat and that are new.
            wanted = query_terms(" ".join(query))
            if wanted:
                # The kept lowered runs are searched for new terms: stale ones would miscount here.
                columns = kept.columns(wanted, texts, _reference, stemming=True, stop_words=True)
                assert columns == _reference(wanted, texts)


def _spies(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[Any], list[str]]:
    """A counting function that records its calls, and the texts the kept counts tally."""
    calls: list[tuple[list[str], list[str]]] = []
    tallied: list[str] = []

    def counting(terms_: list[str], texts: Sequence[str], runs: Sequence[terms.Run]) -> list[list[int]]:
        calls.append((terms_, list(texts)))
        return _reference(terms_, texts, runs)

    def tally(text: str) -> dict[str, int]:
        tallied.append(text)
        return terms.tally(text)

    monkeypatch.setattr(term_counts, "tally", tally)
    return counting, calls, tallied


def test_kept_counts_count_only_new_texts_and_new_terms(monkeypatch: pytest.MonkeyPatch) -> None:
    counting, calls, tallied = _spies(monkeypatch)
    kept = TermCounts()
    history = ["deploy the webhook", "retry it", "deploy again"]
    assert kept.columns(["deploy"], history, counting, stemming=True, stop_words=True) == [[1, 0, 1]]
    assert calls == [(["deploy"], history)] and not tallied
    calls.clear()
    grown = [*history, "retrying deploys"]
    assert kept.columns(["deploy", "retr"], grown, counting, stemming=True, stop_words=True) == [
        [1, 0, 1, 1],
        [0, 1, 0, 1],
    ]
    assert calls == [(["retr"], grown)]  # a new term, in every text
    assert tallied == ["retrying deploys"]  # a new text, for the term known
    calls.clear()
    tallied.clear()
    edited = ["deploy the webhook", "retry it twice", "deploy again", "retrying deploys"]
    assert kept.columns(["deploy"], edited, counting, stemming=True, stop_words=True) == [[1, 0, 1, 1]]
    assert not calls
    assert tallied == ["retry it twice", "deploy again"]  # from the first that changed; one kept tally
    kept.columns(["deploy"], edited, counting, stemming=False, stop_words=True)
    assert calls == [(["deploy"], edited)]  # other analysis settings: counted afresh


def test_kept_counts_keep_the_terms_of_earlier_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    counting, calls, tallied = _spies(monkeypatch)
    kept = TermCounts()
    history = ["deploy the webhook", "retry it", "deploy again"]
    kept.columns(["deploy"], history, counting, stemming=True, stop_words=True)
    kept.columns(["retr"], [*history, "retried"], counting, stemming=True, stop_words=True)
    calls.clear()
    grown = [*history, "retried", "deployed twice", "webhooks"]
    assert kept.columns(["deploy", "retr", "webhook"], grown, counting, stemming=True, stop_words=True) == [
        [1, 0, 1, 0, 1, 0],
        [0, 1, 0, 1, 0, 0],
        [1, 0, 0, 0, 0, 1],
    ]
    # "deploy" was kept for three texts, "retr" for four: both tallied in one pass from the fourth.
    assert calls == [(["webhook"], grown)]
    assert tallied == grown[3:]


@pytest.mark.parametrize("indexed", [False, True])
def test_a_column_that_lags_far_is_counted_afresh(monkeypatch: pytest.MonkeyPatch, indexed: bool) -> None:
    counting, calls, tallied = _spies(monkeypatch)
    if indexed:  # from any size of texts
        monkeypatch.setattr(term_counts, "INDEXED_MINIMUM", 0)
    else:  # without numpy a term counted afresh is searched for in every text
        monkeypatch.setattr(_optional, "_found", {**_optional._found, "numpy": None})
    kept = TermCounts()
    texts = [f"deploy {index}" for index in range(10)]
    kept.columns(["deploy"], texts, counting, stemming=True, stop_words=True)
    grown = texts + [f"retry {index}" for index in range(terms.WHOLE_LIST_MINIMUM)]
    for size in range(len(texts) + 1, len(grown) + 1):  # turns that ask for another term only
        kept.columns(["retr"], grown[:size], counting, stemming=True, stop_words=True)
    calls.clear()
    tallied.clear()
    assert kept.columns(["deploy"], grown, counting, stemming=True, stop_words=True) == [
        [1] * 10 + [0] * terms.WHOLE_LIST_MINIMUM
    ]
    assert not tallied  # its column held for 10 texts of 74: not extended text by text
    # ... but counted afresh: in the word indexes of the texts' runs, else searched for in all.
    assert calls == ([] if indexed else [(["deploy"], grown)])


@pytest.mark.parametrize("size", [30, 200])  # below and above the whole-list minimum
def test_a_batch_with_kept_counts_scores_as_one_without(size: int) -> None:
    from cupel.scorers.columns import ItemColumns
    from cupel.scorers.relevance import RelevanceScorer

    texts = [f"{index}: deploy the webhook, retrying deployed webhooks {index % 7}" for index in range(size)]
    scorer = RelevanceScorer("deploy webhook retry", neighbors=2)

    def batch(kept: TermCounts | None) -> ItemColumns:
        return ItemColumns(
            len(texts),
            order_keys=lambda: list(range(len(texts))),
            kinds=lambda: [],
            tags=lambda: [],
            priorities=lambda: [],
            make_items=lambda: [],
            contents=lambda: texts,
            term_counts=kept,
        )

    kept = TermCounts()
    assert scorer.score_columns(batch(kept)) == scorer.score_columns(batch(None))
    assert scorer.score_columns(batch(kept)) == scorer.score_columns(batch(None))  # from the kept counts


def test_a_word_is_counted_for_its_own_term_whichever_term_is_found_at_its_start() -> None:
    # "studi" (from "studie") and "stud" (from "studies") are both terms; "studies" begins with both and
    # is counted once, for "stud"; "studio" begins with both and is neither's.
    wanted = ["stud", "studi"]
    assert query_terms("studies studie") == wanted
    texts = ["the studies", "a studie, studio", "Studying studied"]
    expected = {0: [1, 0], 1: [0, 1], 2: [2, 0]}
    assert terms.count_terms(wanted, texts, stemming=True, stop_words=True) == expected
    search = terms.term_search(wanted)
    if search is not None:
        assert terms.count_terms(wanted, texts, stemming=True, stop_words=True, search=search) == expected


def test_without_the_compiled_search_the_scores_are_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [f"{index}: the deploy {'failed' if index % 9 else 'deployed twice'}" for index in range(300)]
    with_it = bm25_scores("why did the deploy fail", texts)
    monkeypatch.setitem(_optional._found, "ahocorasick_rs", None)
    assert terms.term_search(["deploy"]) is None
    assert bm25_scores("why did the deploy fail", texts) == with_it
    assert with_it[1] > with_it[9] > 0.0  # "fail", rarer than "deploy", weighs more


def test_a_list_that_grows_a_little_at_a_time_keeps_few_runs() -> None:
    # A chat session: two texts more a call, a term new to it every call (the newest turn's number).
    texts = [f"{index}: deploy the webhook again" for index in range(20)]
    kept = TermCounts()
    counting = partial(relevance._count, None, stemming=True, stop_words=True)
    for call in range(300):
        texts += [f"{len(texts)}: retry the deploy", f"{len(texts) + 1}: it failed at {call}"]
        wanted = query_terms(f"did {len(texts) - 1} deploy")
        columns = kept.columns(
            wanted, texts, partial(relevance._columns, counting), stemming=True, stop_words=True
        )
        if call % 50 == 0:
            assert columns == _reference(wanted, texts)
    runs = kept._kept[3] if kept._kept is not None else []
    assert [run[0] for run in runs] == sorted({run[0] for run in runs})  # in order, none twice
    assert len(runs) <= 2 * math.log2(len(texts)), len(runs)  # not a run a call (300)
    assert columns == _reference(wanted, texts)
