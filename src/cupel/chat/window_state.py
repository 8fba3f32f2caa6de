"""WindowState: what a :class:`~cupel.chat.StableWindow` remembers between turns, as plain data.

A stateless service keeps ``state.to_dict()`` beside the conversation and gives it back with the next
transcript. The state names messages (and the tool results it cleared) by their position in the
transcript and fingerprints the messages it has seen (:func:`~cupel.chat.validate.extend_digest`), so
an edited or deleted message is noticed.

A state given back is advice, not authority (:func:`~cupel.chat.validate.resume_check`): what can
be derived from the transcript (the kept messages' tokens, whole units, tool links, clearable results)
is derived again, its ``limit`` may not exceed the budget the window is resumed with, and a state that
disagrees is dropped for a fresh start. A turn is traced as a ``cupel.stable_window`` span
(:func:`traced_turn`) and returns a :class:`StableSelection` (:func:`with_cache_control` marks its
cache breakpoints).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from cupel._checks import check_bool
from cupel.chat.choose import Choice
from cupel.chat.choose_units import unit_indices
from cupel.chat.options import ChatOptions, Compacted
from cupel.chat.parse import SYSTEM_ROLES, parse_message, view_of_mapping
from cupel.chat.read import messages_to_items, parsed_costs
from cupel.chat.render import ChatSelection
from cupel.diagnostics.hooks import active_sink, current_attributes, start_operation
from cupel.diagnostics.reasons import ExclusionReason
from cupel.diagnostics.report import SelectionReport, with_relevance
from cupel.errors import CupelTypeError, InvalidConfigurationError
from cupel.model import ContextBudget
from cupel.protocols import Scorer
from cupel.tokens.base import CounterLike

__all__ = [
    "STATE_VERSION",
    "WINDOW_SPAN",
    "StableSelection",
    "WindowState",
    "appended_report",
    "pinned_tokens",
    "positions_of",
    "ranges_of",
    "selected_positions",
    "share_of",
    "traced_turn",
    "with_cache_control",
]

STATE_VERSION = 1

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
    "cleared",
)


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


def _cleared(value: object, seen: int) -> tuple[tuple[int, str], ...]:
    if not isinstance(value, list | tuple):
        raise CupelTypeError(
            f"WindowState.cleared must be a list of [position, call_id] pairs, got {value!r}"
        )
    pairs: list[tuple[int, str]] = []
    for pair in value:
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or isinstance(pair[0], bool)
            or not isinstance(pair[0], int)
            or not isinstance(pair[1], str)
            or not 0 <= pair[0] < seen
            or (pairs and pairs[-1] >= (pair[0], pair[1]))
        ):
            raise InvalidConfigurationError(
                "WindowState.cleared entries must be [position, call_id] with 0 <= position < seen and a "
                f"string call_id, in increasing order, each once; got {pair!r}"
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


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
    ``cleared`` names the tool results compactions cleared so far, as ``(message position, call id)``
    in increasing order: they stay cleared (sent, when kept, as cleared copies) at every later turn.
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
    cleared: tuple[tuple[int, str], ...] = ()

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
            "cleared": [[position, call_id] for position, call_id in self.cleared],
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
        seen = _int(data, "seen")
        kept = _ranges(data.get("kept"), seen)
        # States saved before the window remembered its clearing have no "cleared": they cleared none.
        cleared = _cleared(data.get("cleared", []), seen)
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
            appendable=check_bool("WindowState", "appendable", data.get("appendable")),
            compactions=_int(data, "compactions"),
            summary=summary,
            summary_at=summary_at,
            cleared=cleared,
        )


M = TypeVar("M")


def selected_positions(
    selected: Sequence[Any], originals: Sequence[Any]
) -> tuple[list[int], Mapping[str, Any] | None, int]:
    """Transcript positions of the selected messages (the same objects), in the selection's order,
    and the summary message (the one selected message not in the transcript) with its place."""
    where: dict[int, list[int]] = {}
    for position in range(len(originals) - 1, -1, -1):
        where.setdefault(id(originals[position]), []).append(position)
    # Each group (system messages first, then the rest) is in transcript order, so the smallest
    # unused position of an object is the one selected.
    positions: list[int] = []
    summary: Mapping[str, Any] | None = None
    summary_at = 0
    for message in selected:
        found = where.get(id(message))
        if found:
            positions.append(found.pop())
        else:
            summary, summary_at = message, len(positions)
    return positions, summary, summary_at


class StableSelection(ChatSelection[M]):
    """A :class:`ChatSelection` that also says how much of it the previous turn already sent.

    ``prefix`` leading messages are the previous turn's messages, unchanged and in the same order (0
    on a window's first turn or after an edit); ``base`` leading messages came from the last
    compaction; ``system`` leading messages are system or developer messages; ``compacted`` is true
    when the strategy chose afresh this turn (the first turn, a compaction, or after an edit).
    """

    __slots__ = ("base", "compacted", "prefix", "system")

    prefix: int
    base: int
    system: int
    compacted: bool

    def __init__(
        self,
        messages: tuple[M, ...],
        report: SelectionReport | Callable[[], SelectionReport],
        *,
        tokens: int,
        prefix: int,
        base: int,
        system: int,
        compacted: bool,
    ) -> None:
        super().__init__(messages, report, tokens=tokens)
        init = object.__setattr__
        init(self, "prefix", prefix)
        init(self, "base", base)
        init(self, "system", system)
        init(self, "compacted", compacted)

    @property
    def cache_breakpoints(self) -> tuple[int, ...]:
        """Positions in ``messages`` to end a cached prefix at (Anthropic allows four ``cache_control``).

        The last system message (stable across compactions), the last message of the compaction's
        selection (stable until the next one), the last message the previous turn sent (read from the
        cache now) and the last message (written for the next turn), each once, ascending.
        """
        marks = {self.system - 1, self.base - 1, self.prefix - 1, len(self.messages) - 1}
        return tuple(sorted(mark for mark in marks if mark >= 0))

    def __repr__(self) -> str:
        return (
            f"StableSelection(messages={len(self.messages)}, tokens={self.tokens}, prefix={self.prefix}, "
            f"compacted={self.compacted})"
        )


def with_cache_control(
    messages: Sequence[Mapping[str, Any]],
    breakpoints: Sequence[int],
    *,
    cache_control: Mapping[str, Any] | None = None,
) -> list[Mapping[str, Any]]:
    """``messages`` with Anthropic's ``cache_control`` on the last content block of each breakpoint.

    The marked messages are copies (a string content becomes one text block); the others are the
    same objects. ``cache_control`` defaults to ``{"type": "ephemeral"}``.
    """
    marker = dict(cache_control) if cache_control is not None else {"type": "ephemeral"}
    out: list[Mapping[str, Any]] = list(messages)
    for position in breakpoints:
        if not 0 <= position < len(out):
            raise InvalidConfigurationError(f"breakpoint {position} is outside the {len(out)} messages")
        message = dict(out[position])
        content = message.get("content")
        if isinstance(content, str):
            blocks: list[Any] = [{"type": "text", "text": content}]
        elif isinstance(content, list) and content:
            blocks = list(content)
        else:
            raise InvalidConfigurationError(
                f"messages[{position}] has no content block to mark with cache_control"
            )
        last = blocks[-1]
        if not isinstance(last, Mapping):
            raise CupelTypeError(f"messages[{position}].content[-1] must be a mapping, got {last!r}")
        blocks[-1] = {**last, "cache_control": dict(marker)}
        message["content"] = blocks
        out[position] = message
    return out


WINDOW_SPAN = "cupel.stable_window"


@contextmanager
def traced_turn(budget: ContextBudget, strategy: str) -> Iterator[Callable[[Any], None]]:
    """Time one window turn; call the yielded function with the turn's ``StableSelection``."""
    sink = active_sink()
    outcome: dict[str, object] = {}

    def record(selection: Any) -> None:
        outcome["cupel.result.tokens"] = selection.tokens
        outcome["cupel.stable_window.message_count"] = len(selection.messages)
        outcome["cupel.stable_window.prefix"] = selection.prefix
        outcome["cupel.stable_window.compacted"] = selection.compacted

    if sink is None:
        yield record
        return
    attributes: dict[str, object] = {
        "cupel.budget.max_tokens": budget.max_tokens,
        "cupel.budget.target_tokens": budget.target_tokens,
        "cupel.chat.strategy": strategy,
        **current_attributes(),
    }
    operation = start_operation(sink, WINDOW_SPAN, attributes)
    try:
        yield record
    except BaseException as error:
        operation.finish(outcome, [], error)
        raise
    operation.finish(outcome, [], None)


