"""RecencyScorer (spec: Scorers, RecencyScorer)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cupel._run_columns import TIMESTAMPS
from cupel.model import ContextItem
from cupel.scorers._base import ScorerBase, listed, rank_column, rank_score

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

    from cupel.scorers.columns import ItemColumns

_KEY = attrgetter("_timestamp_us")


class RecencyScorer(ScorerBase):
    """Rank by timestamp among timestamped items: newest 1.0, oldest 0.0, none 0.0.

    Relative scorer; ``score_all`` sorts once instead of comparing every pair.
    """

    __slots__ = ()

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return rank_score(item._timestamp_us, [other._timestamp_us for other in all_items])

    def score_all(self, items: Sequence[ContextItem]) -> list[float]:
        return listed(self._score_column(items))

    def _score_column(self, items: Sequence[ContextItem]) -> Any:
        """``score_all`` as a float64 array when numpy ranks the keys (CompositeScorer combines the
        arrays without building lists); the run remembers the timestamp keys for ChronologicalPlacer."""
        return rank_column(list(map(_KEY, items)), items, TIMESTAMPS)

    def score_columns(self, batch: ItemColumns) -> Any:
        """Ranks of the batch's order keys (any keys in the timestamps' order rank alike)."""
        if batch.source is not None:
            return self._score_column(batch.source)
        return rank_column(list(batch.order_keys()), ())

    def __repr__(self) -> str:
        return "RecencyScorer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is RecencyScorer

    def __hash__(self) -> int:
        return hash(RecencyScorer)
