"""Report entries and events kept as columns and built on first read: equal to eagerly built records."""

from __future__ import annotations

import copy
import gc
import pickle
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta
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
    PipelineStage,
    SelectionReport,
    TraceDetailLevel,
    TraceEvent,
)
from cupel._score_order import nan_last
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem


class _RecordingCollector(DiagnosticTraceCollector):
    """Not the plain collector type (the pipeline reports to it one decision at a time); it also
    keeps every decision, from which the report is built eagerly, with the validating constructors."""

    def __init__(self) -> None:
        super().__init__(TraceDetailLevel.ITEM)
        self.decisions_in: list[tuple[ContextItem, float, InclusionReason]] = []
        self.decisions_out: list[tuple[ContextItem, float, ExclusionReason]] = []

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        super().on_excluded(stage, item, score, reason)
        self.decisions_out.append((item, score, reason))

    def on_included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        super().on_included(item, score, reason)
        self.decisions_in.append((item, score, reason))

    def eager_report(self) -> SelectionReport:
        excluded = sorted(self.decisions_out, key=lambda entry: nan_last(entry[1]), reverse=True)
        return SelectionReport(
            events=tuple(self.events),
            included=tuple(IncludedItem(*entry) for entry in self.decisions_in),
            excluded=tuple(ExcludedItem(*entry) for entry in excluded),
            total_candidates=self._total_candidates,
            total_tokens_considered=self._total_tokens,
            count_requirement_shortfalls=tuple(self._shortfalls),
        )


def _without_timings(report: SelectionReport) -> SelectionReport:
    return replace(report, events=tuple(replace(event, duration_ms=0.0) for event in report.events))


_FIELDS = ("events", "included", "excluded")
_START = datetime(2026, 1, 1, tzinfo=UTC)


@settings(max_examples=examples(100), deadline=None)
@given(
    item_lists(allow_negative=True),
    budgets(),
    st.sampled_from(SAMPLE_PIPELINES),
    st.permutations(_FIELDS),
)
def test_deferred_reports_equal_eagerly_built_ones(
    items: list[ContextItem], budget: ContextBudget, sample: Any, read_order: list[str]
) -> None:
    reference = _RecordingCollector()
    try:
        sample.run_traced(items, budget, reference)
    except Exception:
        return
    eager = _without_timings(reference.eager_report())
    for report in (sample.dry_run(items, budget), reference.build_report()):
        # Fields read in any order, before the report is serialised or compared as a whole.
        for name in read_order:
            getattr(report, name)
        assert _without_timings(report) == eager
        assert [entry.item for entry in report.excluded] == [entry.item for entry in eager.excluded]
    # Serialised without reading anything first: the same JSON as the eager report.
    fresh = _without_timings(sample.dry_run(items, budget))
    assert fresh.to_json() == eager.to_json()
    assert hash(fresh) == hash(eager)


def _report(count: int = 400) -> SelectionReport:
    items = [
        ContextItem(f"item {index % 350}", 10 + index % 40, priority=index % 7) for index in range(count)
    ]
    return SAMPLE_PIPELINES[0].dry_run(items, ContextBudget(3000, 2000))


def test_a_deferred_field_is_built_once_and_then_stays() -> None:
    report = _report()
    first = report.excluded
    assert report.excluded is first and report.included is report.included
    assert all(type(entry) is ExcludedItem for entry in first)
    assert type(report.events) is tuple and all(type(event) is TraceEvent for event in report.events)


def test_unknown_attributes_still_raise_attribute_error() -> None:
    report = _report(20)
    with pytest.raises(AttributeError, match="'SelectionReport' object has no attribute 'exclude'"):
        report.exclude  # type: ignore[attr-defined]  # noqa: B018
    assert not hasattr(report, "_deferred_fields")
    assert getattr(report, "no_such_field", None) is None


@pytest.mark.parametrize(
    "clone", [pickle.loads, copy.copy, copy.deepcopy], ids=["pickle", "copy", "deepcopy"]
)
def test_copies_and_pickles_carry_every_field(clone: Any) -> None:
    report = _report()
    arg = pickle.dumps(report) if clone is pickle.loads else report
    cloned = clone(arg)
    assert cloned.to_json() == report.to_json()
    if clone is copy.copy:  # the same items (items compare by identity)
        assert cloned == report
        assert cloned == SelectionReport(**{name: getattr(report, name) for name in report.__match_args__})


