"""The budget-independent part of a pipeline run, and the checks every run starts with.

Shared by :mod:`cupel.pipeline` and budget simulation (:mod:`cupel._simulation`), which probes many
budgets over one prepared candidate list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, gt, not_

from cupel import _numeric
from cupel._score_order import descending_indices
from cupel.errors import CupelTypeError, PinnedItemsExceedBudgetError
from cupel.model import ContextBudget, ContextItem, ScoredItem

__all__ = ["Prepared", "check_pinned_budget", "checked_items", "deduplicate", "score_order", "split_pinned"]

_CONTENT = attrgetter("content")
_PINNED = attrgetter("pinned")


class Prepared:
    """The budget-independent part of a run: pinned items and the candidates in score order.

    ``order`` lists indices into ``scoreable``/``scores`` (score descending, index ascending);
    ``sorted_scored`` and ``tokens`` are built on first use (unless given) and kept for later budgets.
    """

    __slots__ = ("_sorted_scored", "_tokens", "order", "pinned", "pinned_tokens", "scoreable", "scores")

    def __init__(
        self,
        pinned: list[ContextItem],
        pinned_tokens: int,
        scoreable: list[ContextItem],
        scores: list[float],
        order: list[int],
        tokens: list[int] | None = None,
    ) -> None:
        self.pinned = pinned
        self.pinned_tokens = pinned_tokens
        self.scoreable = scoreable
        self.scores = scores
        self.order = order
        self._sorted_scored: list[ScoredItem] | None = None
        # Large token lists are converted to numpy here, once, for the slicer and the token sum.
        self._tokens = tokens if tokens is None else _numeric.int_column(tokens)

    @property
    def sorted_scored(self) -> list[ScoredItem]:
        if self._sorted_scored is None:
            make = ScoredItem._make
            scoreable = self.scoreable
            scores = self.scores
            self._sorted_scored = [make((scoreable[index], scores[index])) for index in self.order]
        return self._sorted_scored

    @property
    def tokens(self) -> list[int]:
        """Token counts of ``scoreable``, in input order."""
        if self._tokens is None:
            self._tokens = [item.tokens for item in self.scoreable]
        return self._tokens


#: Up to this many pinned items are deleted from copies of the lists rather than filtered out.
_FEW_PINNED = 16


def split_pinned(
    items: Sequence[ContextItem], counts: list[int]
) -> tuple[list[ContextItem], int, list[ContextItem]]:
    """Classify without negative token counts: the pinned items, their tokens, and the rest.

    ``counts`` (the items' token counts, a list of the caller's) is left holding the rest's counts.
    """
    flags = list(map(_PINNED, items))
    if not any(flags):
        return [], 0, list(items)
    positions = list(compress(range(len(flags)), flags))
    pinned = list(map(items.__getitem__, positions))
    pinned_tokens = sum(map(counts.__getitem__, positions))
    if len(positions) <= _FEW_PINNED:
        scoreable = list(items)
        for position in reversed(positions):
            del scoreable[position]
            del counts[position]
        return pinned, pinned_tokens, scoreable
    unpinned = list(map(not_, flags))
    counts[:] = compress(counts, unpinned)
    return pinned, pinned_tokens, list(compress(items, unpinned))


def score_order(scores: Sequence[float], survivors: Sequence[int]) -> list[int]:
    """Stage 4: ``survivors`` by score descending, ties in index order, NaN last (numpy when large)."""
    order = _numeric.order_by_score(scores, survivors)
    return descending_indices(survivors, scores) if order is None else order


def check_pinned_budget(pinned_tokens: int, budget: ContextBudget) -> None:
    available = budget.max_tokens - budget.output_reserve
    if pinned_tokens > available:
        raise PinnedItemsExceedBudgetError(pinned_tokens, available)


def checked_items(items: object) -> Sequence[ContextItem]:
    """The items as a sequence of ContextItem; anything else is a clear CupelTypeError."""
    if isinstance(items, str | bytes):
        raise CupelTypeError("items must be a sequence of ContextItem, not a string")
    checked: Sequence[object]
    if isinstance(items, Sequence):
        checked = items
    else:
        try:
            checked = list(items)  # type: ignore[call-overload]
        except TypeError:
            raise CupelTypeError(
                f"items must be a sequence of ContextItem, got {type(items).__name__}"
            ) from None
    if all(map(isinstance, checked, repeat(ContextItem))):
        return checked  # type: ignore[return-value]  # every element was checked
    for index, item in enumerate(checked):
        if not isinstance(item, ContextItem):
            raise CupelTypeError(f"items[{index}] must be a ContextItem, got {item!r}")
    return checked  # type: ignore[return-value]  # every element was checked above


def deduplicate(scoreable: list[ContextItem], scores: list[float]) -> tuple[list[int], list[int], list[int]]:
    """Stage 3: the survivors, ascending (per byte-exact content the highest score, then the lowest
    index); the dropped indices, ascending; and for each of those the index that won.

    Parallel lists rather than pairs: no small object per duplicate, so a large run allocates
    nothing that would set off the cyclic garbage collector.

    Contents that occur once are found by a C-level count and only repeated ones are compared in
    Python; large lists are grouped by string hash with numpy (:func:`cupel._numeric.duplicates`).
    """
    contents = list(map(_CONTENT, scoreable))
    fast = _numeric.duplicates(contents, scores)
    if fast is not None:
        return fast
    count = len(contents)
    occurrences = Counter(contents)
    if len(occurrences) == count:
        return list(range(count)), [], []
    repeated = list(compress(range(count), map(gt, map(occurrences.__getitem__, contents), repeat(1))))
    best: dict[str, int] = {}
    for index in repeated:
        content = contents[index]
        kept = best.get(content)
        if kept is None or scores[index] > scores[kept]:
            best[content] = index
    winners = set(best.values())
    dropped = [index for index in repeated if index not in winners]
    kept_by = list(map(best.__getitem__, map(contents.__getitem__, dropped)))
    flags = [True] * count
    for index in dropped:
        flags[index] = False
    return list(compress(range(count), flags)), dropped, kept_by
