"""KnapsackSlice: the spec's rules, validation, the table-size guard, and the two DP paths."""

from __future__ import annotations

import itertools
import math
import pickle
import sys
import time
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import (
    BudgetExceeded,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    InvalidConfigurationError,
    ScoredItem,
    ScoredTooLow,
)
from cupel.errors import TableTooLargeError
from cupel.slicers import KnapsackSlice, is_count_quota_slicer, is_quota_slicer
from cupel.slicers import knapsack as knapsack_module
from cupel.slicers._knapsack_dp import _knapsack_bitset, _knapsack_reference, _plan
from cupel.slicers._knapsack_numpy import _knapsack_numpy
from cupel.slicers.knapsack import _INT64_MAX, _scaled_value, _solve
from tests.profiles import examples

from ._support import budget, contents, scored, scored_lists, spec_knapsack

# --- Edge cases (spec: KnapsackSlice, Edge Cases) ---------------------------------------------


def test_empty_input_selects_nothing() -> None:
    assert KnapsackSlice().slice([], budget(1000)) == []


def test_zero_target_selects_nothing_not_even_zero_token_items() -> None:
    assert KnapsackSlice().slice([scored("z", 0, 0.9), scored("a", 10, 0.5)], budget(0, 100)) == []


def test_all_zero_token_items_are_all_selected_in_input_order() -> None:
    items = [scored("b", 0, 0.1), scored("a", 0, 0.9), scored("c", 0, 0.5)]
    assert contents(KnapsackSlice().slice(items, budget(100))) == ["b", "a", "c"]


def test_capacity_zero_keeps_only_zero_token_items() -> None:
    # floor(99 / 100) = 0 buckets although 99 tokens would hold "small".
    items = [scored("small", 10, 0.9), scored("zero", 0, 0.1)]
    assert contents(KnapsackSlice().slice(items, budget(99))) == ["zero"]


def test_items_all_beyond_capacity_leave_only_zero_token_items() -> None:
    items = [scored("big", 301, 0.9), scored("zero", 0, 0.2), scored("huge", 900, 1.0)]
    assert contents(KnapsackSlice().slice(items, budget(300))) == ["zero"]


def test_single_fitting_candidate_is_selected_with_zero_token_items() -> None:
    items = [scored("fits", 200, 0.6), scored("zero", 0, 0.1)]
    assert contents(KnapsackSlice().slice(items, budget(200))) == ["zero", "fits"]


# --- The algorithm's rules --------------------------------------------------------------------


def test_knapsack_beats_greedy_density() -> None:
    items = [scored("big", 250, 0.7), scored("small-a", 150, 0.5), scored("small-b", 150, 0.45)]
    assert contents(KnapsackSlice().slice(items, budget(300))) == ["big"]


def test_output_is_zero_token_items_then_reconstruction_order() -> None:
    items = [scored("a", 100, 0.9), scored("z1", 0, 0.1), scored("b", 100, 0.8), scored("z2", 0, 0.0)]
    items.append(scored("c", 100, 0.7))
    # Reconstruction walks candidates last to first: c, b, a.
    assert contents(KnapsackSlice().slice(items, budget(1000))) == ["z1", "z2", "c", "b", "a"]


def test_weights_round_up_and_capacity_rounds_down() -> None:
    # 150 + 50 = 200 tokens would fit 200, but ceil(150/100) + ceil(50/100) = 3 buckets > 2.
    items = [scored("a", 150, 0.6), scored("b", 50, 0.5)]
    assert contents(KnapsackSlice().slice(items, budget(200))) == ["a"]
    # floor(299 / 100) = 2 buckets: two 100-token items, not a third.
    three = [scored(name, 100, 0.5) for name in "xyz"]
    assert len(KnapsackSlice().slice(three, budget(299))) == 2


def test_scores_are_scaled_to_four_decimals_and_ties_keep_the_earlier_item() -> None:
    # Both scale to 5000: the later item never beats the earlier one (strict >), whatever the floats say.
    items = [scored("first", 100, 0.50001), scored("second", 100, 0.50009)]
    assert contents(KnapsackSlice().slice(items, budget(100))) == ["first"]


def test_items_without_scaled_value_are_never_selected_even_with_room() -> None:
    items = [scored("tiny", 10, 0.00009), scored("negative", 10, -0.5), scored("zero", 10, 0.0)]
    assert KnapsackSlice().slice(items, budget(1000)) == []


def test_negative_token_items_are_ignored() -> None:
    items = [scored("neg", -5, 0.9), scored("ok", 50, 0.5)]
    assert contents(KnapsackSlice(bucket_size=10).slice(items, budget(100))) == ["ok"]


