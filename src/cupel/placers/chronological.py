"""ChronologicalPlacer (spec: Placers, ChronologicalPlacer)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cupel import _numeric
from cupel.model import ContextItem, ScoredItem

_TIMESTAMP = attrgetter("_timestamp_us")


class ChronologicalPlacer:
    """Oldest first; items without a timestamp follow in input order. Scores are ignored."""

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.place_items([entry.item for entry in items], [entry.score for entry in items])

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        """``place`` on parallel lists of items and scores (the pipeline's allocation-free form)."""
        keys = list(map(_TIMESTAMP, items))
        fast = _numeric.chronological_order(keys)
        if fast is not None:
            return list(map(items.__getitem__, fast))
        timestamped = [index for index, key in enumerate(keys) if key is not None]
        # sort() is stable, so equal timestamps keep their input order.
        timestamped.sort(key=keys.__getitem__)
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
