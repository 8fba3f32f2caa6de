"""Values per message position kept between selections: a chat re-trimmed each turn asks again for
the positions it asked for the turn before (``docs/spec-notes.md``, "Chat speed")."""

from __future__ import annotations

import _thread
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

__all__ = ["KEPT", "PositionColumn"]

T = TypeVar("T")

KEPT = 1 << 18
"""Positions a column keeps at most; a longer transcript gets its values built for the call alone."""


class PositionColumn(Generic[T]):
    """The values of positions ``0, 1, 2, ...``, made by ``make(range)`` on first need."""

    def __init__(self, make: Callable[[range], Iterable[T]]) -> None:
        self._make = make
        self._lock = _thread.allocate_lock()
        # Replaced, never grown in place: a reader holding the old list sees it unchanged.
        self._values: list[T] = []

    def upto(self, count: int) -> list[T]:
        """The values for positions ``0 .. count - 1`` (or a longer list: read it by index)."""
        with self._lock:
            values = self._values
            if len(values) >= count:
                return values
            values = [*values, *self._make(range(len(values), count))]
            if count <= KEPT:
                self._values = values
            return values
