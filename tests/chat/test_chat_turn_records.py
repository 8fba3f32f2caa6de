"""The ``"turns"`` fast path (unit records) against the plain reference (one item per unit).

For random provider-valid transcripts, budgets, settings, options and overflow strategies, the fast
path keeps the same messages with the same tokens as :func:`cupel.chat.choose.select_turns`
over :func:`cupel.chat.messages_to_items`, or raises the same error.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._transcripts import answering, openai_transcripts, to_langchain, turn_arguments
from tests.profiles import examples

from cupel import OverflowStrategy, Pipeline
from cupel.chat import ChatOptions, messages_to_items, select_messages, to_messages
from cupel.chat.choose_units import select_turns
from cupel.errors import CupelError
from cupel.model import ContextBudget
from cupel.policy import chat, tool_use

EXAMPLES = examples(150)

pipelines = st.sampled_from(
    [
        Pipeline.from_policy(chat()),
        Pipeline.from_policy(tool_use()),
        Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.TRUNCATE)),
        Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.PROCEED)),
    ]
)


def reference(
    messages: list[dict[str, Any]],
    budget: int,
    pipeline: Pipeline,
    chosen: ChatOptions,
    keep_first_turn: bool,
    recent_share: float,
) -> tuple[list[int], int] | str:
    try:
        items = messages_to_items(messages, options=chosen)
        choice = select_turns(
            items,
            ContextBudget(budget, budget),
            answering(messages, pipeline, chosen),
            keep_first_turn=keep_first_turn,
            recent_share=recent_share,
        )
    except CupelError as error:
        return f"{type(error).__name__}: {error}"
    kept = choice.kept_items()
    by_id = {id(message): index for index, message in enumerate(messages)}
    return [by_id[id(message)] for message in to_messages(kept)], sum(item.tokens for item in kept)


@settings(max_examples=EXAMPLES, deadline=None)
@given(*turn_arguments(pipelines))
def test_fast_turns_keep_what_the_reference_keeps(
    messages: list[dict[str, Any]],
    budget: int,
    pipeline: Pipeline,
    chosen: ChatOptions,
    keep_first_turn: bool,
    recent_share: float,
) -> None:
    expected = reference(messages, budget, pipeline, chosen, keep_first_turn, recent_share)
    try:
        result = select_messages(
            messages,
            budget,
            pipeline,
            options=chosen,
            strategy="turns",
            keep_first_turn=keep_first_turn,
            recent_share=recent_share,
        )
    except CupelError as error:
        assert expected == f"{type(error).__name__}: {error}"
        return
    by_id = {id(message): index for index, message in enumerate(messages)}
    assert expected == ([by_id[id(message)] for message in result.messages], result.tokens)
    # The report, built later from unit items, agrees with the messages kept.
    included = to_messages(result.report)
    assert [id(message) for message in included] == [id(message) for message in result.messages]


def test_overflow_callback_runs_once_even_when_the_report_is_read() -> None:
    events: list[object] = []
    preset = Pipeline.from_policy(chat())
    pipeline = Pipeline(
        preset.scorer,
        preset.slicer,
        preset.placer,
        overflow_strategy=OverflowStrategy.PROCEED,
        on_overflow=events.append,
    )
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "word " * 200},
    ]
    result = select_messages(messages, 60, pipeline, strategy="turns")
    assert result.messages == tuple(messages)
    assert result.report.included
    assert len(events) == 1


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(openai_transcripts(), st.integers(0, 400), pipelines, st.booleans())
def test_fast_turns_on_langchain_messages_keep_what_the_reference_keeps(
    messages: list[dict[str, Any]], budget: int, pipeline: Pipeline, keep_first_turn: bool
) -> None:
    from cupel.chat.langchain import messages_to_items as langchain_items
    from cupel.chat.langchain import select_messages as select_langchain

    converted = to_langchain(messages)
    by_id = {id(message): index for index, message in enumerate(converted)}
    try:
        items = langchain_items(converted)
        # The query select_messages answers by default (the latest user message's), bound as it binds it.
        bound = answering(messages, pipeline, ChatOptions())
        choice = select_turns(items, ContextBudget(budget, budget), bound, keep_first_turn=keep_first_turn)
        kept = choice.kept_items()
        expected: object = (
            [by_id[id(message)] for message in to_messages(kept)],
            sum(item.tokens for item in kept),
        )
    except CupelError as error:
        expected = f"{type(error).__name__}: {error}"
    try:
        result = select_langchain(
            converted, budget, pipeline, strategy="turns", keep_first_turn=keep_first_turn
        )
    except CupelError as error:
        assert expected == f"{type(error).__name__}: {error}"
        return
    assert expected == ([by_id[id(message)] for message in result.messages], result.tokens)


def test_a_trusted_item_has_the_fields_the_validating_constructor_gives() -> None:
    from dataclasses import fields
    from datetime import UTC, datetime

    from cupel.chat.units import _trusted_item
    from cupel.model import ContextItem, ContextKind, ContextSource

    stamp = datetime(2000, 1, 1, 0, 0, 5, tzinfo=UTC)
    metadata = {"cupel:chat.turn": 3}
    trusted = _trusted_item(
        "[1] user: hi", 7, ContextKind.MESSAGE, ContextSource.CHAT, ("user",), metadata, stamp
    )
    checked = ContextItem(
        "[1] user: hi", 7, kind="Message", source="Chat", tags=("user",), metadata=metadata, timestamp=stamp
    )
    for field in fields(ContextItem):
        assert getattr(trusted, field.name) == getattr(checked, field.name), field.name
