"""Policy sensitivity (spec: Policy Sensitivity)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cupel import (
    BudgetOverflowError,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    CupelTypeError,
    GreedySlice,
    InvalidConfigurationError,
    OverflowStrategy,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel.analytics import (
    MINIMUM_VARIANTS_MESSAGE,
    ItemStatus,
    PolicySensitivityDiffEntry,
    PolicySensitivityReport,
    policy_sensitivity,
    policy_sensitivity_from_pipelines,
)
from cupel.policy import Policy, get_preset
from cupel.slicers import CountQuotaEntry, CountQuotaSlice
from tests.policy._items import conversation
from tests.strategies import item_lists

INCLUDED = ItemStatus.INCLUDED
EXCLUDED = ItemStatus.EXCLUDED


def spec_items() -> list[ContextItem]:
    return [
        ContextItem("item-a", 40, priority=10, future_relevance_hint=0.1),
        ContextItem("item-b", 40, priority=1, future_relevance_hint=0.9),
    ]


def policy(scorer: object) -> Policy:
    return Policy(scorer, GreedySlice(), ChronologicalPlacer(), True, OverflowStrategy.THROW)  # type: ignore[arg-type]


def test_the_spec_two_variant_example() -> None:
    """The spec's Rust example: priority keeps item-a, reflexive keeps item-b."""
    report = policy_sensitivity(
        spec_items(),
        ContextBudget(50, 40),
        [("priority", policy(PriorityScorer())), ("reflexive", policy(ReflexiveScorer()))],
    )
    assert [label for label, _ in report.variants] == ["priority", "reflexive"]
    assert [[e.item.content for e in r.included] for _, r in report.variants] == [["item-a"], ["item-b"]]
    assert report.diffs == (
        PolicySensitivityDiffEntry("item-a", (("priority", INCLUDED), ("reflexive", EXCLUDED))),
        PolicySensitivityDiffEntry("item-b", (("priority", EXCLUDED), ("reflexive", INCLUDED))),
    )
    assert report.diffs[0].status_of("reflexive") is EXCLUDED
    with pytest.raises(KeyError):
        report.diffs[0].status_of("nope")
    assert report.report_for("reflexive") is report.variants[1][1]


def test_the_spec_preset_example() -> None:
    """The spec's .NET example compares the code-review and rag intents; here with cupel's presets."""
    report = policy_sensitivity(
        spec_items(),
        ContextBudget(50, 40),
        [("code-review", get_preset("code-review")), ("rag", get_preset("rag"))],
    )
    assert [(d.content, d.statuses) for d in report.diffs] == [
        ("item-a", (("code-review", INCLUDED), ("rag", EXCLUDED))),
        ("item-b", (("code-review", EXCLUDED), ("rag", INCLUDED))),
    ]


def test_swing_only() -> None:
    items = [
        ContextItem("always", 10, priority=5, future_relevance_hint=0.9),
        ContextItem("never", 500, priority=9, future_relevance_hint=1.0),
        *spec_items(),
    ]
    report = policy_sensitivity(
        items,
        ContextBudget(60, 50),
        [("p", policy(PriorityScorer())), ("r", policy(ReflexiveScorer()))],
    )
    assert [diff.content for diff in report.diffs] == ["item-a", "item-b"]


def test_diffs_follow_first_appearance_in_the_items() -> None:
    items = [ContextItem(f"i{n}", 10, priority=n, future_relevance_hint=n / 10) for n in range(6)]
    # Reverse the input so the score order (by priority or hint) differs from the appearance order.
    items.reverse()
    report = policy_sensitivity(
        items,
        ContextBudget(30, 30),
        [("high", policy(PriorityScorer())), ("low", policy(RecencyScorer()))],
    )
    # Priority keeps i5, i4, i3; recency (no timestamps: all 0.0) keeps the first three by index, the same.
    assert report.diffs == ()
    flipped = [item.replace(priority=-(item.priority or 0)) for item in items]
    report = policy_sensitivity(
        flipped,
        ContextBudget(30, 30),
        [("negated", policy(PriorityScorer())), ("hint", policy(ReflexiveScorer()))],
    )
    assert [diff.content for diff in report.diffs] == ["i5", "i4", "i3", "i2", "i1", "i0"]


def test_three_variants_in_input_order() -> None:
    variants = [
        ("reflexive", policy(ReflexiveScorer())),
        ("priority", policy(PriorityScorer())),
        ("recency", policy(RecencyScorer())),
    ]
    report = policy_sensitivity(spec_items(), ContextBudget(50, 40), variants)
    assert [label for label, _ in report.variants] == ["reflexive", "priority", "recency"]
    for diff in report.diffs:
        assert [label for label, _ in diff.statuses] == ["reflexive", "priority", "recency"]


def test_duplicate_contents_are_one_entry() -> None:
    """Content-keyed: a content is included when any item carrying it is."""
    items = [
        ContextItem("dup", 10, priority=1, future_relevance_hint=0.9),
        ContextItem("dup", 10, priority=9, future_relevance_hint=0.0),
        ContextItem("other", 10, priority=5, future_relevance_hint=0.5),
    ]
    no_dedup = [
        ("priority", policy(PriorityScorer()).replace(deduplication=False)),
        ("reflexive", policy(ReflexiveScorer()).replace(deduplication=False)),
    ]
    report = policy_sensitivity(items, ContextBudget(10, 10), no_dedup)
    # Each variant includes one "dup" copy, a different instance each: no swing on "dup".
    first, second = (variant.included[0].item for _, variant in report.variants)
    assert first is items[1] and second is items[0]
    assert report.diffs == ()


