"""Report parts kept as columns by a report-building run and turned into records when first read.

A large run decides about every candidate, but most reports are read in part (the included items, a
few exclusions) or not at all. So the collector keeps each decision in column buffers -- items,
scores, reasons -- or, for a batch of decisions, as positions into the run's own lists with what
explains them (:class:`ExclusionBatch`, :class:`InclusionBatch`); the records
(:class:`~cupel.diagnostics.report.ExcludedItem`, ``TraceEvent`` ...) are built, all of one field at
once, the first time that field is read. They equal, and serialise exactly as, the records built
eagerly (tests compare them); once built, a field is an ordinary tuple that stays.
"""

from __future__ import annotations

from _thread import RLock
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from cupel import _numeric
from cupel._gc_pause import collector_paused
from cupel.diagnostics.events import PipelineStage, TraceEvent, item_event, item_events
from cupel.diagnostics.reasons import ExclusionReason, InclusionReason
from cupel.model import ContextItem

__all__ = [
    "Deferred",
    "ExclusionBatch",
    "InclusionBatch",
    "expanded",
    "included_message",
    "scored_messages",
    "sorted_exclusions",
    "spliced",
]

# The inclusion events' message prefix per reason (Enum.value is a slow descriptor per item).
_INCLUDED_PREFIX = {reason: f"{reason.value}: score=" for reason in InclusionReason}
_SCORED = InclusionReason.SCORED
_PINNED = InclusionReason.PINNED
_ZERO_TOKEN = InclusionReason.ZERO_TOKEN
_SCORED_LINE = f"{_INCLUDED_PREFIX[_SCORED]}%.6g\n"
_MESSAGE_BLOCK = 2048
_SAMPLE = 1024  # scores looked at to decide whether sharing inclusion events is worth it

# Guards building on first read; re-entrant, as building a report field builds batches too.
_lock = RLock()


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
                        del pending[name]  # the buffers it read are freed with it
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


class ExclusionBatch:
    """A batch of exclusions at one stage, in the order they were decided, explained when first read.

    Exclusion ``n`` is ``items[positions[n]]`` with score ``scores[positions[n]]`` (``positions`` may
    be a numpy int64 array, turned into a list when first read); ``explain``, given
    those scores in order, returns the distinct reasons and, per exclusion, the position of its
    reason among them.
    Exclusions sharing a reason share one reason object and one (immutable) item event. The lists
    are the run's own, never changed afterwards.
    """

    __slots__ = ("_events", "_explained", "_scores", "explain", "items", "positions", "scores", "stage")

    def __init__(
        self,
        stage: PipelineStage,
        items: Sequence[ContextItem],
        scores: Sequence[float],
        positions: Sequence[int],
        explain: Callable[[list[float]], tuple[list[ExclusionReason], list[int]]],
    ) -> None:
        self.stage = stage
        self.items = items
        self.scores = scores
        self.positions = positions
        self.explain: Callable[[list[float]], tuple[list[ExclusionReason], list[int]]] | None = explain
        self._explained: tuple[list[ExclusionReason], list[int]] | None = None
        self._scores: list[float] = []  # the excluded items' scores, once explained
        self._events: list[TraceEvent] | None = None

    def __len__(self) -> int:
        return len(self.positions)

    def reasons(self) -> tuple[list[ExclusionReason], list[int]]:
        """The distinct reasons and each exclusion's slot among them, found once."""
        with _lock:
            if self._explained is None:
                assert self.explain is not None
                if type(self.positions) is not list:  # an int64 array: a list of ints (carrying it)
                    self.positions = _numeric.column(self.positions)
                # Taken from the run's arrays when both lists carry one (no random access per item).
                scores = _numeric.take(self.scores, self.positions)
                self._scores = (
                    list(map(self.scores.__getitem__, self.positions)) if scores is None else scores
                )
                self._explained = self.explain(self._scores)
                self.explain = None  # what it read is no longer needed
            return self._explained

    def columns(self) -> tuple[list[ContextItem], list[float], list[ExclusionReason]]:
        """The excluded items, their scores and their reasons, in order."""
        distinct, slots = self.reasons()
        return (
            list(map(self.items.__getitem__, self.positions)),
            self._scores,
            list(map(distinct.__getitem__, slots)),
        )

    def build(self) -> list[TraceEvent]:
        """The item events, built once (a collector and the report it built then share them)."""
        with _lock:
            if self._events is None:
                distinct, slots = self.reasons()
                events = item_events(self.stage, [reason.describe() for reason in distinct])
                self._events = list(map(events.__getitem__, slots))
            return self._events


