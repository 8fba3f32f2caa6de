"""A saved WindowState remembers which tool results the window cleared (``WindowState.cleared``): a
window resumed from it sends them cleared again and chooses, turn after turn, what the window that
was never saved chooses. The field is read strictly, checked against the transcript on resume, and
optional (a state saved before it existed loads and behaves as it did)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cupel import CupelError
from cupel.chat import StableWindow, WindowState, validate_transcript
from cupel.chat.validate import RESUME_STAGE
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.policy import ToolResultClearing

CLEARED = "[tool result cleared"


def agent_loop(
    sizes: list[int], *, anthropic: bool, tools: tuple[str, ...] = ("logs",)
) -> list[dict[str, Any]]:
    """A scripted agent transcript: a system prompt and a task, then one step per size (a call, or in
    Anthropic's form two parallel calls, each answered by a result of about ``size`` words); every
    fifth step the user follows up instead."""
    text: Any = "Fix the failing deploy."
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a deploy agent."},
        {"role": "user", "content": [{"type": "text", "text": text}] if anthropic else text},
    ]
    for step, size in enumerate(sizes):
        if step % 5 == 4:
            messages.append({"role": "assistant", "content": f"Step {step} done."})
            messages.append({"role": "user", "content": f"Now check service {step}."})
            continue
        name = tools[step % len(tools)]
        result = f"step {step} log: " + "error retry timeout " * (size // 3)
        if anthropic:
            ids = (f"a{step}", f"b{step}")
            uses = [{"type": "tool_use", "id": i, "name": name, "input": {"n": step}} for i in ids]
            messages.append({"role": "assistant", "content": uses})
            answers = [{"type": "tool_result", "tool_use_id": i, "content": result} for i in ids]
            messages.append({"role": "user", "content": answers})
        else:
            call = {"id": f"c{step}", "type": "function", "function": {"name": name, "arguments": "{}"}}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
            messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": result})
    return messages


def turns_of(messages: list[dict[str, Any]]) -> list[int]:
    """Transcript lengths after each step (every call answered)."""
    return list(range(2, len(messages) + 1, 2))


def _cleared_results(messages: Any) -> dict[str, str]:
    """Call id -> placeholder of each cleared result sent."""
    found = {}
    for message in messages:
        if message["role"] == "tool" and message["content"].startswith(CLEARED):
            found[message["tool_call_id"]] = message["content"]
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and str(block["content"]).startswith(CLEARED):
                found[block["tool_use_id"]] = block["content"]
    return found


def _window(budget: int, clearing: ToolResultClearing, strategy: str, state: Any = None) -> StableWindow:
    return StableWindow(budget, "tool_use", strategy=strategy, clear_tool_results=clearing, state=state)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(3, 150), min_size=6, max_size=22),
    anthropic=st.booleans(),
    strategy=st.sampled_from(["turns", "last"]),
    keep=st.integers(0, 3),
    at_least=st.integers(0, 600),
    budget=st.integers(350, 1400),
    excluded=st.booleans(),
)
def test_a_resumed_window_clears_and_chooses_as_the_window_never_saved(
    sizes: list[int], anthropic: bool, strategy: str, keep: int, at_least: int, budget: int, excluded: bool
) -> None:
    tools = ("logs", "spec") if excluded else ("logs",)
    clearing = ToolResultClearing(keep=keep, clear_at_least=at_least, exclude_tools=tools[1:])
    messages = agent_loop(sizes, anthropic=anthropic, tools=tools)
    live = _window(budget, clearing, strategy)
    saved: dict[str, Any] | None = None
    placeholders: dict[str, str] = {}
    for size in turns_of(messages):
        transcript = messages[:size]
        try:
            expected = live.select(transcript)
        except CupelError as error:  # the latest turn does not fit: the resumed window says so too
            with pytest.raises(type(error)):
                _window(budget, clearing, strategy, saved).select(copy.deepcopy(transcript))
            continue
        # A stateless service: a new window each turn, from the JSON the previous turn saved.
        resumed = _window(budget, clearing, strategy, saved)
        got = resumed.select(copy.deepcopy(transcript))
        assert got.messages == expected.messages
        assert (got.tokens, got.prefix, got.base, got.system, got.compacted) == (
            expected.tokens,
            expected.prefix,
            expected.base,
            expected.system,
            expected.compacted,
        )
        assert resumed.to_dict() == live.to_dict()
        assert all(event.stage != RESUME_STAGE for event in got.report.events)
        saved = json.loads(json.dumps(live.to_dict()))
        # Once cleared, a result is sent with the same placeholder (its original size) while kept.
        for call_id, text in _cleared_results(got.messages).items():
            assert placeholders.setdefault(call_id, text) == text
        assert validate_transcript(list(got.messages), "anthropic" if anthropic else "openai") == []


def _cleared_window(steps: int = 20) -> tuple[StableWindow, list[dict[str, Any]], dict[str, Any]]:
    """A window that cleared tool results, its transcript, and its saved state."""
    messages = agent_loop([60] * steps, anthropic=False)
    window = _window(900, ToolResultClearing(keep=2, clear_at_least=200), "turns")
    for size in turns_of(messages):
        window.select(messages[:size])
    data = window.to_dict()
    assert data is not None and data["cleared"]
    return window, messages, data


def test_the_state_names_each_cleared_result_by_position_and_call_id() -> None:
    window, messages, data = _cleared_window()
    assert window.state is not None and WindowState.from_dict(json.loads(json.dumps(data))) == window.state
    for position, call_id in data["cleared"]:
        assert messages[position]["role"] == "tool" and messages[position]["tool_call_id"] == call_id
    assert data["cleared"] == sorted(data["cleared"])
    sent = window.select(messages).messages
    sent_cleared = {
        m["tool_call_id"] for m in sent if m["role"] == "tool" and m["content"].startswith(CLEARED)
    }
    assert sent_cleared <= {call_id for _, call_id in data["cleared"]}


@pytest.mark.parametrize(
    ("cleared", "error"),
    [
        (None, CupelTypeError),
        ("3:c0", CupelTypeError),
        ([3], InvalidConfigurationError),
        ([[3]], InvalidConfigurationError),
        ([["3", "c0"]], InvalidConfigurationError),
        ([[True, "c0"]], InvalidConfigurationError),
        ([[-1, "c0"]], InvalidConfigurationError),
        ([[10**6, "c0"]], InvalidConfigurationError),
        ([[3, 0]], InvalidConfigurationError),
        ([[5, "c1"], [3, "c0"]], InvalidConfigurationError),
        ([[3, "c0"], [3, "c0"]], InvalidConfigurationError),
    ],
)
def test_malformed_clearing_data_is_a_one_line_error_naming_the_field(cleared: object, error: type) -> None:
    _, _, data = _cleared_window()
    with pytest.raises(error, match=r"^WindowState\.cleared ") as raised:
        WindowState.from_dict({**data, "cleared": cleared})
    assert "\n" not in str(raised.value)


def test_a_state_saved_before_the_field_existed_loads_and_behaves_as_before() -> None:
    # A window that never cleared: its state without the field is the same state.
    messages = agent_loop([20] * 12, anthropic=True)
    plain = StableWindow(5000)
    plain.select(messages[:10])
    data = plain.to_dict()
    assert data is not None and data["cleared"] == []
    old = {key: value for key, value in data.items() if key != "cleared"}
    assert WindowState.from_dict(old) == plain.state
    resumed = StableWindow(5000, state=old).select(copy.deepcopy(messages))
    assert resumed.messages == plain.select(messages).messages and not resumed.compacted
    # A window that had cleared, saved without the field (as it was saved before): the kept messages'
    # tokens disagree with the uncleared transcript, so the window starts afresh, as it always did.
    _, messages, data = _cleared_window()
    old = {key: value for key, value in data.items() if key != "cleared"}
    fresh = _window(900, ToolResultClearing(keep=2, clear_at_least=200), "turns")
    selection = _window(900, ToolResultClearing(keep=2, clear_at_least=200), "turns", old).select(messages)
    assert selection.compacted and selection.prefix == 0
    assert selection.report.events[0].stage == RESUME_STAGE
    assert selection.messages == fresh.select(messages).messages


@pytest.mark.parametrize("lie", ["a user message", "a result clearing keeps", "clearing off"])
def test_a_state_naming_a_result_clearing_may_not_clear_starts_afresh(lie: str) -> None:
    _, messages, data = _cleared_window()
    clearing: ToolResultClearing | bool = ToolResultClearing(keep=2, clear_at_least=200)
    if lie == "a user message":
        data["cleared"] = sorted([*data["cleared"], [1, "c0"]])
    elif lie == "a result clearing keeps":  # the newest result is always kept
        newest = max(position for position, message in enumerate(messages) if message["role"] == "tool")
        data["cleared"] = [*data["cleared"], [newest, messages[newest]["tool_call_id"]]]
    else:
        clearing = False
    window = StableWindow(900, "tool_use", strategy="turns", clear_tool_results=clearing, state=data)
    if lie == "clearing off":  # other settings: a silent fresh start, nothing cleared
        selection = window.select(messages)
        assert selection.compacted and not _cleared_results(selection.messages)
        return
    selection = window.select(messages)
    events = [event.message for event in selection.report.events if event.stage == RESUME_STAGE]
    assert len(events) == 1 and "cleared; it may not be" in events[0]
    assert selection.compacted and selection.prefix == 0
    fresh = StableWindow(900, "tool_use", strategy="turns", clear_tool_results=clearing)
    assert selection.messages == fresh.select(messages).messages


def test_a_compaction_that_raises_forgets_nothing_the_window_cleared() -> None:
    window, messages, _ = _cleared_window()
    twin, _, _ = _cleared_window()
    edited = [{**messages[0], "content": "far too long " * 3000}, *messages[1:]]
    with pytest.raises(CupelError):
        window.select(edited)
    assert window.select(messages).messages == twin.select(messages).messages