@pytest.mark.parametrize("count", [0, 1])
def test_at_least_two_variants(count: int) -> None:
    variants = [("only", policy(PriorityScorer()))][:count]
    with pytest.raises(InvalidConfigurationError) as raised:
        policy_sensitivity(spec_items(), ContextBudget(50, 40), variants)
    assert str(raised.value) == "policy_sensitivity requires at least 2 variants" == MINIMUM_VARIANTS_MESSAGE
    pipelines = [(label, p.build_pipeline()) for label, p in variants]
    with pytest.raises(InvalidConfigurationError, match=MINIMUM_VARIANTS_MESSAGE):
        policy_sensitivity_from_pipelines(spec_items(), ContextBudget(50, 40), pipelines)


def test_labels_must_be_unique() -> None:
    with pytest.raises(
        InvalidConfigurationError, match="variant labels must be unique; 'a' appears more than once"
    ):
        policy_sensitivity(spec_items(), ContextBudget(50, 40), [("a", policy(PriorityScorer()))] * 2)


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ("ab", "variants must be a sequence of"),
        ([("a", policy(PriorityScorer())), "b"], r"variants\[1\] must be a \(label, Policy\) pair"),
        (
            [("a", policy(PriorityScorer())), (2, policy(PriorityScorer()))],
            r"variants\[1\] label must be a str",
        ),
        (
            [("a", policy(PriorityScorer())), ("b", policy(PriorityScorer()).build_pipeline())],
            r"variants\[1\] must pair a label with a Policy",
        ),
    ],
)
def test_variant_types(variants: object, message: str) -> None:
    with pytest.raises(CupelTypeError, match=message):
        policy_sensitivity(spec_items(), ContextBudget(50, 40), variants)  # type: ignore[arg-type]


def test_budget_is_required_and_checked() -> None:
    variants = [("a", policy(PriorityScorer())), ("b", policy(ReflexiveScorer()))]
    with pytest.raises(CupelTypeError, match="budget must be a ContextBudget"):
        policy_sensitivity(spec_items(), 40, variants)  # type: ignore[arg-type]


def test_pipelines_and_count_quota_slicers() -> None:
    """Policies hold count-quota slicers too; the pipeline overload takes any pipeline."""
    tools = [ContextItem(f"tool {n}", 10, kind="ToolOutput", future_relevance_hint=0.9) for n in range(3)]
    chat = [ContextItem(f"msg {n}", 10, future_relevance_hint=0.5) for n in range(3)]
    capped = CountQuotaSlice([CountQuotaEntry("ToolOutput", 0, 1)], GreedySlice())
    plain = policy(ReflexiveScorer())
    report = policy_sensitivity(
        tools + chat, ContextBudget(40, 40), [("plain", plain), ("capped", plain.replace(slicer=capped))]
    )
    # The cap keeps one tool output; the freed tokens stay unused (Phase 3 drops, it does not refill).
    assert [diff.content for diff in report.diffs] == ["tool 1", "tool 2"]
    from_pipelines = policy_sensitivity_from_pipelines(
        tools + chat,
        ContextBudget(40, 40),
        [("plain", plain.build_pipeline()), ("capped", Pipeline.from_policy(plain.replace(slicer=capped)))],
    )
    assert from_pipelines.diffs == report.diffs


def test_variant_errors_name_the_variant() -> None:
    strict = policy(ReflexiveScorer())
    items = [ContextItem("pinned", 40, pinned=True), ContextItem("x", 5)]
    with pytest.raises(BudgetOverflowError) as raised:
        policy_sensitivity(
            items,
            ContextBudget(50, 30),
            [("ok", strict.replace(overflow_strategy="truncate")), ("strict", strict)],
        )
    assert "while running policy_sensitivity variant 'strict'" in raised.value.__notes__


def test_to_dict() -> None:
    report = policy_sensitivity(
        spec_items(),
        ContextBudget(50, 40),
        [("p", policy(PriorityScorer())), ("r", policy(ReflexiveScorer()))],
    )
    data = report.to_dict()
    assert [variant["label"] for variant in data["variants"]] == ["p", "r"]
    assert data["diffs"][0] == {
        "content": "item-a",
        "statuses": [{"label": "p", "status": "included"}, {"label": "r", "status": "excluded"}],
    }


def test_realistic_preset_comparison() -> None:
    variants = [(name, get_preset(name)) for name in ("chat", "rag", "debugging")]
    report = policy_sensitivity(conversation(), ContextBudget(700, 600), variants)
    assert isinstance(report, PolicySensitivityReport)
    assert report.diffs  # the presets really do choose differently
    contents = [item.content for item in conversation()]
    positions = [contents.index(diff.content) for diff in report.diffs]
    assert positions == sorted(positions)


@given(items=item_lists(max_size=15), target=st.integers(0, 400))
def test_diff_definition_property(items: list[ContextItem], target: int) -> None:
    budget = ContextBudget(target, target)
    variants = [
        ("p", Policy(PriorityScorer(), GreedySlice(), UShapedPlacer(), overflow_strategy="proceed")),
        ("r", Policy(ReflexiveScorer(), GreedySlice(), UShapedPlacer(), overflow_strategy="proceed")),
        ("t", Policy(RecencyScorer(), GreedySlice(), ChronologicalPlacer(), overflow_strategy="proceed")),
    ]
    try:
        report = policy_sensitivity(items, budget, variants)
    except Exception as error:
        assert type(error).__name__ == "PinnedItemsExceedBudgetError"
        return
    included = {label: {e.item.content for e in r.included} for label, r in report.variants}
    expected = []
    for content in dict.fromkeys(item.content for item in items):
        flags = [content in included[label] for label, _ in variants]
        if any(flags) and not all(flags):
            expected.append(content)
    assert [diff.content for diff in report.diffs] == expected
    for diff in report.diffs:
        for label, status in diff.statuses:
            assert (status is INCLUDED) == (diff.content in included[label])
