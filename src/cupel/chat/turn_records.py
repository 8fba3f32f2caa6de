"""The ``"turns"`` strategy over columns: the fast path beside :mod:`cupel.chat.whole_turns`.

:func:`~cupel.chat.whole_turns.select_turns` is the plain reference: it works on one ContextItem per
unit. :func:`select_turn_records` chooses exactly the same messages from the transcript's columns
(:mod:`cupel.chat._columns`: per message a role and a cost, per unit its messages): turns are runs of
unit positions, their tokens differences of one running sum, and the older turns are scored column by
column (:mod:`cupel.chat.turn_columns`). Items are built only for a policy those columns cannot
score (:mod:`cupel.chat.turn_units`). The property tests run both on random transcripts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from itertools import count as naturals
from operator import gt, not_, sub

from cupel.chat._choice import available_tokens
from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.turn_columns import KINDS, CandidateColumns, ColumnRun, choose_older
from cupel.chat.turn_units import TurnRecords, turn_item_of, turn_kind, turn_roles, turn_units, unit_item
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.diagnostics.trace import OverflowEvent
from cupel.errors import BudgetOverflowError
from cupel.model import (
    ContextBudget,
    OverflowStrategy,
)
from cupel.pipeline import Pipeline
from cupel.placers import ChronologicalPlacer

__all__ = ["TurnOutcome", "kept_positions", "select_turn_records"]


@dataclass(slots=True)
class _Turns:
    """Turn ``t`` spans unit positions ``starts[t]`` to ``ends[t] - 1`` (system units skipped)."""

    starts: list[int]
    ends: list[int]
    tokens: list[int]
    first_number: int


def _split(records: TurnRecords) -> tuple[_Turns, list[int]]:
    """The turns and the system unit positions, as :func:`~cupel.chat.turns.split_turns` groups units."""
    first_roles = records.first_roles
    is_system = list(map(SYSTEM_ROLES.__contains__, first_roles))
    system = list(compress(naturals(), is_system))
    opening = list(compress(naturals(), map("user".__eq__, first_roles)))
    first = next(compress(naturals(), map(not_, is_system)), None)
    number = 1
    if first is not None and (not opening or opening[0] != first):
        opening.insert(0, first)  # a preamble before the first user message: turn 0
        number = 0
    tokens = records.tokens
    if system:
        tokens = list(tokens)
        for position in system:
            tokens[position] = 0  # a system unit belongs to no turn
    running = list(accumulate(tokens, initial=0))
    ends = [*opening[1:], len(tokens)] if opening else []
    turn_tokens = list(map(sub, map(running.__getitem__, ends), map(running.__getitem__, opening)))
    return _Turns(opening, ends, turn_tokens, number), system


def _no_members(candidate: int) -> Sequence[int]:
    raise IndexError(candidate)


@dataclass(slots=True)
class TurnOutcome:
    """What ``"turns"`` decided per unit, and what explaining it needs.

    ``reasons`` explains the units of a truncated latest turn; ``members(c)`` gives the units of older
    candidate ``c`` (older turns, then unpinned system units); ``run`` is the column run that chose
    among them (``None`` when there were none or the pipeline ran over items instead). ``spans``, when
    set, gives the same for the older turns as columns: candidate ``c`` is units ``starts[c]`` to
    ``ends[c] - 1``, consecutive turns with no other unit between them.
    """

    kept: list[bool]
    reasons: dict[int, ExclusionReason]
    members: Callable[[int], Sequence[int]]
    run: ColumnRun | None
    by_pipeline: bool
    spans: tuple[list[int], list[int]] | None = None


def select_turn_records(
    records: TurnRecords,
    budget: ContextBudget,
    pipeline: Pipeline,
    *,
    keep_first_turn: bool = False,
    recent_share: float = 0.75,
) -> TurnOutcome:
    """What :func:`~cupel.chat.whole_turns.select_turns` decides for each unit (see :func:`kept_positions`).

    Raises as the reference does when the latest turn alone overflows under ``THROW``.
    """
    turns, system = _split(records)
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
            remaining = _overflow(records, latest, remaining, pinned_tokens, budget, pipeline, kept, reasons)
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
    outcome = TurnOutcome(kept, reasons, _no_members, None, False)
    chosen_system = _choose_older(
        records, turns, (oldest, open_end), (system, loose_system), remaining, pipeline, keep, outcome
    )
    for position in system:
        kept[position] = position in chosen_system or records.pinned(position)
    return outcome


def _choose_older(
    records: TurnRecords,
    turns: _Turns,
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

    def kinds() -> list[int]:
        if records.units is None:
            turn_kinds = [0] * count
        else:
            turn_kinds = [KINDS.index(turn_kind(records, units_of(turn))) for turn in older]
        return turn_kinds + [2] * len(loose_system)

    def tags() -> list[tuple[str, ...]]:
        if sliced:
            roles = records.columns.roles
            turn_tags = [tuple(dict.fromkeys(roles[starts[turn] : ends[turn]])) for turn in older]
        else:
            turn_tags = [turn_roles(records, units_of(turn)) for turn in older]
        return turn_tags + [tuple(dict.fromkeys(records.roles(position))) for position in loose_system]

    def presence(tag: str) -> list[bool] | None:
        if not sliced:
            return None
        seen = list(accumulate(map(tag.__eq__, records.columns.roles), initial=0))
        after = map(seen.__getitem__, ends[oldest:end])
        found = list(map(gt, after, map(seen.__getitem__, starts[oldest:end])))
        return found + [tag in records.roles(position) for position in loose_system]

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

    outcome.members = members
    if sliced and count:
        outcome.spans = (starts[oldest:end], ends[oldest:end])
    run = choose_older(pipeline, CandidateColumns(keys, tokens, kinds, tags, presence), remaining)
    outcome.run = run
    if run is not None:
        chosen = run.chosen
    else:
        outcome.by_pipeline = True
        candidates = [turn_item_of(records, turns.first_number + turn, units_of(turn)) for turn in older] + [
            unit_item(records, position) for position in loose_system
        ]
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


def kept_positions(records: TurnRecords, outcome: TurnOutcome) -> tuple[list[int], int]:
    """The kept units' message positions, system units first, and their tokens."""
    kept = outcome.kept
    first_roles = records.first_roles
    system = list(compress(naturals(), map(SYSTEM_ROLES.__contains__, first_roles)))
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


