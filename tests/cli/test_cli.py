"""The console script, run for real in a subprocess against the examples and against bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ..terminal import run_with_terminal_stderr

ROOT = Path(__file__).resolve().parents[2]
SESSION = ROOT / "examples" / "agent-session.json"
CONVERSATION = ROOT / "examples" / "agent-conversation.json"
POLICY = ROOT / "examples" / "agent-policy.toml"


def cupel(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    script = shutil.which("cupel", path=str(Path(sys.executable).parent))
    command = [script] if script else [sys.executable, "-m", "cupel"]
    return subprocess.run(
        [*command, *args], input=stdin, capture_output=True, text=True, cwd=ROOT, check=False, timeout=120
    )


def test_console_script_and_module_agree() -> None:
    via_module = subprocess.run(
        [sys.executable, "-m", "cupel", "--version"], capture_output=True, text=True, check=False
    )
    assert via_module.returncode == 0
    assert via_module.stdout.startswith("cupel ")
    assert cupel("--version").stdout == via_module.stdout


def test_select_json_items_in_placed_order() -> None:
    result = cupel("select", str(SESSION), "--budget", "1000:600")
    assert result.returncode == 0, result.stderr
    selected = json.loads(result.stdout)
    assert sum(item["tokens"] for item in selected) <= 600
    assert all(item["content"] for item in selected)
    stamps = [item["timestamp"] for item in selected if "timestamp" in item]
    assert stamps == sorted(stamps)  # chronological placement
    assert any(item.get("pinned") for item in selected)


def test_select_formats_agree() -> None:
    as_json = json.loads(cupel("select", str(SESSION), "--budget", "800").stdout)
    as_jsonl = [
        json.loads(line)
        for line in cupel("select", str(SESSION), "--budget", "800", "--format", "jsonl").stdout.splitlines()
    ]
    as_text = cupel("select", str(SESSION), "--budget", "800", "--format", "text").stdout
    assert as_json == as_jsonl
    assert as_text.count("--- [") == len(as_json)


def test_select_reads_stdin_and_jsonl() -> None:
    lines = "\n".join(json.dumps({"content": f"note {n}", "tokens": 10, "priority": n}) for n in range(5))
    result = cupel("select", "-", "--budget", "30", "--policy", "debugging", "--format", "jsonl", stdin=lines)
    assert result.returncode == 0, result.stderr
    # Undated items keep the order they reach the placer in: the slicer's, highest density first.
    assert [json.loads(line)["content"] for line in result.stdout.splitlines()] == [
        "note 4",
        "note 3",
        "note 2",
    ]


def test_select_accepts_both_hint_spellings() -> None:
    items = [
        {"content": "camel", "tokens": 10, "futureRelevanceHint": 0.9},
        {"content": "snake", "tokens": 10, "future_relevance_hint": 0.8},
        {"content": "none", "tokens": 10},
    ]
    result = cupel("select", "-", "--budget", "20", "--policy", "rag", stdin=json.dumps(items))
    assert result.returncode == 0, result.stderr
    assert sorted(item["content"] for item in json.loads(result.stdout)) == ["camel", "snake"]


def test_select_chat_transcript_keeps_tool_calls_with_results() -> None:
    original = json.loads(CONVERSATION.read_text())
    result = cupel("select", str(CONVERSATION), "--budget", "260")
    assert result.returncode == 0, result.stderr
    trimmed = json.loads(result.stdout)
    assert len(trimmed) < len(original)
    assert trimmed[0] == original[0]  # the system prompt is pinned and first
    assert trimmed[-1] == original[-1]  # the last user turn is kept
    assert all(message in original for message in trimmed)  # original dicts, unchanged
    positions = [original.index(message) for message in trimmed]
    assert positions == sorted(positions)
    answered = {m["tool_call_id"] for m in trimmed if m["role"] == "tool"}
    called = {c["id"] for m in trimmed for c in m.get("tool_calls") or ()}
    assert answered == called


def test_select_policy_file() -> None:
    result = cupel("select", str(SESSION), "--budget", "1000:600", "--policy", str(POLICY))
    assert result.returncode == 0, result.stderr
    kinds = [item["kind"] for item in json.loads(result.stdout)]
    assert 2 <= kinds.count("Memory") <= 3 and kinds.count("ToolOutput") <= 4


def test_explain_text() -> None:
    result = cupel("explain", str(SESSION), "--budget", "1000:600")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("9 of 25 candidates included · policy chat")
    assert "Budget [" in out and "600 target / 1,000 max" in out
    assert "Included (placed order)" in out and "Excluded (highest score first)" in out
    assert "BudgetExceeded: 45 tokens requested, 4 available" in out
    assert "Deduplicated: duplicate of 'Stripe docs: Webhook signatures include…', which scored" in out
    # The pinned 74 tokens leave 526 of the 600 target: every exclusion would happen without them too.
    assert "PinnedOverride" not in out
    assert "Hint:" not in out


def test_explain_chat_transcript() -> None:
    result = cupel("explain", str(CONVERSATION), "--budget", "260", "--tokenizer", "heuristic")
    assert result.returncode == 0, result.stderr
    assert "Pinned" in result.stdout


def test_sensitivity() -> None:
    result = cupel("sensitivity", str(SESSION), "--budget", "600", "--policy", "chat", "--policy", "rag")
    assert result.returncode == 0, result.stderr
    assert "items swing between 2 policies" in result.stdout
    data = json.loads(
        cupel(
            "sensitivity",
            str(SESSION),
            "--budget",
            "600",
            "--policy",
            "chat",
            "--policy",
            "rag",
            "--format",
            "json",
        ).stdout
    )
    assert [variant["label"] for variant in data["variants"]] == ["chat", "rag"]
    assert data["diffs"] and all(set(diff["statuses"]) == {"chat", "rag"} for diff in data["diffs"])


def test_policies_list_and_show() -> None:
    listed = cupel("policies")
    assert listed.returncode == 0
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert names == ["chat", "code_review", "rag", "document_qa", "tool_use", "long_running", "debugging"]
    shown = cupel("policies", "show", "rag")
    assert shown.returncode == 0
    assert '{ type = "reflexive", weight = 2.0 }' in shown.stdout and 'placer = "u_shaped"' in shown.stdout
    as_json = json.loads(cupel("policies", "show", "document_qa", "--format", "json").stdout)
    assert as_json["slicer"] == {"type": "score"}


def test_batch_mode_keeps_input_order(tmp_path: Path) -> None:
    lines = []
    for n in range(12):
        items = [{"content": f"set {n} item {k}", "tokens": 10 + k, "priority": k} for k in range(6)]
        lines.append(json.dumps({"items": items, "budget": {"maxTokens": 40 + n}}))
    lines.insert(5, json.dumps({"items": [{"tokens": 3}], "budget": {"maxTokens": 10}}))
    batch = tmp_path / "sets.jsonl"
    batch.write_text("\n".join(lines) + "\n")
    serial = cupel("select", "--batch", str(batch), "--policy", "debugging")
    parallel = cupel("select", "--batch", str(batch), "--policy", "debugging", "--jobs", "2")
    assert serial.stdout == parallel.stdout
    outputs = [json.loads(line) for line in serial.stdout.splitlines()]
    assert len(outputs) == 13
    assert outputs[5] == {"error": "line 6: items: item 0: missing required field 'content'", "line": 6}
    assert [o["items"][0]["content"].split()[1] for k, o in enumerate(outputs) if k != 5] == [
        str(n) for n in range(12)
    ]
    assert serial.returncode == 1  # one line failed
    assert serial.stderr == ""  # no progress bar when not on a terminal


def test_batch_with_default_budget_and_messages(tmp_path: Path) -> None:
    transcript = json.loads(CONVERSATION.read_text())
    batch = tmp_path / "chats.jsonl"
    batch.write_text(
        json.dumps({"messages": transcript}) + "\n" + json.dumps({"messages": transcript[:2]}) + "\n"
    )
    result = cupel("select", "--batch", str(batch), "--budget", "200")
    assert result.returncode == 0, result.stdout
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["messages"][0]["role"] == "system" and len(second["messages"]) == 2


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["select", "missing.json", "--budget", "10"], None, "cupel select: missing.json: no such file"),
        (["select", "examples", "--budget", "10"], None, "cupel select: examples: is a directory"),
        (
            ["select", "-", "--budget", "10"],
            '[{"content": "a", "tokens": 1},\n {"content": }]',
            "invalid JSON at line 2, column 14",
        ),
        (
            ["select", "-", "--budget", "10"],
            '{"content": "a", "tokens": 1}\n{"content": "b", "tokens": }\n',
            "invalid JSON at line 2, column 28",
        ),
        (
            ["select", "-", "--budget", "10"],
            '[{"content": "a", "tokens": 1}, {"tokens": 2}]',
            "item 1: missing required field 'content'",
        ),
        (
            ["select", "-", "--budget", "10"],
            '[{"content": "a", "tokens": "many"}]',
            "item 0: tokens must be an int, got 'many'",
        ),
        (
            ["select", "-", "--budget", "10"],
            '[{"content": "a", "tokens": 1, "timestamp": "2026-01-01T00:00:00"}]',
            "item 0.timestamp: timestamp must carry a UTC offset",
        ),
        (
            ["select", "-", "--budget", "10"],
            '{"content": "a"}',
            "expected a JSON array of items, got a JSON object",
        ),
        (["select", "-", "--budget", "10"], "", "empty input"),
        (
            ["select", str(SESSION), "--budget", "lots"],
            None,
            "--budget: expected MAX or MAX:TARGET as whole numbers, got 'lots'",
        ),
        (
            ["select", str(SESSION), "--budget", "100:200"],
            None,
            "--budget: target_tokens must be <= max_tokens (100), got 200",
        ),
        (
            ["select", str(SESSION), "--budget", "100", "--reserve", "101"],
            None,
            "--reserve: output_reserve must be <= max_tokens (100), got 101",
        ),
        (
            ["select", str(SESSION), "--budget", "100", "--policy", "fastest"],
            None,
            "unknown policy 'fastest'; known presets: chat, code_review, rag, document_qa, tool_use, "
            "long_running, debugging",
        ),
        (
            ["select", str(SESSION), "--budget", "100", "--policy", "nope.toml"],
            None,
            "--policy: nope.toml: no such file",
        ),
        (["select", str(SESSION)], None, "--budget is required"),
        (
            ["select", str(CONVERSATION), "--budget", "100", "--tokenizer", "bpe"],
            None,
            "unknown tokenizer 'bpe'",
        ),
        (
            ["sensitivity", str(SESSION), "--budget", "100", "--policy", "chat"],
            None,
            "give at least two --policy options",
        ),
        (["policies", "show", "fastest"], None, "unknown policy 'fastest'"),
    ],
)
def test_input_errors_are_one_line_and_exit_2(args: list[str], stdin: str | None, message: str) -> None:
    result = cupel(*args, stdin=stdin)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_bad_policy_file_names_the_path(tmp_path: Path) -> None:
    policy = tmp_path / "bad.toml"
    policy.write_text(
        'scorers = [{type = "recency", weight = 3}, {type = "kind", weight = -1}]\n'
        'slicer = "greedy"\nplacer = "chronological"\n'
    )
    result = cupel("select", str(SESSION), "--budget", "100", "--policy", str(policy))
    assert result.returncode == 2
    assert "scorers[1].weight: must be > 0, got -1" in result.stderr


def test_pipeline_errors_exit_1_with_the_spec_message() -> None:
    pinned = json.dumps([{"content": "rules", "tokens": 90, "pinned": True}])
    over_max = cupel("select", "-", "--budget", "100", "--reserve", "20", stdin=pinned)
    assert over_max.returncode == 1
    assert (
        over_max.stderr.strip() == "cupel select: Pinned items require 90 tokens, but only 80 are available"
    )
    over_target = cupel("select", "-", "--budget", "100:50", stdin=pinned)
    assert over_target.returncode == 1
    assert (
        over_target.stderr.strip()
        == "cupel select: Selected items require 90 tokens, exceeding target budget of 50"
    )


def test_debug_shows_the_traceback() -> None:
    result = cupel("--debug", "select", "missing.json", "--budget", "10")
    assert result.returncode == 2
    assert "Traceback" in result.stderr and result.stderr.strip().endswith("missing.json: no such file")


def test_no_command_prints_help() -> None:
    result = cupel()
    assert result.returncode == 2
    assert "select" in result.stderr and "explain" in result.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_batch_draws_a_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    batch = tmp_path / "sets.jsonl"
    batch.write_text(
        "".join(
            json.dumps({"items": [{"content": f"x{n}", "tokens": 1}], "budget": {"maxTokens": 5}}) + "\n"
            for n in range(3)
        )
    )
    result, drawn = run_with_terminal_stderr([sys.executable, "-m", "cupel", "select", "--batch", str(batch)])
    assert result.returncode == 0
    assert len(result.stdout.splitlines()) == 3  # progress never mixes into the output
    assert b"3/3" in drawn and b"[" in drawn
