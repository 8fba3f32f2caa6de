"""RelevanceScorer's whole-list term counting gives the counts of the reference, text by text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import _numeric
from cupel.scorers import relevance
from cupel.scorers.relevance import bm25_scores, query_terms

_WORDS = ["Deploy", "deployed", "deploying", "webhook", "retries", "retry", "the", "İstanbul", "x_y", "9am"]
_TEXTS = st.lists(
    st.lists(
        st.one_of(st.sampled_from(_WORDS), st.text(min_size=1, max_size=6)),
        max_size=12,
    ).map(" ".join),
    min_size=1,
    max_size=30,
)


@settings(max_examples=150, deadline=None)
@given(
    _TEXTS,
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(" ".join),
    st.booleans(),
    st.booleans(),
)
def test_columns_count_as_the_reference(
    texts: list[str], query: str, stemming: bool, stop_words: bool
) -> None:
    pytest.importorskip("numpy")
    wanted = query_terms(query, stemming=stemming, stop_words=stop_words)
    if not wanted:
        return
    options = {"stemming": stemming, "stop_words": stop_words}
    assert relevance._term_counts_columns(wanted, texts, **options) == relevance._term_counts_plain(
        wanted, texts, **options
    )


def test_a_long_list_of_common_terms_scores_as_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("numpy")
    texts = [f"{index}: deploy the webhook, retrying deployed webhooks {index % 7}" for index in range(5000)]
    wanted = query_terms("deploy webhook retry")
    assert relevance._common(wanted, texts)  # the whole-list path is taken
    assert len(texts) >= _numeric.THRESHOLD
    expected = relevance._term_counts_plain(wanted, texts, stemming=True, stop_words=True)
    assert relevance._term_counts(wanted, texts, stemming=True, stop_words=True) == expected
    columns = bm25_scores("deploy webhook retry", texts)
    monkeypatch.setattr(relevance, "_common", lambda wanted, texts: False)
    assert columns == bm25_scores("deploy webhook retry", texts)  # the same floats, bit for bit


def test_rare_terms_keep_the_substring_search() -> None:
    texts = [f"nothing to see in text {index}" for index in range(5000)]
    assert not relevance._common(query_terms("deploy webhook"), texts)
