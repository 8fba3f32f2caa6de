"""SelectionReport and its included/excluded entries (spec: Diagnostics, SelectionReport)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from cupel._wire_format import WireFormat
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
class SelectionReport(WireFormat):
    """Everything one run decided: included in placed order, excluded by score descending.

    Every candidate appears exactly once across ``included`` and ``excluded``.
    """

    _wire: ClassVar[str] = "report"
    events: tuple[TraceEvent, ...]
    included: tuple[IncludedItem, ...]
    excluded: tuple[ExcludedItem, ...]
    total_candidates: int
    total_tokens_considered: int
    count_requirement_shortfalls: tuple[CountRequirementShortfall, ...] = ()

    @property
    def items(self) -> list[ContextItem]:
        """The selected items in placed order (what ``Pipeline.run`` returns)."""
        return [entry.item for entry in self.included]

    @property
    def included_tokens(self) -> int:
        """Total tokens of the included items."""
        return sum(entry.item.tokens for entry in self.included)
