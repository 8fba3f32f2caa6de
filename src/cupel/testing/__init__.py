"""Assertions over a :class:`~cupel.diagnostics.report.SelectionReport` (spec: Cupel.Testing Vocabulary).

``should(pipeline.dry_run(items, budget)).include_item_with_kind("Message").have_at_least_n_exclusions(1)``.
Each of the 13 assertions returns the chain, or raises :class:`SelectionReportAssertionError` (an
``AssertionError``) with the spec's message, which names the assertion in PascalCase as the spec does.
"""

from __future__ import annotations

from cupel.testing._chain import (
    ExcludedItemPredicate,
    IncludedItemPredicate,
    ReasonLike,
    SelectionReportAssertionChain,
    should,
)
from cupel.testing._error import SelectionReportAssertionError

__all__ = [
    "ExcludedItemPredicate",
    "IncludedItemPredicate",
    "ReasonLike",
    "SelectionReportAssertionChain",
    "SelectionReportAssertionError",
    "should",
]
