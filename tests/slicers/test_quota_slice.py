"""QuotaSlice, QuotaSet and QuotaEntry: validation, DISTRIBUTE-BUDGET, delegation, diagnostics."""

from __future__ import annotations

import copy
import math
import pickle
from collections.abc import Sequence

import pytest

from cupel import (
    BudgetExceeded,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    InvalidConfigurationError,
    ScoredItem,
)
from cupel.slicers import (
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSet,
    QuotaSlice,
    is_count_quota_slicer,
    is_quota_slicer,
)
from cupel.slicers.quota import _distribute_budget, _percent_of

from ._support import PlainSlicer, SpySlicer, budget, contents, scored

# --- QuotaEntry -------------------------------------------------------------------------------


def test_entry_defaults_and_fields() -> None:
    entry = QuotaEntry("Message")
    assert (entry.kind, entry.require, entry.cap) == ("Message", 0.0, 100.0)
    assert QuotaEntry("message", require=20, cap=50) == QuotaEntry("MESSAGE", 20.0, 50.0)


@pytest.mark.parametrize("field", ["require", "cap"])
@pytest.mark.parametrize("bad", [-0.1, 100.5, math.nan, math.inf, -math.inf])
def test_entry_percentages_must_be_finite_and_within_0_100(field: str, bad: float) -> None:
    values = {"require": 0.0, "cap": 100.0, field: bad}
    with pytest.raises(
        InvalidConfigurationError,
        match=rf"QuotaEntry\.{field} for kind 'Doc' must be between 0\.0 and 100\.0, got {bad!r}",
    ):
        QuotaEntry("Doc", **values)


@pytest.mark.parametrize("bad", [True, "10", None])
def test_entry_percentages_must_be_numbers(bad: object) -> None:
    with pytest.raises(CupelTypeError, match=r"QuotaEntry\.require for kind 'Doc' must be a number"):
        QuotaEntry("Doc", require=bad)  # type: ignore[arg-type]


def test_entry_require_must_not_exceed_cap() -> None:
    with pytest.raises(
        InvalidConfigurationError,
        match=r"QuotaEntry for kind 'Doc': require \(60\.0\) must be <= cap \(50\.0\)",
    ):
        QuotaEntry("Doc", require=60, cap=50)
    assert QuotaEntry("Doc", require=50, cap=50).cap == 50.0


def test_entry_kind_must_be_a_valid_kind() -> None:
    with pytest.raises(InvalidConfigurationError, match="non-whitespace"):
        QuotaEntry("  ")


def test_entry_is_immutable() -> None:
    entry = QuotaEntry("Doc", 10, 20)
    with pytest.raises(AttributeError):
        entry.cap = 30  # type: ignore[misc]


# --- QuotaSet ---------------------------------------------------------------------------------


def test_set_accepts_entries_and_plain_tuples() -> None:
    from_tuples = QuotaSet([("SystemPrompt", 30.0, 50.0), ("Message", 0.0, 40.0)])
    from_entries = QuotaSet([QuotaEntry("SystemPrompt", 30, 50), QuotaEntry("Message", cap=40)])
    assert from_tuples == from_entries
    assert from_tuples.get_require("systemprompt") == 30.0
    assert from_tuples.get_cap("MESSAGE") == 40.0
    assert from_tuples.get_require("Document") == 0.0
    assert from_tuples.get_cap("Document") == 100.0
    assert "message" in from_tuples and "Document" not in from_tuples and 3 not in from_tuples
    assert [entry.kind for entry in from_tuples] == ["SystemPrompt", "Message"]
    assert len(from_tuples) == 2


def test_fluent_builder_returns_new_validated_sets() -> None:
    empty = QuotaSet()
    built = empty.require("SystemPrompt", 30).cap("SystemPrompt", 50).cap("Message", 40)
    assert len(empty) == 0
    assert built == QuotaSet([("SystemPrompt", 30, 50), ("Message", 0, 40)])
    assert built.require("systemprompt", 40).get("SystemPrompt") == QuotaEntry("SystemPrompt", 40, 50)
    with pytest.raises(InvalidConfigurationError, match=r"require \(60\.0\) must be <= cap \(50\.0\)"):
        built.require("SystemPrompt", 60)
    with pytest.raises(InvalidConfigurationError, match=r"sum to at most 100\.0, got 110"):
        built.require("Message", 40).require("Document", 40)


def test_duplicate_kinds_are_rejected_case_insensitively() -> None:
    with pytest.raises(InvalidConfigurationError, match=r"QuotaSet names kind 'message' twice"):
        QuotaSet([("Message", 10, 20), ("message", 5, 10)])


def test_requires_may_sum_to_100_but_not_more() -> None:
    assert QuotaSet([("A", 33.3, 100), ("B", 33.3, 100), ("C", 33.4, 100)]).get_require("C") == 33.4
    with pytest.raises(
        InvalidConfigurationError, match=r"sum to at most 100\.0, got 100\.5 \('A' 50, 'B' 50\.5\)"
    ):
        QuotaSet([("A", 50, 100), ("B", 50.5, 100)])


