"""Exclusion reasons only chat selection gives, beside the specification's eight.

They serialise like the spec's variants (``{"reason": "IncompleteTurn", ...}``); a reader that does
not know them keeps them as ``UnknownExclusionReason``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cupel.diagnostics.reasons import ExclusionReason

__all__ = ["IncompleteTurn", "OrphanedToolResult", "Summarized", "UnansweredToolCall"]


@dataclass(frozen=True, slots=True)
class IncompleteTurn(ExclusionReason):
    """The unit fitted, but the user message opening its turn did not: a reply never goes without it."""

    variant: ClassVar[str] = "IncompleteTurn"
    turn: int

    def describe(self) -> str:
        return f"IncompleteTurn: the user message of turn {self.turn} was not kept, so its replies go too"


@dataclass(frozen=True, slots=True)
class OrphanedToolResult(ExclusionReason):
    """Repair dropped a tool result that answers no tool call made before it."""

    variant: ClassVar[str] = "OrphanedToolResult"
    call_id: str

    def describe(self) -> str:
        return f"OrphanedToolResult: answers tool call {self.call_id!r}, which no earlier message made"


@dataclass(frozen=True, slots=True)
class UnansweredToolCall(ExclusionReason):
    """Repair dropped a tool call that never got its result (with the results of its sibling calls)."""

    variant: ClassVar[str] = "UnansweredToolCall"
    call_id: str

    def describe(self) -> str:
        return f"UnansweredToolCall: tool call {self.call_id!r} has no result in the transcript"


@dataclass(frozen=True, slots=True)
class Summarized(ExclusionReason):
    """Dropped for the budget, and told in the summary placed after the system messages instead."""

    variant: ClassVar[str] = "Summarized"
    dropped_because: str

    def describe(self) -> str:
        return f"Summarized: dropped ({self.dropped_because}) and told in the summary"
