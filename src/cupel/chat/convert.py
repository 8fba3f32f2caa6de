"""Transcript <-> ContextItem conversion: one item per atomic unit, expanded back after selection."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from cupel.chat._counts import count_texts_once
from cupel.chat._parse import (
    SYSTEM_ROLES,
    MessageView,
    ParsedMessage,
    link_units,
    parse_message,
    parse_plain,
    view_of_mapping,
)
from cupel.chat.options import ChatOptions
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem, ContextKind, ContextSource
from cupel.tokens.base import CounterLike

if TYPE_CHECKING:
    from cupel.diagnostics.report import SelectionReport

__all__ = [
    "INDICES_KEY",
    "MESSAGES_KEY",
    "ROLES_KEY",
    "SYNTHETIC_EPOCH",
    "build_items",
    "is_chat_transcript",
    "message_costs",
    "message_token_counts",
    "messages_to_items",
    "parsed_costs",
    "to_messages",
]

MESSAGES_KEY = "cupel:chat.messages"
"""Item metadata key: the unit's original message objects, a tuple in transcript order."""
INDICES_KEY = "cupel:chat.indices"
"""Item metadata key: the unit's message positions in the transcript, a tuple of ints ascending."""
ROLES_KEY = "cupel:chat.roles"
"""Item metadata key: the unit's message roles, a tuple parallel to the indices."""

SYNTHETIC_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Message ``i`` without a given timestamp is stamped ``SYNTHETIC_EPOCH + i`` seconds."""


def is_chat_transcript(data: object) -> bool:
    """True for a non-empty list of objects that each have a string ``"role"`` (a parsed JSON transcript)."""
    if not isinstance(data, list | tuple) or not data:
        return False
    return all(isinstance(message, Mapping) and isinstance(message.get("role"), str) for message in data)


def _as_list(messages: object, what: str) -> list[Any]:
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise CupelTypeError(f"{what} must be a sequence of messages, got {type(messages).__name__}")
    return list(messages)


def _sequence(value: object) -> Sequence[Any] | None:
    return value if isinstance(value, list | tuple) else None


def _resolve_options(options: ChatOptions | None) -> ChatOptions:
    if options is None:
        return ChatOptions()
    if not isinstance(options, ChatOptions):
        raise CupelTypeError(f"options must be a ChatOptions or None, got {options!r}")
    return options


def _stamps(timestamps: Sequence[datetime] | None, count: int) -> list[datetime]:
    if timestamps is None:
        return [SYNTHETIC_EPOCH + timedelta(seconds=index) for index in range(count)]
    stamps = _as_list(timestamps, "timestamps")
    if len(stamps) != count:
        raise InvalidConfigurationError(f"timestamps has {len(stamps)} entries for {count} messages")
    for index, stamp in enumerate(stamps):
        if not isinstance(stamp, datetime):
            raise CupelTypeError(f"timestamps[{index}] must be a datetime, got {stamp!r}")
        if stamp.utcoffset() is None:
            raise InvalidConfigurationError(f"timestamps[{index}] must be timezone-aware, got {stamp!r}")
    return stamps


def _message_tokens(
    views: Sequence[MessageView], counter: CounterLike | None, options: ChatOptions
) -> tuple[list[Any], list[int]]:
    parsed = [parse_message(view, index, options) for index, view in enumerate(views)]
    return parsed, parsed_costs(parsed, counter)


def parsed_costs(parsed: Sequence[ParsedMessage], counter: CounterLike | None) -> list[int]:
    """The token cost of each parsed message; every distinct text is counted once (and cached)."""
    texts = [text for message in parsed for text in message.texts]
    counts = iter(count_texts_once(texts, counter))
    return [message.fixed + sum(next(counts) for _ in message.texts) for message in parsed]


def build_items(
    views: Sequence[MessageView],
    originals: Sequence[Any],
    *,
    counter: CounterLike | None,
    options: ChatOptions | None,
    timestamps: Sequence[datetime] | None,
) -> list[ContextItem]:
    """Items for a transcript already read into views; ``originals`` go into the items' metadata."""
    resolved = _resolve_options(options)
    parsed = [parse_message(view, index, resolved) for index, view in enumerate(views)]
    return items_of_parsed(parsed, originals, counter=counter, options=resolved, timestamps=timestamps)


