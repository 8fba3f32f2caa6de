"""The ``"turns"`` fast path's report, column scoring and count cache against the plain reference.

For random provider-valid transcripts (tool calls, parallel calls, several and middle system
messages, images), budgets that cut everywhere, settings, options and policies (column-scored ones,
a knapsack slicer, a scorer only items can feed), the report of ``select_messages(strategy="turns")``
equals, entry by entry, the report of :func:`cupel.chat.choose.select_turns` over
:func:`cupel.chat.messages_to_items`.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.chat._reports import report_values as _report
from tests.chat._transcripts import (
    answering,
    openai_transcripts,
    plain_transcript,
    to_langchain,
    turn_arguments,
)
from tests.profiles import examples

from cupel import OverflowStrategy, Pipeline
from cupel.chat import ChatOptions, ChatSession, message_token_counts, messages_to_items, select_messages
from cupel.chat.choose_units import select_turns
from cupel.chat.read import MESSAGES_KEY
from cupel.chat.session import count_texts_once
from cupel.errors import BudgetOverflowError, CupelError
from cupel.model import ContextBudget
from cupel.placers import ChronologicalPlacer
from cupel.policy import chat, document_qa, long_running, tool_use
from cupel.scorers import CompositeScorer, KindScorer, RecencyScorer, TagScorer
from cupel.slicers import GreedySlice

EXAMPLES = examples(120)

pipelines = st.sampled_from(
    [
        Pipeline.from_policy(chat()),
        Pipeline.from_policy(tool_use()),
        Pipeline.from_policy(long_running()),  # keep_first_turn
        Pipeline.from_policy(replace(document_qa(), overflow_strategy=OverflowStrategy.TRUNCATE)),
        Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.TRUNCATE)),
        Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.PROCEED)),
        Pipeline(
            CompositeScorer([(TagScorer({"user": 1.0, "tool": 2.0}), 1.0), (RecencyScorer(), 1.0)]),
            GreedySlice(),
            ChronologicalPlacer(),
            deduplication=False,
        ),
        Pipeline(KindScorer(), GreedySlice(), ChronologicalPlacer()),
    ]
)


@settings(max_examples=EXAMPLES, deadline=None)
@given(*turn_arguments(pipelines))
def test_the_fast_report_equals_the_reference_report(
    messages: list[dict[str, Any]],
    budget: int,
    pipeline: Pipeline,
    chosen: ChatOptions,
    keep_first_turn: bool,
    recent_share: float,
) -> None:
    keywords: dict[str, Any] = {"keep_first_turn": keep_first_turn, "recent_share": recent_share}
    try:
        items = messages_to_items(messages, options=chosen)
        bound = answering(messages, pipeline, chosen)
        choice = select_turns(items, ContextBudget(budget, budget), bound, notify=False, **keywords)
        expected: object = _report(choice.report(bound.scorer))
    except CupelError as error:
        expected = f"{type(error).__name__}: {error}"
    try:
        result = select_messages(messages, budget, pipeline, options=chosen, strategy="turns", **keywords)
        actual: object = _report(result.report)
    except CupelError as error:
        actual = f"{type(error).__name__}: {error}"
    assert actual == expected


def test_a_report_with_no_older_turn_builds_no_turn_item() -> None:
    # A scorer that reads items (Reflexive) asks for the older turns' items when there are none.
    from cupel.placers import UShapedPlacer
    from cupel.scorers import PriorityScorer, ReflexiveScorer, RelevanceScorer
    from cupel.slicers import ScoreSlice

    scorer = CompositeScorer([(RelevanceScorer(), 2.0), (ReflexiveScorer(), 2.0), (PriorityScorer(), 1.0)])
    pipeline = Pipeline(scorer, ScoreSlice(), UShapedPlacer(), overflow_strategy=OverflowStrategy.TRUNCATE)
    options = ChatOptions(pin_system=False, pin_last_user=False)
    result = select_messages(
        [{"role": "system", "content": ""}], 0, pipeline, options=options, strategy="turns"
    )
    assert result.messages == () and not result.report.included
    assert [entry.item.content for entry in result.report.excluded] == ["[0] system"]


@settings(max_examples=EXAMPLES // 3, deadline=None)
@given(openai_transcripts(), st.integers(0, 400), pipelines)
def test_the_fast_report_on_langchain_messages_equals_the_reference(
    messages: list[dict[str, Any]], budget: int, pipeline: Pipeline
) -> None:
    from cupel.chat.langchain import messages_to_items as langchain_items
    from cupel.chat.langchain import select_messages as select_langchain

    converted = to_langchain(messages)
    try:
        bound = answering(messages, pipeline, ChatOptions())
        choice = select_turns(langchain_items(converted), ContextBudget(budget, budget), bound, notify=False)
        expected: object = _report(choice.report(bound.scorer))
    except CupelError as error:
        expected = f"{type(error).__name__}: {error}"
    try:
        actual: object = _report(select_langchain(converted, budget, pipeline, strategy="turns").report)
    except CupelError as error:
        actual = f"{type(error).__name__}: {error}"
    assert actual == expected


@pytest.mark.parametrize("budget", [10, 40, 300, 1500, 6000, 100_000])
def test_a_long_plain_transcript_keeps_what_the_reference_keeps(budget: int) -> None:
    # Large enough for the numpy paths of scoring and ordering (4,096 candidates and more).
    messages = plain_transcript(9000)
    pipeline = Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.TRUNCATE))
    if budget == 10:  # not even the latest question fits: both raise rather than send no question
        with pytest.raises(BudgetOverflowError):
            select_turns(messages_to_items(messages), ContextBudget(budget, budget), pipeline)
        with pytest.raises(BudgetOverflowError):
            select_messages(messages, budget, pipeline, strategy="turns")
        return
    bound = answering(messages, pipeline, ChatOptions())
    choice = select_turns(messages_to_items(messages), ContextBudget(budget, budget), bound)
    kept = [message for item in choice.kept_items() for message in item.metadata[MESSAGES_KEY]]
    result = select_messages(messages, budget, pipeline, strategy="turns")
    assert [id(message) for message in result.messages] == [id(message) for message in kept]
    if budget in (300, 100_000):
        assert _report(result.report) == _report(choice.report(bound.scorer))


def _turns_reports(
    messages: list[dict[str, Any]], budget: int, pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch
) -> tuple[object, object] | None:
    """The report of the older turns read per candidate and the one spread over units (the reference
    within the columns), or ``None`` where the selection raises or the run is not over older turns."""
    import dataclasses

    from cupel.chat import render

    seen: list[tuple[Any, ...]] = []
    original = render.turns_report
    monkeypatch.setattr(
        render, "turns_report", lambda *arguments: seen.append(arguments) or original(*arguments)
    )
    try:
        assert select_messages(messages, budget, pipeline, strategy="turns").report is not None
    except CupelError:
        return None
    finally:
        monkeypatch.undo()
    records, outcome, bound = seen[0]
    if outcome.spans is None or outcome.run is None:
        return None
    by_units = dataclasses.replace(outcome, spans=None)
    fast, reference = (
        render.turns_report(records, outcome, bound),
        render.turns_report(records, by_units, bound),
    )
    return (None if fast is None else _report(fast)), (None if reference is None else _report(reference))


@settings(max_examples=EXAMPLES, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=1, max_size=40),
    st.integers(5, 95),
    pipelines,
    st.sampled_from([{"user": 1.0}, {"user": 2.0, "assistant": 1.0}, {"assistant": 0.5}]),
    st.booleans(),
    st.integers(0, 1),
)
def test_older_turns_read_per_candidate_report_what_the_unit_columns_report(
    lengths: list[int],
    percent: int,
    pipeline: Pipeline,
    weights: dict[str, float],
    long_answer: bool,
    shift: int,
) -> None:
    # Plain turns (each a run of units, the first a preamble with ``shift``); tag weights tie scores at
    # 1.0 with the units a rule left out of a latest turn too long to keep whole (a long answer).
    messages = [{"role": "system", "content": "Be brief."}]
    messages += [
        {
            "role": "user" if (index + shift) % 2 == 0 else "assistant",
            "content": f"{index} " + "word " * length,
        }
        for index, length in enumerate(lengths)
    ]
    if long_answer:
        messages += [{"role": "user", "content": "Go on."}, {"role": "assistant", "content": "word " * 200}]
    budget = sum(message_token_counts(messages)) * percent // 100  # older turns to choose among
    truncating = Pipeline.from_policy(replace(chat(), overflow_strategy=OverflowStrategy.TRUNCATE))
    tagged = Pipeline(
        TagScorer(weights), GreedySlice(), ChronologicalPlacer(), overflow_strategy=OverflowStrategy.TRUNCATE
    )
    with pytest.MonkeyPatch.context() as monkeypatch:
        for chosen in (pipeline, truncating, tagged):
            found = _turns_reports(messages, budget, chosen, monkeypatch)
            if found is not None:
                assert found[0] == found[1]


def test_units_a_rule_left_out_come_between_the_older_turns_scored_1_and_below() -> None:
    # The preamble scores 0, the older turn 1.0; the latest turn's long answer is left out by a rule.
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "assistant", "content": "Hello, how can I help?"},
        {"role": "user", "content": "one"},
        {"role": "assistant", "content": "two two"},
        {"role": "user", "content": "Go on."},
        {"role": "assistant", "content": "word " * 200},
    ]
    tagged = Pipeline(
        TagScorer({"user": 1.0}),
        GreedySlice(),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    with pytest.MonkeyPatch.context() as monkeypatch:
        found = _turns_reports(messages, 20, tagged, monkeypatch)
    assert found is not None and found[0] == found[1]
    report = select_messages(messages, 20, tagged, strategy="turns").report
    assert [(entry.item.content[:3], entry.score) for entry in report.excluded] == [
        ("[2]", 1.0),
        ("[3]", 1.0),
        ("[5]", 1.0),
        ("[1]", 0.0),
    ]


class _Counting:
    """A counter that records every text it is asked to count."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def count(self, text: str) -> int:
        self.seen.append(text)
        return math.ceil(len(text) / 4)

    def count_many(self, texts: list[str]) -> list[int]:
        return [self.count(text) for text in texts]


