"""Stage 1 of a chat selection, the whole transcript: read once into one representation.

A :class:`Reader` says how one message format is read (:data:`DICTS` here, LangChain's in
:mod:`cupel.chat.langchain`); everything after it is shared. :func:`read_columns` reads a transcript in one
pass into :class:`TranscriptColumns` (per message a role, a cost and a text or a parse; the atomic units),
counting each distinct text once (through a :class:`~cupel.chat.ChatSession` when the caller holds one).
:func:`messages_to_items` gives one ContextItem per unit, for custom pipelines and the item-based strategies;
:func:`repair_links` drops what breaks a tool-call link.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from cupel._frozen import dataclass
from cupel.chat.options import ChatOptions, OrphanedToolResult, UnansweredToolCall
from cupel.chat.parse import (
    SYSTEM_ROLES,
    MessageView,
    ParsedMessage,
    link_units,
    parse_message,
    parse_plain,
    plain_columns,
    render_plain,
    view_of_mapping,
)
from cupel.chat.session import ChatSession, count_texts_once, positions
from cupel.diagnostics.reasons import ExclusionReason
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextItem, ContextKind, ContextSource
from cupel.tokens.base import CounterLike
from cupel.tokens.resolve import resolve_counter

__all__ = [
    "DICTS",
    "INDICES_KEY",
    "MESSAGES_KEY",
    "ROLES_KEY",
    "SYNTHETIC_EPOCH",
    "Reader",
    "Repair",
    "TranscriptColumns",
    "build_items",
    "cleared_blocks",
    "is_chat_transcript",
    "message_costs",
    "message_token_counts",
    "messages_to_items",
    "parsed_costs",
    "read_columns",
    "repair_links",
]


def _openings(positions: range) -> list[str]:
    """Rendering openings ``"[0"``, ``"[1"``, ... of plain messages (a session keeps them between calls)."""
    return [f"[{position}" for position in positions]  # an f-string: half the time of str.format


@dataclass(frozen=True, slots=True)
class TranscriptColumns:
    """Per message: role, cost and (for a plain message) its text; the other messages parsed; the units.

    ``units`` is ``None`` when every message is a unit of its own (no tool calls in the transcript).
    """

    roles: list[str]
    costs: list[int]
    contents: list[str | None]
    parsed: dict[int, ParsedMessage]
    units: list[tuple[int, ...]] | None
    session: ChatSession | None = None

    def rendering(self, index: int) -> str:
        """The message's rendering, as its parse gives it (built only when asked for)."""
        parsed = self.parsed.get(index)
        if parsed is not None:
            return parsed.rendering
        content = self.contents[index]
        assert content is not None
        return render_plain(index, self.roles[index], content)

    def renderings(self, start: int = 0) -> Iterator[str]:
        """The renderings of messages ``start`` onwards, each made as it is read (one at a time)."""
        if not self.parsed:
            roles, contents = self.roles, self.contents  # the columns themselves from 0: no copy
            if start:
                roles, contents = roles[start:], contents[start:]
            if all(contents):  # every text non-empty: render_plain's first form, in C passes
                # "[{index}" (kept between calls) + "] {role}: " + the text (a test checks render_plain's)
                middles = {role: f"] {role}: " for role in set(roles)}
                opens = positions(self.session, "openings", _openings, len(self.roles))
                pieces = zip(opens[start:], map(middles.__getitem__, roles), contents, strict=False)
                return map("".join, pieces)  # type: ignore[arg-type]
            return map(render_plain, range(start, len(self.roles)), roles, contents)  # type: ignore[arg-type]
        return map(self.rendering, range(start, len(self.roles)))


def read_columns(
    originals: Sequence[Any],
    split: Callable[[Sequence[Any]], tuple[list[str | None], list[str | None]]],
    parse: Callable[[Any, int], ParsedMessage],
    *,
    counter: CounterLike | None,
    options: ChatOptions,
    session: ChatSession | None = None,
) -> TranscriptColumns:
    """Read ``originals``: ``split`` gives each message's role and text if it is plain (else ``None``,
    ``None``), ``parse`` parses any other message (with its rendering) or raises its error."""
    found_roles, contents = split(originals)
    parsed: dict[int, ParsedMessage] = {}
    if None in found_roles:
        for index, role in enumerate(found_roles):
            if role is None:
                read = parsed[index] = parse(originals[index], index)
                found_roles[index] = read.role
    roles: list[str] = found_roles  # type: ignore[assignment]
    overhead = options.message_overhead
    if not parsed:
        texts: list[str] = contents  # type: ignore[assignment]

        def cost_of(some: list[str]) -> list[int]:
            return [overhead + count for count in count_texts_once(some, counter, session)]

        if session is None:
            costs = cost_of(texts)
        else:  # the leading messages the session read last time keep their costs
            key = (resolve_counter(counter), overhead)
            costs = session.plain_costs(key, (roles, texts), cost_of)
        return TranscriptColumns(roles, costs, contents, parsed, None, session)
    texts = []
    for index, content in enumerate(contents):
        if content is None:
            texts.extend(parsed[index].texts)
        else:
            texts.append(content)
    counts = iter(count_texts_once(texts, counter, session))
    costs = [
        overhead + next(counts)
        if content is not None
        else parsed[index].fixed + sum(next(counts) for _ in parsed[index].texts)
        for index, content in enumerate(contents)
    ]
    return TranscriptColumns(roles, costs, contents, parsed, _units(parsed, contents), session)


