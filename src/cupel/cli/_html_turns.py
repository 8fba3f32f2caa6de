"""The HTML report of a transcript's selection, turn by turn: one row group per turn, then its units.

The grouping is :func:`cupel.cli._chat.group_turns`, the one ``cupel explain`` prints; every piece of
text (roles, content, reasons) is escaped, as in the rest of the report.
"""

from __future__ import annotations

from html import escape

from cupel.cli._chat import TurnGroup, group_turns
from cupel.cli._html import _content, _reason_cell
from cupel.diagnostics.report import ExcludedItem, IncludedItem, SelectionReport

__all__ = ["turn_tables"]

_Entry = IncludedItem | ExcludedItem

# (header, width in px or None for the rest, numeric)
_COLUMNS: list[tuple[str, int | None, bool]] = [
    ("turn", 52, True),
    ("status", 150, False),
    ("tokens", 76, True),
    ("roles · reason", 280, False),
    ("content", None, False),
]


def _is_summary(entry: _Entry) -> bool:
    from cupel.chat.read import INDICES_KEY

    # A summary is not one of the transcript's messages: it has no position in it.
    return bool(entry.item.metadata[INDICES_KEY][0] < 0)


def _unit_status(entry: _Entry) -> str:
    if isinstance(entry, IncludedItem):
        return "summary" if _is_summary(entry) else "kept"
    name = entry.reason.name
    if name == "Summarized":
        return "summarised"
    if name in ("OrphanedToolResult", "UnansweredToolCall"):
        return "repaired"
    return "dropped"


def _reason(entry: _Entry) -> str:
    if isinstance(entry, IncludedItem):
        return f'<span class="reason">{escape(entry.reason.value)}</span>'
    return _reason_cell(entry.reason.name, entry.reason.details())


def _unit_row(entry: _Entry) -> str:
    from cupel.chat.choose_units import unit_roles

    status = _unit_status(entry)
    kept = "kept" if isinstance(entry, IncludedItem) else "dropped"
    roles = escape(" ".join(unit_roles(entry.item)))
    return (
        f'<tr class="unit {kept}{" summary" if status == "summary" else ""}" data-status="{status}">'
        f'<td class="num"></td><td>{status}</td><td class="num">{entry.item.tokens:,}</td>'
        f"<td>{roles}<br>{_reason(entry)}</td>"
        f'<td class="content">{_content(entry.item.content)}</td></tr>'
    )


def _turn_status(turn: TurnGroup) -> str:
    marks = [turn.state]
    if turn.summarized:
        marks.append("summarised")
    if turn.repaired:
        marks.append("repaired")
    return " · ".join(marks)


def _group(label: str, number: str, turn: TurnGroup, status: str) -> str:
    head = (
        f'<tr class="turn-head"><td class="num">{label}</td>'
        f'<td><span class="status-{turn.state}">{escape(status)}</span></td>'
        f'<td class="num">{turn.tokens:,}</td><td colspan="2">{escape(" ".join(turn.roles))}</td></tr>'
    )
    rows = "".join(_unit_row(entry) for entry in turn.entries)
    return (
        f'<tbody class="turn" data-turn="{number}" data-state="{turn.state}" data-status="{escape(status)}">'
        f"{head}{rows}</tbody>"
    )


def turn_tables(report: SelectionReport) -> str:
    """The report's units grouped by turn: system messages (a summary first) then each turn in order."""
    from cupel.chat.choose_units import unit_roles

    system, turns = group_turns(report)
    groups = []
    if system:
        roles = tuple(role for entry in system for role in unit_roles(entry.item))
        pinned = TurnGroup(-1, system, roles, sum(entry.item.tokens for entry in system))
        groups.append(_group("sys", "system", pinned, pinned.state))
    for turn in turns:
        groups.append(_group(str(turn.number), str(turn.number), turn, _turn_status(turn)))
    widths = "".join(
        f'<col style="width:{width}px">' if width is not None else "<col>" for _, width, _ in _COLUMNS
    )
    head = "".join(
        f'<th class="num">{header}</th>' if numeric else f"<th>{header}</th>"
        for header, _, numeric in _COLUMNS
    )
    kept_turns = sum(1 for turn in turns if turn.state == "kept")
    return (
        f"<h2>Turns ({len(turns)}, transcript order; {kept_turns} kept whole)</h2>"
        f'<table id="turns"><colgroup>{widths}</colgroup><thead><tr>{head}</tr></thead>'
        f"{''.join(groups)}</table>"
    )
