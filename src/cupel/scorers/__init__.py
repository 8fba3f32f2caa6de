"""Scorers: compute a relevance score for each scoreable item (spec: Scorers)."""

from cupel.scorers._base import ScorerBase, score_items
from cupel.scorers.composite import CompositeScorer
from cupel.scorers.decay import (
    DecayCurve,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    StepCurve,
    SystemTimeProvider,
    WindowCurve,
)
from cupel.scorers.frequency import FrequencyScorer
from cupel.scorers.kind import DEFAULT_KIND_WEIGHTS, KindScorer
from cupel.scorers.metadata_key import MetadataKeyScorer
from cupel.scorers.metadata_trust import MetadataTrustScorer
from cupel.scorers.priority import PriorityScorer
from cupel.scorers.recency import RecencyScorer
from cupel.scorers.reflexive import ReflexiveScorer
from cupel.scorers.scaled import ScaledScorer
from cupel.scorers.tag import TagScorer

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
    "ScaledScorer",
    "ScorerBase",
    "StepCurve",
    "SystemTimeProvider",
    "TagScorer",
    "WindowCurve",
    "score_items",
]
