"""Tool-result clearing (``clear_tool_results=``): older tool results' content becomes a placeholder
before whole units are dropped; every call and result message stays, inputs are never changed."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cupel.chat import ChatSelection, message_token_counts, select_messages, validate_transcript
from cupel.chat.render import CLEAR_STAGE
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.policy import ChatSettings, PolicyFileError, ToolResultClearing, loads_policy, policy_to_dict
from cupel.policy import tool_use as tool_use_policy

TASK = "Fix the failing deploy."


def _result(step: int, words: int = 40) -> str:
    return f"step {step} log: " + "error retry timeout " * (words // 3)


def openai_loop(steps: int, *, tools: tuple[str, ...] = ("logs",), words: int = 40) -> list[dict[str, Any]]:
    """A system prompt, the task, then one call with its ~``words``-word result per step."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a deploy agent."},
        {"role": "user", "content": TASK},
    ]
    for step in range(steps):
        name = tools[step % len(tools)]
        call = {"id": f"c{step}", "type": "function", "function": {"name": name, "arguments": "{}"}}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{step}", "content": _result(step, words)})
    return messages


def anthropic_loop(steps: int) -> list[dict[str, Any]]:
    """The same loop in Anthropic's form: two parallel calls per step, answered by one user message."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a deploy agent."},
        {"role": "user", "content": [{"type": "text", "text": TASK}]},
    ]
    for step in range(steps):
        ids = (f"a{step}", f"b{step}")
        messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": i, "name": "logs", "input": {"n": step}} for i in ids],
            }
        )
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": i,
                        "content": [{"type": "text", "text": _result(step)}],
                    }
                    for i in ids
                ],
            }
        )
    return messages


def _tool_contents(messages: Any) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


def _cleared_ids(selection: ChatSelection[Any]) -> list[str]:
    return [
        m["tool_call_id"]
        for m in selection.messages
        if m["role"] == "tool" and str(m["content"]).startswith("[tool result cleared")
    ]


def _saves(content: str) -> bool:
    """Whether a placeholder costs fewer tokens than ``content`` (what clearing it would save)."""
    tokens = message_token_counts([{"role": "tool", "tool_call_id": "x", "content": content}])[0] - 4
    shown = f"[tool result cleared: {tokens:,} tokens]"
    return message_token_counts([{"role": "user", "content": shown}])[0] - 4 < tokens


def _total(messages: list[dict[str, Any]]) -> int:
    return select_messages(messages, 10**6).tokens


def test_off_by_default_and_on_when_asked() -> None:
    messages = openai_loop(8)
    budget = _total(messages) - 100
    plain = select_messages(messages, budget, policy="chat")
    assert len(plain.messages) < len(messages)  # without clearing, units are dropped
    cleared = select_messages(messages, budget, policy="chat", clear_tool_results=True)
    assert len(cleared.messages) == len(messages)  # every call and result message is sent
    assert cleared.tokens <= budget
    assert _cleared_ids(cleared)


def test_the_tool_use_preset_clears_by_default() -> None:
    from cupel.policy import get_preset

    chat = get_preset("tool_use").chat
    assert chat is not None and chat.clear_tool_results == ToolResultClearing()
    # Long sessions: clearing oldest first drops results the question needs (docs/chat.md).
    for name in ("chat", "long_running"):
        settings = get_preset(name).chat
        assert settings is not None and settings.clear_tool_results is None


def test_nothing_is_cleared_when_the_transcript_fits() -> None:
    messages = openai_loop(5)
    selection = select_messages(messages, _total(messages), clear_tool_results=True)
    assert list(selection.messages) == messages
    assert all(a is b for a, b in zip(selection.messages, messages, strict=True))
    assert not [e for e in selection.report.events if e.stage == CLEAR_STAGE]


def test_oldest_first_and_only_as_many_as_needed() -> None:
    messages = openai_loop(10)
    total = _total(messages)
    counts = []
    for over in (1, 60, 200):
        selection = select_messages(messages, total - over, clear_tool_results=ToolResultClearing(keep=2))
        cleared = _cleared_ids(selection)
        assert cleared == [f"c{i}" for i in range(len(cleared))]  # a prefix: oldest first
        assert len(selection.messages) == len(messages) and selection.tokens <= total - over
        newest = 2 * len(cleared) + 1  # the position of the newest cleared result
        restored = [*selection.messages[:newest], messages[newest], *selection.messages[newest + 1 :]]
        assert len(select_messages(restored, total - over).messages) < len(messages)  # one fewer: no fit
        counts.append(len(cleared))
    assert counts == sorted(counts) and counts[0] == 1


def test_the_newest_results_are_kept_intact() -> None:
    messages = openai_loop(10)
    selection = select_messages(
        messages, _total(messages) - 300, clear_tool_results=ToolResultClearing(keep=3)
    )
    assert len(selection.messages) == len(messages) and _cleared_ids(selection)
    contents = _tool_contents(selection.messages)
    assert contents[-3:] == _tool_contents(messages)[-3:]


def test_results_of_excluded_tools_are_never_cleared() -> None:
    messages = openai_loop(10, tools=("logs", "read_spec"))
    clearing = ToolResultClearing(keep=1, exclude_tools=("read_spec",))
    selection = select_messages(messages, _total(messages) - 150, clear_tool_results=clearing)
    by_id = {m["tool_call_id"]: m["content"] for m in selection.messages if m["role"] == "tool"}
    for step in range(1, 10, 2):  # the read_spec calls
        assert by_id[f"c{step}"] == _result(step)
    assert _cleared_ids(selection) and all(int(i[1:]) % 2 == 0 for i in _cleared_ids(selection))


def test_placeholder_text_is_configurable() -> None:
    messages = openai_loop(6)
    clearing = ToolResultClearing(keep=1, placeholder="<{tool} output elided, {tokens} tokens>")
    selection = select_messages(messages, _total(messages) - 50, clear_tool_results=clearing)
    first = next(m for m in selection.messages if m["role"] == "tool")
    assert first["content"].startswith("<logs output elided, ") and first["content"].endswith(" tokens>")
    default = select_messages(messages, _total(messages) - 50, clear_tool_results=True)
    assert next(m for m in default.messages if m["role"] == "tool")["content"].startswith(
        "[tool result cleared: "
    )


def test_openai_messages_are_new_dicts_and_the_inputs_are_unchanged() -> None:
    messages = openai_loop(8)
    before = copy.deepcopy(messages)
    selection = select_messages(messages, _total(messages) - 150, clear_tool_results=True)
    assert messages == before
    for sent, original in zip(selection.messages, messages, strict=True):
        if sent["role"] == "tool" and sent["content"] != original["content"]:
            assert sent is not original
            assert sent["tool_call_id"] == original["tool_call_id"]
        else:
            assert sent is original
    assert validate_transcript(list(selection.messages), "openai") == []


def test_anthropic_tool_result_blocks_are_replaced_and_nothing_nested_changes() -> None:
    messages = anthropic_loop(6)
    before = copy.deepcopy(messages)
    selection = select_messages(
        messages, _total(messages) - 150, clear_tool_results=ToolResultClearing(keep=2)
    )
    assert messages == before  # nested content lists and blocks included
    changed = [(s, o) for s, o in zip(selection.messages, messages, strict=True) if s is not o]
    assert changed
    for sent, original in changed:
        assert sent["role"] == "user" and sent["content"] is not original["content"]
        for block, old in zip(sent["content"], original["content"], strict=True):
            assert block["tool_use_id"] == old["tool_use_id"] and block["type"] == "tool_result"
            assert block is old or block["content"].startswith("[tool result cleared: ")
    last = selection.messages[-1]["content"]
    assert last == messages[-1]["content"]  # the two newest results (one message) are intact
    assert validate_transcript(list(selection.messages), "anthropic") == []


def test_langchain_tool_messages_are_copied_with_their_ids() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    from cupel.chat.langchain import select_messages as lc_select

    messages: list[Any] = [SystemMessage("You are a deploy agent."), HumanMessage(TASK)]
    for step in range(8):
        messages.append(AIMessage("", tool_calls=[{"id": f"c{step}", "name": "logs", "args": {"n": step}}]))
        messages.append(ToolMessage(_result(step), tool_call_id=f"c{step}", name="logs", id=f"m{step}"))
    before = [m.model_dump() for m in messages]
    full = lc_select(messages, 10**6).tokens
    selection = lc_select(messages, full - 150, clear_tool_results=True)
    assert [m.model_dump() for m in messages] == before
    cleared = [m for m in selection.messages if isinstance(m, ToolMessage) and m not in messages]
    assert cleared
    for message in cleared:
        original = next(m for m in messages if getattr(m, "id", None) == message.id)
        assert type(message) is ToolMessage and message is not original
        assert (message.tool_call_id, message.name) == (original.tool_call_id, original.name)
        assert message.content.startswith("[tool result cleared: ")
    assert selection.messages[-1] is messages[-1]
    assert validate_transcript(list(selection.messages), "langchain") == []


def test_the_report_lists_each_cleared_result_with_its_tokens() -> None:
    messages = openai_loop(8, tools=("logs", "grep"))
    selection = select_messages(messages, _total(messages) - 150, clear_tool_results=True)
    events = [e for e in selection.report.events if e.stage == CLEAR_STAGE]
    assert len(events) == len(_cleared_ids(selection))
    first = events[0].message or ""
    assert first.startswith("messages[3]: cleared the result of logs (call 'c0'), ")
    tokens = int(first.split("), ")[1].split(" tokens")[0].replace(",", ""))
    assert tokens > 30 and "the fewest of the oldest eligible results" in first
    placeholder = next(m for m in selection.messages if m["role"] == "tool")["content"]
    assert f"{tokens:,} tokens" in placeholder  # the placeholder says the same size


def test_when_clearing_all_does_not_fit_units_are_dropped_too() -> None:
    messages = openai_loop(12)
    selection = select_messages(
        messages, 300, policy="tool_use", clear_tool_results=ToolResultClearing(keep=2)
    )
    sent = list(selection.messages)
    assert len(sent) < len(messages) and selection.tokens <= 300
    assert sent[1] is messages[1] and sent[-1] is messages[-1]  # the task, the newest result
    assert _tool_contents(sent)[-2:] == _tool_contents(messages)[-2:]
    events = [e.message or "" for e in selection.report.events if e.stage == CLEAR_STAGE]
    assert events and all("units were dropped too" in e for e in events)
    assert validate_transcript(sent, "openai") == []


def test_false_turns_a_policys_clearing_off() -> None:
    policy = dataclasses.replace(tool_use_policy(), chat=ChatSettings(clear_tool_results=True))
    messages = openai_loop(8)
    budget = _total(messages) - 150
    assert _cleared_ids(select_messages(messages, budget, policy=policy))
    assert not _cleared_ids(select_messages(messages, budget, policy=policy, clear_tool_results=False))


@pytest.mark.parametrize(
    ("fields", "error", "named"),
    [
        ({"keep": -1}, InvalidConfigurationError, "ToolResultClearing.keep"),
        ({"keep": True}, CupelTypeError, "ToolResultClearing.keep"),
        ({"clear_at_least": 1.5}, CupelTypeError, "ToolResultClearing.clear_at_least"),
        ({"placeholder": "[{size}]"}, InvalidConfigurationError, "ToolResultClearing.placeholder"),
        ({"placeholder": "  "}, InvalidConfigurationError, "ToolResultClearing.placeholder"),
        ({"exclude_tools": "grep"}, CupelTypeError, "ToolResultClearing.exclude_tools"),
        ({"exclude_tools": ("grep", 3)}, CupelTypeError, "ToolResultClearing.exclude_tools"),
    ],
)
def test_bad_settings_are_one_line_errors_naming_the_field(
    fields: dict[str, Any], error: type[Exception], named: str
) -> None:
    with pytest.raises(error) as raised:
        ToolResultClearing(**fields)
    assert named in str(raised.value) and "\n" not in str(raised.value)


def test_chat_settings_take_true_false_or_a_clearing() -> None:
    assert ChatSettings(clear_tool_results=True).clear_tool_results == ToolResultClearing()
    assert ChatSettings(clear_tool_results=False).clear_tool_results is None
    with pytest.raises(CupelTypeError, match=r"^ChatSettings\.clear_tool_results must be"):
        ChatSettings(clear_tool_results="yes")  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="clear_tool_results"):
        select_messages(openai_loop(2), 100, clear_tool_results=3)  # type: ignore[arg-type]


def test_policy_files_read_and_write_the_setting() -> None:
    toml = """version = 1
