"""Properties of select_messages over random transcripts with tool-call groups, systems and images."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    GreedySlice,
    KindScorer,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    UShapedPlacer,
)
from cupel.chat import message_token_counts, messages_to_items, select_messages

WORDS = ["alpha", "beta", "gamma", "delta", "a", "ok", "the answer is", "x" * 30, ""]

texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


def image_part(draw: st.DrawFn) -> dict[str, Any]:
    payload = "data:image/png;base64," + "A" * draw(st.integers(0, 5000))
    detail = draw(st.sampled_from([None, "low", "high", "auto"]))
    inner: dict[str, Any] = {"url": payload}
    if detail is not None:
        inner["detail"] = detail
    return {"type": "image_url", "image_url": inner}


@st.composite
def transcripts(draw: st.DrawFn) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 2))):
        messages.append({"role": draw(st.sampled_from(["system", "developer"])), "content": draw(texts)})
    serial = 0
    steps = draw(
        st.lists(
            st.sampled_from(["user", "assistant", "image", "openai", "anthropic", "legacy"]), max_size=12
        )
    )
    for step in steps:
        if step in ("user", "assistant"):
            messages.append({"role": step, "content": draw(texts)})
        elif step == "image":
            parts: list[dict[str, Any]] = [{"type": "text", "text": draw(texts)}]
            parts.extend(image_part(draw) for _ in range(draw(st.integers(1, 2))))
            messages.append({"role": "user", "content": parts})
        elif step == "openai":
            count = draw(st.integers(1, 3))
            # Some servers number calls per turn; ids are then reused once answered.
            per_turn = draw(st.booleans())
            ids = [f"call_{index}" if per_turn else f"call_{serial + index}" for index in range(count)]
            serial += count
            calls = [
                {"id": call_id, "type": "function", "function": {"name": "f", "arguments": draw(texts)}}
                for call_id in ids
            ]
            messages.append(
                {
                    "role": "assistant",
                    "content": draw(st.sampled_from([None, "checking"])),
                    "tool_calls": calls,
                }
            )
            for call_id in draw(st.permutations(ids)):
                messages.append({"role": "tool", "tool_call_id": call_id, "content": draw(texts)})
        elif step == "anthropic":
            count = draw(st.integers(1, 3))
            ids = [f"toolu_{serial + index}" for index in range(count)]
            serial += count
            blocks: list[dict[str, Any]] = [{"type": "text", "text": draw(texts)}]
            blocks.extend(
                {"type": "tool_use", "id": call_id, "name": "g", "input": {"q": draw(texts)}}
                for call_id in ids
            )
            messages.append({"role": "assistant", "content": blocks})
            results: list[dict[str, Any]] = [
                {"type": "tool_result", "tool_use_id": call_id, "content": draw(texts)}
                for call_id in draw(st.permutations(ids))
            ]
            if draw(st.booleans()):
                results.append({"type": "text", "text": draw(texts)})
            messages.append({"role": "user", "content": results})
        else:
            messages.append(
                {"role": "assistant", "content": None, "function_call": {"name": "h", "arguments": "{}"}}
            )
            messages.append({"role": "function", "name": "h", "content": draw(texts)})
    return messages


def calls_and_results(message: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The tool-call ids a message makes and answers, read independently of the library."""
    calls = [call["id"] for call in message.get("tool_calls") or []]
    results = [message["tool_call_id"]] if message["role"] == "tool" else []
    if message.get("function_call"):
        calls.append("<function>")
    if message["role"] == "function":
        results.append("<function>")
    content = message.get("content")
    if isinstance(content, list):
        calls.extend(block["id"] for block in content if block.get("type") == "tool_use")
        results.extend(block["tool_use_id"] for block in content if block.get("type") == "tool_result")
    return calls, results


def assert_valid_transcript(messages: list[Mapping[str, Any]]) -> None:
    """Every result answers an open earlier call, and every call is answered."""
    open_calls: list[str] = []
    for message in messages:
        calls, results = calls_and_results(message)
        for call_id in results:
            assert call_id in open_calls, f"result {call_id!r} without its call"
            open_calls.remove(call_id)
        open_calls.extend(calls)
    assert not open_calls, f"calls without results: {open_calls}"


def positions(selected: tuple[Any, ...], messages: list[dict[str, Any]]) -> list[int]:
    by_id = {id(message): index for index, message in enumerate(messages)}
    return [by_id[id(message)] for message in selected]


def budget_for(data: st.DataObject, messages: list[dict[str, Any]]) -> tuple[ContextBudget | int, int]:
    """A budget the pinned messages fit in, as an int or a ContextBudget; also its target."""
    items = messages_to_items(messages)
    pinned = sum(item.tokens for item in items if item.pinned)
    total = sum(item.tokens for item in items)
    target = data.draw(st.integers(pinned, total + 20), label="target")
    if data.draw(st.booleans(), label="plain int"):
        return target, target
    slack = data.draw(st.integers(0, 50), label="slack")
    reserve = data.draw(st.integers(0, slack), label="reserve")
    return ContextBudget(target + slack, target, output_reserve=reserve), target


@given(transcripts(), st.data())
def test_selected_transcripts_are_valid_ordered_pinned_and_within_budget(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    assert_valid_transcript(messages)
    snapshot = copy.deepcopy(messages)
    budget, target = budget_for(data, messages)
    result = select_messages(messages, budget, strategy="messages")
    selected = list(result.messages)
    assert_valid_transcript(selected)
    order = positions(result.messages, messages)
    assert order == sorted(order) and len(set(order)) == len(order)
    systems = [message for message in messages if message["role"] in ("system", "developer")]
    assert all(any(message is kept for kept in selected) for message in systems)
    users = [index for index, message in enumerate(messages) if message["role"] == "user"]
    if users:
        assert users[-1] in order
    assert sum(message_token_counts(selected)) == result.tokens <= target
    assert messages == snapshot
    kept_and_dropped = sorted(order + positions(result.excluded_messages, messages))
    assert kept_and_dropped == list(range(len(messages)))


@given(transcripts())
def test_a_budget_holding_everything_returns_the_transcript(messages: list[dict[str, Any]]) -> None:
    result = select_messages(messages, sum(message_token_counts(messages)))
    assert list(result.messages) == messages


scorers = st.sampled_from(
    [
        RecencyScorer(),
        KindScorer(),
        PriorityScorer(),
        CompositeScorer([(RecencyScorer(), 1), (KindScorer(), 2)]),
    ]
)
pipelines = st.builds(
    Pipeline,
    scorers,
    st.just(GreedySlice()),
    st.sampled_from([ChronologicalPlacer(), UShapedPlacer()]),
    deduplication=st.booleans(),
)


@given(transcripts(), pipelines, st.data())
def test_any_pipeline_keeps_units_whole_and_order(
    messages: list[dict[str, Any]], pipeline: Pipeline, data: st.DataObject
) -> None:
    items = messages_to_items(messages)
    pinned = sum(item.tokens for item in items if item.pinned)
    budget = data.draw(st.integers(pinned, sum(item.tokens for item in items) + 5))
    result = select_messages(messages, budget, policy=pipeline, strategy="messages")
    assert_valid_transcript(list(result.messages))
    order = positions(result.messages, messages)
    assert order == sorted(order)
    assert result.tokens <= budget
    # Units are whole: each item's messages are all kept or all dropped.
    kept = set(order)
    for item in items:
        indices = set(item.metadata["cupel:chat.indices"])
        assert indices <= kept or not indices & kept
