"""Trimming one framework's transcript with the chat rules: the trimmer every integration shares."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from cupel.chat._parse import MessageView
from cupel.chat.convert import build_items
from cupel.chat.options import ChatOptions
from cupel.chat.select import ChatPolicy, ChatSelection, select_items
from cupel.errors import CupelTypeError
from cupel.integrations._common import shrink_budget, tool_schema_tokens
from cupel.model import ContextBudget, ContextItem
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance, is_async_counter
from cupel.tokens.base import CounterLike

__all__ = ["ItemsOf", "Trimmer", "items_by_view"]

ItemsOf: TypeAlias = "Callable[[Sequence[Any], CounterLike | None, ChatOptions | None], list[ContextItem]]"
"""Converts a framework transcript into chat items: ``(messages, counter, options) -> items``."""


def items_by_view(view_of: Callable[[Any, int], MessageView]) -> ItemsOf:
    """An :data:`ItemsOf` reading each message through ``view_of(message, index)``."""

    def items(
        messages: Sequence[Any], counter: CounterLike | None, options: ChatOptions | None
    ) -> list[ContextItem]:
        views = [view_of(message, index) for index, message in enumerate(messages)]
        return build_items(views, list(messages), counter=counter, options=options, timestamps=None)

    return items


class Trimmer:
    """Selects a framework transcript under a budget, tool schemas charged first; ``counter`` may be
    async (then only :meth:`aselect` works)."""

    __slots__ = ("budget", "counter", "items_of", "options", "policy")

    def __init__(
        self,
        items_of: ItemsOf,
        budget: ContextBudget | int,
        policy: ChatPolicy,
        counter: AsyncCounterLike | None,
        options: ChatOptions | None,
    ) -> None:
        self.items_of = items_of
        self.budget = budget
        self.policy = policy
        self.counter = counter
        self.options = options

    def items(self, messages: Sequence[Any], counter: CounterLike | None) -> list[ContextItem]:
        return self.items_of(messages, counter, self.options)

    def _run(self, messages: Sequence[Any], counter: CounterLike | None, schemas: Sequence[Any]) -> Any:
        budget = shrink_budget(self.budget, tool_schema_tokens(schemas, counter))
        kept, report = select_items(self.items(messages, counter), budget, self.policy)
        return ChatSelection(tuple(kept), report)

    def select(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> Any:
        """The :class:`~cupel.chat.ChatSelection` of ``messages``; ``schemas`` are tool schemas."""
        if is_async_counter(self.counter):
            raise CupelTypeError("an async counter needs the async call (ainvoke, abatch, astream)")
        return self._run(messages, self.counter, schemas)  # type: ignore[arg-type]

    async def aselect(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> Any:
        """:meth:`select`, awaiting an async counter first (each distinct text once)."""

        def record(recorder: CounterLike) -> None:
            self.items(messages, recorder)
            tool_schema_tokens(schemas, recorder)

        return self._run(messages, await counted_in_advance(record, self.counter), schemas)
