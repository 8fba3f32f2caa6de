"""Which exclusion reason the pipeline reports for an item the slicer or Truncate left out.

The rules (docs/spec-notes.md, "Truthful explanations") make every reason true of what happened:

- ``PinnedOverride`` for an item the slicer left out if and only if pinned items exist, the item does
  not fit the effective target, and it would fit the effective target computed with no pinned tokens.
  An item fits a target when ``tokens <= target`` and the target is positive: at target 0 slicers
  select nothing, not even zero-token items.
- ``BudgetExceeded`` only when ``item_tokens > available_tokens``.
- An item that fitted but was not chosen, and that the slicer did not explain, is ``ScoredTooLow``
  against the lowest score the slicer kept when it scored below that, and otherwise ``Filtered`` with
  the slicer's name: the slicer left it out for a reason of its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import count, filterfalse, repeat
from operator import attrgetter, gt, itemgetter
from typing import Any

from cupel import _numeric
from cupel._score_order import has_nan, nan_last
from cupel.diagnostics.reasons import (
    BudgetExceeded,
    ExclusionReason,
    Filtered,
    PinnedOverride,
    ScoredTooLow,
    budget_exceeded,
    budget_exceeded_batch,
)
from cupel.model import ContextBudget, ContextItem

__all__ = ["SliceAttribution", "left_out_reasons", "truncation_reason"]

# Keys of the shared reasons in SliceAttribution.budget_reasons besides (tokens, available) pairs.
_OVERRIDE = object()
_FILTERED = object()
_TOKENS = attrgetter("tokens")


@dataclass(frozen=True, slots=True)
class SliceAttribution:
    """What the pipeline knows after Stage 5 to explain the items the slicer left out.

    ``unpinned_target`` is the effective target computed as if nothing were pinned; ``displaced_by`` is
    the content of the pinned item PinnedOverride names (None when nothing is pinned).
    """

    effective_target: int
    unpinned_target: int
    displaced_by: str | None
    leftover: int
    lowest_selected: float | None
    slicer_name: str

    @classmethod
    def build(
        cls,
        effective_target: int,
        unpinned_target: int,
        pinned: Sequence[ContextItem],
        selected: Sequence[ContextItem],
        selected_scores: Sequence[float],
        slicer_name: str,
        selected_tokens: int | None = None,
    ) -> SliceAttribution:
        """``selected_tokens``: the selected items' total tokens when already known."""
        displaced_by = displacing_pinned(pinned).content if pinned else None
        return cls.of_selection(
            effective_target,
            unpinned_target,
            displaced_by,
            sum(map(_TOKENS, selected)) if selected_tokens is None else selected_tokens,
            selected_scores,
            slicer_name,
        )

    @classmethod
    def of_selection(
        cls,
        effective_target: int,
        unpinned_target: int,
        displaced_by: str | None,
        selected_tokens: int,
        selected_scores: Sequence[float],
        slicer_name: str,
    ) -> SliceAttribution:
        """:meth:`build` from the selection's total tokens and scores (no item needed)."""
        leftover = max(0, effective_target - selected_tokens)
        keys = map(nan_last, selected_scores) if has_nan(selected_scores) else selected_scores
        lowest = min(keys, default=None)
        return cls(effective_target, unpinned_target, displaced_by, leftover, lowest, slicer_name)

    def reason(self, item: ContextItem, score: float, explained: ExclusionReason | None) -> ExclusionReason:
        """The reason reported for ``item``; ``explained`` is the slicer's own reason, if it gave one."""
        return self.tokens_reason(item.tokens, score, explained)

    def tokens_reason(self, tokens: int, score: float, explained: ExclusionReason | None) -> ExclusionReason:
        """:meth:`reason` for an item of ``tokens`` tokens (all of the item it depends on)."""
        if (
            self.displaced_by is not None
            and not _fits(tokens, self.effective_target)
            and _fits(tokens, self.unpinned_target)
        ):
            return PinnedOverride(self.displaced_by)
        reason = explained if explained is not None else BudgetExceeded(tokens, self.leftover)
        if isinstance(reason, BudgetExceeded) and reason.item_tokens <= reason.available_tokens:
            # The item fitted: the budget is not why it stayed out.
            return self.unexplained(score)
        return reason

    def _override_bounds(self) -> tuple[int, int]:
        """``(low, high)``: :meth:`tokens_reason` gives PinnedOverride exactly when
        ``low < tokens <= high`` (for tokens that are not negative); ``high`` is -1 without one."""
        low = self.effective_target if self.effective_target > 0 else -1
        high = self.unpinned_target if self.displaced_by is not None and self.unpinned_target > 0 else -1
        return low, high

    def budget_reasons(
        self, item_tokens: Sequence[int], scores: Iterable[float], available: Sequence[int | None]
    ) -> list[ExclusionReason]:
        """:meth:`reason` for each item the slicer explained as ``BudgetExceeded(tokens, available)``
        (``None``: not explained), in order; the batch form for large runs (equal reasons are one
        shared object, see :meth:`shared_budget_reasons`)."""
        exceeded = self._all_exceeded(item_tokens, available)
        if exceeded and available.count(available[0]) == len(available):
            # The common case, one amount left for all: each item's reason is its tokens' (no slots).
            return list(map(_exceeded_by_tokens(item_tokens, available[0]).__getitem__, item_tokens))
        distinct, slots = self._shared_reasons(item_tokens, scores, available, exceeded)
        return list(map(distinct.__getitem__, slots))

    def _all_exceeded(self, item_tokens: Sequence[int], available: Sequence[int | None]) -> bool:
        """Whether every item exceeded what was left when the slicer explained it (C-level passes):
        :meth:`tokens_reason` then gives each one BudgetExceeded against that amount."""
        # tokens_reason, unrolled: PinnedOverride exactly when low < tokens <= high (never without a
        # pinned item: tokens are never negative here); otherwise BudgetExceeded against what was
        # left, unless the item fitted.
        low, high = self._override_bounds()
        return bool(
            item_tokens
            and None not in available
            and (high < 0 or max(item_tokens) <= low or min(item_tokens) > high)
            and all(map(gt, item_tokens, available))  # type: ignore[arg-type]  # no None, checked
        )

    def shared_budget_reasons(
        self, item_tokens: Sequence[int], scores: Iterable[float], available: Sequence[int | None]
    ) -> tuple[list[ExclusionReason], list[int]]:
        """:meth:`budget_reasons` as the distinct reasons and, per item, the position of its reason
        among them: equal reasons are one shared object (reasons are immutable values), as a large
        run repeats a few thousand ``(tokens, available)`` pairs over tens of thousands of exclusions.
        """
        return self._shared_reasons(
            item_tokens, scores, available, self._all_exceeded(item_tokens, available)
        )

    def _shared_reasons(
        self,
        item_tokens: Sequence[int],
        scores: Iterable[float],
        available: Sequence[int | None],
        exceeded: bool,
    ) -> tuple[list[ExclusionReason], list[int]]:
        """:meth:`shared_budget_reasons`, ``exceeded`` being :meth:`_all_exceeded`'s answer."""
        displaced_by = self.displaced_by
        low, high = self._override_bounds()
        if exceeded:
            # The common case, decided by C-level passes: every item exceeded what was left.
            shared: list[ExclusionReason] = []
            if available.count(available[0]) == len(available):  # one amount left for all: by tokens
                by_tokens = _exceeded_by_tokens(item_tokens, available[0])
                slots_by_tokens = dict(zip(by_tokens, count()))
                shared.extend(by_tokens.values())
                return shared, list(map(slots_by_tokens.__getitem__, item_tokens))
            keys = list(zip(item_tokens, available, strict=True))
            first = dict.fromkeys(keys)  # the distinct pairs, in order of first occurrence
            position = dict(zip(first, count()))
            distinct_tokens, distinct_available = zip(*first, strict=True)
            shared.extend(budget_exceeded_batch(len(first), distinct_tokens, distinct_available))
            return shared, list(map(position.__getitem__, keys))
        leftover = self.leftover
        lowest = self.lowest_selected
        distinct: list[ExclusionReason] = []
        slots: list[int] = []
        append = slots.append
        slot_of: dict[object, int] = {}
        for tokens, score, left in zip(item_tokens, scores, available, strict=True):
            key: object
            if low < tokens <= high:
                key = _OVERRIDE
            else:
                if left is None:
                    left = leftover
                if tokens > left:
                    key = (tokens, left)
                elif lowest is not None and nan_last(score) < lowest:
                    append(len(distinct))  # one per item: it names the item's own score
                    distinct.append(ScoredTooLow(score, lowest))
                    continue
                else:
                    key = _FILTERED
            slot = slot_of.get(key)
            if slot is None:
                slot = slot_of[key] = len(distinct)
                if key is _OVERRIDE:
                    distinct.append(PinnedOverride(displaced_by))  # type: ignore[arg-type]
                elif key is _FILTERED:
                    distinct.append(Filtered(self.slicer_name))
                else:
                    distinct.append(budget_exceeded(tokens, left))
            append(slot)
        return distinct, slots

    def shared_budget_reasons_of_arrays(
        self, item_tokens: Any, scores: Sequence[float], available: Any
    ) -> tuple[list[ExclusionReason], list[int]]:
        """:meth:`shared_budget_reasons` for int64 arrays of token counts and remaining tokens: the
        common case (every item exceeded what was left) found by array passes, with the distinct
        pairs in order of first occurrence, as there; any other case through the lists."""
        np = _numeric.numpy_module()
        low, high = self._override_bounds()
        if np is not None and len(item_tokens):
            fewest, most = int(item_tokens.min()), int(item_tokens.max())
            least_left = int(available.min())
            span = int(available.max()) - least_left + 1
            if (
                fewest >= 0
                and (most + 1) * span < 2**62  # the pair keys fit in int64
                and (high < 0 or most <= low or fewest > high)
                and bool((item_tokens > available).all())
            ):
                keys = item_tokens * span + (available - least_left)
                _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
                by_occurrence = np.argsort(first)  # first indices are distinct: any sort will do
                slot_of = np.empty(len(first), dtype=np.int64)
                slot_of[by_occurrence] = np.arange(len(first), dtype=np.int64)
                chosen = first[by_occurrence]
                shared: list[ExclusionReason] = []
                shared.extend(
                    budget_exceeded_batch(
                        len(chosen), item_tokens[chosen].tolist(), available[chosen].tolist()
                    )
                )
                return shared, slot_of[inverse.reshape(-1)].tolist()
        return self.shared_budget_reasons(item_tokens.tolist(), scores, available.tolist())

    def unexplained(self, score: float) -> ExclusionReason:
        """An item that fitted but was not chosen, without a reason from the slicer."""
        if self.lowest_selected is not None and nan_last(score) < self.lowest_selected:
            return ScoredTooLow(score, self.lowest_selected)
        return Filtered(self.slicer_name)


