"""The ``"last"`` strategy: the leading system messages, then the longest suffix of whole units that fits.

LangChain's ``trim_messages(strategy="last", include_system=True, start_on="human")`` without its
orphaned tool results: the window is cut between units, never between a tool call and its result,
and with ``start_on="user"`` it starts on a user message. Later system messages are part of the
window like any other message, as in ``trim_messages``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cupel.chat._choice import Choice, available_tokens
from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.reasons import IncompleteTurn
from cupel.chat.turns import unit_roles
from cupel.diagnostics.reasons import BudgetExceeded, ExclusionReason
from cupel.model import ContextBudget, ContextItem

__all__ = ["select_last"]


def select_last(items: Sequence[ContextItem], budget: ContextBudget, *, start_on: str = "user") -> Choice:
    """Choose the ``"last"`` window over chat items (one per unit, in transcript order)."""
    count = len(items)
    lead = 0
    while lead < count and items[lead].pinned and unit_roles(items[lead])[0] in SYSTEM_ROLES:
        lead += 1
    kept = [False] * count
    pinned_tokens = 0
    for position in range(lead):
        if items[position].pinned:
            kept[position] = True
            pinned_tokens += items[position].tokens
    available = available_tokens(budget, pinned_tokens)
    used = 0
    start = count
    while start > lead and used + items[start - 1].tokens <= available:
        start -= 1
        used += items[start].tokens
    fitted = start
    if start_on == "user":
        while start < count and unit_roles(items[start])[0] != "user":
            used -= items[start].tokens
            start += 1
    for position in range(start, count):
        kept[position] = True

    def reasons() -> dict[int, ExclusionReason]:
        found: dict[int, ExclusionReason] = {}
        for position in range(fitted, start):
            found[position] = IncompleteTurn(_turn_number(items, position))
        # A unit before the window could only come with every unit between it and the window.
        needed = sum(items[position].tokens for position in range(fitted, start))
        for position in range(fitted - 1, lead - 1, -1):
            needed += items[position].tokens
            found[position] = BudgetExceeded(needed, available - used)
        return found

    return Choice(items, kept, extra=reasons)


def _turn_number(items: Sequence[ContextItem], position: int) -> int:
    """The 1-based number of the turn holding unit ``position`` (0 before the first user message)."""
    return sum(1 for item in items[: position + 1] if unit_roles(item)[0] == "user")
