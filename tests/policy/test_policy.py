"""Policy: validation, value semantics, and the Pipeline methods built on it."""

from __future__ import annotations

import dataclasses

import pytest

from cupel import (
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    OverflowEvent,
    OverflowStrategy,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel.policy import Policy, get_preset
from cupel.slicers import CountQuotaEntry, CountQuotaSlice


def simple() -> Policy:
    return Policy(RecencyScorer(), GreedySlice(), ChronologicalPlacer())


def test_defaults() -> None:
    policy = simple()
    assert policy.deduplication is True
    assert policy.overflow_strategy is OverflowStrategy.THROW


def test_is_immutable_and_slotted() -> None:
    policy = simple()
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.deduplication = False  # type: ignore[misc]
    assert not hasattr(policy, "__dict__")


def test_value_equality_and_hash() -> None:
    assert simple() == simple()
    assert hash(simple()) == hash(simple())
    assert simple() != simple().replace(placer=UShapedPlacer())
    assert len({simple(), simple(), get_preset("chat")}) == 2


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("scorer", object(), "Policy.scorer must have a score() method"),
        ("slicer", RecencyScorer(), "Policy.slicer must have a slice() method"),
        ("placer", None, "Policy.placer must have a place() method"),
        ("deduplication", 1, "Policy.deduplication must be a bool, got 1"),
        ("overflow_strategy", "sometimes", "Policy.overflow_strategy must be an OverflowStrategy"),
    ],
)
def test_validation(field: str, value: object, message: str) -> None:
    with pytest.raises(CupelTypeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        simple().replace(**{field: value})


def test_overflow_strategy_accepts_its_value() -> None:
    assert simple().replace(overflow_strategy="Truncate").overflow_strategy is OverflowStrategy.TRUNCATE


def test_can_hold_count_quota_slicers() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("ToolOutput", 1, 2)], GreedySlice())
    policy = simple().replace(slicer=slicer)
    assert Pipeline.from_policy(policy).slicer is slicer


def test_build_pipeline_and_from_policy_agree() -> None:
    events: list[OverflowEvent] = []
    policy = Policy(
        PriorityScorer(), GreedySlice(), UShapedPlacer(), deduplication=False, overflow_strategy="proceed"
    )
    built = policy.build_pipeline(on_overflow=events.append)
    via_class = Pipeline.from_policy(policy, on_overflow=events.append)
    for pipeline in (built, via_class):
        assert pipeline.scorer is policy.scorer
        assert pipeline.slicer is policy.slicer
        assert pipeline.placer is policy.placer
        assert pipeline.deduplication is False
        assert pipeline.overflow_strategy is OverflowStrategy.PROCEED
        assert pipeline.on_overflow == events.append
        assert Policy.from_pipeline(pipeline) == policy


def test_from_policy_rejects_other_values() -> None:
    with pytest.raises(CupelTypeError, match="policy must be a Policy, got Pipeline"):
        Pipeline.from_policy(simple().build_pipeline())  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        Policy.from_pipeline(simple())  # type: ignore[arg-type]


def test_pipeline_policy_round_trip() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer(), deduplication=False)
    policy = Policy.from_pipeline(pipeline)
    assert Policy.from_pipeline(Pipeline.from_policy(policy)) == policy


def test_pipeline_policy_property_is_deprecated_but_works() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer(), deduplication=False)
    with pytest.warns(DeprecationWarning, match=r"Policy\.from_pipeline"):
        policy = pipeline.policy
    assert policy == Policy.from_pipeline(pipeline)


def test_dry_run_with_policy_uses_the_policy_not_the_pipeline() -> None:
    items = [
        ContextItem("a", 40, priority=10, future_relevance_hint=0.1),
        ContextItem("b", 40, priority=1, future_relevance_hint=0.9),
    ]
    budget = ContextBudget(50, 40)
    pipeline = Pipeline(PriorityScorer(), GreedySlice(), ChronologicalPlacer())
    assert [e.item.content for e in pipeline.dry_run(items, budget).included] == ["a"]
    reflexive = Policy(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    report = pipeline.dry_run_with_policy(items, budget, reflexive)
    assert [e.item.content for e in report.included] == ["b"]
    # The pipeline itself is unchanged.
    assert isinstance(pipeline.scorer, PriorityScorer)


def test_dry_run_with_policy_keeps_the_pipeline_observer() -> None:
    events: list[OverflowEvent] = []
    items = [ContextItem("pinned", 30, pinned=True), ContextItem("b", 10)]
    pipeline = Pipeline(PriorityScorer(), GreedySlice(), ChronologicalPlacer(), on_overflow=events.append)
    policy = Policy(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer(), overflow_strategy="proceed")
    pipeline.dry_run_with_policy(items, ContextBudget(40, 20), policy)
    assert len(events) == 1 and events[0].tokens_over_budget == 10
