"""Exceptions raised by cupel.

Every error the library raises on purpose is a :class:`CupelError`. Validation errors also derive from
``ValueError`` (or ``TypeError`` for a value of the wrong type) so that code written against Python
conventions catches them too.
"""

from __future__ import annotations

__all__ = [
    "BudgetOverflowError",
    "CupelError",
    "CupelTypeError",
    "InvalidConfigurationError",
    "MonotonicityError",
    "PinnedItemsExceedBudgetError",
    "ScarcityError",
    "TableTooLargeError",
]


class CupelError(Exception):
    """Base class of every error cupel raises deliberately."""


class InvalidConfigurationError(CupelError, ValueError):
    """A value given to a cupel constructor or function is out of its allowed range.

    The message names the offending field and value.
    """


class CupelTypeError(CupelError, TypeError):
    """A value given to a cupel constructor or function has the wrong type."""


class PinnedItemsExceedBudgetError(CupelError):
    """Pinned items need more tokens than ``max_tokens - output_reserve`` (spec: Stage 1: Classify)."""

    def __init__(self, pinned_tokens: int, available_tokens: int) -> None:
        self.pinned_tokens = pinned_tokens
        self.available_tokens = available_tokens
        super().__init__(
            f"Pinned items require {pinned_tokens} tokens, but only {available_tokens} are available"
        )

    def __reduce__(self) -> tuple[type, tuple[int, int]]:
        return (type(self), (self.pinned_tokens, self.available_tokens))


class BudgetOverflowError(CupelError):
    """Selected items exceed ``target_tokens`` under ``OverflowStrategy.THROW`` (spec: Stage 6: Place)."""

    def __init__(self, merged_tokens: int, target_tokens: int) -> None:
        self.merged_tokens = merged_tokens
        self.target_tokens = target_tokens
        super().__init__(
            f"Selected items require {merged_tokens} tokens, exceeding target budget of {target_tokens}"
        )

    def __reduce__(self) -> tuple[type, tuple[int, int]]:
        return (type(self), (self.merged_tokens, self.target_tokens))


class TableTooLargeError(CupelError):
    """A KnapsackSlice DP table would exceed its cell limit (spec: KnapsackSlice OOM guard)."""


class ScarcityError(CupelError):
    """A count requirement cannot be met under ``ScarcityBehavior.THROW`` (spec: CountQuotaSlice)."""

    def __init__(self, message: str, *, kind: str, required_count: int, satisfied_count: int) -> None:
        super().__init__(message)
        self.kind = kind
        self.required_count = required_count
        self.satisfied_count = satisfied_count

    def __reduce__(self) -> tuple[object, ...]:
        return (
            _rebuild_scarcity_error,
            (str(self), self.kind, self.required_count, self.satisfied_count),
        )


def _rebuild_scarcity_error(message: str, kind: str, required: int, satisfied: int) -> ScarcityError:
    return ScarcityError(message, kind=kind, required_count=required, satisfied_count=satisfied)


class MonotonicityError(CupelError):
    """Budget simulation was asked of a slicer whose inclusion is not monotonic in the budget."""
