"""CountQuotaSlice, CountQuotaEntry and ScarcityBehavior."""

from __future__ import annotations

import pickle

import pytest

from cupel import (
    BudgetExceeded,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    InvalidConfigurationError,
    Pipeline,
    PriorityScorer,
    QuotaCapExceeded,
)
from cupel.errors import ScarcityError
from cupel.slicers import (
    CountQuotaEntry,
    CountQuotaSlice,
    CountRequirementShortfall,
    KnapsackSlice,
    QuotaSet,
    QuotaSlice,
    ScarcityBehavior,
    is_count_quota_slicer,
    is_quota_slicer,
)

from ._support import PlainSlicer, SpySlicer, budget, contents, scored

# --- CountQuotaEntry --------------------------------------------------------------------------


def test_entry_fields() -> None:
    entry = CountQuotaEntry("tool", 2, 4)
    assert (entry.kind, entry.require_count, entry.cap_count) == ("TOOL", 2, 4)
    assert CountQuotaEntry("Tool", require_count=0, cap_count=0).cap_count == 0


@pytest.mark.parametrize(("require", "cap"), [(-1, 2), (0, -3)])
def test_entry_counts_must_be_non_negative(require: int, cap: int) -> None:
    field, value = ("require_count", require) if require < 0 else ("cap_count", cap)
    with pytest.raises(
        InvalidConfigurationError,
        match=rf"CountQuotaEntry\.{field} for kind 'tool' must be >= 0, got {value}",
    ):
        CountQuotaEntry("tool", require, cap)


@pytest.mark.parametrize("bad", [True, 1.0, "2", None])
def test_entry_counts_must_be_ints(bad: object) -> None:
    with pytest.raises(
        CupelTypeError, match=r"CountQuotaEntry\.require_count for kind 'tool' must be an int"
    ):
        CountQuotaEntry("tool", bad, 3)  # type: ignore[arg-type]


def test_zero_cap_with_a_requirement_is_rejected() -> None:
    with pytest.raises(
        InvalidConfigurationError,
        match=r"CountQuotaEntry for kind 'tool': cap_count is 0 but require_count is 2; a zero cap",
    ):
        CountQuotaEntry("tool", 2, 0)


def test_require_must_not_exceed_cap() -> None:
    with pytest.raises(
        InvalidConfigurationError,
        match=r"CountQuotaEntry for kind 'tool': require_count \(3\) must be <= cap_count \(2\)",
    ):
        CountQuotaEntry("tool", 3, 2)


def test_entry_is_an_immutable_value() -> None:
    entry = CountQuotaEntry("tool", 1, 2)
    with pytest.raises(AttributeError):
        entry.cap_count = 5  # type: ignore[misc]
    assert entry == CountQuotaEntry("TOOL", 1, 2)
    assert hash(entry) == hash(CountQuotaEntry("TOOL", 1, 2))
    assert pickle.loads(pickle.dumps(entry)) == entry


# --- ScarcityBehavior -------------------------------------------------------------------------


def test_scarcity_behavior_from_strings() -> None:
    assert ScarcityBehavior("degrade") is ScarcityBehavior.DEGRADE
    assert ScarcityBehavior("throw") is ScarcityBehavior.THROW
    assert ScarcityBehavior("Throw") is ScarcityBehavior.THROW
    assert ScarcityBehavior.DEGRADE == "degrade"
    with pytest.raises(ValueError, match="'drop' is not a valid ScarcityBehavior"):
        ScarcityBehavior("drop")


# --- Construction -----------------------------------------------------------------------------


def test_knapsack_inner_is_rejected_at_construction() -> None:
    with pytest.raises(
        InvalidConfigurationError, match="CountQuotaSlice does not support KnapsackSlice as the inner slicer"
    ) as raised:
        CountQuotaSlice([], KnapsackSlice())
    assert "GreedySlice" in str(raised.value)
    assert "CountConstrainedKnapsackSlice" in str(raised.value)


def test_a_knapsack_nested_in_another_decorator_is_allowed() -> None:
    CountQuotaSlice([], QuotaSlice(QuotaSet(), KnapsackSlice()))


