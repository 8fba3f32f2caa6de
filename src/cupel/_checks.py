"""Argument checks shared by Pipeline and Policy, so both word their errors the same way."""

from __future__ import annotations

from cupel.errors import CupelTypeError
from cupel.model import OverflowStrategy


def check_component(owner: str, role: str, value: object, method: str) -> None:
    """``value`` must have a callable ``method`` (a scorer's ``score``, a slicer's ``slice``...)."""
    if not callable(getattr(value, method, None)):
        raise CupelTypeError(f"{owner}.{role} must have a {method}() method, got {value!r}")


def check_bool(owner: str, name: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise CupelTypeError(f"{owner}.{name} must be a bool, got {value!r}")
    return value


def coerce_overflow_strategy(value: object, owner: str) -> OverflowStrategy:
    """An :class:`OverflowStrategy`, or its value as a string in any letter case."""
    if isinstance(value, OverflowStrategy):
        return value
    if isinstance(value, str):
        try:
            return OverflowStrategy(value.strip().lower())
        except ValueError:
            pass
    known = ", ".join(repr(strategy.value) for strategy in OverflowStrategy)
    raise CupelTypeError(f"{owner} must be an OverflowStrategy ({known}), got {value!r}")
