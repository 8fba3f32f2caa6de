"""validate_transcript: the rules a provider enforces on a conversation, as a list of violations.

``"openai"`` (chat completions): every tool call is answered by tool messages directly after the
assistant message that made it, and no tool message answers anything else. ``"anthropic"`` (messages
API): system messages only at the start, a user message first, strict user/assistant alternation,
every ``tool_use`` answered by ``tool_result`` blocks in the very next (user) message and no other
``tool_result``. ``"langchain"``: LangChain ``BaseMessage`` lists, held to the OpenAI rules they are
sent under, and to Anthropic's "a user message" (they are as often sent to Claude).

Every provider: a conversation about to be sent (``for_request=True``, the default) must end on a
message the model can answer, not on an assistant reply without tool calls; ``"openai"`` also rejects
an empty list (``"anthropic"`` and ``"langchain"`` report it as "no user message"). docs/spec-notes.md,
"Answerable transcripts".

:func:`resume_check` holds a saved :class:`~cupel.chat.WindowState` to the same rules against the
transcript it is resumed on (and restores the tool results it cleared); :func:`extend_digest`
fingerprints the messages a window has seen, so an edit to one is noticed.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cupel.chat.options import ChatOptions
from cupel.chat.parse import SYSTEM_ROLES, MessageView, ParsedMessage, parse_message, view_of_mapping
from cupel.chat.read import DICTS, message_costs
from cupel.chat.render import replaced, tool_results
from cupel.chat.window_state import WindowState, positions_of
from cupel.diagnostics.events import TraceEvent
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.policy.chat_settings import ToolResultClearing
from cupel.tokens.base import CounterLike

__all__ = [
    "PROVIDERS",
    "RESUME_STAGE",
    "Provider",
    "Violation",
    "clearing_view",
    "extend_digest",
    "new_digest",
    "resume_check",
    "transcript_provider",
    "validate_transcript",
    "with_resume_event",
]


Provider = Literal["openai", "anthropic", "langchain"]
PROVIDERS: tuple[str, ...] = ("openai", "anthropic", "langchain")

_BLOCK_TYPES = frozenset({"tool_use", "tool_result"})


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: the message position, a stable rule code and a one-line explanation."""

    index: int
    rule: str
    message: str

    def __str__(self) -> str:
        return f"messages[{self.index}]: {self.message} ({self.rule})"


def transcript_provider(messages: Sequence[Any]) -> Provider:
    """The provider whose format ``messages`` are in: LangChain objects, Anthropic blocks, else OpenAI."""
    if any(not isinstance(message, Mapping) for message in messages):
        return "langchain"
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(
            isinstance(part, Mapping) and part.get("type") in _BLOCK_TYPES for part in content
        ):
            return "anthropic"
    return "openai"


def _views(messages: Sequence[Any], provider: str) -> list[MessageView]:
    if provider == "langchain":
        from cupel.chat.langchain import message_views

        return message_views(messages)
    return [view_of_mapping(message, index) for index, message in enumerate(messages)]


def _parsed(messages: Sequence[Any], provider: str) -> list[ParsedMessage]:
    options = ChatOptions()
    return [parse_message(view, index, options) for index, view in enumerate(_views(messages, provider))]


def _unanswered(index: int, call_id: str) -> Violation:
    return Violation(index, "tool-call-unanswered", f"tool call {call_id!r} is not answered right after it")


def _orphaned(index: int, call_id: str) -> Violation:
    return Violation(
        index, "tool-result-orphaned", f"tool result {call_id!r} answers no call of the message before it"
    )


def _openai_rules(parsed: Sequence[ParsedMessage]) -> list[Violation]:
    """Tool messages answer the calls of the assistant message just before their contiguous block."""
    violations: list[Violation] = []
    open_calls: dict[str, int] = {}
    open_function: int | None = None
    for message in parsed:
        is_result = message.role == "tool" or message.function_result
        if not is_result:
            violations.extend(_unanswered(index, call_id) for call_id, index in open_calls.items())
            open_calls = {}
            if open_function is not None:
                violations.append(
                    Violation(open_function, "tool-call-unanswered", "function_call is not answered")
                )
                open_function = None
        for call_id, _ in message.results:
            if open_calls.pop(call_id, None) is None:
                violations.append(_orphaned(message.index, call_id))
        if message.function_result:
            if open_function is None:
                violations.append(
                    Violation(
                        message.index, "tool-result-orphaned", "function result answers no function_call"
                    )
                )
            open_function = None
        for call_id, _ in message.calls:
            open_calls[call_id] = message.index
        if message.function_call is not None:
            open_function = message.index
    violations.extend(_unanswered(index, call_id) for call_id, index in open_calls.items())
    if open_function is not None:
        violations.append(Violation(open_function, "tool-call-unanswered", "function_call is not answered"))
    return violations


