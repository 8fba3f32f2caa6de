"""The HTML explain report: escaping, self-containment, and a real headless-browser render."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from cupel import (
    ContextBudget,
    ContextItem,
    GreedySlice,
    Pipeline,
    ReflexiveScorer,
    UShapedPlacer,
)
from cupel.cli._html import render_html
from tests.cli._png import distinct_colours

HOSTILE = [
    "<script>alert(1)</script>",
    "</table><h1>injected</h1>",
    '"><img src=x onerror=alert(2)>',
    "</style><style>body{display:none}</style>",
    "ok & <b>bold</b>",
]


def hostile_report() -> tuple[object, ContextBudget]:
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    items = [
        ContextItem(
            text, 40 + 10 * n, kind=kind, future_relevance_hint=hint, timestamp=t0 + timedelta(minutes=n)
        )
        for n, (text, kind, hint) in enumerate(
            zip(
                HOSTILE * 2,
                ["Message", "Document", "<ToolOutput>", "Memory", "Message"] * 2,
                [0.9, 0.1, 0.8, 0.2, 0.7, 0.3, 0.6, 0.4, 0.5, 0.05],
                strict=True,
            )
        )
    ]
    items.append(ContextItem("system <rules>", 30, kind="SystemPrompt", pinned=True))
    budget = ContextBudget(800, 400)
    report = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer(), deduplication=False).dry_run(
        items, budget
    )
    return report, budget


def test_everything_is_escaped_and_nothing_executable() -> None:
    report, budget = hostile_report()
    page = render_html(report, budget, "rag<x>")  # type: ignore[arg-type]
    assert "<script" not in page.lower()
    assert "onerror=" not in page.replace("onerror=alert(2)&gt;", "")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "&lt;/table&gt;&lt;h1&gt;injected&lt;/h1&gt;" in page
    assert "&lt;ToolOutput&gt;" in page
    assert "policy rag&lt;x&gt;" in page
    assert page.count("<table") == page.count("</table>") == 2
    assert "default-src 'none'" in page
    assert not re.search(r"(src|href)=['\"]?https?:", page)


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = _chromium()
needs_browser = pytest.mark.skipif(
    CHROMIUM is None, reason="headless browser test needs Debian's chromium (installed by .ci/run)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--enable-logging=stderr",
    "--v=0",
]


def _browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    profile.mkdir(exist_ok=True)
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@needs_browser
def test_report_renders_in_a_real_browser(tmp_path: Path) -> None:
    report, budget = hostile_report()
    page = tmp_path / "report.html"
    page.write_text(render_html(report, budget, "rag"), encoding="utf-8")  # type: ignore[arg-type]
    url = page.as_uri()

    dom = _browser(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count("<table") == 2, "both tables render"
    assert len(re.findall(r"<tr>", html)) >= len(report.included) + len(report.excluded)  # type: ignore[attr-defined]
    assert re.search(r'<svg[^>]*id="score-plot"', html)
    assert html.count("<circle") == len(report.included)  # type: ignore[attr-defined]
    assert "<script" not in html.lower()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "injected" in html and "<h1>injected" not in html
    console = [
        line for line in dom.stderr.splitlines() if "CONSOLE" in line or "Content Security Policy" in line
    ]
    assert console == [], console

    shot = tmp_path / "report.png"
    result = _browser(tmp_path, f"--screenshot={shot}", "--window-size=1280,1600", "--hide-scrollbars", url)
    assert result.returncode == 0, result.stderr[-2000:]
    assert shot.exists() and shot.stat().st_size > 10_000
    assert distinct_colours(shot) > 20, "the screenshot is not a blank page"
    keep = os.environ.get("CUPEL_KEEP_SCREENSHOT")
    if keep:
        shutil.copy(shot, keep)


def test_cli_html_option_writes_the_report(tmp_path: Path) -> None:
    items = tmp_path / "items.json"
    items.write_text('[{"content": "<script>alert(1)</script>", "tokens": 5}, {"content": "b", "tokens": 3}]')
    out = tmp_path / "out.html"
    result = subprocess.run(
        [sys.executable, "-m", "cupel", "explain", str(items), "--budget", "100", "--html", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "<script>" not in text


def test_long_content_is_folded_but_complete() -> None:
    long_text = "<b>" + "x" * 1000 + "</b>"
    item = ContextItem(long_text, 900)
    big = Pipeline(ReflexiveScorer(), GreedySlice(), UShapedPlacer()).dry_run(
        [item], ContextBudget(1000, 100)
    )
    page = render_html(big, ContextBudget(1000, 100), "rag")
    assert "<details><summary>show all 1,007 characters</summary>" in page
    assert page.count("&lt;b&gt;") == 2 and "<b>" not in page


def test_reason_column_names_the_variant_once_then_its_data() -> None:
    report, budget = hostile_report()
    page = render_html(report, budget, "rag")  # type: ignore[arg-type]
    cells = re.findall(r'<span class="reason">(\w+)</span>(?:<br>([^<]*))?', page)
    excluded = [(variant, details) for variant, details in cells if variant not in ("Scored", "Pinned")]
    assert excluded, "the hostile report excludes items"
    for variant, details in excluded:
        assert variant not in details
    assert any(variant == "BudgetExceeded" for variant, _ in excluded)
    assert re.search(r"\d+ tokens requested, \d+ available", page)


def test_score_plot_labels_positions_on_the_x_axis() -> None:
    report, budget = hostile_report()
    page = render_html(report, budget, "rag")  # type: ignore[arg-type]
    ticks = [int(label) for label in re.findall(r'<text class="xtick"[^>]*>(\d+)</text>', page)]
    assert ticks == list(range(1, len(report.included) + 1))  # type: ignore[attr-defined]
    from cupel.cli._html import _position_ticks

    assert _position_ticks(0) == []
    assert _position_ticks(30) == [1, 5, 10, 15, 20, 25, 30]
    assert _position_ticks(99) == [1, *range(10, 91, 10), 99]
    assert all(len(_position_ticks(count)) <= 13 for count in range(1, 3000, 37))
