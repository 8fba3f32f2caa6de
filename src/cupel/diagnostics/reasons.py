"""Exclusion and inclusion reasons (spec: Diagnostics, Exclusion Reasons).

Every exclusion reason is a small immutable data-carrying type; its JSON form is
``{"reason": "<Variant>", ...fields}`` with absent fields omitted. A variant this version does not know,
read from JSON, becomes an :class:`UnknownExclusionReason` that keeps its name and fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from cupel._trusted import trusted_batch, trusted_constructor
from cupel._wire_format import dumps, loads
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "EXCLUSION_REASON_TYPES",
    "BudgetExceeded",
    "Deduplicated",
    "ExclusionReason",
    "Filtered",
    "InclusionReason",
    "NegativeTokens",
    "PinnedOverride",
    "QuotaCapExceeded",
    "QuotaRequireDisplaced",
    "ScoredTooLow",
    "UnknownExclusionReason",
    "exclusion_reason_from_dict",
]


class ExclusionReason:
    """Why an item was left out. Match on the variant with ``isinstance`` or ``match``."""

    __slots__ = ()
    variant: ClassVar[str] = ""
    #: Whether built-in pipeline stages emit this variant.
    active: ClassVar[bool] = True

    @property
    def name(self) -> str:
        """The variant name used on the wire, e.g. ``"BudgetExceeded"``."""
        return self.variant

    def to_dict(self) -> dict[str, Any]:
        """The spec's JSON envelope: ``{"reason": name, **fields}``."""
        payload: dict[str, Any] = {"reason": self.name}
        payload.update(self._fields())
        return payload

    def to_json(self) -> str:
        """Strict (RFC 8259) JSON text: a field that JSON cannot represent (NaN) is an error, not ``NaN``."""
        return dumps(self.to_dict())

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> ExclusionReason:
        """Read ``{"reason": ..., ...}``; unknown variants become :class:`UnknownExclusionReason`."""
        return exclusion_reason_from_dict(data)

    @staticmethod
    def from_json(text: str | bytes) -> ExclusionReason:
        """Read strict JSON text with the one reader (:mod:`cupel._input`): ``NaN``, ``Infinity``,
        ``1e400`` and a key given twice are refused in one line."""
        return exclusion_reason_from_dict(loads(text, "ExclusionReason", unique_keys=True))

    def _fields(self) -> dict[str, Any]:
        assert dataclasses.is_dataclass(self)
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def describe(self) -> str:
        """A one-line human explanation: the variant, then :meth:`details`."""
        details = self.details()
        return f"{self.name}: {details}" if details else self.name

    def details(self) -> str:
        """What this exclusion's data says, without the variant name."""
        return ", ".join(f"{key}={value!r}" for key, value in self._fields().items())


