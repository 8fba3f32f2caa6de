"""WindowState: what a :class:`~cupel.chat.StableWindow` remembers between turns, as plain data.

A stateless service keeps ``state.to_dict()`` beside the conversation and gives it back with the next
transcript. The state names messages by their position in the transcript and fingerprints the messages
it has seen (a BLAKE2b digest of their canonical JSON), so an edited or deleted message is noticed.

A state given back is advice, not authority (:func:`resume_mismatch`): what can be derived from the
transcript (the kept messages' tokens, whole units, tool links) is derived again, its ``limit`` may not
exceed the budget the window is resumed with, and a state that disagrees is dropped for a fresh start.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cupel.chat.options import ChatOptions
from cupel.chat.parse import SYSTEM_ROLES, view_of_mapping
from cupel.chat.read import message_costs
from cupel.chat.validate import validate_transcript
from cupel.diagnostics.events import TraceEvent
from cupel.diagnostics.report import SelectionReport
from cupel.errors import CupelError, CupelTypeError, InvalidConfigurationError
from cupel.tokens.base import CounterLike

__all__ = [
    "RESUME_STAGE",
    "STATE_VERSION",
    "WindowState",
    "extend_digest",
    "new_digest",
    "positions_of",
    "ranges_of",
    "resume_mismatch",
    "with_resume_event",
]

STATE_VERSION = 1

RESUME_STAGE = "ResumeWindow"
"""The ``stage`` of the report event that says a saved state was dropped for a fresh start."""

_FIELDS = (
    "version",
    "config",
    "seen",
    "digest",
    "kept",
    "base",
    "tokens",
    "limit",
    "appendable",
    "compactions",
    "summary",
    "summary_at",
)


def new_digest() -> Any:
    """An empty running fingerprint of a transcript prefix."""
    import hashlib  # here, not at import: it loads OpenSSL, which ``cupel select`` never needs

    return hashlib.blake2b(digest_size=16)


def _canonical(message: object) -> bytes:
    # Sorted keys: dict order never changes the fingerprint. ``default=repr`` fingerprints values JSON
    # cannot hold; such a value whose repr changes between calls reads as an edit (a recompaction).
    text = json.dumps(message, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr)
    return text.encode("utf-8", "surrogatepass")


def extend_digest(digest: Any, messages: Iterable[object]) -> None:
    """Feed ``messages`` to a running fingerprint, every field length-prefixed so boundaries count.

    A message whose values are all strings (most of a transcript, tool results included) is fed field
    by field, sorted by key; any other goes in as canonical JSON. A tag byte keeps the two apart.
    """
    update = digest.update
    for message in messages:
        if type(message) is dict and all(type(k) is str and type(v) is str for k, v in message.items()):
            update(b"p" + len(message).to_bytes(4, "little"))
            for key, value in sorted(message.items()):
                for text in (key, value):
                    data = text.encode("utf-8", "surrogatepass")
                    update(len(data).to_bytes(8, "little"))
                    update(data)
            continue
        data = _canonical(message)
        update(b"j" + len(data).to_bytes(8, "little"))
        update(data)


def ranges_of(positions: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """Positions in output order as ``(start, stop)`` runs of consecutive positions."""
    runs: list[list[int]] = []
    for position in positions:
        if runs and runs[-1][1] == position:
            runs[-1][1] = position + 1
        else:
            runs.append([position, position + 1])
    return tuple((start, stop) for start, stop in runs)


def positions_of(ranges: Sequence[tuple[int, int]]) -> list[int]:
    """The positions ``ranges`` hold, in order."""
    return [position for start, stop in ranges for position in range(start, stop)]


def _int(data: Mapping[str, Any], name: str, *, minimum: int = 0) -> int:
    value = data.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise CupelTypeError(f"WindowState.{name} must be an int, got {value!r}")
    if value < minimum:
        raise InvalidConfigurationError(f"WindowState.{name} must be >= {minimum}, got {value}")
    return value


def _ranges(value: object, seen: int) -> tuple[tuple[int, int], ...]:
    if not isinstance(value, list | tuple):
        raise CupelTypeError(f"WindowState.kept must be a list of [start, stop] pairs, got {value!r}")
    ranges: list[tuple[int, int]] = []
    for pair in value:
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or any(isinstance(bound, bool) or not isinstance(bound, int) for bound in pair)
            or not 0 <= pair[0] < pair[1] <= seen
        ):
            raise InvalidConfigurationError(
                f"WindowState.kept entries must be [start, stop] with 0 <= start < stop <= seen, got {pair!r}"
            )
        ranges.append((pair[0], pair[1]))
    return tuple(ranges)


@dataclass(frozen=True, slots=True)
class WindowState:
    """One conversation's window between turns.

    ``seen`` messages were read so far (``digest`` fingerprints them); the selection was the messages at
    the positions ``kept`` holds (``(start, stop)`` runs, in the order sent), ``tokens`` in all, of
    which the first ``base`` came from the last compaction; it may grow to ``limit`` tokens.
    ``appendable`` is false when the last selection did not end with the transcript's last message
    (the next turn then compacts again). ``config`` names the settings the state was made under;
    other settings start afresh. ``summary`` is the summary message of the last compaction (or
    ``None``), sent after the first ``summary_at`` kept messages and counted in ``base`` and ``tokens``.
    """

    config: str
    seen: int
    digest: str
    kept: tuple[tuple[int, int], ...]
    base: int
    tokens: int
    limit: int
    appendable: bool
    compactions: int
    summary: Mapping[str, Any] | None = None
    summary_at: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data; :meth:`from_dict` reads it back."""
        return {
            "version": STATE_VERSION,
            "config": self.config,
            "seen": self.seen,
            "digest": self.digest,
            "kept": [[start, stop] for start, stop in self.kept],
            "base": self.base,
            "tokens": self.tokens,
            "limit": self.limit,
            "appendable": self.appendable,
            "compactions": self.compactions,
            "summary": None if self.summary is None else dict(self.summary),
            "summary_at": self.summary_at,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WindowState:
        """Read :meth:`to_dict`'s output; a wrong or missing field is a one-line error naming it."""
        if not isinstance(data, Mapping):
            raise CupelTypeError(f"WindowState data must be a mapping, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_FIELDS), key=str)
        if unknown:
            raise InvalidConfigurationError(f"WindowState has unknown field {unknown[0]!r}")
        version = _int(data, "version", minimum=1)
        if version != STATE_VERSION:
            raise InvalidConfigurationError(f"WindowState.version must be {STATE_VERSION}, got {version}")
        config, digest = data.get("config"), data.get("digest")
        if not isinstance(config, str):
            raise CupelTypeError(f"WindowState.config must be a string, got {config!r}")
        if not isinstance(digest, str):
            raise CupelTypeError(f"WindowState.digest must be a string, got {digest!r}")
        appendable = data.get("appendable")
        if not isinstance(appendable, bool):
            raise CupelTypeError(f"WindowState.appendable must be a bool, got {appendable!r}")
        seen = _int(data, "seen")
        kept = _ranges(data.get("kept"), seen)
        summary = data.get("summary")
        if summary is not None and not isinstance(summary, Mapping):
            raise CupelTypeError(f"WindowState.summary must be a message mapping or null, got {summary!r}")
        summary_at = _int(data, "summary_at") if "summary_at" in data else 0
        size = sum(stop - start for start, stop in kept)
        if summary_at > size:
            raise InvalidConfigurationError(
                f"WindowState.summary_at must be <= the kept messages, got {summary_at}"
            )
        base = _int(data, "base")
        if base > size + (summary is not None):
            raise InvalidConfigurationError(f"WindowState.base must be <= the kept messages, got {base}")
        return cls(
            config=config,
            seen=seen,
            digest=digest,
            kept=kept,
            base=base,
            tokens=_int(data, "tokens"),
            limit=_int(data, "limit"),
            appendable=appendable,
            compactions=_int(data, "compactions"),
            summary=summary,
            summary_at=summary_at,
        )


def _role(message: object) -> object:
    return message.get("role") if isinstance(message, Mapping) else None


#: The provider rules every strategy keeps (``"messages"`` keeps no others: it may drop a first user turn).
_TOOL_RULES = frozenset({"tool-call-unanswered", "tool-result-orphaned"})


def _violations(messages: Sequence[Any], where: Sequence[int], tool_links_only: bool) -> set[tuple[int, str]]:
    """Each provider rule ``messages`` break, as (transcript position of the message, rule)."""
    return {
        (where[violation.index], violation.rule)
        for violation in validate_transcript(messages)
        if not tool_links_only or violation.rule in _TOOL_RULES
    }


def resume_mismatch(
    state: WindowState,
    originals: Sequence[Any],
    counter: CounterLike | None,
    options: ChatOptions,
    ceiling: int,
    tool_links_only: bool = False,
) -> str | None:
    """Why ``state`` cannot be resumed on ``originals``, or ``None`` when it can (docs/spec-notes.md,
    "Saved windows are advice").

    ``originals`` are the transcript whose first ``state.seen`` messages ``state.digest`` was checked
    against; ``ceiling`` is the most tokens the resuming window may grow to. The kept messages (with
    the summary in its place) must name each message once, in an order a selection sends (transcript
    order, or system messages first), break no provider rule the transcript itself does not break
    (whole units, tool calls with their results; only those two with ``tool_links_only``, as under the
    ``"messages"`` strategy), cost ``state.tokens``, end with the last message seen exactly when
    ``state.appendable``, and ``state.limit`` may not exceed ``ceiling``. A mismatch is also logged as
    a warning through ``logging.getLogger("cupel")``.
    """
    mismatch = _mismatch(state, originals, counter, options, ceiling, tool_links_only)
    if mismatch is not None:
        logging.getLogger("cupel").warning("StableWindow: %s", _notice(mismatch))
    return mismatch


def _mismatch(
    state: WindowState,
    originals: Sequence[Any],
    counter: CounterLike | None,
    options: ChatOptions,
    ceiling: int,
    tool_links_only: bool,
) -> str | None:
    if state.limit > ceiling:
        return f"its limit of {state.limit} tokens exceeds the budget's {ceiling}"
    positions = positions_of(state.kept)
    if len(set(positions)) != len(positions):
        return "its kept messages name a message twice"
    in_order = sorted(positions)
    systems_first = sorted(
        positions, key=lambda position: (_role(originals[position]) not in SYSTEM_ROLES, position)
    )
    if positions not in (in_order, systems_first):
        return "its kept messages are in an order no selection sends"
    appendable = state.seen == 0 or (bool(positions) and positions[-1] == state.seen - 1)
    if state.appendable != appendable:
        return f"it says appendable={state.appendable}, but its kept messages say {appendable}"
    kept = [originals[position] for position in positions]
    where = list(positions)
    if state.summary is not None:
        kept.insert(state.summary_at, state.summary)
        where.insert(state.summary_at, -1)
    try:
        seen = range(state.seen)
        broken = _violations(kept, where, tool_links_only) - _violations(
            originals[: state.seen], seen, tool_links_only
        )
        costs = message_costs(
            [view_of_mapping(message, index) for index, message in enumerate(kept)], counter, options
        )
    except CupelError as error:
        return f"its kept messages cannot be read ({error})"
    if broken:
        position, rule = min(broken)
        named = "the summary" if position < 0 else f"message {position}"
        return f"its kept messages are not a valid transcript ({named}: {rule})"
    tokens = sum(costs)
    if tokens != state.tokens:
        return f"it says {state.tokens} tokens, but its kept messages cost {tokens}"
    return None


def _notice(mismatch: str) -> str:
    return f"saved WindowState does not match its transcript: {mismatch}; the window started afresh"


def with_resume_event(report: SelectionReport, mismatch: str | None) -> SelectionReport:
    """``report`` with a first event saying the saved state was dropped for ``mismatch`` (if any)."""
    if mismatch is None:
        return report
    event = TraceEvent(RESUME_STAGE, 0.0, 0, _notice(mismatch))
    return dataclasses.replace(report, events=(event, *report.events))
