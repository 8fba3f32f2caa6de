"""ChronologicalPlacer (spec: Placers, ChronologicalPlacer)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from cupel import _numeric
from cupel._run_columns import TIMESTAMPS, selected_column, take
from cupel.model import ContextItem, ScoredItem

_TIMESTAMP = attrgetter("_timestamp_us")


def _pinned_timestamps(pinned: list[ContextItem]) -> object:
    return _numeric.exact_values(list(map(_TIMESTAMP, pinned)))


class ChronologicalPlacer:
    """Oldest first; items without a timestamp follow in input order. Scores are ignored."""

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.place_items([entry.item for entry in items], [entry.score for entry in items])

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        """``place`` on parallel lists of items and scores (the pipeline's allocation-free form)."""
        return take(items, self.place_indices(items, scores))

    def place_indices(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in placed order (what ``place_items`` returns, by index)."""
        # The selected items' timestamps from the keys RecencyScorer converted in this run, if it did.
        values = selected_column(items, TIMESTAMPS, _pinned_timestamps)
        if values is not None:
            return _numeric.chronological_positions(values)
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
