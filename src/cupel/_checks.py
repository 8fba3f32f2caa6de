"""Argument checks shared by Pipeline and Policy, so both word their errors the same way; and the check of
a custom slicer's output."""

from __future__ import annotations

from cupel.errors import CupelError, CupelTypeError
from cupel.model import ContextItem, OverflowStrategy


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


def checked_slice(slicer: object, sliced: object) -> list[ContextItem]:
    """A slicer's output as a list; a custom slicer's is checked for its type and for repeated items."""
    name = type(slicer).__name__
    if not isinstance(sliced, list | tuple):
        raise CupelTypeError(f"slicer {name}.slice must return a list of items, got {type(sliced).__name__}")
    result = list(sliced)
    if type(slicer).__module__.startswith("cupel."):
        return result
    seen: set[int] = set()
    for item in result:
        if id(item) in seen:
            content = getattr(item, "content", item)
            raise CupelError(f"slicer {name}.slice returned the same item twice ({content!r:.40})")
        seen.add(id(item))
    return result
