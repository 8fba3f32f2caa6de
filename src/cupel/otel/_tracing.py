"""``tracing()``: trace every selection and assembly run inside a block, wherever it is started."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context  # type: ignore[import-not-found, unused-ignore]
from opentelemetry import trace  # type: ignore[import-not-found, unused-ignore]
from opentelemetry.trace import Status, StatusCode  # type: ignore[import-not-found, unused-ignore]

from cupel import __version__
from cupel.diagnostics.hooks import installed
from cupel.otel._collector import (
    _RANKS,
    TRACER_NAME,
    CupelOtelTraceCollector,
    CupelVerbosity,
    _checked_attributes,
)

__all__ = ["tracing"]


class OtelSink:
    """Turns each pipeline run into a ``cupel.pipeline`` tree and each other operation into one span."""

    def __init__(
        self,
        verbosity: CupelVerbosity | str,
        tracer_provider: trace.TracerProvider | None,
        attributes: Mapping[str, object] | None,
    ) -> None:
        self.verbosity = CupelVerbosity(verbosity)
        self.tracer_provider = tracer_provider
        self.attributes = _checked_attributes(attributes)
        self.tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)

    def pipeline_collector(self, attributes: Mapping[str, object]) -> CupelOtelTraceCollector:
        return CupelOtelTraceCollector(
            self.verbosity, self.tracer_provider, attributes={**self.attributes, **attributes}
        )

    def start_operation(self, name: str, attributes: Mapping[str, object]) -> _LiveSpan:
        """A span current from now until it finishes, so the runs inside become its children."""
        span = self.tracer.start_span(
            name,
            attributes={
                **self.attributes,
                **_checked_attributes(attributes),
                "cupel.verbosity": self.verbosity.value,
            },
        )
        token = otel_context.attach(trace.set_span_in_context(span))
        exclusions = self.verbosity.rank >= _RANKS[CupelVerbosity.STAGE_AND_EXCLUSIONS]
        return _LiveSpan(span, token, exclusions)

    def operation(
        self,
        name: str,
        start_ns: int,
        end_ns: int,
        attributes: Mapping[str, object],
        error: BaseException | None,
    ) -> None:
        span = self.tracer.start_span(
            name,
            start_time=start_ns,
            attributes={
                **self.attributes,
                **_checked_attributes(attributes),
                "cupel.verbosity": self.verbosity.value,
            },
        )
        if error is not None:
            _fail(span, error, end_ns)
        span.end(end_time=max(end_ns, start_ns))


def _fail(span: trace.Span, error: BaseException, at_ns: int | None = None) -> None:
    if isinstance(error, Exception):
        span.record_exception(error, timestamp=at_ns, escaped=True)
    span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))


class _LiveSpan:
    """An operation's span, current while the operation runs (see ``OtelSink.start_operation``)."""

    __slots__ = ("exclusions", "span", "token")

    def __init__(self, span: trace.Span, token: Any, exclusions: bool) -> None:
        self.span = span
        self.token = token
        self.exclusions = exclusions

    def finish(
        self,
        attributes: Mapping[str, object],
        events: Sequence[tuple[str, Mapping[str, object]]],
        error: BaseException | None,
    ) -> None:
        otel_context.detach(self.token)
        self.span.set_attributes(_checked_attributes(attributes))
        for name, event in events:
            self.span.add_event(name, _checked_attributes(event))
        if error is not None:
            _fail(self.span, error)
        self.span.end()


@contextmanager
def tracing(
    verbosity: CupelVerbosity | str = CupelVerbosity.STAGE_ONLY,
    tracer_provider: trace.TracerProvider | None = None,
    *,
    attributes: Mapping[str, object] | None = None,
) -> Iterator[None]:
    """Trace every cupel run started inside the block (in this thread or asyncio task).

    Each pipeline run (``Pipeline.run``/``dry_run``, ``select_messages`` and its framework integrations)
    becomes a ``cupel.pipeline`` span tree; each ``assemble_context`` one ``cupel.assembly`` span.
    ``attributes`` (for example ``{"cupel.policy.name": "support-bot"}``) go on every root span.
    """
    with installed(OtelSink(verbosity, tracer_provider, attributes)):
        yield
