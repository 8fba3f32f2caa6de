"""Provider validity of a trimmed transcript: would the provider accept this conversation as it is?

``transcript_problems`` is the single place the evaluation asks this question, so it can defer to a
validator in :mod:`cupel.chat` when one exists. The rules (docs/eval.md): system or developer messages
only at the start; then a user message first; every assistant tool call answered by a tool result and
every tool result preceded by its call. OpenAI-style ``tool_calls``/``tool`` messages and Anthropic-style
``tool_use``/``tool_result`` blocks are both read; both providers share these rules (Anthropic merges
consecutive same-role turns itself).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["transcript_problems"]

_SYSTEM = frozenset({"system", "developer"})


def _block_ids(message: Mapping[str, Any], block_type: str, key: str) -> list[str]:
    """Ids named by Anthropic-style content blocks of ``block_type``."""
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [
        str(block.get(key))
        for block in content
        if isinstance(block, Mapping) and block.get("type") == block_type
    ]


def _call_ids(message: Mapping[str, Any]) -> list[str]:
    calls = message.get("tool_calls") or ()
    ids = [str(call.get("id")) for call in calls if isinstance(call, Mapping) and call.get("id") is not None]
    return ids + _block_ids(message, "tool_use", "id")


def _result_ids(message: Mapping[str, Any]) -> list[str]:
    ids = [str(message["tool_call_id"])] if message.get("tool_call_id") is not None else []
    return ids + _block_ids(message, "tool_result", "tool_use_id")


def transcript_problems(messages: Sequence[Mapping[str, Any]], provider: str = "openai") -> list[str]:
    """What makes ``messages`` invalid for ``provider`` (``openai`` or ``anthropic``); empty when valid."""
    del provider  # one rule set today; the parameter keeps call sites ready for per-provider rules
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
    pending: set[str] = set()
    for n in rest:
        message = messages[n]
        if pending and roles[n] != "tool" and not _result_ids(message):
            problems.append(f"message {n}: tool call(s) {', '.join(sorted(pending))} have no result")
            pending.clear()
        for result in _result_ids(message):
            if result not in pending:
                problems.append(f"message {n}: a tool result for {result!r} without its call")
            pending.discard(result)
        pending.update(_call_ids(message))
    if pending:
        problems.append(f"tool call(s) {', '.join(sorted(pending))} have no result")
    return problems
