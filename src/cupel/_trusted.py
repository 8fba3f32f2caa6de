"""Constructors for frozen slots dataclasses that skip ``__init__`` and its validation.

For records the library builds itself from values it has already checked -- per-item trace events,
reasons and report entries of a report-building run -- where validation would cost as much as the
record. Each field is set through its slot descriptor, which a frozen dataclass's ``__setattr__``
does not guard. The result equals what the validating constructor builds (tests compare them).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable
from itertools import repeat
from typing import Any, TypeVar

__all__ = ["trusted_batch", "trusted_constructor"]

T = TypeVar("T")


def trusted_constructor(cls: type[T]) -> Callable[..., T]:
    """``cls(*values)`` without ``__init__``: every field, positionally, in declaration order."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = [cls.__dict__[field.name].__set__ for field in fields]
    new = object.__new__
    # Fixed arities avoid a loop per record for the small records a report is made of (2 to 4 fields).
    if len(setters) not in (2, 3, 4):

        def make(*values: Any) -> T:
            record: T = new(cls)
            for set_field, value in zip(setters, values, strict=True):
                set_field(record, value)
            return record

        return make
    if len(setters) == 2:
        set_a, set_b = setters

        def make2(a: Any, b: Any) -> T:
            record: T = new(cls)
            set_a(record, a)
            set_b(record, b)
            return record

        return make2
    if len(setters) == 3:
        set_a, set_b, set_c = setters

        def make3(a: Any, b: Any, c: Any) -> T:
            record: T = new(cls)
            set_a(record, a)
            set_b(record, b)
            set_c(record, c)
            return record

        return make3
    set_a, set_b, set_c, set_d = setters

    def make4(a: Any, b: Any, c: Any, d: Any) -> T:
        record: T = new(cls)
        set_a(record, a)
        set_b(record, b)
        set_c(record, c)
        set_d(record, d)
        return record

    return make4


def trusted_batch(cls: type[T]) -> Callable[..., list[T]]:
    """``[cls(*values) for values in zip(*columns)]`` without ``__init__``, for ``count`` records.

    Fields are given as columns (iterables of at least ``count`` values), positionally, in
    declaration order; trailing fields with defaults may be left out, and a column given as ``None``
    leaves its field unset (only for a field the class makes when first read, as ContextItem makes its
    ``timestamp`` from ``_timestamp_us``, and its fields that default to None). The records are
    allocated, then each field set column by column by C-level ``map`` passes: no Python-level call per
    record.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    setters = [cls.__dict__[field.name].__set__ for field in fields]
    new = object.__new__

    defaults = [field.default for field in fields]

    def build(count: int, *columns: Iterable[Any] | None) -> list[T]:
        records: list[T] = list(map(new, repeat(cls, count)))
        given = len(columns)
        if given > len(setters) or dataclasses.MISSING in defaults[given:]:
            raise TypeError(f"{cls.__name__}: {given} columns for {len(setters)} fields")
        for setter, column in zip(setters[:given], columns, strict=True):
            if column is not None:
                deque(map(setter, records, column), maxlen=0)
        for setter, default in zip(setters[given:], defaults[given:], strict=True):
            # Trailing fields not given take their declared defaults.
            deque(map(setter, records, repeat(default)), maxlen=0)
        return records

    return build
