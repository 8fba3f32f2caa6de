"""The values a pipeline run reports: stages, trace events, overflow and count shortfalls.

(spec: Diagnostics, Events; Scarcity Reporting.) They sit below the trace collectors, the report and
the slicers, which all use them; their wire converters live beside them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from itertools import repeat
from typing import Any, ClassVar

from cupel._trusted import trusted_batch, trusted_constructor
from cupel._wire_format import (
    WireFormat,
    budget_from_dict,
    budget_to_dict,
    fail,
    item_from_dict,
    item_to_dict,
    register_codec,
    require_mapping,
)
from cupel.errors import CupelError, CupelTypeError
from cupel.model import ContextBudget, ContextItem, ContextKind

__all__ = ["CountRequirementShortfall", "OverflowEvent", "PipelineStage", "TraceEvent"]


class PipelineStage(StrEnum):
    """The five observable stages (Sort has no diagnostic boundary)."""

    CLASSIFY = "Classify"
    SCORE = "Score"
    DEDUPLICATE = "Deduplicate"
    SLICE = "Slice"
    PLACE = "Place"


@dataclass(frozen=True, slots=True)
class TraceEvent(WireFormat):
    """One observation: a stage's duration and output count, or one item's decision.

    ``stage`` is a :class:`PipelineStage`, or a plain string for a stage read from JSON that this
    version does not know. Item-level events have ``duration_ms == 0.0`` and ``item_count == 1``.
    """

    _wire: ClassVar[str] = "event"
    stage: PipelineStage | str
    duration_ms: float
    item_count: int
    message: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.duration_ms, bool) or not isinstance(self.duration_ms, int | float):
            raise CupelTypeError(f"TraceEvent.duration_ms must be a float, got {self.duration_ms!r}")
        if isinstance(self.item_count, bool) or not isinstance(self.item_count, int):
            raise CupelTypeError(f"TraceEvent.item_count must be an int, got {self.item_count!r}")


@dataclass(frozen=True, slots=True)
class OverflowEvent(WireFormat):
    """Produced only under OverflowStrategy.PROCEED when the merged selection exceeds the target."""

    _wire: ClassVar[str] = "overflow"
    tokens_over_budget: int
    overflowing_items: tuple[ContextItem, ...]
    budget: ContextBudget


@dataclass(frozen=True, slots=True)
class CountRequirementShortfall:
    """A kind whose candidates could not meet its ``require_count`` (spec: Scarcity Reporting)."""

    kind: ContextKind
    required_count: int
    satisfied_count: int


_make_event = trusted_constructor(TraceEvent)
_make_events = trusted_batch(TraceEvent)


def item_event(stage: PipelineStage, message: str) -> TraceEvent:
    """``TraceEvent(stage, 0.0, 1, message)`` for one item's decision, without re-validating constants."""
    return _make_event(stage, 0.0, 1, message)


def item_events(stage: PipelineStage, messages: Sequence[str]) -> list[TraceEvent]:
    """:func:`item_event` for each message, in order, built in one batch."""
    count = len(messages)
    return _make_events(count, repeat(stage, count), repeat(0.0, count), repeat(1, count), messages)


def event_to_dict(event: TraceEvent) -> dict[str, Any]:
    data: dict[str, Any] = {
        "stage": str(event.stage),
        "duration_ms": event.duration_ms,
        "item_count": event.item_count,
    }
    if event.message is not None:
        data["message"] = event.message
    return data


def event_from_dict(data: object, path: str = "event") -> TraceEvent:
    mapping = require_mapping(data, path, "an event")
    try:
        raw_stage = mapping["stage"]
        stage: PipelineStage | str
        try:
            stage = PipelineStage(raw_stage)
        except ValueError:
            if not isinstance(raw_stage, str):
                raise fail(f"{path}.stage", f"must be a string, got {raw_stage!r}") from None
            stage = raw_stage  # an unknown stage from another implementation is preserved
        return TraceEvent(stage, mapping["duration_ms"], mapping["item_count"], mapping.get("message"))
    except KeyError as missing:
        raise fail(path, f"missing required field {missing.args[0]!r}") from None
    except CupelError as error:
        if str(error).startswith(path):
            raise
        raise fail(path, str(error), type_error=isinstance(error, TypeError)) from None


def overflow_to_dict(event: OverflowEvent) -> dict[str, Any]:
    return {
        "tokens_over_budget": event.tokens_over_budget,
        "overflowing_items": [item_to_dict(item) for item in event.overflowing_items],
        "budget": budget_to_dict(event.budget),
    }


def overflow_from_dict(data: object, path: str = "overflow") -> OverflowEvent:
    mapping = require_mapping(data, path, "an overflow event")
    try:
        items = tuple(
            item_from_dict(ContextItem, item, f"{path}.overflowing_items[{n}]")
            for n, item in enumerate(mapping["overflowing_items"])
        )
        return OverflowEvent(
            mapping["tokens_over_budget"],
            items,
            budget_from_dict(ContextBudget, mapping["budget"], f"{path}.budget"),
        )
    except KeyError as missing:
        raise fail(path, f"missing required field {missing.args[0]!r}") from None


register_codec("event", event_to_dict, lambda _cls, data, path: event_from_dict(data, path))
register_codec("overflow", overflow_to_dict, lambda _cls, data, path: overflow_from_dict(data, path))
