"""The report-building run's fast paths: identical reports, no reference cycles, the collector state kept."""

from __future__ import annotations

import gc
import math
import threading
from collections.abc import Sequence
from dataclasses import replace
from itertools import repeat
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.profiles import examples
from tests.strategies import SAMPLE_PIPELINES, budgets, item_lists

from cupel import (
    ContextBudget,
    ContextItem,
    DiagnosticTraceCollector,
    GreedySlice,
    Pipeline,
    ScoredItem,
    TraceDetailLevel,
    TraceEvent,
)
from cupel._gc_pause import collector_paused
from cupel._score_order import nan_last, sort_by_score
from cupel._trusted import trusted_batch
from cupel.diagnostics._deferred import scored_messages
from cupel.diagnostics.attribution import SliceAttribution
from cupel.diagnostics.events import PipelineStage, item_event, item_events
from cupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    InclusionReason,
    ScoredTooLow,
    budget_exceeded,
    deduplicated_batch,
)
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.model import ContextBudget as Budget
from cupel.slicers._base import SliceOutcome


class _ScoredListGreedy:
    """GreedySlice through the Slicer protocol only (scored lists, no index-list methods): the
    pipeline then explains it the general way, by matching items by identity."""

    def __init__(self) -> None:
        self._inner = GreedySlice()

    def slice(self, scored: Sequence[ScoredItem], budget: Budget) -> list[ContextItem]:
        return self._inner.slice(scored, budget)

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: Budget) -> SliceOutcome:
        return self._inner.slice_detailed(scored, budget)


# The reports name the slicer (Filtered); the stand-in answers to GreedySlice's name.
_ScoredListGreedy.__name__ = "GreedySlice"


