"""The LangChain adapter: BaseMessage lists in and out, with the same guarantees (needs langchain-core)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from cupel import CupelTypeError, InvalidConfigurationError
from cupel.chat import INDICES_KEY, ChatOptions
from cupel.tokens import FunctionCounter

lc = pytest.importorskip(
    "langchain_core.messages", reason="optional extra not installed: pip install 'pycupel[langchain]'"
)

from cupel.chat.langchain import messages_to_items, select_messages  # noqa: E402
from cupel.chat.render import to_messages  # noqa: E402

WORDS = FunctionCounter(lambda text: len(text.split()))


def conversation() -> list[Any]:
    return [
        lc.SystemMessage("Be brief."),
        lc.HumanMessage("What is the weather in Paris?"),
        lc.AIMessage("", tool_calls=[{"name": "weather", "args": {"city": "Paris"}, "id": "c1"}]),
        lc.ToolMessage("20C", tool_call_id="c1"),
        lc.AIMessage("It is 20C."),
        lc.HumanMessage(["Thanks!", {"type": "image_url", "image_url": {"url": "data:," + "A" * 9000}}]),
    ]


def test_roles_units_and_identity() -> None:
    messages = conversation()
    items = messages_to_items(messages, counter=WORDS)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1,), (2, 3), (4,), (5,)]
    assert [str(item.kind) for item in items] == [
        "SystemPrompt",
        "Message",
        "ToolOutput",
        "Message",
        "Message",
    ]
    assert [item.pinned for item in items] == [True, False, False, False, True]
    restored = to_messages(list(reversed(items)))
    assert all(a is b for a, b in zip(restored, messages, strict=True))


def test_select_keeps_tool_units_whole_and_returns_the_same_objects() -> None:
    messages = conversation()
    everything = select_messages(messages, 10_000, counter=WORDS)
    assert list(everything.messages) == messages
    costs = [item.tokens for item in messages_to_items(messages, counter=WORDS)]
    tight = select_messages(messages, costs[0] + costs[4] + costs[3], counter=WORDS, strategy="messages")
    assert messages[2] not in tight.messages and messages[3] not in tight.messages
    assert tight.messages[0] is messages[0] and tight.messages[-1] is messages[5]
    assert tight.excluded_messages == (messages[1], messages[2], messages[3])


def test_accounting_matches_the_dict_form() -> None:
    from cupel.chat import message_token_counts

    messages = conversation()
    dicts = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is the weather in Paris?"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "20C"},
        {"role": "assistant", "content": "It is 20C."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Thanks!"}, {"type": "image_url", "image_url": {}}],
        },
    ]
    expected = message_token_counts(dicts, counter=WORDS)
    items = messages_to_items(messages, counter=WORDS, options=ChatOptions(pin_last_user=False))
    assert [item.tokens for item in items] == [
        expected[0],
        expected[1],
        expected[2] + expected[3],
        *expected[4:],
    ]


def test_anthropic_style_content_is_not_double_counted() -> None:
    ai = lc.AIMessage(
        [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "x"}},
        ],
        tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "t1"}],
    )
    messages = [lc.HumanMessage("find x"), ai, lc.ToolMessage("found", tool_call_id="t1")]
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1, 2)]
    bare = lc.AIMessage([{"type": "tool_use", "id": "t2", "name": "search", "input": {}}])
    assert bare.tool_calls == []
    items = messages_to_items([bare, lc.ToolMessage("r", tool_call_id="t2")])
    assert [item.metadata[INDICES_KEY] for item in items] == [(0, 1)]


def test_other_message_types() -> None:
    developer = lc.SystemMessage("rules", additional_kwargs={"__openai_role__": "developer"})
    legacy = lc.AIMessage("", additional_kwargs={"function_call": {"name": "f", "arguments": "{}"}})
    messages = [
        developer,
        lc.ChatMessage("hello", role="user"),
        legacy,
        lc.FunctionMessage("42", name="f"),
        lc.AIMessageChunk("partial"),
    ]
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1,), (2, 3), (4,)]
    assert items[0].kind == "SystemPrompt" and items[0].metadata["cupel:chat.roles"] == ("developer",)


def test_errors() -> None:
    with pytest.raises(
        InvalidConfigurationError, match=r"messages\[0\]\.tool_call_id is 'c9', which answers no"
    ):
        messages_to_items([lc.ToolMessage("r", tool_call_id="c9")])
    with pytest.raises(
        InvalidConfigurationError, match=r"messages\[0\]\.tool_calls\[0\]\.id: tool call 'c1' has no"
    ):
        messages_to_items([lc.AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])])
    with pytest.raises(InvalidConfigurationError, match=r"messages\[0\] is a RemoveMessage"):
        messages_to_items([lc.RemoveMessage(id="x")])
    with pytest.raises(InvalidConfigurationError, match=r"messages\[0\]\.role must be one of"):
        messages_to_items([lc.ChatMessage("hi", role="narrator")])
    with pytest.raises(CupelTypeError, match=r"messages\[1\] must be a LangChain BaseMessage"):
        messages_to_items([lc.HumanMessage("hi"), {"role": "user", "content": "dict"}])
    with pytest.raises(CupelTypeError, match="sequence of BaseMessage"):
        messages_to_items(lc.HumanMessage("hi"))


def test_importing_cupel_chat_does_not_import_langchain() -> None:
    code = "import sys, cupel.chat, cupel.chat.langchain\nassert 'langchain_core' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_missing_langchain_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from cupel.tokens import OptionalDependencyError

    monkeypatch.setitem(sys.modules, "langchain_core.messages", None)
    with pytest.raises(OptionalDependencyError, match=r"pip install 'pycupel\[langchain\]'"):
        select_messages([], 10)
