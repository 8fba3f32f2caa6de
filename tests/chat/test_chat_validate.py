"""validate_transcript: one test per provider rule."""

from __future__ import annotations

from typing import Any

import pytest

from cupel import InvalidConfigurationError
from cupel.chat import transcript_provider, validate_transcript


def calls(*ids: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids
        ],
    }


def tool(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "r"}


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


USER = {"role": "user", "content": "q"}
ASSISTANT = {"role": "assistant", "content": "a"}
SYSTEM = {"role": "system", "content": "s"}


def rules(messages: list[Any], provider: Any = None, for_request: bool = True) -> list[tuple[int, str]]:
    found = validate_transcript(messages, provider, for_request=for_request)
    return [(violation.index, violation.rule) for violation in found]


def test_valid_transcripts_have_no_violations() -> None:
    assert rules([SYSTEM, USER, calls("a", "b"), tool("b"), tool("a"), ASSISTANT, USER]) == []
    assert rules([SYSTEM, USER, use("a", "b"), result("b", "a"), ASSISTANT, USER]) == []
    assert rules([SYSTEM, USER, calls("a"), tool("a")]) == []  # the model answers the tool result


def test_a_request_ends_on_something_the_model_can_answer() -> None:
    for provider in ("openai", "anthropic"):
        assert rules([SYSTEM, USER, ASSISTANT], provider) == [(2, "ends-on-assistant")]
        # A system message after the reply does not make it answerable: it is sent first (Anthropic
        # hoists it, a selection puts system messages first).
        assert rules([USER, ASSISTANT, SYSTEM], provider) == [
            (1, "ends-on-assistant"),
            *([(2, "system-not-leading")] if provider == "anthropic" else []),
        ]
    assert rules([SYSTEM, USER, use("a"), result("a"), ASSISTANT], "anthropic") == [(4, "ends-on-assistant")]
    # A finished conversation (or an Anthropic prefill) is well formed; it is not a request.
    assert validate_transcript([SYSTEM, USER, ASSISTANT], for_request=False) == []
    assert validate_transcript([USER, use("a"), result("a"), ASSISTANT], for_request=False) == []
    assert str(validate_transcript([USER, ASSISTANT])[0]) == (
        "messages[1]: the conversation ends on an assistant reply without tool calls: nothing to answer"
        " (ends-on-assistant)"
    )


def test_an_empty_list_is_no_request() -> None:
    assert rules([], "openai") == [(0, "empty-conversation")]
    assert rules([], "anthropic") == [(0, "no-user-message")]  # one problem, not two
    assert validate_transcript([], "openai", for_request=False) == []
    with pytest.raises(TypeError, match="for_request must be a bool"):
        validate_transcript([USER], for_request=1)  # type: ignore[arg-type]


def test_anthropic_needs_a_user_message() -> None:
    assert rules([SYSTEM], "anthropic") == [(0, "no-user-message")]
    assert rules([SYSTEM, SYSTEM], "anthropic", for_request=False) == [(0, "no-user-message")]
    assert rules([SYSTEM, ASSISTANT], "anthropic", for_request=False) == [
        (1, "first-not-user"),
        (1, "no-user-message"),
    ]
    assert str(validate_transcript([SYSTEM], "anthropic")[0]) == (
        "messages[0]: the conversation has no user message (no-user-message)"
    )
    # OpenAI answers a system prompt alone.
    assert rules([SYSTEM], "openai") == []


def test_openai_orphaned_result_and_unanswered_call() -> None:
    assert rules([USER, tool("x")]) == [(1, "tool-result-orphaned")]
    assert rules([USER, calls("a", "b"), tool("a"), ASSISTANT, USER]) == [(1, "tool-call-unanswered")]
    # A result must come in the block right after its call, not later.
    assert rules([USER, calls("a"), USER, tool("a")]) == [
        (1, "tool-call-unanswered"),
        (3, "tool-result-orphaned"),
    ]
    assert rules([USER, calls("a")]) == [(1, "tool-call-unanswered")]


def test_openai_legacy_function_calls() -> None:
    function_call = {"role": "assistant", "content": None, "function_call": {"name": "h", "arguments": "{}"}}
    answer = {"role": "function", "name": "h", "content": "r"}
    assert rules([USER, function_call, answer]) == []
    assert rules([USER, answer]) == [(1, "tool-result-orphaned")]
    assert rules([USER, function_call, USER]) == [(1, "tool-call-unanswered")]


def test_anthropic_first_message_must_be_user() -> None:
    assert rules([SYSTEM, ASSISTANT, USER], "anthropic") == [(1, "first-not-user")]


def test_anthropic_alternation() -> None:
    assert rules([USER, USER], "anthropic") == [(1, "not-alternating")]
    assert rules([USER, ASSISTANT, ASSISTANT, USER], "anthropic") == [(2, "not-alternating")]


def test_anthropic_system_only_at_the_start() -> None:
    assert rules([SYSTEM, USER, SYSTEM, ASSISTANT, USER], "anthropic") == [(2, "system-not-leading")]


def test_anthropic_tool_use_answered_in_the_next_message() -> None:
    assert rules([USER, use("a"), result("a")], "anthropic") == []
    assert rules([USER, use("a", "b"), result("a")], "anthropic") == [(1, "tool-call-unanswered")]
    assert rules([USER, use("a")], "anthropic") == [(1, "tool-call-unanswered")]
    assert rules([USER, ASSISTANT, result("z")], "anthropic") == [(2, "tool-result-orphaned")]


def test_anthropic_has_no_tool_role() -> None:
    assert (2, "role-not-allowed") in rules([USER, calls("a"), tool("a")], "anthropic")


def test_provider_is_taken_from_the_format() -> None:
    assert transcript_provider([USER, use("a"), result("a")]) == "anthropic"
    assert transcript_provider([USER, calls("a"), tool("a")]) == "openai"
    assert rules([ASSISTANT, USER]) == []  # OpenAI accepts an assistant message first


def test_langchain_messages() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    call = {"id": "a", "name": "f", "args": {}}
    good = [HumanMessage("q"), AIMessage("", tool_calls=[call]), ToolMessage("r", tool_call_id="a")]
    assert transcript_provider(good) == "langchain"
    assert validate_transcript(good) == []
    assert rules(good[:2]) == [(1, "tool-call-unanswered")]  # type: ignore[arg-type]
    assert rules([good[0], good[2]]) == [(1, "tool-result-orphaned")]  # type: ignore[arg-type]
    # Held to the OpenAI rules, and to Anthropic's need for a user message (they are sent to Claude too).
    system = SystemMessage("s")
    assert rules([system]) == [(0, "no-user-message")]
    assert rules([], "langchain") == [(0, "no-user-message")]
    assert rules([system, AIMessage("a")]) == [(1, "no-user-message"), (1, "ends-on-assistant")]
    assert rules([good[0], AIMessage("a")], for_request=False) == []


def test_bad_arguments() -> None:
    with pytest.raises(InvalidConfigurationError, match="provider must be one of"):
        validate_transcript([USER], "gemini")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        validate_transcript("hello")  # type: ignore[arg-type]
    assert str(validate_transcript([USER, tool("x")])[0]).startswith("messages[1]: tool result 'x'")
