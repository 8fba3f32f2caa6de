"""KnapsackSlice (spec: Slicers, KnapsackSlice).

The DP runs on discretised integers, so its result is exact and platform-independent. Two
implementations of the same DP live side by side: :func:`_knapsack_python`, the reference and the
fallback, and ``_knapsack_numpy`` (module ``_knapsack_numpy``, used when the optional ``numpy``
dependency is installed, ``pip install 'pycupel[fast]'``). Both return the same indices in the same
order for every input; the test suite checks this.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import gt
from typing import ClassVar

from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason, ScoredTooLow
from cupel.errors import TableTooLargeError
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers._base import SliceOutcome
from cupel.slicers._common import check_int

__all__ = ["KnapsackSlice"]

#: Scores become integers as ``max(0, floor(score * SCORE_SCALE))`` (spec: Score Scaling).
SCORE_SCALE = 10000
#: The largest DP table, in cells (candidates x (capacity + 1)), a KnapsackSlice builds.
MAX_TABLE_CELLS = 50_000_000

_INT64_MAX = 2**63 - 1
# Below about this many DP cells numpy's per-call overhead outweighs its speed (measured).
_NUMPY_MIN_CELLS = 128

_FLAG_DIGITS = bytes.maketrans(b"\x00\x01", b"01")

Solver = Callable[[Sequence[int], Sequence[int], int], list[int]]


def _scaled_value(score: float) -> int:
    """``max(0, floor(score * 10000))`` computed in float64, defined for every float.

    NaN counts as 0 and products at or beyond 2**63 (including +inf) saturate to the int64 maximum,
    as a float-to-int64 conversion does; the spec's formula leaves both undefined.
    """
    scaled = float(score) * SCORE_SCALE
    if not scaled >= 1.0:  # negative, below one unit, or NaN
        return 0
    if scaled >= 9.223372036854775807e18:
        return _INT64_MAX
    return int(scaled)  # truncation is floor for positive numbers


def _knapsack_python(weights: Sequence[int], values: Sequence[int], capacity: int) -> list[int]:
    """The spec's 1-D DP with a keep table; returns the kept indices in reconstruction order.

    ``weights`` are discretised (``>= 1``), ``values`` scaled, ``capacity >= 1``. For each item the
    spec's reverse loop ``for w <- capacity downto dw`` only ever reads ``dp`` entries below ``w``
    that this item has not yet written, so it equals one update over the shifted *old* array:
    ``with = old[w - dw] + dv``, ``keep[w] = with > old[w]``, ``dp[w] = max(with, old[w])``. Items
    that cannot fit (``dw > capacity``) or carry no value never set a keep bit -- ``dp`` is
    non-decreasing in ``w``, so ``dp[w - dw] + 0 > dp[w]`` is impossible -- and are skipped.
    Each keep row is an int used as a bit set (bit ``w - dw`` is the spec's ``keep[i][w]``), so the
    table takes about one bit per cell, as the numpy path's packed rows do.
    """
    dp = [0] * (capacity + 1)
    keep: list[int | None] = [None] * len(weights)
    for index, (dw, dv) in enumerate(zip(weights, values, strict=True)):
        if dw > capacity or dv <= 0:
            continue
        with_item = [value + dv for value in dp[: capacity + 1 - dw]]
        old = dp[dw:]
        flags = bytes(map(gt, with_item, old))
        # Reversed so that flag 0 becomes the least significant bit.
        keep[index] = int(flags.translate(_FLAG_DIGITS)[::-1], 2)
        dp[dw:] = map(max, with_item, old)
    selected: list[int] = []
    remaining = capacity
    for index in range(len(weights) - 1, -1, -1):
        row = keep[index]
        dw = weights[index]
        if row is not None and remaining >= dw and (row >> (remaining - dw)) & 1:
            selected.append(index)
            remaining -= dw
    return selected


@functools.cache
def _numpy_solver() -> Solver | None:
    """The vectorised DP, or None when numpy is not installed."""
    try:
        from cupel.slicers._knapsack_numpy import _knapsack_numpy
    except ImportError:
        return None
    return _knapsack_numpy


def _solve(weights: Sequence[int], values: Sequence[int], capacity: int) -> list[int]:
    """The DP's selection (indices in reconstruction order), by the fastest exact route."""
    usable = [i for i, (dw, dv) in enumerate(zip(weights, values, strict=True)) if dv > 0 and dw <= capacity]
    if sum(weights[i] for i in usable) <= capacity:
        # Everything that can contribute fits at once. Then at every step of the reconstruction the
        # remaining capacity covers all earlier usable items, so dp[remaining - dw] + dv > dp[remaining]
        # holds for exactly the usable items: the DP would select every one of them, last first.
        return usable[::-1]
    if len(usable) * (capacity + 1) >= _NUMPY_MIN_CELLS and sum(values[i] for i in usable) <= _INT64_MAX:
        solver = _numpy_solver()
        if solver is not None:
            return solver(weights, values, capacity)
    return _knapsack_python(weights, values, capacity)


def _explain_unselected(
    scored: Sequence[ScoredItem], selected: Sequence[ContextItem], budget: ContextBudget, bucket: int
) -> tuple[tuple[ContextItem, ExclusionReason], ...]:
    """Why each candidate the DP left out stayed out; ``selected`` is what it chose."""
    chosen = Counter(id(item) for item in selected)
    capacity = max(0, budget.target_tokens) // bucket
    used = sum(-(-item.tokens // bucket) for item in selected if item.tokens > 0)
    # ceil(tokens / bucket) > buckets left  <=>  tokens > buckets left * bucket: the room in tokens.
    room = max(0, capacity - used) * bucket
    threshold = 1.0 / SCORE_SCALE
    exclusions: list[tuple[ContextItem, ExclusionReason]] = []
    for entry in scored:
        item = entry.item
        if chosen[id(item)] > 0:
            chosen[id(item)] -= 1
            continue
        if item.tokens <= 0:
            continue  # only left out when the target is 0; the pipeline explains that
        reason: ExclusionReason
        if item.tokens > room:
            reason = BudgetExceeded(item.tokens, room)
        else:
            # It fitted, so the optimal DP left it out only because it added no value.
            reason = ScoredTooLow(entry.score, threshold)
        exclusions.append((item, reason))
    return tuple(exclusions)


@dataclass(frozen=True, slots=True, init=False)
class KnapsackSlice:
    """Select the subset with the highest total score that fits, by 0/1 knapsack DP.

    Token counts are rounded up and the target down to multiples of ``bucket_size`` (default 100),
    so the result always fits but may under-fill by up to a bucket per item. Zero-token items are
    always selected. The output is zero-token items first, then the DP's picks in reconstruction
    (last-candidate-first) order. A table over :attr:`MAX_TABLE_CELLS` cells raises
    :class:`~cupel.errors.TableTooLargeError` instead of allocating it.
    """

    bucket_size: int
    MAX_TABLE_CELLS: ClassVar[int] = MAX_TABLE_CELLS

    def __init__(self, bucket_size: int = 100) -> None:
        object.__setattr__(
            self, "bucket_size", check_int("KnapsackSlice", "bucket_size", bucket_size, minimum=1)
        )

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        if not scored or budget.target_tokens <= 0:
            return []
        bucket = self.bucket_size
        zero_token: list[ContextItem] = []
        candidates: list[ContextItem] = []
        weights: list[int] = []
        values: list[int] = []
        for entry in scored:
            tokens = entry.item.tokens
            if tokens == 0:
                zero_token.append(entry.item)
            elif tokens > 0:
                candidates.append(entry.item)
                weights.append(-(-tokens // bucket))  # ceil(tokens / bucket) in exact integers
                values.append(_scaled_value(entry.score))
        if not candidates:
            return zero_token
        capacity = budget.target_tokens // bucket
        if capacity == 0:
            return zero_token
        cells = len(candidates) * (capacity + 1)
        if cells > MAX_TABLE_CELLS:
            raise TableTooLargeError(
                f"KnapsackSlice: the DP table would have {cells:,} cells ({len(candidates):,} candidates "
                f"x {capacity + 1:,} capacity buckets), over the limit of {MAX_TABLE_CELLS:,}; "
                f"use a larger bucket_size (now {bucket}) or a smaller target_tokens "
                f"(now {budget.target_tokens})"
            )
        selected = zero_token
        selected.extend(candidates[index] for index in _solve(weights, values, capacity))
        return selected

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice` and explain each unselected item in the knapsack's own terms.

        The DP is exact over whole buckets, so an unselected item either needs more buckets than the
        selection left (``BudgetExceeded`` against that room in tokens) or carries no value, its score
        being below one scaled unit (``ScoredTooLow`` with threshold ``1 / SCORE_SCALE``).
        """
        selected = self.slice(scored, budget)
        return SliceOutcome(tuple(selected), _explain_unselected(scored, selected, budget, self.bucket_size))