def sorted_exclusions(
    columns: tuple[list[Any], list[float], list[Any]],
    batches: Sequence[tuple[int, ExclusionBatch]],
) -> tuple[int, Iterable[ContextItem], Iterable[float], Iterable[ExclusionReason]] | None:
    """The count, items, scores and reasons of the exclusions by score descending (a stable sort), each
    column gathered once: what sorting :func:`spliced`'s columns gives, without gathering them first.

    For the common large case, every exclusion in batches over the same items and scores and numpy
    at hand; None otherwise (and where a score is NaN, whose order the pure sort defines).
    """
    if columns[0] or not batches:
        return None
    items, scores = batches[0][1].items, batches[0][1].scores
    if any(batch.items is not items or batch.scores is not scores for _, batch in batches):
        return None
    np = (
        _numeric.numpy_module()
        if sum(map(len, (batch for _, batch in batches))) >= _numeric.THRESHOLD
        else None
    )
    if np is None:
        return None
    explained = [batch.reasons() for _, batch in batches]  # positions are lists (carrying arrays) now
    positions = np.concatenate([_positions(np, batch.positions) for _, batch in batches])
    values = _numeric._floats(np, scores)[positions]
    if np.isnan(values).any():
        return None
    # The batches' exclusions in order, as spliced lists them: the same values, so the same order.
    order = _numeric._descending(np, values)
    distinct: list[ExclusionReason] = []
    slots = []
    for batch_distinct, batch_slots in explained:
        slots.append(np.asarray(batch_slots, dtype=np.int64) + len(distinct))
        distinct += batch_distinct
    return (
        len(order),
        map(items.__getitem__, positions[order].tolist()),
        values[order].tolist(),
        map(distinct.__getitem__, np.concatenate(slots)[order].tolist()),
    )


def _positions(np: Any, positions: Sequence[int]) -> Any:
    carried = getattr(positions, "array", None)
    return carried if carried is not None else np.asarray(positions, dtype=np.int64)


def spliced(
    columns: tuple[list[Any], list[float], list[Any]],
    batches: Sequence[tuple[int, ExclusionBatch | InclusionBatch]],
) -> tuple[list[Any], list[float], list[Any]]:
    """The decisions in ``columns`` (items, scores, reasons) with each batch's inserted at its
    offset (the number of decisions in ``columns`` made before it)."""
    if not batches:
        return columns
    if len(batches) == 1 and not columns[0]:
        return batches[0][1].columns()  # the common case: one batch and nothing else
    items: list[Any] = []
    scores: list[float] = []
    reasons: list[Any] = []
    start = 0
    for offset, batch in batches:
        batch_items, batch_scores, batch_reasons = batch.columns()
        items += columns[0][start:offset] + batch_items
        scores += columns[1][start:offset] + batch_scores
        reasons += columns[2][start:offset] + batch_reasons
        start = offset
    return items + columns[0][start:], scores + columns[1][start:], reasons + columns[2][start:]


class InclusionBatch:
    """The placed items, in placed order, with their scores and reasons found when first read.

    ``placed[n]`` scored ``scores[positions[n]]`` (``positions`` None: ``scores[n]``); ``special()``
    gives the positions in ``placed`` of the pinned and zero-token items, whose reason (and message)
    is not the SCORED one. The lists are the run's own, never changed afterwards.
    """

    __slots__ = ("_columns", "_events", "_special", "placed", "positions", "scores", "special")

    def __init__(
        self,
        placed: list[ContextItem],
        scores: Sequence[float],
        positions: Sequence[int] | None,
        special: Callable[[], list[int]],
    ) -> None:
        self.placed = placed
        self.scores = scores
        self.positions = positions
        self.special: Callable[[], list[int]] | None = special
        self._special: list[int] = []
        self._columns: tuple[list[ContextItem], list[float], list[InclusionReason]] | None = None
        self._events: list[TraceEvent] | None = None

    def __len__(self) -> int:
        return len(self.placed)

    def columns(self) -> tuple[list[ContextItem], list[float], list[InclusionReason]]:
        """The placed items, their scores and their inclusion reasons, found once."""
        with _lock:
            if self._columns is None:
                assert self.special is not None
                placed = self.placed
                if self.positions is None:
                    scores = list(self.scores)
                else:
                    scores = list(map(self.scores.__getitem__, self.positions))
                reasons = [_SCORED] * len(placed)
                self._special = self.special()
                for position in self._special:
                    reasons[position] = _PINNED if placed[position].pinned else _ZERO_TOKEN
                self._columns = (placed, scores, reasons)
                self.special = self.positions = None  # what they read is no longer needed
            return self._columns

    def build(self) -> list[TraceEvent]:
        """The item events, built once (a collector and the report it built then share them)."""
        with _lock:
            if self._events is None:
                _, scores, reasons = self.columns()
                events = _shared_scored_events(scores)
                if events is None:
                    messages = scored_messages(scores)
                    for position in self._special:
                        messages[position] = included_message(reasons[position], scores[position])
                    self._events = item_events(PipelineStage.PLACE, messages)
                else:
                    for position in self._special:
                        message = included_message(reasons[position], scores[position])
                        events[position] = item_event(PipelineStage.PLACE, message)
                    self._events = events
            return self._events


def _shared_scored_events(scores: list[float]) -> list[TraceEvent] | None:
    """The SCORED inclusion event for each score, one shared (immutable) event per distinct score
    (bit for bit: 0.0 and -0.0 read differently), for a large list with many equal scores; None
    otherwise (one event per item is then as cheap)."""
    np = _numeric.numpy_module() if len(scores) >= _numeric.THRESHOLD else None
    if np is None or len(set(scores[:_SAMPLE])) * 2 > _SAMPLE:
        return None  # (a sample with few equal scores: not worth finding the distinct ones)
    bits = np.fromiter(scores, dtype=np.float64, count=len(scores)).view(np.int64)
    _, first, inverse = np.unique(bits, return_index=True, return_inverse=True)
    if len(first) * 2 > len(scores):
        return None
    events = item_events(PipelineStage.PLACE, scored_messages(list(map(scores.__getitem__, first.tolist()))))
    return list(map(events.__getitem__, inverse.reshape(-1).tolist()))


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
