"""The chat presets answer the latest question: relevance with conversation context, the last
exchange kept, and without a query the most recent turns (policy.presets; docs/eval.md, "Relevance")."""

from __future__ import annotations

from typing import Any

import pytest

from cupel.chat import message_token_counts, select_messages, validate_transcript
from cupel.eval.baselines import recent_messages

FILLER = [
    "We talked about the weather and the traffic on the way to work today.",
    "The meeting ran long again, and lunch was a sandwich at the desk.",
    "I watered the plants, cleaned the kitchen and answered some emails.",
    "The bus was late, so I walked the last part of the way home.",
]


def _conversation() -> list[dict[str, Any]]:
    """Forty filler turns; early on, a turn names Dune and the next one holds the opinion of it."""
    messages: list[dict[str, Any]] = []
    for turn in range(40):
        if turn == 5:
            said, reply = "Have you read Dune yet? Everyone keeps talking about it.", "Not yet, is it good?"
        elif turn == 6:
            said, reply = "Honestly breathtaking; the desert chapters stayed with me for weeks.", "Wow."
        else:
            said, reply = FILLER[turn % len(FILLER)], "I see, thanks for telling me."
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": reply}]
    return [*messages, {"role": "user", "content": "What did I think of Dune?"}]


@pytest.mark.parametrize("policy", ["chat", "long_running"])
def test_the_turn_after_the_one_naming_the_question_is_kept(policy: str) -> None:
    messages = _conversation()
    kept = select_messages(messages, 200, policy).messages
    assert messages[10] in kept  # "Have you read Dune yet?": holds the query's term
    assert messages[12] in kept  # the opinion, which does not name Dune: a neighbour's share
    assert not validate_transcript(kept, "openai")


def test_the_last_exchange_stays_beside_the_relevant_turns() -> None:
    messages = _conversation()
    kept = select_messages(messages, 200, "chat").messages
    assert messages[-3] in kept and messages[-2] in kept  # the run of recent turns: the last exchange
    assert kept[-1] is messages[-1]


@pytest.mark.parametrize("policy", ["chat", "long_running"])
@pytest.mark.parametrize("budget", [60, 120, 200, 400])
def test_without_a_query_the_presets_keep_at_least_the_recent_window(policy: str, budget: int) -> None:
    messages = _conversation()
    kept = {id(message) for message in select_messages(messages, budget, policy, query=None).messages}
    tokens = message_token_counts(messages)
    if policy == "long_running":  # it keeps the opening task (keep_first_turn) out of the same budget
        budget -= tokens[0] + tokens[1]
    window = recent_messages([message["role"] for message in messages], tokens, budget)
    assert {id(messages[index]) for index in window} <= kept


@pytest.mark.parametrize("budget", [60, 200, 400])
def test_no_policy_is_the_chat_preset_with_its_chat_settings(budget: int) -> None:
    messages = _conversation()
    default = select_messages(messages, budget)
    preset = select_messages(messages, budget, "chat")
    assert default.messages == preset.messages
    # The preset's recent_share (0.1), not the chat default (0.75): a long recent run would differ.
    assert default.messages != select_messages(messages, budget, "chat", recent_share=0.75).messages