def test_construction_validates_arguments() -> None:
    with pytest.raises(CupelTypeError, match=r"CountQuotaSlice\.inner must be a slicer"):
        CountQuotaSlice([], "greedy")  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match=r"CountQuotaSlice\.entries must contain only CountQuotaEntry"):
        CountQuotaSlice([("tool", 1, 2)], GreedySlice())  # type: ignore[list-item]
    with pytest.raises(CupelTypeError, match=r"CountQuotaSlice\.entries must be an iterable"):
        CountQuotaSlice(CountQuotaEntry("tool", 1, 2), GreedySlice())  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError, match=r"CountQuotaSlice\.entries names kind 'Tool' twice"):
        CountQuotaSlice([CountQuotaEntry("tool", 1, 2), CountQuotaEntry("Tool", 0, 1)], GreedySlice())
    with pytest.raises(
        InvalidConfigurationError, match=r"CountQuotaSlice\.scarcity must be 'degrade' or 'throw', got 'x'"
    ):
        CountQuotaSlice([], GreedySlice(), "x")
    with pytest.raises(CupelTypeError, match=r"CountQuotaSlice\.scarcity must be a ScarcityBehavior"):
        CountQuotaSlice([], GreedySlice(), 1)  # type: ignore[arg-type]
    assert CountQuotaSlice([], GreedySlice(), "THROW").scarcity is ScarcityBehavior.THROW
    assert CountQuotaSlice([], GreedySlice()).scarcity is ScarcityBehavior.DEGRADE


def test_traits_and_value_semantics() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 2)], GreedySlice())
    assert is_count_quota_slicer(slicer)
    assert not is_quota_slicer(slicer)
    assert is_quota_slicer(CountQuotaSlice([], QuotaSlice(QuotaSet(), GreedySlice())))
    assert slicer == CountQuotaSlice((CountQuotaEntry("TOOL", 1, 2),), GreedySlice(), "degrade")
    assert pickle.loads(pickle.dumps(slicer)) == slicer
    with pytest.raises(AttributeError):
        slicer.scarcity = ScarcityBehavior.THROW  # type: ignore[misc]


# --- The algorithm ----------------------------------------------------------------------------


def test_empty_input_and_zero_target_select_nothing_and_never_throw() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 3, 3)], GreedySlice(), ScarcityBehavior.THROW)
    assert slicer.slice([], budget(100)) == []
    assert slicer.slice([scored("t", 10, 0.5, "tool")], budget(0, 100)) == []


def test_phase_one_commits_top_scores_per_kind_even_from_unsorted_input() -> None:
    items = [
        scored("t-low", 10, 0.1, "tool"),
        scored("m", 10, 0.95, "msg"),
        scored("t-high", 10, 0.9, "Tool"),
        scored("t-mid", 10, 0.5, "TOOL"),
    ]
    spy = SpySlicer()
    selected = CountQuotaSlice([CountQuotaEntry("tool", 2, 5)], spy).slice(items, budget(25))
    assert contents(selected)[:2] == ["t-high", "t-mid"]
    # The residual keeps input order; target 25 - 20 committed = 5; max passes through unchanged.
    assert spy.calls == [(["t-low", "m"], 25, 5)]


def test_phase_one_breaks_score_ties_by_input_order() -> None:
    items = [scored(name, 10, 0.5, "tool") for name in ("first", "second", "third")]
    selected = CountQuotaSlice([CountQuotaEntry("tool", 2, 2)], GreedySlice()).slice(items, budget(100))
    assert contents(selected) == ["first", "second"]


def test_committed_items_ignore_the_budget_and_phase_two_gets_nothing() -> None:
    items = [scored("t1", 400, 0.9, "tool"), scored("t2", 400, 0.8, "tool"), scored("m", 10, 0.99, "msg")]
    spy = SpySlicer()
    selected = CountQuotaSlice([CountQuotaEntry("tool", 2, 2)], spy).slice(items, budget(500, 1000))
    assert contents(selected) == ["t1", "t2"]
    assert spy.calls == [(["m"], 1000, 0)]


def test_entries_commit_in_configuration_order() -> None:
    items = [scored("a", 10, 0.9, "A"), scored("b", 10, 0.8, "B")]
    entries = [CountQuotaEntry("B", 1, 1), CountQuotaEntry("A", 1, 1)]
    assert contents(CountQuotaSlice(entries, PlainSlicer()).slice(items, budget(100))) == ["b", "a"]


