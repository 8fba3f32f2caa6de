"""Trimming LangChain messages, shared by the LangChain and LangGraph integrations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cupel.chat import langchain as lc_chat
from cupel.chat.options import ChatOptions, ChatPolicy
from cupel.chat.parse import MessageView
from cupel.errors import CupelTypeError
from cupel.integrations._common import missing_extra
from cupel.integrations._trim import Trimmer, TrimSettings
from cupel.model import ContextBudget
from cupel.tokens.asynchronous import AsyncCounterLike

try:
    from langchain_core.messages import BaseMessage, SystemMessage, convert_to_messages
    from langchain_core.prompt_values import PromptValue
    from langchain_core.utils.function_calling import convert_to_openai_tool
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.langchain", "langchain-core", "langchain", error) from error

__all__ = ["as_messages", "lc_view", "tool_schemas", "trimmer"]


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


def lc_view(message: Any, index: int) -> MessageView:
    """How cupel reads one LangChain message: as :mod:`cupel.chat.langchain` does."""
    return lc_chat.message_views([message])[0]


def tool_schemas(tools: Sequence[Any] | None) -> list[dict[str, Any]]:
    """Tools in any form ``bind_tools`` takes, as the OpenAI tool schemas a model is sent."""
    return [convert_to_openai_tool(tool) for tool in tools or ()]


def trimmer(
    budget: ContextBudget | int,
    policy: ChatPolicy,
    counter: AsyncCounterLike | None,
    options: ChatOptions | None,
    settings: TrimSettings,
    *,
    agent: bool = False,
) -> Trimmer:
    """The shared trimmer, reading LangChain messages; a text summary becomes a ``SystemMessage``."""
    return Trimmer(
        lc_view,
        budget,
        policy,
        counter,
        options,
        settings=settings,
        summary_of=SystemMessage,
        agent=agent,
        cleared=lc_chat.cleared_message,
    )