def test_inputs_are_not_mutated() -> None:
    items = [scored("a", 100, 0.9), scored("b", 0, 0.5)]
    snapshot = list(items)
    KnapsackSlice().slice(items, budget(500))
    assert items == snapshot


@pytest.mark.parametrize(
    ("score", "value"),
    [
        (1.0, 10000),
        (0.99999, 9999),
        (0.5, 5000),
        (0.00009, 0),
        (0.0, 0),
        (-0.3, 0),
        (math.nan, 0),
        (-math.inf, 0),
        (math.inf, _INT64_MAX),
        (1e300, _INT64_MAX),
        (7.5, 75000),
    ],
)
def test_scaled_value(score: float, value: int) -> None:
    assert _scaled_value(score) == value


def test_non_finite_scores_do_not_break_selection() -> None:
    items = [scored("nan", 100, math.nan), scored("inf", 100, math.inf), scored("ok", 100, 0.5)]
    assert contents(KnapsackSlice().slice(items, budget(100))) == ["inf"]


def test_values_beyond_int64_are_exact() -> None:
    # Three saturated values overflow int64 when summed; the pure-Python DP takes over exactly.
    items = [scored(f"s{index}", 100, 1e300) for index in range(3)] + [scored("x", 100, 0.9)]
    chosen = KnapsackSlice().slice(items, budget(200))
    assert contents(chosen) == ["s1", "s0"]


# --- Configuration ----------------------------------------------------------------------------


def test_default_bucket_size() -> None:
    assert KnapsackSlice().bucket_size == 100
    assert KnapsackSlice(bucket_size=7).bucket_size == 7


@pytest.mark.parametrize("bad", [0, -1, -100])
def test_bucket_size_must_be_positive(bad: int) -> None:
    with pytest.raises(
        InvalidConfigurationError, match=rf"KnapsackSlice\.bucket_size must be > 0, got {bad}"
    ):
        KnapsackSlice(bucket_size=bad)


@pytest.mark.parametrize("bad", [True, False, 1.5, 100.0, "100", None])
def test_bucket_size_must_be_an_int(bad: object) -> None:
    with pytest.raises(CupelTypeError, match=r"KnapsackSlice\.bucket_size must be an int, got "):
        KnapsackSlice(bucket_size=bad)  # type: ignore[arg-type]


def test_configuration_is_immutable_and_a_value() -> None:
    slicer = KnapsackSlice(50)
    with pytest.raises(AttributeError):
        slicer.bucket_size = 10  # type: ignore[misc]
    assert slicer == KnapsackSlice(50) != KnapsackSlice(51)
    assert hash(slicer) == hash(KnapsackSlice(50))
    assert repr(slicer) == "KnapsackSlice(bucket_size=50)"
    assert pickle.loads(pickle.dumps(slicer)) == slicer
    assert not is_quota_slicer(slicer)
    assert not is_count_quota_slicer(slicer)


def test_slice_detailed_selects_the_same_and_explains_in_whole_buckets() -> None:
    items = [scored("big", 250, 0.7), scored("small-a", 150, 0.5), scored("z", 0, 0.0)]
    outcome = KnapsackSlice().slice_detailed(items, budget(300))
    assert list(outcome.selected) == KnapsackSlice().slice(items, budget(300))
    # big takes all 3 buckets of the 300-token target: 0 tokens of whole buckets are left.
    assert outcome.exclusions == ((items[1].item, BudgetExceeded(150, 0)),)


def test_slice_detailed_reports_an_item_without_value_as_scored_too_low() -> None:
    # 12 chunks of 40 tokens and a 500-token target: all fit, none carries value (score 0).
    items = [scored(f"chunk {n}", 40, 0.0) for n in range(12)]
    outcome = KnapsackSlice(bucket_size=1).slice_detailed(items, budget(500))
    assert outcome.selected == ()
    assert {reason for _, reason in outcome.exclusions} == {ScoredTooLow(0.0, 0.0001)}
    # With positive scores the 500 tokens fill up and the rest are over the room left.
    valued = [scored(f"chunk {n}", 40, 0.5) for n in range(13)]
    outcome = KnapsackSlice(bucket_size=1).slice_detailed(valued, budget(500))
    assert len(outcome.selected) == 12
    assert [reason for _, reason in outcome.exclusions] == [BudgetExceeded(40, 20)]
    assert outcome.shortfalls == ()


# --- Table-size guard -------------------------------------------------------------------------


