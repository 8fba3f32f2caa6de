"""``cupel eval`` run for real: the shipped cases, every output format, and one-line errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cupel.cli import main
from tests.cli.test_cli import cupel

FIXTURES = Path(__file__).parent / "fixtures"


class _Result:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> object:
    """The CLI in-process (the subprocess test above covers the console script)."""
    monkeypatch.chdir(Path(__file__).resolve().parents[2])

    def invoke(*args: str) -> _Result:
        code = main(list(args))
        captured = capsys.readouterr()
        return _Result(code, captured.out, captured.err)

    return invoke


def test_shipped_cases_text_report() -> None:
    result = cupel("eval", "--policy", "chat", "--policy", "rag", "--budget", "300", "--resamples", "50")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("cupel eval · 45 cases (chat 12, agent 12, rag 11, code-review 10)")
    assert any(line.startswith("recent (baseline)") for line in lines)
    assert any(line.startswith("oracle (bound)     1.00 [1.00, 1.00]   100%") for line in lines)


def test_json_report_has_summaries_and_runs(tmp_path: Path, run: Any) -> None:
    output = tmp_path / "report.json"
    result = run(
        "eval",
        str(FIXTURES / "locomo.json"),
        "--policy",
        "chat",
        "--budget",
        "40",
        "--budget",
        "400",
        "--format",
        "json",
        "--output",
        str(output),
        "--no-timings",
        "--resamples",
        "20",
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(output.read_text(encoding="utf-8"))
    assert report["cases"] == 3 and report["budgets"] == [40, 400]
    assert set(report["summary"]) == {"chat", "recent", "bm25", "random", "oracle"}
    assert report["summary"]["oracle"]["400"]["recall_items"]["mean"] == 1.0
    assert len(report["runs"]) == 3 * 5 * 2
    assert "time_ms" not in report["runs"][0]


def test_html_report_draws_a_curve_per_selector(tmp_path: Path, run: Any) -> None:
    output = tmp_path / "report.html"
    result = run(
        "eval",
        "--policy",
        "chat",
        "--policy",
        "tool_use",
        "--budget",
        "200",
        "--budget",
        "800",
        "--tag",
        "agent",
        "--format",
        "html",
        "-o",
        str(output),
        "--resamples",
        "20",
    )
    assert result.returncode == 0, result.stderr
    html = output.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Content-Security-Policy" in html
    for selector in ("chat", "tool_use", "recent", "bm25", "random", "oracle"):
        assert f'class="curve" data-selector="{selector}"' in html
    assert "<script" not in html


def test_generated_cases_markdown_and_workers(run: Any) -> None:
    args = ["eval", "--generate", "6", "--policy", "chat", "--budget", "1000", "--format", "markdown"]
    serial = run(*args)
    parallel = run(*args, "--jobs", "2")
    assert serial.returncode == 0, serial.stderr
    assert serial.stdout == parallel.stdout
    assert serial.stdout.splitlines()[0] == "| policy | 1,000 tokens |"


def test_schema_is_printed(run: Any) -> None:
    result = run("eval", "--schema")
    assert result.returncode == 0
    assert json.loads(result.stdout)["title"] == "cupel evaluation case"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.jsonl"], "cupel eval: missing.jsonl: no such file"),
        (["--policy", "nope"], "cupel eval: --policy: unknown policy 'nope'; known presets:"),
        (["--budget", "ten"], "cupel eval: --budget: expected MAX or MAX:TARGET as whole numbers, got 'ten'"),
        (["--jobs", "0"], "cupel eval: --jobs must be at least 1, got 0"),
        (["--tag", "nothing"], "cupel eval: --tag: no case has the tag(s) nothing"),
        (
            ["--budget", "100", "--budget", "100"],
            "cupel eval: --budget: each budget needs a different maximum",
        ),
    ],
)
def test_usage_errors_are_one_line_exit_2(args: list[str], message: str, run: Any) -> None:
    result = run("eval", *args)
    assert result.returncode == 2
    assert result.stderr.startswith(message)
    assert len(result.stderr.strip().splitlines()) == 1


def test_bad_case_file_names_line_and_field(tmp_path: Path, run: Any) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(
        '{"id": "x", "messages": [{"role": "user", "content": "hi"}], "gold": [3]}\n', encoding="utf-8"
    )
    result = run("eval", str(cases))
    assert result.returncode == 2
    assert result.stderr.strip() == f"cupel eval: {cases}: line 1 (x): gold[0]: no message index 3"
