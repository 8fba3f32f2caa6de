"""What a ``ChatSession`` reuses of the read, the turn split and the older turns' contents.

A session-driven chat, whatever happens to its transcript between calls (it grows, a message is edited in
place or replaced, the history is cut and written anew, the messages change shape, a tool call comes in,
the options, counter or policy change), selects exactly as calls with nothing kept; and what it reuses is
only ever what the unchanged leading messages made.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._reports import report_values
from tests.chat._transcripts import to_langchain
from tests.profiles import examples

from cupel.chat import ChatOptions, ChatSession, select_messages
from cupel.chat.langchain import select_messages as select_langchain
from cupel.errors import CupelError
from cupel.tokens import FunctionCounter

_WORDS = ["deploy", "webhook", "retry", "the", "alpha", "timeout", "beta"]

_EDITS = st.sampled_from(
    "grow grow grow edit mutate parts replace other cut rewrite tool shape knob".split()  # noqa: SIM905
)


def _text(number: int) -> str:
    return f"{number}: " + " ".join(_WORDS[(number >> shift) % len(_WORDS)] for shift in range(number % 9))


def _outcome(chat: list[Any], budget: int, keywords: dict[str, Any], session: ChatSession | None) -> object:
    select: Any = select_messages if not chat or isinstance(chat[0], dict) else select_langchain
    try:
        chosen = select(chat, budget, **keywords, session=session)
        return [id(message) for message in chosen.messages], chosen.tokens, report_values(chosen.report)
    except CupelError as error:
        return f"{type(error).__name__}: {error}"


@settings(max_examples=examples(120), deadline=None)
@given(
    st.integers(1, 30),
    st.lists(st.tuples(_EDITS, st.integers(0, 10_000)), min_size=1, max_size=10),
    st.sampled_from([60, 150, 400, 5000]),
    st.sampled_from([None, "chat", "long_running"]),
)
def test_a_session_selects_as_nothing_kept_whatever_the_edits(
    size: int, steps: list[tuple[str, int]], budget: int, policy: str | None
) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    messages += [{"role": ("user", "assistant")[index % 2], "content": _text(index)} for index in range(size)]
    session = ChatSession()
    langchain = False
    keywords: dict[str, Any] = {"policy": policy, "options": ChatOptions(), "counter": FunctionCounter(len)}
    for edit, number in steps:
        position = 1 + number % (len(messages) - 1) if len(messages) > 1 else 0
        if edit == "grow":  # one more exchange, or one more message of the latest turn
            role = "assistant" if messages[-1]["role"] == "user" or number % 3 == 0 else "user"
            messages.append({"role": role, "content": _text(number)})
        elif edit == "edit":  # in place: the same dict, another text
            messages[position]["content"] = _text(number + 1)
        elif edit == "mutate":  # in place: the same dict, another role, or a key more (no longer plain)
            if number % 2:
                messages[position]["role"] = "assistant" if messages[position]["role"] == "user" else "user"
            else:
                messages[position]["name"] = "someone"
        elif edit == "parts":  # a list of parts, then that list changed in place (no longer plain)
            content = messages[position]["content"]
            if isinstance(content, list):
                content[0]["text"] = _text(number + 3)
                content.append({"type": "text", "text": _text(number)})
            else:
                messages[position]["content"] = [{"type": "text", "text": _text(number)}]
        elif edit == "replace":  # an equal copy: another object
            messages[position] = dict(messages[position])
        elif edit == "other":  # another message in its place (a tool message still names its call)
            old = messages[position]
            messages[position] = {"role": old["role"], "content": _text(number + 7)}
            if "tool_call_id" in old:
                messages[position]["tool_call_id"] = old["tool_call_id"]
        elif edit == "cut" and len(messages) > 2:  # the history cut short
            del messages[position:]
        elif edit == "rewrite":  # the history cut and written anew, one message longer
            del messages[position:]
            messages += [{"role": role, "content": _text(number)} for role in ("user", "assistant", "user")]
        elif edit == "tool":  # a tool call and its result (no longer plain)
            call = {"id": f"c{number}", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{number}", "content": _text(number)})
        elif edit == "shape":  # LangChain messages, then dicts again
            langchain = not langchain
        elif edit == "knob":  # other options, counter or policy settings
            keywords = {
                **keywords,
                "options": ChatOptions(message_overhead=number % 5, pin_system=number % 2 == 0),
                "counter": FunctionCounter(len)
                if number % 3
                else FunctionCounter(lambda text: len(text) // 2),
                "keep_first_turn": number % 4 == 0,
            }
        chat = to_langchain(messages) if langchain else messages
        before = copy.deepcopy(messages)
        warm = _outcome(chat, budget, keywords, session)
        assert warm == _outcome(chat, budget, keywords, None)
        assert messages == before  # nothing mutated


def test_a_turn_edited_in_place_is_scored_by_its_new_text() -> None:
    # The older turns' contents a session kept are never read for a turn whose message changed: a turn
    # the query's term reaches only through an in-place edit must be the one kept.
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    for index in range(40):
        messages.append({"role": ("user", "assistant")[index % 2], "content": f"{index}: plain words here"})
    messages.append({"role": "user", "content": "what about the zeppelin?"})
    session = ChatSession()
    budget = 60
    first = select_messages(messages, budget, session=session, recent_share=0.0)
    assert messages[10] not in first.messages
    messages[10]["content"] = "10: the zeppelin took off"
    warm = select_messages(messages, budget, session=session, recent_share=0.0)
    cold = select_messages(messages, budget, recent_share=0.0)
    assert messages[10] in cold.messages
    assert [id(message) for message in warm.messages] == [id(message) for message in cold.messages]


def _read(session: ChatSession, roles: list[str], texts: list[str]) -> list[str]:
    """Read a plain transcript into ``session`` (as the read stage does); its roles, as read."""
    session.plain_costs(("counter", 0), (roles, list[str | None](texts)), lambda some: list(map(len, some)))
    return roles


def test_only_the_new_turns_are_made_again() -> None:
    made: list[int] = []
    session = ChatSession()
    texts = [f"text {index}" for index in range(10)]

    def make(start: int) -> list[str]:
        made.append(start)
        return [f"turn {turn}" for turn in range(start, len(spans[0]))]

    spans = ([0, 2, 4], [2, 4, 6])
    roles = _read(session, ["user", "assistant"] * 3, texts[:6])
    assert session.turn_contents(roles, spans, make) == ["turn 0", "turn 1", "turn 2"]
    # Grown by a turn: the three older turns are kept.
    spans = ([0, 2, 4, 6], [2, 4, 6, 8])
    roles = _read(session, ["user", "assistant"] * 4, texts[:8])
    assert session.turn_contents(roles, spans, make)[3] == "turn 3" and made == [0, 3]
    # Read again unchanged: nothing is made.
    roles = _read(session, ["user", "assistant"] * 4, texts[:8])
    assert (
        session.turn_contents(roles, spans, make) == [f"turn {turn}" for turn in range(4)] and len(made) == 2
    )
    # Message 3 edited: the turns from the one holding it are made anew.
    roles = _read(session, ["user", "assistant"] * 4, [*texts[:3], "edited", *texts[4:8]])
    session.turn_contents(roles, spans, make)
    assert made[-1] == 1
    # A role changed: the same.
    roles = _read(session, ["user", "assistant", "user", "user"] + ["user", "assistant"] * 2, texts[:8])
    session.turn_contents(roles, spans, make)
    assert made[-1] == 1
    # Nothing changed, but a turn is split otherwise: from the first span that differs.
    session.turn_contents(roles, ([0, 2, 4, 5], [2, 4, 5, 8]), make)
    assert made[-1] == 2
    # Roles read by another call (another thread's read replaced this one's): nothing kept is used.
    mine = _read(session, ["user", "assistant"] * 4, texts[:8])
    other = _read(session, ["user", "assistant"] * 4, texts[:8])
    session.turn_contents(mine, spans, make)
    assert made[-1] == 0
    # Nor is what it made kept with the other read: that one reuses the turns within message 3.
    session.turn_contents(other, spans, make)
    assert made[-1] == 1
    session.clear()
    assert "read=0" in repr(session)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(["system", "user", "assistant"]), max_size=30),
    st.lists(st.sampled_from(["system", "user", "assistant"]), max_size=30),
    st.integers(0, 30),
    st.integers(0, 40),
)
def test_a_split_reusing_the_last_one_equals_a_split_afresh(
    old_roles: list[str], tail: list[str], agreed: int, holds: int
) -> None:
    from cupel.chat.units import split_from

    roles = old_roles[:agreed] + tail
    tokens = [1 + index * 7 % 11 for index in range(len(roles))]
    old_tokens = tokens[:agreed] + [5] * (len(old_roles) - min(agreed, len(old_roles)))
    kept = split_from(old_roles, old_tokens, None, 0)
    # The units both agree on (by role and tokens), or fewer.
    same = 0
    while same < min(len(roles), len(old_roles)) and (roles[same], tokens[same]) == (
        old_roles[same],
        old_tokens[same],
    ):
        same += 1
    assert split_from(roles, tokens, kept, min(holds, same)) == split_from(roles, tokens, None, 0)


def test_threads_sharing_a_session_select_as_nothing_kept() -> None:
    # Two conversations through one session at once: each call reuses only what its own read kept.
    import sys
    from concurrent.futures import ThreadPoolExecutor

    def conversation(seed: int) -> list[bool]:
        messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
        agreed = []
        for turn in range(30):
            messages.append({"role": "user", "content": _text(seed * 1000 + turn)})
            messages.append({"role": "assistant", "content": _text(seed * 7 + turn)})
            if turn % 7 == 3:  # and an older message edited in place
                messages[1 + turn % len(messages[1:])]["content"] = _text(seed + turn)
            warm = select_messages(messages, 400, session=session, counter=FunctionCounter(len))
            cold = select_messages(messages, 400, counter=FunctionCounter(len))
            agreed.append(list(map(id, warm.messages)) == list(map(id, cold.messages)))
        return agreed

    session = ChatSession()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(conversation, range(4)))
    finally:
        sys.setswitchinterval(interval)
    assert all(all(agreed) for agreed in results)


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["grow", "grow", "edit", "cut", "ask"]), st.integers(0, 10_000)), max_size=8
    ),
    st.integers(1, 4000),
)
def test_a_session_answering_new_terms_from_word_indexes_selects_as_cold_calls(
    steps: list[tuple[str, int]], run: int
) -> None:
    # Long enough for the relevance term's counting by whole lists, with word indexes from any size and
    # lowered runs of a few texts each: every new query term is looked up in indexes kept from earlier calls.
    from cupel.scorers import term_counts, terms

    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    messages += [{"role": ("user", "assistant")[index % 2], "content": _text(index)} for index in range(150)]
    session = ChatSession()
    keywords: dict[str, Any] = {"counter": FunctionCounter(len)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(term_counts, "INDEXED_MINIMUM", 0)
        patch.setattr(terms, "_RUN", run)
        for edit, number in [("grow", 0), *steps]:
            position = 1 + number % (len(messages) - 1)
            if edit == "grow":  # one more exchange
                messages += [
                    {"role": "assistant", "content": _text(number)},
                    {"role": "user", "content": _text(number + 1)},
                ]
            elif edit == "edit":  # in place: an older text changes
                messages[position]["content"] = _text(number + 5)
            elif edit == "cut" and len(messages) > 80:  # the history cut short
                del messages[-2:]
            elif edit == "ask":  # a new question, with words no turn held
                messages.append(
                    {"role": "user", "content": f"did the zeppelin{number} deploy {_text(number)}"}
                )
            assert _outcome(messages, 400, keywords, session) == _outcome(messages, 400, keywords, None)
