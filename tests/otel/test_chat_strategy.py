"""The ``cupel.chat.strategy`` root-span attribute: which chat strategy a traced selection ran."""

from __future__ import annotations

import pytest

pytest.importorskip("opentelemetry.sdk", reason="the tracing tests need opentelemetry-sdk")

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from cupel.chat import select_messages
from cupel.otel import tracing

TRANSCRIPT = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "first question " * 20},
    {"role": "assistant", "content": "first answer " * 20},
    {"role": "user", "content": "second question " * 5},
    {"role": "assistant", "content": "second answer " * 5},
    {"role": "user", "content": "now?"},
]


def roots(run: object) -> list[dict[str, object]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with tracing(tracer_provider=provider):
        run()  # type: ignore[operator]
    return [
        dict(span.attributes or {}) for span in exporter.get_finished_spans() if span.name == "cupel.pipeline"
    ]


@pytest.mark.parametrize("strategy", ["turns", "messages"])
def test_select_messages_names_its_strategy(strategy: str) -> None:
    [root] = roots(lambda: select_messages(TRANSCRIPT, 60, strategy=strategy))  # type: ignore[arg-type]
    assert root["cupel.chat.strategy"] == strategy
    assert root["cupel.policy.name"] == "chat"


def test_the_default_strategy_is_named_and_integrations_name_theirs() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import convert_to_messages

    from cupel.integrations.langchain import message_trimmer

    [root] = roots(lambda: select_messages(TRANSCRIPT, 60, "tool_use"))
    assert root["cupel.chat.strategy"] == "turns"
    assert root["cupel.policy.name"] == "tool_use"
    messages = convert_to_messages(TRANSCRIPT)
    [root] = roots(lambda: message_trimmer(60, strategy="messages").invoke(messages))
    assert root["cupel.chat.strategy"] == "messages"
    assert root["cupel.policy.name"] == "chat"


def test_each_stable_window_turn_is_one_span_saying_whether_it_compacted() -> None:
    from cupel.chat import StableWindow

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    window = StableWindow(400)
    with tracing(tracer_provider=provider):
        first = window.select(TRANSCRIPT[:4])
        second = window.select(TRANSCRIPT)
    spans = [span for span in exporter.get_finished_spans() if span.name == "cupel.stable_window"]
    assert len(spans) == 2
    attributes = [dict(span.attributes or {}) for span in spans]
    assert [a["cupel.stable_window.compacted"] for a in attributes] == [first.compacted, second.compacted]
    assert [a["cupel.result.tokens"] for a in attributes] == [first.tokens, second.tokens]
    assert [a["cupel.stable_window.prefix"] for a in attributes] == [first.prefix, second.prefix]
    assert all(
        a["cupel.chat.strategy"] == "turns" and a["cupel.budget.max_tokens"] == 400 for a in attributes
    )
    untraced = StableWindow(400)
    assert untraced.select(TRANSCRIPT[:4]).messages == first.messages  # tracing changes nothing
