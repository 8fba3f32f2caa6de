"""cupel: decide what goes into a language model's context window.

Build :class:`ContextItem` candidates, pick a :class:`ContextBudget`, and run a :class:`Pipeline` of a
scorer, a slicer and a placer. ``Pipeline.dry_run`` explains every inclusion and exclusion.
"""

from cupel.diagnostics import (
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
)
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.diagnostics.trace import (
    DiagnosticTraceCollector,
    NullTraceCollector,
    OverflowEvent,
    PipelineStage,
    TraceCollector,
    TraceDetailLevel,
    TraceEvent,
)
from cupel.errors import (
    BudgetOverflowError,
    CupelError,
    CupelTypeError,
    InvalidConfigurationError,
    PinnedItemsExceedBudgetError,
)
from cupel.model import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    OverflowStrategy,
    ScoredItem,
)
from cupel.pipeline import Pipeline, compute_effective_budget
from cupel.placers import ChronologicalPlacer, UShapedPlacer
from cupel.protocols import BatchScorer, Placer, Scorer, Slicer, TimeProvider
from cupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    StepCurve,
    SystemTimeProvider,
    TagScorer,
    WindowCurve,
)
from cupel.slicers import CountRequirementShortfall, GreedySlice, SliceOutcome

__version__ = "0.1.0"

__all__ = [
    "BatchScorer",
    "BudgetExceeded",
    "BudgetOverflowError",
    "ChronologicalPlacer",
    "CompositeScorer",
    "ContextBudget",
    "ContextItem",
    "ContextKind",
    "ContextSource",
    "CountRequirementShortfall",
    "CupelError",
    "CupelTypeError",
    "DecayScorer",
    "Deduplicated",
    "DiagnosticTraceCollector",
    "ExcludedItem",
    "ExclusionReason",
    "ExponentialCurve",
    "Filtered",
    "FixedTimeProvider",
    "FrequencyScorer",
    "GreedySlice",
    "IncludedItem",
    "InclusionReason",
    "InvalidConfigurationError",
    "KindScorer",
    "MetadataKeyScorer",
    "MetadataTrustScorer",
    "NegativeTokens",
    "NullTraceCollector",
    "OverflowEvent",
    "OverflowStrategy",
    "PinnedItemsExceedBudgetError",
    "PinnedOverride",
    "Pipeline",
    "PipelineStage",
    "Placer",
    "PriorityScorer",
    "QuotaCapExceeded",
    "QuotaRequireDisplaced",
    "RecencyScorer",
    "ReflexiveScorer",
    "ScaledScorer",
    "ScoredItem",
    "ScoredTooLow",
    "Scorer",
    "SelectionReport",
    "SliceOutcome",
    "Slicer",
    "StepCurve",
    "SystemTimeProvider",
    "TagScorer",
    "TimeProvider",
    "TraceCollector",
    "TraceDetailLevel",
    "TraceEvent",
    "UShapedPlacer",
    "UnknownExclusionReason",
    "WindowCurve",
    "__version__",
    "compute_effective_budget",
]
