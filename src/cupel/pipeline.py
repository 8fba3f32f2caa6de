"""The six-stage pipeline: Classify, Score, Deduplicate, Sort, Slice, Place (spec: Pipeline).

``Pipeline.run`` is the fast path. ``run_traced`` feeds a trace collector; ``dry_run`` returns a
:class:`~cupel.diagnostics.report.SelectionReport` explaining every inclusion and exclusion.
"""

from __future__ import annotations

import importlib
import math
import warnings
from collections.abc import AsyncIterable, Callable, Iterable, Sequence
from operator import attrgetter

from cupel import _numeric
from cupel._checks import check_bool, check_component, checked_slice, coerce_overflow_strategy
from cupel._gc_pause import collector_paused
from cupel._prepared import (
    Prepared,
    check_pinned_budget,
    checked_items,
    deduplicate,
    score_order,
    split_pinned,
)
from cupel.diagnostics.hooks import TeeCollector, active_sink, current_attributes
from cupel.errors import CupelError, CupelTypeError
from cupel.model import ContextBudget, ContextItem, OverflowStrategy, ScoredItem
from cupel.scorers._base import _is_builtin, bind_query, score_columns
from cupel.scorers.columns import ItemColumns

TYPE_CHECKING = False  # typing itself is not imported: see cupel/__init__.py
if TYPE_CHECKING:
    from typing import Any, Protocol

    # Diagnostics, tracing, simulation and the async helpers are imported where a run needs them:
    # ``Pipeline.run`` without a collector never does, so ``import cupel`` stays small
    # (docs/spec-notes.md, "Token counting and start-up"; tests/test_cold_start.py).
    from cupel._tracer import Tracer
    from cupel.diagnostics.reasons import ExclusionReason
    from cupel.diagnostics.report import SelectionReport
    from cupel.diagnostics.trace import OverflowEvent, TraceCollector
    from cupel.protocols import Placer, Scorer, Slicer

    class PipelineSource(Protocol):
        """What builds a configured pipeline: a :class:`~cupel.policy.Policy`, for one."""

        def build_pipeline(self, *, on_overflow: Callable[[OverflowEvent], None] | None = None) -> Pipeline:
            """A pipeline configured as this object says."""


__all__ = ["Pipeline", "compute_effective_budget"]

PINNED_SCORE = 1.0
_TOKENS = attrgetter("tokens")


def compute_effective_budget(budget: ContextBudget, pinned_tokens: int) -> ContextBudget:
    """The budget the slicer sees (spec: Stage 5, COMPUTE-EFFECTIVE-BUDGET), exactly as written."""
    reserved = sum(budget.reserved_slots.values())
    effective_max = max(0, budget.max_tokens - budget.output_reserve - pinned_tokens - reserved)
    effective_target = max(0, budget.target_tokens - pinned_tokens - reserved)
    effective_target = min(effective_target, effective_max)
    margin = budget.estimation_safety_margin_percent
    if margin > 0:
        multiplier = 1.0 - margin / 100.0
        effective_max = math.floor(effective_max * multiplier)
        effective_target = math.floor(effective_target * multiplier)
        effective_target = min(effective_target, effective_max)
    return ContextBudget(effective_max, effective_target)


