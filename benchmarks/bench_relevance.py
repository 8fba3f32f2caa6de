"""RelevanceScorer: BM25 scoring, and a selection with a query against the same selection without one.

Usage: ``python benchmarks/bench_relevance.py [--json] [--sizes 1000,10000,100000] [--repeat 5]``.
Items of 30 to 60 words drawn from a 5,000-word vocabulary (Zipf-like, seeded); the query is eight
words of the same vocabulary. Cases, interleaved within each repeat:

- ``score``: ``RelevanceScorer(query).score_all(items)`` (target: 10k items in at most 30 ms, with the
  ``fast`` extra's paths, which the output says are on or off);
- ``select``: ``Pipeline(Recency 1 + Relevance 2, GreedySlice).run(items, budget, query=query)``;
- ``select, no query``: the same pipeline and items without a query (relevance scores 0.0 and is not
  computed), the peer the ``select`` ratio is taken against;
- ``select_messages``: a chat transcript of as many messages drawn alike (a system message, then
  alternating user and assistant messages; the last user message asks with eight words of the
  vocabulary), trimmed by ``select_messages`` with the ``chat`` preset (its relevance term and the automatic
  query, the latest user message);
- ``select_messages, no query``: the same call with ``query=None``, its peer.

The budget is a tenth of the items' tokens (the transcript's: 32,000 tokens at most). Medians over
the repeats, and the ratios of ``select`` to ``select, no query`` and of ``select_messages`` to
``select_messages, no query`` within each repeat (median [min-max]).

The LoCoMo half (skipped with ``--no-chat``; on when the LoCoMo dev split is beside the repository at
``../shared/data/locomo/locomo-dev.json``): each dev conversation (~400-700 turns) with its first
question as the last user message, cl100k tokens (the heuristic counter without tiktoken), budget 2,000.
``select_messages(messages, 2000)`` (the default: the ``chat`` preset, ``query="auto"``) against
``select_messages(messages, 2000, query=None)``, both cold (no session), interleaved; target: at most 2x.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from cupel import (
    ChronologicalPlacer,
    CompositeScorer,
    ContextBudget,
    ContextItem,
    GreedySlice,
    Pipeline,
    RecencyScorer,
    RelevanceScorer,
    _numeric,
)
from cupel.chat import select_messages
from cupel.scorers.terms import term_search


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


def _transcript(items: list[ContextItem], query: str) -> list[dict[str, str]]:
    """The items' texts as a chat: a system message, alternating user and assistant messages, and
    the query as the last user message."""
    messages = [{"role": "system", "content": "You are a careful assistant."}]
    for index, item in enumerate(items[1:-1]):
        messages.append({"role": "user" if index % 2 == 0 else "assistant", "content": item.content})
    if messages[-1]["role"] == "user":
        messages.append({"role": "assistant", "content": items[-1].content})
    messages.append({"role": "user", "content": query.capitalize() + "?"})
    return messages


def _cases(
    pipeline: Pipeline, items: list[ContextItem], budget: ContextBudget, query: str
) -> dict[str, Callable[[], object]]:
    scorer = RelevanceScorer(query)
    messages = _transcript(items, query)
    chat_budget = min(budget.max_tokens, 32_000)
    return {
        "score": lambda: scorer.score_all(items),
        "select": lambda: pipeline.run(items, budget, query=query),
        "select, no query": lambda: pipeline.run(items, budget),
        "select_messages": lambda: select_messages(messages, chat_budget, "chat"),
        "select_messages, no query": lambda: select_messages(messages, chat_budget, "chat", query=None),
    }


def _interleaved(cases: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Each case's times over ``repeat`` rounds, the cases interleaved within a round, after a warm-up."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for function in cases.values():
        function()  # warm up
    for _ in range(repeat):
        for name, function in cases.items():
            times[name].append(_time(function))
    return times


def _ratios(times: list[float], peers: list[float]) -> dict[str, float]:
    ratios = [a / b for a, b in zip(times, peers, strict=True)]
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


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
        times = _interleaved(_cases(pipeline, items, budget, query), repeat)
        results[str(size)] = {
            "median_ms": {name: statistics.median(values) * 1000 for name, values in times.items()},
            "select_vs_no_query": _ratios(times["select"], times["select, no query"]),
            "select_messages_vs_no_query": _ratios(
                times["select_messages"], times["select_messages, no query"]
            ),
        }
    return results


LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def run_chat(path: Path, repeat: int) -> dict[str, object]:
    """``select_messages`` with the automatic query against no query, per LoCoMo dev conversation."""
    from cupel.eval.loaders import load_locomo
    from cupel.tokens import counter_from_name

    try:
        counter: Any = counter_from_name("cl100k_base")
    except Exception:  # without the tiktoken extra: the default counter
        counter = None
    first: dict[str, list[dict[str, Any]]] = {}
    for case in load_locomo(path):
        conversation = case.id.rsplit("-q", 1)[0]
        if conversation not in first and case.messages is not None:
            first[conversation] = [dict(message) for message in case.messages]
    results: dict[str, object] = {}
    for conversation, messages in first.items():
        cases: dict[str, Callable[[], object]] = {
            "auto query": partial(select_messages, messages, 2000, counter=counter),
            "no query": partial(select_messages, messages, 2000, counter=counter, query=None),
        }
        times = _interleaved(cases, repeat)
        results[conversation] = {
            "messages": len(messages),
            "median_ms": {name: statistics.median(values) * 1000 for name, values in times.items()},
            "auto_vs_no_query": _ratios(times["auto query"], times["no query"]),
        }
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--locomo", default=str(LOCOMO), help="the LoCoMo dev split (the LoCoMo half)")
    parser.add_argument("--no-chat", action="store_true", help="skip the LoCoMo half")
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    results = run(sizes, args.repeat)
    dev = {} if args.no_chat or not Path(args.locomo).exists() else run_chat(Path(args.locomo), args.repeat)
    fast = {
        "numpy": _numeric.numpy_module() is not None,
        "ahocorasick_rs": term_search(["term"]) is not None,
    }
    if args.json:
        print(json.dumps({**results, "locomo": dev, "fast_paths": fast}, indent=2))
        return 0
    print("fast paths: " + ", ".join(f"{name} {'on' if on else 'off'}" for name, on in fast.items()))
    for size, result in results.items():
        assert isinstance(result, dict)
        medians = ", ".join(f"{name} {value:.1f} ms" for name, value in result["median_ms"].items())
        ratio = result["select_vs_no_query"]
        chat = result["select_messages_vs_no_query"]
        print(
            f"{int(size):>7,} items: {medians}; select / no query "
            f"{ratio['median']:.2f}x [{ratio['min']:.2f}-{ratio['max']:.2f}]; select_messages / no query "
            f"{chat['median']:.2f}x [{chat['min']:.2f}-{chat['max']:.2f}]"
        )
    for conversation, result in dev.items():
        assert isinstance(result, dict)
        medians = ", ".join(f"{name} {value:.1f} ms" for name, value in result["median_ms"].items())
        ratio = result["auto_vs_no_query"]
        print(
            f"select_messages {conversation} ({result['messages']} messages): {medians}; auto / no query "
            f"{ratio['median']:.2f}x [{ratio['min']:.2f}-{ratio['max']:.2f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
