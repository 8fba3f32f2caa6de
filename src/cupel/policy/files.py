"""Policy files: one declarative schema, written as TOML or JSON (see ``docs/policies.md``).

A policy file is a table with the keys ``scorers``, ``slicer``, ``placer``, ``deduplication``,
``overflow_strategy`` and optionally ``extends`` (a preset name), ``version`` (1) and ``$schema``.
Every component is a table with a ``type`` (or just the type name as a string). The JSON Schema
shipped as ``cupel/policy/policy.schema.json`` (:func:`policy_schema`) describes the same format.

Reading validates everything and names the offending place in the document:
``scorers[1].weight: must be > 0, got -1``. Writing (:func:`dump_policy`) emits the canonical form;
``load -> dump -> load`` gives an equal :class:`~cupel.policy.Policy`. Custom scorer, slicer and
placer types can be registered by name with :func:`register_scorer`, :func:`register_slicer` and
:func:`register_placer`.
"""

from __future__ import annotations

import importlib
import json
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextKind, OverflowStrategy
from cupel.placers import ChronologicalPlacer, UShapedPlacer
from cupel.policy.policy import Policy
from cupel.policy.presets import UnknownPresetError, get_preset, preset_names
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
    SystemTimeProvider,
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
    "FORMAT_VERSION",
    "MissingTomlReaderError",
    "PolicyFileError",
    "PolicyFormat",
    "dump_policy",
    "format_duration",
    "load_policy",
    "loads_policy",
    "parse_duration",
    "policy_from_dict",
    "policy_schema",
    "policy_to_dict",
    "register_placer",
    "register_scorer",
    "register_slicer",
    "registered_types",
    "save_policy",
    "unregister_placer",
    "unregister_scorer",
    "unregister_slicer",
]

#: The policy file format version this module reads and writes.
FORMAT_VERSION = 1

PolicyFormat = Literal["toml", "json"]

_ROOT = "<policy>"


class PolicyFileError(InvalidConfigurationError):
    """A policy document is invalid. ``path`` locates the problem (``scorers[1].weight``).

    ``str(error)`` is ``"{source}: {path}: {problem}"`` (``source``, the file, when known).
    """

    def __init__(self, path: str, problem: str, *, source: str | None = None) -> None:
        self.path = path
        self.problem = problem
        self.source = source
        prefix = f"{source}: " if source else ""
        super().__init__(f"{prefix}{path or _ROOT}: {problem}")

    def with_source(self, source: str) -> PolicyFileError:
        """The same error, naming the file it came from."""
        return PolicyFileError(self.path, self.problem, source=source)

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild_error, (self.path, self.problem, self.source))


def _rebuild_error(path: str, problem: str, source: str | None) -> PolicyFileError:
    return PolicyFileError(path, problem, source=source)


class MissingTomlReaderError(CupelError, ImportError):
    """No TOML reader is installed (``pip install 'pycupel[toml]'``)."""


# --- paths and value checks -----------------------------------------------------------------------

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def _key(path: str, key: str) -> str:
    part = key if _BARE_KEY.fullmatch(key) else json.dumps(key, ensure_ascii=False)
    return f"{path}.{part}" if path else part


def _index(path: str, index: int) -> str:
    return f"{path}[{index}]"


