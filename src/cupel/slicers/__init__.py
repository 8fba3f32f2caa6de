"""Slicers: choose which scored items fit the budget (spec: Slicers)."""

from cupel.slicers._base import (
    CountRequirementShortfall,
    DetailedSlicer,
    SliceOutcome,
    is_count_quota_slicer,
    is_quota_slicer,
)
from cupel.slicers.count_constrained_knapsack import CountConstrainedKnapsackSlice
from cupel.slicers.count_quota import CountQuotaEntry, CountQuotaSlice, ScarcityBehavior
from cupel.slicers.greedy import GreedySlice
from cupel.slicers.knapsack import KnapsackSlice
from cupel.slicers.quota import QuotaEntry, QuotaSet, QuotaSlice

__all__ = [
    "CountConstrainedKnapsackSlice",
    "CountQuotaEntry",
    "CountQuotaSlice",
    "CountRequirementShortfall",
    "DetailedSlicer",
    "GreedySlice",
    "KnapsackSlice",
    "QuotaEntry",
    "QuotaSet",
    "QuotaSlice",
    "ScarcityBehavior",
    "SliceOutcome",
    "is_count_quota_slicer",
    "is_quota_slicer",
]
