"""Each column of a large run is converted to numpy once, and the vectorised steps agree with the
plain loops they replace (greedy filling, deduplication, pipeline output on duplicated content)."""

from __future__ import annotations

import pickle
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    ContextBudget,
    ContextItem,
    ContextKind,
    ContextSource,
    KindScorer,
    _numeric,
)
from cupel._prepared import deduplicate
from cupel.scorers._base import rank_scores
from cupel.slicers.greedy import greedy_select
from tests.numeric_paths import assert_same_run, pure
from tests.strategies import budgets
from tests.test_numeric import PIPELINE

numpy = pytest.importorskip("numpy", reason="the numpy fast paths need numpy (pycupel[fast])")


START = datetime(2025, 1, 1, tzinfo=UTC)


def _candidates(count: int, seed: int) -> list[ContextItem]:
    rng = random.Random(seed)
    items: list[ContextItem] = []
    for index in range(count):
        repeated = index > 10 and rng.random() < 0.1
        items.append(
            ContextItem(
                items[rng.randrange(index)].content if repeated else f"item {index}",
                rng.choice([0, 1, 2, 3, 5, 8, 40, 120]),
                kind=rng.choice(["Message", "Document", "Memory", "tool_output"]),
                priority=rng.choice([None, 0, 1, 2, 3]),
                timestamp=rng.choice([None, START + timedelta(seconds=rng.randint(0, 30))]),
                pinned=index < 2,
            )
        )
    return items


def test_a_large_run_converts_each_column_to_numpy_once(monkeypatch: pytest.MonkeyPatch) -> None:
    items = _candidates(_numeric.THRESHOLD + 500, seed=3)
    budget = ContextBudget(40 * len(items), 10 * len(items))
    expected = pure(PIPELINE.run, items, budget)
    converted: list[object] = []  # held, so no two of them share an id
    for name in ("array", "asarray", "fromiter"):
        original = getattr(numpy, name)

        def counted(values: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            converted.append(values)
            return _original(values, *args, **kwargs)

        monkeypatch.setattr(numpy, name, counted)
    assert [id(item) for item in PIPELINE.run(items, budget)] == [id(item) for item in expected]
    # Timestamps and priorities (ranked), kind weights, content hashes, token counts, and the
    # selected items' timestamps (placement): one conversion each, none repeated.
    assert len(converted) <= 6
    assert len({id(values) for values in converted}) == len(converted)


@given(seed=st.integers(0, 2**32 - 1), budget=budgets())
def test_pipeline_on_duplicated_content_matches_the_pure_path(
    seed: int, budget: ContextBudget, always_fast: None
) -> None:
    items = _candidates(60, seed)
    assert_same_run(PIPELINE, items, budget)


@given(
    rows=st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.5, 1.0, 2.0]), st.integers(0, 12)), max_size=80),
    target=st.integers(1, 200),
    rounds=st.integers(1, 3),
)
def test_greedy_fill_matches_the_plain_loop(
    rows: list[tuple[float, int]],
    target: int,
    rounds: int,
    always_fast: None,
) -> None:
    values = [score for score, _ in rows]
    tokens = [count for _, count in rows]
    order = sorted(range(len(rows)), key=values.__getitem__, reverse=True)
    expected = pure(greedy_select, order, tokens, values, target)
    if rows:
        saved = _numeric._FILL_ROUNDS
        _numeric._FILL_ROUNDS = rounds  # few rounds: the walk over the remaining candidates runs too
        try:
            assert _numeric.greedy_fill(order, tokens, values, target) == expected
        finally:
            _numeric._FILL_ROUNDS = saved
    assert greedy_select(order, tokens, values, target) == expected


def test_greedy_fill_leaves_negative_counts_to_the_plain_loop(always_fast: None) -> None:
    assert _numeric.greedy_fill([0, 1], [5, -3], [0.5, 0.1], 4) is None
    assert greedy_select([0, 1], [5, -3], [0.5, 0.1], 4) == pure(
        greedy_select, [0, 1], [5, -3], [0.5, 0.1], 4
    )


@given(
    pairs=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "d"]) | st.text(min_size=1, max_size=2), st.floats(-1, 1)),
        max_size=50,
    )
)
def test_deduplication_with_numpy_matches_the_pure_path(
    pairs: list[tuple[str, float]], always_fast: None
) -> None:
    items = [ContextItem(content, 1) for content, _ in pairs]
    scores = [score for _, score in pairs]
    expected = pure(deduplicate, items, scores)
    assert deduplicate(items, scores) == expected
    if items:
        assert _numeric.duplicates([content for content, _ in pairs], scores) is not None  # numpy ran
    # Different contents sharing a hash are left to the pure path, as are NaN scores.
    _numeric.hash = len  # type: ignore[attr-defined]
    try:
        assert deduplicate(items, scores) == expected
    finally:
        del _numeric.hash  # type: ignore[attr-defined]
    with_nan = [float("nan") if index % 3 == 0 else score for index, score in enumerate(scores)]
    assert deduplicate(items, with_nan) == pure(deduplicate, items, with_nan)


def test_rank_keys_beyond_float_precision_use_the_exact_path(always_fast: None) -> None:
    keys: list[int | None] = [2**53 + 1, 2**53, None, 3]
    assert _numeric.rank_scores(keys) is None
    assert _numeric.chronological_order(keys) is None
    assert rank_scores(keys) == pure(rank_scores, keys) == [2 / 2, 1 / 2, 0.0, 0.0]


def test_a_column_is_a_plain_list_to_its_users(always_fast: None) -> None:
    scores = rank_scores([3, 1, None, 2])
    assert type(scores) is _numeric.Column
    assert scores == [1.0, 0.0, 0.0, 0.5]
    restored = pickle.loads(pickle.dumps(scores))
    assert type(restored) is list
    assert restored == scores


@given(
    st.lists(st.sampled_from(["Message", "message", "Ünïcode", "ÜNÏCODE", "Memo"]), max_size=40), st.data()
)
def test_kind_weights_per_kind_object_match_the_per_item_lookup(
    spellings: list[str], data: st.DataObject
) -> None:
    # Kinds built from another name type are not interned: the grouping path handles those.
    fresh = data.draw(st.booleans())
    kinds = [
        ContextKind(ContextSource(kind)) if fresh and index % 2 else kind
        for index, kind in enumerate(spellings)
    ]
    items = [ContextItem(f"c{index}", 1, kind=kind) for index, kind in enumerate(kinds)]
    scorer = KindScorer({"message": 0.5, "Ünïcode": 0.9})
    assert scorer.score_all(items) == [scorer.score(item, items) for item in items]
