"""Columns one pipeline run derives from its candidates, reused by a later stage of the same run.

RecencyScorer converts the candidates' timestamps to an array to rank them, and ChronologicalPlacer
orders the selected items by the same timestamps. Inside a run (:class:`run_scope`), a column
derived from a list is remembered under the identity of that list (the entry holds the list, so the
identity cannot be reused while the run lasts) and a later stage recalls it: the placer then takes
the selected items' timestamps from the array instead of reading them from every selected object, in
the random order the slicer chose them. Outside a run nothing is remembered. The candidate list is
the pipeline's own and does not change during the run, so a remembered column stays true.

The items the pipeline places are a :class:`Selection`: the pinned items, then the candidates the
slicer chose, described by their indices instead of being gathered into a new list first.
"""

from __future__ import annotations

from _thread import _local  # threading.local, without importing threading
from collections.abc import Iterator, Sequence
from itertools import chain

from cupel import _numeric
from cupel.model import ContextItem

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = ["TIMESTAMPS", "Selection", "recall", "remember", "run_scope", "selected_column", "take"]

#: The name under which RecencyScorer remembers its float64 timestamp keys (None as NaN).
TIMESTAMPS = "timestamps"

_state = _local()


class run_scope:
    """Remember derived columns until the block ends (nested runs each get their own)."""

    __slots__ = ("_saved",)

    def __enter__(self) -> None:
        self._saved = getattr(_state, "columns", None)
        _state.columns = {}

    def __exit__(self, *exc_info: object) -> None:
        _state.columns = self._saved


def remember(source: Sequence[Any], name: str, array: Any) -> None:
    """Keep ``array``, a column ``name`` derived from ``source``, for the rest of the run (if any)."""
    columns: dict[tuple[int, str], tuple[object, Any]] | None = getattr(_state, "columns", None)
    if columns is not None:
        columns[id(source), name] = (source, array)


def recall(source: Sequence[Any], name: str) -> Any:
    """The column ``name`` remembered for this very ``source`` during the current run, or None."""
    columns: dict[tuple[int, str], tuple[object, Any]] | None = getattr(_state, "columns", None)
    entry = None if columns is None else columns.get((id(source), name))
    return None if entry is None or entry[0] is not source else entry[1]


class Selection(Sequence[ContextItem]):
    """``pinned + [source[index] for index in chosen]``, without building that list.

    ``chosen`` is a :class:`cupel._numeric.Column` when the slicer produced an array. Placers read it
    by position like any sequence; :func:`take` builds the placed list from it in one pass.
    """

    __slots__ = ("chosen", "pinned", "source")

    def __init__(self, pinned: list[ContextItem], source: list[ContextItem], chosen: list[int]) -> None:
        self.pinned = pinned
        self.source = source
        self.chosen = chosen

    def __len__(self) -> int:
        return len(self.pinned) + len(self.chosen)

    def __getitem__(self, position: Any) -> Any:
        if isinstance(position, slice):
            return list(self)[position]
        pinned = len(self.pinned)
        if position < 0:
            position += len(self)
        if 0 <= position < pinned:
            return self.pinned[position]
        return self.source[self.chosen[position - pinned]]  # IndexError past the end

    def __iter__(self) -> Iterator[ContextItem]:
        return chain(self.pinned, map(self.source.__getitem__, self.chosen))


def take(items: Sequence[ContextItem], positions: list[int]) -> list[ContextItem]:
    """``[items[position] for position in positions]``; for a Selection, one pass over the placed
    items (from the arrays the positions and the chosen indices carry, when they have them)."""
    if type(items) is not Selection:
        return list(map(items.__getitem__, positions))
    pinned, chosen, source = items.pinned, items.chosen, items.source
    if not chosen:
        return list(map(pinned.__getitem__, positions))
    at, chosen_at = getattr(positions, "array", None), getattr(chosen, "array", None)
    if at is None or chosen_at is None:
        if pinned:
            return list(map([*pinned, *map(source.__getitem__, chosen)].__getitem__, positions))
        return list(map(source.__getitem__, map(chosen.__getitem__, positions)))
    np = _numeric.numpy_module()
    count = len(pinned)
    indices = chosen_at[np.maximum(at - count, 0) if count else at]
    placed = list(map(source.__getitem__, indices.tolist()))
    if count:
        for position in np.flatnonzero(at < count).tolist():
            placed[position] = pinned[positions[position]]
    return placed


def selected_column(items: Sequence[ContextItem], name: str, values: Any) -> Any:
    """The column ``name`` of a Selection's items as an array, from the one remembered for its
    source, with ``values(pinned)`` converting the pinned items' own; None when none is remembered."""
    if type(items) is not Selection:
        return None
    array = recall(items.source, name)
    if array is None:
        return None
    np = _numeric.numpy_module()
    chosen = getattr(items.chosen, "array", None)
    picked = array[np.asarray(items.chosen, dtype=np.intp) if chosen is None else chosen]
    if not items.pinned:
        return picked
    prefix = values(items.pinned)
    return None if prefix is None else np.concatenate((prefix, picked))
