"""Summaries of dropped messages: sync and async summarisers, the offline default, the report."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from cupel import InvalidConfigurationError
from cupel.chat import (
    FirstLines,
    aselect_messages,
    message_token_counts,
    select_messages,
    validate_transcript,
)
from cupel.tokens import FunctionCounter

WORDS = FunctionCounter(lambda text: len(text.split()))


def transcript() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "first question about the webhook retries\nwith detail"},
        {"role": "assistant", "content": "first answer " * 10},
        {"role": "user", "content": "second question about deploys"},
        {"role": "assistant", "content": "second answer " * 10},
        {"role": "user", "content": "latest question"},
    ]


def test_sync_summary_is_placed_after_the_system_messages_and_reported() -> None:
    messages = transcript()
    seen: list[Sequence[Any]] = []

    def summarize(dropped: Sequence[Any]) -> str:
        seen.append(dropped)
        return f"{len(dropped)} earlier messages"

    costs = message_token_counts(messages, counter=WORDS)
    budget = costs[0] + costs[5] + costs[3] + costs[4] + 8
    result = select_messages(messages, budget, counter=WORDS, summarize=summarize, summary_tokens=8)
    assert seen == [[messages[1], messages[2]]]
    assert result.messages[0] is messages[0]
    assert result.messages[1] == {"role": "system", "content": "2 earlier messages"}
    assert list(result.messages[2:]) == messages[3:]
    assert result.tokens <= budget
    assert validate_transcript(list(result.messages), "anthropic") == []
    reasons = [entry.reason.name for entry in result.report.excluded]
    assert reasons == ["Summarized", "Summarized"]
    assert result.report.excluded[0].reason.dropped_because == "BudgetExceeded"  # type: ignore[attr-defined]
    assert any("summary" in entry.item.tags for entry in result.report.included)
    assert result.report.included_tokens == result.tokens


def test_no_summary_when_nothing_was_dropped() -> None:
    def summarize(dropped: Sequence[Any]) -> str:
        raise AssertionError("must not be called")

    result = select_messages(transcript(), 10_000, summarize=summarize, summary_tokens=50)
    assert list(result.messages) == transcript()


def test_async_summariser_with_aselect_and_with_the_sync_call() -> None:
    async def summarize(dropped: Sequence[Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"role": "system", "content": f"async summary of {len(dropped)}"}

    costs = message_token_counts(transcript(), counter=WORDS)
    budget = costs[0] + costs[5] + 10
    awaited = asyncio.run(
        aselect_messages(transcript(), budget, counter=WORDS, summarize=summarize, summary_tokens=10)
    )
    assert awaited.messages[1]["content"] == "async summary of 4"
    synced = select_messages(transcript(), budget, counter=WORDS, summarize=summarize, summary_tokens=10)
    assert synced.messages == awaited.messages


def test_default_summariser_works_offline_and_fits() -> None:
    costs = message_token_counts(transcript(), counter=WORDS)
    budget = costs[0] + costs[5] + 30
    result = select_messages(transcript(), budget, counter=WORDS, summarize=True, summary_tokens=30)
    summary = result.messages[1]["content"]
    assert "first question about the webhook retries" in summary and "with detail" not in summary
    assert "second question about deploys" in summary
    assert "answer" not in summary  # one line per dropped turn: its opening message
    assert result.tokens <= budget
    tight = FirstLines(6, WORDS)(transcript()[1:5])
    assert len(tight.split()) <= 6 and tight.endswith("…")


def test_a_summary_over_its_reserve_is_an_error() -> None:
    with pytest.raises(InvalidConfigurationError, match="more than summary_tokens=2"):
        select_messages(
            transcript(), 40, counter=WORDS, summarize=lambda d: "far too long a summary", summary_tokens=2
        )
    with pytest.raises(InvalidConfigurationError, match="summary_tokens must be"):
        select_messages(transcript(), 40, summarize=True, summary_tokens=-1)


def test_langchain_summary_is_a_system_message() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from cupel.chat.langchain import aselect_messages as aselect_langchain
    from cupel.chat.langchain import select_messages as select_langchain

    messages = [
        SystemMessage("be brief"),
        HumanMessage("old question"),
        AIMessage("old answer " * 20),
        HumanMessage("latest question"),
    ]
    result = select_langchain(messages, 60, summarize=True, summary_tokens=24)
    assert result.messages[0] is messages[0] and result.messages[-1] is messages[3]
    assert isinstance(result.messages[1], SystemMessage) and "old question" in result.messages[1].content
    assert validate_transcript(list(result.messages), "langchain") == []

    async def summarize(dropped: Sequence[Any]) -> str:
        return "async"

    awaited = asyncio.run(aselect_langchain(messages, 40, summarize=summarize, summary_tokens=12))
    assert awaited.messages[1].content == "async"
