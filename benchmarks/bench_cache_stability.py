"""Prompt-cache stability: StableWindow against trimming afresh every turn, over long agent sessions.

Usage: ``python benchmarks/bench_cache_stability.py [--json] [--turns 300] [--sessions 3]
[--budgets 16000,32000,64000,128000] [--repeat 40]``.

Sessions: a 2,000-token system prompt (instructions and tool schemas), then one model call per turn.
Most turns append the previous call's tool calls (one to three, parallel) and their results; about one
in seven appends the assistant's answer and the user's next message. Sizes are drawn per message
(log-normal, seeded): user messages 20-2,000 tokens, assistant text 30-800, tool arguments 10-300, tool
results 40-8,000 (median about 350). Every approach is charged by the same counter (cupel's
heuristic, ``4 + ceil(len / 4)`` per text message).

Per approach and budget: mean prompt tokens per turn; **cacheable share** (tokens of each turn's prompt
that repeat the previous turn's prompt from its start, over all prompt tokens); prefix breaks (turns
whose prompt does not start with the whole previous prompt: StableWindow's compactions); mean share of
the budget used; overflow turns (the latest turn alone exceeds the budget, so "turns" raises
``BudgetOverflowError``; left out of the other columns); and the input cost at $3 per million tokens
with cached tokens at 10% (Anthropic's cache-read price; cache writes are not charged extra here), also
relative to sending every prompt uncached. Approaches: ``StableWindow`` (default marks 1.0/0.6, "turns"
and "last"), ``select_messages`` each turn without state, and LangChain ``trim_messages(strategy="last")``
each turn.

Overhead: on a 1,000-message session (budget 32,000), the time of each of the last ``--repeat`` turns'
``StableWindow.select`` (in memory, and resumed from ``to_dict()`` as a stateless service would) against
one ``select_messages`` call on the same transcript, interleaved turn by turn; ratios median [min-max],
appending and compacting turns apart. ``--sessions 0`` measures only this.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from cupel import BudgetOverflowError
from cupel.chat import StableWindow, message_token_counts, select_messages

PRICE = 3.0 / 1_000_000
CACHED = 0.1
SYSTEM_TOKENS = 2_000
WORDS = [
    "build",
    "error",
    "src/app.py",
    "def",
    "return",
    "config",
    "the",
    "test",
    "failed",
    "retry",
    "x",
    "=",
    "42",
]


def _text(rng: random.Random, tokens: int) -> str:
    """About ``tokens`` heuristic tokens of word-like text."""
    chars = max(1, tokens * 4)
    words: list[str] = []
    length = 0
    while length < chars:
        word = rng.choice(WORDS)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)[:chars]


def _size(rng: random.Random, median: float, low: int, high: int) -> int:
    return int(min(high, max(low, rng.lognormvariate(math.log(median), 0.9))))


def session(turns: int, seed: int) -> tuple[list[dict[str, Any]], list[int]]:
    """A simulated agent session and the transcript length at each model call."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = [{"role": "system", "content": _text(rng, SYSTEM_TOKENS)}]
    messages.append({"role": "user", "content": _text(rng, _size(rng, 120, 20, 2_000))})
    ends = [len(messages)]
    serial = 0
    while len(ends) < turns:
        if rng.random() < 1 / 7:
            messages.append({"role": "assistant", "content": _text(rng, _size(rng, 150, 30, 800))})
            messages.append({"role": "user", "content": _text(rng, _size(rng, 80, 20, 2_000))})
        else:
            ids = [f"call_{serial + index}" for index in range(rng.choice([1, 1, 1, 1, 2, 3]))]
            serial += len(ids)
            calls = [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": rng.choice(["read", "grep", "run"]),
                        "arguments": json.dumps({"query": _text(rng, _size(rng, 40, 10, 300))}),
                    },
                }
                for call_id in ids
            ]
            note = _text(rng, _size(rng, 40, 5, 300)) if rng.random() < 0.5 else None
            messages.append({"role": "assistant", "content": note, "tool_calls": calls})
            for call_id in ids:
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": _text(rng, _size(rng, 350, 40, 8_000)),
                    }
                )
        ends.append(len(messages))
    return messages, ends


