"""Shared constructor checks for the assembly types; every message names the owner, field and value."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

from cupel.errors import CupelTypeError, InvalidConfigurationError

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND = timedelta(microseconds=1)
_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (which UTF-8 cannot encode), or ``None``."""
    if text.isascii():
        return None
    found = _SURROGATE.search(text)
    return None if found is None else found.start()


def require_str(
    owner: str, name: str, value: object, *, non_empty: bool = True, single_line: bool = False
) -> str:
    if not isinstance(value, str):
        raise CupelTypeError(f"{owner}.{name} must be a str, got {type(value).__name__} {value!r}")
    if non_empty and not value:
        raise InvalidConfigurationError(f"{owner}.{name} must be a non-empty string, got ''")
    position = lone_surrogate(value)
    if position is not None:
        raise InvalidConfigurationError(
            f"{owner}.{name} must be valid Unicode text, got a lone surrogate "
            f"U+{ord(value[position]):04X} at index {position}"
        )
    # A line break would split the one-line `[DOC: ...]` marker and make the output ambiguous.
    if single_line and ("\n" in value or "\r" in value):
        raise InvalidConfigurationError(f"{owner}.{name} must not contain a line break, got {value!r}")
    return value


def require_int(owner: str, name: str, value: object, *, minimum: int = 0) -> int:
    # bool is an int subclass; True as a token count is always a mistake.
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{owner}.{name} must be an int, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise InvalidConfigurationError(f"{owner}.{name} must be >= {minimum}, got {value}")
    return value


def require_bool(owner: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise CupelTypeError(f"{owner}.{name} must be a bool, got {type(value).__name__} {value!r}")
    return value


def require_float(owner: str, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{owner}.{name} must be a float, got {type(value).__name__} {value!r}")
    try:
        result = float(value)
    except OverflowError:
        # An int beyond the float range (e.g. 10**400) is as unusable as an infinity.
        raise InvalidConfigurationError(
            f"{owner}.{name} must be a finite number, got an integer too large for a float"
        ) from None
    # NaN has no place in a total order, and infinities make score arithmetic (fusion, boosts) meaningless.
    if not math.isfinite(result):
        raise InvalidConfigurationError(f"{owner}.{name} must be a finite number, got {result!r}")
    # Fold -0.0 into 0.0 so that equal scores also print identically.
    return result + 0.0


def require_aware_datetime(owner: str, name: str, value: object) -> datetime:
    if not isinstance(value, datetime):
        raise CupelTypeError(f"{owner}.{name} must be a datetime, got {type(value).__name__} {value!r}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidConfigurationError(
            f"{owner}.{name} must be timezone-aware (a naive datetime names no instant), "
            f"got {value.isoformat()}"
        )
    return value