class Pipeline:
    """A configured context-selection pipeline (spec: Pipeline).

    ``Pipeline(scorer=RecencyScorer(), slicer=GreedySlice(), placer=ChronologicalPlacer())``.
    Pipelines hold no per-run state: one instance can serve many runs, concurrently too.
    ``on_overflow`` receives the :class:`~cupel.diagnostics.trace.OverflowEvent` under
    ``OverflowStrategy.PROCEED``.
    """

    __slots__ = ("deduplication", "on_overflow", "overflow_strategy", "placer", "scorer", "slicer")

    def __init__(
        self,
        scorer: Scorer,
        slicer: Slicer,
        placer: Placer,
        *,
        deduplication: bool = True,
        overflow_strategy: OverflowStrategy = OverflowStrategy.THROW,
        on_overflow: Callable[[OverflowEvent], None] | None = None,
    ) -> None:
        check_component("Pipeline", "scorer", scorer, "score")
        check_component("Pipeline", "slicer", slicer, "slice")
        check_component("Pipeline", "placer", placer, "place")
        check_bool("Pipeline", "deduplication", deduplication)
        strategy = coerce_overflow_strategy(overflow_strategy, "Pipeline.overflow_strategy")
        if on_overflow is not None and not callable(on_overflow):
            raise CupelTypeError(f"Pipeline.on_overflow must be callable, got {on_overflow!r}")
        self.scorer = scorer
        self.slicer = slicer
        self.placer = placer
        self.deduplication = deduplication
        self.overflow_strategy = strategy
        self.on_overflow = on_overflow

    def __repr__(self) -> str:
        return (
            f"Pipeline(scorer={self.scorer!r}, slicer={self.slicer!r}, placer={self.placer!r}, "
            f"deduplication={self.deduplication!r}, overflow_strategy={self.overflow_strategy!r})"
        )

    def run(
        self, items: Sequence[ContextItem], budget: ContextBudget, *, query: str | None = None
    ) -> list[ContextItem]:
        """Select and order items for the window, for ``query`` if given. Inputs are never mutated."""
        return self._execute(items, budget, None, query)

    def run_traced(
        self,
        items: Sequence[ContextItem],
        budget: ContextBudget,
        collector: TraceCollector,
        *,
        query: str | None = None,
    ) -> list[ContextItem]:
        """Like :meth:`run`, reporting stage and item events to ``collector``."""
        from cupel._tracer import Tracer
        from cupel.diagnostics.trace import DiagnosticTraceCollector

        tracer = Tracer(collector) if collector.is_enabled else None
        if type(collector) is DiagnosticTraceCollector and collector.on_event is None:
            with collector_paused():  # only this pipeline's and the collector's code build records
                return self._execute(items, budget, tracer, query)
        return self._execute(items, budget, tracer, query)

    def dry_run(
        self, items: Sequence[ContextItem], budget: ContextBudget, *, query: str | None = None
    ) -> SelectionReport:
        """Run with full diagnostics and return the report; ``report.items`` is what ``run`` returns."""
        from cupel._tracer import Tracer
        from cupel.scorers._relevance_report import explain_relevance

        items = checked_items(items)
        tracer = Tracer.reporting()  # with a report-building collector of its own
        with collector_paused():
            self._execute(items, budget, tracer, query)
            return explain_relevance(tracer.report(), bind_query(self.scorer, query), tracer.relevance)

    async def arun(
        self,
        items: Sequence[ContextItem] | Iterable[ContextItem] | AsyncIterable[ContextItem],
        budget: ContextBudget,
        collector: TraceCollector | None = None,
        *,
        query: str | None = None,
    ) -> list[ContextItem]:
        """Async :meth:`run` (or :meth:`run_traced` with ``collector``); ``items`` may be an async source,
        drained before selection starts, which runs inline or in a worker thread for large inputs
        (see ``docs/python-api.md``, *Async*)."""
        from cupel import _async

        if collector is None:
            return await _async.select(items, lambda got: self.run(got, budget, query=query))
        return await _async.select(items, lambda got: self.run_traced(got, budget, collector, query=query))

    async def adry_run(
        self,
        items: Sequence[ContextItem] | Iterable[ContextItem] | AsyncIterable[ContextItem],
        budget: ContextBudget,
        *,
        query: str | None = None,
    ) -> SelectionReport:
        """Async :meth:`dry_run`; ``items`` may be an async source, drained before selection starts."""
        from cupel import _async

        return await _async.select(items, lambda collected: self.dry_run(collected, budget, query=query))

    def _execute(
        self, items: Sequence[ContextItem], budget: ContextBudget, tracer: Tracer | None, query: str | None
    ) -> list[ContextItem]:
        if not isinstance(budget, ContextBudget):
            raise CupelTypeError(f"budget must be a ContextBudget, got {type(budget).__name__}")
        items = checked_items(items)
        sink = active_sink()
        if sink is not None:
            # A tracing hook is installed (cupel.otel.tracing): its collector sees this run too.
            extra = sink.pipeline_collector(current_attributes())
            if extra is not None and extra.is_enabled:
                from cupel._tracer import Tracer

                tracer = Tracer(extra if tracer is None else TeeCollector(tracer.collector, extra))
        if tracer is not None:
            if tracer.observer is not None:
                tracer.observer.on_run_start(items, budget)
            tracer.start()
        from cupel._run_columns import run_scope

        # An untraced GreedySlice orders the candidates itself, by density then score (no Stage 4 sort).
        ordered = tracer is not None or "_slice_unordered" not in type(self.slicer).__dict__
        if tracer is None or tracer.run_end is None:
            with run_scope():  # columns a stage derives, for later stages (cupel/_run_columns.py)
                prepared = self._prepare(items, budget, tracer, ordered, query)
                return self._select(prepared, budget, tracer, ordered)
        try:
            with run_scope():
                prepared = self._prepare(items, budget, tracer, ordered, query)
                placed = self._select(prepared, budget, tracer, ordered)
        except BaseException as error:
            tracer.run_end(error)
            raise
        tracer.run_end(None)
        return placed

    def _prepare(
        self,
        items: Sequence[ContextItem],
        budget: ContextBudget | None,
        tracer: Tracer | None,
        ordered: bool = True,
        query: str | None = None,
    ) -> Prepared:
        """Stages 1-4 (Classify, Score, Deduplicate, Sort), none of which depends on the budget.

        The pinned-budget check of Classify runs here when a budget is given. Without ``ordered``, the
        candidates stay in index order (for the slicer's ``_slice_unordered``); ``query`` is bound.
        """
        if tracer is not None:
            from cupel.diagnostics.reasons import NegativeTokens
        # Stage 1: Classify. The negative-token check comes before the pinned check.
        pinned: list[ContextItem] = []
        scoreable: list[ContextItem] = []
        pinned_tokens = 0
        counts = _numeric.Column(map(_TOKENS, items))  # a list; numpy may attach its array later
        tokens: list[int] | None = counts
        if not counts or min(counts) >= 0:
            # The common case (no negative counts), decided and split by C-level passes.
            pinned, pinned_tokens, scoreable = split_pinned(items, counts)
        else:
            tokens = None
            for item in items:
                if item.tokens < 0:
                    if tracer is not None:
                        tracer.excluded(tracer.stages.CLASSIFY, item, 0.0, NegativeTokens(item.tokens))
                elif item.pinned:
                    pinned.append(item)
                    pinned_tokens += item.tokens
                else:
                    scoreable.append(item)
        if budget is not None:
            check_pinned_budget(pinned_tokens, budget)
        if tracer is not None:
            tracer.finish(tracer.stages.CLASSIFY, len(items), len(pinned) + len(scoreable))

        # Stage 2: Score, the whole list at once, with the query of this call (if any).
        scorer, batch = bind_query(self.scorer, query), ItemColumns.of_items(scoreable)
        scored = score_columns if tracer is None else tracer.score  # a report keeps the relevance
        scores = _numeric.float_column(scored(scorer, batch)) if scoreable else []
        if tracer is not None:
            tracer.finish(tracer.stages.SCORE, len(scoreable), len(scoreable))

        # Stage 3: Deduplicate (byte-exact content; highest score wins, then lowest index).
        if self.deduplication and scoreable:
            survivors, dropped, kept_by = deduplicate(scoreable, scores)
            if tracer is not None and dropped:
                tracer.deduplicated(scoreable, scores, dropped, kept_by)
        else:
            survivors = list(range(len(scoreable)))
        if tracer is not None:
            tracer.finish(tracer.stages.DEDUPLICATE, len(scoreable), len(survivors))

        if not ordered:
            return Prepared(pinned, pinned_tokens, scoreable, scores, survivors, tokens)
        # Stage 4: Sort by score descending; the stable sort keeps ascending index on ties.
        return Prepared(pinned, pinned_tokens, scoreable, scores, score_order(scores, survivors), tokens)

    def _select(
        self, prepared: Prepared, budget: ContextBudget, tracer: Tracer | None, ordered: bool = True
    ) -> list[ContextItem]:
        """Stages 5-6 (Slice, Place) for one budget (``ordered``: as for :meth:`_prepare`)."""
        pinned, pinned_tokens = prepared.pinned, prepared.pinned_tokens

        # Stage 5: Slice against the effective budget.
        effective = compute_effective_budget(budget, pinned_tokens)
        slice_indices = getattr(self.slicer, "slice_indices", None) if tracer is None else None
        if not ordered:
            slice_indices = self.slicer._slice_unordered  # type: ignore[attr-defined]
        sliced_tokens: int | None = None
        items: Sequence[ContextItem] | None = None  # pinned + sliced, when built in one pass
        if slice_indices is not None:
            # An untraced slicer that works on index lists never needs the scored list built: far
            # fewer objects touched on large inputs (GreedySlice.slice runs the same function).
            scoreable = prepared.scoreable
            scores = prepared.scores
            tokens = prepared.tokens
            chosen = slice_indices(prepared.order, tokens, scores, effective)
            from cupel._run_columns import Selection

            # A built-in placer reads the chosen items by index: no list of them in slice order.
            selection = Selection(pinned, scoreable, chosen)
            items = selection if _is_builtin(self.placer) else list(selection)
            # From numpy arrays when the run made them (no pass over the selected objects).
            sliced_scores = _numeric.take(scores, chosen) or list(map(scores.__getitem__, chosen))
            sliced_tokens = _numeric.take_sum(tokens, chosen)
        elif tracer is not None and self.deduplication and hasattr(self.slicer, "slice_indices_detailed"):
            # On index lists too: deduplicated candidates are distinct instances (see _slice).
            selection, sliced_scores, sliced_tokens = tracer.slice_by_index(
                self.slicer, prepared, effective, compute_effective_budget(budget, 0).target_tokens
            )
            items = selection if _is_builtin(self.placer) else list(selection)
        else:
            sliced, sliced_scores = self._slice(prepared, budget, effective, tracer)

        # Stage 6: Place. Pinned items first with score 1.0, then the sliced items.
        if items is None:
            items = pinned + sliced
        item_scores = [PINNED_SCORE] * len(pinned) + sliced_scores
        merged_tokens = sum(map(_TOKENS, items)) if sliced_tokens is None else pinned_tokens + sliced_tokens
        entering_place = len(items)
        if merged_tokens > budget.target_tokens:
            merged = [ScoredItem(item, score) for item, score in zip(items, item_scores, strict=True)]
            from cupel._overflow import handle_overflow

            merged = handle_overflow(
                merged,
                merged_tokens,
                budget,
                pinned,
                pinned_tokens,
                tracer,
                self.overflow_strategy,
                self.on_overflow,
            )
            items = [entry.item for entry in merged]
            item_scores = [entry.score for entry in merged]
        positions: list[int] | None = None
        placed: list[ContextItem]
        place_items = getattr(self.placer, "place_items", None)
        if tracer is not None and self.deduplication and "place_indices" in type(self.placer).__dict__:
            # By position: the report takes each placed item's score by index, not by identity
            # (deduplicated candidates are distinct instances; pinned ones all score 1.0).
            positions = self.placer.place_indices(items, item_scores)  # type: ignore[attr-defined]
            from cupel._run_columns import take

            placed = take(items, positions)
        elif place_items is not None:
            placed = place_items(items, item_scores)
        else:
            make = ScoredItem._make
            placed = self.placer.place([make(pair) for pair in zip(items, item_scores, strict=True)])
        if len(placed) != len(items):
            raise CupelError(f"{type(self.placer).__name__} returned {len(placed)} items for {len(items)}")
        if tracer is not None:
            if positions is None:
                tracer.included_all(placed, items, item_scores)
            else:
                tracer.included_at(placed, positions, items, item_scores, len(pinned))
            tracer.finish(tracer.stages.PLACE, entering_place, len(placed))
        return placed

    def _slice(
        self, prepared: Prepared, budget: ContextBudget, effective: ContextBudget, tracer: Tracer | None
    ) -> tuple[list[ContextItem], list[float]]:
        """Stage 5 through the Slicer protocol: the selected items and their scores."""
        sorted_scored = prepared.sorted_scored
        slice_exclusions: dict[int, ExclusionReason] = {}
        detailed = getattr(self.slicer, "slice_detailed", None) if tracer is not None else None
        if detailed is not None:
            outcome = detailed(sorted_scored, effective)
            sliced = list(outcome.selected)
            for item, reason in outcome.exclusions:
                slice_exclusions.setdefault(id(item), reason)
            if outcome.shortfalls and tracer is not None and tracer.observer is not None:
                tracer.observer.on_shortfalls(outcome.shortfalls)
        else:
            sliced = checked_slice(self.slicer, self.slicer.slice(sorted_scored, effective))
        # Scores are re-associated by identity (spec: Stage 5, Conformance Notes).
        score_by_id = {id(entry.item): entry.score for entry in sorted_scored}
        try:
            sliced_scores = [score_by_id[id(item)] for item in sliced]
        except (KeyError, TypeError):
            raise CupelError(
                f"slicer {type(self.slicer).__name__} returned an item that was not in its input"
            ) from None
        if tracer is not None:
            from cupel.diagnostics.attribution import SliceAttribution

            if len(sliced) < len(sorted_scored):
                attribution = SliceAttribution.build(
                    effective.target_tokens,
                    compute_effective_budget(budget, 0).target_tokens,
                    prepared.pinned,
                    sliced,
                    sliced_scores,
                    type(self.slicer).__name__,
                )
                tracer.slice_excluded(sorted_scored, sliced, slice_exclusions, attribution)
            tracer.finish(tracer.stages.SLICE, len(sorted_scored), len(sliced))
        return sliced, sliced_scores

    # Policies live in cupel.policy, which is built on this module: a policy builds its own pipeline
    # (``policy.build_pipeline``), so this layer never imports that one.

    @classmethod
    def from_policy(
        cls, policy: PipelineSource, *, on_overflow: Callable[[OverflowEvent], None] | None = None
    ) -> Pipeline:
        """A pipeline configured exactly as ``policy`` says (spec: Policy Sensitivity)."""
        # What isinstance against a runtime-checkable PipelineSource checks, without loading typing.
        if getattr(policy, "build_pipeline", None) is None:
            raise CupelTypeError(f"policy must be a Policy, got {type(policy).__name__}")
        return policy.build_pipeline(on_overflow=on_overflow)

    @property
    def policy(self) -> Any:
        """Deprecated: use ``Policy.from_pipeline(pipeline)``; this pipeline's configuration as a Policy."""
        warnings.warn(
            "Pipeline.policy is deprecated; use cupel.Policy.from_pipeline(pipeline)",
            DeprecationWarning,
            stacklevel=2,
        )
        # Bound late, by name: the policy layer sits above this one (see docs/architecture.md).
        return importlib.import_module("cupel.policy.policy").Policy.from_pipeline(self)

    def dry_run_with_policy(
        self, items: Sequence[ContextItem], budget: ContextBudget, policy: PipelineSource
    ) -> SelectionReport:
        """``dry_run`` with ``policy`` in place of this pipeline's configuration (spec: DryRunWithPolicy).

        Everything that decides the selection comes from ``policy``; this pipeline contributes only
        its ``on_overflow`` callback.
        """
        return Pipeline.from_policy(policy, on_overflow=self.on_overflow).dry_run(items, budget)

    def get_marginal_items(
        self, items: Sequence[ContextItem], budget: ContextBudget, slack_tokens: int
    ) -> list[ContextItem]:
        """See :func:`cupel.analytics.get_marginal_items` (spec: Budget Simulation, GetMarginalItems)."""
        from cupel import _simulation

        return _simulation.get_marginal_items(self, items, budget, slack_tokens)

    def find_min_budget_for(
        self, items: Sequence[ContextItem], target_item: ContextItem, search_ceiling: int
    ) -> int | None:
        """See :func:`cupel.analytics.find_min_budget_for` (spec: Budget Simulation, FindMinBudgetFor)."""
        from cupel import _simulation

        return _simulation.find_min_budget_for(self, items, target_item, search_ceiling)
