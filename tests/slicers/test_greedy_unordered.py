"""GreedySlice from the candidates in index order (the untraced run's path, no Stage 4 sort) selects
exactly what ``greedy_select`` selects on the score order."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import ContextBudget, GreedySlice, _numeric
from cupel._score_order import descending_indices
from cupel.slicers._greedy_fill import greedy_fill_unordered
from cupel.slicers.greedy import greedy_select
from tests.numeric_paths import pure

numpy = pytest.importorskip("numpy", reason="the numpy fast paths need numpy (pycupel[fast])")

# Few distinct scores and token counts: many equal densities (0.5/1 and 1.0/2 among them), zero-token
# candidates, signed zeros.
scores = st.sampled_from([0.0, -0.0, 0.25, 0.5, 1.0, 2.0, -1.0, float("inf")]) | st.floats(-2, 2)
rows = st.lists(st.tuples(scores, st.sampled_from([0, 1, 2, 4, 8]) | st.integers(0, 9)), max_size=80)


@given(rows=rows, target=st.integers(1, 120), rounds=st.integers(1, 3), data=st.data())
def test_unordered_fill_matches_the_score_ordered_greedy(
    rows: list[tuple[float, int]], target: int, rounds: int, data: st.DataObject, always_fast: None
) -> None:
    values = [score for score, _ in rows]
    tokens = [count for _, count in rows]
    kept = data.draw(st.lists(st.booleans(), min_size=len(rows), max_size=len(rows)))
    survivors = [index for index, keep in enumerate(kept) if keep]  # deduplication's survivors
    order = descending_indices(survivors, values)
    expected = pure(greedy_select, order, tokens, values, target)
    saved = _numeric._FILL_ROUNDS
    _numeric._FILL_ROUNDS = rounds
    try:
        fast = greedy_fill_unordered(survivors, tokens, values, target) if survivors else []
    finally:
        _numeric._FILL_ROUNDS = saved
    assert fast is not None  # numpy decided
    assert list(fast) == expected
    budget = ContextBudget(target, target)
    assert GreedySlice()._slice_unordered(survivors, tokens, values, budget) == expected
    assert pure(GreedySlice()._slice_unordered, survivors, tokens, values, budget) == expected


@pytest.mark.parametrize(
    ("values", "tokens", "expected"),
    [
        ([0.5, 1.0, 0.25], [1, 2, 0], [2, 1, 0]),  # equal densities: the higher score first
        ([0.1, 0.3, 0.3, 0.2], [0, 0, 0, 0], [1, 2, 3, 0]),  # zero tokens: by score, then index
    ],
)
def test_equal_densities_go_by_score_then_index(
    values: list[float], tokens: list[int], expected: list[int], always_fast: None
) -> None:
    assert greedy_fill_unordered(range(len(values)), tokens, values, 100) == expected


def test_what_numpy_cannot_decide_is_sorted_first(always_fast: None) -> None:
    values = [0.5, float("nan"), 0.5]
    assert greedy_fill_unordered([0, 1, 2], [1, 1, 1], values, 2) is None
    budget = ContextBudget(2, 2)
    expected = greedy_select(descending_indices([0, 1, 2], values), [1, 1, 1], values, 2)
    assert GreedySlice()._slice_unordered([0, 1, 2], [1, 1, 1], values, budget) == expected
    assert greedy_fill_unordered([0, 1], [3, -2], [0.5, 0.1], 2) is None  # negative counts
    assert GreedySlice()._slice_unordered([0, 1], [3, -2], [0.5, 0.1], budget) == pure(
        greedy_select, [0, 1], [3, -2], [0.5, 0.1], 2
    )
