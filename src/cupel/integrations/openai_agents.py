"""OpenAI Agents SDK: a ``RunConfig.call_model_input_filter`` that trims the model's input items.

Needs ``pip install 'pycupel[openai-agents]'``::

    config = RunConfig(call_model_input_filter=input_filter(8000))
    result = await Runner.run(agent, question, run_config=config)

Input items are Responses API items. The items one model turn produced (reasoning, messages, tool
calls) stay together, and together with the ``*_call_output`` items answering their calls. The
agent's instructions and its function tools' schemas are charged against the budget. See
``docs/integrations.md``.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
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
    from agents import FunctionTool
    from agents.run_config import CallModelData, ModelInputData
except ImportError as error:  # pragma: no cover - exercised with the extra blocked
    raise missing_extra(
        "cupel.integrations.openai_agents", "openai-agents", "openai-agents", error
    ) from error

__all__ = ["input_filter", "item_units", "unit_view"]

_IMAGE_PARTS = frozenset({"input_image", "computer_screenshot"})


def _plain(item: object) -> Mapping[str, Any]:
    if isinstance(item, Mapping):
        return item
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        data: Mapping[str, Any] = dump(exclude_unset=True)
        return data
    raise CupelTypeError(f"input items must be dicts or Responses API models, got {type(item).__name__}")


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _is_output(item: Mapping[str, Any]) -> bool:
    """Produced by the model: reasoning, an assistant message, or any ``*_call`` item."""
    kind = str(item.get("type", "message"))
    return kind == "reasoning" or item.get("role") == "assistant" or kind.endswith("_call")


def item_units(items: Sequence[object]) -> list[tuple[object, ...]]:
    """Items grouped as cupel reads them: each run of model-output items (one model turn) is one group,
    every other item its own group. Groups are flattened back, in order, after selection."""
    groups: list[list[object]] = []
    previous_output = False
    for item in items:
        output = _is_output(_plain(item))
        if output and previous_output:
            groups[-1].append(item)
        else:
            groups.append([item])
        previous_output = output
    return [tuple(group) for group in groups]


def _parts(content: object) -> object:
    if not isinstance(content, list):
        return [{"type": str(content.get("type", "output"))}] if isinstance(content, Mapping) else content
    parts: list[object] = []
    for part in content:
        plain = _plain(part)
        kind = str(plain.get("type", ""))
        if kind in _IMAGE_PARTS:
            parts.append({"type": "input_image", "detail": plain.get("detail")})
        else:
            parts.append(plain)
    return parts


def unit_view(unit: tuple[object, ...], answered: frozenset[str]) -> MessageView:
    """How cupel reads one group: an input message as itself, a ``*_call_output`` as a tool result, a
    model turn as one assistant message whose answered calls are tool calls. ``answered`` holds the
    call ids some ``*_call_output`` item answers; other calls (provider-run) are plain content."""
    first = _plain(unit[0])
    kind = str(first.get("type", "message"))
    if len(unit) == 1 and not _is_output(first):
        if kind.endswith("_call_output"):
            output = first.get("output", "")
            return MessageView("tool", _parts(output), tool_call_id=first.get("call_id"))
        if kind == "message" and isinstance(first.get("role"), str):
            return MessageView(first["role"], _parts(first.get("content")))
        # Other input items (references, approvals): charged as their JSON text.
        return MessageView("user", _json(dict(first)))
    blocks: list[object] = []
    calls: list[dict[str, Any]] = []
    for item in map(_plain, unit):
        kind = str(item.get("type", "message"))
        if kind == "reasoning":
            for summary in item.get("summary") or ():
                text = _plain(summary).get("text")
                if isinstance(text, str):
                    blocks.append({"type": "reasoning", "reasoning": text})
        elif kind == "message":
            parts = _parts(item.get("content"))
            blocks.extend(parts if isinstance(parts, list) else [{"type": "text", "text": parts}])
        elif item.get("call_id") in answered:
            name = item.get("name", kind)
            arguments = item.get("arguments", item.get("input", item.get("action", {})))
            calls.append(
                {
                    "id": item["call_id"],
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": arguments if isinstance(arguments, str) else _json(arguments),
                    },
                }
            )
        else:
            blocks.append({"type": "text", "text": _json(dict(item))})
    return MessageView("assistant", blocks, tool_calls=calls or None)


def _tool_schemas(tools: Sequence[object]) -> list[dict[str, Any]]:
    return [
        {"name": tool.name, "description": tool.description, "parameters": tool.params_json_schema}
        for tool in tools
        if isinstance(tool, FunctionTool)
    ]


def _summary(text: str) -> tuple[object, ...]:
    """A text summary as a unit: one ``system`` message item."""
    return ({"role": "system", "content": text},)


def input_filter(
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: AsyncCounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    strategy: ChatStrategy | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
) -> Callable[[CallModelData[Any]], Awaitable[ModelInputData]]:
    """A ``call_model_input_filter`` keeping the model's input within ``budget`` tokens.

    Returns the same item objects, in order; the agent's instructions (pinned, as a system message)
    and its function tools' schemas count against the budget. ``counter`` may be async.
    ``strategy``, ``on_invalid``, ``summarize`` and ``summary_tokens`` are those of
    :func:`cupel.chat.select_messages` (a text summary becomes a ``system`` message item); without a
    ``policy`` a latest turn too long for the budget is truncated instead of raising.
    """
    settings = TrimSettings(strategy, on_invalid, summarize, summary_tokens)

    async def filter_input(data: CallModelData[Any]) -> ModelInputData:
        items = list(data.model_data.input)
        units = item_units(items)
        answered = frozenset(
            str(_plain(item).get("call_id"))
            for item in items
            if str(_plain(item).get("type", "")).endswith("_call_output")
        )
        instructions = data.model_data.instructions
        head: list[tuple[object, ...]] = [()] if instructions else []

        def view_of(unit: tuple[object, ...], index: int) -> MessageView:
            if not unit:
                return MessageView("system", instructions)
            return unit_view(unit, answered)

        trim = Trimmer(
            view_of, budget, policy, counter, options, settings=settings, summary_of=_summary, agent=True
        )
        tools = getattr(data.agent, "tools", ())
        selection = await trim.aselect([*head, *units], _tool_schemas(tools))
        kept = [item for unit in selection.messages for item in unit]
        return ModelInputData(input=kept, instructions=instructions)

    return filter_input
