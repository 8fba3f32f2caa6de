"""cupel.integrations.langgraph in real agent graphs: langchain's create_agent and LangGraph's
create_react_agent, driven by the framework's fake chat model."""

from __future__ import annotations

import asyncio
import warnings
from typing import Any

import pytest

pytest.importorskip("langgraph")
pytest.importorskip("langchain.agents")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.prebuilt import create_react_agent
from pydantic import Field

from cupel.integrations.langgraph import CupelTrimMiddleware, pre_model_hook


class ToolCallingFake(GenericFakeChatModel):
    """GenericFakeChatModel that accepts bound tools and records what each call was sent."""

    calls: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.calls.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


@tool
def weather(city: str) -> str:
    """Today's weather for a city."""
    return f"Sunny in {city}, 21 degrees, light wind. " * 6


def model() -> ToolCallingFake:
    replies = iter(
        [
            AIMessage("", tool_calls=[{"id": "call-9", "name": "weather", "args": {"city": "Oslo"}}]),
            AIMessage("Sunny in Oslo."),
        ]
    )
    fake = ToolCallingFake(messages=replies)
    return fake


HISTORY = [
    HumanMessage("An old question about something else entirely. " * 10),
    AIMessage("An old, long answer about something else entirely. " * 10),
    HumanMessage("What is the weather in Oslo?"),
]


def assert_valid_and_trimmed(calls: list[list[BaseMessage]], stored: list[BaseMessage]) -> None:
    assert len(calls) == 2
    for sent in calls:
        assert HISTORY[0] not in sent  # the long old question was trimmed from what the model saw
        calls_made = {call["id"] for m in sent if isinstance(m, AIMessage) for call in m.tool_calls}
        results = {m.tool_call_id for m in sent if isinstance(m, ToolMessage)}
        assert calls_made == results
    # The second call sees the tool call and its result together.
    assert any(isinstance(message, ToolMessage) for message in calls[1])
    # The stored history is whole.
    assert stored[: len(HISTORY)] == HISTORY


def test_middleware_trims_what_create_agent_sends_the_model() -> None:
    fake = model()
    agent = create_agent(fake, [weather], system_prompt="Be brief.", middleware=[CupelTrimMiddleware(150)])
    result = agent.invoke({"messages": list(HISTORY)})
    assert result["messages"][-1].content == "Sunny in Oslo."
    assert_valid_and_trimmed(fake.calls, result["messages"])
    # The system prompt is still sent first.
    assert all(isinstance(sent[0], SystemMessage) for sent in fake.calls)


def test_middleware_runs_in_async_graphs_with_an_async_counter() -> None:
    async def count(text: str) -> int:
        return max(1, len(text) // 4)

    fake = model()
    agent = create_agent(fake, [weather], middleware=[CupelTrimMiddleware(150, counter=count)])
    result = asyncio.run(agent.ainvoke({"messages": list(HISTORY)}))
    assert_valid_and_trimmed(fake.calls, result["messages"])


def test_pre_model_hook_trims_the_model_input_of_create_react_agent() -> None:
    fake = model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in favour of create_agent
        agent = create_react_agent(fake, [weather], pre_model_hook=pre_model_hook(150, tools=[weather]))
    result = agent.invoke({"messages": list(HISTORY)})
    assert result["messages"][-1].content == "Sunny in Oslo."
    assert_valid_and_trimmed(fake.calls, result["messages"])


def test_pre_model_hook_can_replace_the_stored_history() -> None:
    fake = model()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = create_react_agent(fake, [weather], pre_model_hook=pre_model_hook(150, update_state=True))
    result = agent.invoke({"messages": list(HISTORY)})
    assert HISTORY[0] not in result["messages"]
    assert result["messages"][-1].content == "Sunny in Oslo."


def test_pre_model_hook_output_shapes() -> None:
    hook = pre_model_hook(10_000)
    assert hook.invoke({"messages": HISTORY}) == {"llm_input_messages": HISTORY}
    replaced = pre_model_hook(10_000, update_state=True).invoke({"messages": HISTORY})
    assert replaced["messages"][1:] == HISTORY
    assert asyncio.run(hook.ainvoke({"messages": HISTORY})) == {"llm_input_messages": HISTORY}
