"""LangGraph and LangChain agents: trim the conversation before every model call.

Needs ``pip install 'pycupel[langgraph]'`` (``langgraph`` and ``langchain``)::

    # LangChain 1.x agents (the current form): middleware around each model call
    agent = create_agent(model, tools, middleware=[CupelTrimMiddleware(8000)])
    # LangGraph's prebuilt ReAct agent (deprecated upstream in favour of create_agent)
    agent = create_react_agent(model, tools, pre_model_hook=pre_model_hook(8000))

Both leave the graph state's ``messages`` whole and trim only what the model is sent, keeping each
tool call with its results. See ``docs/integrations.md``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cupel.chat.options import ChatOptions, ChatPolicy, OnInvalid
from cupel.chat.plan import Summarizer
from cupel.errors import CupelTypeError
from cupel.integrations._common import missing_extra
from cupel.model import ContextBudget
from cupel.policy.chat_settings import ChatStrategy
from cupel.tokens.asynchronous import AsyncCounterLike

try:
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import BaseMessage, RemoveMessage
    from langchain_core.runnables import Runnable, RunnableLambda
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    from cupel.integrations._lc import as_messages, tool_schemas, trimmer
    from cupel.integrations._trim import TrimSettings
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.langgraph", "langgraph", "langgraph", error) from error

__all__ = ["CupelTrimMiddleware", "pre_model_hook"]


def _state_messages(state: Any) -> list[BaseMessage]:
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    if messages is None:
        raise CupelTypeError(f"the graph state has no 'messages' to trim: {type(state).__name__}")
    return as_messages(messages)


def pre_model_hook(
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    tools: Sequence[Any] | None = None,
    update_state: bool = False,
    strategy: ChatStrategy | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
) -> Runnable[Any, dict[str, Any]]:
    """A ``pre_model_hook`` for ``create_react_agent``: the model sees the trimmed conversation.

    Returns ``{"llm_input_messages": kept}``, leaving the state's history whole; with
    ``update_state=True`` it returns ``{"messages": [RemoveMessage(REMOVE_ALL_MESSAGES), *kept]}``,
    which replaces the stored history. ``tools`` (the agent's tools) are charged against the budget.
    Other arguments are those of :func:`cupel.integrations.langchain.message_trimmer`, except that
    without a ``policy`` a latest turn too long for the budget is truncated (the longest run of its
    units from its start that fits) instead of raising, so the agent loop goes on.
    """
    if not isinstance(update_state, bool):
        raise CupelTypeError(f"update_state must be a bool, got {update_state!r}")
    trim = trimmer(
        budget,
        policy,
        counter,
        options,
        TrimSettings(strategy, on_invalid, summarize, summary_tokens),
        agent=True,
    )
    schemas = tool_schemas(tools)

    def update(kept: Sequence[BaseMessage]) -> dict[str, Any]:
        if update_state:
            return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *kept]}
        return {"llm_input_messages": list(kept)}

    def hook(state: Any) -> dict[str, Any]:
        return update(trim.select(_state_messages(state), schemas).messages)

    async def ahook(state: Any) -> dict[str, Any]:
        return update((await trim.aselect(_state_messages(state), schemas)).messages)

    return RunnableLambda(hook, afunc=ahook, name="cupel_pre_model_hook")


class CupelTrimMiddleware(AgentMiddleware):
    """``langchain.agents.create_agent`` middleware: each model call is sent a trimmed conversation.

    The system message (pinned) and the request's tool schemas are charged against ``budget``; the
    agent's stored history is untouched. Arguments and the overflow rule are those of
    :func:`pre_model_hook`.
    """

    def __init__(
        self,
        budget: ContextBudget | int,
        policy: ChatPolicy = None,
        counter: AsyncCounterLike | None = None,
        *,
        options: ChatOptions | None = None,
        strategy: ChatStrategy | None = None,
        on_invalid: OnInvalid = "error",
        summarize: Summarizer | bool | None = None,
        summary_tokens: int = 0,
    ) -> None:
        super().__init__()
        self._trim = trimmer(
            budget,
            policy,
            counter,
            options,
            TrimSettings(strategy, on_invalid, summarize, summary_tokens),
            agent=True,
        )

    @staticmethod
    def _split(request: ModelRequest) -> list[BaseMessage]:
        system = [request.system_message] if request.system_message is not None else []
        return [*system, *request.messages]

    @staticmethod
    def _trimmed(request: ModelRequest, kept: Sequence[BaseMessage]) -> ModelRequest:
        system = request.system_message
        messages: list[Any] = [message for message in kept if message is not system]
        return request.override(messages=messages)

    def wrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], ModelResponse],
    ) -> ModelResponse:
        kept = self._trim.select(self._split(request), tool_schemas(request.tools)).messages
        return handler(self._trimmed(request, kept))

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        kept = (await self._trim.aselect(self._split(request), tool_schemas(request.tools))).messages
        return await handler(self._trimmed(request, kept))
