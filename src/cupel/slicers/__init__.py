"""Slicers: choose which scored items fit the budget (spec: Slicers)."""

from cupel.slicers._base import (
    CountRequirementShortfall,
    DetailedSlicer,
    SliceOutcome,
    is_count_quota_slicer,
    is_quota_slicer,
)
from cupel.slicers.greedy import GreedySlice

__all__ = [
    "CountRequirementShortfall",
    "DetailedSlicer",
    "GreedySlice",
    "SliceOutcome",
    "is_count_quota_slicer",
    "is_quota_slicer",
]
