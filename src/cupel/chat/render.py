"""Stage 4 of a chat selection: the kept messages, and the report when it is read.

:class:`ChatSelection` holds the kept message objects (the caller's own, in transcript order) and
builds its :class:`~cupel.SelectionReport` on first access: for ``"turns"`` column by column from the
unit items (:func:`turns_report`), else from the strategy's :class:`~cupel.chat.choose.Choice`
(its ``report``); each entry with the score and relevance its choice used, nothing scored again.
:func:`to_messages` expands unit items back into messages; :func:`tool_results` finds the tool results a
transcript holds, with what clearing one would save, :func:`replaced` writes the cleared messages and
:func:`with_cleared` reports each tool result sent cleared (:func:`~cupel.chat.plan.clear_first`).
"""

from __future__ import annotations

import dataclasses
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import setitem, sub
from typing import Any, Generic, TypeVar

from cupel._gc_pause import collector_paused
from cupel.chat.choose import ColumnRun, TurnOutcome
from cupel.chat.choose_units import select_turns
from cupel.chat.options import ChatOptions
from cupel.chat.parse import SYSTEM_ROLES, MessageView, parse_message
from cupel.chat.read import INDICES_KEY, MESSAGES_KEY, ROLES_KEY, _as_list, _sequence, parsed_costs
from cupel.chat.session import count_texts_once
from cupel.chat.units import TurnRecords, unit_item, unit_items
from cupel.diagnostics.attribution import left_out_reasons
from cupel.diagnostics.events import TraceEvent
from cupel.diagnostics.hooks import active_sink, installed
from cupel.diagnostics.reasons import ExclusionReason
from cupel.diagnostics.report import ExcludedColumns, SelectionReport, report_of_columns
from cupel.errors import (
    BudgetOverflowError,
    CupelTypeError,
    InvalidConfigurationError,
    PinnedItemsExceedBudgetError,
)
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline
from cupel.policy.chat_settings import ChatSettings, ToolResult
from cupel.tokens.base import CounterLike

__all__ = [
    "CLEAR_STAGE",
    "ChatSelection",
    "attempted",
    "kept_positions",
    "replaced",
    "sends_all",
    "to_messages",
    "tool_results",
    "turns_report",
    "turns_selection",
    "with_cleared",
]


def to_messages(items: Sequence[ContextItem] | SelectionReport, *, system_first: bool = True) -> list[Any]:
    """Expand selected chat items back into their original messages, in transcript order.

    Every unit comes back whole, so each tool result follows its call. With ``system_first`` (the
    default) system and developer messages lead, each group keeping its original order. The placed order
    of ``items`` does not matter: a transcript's order is part of its meaning.
    """
    from cupel.diagnostics.report import SelectionReport  # here: reading a transcript needs no report

    if isinstance(items, SelectionReport):
        items = items.items
    if not isinstance(system_first, bool):
        raise CupelTypeError(f"system_first must be a bool, got {system_first!r}")
    entries: list[tuple[int, bool, Any]] = []
    seen: dict[int, int] = {}
    for position, item in enumerate(_as_list(items, "items")):
        if not isinstance(item, ContextItem):
            raise CupelTypeError(f"items[{position}] must be a ContextItem, got {item!r}")
        # Lists are accepted too: an item read back from the JSON wire form holds lists, not tuples.
        indices = _sequence(item.metadata.get(INDICES_KEY))
        messages = _sequence(item.metadata.get(MESSAGES_KEY))
        roles = _sequence(item.metadata.get(ROLES_KEY))
        if not (
            indices is not None
            and messages is not None
            and roles is not None
            and len(indices) == len(messages) == len(roles) > 0
            and all(isinstance(index, int) and not isinstance(index, bool) for index in indices)
        ):
            raise InvalidConfigurationError(
                f"items[{position}] is not a chat item: its metadata lacks {INDICES_KEY!r}, "
                f"{MESSAGES_KEY!r} and {ROLES_KEY!r}; build chat items with messages_to_items"
            )
        for index, role, message in zip(indices, roles, messages, strict=True):
            if index in seen:
                raise InvalidConfigurationError(
                    f"items[{position}] holds message {index}, which items[{seen[index]}] already holds"
                )
            seen[index] = position
            entries.append((index, system_first and role in SYSTEM_ROLES, message))
    # Sorting on (not system, index) lifts system messages to the front and keeps order within groups.
    entries.sort(key=lambda entry: (not entry[1], entry[0]))
    return [message for _, _, message in entries]


M = TypeVar("M")


