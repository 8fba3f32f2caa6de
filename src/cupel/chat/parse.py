"""Stage 1 of a chat selection, one message at a time: validation, token terms, links, rendering.

Both message formats reduce to a :class:`MessageView` first, so OpenAI-style dicts and the LangChain
adapter share one set of rules and one set of error messages. A plain message (only a role and a
text) is parsed without a view (:func:`parse_plain`); :func:`link_units` groups tool calls with the
messages answering them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import repeat
from types import MappingProxyType
from typing import Any, TypeGuard

from cupel._frozen import dataclass, field
from cupel.chat.options import ChatOptions
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "ROLES",
    "SYSTEM_ROLES",
    "MessageView",
    "ParsedMessage",
    "link_units",
    "parse_message",
    "parse_plain",
    "plain_columns",
    "plain_columns_of",
    "plain_message",
    "plain_of_mapping",
    "render_plain",
    "view_of_mapping",
]


ROLES: tuple[str, ...] = ("system", "developer", "user", "assistant", "tool", "function")
SYSTEM_ROLES = frozenset({"system", "developer"})

# Part type -> the key holding its text. Every other part type is a non-text part with a fixed cost.
_TEXT_PARTS: Mapping[str, str] = MappingProxyType(
    {
        "text": "text",
        "input_text": "text",
        "output_text": "text",
        "refusal": "refusal",
        "thinking": "thinking",
        "reasoning": "reasoning",
    }
)
# LangChain allows a reasoning block without its text.
_OPTIONAL_TEXT = frozenset({"reasoning"})
_IMAGE_PARTS = frozenset({"image_url", "input_image", "image"})


@dataclass(frozen=True, slots=True)
class MessageView:
    """The fields of one message that conversion reads, whatever object it came from."""

    role: object
    content: object = None
    name: object = None
    tool_calls: object = None
    tool_call_id: object = None
    function_call: object = None
    refusal: object = None


def view_of_mapping(message: object, index: int) -> MessageView:
    """The view of an OpenAI- or Anthropic-style message dict; other keys are carried but not read."""
    if not isinstance(message, Mapping):
        raise CupelTypeError(
            f"messages[{index}] must be a mapping with a 'role', got {type(message).__name__}"
        )
    if "role" not in message:
        raise InvalidConfigurationError(f"messages[{index}].role is missing")
    return MessageView(
        role=message["role"],
        content=message.get("content"),
        name=message.get("name"),
        tool_calls=message.get("tool_calls"),
        tool_call_id=message.get("tool_call_id"),
        function_call=message.get("function_call"),
        refusal=message.get("refusal"),
    )


@dataclass(slots=True)
class ParsedMessage:
    """One validated message: texts to count, fixed costs, the tool-call ids it makes and answers."""

    index: int
    role: str
    fixed: int
    texts: list[str] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    results: list[tuple[str, str]] = field(default_factory=list)
    function_call: str | None = None
    function_result: bool = False
    rendering: str = ""
    content_start: int = 0
    """Where the message's own texts start in ``texts`` (after its ``name``)."""
    last_call: tuple[str, str] | None = None
    """The newest tool or function call the message makes: its name and arguments."""


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _require_str(value: object, where: str) -> str:
    if not isinstance(value, str):
        if value is None:
            raise InvalidConfigurationError(f"{where} is missing")
        raise CupelTypeError(f"{where} must be a string, got {type(value).__name__}")
    return value


def _require_id(value: object, where: str) -> str:
    text = _require_str(value, where)
    if not text:
        raise InvalidConfigurationError(f"{where} must be a non-empty string")
    return text


def _is_sequence(value: object) -> TypeGuard[Sequence[object]]:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes | bytearray)


def _is_low_detail(part: Mapping[str, object]) -> bool:
    detail = part.get("detail")
    nested = part.get("image_url")
    if isinstance(nested, Mapping):
        detail = nested.get("detail", detail)
    return detail == "low"


