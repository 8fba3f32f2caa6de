"""``cupel --otel``: export the command's runs as OpenTelemetry spans, configured by ``OTEL_*`` variables.

Standard variables apply: ``OTEL_TRACES_EXPORTER`` (``otlp``, the default, needs
``opentelemetry-exporter-otlp``; ``console`` writes spans to standard error; ``none``),
``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES`` (the resource), ``OTEL_EXPORTER_OTLP_*`` (read by
the OTLP exporter), ``OTEL_BSP_*`` (the batch span processor). ``OTEL_SDK_DISABLED=true`` turns it off.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cupel.cli._common import EXIT_USAGE, CliError

__all__ = ["VERBOSITIES", "otel_session"]

VERBOSITIES = ("StageOnly", "StageAndExclusions", "Full")

_NEEDS = "pip install 'pycupel[otel]' opentelemetry-sdk (and opentelemetry-exporter-otlp for OTLP)"


def _import(module: str, package: str = "opentelemetry-sdk") -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise CliError(
            f"--otel needs {package}, which is not installed ({error}); {_NEEDS}", code=EXIT_USAGE
        ) from None


def _exporter(name: str) -> Any:
    if name == "console":
        export = _import("opentelemetry.sdk.trace.export")
        return export.ConsoleSpanExporter(out=sys.stderr)  # standard output is the command's result
    if name == "otlp":
        protocol = os.environ.get(
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        )
        module = "grpc" if protocol == "grpc" else "http"
        exporter = _import(
            f"opentelemetry.exporter.otlp.proto.{module}.trace_exporter", "opentelemetry-exporter-otlp"
        )
        return exporter.OTLPSpanExporter()
    raise CliError(
        f"OTEL_TRACES_EXPORTER={name!r} is not supported by cupel --otel: use otlp, console or none",
        code=EXIT_USAGE,
    )


@contextmanager
def otel_session(command: str, verbosity: str) -> Iterator[None]:
    """Trace the command: a ``cupel.cli`` span around it, every run inside as its child."""
    if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        yield
        return
    sdk_trace = _import("opentelemetry.sdk.trace")
    resources = _import("opentelemetry.sdk.resources")
    export = _import("opentelemetry.sdk.trace.export")
    otel = _import("cupel.otel")
    names = [
        name.strip() for name in os.environ.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if name.strip()
    ]
    resource = resources.Resource.create()  # OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(resources.Resource({"service.name": "cupel"}))
    provider = sdk_trace.TracerProvider(resource=resource)
    for name in names:
        if name != "none":
            provider.add_span_processor(export.BatchSpanProcessor(_exporter(name)))
    tracer = provider.get_tracer(otel.TRACER_NAME)
    try:
        with (
            tracer.start_as_current_span("cupel.cli", attributes={"cupel.cli.command": command}),
            otel.tracing(verbosity, provider),
        ):
            yield
    finally:
        provider.shutdown()  # flushes the batch processors before the process exits
