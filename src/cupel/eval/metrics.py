"""Per-case selection metrics (docs/eval.md, "Metrics").

A selection is described by the elements it kept in window order (messages or items) and their token
costs; gold maps the needed elements to their weights. Identical elements are interchangeable
(:func:`interchangeable`): keeping either copy of a gold element keeps the evidence. ``cupel eval`` and
``cupel replay`` both score through this module, so they agree on every case.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["METRICS", "CaseMetrics", "case_metrics", "interchangeable", "middle_exposure"]

METRICS: tuple[str, ...] = (
    "recall_items",
    "recall_tokens",
    "all_gold",
    "middle_exposure",
    "budget_use",
    "valid",
    "time_ms",
)
"""The metric names, in report order."""


@dataclass(frozen=True, slots=True)
class CaseMetrics:
    """One selection's scores on one case.

    ``recall_items``: gold weight kept / gold weight. ``recall_tokens``: gold tokens kept / gold tokens.
    ``all_gold``: 1.0 when every gold element was kept. ``middle_exposure``: share of the kept gold
    tokens that sit in the middle third of the window (``None`` when no gold was kept). ``budget_use``:
    tokens used / target. ``valid``: 1.0 or 0.0 for chat outputs (provider validity), ``None`` for items.
    ``time_ms``: selection wall time. ``error``: why the selection failed (then nothing was kept).
    """

    recall_items: float
    recall_tokens: float
    all_gold: float
    middle_exposure: float | None
    budget_use: float
    valid: float | None
    time_ms: float
    tokens: int
    error: str | None = None

    def value(self, metric: str) -> float | None:
        result: Any = getattr(self, metric)
        return None if result is None else float(result)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {metric: self.value(metric) for metric in METRICS}
        data["tokens"] = self.tokens
        if self.error is not None:
            data["error"] = self.error
        return data


def interchangeable(
    elements: Sequence[Any], gold: Mapping[int, float], *, chat: bool
) -> tuple[list[int], dict[int, float]]:
    """Each element's first identical element, and gold keyed by those (the highest weight of the copies).

    Messages (``chat``) are identical when role and text content are equal; items when content is equal.
    Score a window by mapping its elements through the first list: a kept copy keeps the gold it repeats.
    """
    first: dict[object, int] = {}
    canon: list[int] = []
    for element, value in enumerate(elements):
        if chat:
            content = value.get("content")
            key: object = (value.get("role"), content) if isinstance(content, str) else ("#", element)
        else:
            key = value.content
        canon.append(first.setdefault(key, element))
    by_copy: dict[int, float] = {}
    for element, weight in gold.items():
        by_copy[canon[element]] = max(weight, by_copy.get(canon[element], 0.0))
    return canon, by_copy


def middle_exposure(window: Sequence[int], tokens: Sequence[int], gold: Mapping[int, float]) -> float | None:
    """Share of kept gold tokens inside the middle third of the window's token span."""
    used = sum(tokens[element] for element in window)
    kept_gold = sum(tokens[element] for element in window if element in gold)
    if used == 0 or kept_gold == 0:
        return None
    low, high = used / 3, 2 * used / 3
    inside = 0.0
    offset = 0
    for element in window:
        end = offset + tokens[element]
        if element in gold:
            inside += max(0.0, min(end, high) - max(offset, low))
        offset = end
    return inside / kept_gold


def case_metrics(
    window: Sequence[int],
    tokens: Sequence[int],
    gold: Mapping[int, float],
    target_tokens: int,
    *,
    valid: bool | None = None,
    seconds: float = 0.0,
    error: str | None = None,
) -> CaseMetrics:
    """Score one selection: ``window`` lists the kept elements in the order the model sees them."""
    kept = set(window)
    gold_weight = math.fsum(gold.values())
    gold_tokens = sum(tokens[element] for element in gold)
    recall_items = math.fsum(weight for element, weight in gold.items() if element in kept) / gold_weight
    kept_gold_tokens = sum(tokens[element] for element in gold if element in kept)
    recall_tokens = kept_gold_tokens / gold_tokens if gold_tokens else float(kept >= set(gold))
    used = sum(tokens[element] for element in window)
    return CaseMetrics(
        recall_items=recall_items,
        recall_tokens=recall_tokens,
        all_gold=1.0 if kept >= set(gold) else 0.0,
        middle_exposure=middle_exposure(window, tokens, gold),
        budget_use=used / target_tokens if target_tokens else 0.0,
        valid=None if valid is None else float(valid),
        time_ms=seconds * 1000,
        tokens=used,
        error=error,
    )