class _Reader:
    """Accumulates one message's costs and rendering while its fields are validated."""

    __slots__ = ("options", "parsed")

    def __init__(self, parsed: ParsedMessage, options: ChatOptions) -> None:
        self.parsed = parsed
        self.options = options

    def text(self, text: str, out: list[str]) -> None:
        self.parsed.texts.append(text)
        if text:
            out.append(text)

    def charge_call(self, name: str, arguments: str) -> None:
        self.parsed.texts.append(name)
        self.parsed.texts.append(arguments)
        self.parsed.fixed += self.options.tool_call_overhead
        self.parsed.last_call = (name, arguments)

    def call(self, call_id: str, name: str, arguments: str, where: str, label: str, out: list[str]) -> None:
        self.charge_call(name, arguments)
        self.parsed.calls.append((call_id, where))
        out.append(f"<{label} {call_id} {name}({arguments})>")

    def function_call(self, call: object, where: str, out: list[str]) -> None:
        if not isinstance(call, Mapping):
            raise CupelTypeError(f"{where} must be a mapping, got {type(call).__name__}")
        name = _require_str(call.get("name"), f"{where}.name")
        raw = call.get("arguments", "")
        arguments = raw if isinstance(raw, str) else _json(raw)
        self.charge_call(name, arguments)
        # A legacy function call has no id: the next function message is its result.
        self.parsed.function_call = where
        out.append(f"<function_call {name}({arguments})>")

    def content(self, content: object, where: str, out: list[str], *, inside_result: bool) -> None:
        if content is None:
            return
        if isinstance(content, str):
            self.text(content, out)
        elif _is_sequence(content):
            for position, part in enumerate(content):
                self.part(part, f"{where}[{position}]", out, inside_result=inside_result)
        else:
            raise CupelTypeError(
                f"{where} must be a string, a list of content parts or None, got {type(content).__name__}"
            )

    def part(self, part: object, where: str, out: list[str], *, inside_result: bool) -> None:
        if not isinstance(part, Mapping):
            raise CupelTypeError(f"{where} must be a mapping with a 'type', got {type(part).__name__}")
        part_type = _require_id(part.get("type"), f"{where}.type")
        text_key = _TEXT_PARTS.get(part_type)
        role = self.parsed.role
        if text_key is not None:
            text = part.get(text_key)
            if text is None and part_type in _OPTIONAL_TEXT:
                return
            self.text(_require_str(text, f"{where}.{text_key}"), out)
        elif part_type == "tool_use":
            if inside_result or role != "assistant":
                raise InvalidConfigurationError(
                    f"{where} is a tool_use block, which only an assistant message may hold"
                )
            call_id = _require_id(part.get("id"), f"{where}.id")
            name = _require_str(part.get("name"), f"{where}.name")
            self.call(call_id, name, _json(part.get("input", {})), f"{where}.id", "tool_use", out)
        elif part_type == "tool_result":
            if inside_result or role != "user":
                raise InvalidConfigurationError(
                    f"{where} is a tool_result block, which only a user message may hold"
                )
            call_id = _require_id(part.get("tool_use_id"), f"{where}.tool_use_id")
            self.parsed.results.append((call_id, f"{where}.tool_use_id"))
            inner: list[str] = []
            self.content(part.get("content"), f"{where}.content", inner, inside_result=True)
            out.append(f"<tool_result {call_id}: {' '.join(inner)}>")
        else:
            low_detail = part_type in _IMAGE_PARTS and _is_low_detail(part)
            self.parsed.fixed += self.options.cost_of_part(part_type, low_detail=low_detail)
            out.append(f"<{part_type}>")

    def tool_calls(self, calls: object, where: str, out: list[str]) -> None:
        if not _is_sequence(calls):
            raise CupelTypeError(f"{where} must be a list of tool calls, got {type(calls).__name__}")
        for position, call in enumerate(calls):
            call_where = f"{where}[{position}]"
            if not isinstance(call, Mapping):
                raise CupelTypeError(f"{call_where} must be a mapping, got {type(call).__name__}")
            call_id = _require_id(call.get("id"), f"{call_where}.id")
            call_type = call.get("type", "function")
            if not isinstance(call_type, str):
                raise CupelTypeError(f"{call_where}.type must be a string, got {type(call_type).__name__}")
            payload = call.get(call_type)
            if not isinstance(payload, Mapping):
                raise InvalidConfigurationError(
                    f"{call_where}.{call_type} must be a mapping with the tool's name and arguments"
                )
            name = _require_str(payload.get("name"), f"{call_where}.{call_type}.name")
            raw = payload.get("arguments", payload.get("input", ""))
            arguments = raw if isinstance(raw, str) else _json(raw)
            self.call(call_id, name, arguments, f"{call_where}.id", "tool_call", out)


