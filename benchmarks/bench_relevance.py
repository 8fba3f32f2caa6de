"""RelevanceScorer: BM25 scoring, and a selection with a query against the same selection without one.

Usage: ``python benchmarks/bench_relevance.py [--json] [--sizes 1000,10000,100000] [--repeat 5]``.
Items of 30 to 60 words drawn from a 5,000-word vocabulary (Zipf-like, seeded); the query is eight
words of the same vocabulary. Cases, interleaved within each repeat:

- ``score``: ``RelevanceScorer(query).score_all(items)`` (target: 10k items in at most 30 ms);
- ``select``: ``Pipeline(Recency 1 + Relevance 2, GreedySlice).run(items, budget, query=query)``;
- ``select, no query``: the same pipeline and items without a query (relevance scores 0.0 and is not
  computed), the peer the ``select`` ratio is taken against.

The budget is a tenth of the items' tokens. Medians over the repeats, and the ratio of ``select`` to
``select, no query`` within each repeat (median [min-max]). The other half of the relevance benchmark,
``select_messages`` with the automatic query of the latest user message against the same selection
without a query, waits for ``select_messages`` to take a query.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    GreedySlice,
    Pipeline,
    RecencyScorer,
    RelevanceScorer,
)


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 9))))
    return sorted(words)


def make_items(count: int, seed: int = 0) -> tuple[list[ContextItem], str]:
    rng = random.Random(seed)
    vocabulary = _vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    start = datetime(2024, 1, 1, tzinfo=UTC)
    items = []
    for index in range(count):
        words = rng.choices(vocabulary, weights, k=rng.randint(30, 60))
        content = " ".join(words).capitalize() + "."
        items.append(
            ContextItem(content, tokens=len(words) * 4 // 3, timestamp=start + timedelta(seconds=index))
        )
    query = " ".join(rng.choices(vocabulary[50:2000], k=8))
    return items, query


def _time(function: Callable[[], object]) -> float:
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def _cases(
    pipeline: Pipeline, items: list[ContextItem], budget: ContextBudget, query: str
) -> dict[str, Callable[[], object]]:
    scorer = RelevanceScorer(query)
    return {
        "score": lambda: scorer.score_all(items),
        "select": lambda: pipeline.run(items, budget, query=query),
        "select, no query": lambda: pipeline.run(items, budget),
    }


def run(sizes: list[int], repeat: int) -> dict[str, object]:
    pipeline = Pipeline(
        CompositeScorer([(RecencyScorer(), 1.0), (RelevanceScorer(), 2.0)]),
        GreedySlice(),
        ChronologicalPlacer(),
    )
    results: dict[str, object] = {}
    for size in sizes:
        items, query = make_items(size)
        total = sum(item.tokens for item in items)
        budget = ContextBudget(total // 10, total // 10)
        cases = _cases(pipeline, items, budget, query)
        times: dict[str, list[float]] = {name: [] for name in cases}
        for function in cases.values():
            function()  # warm up
        for _ in range(repeat):
            for name, function in cases.items():
                times[name].append(_time(function))
        ratios = [a / b for a, b in zip(times["select"], times["select, no query"], strict=True)]
        results[str(size)] = {
            "median_ms": {name: statistics.median(values) * 1000 for name, values in times.items()},
            "select_vs_no_query": {
                "median": statistics.median(ratios),
                "min": min(ratios),
                "max": max(ratios),
            },
        }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results = run([int(size) for size in args.sizes.split(",")], args.repeat)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    for size, result in results.items():
        assert isinstance(result, dict)
        medians = ", ".join(f"{name} {value:.1f} ms" for name, value in result["median_ms"].items())
        ratio = result["select_vs_no_query"]
        print(
            f"{int(size):>7,} items: {medians}; select / no query "
            f"{ratio['median']:.2f}x [{ratio['min']:.2f}-{ratio['max']:.2f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
