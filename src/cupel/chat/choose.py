"""Stage 3 of a chat selection: what ``"turns"`` keeps, chosen from the transcript's columns.

Pinned system units first; then the latest turn (the one the model must answer); with
``keep_first_turn`` the first turn; a contiguous run of the most recent whole turns taking at most
``recent_share`` of what is left; then older whole turns (and unpinned system units) ranked by the
policy's scorer and slicer in what remains, scored through :func:`score_candidates` (the one place chat
scores), sorted and sliced as the pipeline does. :class:`Choice` is a decision and its report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from operator import not_

from cupel._prepared import score_order
from cupel.chat.options import available_tokens
from cupel.chat.units import (
    TurnRecords,
    Turns,
    turn_contents,
    turn_item_of,
    turn_kind,
    turn_presence,
    turn_roles,
    turn_split,
    turn_units,
    unit_item,
)
from cupel.diagnostics.hooks import active_sink
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport, report_of_columns
from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import BudgetOverflowError
from cupel.model import ContextBudget, ContextItem, ContextKind, OverflowStrategy
from cupel.pipeline import Pipeline, compute_effective_budget
from cupel.placers import ChronologicalPlacer
from cupel.protocols import Scorer
from cupel.scorers._relevance_report import scores_and_relevance
from cupel.scorers.columns import ItemColumns

__all__ = [
    "Choice",
    "ColumnRun",
    "TurnOutcome",
    "choose_older",
    "latest_overflow",
    "score_candidates",
    "select_turn_records",
]


@dataclass(slots=True)
class Choice:
    """Units (chat items in transcript order), which are kept, and why each other one is not.

    ``numbers`` (by position) are the score and relevance a strategy that ranked candidates made its
    choice with (a turn's on each of its units). With ``by_rule`` every other unpinned unit was kept
    or dropped by a rule, before any scoring; otherwise the report scores the units.
    """

    items: Sequence[ContextItem]
    kept: list[bool]
    reasons: dict[int, ExclusionReason] = field(default_factory=dict)
    numbers: dict[int, tuple[float, float | None]] = field(default_factory=dict)
    extra: Callable[[], Mapping[int, ExclusionReason]] | None = None
    by_rule: bool = False

    def kept_items(self) -> list[ContextItem]:
        return [item for item, keep in zip(self.items, self.kept, strict=True) if keep]

    def ranked(
        self, report: SelectionReport, units: Mapping[int, Sequence[int]]
    ) -> dict[int, ExclusionReason]:
        """Take the numbers of a run that ranked candidates (``report``; ``units`` maps a candidate
        item's id to its unit positions): each candidate's score and relevance go to its units; the
        reasons of the excluded, by unit position, are returned."""
        found: dict[int, ExclusionReason] = {}
        entries: list[IncludedItem | ExcludedItem] = [*report.included, *report.excluded]
        for entry in entries:
            for position in units[id(entry.item)]:
                self.numbers[position] = (entry.score, entry.relevance)
                if isinstance(entry, ExcludedItem):
                    found[position] = entry.reason
        return found

    def report(self, scorer: Scorer) -> SelectionReport:
        """Units kept in transcript order, the others by score descending; each with the numbers the
        choice ranked it by, else 1.0 (decided by a rule, ``by_rule``) or, where nothing was ranked,
        its score as a unit (scores and relevance in one pass)."""
        if self.extra is not None:
            self.reasons.update(self.extra())
            self.extra = None
        items = self.items
        pinned = [item.pinned for item in items]
        scores = [1.0] * len(items)
        relevance: list[float | None] = [None] * len(items)
        loose = [] if self.by_rule else list(compress(range(len(items)), map(not_, pinned)))
        if loose:
            scored, column = score_candidates(scorer, ItemColumns.of_items([items[p] for p in loose]))
            for offset, position in enumerate(loose):
                scores[position] = scored[offset]
                relevance[position] = None if column is None else column[offset]
        for position, (score, value) in self.numbers.items():
            scores[position] = score
            relevance[position] = value
        reasons = list(map(self.reasons.get, range(len(items))))
        sizes = (pinned, [item.tokens for item in items])
        return report_of_columns(items, self.kept, sizes, (scores, relevance), reasons)


def score_candidates(scorer: Scorer, batch: ItemColumns) -> tuple[list[float], list[float] | None]:
    """The one place chat selection scores: a batch of candidates (units or turns) through the
    scorers layer's column entry point, as the pipeline scores its items; with the column of the
    scorer's relevance term the scores were combined from (``None`` without one), for the report."""
    return scores_and_relevance(scorer, batch)


@dataclass(frozen=True, slots=True)
class ColumnRun:
    """What the pipeline decided over the candidate columns: scores (and the relevance term's
    column they were combined from, or ``None``), score order and the chosen."""

    tokens: list[int]
    scores: list[float]
    order: list[int]
    chosen: list[int]
    budget: ContextBudget
    relevance: list[float] | None = None


def choose_older(
    pipeline: Pipeline, batch: ItemColumns, tokens: list[int], remaining: int
) -> ColumnRun | None:
    """The candidates the pipeline keeps in ``remaining`` tokens (positions, any order), or ``None``
    where the pipeline must run over items (a slicer without ``slice_indices``, a tracing hook)."""
    slice_indices = getattr(pipeline.slicer, "slice_indices", None)
    if slice_indices is None or active_sink() is not None:
        return None
    scores, relevance = score_candidates(pipeline.scorer, batch)
    # Stage 4 as the pipeline sorts, then its index-list slice (Pipeline._prepare and _select).
    order = score_order(scores, list(range(len(scores))))
    budget = compute_effective_budget(ContextBudget(remaining, remaining), 0)
    chosen: list[int] = slice_indices(order, tokens, scores, budget)
    if sum(map(tokens.__getitem__, chosen)) > remaining:
        return None  # the pipeline's overflow stage would act on this: leave it to the pipeline
    return ColumnRun(tokens, scores, order, chosen, budget, relevance)


def _no_members(candidate: int) -> Sequence[int]:
    raise IndexError(candidate)


def _unknown(tag: str) -> None:
    """No presence column: the batch's tags tell."""


@dataclass(slots=True)
class TurnOutcome:
    """What ``"turns"`` decided per unit, and what explaining it needs.

    ``reasons`` explains the units of a truncated latest turn; ``members(c)`` gives the units of older
    candidate ``c`` (older turns, then unpinned system units); ``run`` is the column run that chose
    among them (``None`` when there were none or the pipeline ran over items instead). ``spans``, when
    set, gives the same for the older turns as columns: candidate ``c`` is units ``starts[c]`` to
    ``ends[c] - 1``, consecutive turns with no other unit between them. ``system``: the system units'
    positions, ascending (the turn split's).
    """

    kept: list[bool]
    reasons: dict[int, ExclusionReason]
    members: Callable[[int], Sequence[int]]
    run: ColumnRun | None
    by_pipeline: bool
    system: Sequence[int]
    spans: tuple[list[int], list[int]] | None = None


def select_turn_records(
    records: TurnRecords,
    budget: ContextBudget,
    pipeline: Pipeline,
    *,
    keep_first_turn: bool = False,
    recent_share: float = 0.75,
    strict: bool = False,
) -> TurnOutcome:
    """What :func:`~cupel.chat.choose_units.select_turns` decides for each unit (see :func:`kept_positions`).

    Raises as the reference does when the latest turn alone overflows under ``THROW``.
    """
    turns = turn_split(records)
    system = turns.system
    unit_tokens = records.tokens
    kept = [False] * len(unit_tokens)
    reasons: dict[int, ExclusionReason] = {}
    pinned_tokens = 0
    loose_system: list[int] = []
    for position in system:
        if records.pinned(position):
            pinned_tokens += unit_tokens[position]
        else:
            loose_system.append(position)
    available = available_tokens(budget, pinned_tokens)
    turn_tokens = turns.tokens

    def keep(turn: int) -> None:
        start, end = turns.starts[turn], turns.ends[turn]
        kept[start:end] = [True] * (end - start)  # system units among them are decided at the end

    remaining = available
    open_end = len(turn_tokens)  # turns[oldest:open_end] are still open
    if open_end:
        open_end -= 1
        if turn_tokens[open_end] <= remaining:
            keep(open_end)
            remaining -= turn_tokens[open_end]
        else:
            latest = turn_units(records, turns.starts[open_end], turns.ends[open_end])
            remaining = _overflow_records(
                records, latest, remaining, pinned_tokens, budget, pipeline, kept, reasons, strict
            )
    oldest = 0
    if keep_first_turn and open_end and turn_tokens[0] <= remaining:
        keep(0)
        remaining -= turn_tokens[0]
        oldest = 1
    run_budget = math.floor(remaining * recent_share)
    while open_end > oldest and turn_tokens[open_end - 1] <= run_budget:
        open_end -= 1
        keep(open_end)
        run_budget -= turn_tokens[open_end]
        remaining -= turn_tokens[open_end]
    outcome = TurnOutcome(kept, reasons, _no_members, None, False, system)
    chosen_system = _choose_older(
        records, turns, (oldest, open_end), (system, loose_system), remaining, pipeline, keep, outcome
    )
    for position in system:
        kept[position] = position in chosen_system or records.pinned(position)
    return outcome


def _choose_older(
    records: TurnRecords,
    turns: Turns,
    span: tuple[int, int],
    systems: tuple[list[int], list[int]],
    remaining: int,
    pipeline: Pipeline,
    keep: Callable[[int], None],
    outcome: TurnOutcome,
) -> set[int]:
    """Keep the older turns the policy chooses in ``remaining`` tokens; the loose system units chosen."""
    oldest, end = span
    system, loose_system = systems
    older = range(oldest, end)
    if not older and not loose_system:
        return set()
    count = len(older)
    starts = turns.starts
    ends = turns.ends
    indices = records.indices
    # One message per unit and no system message inside a turn: a turn's roles are a slice of them.
    sliced = records.units is None and (not older or not system or system[-1] < starts[0])

    def units_of(turn: int) -> list[int]:
        return turn_units(records, starts[turn], ends[turn])

    def kinds() -> list[ContextKind]:
        if records.units is None:
            turn_kinds = [ContextKind.MESSAGE] * count
        else:
            turn_kinds = [turn_kind(records, units_of(turn)) for turn in older]
        return turn_kinds + [ContextKind.SYSTEM_PROMPT] * len(loose_system)

    def tags() -> list[tuple[str, ...]]:
        if sliced:
            roles = records.columns.roles
            turn_tags = [tuple(dict.fromkeys(roles[starts[turn] : ends[turn]])) for turn in older]
        else:
            turn_tags = [turn_roles(records, units_of(turn)) for turn in older]
        return turn_tags + [tuple(dict.fromkeys(records.roles(position))) for position in loose_system]

    if records.units is None:  # unit p is message p alone
        keys = [*starts[oldest:end], *loose_system]
    else:
        keys = [indices(starts[turn])[0] for turn in older] + [indices(p)[0] for p in loose_system]
    tokens = turns.tokens[oldest:end] + [records.tokens[position] for position in loose_system]

    def members(candidate: int) -> Sequence[int]:
        if candidate >= count:
            return (loose_system[candidate - count],)
        turn = oldest + candidate
        return range(starts[turn], ends[turn]) if sliced else units_of(turn)

    def items() -> list[ContextItem]:
        first_number = int(bool(older) and records.first_roles[starts[0]] == "user")  # 0: a preamble
        return [turn_item_of(records, first_number + turn, units_of(turn)) for turn in older] + [
            unit_item(records, position) for position in loose_system
        ]

    spans = (starts[oldest:end], ends[oldest:end])
    contents = partial(turn_contents, records, spans, loose_system) if sliced else None
    presence = partial(turn_presence, records, spans, loose_system) if sliced else _unknown
    outcome.members = members
    if sliced and count:
        outcome.spans = spans
    session = records.columns.session
    # First message positions order the candidates as their synthetic timestamps do; chat items have
    # no priority; ``contents`` serves a text scorer, ``items`` any other.
    batch = ItemColumns(
        len(tokens),
        order_keys=lambda: keys,
        kinds=kinds,
        tags=tags,
        priorities=lambda: [None] * len(tokens),
        make_items=items,
        presence=presence,
        contents=contents,
        term_counts=None if session is None else session.term_counts,
    )
    run = choose_older(pipeline, batch, tokens, remaining)
    outcome.run = run
    if run is not None:
        chosen = run.chosen
    else:
        outcome.by_pipeline = True
        candidates = list(batch.items())
        scored = Pipeline(
            pipeline.scorer, pipeline.slicer, ChronologicalPlacer(), deduplication=pipeline.deduplication
        )
        ids = {id(item) for item in scored.run(candidates, ContextBudget(remaining, remaining))}
        chosen = [position for position, item in enumerate(candidates) if id(item) in ids]
    chosen_system: set[int] = set()
    for candidate in chosen:
        if candidate < count:
            keep(oldest + candidate)
        else:
            chosen_system.add(loose_system[candidate - count])
    return chosen_system


def latest_overflow(
    tokens: Sequence[int],
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    strategy: OverflowStrategy,
    *,
    strict: bool = False,
) -> tuple[list[bool], dict[int, ExclusionReason], int]:
    """Which units (by offset) of a latest turn over ``remaining`` tokens stay, why each other one
    does not, and the tokens kept. ``PROCEED`` (keep it all) is the caller's.

    The agent rule: the turn's first unit (the task) and its newest units, contiguous to the end, as
    many as fit; the units between go, oldest first, each with the tokens it would need together with
    every unit between it and the kept ones. When the task and the newest unit do not fit together,
    ``THROW`` raises :class:`~cupel.errors.BudgetOverflowError` with both sizes and ``TRUNCATE`` keeps
    the task alone (a window that still ends on something the model can answer); a task that does not
    fit alone raises under both. ``strict`` raises whenever the turn does not fit (StableWindow's
    compaction at its low-water mark, which then selects at the full budget).
    """
    count = len(tokens)
    last = count - 1
    if strict:
        raise BudgetOverflowError(pinned_tokens + sum(tokens), budget.target_tokens)
    if last >= 1 and tokens[0] + tokens[last] <= remaining:
        used = tokens[0] + tokens[last]
        start = last
        while start > 1 and used + tokens[start - 1] <= remaining:
            start -= 1
            used += tokens[start]
    elif strategy is OverflowStrategy.TRUNCATE and tokens[0] <= remaining:
        start, used = count, tokens[0]
    else:
        core = tokens[0] + (tokens[last] if last >= 1 else 0)
        raise BudgetOverflowError(pinned_tokens + core, budget.target_tokens)
    kept = [True] + [False] * (start - 1) + [True] * (count - start)
    reasons: dict[int, ExclusionReason] = {}
    needed = 0
    for offset in range(start - 1, 0, -1):
        needed += tokens[offset]
        reasons[offset] = BudgetExceeded(needed, remaining - used)
    return kept, reasons, used


def _overflow_records(
    records: TurnRecords,
    latest: list[int],
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    pipeline: Pipeline,
    kept: list[bool],
    reasons: dict[int, ExclusionReason],
    strict: bool,
) -> int:
    """As the reference's overflow: keep the whole latest turn (PROCEED), or by the agent rule."""
    latest_tokens = [records.tokens[position] for position in latest]
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.PROCEED:
        for position in latest:
            kept[position] = True
        if pipeline.on_overflow is not None:
            over = pinned_tokens + sum(latest_tokens) - budget.target_tokens
            items = tuple(unit_item(records, position) for position in latest)
            pipeline.on_overflow(OverflowEvent(over, items, budget))
        return 0
    keep, why, used = latest_overflow(
        latest_tokens, remaining, pinned_tokens, budget, strategy, strict=strict
    )
    for offset, position in enumerate(latest):
        kept[position] = keep[offset]
    for offset, reason in why.items():
        reasons[latest[offset]] = reason
    return remaining - used
