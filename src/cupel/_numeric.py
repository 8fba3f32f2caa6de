"""Optional numpy fast paths for the pipeline's whole-list steps (installed with ``pycupel[fast]``).

Each function here has a plain-Python twin that defines its behaviour; results are identical (tests
compare the two on random inputs). The pure-Python path runs when numpy is missing, for small lists, and
for inputs numpy cannot represent exactly (integers beyond int64 or float64's exact range, NaN scores).
Large lists are where it pays: Python-object sorts and lookups there are dominated by cache misses, not
by the work itself. Each function checks the size first, so numpy is imported only once an input
reaches ``THRESHOLD``.

A list these functions build from an array is a :class:`Column`, which keeps that array: the next step
of the same run reads the array instead of converting the list back, so each column of a run is
converted to numpy once.
"""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any

#: Lists shorter than this stay in pure Python: below it, converting to arrays costs more than it saves.
THRESHOLD = 4096

#: Integers up to this magnitude are exact in a float64 (which turns None into NaN on conversion).
_EXACT_FLOAT = 2**53

#: Rounds of vectorised greedy filling before the rest is walked one candidate at a time.
_FILL_ROUNDS = 32


if TYPE_CHECKING:
    _List = list[Any]
else:
    _List = list  # typing (for Any) is not imported at run time


class Column(_List):
    """A list that carries a numpy array of its values (``array``, once set) for later steps of the run.

    It is an ordinary list to everything else; it pickles as a plain list. The array is set when the
    list is complete and neither changes afterwards.
    """

    __slots__ = ("array",)

    array: Any

    def __reduce__(self) -> tuple[type, tuple[list[Any]]]:
        return (list, (list(self),))


def column(array: Any, values: Sequence[Any] | None = None) -> Column:
    """A :class:`Column` of ``array``'s values (``values`` when they are already at hand)."""
    result = Column(array.tolist() if values is None else values)
    result.array = array
    return result


def numpy_module() -> Any:
    """numpy if it is installed (and not disabled with ``CUPEL_NO_NUMPY=1``), else None."""
    from cupel._optional import optional_module  # here: ``import cupel`` loads this module, not that

    return optional_module("numpy", "CUPEL_NO_NUMPY")


def _large(values: Sequence[Any]) -> Any:
    """numpy when ``values`` is long enough for it and it is available, else None."""
    return numpy_module() if len(values) >= THRESHOLD else None


def _carried(values: Sequence[Any]) -> Any:
    """The array a :class:`Column` carries (None for another sequence, or before it has one)."""
    return getattr(values, "array", None) if type(values) is Column else None


def _ints(np: Any, values: Sequence[int]) -> Any:
    """``values`` as an int64 array (the carried one if any); None when an integer does not fit."""
    carried = _carried(values)
    if carried is not None and carried.dtype == np.int64:
        return carried
    if type(values) is range:
        return np.arange(values.start, values.stop, values.step, dtype=np.int64)
    try:
        return np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        return None


def _floats(np: Any, values: Sequence[float]) -> Any:
    """``values`` as a float64 array (the carried one if any)."""
    carried = values if isinstance(values, np.ndarray) else _carried(values)
    if carried is not None and carried.dtype == np.float64:
        return carried
    return np.fromiter(values, dtype=np.float64, count=len(values))


def _exact_keys(np: Any, keys: Sequence[int | None]) -> Any:
    """Integer keys as float64 with None as NaN, or None when a key is not exact as a float64."""
    try:
        values = np.array(keys, dtype=np.float64)
    except OverflowError:
        return None
    if (np.abs(values) >= _EXACT_FLOAT).any():  # NaN compares false
        return None
    return values


def key_values(keys: Sequence[int | None]) -> Any:
    """Integer keys as float64 with None as NaN when numpy is used for them; None when the list is
    short, numpy is missing, or a key is not exact as a float64."""
    np = _large(keys)
    return None if np is None else _exact_keys(np, keys)


def exact_values(keys: Sequence[int | None]) -> Any:
    """:func:`key_values` for a list of any length (None when numpy is missing or a key is inexact)."""
    np = numpy_module()
    return None if np is None else _exact_keys(np, keys)


