"""Data model: construction validation, immutability, case-insensitive kinds (spec: Data Model)."""

from __future__ import annotations

import dataclasses
import pickle
from datetime import UTC, datetime, timedelta, timezone

import pytest

from cupel import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    CupelError,
    CupelTypeError,
    InvalidConfigurationError,
    OverflowStrategy,
    ScoredItem,
)

UTC = UTC


class TestContextItem:
    def test_defaults(self) -> None:
        item = ContextItem("hello", 3)
        assert item.kind == ContextKind.MESSAGE
        assert item.source == ContextSource.CHAT
        assert item.priority is None
        assert item.tags == ()
        assert dict(item.metadata) == {}
        assert item.timestamp is None
        assert item.future_relevance_hint is None
        assert item.pinned is False
        assert item.original_tokens is None

    def test_all_eleven_fields(self) -> None:
        fields = [f.name for f in dataclasses.fields(ContextItem) if not f.name.startswith("_")]
        assert fields == [
            "content",
            "tokens",
            "kind",
            "source",
            "priority",
            "tags",
            "metadata",
            "timestamp",
            "future_relevance_hint",
            "pinned",
            "original_tokens",
        ]

    @pytest.mark.parametrize("content", ["", None, 3])
    def test_content_must_be_non_empty_string(self, content: object) -> None:
        with pytest.raises(CupelError, match=r"ContextItem\.content"):
            ContextItem(content, 1)  # type: ignore[arg-type]

    @pytest.mark.parametrize("tokens", [True, 1.5, "3", None])
    def test_tokens_must_be_int_not_bool(self, tokens: object) -> None:
        with pytest.raises(CupelTypeError, match=r"ContextItem\.tokens must be an int, got"):
            ContextItem("x", tokens)  # type: ignore[arg-type]

    def test_negative_tokens_are_allowed_at_construction(self) -> None:
        assert ContextItem("x", -4).tokens == -4

    def test_naive_timestamp_rejected_with_explanation(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="timezone-aware") as raised:
            ContextItem("x", 1, timestamp=datetime(2024, 1, 1))
        assert "naive" in str(raised.value)
        assert isinstance(raised.value, ValueError)

    def test_priority_and_original_tokens_types(self) -> None:
        with pytest.raises(CupelTypeError, match="priority"):
            ContextItem("x", 1, priority=True)
        with pytest.raises(CupelTypeError, match="original_tokens"):
            ContextItem("x", 1, original_tokens=2.0)  # type: ignore[arg-type]

    def test_tags_must_be_strings_not_a_single_string(self) -> None:
        with pytest.raises(CupelTypeError, match="not a single string"):
            ContextItem("x", 1, tags="abc")
        with pytest.raises(CupelTypeError, match="only strings"):
            ContextItem("x", 1, tags=["a", 2])  # type: ignore[list-item]

    def test_pinned_must_be_bool(self) -> None:
        with pytest.raises(CupelTypeError, match="pinned"):
            ContextItem("x", 1, pinned=1)  # type: ignore[arg-type]

    def test_hint_accepts_int_and_rejects_bool(self) -> None:
        assert ContextItem("x", 1, future_relevance_hint=1).future_relevance_hint == 1.0
        with pytest.raises(CupelTypeError, match="future_relevance_hint"):
            ContextItem("x", 1, future_relevance_hint=True)

    def test_kind_rejects_blank(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="ContextKind"):
            ContextItem("x", 1, kind="   ")

    def test_immutable(self) -> None:
        item = ContextItem("x", 1)
        with pytest.raises(dataclasses.FrozenInstanceError):
            item.tokens = 5  # type: ignore[misc]

    def test_metadata_is_read_only_copy_and_preserved(self) -> None:
        source = {"k": [1, 2], "cupel:trust": "0.5"}
        item = ContextItem("x", 1, metadata=source)
        source["new"] = "value"
        assert "new" not in item.metadata
        assert item.metadata["k"] is source["k"]  # values are preserved untouched
        with pytest.raises(TypeError):
            item.metadata["k"] = 1  # type: ignore[index]

    def test_identity_semantics(self) -> None:
        a = ContextItem("same", 1)
        b = ContextItem("same", 1)
        assert a != b
        assert a == a
        assert len({a, b, a}) == 2

    def test_replace_builds_a_new_validated_item(self) -> None:
        item = ContextItem("x", 1, tags=["t"])
        changed = item.replace(tokens=9, kind="Memory")
        assert (changed.tokens, changed.kind, changed.tags) == (9, ContextKind.MEMORY, ("t",))
        assert item.tokens == 1
        with pytest.raises(CupelTypeError, match="no field"):
            item.replace(colour="red")
        with pytest.raises(InvalidConfigurationError):
            item.replace(content="")

    def test_pickle_round_trip(self) -> None:
        item = ContextItem(
            "x",
            1,
            kind="Memory",
            metadata={"a": "b"},
            timestamp=datetime(2024, 1, 1, tzinfo=UTC),
        )
        copy = pickle.loads(pickle.dumps(item))
        assert (copy.content, copy.kind, dict(copy.metadata), copy.timestamp) == (
            "x",
            ContextKind.MEMORY,
            {"a": "b"},
            item.timestamp,
        )

    def test_timestamps_with_offsets_order_by_instant(self) -> None:
        east = ContextItem("e", 1, timestamp=datetime(2024, 1, 1, 10, tzinfo=timezone(timedelta(hours=9))))
        utc = ContextItem("u", 1, timestamp=datetime(2024, 1, 1, 2, tzinfo=UTC))
        assert east._timestamp_us is not None and utc._timestamp_us is not None
        assert east._timestamp_us < utc._timestamp_us


