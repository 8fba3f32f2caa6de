"""cupel.integrations.pydantic_ai with real pydantic-ai agents on its TestModel and FunctionModel."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from cupel.chat import ChatOptions
from cupel.integrations.pydantic_ai import TrimHistory, history_processor, message_view


def tool_pairs_intact(messages: list[ModelMessage]) -> bool:
    calls = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelResponse)
        for p in m.parts
        if isinstance(p, ToolCallPart)
    }
    returns = {
        p.tool_call_id
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    }
    return calls == returns


def scripted_agent(capability: Any) -> tuple[Agent[None, str], list[list[ModelMessage]]]:
    seen: list[list[ModelMessage]] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        last = messages[-1]
        if any(isinstance(part, ToolReturnPart) for part in last.parts):
            return ModelResponse(parts=[TextPart("It is sunny.")])
        return ModelResponse(
            parts=[ToolCallPart("weather", {"city": "Oslo"}, tool_call_id=f"call-{len(seen)}")]
        )

    agent = Agent(FunctionModel(respond), system_prompt="Be brief.", capabilities=[capability])

    @agent.tool_plain
    def weather(city: str) -> str:
        """Today's weather for a city."""
        return f"Sunny in {city}, 21 degrees. " * 8

    return agent, seen


def run_three_turns(agent: Agent[None, str]) -> list[ModelMessage]:
    first = agent.run_sync("What is the weather in Oslo? " * 6)
    second = agent.run_sync("And tomorrow?", message_history=first.all_messages())
    return agent.run_sync("And the day after?", message_history=second.all_messages()).all_messages()


def test_trim_history_capability_trims_each_request_and_keeps_tool_parts_together() -> None:
    agent, seen = scripted_agent(TrimHistory(220))
    stored = run_three_turns(agent)
    assert len(seen) == 6
    assert max(len(sent) for sent in seen) < len(stored)
    for sent in seen:
        assert tool_pairs_intact(sent)
        assert isinstance(sent[-1], ModelRequest)  # the request being answered is always kept
        assert any(isinstance(part, SystemPromptPart) for part in sent[0].parts)
    # The stored history is whole: only what the model was sent was trimmed.
    assert len(stored) == 12


def test_history_processor_in_process_history_trims_the_stored_history() -> None:
    agent, seen = scripted_agent(ProcessHistory(history_processor(220)))
    stored = run_three_turns(agent)
    assert len(stored) < 12
    assert all(tool_pairs_intact(sent) for sent in seen)


def test_with_the_test_model_and_an_async_counter() -> None:
    async def count(text: str) -> int:
        return len(text.split())

    agent = Agent(TestModel(), capabilities=[TrimHistory(120, counter=count)])

    @agent.tool_plain
    def lookup(term: str) -> str:
        """Look a term up."""
        return "definition " * 30

    result = asyncio.run(agent.run("Define cupel."))
    again = asyncio.run(agent.run("And crucible?", message_history=result.all_messages()))
    assert again.output


def test_message_view_reads_parts_as_anthropic_style_blocks() -> None:
    request = ModelRequest(parts=[SystemPromptPart("rules"), UserPromptPart("hi")])
    assert message_view(request, 0).role == "system"
    response = ModelResponse(
        parts=[TextPart("let me look"), ToolCallPart("weather", {"city": "Oslo"}, tool_call_id="c1")]
    )
    view = message_view(response, 1)
    assert view.role == "assistant"
    assert view.content == [
        {"type": "text", "text": "let me look"},
        {"type": "tool_use", "id": "c1", "name": "weather", "input": {"city": "Oslo"}},
    ]
    returned = message_view(ModelRequest(parts=[ToolReturnPart("weather", "sunny", tool_call_id="c1")]), 2)
    assert returned.role == "user"
    assert returned.content == [{"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}]


def test_tool_call_arguments_and_returns_are_charged() -> None:
    process = history_processor(10_000, options=ChatOptions(pin_last_user=False))
    small = [
        ModelRequest(parts=[UserPromptPart("q")]),
        ModelResponse(parts=[ToolCallPart("t", {"a": 1}, tool_call_id="c")]),
        ModelRequest(parts=[ToolReturnPart("t", "ok", tool_call_id="c")]),
    ]
    assert asyncio.run(process(small)) == small
    big_args = [*small]
    big_args[1] = ModelResponse(parts=[ToolCallPart("t", {"a": "x " * 400}, tool_call_id="c")])
    tight = history_processor(60, options=ChatOptions(pin_last_user=False))
    assert asyncio.run(tight(small)) == small
    assert asyncio.run(tight(big_args)) == [big_args[0]]
