"""LangChain adapter: trim a list of ``BaseMessage`` with the same guarantees as :mod:`cupel.chat`.

Needs ``pip install 'pycupel[langchain]'`` (``langchain-core``), imported only when a function here is
called. The selected messages are the very ``BaseMessage`` objects passed in.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from itertools import compress, repeat
from operator import attrgetter, contains, is_
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

from cupel.chat.options import ChatOptions, ChatPolicy, OnInvalid, selection_attributes
from cupel.chat.parse import MessageView, ParsedMessage, parse_message, plain_columns_of, plain_message
from cupel.chat.plan import Summarizer, run_planned_async
from cupel.chat.read import Reader, build_items, cleared_blocks, message_costs
from cupel.chat.render import ChatSelection
from cupel.chat.select import plan_selection, select_with
from cupel.chat.session import ChatSession
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget, ContextItem
from cupel.policy.chat_settings import ChatStrategy, ToolResultClearing
from cupel.tokens._optional import import_optional
from cupel.tokens.base import CounterLike

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

__all__ = ["cleared_message"]


# Content blocks that restate an AIMessage's tool_calls; counted once, through tool_calls.
_CALL_BLOCKS = frozenset({"tool_use", "tool_call"})


def _langchain() -> ModuleType:
    return import_optional(
        "langchain_core.messages", package="langchain-core", extra="langchain", feature="cupel.chat.langchain"
    )


def _content(content: object, drop_ids: frozenset[str]) -> object:
    """LangChain content as message-dict content: bare strings in a list become text parts."""
    if not isinstance(content, list):
        return content
    parts: list[object] = []
    for part in content:
        if isinstance(part, str):
            parts.append({"type": "text", "text": part})
        elif isinstance(part, dict) and part.get("type") in _CALL_BLOCKS and part.get("id") in drop_ids:
            continue
        else:
            parts.append(part)
    return parts


def _tool_calls(message: Any) -> list[dict[str, Any]]:
    calls: list[dict[str, Any]] = []
    for call in list(message.tool_calls) + list(message.invalid_tool_calls):
        args = call.get("args")
        arguments = args if isinstance(args, str) else json.dumps(args, ensure_ascii=False, default=str)
        calls.append(
            {
                "id": call.get("id"),
                "type": "function",
                "function": {"name": call.get("name"), "arguments": arguments},
            }
        )
    return calls


def _view(module: ModuleType, message: Any, index: int) -> MessageView:
    name = message.name
    if isinstance(message, module.AIMessage):
        calls = _tool_calls(message)
        ids = frozenset(str(call["id"]) for call in calls if call["id"] is not None)
        return MessageView(
            "assistant",
            _content(message.content, ids),
            name,
            tool_calls=calls or None,
            function_call=message.additional_kwargs.get("function_call"),
        )
    content = _content(message.content, frozenset())
    if isinstance(message, module.ToolMessage):
        return MessageView("tool", content, name, tool_call_id=message.tool_call_id)
    if isinstance(message, module.HumanMessage):
        return MessageView("user", content, name)
    if isinstance(message, module.SystemMessage):
        developer = message.additional_kwargs.get("__openai_role__") == "developer"
        return MessageView("developer" if developer else "system", content, name)
    if isinstance(message, module.FunctionMessage):
        return MessageView("function", content, name)
    if isinstance(message, module.ChatMessage):
        return MessageView(message.role, content, name)
    raise InvalidConfigurationError(
        f"messages[{index}] is a {type(message).__name__}, which is not a chat message cupel can select"
    )


def _checked(messages: object) -> list[Any]:
    if isinstance(messages, str | bytes) or not isinstance(messages, Sequence):
        raise CupelTypeError(f"messages must be a sequence of BaseMessage, got {type(messages).__name__}")
    return list(messages)


def _plain_of(module: ModuleType, message: Any) -> tuple[str, str] | None:
    """``(role, text)`` of a text-only Human, AI or System message; ``None`` for any other."""
    kind = type(message)
    if kind is module.HumanMessage:
        role = "user"
    elif kind is module.AIMessage:
        if message.tool_calls or message.invalid_tool_calls or "function_call" in message.additional_kwargs:
            return None
        role = "assistant"
    elif kind is module.SystemMessage and "__openai_role__" not in message.additional_kwargs:
        role = "system"
    else:
        return None
    content = message.content
    if type(content) is not str or message.name is not None:
        return None
    return role, content


def _plain_columns(module: ModuleType, messages: Sequence[Any]) -> tuple[list[str | None], list[str | None]]:
    """Role and text of each text-only Human, AI or System message (``None``, ``None`` for others).

    When every message is one, it is read column by column in C-level passes.
    """
    role_of = {module.HumanMessage: "user", module.AIMessage: "assistant", module.SystemMessage: "system"}
    types = list(map(type, messages))
    if set(types) <= role_of.keys() and types:
        # These exact classes keep their fields in the instance dict (pydantic): read from it in C
        # passes, a field that is not there (``_ABSENT``) sending the message down the general path.
        fields = list(map(_FIELDS, messages))
        contents: list[Any] = _field(fields, "content")
        if set(map(type, contents)) == {str} and set(_field(fields, "name")) == {None}:
            ais = list(compress(fields, map(is_, types, repeat(module.AIMessage))))
            systems = list(compress(fields, map(is_, types, repeat(module.SystemMessage))))
            if (
                not any(_field(ais, "tool_calls"))
                and not any(_field(ais, "invalid_tool_calls"))
                and not _any_kwarg(ais, "function_call")
                and not _any_kwarg(systems, "__openai_role__")
            ):
                roles: list[Any] = list(map(role_of.__getitem__, types))
                return roles, contents
    return plain_columns_of(lambda message: _plain_of(module, message))(messages)


_FIELDS = attrgetter("__dict__")
_ABSENT = ("absent",)  # truthy, no str, None or mapping: a missing field fails every check


def _field(fields: list[dict[str, Any]], name: str, absent: object = _ABSENT) -> list[Any]:
    """The field ``name`` of each message's field dict (``absent`` where it has none)."""
    return list(map(dict.get, fields, repeat(name), repeat(absent)))


