"""The 13 testing-vocabulary patterns over hand-built reports (spec: Cupel.Testing Vocabulary).

Every pattern: its pass case, each edge-case row of the spec, and the failure message verbatim.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence

import pytest

from cupel import (
    BudgetExceeded,
    ContextBudget,
    ContextItem,
    ContextKind,
    CupelTypeError,
    Deduplicated,
    ExcludedItem,
    ExclusionReason,
    Filtered,
    IncludedItem,
    InclusionReason,
    InvalidConfigurationError,
    NegativeTokens,
    PinnedOverride,
    QuotaCapExceeded,
    QuotaRequireDisplaced,
    ScoredTooLow,
    SelectionReport,
    UnknownExclusionReason,
)
from cupel.testing import SelectionReportAssertionChain, SelectionReportAssertionError, should

_counter = iter(range(1_000_000))


def inc(
    kind: str = "Message",
    score: float = 0.5,
    tokens: int = 10,
    reason: InclusionReason = InclusionReason.SCORED,
    content: str | None = None,
) -> IncludedItem:
    item = ContextItem(content or f"included-{next(_counter)}", tokens, kind=kind)
    return IncludedItem(item, score, reason)


def exc(
    reason: ExclusionReason | None = None,
    kind: str = "Message",
    score: float = 0.5,
    tokens: int = 10,
    content: str | None = None,
) -> ExcludedItem:
    item = ContextItem(content or f"excluded-{next(_counter)}", tokens, kind=kind)
    return ExcludedItem(item, score, reason or BudgetExceeded(tokens, 5))


def report(included: Sequence[IncludedItem] = (), excluded: Sequence[ExcludedItem] = ()) -> SelectionReport:
    items = [entry.item for entry in included] + [entry.item for entry in excluded]
    return SelectionReport(
        events=(),
        included=tuple(included),
        excluded=tuple(excluded),
        total_candidates=len(items),
        total_tokens_considered=sum(candidate.tokens for candidate in items),
    )


def fails(action: Callable[[], object], message: str, name: str) -> None:
    with pytest.raises(SelectionReportAssertionError) as info:
        action()
    assert str(info.value) == message
    assert info.value.assertion_name == name


EMPTY = report()


# Chain plumbing ------------------------------------------------------------------------------------


def test_should_wraps_the_report_and_methods_return_the_same_chain() -> None:
    rep = report([inc("Message", 0.9, 600), inc("ToolOutput", 0.4, 300)], [exc(score=0.3)])
    chain = should(rep)
    assert isinstance(chain, SelectionReportAssertionChain)
    assert chain.report is rep
    calls: list[Callable[[], SelectionReportAssertionChain]] = [
        lambda: chain.include_item_with_kind("Message"),
        lambda: chain.include_item_matching(lambda entry: entry.score > 0.8),
        lambda: chain.include_exactly_n_items_with_kind("ToolOutput", 1),
        lambda: chain.exclude_item_with_reason(BudgetExceeded),
        lambda: chain.exclude_item_matching_with_reason(lambda item: True, "BudgetExceeded"),
        lambda: chain.exclude_item_with_budget_details(lambda item: True, 10, 5),
        lambda: chain.have_no_exclusions_for_kind("Memory"),
        lambda: chain.have_at_least_n_exclusions(1),
        lambda: chain.excluded_items_are_sorted_by_score_descending(),
        lambda: chain.have_budget_utilization_above(0.8, ContextBudget(1000, 900)),
        lambda: chain.have_kind_coverage_count(2),
        lambda: chain.place_item_at_edge(lambda entry: entry.item.kind == "ToolOutput"),
        lambda: chain.place_top_n_scored_at_edges(2),
    ]
    for call in calls:
        assert call() is chain
    assert chain.report is rep  # no side effects on success


def test_fluent_chaining_stops_at_the_first_failure() -> None:
    rep = report([inc("Message")])
    with pytest.raises(SelectionReportAssertionError, match=r"^HaveAtLeastNExclusions\(1\) failed"):
        should(rep).include_item_with_kind("Message").have_at_least_n_exclusions(1).include_item_with_kind(
            "Nope"
        )


def test_assertion_error_is_an_assertion_error_and_pickles() -> None:
    assert issubclass(SelectionReportAssertionError, AssertionError)
    error = SelectionReportAssertionError("X failed: y.", "X")
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.assertion_name) == ("X failed: y.", "X")


def test_should_rejects_a_non_report() -> None:
    with pytest.raises(CupelTypeError, match="SelectionReport"):
        should([])  # type: ignore[arg-type]


# Pattern 1: IncludeItemWithKind ----------------------------------------------------------------------


def test_include_item_with_kind_passes_case_insensitively() -> None:
    rep = report([inc("ToolOutput"), inc("Message")])
    should(rep).include_item_with_kind("Message").include_item_with_kind("message")
    should(rep).include_item_with_kind(ContextKind("TOOLOUTPUT")).include_item_with_kind(ContextKind.MESSAGE)


def test_include_item_with_kind_fails_on_empty_included() -> None:
    fails(
        lambda: should(EMPTY).include_item_with_kind("Message"),
        "IncludeItemWithKind(Message) failed: Included contained 0 items with Kind=Message. "
        "Included had 0 items with kinds: [].",
        "IncludeItemWithKind",
    )


def test_include_item_with_kind_fails_listing_distinct_kinds() -> None:
    rep = report([inc("Message"), inc("ToolOutput"), inc("message")])
    fails(
        lambda: should(rep).include_item_with_kind(ContextKind.MEMORY),
        "IncludeItemWithKind(Memory) failed: Included contained 0 items with Kind=Memory. "
        "Included had 3 items with kinds: [Message, ToolOutput].",
        "IncludeItemWithKind",
    )


def test_include_item_with_kind_rejects_a_non_kind() -> None:
    with pytest.raises(CupelTypeError):
        should(EMPTY).include_item_with_kind(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidConfigurationError):
        should(EMPTY).include_item_with_kind("  ")


# Pattern 2: IncludeItemMatching ----------------------------------------------------------------------


def test_include_item_matching_predicate_sees_the_included_entry() -> None:
    rep = report([inc("Message", 0.2), inc("SystemPrompt", 1.0, reason=InclusionReason.PINNED)])
    seen: list[object] = []

    def predicate(entry: IncludedItem) -> bool:
        seen.append(entry)
        return entry.reason is InclusionReason.PINNED and entry.score == 1.0

    should(rep).include_item_matching(predicate)
    assert all(isinstance(entry, IncludedItem) for entry in seen)


def test_include_item_matching_fails_on_empty_included() -> None:
    fails(
        lambda: should(EMPTY).include_item_matching(lambda entry: True),
        "IncludeItemMatching failed: no item in Included matched the predicate. Included had 0 items.",
        "IncludeItemMatching",
    )


def test_include_item_matching_failure_summarises_up_to_five_entries() -> None:
    rep = report(
        [inc("Message", 0.25), inc("SystemPrompt", 1.0, reason=InclusionReason.PINNED)]
        + [inc("Memory", 0.0, tokens=0, reason=InclusionReason.ZERO_TOKEN) for _ in range(5)]
    )
    fails(
        lambda: should(rep).include_item_matching(lambda entry: entry.score > 1.0),
        "IncludeItemMatching failed: no item in Included matched the predicate. Included had 7 items. "
        "First 5: [(kind=Message, score=0.25, reason=Scored), (kind=SystemPrompt, score=1.0, reason=Pinned), "
        "(kind=Memory, score=0.0, reason=ZeroToken), (kind=Memory, score=0.0, reason=ZeroToken), "
        "(kind=Memory, score=0.0, reason=ZeroToken)].",
        "IncludeItemMatching",
    )
    small = report([inc("Message", 0.5)])
    fails(
        lambda: should(small).include_item_matching(lambda entry: False),
        "IncludeItemMatching failed: no item in Included matched the predicate. Included had 1 items. "
        "First 1: [(kind=Message, score=0.5, reason=Scored)].",
        "IncludeItemMatching",
    )


def test_include_item_matching_rejects_a_non_callable() -> None:
    with pytest.raises(CupelTypeError):
        should(EMPTY).include_item_matching("Message")  # type: ignore[arg-type]


# Pattern 3: IncludeExactlyNItemsWithKind -------------------------------------------------------------


def test_include_exactly_n_items_with_kind_passes_on_exact_count() -> None:
    rep = report([inc("Message"), inc("ToolOutput"), inc("MESSAGE")])
    should(rep).include_exactly_n_items_with_kind("Message", 2).include_exactly_n_items_with_kind(
        "ToolOutput", 1
    )
    should(rep).include_exactly_n_items_with_kind("Memory", 0)


def test_include_exactly_n_items_with_kind_empty_and_zero_passes() -> None:
    should(EMPTY).include_exactly_n_items_with_kind("Message", 0)


def test_include_exactly_n_items_with_kind_empty_and_positive_fails() -> None:
    fails(
        lambda: should(EMPTY).include_exactly_n_items_with_kind("Message", 2),
        "IncludeExactlyNItemsWithKind(Message, 2) failed: expected 2 items with Kind=Message in Included, "
        "but found 0. Included had 0 items total.",
        "IncludeExactlyNItemsWithKind",
    )


def test_include_exactly_n_items_with_kind_count_mismatch_fails() -> None:
    rep = report([inc("Message"), inc("ToolOutput"), inc("Message")])
    fails(
        lambda: should(rep).include_exactly_n_items_with_kind("Message", 1),
        "IncludeExactlyNItemsWithKind(Message, 1) failed: expected 1 items with Kind=Message in Included, "
        "but found 2. Included had 3 items total.",
        "IncludeExactlyNItemsWithKind",
    )
    fails(
        lambda: should(rep).include_exactly_n_items_with_kind("ToolOutput", 0),
        "IncludeExactlyNItemsWithKind(ToolOutput, 0) failed: expected 0 items with Kind=ToolOutput in "
        "Included, but found 1. Included had 3 items total.",
        "IncludeExactlyNItemsWithKind",
    )


@pytest.mark.parametrize("bad", [-1, True, 1.0])
def test_count_arguments_are_validated(bad: object) -> None:
    chain = should(EMPTY)
    error = InvalidConfigurationError if bad == -1 and not isinstance(bad, bool) else CupelTypeError
    calls: list[Callable[[], object]] = [
        lambda: chain.include_exactly_n_items_with_kind("Message", bad),  # type: ignore[arg-type]
        lambda: chain.have_at_least_n_exclusions(bad),  # type: ignore[arg-type]
        lambda: chain.have_kind_coverage_count(bad),  # type: ignore[arg-type]
        lambda: chain.place_top_n_scored_at_edges(bad),  # type: ignore[arg-type]
    ]
    for call in calls:
        with pytest.raises(error):
            call()


# Pattern 4: ExcludeItemWithReason --------------------------------------------------------------------

ALL_VARIANTS: list[ExclusionReason] = [
    BudgetExceeded(100, 20),
    ScoredTooLow(0.1, 0.25),
    Deduplicated("original"),
    QuotaCapExceeded("ToolOutput", 3, 4),
    QuotaRequireDisplaced("SystemPrompt"),
    NegativeTokens(-1),
    PinnedOverride("pinned"),
    Filtered("max_age_filter"),
]


@pytest.mark.parametrize("variant", ALL_VARIANTS, ids=lambda reason: reason.name)
def test_exclude_item_with_reason_accepts_every_variant_as_class_instance_or_name(
    variant: ExclusionReason,
) -> None:
    rep = report(excluded=[exc(variant)])
    should(rep).exclude_item_with_reason(type(variant)).exclude_item_with_reason(variant.name)
    should(rep).exclude_item_with_reason(variant)


def test_exclude_item_with_reason_matches_the_variant_not_the_fields() -> None:
    rep = report(excluded=[exc(BudgetExceeded(100, 20))])
    should(rep).exclude_item_with_reason(BudgetExceeded(1, 2))


def test_exclude_item_with_reason_fails_on_empty_excluded() -> None:
    fails(
        lambda: should(EMPTY).exclude_item_with_reason(BudgetExceeded),
        "ExcludeItemWithReason(BudgetExceeded) failed: no excluded item had reason BudgetExceeded. "
        "Excluded had 0 items with reasons: [].",
        "ExcludeItemWithReason",
    )


def test_exclude_item_with_reason_fails_listing_distinct_reasons() -> None:
    rep = report(
        excluded=[exc(BudgetExceeded(10, 5)), exc(Deduplicated("a")), exc(BudgetExceeded(30, 0), score=0.1)]
    )
    fails(
        lambda: should(rep).exclude_item_with_reason(Filtered("whatever")),
        "ExcludeItemWithReason(Filtered) failed: no excluded item had reason Filtered. "
        "Excluded had 3 items with reasons: [BudgetExceeded, Deduplicated].",
        "ExcludeItemWithReason",
    )


def test_exclude_item_with_reason_matches_unknown_variants_by_name() -> None:
    rep = report(excluded=[exc(UnknownExclusionReason("SomethingNew", {"x": 1}))])
    should(rep).exclude_item_with_reason("SomethingNew")
    should(rep).exclude_item_with_reason(UnknownExclusionReason("SomethingNew"))
    fails(
        lambda: should(rep).exclude_item_with_reason(NegativeTokens),
        "ExcludeItemWithReason(NegativeTokens) failed: no excluded item had reason NegativeTokens. "
        "Excluded had 1 items with reasons: [SomethingNew].",
        "ExcludeItemWithReason",
    )


def test_reason_arguments_are_validated() -> None:
    chain = should(report(excluded=[exc()]))
    with pytest.raises(InvalidConfigurationError, match="did you mean 'BudgetExceeded'"):
        chain.exclude_item_with_reason("budgetexceeded")
    with pytest.raises(InvalidConfigurationError):
        chain.exclude_item_with_reason("")
    for bad in (ExclusionReason, UnknownExclusionReason, int, 3):
        with pytest.raises(CupelTypeError):
            chain.exclude_item_with_reason(bad)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        chain.exclude_item_matching_with_reason(lambda item: True, None)  # type: ignore[arg-type]


# Pattern 5: ExcludeItemMatchingWithReason ------------------------------------------------------------


def test_exclude_item_matching_with_reason_passes_and_predicate_sees_the_item() -> None:
    rep = report(excluded=[exc(BudgetExceeded(10, 5), content="big"), exc(Deduplicated("x"), content="dup")])
    seen: list[object] = []

    def predicate(item: ContextItem) -> bool:
        seen.append(item)
        return item.content == "dup"

    should(rep).exclude_item_matching_with_reason(predicate, Deduplicated)
    assert seen and all(isinstance(item, ContextItem) for item in seen)


def test_exclude_item_matching_with_reason_fails_on_empty_excluded() -> None:
    fails(
        lambda: should(EMPTY).exclude_item_matching_with_reason(lambda item: True, Deduplicated),
        "ExcludeItemMatchingWithReason(reason=Deduplicated) failed: predicate matched 0 excluded item(s) "
        "but none had reason Deduplicated. Matched items had reasons: [].",
        "ExcludeItemMatchingWithReason",
    )


def test_exclude_item_matching_with_reason_fails_when_predicate_matches_nothing() -> None:
    rep = report(excluded=[exc(Deduplicated("x"), content="dup")])
    fails(
        lambda: should(rep).exclude_item_matching_with_reason(
            lambda item: item.content == "zzz", "Deduplicated"
        ),
        "ExcludeItemMatchingWithReason(reason=Deduplicated) failed: predicate matched 0 excluded item(s) "
        "but none had reason Deduplicated. Matched items had reasons: [].",
        "ExcludeItemMatchingWithReason",
    )


def test_exclude_item_matching_with_reason_partial_match_reports_the_matched_reasons() -> None:
    rep = report(
        excluded=[
            exc(BudgetExceeded(10, 5), kind="ToolOutput", score=0.9),
            exc(Deduplicated("x"), kind="Message", score=0.8),
            exc(NegativeTokens(-3), kind="ToolOutput", score=0.0),
            exc(BudgetExceeded(40, 0), kind="ToolOutput", score=0.0),
        ]
    )
    fails(
        lambda: should(rep).exclude_item_matching_with_reason(
            lambda item: item.kind == "tooloutput", PinnedOverride("p")
        ),
        "ExcludeItemMatchingWithReason(reason=PinnedOverride) failed: predicate matched 3 excluded item(s) "
        "but none had reason PinnedOverride. Matched items had reasons: [BudgetExceeded, NegativeTokens].",
        "ExcludeItemMatchingWithReason",
    )


# Pattern 6: ExcludeItemWithBudgetDetails -------------------------------------------------------------


def test_exclude_item_with_budget_details_passes_on_exact_tokens() -> None:
    rep = report(
        excluded=[
            exc(BudgetExceeded(100, 20), content="big"),
            exc(BudgetExceeded(100, 7), content="big too"),
        ]
    )
    chain = should(rep)
    chain.exclude_item_with_budget_details(lambda item: item.content == "big", 100, 20)
    # Any predicate-matching BudgetExceeded item may satisfy it, not only the first.
    chain.exclude_item_with_budget_details(lambda item: item.content.startswith("big"), 100, 7)


def test_exclude_item_with_budget_details_no_predicate_match() -> None:
    rep = report(excluded=[exc(BudgetExceeded(100, 20), content="big")])
    fails(
        lambda: should(rep).exclude_item_with_budget_details(lambda item: item.content == "small", 100, 20),
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=100, "
        "available_tokens=20, but no matching item had reason BudgetExceeded. "
        "Predicate matched 0 excluded item(s) with reasons: [].",
        "ExcludeItemWithBudgetDetails",
    )


def test_exclude_item_with_budget_details_predicate_matches_other_reason() -> None:
    rep = report(excluded=[exc(Deduplicated("x"), content="dup"), exc(BudgetExceeded(5, 1), content="other")])
    fails(
        lambda: should(rep).exclude_item_with_budget_details(lambda item: item.content == "dup", 10, 5),
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=10, "
        "available_tokens=5, but no matching item had reason BudgetExceeded. "
        "Predicate matched 1 excluded item(s) with reasons: [Deduplicated].",
        "ExcludeItemWithBudgetDetails",
    )


def test_exclude_item_with_budget_details_token_mismatch_reports_the_first_candidate() -> None:
    rep = report(
        excluded=[
            exc(Deduplicated("x"), content="big 0", score=0.9),
            exc(BudgetExceeded(100, 20), content="big 1", score=0.8),
            exc(BudgetExceeded(100, 3), content="big 2", score=0.7),
        ]
    )
    fails(
        lambda: should(rep).exclude_item_with_budget_details(lambda item: "big" in item.content, 100, 50),
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=100, "
        "available_tokens=50, but found item_tokens=100, available_tokens=20.",
        "ExcludeItemWithBudgetDetails",
    )
    fails(
        lambda: should(rep).exclude_item_with_budget_details(lambda item: "big" in item.content, 99, 20),
        "ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with item_tokens=99, "
        "available_tokens=20, but found item_tokens=100, available_tokens=20.",
        "ExcludeItemWithBudgetDetails",
    )


def test_exclude_item_with_budget_details_validates_token_arguments() -> None:
    with pytest.raises(CupelTypeError):
        should(EMPTY).exclude_item_with_budget_details(lambda item: True, 1.0, 2)  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        should(EMPTY).exclude_item_with_budget_details(lambda item: True, 1, False)


# Pattern 7: HaveNoExclusionsForKind ------------------------------------------------------------------


def test_have_no_exclusions_for_kind_passes_on_empty_excluded_and_other_kinds() -> None:
    should(EMPTY).have_no_exclusions_for_kind("Message")
    should(report(excluded=[exc(kind="Message")])).have_no_exclusions_for_kind("ToolOutput")


def test_have_no_exclusions_for_kind_fails_with_count_and_first_item() -> None:
    rep = report(
        excluded=[
            exc(Deduplicated("a"), kind="Message", score=0.95),
            exc(BudgetExceeded(10, 2), kind="ToolOutput", score=0.7),
            exc(NegativeTokens(-1), kind="tooloutput", score=0.0),
        ]
    )
    fails(
        lambda: should(rep).have_no_exclusions_for_kind(ContextKind.TOOL_OUTPUT),
        "HaveNoExclusionsForKind(ToolOutput) failed: found 2 excluded item(s) with Kind=ToolOutput. "
        "First: score=0.7, reason=BudgetExceeded.",
        "HaveNoExclusionsForKind",
    )


def test_no_exclusions_for_kind_differs_from_exactly_zero_included() -> None:
    rep = report([inc("Message")], [exc(kind="ToolOutput")])
    # A kind never offered is absent from both lists: both assertions hold.
    should(rep).have_no_exclusions_for_kind("Memory").include_exactly_n_items_with_kind("Memory", 0)
    # Absent from included but excluded: only one of them holds.
    should(rep).include_exactly_n_items_with_kind("ToolOutput", 0)
    with pytest.raises(SelectionReportAssertionError):
        should(rep).have_no_exclusions_for_kind("ToolOutput")
    # Absent from excluded but included: the other one holds.
    should(rep).have_no_exclusions_for_kind("Message")
    with pytest.raises(SelectionReportAssertionError):
        should(rep).include_exactly_n_items_with_kind("Message", 0)


# Pattern 8: HaveAtLeastNExclusions -------------------------------------------------------------------


def test_have_at_least_n_exclusions_zero_always_passes() -> None:
    should(EMPTY).have_at_least_n_exclusions(0)
    should(report(excluded=[exc()])).have_at_least_n_exclusions(0)


def test_have_at_least_n_exclusions_passes_at_and_above_n() -> None:
    rep = report(excluded=[exc(), exc(), exc()])
    should(rep).have_at_least_n_exclusions(3).have_at_least_n_exclusions(2)


def test_have_at_least_n_exclusions_fails_below_n() -> None:
    fails(
        lambda: should(EMPTY).have_at_least_n_exclusions(1),
        "HaveAtLeastNExclusions(1) failed: expected at least 1 excluded items, but Excluded had 0.",
        "HaveAtLeastNExclusions",
    )
    fails(
        lambda: should(report(excluded=[exc(), exc()])).have_at_least_n_exclusions(3),
        "HaveAtLeastNExclusions(3) failed: expected at least 3 excluded items, but Excluded had 2.",
        "HaveAtLeastNExclusions",
    )


# Pattern 9: ExcludedItemsAreSortedByScoreDescending --------------------------------------------------


def test_sorted_by_score_passes_on_empty_single_and_ties() -> None:
    should(EMPTY).excluded_items_are_sorted_by_score_descending()
    should(report(excluded=[exc(score=0.1)])).excluded_items_are_sorted_by_score_descending()
    rep = report(excluded=[exc(score=0.9), exc(score=0.5), exc(score=0.5), exc(score=0.0)])
    should(rep).excluded_items_are_sorted_by_score_descending()


def test_sorted_by_score_fails_at_the_first_violation() -> None:
    rep = report(excluded=[exc(score=0.9), exc(score=0.5), exc(score=0.7), exc(score=0.8)])
    fails(
        lambda: should(rep).excluded_items_are_sorted_by_score_descending(),
        "ExcludedItemsAreSortedByScoreDescending failed: item at index 2 (score=0.7) is higher than item "
        "at index 1 (score=0.5). Expected non-increasing scores.",
        "ExcludedItemsAreSortedByScoreDescending",
    )


def test_sorted_by_score_message_distinguishes_close_scores() -> None:
    rep = report(excluded=[exc(score=0.3), exc(score=0.1 + 0.2)])
    fails(
        lambda: should(rep).excluded_items_are_sorted_by_score_descending(),
        "ExcludedItemsAreSortedByScoreDescending failed: item at index 1 (score=0.30000000000000004) is "
        "higher than item at index 0 (score=0.3). Expected non-increasing scores.",
        "ExcludedItemsAreSortedByScoreDescending",
    )


# Pattern 10: HaveBudgetUtilizationAbove --------------------------------------------------------------


def test_budget_utilization_uses_max_tokens_and_inclusive_comparison() -> None:
    rep = report([inc(tokens=300), inc(tokens=200)])
    budget = ContextBudget(1000, 500)
    should(rep).have_budget_utilization_above(0.5, budget).have_budget_utilization_above(0.0, budget)
    # 500 / target_tokens would be 1.0; the denominator is max_tokens, so 0.5 it is.
    fails(
        lambda: should(rep).have_budget_utilization_above(0.75, budget),
        "HaveBudgetUtilizationAbove(0.75) failed: computed utilization was 0.500000 "
        "(includedTokens=500, budget.MaxTokens=1000).",
        "HaveBudgetUtilizationAbove",
    )


def test_budget_utilization_exact_operator_no_epsilon() -> None:
    rep = report([inc(tokens=1), inc(tokens=2)])
    budget = ContextBudget(10, 10)
    should(rep).have_budget_utilization_above(0.3, budget)  # 3 / 10 == 0.3 exactly
    fails(
        lambda: should(rep).have_budget_utilization_above(0.30000000000000004, budget),
        "HaveBudgetUtilizationAbove(0.30000000000000004) failed: computed utilization was 0.300000 "
        "(includedTokens=3, budget.MaxTokens=10).",
        "HaveBudgetUtilizationAbove",
    )


def test_budget_utilization_empty_included() -> None:
    budget = ContextBudget(1000, 800)
    should(EMPTY).have_budget_utilization_above(0.0, budget)
    fails(
        lambda: should(EMPTY).have_budget_utilization_above(0.1, budget),
        "HaveBudgetUtilizationAbove(0.1) failed: computed utilization was 0.000000 "
        "(includedTokens=0, budget.MaxTokens=1000).",
        "HaveBudgetUtilizationAbove",
    )


def test_budget_utilization_threshold_above_one() -> None:
    budget = ContextBudget(100, 100)
    fails(
        lambda: should(report([inc(tokens=100)])).have_budget_utilization_above(1.5, budget),
        "HaveBudgetUtilizationAbove(1.5) failed: computed utilization was 1.000000 "
        "(includedTokens=100, budget.MaxTokens=100).",
        "HaveBudgetUtilizationAbove",
    )
    # Only an over-budget (defective) selection exceeds 1.0.
    should(report([inc(tokens=160)])).have_budget_utilization_above(1.5, budget)


def test_budget_utilization_formats_an_integer_threshold_as_a_float() -> None:
    fails(
        lambda: should(report([inc(tokens=1)])).have_budget_utilization_above(1, ContextBudget(3, 3)),
        "HaveBudgetUtilizationAbove(1.0) failed: computed utilization was 0.333333 "
        "(includedTokens=1, budget.MaxTokens=3).",
        "HaveBudgetUtilizationAbove",
    )


def test_budget_utilization_with_zero_max_tokens() -> None:
    zero = ContextBudget(0, 0)
    should(EMPTY).have_budget_utilization_above(0.0, zero)
    fails(
        lambda: should(EMPTY).have_budget_utilization_above(0.5, zero),
        "HaveBudgetUtilizationAbove(0.5) failed: computed utilization was 0.000000 "
        "(includedTokens=0, budget.MaxTokens=0).",
        "HaveBudgetUtilizationAbove",
    )
    should(report([inc(tokens=5)])).have_budget_utilization_above(100.0, zero)


def test_budget_utilization_validates_arguments() -> None:
    with pytest.raises(CupelTypeError):
        should(EMPTY).have_budget_utilization_above("0.5", ContextBudget(1, 1))  # type: ignore[arg-type]
    with pytest.raises(CupelTypeError):
        should(EMPTY).have_budget_utilization_above(0.5, 1000)  # type: ignore[arg-type]


# Pattern 11: HaveKindCoverageCount -------------------------------------------------------------------


def test_kind_coverage_zero_always_passes() -> None:
    should(EMPTY).have_kind_coverage_count(0)


def test_kind_coverage_counts_distinct_kinds_case_insensitively() -> None:
    rep = report([inc("Message"), inc("MESSAGE"), inc("ToolOutput"), inc("SystemPrompt")])
    should(rep).have_kind_coverage_count(3).have_kind_coverage_count(1)
    fails(
        lambda: should(rep).have_kind_coverage_count(4),
        "HaveKindCoverageCount(4) failed: expected at least 4 distinct ContextKind values in Included, "
        "but found 3: [Message, ToolOutput, SystemPrompt].",
        "HaveKindCoverageCount",
    )


def test_kind_coverage_empty_included_fails_unless_zero() -> None:
    fails(
        lambda: should(EMPTY).have_kind_coverage_count(1),
        "HaveKindCoverageCount(1) failed: expected at least 1 distinct ContextKind values in Included, "
        "but found 0: [].",
        "HaveKindCoverageCount",
    )


def test_kind_coverage_single_kind_counts_once() -> None:
    rep = report([inc("Message"), inc("Message")])
    should(rep).have_kind_coverage_count(1)
    fails(
        lambda: should(rep).have_kind_coverage_count(2),
        "HaveKindCoverageCount(2) failed: expected at least 2 distinct ContextKind values in Included, "
        "but found 1: [Message].",
        "HaveKindCoverageCount",
    )


# Pattern 12: PlaceItemAtEdge -------------------------------------------------------------------------


def test_place_item_at_edge_passes_at_first_last_and_single() -> None:
    rep = report([inc(content="first"), inc(content="middle"), inc(content="last")])
    should(rep).place_item_at_edge(lambda entry: entry.item.content == "first")
    should(rep).place_item_at_edge(lambda entry: entry.item.content == "last")
    single = report([inc(content="only")])
    should(single).place_item_at_edge(lambda entry: entry.item.content == "only")


def test_place_item_at_edge_fails_on_empty_and_on_no_match() -> None:
    message = "PlaceItemAtEdge failed: no item in Included matched the predicate."
    fails(lambda: should(EMPTY).place_item_at_edge(lambda entry: True), message, "PlaceItemAtEdge")
    rep = report([inc(content="a"), inc(content="b")])
    fails(
        lambda: should(rep).place_item_at_edge(lambda entry: entry.item.content == "zzz"),
        message,
        "PlaceItemAtEdge",
    )


def test_place_item_at_edge_reports_the_first_non_edge_index() -> None:
    rep = report([inc(content=name) for name in ("a", "b", "c", "d")])
    fails(
        lambda: should(rep).place_item_at_edge(lambda entry: entry.item.content in ("c", "b")),
        "PlaceItemAtEdge failed: item matching predicate was at index 1 (not at edge). "
        "Edge positions: 0 and 3. Included had 4 items.",
        "PlaceItemAtEdge",
    )


def test_place_item_at_edge_position_not_score_is_the_criterion() -> None:
    rep = report([inc(score=0.9, content="edge"), inc(score=0.9, content="tied"), inc(score=0.1)])
    fails(
        lambda: should(rep).place_item_at_edge(lambda entry: entry.item.content == "tied"),
        "PlaceItemAtEdge failed: item matching predicate was at index 1 (not at edge). "
        "Edge positions: 0 and 2. Included had 3 items.",
        "PlaceItemAtEdge",
    )


# Pattern 13: PlaceTopNScoredAtEdges ------------------------------------------------------------------


def u_shaped(scores: Sequence[float], kind: str = "Message") -> SelectionReport:
    """Entries in the order UShapedPlacer gives for these scores."""
    ranked = sorted(range(len(scores)), key=lambda index: scores[index], reverse=True)
    slots: list[IncludedItem | None] = [None] * len(scores)
    left, right = 0, len(scores) - 1
    for rank, index in enumerate(ranked):
        entry = inc(kind, scores[index], content=f"s{index}")
        if rank % 2 == 0:
            slots[left] = entry
            left += 1
        else:
            slots[right] = entry
            right -= 1
    return report([entry for entry in slots if entry is not None])


def test_place_top_n_passes_for_every_n_on_a_u_shape() -> None:
    rep = u_shaped([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])
    for n in range(8):
        should(rep).place_top_n_scored_at_edges(n)


def test_place_top_n_zero_passes_even_when_empty() -> None:
    should(EMPTY).place_top_n_scored_at_edges(0)
    should(report([inc(score=0.1), inc(score=0.9), inc(score=0.2)])).place_top_n_scored_at_edges(0)


def test_place_top_n_empty_with_positive_n_fails() -> None:
    fails(
        lambda: should(EMPTY).place_top_n_scored_at_edges(1),
        "PlaceTopNScoredAtEdges(1) failed: expected 1 items at edge positions, but Included had 0 items.",
        "PlaceTopNScoredAtEdges",
    )


def test_place_top_n_more_than_included_fails() -> None:
    rep = u_shaped([0.9, 0.8])
    fails(
        lambda: should(rep).place_top_n_scored_at_edges(3),
        "PlaceTopNScoredAtEdges(3) failed: expected 3 items at edge positions, but Included had 2 items.",
        "PlaceTopNScoredAtEdges",
    )


def test_place_top_n_failure_message() -> None:
    kinds = ["Message", "ToolOutput", "Memory", "Message", "Document", "SystemPrompt"]
    scores = [0.9, 0.1, 0.8, 0.7, 0.2, 0.3]
    rep = report([inc(kind, score) for kind, score in zip(kinds, scores, strict=True)])
    # Top-4 by score: 0.9 @0, 0.8 @2, 0.7 @3, 0.3 @5; edge positions 0, 5, 1, 4 hold 0.9, 0.3, 0.1, 0.2.
    fails(
        lambda: should(rep).place_top_n_scored_at_edges(4),
        "PlaceTopNScoredAtEdges(4) failed: 3 of the top-4 scored items were not at expected edge positions. "
        "Top-4 items (by score): [(kind=Message, score=0.9, idx=0), (kind=Memory, score=0.8, idx=2), "
        "(kind=Message, score=0.7, idx=3), (kind=SystemPrompt, score=0.3, idx=5)]. "
        "Expected edge positions: [0, 5, 1, 4].",
        "PlaceTopNScoredAtEdges",
    )
    should(rep).place_top_n_scored_at_edges(1)


def test_place_top_n_equal_to_count_checks_edge_in_order() -> None:
    descending = report([inc(score=score) for score in (0.9, 0.8, 0.7, 0.6)])
    # Sorted by score is not edge-in order: 0.8 belongs at the last position.
    should(descending).place_top_n_scored_at_edges(1)
    fails(
        lambda: should(descending).place_top_n_scored_at_edges(4),
        "PlaceTopNScoredAtEdges(4) failed: 3 of the top-4 scored items were not at expected edge positions. "
        "Top-4 items (by score): [(kind=Message, score=0.9, idx=0), (kind=Message, score=0.8, idx=1), "
        "(kind=Message, score=0.7, idx=2), (kind=Message, score=0.6, idx=3)]. "
        "Expected edge positions: [0, 3, 1, 2].",
        "PlaceTopNScoredAtEdges",
    )
    should(u_shaped([0.9, 0.8, 0.7, 0.6])).place_top_n_scored_at_edges(4)


def test_place_top_n_accepts_any_tied_item_at_the_boundary() -> None:
    # Scores 0.9, then three items tied at 0.5; the 2nd edge position (last) may hold any of them.
    rep = report([inc(score=0.9), inc(score=0.5), inc(score=0.1), inc(score=0.5), inc(score=0.5)])
    should(rep).place_top_n_scored_at_edges(2)
    # But a strictly higher item may not be displaced by a tied one.
    bad = report([inc(score=0.5), inc(score=0.9), inc(score=0.5)])
    with pytest.raises(SelectionReportAssertionError, match=r"^PlaceTopNScoredAtEdges\(1\) failed: 1 of"):
        should(bad).place_top_n_scored_at_edges(1)


def test_place_top_n_single_item() -> None:
    should(report([inc(score=0.4)])).place_top_n_scored_at_edges(1)
