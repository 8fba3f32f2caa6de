"""``tracing()``: trace every selection and assembly run inside a block, wherever it is started."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from opentelemetry import trace  # type: ignore[import-not-found, unused-ignore]
from opentelemetry.trace import Status, StatusCode  # type: ignore[import-not-found, unused-ignore]

from cupel import __version__
from cupel.diagnostics.hooks import installed
from cupel.otel._collector import TRACER_NAME, CupelOtelTraceCollector, CupelVerbosity, _checked_attributes

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
            if isinstance(error, Exception):
                span.record_exception(error, timestamp=end_ns, escaped=True)
            span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        span.end(end_time=max(end_ns, start_ns))


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