def _anthropic_rules(parsed: Sequence[ParsedMessage]) -> list[Violation]:
    violations: list[Violation] = []
    leading = True
    previous: ParsedMessage | None = None
    for message in parsed:
        role = message.role
        if role in SYSTEM_ROLES:
            if not leading:
                violations.append(
                    Violation(
                        message.index, "system-not-leading", "a system message after the conversation began"
                    )
                )
            continue
        if role not in ("user", "assistant"):
            violations.append(
                Violation(message.index, "role-not-allowed", f"role {role!r} is not a messages-API role")
            )
        if leading and role != "user":
            violations.append(
                Violation(
                    message.index, "first-not-user", "the first non-system message must be a user message"
                )
            )
        leading = False
        if previous is not None and previous.role == role:
            violations.append(Violation(message.index, "not-alternating", f"two {role} messages in a row"))
        asked = {call_id for call_id, _ in previous.calls} if previous is not None else set()
        answered = {call_id for call_id, _ in message.results}
        violations.extend(_orphaned(message.index, call_id) for call_id in sorted(answered - asked))
        if previous is not None:
            violations.extend(_unanswered(previous.index, c) for c, _ in previous.calls if c not in answered)
        previous = message
    if previous is not None:
        violations.extend(_unanswered(previous.index, call_id) for call_id, _ in previous.calls)
    return violations


def _no_user(parsed: Sequence[ParsedMessage]) -> list[Violation]:
    """Anthropic needs a user message; so do LangChain lists, which are as often sent to Claude."""
    if any(message.role == "user" for message in parsed):
        return []
    # Named at the first message after the system prompt, where the user message belongs.
    first = next((message.index for message in parsed if message.role not in SYSTEM_ROLES), 0)
    return [Violation(first, "no-user-message", "the conversation has no user message")]


def _answerable(parsed: Sequence[ParsedMessage], provider: str) -> list[Violation]:
    """What a model call needs of the whole list: a message at all, and a last one it can answer."""
    if not parsed:
        # Anthropic and LangChain already report an empty list as having no user message.
        return (
            [Violation(0, "empty-conversation", "the conversation has no messages")]
            if provider == "openai"
            else []
        )
    # System messages are hoisted to the front (by a selection, and by Anthropic's API): the message
    # the model answers is the last one that is not a system message.
    rest = [message for message in parsed if message.role not in SYSTEM_ROLES]
    if not rest:
        return []
    last = rest[-1]
    if last.role == "assistant" and not last.calls and last.function_call is None:
        return [
            Violation(
                last.index,
                "ends-on-assistant",
                "the conversation ends on an assistant reply without tool calls: nothing to answer",
            )
        ]
    return []


def validate_transcript(
    messages: Sequence[Any], provider: Provider | None = None, *, for_request: bool = True
) -> list[Violation]:
    """The provider rules ``messages`` break, in message order; an empty list means valid.

    ``provider=None`` takes the format of the messages (:func:`transcript_provider`). ``for_request``
    says the list is about to be sent as it is: then it must not be empty or end on an assistant reply
    without tool calls. Pass ``False`` to check a stored or finished conversation, or an Anthropic
    prefill. A message that cannot be read at all (no role, a content of the wrong type) raises as in
    selection.
    """
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
        raise CupelTypeError(f"messages must be a sequence of messages, got {type(messages).__name__}")
    if not isinstance(for_request, bool):
        raise CupelTypeError(f"for_request must be a bool, got {for_request!r}")
    chosen = transcript_provider(messages) if provider is None else provider
    if chosen not in PROVIDERS:
        raise InvalidConfigurationError(f"provider must be one of {', '.join(PROVIDERS)}; got {provider!r}")
    parsed = _parsed(messages, chosen)
    violations = _anthropic_rules(parsed) if chosen == "anthropic" else _openai_rules(parsed)
    if chosen != "openai":
        violations.extend(_no_user(parsed))
    if for_request:
        violations.extend(_answerable(parsed, chosen))
    return sorted(violations, key=lambda violation: violation.index)


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, Mapping) else None


