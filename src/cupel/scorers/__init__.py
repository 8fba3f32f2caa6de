"""Scorers: compute a relevance score for each scoreable item (spec: Scorers)."""

from cupel._lazy import lazy_exports

TYPE_CHECKING = False  # not typing's: see cupel/__init__.py

if TYPE_CHECKING:
    from cupel.scorers._base import (
        ScorerBase,
        score_items,
    )
    from cupel.scorers.composite import (
        CompositeScorer,
    )
    from cupel.scorers.decay import (
        DecayCurve,
        DecayScorer,
        ExponentialCurve,
        FixedTimeProvider,
        StepCurve,
        SystemTimeProvider,
        WindowCurve,
    )
    from cupel.scorers.frequency import (
        FrequencyScorer,
    )
    from cupel.scorers.kind import (
        DEFAULT_KIND_WEIGHTS,
        KindScorer,
    )
    from cupel.scorers.metadata_key import (
        MetadataKeyScorer,
    )
    from cupel.scorers.metadata_trust import (
        MetadataTrustScorer,
    )
    from cupel.scorers.priority import (
        PriorityScorer,
    )
    from cupel.scorers.recency import (
        RecencyScorer,
    )
    from cupel.scorers.reflexive import (
        ReflexiveScorer,
    )
    from cupel.scorers.relevance import (
        RelevanceScorer,
    )
    from cupel.scorers.scaled import (
        ScaledScorer,
    )
    from cupel.scorers.tag import (
        TagScorer,
    )

__all__ = [
    "DEFAULT_KIND_WEIGHTS",
    "CompositeScorer",
    "DecayCurve",
    "DecayScorer",
    "ExponentialCurve",
    "FixedTimeProvider",
    "FrequencyScorer",
    "KindScorer",
    "MetadataKeyScorer",
    "MetadataTrustScorer",
    "PriorityScorer",
    "RecencyScorer",
    "ReflexiveScorer",
    "RelevanceScorer",
    "ScaledScorer",
    "ScorerBase",
    "StepCurve",
    "SystemTimeProvider",
    "TagScorer",
    "WindowCurve",
    "score_items",
]

# Each scorer's module is imported when the scorer is first used: the pipeline needs only _base.
_LAZY: dict[str, str] = {
    "ScorerBase": "cupel.scorers._base",
    "score_items": "cupel.scorers._base",
    "CompositeScorer": "cupel.scorers.composite",
    "DecayCurve": "cupel.scorers.decay",
    "DecayScorer": "cupel.scorers.decay",
    "ExponentialCurve": "cupel.scorers.decay",
    "FixedTimeProvider": "cupel.scorers.decay",
    "StepCurve": "cupel.scorers.decay",
    "SystemTimeProvider": "cupel.scorers.decay",
    "WindowCurve": "cupel.scorers.decay",
    "FrequencyScorer": "cupel.scorers.frequency",
    "DEFAULT_KIND_WEIGHTS": "cupel.scorers.kind",
    "KindScorer": "cupel.scorers.kind",
    "MetadataKeyScorer": "cupel.scorers.metadata_key",
    "MetadataTrustScorer": "cupel.scorers.metadata_trust",
    "PriorityScorer": "cupel.scorers.priority",
    "RecencyScorer": "cupel.scorers.recency",
    "ReflexiveScorer": "cupel.scorers.reflexive",
    "RelevanceScorer": "cupel.scorers.relevance",
    "ScaledScorer": "cupel.scorers.scaled",
    "TagScorer": "cupel.scorers.tag",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _LAZY)
