"""Chat options shared by ``cupel select``, ``explain`` and ``sensitivity``; the per-turn view of a report."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cupel._frozen import dataclass
from cupel.cli._common import CliError
from cupel.policy.chat_settings import CHAT_STRATEGIES

if TYPE_CHECKING:
    # The report types are imported where a report is rendered: ``cupel select`` builds none.
    from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport

__all__ = [
    "TurnGroup",
    "add_chat_arguments",
    "chat_keywords",
    "group_turns",
    "is_transcript_report",
    "render_turns",
]


def add_chat_arguments(parser: argparse.ArgumentParser) -> None:
    """``--strategy``, ``--summary-tokens``, ``--repair`` and ``--clear-tool-results``, read by chat
    transcripts only."""
    parser.add_argument(
        "--strategy",
        choices=CHAT_STRATEGIES,
        default=None,
        help="chat transcripts: turns (whole turns, default), last (a suffix like trim_messages) "
        "or messages (scored one by one); default: the policy's",
    )
    parser.add_argument(
        "--summary-tokens",
        type=int,
        default=None,
        metavar="N",
        help="chat transcripts: reserve N tokens for an offline summary of what was dropped",
    )
    parser.add_argument(
        "--repair",
        action="store_true",
        help="chat transcripts: drop orphaned tool results and unanswered tool calls instead of failing",
    )
    parser.add_argument(
        "--clear-tool-results",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="chat transcripts: clear the content of the oldest tool results before dropping units "
        "(--no-clear-tool-results: never); default: the policy's",
    )


def chat_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`cupel.chat.select_messages` keywords the options ask for."""
    keywords: dict[str, Any] = {"on_invalid": "repair" if args.repair else "error"}
    if args.strategy is not None:
        keywords["strategy"] = args.strategy
    if args.clear_tool_results is not None:
        keywords["clear_tool_results"] = args.clear_tool_results
    if args.summary_tokens is not None:
        if args.summary_tokens < 0:
            raise CliError(f"--summary-tokens must be >= 0, got {args.summary_tokens}")
        keywords["summarize"] = True
        keywords["summary_tokens"] = args.summary_tokens
    return keywords


@dataclass(frozen=True, slots=True)
class TurnGroup:
    """One turn of an explained transcript: its report entries (one per unit) in transcript order."""

    number: int
    entries: tuple[IncludedItem | ExcludedItem, ...]
    roles: tuple[str, ...]
    tokens: int

    @property
    def state(self) -> str:
        """``kept`` (every unit), ``dropped`` (none) or ``partly``."""
        from cupel.diagnostics.report import IncludedItem

        count = sum(1 for entry in self.entries if isinstance(entry, IncludedItem))
        return "kept" if count == len(self.entries) else "dropped" if count == 0 else "partly"

    @property
    def summarized(self) -> bool:
        """Whether a unit of the turn is told in the summary instead."""
        from cupel.chat.options import Summarized

        return any(isinstance(entry.reason, Summarized) for entry in self.entries)

    @property
    def repaired(self) -> bool:
        """Whether repair removed a unit of the turn (an orphaned result or an unanswered call)."""
        from cupel.chat.options import OrphanedToolResult, UnansweredToolCall

        repairs = (OrphanedToolResult, UnansweredToolCall)
        return any(isinstance(entry.reason, repairs) for entry in self.entries)


def is_transcript_report(report: SelectionReport) -> bool:
    """Whether every entry of ``report`` is a chat unit (the report of a transcript's selection)."""
    from cupel.chat.read import INDICES_KEY

    items = [entry.item for entry in report.included] + [entry.item for entry in report.excluded]
    return bool(items) and all(INDICES_KEY in item.metadata for item in items)


def group_turns(
    report: SelectionReport,
) -> tuple[tuple[IncludedItem | ExcludedItem, ...], tuple[TurnGroup, ...]]:
    """A transcript's report entries as system units (a summary first) and turns, in transcript order."""
    from cupel.chat.choose_units import split_turns
    from cupel.chat.read import INDICES_KEY

    entries: dict[int, IncludedItem | ExcludedItem] = {id(entry.item): entry for entry in report.included}
    entries.update((id(entry.item), entry) for entry in report.excluded)
    units = [entry.item for entry in entries.values()]
    units.sort(key=lambda item: item.metadata[INDICES_KEY][0])
    transcript = split_turns(units)
    turns = tuple(
        TurnGroup(turn.number, tuple(entries[id(item)] for item in turn.items), turn.roles, turn.tokens)
        for turn in transcript.turns
    )
    return tuple(entries[id(item)] for item in transcript.system), turns


def render_turns(report: SelectionReport) -> str:
    """Turn by turn: number, role sequence, and whether the turn was kept, dropped or cut."""
    lines = ["", "Turns (transcript order)", f"  {'turn':>4}  {'kept':<8}{'tokens':>7}  roles"]
    for turn in group_turns(report)[1]:
        roles = " ".join(turn.roles)
        lines.append(f"  {turn.number:>4}  {turn.state:<8}{turn.tokens:>7}  {roles}")
    from cupel.chat.render import CLEAR_STAGE

    cleared = [event.message for event in report.events if event.stage == CLEAR_STAGE and event.message]
    if cleared:
        lines += ["", "Tool results cleared (oldest first)", *(f"  {message}" for message in cleared)]
    return "\n".join(lines) + "\n"
