"""The turns and last strategies, rule by rule, and the agent example at three budgets."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cupel import BudgetOverflowError, OverflowStrategy, PinnedItemsExceedBudgetError
from cupel.chat import (
    IncompleteTurn,
    message_token_counts,
    messages_to_items,
    select_messages,
    split_turns,
    validate_transcript,
)
from cupel.policy import ChatSettings, get_preset, loads_policy
from cupel.tokens import FunctionCounter

WORDS = FunctionCounter(lambda text: len(text.split()))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent-conversation.json"


def call(call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": "{}"}}


def transcript() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "task: fix the flaky test in the payments service"},  # turn 1
        {"role": "assistant", "content": "on it, reading the logs now"},
        {"role": "user", "content": "what did the logs say"},  # turn 2
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c2", "content": "timeout " * 20},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "a timeout in the webhook retry"},
        {"role": "user", "content": "and the fix"},  # turn 3
        {"role": "assistant", "content": "raise the retry limit"},
        {"role": "user", "content": "do it"},  # turn 4
    ]


def kept(result: Any, messages: list[dict[str, Any]]) -> list[int]:
    by_id = {id(message): index for index, message in enumerate(messages)}
    return [by_id[id(message)] for message in result.messages]


def cost(messages: list[dict[str, Any]], *indices: int) -> int:
    costs = message_token_counts(messages, counter=WORDS)
    return sum(costs[index] for index in indices)


def test_turns_split_on_user_messages() -> None:
    split = split_turns(messages_to_items(transcript()))
    assert [item.metadata["cupel:chat.indices"] for item in split.system] == [(0,)]
    assert [(turn.number, turn.indices) for turn in split.turns] == [
        (1, (1, 2)),
        (2, (3, 4, 5, 6, 7)),
        (3, (8, 9)),
        (4, (10,)),
    ]
    assert split.turns[1].roles == ("user", "assistant", "tool", "tool", "assistant")


def test_an_anthropic_tool_result_message_does_not_open_a_turn() -> None:
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "r"}]},
        {"role": "assistant", "content": "a"},
    ]
    assert [turn.indices for turn in split_turns(messages_to_items(messages)).turns] == [(0, 1, 2, 3)]


def test_a_preamble_before_the_first_user_message_is_turn_zero() -> None:
    messages = [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "hi"}]
    assert [turn.number for turn in split_turns(messages_to_items(messages)).turns] == [0, 1]


def test_turns_keep_the_latest_then_a_recent_run_of_whole_turns() -> None:
    messages = transcript()
    budget = cost(messages, 0, 10, 8, 9, 3, 4, 5, 6, 7)
    result = select_messages(messages, budget, counter=WORDS, recent_share=1.0)
    assert kept(result, messages) == [0, 3, 4, 5, 6, 7, 8, 9, 10]
    # One token less and turn 2 goes whole; turn 1 does not fit either way it is ranked.
    smaller = select_messages(messages, budget - 1, counter=WORDS, recent_share=1.0)
    assert kept(smaller, messages) == [0, 1, 2, 8, 9, 10]


def test_older_turns_compete_by_score_after_the_recent_share() -> None:
    messages = transcript()
    budget = cost(messages, 0, 10, 8, 9, 1, 2)
    # With no recent run, the older turns are ranked by the policy: turn 3 (newest) fits, then turn 1.
    result = select_messages(messages, budget, counter=WORDS, recent_share=0.0)
    assert kept(result, messages) == [0, 1, 2, 8, 9, 10]
    reasons = {entry.item.metadata["cupel:chat.indices"]: entry.reason for entry in result.report.excluded}
    assert reasons[(4, 5, 6)].name == "BudgetExceeded"
    assert reasons[(3,)] == reasons[(4, 5, 6)]  # a turn goes as a whole, for one reason


def test_keep_first_turn_keeps_the_task_statement() -> None:
    messages = transcript()
    budget = cost(messages, 0, 10, 1, 2)
    without = select_messages(messages, budget, counter=WORDS)
    assert 1 not in kept(without, messages)
    with_first = select_messages(messages, budget, counter=WORDS, keep_first_turn=True)
    assert kept(with_first, messages) == [0, 1, 2, 10]
    assert kept(select_messages(messages, budget, policy="tool_use", counter=WORDS), messages) == [
        0,
        1,
        2,
        10,
    ]


def test_latest_turn_overflow_keeps_the_task_and_the_newest_units_or_proceeds() -> None:
    messages = transcript()[:8]  # the latest turn is turn 2: question 3, tool unit 4-6, answer 7
    budget = cost(messages, 0, 3, 4, 5, 6) - 1
    truncate = get_preset("chat").replace(overflow_strategy=OverflowStrategy.TRUNCATE)
    for policy in (None, truncate):
        cut = select_messages(messages, budget, policy=policy, counter=WORDS)
        # The task (3) and the newest unit (7) stay, the tool unit between them goes; turn 1 fills
        # what is left.
        assert kept(cut, messages) == [0, 1, 2, 3, 7]
        # Well formed; it ends on the answer 7 because the transcript does (a finished turn).
        assert validate_transcript(list(cut.messages), for_request=False) == []
        reasons = {entry.item.metadata["cupel:chat.indices"]: entry.reason for entry in cut.report.excluded}
        assert reasons[(4, 5, 6)].name == "BudgetExceeded"  # type: ignore[attr-defined]
    proceed = get_preset("chat").replace(overflow_strategy=OverflowStrategy.PROCEED)
    over = select_messages(messages, budget, policy=proceed, counter=WORDS)
    assert kept(over, messages) == [0, 3, 4, 5, 6, 7] and over.tokens > budget


def test_a_task_and_newest_unit_that_do_not_fit_raise_or_keep_the_task() -> None:
    messages = transcript()[:8]
    budget = cost(messages, 0, 3, 7) - 1
    with pytest.raises(BudgetOverflowError, match=f"require {cost(messages, 0, 3, 7)} tokens.* {budget}"):
        select_messages(messages, budget, counter=WORDS)
    truncate = get_preset("chat").replace(overflow_strategy=OverflowStrategy.TRUNCATE)
    cut = select_messages(messages, budget, policy=truncate, counter=WORDS)
    assert kept(cut, messages)[:2] == [0, 3] and cut.messages[-1] is messages[3]
    with pytest.raises(BudgetOverflowError):  # not even the task: nothing the model could answer
        select_messages(messages, cost(messages, 0, 3) - 1, policy=truncate, counter=WORDS)


def test_pinned_system_messages_that_do_not_fit_raise() -> None:
    with pytest.raises(PinnedItemsExceedBudgetError):
        select_messages(transcript(), 1, counter=WORDS)
    with pytest.raises(PinnedItemsExceedBudgetError):
        select_messages(transcript(), 1, counter=WORDS, strategy="last")


def test_last_is_a_suffix_starting_on_a_user_message() -> None:
    messages = transcript()
    budget = cost(messages, 0, 4, 5, 6, 7, 8, 9, 10)  # fits from the tool calls on, not their question
    result = select_messages(messages, budget, counter=WORDS, strategy="last")
    assert kept(result, messages) == [0, 8, 9, 10]
    reasons = {entry.item.metadata["cupel:chat.indices"]: entry.reason for entry in result.report.excluded}
    assert reasons[(4, 5, 6)] == IncompleteTurn(2) and reasons[(7,)] == IncompleteTurn(2)
    needed = reasons[(3,)]
    assert needed.name == "BudgetExceeded" and needed.item_tokens > needed.available_tokens  # type: ignore[attr-defined]
    anywhere = select_messages(messages, budget, counter=WORDS, strategy="last", start_on="any")
    assert kept(anywhere, messages) == [0, 4, 5, 6, 7, 8, 9, 10]


def test_the_report_is_built_only_when_read() -> None:
    result = select_messages(transcript(), 40, counter=WORDS)
    assert result._report is None
    assert result.report.included_tokens == result.tokens
    assert result._report is not None


def test_strategy_comes_from_a_policy_file() -> None:
    policy = loads_policy('extends = "chat"\nchat = { strategy = "last", start_on = "any" }\n')
    assert policy.chat == ChatSettings(strategy="last", start_on="any", recent_share=0.1)  # chat's share
    messages = transcript()
    budget = cost(messages, 0, 4, 5, 6, 7, 8, 9, 10)
    assert kept(select_messages(messages, budget, policy=policy, counter=WORDS), messages)[1] == 4
    # The keyword overrides the policy.
    assert (
        kept(select_messages(messages, budget, policy=policy, counter=WORDS, start_on="user"), messages)[1]
        == 8
    )


@pytest.mark.parametrize("budget", [600, 300, 120])
def test_agent_example_starts_with_system_then_user_and_keeps_every_question(budget: int) -> None:
    messages = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    result = select_messages(messages, budget)
    roles = [message["role"] for message in result.messages]
    assert roles[0] == "system" and roles[1] == "user"
    assert validate_transcript(list(result.messages), "openai") == []
    # No reply without its question: every kept message's turn has its user message kept.
    indices = kept(result, messages)
    turns = split_turns(messages_to_items(messages)).turns
    for turn in turns:
        if set(turn.indices) & set(indices):
            assert turn.indices[0] in indices
    assert result.tokens <= budget
