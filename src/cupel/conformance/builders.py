"""Build items, budgets, scorers, slicers and placers from a conformance vector's tables."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from cupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from cupel.protocols import Placer, Scorer, Slicer


class VectorError(Exception):
    """The vector could not be run as written (a missing feature or a malformed table)."""


def _timestamp(value: object) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    raise VectorError(f"timestamp must be a datetime, got {value!r}")


def build_item(table: Mapping[str, Any]) -> ContextItem:
    hint = table.get("futureRelevanceHint", table.get("future_relevance_hint"))
    return ContextItem(
        table["content"],
        table["tokens"],
        kind=table.get("kind", "Message"),
        source=table.get("source", "Chat"),
        priority=table.get("priority"),
        tags=table.get("tags", ()),
        metadata=table.get("metadata"),
        timestamp=_timestamp(table.get("timestamp")),
        future_relevance_hint=hint,
        pinned=table.get("pinned", False),
        original_tokens=table.get("original_tokens", table.get("originalTokens")),
    )


def build_scored_item(table: Mapping[str, Any]) -> ScoredItem:
    return ScoredItem(build_item(table), float(table["score"]))


def build_budget(table: Mapping[str, Any]) -> ContextBudget:
    target = table["target_tokens"]
    return ContextBudget(
        table.get("max_tokens", target),
        target,
        output_reserve=table.get("output_reserve", 0),
        reserved_slots=table.get("reserved_slots"),
        estimation_safety_margin_percent=table.get("estimation_safety_margin_percent", 0.0),
    )


def _feature(module: str, name: str, what: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        raise VectorError(f"{what} is not available in this build of cupel") from None


def build_scorer(kind: str, config: Mapping[str, Any]) -> Scorer:
    """Build a scorer of type ``kind`` from a vector's ``[config]`` (children: default config)."""
    from cupel import scorers

    simple: dict[str, type[Any]] = {
        "recency": scorers.RecencyScorer,
        "priority": scorers.PriorityScorer,
        "reflexive": scorers.ReflexiveScorer,
        "frequency": scorers.FrequencyScorer,
    }
    if kind in simple:
        return simple[kind]()  # type: ignore[no-any-return]
    if kind == "kind":
        weights = config.get("weights")
        if config.get("use_default_weights", False) or not weights:
            return scorers.KindScorer()
        return scorers.KindScorer({entry["kind"]: entry["weight"] for entry in weights})
    if kind == "tag":
        entries = config.get("tag_weights", [])
        return scorers.TagScorer({entry["tag"]: entry["weight"] for entry in entries})
    if kind == "composite":
        return scorers.CompositeScorer(
            [(_child_scorer(entry), entry["weight"]) for entry in config.get("scorers", [])]
        )
    if kind == "scaled":
        return scorers.ScaledScorer(build_scorer(config["inner_scorer"], {}))
    if kind == "metadata_trust":
        return scorers.MetadataTrustScorer(config.get("default_score", 0.5))
    if kind == "metadata_key":
        return scorers.MetadataKeyScorer(config["key"], config["value"], config["boost"])
    if kind == "decay":
        reference = _timestamp(config.get("reference_time"))
        if reference is None:
            raise VectorError("decay scorer needs config.reference_time")
        return scorers.DecayScorer(
            scorers.FixedTimeProvider(reference),
            _build_curve(config.get("curve", {})),
            null_timestamp_score=config.get("null_timestamp_score", 0.5),
        )
    raise VectorError(f"unknown scorer type {kind!r}")


def _child_scorer(entry: Mapping[str, Any]) -> Scorer:
    kind = entry["type"]
    if kind == "composite":
        return build_scorer("composite", {"scorers": entry.get("children", [])})
    return build_scorer(kind, entry)


