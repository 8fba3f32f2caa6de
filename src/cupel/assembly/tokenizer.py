"""Token counting for context assembly (CFS-021 §4)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["ELLIPSIS", "CallableTokenizer", "SimpleTokenizer", "Tokenizer", "as_tokenizer", "checked_count"]

ELLIPSIS = "..."
"""What truncation appends to a cut text."""


@runtime_checkable
class Tokenizer(Protocol):
    """Counts and truncates text in tokens (CFS-021 §4). Implementations must be deterministic."""

    def count_tokens(self, text: str) -> int:
        """The number of tokens in ``text``."""
        ...

    def truncate_to_tokens(self, text: str, max_tokens: int) -> str:
        """``text`` shortened to about ``max_tokens`` tokens; ``text`` itself when it already fits."""
        ...


@dataclass(frozen=True, slots=True)
class SimpleTokenizer:
    """The spec's default approximation: four bytes per token (CFS-021 §4).

    Lengths are UTF-8 byte lengths, as the spec's ``text.len()`` is in its reference language. For ASCII
    this is one byte per character; for other scripts it counts more tokens than a per-character
    approximation would, which errs on the side of staying within the model's real budget.
    """

    def count_tokens(self, text: str) -> int:
        """``ceil(len(utf8(text)) / 4)``."""
        return (len(text.encode("utf-8")) + 3) // 4

    def truncate_to_tokens(self, text: str, max_tokens: int) -> str:
        """``text`` if it fits; else its first ``max_tokens * 4`` bytes, trimmed, followed by ``"..."``.

        The cut never splits a character. As in the spec, the ellipsis can make the result count one token
        more than ``max_tokens``; the packer re-counts every fragment before using it.
        """
        max_bytes = max(max_tokens, 0) * 4
        encoded = text.encode("utf-8")
        if len(encoded) <= max_bytes:
            return text
        # Dropping the undecodable tail removes exactly the partial character the byte cut may leave.
        prefix = encoded[:max_bytes].decode("utf-8", errors="ignore")
        return prefix.strip() + ELLIPSIS


@dataclass(frozen=True, slots=True)
class CallableTokenizer:
    """Adapts any token counter ``text -> int`` (e.g. a model's tokenizer) to :class:`Tokenizer`.

    Truncation binary-searches the longest prefix whose count, with ``"..."`` appended, is at most
    ``max_tokens`` (O(log n) calls of the counter), then backs off to a word boundary when there is one.
    It assumes counts grow with the prefix, as they do for real tokenizers.
    """

    counter: Callable[[str], int]

    def __post_init__(self) -> None:
        if not callable(self.counter):
            raise CupelTypeError(
                f"CallableTokenizer.counter must be callable, got {type(self.counter).__name__}"
            )

    def count_tokens(self, text: str) -> int:
        return checked_count(self.counter, text)

    def truncate_to_tokens(self, text: str, max_tokens: int) -> str:
        if self.count_tokens(text) <= max_tokens:
            return text
        low, high = 0, len(text)  # invariant: a prefix of length `low` fits, `high` does not.
        if self.count_tokens(ELLIPSIS) > max_tokens:
            return ""
        while high - low > 1:
            middle = (low + high) // 2
            if self.count_tokens(text[:middle].rstrip() + ELLIPSIS) <= max_tokens:
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


def checked_count(counter: Callable[[str], int], text: str) -> int:
    """``counter(text)``, checked to be an int >= 0 so that a broken counter cannot corrupt a budget."""
    count = counter(text)
    if isinstance(count, bool) or not isinstance(count, int):
        raise CupelTypeError(f"token counter must return an int, got {type(count).__name__} {count!r}")
    if count < 0:
        raise InvalidConfigurationError(f"token counter must return a count >= 0, got {count}")
    return count


def as_tokenizer(tokenizer: Tokenizer | Callable[[str], int] | None) -> Tokenizer:
    """A :class:`Tokenizer` from a tokenizer, a bare counter (as a :class:`CallableTokenizer`) or None."""
    if tokenizer is None:
        return SimpleTokenizer()
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if callable(tokenizer):
        return CallableTokenizer(tokenizer)
    raise CupelTypeError(
        "tokenizer must provide count_tokens and truncate_to_tokens, or be a callable text -> int; "
        f"got {type(tokenizer).__name__}"
    )
