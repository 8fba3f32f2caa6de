"""How much of a list a call shares with the last one: the leading positions two columns agree on."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress, count
from operator import ne

__all__ = ["agreeing"]


def agreeing(old: Sequence[object], new: Sequence[object], limit: int) -> int:
    """How many leading positions (at most ``limit``) hold equal values in both columns."""
    if old[:limit] == new[:limit]:  # one C-level pass in the usual case (nothing changed)
        return limit
    return next(compress(count(), map(ne, old[:limit], new[:limit])))
