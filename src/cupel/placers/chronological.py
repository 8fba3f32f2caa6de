"""ChronologicalPlacer (spec: Placers, ChronologicalPlacer)."""

from __future__ import annotations

from collections.abc import Sequence

from cupel.model import ContextItem, ScoredItem


class ChronologicalPlacer:
    """Oldest first; items without a timestamp follow in input order. Scores are ignored."""

    __slots__ = ()

    def place(self, items: Sequence[ScoredItem]) -> list[ContextItem]:
        timestamped: list[tuple[int, int]] = []
        untimed: list[int] = []
        for index, entry in enumerate(items):
            key = entry.item._timestamp_us
            if key is None:
                untimed.append(index)
            else:
                timestamped.append((key, index))
        timestamped.sort()
        return [items[index].item for _, index in timestamped] + [items[index].item for index in untimed]

    def __repr__(self) -> str:
        return "ChronologicalPlacer()"

    def __eq__(self, other: object) -> bool:
        return type(other) is ChronologicalPlacer

    def __hash__(self) -> int:
        return hash(ChronologicalPlacer)
