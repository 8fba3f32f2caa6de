"""Helpers behind the async entry points: draining async item sources and where CPU work runs.

The rule: selection is CPU work and runs on the event loop's thread, except for inputs of at least
:data:`THREAD_THRESHOLD` items, which go to a worker thread (``asyncio.to_thread``) so a large selection
does not stall other tasks. Pipelines hold no per-run state, so running one in a thread is safe.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any, TypeVar

from cupel.errors import CupelTypeError

__all__ = ["THREAD_THRESHOLD", "collect", "run_cpu", "select"]

T = TypeVar("T")

THREAD_THRESHOLD = 5_000
"""Inputs with at least this many items are selected in a worker thread; smaller ones inline."""


async def collect(source: object, what: str) -> list[Any]:
    """A list of everything ``source`` yields: a sequence, an iterable or an async iterable.

    Selection ranks every candidate against every other, so an async source is drained completely
    before selection starts (the specification's StreamSlice is optional and not provided).
    """
    if isinstance(source, AsyncIterable):
        return [element async for element in source]
    if isinstance(source, str | bytes) or not isinstance(source, Iterable):
        raise CupelTypeError(
            f"{what} must be a sequence, an iterable or an async iterable, got {type(source).__name__}"
        )
    return list(source)


async def run_cpu(function: Callable[[], T], size: int) -> T:
    """``function()`` inline, or in a worker thread when ``size`` reaches :data:`THREAD_THRESHOLD`."""
    if size >= THREAD_THRESHOLD:
        import asyncio  # only async callers pay for it

        return await asyncio.to_thread(function)
    return function()


async def select(items: object, run: Callable[[list[Any]], T]) -> T:
    """``run(collected)`` on everything ``items`` yields, inline or in a worker thread (:func:`run_cpu`)."""
    collected = await collect(items, "items")
    return await run_cpu(lambda: run(collected), len(collected))