Approach = Callable[[list[dict[str, Any]]], Sequence[Any]]


def approaches(budget: int, messages: list[dict[str, Any]], costs: list[int]) -> dict[str, Approach]:
    runs: dict[str, Approach] = {}
    turns_window: StableWindow = StableWindow(budget)
    last_window: StableWindow = StableWindow(budget, strategy="last")
    runs["StableWindow (turns)"] = lambda transcript: turns_window.select(transcript).messages
    runs["StableWindow (last)"] = lambda transcript: last_window.select(transcript).messages
    runs["select_messages, stateless"] = lambda transcript: select_messages(transcript, budget).messages
    try:
        from langchain_core.messages import convert_to_messages, trim_messages
    except ImportError:  # pragma: no cover - the langchain extra is optional
        return runs
    objects = convert_to_messages(messages)
    cost_of = {id(obj): cost for obj, cost in zip(objects, costs, strict=True)}
    back = {id(obj): message for obj, message in zip(objects, messages, strict=True)}

    def trim(transcript: list[dict[str, Any]]) -> Sequence[Any]:
        kept = trim_messages(
            objects[: len(transcript)],
            max_tokens=budget,
            token_counter=lambda batch: sum(cost_of[id(message)] for message in batch),
            strategy="last",
            include_system=True,
            start_on="human",
            allow_partial=False,
        )
        return [back[id(message)] for message in kept]

    runs["trim_messages(last), stateless"] = trim
    return runs


def simulate(budget: int, turns: int, seed: int) -> list[dict[str, Any]]:
    messages, ends = session(turns, seed)
    costs = message_token_counts(messages)
    position = {id(message): index for index, message in enumerate(messages)}
    rows = []
    for name, run in approaches(budget, messages, costs).items():
        previous: list[int] = []
        sent = cached = breaks = overflows = 0
        used: list[float] = []
        for end in ends:
            try:
                chosen = run(messages[:end])
            except BudgetOverflowError:
                # The latest turn alone exceeds the budget ("turns" raises, as the spec's THROW says).
                overflows += 1
                continue
            prompt = [position[id(message)] for message in chosen]
            tokens = sum(costs[index] for index in prompt)
            common = 0
            for old, new in zip(previous, prompt, strict=False):
                if old != new:
                    break
                common += 1
            if previous and common < len(previous):
                breaks += 1
            sent += tokens
            cached += sum(costs[index] for index in prompt[:common])
            used.append(tokens / budget)
            previous = prompt
        answered = len(ends) - overflows
        rows.append(
            {
                "budget": budget,
                "seed": seed,
                "approach": name,
                "mean_tokens": sent / answered,
                "cacheable_share": cached / sent,
                "overflow_turns": overflows,
                "prefix_breaks": breaks,
                "mean_budget_use": statistics.fmean(used),
                "cost_usd": ((sent - cached) + CACHED * cached) * PRICE,
                "cost_uncached_usd": sent * PRICE,
                "session_tokens": sum(costs),
            }
        )
    return rows