class TestKindAndSource:
    def test_case_insensitive_equality_and_hash(self) -> None:
        variants = ["Message", "message", "MESSAGE", "mEsSaGe"]
        kinds = [ContextKind(v) for v in variants]
        assert all(kind == ContextKind.MESSAGE for kind in kinds)
        assert len(set(kinds)) == 1
        assert "message" == ContextKind.MESSAGE  # noqa: SIM300  (plain str on the left)
        assert ContextKind.MESSAGE != "Memory"

    def test_ascii_only_folding(self) -> None:
        # Non-ASCII letters are not folded: 'Ä' and 'ä' stay distinct.
        assert ContextKind("Ä") != ContextKind("ä")
        assert ContextKind("StraßE") == ContextKind("straße")

    def test_extensible_and_well_known(self) -> None:
        assert str(ContextKind("Scratchpad")) == "Scratchpad"
        assert [
            str(k) for k in (ContextKind.DOCUMENT, ContextKind.TOOL_OUTPUT, ContextKind.SYSTEM_PROMPT)
        ] == [
            "Document",
            "ToolOutput",
            "SystemPrompt",
        ]
        assert ContextSource("rag") == ContextSource.RAG
        assert repr(ContextKind("x")) == "ContextKind('x')"

    @pytest.mark.parametrize("value", ["", "  ", "\t"])
    def test_blank_rejected(self, value: str) -> None:
        with pytest.raises(InvalidConfigurationError):
            ContextKind(value)
        with pytest.raises(InvalidConfigurationError):
            ContextSource(value)

    def test_non_string_rejected(self) -> None:
        with pytest.raises(CupelTypeError):
            ContextKind(3)  # type: ignore[arg-type]