def rank_scores(keys: Sequence[int | None]) -> list[float] | None:
    """numpy twin of :func:`cupel.scorers._base.rank_scores`; None when it cannot be used exactly."""
    values = key_values(keys)
    ranks = None if values is None else rank_array(values)
    return None if ranks is None else column(ranks)


def rank_array(values: Any) -> Any:
    """:func:`rank_scores` of keys already converted by :func:`key_values`, as a float64 array;
    None when fewer than two keys are present (the pure path's special case)."""
    np = numpy_module()
    absent = np.isnan(values)
    count = len(values) - int(np.count_nonzero(absent))
    if count <= 1:
        return None
    counted = _counted_ranks(np, values, absent)
    if counted is not None:
        return counted / (count - 1)
    # The rank is the number of keyed items with a strictly smaller key (exact: integers below 2**53):
    # in ascending order (NaN last), the position where a run of equal keys starts.
    by_key = np.argsort(values)
    ordered = values[by_key]
    starts = np.ones(len(values), dtype=bool)
    starts[1:] = ordered[1:] != ordered[:-1]
    positions = np.arange(len(values))
    ranks = np.empty(len(values), dtype=np.int64)
    ranks[by_key] = np.maximum.accumulate(np.where(starts, positions, 0))
    scores = ranks / (count - 1)
    scores[absent] = 0.0
    return scores


def _counted_ranks(np: Any, values: Any, absent: Any) -> Any:
    """Ranks of integer keys spanning at most one value per key (priorities, say) by counting, as
    floats with 0.0 for the absent keys; None for keys that need a sort.

    A key's rank is the number of keyed items with a smaller key: the count of each key value, summed
    over the smaller values. No sort: about a fifth of the time of the argsort at 1,000,000 keys.
    """
    present = values[~absent]
    low, high = present.min(), present.max()
    if high - low >= len(values):
        return None
    offsets = present - low
    keys = offsets.astype(np.intp)
    if (keys != offsets).any():
        return None  # not integers (the sort path handles them)
    counts = np.bincount(keys)
    smaller = np.cumsum(counts) - counts
    ranks = np.zeros(len(values), dtype=np.float64)
    ranks[~absent] = smaller[keys]
    return ranks


def order_by_score(scores: Sequence[float], indices: Sequence[int]) -> list[int] | None:
    """``sorted(indices, key=scores.__getitem__, reverse=True)`` (a stable sort), or None."""
    np = _large(indices)
    if np is None:
        return None
    index = _ints(np, indices)
    values = _floats(np, scores)[index]
    if np.isnan(values).any():
        return None  # Python's ordering of NaN is what the pure path defines
    # A stable ascending sort of the negated scores keeps equal scores in index order.
    return column(index[_descending(np, values)])


def _descending(np: Any, values: Any) -> Any:
    """Positions of ``values`` (no NaN) by value descending, equal values in position order.

    The same order as a stable argsort of ``-values``, sorted as int64 keys (a quarter faster than
    float64 at 1,000,000 values): see :func:`order_keys`.
    """
    return np.argsort(~order_keys(np, values), kind="stable")


def order_keys(np: Any, values: Any) -> Any:
    """int64 keys that order like ``values`` (float64, no NaN): the bits of a float64, with the
    magnitude bits of negative numbers flipped; adding 0.0 first turns -0.0 into 0.0, equal to it."""
    bits = (values + 0.0).view(np.int64)
    return bits ^ ((bits >> 63) & np.int64(0x7FFFFFFFFFFFFFFF))


def weighted_sum(columns: Sequence[Sequence[float]], weights: Sequence[float]) -> list[float] | None:
    """``sum(column[i] * weight)`` per row, accumulated from 0.0 in column order, or None.

    The same two roundings per term as the pure loop (numpy does not fuse multiply and add).
    """
    if not columns:
        return None
    np = _large(columns[0])
    if np is None:
        return None
    total = np.zeros(len(columns[0]), dtype=np.float64)
    for values, weight in zip(columns, weights, strict=True):
        total = total + _floats(np, values) * weight
    return column(total)


