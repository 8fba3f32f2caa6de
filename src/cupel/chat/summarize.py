"""Summaries of what selection dropped: the protocol, the offline default, and the summary message.

A summariser receives the dropped messages in transcript order and returns the summary as text (made
into a system message, which every provider accepts right after the system prompt) or as a ready
message. It may be ``async``. The default, :class:`FirstLines`, needs no model: the first line of each
dropped turn's opening message, cut to the reserved tokens. To plug a model in, pass any callable::

    async def summarize(dropped):
        reply = await client.chat.completions.create(model=..., messages=[
            {"role": "system", "content": "Summarise this conversation in three sentences."},
            *dropped,
        ])
        return reply.choices[0].message.content

    await aselect_messages(messages, 4000, summarize=summarize, summary_tokens=200)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from cupel.chat._parse import view_of_mapping
from cupel.tokens.base import CounterLike
from cupel.tokens.resolve import resolve_counter

__all__ = ["SUMMARY_PREFIX", "FirstLines", "Summarizer", "message_text"]

SUMMARY_PREFIX = "Earlier conversation, summarised:"


class Summarizer(Protocol):
    """Turns the dropped messages (transcript order) into a summary: text or a message, maybe awaited."""

    def __call__(self, dropped: Sequence[Any], /) -> str | Any | Awaitable[str | Any]: ...


def message_text(message: Any) -> tuple[str, str]:
    """A message's role and its text (text parts joined), for dicts and LangChain messages alike."""
    if isinstance(message, dict):
        view = view_of_mapping(message, 0)
        role, content = str(view.role), view.content
    else:
        role, content = getattr(message, "type", "message"), getattr(message, "content", "")
    if isinstance(content, str):
        return role, content
    parts = content if isinstance(content, list) else []
    texts = [
        part.get("text", "") for part in parts if isinstance(part, dict) and isinstance(part.get("text"), str)
    ]
    return role, " ".join(text for text in texts if text)


@dataclass(frozen=True, slots=True)
class FirstLines:
    """The offline summariser: one line per dropped turn (its first message's first line), cut to fit.

    ``max_tokens`` bounds the summary text as ``counter`` counts it (default ``HeuristicCounter()``).
    """

    max_tokens: int
    counter: CounterLike | None = None

    def __call__(self, dropped: Sequence[Any], /) -> str:
        count = resolve_counter(self.counter).count
        lines = [SUMMARY_PREFIX]
        opening = True
        for message in dropped:
            role, text = message_text(message)
            if role in ("user", "human"):
                opening = True
            if not opening or role in ("tool", "function"):
                continue
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")
            if first:
                lines.append(f"- {role}: {first}")
                opening = False
        summary = "\n".join(lines)
        if count(summary) <= self.max_tokens:
            return summary
        # Cut at the longest prefix that fits (binary search on characters; counts grow with length).
        low, high = 0, len(summary)
        while low < high:
            middle = (low + high + 1) // 2
            if count(summary[:middle] + "…") <= self.max_tokens:
                low = middle
            else:
                high = middle - 1
        return summary[:low] + "…" if low else ""


SummaryCall = Callable[[Sequence[Any]], Any]
