"""What slicers share: the detailed-outcome hook the pipeline's diagnostics read, and slicer traits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cupel.diagnostics.events import CountRequirementShortfall
from cupel.diagnostics.reasons import ExclusionReason, budget_exceeded
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.protocols import Slicer

__all__ = [
    "CountRequirementShortfall",
    "DetailedSlicer",
    "SliceOutcome",
    "budget_outcome",
    "is_count_quota_slicer",
    "is_quota_slicer",
]


@dataclass(frozen=True, slots=True)
class SliceOutcome:
    """A slicer's selection plus what it knows about the items it left out.

    ``exclusions`` pairs items with the reason the slicer itself decided (for example the tokens left
    at the moment GreedySlice skipped an item, or a count cap). Items of the input that are neither
    selected nor listed get their reason from the pipeline (:mod:`cupel.diagnostics.attribution`),
    which also replaces a reason that contradicts its own numbers.
    """

    selected: tuple[ContextItem, ...]
    exclusions: tuple[tuple[ContextItem, ExclusionReason], ...] = ()
    shortfalls: tuple[CountRequirementShortfall, ...] = ()


def budget_outcome(
    scored: Sequence[ScoredItem],
    tokens: Sequence[int],
    chosen: Sequence[int],
    skipped: Sequence[tuple[int, int]],
) -> SliceOutcome:
    """A budget fill's outcome: the ``chosen`` items, and each ``skipped`` index with the tokens that
    remained when it was considered (its BudgetExceeded)."""
    exclusions = tuple(
        (scored[index].item, budget_exceeded(tokens[index], remaining)) for index, remaining in skipped
    )
    return SliceOutcome(tuple(scored[index].item for index in chosen), exclusions)


@runtime_checkable
class DetailedSlicer(Slicer, Protocol):
    """A slicer that can explain its decisions. ``slice_detailed(...).selected`` equals ``slice(...)``."""

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice` and report exclusions and shortfalls."""
        ...


def is_quota_slicer(slicer: object) -> bool:
    """Whether the slicer distributes a percentage budget across kinds (QuotaSlice-like).

    Such slicers are not monotonic in the budget; budget simulation guards against them.
    """
    return bool(getattr(slicer, "is_quota", False))


def is_count_quota_slicer(slicer: object) -> bool:
    """Whether the slicer enforces per-kind item counts (CountQuotaSlice-like)."""
    return bool(getattr(slicer, "is_count_quota", False))
