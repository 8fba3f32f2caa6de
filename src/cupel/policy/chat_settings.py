"""ChatSettings: how a policy selects from a chat transcript (the ``chat`` table of a policy file).

The pipeline ignores these settings; :func:`cupel.chat.select_messages` reads them. They live with the
policy so a policy file can say how its transcripts are trimmed (``chat = { strategy = "last" }``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any, Literal

from cupel._frozen import dataclass
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = [
    "CHAT_STRATEGIES",
    "DEFAULT_CLEAR_AT_LEAST",
    "DEFAULT_KEEP_RESULTS",
    "DEFAULT_PLACEHOLDER",
    "DEFAULT_RECENT_SHARE",
    "START_ON",
    "ChatSettings",
    "ChatStrategy",
    "ToolResult",
    "ToolResultClearing",
]

ChatStrategy = Literal["turns", "last", "messages"]
CHAT_STRATEGIES: tuple[str, ...] = ("turns", "last", "messages")
START_ON: tuple[str, ...] = ("user", "any")

DEFAULT_RECENT_SHARE = 0.75
"""Share of the budget left after pinned messages and the latest turn that the run of most recent
whole turns may take before older turns compete by score."""

DEFAULT_KEEP_RESULTS = 3
"""Tool results kept intact, newest first: the ones an agent's next step reads (a step often makes
two or three calls at once). Anthropic's server-side ``clear_tool_uses`` keeps 3 by default too."""

DEFAULT_PLACEHOLDER = "[tool result cleared: {tokens:,} tokens]"
"""What a cleared result's content becomes; ``{tokens}`` is its original size, ``{tool}`` its tool."""

DEFAULT_CLEAR_AT_LEAST = 1024
"""Tokens a :class:`~cupel.chat.StableWindow` compaction clears at least, once it clears at all:
clearing rewrites the provider's cached prompt from the first cleared message on, so it should free
at least one cacheable block's worth (1,024 tokens, Anthropic's minimum cacheable prompt)."""


def _count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"ToolResultClearing.{name} must be an int, got {value!r}")
    if value < 0:
        raise InvalidConfigurationError(f"ToolResultClearing.{name} must be >= 0, got {value}")
    return value


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool result of a transcript, as clearing sees it: the message holding it, the call it
    answers, the tool's name, the tokens of its content and of the placeholder that would replace it."""

    index: int
    call_id: str
    tool: str
    tokens: int
    placeholder_tokens: int


