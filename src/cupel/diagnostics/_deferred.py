"""Report parts kept as columns by a report-building run and turned into records when first read.

A large run decides about every candidate, but most reports are read in part (the included items, a
few exclusions) or not at all. So the collector keeps each decision in column buffers -- items,
scores, reasons; for item events, the placed scores and the distinct reasons -- and the records
(:class:`~cupel.diagnostics.report.ExcludedItem`, ``TraceEvent`` ...) are built, all of one field at
once, the first time that field is read. They equal, and serialise exactly as, the records built
eagerly (tests compare them); once built, a field is an ordinary tuple that stays.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cupel._gc_pause import collector_paused
from cupel.diagnostics.events import PipelineStage, TraceEvent, item_events
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason

__all__ = ["Deferred", "PlacedEvents", "SharedEvents", "expanded", "included_message", "scored_messages"]

# The inclusion events' message prefix per reason (Enum.value is a slow descriptor per item).
_INCLUDED_PREFIX = {reason: f"{reason.value}: score=" for reason in InclusionReason}
_SCORED_LINE = f"{_INCLUDED_PREFIX[InclusionReason.SCORED]}%.6g\n"
_MESSAGE_BLOCK = 2048

_lock = allocate_lock()


class Deferred:
    """Base of a frozen slots dataclass some of whose fields may be built on first read.

    ``_deferred`` maps each field not yet built to the function that builds it. A field's slot stays
    empty until then, so reading it falls through to ``__getattr__``, which builds it once (under a
    lock, with the cyclic collector paused: the records form no cycles) and stores it in its slot.
    Equality, hashing, ``repr``, pickling and :mod:`dataclasses` helpers all read fields by attribute,
    so they see the built values.
    """

    __slots__ = ("_deferred",)

    if not TYPE_CHECKING:  # for type checkers every field is simply there

        def __getattr__(self, name: str) -> Any:
            field = getattr(type(self), name, None)
            if field is not None and name != "_deferred":
                with _lock:
                    try:
                        return field.__get__(self)  # built meanwhile by another thread
                    except AttributeError:
                        pass
                    pending: dict[str, Callable[[], Any]] | None = getattr(self, "_deferred", None)
                    build = None if pending is None else pending.get(name)
                    if build is not None:
                        with collector_paused():
                            value = build()
                        field.__set__(self, value)
                        del pending[name]  # type: ignore[index]  # the buffers are freed with it
                        return value
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")


def defer(record: Deferred, pending: dict[str, Callable[[], Any]]) -> None:
    """Set ``record``'s deferred fields: each name in ``pending`` is built by its function when read."""
    Deferred._deferred.__set__(record, pending)  # type: ignore[attr-defined]


def scored_messages(scores: Sequence[float]) -> list[str]:
    """The SCORED inclusion message for each score: the f-string's ``{score:.6g}`` text, formatted
    printf-style one block of scores per operation (no message contains a line break; blocks keep
    the text being built in cache)."""
    messages: list[str] = []
    for start in range(0, len(scores), _MESSAGE_BLOCK):
        block = scores[start : start + _MESSAGE_BLOCK]
        messages.extend((_SCORED_LINE * len(block) % tuple(block)).split("\n"))
        messages.pop()  # the text after the block's last line break
    return messages


def included_message(reason: InclusionReason, score: float) -> str:
    """The message of the item event for an inclusion."""
    return f"{_INCLUDED_PREFIX[reason]}{score:.6g}"


class SharedEvents:
    """The item events of a batch of exclusions at one stage: exclusion ``n`` was for
    ``distinct[slots[n]]``, and exclusions sharing a reason share one (immutable) event."""

    __slots__ = ("_built", "distinct", "slots", "stage")

    def __init__(self, stage: PipelineStage, distinct: list[ExclusionReason], slots: list[int]) -> None:
        self.stage = stage
        self.distinct = distinct
        self.slots = slots
        self._built: list[TraceEvent] | None = None

    def __len__(self) -> int:
        return len(self.slots)

    def build(self) -> list[TraceEvent]:
        """The events, built once (a collector and the report it built then share them)."""
        if self._built is None:
            events = item_events(self.stage, [reason.describe() for reason in self.distinct])
            self._built = list(map(events.__getitem__, self.slots))
        return self._built


class PlacedEvents:
    """The item events of the placed items, in placed order: ``special`` holds the positions whose
    message is not the SCORED one, with their message."""

    __slots__ = ("_built", "scores", "special")

    def __init__(self, scores: list[float], special: list[tuple[int, str]]) -> None:
        self.scores = scores
        self.special = special
        self._built: list[TraceEvent] | None = None

    def __len__(self) -> int:
        return len(self.scores)

    def build(self) -> list[TraceEvent]:
        if self._built is None:
            messages = scored_messages(self.scores)
            for position, message in self.special:
                messages[position] = message
            self._built = item_events(PipelineStage.PLACE, messages)
        return self._built


def expanded(events: list[Any], batches: list[int]) -> list[TraceEvent]:
    """``events`` with the batch at each position in ``batches`` replaced by the events it stands for."""
    if not batches:
        return events
    result: list[TraceEvent] = []
    start = 0
    for position in batches:
        result += events[start:position]
        result += events[position].build()
        start = position + 1
    result += events[start:]
    return result
