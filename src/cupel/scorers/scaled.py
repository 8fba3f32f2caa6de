"""ScaledScorer (spec: Scorers, ScaledScorer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.errors import CupelTypeError
from cupel.model import ContextItem
from cupel.protocols import Scorer
from cupel.scorers._base import ScorerBase, bind_query, score_items


class ScaledScorer(ScorerBase):
    """Min-max normalise an inner scorer over all items; 0.5 when all inner scores are equal.

    ``score_all`` scores the list with the inner scorer once (the per-item form rescans every item).
    """

    __slots__ = ("inner",)

    inner: Scorer

    def __init__(self, inner: Scorer) -> None:
        if inner is None or not callable(getattr(inner, "score", None)):
            raise CupelTypeError(f"ScaledScorer: inner must have a score() method, got {inner!r}")
        self.inner = inner

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if not all_items:
            return 0.5
        raw = float("nan")
        low = float("inf")
        high = float("-inf")
        for other in all_items:
            value = self.inner.score(other, all_items)
            low = min(low, value)
            high = max(high, value)
            if other is item:
                raw = value
        if high == low:
            return 0.5
        return (raw - low) / (high - low)

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        if not items:
            return []
        raw = score_items(self.inner, items)
        low = min(raw)
        high = max(raw)
        if high == low:
            return [0.5] * len(raw)
        span = high - low
        return [(value - low) / span for value in raw]

    def with_query(self, query: str) -> ScaledScorer:
        """The inner scorer bound to ``query`` (``self`` when it reads no query)."""
        inner = bind_query(self.inner, query)
        return self if inner is self.inner else ScaledScorer(inner)

    def __repr__(self) -> str:
        return f"ScaledScorer({self.inner!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ScaledScorer) and self.inner == other.inner

    def __hash__(self) -> int:
        return hash((ScaledScorer, self.inner))