def test_table_over_fifty_million_cells_raises_before_allocating() -> None:
    items = [scored(f"i{index}", 10 + index, 0.5) for index in range(10)]
    started = time.perf_counter()
    with pytest.raises(TableTooLargeError) as raised:
        KnapsackSlice(bucket_size=1).slice(items, budget(10**12))
    assert time.perf_counter() - started < 1.0
    message = str(raised.value)
    assert "10,000,000,000,010 cells" in message
    assert "10 candidates" in message
    assert "50,000,000" in message
    assert "bucket_size (now 1)" in message


def test_table_limit_counts_candidates_times_capacity_plus_one() -> None:
    items = [scored("a", 1, 0.5), scored("b", 1, 0.4)]
    KnapsackSlice(bucket_size=1).slice(items, budget(24_999_999))  # 2 x 25,000,000 cells: allowed
    with pytest.raises(TableTooLargeError):
        KnapsackSlice(bucket_size=1).slice(items, budget(25_000_000))  # 2 x 25,000,001 cells
    # Zero-token items are not DP candidates.
    KnapsackSlice(bucket_size=1).slice([*items, scored("z", 0, 0.1)], budget(24_999_999))


def test_capacity_zero_never_raises_table_too_large() -> None:
    items = [scored(f"i{index}", 5, 0.5) for index in range(100)]
    assert KnapsackSlice(bucket_size=10**9).slice(items, budget(10**8)) == []


# --- Exactness: brute force, the spec's own loop, and the two DP paths -------------------------


def _value(entry: ScoredItem) -> int:
    return max(0, math.floor(entry.score * 10000))


@settings(max_examples=examples(150))
@given(scored_lists(max_size=12, max_tokens=60), st.integers(min_value=0, max_value=300))
def test_bucket_one_reaches_the_brute_force_optimum(items: list[ScoredItem], target: int) -> None:
    chosen = {id(item) for item in KnapsackSlice(bucket_size=1).slice(items, budget(target))}
    candidates = [entry for entry in items if entry.item.tokens > 0]
    best = 0
    for size in range(len(candidates) + 1):
        for subset in itertools.combinations(candidates, size):
            if sum(entry.item.tokens for entry in subset) <= target:
                best = max(best, sum(_value(entry) for entry in subset))
    picked = [entry for entry in candidates if id(entry.item) in chosen]
    assert sum(_value(entry) for entry in picked) == best
    assert sum(entry.item.tokens for entry in picked) <= target
    if target > 0:
        assert all(id(entry.item) in chosen for entry in items if entry.item.tokens == 0)


@settings(max_examples=examples(200))
@given(
    scored_lists(max_size=25, max_tokens=200),
    st.integers(min_value=0, max_value=1200),
    st.integers(min_value=1, max_value=60),
)
def test_selection_and_order_equal_the_spec_pseudocode(
    items: list[ScoredItem], target: int, bucket: int
) -> None:
    actual = KnapsackSlice(bucket_size=bucket).slice(items, budget(target))
    assert [id(item) for item in actual] == [
        id(item) for item in spec_knapsack(items, budget(target), bucket)
    ]


