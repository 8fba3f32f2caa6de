"""Slicers: choose which scored items fit the budget (spec: Slicers)."""

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py

if TYPE_CHECKING:
    from cupel.slicers._base import (
        CountRequirementShortfall,
        DetailedSlicer,
        SliceOutcome,
        is_count_quota_slicer,
        is_quota_slicer,
    )
    from cupel.slicers.count_constrained_knapsack import (
        CountConstrainedKnapsackSlice,
    )
    from cupel.slicers.count_quota import (
        CountQuotaEntry,
        CountQuotaSlice,
        ScarcityBehavior,
    )
    from cupel.slicers.greedy import (
        GreedySlice,
    )
    from cupel.slicers.knapsack import (
        KnapsackSlice,
    )
    from cupel.slicers.quota import (
        QuotaEntry,
        QuotaSet,
        QuotaSlice,
    )
    from cupel.slicers.score import (
        ScoreSlice,
    )

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
    "ScoreSlice",
    "SliceOutcome",
    "is_count_quota_slicer",
    "is_quota_slicer",
]

# Each slicer's module is imported when the slicer is first used: the pipeline needs only _base.
_LAZY: dict[str, str] = {
    "CountRequirementShortfall": "cupel.slicers._base",
    "DetailedSlicer": "cupel.slicers._base",
    "SliceOutcome": "cupel.slicers._base",
    "is_count_quota_slicer": "cupel.slicers._base",
    "is_quota_slicer": "cupel.slicers._base",
    "CountConstrainedKnapsackSlice": "cupel.slicers.count_constrained_knapsack",
    "CountQuotaEntry": "cupel.slicers.count_quota",
    "CountQuotaSlice": "cupel.slicers.count_quota",
    "ScarcityBehavior": "cupel.slicers.count_quota",
    "GreedySlice": "cupel.slicers.greedy",
    "KnapsackSlice": "cupel.slicers.knapsack",
    "QuotaEntry": "cupel.slicers.quota",
    "QuotaSet": "cupel.slicers.quota",
    "QuotaSlice": "cupel.slicers.quota",
    "ScoreSlice": "cupel.slicers.score",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
