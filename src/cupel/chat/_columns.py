"""A transcript read column-wise: each message's role and token cost, and the atomic units.

The ``"turns"`` fast path reads a transcript here in one pass. A message with only a role and a text
content (the common case: a plain message dict, a text-only LangChain message) is kept as its role
and text, with no parse object and no rendering; every other message is parsed as
:func:`~cupel.chat._parse.parse_message` does. Costs, links and their errors come in the order of the
item conversion (:func:`~cupel.chat.convert.items_of_parsed`): every message read, then counted,
then linked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from cupel.chat._counts import count_texts_once
from cupel.chat._parse import ParsedMessage, link_units, render_plain
from cupel.chat._position_columns import PositionColumn
from cupel.chat.options import ChatOptions
from cupel.tokens.base import CounterLike

__all__ = ["TranscriptColumns", "read_columns"]

#: Rendering openings ``"[0"``, ``"[1"``, ... of plain messages, kept between calls.
_OPENINGS: PositionColumn[str] = PositionColumn(lambda positions: map("[{}".format, positions))


@dataclass(frozen=True, slots=True)
class TranscriptColumns:
    """Per message: role, cost and (for a plain message) its text; the other messages parsed; the units.

    ``units`` is ``None`` when every message is a unit of its own (no tool calls in the transcript).
    """

    roles: list[str]
    costs: list[int]
    contents: list[str | None]
    parsed: dict[int, ParsedMessage]
    units: list[tuple[int, ...]] | None

    def rendering(self, index: int) -> str:
        """The message's rendering, as its parse gives it (built only when asked for)."""
        parsed = self.parsed.get(index)
        if parsed is not None:
            return parsed.rendering
        content = self.contents[index]
        assert content is not None
        return render_plain(index, self.roles[index], content)

    def renderings(self, start: int = 0) -> list[str]:
        """The renderings of messages ``start`` onwards."""
        if not self.parsed:
            roles, contents = self.roles[start:], self.contents[start:]
            if all(contents):  # every text non-empty: render_plain's first form, in C passes
                # "[{index}" (kept between calls) + "] {role}: " (one per role) + the text, joined
                # (a test checks they agree with render_plain).
                middles = {role: f"] {role}: " for role in set(roles)}
                opens = _OPENINGS.upto(len(self.roles))  # may be longer (kept from a longer transcript)
                pieces = zip(opens[start:], map(middles.__getitem__, roles), contents, strict=False)
                return list(map("".join, pieces))  # type: ignore[arg-type]
            return list(map(render_plain, range(start, len(self.roles)), roles, contents))  # type: ignore[arg-type]
        return list(map(self.rendering, range(start, len(self.roles))))


def read_columns(
    originals: Sequence[Any],
    split: Callable[[Sequence[Any]], tuple[list[str | None], list[str | None]]],
    parse: Callable[[Any, int], ParsedMessage],
    *,
    counter: CounterLike | None,
    options: ChatOptions,
) -> TranscriptColumns:
    """Read ``originals``: ``split`` gives each message's role and text if it is plain (else ``None``,
    ``None``), ``parse`` parses any other message (with its rendering) or raises its error."""
    found_roles, contents = split(originals)
    parsed: dict[int, ParsedMessage] = {}
    if None in found_roles:
        for index, role in enumerate(found_roles):
            if role is None:
                read = parsed[index] = parse(originals[index], index)
                found_roles[index] = read.role
    roles: list[str] = found_roles  # type: ignore[assignment]
    overhead = options.message_overhead
    if not parsed:
        costs = list(map(overhead.__add__, count_texts_once(contents, counter)))  # type: ignore[arg-type]
        return TranscriptColumns(roles, costs, contents, parsed, None)
    texts: list[str] = []
    for index, content in enumerate(contents):
        if content is None:
            texts.extend(parsed[index].texts)
        else:
            texts.append(content)
    counts = iter(count_texts_once(texts, counter))
    costs = [
        overhead + next(counts)
        if content is not None
        else parsed[index].fixed + sum(next(counts) for _ in parsed[index].texts)
        for index, content in enumerate(contents)
    ]
    return TranscriptColumns(roles, costs, contents, parsed, _units(parsed, contents))


def _units(parsed: dict[int, ParsedMessage], contents: list[str | None]) -> list[tuple[int, ...]] | None:
    """The atomic units, or ``None`` when no message makes or answers a call (every message is one)."""
    if not any(
        message.calls or message.results or message.function_call is not None or message.function_result
        for message in parsed.values()
    ):
        return None
    # A plain message neither makes nor answers a call: linking the parsed ones alone finds every
    # multi-message unit, and raises what linking the whole transcript would, in the same order.
    linked = {unit[0]: unit for unit in link_units(list(parsed.values()))}
    units: list[tuple[int, ...]] = []
    for index, content in enumerate(contents):
        unit = linked.get(index)
        if unit is not None:
            units.append(unit)
        elif content is not None:
            units.append((index,))
    return units
