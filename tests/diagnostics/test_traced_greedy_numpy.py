"""The traced GreedySlice stage on numpy arrays explains exactly what the greedy walk does.

``always_fast`` (tests/numeric_paths.py) lowers the numpy threshold to 0 for the Hypothesis inputs.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.diagnostics.test_report_building import (
    _ScoredListGreedy,
    _without_timings,
    assert_explained_as_by_identity,
)
from tests.profiles import examples
from tests.strategies import SAMPLE_PIPELINES, budgets, item_lists

from cupel import ContextBudget, ContextItem, GreedySlice, Pipeline, PriorityScorer
from cupel._tracer import _greedy_left_out
from cupel.slicers.greedy import greedy_select

pytest.importorskip("numpy", reason="the numpy fast paths need numpy (pycupel[fast])")


def _walked(order: list[int], tokens: list[int], scores: list[float], target: int) -> tuple:  # type: ignore[type-arg]
    skipped: list[tuple[int, int]] = []
    chosen = greedy_select(order, tokens, scores, target, skipped)
    remaining = dict(skipped)
    left = [index for index in order if index not in set(chosen)]
    return chosen, left, [remaining[index] for index in left], [tokens[index] for index in left]


@settings(max_examples=examples(150), deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 50), st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0])), max_size=60),
    st.integers(1, 400),
    st.randoms(use_true_random=False),
)
def test_left_out_and_remaining_equal_the_greedy_walk(
    always_fast: None, rows: list[tuple[int, float]], target: int, rng: random.Random
) -> None:
    tokens = [row[0] for row in rows]
    scores = [row[1] for row in rows]
    order = list(range(len(rows)))
    rng.shuffle(order)
    fast = _greedy_left_out(order, tokens, scores, target)
    assert fast is not None  # the array path really ran
    left = (fast[1].tolist(), fast[2].tolist(), fast[3].tolist())
    assert (list(fast[0]), *left) == _walked(order, tokens, scores, target)
    assert fast[4] == all(count > 0 for count in tokens)


@settings(max_examples=examples(120), deadline=None)
@given(item_lists(allow_negative=True), budgets(), st.sampled_from(SAMPLE_PIPELINES[:3]))
def test_numpy_traced_greedy_reports_equal_the_identity_based_ones(
    always_fast: None, items: list[ContextItem], budget: ContextBudget, sample: Pipeline
) -> None:
    assert type(sample.slicer) is GreedySlice
    assert_explained_as_by_identity(sample, items, budget)


def test_a_large_run_takes_the_array_path_and_explains_the_same() -> None:
    rng = random.Random(3)
    items = [
        ContextItem(f"item {index}", rng.randint(0, 300), priority=rng.randint(0, 9)) for index in range(6000)
    ]
    budget = ContextBudget(200_000, 150_000)
    order = list(range(len(items)))
    assert _greedy_left_out(order, [item.tokens for item in items], [1.0] * len(items), 150_000) is not None
    greedy = Pipeline(PriorityScorer(), GreedySlice(), SAMPLE_PIPELINES[0].placer)
    general = Pipeline(PriorityScorer(), _ScoredListGreedy(), SAMPLE_PIPELINES[0].placer)
    actual, expected = greedy.dry_run(items, budget), general.dry_run(items, budget)
    assert _without_timings(actual).to_json() == _without_timings(expected).to_json()
    assert actual.items == greedy.run(items, budget)