@pytest.mark.parametrize("bad", ["Message", 42, [("A", 10)], [object()], QuotaEntry("A")])
def test_set_rejects_malformed_input(bad: object) -> None:
    with pytest.raises(CupelTypeError, match="QuotaSet"):
        QuotaSet(bad)  # type: ignore[arg-type]


def test_set_is_an_immutable_value() -> None:
    quotas = QuotaSet([("A", 10, 20), ("B", 0, 50)])
    with pytest.raises(AttributeError, match="immutable"):
        quotas._entries = ()  # type: ignore[misc]
    assert quotas == QuotaSet([("B", 0, 50), ("A", 10, 20)])
    assert hash(quotas) == hash(QuotaSet([("b", 0, 50), ("a", 10, 20)]))
    assert pickle.loads(pickle.dumps(quotas)) == quotas
    assert copy.deepcopy(quotas) == quotas
    assert (
        repr(quotas) == "QuotaSet([QuotaEntry('A', require=10, cap=20), QuotaEntry('B', require=0, cap=50)])"
    )


# --- DISTRIBUTE-BUDGET ------------------------------------------------------------------------


def test_percentages_convert_with_float_floor_exactly_as_written() -> None:
    assert _percent_of(33.0, 1000) == 330
    assert _percent_of(29.0, 100) == 28  # 29 / 100.0 * 100 = 28.999999999999996
    assert _percent_of(100.0, 977) == 977


def test_rounding_example_two_kinds_requiring_33_percent() -> None:
    quotas = QuotaSet([("A", 33, 100), ("B", 33, 100)])
    budgets = _distribute_budget({"a": 500, "b": 100}, 1000, quotas)
    # require 330 each; 340 unassigned: A gets floor(340*500/600) = 283, B floor(340*100/600) = 56.
    assert budgets == {"a": 613, "b": 386}
    assert sum(budgets.values()) == 999 < 1000


def test_distribution_of_the_reference_example() -> None:
    quotas = QuotaSet([("SystemPrompt", 30, 50), ("Message", 0, 40)])
    budgets = _distribute_budget({"systemprompt": 400, "message": 600, "document": 200}, 1000, quotas)
    assert budgets == {"systemprompt": 500, "message": 350, "document": 116}


def test_no_quotas_means_purely_proportional() -> None:
    assert _distribute_budget({"a": 100, "b": 300}, 1000, QuotaSet()) == {"a": 250, "b": 750}


def test_require_100_takes_everything() -> None:
    budgets = _distribute_budget({"a": 10, "b": 500}, 1000, QuotaSet([("A", 100, 100)]))
    assert budgets == {"a": 1000, "b": 0}


def test_cap_zero_excludes_the_kind() -> None:
    assert _distribute_budget({"a": 10, "b": 500}, 1000, QuotaSet([("A", 0, 0)])) == {"a": 0, "b": 1000}


def test_zero_mass_kind_gets_only_its_require() -> None:
    budgets = _distribute_budget({"a": 0, "b": 400}, 1000, QuotaSet([("A", 10, 100)]))
    assert budgets == {"a": 100, "b": 900}


def test_kind_at_its_cap_does_not_share_the_rest() -> None:
    # A: require = cap = 20% so it takes no proportional share; B gets all 800 unassigned tokens.
    budgets = _distribute_budget({"a": 900, "b": 100}, 1000, QuotaSet([("A", 20, 20)]))
    assert budgets == {"a": 200, "b": 800}


def test_configured_kind_without_candidates_keeps_its_require_unused() -> None:
    budgets = _distribute_budget({"b": 400}, 1000, QuotaSet([("A", 40, 100)]))
    assert budgets == {"b": 600}


# --- QuotaSlice -------------------------------------------------------------------------------


def _reference_items() -> list:  # type: ignore[type-arg]
    return [
        scored("sys-a", 200, 0.9, "SystemPrompt"),
        scored("sys-b", 200, 0.5, "SystemPrompt"),
        scored("msg-a", 300, 0.8, "Message"),
        scored("msg-b", 300, 0.3, "Message"),
        scored("doc-a", 200, 0.7, "Document"),
    ]


def test_inner_slicer_gets_cap_as_max_and_kind_budget_as_target() -> None:
    spy = SpySlicer()
    slicer = QuotaSlice(QuotaSet([("SystemPrompt", 30, 50), ("Message", 0, 40)]), spy)
    selected = slicer.slice(_reference_items(), budget(1000))
    assert spy.calls == [
        (["sys-a", "sys-b"], 500, 500),
        (["msg-a", "msg-b"], 400, 350),
        (["doc-a"], 1000, 116),
    ]
    assert contents(selected) == ["sys-a", "sys-b", "msg-a"]


def test_kinds_compare_case_insensitively_and_keep_first_appearance_order() -> None:
    spy = SpySlicer()
    items = [
        scored("doc", 100, 0.9, "Document"),
        scored("m1", 100, 0.8, "message"),
        scored("m2", 100, 0.7, "MESSAGE"),
        scored("m3", 100, 0.6, "Message"),
    ]
    selected = QuotaSlice([("MESSAGE", 0, 20)], spy).slice(items, budget(1000))
    # message mass 300, doc 100: message gets min(750, cap 200) = 200, document 250.
    assert spy.calls == [(["doc"], 1000, 250), (["m1", "m2", "m3"], 200, 200)]
    assert contents(selected) == ["doc", "m1", "m2"]