class _ItemsOnlyPlacer:
    """A built-in placer without its index form: the report then finds each placed item's score by
    identity."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return list(self._inner.place(items))

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        return list(self._inner.place_items(items, scores))


def _without_timings(report: SelectionReport) -> SelectionReport:
    events = tuple(replace(event, duration_ms=0.0) for event in report.events)
    return replace(report, events=events)


def assert_explained_as_by_identity(
    sample: Pipeline, items: list[ContextItem], budget: ContextBudget
) -> None:
    """``sample`` (a GreedySlice pipeline) reports what the identity-based general path reports."""
    general = Pipeline(
        sample.scorer,
        _ScoredListGreedy(),
        _ItemsOnlyPlacer(sample.placer),
        deduplication=sample.deduplication,
        overflow_strategy=sample.overflow_strategy,
    )
    try:
        expected = general.dry_run(items, budget)
    except Exception as error:  # the same error either way
        with pytest.raises(type(error)):
            sample.dry_run(items, budget)
        return
    actual = sample.dry_run(items, budget)
    assert _without_timings(actual).to_json() == _without_timings(expected).to_json()
    assert [entry.item for entry in actual.excluded] == [entry.item for entry in expected.excluded]


@settings(max_examples=examples(120), deadline=None)
@given(item_lists(allow_negative=True), budgets(), st.sampled_from(SAMPLE_PIPELINES[:3]))
def test_index_list_explanations_equal_the_identity_based_ones(
    items: list[ContextItem], budget: ContextBudget, sample: Pipeline
) -> None:
    assert_explained_as_by_identity(sample, items, budget)


@given(st.integers(min_value=0, max_value=10**6), st.integers(min_value=-(10**6), max_value=10**6))
def test_trusted_records_equal_validated_ones(tokens: int, available: int) -> None:
    assert budget_exceeded(tokens, available) == BudgetExceeded(tokens, available)
    message = BudgetExceeded(tokens, available).describe()
    assert item_event(PipelineStage.SLICE, message) == TraceEvent(PipelineStage.SLICE, 0.0, 1, message)


def test_report_entries_are_the_dataclasses_themselves() -> None:
    item = ContextItem("x", 10)
    report = Pipeline(SAMPLE_PIPELINES[0].scorer, GreedySlice(), SAMPLE_PIPELINES[0].placer).dry_run(
        [item, ContextItem("y", 500)], ContextBudget(100, 100)
    )
    assert report.included == (IncludedItem(item, report.included[0].score, InclusionReason.SCORED),)
    assert type(report.excluded[0]) is ExcludedItem
    assert report.excluded[0].reason == BudgetExceeded(500, 90)


def _sample_items(count: int) -> list[ContextItem]:
    return [ContextItem(f"item {index}", 10 + index % 50, priority=index % 7) for index in range(count)]


@pytest.mark.parametrize("sample", SAMPLE_PIPELINES, ids=lambda pipeline: type(pipeline.slicer).__name__)
def test_report_building_leaves_no_reference_cycles(sample: Pipeline) -> None:
    items = _sample_items(300)
    budget = ContextBudget(3000, 2000)
    gc.collect()
    gc.disable()
    try:
        report = sample.dry_run(items, budget)
        collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
        sample.run_traced(items, budget, collector)
        del report, collector
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_collector_state_is_restored_after_runs_and_errors() -> None:
    pipeline = SAMPLE_PIPELINES[0]
    items = _sample_items(50)
    assert gc.isenabled()
    pipeline.dry_run(items, ContextBudget(500, 400))
    assert gc.isenabled()
    with pytest.raises(TypeError):
        pipeline.dry_run([*items, "not an item"], ContextBudget(500, 400))  # type: ignore[list-item]
    assert gc.isenabled()
    gc.disable()
    try:
        pipeline.dry_run(items, ContextBudget(500, 400))
        assert not gc.isenabled()  # a disabled collector stays disabled
    finally:
        gc.enable()


def test_overlapping_pauses_restore_the_state_once_the_last_ends() -> None:
    entered = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with collector_paused():
            entered.set()
            release.wait(5)

    worker = threading.Thread(target=hold)
    worker.start()
    entered.wait(5)
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other run is still going
    release.set()
    worker.join()
    assert gc.isenabled()


class _ItemByItemCollector(DiagnosticTraceCollector):
    """Not the plain collector type, so the pipeline reports to it one decision at a time."""


@settings(max_examples=examples(120), deadline=None)
@given(item_lists(allow_negative=True), budgets(), st.sampled_from(SAMPLE_PIPELINES))
def test_batched_reports_equal_item_by_item_ones(
    items: list[ContextItem], budget: ContextBudget, sample: Pipeline
) -> None:
    reference = _ItemByItemCollector(TraceDetailLevel.ITEM)
    try:
        sample.run_traced(items, budget, reference)
    except Exception as error:  # the same error either way
        with pytest.raises(type(error)):
            sample.dry_run(items, budget)
        return
    expected = reference.build_report()
    actual = sample.dry_run(items, budget)
    assert _without_timings(actual).to_json() == _without_timings(expected).to_json()
    assert [entry.item for entry in actual.included] == [entry.item for entry in expected.included]
    assert [entry.item for entry in actual.excluded] == [entry.item for entry in expected.excluded]
    assert [type(entry.reason) for entry in actual.excluded] == [
        type(entry.reason) for entry in expected.excluded
    ]


@given(
    st.lists(st.tuples(st.sampled_from([0.0, -0.0, 1.0, 0.5, math.nan, math.inf, -math.inf]), st.integers()))
)
def test_sort_by_score_equals_the_keyed_sort(entries: list[tuple[float, int]]) -> None:
    for reverse in (True, False):
        expected = sorted(entries, key=lambda entry: nan_last(entry[0]), reverse=reverse)
        actual = sort_by_score(entries, lambda entry: entry[0], reverse=reverse)
        assert [id(entry) for entry in actual] == [id(entry) for entry in expected]


@given(st.lists(st.text(max_size=8), max_size=20))
def test_batched_records_equal_validated_ones(messages: list[str]) -> None:
    batch = item_events(PipelineStage.SLICE, messages)
    assert batch == [TraceEvent(PipelineStage.SLICE, 0.0, 1, message) for message in messages]
    assert all(type(event) is TraceEvent for event in batch)
    reasons = [BudgetExceeded(len(message), 0) for message in messages]
    items = [ContextItem(content=message or "x", tokens=1) for message in messages]
    entries = trusted_batch(ExcludedItem)(len(items), items, repeat(0.5), reasons)
    assert entries == [ExcludedItem(item, 0.5, reason) for item, reason in zip(items, reasons, strict=True)]
    duplicates = deduplicated_batch(len(messages), messages)
    assert duplicates == [Deduplicated(message) for message in messages]
    assert [reason.describe() for reason in duplicates] == [Deduplicated(m).describe() for m in messages]
    # The one-step texts are the inherited ones.
    assert [reason.describe() for reason in duplicates] == [ExclusionReason.describe(r) for r in duplicates]
    assert [reason.describe() for reason in reasons] == [ExclusionReason.describe(r) for r in reasons]


_SCORES = st.sampled_from([0.0, 0.25, 0.5, 1.0, math.nan, math.inf, -math.inf])


def _check_budget_reasons(
    attribution: SliceAttribution, tokens: list[int], scores: list[float], available: list[int | None]
) -> None:
    distinct, slots = attribution.shared_budget_reasons(tokens, scores, available)
    batch = attribution.budget_reasons(tokens, iter(scores), available)  # scores read once, if at all
    assert batch == [distinct[slot] for slot in slots]
    # The items of one slot share one reason object, and only they.
    pairs = set(zip(map(id, batch), slots, strict=True))
    assert len(pairs) == len({id(reason) for reason in batch}) == len(set(slots))
    expected = [
        attribution.tokens_reason(count, score, None if left is None else BudgetExceeded(count, left))
        for count, score, left in zip(tokens, scores, available, strict=True)
    ]
    actual = [distinct[slot] for slot in slots]
    assert [reason.to_dict() for reason in actual] == [reason.to_dict() for reason in expected]
    assert [type(reason) for reason in actual] == [type(reason) for reason in expected]
    # Equal reasons share one object (ScoredTooLow names each item's own score: one per item).
    assert sorted(set(slots)) == list(range(len(distinct)))
    shared = [reason for reason in distinct if not isinstance(reason, ScoredTooLow)]
    assert len({reason.to_json() for reason in shared}) == len(shared)


_ATTRIBUTIONS = st.builds(
    SliceAttribution,
    st.integers(0, 60),
    st.integers(0, 60),
    st.none() | st.just("the pinned item"),
    st.integers(0, 60),
    st.none() | _SCORES,
    st.just("GreedySlice"),
)


@settings(max_examples=examples(300), deadline=None)
@given(
    _ATTRIBUTIONS,
    st.lists(st.tuples(st.integers(0, 60), _SCORES, st.none() | st.integers(-5, 60)), max_size=40),
)
def test_batch_budget_reasons_equal_the_reasons_one_by_one(
    attribution: SliceAttribution, rows: list[tuple[int, float, int | None]]
) -> None:
    tokens = [row[0] for row in rows]
    _check_budget_reasons(attribution, tokens, [row[1] for row in rows], [row[2] for row in rows])


@settings(max_examples=examples(300), deadline=None)
@given(_ATTRIBUTIONS, st.lists(st.tuples(st.integers(0, 60), _SCORES, st.integers(1, 8)), max_size=40))
def test_batch_budget_reasons_when_every_item_exceeded_what_was_left(
    attribution: SliceAttribution, rows: list[tuple[int, float, int]]
) -> None:
    tokens = [row[0] for row in rows]
    available: list[int | None] = [count - short for count, _, short in rows]
    _check_budget_reasons(attribution, tokens, [row[1] for row in rows], available)


@settings(max_examples=examples(300), deadline=None)
@given(_ATTRIBUTIONS, st.lists(st.tuples(st.integers(0, 60), _SCORES), max_size=40), st.integers(-3, 60))
def test_batch_budget_reasons_when_every_item_had_the_same_tokens_left(
    attribution: SliceAttribution, rows: list[tuple[int, float]], left: int
) -> None:
    # A fill's tail: everything after the last item that fitted saw the same amount left.
    tokens = [row[0] for row in rows]
    _check_budget_reasons(attribution, tokens, [row[1] for row in rows], [left] * len(rows))


def test_exclusions_for_one_reason_share_one_reason_and_one_event() -> None:
    # Every candidate is 30 tokens against a target of 100: three fit, the rest exceed what is left.
    items = [ContextItem(f"item {index}", 30, priority=index) for index in range(50)]
    report = Pipeline(SAMPLE_PIPELINES[0].scorer, GreedySlice(), SAMPLE_PIPELINES[0].placer).dry_run(
        items, ContextBudget(100, 100)
    )
    reasons = [entry.reason for entry in report.excluded]
    assert len(reasons) == 47 and all(reason == BudgetExceeded(30, 10) for reason in reasons)
    assert len({id(reason) for reason in reasons}) == 1
    slice_events = [event for event in report.events if event.stage == "Slice" and event.item_count == 1]
    assert len(slice_events) == 47 and len({id(event) for event in slice_events}) == 1
    assert SelectionReport.from_json(report.to_json()).to_json() == report.to_json()


def test_records_left_by_a_run_wait_in_the_oldest_generation() -> None:
    gc.collect()
    report = SAMPLE_PIPELINES[0].dry_run(_sample_items(2000), ContextBudget(30000, 20000))
    assert gc.isenabled() and gc.get_freeze_count() == 0
    # Moved without a walk: the young generation's count starts again from (nearly) zero.
    assert gc.get_count()[0] < 100
    assert report.excluded and gc.collect() == 0


def test_a_frozen_permanent_generation_is_left_alone() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        SAMPLE_PIPELINES[0].dry_run(_sample_items(500), ContextBudget(5000, 4000))
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()


@given(st.lists(st.floats() | st.integers(-(10**20), 10**20), max_size=30))
def test_the_batch_inclusion_messages_equal_the_single_ones(scores: list[float]) -> None:
    expected = [f"{InclusionReason.SCORED.value}: score={score:.6g}" for score in scores]
    assert scored_messages(scores) == expected
    assert scored_messages(scores * 150) == expected * 150  # several blocks


@given(st.integers(min_value=0), st.integers())
def test_budget_exceeded_describes_itself_as_every_reason_does(tokens: int, available: int) -> None:
    reason = BudgetExceeded(tokens, available)
    assert reason.describe() == ExclusionReason.describe(reason) == f"{reason.name}: {reason.details()}"


@settings(max_examples=examples(300), deadline=None)
@given(
    _ATTRIBUTIONS,
    st.lists(st.tuples(st.integers(0, 60), _SCORES, st.integers(-3, 8)), max_size=40),
    st.sampled_from([0, 1, 2**40]),
)
def test_budget_reasons_of_arrays_equal_those_of_lists(
    attribution: SliceAttribution, rows: list[tuple[int, float, int]], scale: int
) -> None:
    # Mostly the common case (every item exceeded what was left, found by array passes), sometimes
    # not (an item fitted: the lists decide); a large scale makes the pair keys overflow int64.
    np = pytest.importorskip("numpy")
    tokens = [count * max(scale, 1) for count, _, _ in rows]
    available: list[int | None] = [count - short for count, (_, _, short) in zip(tokens, rows, strict=True)]
    scores = [row[1] for row in rows]
    expected = attribution.shared_budget_reasons(tokens, scores, available)
    arrays = attribution.shared_budget_reasons_of_arrays(
        np.array(tokens, dtype=np.int64), scores, np.array(available, dtype=np.int64)
    )
    assert arrays[1] == expected[1]
    assert [reason.to_dict() for reason in arrays[0]] == [reason.to_dict() for reason in expected[0]]
    assert all(type(left) is type(right) for left, right in zip(arrays[0], expected[0], strict=True))


@settings(max_examples=examples(100), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.booleans(),
            st.booleans(),
            st.integers(0, 3),
            st.sampled_from([0.0, 0.5, 1.0, math.nan, -0.0]),
            st.one_of(st.none(), st.floats(0, 1)),
        ),
        max_size=12,
    )
)
def test_a_report_of_columns_equals_the_entries_built_one_by_one(rows: list[tuple[Any, ...]]) -> None:
    from cupel.diagnostics.reasons import BudgetExceeded, InclusionReason
    from cupel.diagnostics.report import ExcludedItem, IncludedItem, report_of_columns

    items = [
        ContextItem(f"unit {n}", tokens, pinned=pinned) for n, (_, pinned, tokens, _, _) in enumerate(rows)
    ]
    kept = [row[0] for row in rows]
    scores = [row[3] for row in rows]
    relevance = [row[4] for row in rows]
    reasons = [None if keep else BudgetExceeded(n + 1, 0) for n, keep in enumerate(kept)]
    pinned = [item.pinned for item in items]
    tokens = [item.tokens for item in items]
    report = report_of_columns(items, kept, (pinned, tokens), (scores, relevance), reasons)

    def inclusion(item: ContextItem) -> InclusionReason:
        if item.pinned:
            return InclusionReason.PINNED
        return InclusionReason.ZERO_TOKEN if item.tokens == 0 else InclusionReason.SCORED

    included = [
        IncludedItem(item, scores[n], inclusion(item), relevance[n])
        for n, item in enumerate(items)
        if kept[n]
    ]
    left_out = [n for n in range(len(items)) if not kept[n]]
    order = sorted(left_out, key=lambda n: (-nan_last(scores[n]), n))  # by score descending, NaN last
    excluded = [ExcludedItem(items[n], scores[n], reasons[n], relevance[n]) for n in order]  # type: ignore[arg-type]
    assert list(report.included) == included
    assert [id(entry.item) for entry in report.excluded] == [id(entry.item) for entry in excluded]
    assert [(entry.reason, entry.relevance) for entry in report.excluded] == [
        (entry.reason, entry.relevance) for entry in excluded
    ]
    assert report.total_candidates == len(items) and report.total_tokens_considered == sum(tokens)
