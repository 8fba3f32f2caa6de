"""Ordering by score with NaN last (docs/spec-notes.md, "Truthful explanations").

Python compares NaN as neither smaller nor larger than anything, so a plain ``sorted`` over scores that
contain NaN can scatter the finite scores too. Every sort by score in cupel goes through these helpers:
a NaN sorts after every finite score, as if it were −∞, and the finite scores keep their order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import TypeVar

    T = TypeVar("T")

__all__ = ["descending_indices", "has_nan", "nan_last", "sort_by_score"]


def nan_last(score: float) -> float:
    """The sort key of ``score``: NaN becomes −∞, every other value is itself."""
    return -math.inf if score != score else score


def has_nan(values: Sequence[float]) -> bool:
    """Whether any value is NaN (one C-level sum in the common case of none)."""
    total = sum(values)
    # A NaN total also comes from +inf + -inf, so confirm before paying for the keyed sort.
    return total != total and any(value != value for value in values)


def descending_indices(indices: Sequence[int], scores: Sequence[float]) -> list[int]:
    """``indices`` by ``scores[index]`` descending, a stable sort (ties keep their order), NaN last."""
    if has_nan(scores):
        return sorted(indices, key=lambda index: nan_last(scores[index]), reverse=True)
    return sorted(indices, key=scores.__getitem__, reverse=True)


def sort_by_score(entries: Sequence[T], score: Callable[[T], float], *, reverse: bool = True) -> list[T]:
    """``entries`` sorted by ``score(entry)`` (descending unless ``reverse=False``), stable, NaN lowest."""
    keys = list(map(score, entries))
    if has_nan(keys):
        keys = list(map(nan_last, keys))
    # Sorting positions by precomputed keys: one key call per entry, C-level comparisons.
    order = sorted(range(len(keys)), key=keys.__getitem__, reverse=reverse)
    return list(map(entries.__getitem__, order))
