"""Optional numpy fast paths for the pipeline's whole-list steps (installed with ``pycupel[fast]``).

Each function here has a plain-Python twin that defines its behaviour; results are identical (tests
compare the two on random inputs). The pure-Python path runs when numpy is missing, for small lists, and
for inputs numpy cannot represent exactly (integers beyond int64, NaN scores). Large lists are where it
pays: Python-object sorts and lookups there are dominated by cache misses, not by the work itself.
Each function checks the size first, so numpy is imported only once an input reaches ``THRESHOLD``.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

#: Lists shorter than this stay in pure Python: below it, converting to arrays costs more than it saves.
THRESHOLD = 4096

_numpy: Any = None
_numpy_checked = False


def numpy_module() -> Any:
    """numpy if it is installed (and not disabled with ``CUPEL_NO_NUMPY=1``), else None."""
    global _numpy, _numpy_checked
    if not _numpy_checked:
        _numpy_checked = True
        if not os.environ.get("CUPEL_NO_NUMPY"):
            try:
                _numpy = importlib.import_module("numpy")
            except ImportError:
                _numpy = None
    return _numpy


def rank_scores(keys: Sequence[int | None]) -> list[float] | None:
    """numpy twin of :func:`cupel.scorers._base.rank_scores`; None when it cannot be used exactly."""
    if len(keys) < THRESHOLD:
        return None
    np = numpy_module()
    if np is None:
        return None
    complete = None not in keys
    try:
        values = np.array(keys if complete else [0 if key is None else key for key in keys], dtype=np.int64)
    except OverflowError:
        return None
    absent = np.zeros(len(keys), dtype=bool) if complete else np.array([key is None for key in keys])
    present = np.sort(values[~absent])
    count = len(present)
    if count <= 1:
        return None
    # The rank is the number of keyed items with a strictly smaller key.
    ranks = np.searchsorted(present, values, side="left")
    scores = ranks / (count - 1)
    scores[absent] = 0.0
    result: list[float] = scores.tolist()
    return result


def order_by_score(scores: Sequence[float], indices: Sequence[int]) -> list[int] | None:
    """``sorted(indices, key=scores.__getitem__, reverse=True)`` (a stable sort), or None."""
    if len(indices) < THRESHOLD:
        return None
    np = numpy_module()
    if np is None:
        return None
    index = np.array(indices, dtype=np.intp)
    values = _gather(np, scores, np.float64, index)
    if np.isnan(values).any():
        return None  # Python's ordering of NaN is what the pure path defines
    # A stable ascending sort of the negated scores keeps equal scores in index order.
    result: list[int] = index[np.argsort(-values, kind="stable")].tolist()
    return result


def weighted_sum(columns: Sequence[Sequence[float]], weights: Sequence[float]) -> list[float] | None:
    """``sum(column[i] * weight)`` per row, accumulated from 0.0 in column order, or None.

    The same two roundings per term as the pure loop (numpy does not fuse multiply and add).
    """
    if not columns or len(columns[0]) < THRESHOLD:
        return None
    np = numpy_module()
    if np is None:
        return None
    total = np.zeros(len(columns[0]), dtype=np.float64)
    for column, weight in zip(columns, weights, strict=True):
        total = total + np.array(column, dtype=np.float64) * weight
    result: list[float] = total.tolist()
    return result


def greedy_order(
    order: Sequence[int], tokens: Sequence[int], scores: Sequence[float]
) -> tuple[list[int], list[int]] | None:
    """Candidates of ``order`` by value density descending (ties by position in ``order``) and their
    token counts in that order, or None."""
    if len(order) < THRESHOLD:
        return None
    np = numpy_module()
    if np is None:
        return None
    index = np.array(order, dtype=np.intp)
    counts = _gather(np, tokens, np.int64, index)
    if counts is None:
        return None
    values = _gather(np, scores, np.float64, index)
    if np.isnan(values).any() or (np.abs(counts) > 2**53).any():
        return None
    zero = counts == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        densities = values / counts
    densities[zero] = np.finfo(np.float64).max
    positions = np.argsort(-densities, kind="stable")
    ordered: list[int] = index[positions].tolist()
    ordered_tokens: list[int] = counts[positions].tolist()
    return ordered, ordered_tokens


def stable_order(keys: Sequence[int], indices: Sequence[int]) -> list[int] | None:
    """``sorted(indices, key=keys.__getitem__)`` (a stable sort on integer keys), or None."""
    if len(indices) < THRESHOLD:
        return None
    np = numpy_module()
    if np is None:
        return None
    index = np.array(indices, dtype=np.intp)
    values = _gather(np, keys, np.int64, index)
    if values is None:
        return None
    result: list[int] = index[np.argsort(values, kind="stable")].tolist()
    return result


def _gather(np: Any, values: Sequence[float] | Sequence[int], dtype: Any, index: Any) -> Any:
    """``values[index]`` as an array of ``dtype``; None when an integer does not fit the dtype."""
    try:
        return np.array(values, dtype=dtype)[index]
    except OverflowError:
        return None
