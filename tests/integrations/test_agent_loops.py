"""A scripted agent loop driven past its budget through each framework's own hook.

One task, then one tool call with a ~100-token result per step, budget 500: at every step the hook
sends the newest tool result, a valid conversation (``validate_transcript``), and never raises.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from cupel.chat import validate_transcript
from tests.integrations.test_valid_conversations import agents_as_openai, pydantic_ai_as_openai

BUDGET = 500
STEPS = 14
TASK = "Fix the failing deploy. Find out why the pipeline fails and tell me what to change."


def _result(step: int) -> str:
    return f"step {step} log: " + "error retry timeout webhook " * 14  # about 100 tokens


def test_langgraph_pre_model_hook_keeps_the_newest_tool_result() -> None:
    pytest.importorskip("langgraph")
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from cupel.integrations.langgraph import pre_model_hook

    hook = pre_model_hook(BUDGET)
    messages: list[Any] = [SystemMessage("You are a deploy agent."), HumanMessage(TASK)]
    for step in range(STEPS):
        messages.append(AIMessage("", tool_calls=[{"id": f"c{step}", "name": "logs", "args": {"n": step}}]))
        messages.append(ToolMessage(_result(step), tool_call_id=f"c{step}"))
        sent = hook.invoke({"messages": messages})["llm_input_messages"]
        assert sent[-1] is messages[-1] and sent[1] is messages[1]  # the newest result, the task
        assert validate_transcript(sent, "langchain") == []


def test_langchain_create_agent_middleware_keeps_the_newest_tool_result() -> None:
    pytest.importorskip("langchain.agents")
    from langchain.agents.middleware import ModelRequest
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from cupel.integrations.langgraph import CupelTrimMiddleware

    middleware = CupelTrimMiddleware(BUDGET)
    system = SystemMessage("You are a deploy agent.")
    messages: list[Any] = [HumanMessage(TASK)]
    for step in range(STEPS):
        messages.append(AIMessage("", tool_calls=[{"id": f"c{step}", "name": "logs", "args": {"n": step}}]))
        messages.append(ToolMessage(_result(step), tool_call_id=f"c{step}"))
        request = ModelRequest(
            model=None,  # type: ignore[arg-type]
            messages=list(messages),
            system_message=system,
            tools=[],
            state={"messages": list(messages)},  # type: ignore[typeddict-item]
            runtime=None,  # type: ignore[arg-type]
        )
        sent = middleware.wrap_model_call(request, lambda trimmed: trimmed).messages  # type: ignore[arg-type,attr-defined]
        assert sent[-1] is messages[-1] and sent[0] is messages[0]
        assert validate_transcript([system, *sent], "langchain") == []


def test_openai_agents_input_filter_keeps_the_newest_tool_result() -> None:
    pytest.importorskip("agents")
    from agents import Agent
    from agents.run_config import CallModelData, ModelInputData

    from cupel.integrations.openai_agents import input_filter

    agent = Agent(name="deployer", instructions="You are a deploy agent.")
    filtered = input_filter(BUDGET)
    items: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for step in range(STEPS):
        items.append(
            {"type": "function_call", "call_id": f"c{step}", "name": "logs", "arguments": json.dumps(step)}
        )
        items.append({"type": "function_call_output", "call_id": f"c{step}", "output": _result(step)})
        data = CallModelData(
            model_data=ModelInputData(input=list(items), instructions="You are a deploy agent."),
            agent=agent,
            context=None,
        )
        kept = asyncio.run(filtered(data)).input
        assert kept[-1] is items[-1] and kept[0] is items[0]
        assert validate_transcript(agents_as_openai("You are a deploy agent.", kept), "openai") == []


def test_pydantic_ai_history_processor_keeps_the_newest_tool_result() -> None:
    pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import (
        ModelRequest,
        ModelResponse,
        SystemPromptPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    from cupel.integrations.pydantic_ai import history_processor

    processor = history_processor(BUDGET)
    history: list[Any] = [
        ModelRequest(parts=[SystemPromptPart("You are a deploy agent."), UserPromptPart(TASK)])
    ]
    for step in range(STEPS):
        history.append(ModelResponse(parts=[ToolCallPart("logs", {"n": step}, tool_call_id=f"c{step}")]))
        history.append(ModelRequest(parts=[ToolReturnPart("logs", _result(step), tool_call_id=f"c{step}")]))
        kept = asyncio.run(processor(list(history)))
        assert kept[-1] is history[-1] and kept[0] is history[0]
        assert validate_transcript(pydantic_ai_as_openai(kept), "openai") == []


def test_the_loop_outgrows_its_budget() -> None:
    from cupel.chat import message_token_counts

    messages: list[dict[str, Any]] = [{"role": "user", "content": TASK}]
    for step in range(STEPS):
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": _result(step)})
    counts = message_token_counts([{"role": "user", "content": message["content"]} for message in messages])
    assert sum(counts) > 2 * BUDGET


def test_langgraph_pre_model_hook_clears_older_tool_results_first() -> None:
    pytest.importorskip("langgraph")
    import dataclasses

    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from cupel.integrations.langgraph import pre_model_hook
    from cupel.model import OverflowStrategy
    from cupel.policy import ChatSettings, ToolResultClearing, chat

    clearing = ToolResultClearing(keep=2)
    policy = dataclasses.replace(
        chat(), overflow_strategy=OverflowStrategy.TRUNCATE, chat=ChatSettings(clear_tool_results=clearing)
    )
    hook, plain = pre_model_hook(BUDGET, policy), pre_model_hook(BUDGET)
    messages: list[Any] = [SystemMessage("You are a deploy agent."), HumanMessage(TASK)]
    for step in range(STEPS):
        messages.append(AIMessage("", tool_calls=[{"id": f"c{step}", "name": "logs", "args": {"n": step}}]))
        messages.append(ToolMessage(_result(step), tool_call_id=f"c{step}", name="logs"))
        before = [message.model_dump() for message in messages]
        sent = hook.invoke({"messages": messages})["llm_input_messages"]
        assert [message.model_dump() for message in messages] == before  # the state is not changed
        assert sent[-1] is messages[-1] and sent[-3] is messages[-3] and sent[1] is messages[1]
        assert validate_transcript(sent, "langchain") == []
        cleared = [
            m for m in sent if isinstance(m, ToolMessage) and m.content.startswith("[tool result cleared")
        ]
        for message in cleared:  # new ToolMessages answering the same calls, from the same tool
            original = next(m for m in messages if getattr(m, "tool_call_id", None) == message.tool_call_id)
            assert message is not original and message.name == "logs"
        if step >= 4:  # past the budget: older results are cleared, and more calls are sent than without
            assert cleared
            calls = [m for m in sent if isinstance(m, AIMessage)]
            unclear = [
                m
                for m in plain.invoke({"messages": messages})["llm_input_messages"]
                if isinstance(m, AIMessage)
            ]
            assert len(calls) > len(unclear)


def test_a_repairing_hook_clears_older_tool_results_as_the_checking_one_does() -> None:
    pytest.importorskip("langgraph")
    import dataclasses

    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from cupel.integrations.langgraph import pre_model_hook
    from cupel.model import OverflowStrategy
    from cupel.policy import ChatSettings, ToolResultClearing, chat

    policy = dataclasses.replace(
        chat(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
        chat=ChatSettings(clear_tool_results=ToolResultClearing(keep=2)),
    )
    checking, repairing = pre_model_hook(BUDGET, policy), pre_model_hook(BUDGET, policy, on_invalid="repair")
    messages: list[Any] = [SystemMessage("You are a deploy agent."), HumanMessage(TASK)]
    cleared_any = False
    for step in range(STEPS):
        messages.append(AIMessage("", tool_calls=[{"id": f"c{step}", "name": "logs", "args": {"n": step}}]))
        messages.append(ToolMessage(_result(step), tool_call_id=f"c{step}", name="logs"))
        sent = [m.model_dump() for m in repairing.invoke({"messages": messages})["llm_input_messages"]]
        assert sent == [m.model_dump() for m in checking.invoke({"messages": messages})["llm_input_messages"]]
        cleared_any = cleared_any or any(str(m["content"]).startswith("[tool result cleared") for m in sent)
    assert cleared_any
