"""Budget simulation: marginal items and the minimum budget for an item (spec: Budget Simulation).

The algorithms live in :mod:`cupel._simulation`, below the pipeline, so that ``Pipeline`` can offer
them as methods without importing this layer; these functions check their ``pipeline`` argument.
"""

from __future__ import annotations

from collections.abc import Sequence

from cupel import _simulation
from cupel._simulation import MARGINAL_ITEMS_MONOTONICITY_MESSAGE, MIN_BUDGET_MONOTONICITY_MESSAGE
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline

__all__ = [
    "MARGINAL_ITEMS_MONOTONICITY_MESSAGE",
    "MIN_BUDGET_MONOTONICITY_MESSAGE",
    "find_min_budget_for",
    "get_marginal_items",
]


def _check_pipeline(pipeline: object) -> Pipeline:
    if not isinstance(pipeline, Pipeline):
        raise CupelTypeError(f"pipeline must be a Pipeline, got {type(pipeline).__name__}")
    return pipeline


def get_marginal_items(
    pipeline: Pipeline, items: Sequence[ContextItem], budget: ContextBudget, slack_tokens: int
) -> list[ContextItem]:
    """Items included at ``budget`` but not at ``budget`` minus ``slack_tokens`` (spec: GetMarginalItems).

    The reduced budget is ``ContextBudget(max_tokens - slack, target_tokens - slack)`` with the full
    budget's output reserve, reserved slots and safety margin. ``slack_tokens`` must be an int in
    ``[0, min(budget.target_tokens, budget.max_tokens - budget.output_reserve)]`` so that the reduced
    budget is valid. The result keeps the full run's placed order; identity is by reference (the
    spec's set difference: an instance included at both budgets is never marginal). Raises
    :class:`~cupel.errors.MonotonicityError` for QuotaSlice-like slicers. Errors of either run
    (e.g. :class:`~cupel.errors.PinnedItemsExceedBudgetError`) propagate.
    """
    return _simulation.get_marginal_items(_check_pipeline(pipeline), items, budget, slack_tokens)


def find_min_budget_for(
    pipeline: Pipeline, items: Sequence[ContextItem], target_item: ContextItem, search_ceiling: int
) -> int | None:
    """The smallest budget in ``[target_item.tokens, search_ceiling]`` that includes ``target_item``.

    Spec: FindMinBudgetFor. Each probe budget is ``ContextBudget(max_tokens=b, target_tokens=b)``:
    no output reserve, reserved slots or safety margin, so ``b`` is the whole window. The search is the
    spec's binary search with its final confirmation run, except that the exclusive lower bound starts
    at ``target_item.tokens - 1`` (the item cannot fit below its own size) so that
    ``target_item.tokens`` itself is reachable. Returns ``None`` when the item is not included at the
    confirmed bound. A probe that raises :class:`~cupel.errors.PinnedItemsExceedBudgetError` or
    :class:`~cupel.errors.BudgetOverflowError` counts as "not included at that budget".

    Identity is by reference: ``target_item`` must be one of ``items`` (``is``), else
    :class:`~cupel.errors.InvalidConfigurationError`; so must ``search_ceiling >= target_item.tokens``.
    Raises :class:`~cupel.errors.MonotonicityError` for quota and count-quota slicers. The binary
    search assumes monotonic inclusion; where a slicer is not monotonic for the given items the
    result is the budget the search confirms, not necessarily the smallest one.
    """
    return _simulation.find_min_budget_for(_check_pipeline(pipeline), items, target_item, search_ceiling)
