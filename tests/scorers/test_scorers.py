"""Unit tests for each scorer rule (spec: Scorers). Edge-case tables are also covered by vectors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from cupel import (
    CompositeScorer,
    ContextItem,
    CupelTypeError,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    FrequencyScorer,
    InvalidConfigurationError,
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
from cupel.scorers import DEFAULT_KIND_WEIGHTS, score_items

UTC = UTC
NOW = datetime(2025, 1, 1, 12, tzinfo=UTC)


def test_default_kind_weights_are_exactly_the_spec_table() -> None:
    assert {str(k): w for k, w in DEFAULT_KIND_WEIGHTS.items()} == {
        "SystemPrompt": 1.0,
        "Memory": 0.8,
        "ToolOutput": 0.6,
        "Document": 0.4,
        "Message": 0.2,
    }


class TestKindScorer:
    def test_rejects_negative_and_non_finite(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="weight for kind 'Memory' must be non-negative"):
            KindScorer({"Memory": -1})
        with pytest.raises(InvalidConfigurationError, match="must be finite"):
            KindScorer({"Memory": math.nan})
        with pytest.raises(CupelTypeError, match="must be a number"):
            KindScorer({"Memory": "high"})  # type: ignore[dict-item]

    def test_duplicate_kind_rejected(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="twice"):
            KindScorer({"Memory": 1, "memory": 2})

    def test_empty_map_scores_zero(self) -> None:
        assert KindScorer({}).score(ContextItem("x", 1, kind="Memory"), []) == 0.0

    def test_equality_and_repr(self) -> None:
        assert KindScorer() == KindScorer(dict(DEFAULT_KIND_WEIGHTS))
        assert repr(KindScorer()) == "KindScorer()"
        assert "Scratchpad" in repr(KindScorer({"Scratchpad": 2.0}))


class TestTagScorer:
    def test_case_insensitive_option(self) -> None:
        scorer = TagScorer({"Urgent": 1.0, "misc": 1.0}, case_sensitive=False)
        assert scorer.score(ContextItem("x", 1, tags=["URGENT"]), []) == 0.5

    def test_validation(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="weight for tag 'a' must be non-negative"):
            TagScorer({"a": -1.0})
        with pytest.raises(InvalidConfigurationError, match="finite"):
            TagScorer({"a": math.inf})


class TestFrequencyScorer:
    def test_self_exclusion_by_identity(self) -> None:
        shared = ContextItem("same", 1, tags=["t"])
        twin = ContextItem("same", 1, tags=["t"])  # equal fields, different instance
        items = [shared, twin, ContextItem("other", 1, tags=["u"])]
        # twin counts as a peer for shared; denominator is len - 1 = 2.
        assert FrequencyScorer().score(shared, items) == 0.5

    def test_same_instance_twice_is_skipped_twice(self) -> None:
        shared = ContextItem("same", 1, tags=["t"])
        items = [shared, shared, ContextItem("peer", 1, tags=["T"])]
        assert FrequencyScorer().score(shared, items) == 0.5
        assert FrequencyScorer().score_all(items) == [0.5, 0.5, 1.0]

    def test_whole_list_with_common_tags_uses_bitsets(self) -> None:
        items = [ContextItem(f"i{n}", 1, tags=["common", f"u{n % 40}"]) for n in range(200)]
        items.append(ContextItem("loner", 1, tags=["u3"]))
        expected = [FrequencyScorer().score(item, items) for item in items]
        assert FrequencyScorer().score_all(items) == expected


class TestCompositeScorer:
    def test_weights_normalise(self) -> None:
        a = CompositeScorer([(RecencyScorer(), 3.0), (PriorityScorer(), 1.0)])
        b = CompositeScorer([(RecencyScorer(), 0.75), (PriorityScorer(), 0.25)])
        assert a.normalized_weights == b.normalized_weights == (0.75, 0.25)

    def test_validation_messages(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="at least one scorer entry"):
            CompositeScorer([])
        with pytest.raises(InvalidConfigurationError, match=r"entries\[1\] weight must be positive, got 0"):
            CompositeScorer([(RecencyScorer(), 1), (KindScorer(), 0)])
        with pytest.raises(InvalidConfigurationError, match="finite"):
            CompositeScorer([(RecencyScorer(), math.inf)])
        with pytest.raises(CupelTypeError, match="score"):
            CompositeScorer([(None, 1.0)])  # type: ignore[list-item]
        with pytest.raises(CupelTypeError, match="pair"):
            CompositeScorer([RecencyScorer()])  # type: ignore[list-item]

    def test_cycle_detection_by_identity(self) -> None:
        inner = CompositeScorer([(RecencyScorer(), 1.0)])
        outer = CompositeScorer([(inner, 1.0)])
        # Forge a cycle (immutability normally prevents it) and re-run detection.
        object.__setattr__(inner, "scorers", (outer,))
        with pytest.raises(InvalidConfigurationError, match="cycle detected"):
            CompositeScorer([(outer, 1.0)])

    def test_shared_child_is_not_a_cycle(self) -> None:
        child = RecencyScorer()
        scaled = ScaledScorer(child)
        CompositeScorer([(child, 1.0), (scaled, 1.0), (CompositeScorer([(child, 2.0)]), 1.0)])

    def test_custom_scorer_without_score_all(self) -> None:
        class Length:
            def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
                return len(item.content) / 10

        items = [ContextItem("abc", 1), ContextItem("abcdef", 1)]
        composite = CompositeScorer([(Length(), 1.0), (KindScorer(), 1.0)])
        assert composite.score_all(items) == [composite.score(i, items) for i in items]
        assert score_items(Length(), items) == [0.3, 0.6]


class TestScaledScorer:
    def test_empty_all_items(self) -> None:
        assert ScaledScorer(ReflexiveScorer()).score(ContextItem("x", 1), []) == 0.5
        assert ScaledScorer(ReflexiveScorer()).score_all([]) == []

    def test_inner_outside_unit_range(self) -> None:
        scorer = ScaledScorer(KindScorer({"Memory": 5.0, "Message": 3.0}))
        items = [
            ContextItem("a", 1, kind="Memory"),
            ContextItem("b", 1),
            ContextItem("c", 1, kind="Document"),
        ]
        assert scorer.score_all(items) == [1.0, 0.6, 0.0]

    def test_rejects_non_scorer(self) -> None:
        with pytest.raises(CupelTypeError):
            ScaledScorer(42)  # type: ignore[arg-type]


class TestMetadataScorers:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            (0.4, 0.4),
            (2, 1.0),
            (True, 0.5),
            (["0.9"], 0.5),
            ("1e-1", 0.1),
            ("inf", 0.5),
            ("1_0", 0.5),
        ],
    )
    def test_trust_value_forms(self, value: object, expected: float) -> None:
        item = ContextItem("x", 1, metadata={"cupel:trust": value})
        assert MetadataTrustScorer().score(item, [item]) == pytest.approx(expected)

    def test_trust_default_validated(self) -> None:
        with pytest.raises(
            InvalidConfigurationError, match=r"default_score must be in \[0.0, 1.0\], got -0.1"
        ):
            MetadataTrustScorer(-0.1)

    def test_key_boost_validation(self) -> None:
        for bad in (0.0, -1.0, math.nan, math.inf):
            with pytest.raises(InvalidConfigurationError, match="boost"):
                MetadataKeyScorer("cupel:priority", "high", bad)

    def test_key_non_string_values_compare_by_str(self) -> None:
        scorer = MetadataKeyScorer("level", "3", 2.0)
        assert scorer.score(ContextItem("x", 1, metadata={"level": 3}), []) == 2.0


class TestDecayScorer:
    def test_requires_time_provider(self) -> None:
        with pytest.raises(CupelTypeError, match="time_provider"):
            DecayScorer(None, WindowCurve(timedelta(hours=1)))  # type: ignore[arg-type]

    def test_curve_validation_names_the_parameter(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="half_life"):
            ExponentialCurve(timedelta(0))
        with pytest.raises(InvalidConfigurationError, match="max_age"):
            WindowCurve(timedelta(seconds=-1))
        with pytest.raises(InvalidConfigurationError, match="at least one"):
            StepCurve([])
        with pytest.raises(InvalidConfigurationError, match="youngest first"):
            StepCurve([(timedelta(hours=2), 0.5), (timedelta(hours=1), 0.9)])
        with pytest.raises(InvalidConfigurationError, match=r"score must be in \[0.0, 1.0\]"):
            StepCurve([(timedelta(hours=1), 1.5)])
        with pytest.raises(CupelTypeError, match="timedelta"):
            WindowCurve(3600)  # type: ignore[arg-type]

    def test_exponential_half_life(self) -> None:
        scorer = DecayScorer(FixedTimeProvider(NOW), ExponentialCurve(timedelta(hours=24)))
        item = ContextItem("x", 1, timestamp=NOW - timedelta(hours=24))
        assert scorer.score(item, []) == 0.5

    def test_clock_read_once_per_pass(self) -> None:
        class Ticking:
            calls = 0

            def now(self) -> datetime:
                Ticking.calls += 1
                return NOW + timedelta(hours=Ticking.calls)

        scorer = DecayScorer(Ticking(), WindowCurve(timedelta(hours=1)))
        items = [ContextItem(str(n), 1, timestamp=NOW) for n in range(5)]
        scorer.score_all(items)
        assert Ticking.calls == 1

    def test_naive_clock_rejected(self) -> None:
        class Naive:
            def now(self) -> datetime:
                return datetime(2025, 1, 1)

        scorer = DecayScorer(Naive(), WindowCurve(timedelta(hours=1)))
        with pytest.raises(CupelTypeError, match="timezone-aware"):
            scorer.score(ContextItem("x", 1, timestamp=NOW), [])

    def test_fixed_time_provider_requires_aware(self) -> None:
        with pytest.raises(InvalidConfigurationError):
            FixedTimeProvider(datetime(2025, 1, 1))


def test_score_items_rejects_wrong_length() -> None:
    class Broken:
        def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
            return 0.0

        def score_all(self, items: Sequence[ContextItem]) -> list[float]:
            return [0.0]

    with pytest.raises(Exception, match="returned 1 scores for 2 items"):
        score_items(Broken(), [ContextItem("a", 1), ContextItem("b", 1)])
