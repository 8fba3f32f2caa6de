"""One scoring pass gives a report both the scores and the relevance column they were combined from."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel.model import ContextItem
from cupel.scorers import (
    CompositeScorer,
    KindScorer,
    RecencyScorer,
    RelevanceScorer,
    ScaledScorer,
    TagScorer,
)
from cupel.scorers._base import score_columns
from cupel.scorers._relevance_report import scores_and_relevance
from cupel.scorers.columns import ItemColumns

_WORDS = ["saxophone", "tenor", "deploy", "webhook", "the", "a", "errands", "work"]
_TEXTS = st.lists(st.lists(st.sampled_from(_WORDS), max_size=8).map(" ".join), min_size=1, max_size=20)


def _scorers() -> list[Any]:
    relevance = RelevanceScorer("saxophone tenor", neighbors=2)
    return [
        relevance,
        CompositeScorer([(relevance, 3.0), (RecencyScorer(), 1.0), (KindScorer(), 1.0)]),
        CompositeScorer([(ScaledScorer(relevance), 2.0), (TagScorer({"user": 1.0}), 1.0)]),
        CompositeScorer(
            [(CompositeScorer([(RecencyScorer(), 1.0), (relevance, 1.0)]), 1.0), (relevance, 2.0)]
        ),
    ]


@settings(max_examples=60, deadline=None)
@given(_TEXTS, st.sampled_from(range(4)))
def test_the_scores_are_score_columns_and_the_column_is_the_terms(texts: list[str], which: int) -> None:
    scorer = _scorers()[which]
    items = [ContextItem(text or "-", 5, tags=("user",)) for text in texts]
    scores, relevance = scores_and_relevance(scorer, ItemColumns.of_items(items))
    assert scores == score_columns(scorer, ItemColumns.of_items(items))
    assert relevance == RelevanceScorer("saxophone tenor", neighbors=2).score_all(items)


def test_without_a_relevance_term_there_is_no_column() -> None:
    items = [ContextItem("a", 1), ContextItem("b", 2)]
    scorer = CompositeScorer([(RecencyScorer(), 1.0), (KindScorer(), 1.0)])
    scores, relevance = scores_and_relevance(scorer, ItemColumns.of_items(items))
    assert relevance is None
    assert scores == score_columns(scorer, ItemColumns.of_items(items))


def test_the_term_is_scored_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = RelevanceScorer.score_columns

    def counted(self: RelevanceScorer, batch: ItemColumns) -> list[float]:
        calls.append(batch.count)
        return original(self, batch)

    monkeypatch.setattr(RelevanceScorer, "score_columns", counted)
    items = [ContextItem(f"saxophone {n}", 3) for n in range(5)]
    scores_and_relevance(_scorers()[1], ItemColumns.of_items(items))
    assert calls == [5]