class ChatSelection(Generic[M]):
    """The trimmed transcript and the report explaining it.

    The report is built on first access (selection itself never needs it), so a caller that only
    wants the messages does not pay for explaining them.
    """

    __slots__ = ("_build", "_report", "messages", "tokens")

    messages: tuple[M, ...]
    tokens: int
    """Tokens of the kept messages, as charged during selection."""
    _report: SelectionReport | None
    _build: Callable[[], SelectionReport] | None

    def __init__(
        self,
        messages: tuple[M, ...],
        report: SelectionReport | Callable[[], SelectionReport],
        *,
        tokens: int | None = None,
    ) -> None:
        init = object.__setattr__
        init(self, "messages", messages)
        if isinstance(report, SelectionReport):
            init(self, "_report", report)
            init(self, "_build", None)
            init(self, "tokens", report.included_tokens if tokens is None else tokens)
        else:
            if tokens is None:
                raise CupelTypeError("ChatSelection needs tokens when its report is built lazily")
            init(self, "_report", None)
            init(self, "_build", report)
            init(self, "tokens", tokens)

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    @property
    def report(self) -> SelectionReport:
        """The :class:`~cupel.SelectionReport`: one entry per unit, kept in transcript order."""
        built: SelectionReport | None = self._report
        if built is None:
            build: Callable[[], SelectionReport] = self._build  # type: ignore[assignment]
            if active_sink() is None:
                built = build()
            else:
                # Explaining a selection re-runs parts of it; those runs are not selections to trace.
                with installed(None):
                    built = build()
            object.__setattr__(self, "_report", built)
            object.__setattr__(self, "_build", None)
        return built

    def __repr__(self) -> str:
        return f"ChatSelection(messages={len(self.messages)}, tokens={self.tokens})"

    @property
    def excluded_messages(self) -> tuple[M, ...]:
        """The dropped messages, in transcript order."""
        return tuple(to_messages([entry.item for entry in self.report.excluded], system_first=False))


def turns_report(records: TurnRecords, outcome: TurnOutcome, pipeline: Pipeline) -> SelectionReport | None:
    """The reference's report from the columns, or ``None`` where only the reference can tell.

    Nothing is scored again: each unit of an older candidate carries the score and relevance its
    candidate was ranked with (``outcome.run``); every other unit was kept or dropped by a rule.
    """
    if outcome.by_pipeline:
        return None
    count = len(records.tokens)
    run = outcome.run
    left = None if run is None else _older_reasons(run, pipeline)
    if run is not None and left is None:
        return None
    pinned = records.pinned_units(outcome.system)
    sizes = (pinned, records.tokens)
    spans = outcome.spans
    if run is not None and left is not None and spans is not None and len(spans[0]) == len(run.tokens):
        # Older turns alone, each a run of units: their units leave in the order the run ranked them.
        items = unit_items(records, pinned, outcome.system)
        numbers, excluded = _by_candidate(outcome, run, spans, left, items)
        return report_of_columns(items, outcome.kept, sizes, numbers, (), excluded)
    reasons: list[ExclusionReason | None] = [None] * count  # by unit position
    for position, reason in outcome.reasons.items():
        reasons[position] = reason
    scores = [1.0] * count
    relevance: list[float | None] = [None] * count
    if run is not None and left is not None:
        by_candidate: list[ExclusionReason | None] = [None] * len(run.tokens)
        deque(map(setitem, repeat(by_candidate), *left), maxlen=0)
        _on_units(outcome, [(reasons, by_candidate), (scores, run.scores), (relevance, run.relevance)])
    items = unit_items(records, pinned, outcome.system)
    return report_of_columns(items, outcome.kept, sizes, (scores, relevance), reasons)


