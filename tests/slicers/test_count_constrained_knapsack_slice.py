"""CountConstrainedKnapsackSlice: COUNT-KNAPSACK-CAP, its D180 re-sort and D181 seeding."""

from __future__ import annotations

import pickle

import pytest

from cupel import CupelTypeError, GreedySlice, InvalidConfigurationError, QuotaCapExceeded
from cupel.errors import ScarcityError, TableTooLargeError
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountRequirementShortfall,
    KnapsackSlice,
    ScarcityBehavior,
    is_count_quota_slicer,
    is_quota_slicer,
)

from ._support import budget, contents, scored


def test_construction_and_defaults() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 2)])
    assert slicer.knapsack == KnapsackSlice(100)
    assert slicer.scarcity is ScarcityBehavior.DEGRADE
    assert CountConstrainedKnapsackSlice([], KnapsackSlice(5), "throw").scarcity is ScarcityBehavior.THROW
    with pytest.raises(
        CupelTypeError, match=r"CountConstrainedKnapsackSlice\.knapsack must be a KnapsackSlice"
    ):
        CountConstrainedKnapsackSlice([], GreedySlice())  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError, match=r"CountConstrainedKnapsackSlice\.entries names kind"):
        CountConstrainedKnapsackSlice([CountQuotaEntry("a", 0, 1), CountQuotaEntry("A", 0, 1)])


def test_traits_and_value_semantics() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 2)], KnapsackSlice(10))
    assert is_count_quota_slicer(slicer)
    assert not is_quota_slicer(slicer)
    assert slicer == CountConstrainedKnapsackSlice([CountQuotaEntry("Tool", 1, 2)], KnapsackSlice(10))
    assert pickle.loads(pickle.dumps(slicer)) == slicer
    with pytest.raises(AttributeError):
        slicer.knapsack = KnapsackSlice()  # type: ignore[misc]


def test_empty_input_and_zero_target() -> None:
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 2, 2)], scarcity=ScarcityBehavior.THROW)
    assert slicer.slice([], budget(100)) == []
    assert slicer.slice([scored("t", 0, 0.9, "tool")], budget(0, 10)) == []


def test_phase_two_is_a_knapsack_not_a_greedy_fill() -> None:
    items = [scored("big", 250, 0.7), scored("small-a", 150, 0.5), scored("small-b", 150, 0.45)]
    assert contents(CountConstrainedKnapsackSlice([]).slice(items, budget(300))) == ["big"]


def test_phase_two_output_is_resorted_by_score_before_caps() -> None:
    # The knapsack reconstructs last-first (lo, hi); without the re-sort the cap would keep "lo".
    items = [scored("hi", 100, 0.9, "tool"), scored("lo", 100, 0.5, "tool")]
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 0, 1)])
    outcome = slicer.slice_detailed(items, budget(1000))
    assert contents(outcome.selected) == ["hi"]
    assert outcome.exclusions == ((items[1].item, QuotaCapExceeded("tool", 1, 2)),)


def test_resort_is_stable_for_equal_scores() -> None:
    # Equal scores keep the knapsack's reconstruction order (last candidate first).
    items = [scored("first", 100, 0.5, "tool"), scored("second", 100, 0.5, "tool")]
    slicer = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 0, 1)])
    assert contents(slicer.slice(items, budget(1000))) == ["second"]


def test_phase_three_counts_start_from_phase_one() -> None:
    items = [
        scored(f"tool-{name}", 100, score, "tool")
        for name, score in zip("abcd", (0.9, 0.8, 0.7, 0.6), strict=True)
    ]
    outcome = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 2)]).slice_detailed(
        items, budget(600)
    )
    assert contents(outcome.selected) == ["tool-a", "tool-b"]
    assert [reason for _, reason in outcome.exclusions] == [QuotaCapExceeded("tool", 2, 3)] * 2
    assert outcome.shortfalls == ()


def test_knapsack_sees_the_residual_target() -> None:
    # 300 committed of 500 leaves 200: only one of the two 150-token messages fits.
    items = [scored("t", 300, 0.1, "tool"), scored("m1", 150, 0.9), scored("m2", 150, 0.8)]
    selected = CountConstrainedKnapsackSlice([CountQuotaEntry("tool", 1, 1)], KnapsackSlice(1)).slice(
        items, budget(500)
    )
    assert contents(selected) == ["t", "m1"]


def test_degrade_and_throw() -> None:
    items = [scored("tool-a", 100, 0.9, "tool")]
    entries = [CountQuotaEntry("tool", 3, 5)]
    outcome = CountConstrainedKnapsackSlice(entries).slice_detailed(items, budget(500))
    assert contents(outcome.selected) == ["tool-a"]
    assert outcome.shortfalls == (CountRequirementShortfall("tool", 3, 1),)
    with pytest.raises(ScarcityError) as raised:
        CountConstrainedKnapsackSlice(entries, scarcity=ScarcityBehavior.THROW).slice(items, budget(500))
    assert str(raised.value) == (
        "CountConstrainedKnapsackSlice: candidate pool for kind 'tool' has 1 items but RequireCount is 3."
    )


def test_table_too_large_propagates() -> None:
    items = [scored(f"m{index}", 10, 0.5) for index in range(100)]
    slicer = CountConstrainedKnapsackSlice([], KnapsackSlice(bucket_size=1))
    with pytest.raises(TableTooLargeError):
        slicer.slice(items, budget(1_000_000))


def test_slice_and_slice_detailed_agree() -> None:
    items = [
        scored(f"i{index}", 30 + index * 7, (index * 37 % 100) / 100, ("a", "b", "c")[index % 3])
        for index in range(20)
    ]
    slicer = CountConstrainedKnapsackSlice(
        [CountQuotaEntry("a", 2, 3), CountQuotaEntry("b", 0, 1)], KnapsackSlice(10)
    )
    assert slicer.slice(items, budget(400)) == list(slicer.slice_detailed(items, budget(400)).selected)
