"""Habits of new users, met where they meet them: the command line in a subprocess, the docs they read,
the extras they install."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "examples" / "agent-session.json"
CONVERSATION = ROOT / "examples" / "agent-conversation.json"
POLICY_COMMANDS = ["select", "explain", "sensitivity", "eval", "replay"]


def cupel(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cupel", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
        timeout=120,
    )


def one_case(folder: Path) -> str:
    case = {"id": "c1", "items": [{"id": "x", "content": "the answer is 42"}], "gold": ["x"]}
    (folder / "cases.jsonl").write_text(json.dumps(case) + "\n", encoding="utf-8")
    return "cases.jsonl"


# A bare preset name is the preset; a path names a file.


def test_a_folder_named_like_a_preset_does_not_hijack_the_default_policy(tmp_path: Path) -> None:
    (tmp_path / "chat").mkdir()
    shutil.copy(SESSION, tmp_path / "session.json")
    shutil.copy(CONVERSATION, tmp_path / "conversation.json")
    in_project = cupel("select", "session.json", "--budget", "600", cwd=tmp_path)
    assert in_project.returncode == 0, in_project.stderr
    assert in_project.stdout == cupel("select", str(SESSION), "--budget", "600").stdout
    transcript = cupel("select", "conversation.json", "--budget", "300", cwd=tmp_path)
    assert transcript.returncode == 0, transcript.stderr
    evaluated = cupel(
        "eval", one_case(tmp_path), "--policy", "chat", "--budget", "200", "--resamples", "0", cwd=tmp_path
    )
    assert evaluated.returncode == 0, evaluated.stderr


def test_a_file_named_like_a_preset_is_read_only_as_a_path(tmp_path: Path) -> None:
    (tmp_path / "rag").write_text("", encoding="utf-8")
    shutil.copy(SESSION, tmp_path / "session.json")
    preset = cupel("select", "session.json", "--budget", "600", "--policy", "rag", cwd=tmp_path)
    assert preset.returncode == 0, preset.stderr
    assert preset.stdout == cupel("select", str(SESSION), "--budget", "600", "--policy", "rag").stdout
    as_file = cupel("select", "session.json", "--budget", "600", "--policy", "./rag", cwd=tmp_path)
    assert as_file.returncode == 2
    assert as_file.stderr.startswith("cupel select: --policy: ") and "scorers" in as_file.stderr


def test_a_bare_name_that_is_no_preset_says_how_to_name_the_file(tmp_path: Path) -> None:
    (tmp_path / "mine").write_text('extends = "chat"\n', encoding="utf-8")
    shutil.copy(SESSION, tmp_path / "session.json")
    result = cupel("select", "session.json", "--budget", "600", "--policy", "mine", cwd=tmp_path)
    assert result.returncode == 2
    assert "unknown policy 'mine'" in result.stderr and "./mine" in result.stderr
    assert (
        cupel("select", "session.json", "--budget", "600", "--policy", "./mine", cwd=tmp_path).returncode == 0
    )


@pytest.mark.parametrize("command", POLICY_COMMANDS)
def test_every_policy_option_says_what_names_a_file(command: str) -> None:
    shown = " ".join(cupel(command, "--help").stdout.split())
    assert "a path with a directory separator or a .toml/.json suffix" in shown
    assert "./NAME" in shown


def test_the_docs_state_the_policy_name_rule() -> None:
    cli = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "bare name is always a preset" in cli and "`./rag`" in cli


# cupel sensitivity compares what cupel select keeps.


def selected(policy: str, *extra: str) -> list[object]:
    result = cupel("select", str(CONVERSATION), "--budget", "200", "--policy", policy, *extra)
    assert result.returncode == 0, result.stderr
    kept: list[object] = json.loads(result.stdout)
    return kept


def swings(*extra: str) -> dict[str, object]:
    result = cupel(
        "sensitivity",
        str(CONVERSATION),
        "--budget",
        "200",
        "--policy",
        "chat",
        "--policy",
        "rag",
        "--format",
        "json",
        *extra,
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout)
    return report


def test_sensitivity_of_a_transcript_agrees_with_select() -> None:
    # Under the presets' strategy (turns) select keeps the same messages: no swing.
    assert selected("chat") == selected("rag")
    assert swings()["diffs"] == []
    # Scored message by message, select keeps different messages, and sensitivity says so.
    assert selected("chat", "--strategy", "messages") != selected("rag", "--strategy", "messages")
    assert swings("--strategy", "messages")["diffs"] != []


def test_sensitivity_format_has_help_text() -> None:
    shown = " ".join(cupel("sensitivity", "--help").stdout.split())
    described = re.search(r"--format \{text,json\} (.*?) --width", shown)
    assert described is not None and "swing" in described.group(1), shown


# Eval prints what it means.


def test_eval_help_prints_a_single_percent_sign() -> None:
    shown = cupel("eval", "--help").stdout
    assert "95%%" not in shown and "95%" in shown


def test_eval_counts_one_case_in_the_singular(tmp_path: Path) -> None:
    result = cupel(
        "eval", one_case(tmp_path), "--policy", "chat", "--budget", "200", "--resamples", "0", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "· 1 case ·" in result.stdout.splitlines()[0]
    assert "1 cases" not in result.stdout


def test_select_explain_and_sensitivity_count_one_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cupel.cli import main

    path = tmp_path / "one.json"
    path.write_text(json.dumps([{"content": "a", "tokens": 1}]), encoding="utf-8")
    assert main(["select", str(path), "--budget", "1", "--format", "text"]) == 0
    assert "· 1 token\n" in capsys.readouterr().out
    assert main(["explain", str(path), "--budget", "1"]) == 0
    assert capsys.readouterr().out.startswith("1 of 1 candidate included · ")
    html = tmp_path / "report.html"
    assert main(["explain", str(path), "--budget", "1", "--html", str(html)]) == 0
    assert "1 of 1 candidate included · 1 token considered" in html.read_text(encoding="utf-8")
    assert main(["sensitivity", str(path), "--budget", "1", "--policy", "chat", "--policy", "rag"]) == 0
    shown = capsys.readouterr().out
    assert "  chat: 1 included, 1 token\n" in shown and "between 2 policies" in shown
    for output in (shown, html.read_text(encoding="utf-8")):
        assert not re.search(r"\b1 (candidates|tokens|policies)\b", output)
    results = tmp_path / "one.jsonl"
    results.write_text((ROOT / "examples" / "rag-results.jsonl").read_text().splitlines()[0] + "\n")
    reserves = ["--reserved-system", "0", "--reserved-query", "0", "--reserved-response", "0"]
    assert main(["assemble", str(results), "--budget", "1", *reserves, "--summary"]) == 0
    assert capsys.readouterr().err == "cupel assemble: 0 of 1 chunk from 0 documents, 0 of 1 token\n"


# cupel select counts the tokens of items that do not carry them.


def test_select_counts_items_without_tokens(tmp_path: Path) -> None:
    items = [{"content": "x" * 40, "kind": "Message"}, {"content": "short", "tokens": 2}]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    for tokenizer in ("heuristic", "bytes/4"):
        result = cupel("select", str(path), "--budget", "100", "--tokenizer", tokenizer)
        assert result.returncode == 0, result.stderr
        by_content = {item["content"]: item["tokens"] for item in json.loads(result.stdout)}
        assert by_content == {"x" * 40: 10, "short": 2}
    assert json.loads(path.read_text(encoding="utf-8")) == items  # the input is left as it was
    batch = tmp_path / "sets.jsonl"
    batch.write_text(json.dumps({"items": items, "budget": {"maxTokens": 100}}) + "\n", encoding="utf-8")
    result = cupel("select", "--batch", str(batch), "--tokenizer", "heuristic")
    assert result.returncode == 0, result.stderr
    assert {item["tokens"] for item in json.loads(result.stdout)["items"]} == {10, 2}


def test_explain_and_sensitivity_count_items_without_tokens_as_select_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from cupel.cli import main

    items = [{"content": "x" * 40, "kind": "Message"}, {"content": "short", "tokens": 2}]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    counts = []
    for tokenizer in ("heuristic", "cl100k_base"):
        assert main(["select", str(path), "--budget", "100", "--tokenizer", tokenizer]) == 0
        selected = {item["content"]: item["tokens"] for item in json.loads(capsys.readouterr().out)}
        counted = selected["x" * 40]
        counts.append(counted)
        assert selected["short"] == 2
        assert main(["explain", str(path), "--budget", "100", "--tokenizer", tokenizer]) == 0
        explained = capsys.readouterr().out
        assert explained.startswith("2 of 2 candidates included")
        assert f"{counted + 2} used / 100 target" in explained
        arguments = ["sensitivity", str(path), "--budget", f"{counted}", "--tokenizer", tokenizer]
        assert main([*arguments, "--policy", "chat", "--policy", "rag", "--format", "json"]) == 0
        variants = json.loads(capsys.readouterr().out)["variants"]
        assert [len(variant["included"]) for variant in variants] == [1, 1]
    assert counts[0] == 10 and counts[1] != 10  # the counter chosen is the one that counted
    assert main(["explain", str(path), "--budget", "100", "--tokenizer", "nonesuch"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert json.loads(path.read_text(encoding="utf-8")) == items  # the input is left as it was


# The docs and extras a new user reads.


def test_the_command_table_lists_every_command() -> None:
    from cupel.cli import SUBCOMMANDS

    table = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split("## Inputs")[0]
    listed = set(re.findall(r"^\| `cupel (\w+)", table, re.MULTILINE))
    assert listed == set(SUBCOMMANDS)


def test_the_policy_key_table_lists_every_key() -> None:
    from cupel.policy.files import _TOP_KEYS

    page = (ROOT / "docs" / "policies.md").read_text(encoding="utf-8")
    table = page.split("### Top-level keys")[1].split("Any other key")[0]
    listed = set(re.findall(r"^\| `([$\w]+)`", table, re.MULTILINE))
    assert listed == set(_TOP_KEYS)


def test_the_quick_start_names_the_python_version_and_a_virtual_environment() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start")[1].split("\n## ")[0]
    required = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "requires-python"
    ]
    assert required == ">=3.11" and "Python 3.11 or newer" in quick
    # Two commands, each making and using the virtual environment: the main job, then the test suite.
    blocks = re.findall(r"```console\n(.*?)```", quick, re.DOTALL)
    commands = [line[2:] for block in blocks for line in block.splitlines() if line.startswith("$ ")]
    venv = "python3 -m venv .venv && . .venv/bin/activate && "
    assert len(commands) == 2
    assert commands[0].startswith(venv + "pip install . && cupel select ")
    assert commands[1] == venv + "pip install -e '.[test]' && python -m pytest"


def test_the_document_compressor_extra_installs_what_its_example_imports() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    page = (ROOT / "docs" / "integrations.md").read_text(encoding="utf-8")
    assert "from langchain_classic.retrievers import ContextualCompressionRetriever" in page
    for extra in ("langchain", "all"):
        names = {re.split(r"[<>=;\[ ]", requirement)[0] for requirement in extras[extra]}
        assert {"langchain-core", "langchain-classic"} <= names, extra
