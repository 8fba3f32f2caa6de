"""Placers (spec: Placers)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from cupel import ChronologicalPlacer, ContextItem, ScoredItem, UShapedPlacer
from tests.strategies import item_lists

T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_u_shape_pattern() -> None:
    items = [ScoredItem(ContextItem(str(n), 1), score) for n, score in enumerate([0.1, 0.9, 0.5, 0.7, 0.3])]
    assert [i.content for i in UShapedPlacer().place(items)] == ["1", "2", "0", "4", "3"]


def test_chronological_ignores_scores() -> None:
    items = [
        ScoredItem(ContextItem("late", 1, timestamp=T0 + timedelta(days=1)), 1.0),
        ScoredItem(ContextItem("early", 1, timestamp=T0), 0.0),
    ]
    assert [i.content for i in ChronologicalPlacer().place(items)] == ["early", "late"]


@given(items=item_lists(), scores=st.lists(st.floats(0, 1), min_size=30, max_size=30))
def test_placers_reorder_only(items: list[ContextItem], scores: list[float]) -> None:
    scored = [ScoredItem(item, scores[n]) for n, item in enumerate(items)]
    for placer in (ChronologicalPlacer(), UShapedPlacer()):
        placed = placer.place(scored)
        assert sorted(map(id, placed)) == sorted(id(i) for i in items)
        assert placer.place(scored) == placed


@given(items=item_lists())
def test_chronological_matches_spec_comparator(items: list[ContextItem]) -> None:
    scored = [ScoredItem(item, 0.0) for item in items]
    expected = [
        items[index]
        for index in sorted(
            range(len(items)),
            key=lambda n: (items[n].timestamp is None, items[n].timestamp or T0, n),
        )
    ]
    assert ChronologicalPlacer().place(scored) == expected


@given(scores=st.lists(st.floats(0, 1, allow_nan=False), max_size=20))
def test_u_shape_edges_hold_top_scores(scores: list[float]) -> None:
    scored = [ScoredItem(ContextItem(str(n), 1), s) for n, s in enumerate(scores)]
    placed = UShapedPlacer().place(scored)
    by_content = {i.content: s for i, s in zip((e.item for e in scored), scores, strict=True)}
    placed_scores = [by_content[i.content] for i in placed]
    # Non-increasing from the left edge to the middle and from the right edge to the middle.
    middle = (len(placed_scores) - 1) // 2
    left = placed_scores[: middle + 1]
    right = placed_scores[middle + 1 :][::-1]
    assert left == sorted(left, reverse=True)
    assert right == sorted(right, reverse=True)
