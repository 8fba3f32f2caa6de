"""Columns a run derives once and reuses (cupel/_run_columns.py): the placer's reuse of RecencyScorer's
timestamp keys, the Selection the pipeline places by index, and the scorers' arrays, all identical to
the plain paths."""

from __future__ import annotations

from datetime import UTC, datetime

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
    OverflowStrategy,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    UShapedPlacer,
    _numeric,
    _run_columns,
)
from cupel._run_columns import Selection, recall, remember, run_scope, take
from tests.numeric_paths import assert_same_run, pure, recalls, stamped_items
from tests.strategies import budgets, item_lists

numpy = pytest.importorskip("numpy", reason="the numpy fast paths need numpy (pycupel[fast])")

START = datetime(2025, 1, 1, tzinfo=UTC)
COMPOSITE = CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)])
PIPELINES = [
    Pipeline(COMPOSITE, GreedySlice(), ChronologicalPlacer(), overflow_strategy=strategy)
    for strategy in OverflowStrategy
] + [
    Pipeline(RecencyScorer(), GreedySlice(), UShapedPlacer()),
    Pipeline(PriorityScorer(), GreedySlice(), ChronologicalPlacer()),  # nothing remembered
]


@given(items=item_lists(max_size=40), budget=budgets(), which=st.integers(0, len(PIPELINES) - 1))
def test_runs_reusing_columns_match_the_pure_path(
    items: list[ContextItem], budget: ContextBudget, which: int, always_fast: None
) -> None:
    assert_same_run(PIPELINES[which], items, budget)


@given(seed=st.integers(0, 2**32 - 1), target=st.integers(0, 400))
def test_the_placer_takes_the_remembered_timestamps(seed: int, target: int, always_fast: None) -> None:
    items = stamped_items(60, seed, start=START, distinct=40, pinned_share=0.05)
    budget = ContextBudget(10_000, target + sum(item.tokens for item in items if item.pinned))  # no overflow
    with recalls() as recalled:
        assert_same_run(PIPELINES[0], items, budget)
    assert recalled[0] is not None  # the numpy run took them (the pure run has none to take)


@given(
    pinned=st.integers(0, 3),
    chosen=st.lists(st.integers(0, 9), max_size=10, unique=True),
    data=st.data(),
)
def test_a_selection_reads_like_the_list_it_stands_for(
    pinned: int, chosen: list[int], data: st.DataObject
) -> None:
    source = [ContextItem(f"s{index}", 1) for index in range(10)]
    front = [ContextItem(f"p{index}", 1, pinned=True) for index in range(pinned)]
    expected = front + [source[index] for index in chosen]
    for indices in (chosen, _numeric.column(numpy.array(chosen, dtype=numpy.int64), chosen)):
        selection = Selection(front, source, indices)
        assert len(selection) == len(expected)
        assert list(selection) == expected
        assert [selection[position] for position in range(-len(expected), len(expected))] == expected * 2
        assert selection[1:3] == expected[1:3]
        with pytest.raises(IndexError):
            selection[len(expected)]
        positions = data.draw(st.permutations(range(len(expected))))
        placed = [expected[position] for position in positions]
        assert take(selection, positions) == placed
        array = numpy.array(positions, dtype=numpy.int64)
        assert take(selection, _numeric.column(array, positions)) == placed


def test_columns_are_remembered_only_inside_a_run_and_only_for_that_list() -> None:
    source = [ContextItem("a", 1)]
    remember(source, "x", 1)
    assert recall(source, "x") is None  # no run: nothing kept
    with run_scope():
        remember(source, "x", 1)
        assert recall(source, "x") == 1
        assert recall(list(source), "x") is None  # an equal list is another list
        with run_scope():  # a nested run starts empty and leaves the outer one as it was
            assert recall(source, "x") is None
        assert recall(source, "x") == 1
    assert recall(source, "x") is None
    assert getattr(_run_columns._state, "columns", None) is None  # nothing held after the run


@given(items=item_lists(max_size=30))
def test_composite_arrays_combine_to_the_pure_scores(items: list[ContextItem], always_fast: None) -> None:
    assert COMPOSITE.score_all(items) == pure(COMPOSITE.score_all, items)
    assert KindScorer().score_all(items) == pure(KindScorer().score_all, items)
