"""What a :class:`~cupel.chat.StableWindow` turn returns: the selection, its cache breakpoints, the reason
``Compacted``, and :func:`with_cache_control` to mark the breakpoints the way Anthropic's API reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from cupel.chat.selection import ChatSelection
from cupel.diagnostics.reasons import ExclusionReason
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["Compacted", "StableSelection", "with_cache_control"]

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class Compacted(ExclusionReason):
    """The unit was dropped when the window last compacted (toward its low-water mark of
    ``low_water_tokens``), and stays out so the turns since keep the same prompt prefix."""

    variant: ClassVar[str] = "Compacted"
    low_water_tokens: int

    def describe(self) -> str:
        return (
            "Compacted: dropped when the window last compacted (low-water mark "
            f"{self.low_water_tokens} tokens); it stays out so later turns keep the same prompt prefix"
        )


class StableSelection(ChatSelection[M]):
    """A :class:`ChatSelection` that also says how much of it the previous turn already sent.

    ``prefix`` leading messages are the previous turn's messages, unchanged and in the same order (0
    on a window's first turn or after an edit); ``base`` leading messages came from the last
    compaction; ``system`` leading messages are system or developer messages; ``compacted`` is true
    when the strategy chose afresh this turn (the first turn, a compaction, or after an edit).
    """

    __slots__ = ("base", "compacted", "prefix", "system")

    prefix: int
    base: int
    system: int
    compacted: bool

    def __init__(
        self,
        messages: tuple[M, ...],
        report: SelectionReport | Callable[[], SelectionReport],
        *,
        tokens: int,
        prefix: int,
        base: int,
        system: int,
        compacted: bool,
    ) -> None:
        super().__init__(messages, report, tokens=tokens)
        init = object.__setattr__
        init(self, "prefix", prefix)
        init(self, "base", base)
        init(self, "system", system)
        init(self, "compacted", compacted)

    @property
    def cache_breakpoints(self) -> tuple[int, ...]:
        """Positions in ``messages`` to end a cached prefix at (Anthropic allows four ``cache_control``).

        The last system message (stable across compactions), the last message of the compaction's
        selection (stable until the next one), the last message the previous turn sent (read from the
        cache now) and the last message (written for the next turn), each once, ascending.
        """
        marks = {self.system - 1, self.base - 1, self.prefix - 1, len(self.messages) - 1}
        return tuple(sorted(mark for mark in marks if mark >= 0))

    def __repr__(self) -> str:
        return (
            f"StableSelection(messages={len(self.messages)}, tokens={self.tokens}, prefix={self.prefix}, "
            f"compacted={self.compacted})"
        )


def with_cache_control(
    messages: Sequence[Mapping[str, Any]],
    breakpoints: Sequence[int],
    *,
    cache_control: Mapping[str, Any] | None = None,
) -> list[Mapping[str, Any]]:
    """``messages`` with Anthropic's ``cache_control`` on the last content block of each breakpoint.

    The marked messages are copies (a string content becomes one text block); the others are the
    same objects. ``cache_control`` defaults to ``{"type": "ephemeral"}``.
    """
    marker = dict(cache_control) if cache_control is not None else {"type": "ephemeral"}
    out: list[Mapping[str, Any]] = list(messages)
    for position in breakpoints:
        if not 0 <= position < len(out):
            raise InvalidConfigurationError(f"breakpoint {position} is outside the {len(out)} messages")
        message = dict(out[position])
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list) and content:
            blocks = list(content)
        else:
            raise InvalidConfigurationError(
                f"messages[{position}] has no content block to mark with cache_control"
            )
        last = blocks[-1]
        if not isinstance(last, Mapping):
            raise CupelTypeError(f"messages[{position}].content[-1] must be a mapping, got {last!r}")
        blocks[-1] = {**last, "cache_control": dict(marker)}
        message["content"] = blocks
        out[position] = message
    return out
