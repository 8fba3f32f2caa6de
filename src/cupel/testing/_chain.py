"""The 13 assertion patterns over a SelectionReport (spec: Cupel.Testing Vocabulary).

Method names are snake_case; failure messages keep the spec's PascalCase assertion names
(``IncludeItemWithKind(Message) failed: ...``) because the message templates are the contract.
Numbers in messages: scores and thresholds print as Python's shortest round-trip ``repr`` of the
float (two different scores never print alike); utilization in HaveBudgetUtilizationAbove prints with
exactly 6 decimals, as the spec fixes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NoReturn, TypeAlias

from cupel._score_order import descending_indices, nan_last
from cupel.diagnostics.reasons import (
    BudgetExceeded,
    ExclusionReason,
)
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem
from cupel.testing._arguments import (
    _check_count,
    _check_predicate,
    _distinct,
    _edge_positions,
    _kind,
    _num,
    _variant_name,
)
from cupel.testing._error import SelectionReportAssertionError

__all__ = [
    "ExcludedItemPredicate",
    "IncludedItemPredicate",
    "ReasonLike",
    "SelectionReportAssertionChain",
    "should",
]

#: A predicate over the full included entry (item, score, reason), per PD-1.
IncludedItemPredicate: TypeAlias = Callable[[IncludedItem], bool]
#: A predicate over the raw excluded item, as patterns 5 and 6 specify.
ExcludedItemPredicate: TypeAlias = Callable[[ContextItem], bool]
#: An exclusion reason variant: a class such as ``BudgetExceeded``, any instance of one (only its
#: variant counts), or a variant name such as ``"BudgetExceeded"``.
ReasonLike: TypeAlias = type[ExclusionReason] | ExclusionReason | str

# How many included entries IncludeItemMatching lists after its base message (the spec's "up to 5").
_SUMMARY_LIMIT = 5


def should(report: SelectionReport) -> SelectionReportAssertionChain:
    """Start an assertion chain over ``report`` (spec: PD-4; ``SelectionReport.Should()``)."""
    return SelectionReportAssertionChain(report)


class SelectionReportAssertionChain:
    """Fluent assertions over one :class:`~cupel.diagnostics.report.SelectionReport` (spec: PD-4).

    Every method returns the chain when its assertion holds and changes nothing; otherwise it raises
    :class:`~cupel.testing.SelectionReportAssertionError` with the spec's message. Arguments that are
    invalid in themselves (a negative count, a non-callable predicate) raise ``ValueError`` /
    ``TypeError`` subclasses instead, since no report could satisfy them.
    """

    __module__ = "cupel.testing"
    __slots__ = ("_report",)

    def __init__(self, report: SelectionReport) -> None:
        if not isinstance(report, SelectionReport):
            raise CupelTypeError(f"should() needs a SelectionReport, got {type(report).__name__}")
        self._report = report

    @property
    def report(self) -> SelectionReport:
        """The report under assertion."""
        return self._report

    def __repr__(self) -> str:
        report = self._report
        return (
            f"SelectionReportAssertionChain(included={len(report.included)}, excluded={len(report.excluded)})"
        )

    @staticmethod
    def _fail(assertion: str, message: str) -> NoReturn:
        __tracebackhide__ = True  # pytest shows the failing test line, not this helper
        raise SelectionReportAssertionError(message, assertion)

    # Inclusion group -----------------------------------------------------------------------------

    def include_item_with_kind(self, kind: str) -> SelectionReportAssertionChain:
        """Pattern 1, IncludeItemWithKind: some included item has ``kind`` (case-insensitive)."""
        __tracebackhide__ = True
        name = "IncludeItemWithKind"
        wanted = _kind(name, kind)
        included = self._report.included
        if any(entry.item.kind == wanted for entry in included):
            return self
        kinds = ", ".join(_distinct(entry.item.kind for entry in included))
        self._fail(
            name,
            f"IncludeItemWithKind({wanted}) failed: Included contained 0 items with Kind={wanted}. "
            f"Included had {len(included)} items with kinds: [{kinds}].",
        )

    def include_item_matching(self, predicate: IncludedItemPredicate) -> SelectionReportAssertionChain:
        """Pattern 2, IncludeItemMatching: some included entry satisfies ``predicate``.

        On failure the message lists up to 5 included entries (kind, score, reason) after the spec's
        base message.
        """
        __tracebackhide__ = True
        name = "IncludeItemMatching"
        _check_predicate(name, predicate)
        included = self._report.included
        if any(predicate(entry) for entry in included):
            return self
        message = (
            f"IncludeItemMatching failed: no item in Included matched the predicate. "
            f"Included had {len(included)} items."
        )
        if included:
            shown = included[:_SUMMARY_LIMIT]
            summary = ", ".join(
                f"(kind={entry.item.kind}, score={_num(entry.score)}, reason={entry.reason.value})"
                for entry in shown
            )
            message += f" First {len(shown)}: [{summary}]."
        self._fail(name, message)

    def include_exactly_n_items_with_kind(self, kind: str, n: int) -> SelectionReportAssertionChain:
        """Pattern 3, IncludeExactlyNItemsWithKind: exactly ``n`` included items have ``kind``.

        ``n == 0`` asserts the kind is absent from the included list.
        """
        __tracebackhide__ = True
        name = "IncludeExactlyNItemsWithKind"
        wanted = _kind(name, kind)
        expected = _check_count(name, "n", n)
        included = self._report.included
        actual = sum(1 for entry in included if entry.item.kind == wanted)
        if actual == expected:
            return self
        self._fail(
            name,
            f"IncludeExactlyNItemsWithKind({wanted}, {expected}) failed: expected {expected} items with "
            f"Kind={wanted} in Included, but found {actual}. Included had {len(included)} items total.",
        )

    # Exclusion group -----------------------------------------------------------------------------

    def exclude_item_with_reason(self, reason: ReasonLike) -> SelectionReportAssertionChain:
        """Pattern 4, ExcludeItemWithReason: some excluded item has the ``reason`` variant."""
        __tracebackhide__ = True
        name = "ExcludeItemWithReason"
        variant = _variant_name(name, reason)
        excluded = self._report.excluded
        if any(entry.reason.name == variant for entry in excluded):
            return self
        reasons = ", ".join(_distinct(entry.reason.name for entry in excluded))
        self._fail(
            name,
            f"ExcludeItemWithReason({variant}) failed: no excluded item had reason {variant}. "
            f"Excluded had {len(excluded)} items with reasons: [{reasons}].",
        )

    def exclude_item_matching_with_reason(
        self, predicate: ExcludedItemPredicate, reason: ReasonLike
    ) -> SelectionReportAssertionChain:
        """Pattern 5, ExcludeItemMatchingWithReason: an excluded item matches ``predicate`` and ``reason``.

        The predicate sees the raw :class:`~cupel.model.ContextItem`.
        """
        __tracebackhide__ = True
        name = "ExcludeItemMatchingWithReason"
        _check_predicate(name, predicate)
        variant = _variant_name(name, reason)
        matched = [entry for entry in self._report.excluded if predicate(entry.item)]
        if any(entry.reason.name == variant for entry in matched):
            return self
        reasons = ", ".join(_distinct(entry.reason.name for entry in matched))
        self._fail(
            name,
            f"ExcludeItemMatchingWithReason(reason={variant}) failed: predicate matched {len(matched)} "
            f"excluded item(s) but none had reason {variant}. Matched items had reasons: [{reasons}].",
        )

    def exclude_item_with_budget_details(
        self, predicate: ExcludedItemPredicate, expected_item_tokens: int, expected_available_tokens: int
    ) -> SelectionReportAssertionChain:
        """Pattern 6, ExcludeItemWithBudgetDetails: a predicate-matching excluded item has
        ``BudgetExceeded(item_tokens=expected_item_tokens, available_tokens=expected_available_tokens)``.

        Token counts compare with exact integer equality. When no matching item has BudgetExceeded, the
        message (the spec's extended form) adds how many items the predicate matched and their reasons.
        """
        __tracebackhide__ = True
        name = "ExcludeItemWithBudgetDetails"
        _check_predicate(name, predicate)
        for label, value in (
            ("expected_item_tokens", expected_item_tokens),
            ("expected_available_tokens", expected_available_tokens),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise CupelTypeError(f"{name}: {label} must be an int, got {value!r}")
        matched = [entry for entry in self._report.excluded if predicate(entry.item)]
        budget_reasons = [entry.reason for entry in matched if isinstance(entry.reason, BudgetExceeded)]
        for found in budget_reasons:
            if (
                found.item_tokens == expected_item_tokens
                and found.available_tokens == expected_available_tokens
            ):
                return self
        expected = (
            f"ExcludeItemWithBudgetDetails failed: expected BudgetExceeded with "
            f"item_tokens={expected_item_tokens}, available_tokens={expected_available_tokens}"
        )
        if budget_reasons:
            # The spec reports the first predicate-matching BudgetExceeded item.
            first = budget_reasons[0]
            self._fail(
                name,
                f"{expected}, but found item_tokens={first.item_tokens}, "
                f"available_tokens={first.available_tokens}.",
            )
        reasons = ", ".join(_distinct(entry.reason.name for entry in matched))
        self._fail(
            name,
            f"{expected}, but no matching item had reason BudgetExceeded. "
            f"Predicate matched {len(matched)} excluded item(s) with reasons: [{reasons}].",
        )

    def have_no_exclusions_for_kind(self, kind: str) -> SelectionReportAssertionChain:
        """Pattern 7, HaveNoExclusionsForKind: no excluded item has ``kind`` (case-insensitive)."""
        __tracebackhide__ = True
        name = "HaveNoExclusionsForKind"
        wanted = _kind(name, kind)
        matching: list[ExcludedItem] = [entry for entry in self._report.excluded if entry.item.kind == wanted]
        if not matching:
            return self
        first = matching[0]
        self._fail(
            name,
            f"HaveNoExclusionsForKind({wanted}) failed: found {len(matching)} excluded item(s) with "
            f"Kind={wanted}. First: score={_num(first.score)}, reason={first.reason.name}.",
        )

    # Aggregate group -----------------------------------------------------------------------------

    def have_at_least_n_exclusions(self, n: int) -> SelectionReportAssertionChain:
        """Pattern 8, HaveAtLeastNExclusions: ``len(excluded) >= n``."""
        __tracebackhide__ = True
        name = "HaveAtLeastNExclusions"
        expected = _check_count(name, "n", n)
        actual = len(self._report.excluded)
        if actual >= expected:
            return self
        self._fail(
            name,
            f"HaveAtLeastNExclusions({expected}) failed: expected at least {expected} excluded items, "
            f"but Excluded had {actual}.",
        )

    def excluded_items_are_sorted_by_score_descending(self) -> SelectionReportAssertionChain:
        """Pattern 9, ExcludedItemsAreSortedByScoreDescending: ``excluded[i].score >= excluded[i+1].score``.

        A conformance assertion; equal neighbours are allowed and the tie order is not checked.
        """
        __tracebackhide__ = True
        name = "ExcludedItemsAreSortedByScoreDescending"
        excluded = self._report.excluded
        for index in range(len(excluded) - 1):
            current, following = excluded[index].score, excluded[index + 1].score
            if not current >= following:
                self._fail(
                    name,
                    f"ExcludedItemsAreSortedByScoreDescending failed: item at index {index + 1} "
                    f"(score={_num(following)}) is higher than item at index {index} "
                    f"(score={_num(current)}). Expected non-increasing scores.",
                )
        return self

    # Budget group --------------------------------------------------------------------------------

    def have_budget_utilization_above(
        self, threshold: float, budget: ContextBudget
    ) -> SelectionReportAssertionChain:
        """Pattern 10, HaveBudgetUtilizationAbove: ``sum(included tokens) / budget.max_tokens >= threshold``.

        Exact ``>=``, no epsilon (PD-3); the denominator is ``max_tokens`` (PD-2). cupel allows
        ``max_tokens == 0``: utilization is then 0.0 with no included tokens and infinite otherwise.
        """
        __tracebackhide__ = True
        name = "HaveBudgetUtilizationAbove"
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise CupelTypeError(f"{name}: threshold must be a float, got {threshold!r}")
        if not isinstance(budget, ContextBudget):
            raise CupelTypeError(f"{name}: budget must be a ContextBudget, got {type(budget).__name__}")
        included_tokens = sum(entry.item.tokens for entry in self._report.included)
        max_tokens = budget.max_tokens
        if max_tokens > 0:
            utilization = included_tokens / max_tokens
        else:
            utilization = 0.0 if included_tokens == 0 else math.inf
        if utilization >= threshold:
            return self
        self._fail(
            name,
            f"HaveBudgetUtilizationAbove({_num(threshold)}) failed: computed utilization was "
            f"{utilization:.6f} (includedTokens={included_tokens}, budget.MaxTokens={max_tokens}).",
        )

    # Coverage group ------------------------------------------------------------------------------

    def have_kind_coverage_count(self, n: int) -> SelectionReportAssertionChain:
        """Pattern 11, HaveKindCoverageCount: at least ``n`` distinct kinds are included.

        Kinds are distinct case-insensitively, as ContextKind compares.
        """
        __tracebackhide__ = True
        name = "HaveKindCoverageCount"
        expected = _check_count(name, "n", n)
        kinds = _distinct(entry.item.kind for entry in self._report.included)
        if len(kinds) >= expected:
            return self
        self._fail(
            name,
            f"HaveKindCoverageCount({expected}) failed: expected at least {expected} distinct ContextKind "
            f"values in Included, but found {len(kinds)}: [{', '.join(kinds)}].",
        )

    # Ordering group ------------------------------------------------------------------------------

    def place_item_at_edge(self, predicate: IncludedItemPredicate) -> SelectionReportAssertionChain:
        """Pattern 12, PlaceItemAtEdge: the first or the last included entry satisfies ``predicate``.

        Only meaningful when the placer's ordering contract is known (e.g. UShapedPlacer).
        """
        __tracebackhide__ = True
        name = "PlaceItemAtEdge"
        _check_predicate(name, predicate)
        included = self._report.included
        if included and (predicate(included[0]) or predicate(included[-1])):
            return self
        first_match = next((index for index, entry in enumerate(included) if predicate(entry)), None)
        if first_match is None:
            self._fail(name, "PlaceItemAtEdge failed: no item in Included matched the predicate.")
        self._fail(
            name,
            f"PlaceItemAtEdge failed: item matching predicate was at index {first_match} (not at edge). "
            f"Edge positions: 0 and {len(included) - 1}. Included had {len(included)} items.",
        )

    def place_top_n_scored_at_edges(self, n: int) -> SelectionReportAssertionChain:
        """Pattern 13, PlaceTopNScoredAtEdges: the ``n`` best-scored entries hold the ``n`` outermost
        positions, in the order 0, count-1, 1, count-2, ...

        The k-th edge position must hold an entry whose score equals the k-th highest score, so any of
        several tied entries may fill a position. This is exactly UShapedPlacer's contract. ``n`` larger
        than the included count fails.
        """
        __tracebackhide__ = True
        name = "PlaceTopNScoredAtEdges"
        wanted = _check_count(name, "n", n)
        included = self._report.included
        count = len(included)
        if wanted == 0:
            return self
        if wanted > count:
            self._fail(
                name,
                f"PlaceTopNScoredAtEdges({wanted}) failed: expected {wanted} items at edge positions, "
                f"but Included had {count} items.",
            )
        # Stable: equal scores keep ascending position, so the report of ties is deterministic.
        ranked = descending_indices(range(count), [entry.score for entry in included])[:wanted]
        edges = _edge_positions(count, wanted)
        fail_count = sum(
            1
            for rank, position in enumerate(edges)
            if nan_last(included[position].score) != nan_last(included[ranked[rank]].score)
        )
        if fail_count == 0:
            return self
        top_items = ", ".join(
            f"(kind={included[index].item.kind}, score={_num(included[index].score)}, idx={index})"
            for index in ranked
        )
        self._fail(
            name,
            f"PlaceTopNScoredAtEdges({wanted}) failed: {fail_count} of the top-{wanted} scored items were "
            f"not at expected edge positions. Top-{wanted} items (by score): [{top_items}]. "
            f"Expected edge positions: [{', '.join(str(position) for position in edges)}].",
        )
