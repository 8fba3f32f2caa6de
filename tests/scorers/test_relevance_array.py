"""RelevanceScorer's whole-array term counting gives the counts of the reference, text by text."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cupel.scorers import relevance
from cupel.scorers.relevance import bm25_scores, query_terms

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
    "retry",
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
_TEXTS = st.lists(
    st.lists(
        st.one_of(st.sampled_from(_WORDS), st.text(min_size=1, max_size=6)),
        max_size=12,
    ).map(" ".join),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(
    _TEXTS,
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    st.booleans(),
    st.booleans(),
)
def test_the_array_passes_count_as_the_reference(
    texts: list[str], query: str, stemming: bool, stop_words: bool
) -> None:
    np = pytest.importorskip("numpy")
    wanted = query_terms(query, stemming=stemming, stop_words=stop_words)
    if not wanted:
        return
    options = {"stemming": stemming, "stop_words": stop_words}
    expected = relevance._term_counts_plain(wanted, texts, **options)
    assert _counts(relevance._term_table(np, wanted, texts, **options)) == expected


def _counts(table: Any) -> dict[int, list[int]]:
    """A table of counts in the reference's form: the rows holding a term, by text."""
    return {doc: row for doc, row in enumerate(table.tolist()) if any(row)}


def test_a_long_list_of_common_terms_scores_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    texts = [f"{index}: deploy the webhook, retrying deployed webhooks {index % 7}" for index in range(5000)]
    wanted = query_terms("deploy webhook retry")
    assert relevance._common(wanted, texts)  # the whole-array path is taken
    arrays = bm25_scores("deploy webhook retry", texts)
    monkeypatch.setattr(relevance, "_common", lambda wanted, texts: False)
    assert arrays == bm25_scores("deploy webhook retry", texts)  # the same floats, bit for bit


def test_rare_terms_keep_the_substring_search() -> None:
    texts = [f"nothing to see in text {index}" for index in range(5000)]
    assert not relevance._common(query_terms("deploy webhook"), texts)


def test_padding_and_offsets_put_each_word_in_its_own_text() -> None:
    texts = ["deploy", "", "Deploy deploys", "x deploy", "deployed"]
    corpus, ends = relevance._lowered(texts)
    assert corpus.startswith("\ndeploy\n\ndeploy deploys\n")
    for index, text in enumerate(texts):
        begin = 1 if index == 0 else ends[index - 1]
        assert corpus[begin : begin + len(text)] == text.lower()
    expected = {0: [1], 2: [2], 3: [1], 4: [1]}
    assert relevance._term_counts_plain(["deploy"], texts, stemming=True, stop_words=True) == expected
    np = relevance._numeric.numpy_module()
    if np is not None:
        assert (
            _counts(relevance._term_table(np, ["deploy"], texts, stemming=True, stop_words=True)) == expected
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
    assume(relevance._common(query_terms(query), texts))  # the whole-array path is taken
    arrays = bm25_scores(query, texts, k1=k1, b=b)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(relevance, "_common", lambda wanted, texts: False)
        plain = bm25_scores(query, texts, k1=k1, b=b)
    assert arrays == plain  # bit for bit, k1 = 0 (0/0 in a text without the term) included