class TestContextBudget:
    def test_valid(self) -> None:
        budget = ContextBudget(
            1000, 800, output_reserve=100, reserved_slots={"Message": 2}, estimation_safety_margin_percent=10
        )
        assert budget.reserved_slots[ContextKind("message")] == 2
        assert budget.estimation_safety_margin_percent == 10.0

    @pytest.mark.parametrize(
        ("kwargs", "message"),
        [
            ({"max_tokens": -1, "target_tokens": 0}, "max_tokens must be >= 0, got -1"),
            ({"max_tokens": 10, "target_tokens": -1}, "target_tokens must be >= 0, got -1"),
            ({"max_tokens": 10, "target_tokens": 11}, r"target_tokens must be <= max_tokens \(10\), got 11"),
            ({"max_tokens": 10, "target_tokens": 5, "output_reserve": -1}, "output_reserve must be >= 0"),
            (
                {"max_tokens": 10, "target_tokens": 5, "output_reserve": 11},
                "output_reserve must be <= max_tokens",
            ),
            (
                {"max_tokens": 10, "target_tokens": 5, "estimation_safety_margin_percent": 100.5},
                "estimation_safety_margin_percent must be between 0.0 and 100.0, got 100.5",
            ),
            (
                {"max_tokens": 10, "target_tokens": 5, "estimation_safety_margin_percent": -0.1},
                "estimation_safety_margin_percent",
            ),
            (
                {"max_tokens": 10, "target_tokens": 5, "reserved_slots": {"Memory": -2}},
                r"reserved_slots\['Memory'\] must be >= 0, got -2",
            ),
        ],
    )
    def test_the_seven_rules(self, kwargs: dict[str, object], message: str) -> None:
        with pytest.raises(InvalidConfigurationError, match=message):
            ContextBudget(**kwargs)  # type: ignore[arg-type]

    def test_types(self) -> None:
        with pytest.raises(CupelTypeError, match="max_tokens"):
            ContextBudget(True, 0)  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match="reserved_slots"):
            ContextBudget(10, 5, reserved_slots=[("Message", 1)])  # type: ignore[arg-type]

    def test_duplicate_kinds_in_reserved_slots(self) -> None:
        with pytest.raises(InvalidConfigurationError, match="twice"):
            ContextBudget(10, 5, reserved_slots={"Message": 1, "message": 2})

    def test_value_equality_and_replace(self) -> None:
        a = ContextBudget(10, 5, reserved_slots={"Message": 1})
        assert a == ContextBudget(10, 5, reserved_slots={"message": 1})
        assert hash(a) == hash(ContextBudget(10, 5, reserved_slots={"MESSAGE": 1}))
        assert a.replace(target_tokens=7).target_tokens == 7
        with pytest.raises(InvalidConfigurationError):
            a.replace(target_tokens=11)


def test_overflow_strategy_values() -> None:
    assert [s.value for s in OverflowStrategy] == ["throw", "truncate", "proceed"]
    assert OverflowStrategy("truncate") is OverflowStrategy.TRUNCATE


def test_scored_item_is_an_immutable_pair() -> None:
    item = ContextItem("x", 1)
    scored = ScoredItem(item, 0.5)
    assert scored.item is item and scored.score == 0.5
    with pytest.raises(AttributeError):
        scored.score = 1.0  # type: ignore[misc]


def test_an_item_built_in_a_batch_makes_its_timestamp_from_microseconds_when_read() -> None:
    from cupel._trusted import trusted_batch
    from cupel.model import epoch_microseconds

    stamp = datetime(2000, 1, 1, 0, 0, 7, tzinfo=UTC)
    reference = ContextItem("x", 2, timestamp=stamp)
    fields = [getattr(reference, field.name) for field in dataclasses.fields(ContextItem)]
    timestamp_at = ContextItem.__match_args__.index("timestamp")
    columns: list[object] = [[value] for value in fields]
    columns[timestamp_at] = None  # left unset: made from _timestamp_us on first read
    # Left unset: the constructor's default on first read (None, a message from a chat, unpinned).
    for name in ("priority", "future_relevance_hint", "original_tokens", "kind", "source", "pinned"):
        columns[ContextItem.__match_args__.index(name)] = None
    (built,) = trusted_batch(ContextItem)(1, *columns)
    assert (built.kind, built.source, built.pinned) == ("Message", "Chat", False)
    assert type(built.kind) is ContextKind and type(built.source) is ContextSource
    assert built._timestamp_us == epoch_microseconds(stamp)
    assert built.timestamp == stamp and built.timestamp.tzinfo is UTC
    assert built.timestamp is built.timestamp  # made once, kept
    assert [getattr(built, field.name) for field in dataclasses.fields(ContextItem)] == fields
    assert (built.priority, built.future_relevance_hint, built.original_tokens) == (None, None, None)
    assert built.replace(priority=3).priority == 3 and built.to_dict() == reference.to_dict()
    assert pickle.loads(pickle.dumps(built)).timestamp == stamp
    with pytest.raises(AttributeError, match="'ContextItem' object has no attribute 'stamp'"):
        built.stamp  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.timestamp = stamp  # type: ignore[misc]
