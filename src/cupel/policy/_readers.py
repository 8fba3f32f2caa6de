"""Reading scorer, slicer and placer tables of a policy document into components.

Each reader checks its values and reports problems at their path in the document (``PolicyFileError``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import timedelta
from typing import Any

from cupel import scorers, slicers  # packages whose members are imported on first use
from cupel.model import ContextKind
from cupel.policy._entries import _SCORERS, _SLICERS, _Params, _Reader, _Registry, _type_name
from cupel.policy._values import (
    _array,
    _boolean,
    _check_keys,
    _construct,
    _index,
    _integer,
    _key,
    _kind,
    _number,
    _required,
    _show,
    _string,
    _table,
)
from cupel.policy.durations import DURATION_PATTERN, format_duration, parse_duration
from cupel.policy.errors import PolicyFileError
from cupel.protocols import Scorer, Slicer


def _letters(name: str, *, dashes: bool) -> str:
    parts = []
    for char in name:
        if char.isalpha():
            parts.append(f"[{char.lower()}{char.upper()}]")
        elif char == "_" and dashes:
            parts.append("[-_]")
        else:
            parts.append(re.escape(char))
    return "".join(parts)


def caseless(names: Iterable[str], *, dashes: bool = True) -> dict[str, Any]:
    """A string equal to one of ``names`` after ``strip()``, ``lower()`` (and ``-`` read as ``_``)."""
    alternatives = "|".join(_letters(name, dashes=dashes) for name in names)
    return {"type": "string", "pattern": f"^\\s*(?:{alternatives})\\s*$"}


def spelled(names: Iterable[str], *, dashes: bool = True) -> dict[str, Any]:
    """One of ``names``: the canonical spellings for editors, any spelling the loader reads for checking."""
    canonical = list(names)
    return {"anyOf": [{"enum": canonical}, caseless(canonical, dashes=dashes)]}


# The JSON Schemas of the values the readers below share. The readers take their allowed keys from
# them, and cupel.policy._schema writes them into policy.schema.json: one description of the format.
WEIGHT: dict[str, Any] = {
    "type": "number",
    "exclusiveMinimum": 0,
    "description": (
        "Relative weight among the scorers of a list of two or more; ignored elsewhere. Default 1."
    ),
}
DURATION: dict[str, Any] = {
    "oneOf": [
        {"type": "number", "exclusiveMinimum": 0, "description": "Seconds."},
        {
            "type": "string",
            "pattern": rf"^\s*{DURATION_PATTERN.pattern}\s*$",
            "description": 'Such as "90s", "1h30m", "1.5d"; units d, h, m, s, ms, us.',
        },
    ]
}
KIND: dict[str, Any] = {"type": "string", "pattern": r"\S"}
STEP_WINDOW: dict[str, Any] = {
    "type": "object",
    "properties": {
        "max_age": {"$ref": "#/$defs/duration"},
        "score": {"type": "number", "minimum": 0, "maximum": 1},
    },
    "required": ["max_age", "score"],
    "additionalProperties": False,
}
# curve type -> its parameters
CURVES: dict[str, dict[str, Any]] = {
    "exponential": {"half_life": {"$ref": "#/$defs/duration"}},
    "step": {"windows": {"type": "array", "minItems": 1, "items": STEP_WINDOW}},
    "window": {"max_age": {"$ref": "#/$defs/duration"}},
}
QUOTA_ENTRY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": KIND,
        "require": {"type": "number", "minimum": 0, "maximum": 100, "default": 0},
        "cap": {"type": "number", "minimum": 0, "maximum": 100, "default": 100},
    },
    "required": ["kind"],
    "additionalProperties": False,
}
COUNT_QUOTA_ENTRY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": KIND,
        "require_count": {"type": "integer", "minimum": 0, "default": 0},
        "cap_count": {"type": "integer", "minimum": 0},
    },
    "required": ["kind", "cap_count"],
    "additionalProperties": False,
}


def _read_component(
    value: object, path: str, registry: _Registry, reader: _Reader, extra_keys: tuple[str, ...] = ()
) -> tuple[Any, Mapping[str, Any]]:
    """A component from ``"name"`` or ``{type = "name", ...}``; also returns the table."""
    table: Mapping[str, Any] = {"type": value} if isinstance(value, str) else _table(value, path)
    raw_type = _string(_required(table, path, "type"), _key(path, "type"))
    entry = registry.get(_type_name(raw_type))
    if entry is None:
        raise PolicyFileError(
            _key(path, "type"),
            f"unknown {registry.role} type {_show(raw_type)}; known types: {', '.join(registry.names())}",
        )
    if entry.keys is not None:
        _check_keys(table, path, ("type", *extra_keys, *entry.keys), f"{registry.role} type {entry.name!r}")
    params = {key: item for key, item in table.items() if key != "type" and key not in extra_keys}
    return entry.build(params, path, reader), table


def _read_scorer(value: object, path: str, reader: _Reader) -> tuple[Scorer, float]:
    """A scorer entry and its weight (default 1.0; it matters only in a list of two or more)."""
    scorer, table = _read_component(value, path, _SCORERS, reader, ("weight",))
    weight = 1.0
    if "weight" in table:
        weight = _number(table["weight"], _key(path, "weight"), above=0.0)
    return scorer, weight


def _read_scorer_list(value: object, path: str, reader: _Reader) -> list[tuple[Scorer, float]]:
    entries = _array(value, path)
    if not entries:
        raise PolicyFileError(path, "must contain at least one scorer")
    return [_read_scorer(entry, _index(path, index), reader) for index, entry in enumerate(entries)]


def _read_scorers(value: object, path: str, reader: _Reader) -> Scorer:
    """Top-level ``scorers``: one entry is that scorer; two or more form a CompositeScorer."""
    entries = _read_scorer_list(value, path, reader)
    if len(entries) == 1:
        return entries[0][0]
    return _construct(path, scorers.CompositeScorer, entries)


def _weight_map(value: object, path: str, *, kinds: bool) -> dict[str, float]:
    table = _table(value, path)
    result: dict[str, float] = {}
    seen: dict[str, str] = {}
    for raw_key, raw_weight in table.items():
        key_path = _key(path, str(raw_key))
        if kinds:
            folded = _kind(raw_key, key_path).folded
            if folded in seen:
                raise PolicyFileError(
                    key_path,
                    f"kind {_show(raw_key)} repeats {_show(seen[folded])} (kinds compare case-insensitively)",
                )
            seen[folded] = raw_key
        result[raw_key] = _number(raw_weight, key_path, minimum=0.0)
    return result


def _scorer_kind(params: _Params, path: str, reader: _Reader) -> scorers.KindScorer:
    if "weights" not in params:
        return scorers.KindScorer()
    weights = _weight_map(params["weights"], _key(path, "weights"), kinds=True)
    return _construct(_key(path, "weights"), scorers.KindScorer, weights)


def _scorer_tag(params: _Params, path: str, reader: _Reader) -> scorers.TagScorer:
    weights_path = _key(path, "tag_weights")
    weights = _weight_map(_required(params, path, "tag_weights"), weights_path, kinds=False)
    case_sensitive = True
    if "case_sensitive" in params:
        case_sensitive = _boolean(params["case_sensitive"], _key(path, "case_sensitive"))
    return _construct(weights_path, scorers.TagScorer, weights, case_sensitive=case_sensitive)


def _unit(params: _Params, path: str, key: str, default: float) -> float:
    if key not in params:
        return default
    return _number(params[key], _key(path, key), minimum=0.0, maximum=1.0)


def _scorer_relevance(params: _Params, path: str, reader: _Reader) -> scorers.RelevanceScorer:
    query = None if "query" not in params else _string(params["query"], _key(path, "query"))
    options: dict[str, Any] = {}
    if "k1" in params:
        options["k1"] = _number(params["k1"], _key(path, "k1"), minimum=0.0)
    if "b" in params:
        options["b"] = _number(params["b"], _key(path, "b"), minimum=0.0, maximum=1.0)
    for flag in ("stemming", "stop_words"):
        if flag in params:
            options[flag] = _boolean(params[flag], _key(path, flag))
    if "neighbors" in params:
        options["neighbors"] = _integer(params["neighbors"], _key(path, "neighbors"), minimum=0)
    if "neighbor_weight" in params:
        weight = params["neighbor_weight"]
        options["neighbor_weight"] = _number(weight, _key(path, "neighbor_weight"), minimum=0.0, maximum=1.0)
    return scorers.RelevanceScorer(query, **options)


def _scorer_metadata_trust(params: _Params, path: str, reader: _Reader) -> scorers.MetadataTrustScorer:
    return scorers.MetadataTrustScorer(_unit(params, path, "default_score", 0.5))


def _scorer_metadata_key(params: _Params, path: str, reader: _Reader) -> scorers.MetadataKeyScorer:
    key = _string(_required(params, path, "key"), _key(path, "key"))
    value = _string(_required(params, path, "value"), _key(path, "value"))
    boost = _number(_required(params, path, "boost"), _key(path, "boost"), above=0.0)
    return scorers.MetadataKeyScorer(key, value, boost)


_CURVE_KEYS = {name: tuple(params) for name, params in CURVES.items()}


def _read_curve(
    value: object, path: str
) -> scorers.ExponentialCurve | scorers.StepCurve | scorers.WindowCurve:
    table = _table(value, path)
    raw_type = _string(_required(table, path, "type"), _key(path, "type"))
    curve_type = _type_name(raw_type)
    keys = _CURVE_KEYS.get(curve_type)
    if keys is None:
        raise PolicyFileError(
            _key(path, "type"),
            f"unknown curve type {_show(raw_type)}; known types: {', '.join(sorted(_CURVE_KEYS))}",
        )
    _check_keys(table, path, ("type", *keys), f"curve type {curve_type!r}")
    if curve_type == "exponential":
        key = _key(path, "half_life")
        return scorers.ExponentialCurve(parse_duration(_required(table, path, "half_life"), key))
    if curve_type == "window":
        key = _key(path, "max_age")
        return scorers.WindowCurve(parse_duration(_required(table, path, "max_age"), key))
    windows_path = _key(path, "windows")
    windows: list[tuple[timedelta, float]] = []
    raw_windows = _array(_required(table, path, "windows"), windows_path)
    if not raw_windows:
        raise PolicyFileError(windows_path, "must contain at least one window")
    for index, raw_window in enumerate(raw_windows):
        window_path = _index(windows_path, index)
        window = _table(raw_window, window_path)
        _check_keys(window, window_path, tuple(STEP_WINDOW["properties"]), "a step window")
        max_age = parse_duration(_required(window, window_path, "max_age"), _key(window_path, "max_age"))
        if windows and max_age <= windows[-1][0]:
            raise PolicyFileError(
                _key(window_path, "max_age"),
                f"must be longer than the previous window's ({format_duration(windows[-1][0])}); "
                f"windows are ordered youngest first, got {_show(window['max_age'])}",
            )
        score = _number(
            _required(window, window_path, "score"), _key(window_path, "score"), minimum=0.0, maximum=1.0
        )
        windows.append((max_age, score))
    return _construct(windows_path, scorers.StepCurve, windows)


def _scorer_decay(params: _Params, path: str, reader: _Reader) -> scorers.DecayScorer:
    curve = _read_curve(_required(params, path, "curve"), _key(path, "curve"))
    null_score = _unit(params, path, "null_timestamp_score", 0.5)
    return scorers.DecayScorer(reader.time_provider, curve, null_timestamp_score=null_score)


def _scorer_scaled(params: _Params, path: str, reader: _Reader) -> scorers.ScaledScorer:
    inner, _ = _read_scorer(_required(params, path, "inner"), _key(path, "inner"), reader)
    return scorers.ScaledScorer(inner)


def _scorer_composite(params: _Params, path: str, reader: _Reader) -> scorers.CompositeScorer:
    scorers_path = _key(path, "scorers")
    entries = _read_scorer_list(_required(params, path, "scorers"), scorers_path, reader)
    return _construct(scorers_path, scorers.CompositeScorer, entries)


def _read_slicer(value: object, path: str, reader: _Reader) -> Slicer:
    slicer, _ = _read_component(value, path, _SLICERS, reader)
    result: Slicer = slicer
    return result


def _bucket_size(params: _Params, path: str) -> int:
    if "bucket_size" not in params:
        return 100
    return _integer(params["bucket_size"], _key(path, "bucket_size"), minimum=1)


def _slicer_knapsack(params: _Params, path: str, reader: _Reader) -> slicers.KnapsackSlice:
    return slicers.KnapsackSlice(_bucket_size(params, path))


def _inner_slicer(params: _Params, path: str, reader: _Reader) -> Slicer:
    if "inner" not in params:
        return slicers.GreedySlice()
    return _read_slicer(params["inner"], _key(path, "inner"), reader)


def _entry_tables(
    params: _Params, path: str, key: str, schema: Mapping[str, Any], what: str
) -> Iterator[tuple[str, Mapping[str, Any], ContextKind]]:
    """The per-kind tables of ``params[key]`` with their paths and kinds, keys checked against ``schema``."""
    list_path = _key(path, key)
    for index, raw in enumerate(_array(_required(params, path, key), list_path)):
        entry_path = _index(list_path, index)
        table = _table(raw, entry_path)
        _check_keys(table, entry_path, tuple(schema["properties"]), what)
        yield entry_path, table, _kind(_required(table, entry_path, "kind"), _key(entry_path, "kind"))


def _slicer_quota(params: _Params, path: str, reader: _Reader) -> slicers.QuotaSlice:
    entries: list[slicers.QuotaEntry] = []
    for entry_path, table, kind in _entry_tables(params, path, "quotas", QUOTA_ENTRY, "a quota entry"):
        require = 0.0
        cap = 100.0
        if "require" in table:
            require = _number(table["require"], _key(entry_path, "require"), minimum=0.0, maximum=100.0)
        if "cap" in table:
            cap = _number(table["cap"], _key(entry_path, "cap"), minimum=0.0, maximum=100.0)
        entries.append(_construct(entry_path, slicers.QuotaEntry, kind, require, cap))
    quotas = _construct(_key(path, "quotas"), slicers.QuotaSet, entries)
    inner = _inner_slicer(params, path, reader)
    return _construct(path, slicers.QuotaSlice, quotas, inner)


def _count_entries(params: _Params, path: str) -> list[slicers.CountQuotaEntry]:
    entries: list[slicers.CountQuotaEntry] = []
    tables = _entry_tables(params, path, "entries", COUNT_QUOTA_ENTRY, "a count quota entry")
    for entry_path, table, kind in tables:
        require = 0
        if "require_count" in table:
            require = _integer(table["require_count"], _key(entry_path, "require_count"), minimum=0)
        cap = _integer(_required(table, entry_path, "cap_count"), _key(entry_path, "cap_count"), minimum=0)
        entries.append(_construct(entry_path, slicers.CountQuotaEntry, kind, require, cap))
    return entries


def _scarcity(params: _Params, path: str) -> slicers.ScarcityBehavior:
    if "scarcity" not in params:
        return slicers.ScarcityBehavior.DEGRADE
    key = _key(path, "scarcity")
    text = _string(params["scarcity"], key)
    try:
        return slicers.ScarcityBehavior(text)
    except ValueError:
        known = ", ".join(_show(member.value) for member in slicers.ScarcityBehavior)
        raise PolicyFileError(key, f"must be one of {known}, got {_show(text)}") from None


def _slicer_count_quota(params: _Params, path: str, reader: _Reader) -> slicers.CountQuotaSlice:
    entries = _count_entries(params, path)
    inner = _inner_slicer(params, path, reader)
    scarcity = _scarcity(params, path)
    inner_path = _key(path, "inner")
    return _construct(inner_path, slicers.CountQuotaSlice, entries, inner, scarcity)


def _slicer_count_constrained_knapsack(
    params: _Params, path: str, reader: _Reader
) -> slicers.CountConstrainedKnapsackSlice:
    entries = _count_entries(params, path)
    knapsack = slicers.KnapsackSlice(_bucket_size(params, path))
    scarcity = _scarcity(params, path)
    return _construct(path, slicers.CountConstrainedKnapsackSlice, entries, knapsack, scarcity)
