"""Time ``Pipeline.run`` on synthetic candidate sets of 1,000 / 10,000 / 100,000 items.

Usage: ``python benchmarks/bench_pipeline.py [--json] [--sizes 1000,10000] [--repeat 7]``.
Reports the median of repeated runs for two pipelines:
Composite(Recency 2, Priority 1, Kind 1) + GreedySlice + ChronologicalPlacer, and
Scaled(Frequency) + GreedySlice + UShapedPlacer.
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
    FrequencyScorer,
    GreedySlice,
    KindScorer,
    Pipeline,
    PriorityScorer,
    RecencyScorer,
    ScaledScorer,
    UShapedPlacer,
)

PIPELINES = {
    "composite+greedy+chronological": Pipeline(
        CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
        GreedySlice(),
        ChronologicalPlacer(),
    ),
    "scaled(frequency)+greedy+u-shaped": Pipeline(
        ScaledScorer(FrequencyScorer()), GreedySlice(), UShapedPlacer()
    ),
}


def median_ms(pipeline: Pipeline, size: int, repeat: int) -> float:
    items = candidates(size)
    budget = ContextBudget(size * 60, size * 50)
    pipeline.run(items, budget)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        pipeline.run(items, budget)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    results = {
        name: {size: median_ms(pipeline, size, args.repeat if size < 100_000 else 5) for size in sizes}
        for name, pipeline in PIPELINES.items()
    }
    if args.json:
        print(json.dumps({name: {str(k): v for k, v in row.items()} for name, row in results.items()}))
        return 0
    header = "pipeline".ljust(36) + "".join(f"N={size:>9,}".rjust(14) for size in sizes)
    print(header)
    print("-" * len(header))
    for name, row in results.items():
        print(name.ljust(36) + "".join(f"{row[size]:>11.2f} ms" for size in sizes))
    if 10_000 in sizes and 100_000 in sizes:
        for name, row in results.items():
            print(f"{name}: 100k/10k ratio {row[100_000] / row[10_000]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
