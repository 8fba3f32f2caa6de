"""How a pipeline run reports to a trace collector: stage events, item events, observer callbacks."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from itertools import compress, filterfalse, islice
from operator import attrgetter, not_, or_
from typing import TYPE_CHECKING, Any

from cupel import _numeric
from cupel._prepared import Prepared
from cupel._run_columns import Selection
from cupel.diagnostics._deferred import ExclusionBatch, InclusionBatch, included_message
from cupel.diagnostics.attribution import SliceAttribution
from cupel.diagnostics.events import item_event
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason, deduplicated_batch
from cupel.diagnostics.trace import (
    DiagnosticTraceCollector,
    PipelineStage,
    TraceCollector,
    TraceDetailLevel,
    TraceEvent,
)
from cupel.model import ContextBudget, ContextItem, ScoredItem
from cupel.slicers.greedy import GreedySlice

if TYPE_CHECKING:
    from cupel.diagnostics.report import SelectionReport
    from cupel.protocols import Scorer
    from cupel.scorers.columns import ItemColumns

__all__ = ["Tracer"]

_PINNED = InclusionReason.PINNED
_ZERO_TOKEN = InclusionReason.ZERO_TOKEN
_SCORED = InclusionReason.SCORED
_PINNED_OF = attrgetter("pinned")
_TOKENS_OF = attrgetter("tokens")
_CONTENT_OF = attrgetter("content")


class Tracer:
    """Routes the pipeline's observations to a collector; only built when the collector is enabled.

    The pipeline imports this module, and the diagnostics types, only for a traced run.
    """

    stages = PipelineStage

    __slots__ = (
        "collector",
        "item_events",
        "observer",
        "on_excluded",
        "on_included",
        "plain",
        "positive_tokens",
        "record_item",
        "relevance",
        "run_end",
        "stage_started_ns",
        "stage_wall_ns",
    )

    def __init__(self, collector: TraceCollector) -> None:
        self.collector = collector
        self.item_events = getattr(collector, "detail_level", TraceDetailLevel.ITEM) >= (
            TraceDetailLevel.ITEM
        )
        self.observer: Any = collector if hasattr(collector, "on_excluded") else None
        self.run_end: Callable[[BaseException | None], None] | None = getattr(collector, "on_run_end", None)
        self.stage_started_ns = 0
        self.stage_wall_ns = 0
        # The relevance term's score of each scored item, by identity (see ``score``).
        self.relevance: dict[int, float] = {}
        # Whether every candidate is known to have a positive token count (set by a traced slice).
        self.positive_tokens = False
        # Bound once: the per-item calls of a large run. The report-building collector without a
        # callback keeps every item event as it comes, so its event list is appended to directly.
        self.record_item: Callable[[TraceEvent], None] | None = None
        # The plain report-building collector: its event list and report entries are independent
        # buffers, so a batch of decisions can fill them one after the other (see ``batch``).
        self.plain = type(collector) is DiagnosticTraceCollector and collector.on_event is None
        if self.item_events:
            self.record_item = collector.record_item_event
            if type(collector) is DiagnosticTraceCollector and collector.on_event is None:
                self.record_item = collector.events.append  # the list itself: batches expand in place
        observer: Any = self.observer
        self.on_excluded: Callable[[PipelineStage, ContextItem, float, ExclusionReason], None] | None = (
            None if observer is None else observer.on_excluded
        )
        self.on_included: Callable[[ContextItem, float, InclusionReason], None] | None = (
            None if observer is None else observer.on_included
        )

    @classmethod
    def reporting(cls) -> Tracer:
        """A tracer with a report-building collector of its own (``dry_run``): see :meth:`report`."""
        return cls(DiagnosticTraceCollector(TraceDetailLevel.ITEM))

    def report(self) -> SelectionReport:
        """The report of a :meth:`reporting` tracer's run; it takes over the collector's buffers."""
        collector: Any = self.collector
        report: SelectionReport = collector._report(copy=False)
        return report

    def score(self, scorer: Scorer, batch: ItemColumns) -> list[float]:
        """Stage 2's scores of ``batch``, keeping the column of ``scorer``'s relevance term for the
        report (by item identity): one scoring pass, so the report says what the run combined."""
        from cupel.scorers._relevance_report import scores_and_relevance

        scores, column = scores_and_relevance(scorer, batch)
        if column is not None:
            self.relevance = dict(zip(map(id, batch.items()), column, strict=True))
        return scores

    def start(self) -> None:
        self.stage_wall_ns = time.time_ns()
        self.stage_started_ns = time.perf_counter_ns()

    def finish(self, stage: PipelineStage, items_in: int, items_out: int) -> None:
        elapsed_ns = time.perf_counter_ns() - self.stage_started_ns
        self.collector.record_stage_event(TraceEvent(stage, elapsed_ns / 1e6, items_out))
        if self.observer is not None:
            self.observer.on_stage_complete(
                stage, self.stage_wall_ns, self.stage_wall_ns + elapsed_ns, items_in, items_out
            )
        self.start()

    def excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        if self.record_item is not None:
            self.record_item(item_event(stage, reason.describe()))
        if self.on_excluded is not None:
            self.on_excluded(stage, item, score, reason)

    def included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        if self.record_item is not None:
            self.record_item(item_event(PipelineStage.PLACE, included_message(reason, score)))
        if self.on_included is not None:
            self.on_included(item, score, reason)

    def included_all(
        self, placed: list[ContextItem], items: Sequence[ContextItem], scores: list[float]
    ) -> None:
        """Report every placed item, in placed order, with its score and inclusion reason."""
        score_by_id = dict(zip(map(id, items), scores, strict=True))
        placed_scores = list(map(score_by_id.__getitem__, map(id, placed)))
        del score_by_id  # freed before the records are built: a lower peak
        kept = placed.copy()  # the caller gets ``placed``
        self._included(InclusionBatch(kept, placed_scores, None, partial(_special_positions, kept)))

    def included_at(
        self,
        placed: list[ContextItem],
        positions: list[int],
        items: Sequence[ContextItem],
        scores: list[float],
        pinned_count: int,
    ) -> None:
        """:meth:`included_all` where the placer gave the positions in ``items`` it placed (``placed``
        is ``items`` taken at ``positions``) and the first ``pinned_count`` of ``items`` are the pinned
        ones. Each placed item's score is taken by position, without a lookup by identity.
        ``items`` (a list or a :class:`Selection`), ``scores`` and ``positions`` are the run's own,
        not changed afterwards.
        """
        kept = placed.copy()  # the caller gets ``placed``
        positive = self.positive_tokens

        def special() -> list[int]:
            if all(map(_TOKENS_OF, islice(items, pinned_count) if positive else items)):
                # No zero-token item: the special positions are the pinned ones, found from the positions.
                return list(compress(range(len(positions)), map(pinned_count.__gt__, positions)))
            return _special_positions(kept)

        self._included(InclusionBatch(kept, scores, positions, special))

    def _included(self, batch: InclusionBatch) -> None:
        if not self.plain:
            for item, score, reason in zip(*batch.columns(), strict=True):
                self.included(item, score, reason)
            return
        collector: Any = self.collector
        if self.item_events:
            collector.record_item_batch(batch)
        collector.record_included_batch(batch)

    def excluded_batch(self, batch: ExclusionBatch) -> None:
        """Report a batch of exclusions, in its order (see :class:`ExclusionBatch`).

        The plain report-building collector keeps the batch and explains it when the report is read;
        any other collector hears of each exclusion now.
        """
        if not self.plain:
            for item, score, reason in zip(*batch.columns(), strict=True):
                self.excluded(batch.stage, item, score, reason)
            return
        collector: Any = self.collector
        if self.item_events:
            collector.record_item_batch(batch)
        collector.record_excluded_batch(batch)

    def deduplicated(
        self, scoreable: list[ContextItem], scores: list[float], dropped: list[int], kept_by: list[int]
    ) -> None:
        """Stage 3: report each dropped index with the index whose content won, in the given order."""

        def explain(_scores: list[float]) -> tuple[list[ExclusionReason], list[int]]:
            # One reason per winner, in order of first occurrence, found by C-level passes.
            winners = dict.fromkeys(kept_by)
            slots = list(map(dict(zip(winners, range(len(winners)), strict=True)).__getitem__, kept_by))
            distinct: list[ExclusionReason] = []
            distinct.extend(
                deduplicated_batch(len(winners), map(_CONTENT_OF, map(scoreable.__getitem__, winners)))
            )
            return distinct, slots

        self.excluded_batch(ExclusionBatch(PipelineStage.DEDUPLICATE, scoreable, scores, dropped, explain))

    def slice_by_index(
        self, slicer: Any, prepared: Prepared, effective: ContextBudget, unpinned_target: int
    ) -> tuple[Selection, list[float], int | None]:
        """Stage 5, traced, through the slicer's ``slice_indices_detailed``: the pinned and selected
        items (a :class:`Selection`, as in the untraced run), the selected scores and (when the run's
        arrays give it) the selected items' total tokens.

        The same items, scores, reasons and event order as the pipeline's identity-based tracing of
        ``slice_detailed`` (for distinct instances), without a ScoredItem per candidate. Each index the
        slicer passed over comes with the tokens remaining then (its BudgetExceeded);
        :class:`SliceAttribution` decides the reason reported, as for any slicer.
        """
        order = prepared.order
        scoreable = prepared.scoreable
        scores = prepared.scores
        tokens = prepared.tokens
        pinned = prepared.pinned
        fast = None
        if type(slicer) is GreedySlice and effective.target_tokens > 0:
            fast = _greedy_left_out(order, tokens, scores, effective.target_tokens)
        if fast is None:
            chosen, skipped = slicer.slice_indices_detailed(order, tokens, scores, effective)
        else:
            chosen, skipped = fast[0], []
            self.positive_tokens = fast[4]
        # The placers take the chosen items by index (and their timestamps from the run's column).
        selection = Selection(pinned, scoreable, chosen)
        # From numpy arrays when the run made them, as the untraced run takes them.
        sliced_scores = _numeric.take(scores, chosen) or list(map(scores.__getitem__, chosen))
        selected_tokens = _numeric.take_sum(tokens, chosen)
        if len(chosen) < len(order):
            # A list, or the array of the left-out indices (a list once read).
            left_out: Any = list(filterfalse(set(chosen).__contains__, order)) if fast is None else fast[1]
            slicer_name = type(slicer).__name__

            def explain(left_scores: list[float]) -> tuple[list[ExclusionReason], list[int]]:
                attribution = SliceAttribution.build(
                    effective.target_tokens,
                    unpinned_target,
                    pinned,
                    list(map(scoreable.__getitem__, chosen)) if selected_tokens is None else (),
                    sliced_scores,
                    slicer_name,
                    selected_tokens,
                )
                if fast is not None:
                    return attribution.shared_budget_reasons_of_arrays(fast[3], left_scores, fast[2])
                # A slicer's BudgetExceeded comes with the tokens remaining when it passed the index over.
                available: list[int | None] = list(map(dict(skipped).get, left_out))
                left_tokens = list(map(tokens.__getitem__, left_out))
                return attribution.shared_budget_reasons(left_tokens, left_scores, available)

            self.excluded_batch(ExclusionBatch(PipelineStage.SLICE, scoreable, scores, left_out, explain))
        self.finish(PipelineStage.SLICE, len(order), len(chosen))
        return selection, sliced_scores, selected_tokens

    def slice_excluded(
        self,
        sorted_scored: list[ScoredItem],
        sliced: list[ContextItem],
        slice_exclusions: dict[int, ExclusionReason],
        attribution: SliceAttribution,
    ) -> None:
        """Report every candidate the slicer left out, with the reason :class:`SliceAttribution` gives."""
        # A multiset: the same instance may appear (and be selected) more than once.
        selected_ids = Counter(id(item) for item in sliced)
        for entry in sorted_scored:
            item = entry.item
            if selected_ids[id(item)] > 0:
                selected_ids[id(item)] -= 1
                continue
            reason = attribution.reason(item, entry.score, slice_exclusions.get(id(item)))
            self.excluded(PipelineStage.SLICE, item, entry.score, reason)


def _special_positions(placed: list[ContextItem]) -> list[int]:
    """Positions of the pinned and zero-token items (few), found by C-level passes."""
    return list(
        compress(range(len(placed)), map(or_, map(_PINNED_OF, placed), map(not_, map(_TOKENS_OF, placed))))
    )


def _greedy_left_out(
    order: Sequence[int], tokens: Sequence[int], scores: Sequence[float], target: int
) -> tuple[list[int], Any, Any, Any, bool] | None:
    """GreedySlice's selection for a positive ``target`` and what it left out, from numpy arrays; None
    where numpy is not used (small or inexact inputs).

    Returns the selected indices (as ``slice_indices_detailed``); as int64 arrays, the left-out
    indices in ``order``'s order, the tokens remaining when each was passed over, and their token
    counts; and whether every candidate has a positive token count. In the greedy walk, what remains
    at a candidate is the target less the tokens of the selected candidates before it in density
    order, one cumulative sum.
    """
    filled = _numeric.greedy_fill_by_density(order, tokens, scores, target)
    if filled is None:
        return None
    np = _numeric.numpy_module()
    by_density, counts, positions = filled
    chosen_array = by_density[positions]
    chosen = _numeric.column(chosen_array)
    taken = np.zeros(len(tokens), dtype=bool)
    taken[chosen_array] = True
    taken_by_density = np.zeros(len(counts), dtype=np.int64)
    taken_by_density[positions] = counts[positions]
    # Read only at left-out candidates, where the running total does not include the candidate itself.
    available = np.zeros(len(tokens), dtype=np.int64)
    available[by_density] = target - np.cumsum(taken_by_density)
    indices = _numeric._ints(np, order)
    left = indices[~taken[indices]]
    counts_by_index = _numeric._ints(np, tokens)
    positive = bool(len(counts_by_index) == 0 or counts_by_index.min() > 0)
    return chosen, left, available[left], counts_by_index[left], positive
