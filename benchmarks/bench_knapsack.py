"""Time KnapsackSlice on its target case: 1,000 and 10,000 candidates, target 100,000 tokens, bucket 100.

Usage: ``python benchmarks/bench_knapsack.py [--json] [--candidates 1000,10000] [--target 100000]
[--bucket 100] [--repeat 21]``.

Reports, per candidate count, the median time of ``KnapsackSlice.slice`` with the numpy DP and with
the pure-Python DP (numpy hidden), measured interleaved, and the peak traced allocation of one
numpy-path call. Both paths must select the same items. The script uses only what every version of
the slicer has, so running it against an older checkout (``PYTHONPATH=<old>/src``) gives the
before/after ratio.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from cupel import ContextBudget, ContextItem, ScoredItem
from cupel.slicers import KnapsackSlice
from cupel.slicers import knapsack as knapsack_module


def candidates(count: int, seed: int = 2024) -> list[ScoredItem]:
    """Score-sorted candidates of 20-400 tokens, as the pipeline's Sort stage would pass them."""
    rng = random.Random(seed)
    items = [
        ScoredItem(ContextItem(f"item-{index}", rng.randint(20, 400)), rng.random()) for index in range(count)
    ]
    return sorted(items, key=lambda entry: entry.score, reverse=True)


@contextmanager
def numpy_hidden() -> Iterator[None]:
    saved = knapsack_module._numpy_solver
    knapsack_module._numpy_solver = lambda: None  # type: ignore[assignment]
    try:
        yield
    finally:
        knapsack_module._numpy_solver = saved


def without_numpy(run: Callable[[], object]) -> Callable[[], object]:
    def hidden() -> object:
        with numpy_hidden():
            return run()

    return hidden


def interleaved_medians(variants: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median wall-clock and process CPU milliseconds per variant (keys ``name`` and ``name_cpu``);
    one round runs every variant once, so load drift hits all alike."""
    samples: dict[str, list[float]] = {key: [] for name in variants for key in (name, f"{name}_cpu")}
    for run in variants.values():
        run()  # warm-up: imports, caches
    for _ in range(repeat):
        for name, run in variants.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            run()
            samples[name].append((time.perf_counter() - started) * 1000)
            samples[f"{name}_cpu"].append((time.process_time() - started_cpu) * 1000)
    return {name: statistics.median(values) for name, values in samples.items()}


def measure(count: int, target: int, bucket: int, repeat: int) -> dict[str, Any]:
    scored = candidates(count)
    budget = ContextBudget(target, target)
    slicer = KnapsackSlice(bucket_size=bucket)
    fast = slicer.slice(scored, budget)
    with numpy_hidden():
        slow = slicer.slice(scored, budget)
    if [id(item) for item in fast] != [id(item) for item in slow]:
        raise SystemExit(f"numpy and pure-Python selections differ at {count} candidates")
    medians = interleaved_medians(
        {
            "numpy": lambda: slicer.slice(scored, budget),
            "python": without_numpy(lambda: slicer.slice(scored, budget)),
        },
        repeat,
    )
    tracemalloc.start()
    slicer.slice(scored, budget)
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "candidates": count,
        "capacity": target // bucket,
        "dp_cells": count * (target // bucket + 1),
        "selected": len(fast),
        "selected_tokens": sum(item.tokens for item in fast),
        "numpy_slice_median_ms": round(medians["numpy"], 3),
        "python_slice_median_ms": round(medians["python"], 3),
        # Process CPU time: steadier than wall-clock on a machine shared with other work.
        "numpy_slice_cpu_median_ms": round(medians["numpy_cpu"], 3),
        "python_slice_cpu_median_ms": round(medians["python_cpu"], 3),
        "numpy_slice_peak_traced_bytes": peak_bytes,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--candidates", default="1000,10000", help="comma-separated candidate counts")
    parser.add_argument("--target", type=int, default=100_000)
    parser.add_argument("--bucket", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=21, help="interleaved rounds per size (median)")
    args = parser.parse_args(argv)

    if knapsack_module._numpy_solver() is None:
        print("numpy is not installed: pip install 'pycupel[fast]'", file=sys.stderr)
        return 2
    counts = [int(count) for count in args.candidates.split(",")]
    rows = [
        measure(count, args.target, args.bucket, args.repeat if count < 5000 else max(5, args.repeat // 3))
        for count in counts
    ]
    if args.json:
        print(json.dumps({"target_tokens": args.target, "bucket_size": args.bucket, "sizes": rows}, indent=2))
        return 0
    print(f"KnapsackSlice: target {args.target:,} tokens, bucket {args.bucket}; medians of interleaved runs")
    for row in rows:
        numpy_ms, python_ms = row["numpy_slice_median_ms"], row["python_slice_median_ms"]
        print(
            f"  {row['candidates']:>7,} candidates ({row['dp_cells']:,} DP cells, "
            f"selects {row['selected']}): numpy {numpy_ms:8.2f} ms   pure Python {python_ms:8.2f} ms   "
            f"numpy peak {row['numpy_slice_peak_traced_bytes'] / 1e6:.2f} MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
