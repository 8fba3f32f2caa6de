"""The JSON wire format (spec: Diagnostics JSON examples)."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from tests.strategies import budgets, items

from cupel import (
    BudgetExceeded,
    ContextBudget,
    ContextItem,
    CupelError,
    CupelTypeError,
    Deduplicated,
    ExclusionReason,
    Filtered,
    InclusionReason,
    InvalidConfigurationError,
    NegativeTokens,
    OverflowEvent,
    PinnedOverride,
    PipelineStage,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    SelectionReport,
    TraceEvent,
    UnknownExclusionReason,
)

ALL_REASONS: list[ExclusionReason] = [
    BudgetExceeded(2048, 512),
    ScoredTooLow(0.12, 0.25),
    Deduplicated("tool_output_abc123"),
    QuotaCapExceeded("ToolOutput", 3, 4),
    QuotaRequireDisplaced("SystemPrompt"),
    NegativeTokens(-1),
    PinnedOverride("system"),
    Filtered("max_age_filter"),
]


def test_reason_envelopes_match_the_spec_examples() -> None:
    assert [r.to_dict() for r in ALL_REASONS] == [
        {"reason": "BudgetExceeded", "item_tokens": 2048, "available_tokens": 512},
        {"reason": "ScoredTooLow", "score": 0.12, "threshold": 0.25},
        {"reason": "Deduplicated", "deduplicated_against": "tool_output_abc123"},
        {"reason": "QuotaCapExceeded", "kind": "ToolOutput", "cap": 3, "actual": 4},
        {"reason": "QuotaRequireDisplaced", "displaced_by_kind": "SystemPrompt"},
        {"reason": "NegativeTokens", "tokens": -1},
        {"reason": "PinnedOverride", "displaced_by": "system"},
        {"reason": "Filtered", "filter_name": "max_age_filter"},
    ]
    assert [r.active for r in ALL_REASONS] == [True, True, True, True, False, True, True, True]


@pytest.mark.parametrize("reason", ALL_REASONS, ids=lambda r: r.name)
def test_reason_round_trip(reason: ExclusionReason) -> None:
    assert ExclusionReason.from_json(reason.to_json()) == reason


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"reason": "ScoredTooLow", "score": NaN, "threshold": 0.5}', "NaN is not a JSON number"),
        ('{"reason": "BudgetExceeded", "item_tokens": Infinity, "available_tokens": 1}', "Infinity is not"),
        ('{"reason": "ScoredTooLow", "score": 1e400, "threshold": 0.5}', "number 1e400 is out of range"),
        ('{"reason": "NegativeTokens", "tokens": -1, "tokens": 5}', 'duplicate key "tokens"'),
        ('{"reason": "TooSpicy", "heat": 1, "heat": 2}', 'duplicate key "heat"'),
        ('{"reason": "Filtered", "filter_name": "\\ud800"}', "filter_name: lone surrogate"),
        ("[" * 200 + "]" * 200, "nested deeper than 128 levels"),
        (b'{"reason": "\xff"}', "not UTF-8 text"),
    ],
)
def test_reason_from_json_reads_strict_json_only(text: str | bytes, problem: str) -> None:
    with pytest.raises(CupelError) as raised:
        ExclusionReason.from_json(text)
    message = str(raised.value)
    assert message.startswith("ExclusionReason: ") and problem in message
    assert "\n" not in message


def test_reason_to_json_writes_strict_json_only() -> None:
    with pytest.raises(CupelTypeError, match="cannot be written as JSON"):
        ScoredTooLow(float("nan"), 0.5).to_json()
    text = ScoredTooLow(0.5, 0.25).to_json()
    assert json.loads(text) == {"reason": "ScoredTooLow", "score": 0.5, "threshold": 0.25}


def test_unknown_reason_preserved() -> None:
    data = {"reason": "TooSpicy", "heat": 9}
    reason = ExclusionReason.from_dict(data)
    assert isinstance(reason, UnknownExclusionReason)
    assert reason.name == "TooSpicy"
    assert reason.to_dict() == data


def test_known_reason_missing_field_is_an_error() -> None:
    with pytest.raises(
        InvalidConfigurationError, match=r"BudgetExceeded reason is missing field\(s\) \['available_tokens'\]"
    ):
        ExclusionReason.from_dict({"reason": "BudgetExceeded", "item_tokens": 3})


def test_inclusion_reason_envelope() -> None:
    assert InclusionReason.SCORED.to_dict() == {"reason": "Scored"}
    assert InclusionReason.from_dict({"reason": "ZeroToken"}) is InclusionReason.ZERO_TOKEN
    with pytest.raises(InvalidConfigurationError):
        InclusionReason.from_dict({"reason": "Lucky"})


def test_trace_event_omits_absent_message_and_preserves_unknown_stage() -> None:
    assert TraceEvent(PipelineStage.SCORE, 12.4, 47).to_dict() == {
        "stage": "Score",
        "duration_ms": 12.4,
        "item_count": 47,
    }
    event = TraceEvent.from_dict({"stage": "Sort", "duration_ms": 0.5, "item_count": 3, "message": "m"})
    assert event.stage == "Sort" and event.message == "m"
    assert TraceEvent.from_json(event.to_json()) == event


def test_item_uses_spec_field_names_and_accepts_both_spellings() -> None:
    item = ContextItem(
        "x",
        5,
        kind="Memory",
        tags=["t"],
        timestamp=datetime(2024, 6, 1, 12, tzinfo=timezone(timedelta(hours=2))),
        future_relevance_hint=0.5,
        pinned=True,
        original_tokens=9,
        metadata={"cupel:trust": "0.9"},
        priority=3,
    )
    data = item.to_dict()
    assert data == {
        "content": "x",
        "tokens": 5,
        "kind": "Memory",
        "source": "Chat",
        "priority": 3,
        "tags": ["t"],
        "metadata": {"cupel:trust": "0.9"},
        "timestamp": "2024-06-01T12:00:00+02:00",
        "futureRelevanceHint": 0.5,
        "pinned": True,
        "originalTokens": 9,
    }
    snake = dict(data)
    snake["future_relevance_hint"] = snake.pop("futureRelevanceHint")
    snake["original_tokens"] = snake.pop("originalTokens")
    again = ContextItem.from_dict(snake)
    assert again.to_dict() == data
    assert ContextItem.from_dict({"content": "y", "tokens": 1, "unknown": 3}).content == "y"


@pytest.mark.parametrize(
    ("data", "error", "message"),
    [
        ({"tokens": 1}, InvalidConfigurationError, "item: missing required field 'content'"),
        ({"content": "x", "tokens": "3"}, CupelTypeError, "item: tokens must be an int, got '3'"),
        (
            {"content": "x", "tokens": 1, "timestamp": "2024-01-01T00:00:00"},
            InvalidConfigurationError,
            "must carry a UTC offset",
        ),
        ({"content": "x", "tokens": 1, "timestamp": "yesterday"}, InvalidConfigurationError, "not ISO 8601"),
        (
            {"content": "x", "tokens": 1, "futureRelevanceHint": 0.1, "future_relevance_hint": 0.2},
            InvalidConfigurationError,
            "twice",
        ),
        ([1, 2], CupelTypeError, "must be a JSON object"),
    ],
)
def test_item_errors_name_the_field(data: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        ContextItem.from_dict(data)  # type: ignore[arg-type]


def test_budget_wire_form() -> None:
    budget = ContextBudget(
        4096, 3072, output_reserve=10, reserved_slots={"Message": 2}, estimation_safety_margin_percent=5
    )
    assert budget.to_dict() == {
        "maxTokens": 4096,
        "targetTokens": 3072,
        "outputReserve": 10,
        "reservedSlots": {"Message": 2},
        "estimationSafetyMarginPercent": 5.0,
    }
    assert ContextBudget.from_json(budget.to_json()) == budget
    assert ContextBudget.from_dict({"max_tokens": 10, "target_tokens": 4}) == ContextBudget(10, 4)
    with pytest.raises(
        InvalidConfigurationError, match=r"budget: target_tokens must be <= max_tokens \(10\), got 40"
    ):
        ContextBudget.from_dict({"maxTokens": 10, "targetTokens": 40})


def test_overflow_event_wire_form() -> None:
    event = OverflowEvent(384, (ContextItem("a", 512),), ContextBudget(4096, 3072))
    data = event.to_dict()
    assert data == {
        "tokens_over_budget": 384,
        "overflowing_items": [{"content": "a", "tokens": 512, "kind": "Message", "source": "Chat"}],
        "budget": {"maxTokens": 4096, "targetTokens": 3072},
    }
    assert OverflowEvent.from_json(event.to_json()).to_dict() == data


def test_report_reads_the_spec_example() -> None:
    example = {
        "events": [{"stage": "Classify", "duration_ms": 0.3, "item_count": 5}],
        "included": [
            {
                "item": {"content": "Recent", "tokens": 256, "kind": "Message"},
                "score": 0.92,
                "reason": {"reason": "Scored"},
            }
        ],
        "excluded": [
            {
                "item": {"content": "Old tool output", "tokens": 2048, "kind": "ToolOutput"},
                "score": 0.45,
                "reason": {"reason": "BudgetExceeded", "item_tokens": 2048, "available_tokens": 512},
            }
        ],
        # The specification's example elides three candidates; a report must list every one.
        "total_candidates": 2,
        "total_tokens_considered": 2304,
    }
    report = SelectionReport.from_dict(example)
    assert report.excluded[0].reason == BudgetExceeded(2048, 512)
    assert report.included[0].item.kind == "message"
    assert json.loads(report.to_json())["excluded"][0]["reason"] == example["excluded"][0]["reason"]  # type: ignore[index]


def test_report_error_paths() -> None:
    with pytest.raises(
        InvalidConfigurationError, match=r"report\.included\[0\]\.item: missing required field 'tokens'"
    ):
        SelectionReport.from_dict(
            {
                "events": [],
                "included": [{"item": {"content": "x"}, "score": 1, "reason": {"reason": "Scored"}}],
                "excluded": [],
                "total_candidates": 1,
                "total_tokens_considered": 0,
            }
        )


def test_unserialisable_metadata_is_a_clear_error() -> None:
    with pytest.raises(CupelTypeError, match="cannot be written as JSON"):
        ContextItem("x", 1, metadata={"obj": object()}).to_json()


@given(item=items(allow_negative=True))
def test_item_round_trip(item: ContextItem) -> None:
    assert ContextItem.from_json(item.to_json()).to_dict() == item.to_dict()


@given(budget=budgets())
def test_budget_round_trip(budget: ContextBudget) -> None:
    assert ContextBudget.from_json(budget.to_json()) == budget