def overhead(repeat: int, budget: int = 32_000) -> dict[str, Any]:
    """Per-turn time of StableWindow.select against one stateless select_messages, turn by turn."""
    messages, ends = session(2_000, seed=99)
    ends = [end for end in ends if end <= 1_000 + 8]
    window: StableWindow = StableWindow(budget)
    start = ends[-repeat - 1]
    window.select(messages[:start])
    samples: dict[str, list[float]] = {"stateless": [], "memory": [], "resumed": []}
    compacting: list[bool] = []
    for end in ends[-repeat:]:
        transcript = messages[:end]
        saved = window.to_dict()
        began = time.perf_counter()
        select_messages(transcript, budget)
        samples["stateless"].append(time.perf_counter() - began)
        began = time.perf_counter()
        StableWindow(budget, state=saved).select(transcript)
        samples["resumed"].append(time.perf_counter() - began)
        began = time.perf_counter()
        compacting.append(window.select(transcript).compacted)
        samples["memory"].append(time.perf_counter() - began)
    base = samples["stateless"]
    result: dict[str, Any] = {
        "messages": ends[-1],
        "turns": repeat,
        "compactions": sum(compacting),
        "stateless_ms": statistics.median(base) * 1000,
    }
    for name in ("memory", "resumed"):
        ratios = [time_ / reference for time_, reference in zip(samples[name], base, strict=True)]
        result[f"{name}_ms"] = statistics.median(samples[name]) * 1000
        result[f"{name}_ratio"] = [statistics.median(ratios), min(ratios), max(ratios)]
        for kind, wanted in (("append", False), ("compact", True)):
            chosen = [ratio for ratio, flag in zip(ratios, compacting, strict=True) if flag is wanted]
            if chosen:
                result[f"{name}_{kind}_ratio"] = [statistics.median(chosen), min(chosen), max(chosen)]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--budgets", default="16000,32000,64000,128000")
    parser.add_argument("--repeat", type=int, default=60)
    args = parser.parse_args()
    budgets = [int(budget) for budget in args.budgets.split(",")]
    runs = [
        row
        for budget in budgets
        for seed in range(args.sessions)
        for row in simulate(budget, args.turns, seed)
    ]
    rows = []
    for budget in budgets:
        names = dict.fromkeys(row["approach"] for row in runs if row["budget"] == budget)
        for name in names:
            mine = [row for row in runs if row["budget"] == budget and row["approach"] == name]
            merged = {
                key: statistics.fmean(row[key] for row in mine)
                for key in mine[0]
                if key not in ("budget", "seed", "approach")
            }
            merged["cacheable_share_min"] = min(row["cacheable_share"] for row in mine)
            merged["mean_budget_use_min"] = min(row["mean_budget_use"] for row in mine)
            rows.append({"budget": budget, "approach": name, **merged})
    timing = overhead(args.repeat)
    if args.json:
        print(
            json.dumps(
                {"sessions": args.sessions, "turns": args.turns, "rows": rows, "overhead": timing}, indent=2
            )
        )
        return 0
    if runs:
        print_sessions(args.sessions, args.turns, runs, rows)
    print_overhead(timing)
    return 0


def print_sessions(sessions: int, turns: int, runs: list[dict[str, Any]], rows: list[dict[str, Any]]) -> None:
    session_tokens = statistics.fmean(row["session_tokens"] for row in runs)
    print(f"{sessions} sessions x {turns} turns, {session_tokens:,.0f} transcript tokens each (mean)")
    header = (
        f"{'budget':>7}  {'approach':<32}{'tokens/turn':>12}{'cacheable':>11}{'breaks':>8}"
        f"{'budget use':>12}{'overflow':>10}{'cost $':>8}{'vs uncached':>13}"
    )
    print(header)
    for row in rows:
        share = f"{row['cacheable_share']:.1%}"
        print(
            f"{row['budget']:>7}  {row['approach']:<32}{row['mean_tokens']:>12,.0f}{share:>11}"
            f"{row['prefix_breaks']:>8.1f}{row['mean_budget_use']:>12.1%}{row['overflow_turns']:>10.1f}"
            f"{row['cost_usd']:>8.2f}"
            f"{row['cost_usd'] / row['cost_uncached_usd']:>13.1%}"
        )


def print_overhead(timing: dict[str, Any]) -> None:
    print(
        f"\nPer-turn overhead, {timing['messages']}-message transcript, {timing['turns']} turns "
        f"({timing['compactions']} compacting), x one stateless select_messages "
        f"({timing['stateless_ms']:.2f} ms):"
    )
    for name, label in (
        ("memory", "StableWindow.select, in memory"),
        ("resumed", "StableWindow resumed from to_dict"),
    ):
        for kind in ("append", "compact"):
            if f"{name}_{kind}_ratio" in timing:
                median, low, high = timing[f"{name}_{kind}_ratio"]
                turns = f"{kind}ing turns"
                print(f"  {label:<36} {turns:<16} {median:.2f} [{low:.2f}-{high:.2f}]")


if __name__ == "__main__":
    sys.exit(main())
