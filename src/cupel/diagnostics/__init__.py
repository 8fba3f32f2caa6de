"""Diagnostics: why each item was included or excluded (spec: Diagnostics)."""

from cupel.diagnostics.reasons import (
    BudgetExceeded,
    Deduplicated,
    ExclusionReason,
    Filtered,
    InclusionReason,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    UnknownExclusionReason,
    exclusion_reason_from_dict,
)

__all__ = [
    "BudgetExceeded",
    "Deduplicated",
    "ExclusionReason",
    "Filtered",
    "InclusionReason",
    "NegativeTokens",
    "PinnedOverride",
    "QuotaCapExceeded",
    "QuotaRequireDisplaced",
    "ScoredTooLow",
    "UnknownExclusionReason",
    "exclusion_reason_from_dict",
]
