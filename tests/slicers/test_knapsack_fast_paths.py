"""KnapsackSlice's vectorised routes, each forced on its own, against the spec's DP.

The numpy DP computes a row either over the whole width through views made once per recurring
weight, or from the row's lowest needed capacity through views made for it; these tests pin each
route (and small blocks, so rows cross block boundaries) and compare with ``_knapsack_reference``.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import ContextBudget, ContextItem, ScoredItem
from cupel.slicers import KnapsackSlice
from cupel.slicers import _knapsack_numpy as numpy_module
from cupel.slicers._knapsack_dp import _knapsack_reference, _plan
from cupel.slicers._knapsack_numpy import _knapsack_numpy, _plan_numpy, _ranks, _scaled_values_numpy
from cupel.slicers.knapsack import _INT64_MAX, SCORE_SCALE, _numpy_columns, _scaled_value
from tests.profiles import examples

from ._support import spec_knapsack

# (rows below this lowest capacity use the whole width, rows per block)
ROUTES = [(0, 64), (0, 3), (1 << 30, 64), (1 << 30, 2), (40, 5)]


def _dp_case(capacity: int) -> st.SearchStrategy[tuple[list[int], list[int], int]]:
    """Few distinct weights (the shared views) or many, tied values, weights up to past the capacity."""
    weights = st.one_of(
        st.sampled_from([1, 2, 3, capacity]),
        st.integers(min_value=1, max_value=capacity + 2),
    )
    values = st.one_of(st.sampled_from([0, 1, 7, 7, 5000]), st.integers(min_value=0, max_value=2**40))
    pairs = st.lists(st.tuples(weights, values), max_size=80)
    return st.tuples(pairs, st.booleans()).map(lambda case: _columns(*case, capacity))


def _columns(pairs: list[tuple[int, int]], ordered: bool, capacity: int) -> tuple[list[int], list[int], int]:
    """Weights and values; ``ordered`` sorts the values non-increasing, as the pipeline's sort does."""
    values = [value for _, value in pairs]
    return [weight for weight, _ in pairs], sorted(values, reverse=True) if ordered else values, capacity


dp_cases = st.integers(min_value=1, max_value=200).flatmap(_dp_case)


@pytest.mark.parametrize(("full_width_below", "block_rows"), ROUTES)
@settings(max_examples=examples(60), deadline=None)
@given(case=dp_cases)
def test_each_route_selects_what_the_reference_selects(
    full_width_below: int, block_rows: int, case: tuple[list[int], list[int], int]
) -> None:
    weights, values, capacity = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(numpy_module, "_FULL_WIDTH_BELOW", full_width_below)
        patch.setattr(numpy_module, "_MAX_BLOCK_ROWS", block_rows)
        selected = _knapsack_numpy(weights, values, capacity)
    assert selected == _knapsack_reference(weights, values, capacity)


@settings(max_examples=examples(300))
@given(dp_cases)
def test_numpy_plan_equals_the_plan(case: tuple[list[int], list[int], int]) -> None:
    weights, values, capacity = case
    assert _plan_numpy(weights, values, capacity) == _plan(weights, values, capacity)


@settings(max_examples=examples(100))
@given(st.lists(st.one_of(st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=10**6))))
def test_ranks_by_counting_or_sorting_equal_numpys_unique(weights: list[int]) -> None:
    import numpy as np

    array = np.array(weights, dtype=np.int64)
    distinct, rank = np.unique(array, return_inverse=True)
    count, ranks = _ranks(array)
    assert count == distinct.size
    assert ranks.tolist() == rank.tolist()


@pytest.mark.parametrize("max_cells", [0, 1 << 18])
def test_numpy_plan_at_scale_and_on_its_fallbacks(monkeypatch: pytest.MonkeyPatch, max_cells: int) -> None:
    # Weights beyond int64 and too many distinct weights take _plan; both give the same answer.
    monkeypatch.setattr(numpy_module, "_MAX_PLAN_CELLS", max_cells)
    rng = random.Random(max_cells)
    weights = [rng.randint(1, 6) for _ in range(3000)]
    values = sorted((rng.randint(0, 10_000) for _ in weights), reverse=True)
    assert _plan_numpy(weights, values, 900) == _plan(weights, values, 900)
    values[2000] += 1
    assert _plan_numpy(weights, values, 900) == _plan(weights, values, 900)
    weights[5] = 2**70
    assert _plan_numpy(weights, values, 900) == _plan(weights, values, 900)


def test_wide_table_mixes_both_routes() -> None:
    # Capacity 3000: early rows (lowest capacity 0) take the whole width, late rows start above 2048.
    rng = random.Random(18)
    weights = [rng.choice([1, 2, 3, 4]) if index % 5 else rng.randint(5, 60) for index in range(400)]
    values = sorted((rng.randint(0, 10_000) for _ in weights), reverse=True)
    values[300] += 20_000  # an increase: every later row stays in the plan
    assert _knapsack_numpy(weights, values, 3000) == _knapsack_reference(weights, values, 3000)


