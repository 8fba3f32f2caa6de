"""Building a transcript of one framework's messages into chat items, through message views."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cupel.chat._parse import MessageView
from cupel.chat.convert import build_items
from cupel.chat.options import ChatOptions
from cupel.chat.select import ChatPolicy, ChatSelection, select_items
from cupel.errors import CupelTypeError
from cupel.integrations._common import shrink_budget, tool_schema_tokens
from cupel.model import ContextBudget, ContextItem
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance, is_async_counter
from cupel.tokens.base import CounterLike

__all__ = ["ViewTrim"]


class ViewTrim:
    """Trims a framework transcript read into :class:`MessageView` objects by ``view_of``."""

    __slots__ = ("budget", "counter", "options", "policy", "view_of")

    def __init__(
        self,
        view_of: Any,
        budget: ContextBudget | int,
        policy: ChatPolicy,
        counter: AsyncCounterLike | None,
        options: ChatOptions | None,
    ) -> None:
        self.view_of = view_of
        self.budget = budget
        self.policy = policy
        self.counter = counter
        self.options = options

    def items(self, messages: Sequence[Any], counter: CounterLike | None) -> list[ContextItem]:
        views: list[MessageView] = [self.view_of(message, index) for index, message in enumerate(messages)]
        return build_items(views, list(messages), counter=counter, options=self.options, timestamps=None)

    def _run(self, messages: Sequence[Any], counter: CounterLike | None, schemas: Sequence[Any]) -> Any:
        budget = shrink_budget(self.budget, tool_schema_tokens(schemas, counter))
        kept, report = select_items(self.items(messages, counter), budget, self.policy)
        return ChatSelection(tuple(kept), report)

    def select(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> Any:
        if is_async_counter(self.counter):
            raise CupelTypeError("an async counter needs the async entry point")
        return self._run(messages, self.counter, schemas)  # type: ignore[arg-type]

    async def aselect(self, messages: Sequence[Any], schemas: Sequence[Any] = ()) -> Any:
        def record(recorder: CounterLike) -> None:
            self.items(messages, recorder)
            tool_schema_tokens(schemas, recorder)

        return self._run(messages, await counted_in_advance(record, self.counter), schemas)
