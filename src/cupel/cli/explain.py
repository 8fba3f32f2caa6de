"""``cupel explain``: why each item was included or left out, as text or a self-contained HTML report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cupel._atomic import write_atomic
from cupel._plural import counted
from cupel.cli._chat import add_chat_arguments, chat_keywords, is_transcript_report, render_turns
from cupel.cli._common import (
    CliError,
    add_budget_arguments,
    add_policy_argument,
    add_query_argument,
    add_tokenizer_argument,
    load_candidates,
    parse_budget,
    pipeline_for,
    resolve_counter,
    resolve_policy,
)
from cupel.cli._html import render_html
from cupel.cli._output import writing
from cupel.cli._terminal import fit, ljust, terminal_safe
from cupel.diagnostics.reasons import NegativeTokens
from cupel.diagnostics.report import SelectionReport
from cupel.model import ContextBudget


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "explain",
        help="show why each item was included or excluded",
        description=(
            "Run the selection with diagnostics and show the included items in placed order, the "
            "excluded items with their reasons, and the budget. --html writes a self-contained report."
        ),
    )
    parser.add_argument("items", metavar="ITEMS", help="JSON/JSONL file, or - for stdin")
    add_budget_arguments(parser)
    add_policy_argument(parser)
    add_tokenizer_argument(parser)
    parser.add_argument("--html", metavar="FILE", help="also write an HTML report to FILE")
    parser.add_argument("--width", type=int, default=60, help="content preview width (default 60)")
    add_query_argument(parser)
    add_chat_arguments(parser)
    parser.set_defaults(handler=run)


def explain_report(
    items_source: str,
    budget: ContextBudget,
    policy: str,
    tokenizer: str,
    chat: dict[str, Any] | None = None,
    query: str | None = None,
) -> SelectionReport:
    candidates = load_candidates(items_source, tokenizer)
    pipeline = pipeline_for(policy)
    if candidates.messages is not None:
        from cupel.chat import select_messages

        return select_messages(
            candidates.messages,
            budget,
            policy=resolve_policy(policy)[1],
            counter=resolve_counter(tokenizer),
            query="auto" if query is None else query,  # a transcript answers its latest user message
            **(chat or {}),
        ).report
    assert candidates.items is not None
    return pipeline.dry_run(candidates.items, budget, query=query)


def run(args: argparse.Namespace) -> int:
    budget = parse_budget(args.budget, args.reserve)
    if args.width < 10:
        raise CliError(f"--width must be at least 10, got {args.width}")
    report = explain_report(args.items, budget, args.policy, args.tokenizer, chat_keywords(args), args.query)
    sys.stdout.write(render_text(report, budget, args.policy, args.width))
    by_turn = is_transcript_report(report)
    if by_turn:
        sys.stdout.write(render_turns(report))
    if args.html:
        path = Path(args.html)
        entries = None
        if by_turn:
            from cupel.cli._html_turns import turn_tables

            entries = turn_tables(report)
        with writing("--html", args.html):
            write_atomic(path, render_html(report, budget, args.policy, entries))
        print(f"wrote {path}", file=sys.stderr)
    return 0


def preview(text: str, width: int) -> str:
    """One line of at most ``width`` terminal cells, control characters escaped."""
    return fit(terminal_safe(" ".join(text.split())), width)


def budget_bar(report: SelectionReport, budget: ContextBudget, width: int = 40) -> str:
    """``[▓▓███░░░│   ]``: pinned ▓, other included █, room to target ░, │ target, rest up to max."""
    scale = max(budget.max_tokens, report.included_tokens, 1)
    pinned = sum(entry.item.tokens for entry in report.included if entry.item.pinned)
    used = report.included_tokens

    def cells(tokens: int) -> int:
        return round(width * tokens / scale)

    pinned_cells = cells(pinned)
    used_cells = max(cells(used), pinned_cells)
    target_cell = min(cells(budget.target_tokens), width)
    bar = []
    for cell in range(width):
        if cell < pinned_cells:
            bar.append("▓")
        elif cell < used_cells:
            bar.append("█")
        elif cell < target_cell:
            bar.append("░")
        else:
            bar.append(" ")
    if 0 <= target_cell < width:
        bar[target_cell] = "│"
    return "[" + "".join(bar) + "]"


def render_text(report: SelectionReport, budget: ContextBudget, policy: str, width: int = 60) -> str:
    used = report.included_tokens
    pinned = sum(entry.item.tokens for entry in report.included if entry.item.pinned)
    share = f" ({100 * pinned / used:.0f}%)" if used else ""
    lines = [
        f"{len(report.included)} of {counted(report.total_candidates, 'candidate')} included · "
        f"policy {terminal_safe(policy)}",
        f"Budget {budget_bar(report, budget)} {used:,} used / {budget.target_tokens:,} target / "
        f"{budget.max_tokens:,} max · pinned {pinned:,}{share}",
        "",
        "Included (placed order)",
    ]
    relevant = any(entry.relevance is not None for entry in report.included) or any(
        entry.relevance is not None for entry in report.excluded
    )
    if report.included:
        head = f"{'relev':>6}  " if relevant else ""
        lines.append(f"  {'#':>3}  {'kind':<14}{'tokens':>7}  {'score':>6}  {head}{'reason':<10}content")
        for position, entry in enumerate(report.included, start=1):
            lines.append(
                f"  {position:>3}  {ljust(preview(str(entry.item.kind), 14), 14)}{entry.item.tokens:>7}  "
                f"{entry.score:>6.3f}  {_relevance(entry.relevance, relevant)}{entry.reason.value:<10}"
                f"{preview(entry.item.content, width)}"
            )
    else:
        lines.append("  (none)")
    lines += ["", "Excluded (highest score first)"]
    if report.excluded:
        head = f"{'relev':>6}  " if relevant else ""
        lines.append(f"  {'score':>6}  {head}{'kind':<14}{'tokens':>7}  reason")
        for excluded in report.excluded:
            lines.append(
                f"  {excluded.score:>6.3f}  {_relevance(excluded.relevance, relevant)}"
                f"{ljust(preview(str(excluded.item.kind), 14), 14)}"
                f"{excluded.item.tokens:>7}  {terminal_safe(excluded.reason.describe())}"
            )
            lines.append(f"  {'':>6}  {preview(excluded.item.content, width + 22)}")
    else:
        lines.append("  (none)")
    for shortfall in report.count_requirement_shortfalls:
        lines.append(
            f"Shortfall: kind {terminal_safe(str(shortfall.kind))} required {shortfall.required_count}, "
            f"found {shortfall.satisfied_count}"
        )
    for note in report.notes:
        lines.append(f"Note: {terminal_safe(note)}")
    if all_scores_zero(report):
        lines += ["", ZERO_SCORES_HINT]
    return "\n".join(lines) + "\n"


def _relevance(value: float | None, shown: bool) -> str:
    """The relevance cell: empty when no entry has one, ``-`` for an unscored (pinned) item."""
    if not shown:
        return ""
    return f"{'-':>6}  " if value is None else f"{value:>6.3f}  "


ZERO_SCORES_HINT = (
    "Hint: every score is 0: no scorer gave these items a signal; "
    "give them priority, relevance hints or another scorer"
)


def all_scores_zero(report: SelectionReport) -> bool:
    """Whether every scored candidate scored 0 (pinned items and negative-token items are not scored)."""
    scores = [entry.score for entry in report.included if not entry.item.pinned]
    scores += [entry.score for entry in report.excluded if not isinstance(entry.reason, NegativeTokens)]
    return bool(scores) and all(score == 0 for score in scores)
