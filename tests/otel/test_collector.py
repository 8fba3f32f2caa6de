"""CupelOtelTraceCollector against the OpenTelemetry SDK's in-memory exporter (spec: OpenTelemetry
Integration). Each test has its own TracerProvider; the global provider is never touched."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

pytest.importorskip(
    "opentelemetry.sdk",
    reason="opentelemetry-sdk is not installed (pip install 'pycupel[otel]' opentelemetry-sdk)",
)

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from cupel import (
    BudgetOverflowError,
    ChronologicalPlacer,
    ContextBudget,
    ContextItem,
    ExclusionReason,
    GreedySlice,
    OverflowStrategy,
    Pipeline,
    PipelineStage,
    QuotaCapExceeded,
    ReflexiveScorer,
    ScoredItem,
    SliceOutcome,
    TraceDetailLevel,
    UnknownExclusionReason,
    UShapedPlacer,
)
from cupel.otel import (
    TRACER_NAME,
    CollectorReuseError,
    CupelOtelTraceCollector,
    CupelVerbosity,
)

STAGES = ("classify", "score", "deduplicate", "slice", "place")
STAGE_ATTRIBUTES = {"cupel.stage.name", "cupel.stage.item_count_in", "cupel.stage.item_count_out"}


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


@pytest.fixture
def provider(exporter: InMemorySpanExporter) -> Iterator[TracerProvider]:
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield tracer_provider
    tracer_provider.shutdown()


def item(content: str, tokens: int, hint: float = 0.5, **fields: Any) -> ContextItem:
    return ContextItem(content, tokens, future_relevance_hint=hint, **fields)


def every_reason_items() -> list[ContextItem]:
    """Excludes one item each with NegativeTokens (Classify), Deduplicated (Deduplicate),
    BudgetExceeded and PinnedOverride (Slice), under ContextBudget(100, 60)."""
    return [
        item("negative", -1, kind="Memory"),
        item("answer", 10, 0.9),
        item("answer", 10, 0.3),
        item("big", 100, 0.8, kind="Document"),
        item("system", 30, pinned=True, kind="SystemPrompt"),
        item("tool", 35, 0.4, kind="ToolOutput"),
    ]


def u_pipeline(**options: Any) -> Pipeline:
    return Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer(), **options)


def spans_by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    spans = exporter.get_finished_spans()
    by_name = {span.name: span for span in spans}
    assert len(by_name) == len(spans), "span names must be unique within one run"
    return by_name


def run(
    provider: TracerProvider,
    verbosity: CupelVerbosity,
    items: Sequence[ContextItem],
    budget: ContextBudget,
    pipeline: Pipeline | None = None,
) -> list[ContextItem]:
    collector = CupelOtelTraceCollector(verbosity, tracer_provider=provider)
    return (pipeline or u_pipeline()).run_traced(items, budget, collector)


ID_KEYS = ("cupel.exclusion.item_id", "cupel.item.id")


def events(span: ReadableSpan, name: str) -> list[dict[str, Any]]:
    """Event attributes without the item ids, which test_item_ids_are_stable_content_hashes checks."""
    found = []
    for event in span.events:
        if event.name == name:
            attributes = dict(event.attributes or {})
            for key in ID_KEYS:
                if key in attributes:
                    assert re.fullmatch(r"[0-9a-f]{16}", attributes.pop(key))
            found.append(attributes)
    return found


# Span tree --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("verbosity", list(CupelVerbosity))
def test_span_tree_names_and_parentage(
    provider: TracerProvider, exporter: InMemorySpanExporter, verbosity: CupelVerbosity
) -> None:
    run(provider, verbosity, every_reason_items(), ContextBudget(100, 60))
    spans = spans_by_name(exporter)
    assert set(spans) == {"cupel.pipeline", *(f"cupel.stage.{stage}" for stage in STAGES)}
    root = spans["cupel.pipeline"]
    assert root.parent is None
    assert root.instrumentation_scope is not None
    assert root.instrumentation_scope.name == TRACER_NAME == "cupel"
    root_context = root.get_span_context()
    assert root_context is not None
    for stage in STAGES:
        span = spans[f"cupel.stage.{stage}"]
        assert span.parent is not None
        assert span.parent.span_id == root_context.span_id
        span_context = span.get_span_context()
        assert span_context is not None and span_context.trace_id == root_context.trace_id
        assert span.status.status_code is StatusCode.UNSET
        assert span.instrumentation_scope is not None and span.instrumentation_scope.name == "cupel"


def test_stage_only_attributes(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    run(provider, CupelVerbosity.STAGE_ONLY, every_reason_items(), ContextBudget(100, 60))
    spans = spans_by_name(exporter)
    assert dict(spans["cupel.pipeline"].attributes or {}) == {
        "cupel.budget.max_tokens": 100,
        "cupel.budget.target_tokens": 60,
        "cupel.verbosity": "StageOnly",
        # The outcome: the pinned system prompt (30) and one answer (10) kept; four items excluded.
        "cupel.result.tokens": 40,
        "cupel.result.included_count": 2,
        "cupel.result.excluded_count": 4,
    }
    expected_counts = {
        "classify": (6, 5),
        "score": (4, 4),
        "deduplicate": (4, 3),
        "slice": (3, 1),
        "place": (2, 2),
    }
    for stage, (count_in, count_out) in expected_counts.items():
        span = spans[f"cupel.stage.{stage}"]
        # Exactly these attributes: in particular no duration_ms and no exclusion count at this tier.
        assert dict(span.attributes or {}) == {
            "cupel.stage.name": stage,
            "cupel.stage.item_count_in": count_in,
            "cupel.stage.item_count_out": count_out,
        }
        assert list(span.events) == []
    assert list(spans["cupel.pipeline"].events) == []


def test_attribute_value_types(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    run(provider, CupelVerbosity.FULL, every_reason_items(), ContextBudget(100, 60))
    spans = spans_by_name(exporter)
    root = dict(spans["cupel.pipeline"].attributes or {})
    assert type(root["cupel.budget.max_tokens"]) is int
    assert type(root["cupel.verbosity"]) is str
    for key in ("cupel.budget.target_tokens", "cupel.result.tokens", "cupel.result.included_count"):
        assert type(root[key]) is int
    for stage in STAGES:
        attributes = dict(spans[f"cupel.stage.{stage}"].attributes or {})
        assert type(attributes["cupel.stage.name"]) is str
        assert type(attributes["cupel.stage.item_count_in"]) is int
        assert type(attributes["cupel.stage.item_count_out"]) is int
        if "cupel.exclusion.count" in attributes:
            assert type(attributes["cupel.exclusion.count"]) is int
        for event in events(spans[f"cupel.stage.{stage}"], "cupel.exclusion"):
            assert [type(event[key]) for key in sorted(event)] == [str, int, str]
        for event in spans[f"cupel.stage.{stage}"].events:
            assert all(
                type((event.attributes or {})[key]) is str
                for key in ID_KEYS
                if key in (event.attributes or {})
            )
    for event in events(spans["cupel.stage.place"], "cupel.item.included"):
        assert (type(event["cupel.item.kind"]), type(event["cupel.item.tokens"])) == (str, int)
        assert type(event["cupel.item.score"]) is float


@pytest.mark.parametrize(
    ("verbosity", "name"),
    [
        (CupelVerbosity.STAGE_ONLY, "StageOnly"),
        (CupelVerbosity.STAGE_AND_EXCLUSIONS, "StageAndExclusions"),
        (CupelVerbosity.FULL, "Full"),
    ],
)
def test_verbosity_attribute_names_the_tier(
    provider: TracerProvider, exporter: InMemorySpanExporter, verbosity: CupelVerbosity, name: str
) -> None:
    run(provider, verbosity, [item("a", 10)], ContextBudget(500, 400))
    root = spans_by_name(exporter)["cupel.pipeline"]
    assert dict(root.attributes or {}) == {
        "cupel.budget.max_tokens": 500,
        "cupel.budget.target_tokens": 400,
        "cupel.verbosity": name,
        "cupel.result.tokens": 10,
        "cupel.result.included_count": 1,
        "cupel.result.excluded_count": 0,
    }


# Timing -----------------------------------------------------------------------------------------------


class RecordingCollector(CupelOtelTraceCollector):
    """Keeps what the pipeline reported at each stage boundary."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.boundaries: dict[str, tuple[int, int]] = {}

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        self.boundaries[stage.value.lower()] = (started_ns, ended_ns)
        super().on_stage_complete(stage, started_ns, ended_ns, items_in, items_out)