def _by_candidate(
    outcome: TurnOutcome,
    run: ColumnRun,
    spans: tuple[list[int], list[int]],
    left: tuple[list[int], list[Any]],
    items: Sequence[ContextItem],
) -> tuple[tuple[dict[int, float], dict[int, float | None]], ExcludedColumns]:
    """:func:`turns_report`'s unit columns read per older candidate: the kept units' scores and
    relevance, and the left-out units' entry columns (of ``items``, by position) in the order the
    reference sorts them (score descending, ties by position, NaN last). The run ranked the candidates
    so, ties by candidate, and each is a run of units after the one before; a unit a rule left out
    (score 1.0) comes after the left-out candidates scored 1.0 or more."""
    starts, ends = spans
    scores, relevance = run.scores, run.relevance
    kept_scores: dict[int, float] = {}
    kept_relevance: dict[int, float | None] = {}
    for position in compress(range(len(outcome.kept)), outcome.kept):
        candidate = bisect_right(starts, position) - 1
        inside = candidate >= 0 and position < ends[candidate]
        kept_scores[position] = scores[candidate] if inside else 1.0
        kept_relevance[position] = relevance[candidate] if inside and relevance is not None else None
    candidates, reasons = left
    firsts, lasts = list(map(starts.__getitem__, candidates)), list(map(ends.__getitem__, candidates))
    values: list[list[Any]] = [list(map(scores.__getitem__, candidates)), reasons]
    if relevance is not None:
        values.append(list(map(relevance.__getitem__, candidates)))
    if outcome.reasons:
        at = sum(map((1.0).__le__, values[0]))  # past the leading candidates scored 1.0 or more
        ruled = sorted(outcome.reasons)
        firsts[at:at], lasts[at:at] = ruled, [position + 1 for position in ruled]
        inserted: list[list[Any]] = [[1.0] * len(ruled), list(map(outcome.reasons.__getitem__, ruled))]
        inserted.append([None] * len(ruled))
        for column, more in zip(values, inserted, strict=False):  # no relevance column: two
            column[at:at] = more
    counts = list(map(sub, lasts, firsts))
    spread = [chain.from_iterable(map(repeat, column, counts)) for column in values]
    positions = chain.from_iterable(map(range, firsts, lasts))
    unit_relevance = spread[2] if relevance is not None else repeat(None)
    excluded = (sum(counts), map(items.__getitem__, positions), spread[0], spread[1], unit_relevance)
    return (kept_scores, kept_relevance), excluded


def _older_reasons(run: ColumnRun, pipeline: Pipeline) -> tuple[list[int], list[ExclusionReason]] | None:
    """The older candidates left out, in the run's order, and each one's reason as a traced run of the
    older turns' pipeline gives it; ``None`` if it cannot tell."""
    if len(run.chosen) == len(run.order):
        return [], []
    return left_out_reasons(pipeline.slicer, run.order, run.tokens, run.scores, run.budget)


def _on_units(outcome: TurnOutcome, columns: list[tuple[list[Any], Sequence[Any] | None]]) -> None:
    """For each ``(column, values)`` (values ``None``: skipped), set every older candidate's value on
    each of its units (a chosen candidate's reason, ``None``, lands on kept units: never read)."""
    found = [(column, values) for column, values in columns if values is not None]
    count = len(found[0][1])
    first = 0
    spans = outcome.spans
    if spans is not None:
        # The older turns' units are one run of positions: the candidate of each, read by every column.
        starts, ends = spans
        first = len(starts)
        owners = list(chain.from_iterable(map(repeat, range(first), map(sub, ends, starts))))
        for column, values in found:
            size = len(column)
            column[starts[0] : ends[-1]] = map(values.__getitem__, owners)
            assert len(column) == size  # consecutive turns: the slice is replaced by as many values
    groups = list(map(outcome.members, range(first, count)))
    positions = list(chain.from_iterable(groups))
    sizes = list(map(len, groups))
    for column, values in found:
        spread = chain.from_iterable(map(repeat, values[first:], sizes))
        deque(map(setitem, repeat(column), positions, spread), maxlen=0)


def turns_selection(
    records: TurnRecords,
    outcome: TurnOutcome,
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
) -> ChatSelection[Any]:
    """The kept messages of a ``"turns"`` outcome; the report, when read, from its unit items (or
    from the plain reference where the columns cannot tell)."""
    kept, tokens = kept_positions(records, outcome)

    def report() -> SelectionReport:
        with collector_paused():  # a few records per unit, none in a cycle (see cupel._gc_pause)
            fast = turns_report(records, outcome, pipeline)
        if fast is not None:
            return fast
        choice = select_turns(
            [unit_item(records, position) for position in range(len(records.tokens))],
            budget,
            pipeline,
            keep_first_turn=settings.keep_first_turn,
            recent_share=settings.recent_share,
            notify=False,
        )
        return choice.report(pipeline.scorer)

    originals = records.originals
    return ChatSelection(tuple(map(originals.__getitem__, kept)), report, tokens=tokens)


def kept_positions(records: TurnRecords, outcome: TurnOutcome) -> tuple[list[int], int]:
    """The kept units' message positions, system units first, and their tokens."""
    kept = outcome.kept
    system = outcome.system
    tokens = sum(compress(records.tokens, kept))
    if records.units is None:
        leading = [position for position in system if kept[position]]
        if not leading:
            return list(compress(range(len(kept)), kept)), tokens
        lifted = set(leading)
        return leading + [p for p in compress(range(len(kept)), kept) if p not in lifted], tokens
    roles = records.columns.roles
    first: list[int] = []
    rest: list[int] = []
    for position, keep in enumerate(kept):
        if keep:
            for index in records.units[position]:
                (first if roles[index] in SYSTEM_ROLES else rest).append(index)
    first.sort()
    rest.sort()
    return first + rest, tokens


