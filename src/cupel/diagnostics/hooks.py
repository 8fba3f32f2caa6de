"""Tracing hooks: where runs started anywhere in a call (a chat selection, an assembly, a CLI command)
reach an installed trace sink, such as ``cupel.otel.tracing()``.

Nothing is installed by default and then every hook is one context-variable read. A sink is installed
for the current context (thread or asyncio task) only, so concurrent requests trace independently.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from types import MappingProxyType

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    # Only for annotations: the pipeline reads the hooks on every run, and a run that is not traced
    # must not load the diagnostics types (docs/spec-notes.md, "Token counting and start-up").
    from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
    from cupel.diagnostics.sink import LiveOperation, TraceSink
    from cupel.diagnostics.trace import (
        OverflowEvent,
        PipelineStage,
        TraceCollector,
        TraceDetailLevel,
        TraceEvent,
    )
    from cupel.model import ContextBudget, ContextItem

__all__ = [
    "LiveOperation",
    "TeeCollector",
    "TraceSink",
    "active_sink",
    "current_attributes",
    "installed",
    "run_attributes",
    "start_operation",
]


class _TimedOperation:
    """For a sink without ``start_operation``: the finished operation reported through ``operation``."""

    __slots__ = ("attributes", "name", "sink", "started_ns")

    exclusions = False

    def __init__(self, sink: TraceSink, name: str, attributes: Mapping[str, object]) -> None:
        import time

        self.sink = sink
        self.name = name
        self.attributes = attributes
        self.started_ns = time.time_ns()

    def finish(
        self,
        attributes: Mapping[str, object],
        events: Sequence[tuple[str, Mapping[str, object]]],
        error: BaseException | None,
    ) -> None:
        import time

        merged = {**self.attributes, **attributes}
        self.sink.operation(self.name, self.started_ns, time.time_ns(), merged, error)


def start_operation(sink: TraceSink, name: str, attributes: Mapping[str, object]) -> LiveOperation:
    """Begin ``name`` on ``sink``: pipeline runs started before it finishes nest under it.

    A sink may offer ``start_operation(name, attributes)`` for a span that is current while the
    operation runs; otherwise the operation is reported once finished, through ``operation``.
    """
    start = getattr(sink, "start_operation", None)
    if start is None:
        return _TimedOperation(sink, name, attributes)
    live: LiveOperation = start(name, attributes)
    return live


_SINK: ContextVar[TraceSink | None] = ContextVar("cupel_trace_sink", default=None)
_NO_ATTRIBUTES: Mapping[str, object] = MappingProxyType({})
_ATTRIBUTES: ContextVar[Mapping[str, object]] = ContextVar("cupel_run_attributes", default=_NO_ATTRIBUTES)


def active_sink() -> TraceSink | None:
    """The sink installed for this context, if any."""
    return _SINK.get()


def current_attributes() -> Mapping[str, object]:
    """The attributes :func:`run_attributes` set for runs started now."""
    return _ATTRIBUTES.get()


@contextmanager
def installed(sink: TraceSink | None) -> Iterator[None]:
    """Route runs inside the block to ``sink`` (``None`` turns tracing off inside the block)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


@contextmanager
def run_attributes(attributes: Mapping[str, object]) -> Iterator[None]:
    """Add ``attributes`` (None values skipped) to the runs started inside the block."""
    if _SINK.get() is None:
        yield
        return
    merged = {**_ATTRIBUTES.get(), **{key: value for key, value in attributes.items() if value is not None}}
    token = _ATTRIBUTES.set(merged)
    try:
        yield
    finally:
        _ATTRIBUTES.reset(token)


class TeeCollector:
    """Feeds one run's events to two collectors: the caller's and the sink's."""

    __slots__ = ("detail_level", "first", "second")

    def __init__(self, first: TraceCollector, second: TraceCollector) -> None:
        from cupel.diagnostics.trace import TraceDetailLevel  # a tee exists only while tracing

        self.first = first
        self.second = second
        self.detail_level: TraceDetailLevel = max(
            getattr(first, "detail_level", TraceDetailLevel.ITEM),
            getattr(second, "detail_level", TraceDetailLevel.ITEM),
        )

    @property
    def is_enabled(self) -> bool:
        return True

    def _each(self, method: str, *args: Any) -> None:
        for collector in (self.first, self.second):
            if collector.is_enabled:
                hook = getattr(collector, method, None)
                if hook is not None:
                    hook(*args)

    def record_stage_event(self, event: TraceEvent) -> None:
        self._each("record_stage_event", event)

    def record_item_event(self, event: TraceEvent) -> None:
        self._each("record_item_event", event)

    def on_run_start(self, items: Sequence[ContextItem], budget: ContextBudget) -> None:
        self._each("on_run_start", items, budget)

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        self._each("on_stage_complete", stage, started_ns, ended_ns, items_in, items_out)

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        self._each("on_excluded", stage, item, score, reason)

    def on_included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        self._each("on_included", item, score, reason)

    def on_shortfalls(self, shortfalls: Sequence[Any]) -> None:
        self._each("on_shortfalls", shortfalls)

    def on_overflow(self, event: OverflowEvent) -> None:
        self._each("on_overflow", event)

    def on_run_end(self, error: BaseException | None) -> None:
        self._each("on_run_end", error)


# The protocols need typing: defined apart (diagnostics.sink) and imported when first named.
__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {"LiveOperation": "cupel.diagnostics.sink", "TraceSink": "cupel.diagnostics.sink"},
)