def test_threads_reading_one_field_get_the_same_object() -> None:
    report = _report(3000)
    seen: list[object] = []
    barrier = threading.Barrier(4)

    def read() -> None:
        barrier.wait()
        seen.append(report.excluded)

    workers = [threading.Thread(target=read) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(seen) == 4 and all(value is seen[0] for value in seen)


def test_a_traced_collector_and_its_report_share_their_events() -> None:
    items = [ContextItem(f"item {index}", 30, priority=index % 5) for index in range(200)]
    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM)
    SAMPLE_PIPELINES[0].run_traced(items, ContextBudget(1000, 1000), collector)
    report = collector.build_report()
    assert "events=205" in repr(collector)  # 200 item events and one per stage, counted unbuilt
    events = collector.events
    assert len(events) == 205 and all(type(event) is TraceEvent for event in events)
    assert all(mine is theirs for mine, theirs in zip(events, report.events, strict=True))
    assert collector.events is events  # built in place, once


def test_building_fields_runs_no_collection_and_leaves_no_cycles() -> None:
    report = _report(5000)
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(count)
    try:
        for name in _FIELDS:
            getattr(report, name)
    finally:
        gc.callbacks.remove(count)
    assert collections == [] and gc.isenabled()
    del report
    assert gc.collect() == 0


def test_large_reports_sort_their_exclusions_as_the_stable_sort_does() -> None:
    # Enough exclusions for the array sort, with many equal scores (ties keep the exclusion order).
    items = [
        ContextItem(f"item {index % 9000}", 5 + index % 17, priority=index % 4) for index in range(10_000)
    ]
    reference = _RecordingCollector()
    SAMPLE_PIPELINES[0].run_traced(items, ContextBudget(20_000, 15_000), reference)
    expected = reference.eager_report()
    assert len(expected.excluded) > 4096
    for report in (
        SAMPLE_PIPELINES[0].dry_run(items, ContextBudget(20_000, 15_000)),
        reference.build_report(),
    ):
        assert [entry.item for entry in report.excluded] == [entry.item for entry in expected.excluded]
        assert report.excluded == expected.excluded


def _dry_and_eager(pipeline: Any, items: list[ContextItem], budget: ContextBudget) -> tuple[Any, Any]:
    """A dry run's report and the eagerly built one, its excluded items checked to be the same objects."""
    reference = _RecordingCollector()
    try:
        pipeline.run_traced(items, budget, reference)
    except Exception:
        pytest.skip("the pipeline refuses this input")
    expected = _without_timings(reference.eager_report())
    report = pipeline.dry_run(items, budget)
    assert [entry.item for entry in report.excluded] == [entry.item for entry in expected.excluded]
    return report, expected


