"""MetadataKeyScorer (spec: Scorers, MetadataKeyScorer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.errors import CupelTypeError
from cupel.model import ContextItem
from cupel.scorers._base import ScorerBase, check_weight

NEUTRAL_MULTIPLIER = 1.0


class MetadataKeyScorer(ScorerBase):
    """Return ``boost`` when ``metadata[key] == value``, else the neutral multiplier 1.0.

    ``boost`` must be finite and > 0. Non-string metadata values are compared by ``str(value)``.
    Results are not clamped: this scorer is meant to be one child of a CompositeScorer.
    """

    __slots__ = ("boost", "key", "value")

    key: str
    value: str
    boost: float

    def __init__(self, key: str, value: str, boost: float) -> None:
        if not isinstance(key, str):
            raise CupelTypeError(f"MetadataKeyScorer: key must be a string, got {key!r}")
        if not isinstance(value, str):
            raise CupelTypeError(f"MetadataKeyScorer: value must be a string, got {value!r}")
        self.key = key
        self.value = value
        self.boost = check_weight("MetadataKeyScorer", "boost", boost, allow_zero=False)

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        if self.key not in item.metadata:
            return NEUTRAL_MULTIPLIER
        raw = item.metadata[self.key]
        text = raw if isinstance(raw, str) else str(raw)
        return self.boost if text == self.value else NEUTRAL_MULTIPLIER

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return [self.score(item, items) for item in items]

    def __repr__(self) -> str:
        return f"MetadataKeyScorer({self.key!r}, {self.value!r}, {self.boost!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MetadataKeyScorer) and (self.key, self.value, self.boost) == (
            other.key,
            other.value,
            other.boost,
        )

    def __hash__(self) -> int:
        return hash((MetadataKeyScorer, self.key, self.value, self.boost))