def parse_message(view: MessageView, index: int, options: ChatOptions) -> ParsedMessage:
    """Validate one message and collect what its token cost and tool-call links need."""
    where = f"messages[{index}]"
    role = view.role
    if not isinstance(role, str):
        raise CupelTypeError(f"{where}.role must be a string, got {type(role).__name__}")
    if role not in ROLES:
        raise InvalidConfigurationError(f"{where}.role must be one of {', '.join(ROLES)}; got {role!r}")
    parsed = ParsedMessage(index, role, options.message_overhead)
    reader = _Reader(parsed, options)
    label = f"[{index}] {role}"
    if view.name is not None:
        name = _require_str(view.name, f"{where}.name")
        parsed.texts.append(name)
        parsed.content_start = 1
        parsed.fixed += options.name_overhead
        label += f" ({name})"
    if role == "tool":
        call_id = _require_id(view.tool_call_id, f"{where}.tool_call_id")
        parsed.results.append((call_id, f"{where}.tool_call_id"))
        label += f" -> {call_id}"
    elif view.tool_call_id is not None:
        raise InvalidConfigurationError(f"{where}.tool_call_id is only allowed on tool messages")
    parsed.function_result = role == "function"
    out: list[str] = []
    reader.content(view.content, f"{where}.content", out, inside_result=False)
    if view.refusal is not None:
        reader.text(_require_str(view.refusal, f"{where}.refusal"), out)
    if view.tool_calls is not None:
        if role != "assistant":
            raise InvalidConfigurationError(f"{where}.tool_calls is only allowed on assistant messages")
        reader.tool_calls(view.tool_calls, f"{where}.tool_calls", out)
    if view.function_call is not None:
        if role != "assistant":
            raise InvalidConfigurationError(f"{where}.function_call is only allowed on assistant messages")
        reader.function_call(view.function_call, f"{where}.function_call", out)
    parsed.rendering = f"{label}: {' '.join(out)}" if out else label
    return parsed


_PLAIN_ROLES = frozenset({"system", "developer", "user", "assistant"})


def parse_plain(
    message: object, index: int, options: ChatOptions, *, render: bool = True
) -> ParsedMessage | None:
    """The fast path for the common message ``{"role": ..., "content": "text"}``; ``None`` for any other.

    Gives exactly what :func:`parse_message` gives for such a message, without building a view.
    """
    found = plain_of_mapping(message)
    if found is None:
        return None
    return plain_message(index, found[0], found[1], options, render=render)


def plain_of_mapping(message: object) -> tuple[str, str] | None:
    """``(role, content)`` of a dict holding only a role and a text content; ``None`` for any other."""
    if type(message) is dict and len(message) == 2:
        content = message.get("content")
        role = message.get("role")
        if type(content) is str and type(role) is str and role in _PLAIN_ROLES:
            return role, content
    return None


def plain_columns_of(
    plain_of: Callable[[object], tuple[str, str] | None],
) -> Callable[[Sequence[object]], tuple[list[str | None], list[str | None]]]:
    """A :func:`plain_columns` for other message objects, from what reads one of them."""

    def split(messages: Sequence[object]) -> tuple[list[str | None], list[str | None]]:
        roles: list[str | None] = []
        contents: list[str | None] = []
        for found in map(plain_of, messages):
            roles.append(None if found is None else found[0])
            contents.append(None if found is None else found[1])
        return roles, contents

    return split