def items_of_parsed(
    parsed: Sequence[ParsedMessage],
    originals: Sequence[Any],
    *,
    counter: CounterLike | None,
    options: ChatOptions,
    timestamps: Sequence[datetime] | None,
) -> list[ContextItem]:
    """Items for a transcript already parsed message by message."""
    resolved = options
    counted = parsed_costs(parsed, counter)
    units = link_units(parsed)
    stamps = _stamps(timestamps, len(originals))
    last_user = max((message.index for message in parsed if message.role == "user"), default=None)
    # By message index: the parse may leave messages out (a repaired transcript).
    by_index = {message.index: message for message in parsed}
    tokens = {message.index: cost for message, cost in zip(parsed, counted, strict=True)}
    items: list[ContextItem] = []
    for unit in units:
        roles = tuple(by_index[index].role for index in unit)
        if roles[0] in SYSTEM_ROLES:
            kind = ContextKind.SYSTEM_PROMPT
            pinned = resolved.pin_system
        else:
            kind = ContextKind.TOOL_OUTPUT if len(unit) > 1 else ContextKind.MESSAGE
            pinned = False
        if resolved.pin_last_user and last_user in unit:
            pinned = True
        items.append(
            ContextItem(
                "\n".join(by_index[index].rendering for index in unit),
                sum(tokens[index] for index in unit),
                kind=kind,
                source=ContextSource.CHAT,
                tags=tuple(dict.fromkeys(roles)),
                metadata={
                    MESSAGES_KEY: tuple(originals[index] for index in unit),
                    INDICES_KEY: unit,
                    ROLES_KEY: roles,
                },
                timestamp=stamps[unit[0]],
                pinned=pinned,
            )
        )
    return items


def messages_to_items(
    messages: Sequence[Mapping[str, Any]],
    *,
    counter: CounterLike | None = None,
    options: ChatOptions | None = None,
    timestamps: Sequence[datetime] | None = None,
) -> list[ContextItem]:
    """Convert a transcript of message dicts into context items, one per atomic unit.

    A unit is a single message, or an assistant message with tool calls together with every message
    answering them. ``counter`` defaults to ``HeuristicCounter()``; ``timestamps`` (one timezone-aware
    datetime per message) replace the synthetic ones. The message dicts are stored, not copied or changed.
    """
    originals = _as_list(messages, "messages")
    resolved = _resolve_options(options)
    parsed = [
        parse_plain(message, index, resolved)
        or parse_message(view_of_mapping(message, index), index, resolved)
        for index, message in enumerate(originals)
    ]
    return items_of_parsed(parsed, originals, counter=counter, options=resolved, timestamps=timestamps)


def message_token_counts(
    messages: Sequence[Mapping[str, Any]],
    *,
    counter: CounterLike | None = None,
    options: ChatOptions | None = None,
) -> list[int]:
    """The token cost of each message, as :func:`messages_to_items` charges it."""
    originals = _as_list(messages, "messages")
    views = [view_of_mapping(message, index) for index, message in enumerate(originals)]
    return message_costs(views, counter, options)


def message_costs(
    views: Sequence[MessageView], counter: CounterLike | None, options: ChatOptions | None
) -> list[int]:
    """The token cost of each message already read into a view."""
    return _message_tokens(views, counter, _resolve_options(options))[1]


def to_messages(items: Sequence[ContextItem] | SelectionReport, *, system_first: bool = True) -> list[Any]:
    """Expand selected chat items back into their original messages, in transcript order.

    Every unit comes back whole, so each tool result follows its call. With ``system_first`` (the
    default) system and developer messages lead, each group keeping its original order. The placed order
    of ``items`` does not matter: a transcript's order is part of its meaning.
    """
    from cupel.diagnostics.report import SelectionReport  # here: reading a transcript needs no report

    if isinstance(items, SelectionReport):
        items = items.items
    if not isinstance(system_first, bool):
        raise CupelTypeError(f"system_first must be a bool, got {system_first!r}")
    entries: list[tuple[int, bool, Any]] = []
    seen: dict[int, int] = {}
    for position, item in enumerate(_as_list(items, "items")):
        if not isinstance(item, ContextItem):
            raise CupelTypeError(f"items[{position}] must be a ContextItem, got {item!r}")
        # Lists are accepted too: an item read back from the JSON wire form holds lists, not tuples.
        indices = _sequence(item.metadata.get(INDICES_KEY))
        messages = _sequence(item.metadata.get(MESSAGES_KEY))
        roles = _sequence(item.metadata.get(ROLES_KEY))
        if not (
            indices is not None
            and messages is not None
            and roles is not None
            and len(indices) == len(messages) == len(roles) > 0
            and all(isinstance(index, int) and not isinstance(index, bool) for index in indices)
        ):
            raise InvalidConfigurationError(
                f"items[{position}] is not a chat item: its metadata lacks {INDICES_KEY!r}, "
                f"{MESSAGES_KEY!r} and {ROLES_KEY!r}; build chat items with messages_to_items"
            )
        for index, role, message in zip(indices, roles, messages, strict=True):
            if index in seen:
                raise InvalidConfigurationError(
                    f"items[{position}] holds message {index}, which items[{seen[index]}] already holds"
                )
            seen[index] = position
            entries.append((index, system_first and role in SYSTEM_ROLES, message))
    # Sorting on (not system, index) lifts system messages to the front and keeps order within groups.
    entries.sort(key=lambda entry: (not entry[1], entry[0]))
    return [message for _, _, message in entries]
