"""HeuristicCounter: cupel's one dependency-free estimate, one token per N characters (or UTF-8 bytes)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from cupel._frozen import dataclass
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import TokenCounterBase, _check_texts
from cupel.tokens.truncate import ELLIPSIS

_UNITS = ("chars", "utf8_bytes")

__all__ = ["HeuristicCounter"]


@dataclass(frozen=True, slots=True)
class HeuristicCounter(TokenCounterBase):
    """``ceil(length / chars_per_token)``; the default counter.

    ``unit="chars"`` (the default) measures Unicode code points; ``unit="utf8_bytes"`` measures UTF-8
    bytes, which is CFS-021's ``SimpleTokenizer`` (the RAG assembly's default) and counts more, closer
    to real tokenizers, for non-Latin scripts. For ASCII the two agree. Four a token is the usual rule of
    thumb for English prose with OpenAI's encodings. It is an estimate: pair it with
    ``ContextBudget(estimation_safety_margin_percent=...)``.
    """

    chars_per_token: float = 4
    unit: Literal["chars", "utf8_bytes"] = "chars"

    def __post_init__(self) -> None:
        if self.unit not in _UNITS:
            raise InvalidConfigurationError(
                f"HeuristicCounter.unit must be one of {', '.join(_UNITS)}, got {self.unit!r}"
            )
        value = self.chars_per_token
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CupelTypeError(f"HeuristicCounter.chars_per_token must be a number, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise InvalidConfigurationError(
                f"HeuristicCounter.chars_per_token must be finite and > 0, got {value!r}"
            )

    def count(self, text: str) -> int:
        if not isinstance(text, str):
            raise CupelTypeError(f"HeuristicCounter.count needs a str, got {type(text).__name__}")
        return _ceil_div(self._length(text), self.chars_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        per_token = self.chars_per_token
        length = self._length
        return [_ceil_div(length(text), per_token) for text in _check_texts("HeuristicCounter", texts)]

    def truncate(self, text: str, max_tokens: int) -> str:
        """``text`` if it fits; else its first ``max_tokens * chars_per_token`` units, trimmed, + ``"..."``.

        This is CFS-021 §4's truncation: a cut never splits a character, and the ellipsis can make the
        result count one token more than ``max_tokens`` (the assembly packer re-counts every fragment).
        """
        limit = math.floor(max(max_tokens, 0) * self.chars_per_token)
        if self.unit == "chars":
            return text if len(text) <= limit else text[:limit].strip() + ELLIPSIS
        encoded = text.encode("utf-8")
        if len(encoded) <= limit:
            return text
        # Dropping the undecodable tail removes exactly the partial character the byte cut may leave.
        return encoded[:limit].decode("utf-8", errors="ignore").strip() + ELLIPSIS

    def _length(self, text: str) -> int:
        return len(text) if self.unit == "chars" else len(text.encode("utf-8"))


def _ceil_div(length: int, per_token: float) -> int:
    if isinstance(per_token, int):
        # Integer arithmetic keeps the result exact for any length.
        return -(-length // per_token)
    return math.ceil(length / per_token)