def _exceeded_by_tokens(item_tokens: Sequence[int], left: int | None) -> dict[int, ExclusionReason]:
    """``BudgetExceeded(tokens, left)`` for each distinct count of ``item_tokens``, in order of first
    occurrence: one shared object each (``left`` is an amount: ``None`` is not explained and never
    comes here, :meth:`SliceAttribution._all_exceeded`)."""
    distinct = dict.fromkeys(item_tokens)
    reasons = budget_exceeded_batch(len(distinct), distinct, repeat(left))
    return dict(zip(distinct, reasons, strict=True))


def left_out_reasons(
    slicer: object, order: list[int], tokens: list[int], scores: list[float], budget: ContextBudget
) -> tuple[list[int], list[ExclusionReason]] | None:
    """The candidates ``slicer`` leaves out of ``order`` (their indices by score, as Stage 4 sorts
    them) under ``budget`` (its target the effective one, nothing pinned), in that order, each with the
    reason a traced run gives it; ``None`` for a slicer that cannot explain an index-list slice (no
    ``slice_indices_detailed``)."""
    detailed = getattr(slicer, "slice_indices_detailed", None)
    if detailed is None:
        return None
    target = budget.target_tokens
    chosen, skipped = detailed(order, tokens, scores, budget)
    attribution = SliceAttribution.of_selection(
        target,
        target,
        None,
        sum(map(tokens.__getitem__, chosen)),
        list(map(scores.__getitem__, chosen)),
        type(slicer).__name__,
    )
    selected = set(chosen)
    left_out = list(filterfalse(selected.__contains__, order))
    if list(map(itemgetter(0), skipped)) == left_out:  # each left out explained, in order (greedy)
        explained: list[int | None] = list(map(itemgetter(1), skipped))
    else:
        explained = list(map(dict(skipped).get, left_out))
    # Equal reasons come back as one shared object (they are immutable values).
    left_tokens = list(map(tokens.__getitem__, left_out))
    # Their scores are read only where some item did not exceed what was left (ScoredTooLow).
    return left_out, attribution.budget_reasons(left_tokens, map(scores.__getitem__, left_out), explained)


def _fits(tokens: int, target: int) -> bool:
    """Whether a slicer could select an item of ``tokens`` under ``target``: slicers select nothing,
    not even a zero-token item, when the target is 0 (spec: Slicers)."""
    return target > 0 and tokens <= target


def truncation_reason(
    tokens: int, available: int, pinned_tokens: int, pinned: Sequence[ContextItem]
) -> ExclusionReason:
    """The reason for an item ``OverflowStrategy.TRUNCATE`` removed when ``available`` tokens were left
    for it: PinnedOverride when everything still kept would have fitted without the pinned items."""
    if pinned and tokens <= available + pinned_tokens:
        return PinnedOverride(displacing_pinned(pinned).content)
    return BudgetExceeded(tokens, max(0, available))


def displacing_pinned(pinned: Sequence[ContextItem]) -> ContextItem:
    """The pinned item named by PinnedOverride: the largest one, the earliest among equals."""
    return max(pinned, key=lambda item: item.tokens)
