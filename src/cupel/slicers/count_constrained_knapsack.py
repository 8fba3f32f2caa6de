"""CountConstrainedKnapsackSlice (spec: Slicers, CountConstrainedKnapsackSlice)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from cupel._score_order import sort_by_score
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers._base import CountRequirementShortfall, SliceOutcome
from cupel.slicers._common import run_inner
from cupel.slicers.count_quota import (
    CountQuotaEntry,
    ScarcityBehavior,
    _check_entries,
    _check_scarcity,
    _count_satisfy,
    _enforce_caps,
    _residual_pass,
    entries_for_kind,
    pool_shortfalls,
)
from cupel.slicers.knapsack import KnapsackSlice

__all__ = ["CountConstrainedKnapsackSlice"]


@dataclass(frozen=True, slots=True, init=False)
class CountConstrainedKnapsackSlice:
    """Count quotas per kind around a knapsack-optimal selection (spec: COUNT-KNAPSACK-CAP).

    Phase 1 commits each required kind's top-scoring candidates, as :class:`CountQuotaSlice` does.
    Phase 2 runs ``knapsack`` on the rest with the reduced target, and its picks are re-sorted by
    score, highest first (stable), so the caps of Phase 3 keep the best items. Phase 3 starts its
    per-kind counts from Phase 1's. The knapsack's :class:`~cupel.errors.TableTooLargeError`
    propagates. Shortfalls and cap exclusions are reported by :meth:`slice_detailed`.
    """

    entries: tuple[CountQuotaEntry, ...]
    knapsack: KnapsackSlice
    scarcity: ScarcityBehavior
    is_count_quota: ClassVar[bool] = True

    def __init__(
        self,
        entries: Iterable[CountQuotaEntry],
        knapsack: KnapsackSlice | None = None,
        scarcity: ScarcityBehavior | str = ScarcityBehavior.DEGRADE,
    ) -> None:
        if knapsack is None:
            knapsack = KnapsackSlice()
        elif not isinstance(knapsack, KnapsackSlice):
            raise CupelTypeError(
                f"CountConstrainedKnapsackSlice.knapsack must be a KnapsackSlice, got {knapsack!r}"
            )
        object.__setattr__(self, "entries", _check_entries("CountConstrainedKnapsackSlice", entries))
        object.__setattr__(self, "knapsack", knapsack)
        object.__setattr__(self, "scarcity", _check_scarcity("CountConstrainedKnapsackSlice", scarcity))

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return list(self._run(scored, budget, detailed=False).selected)

    def pool_shortfalls(self, scored: Sequence[ScoredItem]) -> tuple[CountRequirementShortfall, ...]:
        """The requirements the whole of ``scored`` cannot meet (raises under THROW); see QuotaSlice."""
        return pool_shortfalls("CountConstrainedKnapsackSlice", scored, self.entries, self.scarcity)

    def for_kind(self, kind: str) -> CountConstrainedKnapsackSlice:
        """This slicer for a partition holding only ``kind`` (folded); see CountQuotaSlice.for_kind."""
        return CountConstrainedKnapsackSlice(
            entries_for_kind(self.entries, kind), self.knapsack, ScarcityBehavior.DEGRADE
        )

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        """Select like :meth:`slice`; report cap exclusions, shortfalls and the knapsack's reasons."""
        return self._run(scored, budget, detailed=True)

    def _run(self, scored: Sequence[ScoredItem], budget: ContextBudget, *, detailed: bool) -> SliceOutcome:
        if not scored or budget.target_tokens <= 0:
            return SliceOutcome(())
        committed = _count_satisfy("CountConstrainedKnapsackSlice", scored, self.entries, self.scarcity)
        residual, residual_budget = _residual_pass(scored, committed, budget)
        knapsack = run_inner(self.knapsack, residual, residual_budget, detailed)
        picked = list(knapsack.selected)
        # D180: the knapsack's order is its reconstruction order; caps must see the best items first.
        score_of = {id(candidate.item): candidate.score for candidate in residual}
        picked = sort_by_score(picked, lambda item: score_of[id(item)])
        accepted, capped = _enforce_caps(picked, self.entries, committed.counts)
        return SliceOutcome(
            (*committed.items, *accepted), (*knapsack.exclusions, *capped), tuple(committed.shortfalls)
        )
