"""ChatSettings: how a policy selects from a chat transcript (the ``chat`` table of a policy file).

The pipeline ignores these settings; :func:`cupel.chat.select_messages` reads them. They live with the
policy so a policy file can say how its transcripts are trimmed (``chat = { strategy = "last" }``).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from cupel._frozen import dataclass
from cupel.errors import CupelTypeError, InvalidConfigurationError

__all__ = ["CHAT_STRATEGIES", "DEFAULT_RECENT_SHARE", "START_ON", "ChatSettings", "ChatStrategy"]

ChatStrategy = Literal["turns", "last", "messages"]
CHAT_STRATEGIES: tuple[str, ...] = ("turns", "last", "messages")
START_ON: tuple[str, ...] = ("user", "any")

DEFAULT_RECENT_SHARE = 0.75
"""Share of the budget left after pinned messages and the latest turn that the run of most recent
whole turns may take before older turns compete by score."""


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """Chat selection settings, validated at construction.

    ``strategy``: ``"turns"`` (whole turns: the latest, a recent run, then older turns by score),
    ``"last"`` (a contiguous suffix of whole units, like LangChain's ``trim_messages``) or
    ``"messages"`` (units scored one by one). ``keep_first_turn`` keeps the transcript's first turn
    (an agent's task statement) under ``"turns"``. ``recent_share`` bounds the recent run under
    ``"turns"``. ``start_on`` is ``"user"`` (a ``"last"`` window starts on a user message) or ``"any"``.
    """

    strategy: ChatStrategy = "turns"
    keep_first_turn: bool = False
    recent_share: float = DEFAULT_RECENT_SHARE
    start_on: Literal["user", "any"] = "user"

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

    def to_dict(self) -> dict[str, Any]:
        """The policy-file ``chat`` table."""
        return {
            "strategy": self.strategy,
            "keep_first_turn": self.keep_first_turn,
            "recent_share": self.recent_share,
            "start_on": self.start_on,
        }
