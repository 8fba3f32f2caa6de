"""Every chat integration sends the model a valid conversation for its provider format, at every budget.

Each integration's output, read in its provider's format, passes ``cupel.chat.validate_transcript`` and
starts with the system messages followed by a user message, from budgets that keep everything down to
budgets too small for the latest turn (where the agent hooks truncate instead of raising).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import pytest

from cupel import BudgetOverflowError, PinnedItemsExceedBudgetError
from cupel.chat import validate_transcript

BUDGETS = (2000, 400, 200, 120, 80, 50, 30, 20)  # the system prompt alone costs about 15


def assert_valid(messages: Sequence[Any], provider: str, roles: Sequence[str], strategy: Any = None) -> None:
    """No provider violation; system messages lead, and the first other message is a user's (except
    under ``"messages"``, which scores units one by one and promises only whole tool units)."""
    assert validate_transcript(messages, provider) == []  # type: ignore[arg-type]
    if strategy == "messages":
        return
    rest = [role for role in roles if role not in ("system", "developer")]
    assert roles[: len(roles) - len(rest)] == ["system"] * (len(roles) - len(rest))
    assert not rest or rest[0] == "user"


# LangChain and LangGraph ------------------------------------------------------------------------------


def lc_transcript() -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    return [
        SystemMessage("You are a weather bot."),
        HumanMessage("What is the weather in Oslo? " * 4),
        AIMessage(
            "",
            tool_calls=[
                {"id": "a", "name": "weather", "args": {"city": "Oslo"}},
                {"id": "b", "name": "wind", "args": {"city": "Oslo"}},
            ],
        ),
        ToolMessage("Sunny. " * 10, tool_call_id="a"),
        ToolMessage("Calm. " * 10, tool_call_id="b"),
        AIMessage("Sunny and calm in Oslo. " * 3),
        HumanMessage("And in Bergen?"),
        AIMessage("", tool_calls=[{"id": "c", "name": "weather", "args": {"city": "Bergen"}}]),
        ToolMessage("Rain. " * 20, tool_call_id="c"),
        AIMessage("", tool_calls=[{"id": "d", "name": "wind", "args": {"city": "Bergen"}}]),
        ToolMessage("Storm. " * 20, tool_call_id="d"),
    ]


def lc_roles(messages: Sequence[Any]) -> list[str]:
    from cupel.chat.langchain import message_views

    return [view.role for view in message_views(messages)]


@pytest.mark.parametrize("strategy", [None, "turns", "last", "messages"])
def test_langchain_trimmer_and_langgraph_hooks_send_valid_conversations(strategy: Any) -> None:
    pytest.importorskip("langgraph")
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import ModelRequest

    from cupel.integrations.langchain import message_trimmer
    from cupel.integrations.langgraph import CupelTrimMiddleware, pre_model_hook

    messages = lc_transcript()
    for budget in BUDGETS:
        hooked = pre_model_hook(budget, strategy=strategy).invoke({"messages": messages})
        outputs = [hooked["llm_input_messages"]]
        middleware = CupelTrimMiddleware(budget, strategy=strategy)
        request = ModelRequest(
            model=None,  # type: ignore[arg-type]
            messages=messages[1:],
            system_message=messages[0],
            tools=[],
            state={"messages": messages[1:]},  # type: ignore[typeddict-item]
            runtime=None,  # type: ignore[arg-type]
        )
        sent = middleware.wrap_model_call(request, lambda trimmed: trimmed)  # type: ignore[arg-type,return-value]
        outputs.append([messages[0], *sent.messages])  # type: ignore[attr-defined]
        try:
            outputs.append(message_trimmer(budget, strategy=strategy).invoke(messages))
        except Exception as error:  # the plain trimmer raises on overflow, like select_messages
            assert type(error).__name__ in ("BudgetOverflowError", "PinnedItemsExceedBudgetError")
        for kept in outputs:
            assert_valid(kept, "langchain", lc_roles(kept), strategy)
            if budget >= 2000:
                assert kept == messages


def test_agent_hooks_truncate_the_latest_turn_instead_of_raising() -> None:
    pytest.importorskip("langgraph")
    from cupel import BudgetOverflowError, OverflowStrategy, Policy
    from cupel.integrations.langchain import message_trimmer
    from cupel.integrations.langgraph import pre_model_hook
    from cupel.policy import chat

    messages = lc_transcript()
    kept = pre_model_hook(60).invoke({"messages": messages})["llm_input_messages"]
    assert kept == [messages[0], messages[6]]  # the question of the latest turn; its calls did not fit
    with pytest.raises(BudgetOverflowError):
        message_trimmer(60).invoke(messages)
    throwing: Policy = chat()
    assert throwing.overflow_strategy is OverflowStrategy.THROW
    with pytest.raises(BudgetOverflowError):
        pre_model_hook(60, throwing).invoke({"messages": messages})


# pydantic-ai ------------------------------------------------------------------------------------------


def pydantic_ai_history() -> list[Any]:
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    return [
        ModelRequest(parts=[SystemPromptPart("Be brief."), UserPromptPart("Weather in Oslo? " * 4)]),
        ModelResponse(
            parts=[
                ToolCallPart("weather", {"city": "Oslo"}, tool_call_id="a"),
                ToolCallPart("wind", {"city": "Oslo"}, tool_call_id="b"),
            ]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("weather", "Sunny. " * 10, tool_call_id="a"),
                ToolReturnPart("wind", "Calm. " * 10, tool_call_id="b"),
            ]
        ),
        ModelResponse(parts=[TextPart("Sunny and calm. " * 3)]),
        ModelRequest(parts=[UserPromptPart("And in Bergen?")]),
        ModelResponse(parts=[ToolCallPart("weather", {"city": "Bergen"}, tool_call_id="c")]),
        ModelRequest(parts=[ToolReturnPart("weather", "Rain. " * 20, tool_call_id="c")]),
        ModelResponse(parts=[ToolCallPart("wind", {"city": "Bergen"}, tool_call_id="d")]),
        ModelRequest(parts=[ToolReturnPart("wind", "Storm. " * 20, tool_call_id="d")]),
    ]


def pydantic_ai_as_openai(messages: Sequence[Any]) -> list[dict[str, Any]]:
    """pydantic-ai messages as OpenAI chat messages, mapped part by part as its OpenAI model sends them."""
    from pydantic_ai.messages import ModelRequest

    out: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ModelRequest):
            for part in message.parts:
                if part.part_kind == "system-prompt":
                    out.append({"role": "system", "content": part.content})
                elif part.part_kind == "user-prompt":
                    out.append({"role": "user", "content": str(part.content)})
                elif part.part_kind == "tool-return":
                    out.append(
                        {
                            "role": "tool",
                            "tool_call_id": part.tool_call_id,
                            "content": part.model_response_str(),
                        }
                    )
            continue
        calls = [
            {
                "id": part.tool_call_id,
                "type": "function",
                "function": {"name": part.tool_name, "arguments": json.dumps(part.args)},
            }
            for part in message.parts
            if part.part_kind == "tool-call"
        ]
        text = "".join(part.content for part in message.parts if part.part_kind == "text")
        out.append({"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})})
    return out


@pytest.mark.parametrize("strategy", [None, "turns", "last", "messages"])
def test_pydantic_ai_processors_send_valid_conversations(strategy: Any) -> None:
    pytest.importorskip("pydantic_ai")
    from cupel.integrations.pydantic_ai import history_processor

    history = pydantic_ai_history()
    for budget in BUDGETS:
        try:
            kept = asyncio.run(history_processor(budget, strategy=strategy)(list(history)))
        except (PinnedItemsExceedBudgetError, BudgetOverflowError):
            # The first request (system prompt and first question) is pinned; below it, or below it
            # with the task and the newest unit, there is nothing answerable to send.
            assert budget < 80
            continue
        sent = pydantic_ai_as_openai(kept)
        assert_valid(sent, "openai", [str(message["role"]) for message in sent], strategy)
        if budget >= 2000 and strategy != "last":
            assert kept == history
        elif budget >= 2000:
            # The first request holds the system prompt, so it is pinned as one: a "last" window
            # starts on the next user prompt, not on the reply to the first one.
            assert kept == [history[0], *history[4:]]


# OpenAI Agents SDK ------------------------------------------------------------------------------------


def agents_items() -> list[dict[str, Any]]:
    def call(call_id: str, city: str) -> dict[str, Any]:
        return {"type": "function_call", "call_id": call_id, "name": "weather", "arguments": json.dumps(city)}

    def output(call_id: str, text: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": call_id, "output": text}

    return [
        {"role": "user", "content": "Weather in Oslo? " * 4},
        call("a", "Oslo"),
        call("b", "Oslo"),
        output("a", "Sunny. " * 10),
        output("b", "Calm. " * 10),
        {"role": "assistant", "content": [{"type": "output_text", "text": "Sunny and calm. " * 3}]},
        {"role": "user", "content": "And in Bergen?"},
        call("c", "Bergen"),
        output("c", "Rain. " * 20),
        call("d", "Bergen"),
        output("d", "Storm. " * 20),
    ]


def agents_as_openai(instructions: str | None, items: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses items as chat messages: a run of calls is one assistant message, outputs tool messages."""
    out: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call":
            call = {"id": item["call_id"], "type": "function", "function": {"name": item["name"]}}
            if out and out[-1]["role"] == "assistant" and out[-1].get("tool_calls"):
                out[-1]["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind == "function_call_output":
            out.append({"role": "tool", "tool_call_id": item["call_id"], "content": item["output"]})
        else:
            out.append({"role": item["role"], "content": json.dumps(item["content"])})
    return out


@pytest.mark.parametrize("strategy", [None, "turns", "last", "messages"])
def test_openai_agents_input_filter_sends_valid_conversations(strategy: Any) -> None:
    pytest.importorskip("agents")
    from agents import Agent
    from agents.run_config import CallModelData, ModelInputData

    from cupel.integrations.openai_agents import input_filter

    items = agents_items()
    agent = Agent(name="forecaster", instructions="Be brief.")
    for budget in BUDGETS:
        data = CallModelData(
            model_data=ModelInputData(input=list(items), instructions="Be brief."), agent=agent, context=None
        )
        kept = asyncio.run(input_filter(budget, strategy=strategy)(data)).input
        sent = agents_as_openai("Be brief.", kept)
        assert_valid(sent, "openai", [str(message["role"]) for message in sent], strategy)
        if budget >= 2000:
            assert kept == items


# aselect_messages ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["turns", "last", "messages"])
def test_aselect_messages_takes_every_strategy_and_stays_valid(strategy: Any) -> None:
    from cupel import OverflowStrategy, Policy
    from cupel.chat import aselect_messages, select_messages
    from cupel.policy import chat

    items = agents_as_openai("Be brief.", agents_items())
    truncating: Policy = chat().replace(overflow_strategy=OverflowStrategy.TRUNCATE)
    for budget in BUDGETS[:-3]:
        selection = asyncio.run(aselect_messages(items, budget, truncating, strategy=strategy))
        assert selection.messages == select_messages(items, budget, truncating, strategy=strategy).messages
        kept = list(selection.messages)
        assert_valid(kept, "openai", [str(message["role"]) for message in kept], strategy)


def test_summaries_are_placed_after_the_system_message_and_stay_valid() -> None:
    pytest.importorskip("langgraph")
    from langchain_core.messages import SystemMessage

    from cupel import CupelTypeError
    from cupel.integrations.langgraph import pre_model_hook

    messages = lc_transcript()
    kept = pre_model_hook(200, summarize=True, summary_tokens=30).invoke({"messages": messages})
    sent = kept["llm_input_messages"]
    assert sent[0] is messages[0] and isinstance(sent[1], SystemMessage) and sent[1] not in messages
    assert_valid(sent, "langchain", lc_roles(sent))

    async def count(text: str) -> int:
        return len(text)

    with pytest.raises(CupelTypeError, match="summarize= needs a synchronous counter"):
        pre_model_hook(200, counter=count, summarize=True, summary_tokens=30)


def test_repair_lets_a_crashed_history_through() -> None:
    pytest.importorskip("langgraph")
    from langchain_core.messages import AIMessage, HumanMessage

    from cupel.integrations.langgraph import pre_model_hook

    crashed = [*lc_transcript(), HumanMessage("Retry?")]
    crashed.insert(7, AIMessage("", tool_calls=[{"id": "lost", "name": "weather", "args": {}}]))
    with pytest.raises(Exception, match="lost"):
        pre_model_hook(2000).invoke({"messages": crashed})
    sent = pre_model_hook(2000, on_invalid="repair").invoke({"messages": crashed})["llm_input_messages"]
    assert crashed[7] not in sent and sent[-1] is crashed[-1]
    assert_valid(sent, "langchain", lc_roles(sent))
