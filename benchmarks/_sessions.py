"""Seeded synthetic logged sessions: one ``cupel select --batch`` JSON line per session."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator

KINDS = ["Message", "Document", "ToolOutput", "Memory", "SystemPrompt"]
TAGS = ["auth", "billing", "db", "ui", "api"]


def session(index: int, seed: int = 7) -> dict[str, object]:
    """Session ``index``: 5-30 items of mixed kinds, a budget, gold ids; ~2 % overfill with pinned."""
    rng = random.Random(seed * 1_000_003 + index)
    count = rng.randint(5, 30)
    overfilled = rng.random() < 0.02
    items = []
    for position in range(count):
        items.append(
            {
                "content": f"session {index} item {position}: {rng.random():.6f}",
                "tokens": rng.randint(20, 400),
                "kind": rng.choice(KINDS),
                "priority": rng.randint(0, 10),
                "tags": rng.sample(TAGS, rng.randint(0, 2)),
                "timestamp": f"2025-01-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z",
                "futureRelevanceHint": round(rng.random(), 4),
                "pinned": position == 0 or (overfilled and position < 8),
                "id": f"i{position}",
            }
        )
    maximum = rng.choice([1000, 2000, 4000])
    gold = [item["id"] for item in items if float(item["futureRelevanceHint"]) > 0.7]  # type: ignore[arg-type]
    record: dict[str, object] = {
        "id": f"s{index:08d}",
        "items": items,
        "budget": {"maxTokens": maximum, "targetTokens": maximum * 9 // 10},
    }
    if gold:
        record["gold"] = gold  # the cupel eval case format: ids of the items that should be kept
    return record


def session_lines(count: int, seed: int = 7, start: int = 0) -> Iterator[str]:
    """``count`` sessions from ``start`` as JSON lines (without newlines)."""
    for index in range(start, start + count):
        yield json.dumps(session(index, seed), separators=(",", ":"))
