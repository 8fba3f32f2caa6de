"""The JSON wire format's shared machinery, below every type it serialises.

Each wire-format type names its codec with ``_wire``; the module that defines the type registers the
codec (``register_codec``) beside it, so ``to_dict``/``from_dict`` never import upwards. Items and
budgets are converted here, against the class they are given, because :mod:`cupel.model` sits just
above this module. :mod:`cupel.wire` is the public face of all converters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from datetime import datetime

from cupel._floats import to_float
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any, ClassVar, Self, TypeVar

    T = TypeVar("T")

# codec name -> (to_dict(value), from_dict(cls, data, path))
_CODECS: dict[str, tuple[Callable[[Any], dict[str, Any]], Callable[[Any, object, str], Any]]] = {}


def register_codec(
    name: str, to_dict: Callable[[Any], dict[str, Any]], from_dict: Callable[[Any, object, str], Any]
) -> None:
    """Register the converters of the wire-format types whose ``_wire`` is ``name``."""
    _CODECS[name] = (to_dict, from_dict)


class WireFormat:
    """Adds ``to_dict``/``to_json`` and ``from_dict``/``from_json``.

    ``_wire`` names the codec registered by the module that defines the type: ``"item"`` means the
    item converters.
    """

    __slots__ = ()
    _wire: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        """The JSON wire form (see :mod:`cupel.wire`)."""
        return _CODECS[self._wire][0](self)

    def to_json(self, *, indent: int | None = None) -> str:
        return dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Self:
        """Read the JSON wire form; errors name the offending field."""
        value: Self = _CODECS[cls._wire][1](cls, data, cls._wire)
        return value

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Read strict JSON text; every problem raises a :class:`~cupel.errors.CupelError`."""
        return cls.from_dict(loads(text))


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Strict (RFC 8259) JSON text, with a clear error for values JSON cannot represent.

    Scores and hints are already encoded by :func:`number_to_wire`; a NaN or infinity left elsewhere (in
    metadata) is an error rather than the bare ``NaN`` strict parsers reject.
    """
    import json  # imported on use: it compiles regular expressions, a cost for ``import cupel``

    try:
        return json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise CupelTypeError(f"value cannot be written as JSON: {error}") from None


def loads(text: str | bytes, source: str = "", *, unique_keys: bool = False) -> Any:
    """Parse wire-format JSON with the project's one reader (strict UTF-8 and RFC 8259, depth limit);
    ``unique_keys`` also refuses a key given twice in one object."""
    from cupel import _input  # imported on use, like json: reading is not needed by ``import cupel``

    if isinstance(text, bytes | bytearray):
        text = _input.decode_text(bytes(text), source)
    if not isinstance(text, str):
        raise CupelTypeError(f"JSON text must be str or bytes, got {type(text).__name__}")
    return _input.loads_json(text, source, object_pairs_hook=_input.unique_keys if unique_keys else None)


#: How non-finite numbers are written: RFC 8259 JSON has no NaN or infinities, so they become strings.
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}


def number_to_wire(value: float) -> float | str:
    """A score or hint for JSON: finite numbers as numbers; NaN and infinities as ``"NaN"``,
    ``"Infinity"`` and ``"-Infinity"`` (the strings :func:`number_from_wire` reads back)."""
    if math.isfinite(value):
        return value
    return "NaN" if math.isnan(value) else "Infinity" if value > 0 else "-Infinity"


def number_from_wire(value: object, path: str) -> float:
    """A JSON number, or one of the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``."""
    if isinstance(value, str) and value in _NON_FINITE:
        return _NON_FINITE[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        expected = 'a number (or "NaN", "Infinity", "-Infinity")'
        raise fail(path, f"must be {expected}, got {value!r}", type_error=True)
    return to_float(value)


def require_array(mapping: Mapping[str, Any], key: str, path: str) -> list[Any]:
    """``mapping[key]`` as a list; anything but a JSON array is an error naming ``path.key``."""
    value = mapping[key]
    if not isinstance(value, list | tuple):
        raise fail(f"{path}.{key}", f"must be a JSON array, got {type(value).__name__}", type_error=True)
    return list(value)


def require_count(value: object, path: str) -> int:
    """A JSON integer (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, f"must be an integer, got {value!r}", type_error=True)
    return value


# spec name -> (python name, accepted aliases)
_ITEM_KEYS = {
    "content": "content",
    "tokens": "tokens",
    "kind": "kind",
    "source": "source",
    "priority": "priority",
    "tags": "tags",
    "metadata": "metadata",
    "timestamp": "timestamp",
    "futureRelevanceHint": "future_relevance_hint",
    "future_relevance_hint": "future_relevance_hint",
    "pinned": "pinned",
    "originalTokens": "original_tokens",
    "original_tokens": "original_tokens",
}
_BUDGET_KEYS = {
    "maxTokens": "max_tokens",
    "max_tokens": "max_tokens",
    "targetTokens": "target_tokens",
    "target_tokens": "target_tokens",
    "outputReserve": "output_reserve",
    "output_reserve": "output_reserve",
    "reservedSlots": "reserved_slots",
    "reserved_slots": "reserved_slots",
    "estimationSafetyMarginPercent": "estimation_safety_margin_percent",
    "estimation_safety_margin_percent": "estimation_safety_margin_percent",
}