def _density_order(np: Any, order: Sequence[int], tokens: Sequence[int], scores: Sequence[float]) -> Any:
    """Candidates by value density descending (ties by position in ``order``) and their token
    counts, as arrays; None when numpy cannot reproduce the pure ordering exactly."""
    index = _ints(np, order)
    found = densities(np, index, tokens, scores)
    if found is None:
        return None
    counts, density, _ = found
    positions = _descending(np, density)
    return index[positions], counts[positions]


def _large_density_order(
    order: Sequence[int], tokens: Sequence[int], scores: Sequence[float]
) -> tuple[Any, Any, Any] | None:
    """``(numpy, candidates, token counts)`` of :func:`_density_order` for an ``order`` large enough for
    numpy; None otherwise."""
    np = _large(order)
    if np is None:
        return None
    ordered = _density_order(np, order, tokens, scores)
    return None if ordered is None else (np, *ordered)


def densities(np: Any, index: Any, tokens: Sequence[int], scores: Sequence[float]) -> Any:
    """The token counts, value densities (zero tokens: the largest float) and scores of the
    candidates at ``index``, as arrays; None when numpy cannot reproduce the pure ordering exactly."""
    counts = _ints(np, tokens)
    if counts is None:
        return None
    counts = counts[index]
    values = _floats(np, scores)[index]
    if np.isnan(values).any() or (np.abs(counts) > _EXACT_FLOAT).any():
        return None
    zero = counts == 0
    with np.errstate(divide="ignore", invalid="ignore"):
        density = values / counts
    density[zero] = np.finfo(np.float64).max
    return counts, density, values


def greedy_order(order: Sequence[int], tokens: Sequence[int], scores: Sequence[float]) -> list[int] | None:
    """Candidates of ``order`` by value density descending (ties by position in ``order``), or None."""
    found = _large_density_order(order, tokens, scores)
    if found is None:
        return None
    by_density: list[int] = found[1].tolist()
    return by_density


def greedy_fill(
    order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], target: int
) -> list[int] | None:
    """The indices GREEDY-SLICE selects (``greedy_select`` without ``skipped``), or None."""
    filled = greedy_fill_by_density(order, tokens, scores, target)
    if filled is None:
        return None
    by_density, _, positions = filled
    return column(by_density[positions])


def greedy_fill_by_density(
    order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], target: int
) -> tuple[Any, Any, Any] | None:
    """:func:`greedy_fill` as arrays: the candidates in density order, their token counts, and the
    positions taken in that order; None where numpy is not used."""
    found = _large_density_order(order, tokens, scores)
    if found is None:
        return None
    np, by_density, counts = found
    taken = fill_positions(np, counts, target)
    return None if taken is None else (by_density, counts, taken)


def fill_positions(np: Any, counts: Any, target: int) -> Any:
    """The positions GREEDY-SLICE takes from candidates in density order with token ``counts``;
    None for negative counts (they can grow the budget) or counts whose sums could overflow.

    Whatever fits before the first candidate that does not is one prefix of the density order. After
    that, the tokens remaining only shrink, so a candidate larger than what remained at a miss can
    never be taken: each round keeps only the candidates that still fit, takes their fitting prefix,
    and stops at the next miss.
    """
    if len(counts) and (counts.min() < 0 or int(counts.max()) * len(counts) >= 2**62):
        return None
    taken = []
    positions = np.arange(len(counts))
    remaining = target
    for _ in range(_FILL_ROUNDS):
        if not len(positions):
            break
        totals = np.cumsum(counts[positions])
        fitting = int(np.searchsorted(totals, remaining, side="right"))
        taken.append(positions[:fitting])
        if fitting:
            remaining -= int(totals[fitting - 1])
        rest = positions[fitting + 1 :]
        positions = rest[counts[rest] <= remaining]
    else:
        walked = []
        for position, count in zip(positions.tolist(), counts[positions].tolist(), strict=True):
            if count <= remaining:
                walked.append(position)
                remaining -= count
        taken.append(np.array(walked, dtype=np.intp))
    return np.concatenate(taken) if taken else np.zeros(0, dtype=np.intp)


def int_column(values: list[int]) -> list[int]:
    """``values`` carrying its int64 array when large (converted once, here); else unchanged."""
    np = _large(values)
    if np is None or _carried(values) is not None:
        return values
    array = _ints(np, values)
    if array is None:
        return values
    if type(values) is Column:
        values.array = array  # the caller's own list: no copy
        return values
    return column(array, values)


