"""on_invalid="repair": broken histories (as crashed agent runs leave them) become valid ones."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cupel import InvalidConfigurationError
from cupel.chat import (
    OrphanedToolResult,
    UnansweredToolCall,
    aselect_messages,
    select_messages,
    validate_transcript,
)


def calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "result"}


SYSTEM = {"role": "system", "content": "s"}
USER = {"role": "user", "content": "question"}
ANSWER = {"role": "assistant", "content": "answer"}
FUNCTION_CALL = {"role": "assistant", "content": None, "function_call": {"name": "h", "arguments": "{}"}}
FUNCTION_RESULT = {"role": "function", "name": "h", "content": "r"}


def use(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": i, "name": "f", "input": {}} for i in ids],
    }


def result(*ids: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": i, "content": "r"} for i in ids],
    }


CASES = {
    "orphaned result": ([SYSTEM, USER, tool("gone"), ANSWER, USER], {2: OrphanedToolResult("gone")}),
    "call without result (crash)": ([SYSTEM, USER, ANSWER, USER, calls("c1")], {4: UnansweredToolCall("c1")}),
    "one of parallel calls unanswered": (
        [SYSTEM, USER, calls("a", "b"), tool("a"), ANSWER, USER],
        {2: UnansweredToolCall("b"), 3: OrphanedToolResult("a")},
    ),
    "anthropic tool_use without result": (
        [
            USER,
            use("t1"),
        ],
        {1: UnansweredToolCall("t1")},
    ),
    "anthropic orphaned tool_result": ([USER, ANSWER, result("t9"), ANSWER], {2: OrphanedToolResult("t9")}),
    "legacy function call unanswered": ([USER, FUNCTION_CALL], {1: UnansweredToolCall("function_call")}),
    "legacy function result orphaned": (
        [USER, FUNCTION_RESULT, ANSWER],
        {1: OrphanedToolResult("function_call")},
    ),
    "reused id before its result": (
        [USER, calls("x"), calls("x"), tool("x"), ANSWER],
        {1: UnansweredToolCall("x")},
    ),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("strategy", ["turns", "last", "messages"])
def test_repair_drops_the_broken_messages_and_reports_each(name: str, strategy: str) -> None:
    messages, expected = CASES[name]
    with pytest.raises(InvalidConfigurationError):
        select_messages(messages, 10_000, strategy=strategy)  # type: ignore[arg-type]
    repaired = select_messages(messages, 10_000, strategy=strategy, on_invalid="repair")  # type: ignore[arg-type]
    kept = {id(message) for message in repaired.messages}
    dropped = [index for index, message in enumerate(messages) if id(message) not in kept]
    assert dropped == sorted(expected)
    # Repair leaves a well-formed history; a case ending on its answer is still a finished one.
    assert validate_transcript(list(repaired.messages), "openai", for_request=False) == []
    reasons = {
        entry.item.metadata["cupel:chat.indices"][0]: entry.reason
        for entry in repaired.report.excluded
        if entry.reason.name in ("OrphanedToolResult", "UnansweredToolCall")
    }
    assert reasons == expected
    assert repaired.report.total_candidates == len(repaired.report.included) + len(repaired.report.excluded)


def test_a_valid_history_is_not_changed_by_repair() -> None:
    messages = [SYSTEM, USER, calls("a"), tool("a"), ANSWER, USER]
    plain = select_messages(messages, 10_000)
    repaired = select_messages(messages, 10_000, on_invalid="repair")
    assert repaired.messages == plain.messages
    assert repaired.report.excluded == ()


def test_on_invalid_is_checked() -> None:
    with pytest.raises(InvalidConfigurationError, match="on_invalid must be"):
        select_messages([USER], 100, on_invalid="ignore")  # type: ignore[arg-type]


def test_repair_with_langchain_messages() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from cupel.chat.langchain import select_messages as select_langchain

    broken = [HumanMessage("q"), AIMessage("", tool_calls=[{"id": "c", "name": "f", "args": {}}])]
    orphan = [HumanMessage("q"), ToolMessage("r", tool_call_id="z"), AIMessage("a")]
    assert select_langchain(broken, 1000, on_invalid="repair").messages == (broken[0],)
    assert select_langchain(orphan, 1000, on_invalid="repair").messages == (orphan[0], orphan[2])


class _AsyncLength:
    """An async counter: one token per four characters."""

    async def acount(self, text: str) -> int:
        return len(text) // 4


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("counter", [None, _AsyncLength()], ids=["sync", "async"])
def test_aselect_repairs_a_broken_history(name: str, counter: object) -> None:
    messages, expected = CASES[name]
    with pytest.raises(InvalidConfigurationError):
        asyncio.run(aselect_messages(messages, 10_000, counter=counter))  # type: ignore[arg-type]
    repaired = asyncio.run(aselect_messages(messages, 10_000, counter=counter, on_invalid="repair"))  # type: ignore[arg-type]
    kept = {id(message) for message in repaired.messages}
    assert [index for index, message in enumerate(messages) if id(message) not in kept] == sorted(expected)
    assert validate_transcript(list(repaired.messages), "openai", for_request=False) == []