def test_caps_apply_to_phase_two_only_and_count_committed_items() -> None:
    items = [scored(f"t{index}", 10, 1.0 - index / 10, "tool") for index in range(5)]
    items.append(scored("other", 10, 0.01, "msg"))
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 2, 3)], GreedySlice())
    outcome = slicer.slice_detailed(items, budget(1000))
    assert contents(outcome.selected) == ["t0", "t1", "t2", "other"]
    assert [(item.content, reason) for item, reason in outcome.exclusions] == [
        ("t3", QuotaCapExceeded("tool", 3, 4)),
        ("t4", QuotaCapExceeded("tool", 3, 4)),
    ]
    assert contents(slicer.slice(items, budget(1000))) == contents(outcome.selected)


def test_cap_zero_excludes_every_item_of_the_kind() -> None:
    items = [scored("t", 10, 0.9, "tool"), scored("m", 10, 0.5, "msg")]
    outcome = CountQuotaSlice([CountQuotaEntry("tool", 0, 0)], GreedySlice()).slice_detailed(
        items, budget(100)
    )
    assert contents(outcome.selected) == ["m"]
    assert outcome.exclusions == ((items[0].item, QuotaCapExceeded("tool", 0, 1)),)


def test_degrade_records_shortfalls_including_absent_kinds() -> None:
    items = [scored("t", 10, 0.9, "tool")]
    entries = [CountQuotaEntry("tool", 3, 5), CountQuotaEntry("memory", 1, 1), CountQuotaEntry("doc", 0, 2)]
    outcome = CountQuotaSlice(entries, GreedySlice()).slice_detailed(items, budget(100))
    assert contents(outcome.selected) == ["t"]
    assert outcome.shortfalls == (
        CountRequirementShortfall("tool", 3, 1),
        CountRequirementShortfall("memory", 1, 0),
    )


def test_throw_raises_scarcity_error() -> None:
    items = [scored("t", 10, 0.9, "Tool")]
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 3, 5)], GreedySlice(), ScarcityBehavior.THROW)
    with pytest.raises(ScarcityError) as raised:
        slicer.slice(items, budget(100))
    assert (
        str(raised.value)
        == "CountQuotaSlice: candidate pool for kind 'tool' has 1 items but RequireCount is 3."
    )
    with pytest.raises(ScarcityError):
        slicer.slice_detailed(items, budget(100))


def test_inner_exclusions_pass_through() -> None:
    items = [scored("t", 10, 0.9, "tool"), scored("big", 200, 0.8, "msg"), scored("m", 50, 0.5, "msg")]
    outcome = CountQuotaSlice([CountQuotaEntry("tool", 1, 1)], GreedySlice()).slice_detailed(
        items, budget(100)
    )
    assert contents(outcome.selected) == ["t", "m"]
    assert outcome.exclusions == ((items[1].item, BudgetExceeded(200, 40)),)


def test_no_entries_is_just_the_inner_slicer() -> None:
    items = [scored("a", 60, 0.9), scored("b", 60, 0.8)]
    assert CountQuotaSlice([], GreedySlice()).slice(items, budget(100)) == GreedySlice().slice(
        items, budget(100)
    )


def test_inputs_are_not_mutated() -> None:
    items = [scored("t2", 10, 0.2, "tool"), scored("t1", 10, 0.9, "tool")]
    snapshot = list(items)
    CountQuotaSlice([CountQuotaEntry("tool", 1, 1)], GreedySlice()).slice(items, budget(100))
    assert items == snapshot


def test_pipeline_reports_cap_exclusions_and_shortfalls() -> None:
    items = [ContextItem(f"t{index}", 100, kind="tool", priority=index) for index in range(4)]
    entries = [CountQuotaEntry("tool", 1, 2), CountQuotaEntry("memory", 1, 1)]
    pipeline = Pipeline(PriorityScorer(), CountQuotaSlice(entries, GreedySlice()), ChronologicalPlacer())
    report = pipeline.dry_run(items, ContextBudget(1000, 1000))
    assert sorted(entry.item.content for entry in report.included) == ["t2", "t3"]
    assert {entry.item.content: entry.reason for entry in report.excluded} == {
        "t1": QuotaCapExceeded("tool", 2, 3),
        "t0": QuotaCapExceeded("tool", 2, 3),
    }
    assert report.count_requirement_shortfalls == (CountRequirementShortfall("memory", 1, 0),)
