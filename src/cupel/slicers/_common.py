"""Helpers shared by the slicers: argument checks (messages name the field and the value) and delegation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from cupel._floats import to_float
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ScoredItem
from cupel.protocols import Slicer
from cupel.slicers._base import SliceOutcome


def check_int(owner: str, name: str, value: object, *, minimum: int) -> int:
    """An ``int`` (``bool`` rejected) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{owner}.{name} must be an int, got {value!r}")
    if value < minimum:
        bound = "> 0" if minimum == 1 else f">= {minimum}"
        raise InvalidConfigurationError(f"{owner}.{name} must be {bound}, got {value!r}")
    return int(value)


def check_percent(owner: str, name: str, value: object) -> float:
    """A finite real number in [0.0, 100.0] (``bool`` rejected)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{owner}.{name} must be a number, got {value!r}")
    number = to_float(value)
    if not (math.isfinite(number) and 0.0 <= number <= 100.0):
        raise InvalidConfigurationError(f"{owner}.{name} must be between 0.0 and 100.0, got {value!r}")
    return number


def check_slicer(owner: str, name: str, value: Any) -> Slicer:
    """Anything with a callable ``slice`` method."""
    if not callable(getattr(value, "slice", None)):
        raise CupelTypeError(
            f"{owner}.{name} must be a slicer (an object with a slice() method), got {value!r}"
        )
    result: Slicer = value
    return result


def run_inner(
    slicer: Slicer, scored: Sequence[ScoredItem], budget: ContextBudget, detailed: bool
) -> SliceOutcome:
    """Delegate to a wrapped slicer, through ``slice_detailed`` when explanations are wanted and offered."""
    if detailed:
        explain = getattr(slicer, "slice_detailed", None)
        if explain is not None:
            outcome: SliceOutcome = explain(scored, budget)
            return outcome
    return SliceOutcome(tuple(slicer.slice(scored, budget)))