def _overflow(
    records: TurnRecords,
    latest: list[int],
    remaining: int,
    pinned_tokens: int,
    budget: ContextBudget,
    pipeline: Pipeline,
    kept: list[bool],
    reasons: dict[int, ExclusionReason],
) -> int:
    """As the reference's overflow: raise, keep the whole latest turn, or keep its prefix that fits."""
    latest_tokens = sum(records.tokens[position] for position in latest)
    strategy = pipeline.overflow_strategy
    if strategy is OverflowStrategy.THROW:
        raise BudgetOverflowError(pinned_tokens + latest_tokens, budget.target_tokens)
    if strategy is OverflowStrategy.PROCEED:
        for position in latest:
            kept[position] = True
        if pipeline.on_overflow is not None:
            over = pinned_tokens + latest_tokens - budget.target_tokens
            items = tuple(unit_item(records, position) for position in latest)
            pipeline.on_overflow(OverflowEvent(over, items, budget))
        return 0
    used = 0
    cut = len(latest)
    for offset, position in enumerate(latest):
        tokens = records.tokens[position]
        if used + tokens > remaining:
            cut = offset
            break
        used += tokens
        kept[position] = True
    # A unit after the cut could only come with every unit between the cut and it.
    needed = 0
    for position in latest[cut:]:
        needed += records.tokens[position]
        reasons[position] = BudgetExceeded(needed, remaining - used)
    return remaining - used
