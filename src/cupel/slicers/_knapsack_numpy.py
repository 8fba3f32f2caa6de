"""The vectorised KnapsackSlice DP (needs numpy: ``pip install 'pycupel[fast]'``).

Imported lazily by :mod:`cupel.slicers.knapsack`; selects exactly what ``_knapsack_reference``
(:mod:`cupel.slicers._knapsack_dp`) selects.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import pairwise, repeat
from operator import getitem
from typing import NamedTuple

import numpy as np

from cupel.slicers._knapsack_dp import _Plan, _plan

#: The ``dp`` rows one block holds is chosen so the block stays about this size: cache-resident, and
#: small enough for the allocator to reuse heap memory rather than map fresh pages on every call.
_BLOCK_BYTES = 120_000
_MAX_BLOCK_ROWS = 64
#: A row whose lowest needed capacity is below this is computed over the whole width through views
#: made once per weight; computing the extra columns costs less than making four views per row.
_FULL_WIDTH_BELOW = 2048

#: A row's operands on one block line: ``(old[: width - dw], line[dw:], old, line)``.
_Views = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def _knapsack_numpy(
    weights: Sequence[int], values: Sequence[int], capacity: int, plan: _Plan | None = None
) -> list[int]:
    """The spec's DP, two vector operations per planned row; kept indices in reconstruction order.

    Same contract as ``_knapsack_reference``; additionally the sum of positive ``values`` must fit
    in int64 (the caller checks). Rows are computed into a block of ``dp`` rows: row ``r`` gets
    ``old[w - dw] + dv`` written from ``first`` up, then the element-wise maximum with ``old`` from
    ``start`` up, where ``first = max(start, dw)`` and ``start`` is 0 or the row's ``low``.

    Every value a block line holds is 0 or at most the true ``dp`` of an earlier row at the same
    capacity, and exact from the row's ``low`` up: row ``r`` reads ``old`` only from ``low - dw``
    (row ``r - 1``'s ``low``) up where the value matters, and below ``low`` it only ever writes
    sums and maxima of values that are themselves at most the true ``dp`` (``dp`` only grows from
    row to row and with the capacity). So between ``start`` and ``dw`` the maximum copies ``old``,
    and from ``low`` up ``new[w] = max(old[w], old[w - dw] + dv)``: the spec's ``keep[w]``
    (``old[w - dw] + dv > old[w]``) is ``new[w] > old[w]``. One comparison and one bit-packing per
    block give the keep table, one bit per capacity per row. Bits below a row's ``low`` are
    meaningless, and the reconstruction never reads them. ``plan`` is ``_plan``'s result for these
    arguments, when the caller has it.

    Per-row cost is mostly call overhead, so values are passed as 0-d arrays (a ufunc converts a
    scalar on every call) and, for weights that recur, the shifted views of every block line are
    made once rather than per row.
    """
    rows, lows = _plan(weights, values, capacity) if plan is None else plan
    if not rows:
        return []
    width = capacity + 1
    dtype = np.int32 if sum(map(values.__getitem__, rows)) < 2**31 else np.int64
    block = max(1, min(_MAX_BLOCK_ROWS, len(rows), _BLOCK_BYTES // (width * np.dtype(dtype).itemsize)))
    dp = np.zeros((block + 1, width), dtype=dtype)
    lines = list(dp)
    stride = (width + 7) // 8
    keep = np.empty((len(rows), stride), dtype=np.uint8)
    row_weights = list(map(weights.__getitem__, rows))
    row_values = np.array(list(map(values.__getitem__, rows)), dtype=dtype)
    scalars = list(map(row_values.__getitem__, zip(range(len(rows)), repeat(Ellipsis))))  # 0-d views
    # Per recurring weight, its views on every block line.
    shifted: dict[int, list[_Views]] = {
        dw: [(old[: width - dw], line[dw:], old, line) for old, line in pairwise(lines)]
        for dw, count in Counter(row_weights).items()
        if 2 * count >= block
    }
    # Rows needing the whole width from their lowest capacity on: a suffix, as lows never fall.
    full = bisect_left(lows, _FULL_WIDTH_BELOW)
    views_by_row = list(map(shifted.get, row_weights[:full]))
    add = np.add
    maximum = np.maximum
    for start in range(0, len(rows), block):
        stop = min(len(rows), start + block)
        block_views = views_by_row[start:stop]
        if stop <= full and None not in block_views:
            quads: Iterator[_Views] = map(getitem, block_views, range(block))  # type: ignore[arg-type]
            for (source, target, old, line), dv in zip(quads, scalars[start:stop], strict=True):
                add(source, dv, target)
                maximum(old, line, out=line)
        else:
            for k, dw, dv, low in zip(
                range(block), row_weights[start:stop], scalars[start:stop], lows[start:stop], strict=False
            ):
                previous = lines[k]
                tail = lines[k + 1][low:]
                first = low if low > dw else dw
                add(previous[first - dw : width - dw], dv, tail[first - low :])
                maximum(previous[low:], tail, out=tail)
        count = stop - start
        keep[start:stop] = np.packbits(dp[1 : count + 1] > dp[:count], axis=1)
        dp[0] = dp[count]
    packed = keep.tobytes()
    selected: list[int] = []
    remaining = capacity
    for position in range(len(rows) - 1, -1, -1):
        # Bit w of a row sits in byte w // 8, most significant bit first (np.packbits' order).
        if (packed[position * stride + (remaining >> 3)] >> (7 - (remaining & 7))) & 1:
            selected.append(rows[position])
            remaining -= row_weights[position]
    return selected


def _scaled_values_numpy(scores: Sequence[float], scale: int) -> np.ndarray:
    """``_scaled_value`` (module ``knapsack``) of every float, in float64 as it computes them.

    ``score * scale`` is the same IEEE product; products below 1 (NaN included) give 0, products at
    or beyond 2**63 the int64 maximum, and the rest truncate, exactly as ``int()`` does.
    """
    with np.errstate(over="ignore"):  # beyond float64: inf, which saturates
        scaled = np.array(scores, dtype=np.float64) * scale
    saturated = scaled >= 9.223372036854775807e18
    counted = (scaled >= 1.0) & ~saturated
    result = np.where(counted, scaled, 0.0).astype(np.int64)
    result[saturated] = np.iinfo(np.int64).max
    return result


class _Columns(NamedTuple):
    """The DP's inputs as lists and as int64 arrays (the same numbers)."""

    weights: list[int]
    values: list[int]
    weight_array: np.ndarray
    value_array: np.ndarray


def _columns_numpy(
    tokens: Sequence[int], scores: Sequence[float], bucket: int, scale: int
) -> _Columns | None:
    """Weights ``ceil(tokens / bucket)`` of positive token counts and scaled float scores, or None
    when a number is beyond int64 (the caller then computes them one by one)."""
    try:
        token_array = np.array(tokens, dtype=np.int64)
        weight_array = -(-token_array // np.int64(bucket))  # floor division, as Python's
    except OverflowError:
        return None
    value_array = _scaled_values_numpy(scores, scale)
    return _Columns(weight_array.tolist(), value_array.tolist(), weight_array, value_array)


#: The dominance test in whole-array passes holds one running sum per distinct weight and candidate
#: (int64 tables of at most this many cells, about 2 MB each); more take ``_plan``.
_MAX_PLAN_CELLS = 1 << 18


def _plan_numpy(
    weights: Sequence[int], values: Sequence[int], capacity: int, columns: _Columns | None = None
) -> _Plan:
    """``_plan`` in whole-array passes: the same rows and lows (``_knapsack_dp`` proves them).

    ``_undominated``'s falling threshold keeps a candidate of weight ``w`` in the non-increasing run
    exactly when the earlier candidates of that run no heavier than ``w`` weigh at most
    ``capacity - w`` (it lowers the threshold as soon as that fails for the heaviest rank left, and
    the failure carries over to every heavier rank and every later candidate). Here that weight is
    a running sum per distinct weight. Too many distinct weights, or weights beyond int64, take
    ``_plan`` itself. ``columns``, when given, holds ``weights`` and ``values`` as arrays.
    """
    if columns is not None:
        weight, value = columns.weight_array, columns.value_array
    else:
        try:
            weight = np.array(weights, dtype=np.int64)
        except OverflowError:
            return _plan(weights, values, capacity)
        value = np.array(values, dtype=np.int64)  # scaled values never exceed the int64 maximum
    usable = np.flatnonzero((value > 0) & (weight <= capacity))
    usable_values = value[usable]
    increases = np.flatnonzero(usable_values[1:] > usable_values[:-1])
    ordered = run_end = int(increases[0]) + 1 if increases.size else usable.size
    run_weights = weight[usable[:ordered]]
    if ordered:
        # Once the lightest candidates alone outweigh capacity - lightest, every later one is dominated.
        lightest = int(run_weights.min())
        light = np.cumsum(np.where(run_weights == lightest, lightest, 0))
        ordered = min(ordered, int(np.searchsorted(light, capacity - lightest, side="right")) + 1)
        run_weights = run_weights[:ordered]
    distinct, rank = _ranks(run_weights)
    if distinct * ordered > _MAX_PLAN_CELLS:
        return _plan(weights, values, capacity)
    # earlier[k, i]: weight of the run's candidates before i whose weight ranks at most k.
    heavier = rank[np.newaxis, :] > np.arange(distinct)[:, np.newaxis]
    counted = np.where(heavier, 0, run_weights)
    earlier = np.cumsum(counted, axis=1) - counted
    kept = earlier[rank, np.arange(ordered)] <= capacity - run_weights
    rows = np.concatenate((usable[:ordered][kept], usable[run_end:]))
    row_weights = weight[rows]
    later = np.cumsum(row_weights[::-1])[::-1] - row_weights  # weight of the rows after each row
    lows = np.maximum(capacity - later, 0)
    return _Plan(rows.tolist(), lows.tolist())


def _ranks(weights: np.ndarray) -> tuple[int, np.ndarray]:
    """How many distinct weights there are, and each weight's rank among them (0 for the lightest).

    Counting is cheaper than sorting when the weights span a short range, as bucketed token counts do.
    """
    if weights.size and int(weights.max()) <= 4 * weights.size + 64:
        below = np.cumsum(np.bincount(weights) > 0)  # distinct weights up to each weight
        return int(below[-1]), below[weights] - 1
    distinct, rank = np.unique(weights, return_inverse=True)
    return int(distinct.size), rank
