"""A ``ChatSession`` reuses what it read the call before (costs of the leading messages with the same
roles and texts); every selection equals the one made with nothing kept.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._reports import report_values
from tests.chat._transcripts import plain_transcript, to_langchain

from cupel.chat import ChatOptions, ChatSession, messages_to_items, select_messages
from cupel.chat.langchain import select_messages as select_langchain
from cupel.errors import CupelError
from cupel.tokens import FunctionCounter

_EDITS = st.sampled_from(["grow", "grow", "edit", "replace", "role", "drop", "recount"])


def _selection(messages: list[Any], budget: int, keywords: dict[str, Any], **more: Any) -> object:
    select: Any = select_messages if isinstance(messages[0], dict) else select_langchain
    try:
        chosen = select(messages, budget, **keywords, **more)
        *entries, events = report_values(chosen.report)
        # A traced run's events carry their durations: every other field must agree.
        steps = [(event.stage, event.item_count, event.message) for event in events]
        return [id(message) for message in chosen.messages], chosen.tokens, entries, steps
    except CupelError as error:
        return f"{type(error).__name__}: {error}"


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 24),
    st.lists(st.tuples(_EDITS, st.integers(0, 1000)), min_size=1, max_size=8),
    st.sampled_from([0, 40, 150, 400, 5000]),
    st.sampled_from([None, "chat", "tool_use", "long_running"]),
    st.sampled_from(["turns", "last", "messages"]),
    st.booleans(),
)
def test_a_session_driven_chat_selects_as_cold_calls(
    size: int,
    steps: list[tuple[str, int]],
    budget: int,
    policy: str | None,
    strategy: str,
    langchain: bool,
) -> None:
    messages = plain_transcript(size)
    session = ChatSession()
    overhead = 3
    for edit, number in steps:
        position = 1 + number % (len(messages) - 1)
        if edit == "grow":
            role = "assistant" if messages[-1]["role"] == "user" else "user"
            messages.append({"role": role, "content": f"more {number}"})
        elif edit == "edit":  # in place: the same object, another text
            messages[position]["content"] = f"edited {number}"
        elif edit == "replace":  # an equal copy: another object
            messages[position] = dict(messages[position])
        elif edit == "role":
            messages[position]["role"] = "assistant" if messages[position]["role"] == "user" else "user"
        elif edit == "drop" and len(messages) > 3:
            del messages[-1]
        elif edit == "recount":  # other options: every cost changes
            overhead = number % 5
        chat = to_langchain(messages) if langchain else messages
        keywords: dict[str, Any] = {
            "policy": policy,
            "strategy": strategy,
            "options": ChatOptions(message_overhead=overhead),
            "counter": FunctionCounter(len),
        }
        before = [dict(message) for message in messages]
        warm = _selection(chat, budget, keywords, session=session)
        assert warm == _selection(chat, budget, keywords)
        assert messages == before  # nothing mutated


def test_the_session_reuses_the_costs_of_unchanged_leading_messages() -> None:
    seen: list[str] = []

    def count(text: str) -> int:
        seen.append(text)
        return len(text)

    counter = FunctionCounter(count)
    messages = plain_transcript(6)
    session = ChatSession()
    select_messages(messages, 500, counter=counter, session=session)
    messages.append({"role": "user", "content": "a new question"})
    seen.clear()
    select_messages(messages, 500, counter=counter, session=session)
    assert seen == ["a new question"]
    messages[2]["content"] = "changed in place"
    seen.clear()
    select_messages(messages, 500, counter=counter, session=session)
    assert "changed in place" in seen
    assert "ChatSession(" in repr(session) and "read=" in repr(session)
    session.clear()
    assert "read=0" in repr(session)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2),
    st.lists(st.sampled_from(["user", "assistant"]), min_size=1, max_size=30),
    st.integers(0, 9),
)
def test_turn_columns_read_as_the_turn_items(systems_first: int, rest: list[str], oldest: int) -> None:
    # What the older turns' scoring batch reads (contents, role presence) is what their items hold.
    from cupel.chat.read import DICTS, read_columns
    from cupel.chat.units import turn_contents, turn_item_of, turn_presence, turn_records

    roles = ["system"] * systems_first + rest
    messages = [{"role": role, "content": f"{index} {role}"} for index, role in enumerate(roles)]
    options = ChatOptions()
    columns = read_columns(
        messages, DICTS.plain_columns, lambda m, i: DICTS.parse(m, i, options), counter=None, options=options
    )
    records = turn_records(columns, messages, options)
    # Turns open at each user message, and at the first message after the systems (a preamble).
    opening = sorted({systems_first, *(index for index, role in enumerate(roles) if role == "user")})
    starts, ends = opening, [*opening[1:], len(roles)]
    starts, ends = starts[oldest % len(starts) :], ends[oldest % len(ends) :]
    systems = [index for index, role in enumerate(roles) if role == "system"]
    items = [
        turn_item_of(records, 1, list(range(start, end))) for start, end in zip(starts, ends, strict=True)
    ]
    items += [messages_to_items(messages)[position] for position in systems]
    assert turn_contents(records, (starts, ends), systems) == [item.content for item in items]
    for tag in ("user", "assistant", "system"):
        assert turn_presence(records, (starts, ends), systems, tag) == [tag in item.tags for item in items]
