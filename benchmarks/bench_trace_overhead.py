"""Compare ``Pipeline.run`` with ``run_traced(..., NullTraceCollector())`` and with full diagnostics.

Usage: ``python benchmarks/bench_trace_overhead.py [--size 10000] [--repeat 31] [--json]``.
The disabled path must stay within noise of ``run`` (< 3%): the pipeline builds no event when
``collector.is_enabled`` is false. Runs are interleaved so drift in machine load affects both alike.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import candidates

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    DiagnosticTraceCollector,
    GreedySlice,
    KindScorer,
    NullTraceCollector,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=31)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pipeline = Pipeline(
        CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
        GreedySlice(),
        ChronologicalPlacer(),
    )
    items = candidates(args.size)
    budget = ContextBudget(args.size * 60, args.size * 50)
    null = NullTraceCollector()
    variants = {
        "run": lambda: pipeline.run(items, budget),
        "run_traced(null)": lambda: pipeline.run_traced(items, budget, null),
        "run_traced(stage)": lambda: pipeline.run_traced(items, budget, DiagnosticTraceCollector()),
        "dry_run (item level)": lambda: pipeline.dry_run(items, budget),
    }
    samples: dict[str, list[float]] = {name: [] for name in variants}
    for run in variants.values():
        run()  # warm-up
    for _ in range(args.repeat):
        for name, run in variants.items():
            start = time.perf_counter()
            run()
            samples[name].append((time.perf_counter() - start) * 1000)
    medians = {name: statistics.median(values) for name, values in samples.items()}
    base = medians["run"]
    if args.json:
        print(json.dumps({"size": args.size, "median_ms": medians}))
        return 0
    print(f"N={args.size:,}, median of {args.repeat} interleaved runs")
    for name, value in medians.items():
        print(f"{name:<22}{value:>10.2f} ms  {100 * (value / base - 1):+6.1f}% vs run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
