"""Time ``Pipeline.run`` and ``Pipeline.dry_run`` on synthetic candidate sets up to 1,000,000 items.

Usage: ``python benchmarks/bench_pipeline.py [--json] [--sizes 1000,10000,100000,1000000] [--repeat 7]
[--no-numpy] [--no-peaks] [--pipeline composite]``.

For each size and each of two pipelines -- Composite(Recency 2, Priority 1, Kind 1) + GreedySlice +
ChronologicalPlacer, and Scaled(Frequency) + GreedySlice + UShapedPlacer -- reports the medians (and
ranges) of ``run``, ``dry_run`` and ``dry_run`` followed by reading every report entry ("read":
a report's events and entries are built when first read, so this is what a caller that looks at all
of it pays), measured interleaved, their ratios to ``run``, and the peak traced allocation
(tracemalloc) of one ``run`` and one ``dry_run``, with the garbage collector in its normal state.
Growth ratios (100k/10k, 1M/100k) follow. ``--no-numpy`` runs without the optional numpy paths.
Only public API is used, so ``PYTHONPATH=<older checkout>/src`` measures an older version.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _pipelines() -> dict[str, Any]:
    from cupel import (
        ChronologicalPlacer,
        CompositeScorer,
        FrequencyScorer,
        GreedySlice,
        KindScorer,
        Pipeline,
        PriorityScorer,
        RecencyScorer,
        ScaledScorer,
        UShapedPlacer,
    )

    return {
        "composite+greedy+chronological": Pipeline(
            CompositeScorer([(RecencyScorer(), 2), (PriorityScorer(), 1), (KindScorer(), 1)]),
            GreedySlice(),
            ChronologicalPlacer(),
        ),
        "scaled(frequency)+greedy+u-shaped": Pipeline(
            ScaledScorer(FrequencyScorer()), GreedySlice(), UShapedPlacer()
        ),
    }


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and process CPU milliseconds of one call."""
    started, started_cpu = time.perf_counter(), time.process_time()
    run()
    return (time.perf_counter() - started) * 1000, (time.process_time() - started_cpu) * 1000


def _peak_bytes(run: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _read_all(report: Any) -> int:
    """Touch every event and every entry's fields, keeping nothing."""
    touched = len(report.events)
    for entry in report.included:
        touched += entry.item.tokens + (entry.score is not None) + (entry.reason is not None)
    for entry in report.excluded:
        touched += entry.item.tokens + (entry.score is not None) + (entry.reason is not None)
    return touched


def measure(pipeline: Any, items: list[Any], budget: Any, repeat: int, peaks: bool) -> dict[str, Any]:
    variants = {
        "run": lambda: pipeline.run(items, budget),
        "dry_run": lambda: pipeline.dry_run(items, budget),
        "dry_run_read": lambda: _read_all(pipeline.dry_run(items, budget)),
    }
    for run in variants.values():
        run()  # warm-up
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, run in variants.items():
            samples[name].append(_timed(run))
    row: dict[str, Any] = {}
    for name, pairs in samples.items():
        wall = [pair[0] for pair in pairs]
        row[f"{name}_median_ms"] = round(statistics.median(wall), 3)
        row[f"{name}_range_ms"] = [round(min(wall), 3), round(max(wall), 3)]
        # Process CPU time: steadier than wall-clock on a machine shared with other work.
        row[f"{name}_cpu_median_ms"] = round(statistics.median(pair[1] for pair in pairs), 3)
    row["dry_run_to_run"] = round(row["dry_run_median_ms"] / row["run_median_ms"], 2)
    row["dry_run_to_run_cpu"] = round(row["dry_run_cpu_median_ms"] / row["run_cpu_median_ms"], 2)
    row["dry_run_read_to_run"] = round(row["dry_run_read_median_ms"] / row["run_median_ms"], 2)
    if peaks:
        row["run_peak_bytes"] = _peak_bytes(variants["run"])
        row["dry_run_peak_bytes"] = _peak_bytes(variants["dry_run"])
        row["peak_ratio"] = round(row["dry_run_peak_bytes"] / row["run_peak_bytes"], 2)
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--sizes", default="1000,10000,100000,1000000")
    parser.add_argument("--repeat", type=int, default=7, help="interleaved rounds below 100k (fewer above)")
    parser.add_argument("--no-numpy", action="store_true", help="disable the optional numpy paths")
    parser.add_argument("--no-peaks", action="store_true", help="skip the tracemalloc measurements")
    parser.add_argument("--pipeline", help="measure only the pipeline whose name starts with this")
    args = parser.parse_args()
    if args.no_numpy:
        os.environ["CUPEL_NO_NUMPY"] = "1"  # read when cupel first looks for numpy

    from _data import candidates

    from cupel import ContextBudget

    pipelines = {
        name: pipeline
        for name, pipeline in _pipelines().items()
        if args.pipeline is None or name.startswith(args.pipeline)
    }
    sizes = [int(size) for size in args.sizes.split(",")]
    results: dict[str, dict[str, Any]] = {name: {} for name in pipelines}
    for size in sizes:
        items = candidates(size)
        budget = ContextBudget(size * 60, size * 50)
        repeat = args.repeat if size < 100_000 else max(3, args.repeat // 2) if size < 1_000_000 else 3
        for name, pipeline in pipelines.items():
            results[name][str(size)] = measure(pipeline, items, budget, repeat, not args.no_peaks)
        del items
    growth: dict[str, dict[str, float]] = {}
    for name, rows in results.items():
        for small, large in (("10000", "100000"), ("100000", "1000000")):
            if small in rows and large in rows:
                for clock in ("", "_cpu"):
                    ratio = rows[large][f"run{clock}_median_ms"] / rows[small][f"run{clock}_median_ms"]
                    growth.setdefault(name, {})[f"run{clock}_{large}/{small}"] = round(ratio, 1)
    if args.json:
        print(json.dumps({"numpy": not args.no_numpy, "results": results, "growth": growth}, indent=2))
        return 0
    print(f"numpy paths: {'off' if args.no_numpy else 'on'}; medians of interleaved run/dry_run/read rounds")
    for name, rows in results.items():
        print(name)
        for size, row in rows.items():
            peak = (
                f"   peak run {row['run_peak_bytes'] / 1e6:8.1f} MB  dry_run "
                f"{row['dry_run_peak_bytes'] / 1e6:8.1f} MB  ({row['peak_ratio']:.2f}x)"
                if "peak_ratio" in row
                else ""
            )
            print(
                f"  N={int(size):>9,}  run {row['run_median_ms']:10.2f} ms  dry_run "
                f"{row['dry_run_median_ms']:10.2f} ms  ({row['dry_run_to_run']:.2f}x, "
                f"CPU {row['dry_run_to_run_cpu']:.2f}x)  + read {row['dry_run_read_median_ms']:10.2f} ms "
                f"({row['dry_run_read_to_run']:.2f}x){peak}"
            )
        for label, ratio in growth.get(name, {}).items():
            print(f"  growth {label}: {ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
