"""Time KnapsackSlice on its target case: 1,000 candidates, target 100,000 tokens, bucket 100.

Usage: ``python benchmarks/bench_knapsack.py [--json] [--candidates 1000] [--target 100000]
[--bucket 100] [--repeat 21]``.

Reports median times of ``KnapsackSlice.slice`` with the numpy DP and with the pure-Python DP (numpy
hidden), of the two DP functions on their own, and the DP's memory: the bit-packed keep table's size
and the peak traced allocation of one numpy DP run. Both paths must select the same items.
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


def median_ms(run: Callable[[], object], repeat: int) -> float:
    run()  # warm-up: imports, caches
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


@contextmanager
def numpy_hidden() -> Iterator[None]:
    saved = knapsack_module._numpy_solver
    knapsack_module._numpy_solver = lambda: None  # type: ignore[assignment]
    try:
        yield
    finally:
        knapsack_module._numpy_solver = saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--target", type=int, default=100_000)
    parser.add_argument("--bucket", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=21, help="timed runs per measurement (median)")
    args = parser.parse_args(argv)

    solver = knapsack_module._numpy_solver()
    if solver is None:
        print("numpy is not installed: pip install 'pycupel[fast]'", file=sys.stderr)
        return 2

    scored = candidates(args.candidates)
    budget = ContextBudget(args.target, args.target)
    slicer = KnapsackSlice(bucket_size=args.bucket)
    capacity = args.target // args.bucket
    weights = [-(-entry.item.tokens // args.bucket) for entry in scored]
    values = [knapsack_module._scaled_value(entry.score) for entry in scored]

    fast = slicer.slice(scored, budget)
    with numpy_hidden():
        slow = slicer.slice(scored, budget)
    if [id(item) for item in fast] != [id(item) for item in slow]:
        print("numpy and pure-Python selections differ", file=sys.stderr)
        return 1

    slow_repeat = max(3, args.repeat // 3)
    numpy_slice_ms = median_ms(lambda: slicer.slice(scored, budget), args.repeat)
    with numpy_hidden():
        python_slice_ms = median_ms(lambda: slicer.slice(scored, budget), slow_repeat)
    numpy_dp_ms = median_ms(lambda: solver(weights, values, capacity), args.repeat)
    python_dp_ms = median_ms(lambda: knapsack_module._knapsack_python(weights, values, capacity), slow_repeat)

    rows = sum(1 for dw, dv in zip(weights, values, strict=True) if dv > 0 and dw <= capacity)
    keep_table_bytes = rows * ((capacity + 1 + 7) // 8)
    tracemalloc.start()
    solver(weights, values, capacity)
    _, peak_bytes = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    result: dict[str, Any] = {
        "candidates": args.candidates,
        "target_tokens": args.target,
        "bucket_size": args.bucket,
        "capacity": capacity,
        "dp_cells": args.candidates * (capacity + 1),
        "selected": len(fast),
        "selected_tokens": sum(item.tokens for item in fast),
        "numpy_slice_median_ms": round(numpy_slice_ms, 3),
        "python_slice_median_ms": round(python_slice_ms, 3),
        "numpy_dp_median_ms": round(numpy_dp_ms, 3),
        "python_dp_median_ms": round(python_dp_ms, 3),
        "keep_table_bytes": keep_table_bytes,
        "numpy_dp_peak_traced_bytes": peak_bytes,
        "repeat": args.repeat,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"KnapsackSlice: {args.candidates} candidates, target {args.target:,} tokens, bucket {args.bucket} "
        f"(capacity {capacity:,}, {result['dp_cells']:,} DP cells); "
        f"selects {len(fast)} items, {result['selected_tokens']:,} tokens"
    )
    print(f"  slice, numpy DP        median {numpy_slice_ms:9.2f} ms  ({args.repeat} runs)")
    print(f"  slice, pure-Python DP  median {python_slice_ms:9.2f} ms  ({slow_repeat} runs)")
    print(f"  DP only, numpy         median {numpy_dp_ms:9.2f} ms")
    print(f"  DP only, pure Python   median {python_dp_ms:9.2f} ms")
    print(f"  keep table (bit-packed) {keep_table_bytes:,} bytes; numpy DP peak traced {peak_bytes:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
