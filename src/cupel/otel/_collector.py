"""The OpenTelemetry trace collector (spec: OpenTelemetry Integration)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from types import TracebackType
from typing import TYPE_CHECKING

# The ignores keep `mypy --strict` clean where the optional extra is not installed.
from opentelemetry import context as otel_context  # type: ignore[import-not-found, unused-ignore]
from opentelemetry import trace  # type: ignore[import-not-found, unused-ignore]
from opentelemetry.trace import Status, StatusCode  # type: ignore[import-not-found, unused-ignore]

from cupel import __version__
from cupel.diagnostics.identity import item_id
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.diagnostics.trace import OverflowEvent, PipelineStage, TraceDetailLevel, TraceEvent
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem

if TYPE_CHECKING:
    from cupel.slicers._base import CountRequirementShortfall

__all__ = ["TRACER_NAME", "CollectorReuseError", "CupelOtelTraceCollector", "CupelVerbosity", "item_id"]

#: The instrumentation scope (tracer) name every cupel span is created under.
TRACER_NAME = "cupel"


class CupelVerbosity(StrEnum):
    """How much one run emits (spec: Verbosity Tiers). Each tier includes everything below it.

    The value is the tier name recorded as ``cupel.verbosity``.
    """

    #: Root and five stage spans with item counts only. Production-safe.
    STAGE_ONLY = "StageOnly"
    #: Plus one ``cupel.exclusion`` event per excluded item on its stage's span. Staging.
    STAGE_AND_EXCLUSIONS = "StageAndExclusions"
    #: Plus one ``cupel.item.included`` event per included item on the place span. Development only.
    FULL = "Full"

    @property
    def rank(self) -> int:
        """The tier's order: STAGE_ONLY 0 < STAGE_AND_EXCLUSIONS 1 < FULL 2."""
        return _RANKS[self]


_RANKS = {CupelVerbosity.STAGE_ONLY: 0, CupelVerbosity.STAGE_AND_EXCLUSIONS: 1, CupelVerbosity.FULL: 2}


class CollectorReuseError(CupelError, RuntimeError):
    """A :class:`CupelOtelTraceCollector` was given a second run (or a hook outside a run)."""

    # Tracebacks print the qualified name; show the public one.
    __module__ = "cupel.otel"


class _Phase(Enum):
    NEW = "new"
    RUNNING = "running"
    DONE = "done"


@dataclass(frozen=True, slots=True)
class _Exclusion:
    reason: str
    kind: str
    tokens: int
    at_ns: int
    item_id: str


@dataclass(frozen=True, slots=True)
class _Inclusion:
    kind: str
    tokens: int
    score: float
    item_id: str


@dataclass(frozen=True, slots=True)
class _Stage:
    stage: PipelineStage
    started_ns: int
    ended_ns: int
    items_in: int
    items_out: int
    exclusions: tuple[_Exclusion, ...]
    excluded_count: int


_ATTRIBUTE_TYPES = (str, bool, int, float)


def _checked_attributes(attributes: Mapping[str, object] | None) -> dict[str, str | bool | int | float]:
    if attributes is None:
        return {}
    if not isinstance(attributes, Mapping):
        raise CupelTypeError(f"CupelOtelTraceCollector.attributes must be a mapping, got {attributes!r}")
    checked: dict[str, str | bool | int | float] = {}
    for key, value in attributes.items():
        if not isinstance(key, str) or not isinstance(value, _ATTRIBUTE_TYPES):
            raise CupelTypeError(
                f"CupelOtelTraceCollector.attributes[{key!r}] must map a string to a str, bool, int or "
                f"float, got {value!r}"
            )
        checked[key] = value
    return checked


