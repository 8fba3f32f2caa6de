"""Every exclusion reason is true of what happened (docs/spec-notes.md, Diagnostics): one test per rule,
the reported repros, and Hypothesis properties for each reason's defining condition."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.profiles import examples
from tests.strategies import SAMPLE_PIPELINES, budgets, item_lists

from cupel import (
    BudgetExceeded,
    BudgetOverflowError,
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    CountConstrainedKnapsackSlice,
    CountQuotaEntry,
    CountQuotaSlice,
    Deduplicated,
    DiagnosticTraceCollector,
    ExclusionReason,
    GreedySlice,
    InvalidConfigurationError,
    KindScorer,
    KnapsackSlice,
    OverflowStrategy,
    PinnedItemsExceedBudgetError,
    PinnedOverride,
    Pipeline,
    PipelineStage,
    Policy,
    PriorityScorer,
    QuotaCapExceeded,
    QuotaSet,
    QuotaSlice,
    ReflexiveScorer,
    ScarcityError,
    ScoredItem,
    ScoredTooLow,
    SelectionReport,
    TraceDetailLevel,
    UShapedPlacer,
)
from cupel._score_order import descending_indices
from cupel.pipeline import compute_effective_budget
from cupel.policy.presets import document_qa

NAN = float("nan")


class TableScorer:
    """Scores each item by its content from a table (NaN included), to pin down orderings."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table

    def score(self, item: ContextItem, all_items: Sequence[ContextItem]) -> float:
        return self.table[item.content]


class StageRecorder(DiagnosticTraceCollector):
    """Keeps the stage of every exclusion besides the report."""

    def __init__(self) -> None:
        super().__init__(TraceDetailLevel.ITEM)
        self.stages: list[tuple[PipelineStage, ContextItem, float, ExclusionReason]] = []

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        super().on_excluded(stage, item, score, reason)
        self.stages.append((stage, item, score, reason))


def run_recorded(pipeline: Pipeline, items: list[ContextItem], budget: ContextBudget) -> StageRecorder:
    recorder = StageRecorder()
    pipeline.run_traced(items, budget, recorder)
    return recorder


# Rule 1: PinnedOverride only for a true pinned displacement.


def test_pinned_override_is_not_blamed_for_a_knapsack_choice() -> None:
    # The repro: a (score 0) is left out with or without P; P did not take its room.
    pipeline = Pipeline(PriorityScorer(), KnapsackSlice(bucket_size=1), ChronologicalPlacer())
    a = ContextItem("a", 10)
    with_pinned = pipeline.dry_run([ContextItem("P", 10, pinned=True), a], ContextBudget(100, 100))
    alone = pipeline.dry_run([a], ContextBudget(100, 100))
    assert with_pinned.excluded[0].reason == alone.excluded[0].reason == ScoredTooLow(0.0, 0.0001)


def test_pinned_override_needs_the_item_to_fit_without_pinned_items() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    items = [
        ContextItem("system", 40, pinned=True),
        ContextItem("displaced", 70, future_relevance_hint=0.9),  # 70 > 60 effective, <= 100
        ContextItem("too big anyway", 120, future_relevance_hint=0.8),
        ContextItem("small", 20, future_relevance_hint=0.1),
    ]
    report = pipeline.dry_run(items, ContextBudget(200, 100))
    reasons = {entry.item.content: entry.reason for entry in report.excluded}
    assert reasons == {
        "displaced": PinnedOverride("system"),
        "too big anyway": BudgetExceeded(120, 60),
    }


def test_budget_spent_on_other_items_is_not_a_pinned_override() -> None:
    # "b" fits the effective target (60) but "a" took 50 of it: the budget, not the pinned item.
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    items = [
        ContextItem("system", 40, pinned=True),
        ContextItem("a", 50, future_relevance_hint=0.9),
        ContextItem("b", 30, future_relevance_hint=0.5),
    ]
    report = pipeline.dry_run(items, ContextBudget(200, 100))
    assert [entry.reason for entry in report.excluded] == [BudgetExceeded(30, 10)]