CLEAR_STAGE = "ClearToolResults"
"""The ``stage`` of a report event saying one tool result was cleared (docs/chat.md)."""


def attempted(
    select: Callable[[list[Any]], ChatSelection[Any]], messages: list[Any]
) -> ChatSelection[Any] | None:
    """``select(messages)``, or ``None`` when its latest turn or pinned messages do not fit."""
    try:
        return select(messages)
    except (BudgetOverflowError, PinnedItemsExceedBudgetError):
        return None


def sends_all(selection: ChatSelection[Any], transcript: Sequence[Any]) -> bool:
    """Whether ``selection`` sends every message of ``transcript`` (a summary aside)."""
    return set(map(id, transcript)) <= set(map(id, selection.messages))


def replaced(
    originals: Sequence[Any],
    cleared: Sequence[ToolResult],
    text: Callable[[int, str], str],
    write: Callable[[Any, Mapping[str, str]], Any],
) -> list[Any]:
    """The transcript with each ``cleared`` result's content replaced by ``text(tokens, tool)``: the
    messages holding one are new, made by ``write`` (the format's), the others the same objects."""
    texts: dict[int, dict[str, str]] = {}
    for result in cleared:
        texts.setdefault(result.index, {})[result.call_id] = text(result.tokens, result.tool)
    transcript = list(originals)
    for index, named in texts.items():
        transcript[index] = write(originals[index], named)
    return transcript


def with_cleared(
    selection: ChatSelection[Any], cleared: Sequence[ToolResult], transcript: Sequence[Any], *, fitted: bool
) -> ChatSelection[Any]:
    """``selection`` whose report has an event per cleared result it sends, oldest first, saying why
    (or, cleared none, that its messages could not be rewritten: ``fitted`` false)."""
    sent = set(map(id, selection.messages))
    why = (
        "the fewest of the oldest eligible results that keep every message"
        if fitted
        else ("every eligible result, which still did not fit, so units were dropped too")
    )
    events = [
        TraceEvent(
            CLEAR_STAGE,
            0.0,
            1,
            f"messages[{result.index}]: cleared the result of {result.tool or 'a tool'} (call "
            f"{result.call_id!r}), {result.tokens:,} tokens -> {result.placeholder_tokens:,}: the "
            f"transcript did not fit, and clearing takes {why}",
        )
        for result in cleared
        if id(transcript[result.index]) in sent
    ]
    if not cleared and not fitted:
        note = "no tool result cleared: this message format cannot be rewritten, so units were dropped"
        events.append(TraceEvent(CLEAR_STAGE, 0.0, 0, note))
    if not events:
        return selection
    return ChatSelection(
        selection.messages,
        lambda: dataclasses.replace(selection.report, events=(*selection.report.events, *events)),
        tokens=selection.tokens,
    )


def tool_results(
    views: Sequence[MessageView],
    placeholder: Callable[[int, str], str],
    counter: CounterLike | None,
    options: ChatOptions,
) -> list[ToolResult]:
    """Every tool result of a transcript read into views (tool messages and ``tool_result`` blocks),
    in transcript order; ``placeholder(tokens, tool)`` is the text that would replace one."""
    names: dict[str, str] = {}
    found: list[tuple[int, str, object]] = []
    for index, view in enumerate(views):
        for call in view.tool_calls if isinstance(view.tool_calls, list | tuple) else ():
            payload = call.get(call.get("type", "function")) if isinstance(call, Mapping) else None
            if isinstance(payload, Mapping):
                names[str(call.get("id"))] = str(payload.get("name"))
        if view.role == "tool":
            found.append((index, str(view.tool_call_id), view.content))
        for block in view.content if isinstance(view.content, list | tuple) else ():
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                names[str(block.get("id"))] = str(block.get("name"))
            elif isinstance(block, Mapping) and block.get("type") == "tool_result":
                found.append((index, str(block.get("tool_use_id")), block.get("content")))
    # A result's content costs what a tool message holding only it costs beyond its overhead.
    parsed = [
        parse_message(MessageView("tool", content, tool_call_id=call_id), index, options)
        for index, call_id, content in found
    ]
    tokens = [cost - options.message_overhead for cost in parsed_costs(parsed, counter)]
    tools = [names.get(call_id, "") for _, call_id, _ in found]
    placeholders = [placeholder(size, tool) for size, tool in zip(tokens, tools, strict=True)]
    shown = count_texts_once(placeholders, counter)
    return [
        ToolResult(index, call_id, tool, size, text_tokens)
        for (index, call_id, _), tool, size, text_tokens in zip(found, tools, tokens, shown, strict=True)
    ]
