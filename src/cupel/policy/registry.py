"""Scorer, slicer and placer types by name: the registries, the built-in types, reading and writing them.

Every component in a policy file is ``{type = "name", ...}`` (or just ``"name"``). The built-in
types are registered here; custom ones are added with :func:`register_scorer`,
:func:`register_slicer` and :func:`register_placer`.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.placers import ChronologicalPlacer, UShapedPlacer
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
from cupel.policy.durations import format_duration, parse_duration
from cupel.policy.errors import PolicyFileError
from cupel.protocols import Placer, Scorer, Slicer, TimeProvider
from cupel.scorers import (
    CompositeScorer,
    DecayScorer,
    ExponentialCurve,
    FrequencyScorer,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    StepCurve,
    TagScorer,
    WindowCurve,
)
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    GreedySlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSet,
    QuotaSlice,
    ScarcityBehavior,
)

__all__ = [
    "register_placer",
    "register_scorer",
    "register_slicer",
    "registered_types",
    "unregister_placer",
    "unregister_scorer",
    "unregister_slicer",
]

_Params = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class _Reader:
    """What reading needs besides the document: the clock for DecayScorer."""

    time_provider: TimeProvider


@dataclass(frozen=True, slots=True)
class _Entry:
    """One component type: how to build it from a table and how to write it back."""

    name: str
    cls: type | None
    build: Callable[[_Params, str, _Reader], Any]
    dump: Callable[[Any], dict[str, Any]] | None
    keys: tuple[str, ...] | None  # the parameters a built-in type allows; None for custom types
    builtin: bool


class _Registry:
    """Type name -> component, for one role (scorer, slicer or placer). Thread-safe."""

    def __init__(self, role: str) -> None:
        self.role = role
        self._lock = threading.Lock()
        self._by_name: dict[str, _Entry] = {}
        self._by_class: dict[type, _Entry] = {}

    def add(self, entry: _Entry, *, replace: bool = False) -> None:
        with self._lock:
            current = self._by_name.get(entry.name)
            if current is not None and (current.builtin or not replace):
                what = "a built-in" if current.builtin else "an already registered"
                raise InvalidConfigurationError(
                    f"{entry.name!r} is {what} {self.role} type"
                    + ("" if current.builtin else "; pass replace=True to replace it")
                )
            if entry.cls is not None:
                owner = self._by_class.get(entry.cls)
                if owner is not None and owner.name != entry.name:
                    raise InvalidConfigurationError(
                        f"{entry.cls.__name__} is already registered as {self.role} type {owner.name!r}"
                    )
            if current is not None and current.cls is not None:
                del self._by_class[current.cls]
            self._by_name[entry.name] = entry
            if entry.cls is not None:
                self._by_class[entry.cls] = entry

    def remove(self, name: str) -> None:
        with self._lock:
            entry = self._by_name.get(_type_name(name))
            if entry is None or entry.builtin:
                raise InvalidConfigurationError(f"{name!r} is not a registered custom {self.role} type")
            del self._by_name[entry.name]
            if entry.cls is not None:
                del self._by_class[entry.cls]

    def get(self, name: str) -> _Entry | None:
        with self._lock:
            return self._by_name.get(name)

    def for_object(self, value: object) -> _Entry | None:
        with self._lock:
            return self._by_class.get(type(value))

    def names(self) -> tuple[str, ...]:
        with self._lock:
            return tuple(sorted(self._by_name))


_SCORERS = _Registry("scorer")
_SLICERS = _Registry("slicer")
_PLACERS = _Registry("placer")

_NAME = re.compile(r"[a-z][a-z0-9_.]*")


def _type_name(name: str) -> str:
    """Type names compare case-insensitively, with ``-`` and ``_`` interchangeable."""
    return name.strip().lower().replace("-", "_")


def _register(
    registry: _Registry,
    name: str,
    factory: Callable[..., Any],
    to_config: Callable[[Any], Mapping[str, Any]] | None,
    cls: type | None,
    replace: bool,
) -> None:
    if not isinstance(name, str):
        raise CupelTypeError(f"register_{registry.role}: name must be a string, got {name!r}")
    normalized = _type_name(name)
    if not _NAME.fullmatch(normalized):
        raise InvalidConfigurationError(
            f"register_{registry.role}: name must start with a letter and contain only letters, digits, "
            f"'_', '-' and '.', got {name!r}"
        )
    if not callable(factory):
        raise CupelTypeError(f"register_{registry.role}: factory must be callable, got {factory!r}")
    if to_config is not None and not callable(to_config):
        raise CupelTypeError(f"register_{registry.role}: to_config must be callable, got {to_config!r}")
    if cls is None and isinstance(factory, type):
        cls = factory
    if cls is not None and not isinstance(cls, type):
        raise CupelTypeError(f"register_{registry.role}: cls must be a class, got {cls!r}")
    role = registry.role

    def build(params: _Params, path: str, reader: _Reader) -> Any:
        try:
            return factory(**params)
        except (CupelError, TypeError, ValueError) as error:
            raise PolicyFileError(path, f"{role} type {normalized!r}: {error}") from None

    def dump(value: Any) -> dict[str, Any]:
        if to_config is None:
            raise CupelTypeError(
                f"{role} type {normalized!r} was registered without to_config, so {value!r} cannot be "
                "written to a policy file"
            )
        config = to_config(value)
        if not isinstance(config, Mapping):
            raise CupelTypeError(
                f"to_config of {role} type {normalized!r} must return a mapping, got {config!r}"
            )
        params = dict(config)
        if "type" in params:
            raise CupelTypeError(f"to_config of {role} type {normalized!r} must not return a 'type' key")
        return params

    registry.add(_Entry(normalized, cls, build, dump, None, False), replace=replace)


def register_scorer(
    name: str,
    factory: Callable[..., Scorer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` usable as a scorer in policy files.

    ``factory(**params)`` builds the scorer from the entry's keys other than ``type`` and ``weight``
    (plain TOML/JSON values). ``to_config(scorer)`` returns those keys back, for writing; instances
    are matched to the registration by exact class, ``cls`` (default: ``factory`` when it is a
    class). Built-in names cannot be taken; an existing custom name only with ``replace=True``.
    """
    _register(_SCORERS, name, factory, to_config, cls, replace)


