"""Running code with and without cupel's numpy fast paths (see ``cupel._numeric``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cupel import _numeric


@pytest.fixture(scope="module")
def always_fast() -> Iterator[None]:
    """Use the numpy paths even for the short lists Hypothesis generates."""
    saved = _numeric.THRESHOLD
    _numeric.THRESHOLD = 0
    yield
    _numeric.THRESHOLD = saved


def pure(function: Any, *args: Any) -> Any:
    """``function(*args)`` with the numpy paths off: the reference behaviour."""
    saved = _numeric._numpy, _numeric._numpy_checked
    _numeric._numpy, _numeric._numpy_checked = None, True
    try:
        return function(*args)
    finally:
        _numeric._numpy, _numeric._numpy_checked = saved


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
