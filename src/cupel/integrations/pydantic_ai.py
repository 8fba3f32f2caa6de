"""pydantic-ai: a ``history_processors`` entry that trims an agent's message history.

Needs ``pip install 'pycupel[pydantic-ai]'`` (``pydantic-ai-slim``)::

    agent = Agent(model, capabilities=[TrimHistory(8000)])
    # or, trimming the stored history too: capabilities=[ProcessHistory(history_processor(8000))]

Each ``ModelResponse`` with tool calls stays together with the ``ModelRequest`` holding their returns;
the request being answered is always kept. See ``docs/integrations.md``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from cupel.chat.options import ChatOptions, ChatPolicy, OnInvalid
from cupel.chat.parse import MessageView
from cupel.chat.plan import Summarizer
from cupel.errors import CupelTypeError
from cupel.integrations._common import missing_extra
from cupel.integrations._trim import Trimmer, TrimSettings
from cupel.model import ContextBudget
from cupel.policy.chat_settings import ChatStrategy
from cupel.tokens.asynchronous import AsyncCounterLike

try:
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, SystemPromptPart
    from pydantic_ai.models import ModelRequestContext
    from pydantic_ai.tools import RunContext
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra("cupel.integrations.pydantic_ai", "pydantic-ai-slim", "pydantic-ai", error) from error

__all__ = ["TrimHistory", "history_processor", "message_view"]

# Parts carrying a file or media payload: charged like an image (ChatOptions.part_cost), never by size.
_MEDIA_PARTS = frozenset({"file", "speech"})


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _text(text: object) -> dict[str, Any]:
    return {"type": "text", "text": text if isinstance(text, str) else _json(text)}


def _user_content(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [_text(content)]
    blocks: list[dict[str, Any]] = []
    for item in content if isinstance(content, Sequence) else [content]:
        if isinstance(item, str):
            blocks.append(_text(item))
        elif getattr(item, "is_image", False) or "image" in str(getattr(item, "kind", "")):
            blocks.append({"type": "image"})
        else:
            blocks.append({"type": str(getattr(item, "kind", type(item).__name__))})
    return blocks


def _tool_args(part: Any) -> object:
    try:
        return part.args_as_dict(raise_if_invalid=True)
    except Exception:  # malformed JSON arguments are charged as the text they are
        return part.args if part.args is not None else {}


def message_view(message: ModelMessage, index: int) -> MessageView:
    """How cupel reads a pydantic-ai message: a request as a user (or system) message whose tool
    returns are ``tool_result`` blocks, a response as an assistant message whose tool calls are
    ``tool_use`` blocks (the Anthropic form, which holds several calls or returns per message)."""
    blocks: list[dict[str, Any]] = []
    if isinstance(message, ModelRequest):
        system = results = False
        request_parts: list[Any] = list(message.parts)  # read by part_kind, across pydantic-ai versions
        for part in request_parts:
            kind = part.part_kind
            if kind in ("system-prompt", "instruction"):
                system = True
                blocks.append(_text(part.content))
            elif kind == "user-prompt":
                blocks.extend(_user_content(part.content))
            elif kind == "tool-return":
                results = True
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": part.tool_call_id,
                        "content": part.model_response_str(),
                    }
                )
            elif kind in ("retry-prompt", "retry-feedback") and getattr(part, "tool_name", None):
                results = True
                blocks.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": part.tool_call_id,
                        "content": part.model_response(),
                    }
                )
            elif kind in ("retry-prompt", "retry-feedback"):
                blocks.append(_text(part.model_response()))
            elif isinstance(getattr(part, "content", None), str):
                blocks.append(_text(part.content))
        role = "user" if results or not system else "system"
        return MessageView(role, blocks)
    if isinstance(message, ModelResponse):
        response_parts: list[Any] = list(message.parts)
        for part in response_parts:
            kind = part.part_kind
            if kind == "text":
                blocks.append(_text(part.content))
            elif kind == "thinking":
                blocks.append({"type": "thinking", "thinking": part.content})
            elif kind == "tool-call":
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": part.tool_call_id,
                        "name": part.tool_name,
                        "input": _tool_args(part),
                    }
                )
            elif kind == "builtin-tool-call":
                # Run by the provider inside this response: its call and return are plain content.
                blocks.append(_text(f"{part.tool_name}({_json(_tool_args(part))})"))
            elif kind == "builtin-tool-return":
                blocks.append(_text(part.model_response_str()))
            elif kind in _MEDIA_PARTS:
                blocks.append({"type": kind})
            elif isinstance(getattr(part, "content", None), str):
                blocks.append(_text(part.content))
        return MessageView("assistant", blocks)
    raise CupelTypeError(
        f"messages[{index}] must be a ModelRequest or ModelResponse, got {type(message).__name__}"
    )


def _summary(text: str) -> ModelRequest:
    return ModelRequest(parts=[SystemPromptPart(content=text)])


def _trimmer(
    budget: ContextBudget | int,
    policy: ChatPolicy,
    counter: AsyncCounterLike | None,
    options: ChatOptions | None,
    settings: TrimSettings,
) -> Trimmer:
    return Trimmer(
        message_view, budget, policy, counter, options, settings=settings, summary_of=_summary, agent=True
    )


def history_processor(
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    strategy: ChatStrategy | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
) -> Callable[[list[ModelMessage]], Awaitable[list[ModelMessage]]]:
    """An async history processor keeping the history within ``budget`` tokens.

    Returns the same message objects, in order. A request holding a system prompt is pinned (with
    ``ChatOptions.pin_system``), as is the last request (``pin_last_user``), so the processed history
    always ends with the request the model must answer. ``counter`` may be async. ``strategy``,
    ``on_invalid``, ``summarize`` and ``summary_tokens`` are those of
    :func:`cupel.chat.select_messages` (a text summary becomes a request with a system prompt part);
    without a ``policy`` a latest turn too long for the budget is truncated instead of raising.
    """
    trim = _trimmer(
        budget, policy, counter, options, TrimSettings(strategy, on_invalid, summarize, summary_tokens)
    )

    async def process(messages: list[ModelMessage]) -> list[ModelMessage]:
        return list((await trim.aselect(messages)).messages)

    return process


class TrimHistory(AbstractCapability[Any]):
    """A capability trimming what each model request is sent to ``budget`` tokens.

    The run's stored history stays whole; only the request's copy is trimmed. The request's tool
    definitions (function and output tools: name, description, JSON schema) are charged against the
    budget first. Arguments are those of :func:`history_processor`.
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
        self._trim = _trimmer(
            budget, policy, counter, options, TrimSettings(strategy, on_invalid, summarize, summary_tokens)
        )

    @classmethod
    def get_serialization_name(cls) -> str | None:
        return None  # built from Python values (a counter, a policy), not from an agent spec file

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        parameters = request_context.model_request_parameters
        schemas = [
            {"name": tool.name, "description": tool.description, "parameters": tool.parameters_json_schema}
            for tool in [*parameters.function_tools, *parameters.output_tools]
        ]
        selection = await self._trim.aselect(request_context.messages, schemas)
        request_context.messages = list(selection.messages)
        return request_context