@dataclass(frozen=True, slots=True)
class ToolResultClearing:
    """Clearing older tool results before whole units are dropped (``clear_tool_results=``).

    When the window does not fit, the content of the oldest tool results is replaced with
    ``placeholder`` (formatted with ``tokens``, the result's original tokens, and ``tool``, its tool's
    name), oldest first and only as many as needed; every call and result message stays, so the
    conversation remains valid. The ``keep`` newest results and every result of a tool named in
    ``exclude_tools`` are never cleared. A :class:`~cupel.chat.StableWindow` clears at least
    ``clear_at_least`` tokens at once and keeps them cleared, so the cached prompt breaks rarely.
    """

    keep: int = DEFAULT_KEEP_RESULTS
    placeholder: str = DEFAULT_PLACEHOLDER
    exclude_tools: tuple[str, ...] = ()
    clear_at_least: int = DEFAULT_CLEAR_AT_LEAST

    def __post_init__(self) -> None:
        _count("keep", self.keep)
        _count("clear_at_least", self.clear_at_least)
        text: object = self.placeholder
        if not isinstance(text, str):
            raise CupelTypeError(f"ToolResultClearing.placeholder must be a string, got {text!r}")
        try:
            shown = text.format(tokens=1234, tool="tool")
        except (KeyError, IndexError, ValueError) as error:
            raise InvalidConfigurationError(
                f"ToolResultClearing.placeholder may use only {{tokens}} and {{tool}}: {text!r} ({error})"
            ) from None
        if not shown.strip():
            raise InvalidConfigurationError("ToolResultClearing.placeholder must not be blank")
        tools: object = self.exclude_tools
        if isinstance(tools, str) or not isinstance(tools, list | tuple):
            raise CupelTypeError(f"ToolResultClearing.exclude_tools must be a list of names, got {tools!r}")
        for name in tools:
            if not isinstance(name, str) or not name:
                raise CupelTypeError(
                    f"ToolResultClearing.exclude_tools entries must be tool names, got {name!r}"
                )
        object.__setattr__(self, "exclude_tools", tuple(dict.fromkeys(tools)))

    def text(self, tokens: int, tool: str) -> str:
        """The placeholder of a result of ``tokens`` tokens from ``tool``."""
        return self.placeholder.format(tokens=tokens, tool=tool)

    def eligible(self, tools: Sequence[str]) -> list[int]:
        """Which results (given by their tools' names, oldest first) may be cleared, oldest first:
        all but the ``keep`` newest, none of an excluded tool."""
        excluded = set(self.exclude_tools)
        end = max(0, len(tools) - self.keep)
        return [position for position in range(end) if tools[position] not in excluded]

    def clearable(self, results: Sequence[ToolResult]) -> list[ToolResult]:
        """The ``results`` (a transcript's, oldest first) that may be cleared, oldest first: the
        :meth:`eligible` ones whose placeholder costs fewer tokens than their content."""
        order = self.eligible([result.tool for result in results])
        return [results[p] for p in order if results[p].placeholder_tokens < results[p].tokens]

    def fewest(self, count: int, fits: Callable[[int], bool]) -> int | None:
        """The fewest of ``count`` eligible results to clear, oldest first, for which ``fits(k)`` holds
        (``None``: not even all of them). Clearing none is known not to fit, and clearing more never
        needs more room, so a bisection finds it in about log2(count) calls."""
        if not fits(count):
            return None
        low, high = 0, count
        while high - low > 1:
            middle = (low + high) // 2
            if fits(middle):
                high = middle
            else:
                low = middle
        return high

    def to_dict(self) -> dict[str, Any]:
        """The policy-file ``chat.clear_tool_results`` table."""
        return {
            "keep": self.keep,
            "placeholder": self.placeholder,
            "exclude_tools": list(self.exclude_tools),
            "clear_at_least": self.clear_at_least,
        }


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Chat selection settings, validated at construction.

    ``strategy``: ``"turns"`` (whole turns: the latest, a recent run, then older turns by score),
    ``"last"`` (a contiguous suffix of whole units, like LangChain's ``trim_messages``) or
    ``"messages"`` (units scored one by one). ``keep_first_turn`` keeps the transcript's first turn
    (an agent's task statement) under ``"turns"``. ``recent_share`` bounds the recent run under
    ``"turns"``. ``start_on`` is ``"user"`` (a ``"last"`` window starts on a user message) or ``"any"``.
    ``clear_tool_results`` (a :class:`ToolResultClearing`, ``True`` for its defaults, or ``None``)
    clears older tool results before whole units are dropped.
    """

    strategy: ChatStrategy = "turns"
    keep_first_turn: bool = False
    recent_share: float = DEFAULT_RECENT_SHARE
    start_on: Literal["user", "any"] = "user"
    clear_tool_results: ToolResultClearing | None = None

    def __post_init__(self) -> None:
        if self.strategy not in CHAT_STRATEGIES:
            raise InvalidConfigurationError(
                f"ChatSettings.strategy must be one of {', '.join(CHAT_STRATEGIES)}; got {self.strategy!r}"
            )
        if not isinstance(self.keep_first_turn, bool):
            raise CupelTypeError(f"ChatSettings.keep_first_turn must be a bool, got {self.keep_first_turn!r}")
        share: Any = self.recent_share
        if isinstance(share, bool) or not isinstance(share, int | float):
            raise CupelTypeError(f"ChatSettings.recent_share must be a number, got {share!r}")
        if not (math.isfinite(share) and 0.0 <= share <= 1.0):
            raise InvalidConfigurationError(f"ChatSettings.recent_share must be in [0, 1], got {share!r}")
        object.__setattr__(self, "recent_share", float(share))
        if self.start_on not in START_ON:
            raise InvalidConfigurationError(
                f"ChatSettings.start_on must be one of {', '.join(START_ON)}; got {self.start_on!r}"
            )
        # True stands for the defaults, False for off (as None).
        clearing: object = self.clear_tool_results
        if clearing is True or clearing is False:
            object.__setattr__(self, "clear_tool_results", ToolResultClearing() if clearing else None)
        elif clearing is not None and not isinstance(clearing, ToolResultClearing):
            raise CupelTypeError(
                "ChatSettings.clear_tool_results must be a bool, None or a ToolResultClearing, "
                f"got {type(clearing).__name__}"
            )

    def to_dict(self) -> dict[str, Any]:
        """The policy-file ``chat`` table (``clear_tool_results`` only when set)."""
        table: dict[str, Any] = {
            "strategy": self.strategy,
            "keep_first_turn": self.keep_first_turn,
            "recent_share": self.recent_share,
            "start_on": self.start_on,
        }
        if self.clear_tool_results is not None:
            table["clear_tool_results"] = self.clear_tool_results.to_dict()
        return table
