"""The ``"turns"`` report's unit items, kept between selections by a ``ChatSession``.

Whatever happened to the transcript between two selections (it grew, a message was edited in place,
replaced by an equal one, or given another role; the counter or options changed; tool calls, parsed
and LangChain messages), the report equals, entry by entry, the one built with nothing kept; kept
items are reused only where nothing they were made from changed.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._reports import report_values as _values
from tests.chat._transcripts import (
    anthropic_transcripts,
    openai_transcripts,
    plain_transcript,
    to_langchain,
)
from tests.profiles import examples

from cupel.chat import ChatOptions, ChatSession, select_messages
from cupel.chat import session as sessions
from cupel.chat.read import MESSAGES_KEY
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelError
from cupel.tokens import FunctionCounter


def _fresh(messages: list[dict[str, Any]], budget: int, **keywords: Any) -> tuple[Any, ...]:
    """The report's values with nothing kept from an earlier selection."""
    return _values(select_messages(messages, budget, strategy="turns", **keywords).report)


def _keep(messages: list[dict[str, Any]], budget: int, session: ChatSession) -> SelectionReport:
    """A selection's report, built (which keeps its items in ``session``)."""
    return select_messages(messages, budget, strategy="turns", session=session).report


def _items_by_position(report: SelectionReport) -> dict[int, Any]:
    entries = [*report.included, *report.excluded]
    return {entry.item.metadata["cupel:chat.indices"][0]: entry.item for entry in entries}


def test_a_grown_transcript_reuses_the_items_of_unchanged_messages() -> None:
    messages = plain_transcript(40)
    session = ChatSession()
    first = _items_by_position(select_messages(messages, 200, strategy="turns", session=session).report)
    messages += [{"role": "user", "content": "and now?"}, {"role": "assistant", "content": "now this."}]
    messages.append({"role": "user", "content": "one more"})
    report = select_messages(messages, 200, strategy="turns", session=session).report
    second = _items_by_position(report)
    assert all(second[position] is first[position] for position in range(39))
    # The last user message was pinned the turn before, and is not now: its item is new.
    assert second[39] is not first[39] and first[39].pinned and not second[39].pinned
    assert second[43].pinned
    assert _values(report) == _fresh(messages, 200)


def test_every_change_to_a_message_is_seen() -> None:
    messages = plain_transcript(30)
    session = ChatSession()
    _keep(messages, 150, session)
    messages[5]["content"] = "edited in place"  # same object, other text
    messages[7] = dict(messages[7])  # an equal message, another object
    messages[9]["role"] = "assistant" if messages[9]["role"] == "user" else "user"
    report = select_messages(
        messages, 150, strategy="turns", session=session
    ).report  # from the items kept before
    assert _values(report) == _fresh(messages, 150)
    items = _items_by_position(report)
    assert items[5].content == "[5] user: edited in place"
    assert items[7].metadata[MESSAGES_KEY][0] is messages[7]


def test_other_counts_or_pins_build_other_items() -> None:
    messages = plain_transcript(30)
    session = ChatSession()
    _keep(messages, 150, session)
    doubled = FunctionCounter(lambda text: len(text) // 2)
    for keywords in (
        {"counter": doubled},
        {"options": ChatOptions(message_overhead=9)},
        {"options": ChatOptions(pin_system=False)},
    ):
        expected = _fresh(messages, 150, **keywords)
        _keep(messages, 150, session)
        assert (
            _values(select_messages(messages, 150, strategy="turns", session=session, **keywords).report)
            == expected
        )


def test_kept_items_are_immutable_and_read_alike_every_time() -> None:
    messages = plain_transcript(20)
    session = ChatSession()
    selection = select_messages(messages, 100, strategy="turns", session=session)
    report = selection.report
    assert selection.report is report
    again = select_messages(messages, 100, strategy="turns", session=session).report
    assert _values(again) == _values(report)
    item = again.included[0].item
    with pytest.raises(FrozenInstanceError):
        item.content = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        item.metadata["cupel:chat.indices"] = (3,)  # type: ignore[index]


def test_a_transcript_longer_than_the_bound_is_not_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "KEPT", 10)
    session = ChatSession()
    messages = plain_transcript(12)
    _keep(messages, 100, session)
    assert session._items is None
    _keep(messages[:8], 100, session)
    assert session._items is not None and len(session._items[2]) == 8
    session.clear()
    assert session._items is None


