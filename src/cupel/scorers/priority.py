"""PriorityScorer (spec: Scorers, PriorityScorer)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cupel.model import ContextItem
from cupel.scorers._base import ScorerBase, rank_score, rank_scores

_KEY = attrgetter("priority")


class PriorityScorer(ScorerBase):
    """Rank by priority among prioritised items: highest 1.0, lowest 0.0, none 0.0.

    Relative scorer; ``score_all`` sorts once instead of comparing every pair.
    """

    __slots__ = ()

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return rank_score(item.priority, [other.priority for other in all_items])

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return rank_scores(list(map(_KEY, items)))

    def __repr__(self) -> str:
        return "PriorityScorer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is PriorityScorer

    def __hash__(self) -> int:
        return hash(PriorityScorer)
