"""Truncation to a token limit, shared by every counter (CFS-021 §4 ``truncate_to_tokens``)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["ELLIPSIS", "truncate_by_count"]

ELLIPSIS = "..."
"""Appended to a truncated text, as the CFS-021 reference tokenizer does."""


def truncate_by_count(count: Callable[[str], int], text: str, max_tokens: int) -> str:
    """``text`` if ``count(text) <= max_tokens``; else its longest prefix that, with ``"..."`` appended,
    counts at most ``max_tokens``, backed off to a word boundary when there is one (``""`` if none fits).

    A binary search over prefix lengths: O(log n) calls of ``count``. It assumes counts grow with the
    prefix, as they do for real tokenizers.
    """
    if count(text) <= max_tokens:
        return text
    if count(ELLIPSIS) > max_tokens:
        return ""
    low, high = 0, len(text)  # invariant: a prefix of length `low` fits, `high` does not.
    while high - low > 1:
        middle = (low + high) // 2
        if count(text[:middle].rstrip() + ELLIPSIS) <= max_tokens:
            low = middle
        else:
            high = middle
    prefix = text[:low]
    if low < len(text) and not text[low].isspace():
        boundary = max(prefix.rfind(" "), prefix.rfind("\n"), prefix.rfind("\t"))
        if boundary > 0:
            prefix = prefix[:boundary]
    prefix = prefix.strip()
    return prefix + ELLIPSIS if prefix else ""
