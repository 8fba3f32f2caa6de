"""Hypothesis strategies for valid policies built from every built-in scorer, slicer and placer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import strategies as st

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    DecayScorer,
    ExponentialCurve,
    FixedTimeProvider,
    FrequencyScorer,
    GreedySlice,
    KindScorer,
    MetadataKeyScorer,
    MetadataTrustScorer,
    OverflowStrategy,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    ScaledScorer,
    StepCurve,
    TagScorer,
    UShapedPlacer,
    WindowCurve,
)
from cupel.model import ascii_fold
from cupel.policy import Policy
from cupel.protocols import Placer, Scorer, Slicer
from cupel.slicers import (
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    KnapsackSlice,
    QuotaEntry,
    QuotaSet,
    QuotaSlice,
    ScarcityBehavior,
)

CLOCK = FixedTimeProvider(datetime(2024, 6, 1, tzinfo=UTC))

# Kind names: well-known ones, odd ones that need quoting in TOML, and arbitrary text.
kind_names = st.one_of(
    st.sampled_from(
        ["Message", "Document", "ToolOutput", "Memory", "SystemPrompt", "tool output", "Ünïcode", "a.b"]
    ),
    st.text(min_size=1, max_size=8).filter(lambda text: bool(text.strip())),
)
weights = st.one_of(
    st.floats(min_value=1e-6, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.integers(min_value=1, max_value=10).map(float),
)
non_negative = st.one_of(st.just(0.0), weights)
unit = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)
durations = st.timedeltas(min_value=timedelta(microseconds=1), max_value=timedelta(days=3650))


def _distinct_kinds(min_size: int = 0, max_size: int = 4) -> st.SearchStrategy[list[str]]:
    return st.lists(kind_names, min_size=min_size, max_size=max_size, unique_by=ascii_fold)


@st.composite
def kind_scorers(draw: st.DrawFn) -> KindScorer:
    if draw(st.booleans()):
        return KindScorer()
    kinds = draw(_distinct_kinds())
    return KindScorer({kind: draw(non_negative) for kind in kinds})


@st.composite
def tag_scorers(draw: st.DrawFn) -> TagScorer:
    tags = draw(st.lists(st.text(max_size=6), max_size=4, unique_by=ascii_fold))
    return TagScorer({tag: draw(non_negative) for tag in tags}, case_sensitive=draw(st.booleans()))


@st.composite
def step_curves(draw: st.DrawFn) -> StepCurve:
    ages = sorted(draw(st.lists(durations, min_size=1, max_size=4, unique=True)))
    return StepCurve([(age, draw(unit)) for age in ages])


curves = st.one_of(
    st.builds(ExponentialCurve, durations),
    st.builds(WindowCurve, durations),
    step_curves(),
)

leaf_scorers: st.SearchStrategy[Scorer] = st.one_of(
    st.builds(RecencyScorer),
    st.builds(PriorityScorer),
    st.builds(FrequencyScorer),
    st.builds(ReflexiveScorer),
    kind_scorers(),
    tag_scorers(),
    st.builds(MetadataTrustScorer, unit),
    st.builds(MetadataKeyScorer, st.text(max_size=8), st.text(max_size=8), weights),
    st.builds(lambda curve, null: DecayScorer(CLOCK, curve, null_timestamp_score=null), curves, unit),
)


def _extend(children: st.SearchStrategy[Scorer]) -> st.SearchStrategy[Scorer]:
    return st.one_of(
        st.builds(ScaledScorer, children),
        st.lists(st.tuples(children, weights), min_size=1, max_size=3).map(CompositeScorer),
    )


scorers: st.SearchStrategy[Scorer] = st.recursive(leaf_scorers, _extend, max_leaves=6)


@st.composite
def quota_sets(draw: st.DrawFn) -> QuotaSet:
    kinds = draw(_distinct_kinds())
    entries = []
    for kind in kinds:
        cap = draw(st.floats(min_value=0.0, max_value=100.0))
        share = min(cap, float(100 // len(kinds)))  # the requires may sum to at most 100
        entries.append(QuotaEntry(kind, draw(st.floats(min_value=0.0, max_value=share)), cap))
    return QuotaSet(entries)


@st.composite
def count_entries(draw: st.DrawFn) -> list[CountQuotaEntry]:
    result = []
    for kind in draw(_distinct_kinds()):
        cap = draw(st.integers(min_value=0, max_value=6))
        require = draw(st.integers(min_value=0, max_value=cap))
        result.append(CountQuotaEntry(kind, require, cap))
    return result


buckets = st.integers(min_value=1, max_value=500)
scarcities = st.sampled_from(list(ScarcityBehavior))
simple_slicers: st.SearchStrategy[Slicer] = st.one_of(
    st.builds(GreedySlice), st.builds(KnapsackSlice, buckets)
)
slicers: st.SearchStrategy[Slicer] = st.one_of(
    simple_slicers,
    st.builds(QuotaSlice, quota_sets(), simple_slicers),
    st.builds(CountQuotaSlice, count_entries(), st.builds(GreedySlice), scarcities),
    st.builds(
        CountQuotaSlice,
        count_entries(),
        st.builds(QuotaSlice, quota_sets(), simple_slicers),
        scarcities,
    ),
    st.builds(QuotaSlice, quota_sets(), st.builds(CountQuotaSlice, count_entries(), st.builds(GreedySlice))),
    st.builds(CountConstrainedKnapsackSlice, count_entries(), st.builds(KnapsackSlice, buckets), scarcities),
)
placers: st.SearchStrategy[Placer] = st.sampled_from([ChronologicalPlacer(), UShapedPlacer()])

policies: st.SearchStrategy[Policy] = st.builds(
    Policy, scorers, slicers, placers, st.booleans(), st.sampled_from(list(OverflowStrategy))
)