def test_the_readme_example_labels_only_true_displacements() -> None:
    from cupel.cli.explain import explain_report

    budget = ContextBudget(600, 400)
    report = explain_report("examples/agent-session.json", budget, "tool_use", "heuristic")
    pinned = [entry.item for entry in report.included if entry.item.pinned]
    effective = compute_effective_budget(budget, sum(item.tokens for item in pinned)).target_tokens
    unpinned = compute_effective_budget(budget, 0).target_tokens
    overrides = [entry.item for entry in report.excluded if isinstance(entry.reason, PinnedOverride)]
    assert [item.tokens for item in overrides] == [340]
    assert all(effective < item.tokens <= unpinned for item in overrides)


# Rule 2: no reason contradicts its own numbers.


def _knapsack_qa() -> Policy:
    """Kind 2 + Reflexive 2 + Priority 1 packed by KnapsackSlice (bucket 25)."""
    scorer = CompositeScorer([(KindScorer(), 2.0), (ReflexiveScorer(), 2.0), (PriorityScorer(), 1.0)])
    return Policy(scorer, KnapsackSlice(bucket_size=25), UShapedPlacer())


def test_unscored_chunks_in_a_knapsack_are_scored_too_low() -> None:
    chunks = [ContextItem(f"chunk {n}", 40, kind="Chunk") for n in range(12)]
    report = Pipeline.from_policy(_knapsack_qa()).dry_run(chunks, ContextBudget(500, 500))
    assert report.included == ()
    assert {entry.reason for entry in report.excluded} == {ScoredTooLow(0.0, 0.0001)}
    assert report.excluded[0].reason.describe() == "ScoredTooLow: score 0 is below the threshold 0.0001"


def test_knapsack_room_is_counted_in_whole_buckets() -> None:
    # Each 40-token chunk takes a whole 100-token bucket: five fill the 500 tokens, none is left.
    chunks = [ContextItem(f"chunk {n}", 40, kind="Document") for n in range(12)]
    policy = _knapsack_qa().replace(slicer=KnapsackSlice(bucket_size=100))
    report = Pipeline.from_policy(policy).dry_run(chunks, ContextBudget(500, 500))
    assert len(report.included) == 5
    assert {entry.reason for entry in report.excluded} == {BudgetExceeded(40, 0)}


def test_explain_hints_when_every_score_is_zero(tmp_path: pytest.TempPathFactory) -> None:
    from cupel.cli.explain import ZERO_SCORES_HINT, render_text

    chunks = [ContextItem(f"chunk {n}", 40, kind="Chunk") for n in range(3)]
    budget = ContextBudget(500, 500)
    report = Pipeline.from_policy(document_qa()).dry_run(chunks, budget)
    assert render_text(report, budget, "document_qa").endswith(f"\n\n{ZERO_SCORES_HINT}\n")
    assert ZERO_SCORES_HINT == (
        "Hint: every score is 0: no scorer gave these items a signal; "
        "give them priority, relevance hints or another scorer"
    )
    scored = [ContextItem("c", 40, kind="Chunk", priority=1), ContextItem("d", 40, kind="Chunk")]
    report = Pipeline.from_policy(document_qa()).dry_run(scored, budget)
    assert ZERO_SCORES_HINT not in render_text(report, budget, "document_qa")


# Rule 3: Truncate removes the lowest-scored non-pinned items first, then puts back what still fits.


def test_truncate_removes_the_lowest_scored_count_quota_commit() -> None:
    slicer = CountQuotaSlice([CountQuotaEntry("msg", 1, 1), CountQuotaEntry("tool", 1, 1)], GreedySlice())
    pipeline = Pipeline(
        PriorityScorer(), slicer, ChronologicalPlacer(), overflow_strategy=OverflowStrategy.TRUNCATE
    )
    items = [ContextItem("a", 40, kind="tool", priority=9), ContextItem("m", 40, kind="msg", priority=1)]
    assert [item.content for item in pipeline.run(items, ContextBudget(200, 50))] == ["a"]
    report = pipeline.dry_run(items, ContextBudget(200, 50))
    assert [(entry.item.content, entry.reason) for entry in report.excluded] == [
        ("m", BudgetExceeded(40, 10))
    ]


