"""EvalResult: every run of an evaluation, with aggregates per selector, budget, metric and tag."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cupel.errors import InvalidConfigurationError
from cupel.eval.cases import EvalCase
from cupel.eval.metrics import METRICS, CaseMetrics
from cupel.eval.stats import Bootstrap, Summary

__all__ = ["BASELINES", "EvalResult", "Run"]

BASELINES: tuple[str, ...] = ("recent", "bm25", "random", "oracle")
"""Baseline selectors in every result: most-recent window, BM25-greedy against the case's query,
seeded random, oracle upper bound."""


@dataclass(frozen=True, slots=True)
class Run:
    """One selector's metrics on one case at one budget (``budget`` is the budget's max tokens)."""

    case: str
    selector: str
    budget: int
    metrics: CaseMetrics


@dataclass(frozen=True)
class EvalResult:
    """Every run, plus aggregates. ``summary(selector, budget, metric, tag=None)`` -> :class:`Summary`."""

    policies: tuple[str, ...]
    budgets: tuple[int, ...]
    cases: tuple[EvalCase, ...]
    runs: tuple[Run, ...]
    seed: int = 0
    resamples: int = 1000
    _bootstrap: Bootstrap = field(init=False, repr=False, compare=False)
    _index: dict[tuple[str, int], list[Run]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_bootstrap", Bootstrap(self.resamples, self.seed))
        index: dict[tuple[str, int], list[Run]] = {}
        for run in self.runs:
            index.setdefault((run.selector, run.budget), []).append(run)
        object.__setattr__(self, "_index", index)

    @property
    def selectors(self) -> tuple[str, ...]:
        return (*self.policies, *BASELINES)

    @property
    def tags(self) -> tuple[str, ...]:
        """Every case tag, in first-seen order."""
        return tuple(dict.fromkeys(tag for case in self.cases for tag in case.tags))

    @property
    def task_types(self) -> tuple[str, ...]:
        """The cases' first tags (their task type), in first-seen order."""
        return tuple(dict.fromkeys(case.tags[0] for case in self.cases if case.tags))

    def runs_for(self, selector: str, budget: int, tag: str | None = None) -> list[Run]:
        runs = self._index.get((selector, budget), [])
        if tag is None:
            return runs
        tagged = {case.id for case in self.cases if tag in case.tags}
        return [run for run in runs if run.case in tagged]

    def summary(self, selector: str, budget: int, metric: str, tag: str | None = None) -> Summary:
        if metric not in METRICS:
            raise InvalidConfigurationError(f"metric must be one of {', '.join(METRICS)}, got {metric!r}")
        values = [
            value
            for run in self.runs_for(selector, budget, tag)
            if (value := run.metrics.value(metric)) is not None
        ]
        return self._bootstrap.summarise(values)

    def share_of_oracle(self, selector: str, budget: int, tag: str | None = None) -> float | None:
        """Mean gold recall (by items) as a share of the oracle's mean at the same budget."""
        mean = self.summary(selector, budget, "recall_items", tag).mean
        best = self.summary("oracle", budget, "recall_items", tag).mean
        return None if mean is None or not best else mean / best

    def errors(self, selector: str, budget: int) -> int:
        return sum(run.metrics.error is not None for run in self.runs_for(selector, budget))

    def to_dict(self, *, include_runs: bool = True, timings: bool = True) -> dict[str, Any]:
        """The JSON report: settings, summaries per selector and budget (and per tag), and every run."""
        metrics = [metric for metric in METRICS if timings or metric != "time_ms"]

        def block(selector: str, budget: int, tag: str | None) -> dict[str, Any]:
            data: dict[str, Any] = {m: self.summary(selector, budget, m, tag).to_dict() for m in metrics}
            data["share_of_oracle"] = self.share_of_oracle(selector, budget, tag)
            return data

        data: dict[str, Any] = {
            "cases": len(self.cases),
            "tags": {tag: sum(tag in case.tags for case in self.cases) for tag in self.tags},
            "budgets": list(self.budgets),
            "policies": list(self.policies),
            "baselines": list(BASELINES),
            "seed": self.seed,
            "resamples": self.resamples,
            "summary": {
                selector: {
                    str(budget): {**block(selector, budget, None), "errors": self.errors(selector, budget)}
                    for budget in self.budgets
                }
                for selector in self.selectors
            },
            "by_tag": {
                tag: {
                    selector: {str(budget): block(selector, budget, tag) for budget in self.budgets}
                    for selector in self.selectors
                }
                for tag in self.tags
            },
        }
        if include_runs:
            data["runs"] = [
                {
                    "case": run.case,
                    "selector": run.selector,
                    "budget": run.budget,
                    **{
                        key: value
                        for key, value in run.metrics.to_dict().items()
                        if timings or key != "time_ms"
                    },
                }
                for run in self.runs
            ]
        return data
