"""HeuristicCounter: a dependency-free estimate of one token per N characters."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import TokenCounterBase, _check_texts

__all__ = ["HeuristicCounter"]


@dataclass(frozen=True, slots=True)
class HeuristicCounter(TokenCounterBase):
    """``ceil(len(text) / chars_per_token)``, counting Unicode code points; the default counter.

    Four characters a token is the usual rule of thumb for English prose with OpenAI's encodings. It
    is an estimate: pair it with ``ContextBudget(estimation_safety_margin_percent=...)``.
    """

    chars_per_token: float = 4

    def __post_init__(self) -> None:
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
        return _ceil_div(len(text), self.chars_per_token)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        per_token = self.chars_per_token
        return [_ceil_div(len(text), per_token) for text in _check_texts("HeuristicCounter", texts)]


def _ceil_div(length: int, per_token: float) -> int:
    if isinstance(per_token, int):
        # Integer arithmetic keeps the result exact for any length.
        return -(-length // per_token)
    return math.ceil(length / per_token)
