"""The JSON wire format (spec: Diagnostics JSON examples; ContextItem and ContextBudget field names).

Items and budgets use the spec's field names (``futureRelevanceHint``, ``maxTokens``...); readers also
accept the snake_case spellings. Reports, events and reasons use the spec's snake_case keys. Absent
optional fields are omitted, never written as ``null``. Unknown exclusion reasons and pipeline stages
read from JSON are preserved. Errors name the path of the offending value, e.g. ``items[3].tokens``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from cupel import _input
from cupel._floats import to_float
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason, exclusion_reason_from_dict
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.diagnostics.trace import OverflowEvent, PipelineStage, TraceEvent
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem, ContextKind
from cupel.slicers._base import CountRequirementShortfall

__all__ = [
    "budget_from_dict",
    "budget_to_dict",
    "dumps",
    "item_from_dict",
    "item_to_dict",
    "loads",
    "number_from_wire",
    "number_to_wire",
    "report_from_dict",
    "report_to_dict",
]

# spec name -> (python name, accepted aliases)
_ITEM_KEYS = {
    "content": "content",
    "tokens": "tokens",
    "kind": "kind",
    "source": "source",
    "priority": "priority",
    "tags": "tags",
    "metadata": "metadata",
    "timestamp": "timestamp",
    "futureRelevanceHint": "future_relevance_hint",
    "future_relevance_hint": "future_relevance_hint",
    "pinned": "pinned",
    "originalTokens": "original_tokens",
    "original_tokens": "original_tokens",
}
_BUDGET_KEYS = {
    "maxTokens": "max_tokens",
    "max_tokens": "max_tokens",
    "targetTokens": "target_tokens",
    "target_tokens": "target_tokens",
    "outputReserve": "output_reserve",
    "output_reserve": "output_reserve",
    "reservedSlots": "reserved_slots",
    "reserved_slots": "reserved_slots",
    "estimationSafetyMarginPercent": "estimation_safety_margin_percent",
    "estimation_safety_margin_percent": "estimation_safety_margin_percent",
}


def _fail(path: str, message: str, *, type_error: bool = False) -> CupelError:
    cls = CupelTypeError if type_error else InvalidConfigurationError
    return cls(f"{path}: {message}" if path else message)


def _require_mapping(data: object, path: str, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise _fail(path, f"{what} must be a JSON object, got {type(data).__name__}", type_error=True)
    return data


def _translate(data: Mapping[str, Any], keys: Mapping[str, str], path: str, what: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = keys.get(key)
        if name is None:
            continue  # unknown keys are ignored for forward compatibility
        if name in values:
            raise _fail(path, f"{what} gives {name!r} twice (as {key!r} and another spelling)")
        values[name] = value
    return values


def _parse_timestamp(value: object, path: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise _fail(path, f"timestamp must be an ISO 8601 string, got {value!r}", type_error=True)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise _fail(path, f"timestamp is not ISO 8601: {value!r}") from None
    if parsed.utcoffset() is None:
        raise _fail(path, f"timestamp must carry a UTC offset (e.g. 'Z' or '+00:00'), got {value!r}")
    return parsed


def item_to_dict(item: ContextItem) -> dict[str, Any]:
    """An item as a JSON object with the spec's field names; defaults are omitted."""
    data: dict[str, Any] = {
        "content": item.content,
        "tokens": item.tokens,
        "kind": str(item.kind),
        "source": str(item.source),
    }
    if item.priority is not None:
        data["priority"] = item.priority
    if item.tags:
        data["tags"] = list(item.tags)
    if item.metadata:
        data["metadata"] = dict(item.metadata)
    if item.timestamp is not None:
        data["timestamp"] = item.timestamp.isoformat()
    if item.future_relevance_hint is not None:
        data["futureRelevanceHint"] = number_to_wire(item.future_relevance_hint)
    if item.pinned:
        data["pinned"] = True
    if item.original_tokens is not None:
        data["originalTokens"] = item.original_tokens
    return data


