"""select_messages: budgets, policies, atomic tool units and the result type."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    CupelTypeError,
    GreedySlice,
    InvalidConfigurationError,
    KindScorer,
    PinnedItemsExceedBudgetError,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    RelevanceScorer,
    ScoreSlice,
    UShapedPlacer,
)
from cupel.chat import ChatOptions, ChatSelection, chat_pipeline, message_token_counts, select_messages
from cupel.chat.options import _resolve_pipeline, resolve_budget
from cupel.tokens import FunctionCounter

WORDS = FunctionCounter(lambda text: len(text.split()))
# Recency and kind only: the tests that pin recency behaviour use this, not the tuned chat preset.
RECENT = Pipeline(
    CompositeScorer([(RecencyScorer(), 3), (KindScorer(), 1)]), GreedySlice(), ChronologicalPlacer()
)


def conversation() -> list[dict[str, Any]]:
    big = " ".join(["data"] * 60)
    return [
        {"role": "system", "content": "You answer questions."},
        {"role": "user", "content": "Tell me about the first topic please"},
        {"role": "assistant", "content": "The first topic is old news by now"},
        {"role": "user", "content": "Look up the second topic"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": big},
        {"role": "assistant", "content": "Here is the second topic summary"},
        {"role": "user", "content": "thanks, and now?"},
    ]


def test_everything_fits() -> None:
    messages = conversation()
    result = select_messages(messages, 10_000, counter=WORDS)
    assert isinstance(result, ChatSelection)
    assert list(result.messages) == messages
    assert all(a is b for a, b in zip(result.messages, messages, strict=True))
    assert result.excluded_messages == ()
    assert result.tokens == sum(message_token_counts(messages, counter=WORDS))


def test_a_tool_unit_that_does_not_fit_goes_as_a_whole() -> None:
    messages = conversation()
    costs = message_token_counts(messages, counter=WORDS)
    budget = sum(costs) - costs[5] - 1  # everything but the big tool result would fit
    result = select_messages(messages, budget, counter=WORDS, strategy="messages")
    kept = list(result.messages)
    assert messages[4] not in kept and messages[5] not in kept
    assert result.excluded_messages == (messages[4], messages[5])
    assert result.tokens <= budget
    assert kept[0] is messages[0] and kept[-1] is messages[-1]


def test_a_tool_unit_that_fits_comes_back_whole_and_in_place() -> None:
    messages = conversation()
    costs = message_token_counts(messages, counter=WORDS)
    # With recency alone the oldest turn has the lowest score per token, so it is the one left out.
    result = select_messages(
        messages, sum(costs) - costs[1], policy=RECENT, counter=WORDS, strategy="messages"
    )
    assert list(result.messages) == [messages[0], *messages[2:]]
    assert result.excluded_messages == (messages[1],)


def test_budget_forms() -> None:
    assert resolve_budget(50) == ContextBudget(50, 50)
    budget = ContextBudget(100, 80, output_reserve=10)
    assert resolve_budget(budget) is budget
    with pytest.raises(InvalidConfigurationError, match="budget must be >= 0"):
        resolve_budget(-1)
    for bad in (True, 1.5, "100", None):
        with pytest.raises(CupelTypeError, match="budget must be a ContextBudget or an int"):
            resolve_budget(bad)  # type: ignore[arg-type]
    result = select_messages(conversation(), ContextBudget(10_000, 60, output_reserve=100), counter=WORDS)
    assert result.tokens <= 60


def test_policy_resolution() -> None:
    default = _resolve_pipeline(None)
    assert default.scorer == CompositeScorer(
        [(RelevanceScorer(neighbors=3), 10), (RecencyScorer(), 1), (KindScorer(), 1)]
    )
    assert default.slicer == ScoreSlice() and default.placer == ChronologicalPlacer()
    assert repr(chat_pipeline()) == repr(default)
    custom = Pipeline(PriorityScorer(), GreedySlice(), UShapedPlacer())
    assert _resolve_pipeline(custom) is custom
    with pytest.raises(InvalidConfigurationError, match="chat-ish"):
        _resolve_pipeline("chat-ish")
    with pytest.raises(
        CupelTypeError, match=r"policy must be None, a preset name, a cupel\.Policy or a cupel\.Pipeline"
    ):
        select_messages(conversation(), 100, policy=42)  # type: ignore[arg-type]


def test_any_placer_still_yields_transcript_order() -> None:
    messages = conversation()
    pipeline = Pipeline(KindScorer(), GreedySlice(), UShapedPlacer())
    result = select_messages(messages, 10_000, policy=pipeline, counter=WORDS, strategy="messages")
    assert list(result.messages) == messages
    placed = [entry.item for entry in result.report.included]
    assert len(placed) == 7
    # The U-shaped placement is not transcript order; to_messages restores it.
    placed_order = [item.metadata["cupel:chat.indices"] for item in placed]
    assert placed_order != sorted(placed_order)


def test_recency_prefers_the_latest_turns() -> None:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(10)]
    cost = message_token_counts(messages[:1], counter=WORDS)[0]
    result = select_messages(messages, cost * 4, policy=RECENT, counter=WORDS, strategy="messages")
    assert list(result.messages) == messages[6:]


def test_the_chat_preset_without_a_query_keeps_the_latest_messages() -> None:
    messages = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"turn {i}"} for i in range(10)]
    cost = message_token_counts(messages[:1], counter=WORDS)[0]
    result = select_messages(messages, cost * 4, counter=WORDS, strategy="messages", query=None)
    # Relevance adds nothing without a query: Recency ranks, as the recent window does.
    assert list(result.messages) == messages[6:]


def test_pinned_messages_that_cannot_fit_raise() -> None:
    messages = [{"role": "system", "content": "word " * 50}, {"role": "user", "content": "hi"}]
    with pytest.raises(PinnedItemsExceedBudgetError):
        select_messages(messages, 20, counter=WORDS)
    relaxed = ChatOptions(pin_system=False, pin_last_user=False)
    assert select_messages(messages, 20, counter=WORDS, options=relaxed).messages == (messages[1],)


def test_last_user_message_survives_a_tight_budget() -> None:
    messages = [
        {"role": "user", "content": "short"},
        {"role": "assistant", "content": "short too"},
        {"role": "user", "content": "a much longer final question " * 5},
    ]
    costs = message_token_counts(messages, counter=WORDS)
    # Score per token (GreedySlice) prefers the two short messages to the long question.
    by_density = Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer())
    result = select_messages(messages, costs[2] + costs[0], by_density, counter=WORDS, strategy="messages")
    assert result.messages[-1] is messages[2]
    unpinned = select_messages(
        messages,
        costs[2] + costs[0],
        by_density,
        counter=WORDS,
        options=ChatOptions(pin_last_user=False),
        strategy="messages",
    )
    assert messages[2] not in unpinned.messages


def test_inputs_are_untouched_and_results_deterministic() -> None:
    messages = conversation()
    snapshot = copy.deepcopy(messages)
    first = select_messages(messages, 40, counter=WORDS)
    second = select_messages(messages, 40, counter=WORDS)
    assert messages == snapshot
    assert [id(m) for m in first.messages] == [id(m) for m in second.messages]


def test_selection_is_frozen() -> None:
    result = select_messages(conversation(), 100)
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.messages = ()  # type: ignore[misc]
    assert isinstance(result.messages, tuple)


def test_policy_may_be_a_preset_name_or_a_policy() -> None:
    from cupel.policy import get_preset

    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "first question " * 20},
        {"role": "assistant", "content": "first answer " * 20},
        {"role": "user", "content": "second question"},
    ]
    by_name = select_messages(messages, 80, policy="chat")
    by_policy = select_messages(messages, 80, policy=get_preset("chat"))
    default = select_messages(messages, 80)
    assert by_name.messages == by_policy.messages == default.messages
    with pytest.raises(InvalidConfigurationError, match="unknown"):
        select_messages(messages, 80, policy="no-such-preset")
