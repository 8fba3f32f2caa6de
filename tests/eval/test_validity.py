"""Provider validity of a trimmed transcript, one rule per test."""

from __future__ import annotations

from cupel.eval.validity import transcript_problems

SYSTEM = {"role": "system", "content": "s"}
USER = {"role": "user", "content": "q"}
ANSWER = {"role": "assistant", "content": "a"}
CALL = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "f"}}]}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "r"}


def test_a_well_formed_transcript_is_valid() -> None:
    assert transcript_problems([SYSTEM, USER, CALL, RESULT, ANSWER, USER]) == []


def test_a_reply_without_its_question_is_invalid() -> None:
    assert transcript_problems([SYSTEM, ANSWER, USER]) == [
        "the conversation starts with 'assistant', not a user message"
    ]


def test_no_user_message_is_invalid() -> None:
    assert transcript_problems([SYSTEM]) == ["no user message"]


def test_late_system_message_is_invalid() -> None:
    assert "a system message after the conversation started" in transcript_problems([USER, SYSTEM, ANSWER])


def test_tool_calls_need_their_results_and_results_their_calls() -> None:
    unanswered = "messages[1]: tool call 'c1' is not answered right after it (tool-call-unanswered)"
    assert transcript_problems([USER, CALL, ANSWER, USER]) == [unanswered]
    assert transcript_problems([USER, CALL]) == [unanswered]
    assert transcript_problems([USER, RESULT]) == [
        "messages[1]: tool result 'c1' answers no call of the message before it (tool-result-orphaned)"
    ]


def test_a_window_ending_on_a_reply_has_nothing_to_answer() -> None:
    assert transcript_problems([SYSTEM, USER, ANSWER]) == [
        "messages[2]: the conversation ends on an assistant reply without tool calls: nothing to answer"
        " (ends-on-assistant)"
    ]
    assert transcript_problems([SYSTEM, USER, CALL, RESULT]) == []


def test_tool_links_and_the_last_message_are_those_of_cupel_chat_validate_transcript() -> None:
    from cupel.chat import validate_transcript

    for messages in ([USER, CALL, ANSWER], [USER, RESULT], [SYSTEM, USER, CALL, RESULT, ANSWER]):
        assert transcript_problems(messages) == [str(v) for v in validate_transcript(messages, "openai")]


def test_anthropic_blocks_are_read() -> None:
    use = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]}
    assert transcript_problems([USER, use, result, ANSWER, USER], "anthropic") == []
    assert transcript_problems([USER, use, ANSWER, USER], "anthropic") == [
        "messages[1]: tool call 't1' is not answered right after it (tool-call-unanswered)"
    ]
    # Anthropic merges consecutive same-role turns, so two user messages in a row are no problem.
    assert transcript_problems([USER, USER, ANSWER, USER], "anthropic") == []
    assert transcript_problems([USER, use, result, ANSWER], "anthropic") == [
        "messages[3]: the conversation ends on an assistant reply without tool calls: nothing to answer"
        " (ends-on-assistant)"
    ]