@pytest.mark.parametrize("total", [2**31 - 1, 2**31, _INT64_MAX])
def test_value_sums_at_the_int32_and_int64_bounds(total: int) -> None:
    # Three items, the heaviest value taking what the others leave: int32 below 2**31, int64 up to its max.
    values = [total - 3, 2, 1]
    weights = [2, 1, 1]
    for capacity in (1, 2, 3, 4):
        expected = _knapsack_reference(weights, values, capacity)
        assert _knapsack_numpy(weights, values, capacity) == expected


def test_weight_equal_to_capacity_and_ties() -> None:
    weights = [5, 5, 1, 1, 1, 1, 1]
    values = [9, 9, 2, 2, 2, 2, 2]
    for capacity in range(1, 8):
        expected = _knapsack_reference(weights, values, capacity)
        assert _knapsack_numpy(weights, values, capacity) == expected


# --- slice(): candidates and scaled values in whole-list passes ---------------------------------

finite_or_not = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=-1.0, max_value=2.0),
    st.sampled_from([0.0, -0.0, 1e-4, 0.99999, 1.0, 9.223372036854775e14, 9.223372036854776e14, 5e-324]),
)


@settings(max_examples=examples(200))
@given(st.lists(finite_or_not, max_size=40))
def test_vectorised_scaling_equals_the_scalar_rule(scores: list[float]) -> None:
    expected = [_scaled_value(score) for score in scores]
    assert _scaled_values_numpy(scores, SCORE_SCALE).tolist() == expected


@settings(max_examples=examples(100))
@given(
    st.lists(
        st.tuples(st.integers(min_value=1, max_value=2**63 - 1), finite_or_not), min_size=1, max_size=30
    ),
    st.one_of(st.integers(min_value=1, max_value=1000), st.just(2**63 - 1)),
)
def test_numpy_columns_equal_the_per_item_rules(pairs: list[tuple[int, float]], bucket: int) -> None:
    tokens = [count for count, _ in pairs]
    scores: list[object] = [score for _, score in pairs]
    columns = _numpy_columns(tokens, scores, bucket)
    assert columns is not None
    assert columns.weights == [-(-count // bucket) for count in tokens]
    assert columns.values == [_scaled_value(score) for _, score in pairs]
    assert columns.weight_array.tolist() == columns.weights
    assert columns.value_array.tolist() == columns.values


def test_numpy_columns_decline_what_they_cannot_compute_exactly() -> None:
    # Ints and numpy floats go through float() one by one; numbers beyond int64 stay Python ints.
    import numpy as np

    assert _numpy_columns([10, 20], [1, 0.5], 3) is None
    assert _numpy_columns([10, 20], [np.float32(0.25), 0.5], 3) is None
    assert _numpy_columns([10, 2**63], [0.25, 0.5], 3) is None
    assert _numpy_columns([10, 20], [0.25, 0.5], 2**63) is None
    assert _numpy_columns([10, 20], [0.25, 0.5], 3) is not None


@settings(max_examples=examples(25), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.integers(min_value=-5, max_value=600), st.sampled_from([0, -1, 7, 8])),
            st.one_of(st.floats(min_value=0.0, max_value=1.0), st.sampled_from([0.5, 0.0, -1.0])),
        ),
        min_size=220,
        max_size=260,
    ),
    st.sampled_from([1, 7]),
    st.booleans(),
)
def test_slice_at_numpy_sizes_equals_the_spec_pseudocode(
    pairs: list[tuple[int, float]], bucket: int, ordered: bool
) -> None:
    """Zero-token, negative-token and tied items at sizes that take the numpy route (capacity 600)."""
    if ordered:
        pairs = sorted(pairs, key=lambda pair: pair[1], reverse=True)
    items = [ScoredItem(ContextItem(f"i{n}", tokens), score) for n, (tokens, score) in enumerate(pairs)]
    target = ContextBudget(600 * bucket, 600 * bucket)
    actual = KnapsackSlice(bucket_size=bucket).slice(items, target)
    assert [id(item) for item in actual] == [id(item) for item in spec_knapsack(items, target, bucket)]


def test_slice_at_numpy_sizes_with_non_float_scores_and_huge_tokens() -> None:
    # Int and numpy scores, and a token count beyond int64, take the per-item computation.
    import numpy as np

    rng = random.Random(7)
    scores: list[object] = [rng.choice([1, 0, np.float32(0.375), 0.5, rng.random()]) for _ in range(300)]
    items = [ScoredItem(ContextItem(f"i{n}", rng.randint(1, 600)), s) for n, s in enumerate(scores)]  # type: ignore[arg-type]
    items.append(ScoredItem(ContextItem("huge", 2**64), 0.9))
    target = ContextBudget(600, 600)
    actual = KnapsackSlice(bucket_size=1).slice(items, target)
    assert [id(item) for item in actual] == [id(item) for item in spec_knapsack(items, target, 1)]
