"""Writing components back as the tables of a canonical policy document."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from cupel import scorers, slicers  # packages whose members are imported on first use
from cupel.errors import CupelTypeError
from cupel.policy._entries import _PLACERS, _SCORERS, _SLICERS, _Registry
from cupel.policy.durations import format_duration
from cupel.protocols import Scorer


def _component_table(value: object, registry: _Registry) -> dict[str, Any]:
    entry = registry.for_object(value)
    if entry is None or entry.dump is None:
        raise CupelTypeError(
            f"{value!r} cannot be written to a policy file: {type(value).__name__} is neither a built-in "
            f"{registry.role} nor registered with register_{registry.role}()"
        )
    params = entry.dump(value)
    _check_plain(params, f"{registry.role} type {entry.name!r}")
    return {"type": entry.name, **params}


def _check_plain(value: object, owner: str) -> None:
    """Only what TOML and JSON can both hold: strings, booleans, numbers, arrays and tables."""
    if isinstance(value, str | bool | int):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise CupelTypeError(f"{owner}: policy files cannot hold the non-finite number {value!r}")
        return
    if isinstance(value, list | tuple):
        for item in value:
            _check_plain(item, owner)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                raise CupelTypeError(f"{owner}: policy file keys must be strings, got {key!r}")
            _check_plain(item, owner)
        return
    raise CupelTypeError(f"{owner}: policy files cannot hold {value!r} ({type(value).__name__})")


def _scorer_entry(scorer: object, weight: float | None) -> dict[str, Any]:
    table = _component_table(scorer, _SCORERS)
    if weight is None:
        return table
    # Keep "type" first and "weight" second: canonical files read naturally.
    return {"type": table.pop("type"), "weight": weight, **table}


def _scorer_entries(scorer: scorers.CompositeScorer) -> list[dict[str, Any]]:
    return [_scorer_entry(child, weight) for child, weight in scorer.entries]


def _dump_scorers(scorer: Scorer) -> list[dict[str, Any]]:
    """Top-level ``scorers``; a composite of two or more children is written as the list itself."""
    if type(scorer) is scorers.CompositeScorer and len(scorer.entries) >= 2:
        return _scorer_entries(scorer)
    return [_scorer_entry(scorer, None)]


def _no_params(value: object) -> dict[str, Any]:
    return {}


def _dump_relevance(scorer: scorers.RelevanceScorer) -> dict[str, Any]:
    if scorer.embedder is not None:
        raise CupelTypeError("RelevanceScorer: an embedder cannot be written to a policy file")
    table: dict[str, Any] = {} if scorer.query is None else {"query": scorer.query}
    defaults = scorers.RelevanceScorer()
    for name in ("k1", "b", "stemming", "stop_words", "neighbors", "neighbor_weight"):
        if getattr(scorer, name) != getattr(defaults, name):
            table[name] = getattr(scorer, name)
    return table


def _dump_kind(scorer: scorers.KindScorer) -> dict[str, Any]:
    if scorer == scorers.KindScorer():
        return {}
    return {"weights": {str(kind): weight for kind, weight in scorer.weights.items()}}


def _dump_curve(curve: scorers.ExponentialCurve | scorers.StepCurve | scorers.WindowCurve) -> dict[str, Any]:
    if isinstance(curve, scorers.ExponentialCurve):
        return {"type": "exponential", "half_life": format_duration(curve.half_life)}
    if isinstance(curve, scorers.WindowCurve):
        return {"type": "window", "max_age": format_duration(curve.max_age)}
    return {
        "type": "step",
        "windows": [{"max_age": format_duration(age), "score": score} for age, score in curve.windows],
    }


def _dump_slicer(slicer: object) -> dict[str, Any]:
    return _component_table(slicer, _SLICERS)


def _dump_count_entries(entries: Iterable[slicers.CountQuotaEntry]) -> list[dict[str, Any]]:
    return [
        {"kind": str(entry.kind), "require_count": entry.require_count, "cap_count": entry.cap_count}
        for entry in entries
    ]


def _dump_placer(placer: object) -> str | dict[str, Any]:
    table = _component_table(placer, _PLACERS)
    return table["type"] if len(table) == 1 else table