class CupelOtelTraceCollector:
    """Turns one pipeline run into a ``cupel.pipeline`` span with five ``cupel.stage.*`` children.

    Pass it to ``Pipeline.run_traced(items, budget, collector)``. Spans carry the stages' real start
    and end times; they are created when the Place stage completes, so a run yields a whole tree.
    ``tracer_provider`` defaults to the global provider; the tracer is named ``"cupel"``.
    ``attributes`` (for example ``cupel.policy.name``) are added to the root
    span, which also carries the run's outcome: target, tokens used, included and excluded counts.

    One collector records exactly one run: a second run raises :class:`CollectorReuseError`. A run
    that raises emits the stages completed so far under a root span with ERROR status and the exception
    recorded. Not thread-safe; like every trace collector it belongs to a single run.
    """

    #: Tells the pipeline not to build item-level TraceEvents: this collector records spans only.
    detail_level = TraceDetailLevel.STAGE

    def __init__(
        self,
        verbosity: CupelVerbosity | str = CupelVerbosity.STAGE_ONLY,
        tracer_provider: trace.TracerProvider | None = None,
        *,
        attributes: Mapping[str, object] | None = None,
    ) -> None:
        if not isinstance(verbosity, str):
            raise CupelTypeError(
                f"CupelOtelTraceCollector.verbosity must be a CupelVerbosity, got {verbosity!r}"
            )
        try:
            self._verbosity = CupelVerbosity(verbosity)
        except ValueError:
            allowed = ", ".join(repr(tier.value) for tier in CupelVerbosity)
            raise InvalidConfigurationError(
                f"CupelOtelTraceCollector.verbosity must be one of {allowed}, got {verbosity!r}"
            ) from None
        self._tracer = trace.get_tracer(TRACER_NAME, __version__, tracer_provider=tracer_provider)
        self._phase = _Phase.NEW
        self._parent_context: otel_context.Context | None = None
        self._run_start_ns = 0
        self._max_tokens = 0
        self._target_tokens = 0
        self._attributes = _checked_attributes(attributes)
        self._included_count = 0
        self._included_tokens = 0
        self._excluded_total = 0
        self._stages: list[_Stage] = []
        self._exclusions: dict[PipelineStage, list[_Exclusion]] = {}
        self._excluded_counts: dict[PipelineStage, int] = {}
        self._included: list[_Inclusion] = []

    def __repr__(self) -> str:
        return f"CupelOtelTraceCollector(verbosity={self._verbosity!r}, phase={self._phase.value!r})"

    @property
    def verbosity(self) -> CupelVerbosity:
        """The tier this collector emits."""
        return self._verbosity

    @property
    def finished(self) -> bool:
        """Whether this collector's run has been emitted (successfully or not)."""
        return self._phase is _Phase.DONE

    # TraceCollector -----------------------------------------------------------------------------

    @property
    def is_enabled(self) -> bool:
        return True

    def record_stage_event(self, event: TraceEvent) -> None:
        # Stage times and counts arrive through on_stage_complete, with wall-clock instants.
        return None

    def record_item_event(self, event: TraceEvent) -> None:
        return None

    # SelectionObserver --------------------------------------------------------------------------

    def on_run_start(self, items: Sequence[ContextItem], budget: ContextBudget) -> None:
        if self._phase is not _Phase.NEW:
            raise CollectorReuseError(
                "CupelOtelTraceCollector records exactly one pipeline run and has already been used; "
                "create a new collector for each run"
            )
        self._phase = _Phase.RUNNING
        # The span active now (say, a request's) becomes the parent of cupel.pipeline.
        self._parent_context = otel_context.get_current()
        self._run_start_ns = time.time_ns()
        self._max_tokens = budget.max_tokens
        self._target_tokens = budget.target_tokens

    def on_stage_complete(
        self, stage: PipelineStage, started_ns: int, ended_ns: int, items_in: int, items_out: int
    ) -> None:
        self._require_running()
        excluded_count = self._excluded_counts.get(stage, 0)
        if stage is PipelineStage.PLACE:
            # Items Place dropped while truncating entered the stage too; take the larger count so
            # this stays right whether or not the pipeline counts them in items_in.
            items_in = max(items_in, items_out + excluded_count)
        self._stages.append(
            _Stage(
                stage,
                started_ns,
                max(ended_ns, started_ns),
                items_in,
                items_out,
                tuple(self._exclusions.pop(stage, ())),
                excluded_count,
            )
        )
        if stage is PipelineStage.PLACE:
            self._emit(None)

    def on_excluded(
        self, stage: PipelineStage, item: ContextItem, score: float, reason: ExclusionReason
    ) -> None:
        self._require_running()
        self._excluded_counts[stage] = self._excluded_counts.get(stage, 0) + 1
        self._excluded_total += 1
        if self._verbosity.rank >= _RANKS[CupelVerbosity.STAGE_AND_EXCLUSIONS]:
            # The variant name itself, unknown variants included (spec: cupel.exclusion.reason).
            record = _Exclusion(reason.name, str(item.kind), item.tokens, time.time_ns(), item_id(item))
            self._exclusions.setdefault(stage, []).append(record)

    def on_included(self, item: ContextItem, score: float, reason: InclusionReason) -> None:
        self._require_running()
        self._included_count += 1
        self._included_tokens += item.tokens
        if self._verbosity is CupelVerbosity.FULL:
            self._included.append(_Inclusion(str(item.kind), item.tokens, float(score), item_id(item)))

    def on_shortfalls(self, shortfalls: Sequence[CountRequirementShortfall]) -> None:
        # The spec defines no attribute for shortfalls or overflow; cupel.* names are not invented here.
        return None

    def on_overflow(self, event: OverflowEvent) -> None:
        return None

    def on_run_end(self, error: BaseException | None) -> None:
        # A failed run still yields its tree: the stages completed so far under an ERROR root span.
        if error is not None and self._phase is _Phase.RUNNING:
            self._emit(error)

    # Context manager: emit a failed run's partial tree ------------------------------------------

    def __enter__(self) -> CupelOtelTraceCollector:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._phase is _Phase.RUNNING:
            self._emit(exc)

    # Emission -------------------------------------------------------------------------------------

    def _require_running(self) -> None:
        if self._phase is not _Phase.RUNNING:
            state = "has finished its run" if self._phase is _Phase.DONE else "has not started a run"
            raise CollectorReuseError(
                f"CupelOtelTraceCollector {state}; it records exactly one pipeline run from on_run_start "
                "to the Place stage. Create a new collector for each run"
            )

    def _emit(self, error: BaseException | None) -> None:
        self._phase = _Phase.DONE
        stages = self._stages
        start_ns = min([self._run_start_ns, *(record.started_ns for record in stages)])
        ends = [start_ns, *(record.ended_ns for record in stages)]
        if stages and stages[-1].stage is not PipelineStage.PLACE:
            # The run stopped early: the root lasts until now.
            ends.append(time.time_ns())
        end_ns = max(ends)
        root = self._tracer.start_span(
            "cupel.pipeline",
            context=self._parent_context,
            start_time=start_ns,
            attributes={
                **self._attributes,
                "cupel.budget.max_tokens": self._max_tokens,
                "cupel.budget.target_tokens": self._target_tokens,
                "cupel.verbosity": self._verbosity.value,
            },
        )
        if error is None:
            # The outcome exists only for a completed run.
            root.set_attribute("cupel.result.tokens", self._included_tokens)
            root.set_attribute("cupel.result.included_count", self._included_count)
            root.set_attribute("cupel.result.excluded_count", self._excluded_total)
        root_context = trace.set_span_in_context(root, self._parent_context)
        with_exclusions = self._verbosity.rank >= _RANKS[CupelVerbosity.STAGE_AND_EXCLUSIONS]
        for record in stages:
            span = self._tracer.start_span(
                f"cupel.stage.{record.stage.value.lower()}",
                context=root_context,
                start_time=record.started_ns,
                attributes={
                    "cupel.stage.name": record.stage.value.lower(),
                    "cupel.stage.item_count_in": record.items_in,
                    "cupel.stage.item_count_out": record.items_out,
                },
            )
            if with_exclusions and record.excluded_count:
                span.set_attribute("cupel.exclusion.count", record.excluded_count)
                for exclusion in record.exclusions:
                    span.add_event(
                        "cupel.exclusion",
                        {
                            "cupel.exclusion.reason": exclusion.reason,
                            "cupel.exclusion.item_kind": exclusion.kind,
                            "cupel.exclusion.item_tokens": exclusion.tokens,
                            "cupel.exclusion.item_id": exclusion.item_id,
                        },
                        timestamp=min(max(exclusion.at_ns, record.started_ns), record.ended_ns),
                    )
            if record.stage is PipelineStage.PLACE:
                # Recorded once Place is complete: the final window exists at its end.
                for inclusion in self._included:
                    span.add_event(
                        "cupel.item.included",
                        {
                            "cupel.item.kind": inclusion.kind,
                            "cupel.item.tokens": inclusion.tokens,
                            "cupel.item.score": inclusion.score,
                            "cupel.item.id": inclusion.item_id,
                        },
                        timestamp=record.ended_ns,
                    )
            span.end(end_time=record.ended_ns)
        if error is not None:
            if isinstance(error, Exception):
                # Older opentelemetry-api versions type record_exception for Exception only.
                root.record_exception(error, timestamp=end_ns, escaped=True)
            root.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))
        root.end(end_time=end_ns)
        self._stages = []
        self._exclusions = {}
        self._included = []
