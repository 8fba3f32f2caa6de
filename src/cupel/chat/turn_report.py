"""The ``"turns"`` strategy's entry point and its report, built from the columns selection used.

The report equals the one :func:`~cupel.chat.whole_turns.select_turns` gives over the transcript's
unit items (the property tests compare them): units scored by columns as the older turns are
(:mod:`cupel.chat.turn_columns`), the older turns' exclusion reasons from the slicer's detailed
index-list run, as a traced pipeline run reports them. A policy those columns cannot score, or a
slicer without ``slice_indices_detailed``, gets the reference's report.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import chain, compress, filterfalse, repeat
from operator import itemgetter, not_, sub
from typing import Any

from cupel import _numeric
from cupel._gc_pause import collector_paused
from cupel._trusted import trusted_batch
from cupel.chat._columns import TranscriptColumns
from cupel.chat.options import ChatOptions
from cupel.chat.selection import ChatSelection
from cupel.chat.turn_columns import CandidateColumns, ColumnRun, column_scores
from cupel.chat.turn_items import kind_codes, unit_items
from cupel.chat.turn_records import TurnOutcome, kept_positions, select_turn_records
from cupel.chat.turn_units import TurnRecords, turn_records, unit_item
from cupel.chat.whole_turns import select_turns
from cupel.diagnostics.attribution import SliceAttribution
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport
from cupel.model import ContextBudget
from cupel.pipeline import Pipeline
from cupel.policy.chat_settings import ChatSettings

__all__ = ["select_turns_fast", "turns_report"]

_included = trusted_batch(IncludedItem)
_excluded = trusted_batch(ExcludedItem)


def turns_report(records: TurnRecords, outcome: TurnOutcome, pipeline: Pipeline) -> SelectionReport | None:
    """The reference's report from the columns, or ``None`` where only the reference can tell."""
    if outcome.by_pipeline:
        return None
    count = len(records.tokens)
    reasons: list[ExclusionReason | None] = [None] * count  # by unit position
    for position, reason in outcome.reasons.items():
        reasons[position] = reason
    run = outcome.run
    if run is not None and not _older_reasons(run, outcome, pipeline, reasons):
        return None
    pinned = records.pinned_units()
    loose = list(compress(range(count), map(not_, pinned)))
    scored = column_scores(pipeline.scorer, _unit_columns(records, loose)) if loose else []
    if scored is None:
        return None
    scores = [1.0] * count
    deque(map(scores.__setitem__, loose, scored), maxlen=0)
    items = unit_items(records, pinned)
    kept = outcome.kept
    tokens = records.tokens
    included = list(compress(range(count), kept))
    left_out = list(compress(range(count), map(not_, kept)))
    # By score descending, then position: a stable sort keeps ascending positions among equal scores
    # (the column-scored policies give no NaN); numpy's for a large list, else Python's.
    excluded = _numeric.order_by_score(scores, left_out)
    if excluded is None:
        excluded = sorted(left_out, key=scores.__getitem__, reverse=True)
    return SelectionReport(
        events=(),
        included=tuple(
            _included(
                len(included),
                map(items.__getitem__, included),
                map(scores.__getitem__, included),
                [
                    InclusionReason.PINNED
                    if pinned[position]
                    else InclusionReason.ZERO_TOKEN
                    if tokens[position] == 0
                    else InclusionReason.SCORED
                    for position in included
                ],
            )
        ),
        excluded=tuple(
            _excluded(
                len(excluded),
                map(items.__getitem__, excluded),
                map(scores.__getitem__, excluded),
                map(reasons.__getitem__, excluded),
            )
        ),
        total_candidates=count,
        total_tokens_considered=sum(tokens),
    )


