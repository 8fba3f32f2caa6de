"""The vectorised KnapsackSlice DP (needs numpy: ``pip install 'pycupel[fast]'``).

Imported lazily by :mod:`cupel.slicers.knapsack`; selects exactly what ``_knapsack_reference``
(:mod:`cupel.slicers._knapsack_dp`) selects.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cupel.slicers._knapsack_dp import _Plan, _plan

#: The ``dp`` rows one block holds is chosen so the block stays about this size (cache-resident).
_BLOCK_BYTES = 1 << 19
_MAX_BLOCK_ROWS = 64


def _knapsack_numpy(
    weights: Sequence[int], values: Sequence[int], capacity: int, plan: _Plan | None = None
) -> list[int]:
    """The spec's DP, two vector operations per planned row; kept indices in reconstruction order.

    Same contract as ``_knapsack_reference``; additionally the sum of positive ``values`` must fit
    in int64 (the caller checks). Rows are computed into a block of ``dp`` rows: row ``r`` gets
    ``old[w - dw] + dv`` written from ``max(low, dw)`` up, then the element-wise maximum with ``old``
    from ``low`` up. Whatever a block line held before is 0 or an earlier row's ``dp`` value at the
    same capacity, never above ``old`` (``dp`` only grows from row to row), so between ``low`` and
    ``dw`` that maximum copies ``old``. As ``new[w] = max(old[w], old[w - dw] + dv)``, the spec's
    ``keep[w]`` (``old[w - dw] + dv > old[w]``) is ``new[w] > old[w]``: one comparison and one
    bit-packing per block give the keep table, one bit per capacity per row. Bits below a row's
    ``low`` are meaningless, and the reconstruction never reads them. ``plan`` is ``_plan``'s
    result for these arguments, when the caller has it.
    """
    rows, lows = _plan(weights, values, capacity) if plan is None else plan
    if not rows:
        return []
    width = capacity + 1
    dtype = np.int32 if sum(values[index] for index in rows) < 2**31 else np.int64
    block = max(1, min(_MAX_BLOCK_ROWS, len(rows), _BLOCK_BYTES // (width * np.dtype(dtype).itemsize)))
    dp = np.zeros((block + 1, width), dtype=dtype)
    lines = list(dp)
    stride = (width + 7) // 8
    keep = np.empty((len(rows), stride), dtype=np.uint8)
    row_weights = [weights[index] for index in rows]
    # numpy scalars: adding a Python int to an array converts it on every call.
    row_values = list(np.array([values[index] for index in rows], dtype=dtype))
    add = np.add
    maximum = np.maximum
    for start in range(0, len(rows), block):
        stop = min(len(rows), start + block)
        old = lines[0]
        for line, dw, dv, low in zip(
            lines[1:], row_weights[start:stop], row_values[start:stop], lows[start:stop], strict=False
        ):
            if low:
                first = low if low > dw else dw
                add(old[first - dw : width - dw], dv, out=line[first:])
                tail = line[low:]
                maximum(old[low:], tail, out=tail)
            else:
                add(old[: width - dw], dv, out=line[dw:])
                maximum(old, line, out=line)
            old = line
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
