"""The data model: ContextItem, ContextBudget, ContextKind, ContextSource, OverflowStrategy, ScoredItem.

Spec: Data Model. Every type here is immutable and validated at construction; a bad value raises an
:class:`~cupel.errors.InvalidConfigurationError` (a ``ValueError``) or :class:`~cupel.errors.CupelTypeError`
(a ``TypeError``) whose message names the field and the value.
"""

from __future__ import annotations

import math
from collections import namedtuple
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from enum import StrEnum

from cupel._frozen import EMPTY_MAP, Frozen, ReadOnlyMap, made_on_read_fields
from cupel._wire_format import WireFormat
from cupel.errors import CupelTypeError, InvalidConfigurationError

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any, ClassVar, NamedTuple

_ReadOnlyMap = ReadOnlyMap  # the names the rest of the package imports
_EMPTY_MAP = EMPTY_MAP

__all__ = [
    "ContextBudget",
    "ContextItem",
    "ContextKind",
    "ContextSource",
    "OverflowStrategy",
    "ScoredItem",
    "ascii_fold",
]

_ASCII_UPPER_TO_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_fold(text: str) -> str:
    """Fold ASCII letters to lower case and leave every other character alone (spec: ContextKind)."""
    # str.lower() also folds non-ASCII letters, which the spec's ASCII case folding must not do.
    return text.lower() if text.isascii() else text.translate(_ASCII_UPPER_TO_LOWER)


_MAX_INTERNED = 4096  # distinct spellings each case-insensitive name type interns, at most


class _CaseInsensitiveName(str):
    """An extensible string value compared and hashed with ASCII case folding.

    Values built from the same plain string are one shared object (up to :data:`_MAX_INTERNED`
    spellings per type), so per-kind work can be done once per distinct object.
    """

    __slots__ = ()
    _label: ClassVar[str] = "name"
    _interned: ClassVar[dict[str, _CaseInsensitiveName]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._interned = {}

    def __new__(cls, value: str) -> _CaseInsensitiveName:
        if type(value) is cls:
            return value
        # Only plain strings are looked up: other names compare case-insensitively, which would
        # return a differently spelled value.
        interned = cls._interned.get(value) if type(value) is str else None
        if interned is not None:
            return interned
        if not isinstance(value, str):
            raise CupelTypeError(f"{cls.__name__} must be a string, got {type(value).__name__}")
        if not value.strip():
            raise InvalidConfigurationError(
                f"{cls.__name__} must be a non-empty, non-whitespace string, got {value!r}"
            )
        result = super().__new__(cls, value)
        if type(value) is str and len(cls._interned) < _MAX_INTERNED:
            cls._interned[value] = result
        return result

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return ascii_fold(self) == ascii_fold(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        if isinstance(other, str):
            return ascii_fold(self) != ascii_fold(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(ascii_fold(self))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str.__repr__(self)})"

    def __str__(self) -> str:
        return str.__str__(self)

    def __reduce__(self) -> tuple[type, tuple[str]]:
        return (type(self), (str.__str__(self),))

    @property
    def folded(self) -> str:
        """The ASCII-case-folded form, usable as a plain ``dict`` key."""
        return ascii_fold(self)


class ContextKind(_CaseInsensitiveName):
    """What an item is: an extensible string compared case-insensitively (spec: ContextKind).

    ``ContextKind("message") == ContextKind.MESSAGE == "MESSAGE"``.
    """

    __slots__ = ()

    MESSAGE: ClassVar[ContextKind]
    DOCUMENT: ClassVar[ContextKind]
    TOOL_OUTPUT: ClassVar[ContextKind]
    MEMORY: ClassVar[ContextKind]
    SYSTEM_PROMPT: ClassVar[ContextKind]

    def __new__(cls, value: str) -> ContextKind:
        result = super().__new__(cls, value)
        assert isinstance(result, ContextKind)
        return result


ContextKind.MESSAGE = ContextKind("Message")
ContextKind.DOCUMENT = ContextKind("Document")
ContextKind.TOOL_OUTPUT = ContextKind("ToolOutput")
ContextKind.MEMORY = ContextKind("Memory")
ContextKind.SYSTEM_PROMPT = ContextKind("SystemPrompt")


class ContextSource(_CaseInsensitiveName):
    """Where an item came from: an extensible string compared case-insensitively (spec: ContextSource)."""

    __slots__ = ()

    CHAT: ClassVar[ContextSource]
    TOOL: ClassVar[ContextSource]
    RAG: ClassVar[ContextSource]

    def __new__(cls, value: str) -> ContextSource:
        result = super().__new__(cls, value)
        assert isinstance(result, ContextSource)
        return result


ContextSource.CHAT = ContextSource("Chat")
ContextSource.TOOL = ContextSource("Tool")
ContextSource.RAG = ContextSource("Rag")


class OverflowStrategy(StrEnum):
    """What Place does when the merged selection exceeds ``target_tokens`` (spec: OverflowStrategy)."""

    THROW = "throw"
    TRUNCATE = "truncate"
    PROCEED = "proceed"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)


