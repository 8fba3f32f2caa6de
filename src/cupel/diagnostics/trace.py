"""Trace collectors and events (spec: Diagnostics, TraceCollector and Events)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import IntEnum
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cupel.diagnostics._deferred import ExclusionBatch, InclusionBatch, expanded
from cupel.diagnostics.events import CountRequirementShortfall, OverflowEvent, PipelineStage, TraceEvent
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem

if TYPE_CHECKING:
    # Loaded when a report is built (and logging when a callback fails): not at ``import cupel``.
    from cupel.diagnostics.report import SelectionReport


__all__ = [
    "DiagnosticTraceCollector",
    "NullTraceCollector",
    "OverflowEvent",
    "PipelineStage",
    "SelectionObserver",
    "TraceCollector",
    "TraceDetailLevel",
    "TraceEvent",
]


class TraceDetailLevel(IntEnum):
    """How much a :class:`DiagnosticTraceCollector` keeps: STAGE < ITEM."""

    STAGE = 0
    ITEM = 1


@runtime_checkable
class TraceCollector(Protocol):
    """Receives the pipeline's instrumentation (spec: TraceCollector).

    The pipeline reads ``is_enabled`` first and builds no event when it is false. A collector may also
    have a ``detail_level`` attribute: at ``TraceDetailLevel.STAGE`` the pipeline builds no item events.
    """

    @property
    def is_enabled(self) -> bool:
        """Whether events should be built and recorded at all."""
        ...

    def record_stage_event(self, event: TraceEvent) -> None:
        """Record one stage-level event (once per stage, after it completes)."""
        ...

    def record_item_event(self, event: TraceEvent) -> None:
        """Record one item-level event."""
        ...


@runtime_checkable
class SelectionObserver(Protocol):
    """Optional extension of a trace collector: structured per-item decisions and stage boundaries.

    The pipeline calls these methods on an enabled collector that has them; it is how a
    :class:`~cupel.diagnostics.report.SelectionReport` (or an OpenTelemetry span tree) is built.
    """

    def on_run_start(self, items: Sequence[ContextItem], budget: ContextBudget) -> None:
        """The run begins with these candidates."""
        ...

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        """A stage finished; times are ``time.time_ns()`` wall-clock instants."""
        ...

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        """An item left the pipeline at ``stage``."""
        ...

    def on_included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        """An item is in the final window; called in placed order."""
        ...

    def on_shortfalls(self, shortfalls: Sequence[CountRequirementShortfall]) -> None:
        """Count requirements the slicer could not meet."""
        ...

    def on_overflow(self, event: OverflowEvent) -> None:
        """The selection overflowed the target under OverflowStrategy.PROCEED."""
        ...

    def on_run_end(self, error: BaseException | None) -> None:
        """The run finished: ``error`` is what it raised, or ``None`` after a successful Place."""
        ...


class NullTraceCollector:
    """The disabled collector: records nothing and makes the pipeline build nothing."""

    __slots__ = ()

    @property
    def is_enabled(self) -> bool:
        return False

    def record_stage_event(self, event: TraceEvent) -> None:
        return None

    def record_item_event(self, event: TraceEvent) -> None:
        return None

    def __repr__(self) -> str:
        return "NullTraceCollector()"


_TOKENS = attrgetter("tokens")


class DiagnosticTraceCollector:
    """Buffers events in order and builds a :class:`~cupel.diagnostics.report.SelectionReport`.

    Item events are kept only at ``TraceDetailLevel.ITEM``. ``on_event`` (if given) is called
    synchronously with every event that is recorded. Use one collector per pipeline run.
    """

    def __init__(
        self,
        detail_level: TraceDetailLevel = TraceDetailLevel.STAGE,
        on_event: Callable[[TraceEvent], None] | None = None,
    ) -> None:
        if not isinstance(detail_level, TraceDetailLevel):
            raise CupelTypeError(
                f"DiagnosticTraceCollector.detail_level must be a TraceDetailLevel, got {detail_level!r}"
            )
        self.detail_level = detail_level
        self.on_event = on_event
        # Events, and batches of item events built when first read (``_batches``: their positions).
        self._events: list[Any] = []
        self._batches: list[int] = []
        self.overflow: OverflowEvent | None = None
        # What the report says about the candidates: their count and total tokens, kept instead of
        # a copy of the candidate list.
        self._total_candidates = 0
        self._total_tokens = 0
        # Decisions kept as columns; the report builds its entries from them when they are read.
        self._included_items: list[ContextItem] = []
        self._included_scores: list[float] = []
        self._included_reasons: list[InclusionReason] = []
        self._included_batches: list[tuple[int, InclusionBatch]] = []
        self._excluded_items: list[ContextItem] = []
        self._excluded_scores: list[float] = []
        self._excluded_reasons: list[ExclusionReason] = []
        # Batches of exclusions explained when read, each with its offset in the columns above.
        self._excluded_batches: list[tuple[int, ExclusionBatch]] = []
        self._shortfalls: list[CountRequirementShortfall] = []
        self._callback_failed = False

    @property
    def events(self) -> list[TraceEvent]:
        """Every recorded event, in order."""
        if self._batches:
            self._events[:] = expanded(self._events, self._batches)
            self._batches.clear()
        return self._events

    @events.setter
    def events(self, events: list[TraceEvent]) -> None:
        self._events = events
        self._batches = []

    def record_item_batch(self, batch: ExclusionBatch | InclusionBatch) -> None:
        """Record the item events of a batch of decisions, built when read."""
        self._batches.append(len(self._events))
        self._events.append(batch)

    def record_included_batch(self, batch: InclusionBatch) -> None:
        """Record a batch of inclusions, explained when read (the report's entries)."""
        self._included_batches.append((len(self._included_items), batch))

    def record_excluded_batch(self, batch: ExclusionBatch) -> None:
        """Record a batch of exclusions, explained when read (the report's entries)."""
        self._excluded_batches.append((len(self._excluded_items), batch))

    @property
    def is_enabled(self) -> bool:
        return True

    def record_stage_event(self, event: TraceEvent) -> None:
        self._events.append(event)
        if self.on_event is not None:
            self._notify(event)

    def record_item_event(self, event: TraceEvent) -> None:
        if self.detail_level >= TraceDetailLevel.ITEM:
            self._events.append(event)
            if self.on_event is not None:
                self._notify(event)

    def _notify(self, event: TraceEvent) -> None:
        """Call ``on_event``; telemetry must not break the selection, so a failure is logged (the first
        one only, with its traceback) and the run goes on. The event stays recorded."""
        assert self.on_event is not None
        try:
            self.on_event(event)
        except Exception:
            if not self._callback_failed:
                self._callback_failed = True
                import logging

                logging.getLogger("cupel").exception(
                    "DiagnosticTraceCollector.on_event raised; the selection continues and later "
                    "failures of this collector's callback are not logged"
                )

    def on_run_start(self, items: Sequence[ContextItem], budget: ContextBudget) -> None:
        self._total_candidates = len(items)
        self._total_tokens = sum(map(_TOKENS, items))

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        return None

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        self._excluded_items.append(item)
        self._excluded_scores.append(score)
        self._excluded_reasons.append(reason)

    def on_included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        self._included_items.append(item)
        self._included_scores.append(score)
        self._included_reasons.append(reason)

    def on_shortfalls(self, shortfalls: Sequence[CountRequirementShortfall]) -> None:
        self._shortfalls.extend(shortfalls)

    def on_overflow(self, event: OverflowEvent) -> None:
        self.overflow = event

    def on_run_end(self, error: BaseException | None) -> None:
        return None

    def build_report(self) -> SelectionReport:
        """The report of the run this collector observed (its entries are built when first read)."""
        return self._report(copy=True)

    def _report(self, *, copy: bool) -> SelectionReport:
        """The report; without ``copy`` it takes this collector's buffers (a collector of its own)."""
        from cupel.diagnostics.report import deferred_report

        buffers: list[list[Any]] = [
            self._events,
            self._batches,
            self._included_items,
            self._included_scores,
            self._included_reasons,
            self._included_batches,
            self._excluded_items,
            self._excluded_scores,
            self._excluded_reasons,
            self._excluded_batches,
        ]
        if copy:
            buffers = [buffer.copy() for buffer in buffers]
        events, batches, *columns = buffers
        return deferred_report(
            (events, batches),
            (columns[0], columns[1], columns[2], columns[3]),
            (columns[4], columns[5], columns[6], columns[7]),
            self._total_candidates,
            self._total_tokens,
            tuple(self._shortfalls),
        )

    def __repr__(self) -> str:
        count = len(self._events) + sum(len(self._events[at]) - 1 for at in self._batches)
        return f"DiagnosticTraceCollector(detail_level={self.detail_level!r}, events={count})"
