"""Token counting for context assembly (CFS-021 §4), on cupel's one tokenizer protocol.

Assembly takes any :class:`~cupel.tokens.TokenCounter` (``TiktokenCounter``, ``HuggingFaceCounter``,
``HeuristicCounter``, your own), a tokenizer with the spec's ``count_tokens``/``truncate_to_tokens``
(:class:`Tokenizer`, kept for existing code), or a bare ``text -> int`` function. Counters without a
``truncate`` method are truncated by :func:`~cupel.tokens.truncate.truncate_by_count`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeAlias, runtime_checkable

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import TokenCounter, TokenCounterBase
from cupel.tokens.heuristic import HeuristicCounter
from cupel.tokens.truncate import truncate_by_count

__all__ = [
    "CallableTokenizer",
    "SimpleTokenizer",
    "Tokenizer",
    "TokenizerLike",
    "as_tokenizer",
    "checked_count",
]


@runtime_checkable
class Tokenizer(Protocol):
    """The spec's tokenizer interface (CFS-021 §4). Every :class:`~cupel.tokens.TokenCounterBase`
    counter provides it; any :class:`~cupel.tokens.TokenCounter` is accepted where it is asked for."""

    def count_tokens(self, text: str) -> int:
        """The number of tokens in ``text``."""
        ...

    def truncate_to_tokens(self, text: str, max_tokens: int) -> str:
        """``text`` shortened to about ``max_tokens`` tokens; ``text`` itself when it already fits."""
        ...


TokenizerLike: TypeAlias = "Tokenizer | TokenCounter | Callable[[str], int] | None"
"""What the ``tokenizer`` arguments of assembly accept."""


@dataclass(frozen=True, slots=True)
class SimpleTokenizer(HeuristicCounter):
    """The spec's default approximation: four UTF-8 bytes per token (CFS-021 §4).

    ``HeuristicCounter(unit="utf8_bytes")`` under the spec's name. Lengths are UTF-8 byte lengths, as
    the spec's ``text.len()`` is in its reference language: for ASCII one byte per character; for other
    scripts it counts more tokens than a per-character approximation would, which errs on the side of
    staying within the model's real budget. Truncation keeps the first ``max_tokens * 4`` bytes, trimmed,
    followed by ``"..."``.
    """

    unit: Any = "utf8_bytes"


@dataclass(frozen=True, slots=True)
class CallableTokenizer(TokenCounterBase):
    """Adapts any token counter ``text -> int`` (e.g. a model's tokenizer) to the tokenizer protocol.

    Truncation is :func:`~cupel.tokens.truncate.truncate_by_count`: the longest prefix whose count, with
    ``"..."`` appended, is at most ``max_tokens``, backed off to a word boundary when there is one.
    """

    counter: Callable[[str], int]

    def __post_init__(self) -> None:
        if not callable(self.counter):
            raise CupelTypeError(
                f"CallableTokenizer.counter must be callable, got {type(self.counter).__name__}"
            )

    def count(self, text: str) -> int:
        return checked_count(self.counter, text)


@dataclass(frozen=True, slots=True)
class _CounterTokenizer(TokenCounterBase):
    """A :class:`~cupel.tokens.TokenCounter` without the spec's method names, given them."""

    inner: Any

    def count(self, text: str) -> int:
        return checked_count(self.inner.count, text)

    def truncate(self, text: str, max_tokens: int) -> str:
        cut = getattr(self.inner, "truncate", None)
        if callable(cut):
            result: str = cut(text, max_tokens)
            return result
        return truncate_by_count(self.count, text, max_tokens)


def checked_count(counter: Callable[[str], int], text: str) -> int:
    """``counter(text)``, checked to be an int >= 0 so that a broken counter cannot corrupt a budget."""
    count = counter(text)
    if isinstance(count, bool) or not isinstance(count, int):
        raise CupelTypeError(f"token counter must return an int, got {type(count).__name__} {count!r}")
    if count < 0:
        raise InvalidConfigurationError(f"token counter must return a count >= 0, got {count}")
    return count


def as_tokenizer(tokenizer: TokenizerLike) -> Tokenizer:
    """A :class:`Tokenizer` from a tokenizer, a :class:`~cupel.tokens.TokenCounter`, a bare counter
    ``text -> int`` (as a :class:`CallableTokenizer`) or None (:class:`SimpleTokenizer`)."""
    if tokenizer is None:
        return SimpleTokenizer()
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if callable(getattr(tokenizer, "count", None)):
        return _CounterTokenizer(tokenizer)
    if callable(tokenizer):
        return CallableTokenizer(tokenizer)
    raise CupelTypeError(
        "tokenizer must be a TokenCounter (count, count_many), provide count_tokens and "
        f"truncate_to_tokens, or be a callable text -> int; got {type(tokenizer).__name__}"
    )