def share_of(name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise CupelTypeError(f"{name} must be a number, got {value!r}")
    if not (math.isfinite(value) and 0.0 < value <= 1.0):
        raise InvalidConfigurationError(f"{name} must be in (0, 1], got {value!r}")
    return float(value)


def pinned_tokens(
    originals: Sequence[Any],
    positions: Sequence[int],
    options: ChatOptions,
    counter: CounterLike | None,
    strategy: str,
) -> int:
    """Tokens of the kept system messages the strategy pins (the leading ones under ``"last"``)."""
    if not options.pin_system:
        return 0
    systems = []
    for position in positions:
        message = originals[position]
        role = message.get("role") if isinstance(message, Mapping) else None
        if role not in SYSTEM_ROLES:
            if strategy == "last":
                break
            continue
        systems.append(parse_message(view_of_mapping(message, position), position, options))
    return sum(parsed_costs(systems, counter))


def appended_report(
    originals: Sequence[Any],
    kept: set[int],
    counter: CounterLike | None,
    options: ChatOptions,
    scorer: Scorer,
    low: ContextBudget,
) -> Callable[[], SelectionReport]:
    """The report of a turn that appended: every message not sent was dropped at the last compaction."""

    def build() -> SelectionReport:
        items = messages_to_items(originals, counter=counter, options=options)
        flags = [unit_indices(item)[0] in kept for item in items]
        reasons: dict[int, ExclusionReason] = {
            position: Compacted(low.target_tokens) for position, flag in enumerate(flags) if not flag
        }
        # Nothing was ranked on this turn: its entries carry no relevance (the scorer has no query here).
        return with_relevance(Choice(items, flags, reasons).report(scorer), {}, ())

    return build