def _dp_case(capacity: int) -> st.SearchStrategy[tuple[list[tuple[int, int]], int]]:
    weights = st.one_of(
        st.integers(min_value=1, max_value=capacity + 5),
        st.integers(min_value=1, max_value=max(1, capacity // 8)),
    )
    values = st.one_of(
        st.integers(min_value=0, max_value=10_000),
        st.sampled_from([0, 1, 2, 5000]),
        st.integers(min_value=0, max_value=2**62),
    )
    return st.tuples(st.lists(st.tuples(weights, values), max_size=60), st.just(capacity))


def _score_sorted(case: tuple[list[tuple[int, int]], int]) -> tuple[list[tuple[int, int]], int]:
    """Values non-increasing, as the pipeline's sort passes them: where dominated rows are dropped."""
    pairs, capacity = case
    return sorted(pairs, key=lambda pair: pair[1], reverse=True), capacity


_any_dp_case = st.integers(min_value=1, max_value=300).flatmap(_dp_case)
dp_inputs = st.one_of(_any_dp_case, _any_dp_case.map(_score_sorted))


def _columns(case: tuple[list[tuple[int, int]], int]) -> tuple[list[int], list[int], int]:
    pairs, capacity = case
    return [weight for weight, _ in pairs], [value for _, value in pairs], capacity


@settings(max_examples=examples(300))
@given(dp_inputs)
def test_bitset_dp_selects_what_the_reference_selects(case: tuple[list[tuple[int, int]], int]) -> None:
    weights, values, capacity = _columns(case)
    assert _knapsack_bitset(weights, values, capacity) == _knapsack_reference(weights, values, capacity)


@settings(max_examples=examples(300))
@given(dp_inputs)
def test_numpy_dp_selects_what_the_reference_selects(case: tuple[list[tuple[int, int]], int]) -> None:
    weights, values, capacity = _columns(case)
    if sum(values) > _INT64_MAX:
        return  # the dispatcher never sends such values to numpy
    assert _knapsack_numpy(weights, values, capacity) == _knapsack_reference(weights, values, capacity)


@settings(max_examples=examples(100))
@given(dp_inputs)
def test_dispatch_equals_the_reference_dp(case: tuple[list[tuple[int, int]], int]) -> None:
    weights, values, capacity = _columns(case)
    assert _solve(weights, values, capacity) == _knapsack_reference(weights, values, capacity)


@settings(max_examples=examples(200))
@given(dp_inputs)
def test_dropped_rows_never_set_a_keep_bit(case: tuple[list[tuple[int, int]], int]) -> None:
    """The plan's premise, checked on the spec's full table: a row it drops is all zeros."""
    weights, values, capacity = _columns(case)
    rows = set(_plan(weights, values, capacity).rows)
    dp = [0] * (capacity + 1)
    for index, (dw, dv) in enumerate(zip(weights, values, strict=True)):
        improved = [w for w in range(dw, capacity + 1) if dp[w - dw] + dv > dp[w]]
        assert index in rows or not improved
        for w in reversed(improved):
            dp[w] = dp[w - dw] + dv


def test_plan_drops_dominated_rows_only_while_values_do_not_increase() -> None:
    # Capacity 4: before the third weight-2 item, 2 + 2 > 4 - 2 of earlier no-worse weight; the
    # fourth item comes after an increase and is kept, the zero-value one is never a row.
    plan = _plan([2, 2, 2, 2, 1], [9, 8, 7, 8, 0], 4)
    assert plan.rows == [0, 1, 3]
    # The lowest capacity the reconstruction can reach: 4 minus the weight of all later rows.
    assert plan.lows == [0, 2, 4]


@pytest.mark.parametrize("candidates", [400, 3000])
def test_fast_paths_agree_at_benchmark_scale(candidates: int) -> None:
    import random

    rng = random.Random(candidates)
    weights = [rng.randint(1, 5) for _ in range(candidates)]
    values = sorted((rng.randint(0, 10_000) for _ in range(candidates)), reverse=True)
    values[candidates // 2] += 1  # one increase: the plan keeps every later row
    expected = _knapsack_reference(weights, values, 500)
    assert _knapsack_numpy(weights, values, 500) == expected
    assert _knapsack_bitset(weights, values, 500) == expected


@pytest.fixture
def without_numpy(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    knapsack_module._numpy_solver.cache_clear()
    monkeypatch.setitem(sys.modules, "numpy", None)  # makes "import numpy" raise ImportError
    monkeypatch.delitem(sys.modules, "cupel.slicers._knapsack_numpy", raising=False)
    yield
    knapsack_module._numpy_solver.cache_clear()


def test_falls_back_silently_without_numpy(without_numpy: None) -> None:
    assert knapsack_module._numpy_solver() is None
    items = [
        scored(f"i{index}", 20 + (index * 37) % 300, ((index * 7919) % 1000) / 1000) for index in range(80)
    ]
    target = ContextBudget(5000, 5000)
    assert KnapsackSlice(bucket_size=10).slice(items, target) == spec_knapsack(items, target, 10)


def test_numpy_is_used_when_available() -> None:
    knapsack_module._numpy_solver.cache_clear()
    assert knapsack_module._numpy_solver() is _knapsack_numpy


def test_keep_table_is_bit_packed(monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    shapes: list[tuple[tuple[int, ...], object]] = []
    real_empty = np.empty

    def recording_empty(shape: object, dtype: object = float) -> object:
        result = real_empty(shape, dtype=dtype)  # type: ignore[call-overload]
        shapes.append((result.shape, result.dtype))
        return result

    monkeypatch.setattr(np, "empty", recording_empty)
    # Values increase every third item, so no row is dropped as dominated.
    _knapsack_numpy([1, 2, 3] * 10, [5, 6, 7] * 10, 999)
    assert ((30, 125), np.dtype(np.uint8)) in shapes  # 30 rows x ceil(1000 / 8) bytes


def test_items_are_returned_not_copies() -> None:
    item = ContextItem("x", 10)
    assert KnapsackSlice(bucket_size=1).slice([ScoredItem(item, 0.5)], budget(10))[0] is item
