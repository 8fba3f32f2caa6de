"""The trace sink protocols: what :func:`cupel.diagnostics.hooks.installed` routes runs to, and the
operation in progress a sink returns from ``start_operation``.

Kept apart from the hooks, which every run reads, because a protocol class needs :mod:`typing` and an
untraced run must not load it (docs/spec-notes.md, "Token counting and start-up").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from cupel.diagnostics.trace import TraceCollector

__all__ = ["LiveOperation", "TraceSink"]


@runtime_checkable
class TraceSink(Protocol):
    """Receives what runs inside :func:`~cupel.diagnostics.hooks.installed` do."""

    def pipeline_collector(self, attributes: Mapping[str, object]) -> TraceCollector | None:
        """A collector for one pipeline run, given the attributes callers set (:func:`run_attributes`)."""
        ...

    def operation(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: Mapping[str, object],
        error: BaseException | None,
    ) -> None:
        """A finished operation that is not a pipeline run (``cupel.assembly``), with its attributes."""
        ...


class LiveOperation(Protocol):
    """An operation in progress (a chat selection, an assembly): the runs it starts are its children."""

    #: Whether the sink wants one event per excluded item (a verbose tier).
    exclusions: bool

    def finish(
        self,
        attributes: Mapping[str, object],
        events: Sequence[tuple[str, Mapping[str, object]]],
        error: BaseException | None,
    ) -> None:
        """End the operation with its outcome ``attributes`` and ``events`` (name, attributes)."""
        ...