def _build_curve(table: Mapping[str, Any]) -> Any:
    from cupel import scorers

    curve = table.get("type")
    if curve == "exponential":
        return scorers.ExponentialCurve(timedelta(seconds=table["half_life_secs"]))
    if curve == "window":
        return scorers.WindowCurve(timedelta(seconds=table["max_age_secs"]))
    if curve == "step":
        return scorers.StepCurve(
            [
                (timedelta(seconds=window["max_age_secs"]), window["score"])
                for window in table.get("windows", [])
            ]
        )
    raise VectorError(f"unknown decay curve type {curve!r}")


def pipeline_scorer(entries: list[Mapping[str, Any]]) -> Scorer:
    """One ``[[config.scorers]]`` entry is used alone; two or more form a CompositeScorer."""
    if not entries:
        raise VectorError("pipeline vector has no [[config.scorers]]")
    if len(entries) == 1:
        return _child_scorer(entries[0])
    return build_scorer("composite", {"scorers": entries})


def build_slicer(kind: str, config: Mapping[str, Any]) -> Slicer:
    from cupel.slicers import GreedySlice

    if kind == "greedy":
        return GreedySlice()
    if kind == "score":  # the project's extension (docs/spec-notes.md, "Relevance")
        score_slice = _feature("cupel.slicers", "ScoreSlice", "ScoreSlice")
        return score_slice()  # type: ignore[no-any-return]
    if kind == "knapsack":
        knapsack = _feature("cupel.slicers", "KnapsackSlice", "KnapsackSlice")
        return knapsack(bucket_size=config.get("bucket_size", 100))  # type: ignore[no-any-return]
    if kind == "quota":
        quota_slice = _feature("cupel.slicers", "QuotaSlice", "QuotaSlice")
        quota_set = _feature("cupel.slicers", "QuotaSet", "QuotaSet")
        quotas = quota_set(
            [
                (entry["kind"], entry.get("require", 0.0), entry.get("cap", 100.0))
                for entry in config.get("quotas", [])
            ]
        )
        # Project extension: a [config.inner] table configures the inner slicer on its own, so a
        # QuotaSlice can wrap a CountQuotaSlice with its own entries and inner slicer.
        inner_config = config.get("inner", config)
        inner = build_slicer(config.get("inner_slicer", "greedy"), inner_config)
        return quota_slice(quotas, inner)  # type: ignore[no-any-return]
    if kind in ("count_quota", "count_constrained_knapsack"):
        entry_type = _feature("cupel.slicers", "CountQuotaEntry", "CountQuotaEntry")
        scarcity_type = _feature("cupel.slicers", "ScarcityBehavior", "ScarcityBehavior")
        entries = [
            entry_type(entry["kind"], entry.get("require_count", 0), entry.get("cap_count", 0))
            for entry in config.get("entries", [])
        ]
        scarcity = scarcity_type(config.get("scarcity_behavior", "degrade"))
        if kind == "count_quota":
            count_quota = _feature("cupel.slicers", "CountQuotaSlice", "CountQuotaSlice")
            inner = build_slicer(config.get("inner_slicer", "greedy"), config)
            return count_quota(entries, inner, scarcity)  # type: ignore[no-any-return]
        constrained = _feature(
            "cupel.slicers", "CountConstrainedKnapsackSlice", "CountConstrainedKnapsackSlice"
        )
        knapsack = build_slicer("knapsack", config)
        return constrained(entries, knapsack, scarcity)  # type: ignore[no-any-return]
    raise VectorError(f"unknown slicer type {kind!r}")


def build_placer(kind: str) -> Placer:
    from cupel.placers import ChronologicalPlacer, UShapedPlacer

    if kind == "chronological":
        return ChronologicalPlacer()
    if kind in ("u-shaped", "u_shaped", "ushaped"):
        return UShapedPlacer()
    raise VectorError(f"unknown placer type {kind!r}")


def build_overflow(value: object) -> OverflowStrategy:
    try:
        return OverflowStrategy(str(value).lower())
    except ValueError:
        raise VectorError(f"unknown overflow_strategy {value!r}") from None
