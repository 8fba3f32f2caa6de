"""Exclusion reasons only chat selection gives, beside the specification's eight.

They serialise like the spec's variants (``{"reason": "IncompleteTurn", ...}``); a reader that does
not know them keeps them as ``UnknownExclusionReason``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from cupel.diagnostics.reasons import ExclusionReason

__all__ = ["IncompleteTurn"]


@dataclass(frozen=True, slots=True)
class IncompleteTurn(ExclusionReason):
    """The unit fitted, but the user message opening its turn did not: a reply never goes without it."""

    variant: ClassVar[str] = "IncompleteTurn"
    turn: int

    def describe(self) -> str:
        return f"IncompleteTurn: the user message of turn {self.turn} was not kept, so its replies go too"
