"""The KnapsackSlice DP in pure Python: the plain reference and the bit-parallel fast path.

Both compute the spec's DP (spec: Slicers, KnapsackSlice) on discretised integers and return the
candidate indices the reconstruction keeps, last candidate first. :func:`_knapsack_reference` is the
DP as the spec writes it, one table row per candidate. The fast paths -- :func:`_knapsack_bitset`
here and ``_knapsack_numpy`` -- first drop the rows that cannot change the answer (:func:`_plan`),
then compute the remaining rows in bulk. They select exactly what the reference selects; the tests
compare them on random inputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from operator import gt
from typing import NamedTuple

# '\x00' / '\x01' flags, and guard bytes ('\x80' set, '\x00' clear), as binary digits.
_FLAG_DIGITS = bytes.maketrans(b"\x00\x01", b"01")
_GUARD_DIGITS = bytes.maketrans(b"\x00\x80", b"01")


def _knapsack_reference(weights: Sequence[int], values: Sequence[int], capacity: int) -> list[int]:
    """The spec's 1-D DP with a keep table; returns the kept indices in reconstruction order.

    ``weights`` are discretised (``>= 1``), ``values`` scaled, ``capacity >= 1``. For each item the
    spec's reverse loop ``for w <- capacity downto dw`` only ever reads ``dp`` entries below ``w``
    that this item has not yet written, so it equals one update over the shifted *old* array:
    ``with = old[w - dw] + dv``, ``keep[w] = with > old[w]``, ``dp[w] = max(with, old[w])``. Items
    that cannot fit (``dw > capacity``) or carry no value never set a keep bit -- ``dp`` is
    non-decreasing in ``w``, so ``dp[w - dw] + 0 > dp[w]`` is impossible -- and are skipped.
    Each keep row is an int used as a bit set (bit ``w - dw`` is the spec's ``keep[i][w]``).
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


class _Plan(NamedTuple):
    """The DP rows worth computing: candidate indices in order, and per row the lowest capacity
    (``lows[r]``) at which its keep bit or its ``dp`` value can still be read."""

    rows: list[int]
    lows: list[int]


def _plan(weights: Sequence[int], values: Sequence[int], capacity: int) -> _Plan:
    """Drop the rows that never set a keep bit, and bound the columns each remaining row needs.

    Rows dropped: candidates that cannot fit or have no value (see :func:`_knapsack_reference`), and
    dominated candidates (:func:`_undominated`); such a row leaves ``dp`` unchanged, so removing it
    changes no other row. Columns: the reconstruction reaches row ``r`` with ``remaining`` at least
    ``capacity`` minus the weight of all later rows, and row ``r + 1`` reads ``dp`` no lower than its
    own bound minus its weight, which is row ``r``'s bound. Columns below a row's bound are never read.
    """
    usable = [
        index for index, (dw, dv) in enumerate(zip(weights, values, strict=True)) if dv > 0 and dw <= capacity
    ]
    rows = _undominated(usable, weights, values, capacity)
    later = accumulate(map(weights.__getitem__, reversed(rows)), initial=0)
    lows = [capacity - weight if weight < capacity else 0 for weight in later]
    lows.pop()
    lows.reverse()
    return _Plan(rows, lows)


def _undominated(
    usable: list[int], weights: Sequence[int], values: Sequence[int], capacity: int
) -> list[int]:
    """``usable`` without the candidates that enough earlier, no-worse candidates make redundant.

    Let ``D`` be the earlier candidates ``j`` with ``w_j <= w_i`` and ``v_j >= v_i``. If the weight
    of ``D`` exceeds ``capacity - w_i``, then every set ``S`` of earlier candidates that leaves room
    for ``i`` at some ``w`` (weight at most ``w - w_i``) misses some ``j`` in ``D``; ``S`` plus ``j``
    also fits in ``w`` and is worth at least ``S`` plus ``i``. So ``dp[w - w_i] + v_i > dp[w]``
    (strict, as the DP compares) never holds: ``i``'s keep row is empty and ``dp`` is unchanged.

    The test runs while values do not increase -- the order the pipeline's score sort gives -- so
    that every earlier candidate has ``v_j >= v_i``; from the first increase on, rows are kept.
    Then ``D`` is the earlier candidates no heavier than ``i``, and whether ``i`` is dominated is
    monotone in its weight: one falling threshold over the distinct weights decides it.
    """
    if not usable:
        return []
    candidate_values = [values[index] for index in usable]
    increases = list(map(gt, candidate_values[1:], candidate_values[:-1]))
    ordered = increases.index(True) + 1 if True in increases else len(usable)
    candidate_weights = [weights[index] for index in usable[:ordered]]
    distinct = sorted(set(candidate_weights))
    rank = {weight: position for position, weight in enumerate(distinct)}
    limits = [capacity - weight for weight in distinct]
    totals = [0] * len(distinct)  # weight seen so far, per distinct weight
    threshold = len(distinct)  # candidates whose weight ranks at or above this are dominated
    below = 0  # weight seen so far of the ranks under the threshold
    kept: list[int] = []
    for index, dw, weight_rank in zip(
        usable, candidate_weights, map(rank.__getitem__, candidate_weights), strict=False
    ):
        totals[weight_rank] += dw
        if weight_rank < threshold:
            kept.append(index)
            below += dw
            while threshold and below > limits[threshold - 1]:
                threshold -= 1
                below -= totals[threshold]
            if not threshold:
                break  # every later candidate of the ordered run is dominated
    kept.extend(usable[ordered:])
    return kept


#: Drop low lanes once this many of them are no longer needed (and at least an eighth of them).
_MIN_LANES_DROPPED = 32


def _knapsack_bitset(
    weights: Sequence[int], values: Sequence[int], capacity: int, plan: _Plan | None = None
) -> list[int]:
    """The DP on whole rows at once, with ``dp`` packed into one Python int (SIMD within a register).

    Same contract and result as :func:`_knapsack_reference`. ``dp`` is held in lanes of ``8 * size``
    bits, lane ``k`` for capacity ``base + k``; ``size`` leaves the top bit of every lane free, as a
    guard, above the largest possible sum of values. For a candidate ``(dw, dv)``:

    - ``with = (dp + dv in every lane) << dw lanes``: lane ``w`` holds ``dp[w - dw] + dv``, and the
      lanes below ``dw`` hold 0;
    - ``((with | guards) - (dp + 1 in every lane)) & guards`` keeps lane ``w``'s guard exactly when
      ``with[w] >= dp[w] + 1``, that is ``with[w] > dp[w]``: the keep row, one guard per lane;
    - ``guards - guards >> (bits - 1)`` widens each kept guard into a mask of the lane's value bits,
      which selects ``with`` into ``dp``.

    Lanes below the plan's bound are dropped as it rises. The keep row's guards are gathered into a
    bit set of one bit per capacity through the row's bytes. ``plan`` is ``_plan``'s result for
    these arguments, when the caller has it.
    """
    rows, lows = _plan(weights, values, capacity) if plan is None else plan
    if not rows:
        return []
    size = ((sum(values[index] for index in rows) + 1).bit_length() + 8) // 8
    bits = 8 * size
    guard_shift = bits - 1
    lane = b"\x01" + bytes(size - 1)
    all_ones = int.from_bytes(lane * (capacity + 1), "little")
    base = 0
    lanes = capacity + 1
    ones = all_ones
    guards = ones << guard_shift
    dp = 0
    keep: list[int] = []
    for index, low in zip(rows, lows, strict=True):
        dw = weights[index]
        needed = low - dw  # the lowest capacity this row reads
        if needed - base >= _MIN_LANES_DROPPED and 8 * (needed - base) >= lanes:
            dp >>= (needed - base) * bits
            base = needed
            lanes = capacity + 1 - base
            ones = all_ones >> (base * bits)
            guards = ones << guard_shift
        with_item = (dp + values[index] * ones) << (dw * bits)
        kept = ((with_item | guards) - (dp + ones)) & guards
        if kept:
            dp ^= (dp ^ with_item) & (kept - (kept >> guard_shift))
            flags = kept.to_bytes(lanes * size, "little")[size - 1 :: size]
            keep.append(int(flags.translate(_GUARD_DIGITS)[::-1], 2) << base)
        else:
            keep.append(0)
    return _reconstruct(rows, weights, keep, capacity)


def _reconstruct(rows: list[int], weights: Sequence[int], keep: list[int], capacity: int) -> list[int]:
    """The spec's reconstruction over the planned rows; bit ``w`` of ``keep[r]`` is ``keep[r][w]``."""
    selected: list[int] = []
    remaining = capacity
    for position in range(len(rows) - 1, -1, -1):
        if (keep[position] >> remaining) & 1:
            index = rows[position]
            selected.append(index)
            remaining -= weights[index]
    return selected