def fail(path: str, message: str, *, type_error: bool = False) -> CupelError:
    cls = CupelTypeError if type_error else InvalidConfigurationError
    return cls(f"{path}: {message}" if path else message)


def require_mapping(data: object, path: str, what: str) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        raise fail(path, f"{what} must be a JSON object, got {type(data).__name__}", type_error=True)
    return data


def _translate(data: Mapping[str, Any], keys: Mapping[str, str], path: str, what: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key, value in data.items():
        name = keys.get(key)
        if name is None:
            continue  # unknown keys are ignored for forward compatibility
        if name in values:
            raise fail(path, f"{what} gives {name!r} twice (as {key!r} and another spelling)")
        values[name] = value
    return values


def _parse_timestamp(value: object, path: str) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    if not isinstance(value, str):
        raise fail(path, f"timestamp must be an ISO 8601 string, got {value!r}", type_error=True)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise fail(path, f"timestamp is not ISO 8601: {value!r}") from None
    if parsed.utcoffset() is None:
        raise fail(path, f"timestamp must carry a UTC offset (e.g. 'Z' or '+00:00'), got {value!r}")
    return parsed


def item_to_dict(item: Any) -> dict[str, Any]:
    """An item as a JSON object with the spec's field names; defaults are omitted."""
    data: dict[str, Any] = {
        "content": item.content,
        "tokens": item.tokens,
        "kind": str(item.kind),
        "source": str(item.source),
    }
    if item.priority is not None:
        data["priority"] = item.priority
    if item.tags:
        data["tags"] = list(item.tags)
    if item.metadata:
        data["metadata"] = dict(item.metadata)
    if item.timestamp is not None:
        data["timestamp"] = item.timestamp.isoformat()
    if item.future_relevance_hint is not None:
        data["futureRelevanceHint"] = number_to_wire(item.future_relevance_hint)
    if item.pinned:
        data["pinned"] = True
    if item.original_tokens is not None:
        data["originalTokens"] = item.original_tokens
    return data


def item_from_dict(cls: Callable[..., T], data: object, path: str = "item") -> T:
    """Read an item; both ``futureRelevanceHint`` and ``future_relevance_hint`` spellings work."""
    values = _translate(require_mapping(data, path, "an item"), _ITEM_KEYS, path, "the item")
    for required in ("content", "tokens"):
        if required not in values:
            raise fail(path, f"missing required field {required!r}")
    values["timestamp"] = _parse_timestamp(values.get("timestamp"), f"{path}.timestamp")
    if isinstance(values.get("future_relevance_hint"), str):
        values["future_relevance_hint"] = number_from_wire(
            values["future_relevance_hint"], f"{path}.futureRelevanceHint"
        )
    if values.get("tags") is None:
        values.pop("tags", None)
    for optional in ("kind", "source", "pinned"):
        if optional in values and values[optional] is None:
            del values[optional]
    content = values.pop("content")
    tokens = values.pop("tokens")
    try:
        return cls(content, tokens, **values)
    except CupelError as error:
        raise fail(path, _strip_owner(str(error)), type_error=isinstance(error, TypeError)) from None


def _strip_owner(message: str) -> str:
    # "ContextItem.tokens must be an int" reads better as "tokens must be an int" after a path prefix.
    for owner in ("ContextItem.", "ContextBudget."):
        if message.startswith(owner):
            return message[len(owner) :]
    return message


def budget_to_dict(budget: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"maxTokens": budget.max_tokens, "targetTokens": budget.target_tokens}
    if budget.output_reserve:
        data["outputReserve"] = budget.output_reserve
    if budget.reserved_slots:
        data["reservedSlots"] = {str(kind): count for kind, count in budget.reserved_slots.items()}
    if budget.estimation_safety_margin_percent:
        data["estimationSafetyMarginPercent"] = budget.estimation_safety_margin_percent
    return data


def budget_from_dict(cls: Callable[..., T], data: object, path: str = "budget") -> T:
    values = _translate(require_mapping(data, path, "a budget"), _BUDGET_KEYS, path, "the budget")
    if "max_tokens" not in values:
        raise fail(path, "missing required field 'maxTokens'")
    max_tokens = values.pop("max_tokens")
    target = values.pop("target_tokens", max_tokens)
    try:
        return cls(max_tokens, target, **values)
    except CupelError as error:
        raise fail(path, _strip_owner(str(error)), type_error=isinstance(error, TypeError)) from None


register_codec("item", item_to_dict, item_from_dict)
register_codec("budget", budget_to_dict, budget_from_dict)