def item_from_dict(data: object, path: str = "item") -> ContextItem:
    """Read an item; both ``futureRelevanceHint`` and ``future_relevance_hint`` spellings work."""
    values = _translate(_require_mapping(data, path, "an item"), _ITEM_KEYS, path, "the item")
    for required in ("content", "tokens"):
        if required not in values:
            raise _fail(path, f"missing required field {required!r}")
    values["timestamp"] = _parse_timestamp(values.get("timestamp"), f"{path}.timestamp")
    if isinstance(values.get("future_relevance_hint"), str):
        values["future_relevance_hint"] = number_from_wire(
            values["future_relevance_hint"], f"{path}.futureRelevanceHint"
        )
    if values.get("tags") is None:
        values.pop("tags", None)
    for optional in ("kind", "source", "pinned"):
        if optional in values and values[optional] is None:
            del values[optional]
    content = values.pop("content")
    tokens = values.pop("tokens")
    try:
        return ContextItem(content, tokens, **values)
    except CupelError as error:
        raise _fail(path, _strip_owner(str(error)), type_error=isinstance(error, TypeError)) from None


def _strip_owner(message: str) -> str:
    # "ContextItem.tokens must be an int" reads better as "tokens must be an int" after a path prefix.
    for owner in ("ContextItem.", "ContextBudget."):
        if message.startswith(owner):
            return message[len(owner) :]
    return message


def budget_to_dict(budget: ContextBudget) -> dict[str, Any]:
    data: dict[str, Any] = {"maxTokens": budget.max_tokens, "targetTokens": budget.target_tokens}
    if budget.output_reserve:
        data["outputReserve"] = budget.output_reserve
    if budget.reserved_slots:
        data["reservedSlots"] = {str(kind): count for kind, count in budget.reserved_slots.items()}
    if budget.estimation_safety_margin_percent:
        data["estimationSafetyMarginPercent"] = budget.estimation_safety_margin_percent
    return data


def budget_from_dict(data: object, path: str = "budget") -> ContextBudget:
    values = _translate(_require_mapping(data, path, "a budget"), _BUDGET_KEYS, path, "the budget")
    if "max_tokens" not in values:
        raise _fail(path, "missing required field 'maxTokens'")
    max_tokens = values.pop("max_tokens")
    target = values.pop("target_tokens", max_tokens)
    try:
        return ContextBudget(max_tokens, target, **values)
    except CupelError as error:
        raise _fail(path, _strip_owner(str(error)), type_error=isinstance(error, TypeError)) from None


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
    mapping = _require_mapping(data, path, "an event")
    try:
        raw_stage = mapping["stage"]
        stage: PipelineStage | str
        try:
            stage = PipelineStage(raw_stage)
        except ValueError:
            if not isinstance(raw_stage, str):
                raise _fail(f"{path}.stage", f"must be a string, got {raw_stage!r}") from None
            stage = raw_stage  # an unknown stage from another implementation is preserved
        return TraceEvent(stage, mapping["duration_ms"], mapping["item_count"], mapping.get("message"))
    except KeyError as missing:
        raise _fail(path, f"missing required field {missing.args[0]!r}") from None
    except CupelError as error:
        if str(error).startswith(path):
            raise
        raise _fail(path, str(error), type_error=isinstance(error, TypeError)) from None


def overflow_to_dict(event: OverflowEvent) -> dict[str, Any]:
    return {
        "tokens_over_budget": event.tokens_over_budget,
        "overflowing_items": [item_to_dict(item) for item in event.overflowing_items],
        "budget": budget_to_dict(event.budget),
    }


def overflow_from_dict(data: object, path: str = "overflow") -> OverflowEvent:
    mapping = _require_mapping(data, path, "an overflow event")
    try:
        items = tuple(
            item_from_dict(item, f"{path}.overflowing_items[{n}]")
            for n, item in enumerate(mapping["overflowing_items"])
        )
        return OverflowEvent(
            mapping["tokens_over_budget"], items, budget_from_dict(mapping["budget"], f"{path}.budget")
        )
    except KeyError as missing:
        raise _fail(path, f"missing required field {missing.args[0]!r}") from None


def _entry_to_dict(item: ContextItem, score: float, reason: dict[str, Any]) -> dict[str, Any]:
    return {"item": item_to_dict(item), "score": number_to_wire(score), "reason": reason}


