"""Counts in messages and reports: "1 case", "2 cases", never "1 cases"."""

from __future__ import annotations

__all__ = ["counted"]


def counted(count: int, noun: str, plural: str = "", *, grouped: bool = False) -> str:
    """``count`` and ``noun`` in the number it takes: ``plural`` when given (``policy``/``policies``),
    else ``noun`` with an ``s``; ``grouped`` writes the count with thousands separators (``1,200``)."""
    number = f"{count:,}" if grouped else str(count)
    return f"{number} {noun if count == 1 else plural or noun + 's'}"