def _show(value: object) -> str:
    """A value as the document spells it, for "got ..." in messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


def _table(value: object, path: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise PolicyFileError(path, f"must be a table, got {_show(value)}")
    return value


def _array(value: object, path: str) -> Sequence[Any]:
    if not isinstance(value, list | tuple):
        raise PolicyFileError(path, f"must be an array, got {_show(value)}")
    return value


def _string(value: object, path: str) -> str:
    if not isinstance(value, str):
        raise PolicyFileError(path, f"must be a string, got {_show(value)}")
    return value


def _boolean(value: object, path: str) -> bool:
    if not isinstance(value, bool):
        raise PolicyFileError(path, f"must be true or false, got {_show(value)}")
    return value


def _number(
    value: object,
    path: str,
    *,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise PolicyFileError(path, f"must be a number, got {_show(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise PolicyFileError(path, f"must be a finite number, got {_show(value)}")
    if above is not None and not number > above:
        raise PolicyFileError(path, f"must be > {above:g}, got {_show(value)}")
    if minimum is not None and number < minimum:
        raise PolicyFileError(path, f"must be >= {minimum:g}, got {_show(value)}")
    if maximum is not None and number > maximum:
        raise PolicyFileError(path, f"must be <= {maximum:g}, got {_show(value)}")
    return number


def _integer(value: object, path: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PolicyFileError(path, f"must be an integer, got {_show(value)}")
    if value < minimum:
        bound = "> 0" if minimum == 1 else f">= {minimum}"
        raise PolicyFileError(path, f"must be {bound}, got {_show(value)}")
    return value


def _kind(value: object, path: str) -> ContextKind:
    text = _string(value, path)
    if not text.strip():
        raise PolicyFileError(path, f"must be a non-blank kind name, got {_show(value)}")
    return ContextKind(text)


def _check_keys(table: Mapping[str, Any], path: str, allowed: Iterable[str], what: str) -> None:
    allowed_keys = tuple(allowed)
    for key in table:
        if key not in allowed_keys:
            known = ", ".join(allowed_keys)
            raise PolicyFileError(_key(path, str(key)), f"unknown key for {what}; allowed keys: {known}")


def _required(table: Mapping[str, Any], path: str, key: str) -> Any:
    if key not in table:
        raise PolicyFileError(_key(path, key), "required")
    return table[key]


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _construct(path: str, build: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """Run a library constructor; its validation message is reported at ``path``."""
    try:
        return build(*args, **kwargs)
    except PolicyFileError:
        raise
    except (CupelError, TypeError, ValueError) as error:
        raise PolicyFileError(path, str(error)) from None


# --- durations ------------------------------------------------------------------------------------

_DURATION = re.compile(r"(?:\d+(?:\.\d+)?(?:us|ms|d|h|m|s))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(us|ms|d|h|m|s)")
_MICROSECONDS = {
    "d": 86_400_000_000,
    "h": 3_600_000_000,
    "m": 60_000_000,
    "s": 1_000_000,
    "ms": 1_000,
    "us": 1,
}


def parse_duration(value: object, path: str = "duration") -> timedelta:
    """A positive duration: seconds as a number, or a string such as ``"90s"``, ``"1h30m"``, ``"1.5d"``.

    Units: ``d``, ``h``, ``m``, ``s``, ``ms``, ``us``. String durations must be whole microseconds.
    """
    if isinstance(value, str):
        text = value.strip()
        if not _DURATION.fullmatch(text):
            raise PolicyFileError(
                path,
                'must be a duration such as "30m", "1h30m" or "2d" (units d, h, m, s, ms, us), '
                f"got {_show(value)}",
            )
        total = sum(
            (Decimal(number) * _MICROSECONDS[unit] for number, unit in _DURATION_PART.findall(text)),
            Decimal(0),
        )
        if total != total.to_integral_value():
            raise PolicyFileError(path, f"must be a whole number of microseconds, got {_show(value)}")
        result = timedelta(microseconds=int(total))
    else:
        seconds = _number(value, path, above=0.0)
        try:
            result = timedelta(seconds=seconds)
        except OverflowError:
            raise PolicyFileError(path, f"is too long, got {_show(value)}") from None
    if result <= timedelta(0):
        raise PolicyFileError(path, f"must be greater than zero, got {_show(value)}")
    return result


def format_duration(duration: timedelta) -> str:
    """The canonical string form :func:`parse_duration` reads back exactly: ``"1h30m"``."""
    remaining = duration // timedelta(microseconds=1)
    if remaining <= 0:
        raise InvalidConfigurationError(f"a policy duration must be positive, got {duration}")
    parts: list[str] = []
    for unit, size in _MICROSECONDS.items():
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


# --- component registries -------------------------------------------------------------------------

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


# --- whole policies -------------------------------------------------------------------------------

_TOP_KEYS = (
    "$schema",
    "version",
    "extends",
    "scorers",
    "slicer",
    "placer",
    "deduplication",
    "overflow_strategy",
)


def _check_time_provider(time_provider: object) -> TimeProvider:
    if time_provider is None:
        return SystemTimeProvider()
    if not callable(getattr(time_provider, "now", None)):
        raise CupelTypeError(f"time_provider must have a now() method, got {time_provider!r}")
    result: TimeProvider = time_provider  # type: ignore[assignment]
    return result


def policy_from_dict(data: Mapping[str, Any], *, time_provider: TimeProvider | None = None) -> Policy:
    """Build a :class:`~cupel.policy.Policy` from a parsed policy document.

    Keys given override the preset named by ``extends`` key by key (``scorers`` replaces the whole
    scorer); without ``extends``, ``scorers``, ``slicer`` and ``placer`` are required and
    ``deduplication`` / ``overflow_strategy`` default to ``true`` / ``"throw"``. DecayScorers read
    ``time_provider`` (default: the system clock). Raises :class:`PolicyFileError`.
    """
    reader = _Reader(_check_time_provider(time_provider))
    root = _table(data, "")
    _check_keys(root, "", _TOP_KEYS, "a policy")
    if "$schema" in root:
        _string(root["$schema"], "$schema")
    if "version" in root:
        version = _integer(root["version"], "version", minimum=1)
        if version != FORMAT_VERSION:
            raise PolicyFileError(
                "version",
                f"unsupported policy file version {version}; this cupel reads version {FORMAT_VERSION}",
            )
    base: Policy | None = None
    if "extends" in root:
        name = _string(root["extends"], "extends")
        try:
            base = get_preset(name)
        except UnknownPresetError:
            raise PolicyFileError(
                "extends", f"unknown preset {_show(name)}; known presets: {', '.join(preset_names())}"
            ) from None

    def inherited(key: str, attribute: str) -> Any:
        if base is None:
            raise PolicyFileError(key, "required (or name a preset to start from with extends)")
        return getattr(base, attribute)

    scorer = (
        _read_scorers(root["scorers"], "scorers", reader)
        if "scorers" in root
        else inherited("scorers", "scorer")
    )
    slicer = (
        _read_slicer(root["slicer"], "slicer", reader) if "slicer" in root else inherited("slicer", "slicer")
    )
    placer: Placer
    if "placer" in root:
        placer, _ = _read_component(root["placer"], "placer", _PLACERS, reader)
    else:
        placer = inherited("placer", "placer")
    deduplication = base.deduplication if base is not None else True
    if "deduplication" in root:
        deduplication = _boolean(root["deduplication"], "deduplication")
    overflow = base.overflow_strategy if base is not None else OverflowStrategy.THROW
    if "overflow_strategy" in root:
        text = _string(root["overflow_strategy"], "overflow_strategy")
        try:
            overflow = OverflowStrategy(text.strip().lower())
        except ValueError:
            known = ", ".join(_show(strategy.value) for strategy in OverflowStrategy)
            raise PolicyFileError("overflow_strategy", f"must be one of {known}, got {_show(text)}") from None
    return _construct("", Policy, scorer, slicer, placer, deduplication, overflow)


def policy_to_dict(policy: Policy) -> dict[str, Any]:
    """The canonical policy document for ``policy``: plain values, keys in a fixed order.

    ``extends`` is never written (the result is self-contained) and a DecayScorer's clock is not part
    of the document. Raises :class:`~cupel.errors.CupelTypeError` for a component that is neither
    built in nor registered with a ``to_config``.
    """
    if not isinstance(policy, Policy):
        raise CupelTypeError(f"policy must be a Policy, got {type(policy).__name__}")
    return {
        "version": FORMAT_VERSION,
        "scorers": _dump_scorers(policy.scorer),
        "slicer": _dump_slicer(policy.slicer),
        "placer": _dump_placer(policy.placer),
        "deduplication": policy.deduplication,
        "overflow_strategy": policy.overflow_strategy.value,
    }


# --- TOML and JSON text ---------------------------------------------------------------------------


def _check_format(format: object) -> PolicyFormat:
    if isinstance(format, str) and format.strip().lower() in ("toml", "json"):
        return "json" if format.strip().lower() == "json" else "toml"
    raise InvalidConfigurationError(f"format must be 'toml' or 'json', got {format!r}")


def _sniff(text: str) -> PolicyFormat:
    return "json" if text.lstrip("\ufeff \t\r\n").startswith("{") else "toml"


def _parse_toml(text: str) -> Any:
    try:
        module = importlib.import_module("tomli")
    except ImportError:
        try:
            module = importlib.import_module("tomllib")
        except ImportError:
            raise MissingTomlReaderError(
                "reading TOML policy files needs the tomli package: pip install 'pycupel[toml]'"
            ) from None
    try:
        return module.loads(text)
    except module.TOMLDecodeError as error:
        raise PolicyFileError("", f"invalid TOML: {error}") from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise PolicyFileError("", f"invalid JSON: duplicate key {_show(key)}")
        result[key] = value
    return result


def _reject_constant(name: str) -> Any:
    raise PolicyFileError("", f"invalid JSON: {name} is not a number")


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise PolicyFileError("", f"invalid JSON: {error}") from None


def loads_policy(
    text: str | bytes, format: PolicyFormat | None = None, *, time_provider: TimeProvider | None = None
) -> Policy:
    """Read a policy from TOML or JSON text; ``format=None`` takes JSON when the text starts with ``{``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    if not isinstance(text, str):
        raise CupelTypeError(f"text must be a str or bytes, got {type(text).__name__}")
    chosen = _sniff(text) if format is None else _check_format(format)
    data = _parse_json(text.lstrip("\ufeff")) if chosen == "json" else _parse_toml(text)
    return policy_from_dict(data, time_provider=time_provider)


def _is_file(text: str) -> bool:
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def _looks_like_text(text: str) -> bool:
    stripped = text.strip()
    return "\n" in stripped or stripped.startswith("{") or "=" in stripped


def load_policy(
    path_or_text: str | bytes | os.PathLike[str],
    *,
    format: PolicyFormat | None = None,
    time_provider: TimeProvider | None = None,
) -> Policy:
    """Read a policy file, or policy text.

    A path-like is a file. A ``str`` is a file when it names an existing one, and policy text when it
    contains a newline, ``=`` or starts with ``{``; otherwise it is a file name (and a missing file
    raises ``FileNotFoundError``). ``bytes`` are text. Without ``format``, ``.json`` files are JSON,
    ``.toml`` files TOML, and anything else is sniffed (``{`` means JSON). Errors in the document
    raise :class:`PolicyFileError` naming the file and the place in it.
    """
    if isinstance(path_or_text, bytes):
        return loads_policy(path_or_text, format, time_provider=time_provider)
    if isinstance(path_or_text, str) and not _is_file(path_or_text) and _looks_like_text(path_or_text):
        return loads_policy(path_or_text, format, time_provider=time_provider)
    if not isinstance(path_or_text, str | os.PathLike):
        raise CupelTypeError(f"path_or_text must be a path or policy text, got {type(path_or_text).__name__}")
    path = Path(path_or_text)
    text = path.read_text(encoding="utf-8-sig")
    if format is None:
        suffix = path.suffix.lower()
        format = "json" if suffix == ".json" else "toml" if suffix == ".toml" else _sniff(text)
    try:
        return loads_policy(text, format, time_provider=time_provider)
    except PolicyFileError as error:
        raise error.with_source(str(path)) from None


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(text: str) -> str:
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in _TOML_ESCAPES:
            parts.append(_TOML_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            parts.append(f"\\u{code:04X}")
        elif 0xD800 <= code <= 0xDFFF:
            raise InvalidConfigurationError(f"a policy file cannot hold a lone surrogate: {text!r}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return repr(value)  # shortest round-trip form: "0.5", "1e-07", "3.0"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return (
            "{ " + ", ".join(f"{_toml_key(key)} = {_toml_value(item)}" for key, item in value.items()) + " }"
        )
    raise CupelTypeError(f"cannot write {value!r} ({type(value).__name__}) as TOML")


def toml_dumps(data: Mapping[str, Any]) -> str:
    """TOML for a table of plain values: top-level ``key = value`` lines, inline tables below them.

    A top-level array of tables is written one element per line. Covers everything policy documents
    hold: strings, booleans, integers, floats, arrays and tables.
    """
    lines: list[str] = []
    for key, value in data.items():
        if not isinstance(key, str):
            raise CupelTypeError(f"TOML keys must be strings, got {key!r}")
        if isinstance(value, list | tuple) and value and all(isinstance(item, Mapping) for item in value):
            lines.append(f"{_toml_key(key)} = [")
            lines.extend(f"    {_toml_value(item)}," for item in value)
            lines.append("]")
        else:
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def dump_policy(policy: Policy, format: PolicyFormat = "toml") -> str:
    """The policy as canonical TOML (default) or JSON text; :func:`loads_policy` reads it back equal."""
    chosen = _check_format(format)
    data = policy_to_dict(policy)
    if chosen == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return toml_dumps(data)


def save_policy(policy: Policy, path: str | os.PathLike[str], *, format: PolicyFormat | None = None) -> None:
    """Write the policy to ``path`` (UTF-8); the format follows the suffix (``.json``), else TOML."""
    target = Path(path)
    chosen = (
        _check_format(format)
        if format is not None
        else ("json" if target.suffix.lower() == ".json" else "toml")
    )
    target.write_text(dump_policy(policy, chosen), encoding="utf-8")


def policy_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of policy documents, shipped as ``policy.schema.json``."""
    text = resources.files("cupel.policy").joinpath("policy.schema.json").read_text(encoding="utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
