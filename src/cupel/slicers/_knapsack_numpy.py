"""The vectorised KnapsackSlice DP (needs numpy: ``pip install 'pycupel[fast]'``).

Imported lazily by :mod:`cupel.slicers.knapsack`; selects exactly what ``_knapsack_python`` selects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _knapsack_numpy(weights: Sequence[int], values: Sequence[int], capacity: int) -> list[int]:
    """The spec's DP, one vector update per item; kept indices in reconstruction order.

    Same contract as ``_knapsack_python``; additionally the sum of positive ``values`` must fit in
    int64 (the caller checks). The keep table is bit-packed: one row of ``ceil((capacity + 1) / 8)``
    bytes per item that can be kept, where bit ``j`` of item ``i``'s row is the spec's
    ``keep[i][j + dw_i]``.
    """
    width = capacity + 1
    rows = [i for i, (dw, dv) in enumerate(zip(weights, values, strict=True)) if dv > 0 and dw <= capacity]
    if not rows:
        return []
    keep = np.zeros((len(rows), (width + 7) // 8), dtype=np.uint8)
    dp = np.zeros(width, dtype=np.int64)
    with_item = np.empty(width, dtype=np.int64)
    better = np.empty(width, dtype=np.bool_)
    for row, index in enumerate(rows):
        dw = weights[index]
        span = width - dw
        candidate = with_item[:span]
        improved = better[:span]
        old = dp[dw:]
        # Reads only the old dp values, as the spec's reverse loop does; see _knapsack_python.
        np.add(dp[:span], values[index], out=candidate)
        np.greater(candidate, old, out=improved)
        np.maximum(old, candidate, out=old)
        packed = np.packbits(improved)
        keep[row, : packed.size] = packed
    selected: list[int] = []
    remaining = capacity
    for row in range(len(rows) - 1, -1, -1):
        index = rows[row]
        dw = weights[index]
        if remaining >= dw:
            bit = remaining - dw
            if (int(keep[row, bit >> 3]) >> (7 - (bit & 7))) & 1:
                selected.append(index)
                remaining -= dw
    return selected