#: The provider rules every strategy keeps (``"messages"`` keeps no others: it may drop a first user turn).
_TOOL_RULES = frozenset({"tool-call-unanswered", "tool-result-orphaned"})


def _violations(messages: Sequence[Any], where: Sequence[int], tool_links_only: bool) -> set[tuple[int, str]]:
    """Each provider rule ``messages`` break, as (transcript position of the message, rule).

    The rules of a well-formed conversation, not of a request: a seen transcript may end on a reply.
    """
    return {
        (where[violation.index], violation.rule)
        for violation in validate_transcript(messages, for_request=False)
        if not tool_links_only or violation.rule in _TOOL_RULES
    }


def new_digest() -> Any:
    """An empty running fingerprint of a transcript prefix."""
    import hashlib  # here, not at import: it loads OpenSSL, which ``cupel select`` never needs

    return hashlib.blake2b(digest_size=16)


def _canonical(message: object) -> bytes:
    # Sorted keys: dict order never changes the fingerprint. ``default=repr`` fingerprints values JSON
    # cannot hold; such a value whose repr changes between calls reads as an edit (a recompaction).
    text = json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    return text.encode("utf-8", "surrogatepass")


def extend_digest(digest: Any, messages: Iterable[object]) -> None:
    """Feed ``messages`` to a running fingerprint, every field length-prefixed so boundaries count.

    A message whose values are all strings (most of a transcript, tool results included) is fed field
    by field, sorted by key; any other goes in as canonical JSON. A tag byte keeps the two apart.
    """
    update = digest.update
    for message in messages:
        if type(message) is dict and all(type(k) is str and type(v) is str for k, v in message.items()):
            update(b"p" + len(message).to_bytes(4, "little"))
            for key, value in sorted(message.items()):
                for text in (key, value):
                    data = text.encode("utf-8", "surrogatepass")
                    update(len(data).to_bytes(8, "little"))
                    update(data)
            continue
        data = _canonical(message)
        update(b"j" + len(data).to_bytes(8, "little"))
        update(data)


def resume_check(
    state: WindowState,
    originals: Sequence[Any],
    counter: CounterLike | None,
    options: ChatOptions,
    ceiling: int,
    tool_links_only: bool = False,
    clearing: ToolResultClearing | None = None,
) -> tuple[str | None, dict[int, Any]]:
    """Why ``state`` cannot be resumed on ``originals`` (``None`` when it can), and the messages
    holding the results it cleared as the window sends them (cleared copies, by position; none when
    it cannot be resumed). docs/spec-notes.md, "Saved windows are advice".

    ``originals`` are the transcript whose first ``state.seen`` messages ``state.digest`` was checked
    against; ``ceiling`` is the most tokens the resuming window may grow to. The results
    ``state.cleared`` names must be ones ``clearing`` may clear in those messages. The kept messages
    (cleared where the state cleared them, with the summary in its place) must name each message
    once, in an order a selection sends (transcript order, or system messages first), break no
    provider rule the transcript itself does not break (whole units, tool calls with their results;
    only those two with ``tool_links_only``, as under the ``"messages"`` strategy), cost
    ``state.tokens``, end with the last message seen exactly when ``state.appendable``, and
    ``state.limit`` may not exceed ``ceiling``. A mismatch is also logged as a warning through
    ``logging.getLogger("cupel")``.
    """
    mismatch, cleared = _cleared_copies(state, originals, counter, options, clearing)
    if mismatch is None:
        mismatch = _mismatch(state, originals, counter, options, ceiling, tool_links_only, cleared)
    if mismatch is not None:
        logging.getLogger("cupel").warning("StableWindow: %s", _notice(mismatch))
        return mismatch, {}
    return None, cleared