@pytest.mark.parametrize("sample", SAMPLE_PIPELINES, ids=range(len(SAMPLE_PIPELINES)))
def test_large_reports_gather_sorted_exclusions_once_and_equal_eager_ones(
    sample: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every sample pipeline at a size where exclusions are sorted and gathered by arrays in one go
    # (where the run's exclusions are all batches over one list), with duplicates, ties and pinned items.
    from cupel.diagnostics import report as report_module

    used: list[bool] = []
    sorted_exclusions = report_module.sorted_exclusions

    def spy(*args: Any) -> Any:
        found = sorted_exclusions(*args)
        used.append(found is not None)
        return found

    monkeypatch.setattr(report_module, "sorted_exclusions", spy)
    items = [
        ContextItem(
            f"item {index % 9000}",
            index % 23,
            priority=index % 5,
            pinned=index % 2500 == 0,
            timestamp=None if index % 11 == 0 else _START + timedelta(seconds=index % 3000),
        )
        for index in range(12_000)
    ]
    # Over 4096 included: the shared inclusion events.
    report, expected = _dry_and_eager(sample, items, ContextBudget(60_000, 55_000))
    assert _without_timings(report) == expected
    if sample is SAMPLE_PIPELINES[0]:
        assert used == [True]


class _SomeNaNScorer:
    """Scores by priority, NaN for every third item (one NaN object: entries compare equal)."""

    def score(self, item: ContextItem, all_items: Any) -> float:
        return _NAN if (item.priority or 0) % 3 == 0 else float(item.priority or 0)


_NAN = float("nan")


def test_nan_scores_keep_the_pure_sort_of_exclusions() -> None:
    from cupel import GreedySlice, Pipeline, UShapedPlacer

    items = [ContextItem(f"item {index}", 5 + index % 7, priority=index % 10) for index in range(7000)]
    pipeline = Pipeline(_SomeNaNScorer(), GreedySlice(), UShapedPlacer())
    report, expected = _dry_and_eager(pipeline, items, ContextBudget(20_000, 15_000))
    assert len(report.excluded) >= 4096  # enough for the array sort, were it not for NaN
    assert any(entry.score != entry.score for entry in report.excluded)
    assert report.excluded == expected.excluded


def test_a_stage_level_collector_keeps_entries_but_no_item_events() -> None:
    items = [ContextItem(f"item {index % 150}", 30, priority=index % 5) for index in range(200)]
    collector = DiagnosticTraceCollector(TraceDetailLevel.STAGE)
    SAMPLE_PIPELINES[0].run_traced(items, ContextBudget(1000, 1000), collector)
    report = collector.build_report()
    assert [event.message for event in report.events] == [None] * 5
    assert len(report.included) + len(report.excluded) == 200
    full = SAMPLE_PIPELINES[0].dry_run(items, ContextBudget(1000, 1000))
    assert report.included == full.included and report.excluded == full.excluded
    collector.events = [TraceEvent(PipelineStage.SLICE, 1.0, 2)]  # still assignable, as an attribute was
    assert collector.events == [TraceEvent(PipelineStage.SLICE, 1.0, 2)]


def test_shared_inclusion_events_read_as_one_event_per_score() -> None:
    from cupel.diagnostics._deferred import _shared_scored_events, scored_messages
    from cupel.diagnostics.events import item_events

    # Many equal scores, and values equal as floats but printed differently (0.0 and -0.0).
    scores = [[0.0, -0.0, 0.5, float("nan"), 1e-7, 2.0 / 3.0][index % 6] for index in range(6000)]
    shared = _shared_scored_events(scores)
    assert shared is not None
    assert shared == item_events(PipelineStage.PLACE, scored_messages(scores))
    assert [event.message for event in shared[:2]] == ["Scored: score=0", "Scored: score=-0"]
    assert _shared_scored_events([index / 7 for index in range(6000)]) is None  # few equal scores


@settings(max_examples=examples(60), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), target=st.integers(0, 400))
def test_a_traced_run_places_by_the_remembered_timestamps(seed: int, target: int, always_fast: None) -> None:
    # Like the untraced run, the traced run places a Selection: ChronologicalPlacer takes the selected
    # items' timestamps from RecencyScorer's column; placed items and report are those of the pure path.
    from tests.numeric_paths import pure, recalls, stamped_items

    items = stamped_items(600, seed, start=_START, distinct=300, pinned_share=0.01)
    pipeline = SAMPLE_PIPELINES[0]
    budget = ContextBudget(10_000, target + sum(item.tokens for item in items if item.pinned))
    reference = _RecordingCollector()
    expected_placed = pure(pipeline.run_traced, items, budget, reference)
    expected = _without_timings(reference.eager_report())
    with recalls() as recalled:
        placed = pipeline.run_traced(items, budget, DiagnosticTraceCollector(TraceDetailLevel.ITEM))
        report = pipeline.dry_run(items, budget)
    assert len(recalled) == 2 and all(found is not None for found in recalled)
    assert [id(item) for item in placed] == [id(item) for item in expected_placed]
    assert [id(entry.item) for entry in report.included] == [id(item) for item in expected_placed]
    assert _without_timings(report) == expected
    assert [entry.item for entry in report.excluded] == [entry.item for entry in expected.excluded]
