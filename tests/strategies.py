"""Hypothesis strategies for cupel's data model, shared across test modules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    CountQuotaEntry,
    CountQuotaSlice,
    FrequencyScorer,
    GreedySlice,
    KindScorer,
    KnapsackSlice,
    OverflowStrategy,
    Pipeline,
    PriorityScorer,
    QuotaSet,
    QuotaSlice,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    UShapedPlacer,
)

KINDS = ["Message", "message", "Document", "ToolOutput", "Memory", "SystemPrompt", "Scratchpad"]
TAGS = ["a", "A", "b", "c", "Important", "important", "x"]
BASE = datetime(2024, 1, 1, tzinfo=UTC)

timestamps = st.one_of(
    st.none(),
    st.integers(min_value=0, max_value=20).map(lambda hours: BASE + timedelta(hours=hours)),
)


@st.composite
def items(draw: st.DrawFn, *, allow_negative: bool = False, allow_pinned: bool = True) -> ContextItem:
    low = -5 if allow_negative else 0
    return ContextItem(
        draw(st.sampled_from(["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta"]))
        + draw(st.sampled_from(["", "", "!", " 2"])),
        draw(st.integers(min_value=low, max_value=120)),
        kind=draw(st.sampled_from(KINDS)),
        priority=draw(st.one_of(st.none(), st.integers(min_value=-3, max_value=6))),
        tags=draw(st.lists(st.sampled_from(TAGS), max_size=3)),
        timestamp=draw(timestamps),
        future_relevance_hint=draw(
            st.one_of(st.none(), st.floats(min_value=-0.5, max_value=1.5, allow_nan=False))
        ),
        pinned=draw(st.booleans()) if allow_pinned and draw(st.integers(0, 9)) == 0 else False,
        metadata=draw(
            st.sampled_from(
                [None, {"cupel:trust": "0.8"}, {"cupel:trust": "high"}, {"cupel:priority": "high"}]
            )
        ),
    )


@st.composite
def item_lists(draw: st.DrawFn, *, max_size: int = 25, **kwargs: bool) -> list[ContextItem]:
    """Lists of items, sometimes holding the same instance twice."""
    result = draw(st.lists(items(**kwargs), max_size=max_size))
    if result and draw(st.booleans()):
        result.append(result[draw(st.integers(0, len(result) - 1))])
    return result


@st.composite
def budgets(draw: st.DrawFn) -> ContextBudget:
    max_tokens = draw(st.integers(min_value=0, max_value=1500))
    target = draw(st.integers(min_value=0, max_value=max_tokens))
    reserve = draw(st.integers(min_value=0, max_value=max_tokens // 4))
    return ContextBudget(
        max_tokens,
        target,
        output_reserve=reserve,
        estimation_safety_margin_percent=draw(st.sampled_from([0.0, 0.0, 5.0, 12.5])),
    )


#: Pipelines the property tests run: every built-in slicer, both placers, each overflow strategy.
SAMPLE_PIPELINES = [
    Pipeline(
        CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
        GreedySlice(),
        ChronologicalPlacer(),
    ),
    Pipeline(
        ScaledScorer(FrequencyScorer()),
        GreedySlice(),
        UShapedPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
    Pipeline(
        ReflexiveScorer(),
        GreedySlice(),
        UShapedPlacer(),
        deduplication=False,
        overflow_strategy=OverflowStrategy.PROCEED,
    ),
    Pipeline(PriorityScorer(), KnapsackSlice(bucket_size=10), ChronologicalPlacer()),
    Pipeline(
        KindScorer(),
        QuotaSlice(QuotaSet([("Message", 10, 60), ("Document", 0, 30)]), GreedySlice()),
        UShapedPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
    Pipeline(
        RecencyScorer(),
        CountQuotaSlice(
            [CountQuotaEntry("Memory", 1, 2), CountQuotaEntry("ToolOutput", 0, 1)], GreedySlice()
        ),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.PROCEED,
    ),
]
