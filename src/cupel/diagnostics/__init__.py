"""Diagnostics: why each item was included or excluded (spec: Diagnostics).

The reasons are imported on first use (``_LAZY``), so that the pipeline's tracing hooks, which live
in this package, do not load them for runs that are not traced.
"""

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py

if TYPE_CHECKING:
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

_LAZY: dict[str, str] = {name: "cupel.diagnostics.reasons" for name in __all__}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
