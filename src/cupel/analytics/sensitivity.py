"""Policy sensitivity: run several configurations over the same items and diff them (spec: Policy
Sensitivity)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cupel._prepared import checked_items
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline
from cupel.policy.policy import Policy

__all__ = [
    "MINIMUM_VARIANTS_MESSAGE",
    "ItemStatus",
    "PolicySensitivityDiffEntry",
    "PolicySensitivityReport",
    "policy_sensitivity",
    "policy_sensitivity_from_pipelines",
    "policy_sensitivity_from_reports",
]

#: The spec's message when fewer than two variants are given (spec: Minimum Variants).
MINIMUM_VARIANTS_MESSAGE = "policy_sensitivity requires at least 2 variants"


class ItemStatus(StrEnum):
    """Whether a variant included an item (spec: ItemStatus)."""

    INCLUDED = "included"
    EXCLUDED = "excluded"


@dataclass(frozen=True, slots=True)
class PolicySensitivityDiffEntry:
    """One content whose inclusion differs between variants; ``statuses`` in variant order."""

    content: str
    statuses: tuple[tuple[str, ItemStatus], ...]

    def status_of(self, label: str) -> ItemStatus:
        """The status under the variant labelled ``label``."""
        for variant, status in self.statuses:
            if variant == label:
                return status
        raise KeyError(label)


@dataclass(frozen=True, slots=True)
class PolicySensitivityReport:
    """Per-variant reports in input order, and the swinging contents (spec: PolicySensitivityReport).

    ``diffs`` are ordered by each content's first appearance in the input items.
    """

    variants: tuple[tuple[str, SelectionReport], ...]
    diffs: tuple[PolicySensitivityDiffEntry, ...]

    def report_for(self, label: str) -> SelectionReport:
        """The selection report of the variant labelled ``label``."""
        for variant, report in self.variants:
            if variant == label:
                return report
        raise KeyError(label)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready form: each variant's report in the wire format, and the diffs."""
        return {
            "variants": [{"label": label, "report": report.to_dict()} for label, report in self.variants],
            "diffs": [
                {
                    "content": diff.content,
                    "statuses": [{"label": label, "status": status.value} for label, status in diff.statuses],
                }
                for diff in self.diffs
            ],
        }


def _check_variants(variants: object, kind: type, kind_name: str) -> list[tuple[str, Any]]:
    if isinstance(variants, str | bytes) or not isinstance(variants, Sequence):
        raise CupelTypeError(f"variants must be a sequence of (label, {kind_name}) pairs, got {variants!r}")
    checked: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for index, variant in enumerate(variants):
        try:
            label, value = variant
        except (TypeError, ValueError):
            raise CupelTypeError(
                f"variants[{index}] must be a (label, {kind_name}) pair, got {variant!r}"
            ) from None
        if not isinstance(label, str):
            raise CupelTypeError(f"variants[{index}] label must be a str, got {label!r}")
        if not isinstance(value, kind):
            raise CupelTypeError(f"variants[{index}] must pair a label with a {kind_name}, got {value!r}")
        if label in seen:
            raise InvalidConfigurationError(
                f"variant labels must be unique; {label!r} appears more than once"
            )
        seen.add(label)
        checked.append((label, value))
    if len(checked) < 2:
        raise InvalidConfigurationError(MINIMUM_VARIANTS_MESSAGE)
    return checked


def policy_sensitivity(
    items: Sequence[ContextItem], budget: ContextBudget, variants: Sequence[tuple[str, Policy]]
) -> PolicySensitivityReport:
    """Dry-run every ``(label, policy)`` variant over ``items`` at ``budget`` and diff the results.

    At least two variants, with unique labels. See :func:`policy_sensitivity_from_pipelines`.
    """
    checked = _check_variants(variants, Policy, "Policy")
    pipelines = [(label, Pipeline.from_policy(policy)) for label, policy in checked]
    return policy_sensitivity_from_pipelines(items, budget, pipelines)


def policy_sensitivity_from_pipelines(
    items: Sequence[ContextItem], budget: ContextBudget, variants: Sequence[tuple[str, Pipeline]]
) -> PolicySensitivityReport:
    """Dry-run every ``(label, pipeline)`` variant over ``items`` at ``budget`` and diff the results.

    Items are matched by content (byte-exact), not identity. A content counts as included by a
    variant when at least one item carrying it is included. ``diffs`` lists only contents on which
    at least two variants disagree, in order of first appearance in ``items``; ``statuses`` and
    ``variants`` follow the input order of the variants. An error in a variant's run propagates,
    with a note naming the variant.
    """
    checked = _check_variants(variants, Pipeline, "Pipeline")
    if not isinstance(budget, ContextBudget):
        raise CupelTypeError(f"budget must be a ContextBudget, got {type(budget).__name__}")
    candidates = checked_items(items)
    reports: list[tuple[str, SelectionReport]] = []
    for label, pipeline in checked:
        try:
            reports.append((label, pipeline.dry_run(candidates, budget)))
        except Exception as error:
            error.add_note(f"while running policy_sensitivity variant {label!r}")
            raise
    return policy_sensitivity_from_reports(candidates, reports)


def policy_sensitivity_from_reports(
    items: Sequence[ContextItem], variants: Sequence[tuple[str, SelectionReport]]
) -> PolicySensitivityReport:
    """Diff ``(label, report)`` variants already run over ``items`` (for example the reports of
    :func:`~cupel.chat.select_messages` under each policy, whose items are a transcript's units).

    The diff is :func:`policy_sensitivity_from_pipelines`'s: by content, in order of first appearance
    in ``items``.
    """
    reports = _check_variants(variants, SelectionReport, "SelectionReport")
    included = [{entry.item.content for entry in report.included} for _, report in reports]
    diffs: list[PolicySensitivityDiffEntry] = []
    seen: set[str] = set()
    for item in items:
        content = item.content
        if content in seen:
            continue
        seen.add(content)
        flags = [content in contents for contents in included]
        if all(flags) or not any(flags):
            continue
        statuses = tuple(
            (label, ItemStatus.INCLUDED if flag else ItemStatus.EXCLUDED)
            for (label, _), flag in zip(reports, flags, strict=True)
        )
        diffs.append(PolicySensitivityDiffEntry(content, statuses))
    return PolicySensitivityReport(tuple(reports), tuple(diffs))
