"""cupel select/explain on chat transcripts: --strategy, --repair and the per-turn view."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.test_cli import CONVERSATION, cupel


def roles(output: str) -> list[str]:
    return [message["role"] for message in json.loads(output)]


def test_select_strategy_option() -> None:
    turns = cupel("select", str(CONVERSATION), "--budget", "300")
    last = cupel("select", str(CONVERSATION), "--budget", "300", "--strategy", "last")
    messages = cupel("select", str(CONVERSATION), "--budget", "300", "--strategy", "messages")
    assert turns.returncode == last.returncode == messages.returncode == 0
    assert roles(turns.stdout)[:2] == ["system", "user"]
    assert roles(last.stdout)[:2] == ["system", "user"]
    assert len(roles(messages.stdout)) > len(roles(turns.stdout))  # message-level keeps more pieces


def test_strategy_from_a_policy_file(tmp_path: Path) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text('extends = "chat"\nchat = { strategy = "messages" }\n', encoding="utf-8")
    by_file = cupel("select", str(CONVERSATION), "--budget", "300", "--policy", str(policy))
    by_flag = cupel("select", str(CONVERSATION), "--budget", "300", "--strategy", "messages")
    assert by_file.stdout == by_flag.stdout


def test_repair_option(tmp_path: Path) -> None:
    crashed = json.loads(CONVERSATION.read_text(encoding="utf-8"))
    crashed.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "late", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
        }
    )
    path = tmp_path / "crashed.json"
    path.write_text(json.dumps(crashed), encoding="utf-8")
    failed = cupel("select", str(path), "--budget", "1000")
    assert failed.returncode != 0 and "has no result" in failed.stderr
    repaired = cupel("select", str(path), "--budget", "1000", "--repair")
    assert repaired.returncode == 0
    assert len(json.loads(repaired.stdout)) == len(crashed) - 1
    explained = cupel("explain", str(path), "--budget", "1000", "--repair")
    assert "UnansweredToolCall" in explained.stdout


def test_explain_shows_turns() -> None:
    result = cupel("explain", str(CONVERSATION), "--budget", "300")
    assert result.returncode == 0
    turns = result.stdout.split("Turns (transcript order)")[1].splitlines()
    assert turns[2].split()[:2] == ["1", "dropped"]
    assert turns[4].split()[:2] == ["3", "kept"]


def test_summary_tokens_option() -> None:
    result = cupel("select", str(CONVERSATION), "--budget", "300", "--summary-tokens", "60")
    assert result.returncode == 0
    messages = json.loads(result.stdout)
    assert messages[0]["role"] == "system" and messages[1]["role"] == "system"
    assert messages[1]["content"].startswith("Earlier conversation, summarised:")
    assert messages[2]["role"] == "user"
    bad = cupel("select", str(CONVERSATION), "--budget", "300", "--summary-tokens", "-1")
    assert bad.returncode == 2 and "--summary-tokens" in bad.stderr
