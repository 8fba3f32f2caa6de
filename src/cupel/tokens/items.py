"""Fill ContextItem token counts from a counter."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from cupel.errors import CupelTypeError
from cupel.model import ContextItem
from cupel.tokens.base import CounterLike, count_texts
from cupel.tokens.resolve import resolve_counter

__all__ = ["count_distinct", "count_items", "items_from_texts"]


def count_distinct(texts: Sequence[str], counter: CounterLike | None = None) -> list[int]:
    """Count ``texts`` with ``counter`` (default ``HeuristicCounter()``), each distinct text only once."""
    unique = list(dict.fromkeys(texts))
    counts = dict(zip(unique, count_texts(resolve_counter(counter), unique), strict=True))
    return [counts[text] for text in texts]


def count_items(items: Iterable[ContextItem], counter: CounterLike | None = None) -> list[ContextItem]:
    """Return new items whose ``tokens`` is ``counter``'s count of their ``content``.

    Each distinct content is counted once. ``original_tokens`` is left as it is: it records an item's
    size before the caller summarised or truncated it, which recounting the current content cannot
    know. The input items are not changed (items are immutable).
    """
    checked: list[ContextItem] = []
    for index, item in enumerate(items):
        if not isinstance(item, ContextItem):
            raise CupelTypeError(f"items[{index}] must be a ContextItem, got {item!r}")
        checked.append(item)
    counts = count_distinct([item.content for item in checked], counter)
    return [item.replace(tokens=tokens) for item, tokens in zip(checked, counts, strict=True)]


def items_from_texts(
    texts: Iterable[str], counter: CounterLike | None = None, **fields: Any
) -> list[ContextItem]:
    """Build one item per text with its counted ``tokens``; ``fields`` (kind, tags, ...) go to every item."""
    if isinstance(texts, str):
        raise CupelTypeError("texts must be an iterable of strings, not a single string")
    if "tokens" in fields or "content" in fields:
        raise CupelTypeError("items_from_texts sets content and tokens itself; pass other fields only")
    text_list = list(texts)
    for index, text in enumerate(text_list):
        if not isinstance(text, str):
            raise CupelTypeError(f"texts[{index}] must be a str, got {type(text).__name__}")
    counts = count_distinct(text_list, counter)
    return [ContextItem(text, tokens, **fields) for text, tokens in zip(text_list, counts, strict=True)]