def test_truncate_puts_back_a_removed_item_that_fits_what_is_left() -> None:
    # Both count-quota commits overflow the target; removing the lowest-scored (B) is not enough, so A
    # goes too, and then B fits again in what is left.
    slicer = CountQuotaSlice([CountQuotaEntry("tool", 1, 1), CountQuotaEntry("msg", 1, 1)], GreedySlice())
    pipeline = Pipeline(
        PriorityScorer(), slicer, ChronologicalPlacer(), overflow_strategy=OverflowStrategy.TRUNCATE
    )
    items = [ContextItem("A", 100, kind="tool", priority=9), ContextItem("B", 5, kind="msg", priority=1)]
    assert [item.content for item in pipeline.run(items, ContextBudget(200, 50))] == ["B"]
    report = pipeline.dry_run(items, ContextBudget(200, 50))
    assert [entry.item.content for entry in report.included] == ["B"]
    assert [(entry.item.content, entry.reason) for entry in report.excluded] == [
        ("A", BudgetExceeded(100, 50))
    ]


def test_truncate_puts_back_the_earlier_of_equal_scores_first() -> None:
    class Everything:
        def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
            return [entry.item for entry in scored]

    pipeline = Pipeline(ReflexiveScorer(), Everything(), ChronologicalPlacer(), overflow_strategy="truncate")
    sizes = {"k": 10, "big": 60, "s1": 30, "s2": 30}
    items = [ContextItem(name, tokens, future_relevance_hint=0.5) for name, tokens in sizes.items()]
    # s2, s1 and big go (130 -> 10); big cannot come back into 55, s1 can, then s2 no longer fits.
    assert [item.content for item in pipeline.run(items, ContextBudget(200, 65))] == ["k", "s1"]
    report = pipeline.dry_run(items, ContextBudget(200, 65))
    reasons = {entry.item.content: entry.reason for entry in report.excluded}
    assert reasons == {"big": BudgetExceeded(60, 55), "s2": BudgetExceeded(30, 25)}


def test_truncate_ties_remove_the_later_item_first() -> None:
    class Everything:
        def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
            return [entry.item for entry in scored]

    pipeline = Pipeline(ReflexiveScorer(), Everything(), ChronologicalPlacer(), overflow_strategy="truncate")
    items = [ContextItem(name, 30, future_relevance_hint=0.5) for name in ("x", "y", "z")]
    assert [item.content for item in pipeline.run(items, ContextBudget(100, 60))] == ["x", "y"]


# Rule 4: NaN sorts after every finite score.


def test_nan_scores_sort_last_in_greedy_slicing() -> None:
    scores = [0.5, NAN, 0.9, 0.7, NAN, 0.8]
    items = [ContextItem(f"i{n}", 10) for n in range(6)]
    pipeline = Pipeline(
        TableScorer({f"i{n}": s for n, s in enumerate(scores)}), GreedySlice(), UShapedPlacer()
    )
    report = pipeline.dry_run(items, ContextBudget(100, 30))
    assert sorted(item.content for item in report.items) == ["i2", "i3", "i5"]
    # The report lists the excluded by score, NaN last.
    assert [entry.item.content for entry in report.excluded] == ["i0", "i1", "i4"]


def test_nan_scores_sort_last_in_count_quota_phase_one() -> None:
    scored = [ScoredItem(ContextItem(f"m{n}", 10), s) for n, s in enumerate([0.5, NAN, 0.9, 0.7])]
    slicer = CountQuotaSlice([CountQuotaEntry("Message", 2, 4)], GreedySlice())
    committed = slicer.slice(scored, ContextBudget(100, 20))
    assert [item.content for item in committed] == ["m2", "m3"]


def test_nan_scores_sort_last_in_the_u_shaped_placer() -> None:
    entries = [ScoredItem(ContextItem(f"p{n}", 1), s) for n, s in enumerate([0.2, NAN, 0.9, 0.5])]
    # Ranks: p2, p3, p0, p1 (NaN) -> left p2, p0; right p1, p3.
    assert [item.content for item in UShapedPlacer().place(entries)] == ["p2", "p0", "p1", "p3"]


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.one_of(st.floats(-2, 2, allow_nan=False), st.just(NAN)), max_size=12))
def test_nan_never_changes_the_order_of_finite_scores(scores: list[float]) -> None:
    items = [ContextItem(f"n{index}", 7) for index in range(len(scores))]
    finite = [item for item, score in zip(items, scores, strict=True) if not math.isnan(score)]
    table = {item.content: score for item, score in zip(items, scores, strict=True)}
    pipeline = Pipeline(TableScorer(table), GreedySlice(), UShapedPlacer(), deduplication=False)
    budget = ContextBudget(1000, 35)
    # NaN items are considered only after every finite one, so the finite selection is unchanged.
    with_nan = {item.content for item in pipeline.run(items, budget) if not math.isnan(table[item.content])}
    assert with_nan == {item.content for item in pipeline.run(finite, budget)}
    order = descending_indices(range(len(scores)), scores)
    finite_positions = [index for index in range(len(scores)) if not math.isnan(scores[index])]
    assert [index for index in order if not math.isnan(scores[index])] == sorted(
        finite_positions, key=scores.__getitem__, reverse=True
    )
    assert all(math.isnan(scores[index]) for index in order[len(finite_positions) :])