def _units(parsed: dict[int, ParsedMessage], contents: list[str | None]) -> list[tuple[int, ...]] | None:
    """The atomic units, or ``None`` when no message makes or answers a call (every message is one)."""
    if not any(
        message.calls or message.results or message.function_call is not None or message.function_result
        for message in parsed.values()
    ):
        return None
    # A plain message neither makes nor answers a call: linking the parsed ones alone finds every
    # multi-message unit, and raises what linking the whole transcript would, in the same order.
    linked = {unit[0]: unit for unit in link_units(list(parsed.values()))}
    units: list[tuple[int, ...]] = []
    for index, content in enumerate(contents):
        unit = linked.get(index)
        if unit is not None:
            units.append(unit)
        elif content is not None:
            units.append((index,))
    return units


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
    parsed = [_parse_dict(message, index, resolved) for index, message in enumerate(originals)]
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


@dataclass(frozen=True, slots=True)
class Reader:
    """How one message format is read; everything after reading is the same for every format.

    ``checked`` turns the caller's argument into a list (or raises naming it); ``view`` reads one
    message into a :class:`MessageView` (checked); ``parse`` parses one message; ``plain_columns``
    gives each message's role and text when it is plain (else ``None``, ``None``); ``plain`` parses a
    plain message without rendering it (or gives ``None``); ``items`` converts a whole transcript into
    unit items; ``system_message`` makes the format's system message of a summary text;
    ``cleared(message, texts)`` copies a message, its tool results named in ``texts`` (call id ->
    placeholder) holding the placeholder (``None``: the format cannot be rewritten).
    """

    checked: Callable[[object], list[Any]]
    view: Callable[[Any, int], MessageView]
    parse: Callable[[Any, int, ChatOptions], ParsedMessage]
    plain_columns: Callable[[Sequence[Any]], tuple[list[str | None], list[str | None]]]
    plain: Callable[[Any, int, ChatOptions], ParsedMessage | None]
    items: Callable[[list[Any], CounterLike | None, ChatOptions | None], list[ContextItem]]
    system_message: Callable[[str], Any]
    cleared: Callable[[Any, Mapping[str, str]], Any] | None = None

    def cost_of(self, message: Any, counter: CounterLike | None, options: ChatOptions | None) -> int:
        """One message's token cost (a summary's, before it is placed)."""
        return message_costs([self.view(message, 0)], counter, options)[0]

    def role_of(self, message: Any) -> str:
        """One message's role."""
        return str(self.view(message, 0).role)


def _cleared_dict(message: Mapping[str, Any], texts: Mapping[str, str]) -> dict[str, Any]:
    """A copy of an OpenAI tool message or an Anthropic user message with its named results cleared."""
    if message.get("role") == "tool":
        return {**message, "content": texts[message["tool_call_id"]]}
    return {**message, "content": cleared_blocks(message["content"], texts)}


def cleared_blocks(blocks: Sequence[Any], texts: Mapping[str, str]) -> list[Any]:
    """``blocks`` with a copy of each ``tool_result`` named in ``texts`` holding its placeholder."""
    return [
        {**one, "content": texts[one["tool_use_id"]]}
        if isinstance(one, Mapping) and one.get("type") == "tool_result" and one.get("tool_use_id") in texts
        else one
        for one in blocks
    ]


def _parse_dict(message: Any, index: int, options: ChatOptions) -> ParsedMessage:
    return parse_plain(message, index, options) or parse_message(
        view_of_mapping(message, index), index, options
    )


DICTS = Reader(
    checked=lambda messages: _as_list(messages, "messages"),
    view=view_of_mapping,
    parse=_parse_dict,
    plain_columns=plain_columns,
    plain=lambda message, index, options: parse_plain(message, index, options, render=False),
    items=lambda originals, counter, options: messages_to_items(originals, counter=counter, options=options),
    system_message=lambda text: {"role": "system", "content": text},
    cleared=_cleared_dict,
)
"""The reader of message dicts (OpenAI's and Anthropic's forms)."""


_FUNCTION = "function_call"


@dataclass(frozen=True, slots=True)
class Repair:
    """One message repair dropped: its position in the transcript and why."""

    index: int
    reason: ExclusionReason


def _broken(parsed: Sequence[ParsedMessage]) -> dict[int, ExclusionReason]:
    """Positions (in ``parsed``) of the messages breaking a call/result link, with the reason."""
    broken: dict[int, ExclusionReason] = {}
    open_calls: dict[str, int] = {}
    open_functions: list[int] = []
    for position, message in enumerate(parsed):
        for call_id, _ in message.results:
            if open_calls.pop(call_id, None) is None:
                broken.setdefault(position, OrphanedToolResult(call_id))
        if message.function_result and not open_functions:
            broken.setdefault(position, OrphanedToolResult(_FUNCTION))
        elif message.function_result:
            open_functions.pop()
        for call_id, _ in message.calls:
            earlier = open_calls.get(call_id)
            if earlier is not None:
                # The id came again before its result: the earlier call never got one.
                broken.setdefault(earlier, UnansweredToolCall(call_id))
            open_calls[call_id] = position
        if message.function_call is not None:
            open_functions.append(position)
    for call_id, position in open_calls.items():
        broken.setdefault(position, UnansweredToolCall(call_id))
    for position in open_functions:
        broken.setdefault(position, UnansweredToolCall(_FUNCTION))
    return broken


def repair_links(parsed: Sequence[ParsedMessage]) -> tuple[list[ParsedMessage], list[Repair]]:
    """The messages that remain after repair (in order) and every repair made, by message position."""
    alive = list(parsed)
    repairs: list[Repair] = []
    while True:
        broken = _broken(alive)
        if not broken:
            break
        repairs.extend(Repair(alive[position].index, reason) for position, reason in broken.items())
        alive = [message for position, message in enumerate(alive) if position not in broken]
    repairs.sort(key=lambda repair: repair.index)
    return alive, repairs
