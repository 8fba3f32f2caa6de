"""ReflexiveScorer (spec: Scorers, ReflexiveScorer)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from cupel.model import ContextItem
from cupel.scorers._base import ScorerBase


class ReflexiveScorer(ScorerBase):
    """Pass ``future_relevance_hint`` through, clamped to [0, 1]; absent or non-finite gives 0.0."""

    __slots__ = ()

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        hint = item.future_relevance_hint
        if hint is None or not math.isfinite(hint):
            return 0.0
        return min(max(hint, 0.0), 1.0)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [self.score(item, items) for item in items]

    def __repr__(self) -> str:
        return "ReflexiveScorer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ReflexiveScorer

    def __hash__(self) -> int:
        return hash(ReflexiveScorer)
