"""Provider validity of a trimmed transcript: would the provider accept this conversation as it is?

``transcript_problems`` is the single place the evaluation asks this question. Tool-call links are
:func:`cupel.chat.validate_transcript`'s (one source of truth): every assistant tool call answered by
its results right after it, every result preceded by its call; OpenAI-style ``tool_calls``/``tool``
messages and Anthropic-style ``tool_use``/``tool_result`` blocks are both read. The conversation's shape
is checked here (docs/eval.md): system or developer messages only at the start, then a user message
first, and a last message the model can answer (not an assistant reply without tool calls: the window
is what the model is called with). Strict user/assistant alternation is not required: Anthropic merges
consecutive same-role turns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cupel.chat.validate import Provider, transcript_provider, validate_transcript

__all__ = ["transcript_problems"]

_SYSTEM = frozenset({"system", "developer"})
#: Taken from validate_transcript: tool links, and the request's last message (ends-on-assistant).
_RULES = frozenset({"tool-call-unanswered", "tool-result-orphaned", "ends-on-assistant"})


def transcript_problems(messages: Sequence[Mapping[str, Any]], provider: str = "openai") -> list[str]:
    """What makes ``messages`` invalid for ``provider`` (``openai`` or ``anthropic``); empty when valid.

    Messages in Anthropic's block form are held to Anthropic's tool rules whatever ``provider`` says.
    """
    problems: list[str] = []
    roles = [str(message.get("role")) for message in messages]
    body = 0
    while body < len(roles) and roles[body] in _SYSTEM:
        body += 1
    if any(role in _SYSTEM for role in roles[body:]):
        problems.append("a system message after the conversation started")
    rest = [n for n in range(body, len(roles)) if roles[n] not in _SYSTEM]
    if not rest:
        problems.append("no user message")
    elif roles[rest[0]] != "user":
        problems.append(f"the conversation starts with {roles[rest[0]]!r}, not a user message")
    rules: Provider = (
        "anthropic" if provider == "anthropic" or transcript_provider(messages) == "anthropic" else "openai"
    )
    problems.extend(
        str(violation) for violation in validate_transcript(messages, rules) if violation.rule in _RULES
    )
    return problems
