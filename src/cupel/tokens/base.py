"""The TokenCounter protocol, a base class for counters, and counter resolution."""

from __future__ import annotations

import importlib
import warnings
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from itertools import repeat
from typing import Protocol, TypeAlias, runtime_checkable

from cupel._frozen import dataclass
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.tokens.truncate import truncate_by_count

__all__ = [
    "CounterLike",
    "FunctionCounter",
    "TokenCounter",
    "TokenCounterBase",
    "TruncatingCounter",
    "count_texts",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of text: ``count(text)`` for one, ``count_many(texts)`` for a batch.

    ``count_many(texts)[i]`` must equal ``count(texts[i])``; counts are non-negative ints. This is the
    one tokenizer protocol of cupel: items, chat, RAG assembly and the CLI all take it.
    """

    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return one count per text, in input order."""
        ...


@runtime_checkable
class TruncatingCounter(TokenCounter, Protocol):
    """A :class:`TokenCounter` that can also cut text to a token limit (what RAG assembly needs).

    Every built-in counter is one (through :class:`TokenCounterBase`); a counter without ``truncate``
    gets :func:`~cupel.tokens.truncate.truncate_by_count` wherever truncation is needed.
    """

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` shortened to about ``max_tokens`` tokens, ending ``"..."``; ``text`` if it fits."""
        ...


CounterLike: TypeAlias = "TokenCounter | Callable[[str], int]"
"""What the ``counter`` arguments accept: a :class:`TokenCounter` or a plain ``str -> int`` function."""


class TokenCounterBase(ABC):
    """Base class of the built-in counters: ``count_many`` defaults to one ``count`` per text."""

    __slots__ = ()

    @abstractmethod
    def count(self, text: str) -> int:
        """Return the number of tokens in ``text``."""

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Return ``[count(text) for text in texts]``, possibly faster."""
        return [self.count(text) for text in _check_texts(type(self).__name__, texts)]

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix (at a word boundary) that fits ``max_tokens`` with ``"..."`` appended."""
        return truncate_by_count(self.count, text, max_tokens)

    # The names of the RAG assembly's original Tokenizer protocol (CFS-021 §4), kept working.
    def count_tokens(self, text: str) -> int:
        """Alias of :meth:`count`."""
        return self.count(text)

    def truncate_to_tokens(self, text: str, max_tokens: int) -> str:
        """Alias of :meth:`truncate`."""
        return self.truncate(text, max_tokens)


@dataclass(frozen=True, slots=True)
class FunctionCounter(TokenCounterBase):
    """Adapts a plain ``str -> int`` function (``len``, a lambda) to :class:`TokenCounter`."""

    function: Callable[[str], int]

    def __post_init__(self) -> None:
        if not callable(self.function):
            raise CupelTypeError(f"FunctionCounter.function must be callable, got {self.function!r}")

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise CupelTypeError(f"FunctionCounter.count needs a str, got {type(text).__name__}")
        return self.function(text)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        if type(self).count is not FunctionCounter.count:  # a subclass's own count is honoured
            return TokenCounterBase.count_many(self, texts)  # named: the decorator may rebuild the class
        # One call of the function per text and nothing else per text (the texts checked in C).
        return list(map(self.function, _check_texts("FunctionCounter", texts)))


def count_texts(counter: TokenCounter, texts: Sequence[str]) -> list[int]:
    """``counter.count_many(texts)``, checked: one non-negative int per text."""
    if not texts:
        return []
    counts = counter.count_many(texts)
    name = type(counter).__name__
    if len(counts) != len(texts):
        raise CupelError(f"{name}.count_many returned {len(counts)} counts for {len(texts)} texts")
    if set(map(type, counts)) == _INT and min(counts) >= 0:
        return list(counts)  # every count a plain non-negative int: checked in C
    result: list[int] = []
    for index, value in enumerate(counts):
        if isinstance(value, bool) or not isinstance(value, int):
            raise CupelTypeError(f"{name} returned {value!r} for text #{index}; token counts must be ints")
        if value < 0:
            raise InvalidConfigurationError(
                f"{name} returned {value} for text #{index}; token counts must be >= 0"
            )
        result.append(value)
    return result


_INT = {int}


def _check_texts(owner: str, texts: Sequence[str]) -> Sequence[str]:
    if isinstance(texts, str):
        raise CupelTypeError(f"{owner}.count_many needs a sequence of strings, not a single string")
    if all(map(isinstance, texts, repeat(str))):
        return texts
    for index, text in enumerate(texts):
        if not isinstance(text, str):
            raise CupelTypeError(
                f"{owner}.count_many: texts[{index}] must be a str, got {type(text).__name__}"
            )
    return texts


def __getattr__(name: str) -> object:
    # resolve_counter moved to cupel.tokens.resolve (above the counters it returns); it stays
    # importable from here, with a warning. Bound by name: this module sits below that one.
    if name == "resolve_counter":
        warnings.warn(
            "cupel.tokens.base.resolve_counter is deprecated; import it from cupel.tokens",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module("cupel.tokens.resolve").resolve_counter
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
