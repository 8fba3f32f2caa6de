"""The HTML explain report of a transcript: one row group per turn, in transcript order, with its units.

Pages are parsed with html.parser; the expected turns and statuses are computed here from the
transcript and the returned messages, not from the report's own grouping.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from cupel import ContextBudget
from cupel.chat import select_messages
from cupel.cli import main
from cupel.cli._html import render_html
from cupel.cli._html_turns import turn_tables
from tests.cli.test_cli import CONVERSATION
from tests.cli.test_html_report import _browser, needs_browser


@dataclass
class Group:
    turn: str
    state: str
    status: str
    head: list[str] = field(default_factory=list)
    units: list[tuple[str, list[str]]] = field(default_factory=list)  # (data-status, cell texts)


class TurnsPage(HTMLParser):
    """The ``#turns`` table's row groups; everything else on the page is ignored."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.groups: list[Group] = []
        self.tables: list[str] = []
        self.scripts = 0
        self._in_turns = False
        self._row: list[str] | None = None
        self._row_status: str | None = None
        self._cell: list[str] | None = None
        self._head = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "script":
            self.scripts += 1
        if tag == "table":
            self.tables.append(attributes.get("id") or "")
            self._in_turns = attributes.get("id") == "turns"
        elif self._in_turns and tag == "tbody":
            self.groups.append(
                Group(
                    str(attributes["data-turn"]),
                    str(attributes["data-state"]),
                    str(attributes["data-status"]),
                )
            )
        elif self._in_turns and tag == "tr" and self.groups:
            self._row = []
            self._head = "turn-head" in (attributes.get("class") or "")
            self._row_status = attributes.get("data-status")
        elif self._row is not None and tag == "td":
            self._cell = []
        elif self._cell is not None and tag == "br":
            self._cell.append("\n")

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._head:
                self.groups[-1].head = self._row
            else:
                self.groups[-1].units.append((str(self._row_status), self._row))
            self._row = None
        elif tag == "table":
            self._in_turns = False


def parse(page: str) -> TurnsPage:
    parser = TurnsPage()
    parser.feed(page)
    parser.close()
    return parser


def expected_turns(transcript: list[dict[str, Any]], kept: list[Any]) -> list[tuple[str, str, str]]:
    """(turn number, state, roles) per turn: a turn opens at each user message; systems stand apart."""
    turns: list[list[int]] = []
    number = 0
    for index, message in enumerate(transcript):
        if message["role"] in ("system", "developer"):
            continue
        if message["role"] == "user" or not turns:
            turns.append([])
            number += 1
        turns[-1].append(index)
    rows = []
    for number, indices in enumerate(turns, start=1):
        count = sum(1 for index in indices if any(transcript[index] is message for message in kept))
        state = "kept" if count == len(indices) else "dropped" if count == 0 else "partly"
        rows.append((str(number), state, " ".join(transcript[index]["role"] for index in indices)))
    return rows


TRANSCRIPT: list[dict[str, Any]] = json.loads(CONVERSATION.read_text(encoding="utf-8"))


@pytest.mark.parametrize("budget", [600, 300, 120])
@pytest.mark.parametrize("strategy", ["turns", "last", "messages"])
def test_one_group_per_turn_in_transcript_order_with_true_statuses(strategy: str, budget: int) -> None:
    selection = select_messages(TRANSCRIPT, budget, strategy=strategy)  # type: ignore[arg-type]
    report = selection.report
    page = parse(render_html(report, ContextBudget(budget, budget), "chat", turn_tables(report)))
    assert page.scripts == 0
    assert page.tables == ["turns"], "a transcript's report has no flat included/excluded tables"
    system, *turns = page.groups
    assert (system.turn, system.state) == ("system", "kept")  # pinned system messages come first
    assert [unit[1][3].split("\n")[0] for unit in system.units] == ["system"]
    truth = expected_turns(TRANSCRIPT, list(selection.messages))
    assert [(group.turn, group.state, group.head[3]) for group in turns] == truth
    for group in turns:
        assert group.head[0] == group.turn and group.head[1] == group.status == group.state
        unit_states = {status for status, _ in group.units}
        assert (
            unit_states
            == {"kept": {"kept"}, "dropped": {"dropped"}, "partly": {"kept", "dropped"}}[group.state]
        )
        # The turn's tokens are its units' tokens; each unit names its reason.
        assert int(group.head[2].replace(",", "")) == sum(
            int(row[2].replace(",", "")) for _, row in group.units
        )
    rows = [(status, row[3].split("\n")[1]) for group in page.groups for status, row in group.units]
    assert sorted(reason for status, reason in rows if status != "kept") == sorted(
        entry.reason.name for entry in report.excluded
    )
    assert sorted(reason for status, reason in rows if status == "kept") == sorted(
        entry.reason.value for entry in report.included
    )


