"""aselect_messages: the async form of select_messages, for async counters and async message sources."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterable, Iterable, Mapping
from typing import Any, TypeVar

from cupel import _async
from cupel.chat.convert import message_token_counts
from cupel.chat.options import ChatOptions
from cupel.chat.select import ChatPolicy, ChatSelection, plan_messages, selection_attributes
from cupel.chat.summarized import run_planned_async
from cupel.model import ContextBudget
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance

__all__ = ["aselect_messages"]

MessageT = TypeVar("MessageT", bound=Mapping[str, Any])


async def aselect_messages(
    messages: Iterable[MessageT] | AsyncIterable[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    **select_options: Any,
) -> ChatSelection[MessageT]:
    """Async :func:`~cupel.chat.select_messages`: same arguments, same result.

    ``messages`` may be an async iterable (drained before selection starts); ``counter`` may be async
    (each distinct text awaited once, before selection). Other keyword arguments go to
    ``select_messages`` unchanged. Selection itself runs inline, or in a worker thread for long
    transcripts (see ``docs/python-api.md``, *Async*).
    """
    select = functools.partial(_select, messages, budget, policy, counter, options, select_options)
    return await run_planned_async(select, budget, lambda: selection_attributes(policy, select_options))


async def _select(
    messages: Iterable[MessageT] | AsyncIterable[MessageT],
    budget: ContextBudget | int,
    policy: ChatPolicy,
    counter: AsyncCounterLike | None,
    options: ChatOptions | None,
    select_options: dict[str, Any],
) -> tuple[ChatSelection[MessageT], list[MessageT]]:
    """The selection and the transcript it was made from (drained from ``messages``)."""
    collected: list[MessageT] = await _async.collect(messages, "messages")
    # Every message's texts, counted without linking tool calls: a broken history reaches selection,
    # which raises on it or (on_invalid="repair") repairs it.
    sync_counter = await counted_in_advance(
        lambda recorder: message_token_counts(collected, counter=recorder, options=options), counter
    )
    planned = await _async.run_cpu(
        lambda: plan_messages(collected, budget, policy, sync_counter, options=options, **select_options),
        len(collected),
    )
    if isinstance(planned, ChatSelection):
        return planned, collected
    # A summary is due: the summariser (maybe async) runs here, on the caller's loop.
    plan, summarize = planned
    return await plan.run_async(summarize), collected
