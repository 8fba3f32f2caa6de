"""StableWindow rules, one test each: append, compact at the marks, edits, resume, breakpoints, policies."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import cupel
from cupel import CupelTypeError, InvalidConfigurationError
from cupel.chat import (
    MESSAGES_KEY,
    Compacted,
    StableWindow,
    WindowState,
    message_token_counts,
    select_messages,
    with_cache_control,
)
from cupel.policy import loads_policy

SYSTEM = {"role": "system", "content": "You are a coding agent. " * 20}


def session(steps: int) -> list[dict[str, Any]]:
    """A system prompt, then a user question every fourth step and tool calls with results between."""
    messages: list[dict[str, Any]] = [copy.deepcopy(SYSTEM)]
    for step in range(steps):
        if step % 4 == 0:
            messages.append({"role": "user", "content": f"Task {step}: " + "fix the build " * 5})
            continue
        call = f"call_{step}"
        messages.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": call, "type": "function", "function": {"name": "read", "arguments": "{}"}}
                ],
            }
        )
        messages.append({"role": "tool", "tool_call_id": call, "content": f"{step} " + "output " * 20})
    return messages


def ends(messages: list[dict[str, Any]]) -> list[int]:
    """Lengths after each complete step (never between a call and its result)."""
    return [size for size in range(1, len(messages) + 1) if messages[size - 1]["role"] != "assistant"]


def test_between_compactions_the_previous_selection_is_the_prefix() -> None:
    messages = session(40)
    window: StableWindow = StableWindow(600)
    previous: tuple[Any, ...] = ()
    compactions = 0
    for size in ends(messages):
        selection = window.select(messages[:size])
        if selection.compacted:
            compactions += 1
        else:
            assert selection.messages[: len(previous)] == previous
            assert all(a is b for a, b in zip(previous, selection.messages, strict=False))
            assert selection.prefix == len(previous)
        assert selection.tokens <= 600
        previous = selection.messages
    assert window.state is not None and window.state.compactions == compactions - 1 > 0


def test_compaction_falls_to_the_low_water_mark_and_appends_up_to_the_high_one() -> None:
    messages = session(40)
    window: StableWindow = StableWindow(1000, high_water=0.9, low_water=0.5)
    peak = 0
    for size in ends(messages):
        selection = window.select(messages[:size])
        if selection.compacted:
            assert selection.tokens <= 500
        else:
            assert selection.tokens <= 900
        peak = max(peak, selection.tokens)
    assert peak > 700  # it does grow past the low mark between compactions


def test_the_selection_matches_select_messages_at_the_low_water_mark_after_compacting() -> None:
    messages = session(30)
    selection = StableWindow(1000, low_water=0.5).select(messages)
    assert selection.compacted and selection.prefix == 0
    assert selection.messages == select_messages(messages, 500).messages


def test_a_new_system_message_under_turns_compacts() -> None:
    messages = session(4)
    window: StableWindow = StableWindow(5000)
    window.select(messages)
    grown = [*messages, {"role": "system", "content": "Be brief."}, {"role": "user", "content": "go"}]
    selection = window.select(grown)
    assert selection.compacted
    assert [m["role"] for m in selection.messages[:2]] == ["system", "system"]


@pytest.mark.parametrize("edit", ["in place", "copy", "delete", "resumed"])
def test_an_edit_to_a_seen_message_recompacts(edit: str) -> None:
    messages = session(12)
    window: StableWindow = StableWindow(5000)
    first = window.select(messages)
    assert first.compacted
    if edit == "in place":
        messages[1]["content"] = "Task 0: never mind"
    elif edit == "copy":
        messages = copy.deepcopy(messages)
        messages[1]["content"] = "Task 0: never mind"
    elif edit == "delete":
        del messages[1]
    else:
        window = StableWindow(5000, state=window.to_dict())
        messages = copy.deepcopy(messages)
        messages[-1]["content"] = "changed"
    selection = window.select(messages)
    assert selection.compacted and selection.prefix == 0
    assert selection.messages == select_messages(messages, 3000).messages


def test_unchanged_copies_in_a_resumed_window_keep_appending() -> None:
    messages = session(20)
    window: StableWindow = StableWindow(5000)
    sizes = ends(messages)
    before = window.select(messages[: sizes[5]])
    saved = json.loads(json.dumps(window.to_dict()))
    resumed = StableWindow.from_dict(saved, 5000)
    after = resumed.select(copy.deepcopy(messages[: sizes[7]]))
    assert not after.compacted and after.prefix == len(before.messages)
    assert after.messages[: len(before.messages)] == before.messages


def test_other_settings_start_afresh() -> None:
    messages = session(8)
    window: StableWindow = StableWindow(5000)
    window.select(messages)
    other: StableWindow = StableWindow(5000, strategy="last", state=window.to_dict())
    assert other.select(messages).compacted


def test_state_round_trips_and_bad_state_is_a_one_line_error() -> None:
    window: StableWindow = StableWindow(600)
    assert window.state is None and window.to_dict() is None
    window.select(session(30))
    data = window.to_dict()
    assert data is not None
    assert WindowState.from_dict(json.loads(json.dumps(data))) == window.state
    with pytest.raises(InvalidConfigurationError, match="unknown field 'extra'"):
        WindowState.from_dict({**data, "extra": 1})
    with pytest.raises(InvalidConfigurationError, match=r"WindowState\.kept entries"):
        WindowState.from_dict({**data, "kept": [[5, 2]]})
    with pytest.raises(CupelTypeError, match=r"WindowState\.seen must be an int"):
        WindowState.from_dict({**data, "seen": "3"})
    with pytest.raises(InvalidConfigurationError, match=r"WindowState\.version must be 1"):
        WindowState.from_dict({**data, "version": 2})


@pytest.mark.parametrize(
    ("keywords", "message"),
    [
        ({"high_water": 0.0}, "high_water must be in \\(0, 1\\]"),
        ({"low_water": 1.5}, "low_water must be in \\(0, 1\\]"),
        ({"high_water": 0.5, "low_water": 0.6}, "low_water must be <= high_water"),
        ({"high_water": "1"}, "high_water must be a number"),
        ({"summary_tokens": -1}, "summary_tokens must be an int >= 0"),
    ],
)
def test_bad_marks_are_one_line_errors(keywords: dict[str, Any], message: str) -> None:
    with pytest.raises((InvalidConfigurationError, CupelTypeError), match=message):
        StableWindow(100, **keywords)


def test_cache_breakpoints_mark_the_system_base_previous_and_last_messages() -> None:
    messages = session(40)
    window: StableWindow = StableWindow(1000)
    sizes = ends(messages)
    window.select(messages[: sizes[10]])
    selection = window.select(messages[: sizes[11]])
    assert not selection.compacted
    last = len(selection.messages) - 1
    assert selection.cache_breakpoints == tuple(sorted({0, selection.base - 1, selection.prefix - 1, last}))
    marked = with_cache_control(selection.messages, selection.cache_breakpoints)
    for position, message in enumerate(marked):
        if position in selection.cache_breakpoints:
            assert message["content"][-1]["cache_control"] == {"type": "ephemeral"}
            assert message is not selection.messages[position]
        else:
            assert message is selection.messages[position]


def test_with_cache_control_rejects_a_message_without_content() -> None:
    call = session(2)[2]
    with pytest.raises(InvalidConfigurationError, match="no content block"):
        with_cache_control([call], [0])
    with pytest.raises(InvalidConfigurationError, match="outside the 1 messages"):
        with_cache_control([call], [3])


def test_dropped_units_are_reported_as_compacted_between_compactions() -> None:
    messages = session(40)
    window: StableWindow = StableWindow(600)
    sizes = ends(messages)
    window.select(messages[: sizes[-2]])
    selection = window.select(messages[: sizes[-1]])
    report = selection.report
    if not selection.compacted:
        assert report.excluded and all(isinstance(entry.reason, Compacted) for entry in report.excluded)
    assert report.included_tokens == selection.tokens
    kept = {id(message) for entry in report.included for message in entry.item.metadata[MESSAGES_KEY]}
    assert kept == {id(message) for message in selection.messages}


def test_the_strategy_comes_from_a_policy_file() -> None:
    policy = loads_policy('extends = "chat"\nchat = { strategy = "last" }\n')
    messages = session(30)
    selection = StableWindow(1000, policy).select(messages)
    assert selection.messages == select_messages(messages, 600, strategy="last").messages


def test_a_summary_is_kept_unchanged_until_the_next_compaction() -> None:
    messages = session(40)
    window: StableWindow = StableWindow(1000, summarize=True, summary_tokens=80)
    sizes = ends(messages)
    summaries = []
    for size in sizes:
        selection = window.select(messages[:size])
        summary = selection.messages[1] if len(selection.messages) > 1 else {"role": "user"}
        if summary["role"] == "system":
            assert summary["content"].startswith("Earlier conversation")
            summaries.append((selection.compacted, summary))
        assert selection.tokens == sum(message_token_counts(list(selection.messages)))
        assert selection.cache_breakpoints[0] == 0  # the system prompt, before the summary
    appended = [summary for compacted, summary in summaries if not compacted]
    assert appended and all(
        later is earlier
        for (compacted, later), (_, earlier) in zip(summaries[1:], summaries, strict=False)
        if not compacted
    )
    state = window.to_dict()
    assert state is not None and state["summary"]["role"] == "system"
    resumed = StableWindow.from_dict(state, 1000, summarize=True, summary_tokens=80)
    assert resumed.select(messages).messages == selection.messages


def test_exported_from_the_package_root() -> None:
    assert cupel.StableWindow is StableWindow
    assert "StableWindow" in cupel.__all__ and "WindowState" in cupel.__all__


def test_aselect_awaits_an_async_summariser_and_matches_select() -> None:
    import asyncio

    calls: list[int] = []

    async def summarize(dropped: Any) -> str:
        calls.append(len(dropped))
        await asyncio.sleep(0)
        return f"{len(dropped)} messages dropped"

    messages = session(40)
    sizes = ends(messages)

    async def run() -> list[tuple[Any, ...]]:
        window = StableWindow(1000, summarize=summarize, summary_tokens=40)
        return [(await window.aselect(messages[:size])).messages for size in sizes]

    selections = asyncio.run(run())
    assert calls  # compactions summarised, on the running loop
    plain = StableWindow(
        1000, summarize=lambda dropped: f"{len(dropped)} messages dropped", summary_tokens=40
    )
    for size, selected in zip(sizes, selections, strict=True):
        assert json.dumps(plain.select(messages[:size]).messages) == json.dumps(selected)
