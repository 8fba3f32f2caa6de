"""Synthetic candidate sets shared by the benchmarks."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from cupel import ContextItem, ContextKind

KINDS = [
    ContextKind.MESSAGE,
    ContextKind.DOCUMENT,
    ContextKind.TOOL_OUTPUT,
    ContextKind.MEMORY,
    ContextKind.SYSTEM_PROMPT,
]
TAGS = ["auth", "billing", "db", "ui", "api", "infra", "docs", "bug", "perf", "security"]
START = datetime(2025, 1, 1, tzinfo=UTC)


def candidates(count: int, seed: int = 7) -> list[ContextItem]:
    """Mixed kinds, timestamps, priorities and tags, ~5% duplicate content, a few pinned items."""
    rng = random.Random(seed)
    items: list[ContextItem] = []
    for index in range(count):
        duplicate = index > 20 and rng.random() < 0.05
        content = items[rng.randrange(len(items))].content if duplicate else f"item {index}: {rng.random()}"
        items.append(
            ContextItem(
                content,
                rng.randint(20, 400),
                kind=KINDS[rng.randrange(len(KINDS))],
                priority=rng.randint(0, 10) if rng.random() < 0.7 else None,
                tags=rng.sample(TAGS, rng.randint(0, 3)),
                timestamp=START + timedelta(seconds=rng.randint(0, 10_000_000))
                if rng.random() < 0.9
                else None,
                future_relevance_hint=rng.random(),
                pinned=index < 3,
            )
        )
    return items
