"""UShapedPlacer (spec: Placers, UShapedPlacer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel._run_columns import take
from cupel._score_order import descending_indices
from cupel.model import ContextItem, ScoredItem


class UShapedPlacer:
    """Highest scores at both edges, lowest in the middle.

    Items ranked by score (ties by input order) alternate: rank 0 first, rank 1 last, rank 2 second...
    """

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.place_items([entry.item for entry in items], [entry.score for entry in items])

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        """``place`` on parallel lists of items and scores (the pipeline's allocation-free form)."""
        return take(items, self.place_indices(items, scores))

    def place_indices(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in placed order (what ``place_items`` returns, by index)."""
        # Stable descending sort: ranks follow score (NaN last), then input order.
        ranked = descending_indices(range(len(items)), scores)
        # Even ranks fill from the left edge inwards, odd ranks from the right edge inwards.
        right = ranked[1::2]
        right.reverse()
        return ranked[0::2] + right

    def __repr__(self) -> str:
        return "UShapedPlacer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is UShapedPlacer

    def __hash__(self) -> int:
        return hash(UShapedPlacer)
