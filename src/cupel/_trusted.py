"""Constructors for frozen slots dataclasses that skip ``__init__`` and its validation.

For records the library builds itself from values it has already checked -- per-item trace events,
reasons and report entries of a report-building run -- where validation would cost as much as the
record. Each field is set through its slot descriptor, which a frozen dataclass's ``__setattr__``
does not guard. The result equals what the validating constructor builds (tests compare them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["trusted_constructor"]

T = TypeVar("T")


def trusted_constructor(cls: type[T]) -> Callable[..., T]:
    """``cls(*values)`` without ``__init__``: every field, positionally, in declaration order."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = tuple(cls.__dict__[field.name].__set__ for field in fields)
    new = object.__new__

    def make(*values: Any) -> T:
        record: T = new(cls)
        for setter, value in zip(setters, values, strict=True):
            setter(record, value)
        return record

    return make
