"""KnapsackSlice (spec: Slicers, KnapsackSlice).

The DP runs on discretised integers, so its result is exact and platform-independent. Three
implementations of the same DP live side by side: ``_knapsack_reference`` (module ``_knapsack_dp``),
the DP as the spec writes it; ``_knapsack_bitset`` (same module), the pure-Python fast path; and
``_knapsack_numpy`` (module ``_knapsack_numpy``, used when the optional ``numpy`` dependency is
installed, ``pip install 'pycupel[fast]'``). All return the same indices in the same order for every
input; the test suite checks the fast paths against the reference.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, repeat
from operator import attrgetter, floordiv, lt, neg
from typing import TYPE_CHECKING, ClassVar

from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason, ScoredTooLow
from cupel.errors import TableTooLargeError
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers._base import SliceOutcome
from cupel.slicers._common import check_int
from cupel.slicers._knapsack_dp import _knapsack_bitset, _Plan, _plan

__all__ = ["KnapsackSlice"]

#: Scores become integers as ``max(0, floor(score * SCORE_SCALE))`` (spec: Score Scaling).
SCORE_SCALE = 10000
#: The largest DP table, in cells (candidates x (capacity + 1)), a KnapsackSlice builds.
MAX_TABLE_CELLS = 50_000_000

_INT64_MAX = 2**63 - 1
# Narrower or smaller tables are as fast in the bit-parallel pure-Python DP as in numpy's, whose
# per-row cost is mostly call overhead (measured).
_NUMPY_MIN_CAPACITY = 256
_NUMPY_MIN_CELLS = 40_000

Solver = Callable[[Sequence[int], Sequence[int], int, _Plan | None], list[int]]

if TYPE_CHECKING:
    from cupel.slicers._knapsack_numpy import _Columns

_ITEM = attrgetter("item")
_SCORE = attrgetter("score")
_TOKENS = attrgetter("tokens")


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


@functools.cache
def _numpy_solver() -> Solver | None:
    """The vectorised DP, or None when numpy is not installed."""
    try:
        from cupel.slicers._knapsack_numpy import _knapsack_numpy
    except ImportError:
        return None
    return _knapsack_numpy


def _numpy_columns(tokens: list[int], scores: list[object], bucket: int) -> _Columns | None:
    """Weights and scaled values in numpy passes, when every score is a float (``float()`` and the
    product are then the same IEEE operations) and every number fits int64; otherwise None."""
    if set(map(type, scores)) != {float}:
        return None
    from cupel.slicers._knapsack_numpy import _columns_numpy

    return _columns_numpy(tokens, scores, bucket, SCORE_SCALE)  # type: ignore[arg-type]


def _numpy_route(rows: int, capacity: int) -> bool:
    """Whether a table of ``rows`` x ``capacity + 1`` cells is worth numpy, and numpy is installed."""
    return (
        capacity >= _NUMPY_MIN_CAPACITY
        and rows * (capacity + 1) >= _NUMPY_MIN_CELLS
        and _numpy_solver() is not None
    )


def _solve(
    weights: Sequence[int], values: Sequence[int], capacity: int, columns: _Columns | None = None
) -> list[int]:
    """The DP's selection (indices in reconstruction order), by the fastest exact route.

    ``columns``, when given, holds ``weights`` and ``values`` as numpy arrays too.
    """
    if _numpy_route(len(weights), capacity):
        from cupel.slicers._knapsack_numpy import _plan_numpy

        plan = _plan_numpy(weights, values, capacity, columns)
    else:
        plan = _plan(weights, values, capacity)
    rows, lows = plan
    if not rows or lows[0] >= weights[rows[0]]:
        # Every row fits at once: the first row's bound, capacity minus the weight of the later
        # rows, leaves room for it. Then at every step of the reconstruction the remaining capacity
        # covers all earlier rows, so dp[remaining - dw] + dv > dp[remaining] holds for exactly the
        # rows (the others never set a keep bit): the DP would select every one of them, last first.
        return rows[::-1]
    if _numpy_route(len(rows), capacity) and sum(map(values.__getitem__, rows)) <= _INT64_MAX:
        solver = _numpy_solver()
        if solver is not None:
            return solver(weights, values, capacity, plan)
    return _knapsack_bitset(weights, values, capacity, plan)


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
        capacity = budget.target_tokens // bucket
        candidates: Sequence[ScoredItem] = scored
        tokens = list(map(_TOKENS, map(_ITEM, scored)))
        scores: Iterable[object] = map(_SCORE, scored)
        zero_token: list[ContextItem] = []
        if min(tokens) <= 0:
            zero_token = [entry.item for entry, count in zip(scored, tokens, strict=True) if count == 0]
            positive = list(map(lt, repeat(0), tokens))
            candidates = list(compress(scored, positive))
            tokens = list(compress(tokens, positive))
            scores = compress(scores, positive)
        if not candidates or capacity == 0:
            return zero_token
        cells = len(candidates) * (capacity + 1)
        if cells > MAX_TABLE_CELLS:
            raise TableTooLargeError(
                f"KnapsackSlice: the DP table would have {cells:,} cells ({len(candidates):,} candidates "
                f"x {capacity + 1:,} capacity buckets), over the limit of {MAX_TABLE_CELLS:,}; "
                f"use a larger bucket_size (now {bucket}) or a smaller target_tokens "
                f"(now {budget.target_tokens})"
            )
        score_list = list(scores)
        columns = _numpy_columns(tokens, score_list, bucket) if _numpy_route(len(tokens), capacity) else None
        if columns is None:
            # ceil(tokens / bucket) in exact integers: -(-tokens // bucket).
            weights = list(map(neg, map(floordiv, map(neg, tokens), repeat(bucket))))
            values = list(map(_scaled_value, score_list))  # type: ignore[arg-type]
        else:
            weights, values = columns.weights, columns.values
        selected = zero_token
        selected.extend(map(_ITEM, map(candidates.__getitem__, _solve(weights, values, capacity, columns))))
        return selected

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice` and explain each unselected item in the knapsack's own terms.

        The DP is exact over whole buckets, so an unselected item either needs more buckets than the
        selection left (``BudgetExceeded`` against that room in tokens) or carries no value, its score
        being below one scaled unit (``ScoredTooLow`` with threshold ``1 / SCORE_SCALE``).
        """
        selected = self.slice(scored, budget)
        return SliceOutcome(tuple(selected), _explain_unselected(scored, selected, budget, self.bucket_size))
