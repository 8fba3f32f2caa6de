"""Trimming LangChain messages, shared by the LangChain and LangGraph integrations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cupel.chat import langchain as lc_chat
from cupel.chat.options import ChatOptions
from cupel.chat.select import ChatPolicy
from cupel.errors import CupelTypeError
from cupel.integrations._common import missing_extra, shrink_budget, tool_schema_tokens
from cupel.model import ContextBudget
from cupel.tokens.asynchronous import AsyncCounterLike, counted_in_advance, is_async_counter
from cupel.tokens.base import CounterLike

try:
    from langchain_core.messages import BaseMessage, convert_to_messages
    from langchain_core.prompt_values import PromptValue
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.langchain", "langchain-core", "langchain", error) from error

__all__ = ["Trim", "as_messages"]


def as_messages(value: object) -> list[BaseMessage]:
    """Messages in any form LangChain accepts: messages, ``(role, text)`` tuples, dicts, strings, a
    ``PromptValue``. ``BaseMessage`` objects pass through as the same objects."""
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return convert_to_messages([value])
    if not isinstance(value, Sequence):
        raise CupelTypeError(
            "messages must be a list of messages, tuples or dicts, or a PromptValue; "
            f"got {type(value).__name__}"
        )
    return convert_to_messages(value)


class Trim:
    """One trimming configuration: ``budget``, ``policy``, ``counter``, ``options``, tool schemas and
    the keyword arguments passed on to :func:`cupel.chat.langchain.select_messages`."""

    __slots__ = ("budget", "counter", "options", "policy", "select_options", "tools")

    def __init__(
        self,
        budget: ContextBudget | int,
        policy: ChatPolicy,
        counter: AsyncCounterLike | None,
        options: ChatOptions | None,
        tools: Sequence[Any] | None,
        select_options: dict[str, Any],
    ) -> None:
        self.budget = budget
        self.policy = policy
        self.counter = counter
        self.options = options
        self.tools = [convert_to_openai_tool(tool) for tool in tools or ()]
        self.select_options = select_options

    def _run(self, messages: list[BaseMessage], counter: CounterLike | None, tools: Sequence[Any]) -> Any:
        schemas = [*self.tools, *(convert_to_openai_tool(tool) for tool in tools)]
        budget = shrink_budget(self.budget, tool_schema_tokens(schemas, counter))
        return lc_chat.select_messages(
            messages, budget, self.policy, counter, options=self.options, **self.select_options
        )

    def select(self, messages: list[BaseMessage], tools: Sequence[Any] = ()) -> Any:
        """The :class:`~cupel.chat.ChatSelection` of ``messages``, tool schemas charged first."""
        if is_async_counter(self.counter):
            raise CupelTypeError("an async counter needs the async call (ainvoke, abatch, astream)")
        return self._run(messages, self.counter, tools)  # type: ignore[arg-type]

    async def aselect(self, messages: list[BaseMessage], tools: Sequence[Any] = ()) -> Any:
        """:meth:`select`, awaiting an async counter first."""

        def record(recorder: CounterLike) -> None:
            schemas = [*self.tools, *(convert_to_openai_tool(tool) for tool in tools)]
            lc_chat.messages_to_items(messages, counter=recorder, options=self.options)
            tool_schema_tokens(schemas, recorder)

        counter = await counted_in_advance(record, self.counter)
        return self._run(messages, counter, tools)