def _older_reasons(
    run: ColumnRun,
    outcome: TurnOutcome,
    pipeline: Pipeline,
    reasons: list[ExclusionReason | None],
) -> bool:
    """Add the reasons a traced run of the older turns' pipeline gives; ``False`` if it cannot tell."""
    if len(run.chosen) == len(run.order):
        return True
    detailed = getattr(pipeline.slicer, "slice_indices_detailed", None)
    if detailed is None:
        return False
    tokens = run.columns.tokens
    scores = run.scores
    chosen, skipped = detailed(run.order, tokens, scores, run.budget)
    target = run.budget.target_tokens
    attribution = SliceAttribution.of_selection(
        target,
        target,
        None,
        sum(map(tokens.__getitem__, chosen)),
        list(map(scores.__getitem__, chosen)),
        type(pipeline.slicer).__name__,
    )
    selected = set(chosen)
    left_out = list(filterfalse(selected.__contains__, run.order))
    left_tokens = list(map(tokens.__getitem__, left_out))
    if list(map(itemgetter(0), skipped)) == left_out:  # each left out explained, in order (greedy)
        explained: list[int | None] = list(map(itemgetter(1), skipped))
    else:
        explained = list(map(dict(skipped).get, left_out))
    # Equal reasons come back as one shared object (they are immutable values).
    found = attribution.budget_reasons(left_tokens, list(map(scores.__getitem__, left_out)), explained)
    spans = outcome.spans
    if spans is not None:
        # The older turns' units are one run of positions: each takes its turn's reason (None for a
        # chosen turn's units, which are kept, so never read) in one slice assignment.
        starts, ends = spans
        turns = len(starts)
        by_candidate: list[ExclusionReason | None] = [None] * len(tokens)
        deque(map(by_candidate.__setitem__, left_out, found), maxlen=0)
        size = len(reasons)
        reasons[starts[0] : ends[-1]] = chain.from_iterable(
            map(repeat, by_candidate[:turns], map(sub, ends, starts))
        )
        assert len(reasons) == size  # consecutive turns: the slice is replaced by as many reasons
        left_out = [c for c in range(turns, len(tokens)) if by_candidate[c] is not None]
        found = list(map(by_candidate.__getitem__, left_out))  # type: ignore[arg-type]
    groups = list(map(outcome.members, left_out))
    positions = chain.from_iterable(groups)
    shared = chain.from_iterable(map(repeat, found, map(len, groups)))
    deque(map(reasons.__setitem__, positions, shared), maxlen=0)
    return True


def _unit_columns(records: TurnRecords, loose: list[int]) -> CandidateColumns:
    """The unpinned units as scoring columns (the report scores every unit as the reference does)."""
    tokens = records.tokens
    roles = records.columns.roles
    single = records.units is None

    def kinds() -> list[int]:  # built only for a scorer that reads kinds
        return list(map(kind_codes(records).__getitem__, loose))

    def tags() -> list[tuple[str, ...]]:
        if single:
            return [(roles[position],) for position in loose]
        return [tuple(dict.fromkeys(records.roles(position))) for position in loose]

    def presence(tag: str) -> list[bool] | None:
        if single:
            return list(map(tag.__eq__, map(roles.__getitem__, loose)))
        return [tag in records.roles(position) for position in loose]

    keys = loose if single else [records.indices(position)[0] for position in loose]
    return CandidateColumns(keys, list(map(tokens.__getitem__, loose)), kinds, tags, presence)


def select_turns_fast(
    columns: TranscriptColumns,
    originals: Sequence[Any],
    budget: ContextBudget,
    pipeline: Pipeline,
    settings: ChatSettings,
    *,
    options: ChatOptions,
) -> ChatSelection[Any]:
    """The ``"turns"`` strategy on a transcript's columns; the report, when read, from its unit items."""
    records = turn_records(columns, originals, options)
    outcome = select_turn_records(
        records,
        budget,
        pipeline,
        keep_first_turn=settings.keep_first_turn,
        recent_share=settings.recent_share,
    )

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

    return ChatSelection(tuple(originals[index] for index in kept), report, tokens=tokens)
