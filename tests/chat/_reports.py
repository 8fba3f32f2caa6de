"""A report's values, entry by entry, for comparing reports built in different ways."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from cupel.chat.read import MESSAGES_KEY
from cupel.diagnostics.report import SelectionReport


def entry_values(entry: Any) -> tuple[Any, ...]:
    """Every field of the entry's item (its messages by identity), its score, reason and relevance."""
    item = entry.item
    values = []
    for field in fields(item):
        value = getattr(item, field.name)
        if field.name == "metadata":
            value = {
                key: tuple(map(id, inner)) if key == MESSAGES_KEY else inner for key, inner in value.items()
            }
        values.append(value)
    return (*values, entry.score, entry.reason, entry.relevance)


def report_values(report: SelectionReport) -> tuple[Any, ...]:
    """The entries' values, included then excluded, the totals and the events."""
    return (
        [entry_values(entry) for entry in report.included],
        [entry_values(entry) for entry in report.excluded],
        report.total_candidates,
        report.total_tokens_considered,
        report.events,
    )
