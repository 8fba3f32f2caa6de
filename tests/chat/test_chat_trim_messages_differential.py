"""The "last" strategy against LangChain's real ``trim_messages`` on random transcripts.

Both sides charge each message the same tokens (cupel's count of the message). Whenever LangChain's
window keeps every tool call with its results, cupel's window is the very same messages; whenever it
does not, cupel's window is still a valid conversation.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._transcripts import openai_transcripts, to_langchain
from tests.profiles import examples

from cupel.chat import validate_transcript
from cupel.chat.langchain import message_token_counts, select_messages
from cupel.errors import BudgetOverflowError

EXAMPLES = examples(300)


def broken(messages: list[Any], *, for_request: bool = True) -> set[str]:
    found = validate_transcript(messages, "langchain", for_request=for_request)
    return {violation.rule for violation in found}


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    openai_transcripts(leading_systems=1),
    st.data(),
    st.sampled_from(["human", None]),
)
def test_last_matches_trim_messages(
    messages: list[dict[str, Any]], data: st.DataObject, start_on: Any
) -> None:
    from langchain_core.messages import trim_messages

    converted = to_langchain(messages)
    costs = message_token_counts(converted)
    cost_of = {id(message): cost for message, cost in zip(converted, costs, strict=True)}
    system = costs[0] if messages and messages[0]["role"] in ("system", "developer") else 0
    budget = data.draw(st.integers(system, sum(costs) + 5), label="budget")
    # The second deliberate difference: a transcript with no user message has no question to start on,
    # so ours starts between any units (theirs sends the system message alone).
    asked = any(message.type == "human" for message in converted)

    theirs = trim_messages(
        converted,
        max_tokens=budget,
        token_counter=lambda chunk: sum(cost_of[id(message)] for message in chunk),
        strategy="last",
        include_system=True,
        start_on=start_on if asked else None,
        allow_partial=False,
    )
    try:
        ours = select_messages(
            converted,
            budget,
            counter=None,
            strategy="last",
            start_on="user" if start_on == "human" else "any",
        )
    except BudgetOverflowError:
        # No window without a question, nor (no user message) without a unit: theirs holds no question.
        assert not any(message.type == "human" for message in theirs)
        return
    # Ours breaks no rule the transcript does not (it may hold no user message, or end on a reply),
    # and the model can answer it whenever it can answer the transcript.
    assert broken(list(ours.messages), for_request=False) <= broken(converted, for_request=False)
    if not broken(converted):
        assert broken(list(ours.messages)) == set()
    assert ours.tokens <= budget
    if any(m.type == "human" for m in converted) and not any(m.type == "human" for m in theirs):
        # The deliberate difference: theirs holds no question; ours keeps the last one.
        assert any(message.type == "human" for message in ours.messages)
        return
    if broken(theirs, for_request=False) <= broken(converted, for_request=False):
        assert [id(message) for message in ours.messages] == [id(message) for message in theirs]
