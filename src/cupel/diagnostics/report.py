"""SelectionReport and its included/excluded entries (spec: Diagnostics, SelectionReport)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.trace import TraceEvent
from cupel.model import ContextItem

if TYPE_CHECKING:
    from cupel.slicers._base import CountRequirementShortfall

__all__ = ["ExcludedItem", "IncludedItem", "SelectionReport"]


@dataclass(frozen=True, slots=True)
class IncludedItem:
    """An item in the final window, its score and why it is there."""

    item: ContextItem
    score: float
    reason: InclusionReason


@dataclass(frozen=True, slots=True)
class ExcludedItem:
    """An item left out, its score at the time and why."""

    item: ContextItem
    score: float
    reason: ExclusionReason


@dataclass(frozen=True, slots=True)
class SelectionReport:
    """Everything one run decided: included in placed order, excluded by score descending.

    Every candidate appears exactly once across ``included`` and ``excluded``.
    """

    events: tuple[TraceEvent, ...]
    included: tuple[IncludedItem, ...]
    excluded: tuple[ExcludedItem, ...]
    total_candidates: int
    total_tokens_considered: int
    count_requirement_shortfalls: tuple[CountRequirementShortfall, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON wire form (see :mod:`cupel.wire`)."""
        from cupel import wire

        return wire.report_to_dict(self)

    def to_json(self, *, indent: int | None = None) -> str:
        from cupel import wire

        return wire.dumps(wire.report_to_dict(self), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SelectionReport:
        """Read the JSON wire form; errors name the offending field."""
        from cupel import wire

        return wire.report_from_dict(data)

    @classmethod
    def from_json(cls, text: str | bytes) -> SelectionReport:
        import json

        from cupel import wire

        return wire.report_from_dict(json.loads(text))

    @property
    def items(self) -> list[ContextItem]:
        """The selected items in placed order (what ``Pipeline.run`` returns)."""
        return [entry.item for entry in self.included]

    @property
    def included_tokens(self) -> int:
        """Total tokens of the included items."""
        return sum(entry.item.tokens for entry in self.included)