extends = "tool_use"
[chat.clear_tool_results]
keep = 2
placeholder = "[cleared {tool}]"
exclude_tools = ["read_spec"]
clear_at_least = 500
"""
    policy = loads_policy(toml, "toml")
    assert policy.chat is not None and policy.chat.keep_first_turn  # the preset's other settings stay
    assert policy.chat.clear_tool_results == ToolResultClearing(2, "[cleared {tool}]", ("read_spec",), 500)
    assert loads_policy(json.dumps(policy_to_dict(policy)), "json") == policy
    on = loads_policy('{"version": 1, "extends": "chat", "chat": {"clear_tool_results": true}}', "json")
    assert on.chat is not None and on.chat.clear_tool_results == ToolResultClearing()
    off = loads_policy('{"version": 1, "extends": "chat", "chat": {"clear_tool_results": false}}', "json")
    assert off.chat is None or off.chat.clear_tool_results is None


@pytest.mark.parametrize(
    ("table", "named"),
    [
        ('"yes"', "chat.clear_tool_results"),
        ('{"keep": -1}', "chat.clear_tool_results.keep"),
        ('{"keep": 1, "kept": 2}', "chat.clear_tool_results.kept"),
        ('{"exclude_tools": "grep"}', "chat.clear_tool_results.exclude_tools"),
        ('{"exclude_tools": [3]}', "chat.clear_tool_results.exclude_tools[0]"),
        ('{"placeholder": "{nope}"}', "chat.clear_tool_results"),
    ],
)
def test_bad_policy_file_settings_name_the_key(table: str, named: str) -> None:
    with pytest.raises(PolicyFileError) as raised:
        loads_policy(
            f'{{"version": 1, "extends": "chat", "chat": {{"clear_tool_results": {table}}}}}', "json"
        )
    assert named in str(raised.value) and "\n" not in str(raised.value)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.integers(1, 9),
    sizes=st.lists(st.integers(1, 80), min_size=9, max_size=9),
    keep=st.integers(0, 3),
    cut=st.integers(0, 900),
)
def test_clearing_keeps_a_valid_conversation_and_clears_the_fewest(
    steps: int, sizes: list[int], keep: int, cut: int
) -> None:
    messages = openai_loop(steps)
    for step in range(steps):
        messages[3 + 2 * step]["content"] = _result(step, sizes[step])
    before = copy.deepcopy(messages)
    total = _total(messages)
    budget = max(170, total - cut)
    selection = select_messages(
        messages, budget, policy="tool_use", clear_tool_results=ToolResultClearing(keep=keep)
    )
    sent = list(selection.messages)
    assert messages == before
    assert validate_transcript(sent, "openai") == []
    calls = {c["id"] for m in sent for c in m.get("tool_calls") or ()}
    results = {m["tool_call_id"] for m in sent if m["role"] == "tool"}
    assert calls == results  # every call still has its result, and no result lost its call
    cleared = _cleared_ids(selection)
    # Oldest first: every result sent older than the newest one cleared is cleared, unless clearing
    # it would save nothing (its placeholder costs as much).
    for step in range(int(cleared[-1][1:]) if cleared else 0):
        sent_intact = f"c{step}" in results and f"c{step}" not in cleared
        assert not sent_intact or not _saves(messages[3 + 2 * step]["content"])
    newest = [m["tool_call_id"] for m in messages if m["role"] == "tool"][-keep:] if keep else []
    assert not set(cleared) & set(newest)
    if cleared and len(sent) == len(messages):
        # Minimal: the same transcript with its newest cleared result restored drops a message.
        restored = [
            original if m.get("tool_call_id") == cleared[-1] else m
            for m, original in zip(sent, messages, strict=True)
        ]
        unclear = select_messages(restored, budget, policy="tool_use", clear_tool_results=False)
        assert len(unclear.messages) < len(messages)


def test_stable_window_clears_at_least_clear_at_least_and_keeps_it_cleared() -> None:
    from cupel.chat import StableWindow

    clearing = ToolResultClearing(keep=2, clear_at_least=200)
    window = StableWindow(1000, "tool_use", clear_tool_results=clearing)
    messages = openai_loop(0)
    previous: tuple[Any, ...] = ()
    cleared_before: dict[str, Any] = {}
    compactions_that_cleared = 0
    for step in range(40):
        messages.extend(openai_loop(step + 1)[-2:])
        messages[-2]["tool_calls"][0]["id"] = messages[-1]["tool_call_id"] = f"c{step}"
        before = copy.deepcopy(messages)
        selection = window.select(messages)
        sent = list(selection.messages)
        assert messages == before and validate_transcript(sent, "openai") == []
        assert sent[-1] is messages[-1] and sent[-3] is messages[-3]  # the two newest results, intact
        assert all(a is b for a, b in zip(sent[: selection.prefix], previous, strict=False))
        cleared = {
            m["tool_call_id"]: m for m in sent if m["role"] == "tool" and m["content"].startswith("[tool")
        }
        for call_id, message in cleared_before.items():  # what was cleared stays cleared, the same object
            assert call_id not in {m.get("tool_call_id") for m in sent} or cleared[call_id] is message
        fresh = set(cleared) - set(cleared_before)
        if fresh:
            compactions_that_cleared += 1
            assert selection.compacted
            saved = sum(
                message_token_counts([m])[0] - message_token_counts([cleared[m["tool_call_id"]]])[0]
                for m in messages
                if m.get("tool_call_id") in fresh
            )
            eligible_left = [m for m in sent if m["role"] == "tool" and m not in cleared.values()][:-2]
            assert saved >= clearing.clear_at_least or not eligible_left
        cleared_before = cleared
        previous = tuple(sent)
    assert compactions_that_cleared >= 2
    assert window.to_dict() is not None


def test_the_command_line_turns_clearing_on_and_off_and_explain_lists_it(tmp_path: Any) -> None:
    import subprocess
    import sys

    path = tmp_path / "agent.json"
    path.write_text(json.dumps(openai_loop(6)))
    budget = str(_total(openai_loop(6)) - 100)

    def run(*args: str) -> str:
        command = [sys.executable, "-m", "cupel", *args, str(path), "--budget", budget]
        return subprocess.run(command, capture_output=True, text=True, check=True).stdout

    assert "[tool result cleared" in run("select", "--clear-tool-results")
    assert "[tool result cleared" not in run("select", "--policy", "tool_use", "--no-clear-tool-results")
    explained = run("explain", "--policy", "tool_use")
    assert "Tool results cleared (oldest first)" in explained
    assert "messages[3]: cleared the result of logs (call 'c0')" in explained


def test_clearable_results_are_the_eligible_ones_whose_placeholder_is_cheaper() -> None:
    from cupel.policy.chat_settings import ToolResult

    results = [
        ToolResult(1, "a", "logs", 50, 10),
        ToolResult(3, "b", "secrets", 50, 10),  # an excluded tool
        ToolResult(5, "c", "logs", 10, 10),  # the placeholder saves nothing
        ToolResult(5, "d", "logs", 9, 10),  # the placeholder costs more
        ToolResult(7, "e", "logs", 50, 10),
        ToolResult(9, "f", "logs", 50, 10),  # among the newest kept
    ]
    clearing = ToolResultClearing(keep=1, exclude_tools=("secrets",))
    assert [result.call_id for result in clearing.clearable(results)] == ["a", "e"]
    assert clearing.clearable(results[:1]) == []  # the only result is the newest
