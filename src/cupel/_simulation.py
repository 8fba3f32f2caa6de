"""Budget simulation: marginal items and the minimum budget for an item (spec: Budget Simulation).

The algorithms behind ``Pipeline.get_marginal_items``/``find_min_budget_for`` and their
:mod:`cupel.analytics` twins; they sit below :mod:`cupel.pipeline` and take the pipeline as an argument.
Both functions answer "what would the pipeline select at another budget?" without changing the
pipeline. Scores do not depend on the budget, so the budget-independent stages (Classify, Score,
Deduplicate, Sort) run once per call and only Slice and Place run per probed budget. The result is
what the spec's DRY-RUN-per-budget algorithm returns (``Pipeline.dry_run`` and ``Pipeline.run`` select
the same items); the test suite checks this against a literal ``dry_run`` implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from cupel._prepared import Prepared, check_pinned_budget, checked_items
from cupel.errors import (
    BudgetOverflowError,
    CupelTypeError,
    InvalidConfigurationError,
    MonotonicityError,
    PinnedItemsExceedBudgetError,
)
from cupel.model import ContextBudget, ContextItem
from cupel.protocols import Slicer
from cupel.slicers import is_count_quota_slicer, is_quota_slicer

__all__ = [
    "MARGINAL_ITEMS_MONOTONICITY_MESSAGE",
    "MIN_BUDGET_MONOTONICITY_MESSAGE",
    "Simulated",
    "find_min_budget_for",
    "get_marginal_items",
]

#: The spec's exact message for GetMarginalItems on a QuotaSlice pipeline.
MARGINAL_ITEMS_MONOTONICITY_MESSAGE = (
    "GetMarginalItems requires monotonic item inclusion. QuotaSlice produces non-monotonic inclusion "
    "as budget changes shift percentage allocations."
)
#: The spec's exact message for FindMinBudgetFor on a quota or count-quota pipeline.
MIN_BUDGET_MONOTONICITY_MESSAGE = (
    "FindMinBudgetFor requires monotonic item inclusion. QuotaSlice and CountQuotaSlice produce "
    "non-monotonic inclusion as budget changes shift allocations. Use a GreedySlice or KnapsackSlice "
    "inner slicer for budget simulation."
)


class Simulated(Protocol):
    """What budget simulation needs of a pipeline: its slicer and its two run halves."""

    @property
    def slicer(self) -> Slicer: ...

    def _prepare(self, items: Sequence[ContextItem], budget: None, tracer: None) -> Prepared: ...

    def _select(self, prepared: Prepared, budget: ContextBudget, tracer: None) -> list[ContextItem]: ...


def _check_int(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{name} must be an int, got {value!r}")
    return value


def _selection(pipeline: Simulated, prepared: Prepared, budget: ContextBudget) -> list[ContextItem]:
    """Stages 5-6 at ``budget`` over prepared candidates: what ``dry_run(items, budget)`` includes."""
    # The pinned check belongs to Classify, which ran without a budget.
    check_pinned_budget(prepared.pinned_tokens, budget)
    return pipeline._select(prepared, budget, None)


def get_marginal_items(
    pipeline: Simulated, items: Sequence[ContextItem], budget: ContextBudget, slack_tokens: int
) -> list[ContextItem]:
    """Spec: GetMarginalItems; documented at :func:`cupel.analytics.get_marginal_items`."""
    if is_quota_slicer(pipeline.slicer):
        raise MonotonicityError(MARGINAL_ITEMS_MONOTONICITY_MESSAGE)
    if not isinstance(budget, ContextBudget):
        raise CupelTypeError(f"budget must be a ContextBudget, got {type(budget).__name__}")
    slack = _check_int("slack_tokens", slack_tokens)
    if slack < 0:
        raise InvalidConfigurationError(f"slack_tokens must be >= 0, got {slack}")
    if slack > budget.target_tokens:
        raise InvalidConfigurationError(
            f"slack_tokens must be <= budget.target_tokens ({budget.target_tokens}), got {slack}"
        )
    room = budget.max_tokens - budget.output_reserve
    if slack > room:
        raise InvalidConfigurationError(
            f"slack_tokens must be <= budget.max_tokens - budget.output_reserve ({room}), got {slack}"
        )
    reduced = ContextBudget(
        budget.max_tokens - slack,
        budget.target_tokens - slack,
        output_reserve=budget.output_reserve,
        reserved_slots={str(kind): count for kind, count in budget.reserved_slots.items()},
        estimation_safety_margin_percent=budget.estimation_safety_margin_percent,
    )
    prepared = pipeline._prepare(checked_items(items), None, None)
    primary = _selection(pipeline, prepared, budget)
    margin = {id(item) for item in _selection(pipeline, prepared, reduced)}
    return [item for item in primary if id(item) not in margin]


def find_min_budget_for(
    pipeline: Simulated, items: Sequence[ContextItem], target_item: ContextItem, search_ceiling: int
) -> int | None:
    """Spec: FindMinBudgetFor; documented at :func:`cupel.analytics.find_min_budget_for`."""
    if is_quota_slicer(pipeline.slicer) or is_count_quota_slicer(pipeline.slicer):
        raise MonotonicityError(MIN_BUDGET_MONOTONICITY_MESSAGE)
    checked = checked_items(items)
    if not isinstance(target_item, ContextItem):
        raise CupelTypeError(f"target_item must be a ContextItem, got {type(target_item).__name__}")
    ceiling = _check_int("search_ceiling", search_ceiling)
    if not any(item is target_item for item in checked):
        raise InvalidConfigurationError("target_item must be an element of items")
    if ceiling < target_item.tokens:
        raise InvalidConfigurationError(
            f"search_ceiling must be >= target_item.tokens ({target_item.tokens}), got {ceiling}"
        )

    prepared = pipeline._prepare(checked, None, None)
    if not _is_candidate(prepared, target_item):
        # Excluded at Classify (negative tokens) or Deduplicate: no budget can include it.
        return None

    def included_at(budget_tokens: int) -> bool:
        try:
            selection = _selection(pipeline, prepared, ContextBudget(budget_tokens, budget_tokens))
        except (PinnedItemsExceedBudgetError, BudgetOverflowError):
            return False
        return any(item is target_item for item in selection)

    low = target_item.tokens - 1  # exclusive: never probed
    high = ceiling
    while high - low > 1:
        mid = low + (high - low) // 2
        if included_at(mid):
            high = mid
        else:
            low = mid
    return high if included_at(high) else None


def _is_candidate(prepared: Prepared, target: ContextItem) -> bool:
    return any(item is target for item in prepared.pinned) or any(
        entry.item is target for entry in prepared.sorted_scored
    )
