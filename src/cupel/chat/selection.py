"""ChatSelection: the outcome of a chat selection, and the budget argument every selection takes."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Generic, TypeVar

from cupel.chat.convert import to_messages
from cupel.diagnostics.hooks import active_sink, installed
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget

__all__ = ["ChatSelection", "resolve_budget"]

M = TypeVar("M")


class ChatSelection(Generic[M]):
    """The trimmed transcript and the report explaining it.

    The report is built on first access (selection itself never needs it), so a caller that only
    wants the messages does not pay for explaining them.
    """

    __slots__ = ("_build", "_report", "messages", "tokens")

    messages: tuple[M, ...]
    tokens: int
    """Tokens of the kept messages, as charged during selection."""
    _report: SelectionReport | None
    _build: Callable[[], SelectionReport] | None

    def __init__(
        self,
        messages: tuple[M, ...],
        report: SelectionReport | Callable[[], SelectionReport],
        *,
        tokens: int | None = None,
    ) -> None:
        init = object.__setattr__
        init(self, "messages", messages)
        if isinstance(report, SelectionReport):
            init(self, "_report", report)
            init(self, "_build", None)
            init(self, "tokens", report.included_tokens if tokens is None else tokens)
        else:
            if tokens is None:
                raise CupelTypeError("ChatSelection needs tokens when its report is built lazily")
            init(self, "_report", None)
            init(self, "_build", report)
            init(self, "tokens", tokens)

    def __setattr__(self, name: str, value: object) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    @property
    def report(self) -> SelectionReport:
        """The :class:`~cupel.SelectionReport`: one entry per unit, kept in transcript order."""
        built: SelectionReport | None = self._report
        if built is None:
            build: Callable[[], SelectionReport] = self._build  # type: ignore[assignment]
            if active_sink() is None:
                built = build()
            else:
                # Explaining a selection re-runs parts of it; those runs are not selections to trace.
                with installed(None):
                    built = build()
            object.__setattr__(self, "_report", built)
            object.__setattr__(self, "_build", None)
        return built

    def __repr__(self) -> str:
        return f"ChatSelection(messages={len(self.messages)}, tokens={self.tokens})"

    @property
    def excluded_messages(self) -> tuple[M, ...]:
        """The dropped messages, in transcript order."""
        return tuple(to_messages([entry.item for entry in self.report.excluded], system_first=False))


def resolve_budget(budget: ContextBudget | int) -> ContextBudget:
    """A :class:`ContextBudget`, or an int ``n`` meaning ``ContextBudget(n, n)``."""
    if isinstance(budget, ContextBudget):
        return budget
    if isinstance(budget, bool) or not isinstance(budget, int):
        raise CupelTypeError(f"budget must be a ContextBudget or an int, got {budget!r}")
    if budget < 0:
        raise InvalidConfigurationError(f"budget must be >= 0, got {budget}")
    return ContextBudget(budget, budget)