def plain_columns(messages: Sequence[object]) -> tuple[list[str | None], list[str | None]]:
    """Role and text of each message dict holding only a role and a text content (``None``, ``None``
    for any other message)."""
    dicts: Sequence[Any] = messages
    if set(map(type, dicts)) == {dict} and set(map(len, dicts)) == {2}:
        # The common case, checked and read column by column in C-level passes.
        get: Any = dict.get
        all_roles: list[Any] = list(map(get, dicts, repeat("role")))
        all_contents: list[Any] = list(map(get, dicts, repeat("content")))
        if (
            set(map(type, all_contents)) == {str}
            and set(map(type, all_roles)) == {str}
            and set(all_roles) <= _PLAIN_ROLES
        ):
            return all_roles, all_contents
    return _plain_columns_one_by_one(messages)


_plain_columns_one_by_one = plain_columns_of(plain_of_mapping)


def render_plain(index: int, role: str, content: str) -> str:
    """The rendering :func:`parse_message` gives a message with only a role and a text content."""
    return f"[{index}] {role}: {content}" if content else f"[{index}] {role}"


def plain_message(
    index: int, role: str, content: str, options: ChatOptions, *, render: bool = True
) -> ParsedMessage:
    """The parse of a message with only a role and a text content (``render=False``: no rendering)."""
    if not render:
        return ParsedMessage(index, role, options.message_overhead, [content])
    rendering = render_plain(index, role, content)
    return ParsedMessage(index, role, options.message_overhead, [content], rendering=rendering)


def link_units(parsed: Sequence[ParsedMessage]) -> list[tuple[int, ...]]:
    """Group messages into atomic units: a tool call's message and every message answering it.

    Returns the units by first message index, each holding its message indices ascending (the
    messages' own ``index``, so a transcript with messages left out keeps its positions). Raises
    :class:`InvalidConfigurationError` for a result without an earlier call, a call id duplicating one
    still unanswered, a call answered twice, or a call with no result.
    """
    parent = list(range(len(parsed)))

    def find(node: int) -> int:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def union(a: int, b: int) -> None:
        root_a, root_b = find(a), find(b)
        if root_a != root_b:
            parent[max(root_a, root_b)] = min(root_a, root_b)

    # Calls still waiting for their result, by id. An id may be reused once its call is answered (some
    # servers number calls per turn), so a result always binds to the one open call with its id.
    open_calls: dict[str, tuple[int, str]] = {}
    answered: dict[str, str] = {}
    # Legacy function calls (no ids): (message index, field path), innermost last.
    open_function_calls: list[tuple[int, str]] = []
    for position, message in enumerate(parsed):
        for call_id, where in message.results:
            declaration = open_calls.pop(call_id, None)
            if declaration is None:
                if call_id in answered:
                    raise InvalidConfigurationError(
                        f"{where}: tool call {call_id!r} is answered twice (first by {answered[call_id]})"
                    )
                raise InvalidConfigurationError(
                    f"{where} is {call_id!r}, which answers no tool call made by an earlier assistant "
                    "message (a tool result must follow its call)"
                )
            answered[call_id] = where
            union(declaration[0], position)
        if message.function_result:
            if not open_function_calls:
                raise InvalidConfigurationError(
                    f"messages[{message.index}] is a function result with no unanswered "
                    "function_call before it"
                )
            union(open_function_calls.pop()[0], position)
        for call_id, where in message.calls:
            if call_id in open_calls:
                raise InvalidConfigurationError(
                    f"{where} is {call_id!r}, a duplicate of the id of {open_calls[call_id][1]}, whose "
                    "result has not come yet; the ids of unanswered tool calls must be unique"
                )
            open_calls[call_id] = (position, where)
        if message.function_call is not None:
            open_function_calls.append((position, message.function_call))
    for call_id, (_, where) in open_calls.items():
        raise InvalidConfigurationError(
            f"{where}: tool call {call_id!r} has no result in the transcript; every tool call needs "
            "its result, or providers reject the request"
        )
    if open_function_calls:
        raise InvalidConfigurationError(
            f"{open_function_calls[0][1]} has no function result after it; every function call needs "
            "its result, or providers reject the request"
        )
    units: dict[int, list[int]] = {}
    for position, message in enumerate(parsed):
        units.setdefault(find(position), []).append(message.index)
    return [tuple(members) for members in units.values()]
