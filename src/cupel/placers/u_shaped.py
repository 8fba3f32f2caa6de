"""UShapedPlacer (spec: Placers, UShapedPlacer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.model import ContextItem, ScoredItem


class UShapedPlacer:
    """Highest scores at both edges, lowest in the middle.

    Items ranked by score (ties by input order) alternate: rank 0 first, rank 1 last, rank 2 second...
    """

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        count = len(items)
        scores = [entry.score for entry in items]
        ranked = sorted(range(count), key=scores.__getitem__, reverse=True)
        result: list[ContextItem | None] = [None] * count
        left = 0
        right = count - 1
        for rank, index in enumerate(ranked):
            if rank % 2 == 0:
                result[left] = items[index].item
                left += 1
            else:
                result[right] = items[index].item
                right -= 1
        return result  # type: ignore[return-value]  # every slot is filled exactly once

    def __repr__(self) -> str:
        return "UShapedPlacer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is UShapedPlacer

    def __hash__(self) -> int:
        return hash(UShapedPlacer)
