"""ChronologicalPlacer (spec: Placers, ChronologicalPlacer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel import _numeric
from cupel.model import ContextItem, ScoredItem


class ChronologicalPlacer:
    """Oldest first; items without a timestamp follow in input order. Scores are ignored."""

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.place_items([entry.item for entry in items], [entry.score for entry in items])

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        """``place`` on parallel lists of items and scores (the pipeline's allocation-free form)."""
        keys = [item._timestamp_us for item in items]
        timestamped = [index for index, key in enumerate(keys) if key is not None]
        stamps = [0 if key is None else key for key in keys]
        fast = _numeric.stable_order(stamps, timestamped)
        if fast is None:
            # sort() is stable, so equal timestamps keep their input order.
            timestamped.sort(key=stamps.__getitem__)
        else:
            timestamped = fast
        placed = [items[index] for index in timestamped]
        if len(placed) < len(items):
            placed.extend(item for item, key in zip(items, keys, strict=True) if key is None)
        return placed

    def __repr__(self) -> str:
        return "ChronologicalPlacer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ChronologicalPlacer

    def __hash__(self) -> int:
        return hash(ChronologicalPlacer)
