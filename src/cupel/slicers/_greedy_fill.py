"""GREEDY-SLICE from the deduplicated candidates in index order, without Stage 4's score order.

Stage 4 sorts the candidates by score (descending, ties by index) and GreedySlice re-sorts them by
value density, keeping that order among equal densities. Both sorts are one: density descending,
then score descending, then index ascending. numpy sorts by density once (ties by index) and
re-sorts only the candidates whose density another one shares, by score: at 1,000,000 candidates
this saves the score sort (a tenth of an untraced run). Results are those of ``greedy_select`` on
the score order (tested against it).
"""

from __future__ import annotations

from collections.abc import Sequence

from cupel import _numeric

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

__all__ = ["greedy_fill_unordered"]


def greedy_fill_unordered(
    survivors: Sequence[int], tokens: Sequence[int], scores: Sequence[float], target: int
) -> list[int] | None:
    """``greedy_select(score order of survivors, tokens, scores, target)`` for ``target > 0``, or
    None where numpy is not used (a short list, no numpy, NaN scores, negative or huge counts)."""
    np = _numeric.numpy_module() if len(survivors) >= _numeric.THRESHOLD else None
    if np is None:
        return None
    index = _numeric._ints(np, survivors)
    found = _numeric.densities(np, index, tokens, scores)
    if found is None:
        return None
    counts, density, values = found
    positions = _ties_by_score(np, _numeric._descending(np, density), density, values)
    taken = _numeric.fill_positions(np, counts[positions], target)
    return None if taken is None else _numeric.column(index[positions[taken]])


def _ties_by_score(np: Any, positions: Any, density: Any, values: Any) -> Any:
    """``positions`` (by density descending, ties by index) with each run of equal densities
    re-sorted by score descending, ties still by index."""
    ordered = density[positions]
    tied = ordered[1:] == ordered[:-1]
    if not tied.any():
        return positions
    member = np.zeros(len(positions), dtype=bool)
    member[1:] |= tied
    member[:-1] |= tied
    starts = np.ones(len(positions), dtype=bool)
    starts[1:] = ~tied
    groups = np.cumsum(starts)[member]
    tied_positions = positions[member]
    # lexsort is stable: within a group and a score, the index order of the density sort stays.
    by_score = np.lexsort((~_numeric.order_keys(np, values[tied_positions]), groups))
    positions[member] = tied_positions[by_score]
    return positions