def test_summary_is_marked_first_and_summarised_turns_say_so() -> None:
    selection = select_messages(TRANSCRIPT, 300, summarize=True, summary_tokens=60)
    report = selection.report
    page = parse(render_html(report, ContextBudget(300, 300), "chat", turn_tables(report)))
    system = page.groups[0]
    assert [status for status, _ in system.units] == ["summary", "kept"]
    assert system.units[0][1][4].startswith("Earlier conversation, summarised:")
    first = page.groups[1]
    assert first.state == "dropped" and first.status == "dropped · summarised"
    assert {status for status, _ in first.units} == {"summarised"}
    assert all("Summarized" in row[3] for _, row in first.units)


def test_repaired_units_are_marked_in_their_turn() -> None:
    crashed = [
        *TRANSCRIPT[:8],
        {"role": "tool", "tool_call_id": "nobody_called", "content": "stray <b>output</b>"},
        *TRANSCRIPT[8:],
    ]
    selection = select_messages(crashed, 1000, on_invalid="repair")
    page = parse(
        render_html(selection.report, ContextBudget(1000, 1000), "chat", turn_tables(selection.report))
    )
    [repaired] = [group for group in page.groups if "repaired" in group.status]
    assert repaired.turn == "1" and repaired.status == "partly · repaired"
    [(_, row)] = [unit for unit in repaired.units if unit[0] == "repaired"]
    assert "OrphanedToolResult" in row[3] and "stray <b>output</b>" in row[4]  # shown as text, escaped


def test_every_text_is_escaped() -> None:
    hostile = [
        {"role": "system", "content": "</table><script>alert(1)</script>"},
        {"role": "user", "content": '"><img src=x onerror=alert(2)>'},
        {"role": "assistant", "content": "</tbody></td><h1>injected</h1>"},
        {"role": "user", "content": "ok & <b>bold</b>"},
    ]
    selection = select_messages(hostile, 40)
    page = render_html(selection.report, ContextBudget(40, 40), "chat", turn_tables(selection.report))
    assert "<script" not in page.lower() and "<h1>injected" not in page and "<img" not in page
    parsed = parse(page)
    assert [group.turn for group in parsed.groups] == ["system", "1", "2"]
    texts = [row[4] for group in parsed.groups for _, row in group.units]
    assert any("</table><script>alert(1)</script>" in text for text in texts)
    assert any("<b>bold</b>" in text for text in texts)


def test_cli_explain_html_groups_transcripts_by_turn_and_keeps_flat_tables_for_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "chat.html"
    assert main(["explain", str(CONVERSATION), "--budget", "300", "--html", str(out)]) == 0
    page = parse(out.read_text(encoding="utf-8"))
    assert page.tables == ["turns"]
    assert [group.turn for group in page.groups] == ["system", "1", "2", "3"]
    items = tmp_path / "items.json"
    items.write_text(json.dumps([{"content": "a", "tokens": 5}, {"content": "b", "tokens": 500}]))
    flat = tmp_path / "items.html"
    assert main(["explain", str(items), "--budget", "100", "--html", str(flat)]) == 0
    assert parse(flat.read_text(encoding="utf-8")).tables == ["included", "excluded"]
    # Item input with nothing included is still item input (no turns, no error).
    capsys.readouterr()
    assert main(["explain", str(items), "--budget", "1", "--html", str(flat)]) == 0
    assert "Turns (transcript order)" not in capsys.readouterr().out
    assert parse(flat.read_text(encoding="utf-8")).tables == ["included", "excluded"]


@needs_browser
def test_turn_report_renders_in_a_real_browser(tmp_path: Path) -> None:
    selection = select_messages(TRANSCRIPT, 300, summarize=True, summary_tokens=60)
    path = tmp_path / "turns.html"
    path.write_text(
        render_html(selection.report, ContextBudget(300, 300), "chat", turn_tables(selection.report)),
        encoding="utf-8",
    )
    dom = _browser(tmp_path, "--dump-dom", path.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert len(re.findall(r'<tbody class="turn"', dom.stdout)) == 4  # system and three turns
    console = [line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Content Security" in line]
    assert console == [], console
