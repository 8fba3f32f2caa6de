"""Selection quality you can measure: labelled cases, metrics, baselines and ``evaluate``.

``evaluate(cases, policies, budgets)`` runs each policy and the baselines (most-recent window, seeded
random, oracle knapsack) on every case and reports gold-evidence recall and friends with bootstrap
confidence intervals. ``shipped_cases()`` are the hand-written cases; ``generate_cases`` makes synthetic
sessions with planted dependencies; ``load_longmemeval`` and ``load_locomo`` read those benchmarks'
layouts. See docs/eval.md.
"""

from cupel.eval.cases import (
    PROVIDERS,
    CaseFormatError,
    EvalCase,
    case_from_dict,
    load_cases,
    read_cases,
    write_cases,
)
from cupel.eval.evaluate import evaluate
from cupel.eval.metrics import METRICS, CaseMetrics, case_metrics
from cupel.eval.result import BASELINES, EvalResult, Run
from cupel.eval.stats import Summary

__all__ = [
    "BASELINES",
    "METRICS",
    "PROVIDERS",
    "CaseFormatError",
    "CaseMetrics",
    "EvalCase",
    "EvalResult",
    "Run",
    "Summary",
    "case_from_dict",
    "case_metrics",
    "evaluate",
    "load_cases",
    "read_cases",
    "write_cases",
]
