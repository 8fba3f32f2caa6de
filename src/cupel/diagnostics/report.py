"""SelectionReport and its included/excluded entries (spec: Diagnostics, SelectionReport)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import compress
from operator import not_
from typing import Any, ClassVar

from cupel import _numeric
from cupel._score_order import descending_indices
from cupel._trusted import trusted_batch
from cupel._wire_format import (
    WireFormat,
    fail,
    item_from_dict,
    item_to_dict,
    number_from_wire,
    number_to_wire,
    register_codec,
    require_array,
    require_count,
    require_mapping,
)
from cupel.diagnostics._deferred import (
    Deferred,
    ExclusionBatch,
    InclusionBatch,
    defer,
    expanded,
    sorted_exclusions,
    spliced,
)
from cupel.diagnostics.events import CountRequirementShortfall, TraceEvent, event_from_dict, event_to_dict
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason, exclusion_reason_from_dict
from cupel.model import ContextItem, ContextKind

__all__ = [
    "ExcludedColumns",
    "ExcludedItem",
    "IncludedItem",
    "SelectionReport",
    "report_of_columns",
    "with_relevance",
]


@dataclass(frozen=True, slots=True)
class IncludedItem:
    """An item in the final window, its score and why it is there.

    ``relevance`` is the item's RelevanceScorer score when the policy has one (None otherwise).
    """

    item: ContextItem
    score: float
    reason: InclusionReason
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class ExcludedItem:
    """An item left out, its score at the time and why (``relevance`` as for IncludedItem)."""

    item: ContextItem
    score: float
    reason: ExclusionReason
    relevance: float | None = None


@dataclass(frozen=True, slots=True)
class SelectionReport(WireFormat, Deferred):
    """Everything one run decided: included in placed order, excluded by score descending.

    Every candidate appears exactly once across ``included`` and ``excluded``. A report-building
    run's report builds ``events``, ``included`` and ``excluded`` when each is first read. ``notes``
    says what the run could not show in scores (a relevance term without a query, for one).
    """

    _wire: ClassVar[str] = "report"
    events: tuple[TraceEvent, ...]
    included: tuple[IncludedItem, ...]
    excluded: tuple[ExcludedItem, ...]
    total_candidates: int
    total_tokens_considered: int
    count_requirement_shortfalls: tuple[CountRequirementShortfall, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def items(self) -> list[ContextItem]:
        """The selected items in placed order (what ``Pipeline.run`` returns)."""
        return [entry.item for entry in self.included]

    @property
    def included_tokens(self) -> int:
        """Total tokens of the included items."""
        return sum(entry.item.tokens for entry in self.included)


_included_batch = trusted_batch(IncludedItem)
_excluded_batch = trusted_batch(ExcludedItem)
_FIELD_SETTERS = {name: SelectionReport.__dict__[name].__set__ for name in SelectionReport.__match_args__}


def deferred_report(
    events: tuple[list[Any], list[int]],
    included: tuple[list[ContextItem], list[float], list[InclusionReason], list[tuple[int, InclusionBatch]]],
    excluded: tuple[list[ContextItem], list[float], list[ExclusionReason], list[tuple[int, ExclusionBatch]]],
    total_candidates: int,
    total_tokens_considered: int,
    count_requirement_shortfalls: tuple[CountRequirementShortfall, ...],
) -> SelectionReport:
    """A report whose entries and events are built from a run's column buffers when first read.

    ``events`` is a list of events and event batches (see :mod:`cupel.diagnostics._deferred`) with
    the batches' positions; ``included`` the placed items, scores and reasons in placed order, and
    batches of inclusions with their offsets among them; ``excluded`` the same for the left-out
    items, in the order they were excluded (the report sorts them by score, stably). The lists are
    the report's from then on.
    """
    report: SelectionReport = object.__new__(SelectionReport)
    _FIELD_SETTERS["total_candidates"](report, total_candidates)
    _FIELD_SETTERS["total_tokens_considered"](report, total_tokens_considered)
    _FIELD_SETTERS["count_requirement_shortfalls"](report, count_requirement_shortfalls)
    _FIELD_SETTERS["notes"](report, ())
    pending: dict[str, Callable[[], Any]] = {
        "events": lambda: tuple(expanded(*events)),
        "included": lambda: _included_entries(*spliced(included[:3], included[3])),
        "excluded": lambda: _excluded_entries(excluded[:3], excluded[3]),
    }
    defer(report, pending)
    return report


ExcludedColumns = tuple[
    int, Iterable[ContextItem], Iterable[float], Iterable[ExclusionReason | None], Iterable[float | None]
]
"""The left-out entries as columns, in report order: how many, then items, scores, reasons, relevance."""


def report_of_columns(
    items: Sequence[ContextItem],
    kept: Sequence[bool],
    sizes: tuple[Sequence[bool], Sequence[int]],
    numbers: tuple[
        Mapping[int, float] | Sequence[float], Mapping[int, float | None] | Sequence[float | None]
    ],
    exclusions: Sequence[ExclusionReason | None],
    excluded: ExcludedColumns | None = None,
) -> SelectionReport:
    """A report over candidates given as columns by position: the kept in position order (a run
    that places them so), the others by score descending, ties in position order, NaN last.

    ``sizes`` is whether each is pinned and its tokens (a kept one is Pinned, ZeroToken or Scored,
    as the pipeline reports); ``numbers`` its score and relevance (``None`` for none);
    ``exclusions`` its exclusion reason (read for the left out only). The entries are built as a
    report-building run builds them, column by column. A caller that knows the left-out entries in
    that order gives them as ``excluded`` (``numbers`` then read for the kept only, ``exclusions`` not).
    """
    pinned, tokens = sizes
    scores, relevance = numbers
    count = len(items)
    included = list(compress(range(count), kept))
    inclusions = [
        InclusionReason.PINNED
        if pinned[position]
        else InclusionReason.ZERO_TOKEN
        if tokens[position] == 0
        else InclusionReason.SCORED
        for position in included
    ]
    if excluded is None:
        order = _by_score(scores, list(compress(range(count), map(not_, kept))))  # type: ignore[arg-type]
        excluded = (
            len(order),
            map(items.__getitem__, order),
            map(scores.__getitem__, order),
            map(exclusions.__getitem__, order),
            map(relevance.__getitem__, order),
        )
    return SelectionReport(
        events=(),
        included=tuple(
            _included_batch(
                len(included),
                map(items.__getitem__, included),
                map(scores.__getitem__, included),
                inclusions,
                map(relevance.__getitem__, included),
            )
        ),
        excluded=tuple(_excluded_batch(*excluded)),
        total_candidates=count,
        total_tokens_considered=sum(tokens),
    )


def _included_entries(
    items: list[ContextItem], scores: list[float], reasons: list[InclusionReason]
) -> tuple[IncludedItem, ...]:
    return tuple(_included_batch(len(items), items, scores, reasons))


def _excluded_entries(
    columns: tuple[list[ContextItem], list[float], list[ExclusionReason]],
    batches: list[tuple[int, ExclusionBatch]],
) -> tuple[ExcludedItem, ...]:
    found = sorted_exclusions(columns, batches)
    if found is None:
        return _sorted_excluded(*spliced(columns, batches))
    return tuple(_excluded_batch(*found))


def _sorted_excluded(
    items: list[ContextItem], scores: list[float], reasons: list[ExclusionReason]
) -> tuple[ExcludedItem, ...]:
    # Stable sort: equal scores keep the order in which items were excluded.
    order = _by_score(scores, range(len(scores)))
    return tuple(
        _excluded_batch(
            len(order),
            map(items.__getitem__, order),
            map(scores.__getitem__, order),
            map(reasons.__getitem__, order),
        )
    )


def _by_score(scores: Sequence[float], positions: Sequence[int]) -> list[int]:
    """``positions`` by score descending, a stable sort, NaN last (numpy's for a large list without NaN,
    the same order; else Python's)."""
    order = _numeric.order_by_score(scores, positions)
    return descending_indices(positions, scores) if order is None else order


def with_relevance(
    report: SelectionReport, relevance: Mapping[int, float], notes: Sequence[str]
) -> SelectionReport:
    """``report`` with each entry's relevance (``relevance`` maps ``id(item)`` to it) and ``notes``."""

    def included(entry: IncludedItem) -> IncludedItem:
        return IncludedItem(entry.item, entry.score, entry.reason, relevance.get(id(entry.item)))

    def excluded(entry: ExcludedItem) -> ExcludedItem:
        return ExcludedItem(entry.item, entry.score, entry.reason, relevance.get(id(entry.item)))

    return SelectionReport(
        events=report.events,
        included=tuple(map(included, report.included)),
        excluded=tuple(map(excluded, report.excluded)),
        total_candidates=report.total_candidates,
        total_tokens_considered=report.total_tokens_considered,
        count_requirement_shortfalls=report.count_requirement_shortfalls,
        notes=(*report.notes, *notes),
    )


def _entry_to_dict(
    item: ContextItem, score: float, reason: dict[str, Any], relevance: float | None
) -> dict[str, Any]:
    data = {"item": item_to_dict(item), "score": number_to_wire(score), "reason": reason}
    if relevance is not None:
        data["relevance"] = number_to_wire(relevance)
    return data


def _relevance_from_wire(entry: Mapping[str, Any], where: str) -> float | None:
    return None if "relevance" not in entry else number_from_wire(entry["relevance"], f"{where}.relevance")


def report_to_dict(report: SelectionReport) -> dict[str, Any]:
    data: dict[str, Any] = {
        "events": [event_to_dict(event) for event in report.events],
        "included": [
            _entry_to_dict(e.item, e.score, e.reason.to_dict(), e.relevance) for e in report.included
        ],
        "excluded": [
            _entry_to_dict(e.item, e.score, e.reason.to_dict(), e.relevance) for e in report.excluded
        ],
        "total_candidates": report.total_candidates,
        "total_tokens_considered": report.total_tokens_considered,
    }
    if report.count_requirement_shortfalls:
        data["count_requirement_shortfalls"] = [
            {
                "kind": str(shortfall.kind),
                "required_count": shortfall.required_count,
                "satisfied_count": shortfall.satisfied_count,
            }
            for shortfall in report.count_requirement_shortfalls
        ]
    if report.notes:
        data["notes"] = list(report.notes)
    return data


def report_from_dict(data: object, path: str = "report") -> SelectionReport:
    mapping = require_mapping(data, path, "a report")
    try:
        events = tuple(
            event_from_dict(event, f"{path}.events[{n}]")
            for n, event in enumerate(require_array(mapping, "events", path))
        )
        included = []
        for n, entry in enumerate(require_array(mapping, "included", path)):
            where = f"{path}.included[{n}]"
            entry = require_mapping(entry, where, "an included item")
            included.append(
                IncludedItem(
                    item_from_dict(ContextItem, entry["item"], f"{where}.item"),
                    number_from_wire(entry["score"], f"{where}.score"),
                    InclusionReason.from_dict(entry["reason"]),
                    _relevance_from_wire(entry, where),
                )
            )
        excluded = []
        for n, entry in enumerate(require_array(mapping, "excluded", path)):
            where = f"{path}.excluded[{n}]"
            entry = require_mapping(entry, where, "an excluded item")
            reason: ExclusionReason = exclusion_reason_from_dict(entry["reason"])
            score = number_from_wire(entry["score"], f"{where}.score")
            item = item_from_dict(ContextItem, entry["item"], f"{where}.item")
            excluded.append(ExcludedItem(item, score, reason, _relevance_from_wire(entry, where)))
        shortfalls = []
        if "count_requirement_shortfalls" in mapping:
            for n, raw in enumerate(require_array(mapping, "count_requirement_shortfalls", path)):
                where = f"{path}.count_requirement_shortfalls[{n}]"
                raw = require_mapping(raw, where, "a shortfall")
                shortfalls.append(
                    CountRequirementShortfall(
                        ContextKind(raw["kind"]),
                        require_count(raw["required_count"], f"{where}.required_count"),
                        require_count(raw["satisfied_count"], f"{where}.satisfied_count"),
                    )
                )
        notes = []
        for n, note in enumerate(require_array(mapping, "notes", path) if "notes" in mapping else ()):
            if not isinstance(note, str):
                raise fail(f"{path}.notes[{n}]", f"must be a string, got {note!r:.40}")
            notes.append(note)
        total_candidates = require_count(mapping["total_candidates"], f"{path}.total_candidates")
        if total_candidates != len(included) + len(excluded):
            # Every candidate is either included or excluded, exactly once (spec: SelectionReport).
            raise fail(
                f"{path}.total_candidates",
                f"is {total_candidates}, but the report lists {len(included)} included + "
                f"{len(excluded)} excluded = {len(included) + len(excluded)} items",
            )
        return SelectionReport(
            events=events,
            included=tuple(included),
            excluded=tuple(excluded),
            total_candidates=total_candidates,
            total_tokens_considered=require_count(
                mapping["total_tokens_considered"], f"{path}.total_tokens_considered"
            ),
            count_requirement_shortfalls=tuple(shortfalls),
            notes=tuple(notes),
        )
    except KeyError as missing:
        raise fail(path, f"missing required field {missing.args[0]!r}") from None


register_codec("report", report_to_dict, lambda _cls, data, path: report_from_dict(data, path))