def test_spans_carry_the_stages_real_times(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    collector = RecordingCollector(CupelVerbosity.FULL, tracer_provider=provider)
    u_pipeline().run_traced(every_reason_items(), ContextBudget(100, 60), collector)
    spans = spans_by_name(exporter)
    root = spans["cupel.pipeline"]
    assert root.start_time is not None and root.end_time is not None
    # Stage starts are ordered; ends are not compared with the next start, since a stage's end is its
    # wall-clock start plus a monotonic-clock duration and the two clocks may drift apart slightly.
    previous_start = root.start_time
    for stage in STAGES:
        span = spans[f"cupel.stage.{stage}"]
        assert (span.start_time, span.end_time) == collector.boundaries[stage]
        assert span.start_time is not None and span.end_time is not None
        assert previous_start <= span.start_time <= span.end_time <= root.end_time
        for event in span.events:
            assert span.start_time <= event.timestamp <= span.end_time
        previous_start = span.start_time
    # The root spans the run: from its start to the end of Place.
    assert root.end_time == collector.boundaries["place"][1]


# StageAndExclusions -----------------------------------------------------------------------------------


def test_every_active_exclusion_reason_lands_on_its_stage(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    run(provider, CupelVerbosity.STAGE_AND_EXCLUSIONS, every_reason_items(), ContextBudget(100, 60))
    spans = spans_by_name(exporter)
    expected = {
        "classify": [
            {
                "cupel.exclusion.reason": "NegativeTokens",
                "cupel.exclusion.item_kind": "Memory",
                "cupel.exclusion.item_tokens": -1,
            }
        ],
        "score": [],
        "deduplicate": [
            {
                "cupel.exclusion.reason": "Deduplicated",
                "cupel.exclusion.item_kind": "Message",
                "cupel.exclusion.item_tokens": 10,
            }
        ],
        "slice": [
            {
                "cupel.exclusion.reason": "BudgetExceeded",
                "cupel.exclusion.item_kind": "Document",
                "cupel.exclusion.item_tokens": 100,
            },
            {
                "cupel.exclusion.reason": "PinnedOverride",
                "cupel.exclusion.item_kind": "ToolOutput",
                "cupel.exclusion.item_tokens": 35,
            },
        ],
        "place": [],
    }
    for stage, exclusions in expected.items():
        span = spans[f"cupel.stage.{stage}"]
        assert events(span, "cupel.exclusion") == exclusions
        assert [event.name for event in span.events] == ["cupel.exclusion"] * len(exclusions)
        attributes = dict(span.attributes or {})
        if exclusions:
            assert attributes["cupel.exclusion.count"] == len(exclusions)
            assert set(attributes) == STAGE_ATTRIBUTES | {"cupel.exclusion.count"}
        else:
            assert set(attributes) == STAGE_ATTRIBUTES
    assert list(spans["cupel.pipeline"].events) == []


class TakeEverything:
    """A slicer that ignores the budget, so Place has to truncate."""

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return [entry.item for entry in scored]


def test_place_stage_exclusions_under_truncate(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    items = [
        item("pinned", 50, pinned=True, kind="SystemPrompt"),
        item("fits without pinned", 30, 0.9),
        item("never fits", 70, 0.2, kind="Document"),
        item("small", 10, 0.1),
    ]
    pipeline = Pipeline(
        ReflexiveScorer(),
        TakeEverything(),
        ChronologicalPlacer(),
        overflow_strategy=OverflowStrategy.TRUNCATE,
    )
    run(provider, CupelVerbosity.STAGE_AND_EXCLUSIONS, items, ContextBudget(100, 60), pipeline)
    spans = spans_by_name(exporter)
    place = spans["cupel.stage.place"]
    assert dict(place.attributes or {}) == {
        "cupel.stage.name": "place",
        # Pinned plus the three sliced items enter Place; truncation, lowest score first, removes all
        # three, then puts back "small", the one that fits the 10 tokens the pinned item leaves.
        "cupel.stage.item_count_in": 4,
        "cupel.stage.item_count_out": 2,
        "cupel.exclusion.count": 2,
    }
    # In the order Truncate passed them over: highest score first.
    assert events(place, "cupel.exclusion") == [
        {
            "cupel.exclusion.reason": "PinnedOverride",
            "cupel.exclusion.item_kind": "Message",
            "cupel.exclusion.item_tokens": 30,
        },
        {
            "cupel.exclusion.reason": "BudgetExceeded",
            "cupel.exclusion.item_kind": "Document",
            "cupel.exclusion.item_tokens": 70,
        },
    ]
    assert "cupel.exclusion.count" not in dict(spans["cupel.stage.slice"].attributes or {})


class ExplainingSlicer:
    """A custom slicer that reports reserved and unknown reason variants for what it drops."""

    def __init__(self, reasons: dict[str, ExclusionReason]) -> None:
        self.reasons = reasons

    def slice(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> list[ContextItem]:
        return list(self.slice_detailed(scored, budget).selected)

    def slice_detailed(self, scored: Sequence[ScoredItem], budget: ContextBudget) -> SliceOutcome:
        kept = tuple(entry.item for entry in scored if entry.item.content not in self.reasons)
        dropped = tuple(
            (entry.item, self.reasons[entry.item.content])
            for entry in scored
            if entry.item.content in self.reasons
        )
        return SliceOutcome(kept, dropped)


def test_reserved_and_unknown_reasons_map_to_their_own_names(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    slicer = ExplainingSlicer(
        {
            "capped": QuotaCapExceeded("ToolOutput", 1, 2),
            "future": UnknownExclusionReason("SomethingFromSpec2", {"detail": 1}),
        }
    )
    items = [item("kept", 5, 0.9), item("capped", 5, 0.8, kind="ToolOutput"), item("future", 7, 0.7)]
    run(
        provider,
        CupelVerbosity.STAGE_AND_EXCLUSIONS,
        items,
        ContextBudget(100, 100),
        Pipeline(ReflexiveScorer(), slicer, UShapedPlacer()),
    )
    slice_span = spans_by_name(exporter)["cupel.stage.slice"]
    assert events(slice_span, "cupel.exclusion") == [
        {
            "cupel.exclusion.reason": "QuotaCapExceeded",
            "cupel.exclusion.item_kind": "ToolOutput",
            "cupel.exclusion.item_tokens": 5,
        },
        {
            "cupel.exclusion.reason": "SomethingFromSpec2",
            "cupel.exclusion.item_kind": "Message",
            "cupel.exclusion.item_tokens": 7,
        },
    ]


# Full -------------------------------------------------------------------------------------------------


def test_full_records_included_items_on_place_in_placed_order(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    items = [*every_reason_items(), item("note", 5, 0.6, kind="Memory")]
    placed = run(provider, CupelVerbosity.FULL, items, ContextBudget(100, 60))
    spans = spans_by_name(exporter)
    place = spans["cupel.stage.place"]
    included = events(place, "cupel.item.included")
    assert [event["cupel.item.kind"] for event in included] == [str(entry.kind) for entry in placed]
    assert included == [
        {"cupel.item.kind": "SystemPrompt", "cupel.item.tokens": 30, "cupel.item.score": 1.0},
        {"cupel.item.kind": "Memory", "cupel.item.tokens": 5, "cupel.item.score": 0.6},
        {"cupel.item.kind": "Message", "cupel.item.tokens": 10, "cupel.item.score": 0.9},
    ]
    assert place.end_time is not None
    assert all(
        event.timestamp == place.end_time for event in place.events if event.name == "cupel.item.included"
    )
    # Full keeps everything StageAndExclusions emits.
    assert [
        event["cupel.exclusion.reason"] for event in events(spans["cupel.stage.slice"], "cupel.exclusion")
    ] == [
        "BudgetExceeded",
        "PinnedOverride",
    ]
    assert dict(spans["cupel.stage.slice"].attributes or {})["cupel.exclusion.count"] == 2
    for stage in STAGES[:-1]:
        assert events(spans[f"cupel.stage.{stage}"], "cupel.item.included") == []
    assert list(spans["cupel.pipeline"].events) == []


@pytest.mark.parametrize("verbosity", [CupelVerbosity.STAGE_ONLY, CupelVerbosity.STAGE_AND_EXCLUSIONS])
def test_lower_tiers_record_no_included_items(
    provider: TracerProvider, exporter: InMemorySpanExporter, verbosity: CupelVerbosity
) -> None:
    run(provider, verbosity, every_reason_items(), ContextBudget(100, 60))
    for span in exporter.get_finished_spans():
        assert events(span, "cupel.item.included") == []


@pytest.mark.parametrize("verbosity", list(CupelVerbosity))
def test_run_without_exclusions(
    provider: TracerProvider, exporter: InMemorySpanExporter, verbosity: CupelVerbosity
) -> None:
    items = [item("a", 10, 0.9), item("b", 20, 0.1, kind="ToolOutput")]
    run(provider, verbosity, items, ContextBudget(100, 100))
    spans = spans_by_name(exporter)
    for stage in STAGES:
        span = spans[f"cupel.stage.{stage}"]
        assert set(dict(span.attributes or {})) == STAGE_ATTRIBUTES
        assert events(span, "cupel.exclusion") == []
    included = events(spans["cupel.stage.place"], "cupel.item.included")
    assert len(included) == (2 if verbosity is CupelVerbosity.FULL else 0)


def test_empty_run_still_has_five_stages(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    run(provider, CupelVerbosity.FULL, [], ContextBudget(10, 10))
    spans = spans_by_name(exporter)
    assert len(spans) == 6
    for stage in STAGES:
        attributes = dict(spans[f"cupel.stage.{stage}"].attributes or {})
        assert (attributes["cupel.stage.item_count_in"], attributes["cupel.stage.item_count_out"]) == (0, 0)


# Lifecycle --------------------------------------------------------------------------------------------


def test_a_collector_records_exactly_one_run(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    collector = CupelOtelTraceCollector(tracer_provider=provider)
    pipeline = u_pipeline()
    pipeline.run_traced([item("a", 1)], ContextBudget(10, 10), collector)
    assert collector.finished
    with pytest.raises(CollectorReuseError, match="exactly one pipeline run"):
        pipeline.run_traced([item("a", 1)], ContextBudget(10, 10), collector)
    assert len(exporter.get_finished_spans()) == 6
    with pytest.raises(CollectorReuseError):
        collector.on_excluded(PipelineStage.SLICE, item("x", 1), 0.0, QuotaCapExceeded("a", 1, 2))


def test_hooks_outside_a_run_are_rejected(provider: TracerProvider) -> None:
    collector = CupelOtelTraceCollector(tracer_provider=provider)
    with pytest.raises(CollectorReuseError, match="has not started a run"):
        collector.on_stage_complete(PipelineStage.CLASSIFY, 0, 1, 0, 0)


def test_failed_run_inside_with_emits_the_partial_tree(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    pipeline = Pipeline(ReflexiveScorer(), TakeEverything(), UShapedPlacer())
    collector = CupelOtelTraceCollector(CupelVerbosity.FULL, tracer_provider=provider)
    with pytest.raises(BudgetOverflowError), collector:
        pipeline.run_traced([item("a", 80), item("b", 80)], ContextBudget(100, 100), collector)
    spans = spans_by_name(exporter)
    # Place raised before completing: the stages that did complete, under an ERROR root.
    assert set(spans) == {"cupel.pipeline", *(f"cupel.stage.{stage}" for stage in STAGES[:-1])}
    root = spans["cupel.pipeline"]
    assert root.status.status_code is StatusCode.ERROR
    assert [event.name for event in root.events] == ["exception"]
    # Recent SDKs record the qualified name, older ones the bare class name.
    assert str(dict(root.events[0].attributes or {})["exception.type"]).endswith("BudgetOverflowError")
    assert root.start_time is not None and root.end_time is not None
    assert root.end_time >= max(span.end_time or 0 for span in spans.values())
    assert collector.finished


def test_failed_run_without_with_emits_the_partial_tree(
    provider: TracerProvider, exporter: InMemorySpanExporter
) -> None:
    pipeline = Pipeline(ReflexiveScorer(), TakeEverything(), UShapedPlacer())
    collector = CupelOtelTraceCollector(tracer_provider=provider)
    with pytest.raises(BudgetOverflowError):
        pipeline.run_traced([item("a", 80), item("b", 80)], ContextBudget(100, 100), collector)
    spans = spans_by_name(exporter)
    # The pipeline reports the error through on_run_end: the completed stages under an ERROR root.
    assert set(spans) == {"cupel.pipeline", *(f"cupel.stage.{stage}" for stage in STAGES[:-1])}
    assert spans["cupel.pipeline"].status.status_code is StatusCode.ERROR
    assert collector.finished


def test_root_nests_under_the_active_span(provider: TracerProvider, exporter: InMemorySpanExporter) -> None:
    tracer = provider.get_tracer("app")
    with tracer.start_as_current_span("request") as request:
        run(provider, CupelVerbosity.STAGE_ONLY, [item("a", 1)], ContextBudget(10, 10))
    spans = spans_by_name(exporter)
    root = spans["cupel.pipeline"]
    assert root.parent is not None
    assert root.parent.span_id == request.get_span_context().span_id


# Construction -----------------------------------------------------------------------------------------


def test_verbosity_is_validated(provider: TracerProvider) -> None:
    assert CupelOtelTraceCollector("Full", tracer_provider=provider).verbosity is CupelVerbosity.FULL
    assert CupelOtelTraceCollector(tracer_provider=provider).verbosity is CupelVerbosity.STAGE_ONLY
    with pytest.raises(ValueError, match="StageAndExclusions"):
        CupelOtelTraceCollector("Verbose", tracer_provider=provider)
    with pytest.raises(TypeError):
        CupelOtelTraceCollector(2, tracer_provider=provider)  # type: ignore[arg-type]


def test_verbosity_tiers_are_ordered() -> None:
    assert [tier.rank for tier in CupelVerbosity] == [0, 1, 2]
    assert [tier.value for tier in CupelVerbosity] == ["StageOnly", "StageAndExclusions", "Full"]


class CountingCollector(CupelOtelTraceCollector):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.item_events = 0

    def record_item_event(self, event: Any) -> None:
        self.item_events += 1


def test_pipeline_builds_no_item_trace_events_for_the_collector(provider: TracerProvider) -> None:
    collector = CountingCollector(CupelVerbosity.FULL, tracer_provider=provider)
    assert collector.is_enabled
    assert collector.detail_level is TraceDetailLevel.STAGE
    u_pipeline().run_traced(every_reason_items(), ContextBudget(100, 60), collector)
    assert collector.item_events == 0
