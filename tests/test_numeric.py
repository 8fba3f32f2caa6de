"""The numpy fast paths give exactly the pure-Python results (the pure path defines the behaviour)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    GreedySlice,
    KindScorer,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    _numeric,
)
from cupel.scorers._base import rank_scores
from cupel.slicers.greedy import greedy_select
from tests.numeric_paths import assert_same_run, pure
from tests.strategies import budgets, item_lists

numpy = pytest.importorskip("numpy", reason="the numpy fast paths need numpy (pycupel[fast])")


keys = st.lists(st.one_of(st.none(), st.integers(-(2**40), 2**40), st.integers(0, 5)), max_size=60)


@given(values=keys)
def test_rank_scores_match(values: list[int | None], always_fast: None) -> None:
    assert rank_scores(values) == pure(rank_scores, values)
    if sum(value is not None for value in values) > 1:
        assert _numeric.rank_scores(values) is not None  # the fast path really ran


@given(values=st.lists(st.one_of(st.none(), st.integers(-4, 3)), min_size=8, max_size=60))
def test_rank_scores_by_counting_match(values: list[int | None], always_fast: None) -> None:
    # Keys spanning fewer values than there are items are ranked by counting, not by a sort.
    present = numpy.array([value for value in values if value is not None], dtype=numpy.float64)
    if len(present) > 1:
        absent = numpy.array([value is None for value in values])
        array = numpy.array(values, dtype=numpy.float64)
        assert _numeric._counted_ranks(numpy, array, absent) is not None
    assert rank_scores(values) == pure(rank_scores, values)


def test_rank_scores_of_fractional_keys_are_sorted(always_fast: None) -> None:
    values = numpy.array([0.5, 1.0, 0.0, 2.0])
    assert _numeric._counted_ranks(numpy, values, numpy.isnan(values)) is None


def test_rank_scores_beyond_int64_fall_back(always_fast: None) -> None:
    values: list[int | None] = [2**70, 1, None, 5]
    assert _numeric.rank_scores(values) is None
    assert rank_scores(values) == pure(rank_scores, values)


scores = st.floats(allow_nan=False, min_value=-2.0, max_value=2.0) | st.sampled_from([0.0, -0.0, 0.5, 1e-300])


@given(
    rows=st.lists(st.tuples(scores, st.integers(0, 40)), max_size=60),
    target=st.integers(-5, 500),
)
def test_greedy_matches(rows: list[tuple[float, int]], target: int, always_fast: None) -> None:
    values = [score for score, _ in rows]
    tokens = [count for _, count in rows]
    order = sorted(range(len(rows)), key=values.__getitem__, reverse=True)
    assert _numeric.order_by_score(values, list(range(len(rows)))) == (order if rows else [])
    assert _numeric.greedy_order(order, tokens, values) is not None
    assert greedy_select(order, tokens, values, target) == pure(greedy_select, order, tokens, values, target)


@given(columns=st.lists(st.lists(scores, min_size=8, max_size=8), min_size=1, max_size=4), data=st.data())
def test_weighted_sum_matches(columns: list[list[float]], data: st.DataObject, always_fast: None) -> None:
    weights = data.draw(st.lists(st.floats(0.01, 1.0), min_size=len(columns), max_size=len(columns)))
    expected = [0.0] * 8
    for column, weight in zip(columns, weights, strict=True):
        expected = [total + score * weight for total, score in zip(expected, column, strict=True)]
    assert _numeric.weighted_sum(columns, weights) == expected


def test_nan_scores_use_the_pure_path(always_fast: None) -> None:
    assert _numeric.order_by_score([0.5, float("nan")], [0, 1]) is None
    assert _numeric.greedy_order([0, 1], [3, 4], [float("nan"), 0.1]) is None


PIPELINE = Pipeline(
    CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
    GreedySlice(),
    ChronologicalPlacer(),
)


@given(items=item_lists(max_size=40), budget=budgets())
def test_pipeline_output_identical_with_and_without_numpy(
    items: list[ContextItem], budget: ContextBudget, always_fast: None
) -> None:
    assert_same_run(PIPELINE, items, budget)


@given(stamps=st.lists(st.none() | st.integers(-(2**50), 2**50) | st.sampled_from([0, 1, 2]), max_size=50))
def test_chronological_order_matches(stamps: list[int | None], always_fast: None) -> None:
    timestamped = sorted(
        (index for index, key in enumerate(stamps) if key is not None), key=stamps.__getitem__
    )
    untimed = [index for index, key in enumerate(stamps) if key is None]
    assert _numeric.chronological_order(stamps) == (timestamped + untimed)


@given(
    values=st.lists(st.floats(allow_nan=False) | st.sampled_from([0.0, -0.0, 5e-324, -5e-324]), max_size=60)
)
def test_descending_is_the_stable_sort_of_negated_values(values: list[float]) -> None:
    array = numpy.array(values, dtype=numpy.float64)
    expected = numpy.argsort(-array, kind="stable")
    assert _numeric._descending(numpy, array).tolist() == expected.tolist()
