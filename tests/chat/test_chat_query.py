"""``query=`` of the chat front end: ``"auto"`` reads the question from the transcript, ``None`` turns
it off, a string is used as given; the report says which (docs/spec-notes.md, "Relevance in chat")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from tests.chat._reports import report_values

from cupel import Policy
from cupel.chat import StableWindow, aselect_messages, select_messages
from cupel.errors import CupelTypeError
from cupel.placers import ChronologicalPlacer
from cupel.scorers import CompositeScorer, KindScorer, RecencyScorer, RelevanceScorer, TagScorer
from cupel.slicers import GreedySlice


def _plain() -> Policy:
    """A chat policy without a relevance term (Recency 2 + Tag(user) 2 + Kind 1, Greedy)."""
    scorer = CompositeScorer([(RecencyScorer(), 2.0), (TagScorer({"user": 1.0}), 2.0), (KindScorer(), 1.0)])
    return Policy(scorer, GreedySlice(), ChronologicalPlacer())


def _with_relevance(weight: float = 5.0) -> Policy:
    """That policy plus a relevance term."""
    policy = _plain()
    assert isinstance(policy.scorer, CompositeScorer)
    return policy.replace(scorer=CompositeScorer([*policy.scorer.entries, (RelevanceScorer(), weight)]))


def _relevance_only() -> Policy:
    return Policy(RelevanceScorer(), GreedySlice(), ChronologicalPlacer())


def _notes(messages: list[Any], **keywords: Any) -> tuple[str, ...]:
    return select_messages(messages, 100_000, _relevance_only(), **keywords).report.notes


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


AGENT = [
    {"role": "system", "content": "You book travel."},
    {"role": "user", "content": "Book me a train to Oslo"},
    {"role": "assistant", "content": None, "tool_calls": [_call("a", "search_trains", '{"to":"Oslo"}')]},
    {"role": "tool", "tool_call_id": "a", "content": "IC 12 at 9:05"},
    {
        "role": "assistant",
        "content": "Found one.",
        "tool_calls": [_call("b", "book_seat", '{"train":"IC 12"}')],
    },
    {"role": "tool", "tool_call_id": "b", "content": "booked"},
]


def test_auto_is_the_latest_user_message() -> None:
    messages = [
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": "Hi."},
        {"role": "user", "content": "Where is the harbor?"},
    ]
    assert _notes(messages) == ("relevance: scored against the query 'Where is the harbor?'",)


def test_auto_in_an_agent_loop_adds_the_newest_tool_call() -> None:
    expected = 'Book me a train to Oslo book_seat {"train":"IC 12"}'
    assert _notes(AGENT) == (f"relevance: scored against the query {expected!r}",)


def test_auto_without_a_user_message_is_no_query() -> None:
    messages = [{"role": "system", "content": "Be brief."}, {"role": "assistant", "content": "Ready."}]
    (note,) = _notes(messages)
    assert "had no query" in note


def test_none_turns_it_off_and_a_string_is_used_as_given() -> None:
    messages = [{"role": "user", "content": "Where is the harbor?"}]
    (off,) = _notes(messages, query=None)
    assert "had no query" in off
    assert _notes(messages, query="jazz tonight") == ("relevance: scored against the query 'jazz tonight'",)


def test_a_query_that_is_not_a_string_fails_in_one_line() -> None:
    with pytest.raises(CupelTypeError, match="query must be a string"):
        select_messages([{"role": "user", "content": "hi"}], 100, query=3)  # type: ignore[arg-type]


def test_anthropic_blocks_give_the_text_and_the_tool_use() -> None:
    messages = [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Lima?"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {"city": "Lima"}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
    ]
    expected = 'Weather in Lima? weather {"city":"Lima"}'
    assert _notes(messages) == (f"relevance: scored against the query {expected!r}",)


def test_langchain_messages_give_the_same_query_as_dicts() -> None:
    core = pytest.importorskip("langchain_core.messages")
    from cupel.chat.langchain import select_messages as select_langchain

    converted = [
        core.SystemMessage("You book travel."),
        core.HumanMessage("Book me a train to Oslo"),
        core.AIMessage("", tool_calls=[{"id": "a", "name": "search_trains", "args": {"to": "Oslo"}}]),
        core.ToolMessage("IC 12 at 9:05", tool_call_id="a"),
    ]
    notes = select_langchain(converted, 100_000, _relevance_only()).report.notes
    expected = 'Book me a train to Oslo search_trains {"to": "Oslo"}'  # the arguments as LangChain gives them
    assert notes == (f"relevance: scored against the query {expected!r}",)


def _history(topic_turn: int, turns: int = 12) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for turn in range(turns):
        if turn == topic_turn:
            said = "I finally bought the saxophone I wanted, a used tenor."
        else:
            said = f"Today was an ordinary day number {turn}, with work and some errands."
        messages += [{"role": "user", "content": said}, {"role": "assistant", "content": "Sounds good."}]
    return [*messages, {"role": "user", "content": "Which saxophone did I buy?"}]


def test_relevance_with_the_auto_query_keeps_the_turn_with_the_rare_term() -> None:
    messages = _history(topic_turn=1)
    budget = 80  # the question, the recent run and one older turn at most
    kept = select_messages(messages, budget, _with_relevance()).messages
    assert messages[2] in kept  # the saxophone turn
    unaware = select_messages(messages, budget, _with_relevance(), query=None).messages
    assert messages[2] not in unaware
    entries = select_messages(messages, budget, _with_relevance()).report.included
    saxophone = next(entry for entry in entries if "I finally bought" in entry.item.content)
    assert saxophone.relevance is not None and saxophone.relevance > 0.0


@pytest.mark.parametrize("budget", [60, 120, 400])
@pytest.mark.parametrize("strategy", ["turns", "last", "messages"])
def test_a_policy_without_relevance_ignores_the_query(budget: int, strategy: str) -> None:
    for messages in (_history(topic_turn=3), AGENT):
        runs = [
            select_messages(messages, budget, _plain(), strategy=strategy, query=query)  # type: ignore[arg-type]
            for query in ("auto", None, "saxophone")
        ]
        assert all(run.messages == runs[0].messages for run in runs)
        # Entries and totals; the events of "messages" carry durations.
        assert all(report_values(run.report)[:4] == report_values(runs[0].report)[:4] for run in runs)
        assert runs[0].report.notes == ()


@pytest.mark.parametrize("budget", [60, 120, 400])
def test_a_relevance_term_without_a_query_changes_no_choice(budget: int) -> None:
    messages = _history(topic_turn=3)
    plain = select_messages(messages, budget, _plain())
    off = select_messages(messages, budget, _with_relevance(), query=None)
    assert off.messages == plain.messages
    # Every score shrinks by the same factor: the same entries in the same order, for the same reasons.
    assert [(entry.item.content, entry.reason) for entry in off.report.excluded] == [
        (entry.item.content, entry.reason) for entry in plain.report.excluded
    ]
    # Every relevance the report gives (the older turns' the choice ranked) is 0.0.
    ranked = [entry for entry in (*off.report.included, *off.report.excluded) if entry.relevance is not None]
    assert ranked and [entry.relevance for entry in ranked] == [0.0] * len(ranked)
    (note,) = off.report.notes
    assert "had no query" in note


def test_the_async_twin_and_stable_window_take_the_query() -> None:
    messages = _history(topic_turn=1)
    expected = select_messages(messages, 80, _with_relevance())
    result = asyncio.run(aselect_messages(messages, 80, _with_relevance()))
    assert result.messages == expected.messages
    assert asyncio.run(aselect_messages(messages, 80, _with_relevance(), query=None)).messages == (
        select_messages(messages, 80, _with_relevance(), query=None).messages
    )
    window = StableWindow(80, _with_relevance(), high_water=1.0, low_water=1.0)
    assert window.select(messages).messages == expected.messages
    off = StableWindow(80, _with_relevance(), high_water=1.0, low_water=1.0, query=None)
    assert messages[2] not in off.select(messages).messages
