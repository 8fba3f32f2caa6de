"""How a pipeline run reports to a trace collector: stage events, item events, observer callbacks."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from cupel.diagnostics.attribution import SliceAttribution
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.trace import PipelineStage, TraceCollector, TraceDetailLevel, TraceEvent
from cupel.model import ContextItem, ScoredItem

__all__ = ["Tracer"]


class Tracer:
    """Routes the pipeline's observations to a collector; only built when the collector is enabled.

    The pipeline imports this module, and the diagnostics types, only for a traced run.
    """

    stages = PipelineStage

    __slots__ = ("collector", "item_events", "observer", "run_end", "stage_started_ns", "stage_wall_ns")

    def __init__(self, collector: TraceCollector) -> None:
        self.collector = collector
        self.item_events = getattr(collector, "detail_level", TraceDetailLevel.ITEM) >= (
            TraceDetailLevel.ITEM
        )
        self.observer: Any = collector if hasattr(collector, "on_excluded") else None
        self.run_end: Callable[[BaseException | None], None] | None = getattr(collector, "on_run_end", None)
        self.stage_started_ns = 0
        self.stage_wall_ns = 0

    def start(self) -> None:
        self.stage_wall_ns = time.time_ns()
        self.stage_started_ns = time.perf_counter_ns()

    def finish(self, stage: PipelineStage, items_in: int, items_out: int) -> None:
        elapsed_ns = time.perf_counter_ns() - self.stage_started_ns
        self.collector.record_stage_event(TraceEvent(stage, elapsed_ns / 1e6, items_out))
        if self.observer is not None:
            self.observer.on_stage_complete(
                stage, self.stage_wall_ns, self.stage_wall_ns + elapsed_ns, items_in, items_out
            )
        self.start()

    def excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        if self.item_events:
            self.collector.record_item_event(TraceEvent(stage, 0.0, 1, reason.describe()))
        if self.observer is not None:
            self.observer.on_excluded(stage, item, score, reason)

    def included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        if self.item_events:
            self.collector.record_item_event(
                TraceEvent(PipelineStage.PLACE, 0.0, 1, f"{reason.value}: score={score:.6g}")
            )
        if self.observer is not None:
            self.observer.on_included(item, score, reason)

    def included_all(self, placed: list[ContextItem], items: list[ContextItem], scores: list[float]) -> None:
        """Report every placed item with its inclusion reason."""
        score_by_id = {id(item): score for item, score in zip(items, scores, strict=True)}
        for item in placed:
            score = score_by_id[id(item)]
            if item.pinned:
                reason = InclusionReason.PINNED
            elif item.tokens == 0:
                reason = InclusionReason.ZERO_TOKEN
            else:
                reason = InclusionReason.SCORED
            self.included(item, score, reason)

    def slice_excluded(
        self,
        sorted_scored: list[ScoredItem],
        sliced: list[ContextItem],
        slice_exclusions: dict[int, ExclusionReason],
        attribution: SliceAttribution,
    ) -> None:
        """Report every candidate the slicer left out, with the reason :class:`SliceAttribution` gives."""
        # A multiset: the same instance may appear (and be selected) more than once.
        selected_ids = Counter(id(item) for item in sliced)
        for entry in sorted_scored:
            item = entry.item
            if selected_ids[id(item)] > 0:
                selected_ids[id(item)] -= 1
                continue
            reason = attribution.reason(item, entry.score, slice_exclusions.get(id(item)))
            self.excluded(PipelineStage.SLICE, item, entry.score, reason)