# Rule 5: CountQuotaSlice inside QuotaSlice judges scarcity over the whole pool.


@pytest.mark.parametrize("inner_factory", ["count_quota", "count_knapsack"])
def test_count_quota_nested_in_quota_slice_counts_the_whole_pool(inner_factory: str) -> None:
    def inner(scarcity: str) -> CountQuotaSlice | CountConstrainedKnapsackSlice:
        entries = [CountQuotaEntry("tool", 1, 5)]
        if inner_factory == "count_quota":
            return CountQuotaSlice(entries, GreedySlice(), scarcity)
        return CountConstrainedKnapsackSlice(entries, KnapsackSlice(bucket_size=1), scarcity)

    items = [
        ContextItem("t1", 10, kind="tool", future_relevance_hint=0.5),
        ContextItem("m1", 10, kind="msg", future_relevance_hint=0.5),
    ]
    for scarcity in ("throw", "degrade"):
        pipeline = Pipeline(ReflexiveScorer(), QuotaSlice(QuotaSet(), inner(scarcity)), ChronologicalPlacer())
        report = pipeline.dry_run(items, ContextBudget(100, 100))
        assert sorted(item.content for item in report.items) == ["m1", "t1"]
        assert report.count_requirement_shortfalls == ()
    # A kind the whole pool lacks is short once, not once per partition.
    only_messages = [ContextItem("m1", 10, kind="msg"), ContextItem("m2", 10, kind="msg", priority=1)]
    degrade = Pipeline(ReflexiveScorer(), QuotaSlice(QuotaSet(), inner("degrade")), ChronologicalPlacer())
    report = degrade.dry_run(only_messages, ContextBudget(100, 100))
    assert [
        (str(s.kind), s.required_count, s.satisfied_count) for s in report.count_requirement_shortfalls
    ] == [("tool", 1, 0)]
    throw = Pipeline(ReflexiveScorer(), QuotaSlice(QuotaSet(), inner("throw")), ChronologicalPlacer())
    with pytest.raises(ScarcityError, match="candidate pool for kind 'tool' has 0 items"):
        throw.run(only_messages, ContextBudget(100, 100))


def test_nested_count_quota_caps_still_apply_per_kind() -> None:
    slicer = QuotaSlice(QuotaSet(), CountQuotaSlice([CountQuotaEntry("tool", 0, 1)], GreedySlice()))
    items = [ContextItem(f"t{n}", 10, kind="tool", priority=n) for n in range(3)]
    report = Pipeline(PriorityScorer(), slicer, ChronologicalPlacer()).dry_run(items, ContextBudget(100, 100))
    assert len(report.items) == 1
    assert {type(entry.reason) for entry in report.excluded} == {QuotaCapExceeded}


# Rule 6: a failing trace callback never aborts a selection.


def test_a_failing_event_callback_is_logged_once_and_the_run_completes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def explode(event: object) -> None:
        raise RuntimeError("telemetry is down")

    collector = DiagnosticTraceCollector(TraceDetailLevel.ITEM, on_event=explode)
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    items = [ContextItem("a", 10), ContextItem("b", 500)]
    with caplog.at_level(logging.ERROR, logger="cupel"):
        placed = pipeline.run_traced(items, ContextBudget(100, 100), collector)
    assert [item.content for item in placed] == ["a"]
    assert len(collector.events) >= 6  # five stage events and the item events, all still recorded
    failures = [record for record in caplog.records if record.name == "cupel"]
    assert len(failures) == 1
    assert "on_event raised" in failures[0].getMessage()
    assert failures[0].exc_info is not None and "telemetry is down" in str(failures[0].exc_info[1])


