"""The assertion chain's argument checks and the small helpers its messages share."""

from __future__ import annotations

from collections.abc import Iterable

from cupel.diagnostics.reasons import EXCLUSION_REASON_TYPES, ExclusionReason
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextKind

__all__: list[str] = []

_KNOWN_VARIANTS: tuple[str, ...] = tuple(cls.variant for cls in EXCLUSION_REASON_TYPES)


def _num(value: float) -> str:
    # Shortest round-trip form: distinct floats never print alike, and 0.5 stays "0.5".
    return repr(float(value))


def _check_count(assertion: str, name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{assertion}: {name} must be an int, got {value!r}")
    if value < 0:
        raise InvalidConfigurationError(f"{assertion}: {name} must be >= 0, got {value}")
    return value


def _check_predicate(assertion: str, predicate: object) -> None:
    if not callable(predicate):
        raise CupelTypeError(f"{assertion}: predicate must be callable, got {predicate!r}")


def _kind(assertion: str, kind: object) -> ContextKind:
    if not isinstance(kind, str):
        raise CupelTypeError(f"{assertion}: kind must be a str or ContextKind, got {kind!r}")
    return ContextKind(kind)


def _variant_name(assertion: str, reason: object) -> str:
    """The variant a reason argument names; matching compares variants only, never fields."""
    if isinstance(reason, type):
        if issubclass(reason, ExclusionReason) and reason.variant:
            return reason.variant
        raise CupelTypeError(
            f"{assertion}: reason must be an ExclusionReason variant class such as BudgetExceeded, "
            f"an instance of one, or a variant name; got {reason.__name__}"
        )
    if isinstance(reason, ExclusionReason):
        return reason.name
    if isinstance(reason, str):
        if reason in _KNOWN_VARIANTS:
            return reason
        if not reason.strip():
            raise InvalidConfigurationError(f"{assertion}: reason name must not be empty")
        # Variant names are exact; a case slip would otherwise silently match nothing.
        for known in _KNOWN_VARIANTS:
            if known.lower() == reason.lower():
                raise InvalidConfigurationError(
                    f"{assertion}: {reason!r} is not a variant name; did you mean {known!r}?"
                )
        # Any other name is a variant unknown to this version (kept as UnknownExclusionReason).
        return reason
    raise CupelTypeError(
        f"{assertion}: reason must be an ExclusionReason class, instance or variant name, got {reason!r}"
    )


def _distinct(values: Iterable[str]) -> list[str]:
    """Distinct values in first-seen order; ContextKind values dedupe case-insensitively."""
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value, value)
    return [str(value) for value in seen.values()]


def _edge_positions(count: int, n: int) -> list[int]:
    """The first ``n`` edge positions, outermost first: 0, count-1, 1, count-2, ..."""
    positions: list[int] = []
    low, high = 0, count - 1
    while len(positions) < n and low <= high:
        positions.append(low)
        if len(positions) < n and high != low:
            positions.append(high)
        low += 1
        high -= 1
    return positions
