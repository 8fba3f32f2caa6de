"""Turning a ``counter`` argument (a counter, a ``count`` object or a function) into a TokenCounter."""

from __future__ import annotations

from typing import Any

from cupel._frozen import dataclass
from cupel.errors import CupelTypeError
from cupel.tokens.base import CounterLike, FunctionCounter, TokenCounter, TokenCounterBase
from cupel.tokens.heuristic import HeuristicCounter

__all__ = ["resolve_counter"]


@dataclass(frozen=True, slots=True)
class _CountOnly(TokenCounterBase):
    """Gives an object that has ``count`` but no ``count_many`` the batch form."""

    inner: Any

    def count(self, text: str) -> int:
        result: int = self.inner.count(text)
        return result


def resolve_counter(counter: CounterLike | None) -> TokenCounter:
    """Turn a ``counter`` argument into a :class:`TokenCounter`; ``None`` is ``HeuristicCounter()``."""
    if counter is None:
        return HeuristicCounter()
    has_count = callable(getattr(counter, "count", None))
    if has_count and callable(getattr(counter, "count_many", None)):
        return counter  # type: ignore[return-value]
    if has_count:
        return _CountOnly(counter)
    count_tokens = getattr(counter, "count_tokens", None)
    if callable(count_tokens):
        # A tokenizer written for the assembly's original protocol (count_tokens/truncate_to_tokens).
        return FunctionCounter(count_tokens)
    if callable(counter):
        return FunctionCounter(counter)
    raise CupelTypeError(
        "counter must be a TokenCounter (with count() and count_many()) or a str -> int function, "
        f"got {counter!r}"
    )
