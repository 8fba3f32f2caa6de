"""Running code with and without cupel's numpy fast paths (see ``cupel._numeric``)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest

from cupel import ContextItem, _numeric, _optional, _run_columns


@pytest.fixture(scope="module")
def always_fast() -> Iterator[None]:
    """Use the numpy paths even for the short lists Hypothesis generates."""
    saved = _numeric.THRESHOLD
    _numeric.THRESHOLD = 0
    yield
    _numeric.THRESHOLD = saved


def pure(function: Any, *args: Any) -> Any:
    """``function(*args)`` with the numpy paths off: the reference behaviour."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(_optional._found, "numpy", None)
        return function(*args)


def assert_same_run(pipeline: Any, items: Any, budget: Any) -> None:
    """``pipeline.run`` selects the same instances in the same order (or fails the same way) with
    and without the numpy paths."""
    try:
        fast = pipeline.run(items, budget)
    except Exception as error:
        with pytest.raises(type(error)):
            pure(pipeline.run, items, budget)
        return
    assert [id(item) for item in fast] == [id(item) for item in pure(pipeline.run, items, budget)]


@contextmanager
def recalls() -> Iterator[list[object]]:
    """Every column ``_run_columns.recall`` finds while the block runs (None where none was remembered)."""
    recalled: list[object] = []
    original = _run_columns.recall

    def spy(source: Any, name: str) -> Any:
        found = original(source, name)
        recalled.append(found)
        return found

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_run_columns, "recall", spy)
        yield recalled


def stamped_items(
    count: int, seed: int, *, start: datetime, distinct: int, pinned_share: float
) -> list[ContextItem]:
    """Items with few distinct timestamps (many ties), some missing, some pinned, and ``distinct``
    distinct contents."""
    rng = random.Random(seed)
    return [
        ContextItem(
            f"item {index % distinct}",
            rng.choice([0, 3, 10, 25]),
            priority=rng.choice([None, 1, 2]),
            timestamp=rng.choice([None, start + timedelta(seconds=rng.randint(0, 6))]),
            pinned=rng.random() < pinned_share,
        )
        for index in range(count)
    ]
