"""OpenTelemetry bridge: a pipeline run as a span tree (spec: OpenTelemetry Integration).

Needs the ``otel`` extra (``pip install 'pycupel[otel]'``, which brings ``opentelemetry-api``). The core
``cupel`` package never imports OpenTelemetry; only this subpackage does.

    collector = CupelOtelTraceCollector(CupelVerbosity.STAGE_AND_EXCLUSIONS)
    pipeline.run_traced(items, budget, collector)

Or trace every run inside a block, however it is started (``select_messages``, an integration,
``assemble_context``)::

    with tracing(CupelVerbosity.STAGE_ONLY):
        selection = select_messages(messages, 4000)

All ``cupel.*`` attribute names are pre-stable, as the spec warns.
"""

from __future__ import annotations

try:
    # Imported only to fail early with a helpful message; the ignore is for checkouts without the extra.
    import opentelemetry.trace  # type: ignore[import-not-found, unused-ignore]  # noqa: F401
except ImportError as exc:  # pragma: no cover - exercised in a subprocess test
    raise ImportError(
        "cupel.otel needs the OpenTelemetry API, which is not installed. "
        "Install the extra: pip install 'pycupel[otel]'",
        name=exc.name,
    ) from exc

from cupel.otel._collector import (
    TRACER_NAME,
    CollectorReuseError,
    CupelOtelTraceCollector,
    CupelVerbosity,
    item_id,
)
from cupel.otel._tracing import tracing

__all__ = [
    "TRACER_NAME",
    "CollectorReuseError",
    "CupelOtelTraceCollector",
    "CupelVerbosity",
    "item_id",
    "tracing",
]