def register_slicer(
    name: str,
    factory: Callable[..., Slicer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` usable as a slicer in policy files (see :func:`register_scorer`)."""
    _register(_SLICERS, name, factory, to_config, cls, replace)


def register_placer(
    name: str,
    factory: Callable[..., Placer],
    *,
    to_config: Callable[[Any], Mapping[str, Any]] | None = None,
    cls: type | None = None,
    replace: bool = False,
) -> None:
    """Make ``{type = name, ...}`` (or ``"name"``) usable as a placer in policy files."""
    _register(_PLACERS, name, factory, to_config, cls, replace)


def unregister_scorer(name: str) -> None:
    """Forget a custom scorer type."""
    _SCORERS.remove(name)


def unregister_slicer(name: str) -> None:
    """Forget a custom slicer type."""
    _SLICERS.remove(name)


def unregister_placer(name: str) -> None:
    """Forget a custom placer type."""
    _PLACERS.remove(name)


def registered_types() -> dict[str, tuple[str, ...]]:
    """The type names policy files accept, built-in and custom, per role, sorted."""
    return {"scorer": _SCORERS.names(), "slicer": _SLICERS.names(), "placer": _PLACERS.names()}


def _builtin(
    registry: _Registry,
    name: str,
    cls: type,
    keys: tuple[str, ...],
    build: Callable[[_Params, str, _Reader], Any],
    dump: Callable[[Any], dict[str, Any]],
) -> None:
    registry.add(_Entry(name, cls, build, dump, keys, True))


# --- reading components ---------------------------------------------------------------------------


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
    return _construct(path, CompositeScorer, entries)


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


def _scorer_kind(params: _Params, path: str, reader: _Reader) -> KindScorer:
    if "weights" not in params:
        return KindScorer()
    weights = _weight_map(params["weights"], _key(path, "weights"), kinds=True)
    return _construct(_key(path, "weights"), KindScorer, weights)


def _scorer_tag(params: _Params, path: str, reader: _Reader) -> TagScorer:
    weights_path = _key(path, "tag_weights")
    weights = _weight_map(_required(params, path, "tag_weights"), weights_path, kinds=False)
    case_sensitive = True
    if "case_sensitive" in params:
        case_sensitive = _boolean(params["case_sensitive"], _key(path, "case_sensitive"))
    return _construct(weights_path, TagScorer, weights, case_sensitive=case_sensitive)


def _unit(params: _Params, path: str, key: str, default: float) -> float:
    if key not in params:
        return default
    return _number(params[key], _key(path, key), minimum=0.0, maximum=1.0)


def _scorer_metadata_trust(params: _Params, path: str, reader: _Reader) -> MetadataTrustScorer:
    return MetadataTrustScorer(_unit(params, path, "default_score", 0.5))


def _scorer_metadata_key(params: _Params, path: str, reader: _Reader) -> MetadataKeyScorer:
    key = _string(_required(params, path, "key"), _key(path, "key"))
    value = _string(_required(params, path, "value"), _key(path, "value"))
    boost = _number(_required(params, path, "boost"), _key(path, "boost"), above=0.0)
    return MetadataKeyScorer(key, value, boost)


_CURVE_KEYS = {"exponential": ("half_life",), "step": ("windows",), "window": ("max_age",)}


def _read_curve(value: object, path: str) -> ExponentialCurve | StepCurve | WindowCurve:
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
        return ExponentialCurve(parse_duration(_required(table, path, "half_life"), key))
    if curve_type == "window":
        key = _key(path, "max_age")
        return WindowCurve(parse_duration(_required(table, path, "max_age"), key))
    windows_path = _key(path, "windows")
    windows: list[tuple[timedelta, float]] = []
    raw_windows = _array(_required(table, path, "windows"), windows_path)
    if not raw_windows:
        raise PolicyFileError(windows_path, "must contain at least one window")
    for index, raw_window in enumerate(raw_windows):
        window_path = _index(windows_path, index)
        window = _table(raw_window, window_path)
        _check_keys(window, window_path, ("max_age", "score"), "a step window")
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
    return _construct(windows_path, StepCurve, windows)


def _scorer_decay(params: _Params, path: str, reader: _Reader) -> DecayScorer:
    curve = _read_curve(_required(params, path, "curve"), _key(path, "curve"))
    null_score = _unit(params, path, "null_timestamp_score", 0.5)
    return DecayScorer(reader.time_provider, curve, null_timestamp_score=null_score)


def _scorer_scaled(params: _Params, path: str, reader: _Reader) -> ScaledScorer:
    inner, _ = _read_scorer(_required(params, path, "inner"), _key(path, "inner"), reader)
    return ScaledScorer(inner)


def _scorer_composite(params: _Params, path: str, reader: _Reader) -> CompositeScorer:
    scorers_path = _key(path, "scorers")
    entries = _read_scorer_list(_required(params, path, "scorers"), scorers_path, reader)
    return _construct(scorers_path, CompositeScorer, entries)


def _read_slicer(value: object, path: str, reader: _Reader) -> Slicer:
    slicer, _ = _read_component(value, path, _SLICERS, reader)
    result: Slicer = slicer
    return result


def _bucket_size(params: _Params, path: str) -> int:
    if "bucket_size" not in params:
        return 100
    return _integer(params["bucket_size"], _key(path, "bucket_size"), minimum=1)


def _slicer_knapsack(params: _Params, path: str, reader: _Reader) -> KnapsackSlice:
    return KnapsackSlice(_bucket_size(params, path))


def _inner_slicer(params: _Params, path: str, reader: _Reader) -> Slicer:
    if "inner" not in params:
        return GreedySlice()
    return _read_slicer(params["inner"], _key(path, "inner"), reader)


def _slicer_quota(params: _Params, path: str, reader: _Reader) -> QuotaSlice:
    quotas_path = _key(path, "quotas")
    entries: list[QuotaEntry] = []
    for index, raw in enumerate(_array(_required(params, path, "quotas"), quotas_path)):
        entry_path = _index(quotas_path, index)
        table = _table(raw, entry_path)
        _check_keys(table, entry_path, ("kind", "require", "cap"), "a quota entry")
        kind = _kind(_required(table, entry_path, "kind"), _key(entry_path, "kind"))
        require = 0.0
        cap = 100.0
        if "require" in table:
            require = _number(table["require"], _key(entry_path, "require"), minimum=0.0, maximum=100.0)
        if "cap" in table:
            cap = _number(table["cap"], _key(entry_path, "cap"), minimum=0.0, maximum=100.0)
        entries.append(_construct(entry_path, QuotaEntry, kind, require, cap))
    quotas = _construct(quotas_path, QuotaSet, entries)
    inner = _inner_slicer(params, path, reader)
    return _construct(path, QuotaSlice, quotas, inner)


def _count_entries(params: _Params, path: str) -> list[CountQuotaEntry]:
    entries_path = _key(path, "entries")
    entries: list[CountQuotaEntry] = []
    for index, raw in enumerate(_array(_required(params, path, "entries"), entries_path)):
        entry_path = _index(entries_path, index)
        table = _table(raw, entry_path)
        _check_keys(table, entry_path, ("kind", "require_count", "cap_count"), "a count quota entry")
        kind = _kind(_required(table, entry_path, "kind"), _key(entry_path, "kind"))
        require = 0
        if "require_count" in table:
            require = _integer(table["require_count"], _key(entry_path, "require_count"), minimum=0)
        cap = _integer(_required(table, entry_path, "cap_count"), _key(entry_path, "cap_count"), minimum=0)
        entries.append(_construct(entry_path, CountQuotaEntry, kind, require, cap))
    return entries


def _scarcity(params: _Params, path: str) -> ScarcityBehavior:
    if "scarcity" not in params:
        return ScarcityBehavior.DEGRADE
    key = _key(path, "scarcity")
    text = _string(params["scarcity"], key)
    try:
        return ScarcityBehavior(text)
    except ValueError:
        known = ", ".join(_show(member.value) for member in ScarcityBehavior)
        raise PolicyFileError(key, f"must be one of {known}, got {_show(text)}") from None


def _slicer_count_quota(params: _Params, path: str, reader: _Reader) -> CountQuotaSlice:
    entries = _count_entries(params, path)
    inner = _inner_slicer(params, path, reader)
    scarcity = _scarcity(params, path)
    inner_path = _key(path, "inner")
    return _construct(inner_path, CountQuotaSlice, entries, inner, scarcity)


def _slicer_count_constrained_knapsack(
    params: _Params, path: str, reader: _Reader
) -> CountConstrainedKnapsackSlice:
    entries = _count_entries(params, path)
    knapsack = KnapsackSlice(_bucket_size(params, path))
    scarcity = _scarcity(params, path)
    return _construct(path, CountConstrainedKnapsackSlice, entries, knapsack, scarcity)


# --- writing components ---------------------------------------------------------------------------


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


def _scorer_entries(scorer: CompositeScorer) -> list[dict[str, Any]]:
    return [_scorer_entry(child, weight) for child, weight in scorer.entries]


def _dump_scorers(scorer: Scorer) -> list[dict[str, Any]]:
    """Top-level ``scorers``; a composite of two or more children is written as the list itself."""
    if type(scorer) is CompositeScorer and len(scorer.entries) >= 2:
        return _scorer_entries(scorer)
    return [_scorer_entry(scorer, None)]


def _no_params(value: object) -> dict[str, Any]:
    return {}


def _dump_kind(scorer: KindScorer) -> dict[str, Any]:
    if scorer == KindScorer():
        return {}
    return {"weights": {str(kind): weight for kind, weight in scorer.weights.items()}}


def _dump_curve(curve: ExponentialCurve | StepCurve | WindowCurve) -> dict[str, Any]:
    if isinstance(curve, ExponentialCurve):
        return {"type": "exponential", "half_life": format_duration(curve.half_life)}
    if isinstance(curve, WindowCurve):
        return {"type": "window", "max_age": format_duration(curve.max_age)}
    return {
        "type": "step",
        "windows": [{"max_age": format_duration(age), "score": score} for age, score in curve.windows],
    }


def _dump_slicer(slicer: object) -> dict[str, Any]:
    return _component_table(slicer, _SLICERS)


def _dump_count_entries(entries: Iterable[CountQuotaEntry]) -> list[dict[str, Any]]:
    return [
        {"kind": str(entry.kind), "require_count": entry.require_count, "cap_count": entry.cap_count}
        for entry in entries
    ]


def _dump_placer(placer: object) -> str | dict[str, Any]:
    table = _component_table(placer, _PLACERS)
    return table["type"] if len(table) == 1 else table


_builtin(_SCORERS, "recency", RecencyScorer, (), lambda p, path, r: RecencyScorer(), _no_params)
_builtin(_SCORERS, "priority", PriorityScorer, (), lambda p, path, r: PriorityScorer(), _no_params)
_builtin(_SCORERS, "frequency", FrequencyScorer, (), lambda p, path, r: FrequencyScorer(), _no_params)
_builtin(_SCORERS, "reflexive", ReflexiveScorer, (), lambda p, path, r: ReflexiveScorer(), _no_params)
_builtin(_SCORERS, "kind", KindScorer, ("weights",), _scorer_kind, _dump_kind)
_builtin(
    _SCORERS,
    "tag",
    TagScorer,
    ("tag_weights", "case_sensitive"),
    _scorer_tag,
    lambda s: {"tag_weights": dict(s.tag_weights), "case_sensitive": s.case_sensitive},
)
_builtin(
    _SCORERS,
    "metadata_trust",
    MetadataTrustScorer,
    ("default_score",),
    _scorer_metadata_trust,
    lambda s: {"default_score": s.default_score},
)
_builtin(
    _SCORERS,
    "metadata_key",
    MetadataKeyScorer,
    ("key", "value", "boost"),
    _scorer_metadata_key,
    lambda s: {"key": s.key, "value": s.value, "boost": s.boost},
)
_builtin(
    _SCORERS,
    "decay",
    DecayScorer,
    ("curve", "null_timestamp_score"),
    _scorer_decay,
    lambda s: {"curve": _dump_curve(s.curve), "null_timestamp_score": s.null_timestamp_score},
)
_builtin(
    _SCORERS,
    "scaled",
    ScaledScorer,
    ("inner",),
    _scorer_scaled,
    lambda s: {"inner": _scorer_entry(s.inner, None)},
)
_builtin(
    _SCORERS,
    "composite",
    CompositeScorer,
    ("scorers",),
    _scorer_composite,
    lambda s: {"scorers": _scorer_entries(s)},
)

_builtin(_SLICERS, "greedy", GreedySlice, (), lambda p, path, r: GreedySlice(), _no_params)
_builtin(
    _SLICERS,
    "knapsack",
    KnapsackSlice,
    ("bucket_size",),
    _slicer_knapsack,
    lambda s: {"bucket_size": s.bucket_size},
)
_builtin(
    _SLICERS,
    "quota",
    QuotaSlice,
    ("quotas", "inner"),
    _slicer_quota,
    lambda s: {
        "quotas": [
            {"kind": str(entry.kind), "require": entry.require, "cap": entry.cap} for entry in s.quotas
        ],
        "inner": _dump_slicer(s.inner),
    },
)
_builtin(
    _SLICERS,
    "count_quota",
    CountQuotaSlice,
    ("entries", "inner", "scarcity"),
    _slicer_count_quota,
    lambda s: {
        "entries": _dump_count_entries(s.entries),
        "inner": _dump_slicer(s.inner),
        "scarcity": s.scarcity.value,
    },
)
_builtin(
    _SLICERS,
    "count_constrained_knapsack",
    CountConstrainedKnapsackSlice,
    ("entries", "bucket_size", "scarcity"),
    _slicer_count_constrained_knapsack,
    lambda s: {
        "entries": _dump_count_entries(s.entries),
        "bucket_size": s.knapsack.bucket_size,
        "scarcity": s.scarcity.value,
    },
)

_builtin(
    _PLACERS, "chronological", ChronologicalPlacer, (), lambda p, path, r: ChronologicalPlacer(), _no_params
)
_builtin(_PLACERS, "u_shaped", UShapedPlacer, (), lambda p, path, r: UShapedPlacer(), _no_params)
