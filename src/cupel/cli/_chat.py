"""Chat options shared by ``cupel select`` and ``cupel explain``, and the per-turn view of a report."""

from __future__ import annotations

import argparse
from typing import Any

from cupel.cli._common import CliError
from cupel.diagnostics.report import SelectionReport
from cupel.policy.chat_settings import CHAT_STRATEGIES

__all__ = ["add_chat_arguments", "chat_keywords", "render_turns"]


def add_chat_arguments(parser: argparse.ArgumentParser) -> None:
    """``--strategy``, ``--summary-tokens`` and ``--repair``, read by chat transcripts only."""
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


def chat_keywords(args: argparse.Namespace) -> dict[str, Any]:
    """The :func:`cupel.chat.select_messages` keywords the options ask for."""
    keywords: dict[str, Any] = {"on_invalid": "repair" if args.repair else "error"}
    if args.strategy is not None:
        keywords["strategy"] = args.strategy
    if args.summary_tokens is not None:
        if args.summary_tokens < 0:
            raise CliError(f"--summary-tokens must be >= 0, got {args.summary_tokens}")
        keywords["summarize"] = True
        keywords["summary_tokens"] = args.summary_tokens
    return keywords


def render_turns(report: SelectionReport) -> str:
    """Turn by turn: number, role sequence, and whether the turn was kept, dropped or cut."""
    from cupel.chat.convert import INDICES_KEY
    from cupel.chat.turns import split_turns

    kept = {id(entry.item) for entry in report.included}
    units = [entry.item for entry in report.included] + [entry.item for entry in report.excluded]
    units.sort(key=lambda item: item.metadata[INDICES_KEY][0])
    transcript = split_turns(units)
    lines = ["", "Turns (transcript order)", f"  {'turn':>4}  {'kept':<8}{'tokens':>7}  roles"]
    for turn in transcript.turns:
        count = sum(1 for item in turn.items if id(item) in kept)
        state = "kept" if count == len(turn.items) else "dropped" if count == 0 else "partly"
        roles = " ".join(turn.roles)
        lines.append(f"  {turn.number:>4}  {state:<8}{turn.tokens:>7}  {roles}")
    return "\n".join(lines) + "\n"