def _cleared_copies(
    state: WindowState,
    originals: Sequence[Any],
    counter: CounterLike | None,
    options: ChatOptions,
    clearing: ToolResultClearing | None,
) -> tuple[str | None, dict[int, Any]]:
    """The messages holding the results ``state.cleared`` names, cleared as a compaction clears them
    (by position), or why the state names a result ``clearing`` may not clear."""
    if not state.cleared:
        return None, {}
    write = DICTS.cleared
    if clearing is None or write is None:
        return "it names cleared tool results, but the window clears none", {}
    try:
        views = [view_of_mapping(message, index) for index, message in enumerate(originals[: state.seen])]
        clearable = clearing.clearable(tool_results(views, clearing.text, counter, options))
    except CupelError as error:
        return f"its transcript cannot be read ({error})", {}
    by_pair = {(result.index, result.call_id): result for result in clearable}
    for position, call_id in state.cleared:
        if (position, call_id) not in by_pair:
            return f"it says call {call_id!r}'s result in message {position} was cleared; it may not be", {}
    sent = replaced(originals, [by_pair[pair] for pair in state.cleared], clearing.text, write)
    return None, {position: sent[position] for position, _ in state.cleared}


def clearing_view(cleared: Iterable[tuple[int, str]]) -> Callable[[Any, int], MessageView]:
    """How a compaction's clearing reads the window's transcript: the results ``cleared`` names (cleared
    at an earlier compaction) read as empty, so they are not cleared again (a placeholder of their
    placeholder would change the prompt there and lose their size) nor counted as freeing tokens."""
    emptied: dict[int, dict[str, str]] = {}
    for position, call_id in cleared:
        emptied.setdefault(position, {})[call_id] = ""
    write = DICTS.cleared
    if not emptied or write is None:
        return view_of_mapping

    def view(message: Any, index: int) -> MessageView:
        named = emptied.get(index)
        return view_of_mapping(message if named is None else write(message, named), index)

    return view


def _mismatch(
    state: WindowState,
    originals: Sequence[Any],
    counter: CounterLike | None,
    options: ChatOptions,
    ceiling: int,
    tool_links_only: bool,
    cleared: Mapping[int, Any],
) -> str | None:
    if state.limit > ceiling:
        return f"its limit of {state.limit} tokens exceeds the budget's {ceiling}"
    positions = positions_of(state.kept)
    if len(set(positions)) != len(positions):
        return "its kept messages name a message twice"
    in_order = sorted(positions)
    systems_first = sorted(
        positions, key=lambda position: (_role(originals[position]) not in SYSTEM_ROLES, position)
    )
    if positions not in (in_order, systems_first):
        return "its kept messages are in an order no selection sends"
    appendable = state.seen == 0 or (bool(positions) and positions[-1] == state.seen - 1)
    if state.appendable != appendable:
        return f"it says appendable={state.appendable}, but its kept messages say {appendable}"
    kept = [cleared.get(position, originals[position]) for position in positions]
    where = list(positions)
    if state.summary is not None:
        kept.insert(state.summary_at, state.summary)
        where.insert(state.summary_at, -1)
    try:
        seen = range(state.seen)
        broken = _violations(kept, where, tool_links_only) - _violations(
            originals[: state.seen], seen, tool_links_only
        )
        costs = message_costs(
            [view_of_mapping(message, index) for index, message in enumerate(kept)], counter, options
        )
    except CupelError as error:
        return f"its kept messages cannot be read ({error})"
    if broken:
        position, rule = min(broken)
        named = "the summary" if position < 0 else f"message {position}"
        return f"its kept messages are not a valid transcript ({named}: {rule})"
    tokens = sum(costs)
    if tokens != state.tokens:
        return f"it says {state.tokens} tokens, but its kept messages cost {tokens}"
    return None


RESUME_STAGE = "ResumeWindow"
"""The ``stage`` of the report event that says a saved state was dropped for a fresh start."""


def _notice(mismatch: str) -> str:
    return f"saved WindowState does not match its transcript: {mismatch}; the window started afresh"


def with_resume_event(report: SelectionReport, mismatch: str | None) -> SelectionReport:
    """``report`` with a first event saying the saved state was dropped for ``mismatch`` (if any)."""
    if mismatch is None:
        return report
    event = TraceEvent(RESUME_STAGE, 0.0, 0, _notice(mismatch))
    return dataclasses.replace(report, events=(event, *report.events))
