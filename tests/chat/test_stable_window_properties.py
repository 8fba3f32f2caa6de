"""Properties of StableWindow over random growing transcripts, every strategy, OpenAI and Anthropic form.

After every turn: the selection is valid for the provider of its input (tool calls with all their
results), within budget, the previous turn's messages are its prefix unless it compacted, the state
round-trips through ``to_dict`` and a window resumed from it selects the same messages. (``"messages"``
promises tool-call integrity, not the alternation rules.) An edit to a
message already seen gives the selection a fresh window gives.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from tests.chat._transcripts import anthropic_transcripts, openai_transcripts
from tests.profiles import examples

from cupel import BudgetOverflowError, PinnedItemsExceedBudgetError
from cupel.chat import (
    StableWindow,
    WindowState,
    message_token_counts,
    select_messages,
    validate_transcript,
)

EXAMPLES = examples(40)

transcripts = st.one_of(
    openai_transcripts().map(lambda messages: ("openai", messages)),
    anthropic_transcripts().map(lambda messages: ("anthropic", messages)),
)
STRATEGIES = st.sampled_from(["turns", "last", "messages"])
TOO_SMALL = (BudgetOverflowError, PinnedItemsExceedBudgetError)
# "messages" keeps tool links and a question (it may drop a first user turn, or end on a reply).
MESSAGES_RULES = frozenset({"tool-call-unanswered", "tool-result-orphaned", "no-user-message"})
REQUEST_RULES = frozenset({"ends-on-assistant", "empty-conversation"})


def violations(kept: list[Any], provider: str, strategy: str, transcript: list[Any]) -> list[Any]:
    """What the strategy promises: provider validity ("turns", "last"), tool-call integrity (all), and
    ("turns", "last") a window the model can answer whenever it can answer the transcript (a transcript
    may end on the assistant's reply)."""
    found = validate_transcript(kept, provider, for_request=False)  # type: ignore[arg-type]
    if strategy == "messages":
        return [violation for violation in found if violation.rule in MESSAGES_RULES]
    if not validate_transcript(transcript, provider):  # type: ignore[arg-type]
        asked = validate_transcript(kept, provider)  # type: ignore[arg-type]
        found.extend(violation for violation in asked if violation.rule in REQUEST_RULES)
    return found


def turn_ends(messages: list[dict[str, Any]], provider: str) -> list[int]:
    """Lengths at which the transcript so far is well formed (a turn may have ended on a reply)."""
    sizes = range(1, len(messages) + 1)
    return [size for size in sizes if not validate_transcript(messages[:size], provider, for_request=False)]  # type: ignore[arg-type]


def same_messages(left: tuple[Any, ...], right: tuple[Any, ...]) -> bool:
    return json.dumps(left, sort_keys=True) == json.dumps(right, sort_keys=True)


CALL = {"id": "call_0", "type": "function", "function": {"name": "f", "arguments": ""}}


@settings(max_examples=EXAMPLES, deadline=None)
@given(transcripts, STRATEGIES, st.integers(40, 400), st.sampled_from([(1.0, 0.6), (0.9, 0.3), (1.0, 1.0)]))
# No user message (OpenAI allows it), answerable on its tool result: "last" keeps the newest units.
@example(
    (
        "openai",
        [
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_0", "content": ""},
        ],
    ),
    "last",
    40,
    (1.0, 0.6),
)
def test_every_turn_is_valid_and_prefix_stable_between_compactions(
    case: tuple[str, list[dict[str, Any]]], strategy: str, budget: int, marks: tuple[float, float]
) -> None:
    provider, messages = case
    high, low = marks
    window: StableWindow = StableWindow(budget, strategy=strategy, high_water=high, low_water=low)  # type: ignore[arg-type]
    previous: tuple[Any, ...] | None = None
    for size in turn_ends(messages, provider):
        transcript = messages[:size]
        try:
            selection = window.select(transcript)
        except TOO_SMALL as error:
            # Only when selecting from scratch at the full budget fails the same way.
            try:
                select_messages(transcript, budget, strategy=strategy)  # type: ignore[arg-type]
            except type(error):
                continue
            raise
        kept = list(selection.messages)
        assert violations(kept, provider, strategy, transcript) == []
        assert selection.tokens == sum(message_token_counts(kept))
        assert selection.tokens <= budget
        if not selection.compacted:
            assert selection.tokens <= high * budget
            assert previous is not None
            assert selection.prefix == len(previous)
            assert all(a is b for a, b in zip(previous, selection.messages, strict=False))
            assert len(selection.messages) >= len(previous)
        assert all(0 <= mark < len(kept) for mark in selection.cache_breakpoints)
        state = window.state
        assert state is not None
        data = json.loads(json.dumps(state.to_dict()))
        assert WindowState.from_dict(data) == state
        # A stateless service: new message objects and the state read back give the same selection.
        resumed: StableWindow = StableWindow(
            budget,
            strategy=strategy,  # type: ignore[arg-type]
            high_water=high,
            low_water=low,
            state=data,
        )
        again = resumed.select(copy.deepcopy(transcript))
        assert same_messages(again.messages, selection.messages)
        assert again.compacted is False or selection.compacted
        previous = selection.messages


@settings(max_examples=EXAMPLES, deadline=None)
@given(transcripts, STRATEGIES, st.integers(40, 400), st.data())
def test_an_edit_to_a_seen_message_compacts_afresh(
    case: tuple[str, list[dict[str, Any]]], strategy: str, budget: int, data: st.DataObject
) -> None:
    provider, messages = case
    ends = turn_ends(messages, provider)
    if len(ends) < 2:
        return
    first, second = data.draw(st.sampled_from(ends[:-1])), ends[-1]
    window: StableWindow = StableWindow(budget, strategy=strategy)  # type: ignore[arg-type]
    try:
        window.select(messages[:first])
    except TOO_SMALL:
        return
    edited = copy.deepcopy(messages[:second])
    position = data.draw(st.integers(0, first - 1))
    target = edited[position]
    if isinstance(target.get("content"), str):
        target["content"] += " (edited)"
    else:
        target["name"] = "edited"
    saved = window.to_dict()
    try:
        expected = StableWindow(budget, strategy=strategy).select(edited)  # type: ignore[arg-type]
    except TOO_SMALL:
        return
    for candidate in (window, StableWindow(budget, strategy=strategy, state=saved)):  # type: ignore[arg-type]
        selection = candidate.select(edited)
        assert selection.compacted and selection.prefix == 0
        assert selection.messages == expected.messages
