"""cupel.otel.tracing(): select_messages, every pipeline run, assemble_context and the CLI's --otel."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the tracing tests need opentelemetry-sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from cupel import ContextBudget, ContextItem, GreedySlice, Pipeline, ReflexiveScorer, UShapedPlacer
from cupel.assembly import Chunk, Document, RetrievalResult, StaticRetriever, TokenBudget, assemble_context
from cupel.chat import aselect_messages, select_messages
from cupel.cli import main
from cupel.diagnostics.hooks import active_sink
from cupel.otel import CupelVerbosity, item_id, tracing

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


def named(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in exporter.get_finished_spans() if span.name == name]


TRANSCRIPT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "first question " * 20},
    {"role": "assistant", "content": "first answer " * 20},
    {"role": "user", "content": "now?"},
]


def test_nothing_is_installed_by_default_and_tracing_is_scoped(provider: TracerProvider) -> None:
    assert active_sink() is None
    with tracing(tracer_provider=provider):
        assert active_sink() is not None
    assert active_sink() is None


def test_select_messages_root_span_carries_the_outcome(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with tracing(CupelVerbosity.STAGE_AND_EXCLUSIONS, provider):
        selection = select_messages(TRANSCRIPT, 60, strategy="messages")
    [root] = named(exporter, "cupel.pipeline")
    attributes = dict(root.attributes or {})
    assert attributes["cupel.policy.name"] == "chat"
    assert attributes["cupel.budget.max_tokens"] == attributes["cupel.budget.target_tokens"] == 60
    assert attributes["cupel.result.tokens"] == selection.tokens
    assert attributes["cupel.result.included_count"] == len(selection.report.included)
    assert attributes["cupel.result.excluded_count"] == len(selection.report.excluded)
    stage_spans = [span for span in exporter.get_finished_spans() if span.name.startswith("cupel.stage.")]
    events = [event for span in stage_spans for event in span.events]
    excluded_ids = {entry.item.content: item_id(entry.item) for entry in selection.report.excluded}
    assert sorted(str((e.attributes or {})["cupel.exclusion.item_id"]) for e in events) == sorted(
        excluded_ids.values()
    )
    # The call's own root span: the pipeline run is its child, and it names the same exclusions.
    [chat] = named(exporter, "cupel.chat")
    assert root.parent is not None and root.parent.span_id == chat.context.span_id
    assert sorted(str((e.attributes or {})["cupel.exclusion.item_id"]) for e in chat.events) == sorted(
        excluded_ids.values()
    )


def test_item_ids_are_stable_content_hashes() -> None:
    assert item_id(ContextItem("hello", 1)) == item_id(ContextItem("hello", 99, kind="Document"))
    assert item_id(ContextItem("hello", 1)) == "2cf24dba5fb0a30e"  # sha256("hello")[:16]
    assert item_id(ContextItem("hello", 1)) != item_id(ContextItem("hello!", 1))


def test_presets_by_name_and_caller_attributes_reach_the_root(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with tracing(
        tracer_provider=provider, attributes={"cupel.policy.name": "support-bot", "deployment": "eu"}
    ):
        select_messages(TRANSCRIPT, 200, "tool_use", strategy="messages")
        Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer()).run(
            [ContextItem("a", 1)], ContextBudget(10, 10)
        )
    first, second = named(exporter, "cupel.pipeline")
    assert (first.attributes or {})["cupel.policy.name"] == "tool_use"
    assert (second.attributes or {})["cupel.policy.name"] == "support-bot"
    assert (second.attributes or {})["deployment"] == "eu"


def test_a_callers_own_collector_still_gets_its_report(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    items = [ContextItem("a", 5, future_relevance_hint=0.5), ContextItem("b", 500)]
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer())
    with tracing(tracer_provider=provider):
        report = pipeline.dry_run(items, ContextBudget(100, 50))
    assert report.items == pipeline.dry_run(items, ContextBudget(100, 50)).items
    assert len(named(exporter, "cupel.pipeline")) == 1


def test_concurrent_tasks_trace_independently(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    async def traced() -> None:
        with tracing(tracer_provider=provider):
            await aselect_messages(TRANSCRIPT, 60)

    async def untraced() -> None:
        await asyncio.sleep(0)
        assert active_sink() is None
        await aselect_messages(TRANSCRIPT, 60)

    async def both() -> None:
        await asyncio.gather(traced(), untraced())

    asyncio.run(both())
    assert len(named(exporter, "cupel.pipeline")) == 1


def results() -> list[RetrievalResult]:
    keys = Document("keys", "docs/keys.md")
    return [
        RetrievalResult(Chunk("k0", "Keys rotate monthly.", 0), keys, 0.9),
        RetrievalResult(Chunk("k1", "Keys rotate monthly.", 1), keys, 0.8),
        RetrievalResult(Chunk("k2", "Old keys stay valid for a day. " * 200, 2), keys, 0.7),
    ]


def test_assembly_is_one_span_with_its_outcome(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    with tracing(tracer_provider=provider):
        context = assemble_context("rotate?", StaticRetriever(results()), TokenBudget(1000))
    [span] = named(exporter, "cupel.assembly")
    assert dict(span.attributes or {}) == {
        "cupel.budget.max_tokens": 1000,
        "cupel.budget.target_tokens": 200,
        "cupel.assembly.packing_strategy": "greedy",
        "cupel.assembly.retrieved_count": 3,
        "cupel.assembly.deduplicated_count": 1,
        "cupel.result.tokens": context.total_tokens,
        "cupel.result.included_count": len(context.chunks),
        "cupel.result.excluded_count": 3 - len(context.chunks),
        "cupel.assembly.truncated": context.truncated,
        "cupel.verbosity": "StageOnly",
    }


def test_a_failed_assembly_span_has_error_status(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    def broken(query: str) -> list[RetrievalResult]:
        raise RuntimeError("index offline")

    with tracing(tracer_provider=provider), pytest.raises(RuntimeError):
        assemble_context("q", broken, TokenBudget(1000))
    [span] = named(exporter, "cupel.assembly")
    assert span.status.status_code is StatusCode.ERROR
    assert "index offline" in str(span.status.description)


def test_spans_nest_under_the_callers_active_span(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("request") as request, tracing(tracer_provider=provider):
        select_messages(TRANSCRIPT, 60)
    [root] = named(exporter, "cupel.chat")
    assert root.parent is not None and root.parent.span_id == request.get_span_context().span_id
    [run] = named(exporter, "cupel.pipeline")
    assert run.parent is not None and run.parent.span_id == root.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN


def run_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *args: str, **env: str
) -> tuple[int, str, str]:
    """``cupel ARGS`` in this process (a subprocess per case would cost seconds), with ``env`` set."""
    monkeypatch.chdir(ROOT)
    for name in (
        "OTEL_TRACES_EXPORTER",
        "OTEL_SERVICE_NAME",
        "OTEL_RESOURCE_ATTRIBUTES",
        "OTEL_SDK_DISABLED",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def console_spans(stderr: str) -> list[dict[str, Any]]:
    decoder = json.JSONDecoder()
    spans, position = [], stderr.find("{")
    while position != -1:
        span, end = decoder.raw_decode(stderr, position)
        spans.append(span)
        position = stderr.find("{", end)
    return spans


SELECT = ("select", "examples/agent-conversation.json", "--budget", "300")


def test_cli_otel_exports_through_the_configured_exporter(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, plain, _ = run_cli(capsys, monkeypatch, *SELECT)
    code, out, err = run_cli(
        capsys,
        monkeypatch,
        "--otel",
        "--otel-verbosity",
        "StageAndExclusions",
        *SELECT,
        OTEL_TRACES_EXPORTER="console",
        OTEL_SERVICE_NAME="cupel-test",
    )
    assert code == 0, err
    assert out == plain  # spans go to standard error only
    spans = {str(span["name"]): span for span in console_spans(err)}
    assert {"cupel.cli", "cupel.chat", "cupel.pipeline", "cupel.stage.slice"} <= set(spans)
    assert spans["cupel.cli"]["attributes"] == {"cupel.cli.command": "select"}
    assert spans["cupel.pipeline"]["resource"]["attributes"]["service.name"] == "cupel-test"
    # cupel.cli > cupel.chat (the transcript's selection) > cupel.pipeline (its internal run)
    assert spans["cupel.chat"]["parent_id"] == spans["cupel.cli"]["context"]["span_id"]
    assert spans["cupel.pipeline"]["parent_id"] == spans["cupel.chat"]["context"]["span_id"]
    assert any(event["name"] == "cupel.exclusion" for event in spans["cupel.stage.slice"]["events"])


def test_cli_otel_names_an_unsupported_exporter_and_honours_sdk_disabled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    code, _, err = run_cli(capsys, monkeypatch, "--otel", *SELECT, OTEL_TRACES_EXPORTER="zipkin2")
    assert code == 2
    assert err.strip().splitlines() == [
        "cupel select: OTEL_TRACES_EXPORTER='zipkin2' is not supported by cupel --otel: "
        "use otlp, console or none"
    ]
    code, _, err = run_cli(capsys, monkeypatch, "--otel", *SELECT, OTEL_SDK_DISABLED="true")
    assert (code, err) == (0, "")
