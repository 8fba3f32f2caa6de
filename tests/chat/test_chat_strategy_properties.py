"""Properties of the "turns" and "last" strategies over random provider-valid transcripts.

For every random transcript valid for its provider and every budget the pinned messages fit in, the
output is valid for the same provider (and answerable whenever the transcript is: a random transcript
may end on the assistant's reply, a finished conversation), keeps no reply without its question and
stays within budget.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._transcripts import anthropic_transcripts, openai_transcripts, to_langchain
from tests.profiles import examples

from cupel import BudgetOverflowError
from cupel.chat import (
    Provider,
    message_token_counts,
    messages_to_items,
    select_messages,
    to_messages,
    validate_transcript,
)
from cupel.chat.choose_units import select_last, split_turns
from cupel.chat.options import resolve_budget

EXAMPLES = examples(150)

transcripts = st.one_of(
    openai_transcripts().map(lambda messages: ("openai", messages)),
    anthropic_transcripts().map(lambda messages: ("anthropic", messages)),
)


def broken(messages: list[Any], provider: Provider | None = None, *, for_request: bool = True) -> set[str]:
    return {violation.rule for violation in validate_transcript(messages, provider, for_request=for_request)}


def keeps_valid(
    output: list[Any], messages: list[Any], provider: Provider, *, answerable: bool = True
) -> None:
    """The output breaks no rule the transcript does not, and (``answerable``) the model can answer it
    whenever it can answer the transcript."""
    assert broken(output, provider, for_request=False) <= broken(messages, provider, for_request=False)
    if answerable and not broken(messages, provider):
        assert broken(output, provider) == set()


def positions(selected: tuple[Any, ...], messages: list[Any]) -> list[int]:
    by_id = {id(message): index for index, message in enumerate(messages)}
    return [by_id[id(message)] for message in selected]


def target_for(data: st.DataObject, messages: list[dict[str, Any]]) -> int:
    items = messages_to_items(messages)
    pinned = sum(item.tokens for item in items if item.pinned)
    return data.draw(st.integers(pinned, sum(item.tokens for item in items) + 10), label="budget")


def kept_turns_are_whole(messages: list[dict[str, Any]], kept: list[int]) -> None:
    """Every kept non-system message's turn is kept whole (the latest turn may lose a tail)."""
    transcript = split_turns(messages_to_items(messages))
    chosen = set(kept)
    for turn in transcript.turns[:-1]:
        indices = set(turn.indices)
        assert not indices & chosen or indices <= chosen, f"turn {turn.number} split: {sorted(indices)}"


@settings(max_examples=EXAMPLES, deadline=None)
@given(transcripts, st.data())
def test_turns_output_is_valid_for_the_input_provider(
    case: tuple[Provider, list[dict[str, Any]]], data: st.DataObject
) -> None:
    provider, messages = case
    assert broken(messages, provider, for_request=False) <= {"no-user-message"}  # when empty
    budget = target_for(data, messages)
    try:
        result = select_messages(messages, budget)
    except BudgetOverflowError:
        transcript = split_turns(messages_to_items(messages))
        pinned = sum(item.tokens for item in transcript.system if item.pinned)
        assert transcript.latest is not None and pinned + transcript.latest.tokens > budget
        return
    kept = positions(result.messages, messages)
    keeps_valid(list(result.messages), messages, provider)
    assert result.tokens <= budget
    assert result.tokens == sum(message_token_counts(messages)[index] for index in kept)
    kept_turns_are_whole(messages, kept)
    # Transcript order, system messages first.
    systems = [index for index in kept if messages[index]["role"] in ("system", "developer")]
    assert kept == systems + sorted(set(kept) - set(systems))
    assert systems == sorted(systems)
    # The report accounts for every unit once.
    report = result.report
    assert len(report.included) + len(report.excluded) == report.total_candidates
    assert report.included_tokens == result.tokens


@settings(max_examples=EXAMPLES, deadline=None)
@given(transcripts, st.data())
def test_last_output_is_a_valid_suffix(
    case: tuple[Provider, list[dict[str, Any]]], data: st.DataObject
) -> None:
    provider, messages = case
    assert broken(messages, provider, for_request=False) <= {"no-user-message"}  # when empty
    budget = target_for(data, messages)
    try:
        result = select_messages(messages, budget, strategy="last")
    except BudgetOverflowError as error:
        # Not even the last user message fits with what must come after it: no question, no window.
        assert error.merged_tokens > budget
        return
    kept = positions(result.messages, messages)
    assert kept == sorted(kept)
    # "last" starts on a user message; a transcript with none (OpenAI allows it) has no question to start
    # on, so its window starts between any units (and raises when not even the newest unit fits).
    asked = any(message["role"] == "user" for message in messages)
    keeps_valid(list(result.messages), messages, provider, answerable=asked)
    assert result.tokens <= budget
    plain = to_messages(select_last(messages_to_items(messages), resolve_budget(budget)).kept_items())
    if any(m["role"] == "user" for m in messages) and not any(m["role"] == "user" for m in plain):
        # No question in the plain window: the last user message and the newest units after it.
        last_user = max(index for index, message in enumerate(messages) if message["role"] == "user")
        assert last_user in kept or any(messages[i]["role"] == "user" for i in kept)
        return
    lead = 0
    while lead < len(messages) and messages[lead]["role"] in ("system", "developer"):
        lead += 1
    window = [index for index in kept if index >= lead]
    assert kept[: len(kept) - len(window)] == list(range(lead))
    if window:
        assert window == list(range(window[0], len(messages)))
        assert messages[window[0]]["role"] == "user" or not asked
    # The window read from the end is the window chosen over the whole transcript's items.
    choice = select_last(messages_to_items(messages), resolve_budget(budget))
    assert list(result.messages) == to_messages(choice.kept_items(), system_first=False)
    report = result.report
    assert report.included_tokens == result.tokens
    assert len(report.included) + len(report.excluded) == report.total_candidates
    for entry in report.excluded:
        assert entry.reason.name in ("BudgetExceeded", "IncompleteTurn")
        if entry.reason.name == "BudgetExceeded":
            assert entry.reason.item_tokens > entry.reason.available_tokens  # type: ignore[attr-defined]


def test_last_without_a_user_message_keeps_the_newest_units() -> None:
    """No question to start on: the window keeps the newest units, a later system message in place."""
    messages = [{"role": "assistant", "content": ""}, {"role": "system", "content": ""}]
    assert select_messages(messages, 8, strategy="last").messages == tuple(messages)
    assert select_messages(messages, 4, strategy="last").messages == (messages[1],)
    with pytest.raises(BudgetOverflowError):  # no unit fits: an empty window is never sent
        select_messages(messages, 3, strategy="last")


@settings(max_examples=EXAMPLES // 2, deadline=None)
@given(openai_transcripts(), st.data(), st.sampled_from(["turns", "last"]))
def test_langchain_output_is_valid(
    messages: list[dict[str, Any]], data: st.DataObject, strategy: str
) -> None:
    from cupel.chat.langchain import select_messages as select_langchain

    converted = to_langchain(messages)
    # A random transcript may hold no user message; the selection cannot add one.
    assert broken(converted, for_request=False) <= {"no-user-message"}
    budget = target_for(data, messages)
    try:
        result = select_langchain(converted, budget, strategy=strategy)  # type: ignore[arg-type]
    except BudgetOverflowError:
        return
    keeps_valid(list(result.messages), converted, "langchain")
