"""Durations in policy files: seconds, or strings such as ``"90s"``, ``"1h30m"`` and ``"1.5d"``."""

from __future__ import annotations

import re
from datetime import timedelta

from cupel.errors import InvalidConfigurationError
from cupel.policy._values import _number, _show
from cupel.policy.errors import PolicyFileError

__all__ = ["format_duration", "parse_duration"]

DURATION_PATTERN = re.compile(r"(?:\d+(?:\.\d+)?(?:us|ms|d|h|m|s))+")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(us|ms|d|h|m|s)")
_LONGEST = timedelta.max // timedelta(microseconds=1)
_LONGEST_DAYS = f"{timedelta.max.days:,}"
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
    from decimal import Decimal  # exact unit arithmetic, loaded only when a duration is read

    if isinstance(value, str):
        text = value.strip()
        if not DURATION_PATTERN.fullmatch(text):
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
        microseconds = int(total)
    else:
        seconds = _number(value, path, above=0.0)
        microseconds = round(Decimal(seconds) * _MICROSECONDS["s"])
    if microseconds <= 0:
        if total_is_zero(value):
            raise PolicyFileError(path, f"must be greater than zero, got {_show(value)}")
        raise PolicyFileError(path, f"must be at least one microsecond (1us), got {_show(value)}")
    if microseconds > _LONGEST:
        raise PolicyFileError(path, f"is too long (at most {_LONGEST_DAYS} days), got {_show(value)}")
    return timedelta(microseconds=microseconds)


def total_is_zero(value: object) -> bool:
    """Whether a duration as written is zero (rather than positive but below one microsecond)."""
    from decimal import Decimal

    if isinstance(value, str):
        return all(Decimal(number) == 0 for number, _ in _DURATION_PART.findall(value.strip()))
    return value == 0


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
