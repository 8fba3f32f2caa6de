"""The built-in scorer, slicer and placer types of policy files: name, class, parameters, reader, writer.

Each type's parameters are JSON Schemas: the loader allows exactly these keys, and
``policy.schema.json`` is generated from them (:mod:`cupel.policy._schema`). Importing this module
registers the types. Scorers and slicers are named by their class paths and imported only when a
policy uses them, so loading the registry does not load every built-in component.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cupel.placers import ChronologicalPlacer, UShapedPlacer
from cupel.policy._entries import (
    _PLACERS,
    _SCORERS,
    _SLICERS,
    SCARCITY_VALUES,
    _Entry,
    _Params,
    _Reader,
    _Registry,
    component_class,
)
from cupel.policy._readers import (
    _scorer_composite,
    _scorer_decay,
    _scorer_kind,
    _scorer_metadata_key,
    _scorer_metadata_trust,
    _scorer_relevance,
    _scorer_scaled,
    _scorer_tag,
    _slicer_count_constrained_knapsack,
    _slicer_count_quota,
    _slicer_knapsack,
    _slicer_quota,
    spelled,
)
from cupel.policy._writers import (
    _dump_count_entries,
    _dump_curve,
    _dump_kind,
    _dump_relevance,
    _dump_slicer,
    _no_params,
    _scorer_entries,
    _scorer_entry,
)

__all__: list[str] = []

_UNIT = {"type": "number", "minimum": 0, "maximum": 1}
_WEIGHTS = {"type": "object", "additionalProperties": {"type": "number", "minimum": 0}}
_BUCKET_SIZE = {"type": "integer", "minimum": 1, "default": 100}
_SCARCITY = {
    # ScarcityBehavior's values, spelled out so that loading the registry does not import count_quota
    # (tests/policy check that they match).
    **spelled(SCARCITY_VALUES, dashes=False),
    "default": SCARCITY_VALUES[0],
}
_COUNT_ENTRIES = {"type": "array", "items": {"$ref": "#/$defs/countQuotaEntry"}}


def _builtin(
    registry: _Registry,
    name: str,
    cls: type | str,
    description: str,
    build: Callable[[_Params, str, _Reader], Any],
    dump: Callable[[Any], dict[str, Any]],
    params: dict[str, Any] | None = None,
    required: tuple[str, ...] = (),
) -> None:
    registry.add(_Entry(name, cls, build, dump, params or {}, True, required, description))


def _plain(cls: type | str) -> Callable[[_Params, str, _Reader], Any]:
    """The reader of a type without parameters (a class path is imported when a policy names it)."""
    return lambda params, path, reader: component_class(cls)()


_builtin(
    _SCORERS,
    "recency",
    "cupel.scorers.recency.RecencyScorer",
    "Rank by timestamp: newest 1.0, oldest 0.0.",
    _plain("cupel.scorers.recency.RecencyScorer"),
    _no_params,
)
_builtin(
    _SCORERS,
    "priority",
    "cupel.scorers.priority.PriorityScorer",
    "Rank by priority: highest 1.0, lowest 0.0.",
    _plain("cupel.scorers.priority.PriorityScorer"),
    _no_params,
)
_builtin(
    _SCORERS,
    "frequency",
    "cupel.scorers.frequency.FrequencyScorer",
    "Share of peers sharing at least one tag.",
    _plain("cupel.scorers.frequency.FrequencyScorer"),
    _no_params,
)
_builtin(
    _SCORERS,
    "reflexive",
    "cupel.scorers.reflexive.ReflexiveScorer",
    "The item's future_relevance_hint, clamped to [0, 1].",
    _plain("cupel.scorers.reflexive.ReflexiveScorer"),
    _no_params,
)
_builtin(
    _SCORERS,
    "relevance",
    "cupel.scorers.relevance.RelevanceScorer",
    "BM25 relevance to the query of the call (or a fixed query), divided by the best score.",
    _scorer_relevance,
    _dump_relevance,
    {
        "query": {"type": "string", "description": "A fixed query; a call's query replaces it."},
        "k1": {"type": "number", "minimum": 0, "default": 1.2},
        "b": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.75},
        "stemming": {"type": "boolean", "default": True},
        "stop_words": {"type": "boolean", "default": True},
        "neighbors": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Items on each side that pass on a share of their relevance.",
        },
        "neighbor_weight": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
    },
)
_builtin(
    _SCORERS,
    "kind",
    "cupel.scorers.kind.KindScorer",
    "Weight looked up by the item's kind.",
    _scorer_kind,
    _dump_kind,
    {
        "weights": {
            **_WEIGHTS,
            "propertyNames": {"pattern": r"\S"},
            "description": "Weight per kind (case-insensitive). Omitted: the spec's defaults.",
        }
    },
)
_builtin(
    _SCORERS,
    "tag",
    "cupel.scorers.tag.TagScorer",
    "Matched tag weights over the total configured weight.",
    _scorer_tag,
    lambda s: {"tag_weights": dict(s.tag_weights), "case_sensitive": s.case_sensitive},
    {"tag_weights": _WEIGHTS, "case_sensitive": {"type": "boolean", "default": True}},
    ("tag_weights",),
)
_builtin(
    _SCORERS,
    "metadata_trust",
    "cupel.scorers.metadata_trust.MetadataTrustScorer",
    'The caller\'s metadata["cupel:trust"], clamped to [0, 1].',
    _scorer_metadata_trust,
    lambda s: {"default_score": s.default_score},
    {
        "default_score": {
            **_UNIT,
            "default": 0.5,
            "description": 'Score when metadata["cupel:trust"] is missing or unreadable.',
        }
    },
)
_builtin(
    _SCORERS,
    "metadata_key",
    "cupel.scorers.metadata_key.MetadataKeyScorer",
    "boost when metadata[key] == value, else 1.0.",
    _scorer_metadata_key,
    lambda s: {"key": s.key, "value": s.value, "boost": s.boost},
    {
        "key": {"type": "string"},
        "value": {"type": "string"},
        "boost": {"type": "number", "exclusiveMinimum": 0},
    },
    ("key", "value", "boost"),
)
_builtin(
    _SCORERS,
    "decay",
    "cupel.scorers.decay.DecayScorer",
    "Time decay of the item's age against the clock (the system clock when read from a file).",
    _scorer_decay,
    lambda s: {"curve": _dump_curve(s.curve), "null_timestamp_score": s.null_timestamp_score},
    {
        "curve": {"$ref": "#/$defs/curve"},
        "null_timestamp_score": {
            **_UNIT,
            "default": 0.5,
            "description": "Score of items without a timestamp.",
        },
    },
    ("curve",),
)
_builtin(
    _SCORERS,
    "scaled",
    "cupel.scorers.scaled.ScaledScorer",
    "Min-max normalisation of the inner scorer.",
    _scorer_scaled,
    lambda s: {"inner": _scorer_entry(s.inner, None)},
    {"inner": {"$ref": "#/$defs/scorer"}},
    ("inner",),
)
_builtin(
    _SCORERS,
    "composite",
    "cupel.scorers.composite.CompositeScorer",
    "Weighted average of the child scorers.",
    _scorer_composite,
    lambda s: {"scorers": _scorer_entries(s)},
    {"scorers": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/scorer"}}},
    ("scorers",),
)

_builtin(
    _SLICERS,
    "greedy",
    "cupel.slicers.greedy.GreedySlice",
    "Fill by score per token.",
    _plain("cupel.slicers.greedy.GreedySlice"),
    _no_params,
)
_builtin(
    _SLICERS,
    "score",
    "cupel.slicers.score.ScoreSlice",
    "Fill by score, highest first (an extension for relevance scores).",
    _plain("cupel.slicers.score.ScoreSlice"),
    _no_params,
)
_builtin(
    _SLICERS,
    "knapsack",
    "cupel.slicers.knapsack.KnapsackSlice",
    "0/1 knapsack over discretised token counts.",
    _slicer_knapsack,
    lambda s: {"bucket_size": s.bucket_size},
    {"bucket_size": _BUCKET_SIZE},
)
_builtin(
    _SLICERS,
    "quota",
    "cupel.slicers.quota.QuotaSlice",
    "Percentage quotas per kind around an inner slicer (default greedy).",
    _slicer_quota,
    lambda s: {
        "quotas": [
            {"kind": str(entry.kind), "require": entry.require, "cap": entry.cap} for entry in s.quotas
        ],
        "inner": _dump_slicer(s.inner),
    },
    {
        "quotas": {"type": "array", "items": {"$ref": "#/$defs/quotaEntry"}},
        "inner": {"$ref": "#/$defs/slicer"},
    },
    ("quotas",),
)
_builtin(
    _SLICERS,
    "count_quota",
    "cupel.slicers.count_quota.CountQuotaSlice",
    "Item-count quotas per kind around an inner slicer (default greedy; not knapsack).",
    _slicer_count_quota,
    lambda s: {
        "entries": _dump_count_entries(s.entries),
        "inner": _dump_slicer(s.inner),
        "scarcity": s.scarcity.value,
    },
    {"entries": _COUNT_ENTRIES, "inner": {"$ref": "#/$defs/slicer"}, "scarcity": _SCARCITY},
    ("entries",),
)
_builtin(
    _SLICERS,
    "count_constrained_knapsack",
    "cupel.slicers.count_constrained_knapsack.CountConstrainedKnapsackSlice",
    "Item-count quotas per kind around a knapsack.",
    _slicer_count_constrained_knapsack,
    lambda s: {
        "entries": _dump_count_entries(s.entries),
        "bucket_size": s.knapsack.bucket_size,
        "scarcity": s.scarcity.value,
    },
    {"entries": _COUNT_ENTRIES, "bucket_size": _BUCKET_SIZE, "scarcity": _SCARCITY},
    ("entries",),
)

_builtin(
    _PLACERS,
    "chronological",
    ChronologicalPlacer,
    "Oldest first; untimed items after, in input order.",
    _plain(ChronologicalPlacer),
    _no_params,
)
_builtin(
    _PLACERS, "u_shaped", UShapedPlacer, "Highest scores at both edges.", _plain(UShapedPlacer), _no_params
)
