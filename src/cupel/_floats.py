"""``float()`` for validation code: an integer beyond the float range becomes an infinity, never an error.

Validators then reject it with their usual "must be finite" message naming the field, instead of letting
``OverflowError`` escape (a 400-digit integer in JSON is a valid number).
"""

from __future__ import annotations

import math

__all__ = ["to_float"]


def to_float(value: int | float) -> float:
    """``float(value)``, or a signed infinity for an integer too large for a float."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf
