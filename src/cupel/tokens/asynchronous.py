"""Async token counters: awaited up front, then served to the synchronous conversion from a table.

An async counter is an ``async def (text: str) -> int`` function or an object with ``async def
acount(text)`` or ``async def acount_many(texts)``. Conversion code stays synchronous: the texts it will
count are collected first (a recording pass), counted once each with the async counter, and the
conversion then runs with a counter that looks the counts up.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol, TypeAlias, runtime_checkable

from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import CounterLike, TokenCounterBase

__all__ = ["AsyncCounterLike", "AsyncTokenCounter", "counted_in_advance", "is_async_counter"]


@runtime_checkable
class AsyncTokenCounter(Protocol):
    """A counter whose counting is awaited (a remote tokenizer, a provider's count-tokens endpoint)."""

    async def acount_many(self, texts: Sequence[str]) -> list[int]:
        """One count per text, in order."""
        ...


AsyncCounterLike: TypeAlias = "AsyncTokenCounter | Callable[[str], Awaitable[int]] | CounterLike"
"""What the async entry points' ``counter`` accepts: an async counter or any synchronous one."""


def is_async_counter(counter: object) -> bool:
    """True for an object with ``acount_many``/``acount`` or an ``async def`` function of one text."""
    if counter is None:
        return False
    if callable(getattr(counter, "acount_many", None)) or callable(getattr(counter, "acount", None)):
        return True
    call = getattr(counter, "__call__", None)  # noqa: B004 - an async __call__ counts too
    return _is_coroutine_function(counter) or _is_coroutine_function(call)


_CO_COROUTINE = 0x80  # inspect.CO_COROUTINE; read from the code object to keep `inspect` unimported


def _is_coroutine_function(function: object) -> bool:
    """``inspect.iscoroutinefunction`` for plain functions and bound methods, without importing inspect."""
    function = getattr(function, "__func__", function)
    code = getattr(function, "__code__", None)
    return code is not None and bool(code.co_flags & _CO_COROUTINE)


class _Recorder(TokenCounterBase):
    """Remembers every text asked for and answers 0: the first, recording pass."""

    def __init__(self) -> None:
        self.texts: dict[str, None] = {}

    def count(self, text: str) -> int:
        self.texts[text] = None
        return 0


class _Table(TokenCounterBase):
    """Answers from counts awaited beforehand."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def count(self, text: str) -> int:
        try:
            return self.counts[text]
        except KeyError:
            raise CupelError(
                f"the async counter was not asked for {text[:40]!r} in advance; count it synchronously"
            ) from None


def _checked(name: str, value: object, index: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"{name} returned {value!r} for text #{index}; token counts must be ints")
    if value < 0:
        raise InvalidConfigurationError(
            f"{name} returned {value} for text #{index}; token counts must be >= 0"
        )
    return value


async def _count_all(counter: Any, texts: list[str]) -> list[int]:
    name = getattr(counter, "__name__", type(counter).__name__)
    many = getattr(counter, "acount_many", None)
    if callable(many):
        counts = list(await many(texts))
        if len(counts) != len(texts):
            raise CupelError(f"{name}.acount_many returned {len(counts)} counts for {len(texts)} texts")
    else:
        import asyncio  # only async counters pay for it

        one = getattr(counter, "acount", None)
        count = one if callable(one) else counter
        counts = list(await asyncio.gather(*(count(text) for text in texts)))
    return [_checked(name, value, index) for index, value in enumerate(counts)]


async def counted_in_advance(record: Callable[[CounterLike], object], counter: object) -> CounterLike | None:
    """A synchronous counter for ``counter``: itself, or, for an async one, its awaited counts.

    ``record(c)`` must make every ``c.count``/``c.count_many`` call the later synchronous work will
    make (typically: convert the messages with ``c``). Each distinct text is awaited once; a text the
    later work asks for that ``record`` did not raises :class:`~cupel.CupelError`.
    """
    if not is_async_counter(counter):
        return counter  # type: ignore[return-value]
    recorder = _Recorder()
    record(recorder)
    texts = list(recorder.texts)
    counts = dict(zip(texts, await _count_all(counter, texts), strict=True)) if texts else {}
    return _Table(counts)