# Rule 7: reading a report checks that every candidate is accounted for.


def test_reading_a_report_checks_total_candidates() -> None:
    pipeline = Pipeline(ReflexiveScorer(), GreedySlice(), ChronologicalPlacer())
    report = pipeline.dry_run([ContextItem("a", 10), ContextItem("b", 500)], ContextBudget(100, 100))
    data = report.to_dict()
    assert SelectionReport.from_dict(data).to_dict() == data
    data["total_candidates"] = 3
    with pytest.raises(InvalidConfigurationError, match=r"^report\.total_candidates: is 3, but the report"):
        SelectionReport.from_dict(data)


# Rule 8: wording.


def test_deduplicated_names_the_copy_that_won() -> None:
    reason = Deduplicated("Stripe docs: webhook signatures")
    assert reason.describe() == (
        "Deduplicated: duplicate of 'Stripe docs: webhook signatures', which scored at least as high"
    )


# Properties over random pipelines.

PROPERTY_PIPELINES = [
    *SAMPLE_PIPELINES,
    Pipeline(
        PriorityScorer(),
        CountConstrainedKnapsackSlice(
            [CountQuotaEntry("Message", 1, 2), CountQuotaEntry("Document", 0, 1)],
            KnapsackSlice(bucket_size=5),
        ),
        UShapedPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
    Pipeline(PriorityScorer(), KnapsackSlice(bucket_size=1), UShapedPlacer()),
    Pipeline(
        ReflexiveScorer(),
        QuotaSlice(QuotaSet([("Document", 0, 40)]), KnapsackSlice(bucket_size=7)),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
    Pipeline(
        PriorityScorer(),
        CountQuotaSlice([CountQuotaEntry("Message", 2, 3), CountQuotaEntry("Memory", 1, 1)], GreedySlice()),
        UShapedPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
    Pipeline(
        ReflexiveScorer(),
        QuotaSlice(QuotaSet(), CountQuotaSlice([CountQuotaEntry("ToolOutput", 1, 2)], GreedySlice())),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    ),
]


def nan_last(score: float) -> float:
    return -math.inf if math.isnan(score) else score


@settings(max_examples=examples(150), deadline=None)
@given(
    st.sampled_from(PROPERTY_PIPELINES),
    item_lists(allow_negative=True),
    budgets(),
)
def test_every_reason_satisfies_its_defining_condition(
    pipeline: Pipeline, items: list[ContextItem], budget: ContextBudget
) -> None:
    try:
        recorder = run_recorded(pipeline, items, budget)
    except (PinnedItemsExceedBudgetError, BudgetOverflowError):
        return
    pinned = [item for item in items if item.pinned and item.tokens >= 0]
    pinned_tokens = sum(item.tokens for item in pinned)
    effective = compute_effective_budget(budget, pinned_tokens).target_tokens
    unpinned = compute_effective_budget(budget, 0).target_tokens

    def fits(tokens: int, target: int) -> bool:
        return target > 0 and tokens <= target

    for stage, item, _score, reason in recorder.stages:
        if isinstance(reason, BudgetExceeded):
            assert reason.item_tokens > reason.available_tokens, (stage, item, reason)
            assert reason.item_tokens == item.tokens
        if stage is PipelineStage.SLICE:
            displaced = bool(pinned) and not fits(item.tokens, effective) and fits(item.tokens, unpinned)
            assert isinstance(reason, PinnedOverride) == displaced, (item, reason)
        if isinstance(reason, PinnedOverride):
            largest = max(pinned, key=lambda entry: entry.tokens)
            assert reason.displaced_by == largest.content
        if isinstance(reason, ScoredTooLow):
            assert nan_last(reason.score) < reason.threshold

    # Truncate: the kept items fit (unless the pinned ones alone overflow), and no removed item would
    # still fit in what they leave.
    removed = [(score, item) for stage, item, score, _ in recorder.stages if stage is PipelineStage.PLACE]
    if removed:
        assert pipeline.overflow_strategy is OverflowStrategy.TRUNCATE
        kept_tokens = sum(entry.item.tokens for entry in recorder.build_report().included)
        assert kept_tokens <= budget.target_tokens or (pinned_tokens > budget.target_tokens)
        assert all(item.tokens > budget.target_tokens - kept_tokens for _, item in removed)
