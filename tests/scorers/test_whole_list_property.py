"""Whole-list scoring equals per-item scoring for every built-in scorer (within 1e-9)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    CompositeScorer,
    ContextItem,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    StepCurve,
    TagScorer,
    WindowCurve,
)
from cupel.protocols import Scorer
from tests.strategies import item_lists

NOW = datetime(2024, 1, 1, 10, tzinfo=UTC)

SCORERS: list[Scorer] = [
    RecencyScorer(),
    PriorityScorer(),
    KindScorer(),
    KindScorer({"Scratchpad": 2.0, "memory": 0.3}),
    TagScorer({"a": 1.0, "Important": 2.0, "x": 0.5}),
    TagScorer({"a": 1.0, "important": 2.0}, case_sensitive=False),
    FrequencyScorer(),
    ReflexiveScorer(),
    MetadataTrustScorer(0.3),
    MetadataKeyScorer("cupel:priority", "high", 1.5),
    DecayScorer(FixedTimeProvider(NOW), ExponentialCurve(timedelta(hours=3))),
    DecayScorer(FixedTimeProvider(NOW), StepCurve([(timedelta(hours=1), 0.9), (timedelta(hours=5), 0.4)])),
    DecayScorer(FixedTimeProvider(NOW), WindowCurve(timedelta(hours=2)), null_timestamp_score=0.1),
    ScaledScorer(FrequencyScorer()),
    ScaledScorer(ScaledScorer(PriorityScorer())),
    CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
    CompositeScorer(
        [(ScaledScorer(FrequencyScorer()), 1.0), (CompositeScorer([(ReflexiveScorer(), 1.0)]), 2.0)]
    ),
]


@given(items=item_lists(allow_negative=True), index=st.integers(0, len(SCORERS) - 1))
def test_score_all_matches_per_item_score(items: list[ContextItem], index: int) -> None:
    scorer = SCORERS[index]
    batch = scorer.score_all(items)  # type: ignore[attr-defined]
    assert len(batch) == len(items)
    for item, whole in zip(items, batch, strict=True):
        single = scorer.score(item, items)
        assert abs(whole - single) <= 1e-9, (scorer, item, whole, single)


@given(items=item_lists(max_size=60))
def test_frequency_inverted_index_matches_definition_on_larger_lists(items: list[ContextItem]) -> None:
    scorer = FrequencyScorer()
    assert scorer.score_all(items) == [scorer.score(item, items) for item in items]


@given(items=item_lists(max_size=30), data=st.data())
def test_frequency_whole_list_matches_definition_with_repeated_instances(
    items: list[ContextItem], data: st.DataObject
) -> None:
    # The same instance at several positions skips each of its copies (identity), per tag set.
    if items:
        items = items + data.draw(st.lists(st.sampled_from(items), max_size=10))
    scorer = FrequencyScorer()
    assert scorer.score_all(items) == [scorer.score(item, items) for item in items]
