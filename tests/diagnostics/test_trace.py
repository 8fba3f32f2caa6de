"""Trace collectors and events (spec: Diagnostics, TraceCollector and Events)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cupel import (
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    DiagnosticTraceCollector,
    GreedySlice,
    NullTraceCollector,
    OverflowEvent,
    OverflowStrategy,
    Pipeline,
    PipelineStage,
    RecencyScorer,
    TraceDetailLevel,
    TraceEvent,
)

T0 = datetime(2024, 1, 1, tzinfo=UTC)
STAGES = [
    PipelineStage.CLASSIFY,
    PipelineStage.SCORE,
    PipelineStage.DEDUPLICATE,
    PipelineStage.SLICE,
    PipelineStage.PLACE,
]


def pipeline(**kwargs: object) -> Pipeline:
    return Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer(), **kwargs)  # type: ignore[arg-type]


ITEMS = [
    ContextItem("neg", -1),
    ContextItem("dup", 10, timestamp=T0),
    ContextItem("dup", 10),
    ContextItem("big", 500, timestamp=T0),
    ContextItem("pin", 5, pinned=True),
]


def test_pipeline_stage_values_have_no_sort() -> None:
    assert [s.value for s in PipelineStage] == ["Classify", "Score", "Deduplicate", "Slice", "Place"]


def test_detail_level_ordering() -> None:
    assert TraceDetailLevel.STAGE < TraceDetailLevel.ITEM


def test_null_collector_is_disabled_and_records_nothing() -> None:
    collector = NullTraceCollector()
    assert collector.is_enabled is False
    collector.record_stage_event(TraceEvent(PipelineStage.SCORE, 1.0, 3))
    out = pipeline().run_traced(ITEMS, ContextBudget(100, 100), collector)
    assert [i.content for i in out] == [i.content for i in pipeline().run(ITEMS, ContextBudget(100, 100))]


def test_null_collector_builds_no_events() -> None:
    built: list[TraceEvent] = []
    original = TraceEvent.__init__

    def spy(self: TraceEvent, *args: object, **kwargs: object) -> None:
        built.append(self)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    TraceEvent.__init__ = spy  # type: ignore[method-assign]
    try:
        pipeline().run_traced(ITEMS, ContextBudget(100, 100), NullTraceCollector())
    finally:
        TraceEvent.__init__ = original  # type: ignore[method-assign]
    assert built == []


def test_one_stage_event_per_stage_even_for_empty_input() -> None:
    collector = DiagnosticTraceCollector()
    pipeline().run_traced([], ContextBudget(10, 10), collector)
    assert [e.stage for e in collector.events] == STAGES
    assert all(e.item_count == 0 and e.message is None and e.duration_ms >= 0 for e in collector.events)


def test_stage_level_discards_item_events() -> None:
    collector = DiagnosticTraceCollector(TraceDetailLevel.STAGE)
    pipeline().run_traced(ITEMS, ContextBudget(100, 100), collector)
    assert [e.stage for e in collector.events] == STAGES
    # items leaving each stage: 4 classified, 3 scored, 2 unique, 1 sliced, 2 placed (with the pinned item)
    assert [e.item_count for e in collector.events] == [4, 3, 2, 1, 2]


def test_item_events_precede_their_stage_event() -> None:
    seen: list[TraceEvent] = []
    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM, on_event=seen.append)
    pipeline().run_traced(ITEMS, ContextBudget(100, 100), collector)
    assert seen == collector.events
    stage_positions = [n for n, e in enumerate(seen) if e.message is None]
    assert [seen[n].stage for n in stage_positions] == STAGES
    for n, event in enumerate(seen):
        if event.message is not None:
            assert (event.duration_ms, event.item_count) == (0.0, 1)
            next_stage_event = next(seen[m] for m in stage_positions if m > n)
            assert next_stage_event.stage == event.stage
    messages = [e.message for e in seen if e.message]
    assert "NegativeTokens: token count -1 is negative" in messages
    assert "BudgetExceeded: 500 tokens requested, 85 available" in messages


def test_overflow_event_only_under_proceed() -> None:
    items = [ContextItem("pin", 90, pinned=True)]
    for strategy in (OverflowStrategy.TRUNCATE, OverflowStrategy.PROCEED):
        collector = DiagnosticTraceCollector()
        pipeline(overflow_strategy=strategy).run_traced(items, ContextBudget(100, 50), collector)
        if strategy is OverflowStrategy.PROCEED:
            assert collector.overflow == OverflowEvent(40, (items[0],), ContextBudget(100, 50))
        else:
            assert collector.overflow is None


def test_collector_validates_detail_level() -> None:
    with pytest.raises(CupelTypeError, match="detail_level"):
        DiagnosticTraceCollector("item")  # type: ignore[arg-type]


def test_trace_event_validation() -> None:
    with pytest.raises(CupelTypeError, match="item_count"):
        TraceEvent(PipelineStage.SCORE, 0.0, 1.5)  # type: ignore[arg-type]


class _Boundaries(DiagnosticTraceCollector):
    def __init__(self) -> None:
        super().__init__()
        self.stages: list[tuple[PipelineStage, int, int]] = []
        self.ended: list[BaseException | None] = []

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        assert ended_ns >= started_ns
        self.stages.append((stage, items_in, items_out))

    def on_run_end(self, error: BaseException | None) -> None:
        self.ended.append(error)


def test_stage_boundaries_count_items_entering_place_before_truncation() -> None:
    class Everything:
        def slice(self, scored: object, budget: ContextBudget) -> list[ContextItem]:
            return [entry.item for entry in scored]  # type: ignore[attr-defined]

    items = [ContextItem("pin", 50, pinned=True), ContextItem("a", 40, timestamp=T0), ContextItem("b", 40)]
    observer = _Boundaries()
    pipeline = Pipeline(RecencyScorer(), Everything(), ChronologicalPlacer(), overflow_strategy="truncate")  # type: ignore[arg-type]
    out = pipeline.run_traced(items, ContextBudget(200, 100), observer)
    assert [i.content for i in out] == ["a", "pin"]
    assert observer.stages[-1] == (PipelineStage.PLACE, 3, 2)
    assert [stage for stage, _, _ in observer.stages] == STAGES
    assert observer.ended == [None]


def test_run_end_receives_the_error() -> None:
    observer = _Boundaries()
    with pytest.raises(Exception, match="Pinned items require"):
        pipeline().run_traced([ContextItem("pin", 500, pinned=True)], ContextBudget(100, 100), observer)
    assert len(observer.ended) == 1 and "Pinned items require" in str(observer.ended[0])
