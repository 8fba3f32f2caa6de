"""What placers share: ``place`` and ``place_items`` over the one ordering each placer defines."""

from __future__ import annotations

from collections.abc import Sequence

from cupel._run_columns import take
from cupel.model import ContextItem, ScoredItem


class IndexPlacer:
    """A placer defined by :meth:`place_indices`; the list forms are built from it (spec: Placers)."""

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        return self.place_items([entry.item for entry in items], [entry.score for entry in items])

    def place_items(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[ContextItem]:
        """``place`` on parallel lists of items and scores (the pipeline's allocation-free form)."""
        return take(items, self.place_indices(items, scores))

    def place_indices(self, items: Sequence[ContextItem], scores: Sequence[float]) -> list[int]:
        """The positions of ``items`` in placed order (what ``place_items`` returns, by index)."""
        raise NotImplementedError
