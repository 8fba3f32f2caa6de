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
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cupel.chat.options import ChatOptions
from cupel.chat.parse import SYSTEM_ROLES, MessageView, ParsedMessage, parse_message, view_of_mapping
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "PROVIDERS",
    "Provider",
    "Violation",
    "transcript_provider",
    "validate_transcript",
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