def test_a_session_keeps_counts_per_counter_and_text_across_selections() -> None:
    session = ChatSession()
    counter = _Counting()
    messages = [*plain_transcript(50), {"role": "user", "content": "0: "}]
    first = select_messages(messages, 500, counter=counter, session=session)
    assert sorted(counter.seen) == sorted(set(message["content"] for message in messages))
    counter.seen.clear()
    grown = [*messages, {"role": "assistant", "content": "new reply"}, {"role": "user", "content": "next?"}]
    second = select_messages(grown, 500, counter=counter, session=session)
    assert counter.seen == ["new reply", "next?"]
    assert first.tokens > 0 and second.tokens > 0
    assert second.messages == select_messages(grown, 500, counter=_Counting()).messages
    # Another counter has its own counts.
    other = _Counting()
    select_messages(messages, 500, counter=other, session=session)
    assert len(other.seen) == len(set(message["content"] for message in messages))


def test_without_a_session_nothing_is_kept_between_calls() -> None:
    counter = _Counting()
    messages = plain_transcript(20)
    select_messages(messages, 500, counter=counter)
    select_messages(messages, 500, counter=counter)
    assert len(counter.seen) == 2 * len(set(message["content"] for message in messages))


def test_the_count_cache_is_bounded_by_the_characters_it_keeps(monkeypatch: pytest.MonkeyPatch) -> None:
    from cupel.chat import session as sessions

    session = ChatSession()
    monkeypatch.setattr(sessions, "CHAR_LIMIT", 100)
    counter = _Counting()
    blob = "x" * 101  # longer than the whole table may hold: counted, never kept
    assert count_texts_once([blob, "short"], counter, session) == [26, 2]
    assert count_texts_once([blob, "short"], counter, session) == [26, 2]
    assert counter.seen == [blob, "short", blob]
    counter.seen.clear()
    texts = [f"{index:02d}" + "y" * 38 for index in range(3)]  # 120 characters in all
    count_texts_once(texts[:2], counter, session)
    count_texts_once(texts[2:], counter, session)  # the table is full: emptied, then keeps the new text
    count_texts_once(texts, counter, session)
    assert counter.seen == [*texts, *texts[:2]]


def test_an_unhashable_counter_is_counted_afresh_every_time() -> None:
    class Unhashable(_Counting):
        __hash__ = None  # type: ignore[assignment]

    counter = Unhashable()
    messages = plain_transcript(10)
    session = ChatSession()
    select_messages(messages, 500, counter=counter, session=session)
    select_messages(messages, 500, counter=counter, session=session)
    assert len(counter.seen) == 2 * len(set(message["content"] for message in messages))


def test_a_bad_count_is_reported_and_not_cached() -> None:
    session = ChatSession()

    def negative(text: str) -> int:
        return -1 if text == "bad" else len(text)

    messages = [{"role": "user", "content": "fine"}, {"role": "user", "content": "bad"}]
    for _ in range(2):
        with pytest.raises(CupelError, match="must be >= 0"):
            select_messages(messages, 100, counter=negative, session=session)