def test_zero_budget_kinds_are_skipped() -> None:
    spy = SpySlicer()
    items = [scored("a", 10, 0.9, "A"), scored("b", 10, 0.5, "B"), scored("z", 0, 0.5, "A")]
    selected = QuotaSlice([("A", 0, 0)], spy).slice(items, budget(100))
    assert spy.calls == [(["b"], 100, 100)]
    assert contents(selected) == ["b"]


def test_empty_input_and_zero_target() -> None:
    spy = SpySlicer()
    slicer = QuotaSlice(QuotaSet(), spy)
    assert slicer.slice([], budget(100)) == []
    assert slicer.slice([scored("z", 0, 0.5)], budget(0, 10)) == []
    assert spy.calls == []


def test_knapsack_inner() -> None:
    items = [scored("big", 250, 0.7), scored("small-a", 150, 0.5), scored("small-b", 150, 0.45)]
    assert contents(QuotaSlice(QuotaSet(), KnapsackSlice()).slice(items, budget(300))) == ["big"]


def test_inputs_are_not_mutated() -> None:
    items = _reference_items()
    snapshot = list(items)
    QuotaSlice([("Message", 10, 40)], GreedySlice()).slice(items, budget(700))
    assert items == snapshot


def test_slice_detailed_matches_and_explains_each_kind() -> None:
    items = [*_reference_items(), scored("capped", 5, 0.9, "Banned")]
    slicer = QuotaSlice([("SystemPrompt", 30, 50), ("Message", 0, 40), ("Banned", 0, 0)], GreedySlice())
    outcome = slicer.slice_detailed(items, budget(1000))
    assert list(outcome.selected) == slicer.slice(items, budget(1000))
    reasons = {item.content: reason for item, reason in outcome.exclusions}
    # GreedySlice explains msg-b against the Message budget (350 - 300 = 50 left); doc-a and the
    # zero-budget kind are explained by QuotaSlice against their kinds' budgets.
    assert reasons == {
        "msg-b": BudgetExceeded(300, 50),
        "doc-a": BudgetExceeded(200, 116),
        "capped": BudgetExceeded(5, 0),
    }


def test_slice_detailed_fills_in_for_inner_slicers_without_it() -> None:
    class FirstOnly:
        def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
            return [scored[0].item]

    items = [scored("a", 100, 0.9), scored("b", 100, 0.5)]
    outcome = QuotaSlice(QuotaSet(), FirstOnly()).slice_detailed(items, budget(150))
    assert contents(outcome.selected) == ["a"]
    assert outcome.exclusions == ((items[1].item, BudgetExceeded(100, 50)),)
    # KnapsackSlice explains itself, in whole buckets: one bucket of 100 fits 150, and a takes it.
    knapsack = QuotaSlice(QuotaSet(), KnapsackSlice()).slice_detailed(items, budget(150))
    assert knapsack.exclusions == ((items[1].item, BudgetExceeded(100, 0)),)
    plain = QuotaSlice(QuotaSet(), PlainSlicer()).slice_detailed(items, budget(150))
    assert contents(plain.selected) == ["a", "b"]


def test_inner_shortfalls_and_cap_exclusions_pass_through() -> None:
    inner = CountQuotaSlice([CountQuotaEntry("Message", 3, 3)], GreedySlice())
    items = [scored("m1", 10, 0.9), scored("m2", 10, 0.8)]
    outcome = QuotaSlice(QuotaSet(), inner).slice_detailed(items, budget(100))
    assert contents(outcome.selected) == ["m1", "m2"]
    assert [(s.kind, s.required_count, s.satisfied_count) for s in outcome.shortfalls] == [("Message", 3, 2)]


def test_construction_validates_arguments() -> None:
    with pytest.raises(CupelTypeError, match=r"QuotaSlice\.inner must be a slicer"):
        QuotaSlice(QuotaSet(), object())  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError, match="sum to at most 100"):
        QuotaSlice([("A", 70, 100), ("B", 70, 100)], GreedySlice())


def test_traits_and_value_semantics() -> None:
    slicer = QuotaSlice([("A", 10, 20)], GreedySlice())
    assert is_quota_slicer(slicer)
    assert not is_count_quota_slicer(slicer)
    assert is_count_quota_slicer(QuotaSlice(QuotaSet(), CountQuotaSlice([], GreedySlice())))
    assert slicer == QuotaSlice(QuotaSet([("a", 10, 20)]), GreedySlice())
    assert hash(slicer) == hash(QuotaSlice(QuotaSet([("a", 10, 20)]), GreedySlice()))
    assert pickle.loads(pickle.dumps(slicer)) == slicer
    with pytest.raises(AttributeError):
        slicer.inner = GreedySlice()  # type: ignore[misc]