def _check_int(variant: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{variant}.{name} must be an int, got {value!r}")


def _check_str(variant: str, name: str, value: object) -> None:
    if not isinstance(value, str):
        raise CupelTypeError(f"{variant}.{name} must be a str, got {value!r}")


def _check_float(variant: str, name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{variant}.{name} must be a float, got {value!r}")


@dataclass(frozen=True, slots=True)
class BudgetExceeded(ExclusionReason):
    """The item did not fit: ``available_tokens`` were left when it was considered."""

    variant: ClassVar[str] = "BudgetExceeded"
    item_tokens: int
    available_tokens: int

    def __post_init__(self) -> None:
        _check_int(self.variant, "item_tokens", self.item_tokens)
        _check_int(self.variant, "available_tokens", self.available_tokens)

    def details(self) -> str:
        return f"{self.item_tokens} tokens requested, {self.available_tokens} available"

    def describe(self) -> str:
        # The inherited text, in one step: a large run describes thousands of these.
        return f"BudgetExceeded: {self.item_tokens} tokens requested, {self.available_tokens} available"


#: ``BudgetExceeded(item_tokens, available_tokens)`` for ints the caller took from checked items.
budget_exceeded = trusted_constructor(BudgetExceeded)
#: ``[BudgetExceeded(t, a) for t, a in zip(item_tokens, available_tokens)]`` for ``count`` such pairs.
budget_exceeded_batch = trusted_batch(BudgetExceeded)


@dataclass(frozen=True, slots=True)
class ScoredTooLow(ExclusionReason):
    """The item fitted but scored below what the slicer selected: ``threshold`` is the lowest score
    the slicer kept, or for KnapsackSlice the smallest score it values (``1 / 10000``)."""

    variant: ClassVar[str] = "ScoredTooLow"
    score: float
    threshold: float

    def __post_init__(self) -> None:
        _check_float(self.variant, "score", self.score)
        _check_float(self.variant, "threshold", self.threshold)

    def details(self) -> str:
        return f"score {self.score:.6g} is below the threshold {self.threshold:.6g}"


@dataclass(frozen=True, slots=True)
class Deduplicated(ExclusionReason):
    """A byte-identical item with a higher (or equal, earlier) score won deduplication instead.

    That item may itself be excluded later, for example by the budget.
    """

    variant: ClassVar[str] = "Deduplicated"
    deduplicated_against: str

    def __post_init__(self) -> None:
        _check_str(self.variant, "deduplicated_against", self.deduplicated_against)

    def details(self) -> str:
        return f"duplicate of {_preview(self.deduplicated_against)}, which scored at least as high"

    def describe(self) -> str:
        # The inherited text, in one step: a large run with many duplicates describes thousands.
        return (
            f"Deduplicated: duplicate of {_preview(self.deduplicated_against)}, which scored at least as high"
        )


#: ``Deduplicated(content)`` for each of ``count`` contents the caller took from checked items.
deduplicated_batch = trusted_batch(Deduplicated)


@dataclass(frozen=True, slots=True)
class QuotaCapExceeded(ExclusionReason):
    """The item's kind had reached its cap."""

    variant: ClassVar[str] = "QuotaCapExceeded"
    kind: str
    cap: int
    actual: int

    def __post_init__(self) -> None:
        _check_str(self.variant, "kind", self.kind)
        _check_int(self.variant, "cap", self.cap)
        _check_int(self.variant, "actual", self.actual)

    def details(self) -> str:
        return f"kind {self.kind} capped at {self.cap} (would be {self.actual})"


@dataclass(frozen=True, slots=True)
class QuotaRequireDisplaced(ExclusionReason):
    """Reserved: displaced to satisfy another kind's requirement."""

    variant: ClassVar[str] = "QuotaRequireDisplaced"
    active: ClassVar[bool] = False
    displaced_by_kind: str

    def __post_init__(self) -> None:
        _check_str(self.variant, "displaced_by_kind", self.displaced_by_kind)


@dataclass(frozen=True, slots=True)
class NegativeTokens(ExclusionReason):
    """The item declared a negative token count."""

    variant: ClassVar[str] = "NegativeTokens"
    tokens: int

    def __post_init__(self) -> None:
        _check_int(self.variant, "tokens", self.tokens)

    def details(self) -> str:
        return f"token count {self.tokens} is negative"


@dataclass(frozen=True, slots=True)
class PinnedOverride(ExclusionReason):
    """Pinned items took the budget this item would have used."""

    variant: ClassVar[str] = "PinnedOverride"
    displaced_by: str

    def __post_init__(self) -> None:
        _check_str(self.variant, "displaced_by", self.displaced_by)

    def details(self) -> str:
        return f"budget taken by pinned item ({_preview(self.displaced_by)})"


@dataclass(frozen=True, slots=True)
class Filtered(ExclusionReason):
    """Removed by a named filter; the pipeline also names a slicer that left out an item which fitted
    and scored at least as high as what it kept, without saying why."""

    variant: ClassVar[str] = "Filtered"
    filter_name: str

    def __post_init__(self) -> None:
        _check_str(self.variant, "filter_name", self.filter_name)

    def details(self) -> str:
        return f"left out by {self.filter_name}"


@dataclass(frozen=True, slots=True)
class UnknownExclusionReason(ExclusionReason):
    """A variant from another implementation or a later spec version, kept as read."""

    reason: str
    fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.reason

    def _fields(self) -> dict[str, Any]:
        return dict(self.fields)

    def __hash__(self) -> int:
        return hash((self.reason, tuple(sorted(self.fields))))


#: The eight variants the specification defines, in its order.
EXCLUSION_REASON_TYPES: tuple[type[ExclusionReason], ...] = (
    BudgetExceeded,
    ScoredTooLow,
    Deduplicated,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    NegativeTokens,
    PinnedOverride,
    Filtered,
)
_VARIANTS: dict[str, type[ExclusionReason]] = {cls.variant: cls for cls in EXCLUSION_REASON_TYPES}


def exclusion_reason_from_dict(data: Mapping[str, Any]) -> ExclusionReason:
    """Read the JSON envelope; unknown variants are preserved as :class:`UnknownExclusionReason`."""
    if not isinstance(data, Mapping) or not isinstance(data.get("reason"), str):
        raise InvalidConfigurationError(
            f"exclusion reason must be an object with a string 'reason', got {data!r}"
        )
    name = data["reason"]
    fields = {key: value for key, value in data.items() if key != "reason"}
    cls = _VARIANTS.get(name)
    if cls is None:
        return UnknownExclusionReason(name, fields)
    expected = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    missing = expected - set(fields)
    if missing:
        raise InvalidConfigurationError(f"{name} reason is missing field(s) {sorted(missing)}")
    return cls(**{key: fields[key] for key in expected})


class InclusionReason(StrEnum):
    """Why an item was included (spec: InclusionReason). JSON: ``{"reason": "Scored"}``."""

    SCORED = "Scored"
    PINNED = "Pinned"
    ZERO_TOKEN = "ZeroToken"

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.value}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> InclusionReason:
        value = data.get("reason") if isinstance(data, Mapping) else None
        try:
            return cls(str(value))
        except ValueError:
            raise InvalidConfigurationError(
                f"inclusion reason must be one of {[m.value for m in cls]}, got {value!r}"
            ) from None


def _preview(text: str, limit: int = 40) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[: limit - 1] + "…")
