"""cupel.integrations.openai_agents in real OpenAI Agents SDK runs.

The SDK ships no offline test model, so a scripted ``agents.models.interface.Model`` answers: first a
function call, then text, as a real model would.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from cupel.integrations.openai_agents import input_filter, item_units, unit_view


class ScriptedModel(Model):
    """Calls ``weather`` on odd turns and answers in text on even ones; records every input."""

    def __init__(self) -> None:
        self.turn = 0
        self.inputs: list[list[Any]] = []

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(list(input))
        self.turn += 1
        output: list[Any]
        if self.turn % 2:
            output = [
                ResponseFunctionToolCall(
                    type="function_call",
                    call_id=f"call-{self.turn}",
                    name="weather",
                    arguments='{"city": "Oslo"}',
                    id=f"fc-{self.turn}",
                    status="completed",
                )
            ]
        else:
            text = ResponseOutputText(type="output_text", text="Sunny in Oslo. " * 8, annotations=[])
            output = [
                ResponseOutputMessage(
                    id=f"msg-{self.turn}",
                    type="message",
                    role="assistant",
                    status="completed",
                    content=[text],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


@function_tool
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"Sunny in {city}, 21 degrees. " * 8


def calls_answered(items: list[Any]) -> bool:
    calls = {item["call_id"] for item in items if item.get("type") == "function_call"}
    outputs = {item["call_id"] for item in items if item.get("type") == "function_call_output"}
    return calls == outputs


def test_input_filter_trims_model_input_and_keeps_calls_with_outputs() -> None:
    model = ScriptedModel()
    agent = Agent(name="forecaster", instructions="Be brief.", model=model, tools=[weather])
    config = RunConfig(call_model_input_filter=input_filter(220), tracing_disabled=True)

    async def conversation() -> list[Any]:
        result = await Runner.run(agent, "What is the weather in Oslo? " * 6, run_config=config)
        for question in ("And tomorrow?", "And the day after?"):
            history = [*result.to_input_list(), {"role": "user", "content": question}]
            result = await Runner.run(agent, history, run_config=config)
        return result.to_input_list()

    stored = asyncio.run(conversation())
    assert len(model.inputs) == 6
    assert max(len(sent) for sent in model.inputs) < len(stored)
    for sent in model.inputs:
        assert calls_answered(sent)
        assert sent[-1].get("role") == "user" or sent[-1].get("type") == "function_call_output"


def test_instructions_and_tool_schemas_are_charged() -> None:
    items = [
        {"role": "user", "content": "first question " * 20},
        {"role": "assistant", "content": "first answer " * 20},
        {"role": "user", "content": "now?"},
    ]

    def sent(agent: Agent[Any], budget: int) -> list[Any]:
        from agents.run_config import CallModelData, ModelInputData

        data = CallModelData(
            model_data=ModelInputData(input=items, instructions=agent.instructions), agent=agent, context=None
        )
        return asyncio.run(input_filter(budget)(data)).input

    plain = Agent(name="plain")
    tooled = Agent(name="tooled", instructions="Answer in one short sentence. " * 8, tools=[weather])
    assert sent(plain, 170) == items
    kept = sent(tooled, 170)
    assert kept[-1] is items[-1] and len(kept) < len(items)
    assert all(any(item is original for original in items) for item in kept)


def test_one_model_turn_is_one_unit_with_its_outputs() -> None:
    items = [
        {"role": "user", "content": "hi"},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "think"}]},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "1"},
        {"type": "function_call_output", "call_id": "b", "output": "2"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"role": "assistant", "content": [{"type": "output_text", "text": "done"}]},
    ]
    units = item_units(items)
    assert [len(unit) for unit in units] == [1, 3, 1, 1, 2]
    view = unit_view(units[1], frozenset({"a", "b"}))
    assert view.role == "assistant"
    assert [call["id"] for call in view.tool_calls] == ["a", "b"]  # type: ignore[attr-defined]
    assert view.content == [{"type": "reasoning", "reasoning": "think"}]
    # A provider-run call with no output item is charged as content, not as a call needing a result.
    hosted = unit_view(units[4], frozenset({"a", "b"}))
    assert hosted.tool_calls is None
