"""The budget-independent part of a pipeline run, and the checks every run starts with.

Shared by :mod:`cupel.pipeline` and budget simulation (:mod:`cupel._simulation`), which probes many
budgets over one prepared candidate list.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import compress, repeat
from operator import attrgetter, gt, not_

from cupel.errors import CupelTypeError, PinnedItemsExceedBudgetError
from cupel.model import ContextBudget, ContextItem, ScoredItem

__all__ = ["Prepared", "check_pinned_budget", "checked_items", "deduplicate"]

_CONTENT = attrgetter("content")


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
        self._tokens = tokens

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


def deduplicate(scoreable: list[ContextItem], scores: list[float]) -> tuple[list[int], list[tuple[int, int]]]:
    """Stage 3: the survivors, ascending (per byte-exact content the highest score, then the lowest
    index), and each dropped index with the index that won, in index order.

    Contents that occur once are found by C-level counting passes; only repeated ones are compared
    in Python.
    """
    contents = list(map(_CONTENT, scoreable))
    count = len(contents)
    occurrences = Counter(contents)
    if len(occurrences) == count:
        return list(range(count)), []
    dropped = list(map(gt, map(occurrences.__getitem__, contents), repeat(1)))
    repeated = list(compress(range(count), dropped))
    best: dict[str, int] = {}
    for index in repeated:
        content = contents[index]
        kept = best.get(content)
        if kept is None or scores[index] > scores[kept]:
            best[content] = index
    for index in best.values():
        dropped[index] = False
    losers = [(index, best[contents[index]]) for index in repeated if dropped[index]]
    return list(compress(range(count), map(not_, dropped))), losers
