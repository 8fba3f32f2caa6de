"""Turns: a transcript's units grouped the way a reader follows them.

A *turn* is a user message and everything up to the next user message: assistant replies, tool calls
and their results. Units (see :func:`cupel.chat.messages_to_items`) never split, so a turn is a run of
whole units. System and developer units stand apart; units before the first user message form a
preamble (turn 0). A user message holding only tool results (Anthropic's form) answers a call and so
belongs to its call's unit, never starting a turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cupel.chat._parse import SYSTEM_ROLES
from cupel.chat.convert import INDICES_KEY, ROLES_KEY
from cupel.model import ContextItem

__all__ = ["Transcript", "Turn", "split_turns", "unit_indices", "unit_roles"]


def unit_roles(item: ContextItem) -> tuple[str, ...]:
    """The roles of a chat item's messages, in transcript order."""
    roles: tuple[str, ...] = tuple(item.metadata[ROLES_KEY])
    return roles


def unit_indices(item: ContextItem) -> tuple[int, ...]:
    """The transcript positions of a chat item's messages, ascending."""
    indices: tuple[int, ...] = tuple(item.metadata[INDICES_KEY])
    return indices


def _opens_turn(item: ContextItem) -> bool:
    return bool(unit_roles(item)[0] == "user")


def _is_system(item: ContextItem) -> bool:
    return unit_roles(item)[0] in SYSTEM_ROLES


@dataclass(frozen=True, slots=True)
class Turn:
    """One turn: its number (0 for a preamble before the first user message) and its units in order."""

    number: int
    items: tuple[ContextItem, ...]

    @property
    def tokens(self) -> int:
        """Tokens of every unit in the turn."""
        return sum(item.tokens for item in self.items)

    @property
    def indices(self) -> tuple[int, ...]:
        """Transcript positions of the turn's messages (system units excluded), ascending."""
        return tuple(index for item in self.items for index in unit_indices(item))

    @property
    def roles(self) -> tuple[str, ...]:
        """The roles of the turn's messages, in transcript order."""
        return tuple(role for item in self.items for role in unit_roles(item))

    @property
    def start(self) -> int:
        """Position of the turn's first message."""
        return unit_indices(self.items[0])[0]


@dataclass(frozen=True, slots=True)
class Transcript:
    """A transcript's units split into system units and turns, both in transcript order."""

    system: tuple[ContextItem, ...]
    turns: tuple[Turn, ...]

    @property
    def latest(self) -> Turn | None:
        """The turn the model is asked to answer: the last one."""
        return self.turns[-1] if self.turns else None

    def turn_of(self) -> dict[int, int]:
        """Message position -> turn number, for every non-system message."""
        return {index: turn.number for turn in self.turns for index in turn.indices}


def split_turns(items: Sequence[ContextItem]) -> Transcript:
    """Group chat items (one per unit, in transcript order) into system units and turns.

    The items must come from :func:`cupel.chat.messages_to_items` (or the LangChain twin), whose
    units are ordered by their first message.
    """
    system: list[ContextItem] = []
    turns: list[Turn] = []
    current: list[ContextItem] = []
    number = 0
    for item in items:
        if _is_system(item):
            system.append(item)
            continue
        if _opens_turn(item) and (current or number == 0):
            if current:
                turns.append(Turn(number, tuple(current)))
            number += 1
            current = []
        current.append(item)
    if current:
        turns.append(Turn(number, tuple(current)))
    return Transcript(tuple(system), tuple(turns))
