"""The JSON wire format, every converter in one place (spec: Diagnostics JSON examples).

Item and budget field names follow the spec's ContextItem and ContextBudget.

Items and budgets use the spec's field names (``futureRelevanceHint``, ``maxTokens``...); readers also
accept the snake_case spellings. Reports, events and reasons use the spec's snake_case keys. Absent
optional fields are omitted, never written as ``null``. Unknown exclusion reasons and pipeline stages
read from JSON are preserved. Errors name the path of the offending value, e.g. ``items[3].tokens``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cupel import _wire_format
from cupel._lazy import lazy_exports
from cupel._wire_format import dumps, item_to_dict, loads, number_from_wire, number_to_wire
from cupel.model import ContextBudget, ContextItem

if TYPE_CHECKING:
    from cupel.diagnostics.events import event_from_dict, event_to_dict, overflow_from_dict, overflow_to_dict
    from cupel.diagnostics.report import report_from_dict, report_to_dict

__all__ = [
    "budget_from_dict",
    "budget_to_dict",
    "dumps",
    "event_from_dict",
    "event_to_dict",
    "item_from_dict",
    "item_to_dict",
    "loads",
    "number_from_wire",
    "number_to_wire",
    "overflow_from_dict",
    "overflow_to_dict",
    "report_from_dict",
    "report_to_dict",
]


def item_from_dict(data: object, path: str = "item") -> ContextItem:
    """Read an item; both ``futureRelevanceHint`` and ``future_relevance_hint`` spellings work."""
    return _wire_format.item_from_dict(ContextItem, data, path)


def budget_to_dict(budget: ContextBudget) -> dict[str, Any]:
    return _wire_format.budget_to_dict(budget)


def budget_from_dict(data: object, path: str = "budget") -> ContextBudget:
    return _wire_format.budget_from_dict(ContextBudget, data, path)


# The report and event converters are imported on first use: reading items needs no diagnostics.
__getattr__, __dir__ = lazy_exports(
    __name__,
    globals(),
    {
        "event_from_dict": "cupel.diagnostics.events",
        "event_to_dict": "cupel.diagnostics.events",
        "overflow_from_dict": "cupel.diagnostics.events",
        "overflow_to_dict": "cupel.diagnostics.events",
        "report_from_dict": "cupel.diagnostics.report",
        "report_to_dict": "cupel.diagnostics.report",
    },
)