def epoch_microseconds(value: datetime) -> int:
    """Microseconds since the epoch: an exact integer ordering key for an aware datetime."""
    return (value - _EPOCH) // _ONE_MICROSECOND


def _require_int(owner: str, name: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        expected = "an int or None" if optional else "an int"
        raise CupelTypeError(f"{owner}.{name} must be {expected}, got {value!r}")


class ContextItem(WireFormat, Frozen):
    """One candidate for the context window (spec: ContextItem).

    Items compare and hash by identity, as the spec does wherever it matches items (FrequencyScorer
    self-exclusion, ScaledScorer, re-association of slicer output). Build a changed copy with
    :meth:`replace`. Immutable, with the behaviour of a frozen slots dataclass (see :mod:`cupel._frozen`).
    """

    __match_args__ = (
        "content",
        "tokens",
        "kind",
        "source",
        "priority",
        "tags",
        "metadata",
        "timestamp",
        "future_relevance_hint",
        "pinned",
        "original_tokens",
        "_timestamp_us",
    )
    __slots__ = __match_args__
    _wire: ClassVar[str] = "item"
    content: str
    tokens: int
    kind: ContextKind
    source: ContextSource
    priority: int | None
    tags: tuple[str, ...]
    metadata: Mapping[str, Any]
    timestamp: datetime | None
    future_relevance_hint: float | None
    pinned: bool
    original_tokens: int | None
    # Microseconds since the epoch: an exact integer ordering key for the timestamp.
    _timestamp_us: int | None

    def __init__(
        self,
        content: str,
        tokens: int,
        *,
        kind: str = "Message",
        source: str = "Chat",
        priority: int | None = None,
        tags: Iterable[str] = (),
        metadata: Mapping[str, Any] | None = None,
        timestamp: datetime | None = None,
        future_relevance_hint: float | None = None,
        pinned: bool = False,
        original_tokens: int | None = None,
    ) -> None:
        if not isinstance(content, str):
            raise CupelTypeError(f"ContextItem.content must be a str, got {type(content).__name__}")
        if not content:
            raise InvalidConfigurationError("ContextItem.content must be a non-empty string, got ''")
        _require_int("ContextItem", "tokens", tokens)
        _require_int("ContextItem", "priority", priority, optional=True)
        _require_int("ContextItem", "original_tokens", original_tokens, optional=True)
        if not isinstance(pinned, bool):
            raise CupelTypeError(f"ContextItem.pinned must be a bool, got {pinned!r}")
        if isinstance(tags, str):
            raise CupelTypeError(
                f"ContextItem.tags must be an iterable of strings, not a single string: {tags!r}"
            )
        try:
            tag_tuple = tuple(tags)
        except TypeError:
            raise CupelTypeError(f"ContextItem.tags must be an iterable of strings, got {tags!r}") from None
        for tag in tag_tuple:
            if not isinstance(tag, str):
                raise CupelTypeError(f"ContextItem.tags must contain only strings, got {tag!r}")
        if metadata is None:
            frozen_metadata: Mapping[str, Any] = _EMPTY_MAP
        elif isinstance(metadata, Mapping):
            frozen_metadata = metadata if isinstance(metadata, _ReadOnlyMap) else _ReadOnlyMap(metadata)
        else:
            raise CupelTypeError(f"ContextItem.metadata must be a mapping, got {type(metadata).__name__}")
        timestamp_us: int | None = None
        if timestamp is not None:
            if not isinstance(timestamp, datetime):
                raise CupelTypeError(f"ContextItem.timestamp must be a datetime or None, got {timestamp!r}")
            if timestamp.tzinfo is None or timestamp.utcoffset() is None:
                raise InvalidConfigurationError(
                    f"ContextItem.timestamp must be timezone-aware (a naive datetime has no "
                    f"instant); got naive {timestamp.isoformat()}. Use e.g. "
                    f"datetime(..., tzinfo=timezone.utc)"
                )
            timestamp_us = epoch_microseconds(timestamp)
        hint: float | None = None
        if future_relevance_hint is not None:
            if isinstance(future_relevance_hint, bool) or not isinstance(future_relevance_hint, int | float):
                raise CupelTypeError(
                    "ContextItem.future_relevance_hint must be a float or None, "
                    f"got {future_relevance_hint!r}"
                )
            try:
                hint = float(future_relevance_hint)
            except OverflowError:
                raise InvalidConfigurationError(
                    "ContextItem.future_relevance_hint is beyond the float range, got an integer of "
                    f"{len(str(abs(future_relevance_hint)))} digits"
                ) from None
        setter = object.__setattr__
        setter(self, "content", content)
        setter(self, "tokens", tokens)
        setter(self, "kind", ContextKind(kind))
        setter(self, "source", ContextSource(source))
        setter(self, "priority", priority)
        setter(self, "tags", tag_tuple)
        setter(self, "metadata", frozen_metadata)
        setter(self, "timestamp", timestamp)
        setter(self, "future_relevance_hint", hint)
        setter(self, "pinned", pinned)
        setter(self, "original_tokens", original_tokens)
        setter(self, "_timestamp_us", timestamp_us)

    if not TYPE_CHECKING:  # fields a trusted batch may leave unset (cupel._trusted), made when first read
        __getattr__ = made_on_read_fields(  # the timestamp from its microseconds, the others their defaults
            {"kind": ContextKind.MESSAGE, "source": ContextSource.CHAT, "pinned": False}
            | dict.fromkeys(("priority", "future_relevance_hint", "original_tokens")),
            timestamp=lambda item: _EPOCH + timedelta(0, 0, item._timestamp_us),
        )

    def replace(self, **changes: Any) -> ContextItem:
        """Return a new item with ``changes`` applied; this item is left as it is."""
        fields = ContextItem.__match_args__[:-1]  # the public fields, in order
        unknown = set(changes).difference(fields)
        if unknown:
            raise CupelTypeError(f"ContextItem has no field(s) {sorted(unknown)}")
        values = {name: getattr(self, name) for name in fields}
        values.update(changes)
        return ContextItem(values.pop("content"), values.pop("tokens"), **values)  # popped, then the rest


class ContextBudget(WireFormat, Frozen):
    """Token budget constraints, validated at construction (spec: ContextBudget).

    Immutable; equal budgets (field by field) hash alike, as a frozen dataclass's do.
    """

    __match_args__ = (
        "max_tokens",
        "target_tokens",
        "output_reserve",
        "reserved_slots",
        "estimation_safety_margin_percent",
    )
    __slots__ = __match_args__
    _wire: ClassVar[str] = "budget"
    max_tokens: int
    target_tokens: int
    output_reserve: int
    reserved_slots: Mapping[ContextKind, int]
    estimation_safety_margin_percent: float

    def __init__(
        self,
        max_tokens: int,
        target_tokens: int,
        *,
        output_reserve: int = 0,
        reserved_slots: Mapping[str, int] | None = None,
        estimation_safety_margin_percent: float = 0.0,
    ) -> None:
        _require_int("ContextBudget", "max_tokens", max_tokens)
        _require_int("ContextBudget", "target_tokens", target_tokens)
        _require_int("ContextBudget", "output_reserve", output_reserve)
        margin = estimation_safety_margin_percent
        if isinstance(margin, bool) or not isinstance(margin, int | float):
            raise CupelTypeError(
                f"ContextBudget.estimation_safety_margin_percent must be a float, got {margin!r}"
            )
        if max_tokens < 0:
            raise InvalidConfigurationError(f"ContextBudget.max_tokens must be >= 0, got {max_tokens}")
        if target_tokens < 0:
            raise InvalidConfigurationError(f"ContextBudget.target_tokens must be >= 0, got {target_tokens}")
        if target_tokens > max_tokens:
            raise InvalidConfigurationError(
                f"ContextBudget.target_tokens must be <= max_tokens ({max_tokens}), got {target_tokens}"
            )
        if output_reserve < 0:
            raise InvalidConfigurationError(
                f"ContextBudget.output_reserve must be >= 0, got {output_reserve}"
            )
        if output_reserve > max_tokens:
            raise InvalidConfigurationError(
                f"ContextBudget.output_reserve must be <= max_tokens ({max_tokens}), got {output_reserve}"
            )
        if not (math.isfinite(margin) and 0.0 <= margin <= 100.0):
            raise InvalidConfigurationError(
                f"ContextBudget.estimation_safety_margin_percent must be between 0.0 and 100.0, got {margin}"
            )
        slots: dict[ContextKind, int] = {}
        if reserved_slots is not None:
            if not isinstance(reserved_slots, Mapping):
                raise CupelTypeError(
                    "ContextBudget.reserved_slots must be a mapping of kind to int, "
                    f"got {type(reserved_slots).__name__}"
                )
            for raw_kind, count in reserved_slots.items():
                kind = ContextKind(raw_kind)
                _require_int("ContextBudget", f"reserved_slots[{str(kind)!r}]", count)
                if count < 0:
                    raise InvalidConfigurationError(
                        f"ContextBudget.reserved_slots[{str(kind)!r}] must be >= 0, got {count}"
                    )
                if kind in slots:
                    raise InvalidConfigurationError(
                        f"ContextBudget.reserved_slots names kind {str(kind)!r} twice "
                        "(kinds compare case-insensitively)"
                    )
                slots[kind] = count
        setter = object.__setattr__
        setter(self, "max_tokens", max_tokens)
        setter(self, "target_tokens", target_tokens)
        setter(self, "output_reserve", output_reserve)
        setter(self, "reserved_slots", _ReadOnlyMap(slots) if slots else _EMPTY_MAP)
        setter(self, "estimation_safety_margin_percent", float(margin))

    def _values(self) -> tuple[int, int, int, Mapping[ContextKind, int], float]:
        return (
            self.max_tokens,
            self.target_tokens,
            self.output_reserve,
            self.reserved_slots,
            self.estimation_safety_margin_percent,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            assert isinstance(other, ContextBudget)
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    def replace(self, **changes: Any) -> ContextBudget:
        """Return a new budget with ``changes`` applied (validated like any new budget)."""
        values: dict[str, Any] = {
            "output_reserve": self.output_reserve,
            "reserved_slots": self.reserved_slots,
            "estimation_safety_margin_percent": self.estimation_safety_margin_percent,
        }
        max_tokens = changes.pop("max_tokens", self.max_tokens)
        target_tokens = changes.pop("target_tokens", self.target_tokens)
        unknown = set(changes) - set(values)
        if unknown:
            raise CupelTypeError(f"ContextBudget has no field(s) {sorted(unknown)}")
        values.update(changes)
        return ContextBudget(max_tokens, target_tokens, **values)


if TYPE_CHECKING:

    class ScoredItem(NamedTuple):
        """An item paired with its relevance score (spec: ScoredItem)."""

        item: ContextItem
        score: float

else:
    # collections.namedtuple, the class typing.NamedTuple builds, without importing typing.
    ScoredItem = namedtuple("ScoredItem", ["item", "score"], module=__name__)
    ScoredItem.__doc__ = "An item paired with its relevance score (spec: ScoredItem)."
