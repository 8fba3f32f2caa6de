"""Properties every slicer keeps: a subset of its input, no item twice, within the target, deterministic,
and ``slice_detailed`` selecting exactly what ``slice`` selects."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from cupel import ContextBudget, GreedySlice, ScoredItem
from cupel.protocols import Slicer
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaSet,
    QuotaSlice,
)
from tests.profiles import examples

from ._support import scored_lists

QUOTA_KINDS = ["Message", "Document", "ToolOutput", "Memory"]


@st.composite
def quota_sets(draw: st.DrawFn) -> QuotaSet:
    kinds = draw(st.lists(st.sampled_from(QUOTA_KINDS), unique=True, max_size=4))
    entries = []
    left = 100.0
    for kind in kinds:
        # Whole and half percentages keep the requires' sum exact.
        require = draw(st.integers(min_value=0, max_value=int(left * 2))) / 2
        left -= require
        entries.append((kind, require, draw(st.floats(min_value=require, max_value=100.0))))
    return QuotaSet(entries)


@st.composite
def count_entries(draw: st.DrawFn) -> list[CountQuotaEntry]:
    kinds = draw(st.lists(st.sampled_from(QUOTA_KINDS), unique=True, max_size=4))
    entries = []
    for kind in kinds:
        cap = draw(st.integers(min_value=0, max_value=4))
        entries.append(CountQuotaEntry(kind, draw(st.integers(min_value=0, max_value=cap)), cap))
    return entries


knapsacks = st.integers(min_value=1, max_value=40).map(KnapsackSlice)
simple = st.one_of(st.just(GreedySlice()), knapsacks)
quota_slicers = st.builds(QuotaSlice, quota_sets(), simple)
count_quota_slicers = st.builds(
    CountQuotaSlice,
    count_entries(),
    st.one_of(st.just(GreedySlice()), st.builds(QuotaSlice, quota_sets(), simple)),
)
constrained = st.builds(CountConstrainedKnapsackSlice, count_entries(), knapsacks)
slicers = st.one_of(knapsacks, quota_slicers, count_quota_slicers, constrained)


def _committed_count(slicer: Slicer, items: Sequence[ScoredItem]) -> int:
    """How many leading output items Phase 1 committed (they may exceed the budget, by design)."""
    if not isinstance(slicer, CountQuotaSlice | CountConstrainedKnapsackSlice):
        return 0
    return sum(
        min(entry.require_count, sum(1 for candidate in items if candidate.item.kind == entry.kind))
        for entry in slicer.entries
    )


@settings(max_examples=examples(200))
@given(slicers, scored_lists(max_size=16), st.integers(min_value=0, max_value=800), st.integers(0, 200))
def test_slicer_contract(slicer: Slicer, items: list[ScoredItem], target: int, headroom: int) -> None:
    budget = ContextBudget(target + headroom, target)
    snapshot = list(items)
    selected = slicer.slice(items, budget)
    assert items == snapshot

    given_ids = {id(entry.item) for entry in items}
    selected_ids = [id(item) for item in selected]
    assert set(selected_ids) <= given_ids
    assert len(selected_ids) == len(set(selected_ids))
    if target == 0:
        assert selected == []

    committed = _committed_count(slicer, items) if target > 0 else 0
    committed_tokens = sum(item.tokens for item in selected[:committed])
    rest_tokens = sum(item.tokens for item in selected[committed:])
    assert rest_tokens <= max(0, target - committed_tokens)

    assert slicer.slice(items, budget) == selected
    detailed = getattr(slicer, "slice_detailed")(items, budget)  # noqa: B009
    assert list(detailed.selected) == selected
    explained = [id(item) for item, _ in detailed.exclusions]
    assert len(explained) == len(set(explained))
    assert not set(explained) & set(selected_ids)
    assert set(explained) <= given_ids