#: How non-finite numbers are written: RFC 8259 JSON has no NaN or infinities, so they become strings.
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def number_to_wire(value: float) -> float | str:
    """A score or hint for JSON: finite numbers as numbers; NaN and infinities as ``"NaN"``,
    ``"Infinity"`` and ``"-Infinity"`` (the strings :func:`number_from_wire` reads back)."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


def number_from_wire(value: object, path: str) -> float:
    """A JSON number, or one of the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``."""
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _fail(
            path, f'must be a number (or "NaN", "Infinity", "-Infinity"), got {value!r}', type_error=True
        )
    return to_float(value)


def _array(mapping: Mapping[str, Any], key: str, path: str) -> list[Any]:
    value = mapping[key]
    if not isinstance(value, list | tuple):
        raise _fail(f"{path}.{key}", f"must be a JSON array, got {type(value).__name__}", type_error=True)
    return list(value)


def _count(value: object, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(path, f"must be an integer, got {value!r}", type_error=True)
    return value


def report_to_dict(report: SelectionReport) -> dict[str, Any]:
    data: dict[str, Any] = {
        "events": [event_to_dict(event) for event in report.events],
        "included": [_entry_to_dict(e.item, e.score, e.reason.to_dict()) for e in report.included],
        "excluded": [_entry_to_dict(e.item, e.score, e.reason.to_dict()) for e in report.excluded],
        "total_candidates": report.total_candidates,
        "total_tokens_considered": report.total_tokens_considered,
    }
    if report.count_requirement_shortfalls:
        data["count_requirement_shortfalls"] = [
            {
                "kind": str(shortfall.kind),
                "required_count": shortfall.required_count,
                "satisfied_count": shortfall.satisfied_count,
            }
            for shortfall in report.count_requirement_shortfalls
        ]
    return data


def report_from_dict(data: object, path: str = "report") -> SelectionReport:
    mapping = _require_mapping(data, path, "a report")
    try:
        events = tuple(
            event_from_dict(event, f"{path}.events[{n}]")
            for n, event in enumerate(_array(mapping, "events", path))
        )
        included = []
        for n, entry in enumerate(_array(mapping, "included", path)):
            where = f"{path}.included[{n}]"
            entry = _require_mapping(entry, where, "an included item")
            included.append(
                IncludedItem(
                    item_from_dict(entry["item"], f"{where}.item"),
                    number_from_wire(entry["score"], f"{where}.score"),
                    InclusionReason.from_dict(entry["reason"]),
                )
            )
        excluded = []
        for n, entry in enumerate(_array(mapping, "excluded", path)):
            where = f"{path}.excluded[{n}]"
            entry = _require_mapping(entry, where, "an excluded item")
            reason: ExclusionReason = exclusion_reason_from_dict(entry["reason"])
            score = number_from_wire(entry["score"], f"{where}.score")
            excluded.append(ExcludedItem(item_from_dict(entry["item"], f"{where}.item"), score, reason))
        shortfalls = []
        if "count_requirement_shortfalls" in mapping:
            for n, raw in enumerate(_array(mapping, "count_requirement_shortfalls", path)):
                where = f"{path}.count_requirement_shortfalls[{n}]"
                raw = _require_mapping(raw, where, "a shortfall")
                shortfalls.append(
                    CountRequirementShortfall(
                        ContextKind(raw["kind"]),
                        _count(raw["required_count"], f"{where}.required_count"),
                        _count(raw["satisfied_count"], f"{where}.satisfied_count"),
                    )
                )
        return SelectionReport(
            events=events,
            included=tuple(included),
            excluded=tuple(excluded),
            total_candidates=_count(mapping["total_candidates"], f"{path}.total_candidates"),
            total_tokens_considered=_count(
                mapping["total_tokens_considered"], f"{path}.total_tokens_considered"
            ),
            count_requirement_shortfalls=tuple(shortfalls),
        )
    except KeyError as missing:
        raise _fail(path, f"missing required field {missing.args[0]!r}") from None


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Strict (RFC 8259) JSON text, with a clear error for values JSON cannot represent.

    Scores and hints are already encoded by :func:`number_to_wire`; a NaN or infinity left elsewhere (in
    metadata) is an error rather than the bare ``NaN`` strict parsers reject.
    """
    try:
        return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise CupelTypeError(f"value cannot be written as JSON: {error}") from None


def loads(text: str | bytes, source: str = "") -> Any:
    """Parse wire-format JSON with the project's one reader (strict UTF-8 and RFC 8259, depth limit)."""
    if isinstance(text, bytes | bytearray):
        text = _input.decode_text(bytes(text), source)
    if not isinstance(text, str):
        raise CupelTypeError(f"JSON text must be str or bytes, got {type(text).__name__}")
    return _input.loads_json(text, source)
