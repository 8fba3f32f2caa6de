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
        return list(map(items.__getitem__, self.place_indices(items, scores)))

    def place_indices(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in placed order (what ``place_items`` returns, by index)."""
        keys = list(map(_TIMESTAMP, items))
        fast = _numeric.chronological_order(keys)
        if fast is not None:
            return fast
        timestamped = [index for index, key in enumerate(keys) if key is not None]
        # sort() is stable, so equal timestamps keep their input order.
        timestamped.sort(key=keys.__getitem__)
        if len(timestamped) < len(items):
            timestamped.extend(index for index, key in enumerate(keys) if key is None)
        return timestamped

    def __repr__(self) -> str:
        return "ChronologicalPlacer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ChronologicalPlacer

    def __hash__(self) -> int:
        return hash(ChronologicalPlacer)