edits = st.lists(
    st.tuples(st.sampled_from(["append", "edit", "replace", "role", "drop"]), st.integers(0, 10_000)),
    max_size=6,
)


@settings(max_examples=examples(40), deadline=None)
@given(st.integers(1, 30), st.lists(edits, min_size=1, max_size=4), st.integers(0, 300))
def test_reports_after_any_edits_equal_those_with_nothing_kept(
    size: int, rounds: list[list[tuple[str, int]]], budget: int
) -> None:
    messages = plain_transcript(size)
    session = ChatSession()
    _outcome(messages, budget, session)
    for round_ in rounds:
        for edit, number in round_:
            position = 1 + number % len(messages) if len(messages) > 1 else 0
            position = min(position, len(messages) - 1)
            if edit == "append":
                role = "user" if messages[-1]["role"] != "user" else "assistant"
                messages.append({"role": role, "content": f"new {number}"})
            elif edit == "edit":
                messages[position]["content"] = f"edited {number}"
            elif edit == "replace":
                messages[position] = dict(messages[position])
            elif edit == "role" and position:
                messages[position]["role"] = "assistant" if messages[position]["role"] == "user" else "user"
            elif edit == "drop" and len(messages) > 2:
                del messages[-1]
        before = [dict(message) for message in messages]
        actual = _outcome(messages, budget, session)  # from the items the round before kept
        assert actual == _fresh_outcome(messages, budget)
        assert messages == before  # nothing mutated
        _outcome(messages, budget, session)  # keep this round's items


def _outcome(messages: list[Any], budget: int, session: ChatSession | None = None) -> object:
    select: Any = select_messages
    if messages and not isinstance(messages[0], dict):
        from cupel.chat.langchain import select_messages as select
    try:
        return _values(select(messages, budget, strategy="turns", session=session).report)
    except CupelError as error:
        return f"{type(error).__name__}: {error}"


def _fresh_outcome(messages: list[Any], budget: int) -> object:
    return _outcome(messages, budget)


@settings(max_examples=examples(100), deadline=None)
@given(
    st.one_of(openai_transcripts(), anthropic_transcripts()),
    st.data(),
    st.sampled_from([0, 60, 200, 600, 5000]),
    st.booleans(),
)
def test_transcripts_with_tool_calls_reuse_items_as_built_afresh(
    messages: list[dict[str, Any]], data: st.DataObject, budget: int, langchain: bool
) -> None:
    # A chat that grew: the transcript up to one of its user messages was selected (and its report
    # built) the turn before.
    ends = [position for position, message in enumerate(messages) if message["role"] == "user"]
    end = data.draw(st.sampled_from([*ends, len(messages)]))
    if langchain:
        messages = to_langchain(messages)
    session = ChatSession()
    _outcome(messages[:end], budget, session)
    if messages and data.draw(st.booleans()):
        # And one message was replaced by an equal copy, or (a dict) given another text.
        position = data.draw(st.integers(0, len(messages) - 1))
        copied = messages[position].copy() if isinstance(messages[position], dict) else None
        if copied is None:
            messages[position] = messages[position].model_copy()
        else:
            if isinstance(copied.get("content"), str) and data.draw(st.booleans()):
                copied["content"] += " edited"
            messages[position] = copied
    actual = _outcome(messages, budget, session)
    assert actual == _fresh_outcome(messages, budget)