def float_column(values: list[float]) -> list[float]:
    """``values`` carrying its float64 array when large (converted once, here); else unchanged."""
    np = _large(values)
    if np is None or _carried(values) is not None:
        return values
    return column(_floats(np, values), values)


def take(values: Sequence[Any], indices: Sequence[int]) -> list[Any] | None:
    """``[values[index] for index in indices]`` from the arrays two Columns carry, or None."""
    array, index = _carried(values), _carried(indices)
    if array is None or index is None:
        return None
    taken: list[Any] = array[index].tolist()
    return taken


def take_sum(values: Sequence[int], indices: Sequence[int]) -> int | None:
    """``sum(values[index] for index in indices)`` from the arrays two Columns carry, or None."""
    array, index = _carried(values), _carried(indices)
    if array is None or index is None:
        return None
    picked = array[index]
    if len(picked) and int(abs(picked).max()) * len(picked) >= 2**62:
        return None  # the int64 sum could overflow
    return int(picked.sum())


def chronological_order(keys: Sequence[int | None]) -> list[int] | None:
    """Positions of ``keys`` ascending (a stable sort), the None keys last in input order, or None."""
    values = key_values(keys)
    return None if values is None else chronological_positions(values)


def chronological_positions(values: Any) -> list[int]:
    """:func:`chronological_order` of keys already converted by :func:`key_values`."""
    np = numpy_module()
    # A None key (NaN) sorts after every number; the stable sort keeps input order among equals. The
    # keys are integers below 2**53, sorted as int64 (faster than float64) with None as 2**62.
    keys = np.where(np.isnan(values), 2**62, values).astype(np.int64)
    return column(np.argsort(keys, kind="stable"))


def duplicates(
    contents: Sequence[str], scores: Sequence[float]
) -> tuple[list[int], list[int], list[int]] | None:
    """numpy twin of :func:`cupel._prepared.deduplicate` on the items' contents, or None.

    Contents are grouped by their string hash; a group's winner is its highest score, then its lowest
    index. None (the pure path decides) when a score among repeated contents is NaN or two different
    contents share a hash.
    """
    np = _large(contents)
    if np is None:
        return None
    count = len(contents)
    hashes = np.fromiter(map(hash, contents), dtype=np.int64, count=count)
    # Equal hashes share their low bits: only the hashes of crowded buckets (2-4 per content, so
    # most contents are alone in theirs) are sorted. The sort need not be stable: the lexsort below
    # orders each group fully.
    buckets = hashes & ((1 << (count.bit_length() + 1)) - 1)
    crowded = np.flatnonzero(np.bincount(buckets)[buckets] > 1)
    by_hash = crowded[np.argsort(hashes[crowded])]
    ordered = hashes[by_hash]
    equal = ordered[1:] == ordered[:-1]
    if not equal.any():
        return column(np.arange(count), list(range(count))), [], []
    shared = np.zeros(len(ordered), dtype=bool)
    shared[1:] |= equal
    shared[:-1] |= equal
    members = by_hash[shared]
    groups = ordered[shared]
    values = _floats(np, scores)[members]
    if np.isnan(values).any():
        return None  # Python's comparisons with NaN decide the winner
    # Per group: highest score first, then lowest index; the first of each group wins.
    ranked = np.lexsort((members, -values, groups))
    members = members[ranked]
    groups = groups[ranked]
    first = np.ones(len(members), dtype=bool)
    first[1:] = groups[1:] != groups[:-1]
    winners = members[np.maximum.accumulate(np.where(first, np.arange(len(members)), 0))]
    at = contents.__getitem__
    if not all(map(str.__eq__, map(at, members.tolist()), map(at, winners.tolist()))):
        return None  # a hash collision between different contents
    losers = members[~first]
    by_index = np.argsort(losers)
    keep = np.ones(count, dtype=bool)
    keep[losers] = False
    dropped: list[int] = losers[by_index].tolist()
    kept_by: list[int] = winners[~first][by_index].tolist()
    return column(np.flatnonzero(keep)), dropped, kept_by
