"""What every integration shares: the missing-extra error, tool-schema costs, retrieval packing."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from cupel.chat.options import ChatPolicy, _resolve_pipeline, resolve_budget
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError
from cupel.model import ContextBudget, ContextItem
from cupel.tokens._optional import OptionalDependencyError
from cupel.tokens.base import CounterLike
from cupel.tokens.items import count_distinct

__all__ = [
    "INDEX_KEY",
    "missing_extra",
    "relevance_hints",
    "select_ranked",
    "shrink_budget",
    "tool_schema_tokens",
]

INDEX_KEY = "cupel:integration.index"
"""Item metadata key: the position of the framework object an item stands for."""


def missing_extra(feature: str, package: str, extra: str, error: ImportError) -> OptionalDependencyError:
    """The error an integration module raises when its framework is not installed."""
    return OptionalDependencyError(
        f"{feature} needs the optional package {package!r}, which is not installed ({error}). "
        f"Install it with: pip install 'pycupel[{extra}]'"
    )


def schema_text(schema: Mapping[str, Any]) -> str:
    """The text a tool schema is charged as: its compact JSON, keys sorted (deterministic)."""
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def tool_schema_tokens(schemas: Sequence[Mapping[str, Any]], counter: CounterLike | None) -> int:
    """Tokens the tool definitions sent with every model call take: each schema's JSON, counted."""
    if not schemas:
        return 0
    return sum(count_distinct([schema_text(schema) for schema in schemas], counter))


def shrink_budget(budget: ContextBudget | int, tokens: int) -> ContextBudget:
    """``budget`` less ``tokens`` spent outside the messages (tool schemas): max and target both."""
    resolved = resolve_budget(budget)
    if tokens <= 0:
        return resolved
    return ContextBudget(
        max(0, resolved.max_tokens - tokens),
        max(0, resolved.target_tokens - tokens),
        output_reserve=min(resolved.output_reserve, max(0, resolved.max_tokens - tokens)),
        reserved_slots={str(kind): reserved for kind, reserved in resolved.reserved_slots.items()},
        estimation_safety_margin_percent=resolved.estimation_safety_margin_percent,
    )


def relevance_hints(scores: Sequence[float | None]) -> list[float | None]:
    """Retrieval scores as relevance hints in [0, 1]: kept as they are when all lie in [0, 1], else
    min-max scaled over the batch (all equal: 1.0). Missing or non-finite scores give no hint."""
    known = [score for score in scores if score is not None and math.isfinite(score)]
    if all(0.0 <= score <= 1.0 for score in known):
        return [score if score is not None and math.isfinite(score) else None for score in scores]
    # Halved before subtracting: the span of two finite floats can overflow (1.8e308 - -1.8e308).
    low, high = min(known) / 2, max(known) / 2
    span = high - low
    return [
        None
        if score is None or not math.isfinite(score)
        else (1.0 if span == 0 else (score / 2 - low) / span)
        for score in scores
    ]


def _score(value: object, where: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{where} must be a number or None, got {value!r}")
    return float(value)


def select_ranked(
    texts: Sequence[str],
    scores: Sequence[object],
    budget: ContextBudget | int,
    policy: ChatPolicy,
    counter: CounterLike | None,
    *,
    kind: str = "Document",
    source: str = "Rag",
) -> tuple[list[int], SelectionReport]:
    """Select retrieved texts under ``budget``: the positions kept, in placed order, and the report.

    Each text becomes a ``Document`` item whose relevance hint is its retrieval score (see
    :func:`relevance_hints`); ``policy`` defaults to the ``rag`` preset (Relevance 2 + Reflexive 2,
    ScoreSlice, UShaped). No query is passed, so its Relevance term scores 0 and the retrieval scores rank
    alone: texts are kept highest score first while they fit, the most relevant at the edges of the window.
    """
    hints = relevance_hints([_score(score, f"scores[{index}]") for index, score in enumerate(scores)])
    tokens = count_distinct(list(texts), counter)
    items = [
        ContextItem(
            text,
            count,
            kind=kind,
            source=source,
            future_relevance_hint=hint,
            metadata={INDEX_KEY: index},
        )
        for index, (text, count, hint) in enumerate(zip(texts, tokens, hints, strict=True))
    ]
    report = _resolve_pipeline("rag" if policy is None else policy).dry_run(items, resolve_budget(budget))
    return [item.metadata[INDEX_KEY] for item in report.items], report