def _any_kwarg(fields: list[dict[str, Any]], key: str) -> bool:
    """Whether any message's ``additional_kwargs`` holds ``key`` (a message without them: yes)."""
    return any(map(contains, _field(fields, "additional_kwargs", {key: 1}), repeat(key)))


def _plain(module: ModuleType, message: Any, index: int, options: ChatOptions) -> ParsedMessage | None:
    """The parse of a text-only Human, AI or System message without a view; ``None`` for any other."""
    found = _plain_of(module, message)
    if found is None:
        return None
    # Only the window scan reads this fast path, and it never renders.
    return plain_message(index, found[0], found[1], options, render=False)


def _checked_view(module: ModuleType, message: Any, index: int) -> MessageView:
    """The view of one LangChain message, checked to be a ``BaseMessage``."""
    if not isinstance(message, module.BaseMessage):
        raise CupelTypeError(
            f"messages[{index}] must be a LangChain BaseMessage, got {type(message).__name__}"
        )
    return _view(module, message, index)


def message_views(messages: Sequence[BaseMessage]) -> list[MessageView]:
    """The message views of LangChain messages (checked to be ``BaseMessage`` objects)."""
    module = _langchain()
    views: list[MessageView] = []
    for index, message in enumerate(_checked(messages)):
        views.append(_checked_view(module, message, index))
    return views


def message_token_counts(
    messages: Sequence[BaseMessage],
    *,
    counter: CounterLike | None = None,
    options: ChatOptions | None = None,
) -> list[int]:
    """The token cost of each LangChain message, as :func:`messages_to_items` charges it."""
    return message_costs(message_views(messages), counter, options)


def messages_to_items(
    messages: Sequence[BaseMessage],
    *,
    counter: CounterLike | None = None,
    options: ChatOptions | None = None,
    timestamps: Sequence[datetime] | None = None,
) -> list[ContextItem]:
    """Like :func:`cupel.chat.messages_to_items`, for LangChain messages (stored as given)."""
    views = message_views(messages)
    originals = list(messages)
    return build_items(views, originals, counter=counter, options=options, timestamps=timestamps)


def select_messages(
    messages: Sequence[BaseMessage],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: CounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    strategy: ChatStrategy | None = None,
    keep_first_turn: bool | None = None,
    recent_share: float | None = None,
    start_on: Literal["user", "any"] | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
    session: ChatSession | None = None,
    query: str | None = "auto",
    clear_tool_results: ToolResultClearing | bool | None = None,
) -> ChatSelection[BaseMessage]:
    """Like :func:`cupel.chat.select_messages`, for LangChain messages: returns the same objects.

    A text summary becomes a ``SystemMessage``.
    """
    return select_with(messages, budget, policy, counter, options, locals(), _reader(_langchain()))


async def aselect_messages(
    messages: Sequence[BaseMessage],
    budget: ContextBudget | int,
    policy: ChatPolicy = None,
    counter: CounterLike | None = None,
    *,
    options: ChatOptions | None = None,
    strategy: ChatStrategy | None = None,
    keep_first_turn: bool | None = None,
    recent_share: float | None = None,
    start_on: Literal["user", "any"] | None = None,
    on_invalid: OnInvalid = "error",
    summarize: Summarizer | bool | None = None,
    summary_tokens: int = 0,
    session: ChatSession | None = None,
    query: str | None = "auto",
    clear_tool_results: ToolResultClearing | bool | None = None,
) -> ChatSelection[BaseMessage]:
    """Like :func:`cupel.chat.aselect_messages`, for LangChain messages."""
    keywords = locals()

    async def select() -> tuple[ChatSelection[BaseMessage], Sequence[BaseMessage]]:
        plan = _plan(messages, budget, policy, counter, options, keywords)
        if isinstance(plan, ChatSelection):
            return plan, messages
        return await plan[0].run_async(plan[1]), messages

    return await run_planned_async(select, budget, lambda: selection_attributes(policy, keywords))


def _reader(module: ModuleType) -> Reader:
    """The reader of LangChain messages (``module`` is ``langchain_core.messages``)."""
    return Reader(
        checked=_checked,
        view=lambda message, index: _checked_view(module, message, index),
        parse=lambda message, index, options: parse_message(
            _checked_view(module, message, index), index, options
        ),
        plain_columns=lambda messages: _plain_columns(module, messages),
        plain=lambda message, index, options: _plain(module, message, index, options),
        items=lambda originals, counter, options: messages_to_items(
            originals, counter=counter, options=options
        ),
        system_message=module.SystemMessage,
        cleared=cleared_message,
    )


def cleared_message(message: Any, texts: Mapping[str, str]) -> Any:
    """A copy of a ``ToolMessage`` (or of a message's ``tool_result`` blocks) whose results named in
    ``texts`` (call id -> placeholder) hold the placeholder; ids, names and the rest are kept."""
    if getattr(message, "type", None) == "tool":
        return message.model_copy(update={"content": texts[message.tool_call_id]})
    return message.model_copy(update={"content": cleared_blocks(message.content, texts)})


def _plan(
    messages: Sequence[BaseMessage],
    budget: ContextBudget | int,
    policy: object,
    counter: CounterLike | None,
    options: ChatOptions | None,
    keywords: Mapping[str, Any],
) -> ChatSelection[Any] | tuple[Any, Any]:
    return plan_selection(messages, budget, policy, counter, options, keywords, _reader(_langchain()))
