"""`cupel replay`, `cupel eval` and policy files meet hostile input, from the command line (issue 30).

Each test runs the console command in a subprocess, the way a user meets it: one strict reader for
replay lines and eval cases, outputs and connections that fail in one line, one nesting limit for
policies under every command, and one definition of gold recall.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import resource
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cupel.cli import main

pytest.importorskip("dask")
pytest.importorskip("distributed")

ROOT = Path(__file__).resolve().parents[2]
ITEMS = ROOT / "examples" / "agent-session.json"

OK_LINE = '{"id": "ok", "items": [{"content": "a", "tokens": 5}], "budget": {"maxTokens": 100}}'


def cupel(
    *args: object,
    cwd: Path,
    env: dict[str, str] | None = None,
    process: bool = False,
    limit_file_size: int | None = None,
) -> subprocess.CompletedProcess[str]:
    """``cupel ARGS`` run in ``cwd``: the console command in a subprocess when ``process`` (or with a
    file size limit), else ``cupel.cli.main`` in this process (the same code, without Dask's start-up)."""
    arguments = [str(arg) for arg in args]
    if process or limit_file_size is not None:

        def limit() -> None:  # Python ignores SIGXFSZ: a write over the limit fails with EFBIG
            assert limit_file_size is not None
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_file_size, limit_file_size))

        return subprocess.run(
            [sys.executable, "-m", "cupel", *arguments],
            cwd=cwd,
            capture_output=True,
            text=True,
            env={**os.environ, **(env or {})},
            preexec_fn=limit if limit_file_size is not None else None,
            timeout=300,
        )
    out, err = io.StringIO(), io.StringIO()
    saved = os.getcwd(), dict(os.environ)
    os.chdir(cwd)
    os.environ.update(env or {})
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(arguments)
    finally:
        os.chdir(saved[0])
        os.environ.clear()
        os.environ.update(saved[1])
    return subprocess.CompletedProcess(arguments, code, out.getvalue(), err.getvalue())


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    return result.stderr.strip()


def rows_of(path: Path) -> dict[int, dict[str, object]]:
    return {row["line"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


# ---- 1. one strict reader --------------------------------------------------------------------------


def test_replay_reads_lines_strictly_and_a_bad_line_is_an_error_row_naming_file_and_line(
    tmp_path: Path,
) -> None:
    lines = [
        OK_LINE.encode(),
        b'{"id": "bad\xff", "items": [], "budget": {"maxTokens": 100}}',
        b'{"items": [{"content": "a", "tokens": 5, "priority": NaN}], "budget": {"maxTokens": 100}}',
        b'{"items": [{"content": "a", "tokens": 5, "priority": Infinity}], "budget": {"maxTokens": 100}}',
        b'{"items": [{"content": "a", "tokens": 5, "priority": 1e400}], "budget": {"maxTokens": 100}}',
        b"",
        b"[" * 100_000,
        json.dumps({"id": "big", "items": [{"content": "x" * 200_000, "tokens": 5}]}).encode(),
        OK_LINE.replace('"ok"', '"last"').encode(),
    ]
    (tmp_path / "s.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    result = cupel(
        "replay",
        "s.jsonl",
        "--jobs",
        "1",
        "-o",
        "rows.jsonl",
        cwd=tmp_path,
        env={"CUPEL_MAX_INPUT_BYTES": "150KiB"},
    )
    assert result.returncode == 0, result.stderr
    rows = rows_of(tmp_path / "rows.jsonl")
    assert sorted(rows) == [1, 2, 3, 4, 5, 7, 8, 9]  # line 6 is blank
    assert rows[1]["session_id"] == "ok" and rows[9]["session_id"] == "last" and "error" not in rows[9]
    expected = {
        2: "s.jsonl: line 2: not UTF-8 text (invalid byte 0xff",
        3: "s.jsonl: line 3: invalid JSON: NaN is not a JSON number",
        4: "s.jsonl: line 4: invalid JSON: Infinity is not a JSON number",
        5: "s.jsonl: line 5: invalid JSON: number 1e400 is out of range",
        7: "s.jsonl: line 7: JSON nested deeper than 128 levels",
        8: "s.jsonl: line 8: line of 200",
    }
    for line, message in expected.items():
        assert rows[line]["error_kind"] == "malformed"
        assert str(rows[line]["error"]).startswith(message), rows[line]
    assert "CUPEL_MAX_INPUT_BYTES" in str(rows[8]["error"])
    assert "malformed 6" in result.stdout


CHAT_CASE = {
    "id": "c1",
    "messages": [{"role": "user", "content": "hello"}, {"role": "user", "content": "question"}],
    "gold": [0],
}


@pytest.mark.parametrize(
    ("messages", "message"),
    [
        (
            [{"role": "user", "content": "hi"}, {"role": "tool", "content": "x", "tool_call_id": "zz"}],
            "messages[1].tool_call_id is 'zz'",
        ),
        ([{"role": "user", "content": 5}], "messages[0].content must be a string"),
        ([{"role": "bot", "content": "hi"}], "messages[0].role must be one of"),
    ],
)
def test_an_invalid_transcript_in_an_eval_case_names_file_line_and_case(
    tmp_path: Path, messages: list[object], message: str
) -> None:
    case = {"id": "broken-case", "messages": [*messages, {"role": "user", "content": "q"}], "gold": [0]}
    (tmp_path / "cases.jsonl").write_text(f"// a comment\n{json.dumps(CHAT_CASE)}\n\n{json.dumps(case)}\n")
    result = cupel("eval", "cases.jsonl", "--budget", "100", "--policy", "chat", cwd=tmp_path)
    assert result.returncode == 2
    error = one_line(result)
    assert error.startswith("cupel eval: cases.jsonl: line 4 (broken-case): "), error
    assert message in error


@pytest.mark.parametrize("weight", ["1e400", "-1e400", "NaN", "Infinity"])
def test_a_non_finite_gold_weight_is_refused_in_one_line(tmp_path: Path, weight: str) -> None:
    case = json.dumps({**CHAT_CASE, "gold": [{"index": 0, "weight": 1}]}).replace(
        '"weight": 1', f'"weight": {weight}'
    )
    (tmp_path / "cases.jsonl").write_text(case + "\n")
    result = cupel(
        "eval", "cases.jsonl", "--budget", "100", "--policy", "chat", "--format", "json", cwd=tmp_path
    )
    assert result.returncode == 2 and result.stdout == ""
    error = one_line(result)
    assert error.startswith("cupel eval: cases.jsonl: line 1: invalid JSON: "), error


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ([{"index": 0, "weight": 1e308}, {"index": 1, "weight": 1e308}], "gold weights add up to more than"),
        ([{"index": 0, "weight": 10**400}], "gold[0].weight must be a finite number > 0"),
        ([[0]], "gold[0]: no message index [0]"),
        ([{"index": {"a": 1}}], "gold[0]: no message index {'a': 1}"),
    ],
)
def test_gold_weights_and_references_that_cannot_be_scored_are_refused(
    tmp_path: Path, gold: list[object], message: str
) -> None:
    messages = [{"role": "user", "content": text} for text in ("hello", "again", "question")]
    (tmp_path / "cases.jsonl").write_text(
        json.dumps({**CHAT_CASE, "messages": messages, "gold": gold}) + "\n"
    )
    result = cupel("eval", "cases.jsonl", "--budget", "100", "--policy", "chat", cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert one_line(result).startswith(f"cupel eval: cases.jsonl: line 1 (c1): {message}")


def test_eval_reads_case_files_strictly(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_bytes(
        json.dumps(CHAT_CASE).encode().replace(b"hello", b"hel\xfflo") + b"\n"
    )
    (tmp_path / "deep.json").write_text("[" * 200 + "]" * 200)
    bad = cupel("eval", "cases.jsonl", "--budget", "100", "--policy", "chat", cwd=tmp_path)
    assert bad.returncode == 2 and "cases.jsonl: not UTF-8 text (invalid byte 0xff" in one_line(bad)
    deep = cupel("eval", "deep.json", "--budget", "100", "--policy", "chat", cwd=tmp_path)
    assert deep.returncode == 2 and "deep.json: JSON nested deeper than 128 levels" in one_line(deep)


# ---- 2. outputs and connections fail cleanly ---------------------------------------------------------


@pytest.mark.parametrize(
    ("option", "target", "cause"),
    [
        ("-o", "outdir", "--output outdir: cannot write (is a directory)"),
        ("-o", "afile/x.jsonl", "--output afile/x.jsonl: cannot write (afile: not a directory)"),
        ("-o", "missing/x.jsonl", "--output missing/x.jsonl: cannot write (missing: no such directory)"),
        ("--summary", "outdir", "--summary outdir: cannot write (is a directory)"),
    ],
)
def test_replay_refuses_an_output_that_cannot_be_a_file(
    tmp_path: Path, option: str, target: str, cause: str
) -> None:
    (tmp_path / "s.jsonl").write_text(OK_LINE + "\n")
    (tmp_path / "outdir").mkdir()
    (tmp_path / "afile").write_text("OLD")
    result = cupel("replay", "s.jsonl", "--jobs", "1", option, target, cwd=tmp_path)
    assert result.returncode == 2
    assert one_line(result) == f"cupel replay: {cause}"
    assert (tmp_path / "afile").read_text() == "OLD"


def test_a_replay_write_that_fails_midway_keeps_the_old_output(tmp_path: Path) -> None:
    lines = [OK_LINE.replace('"ok"', f'"s{n}"') for n in range(200)]
    (tmp_path / "s.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "rows.jsonl").write_text("OLD")
    result = cupel(
        "replay", "s.jsonl", "--jobs", "1", "-o", "rows.jsonl", cwd=tmp_path, limit_file_size=20_000
    )
    assert result.returncode == 2
    assert one_line(result) == "cupel replay: --output rows.jsonl: cannot write (File too large)"
    assert (tmp_path / "rows.jsonl").read_text() == "OLD"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["rows.jsonl", "s.jsonl"]


@pytest.mark.parametrize(("command", "option"), [("explain", "--html"), ("eval", "--output")])
def test_other_outputs_fail_in_one_line_naming_the_path(tmp_path: Path, command: str, option: str) -> None:
    (tmp_path / "outdir").mkdir()
    (tmp_path / "cases.jsonl").write_text(json.dumps(CHAT_CASE) + "\n")
    source = ITEMS if command == "explain" else "cases.jsonl"
    for target in ("outdir", "cases.jsonl/x"):
        result = cupel(command, source, "--budget", "300", option, target, cwd=tmp_path)
        assert result.returncode == 2
        assert one_line(result).startswith(f"cupel {command}: {option} {target}: ")


def test_a_scheduler_where_nothing_listens_fails_in_one_line_naming_the_address(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a loopback port that was free a moment ago; nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "s.jsonl").write_text(OK_LINE + "\n")
    address = f"tcp://127.0.0.1:{port}"
    result = cupel(
        "replay", "s.jsonl", "--scheduler", address, "--connect-timeout", "1", cwd=tmp_path, process=True
    )
    assert result.returncode == 2
    assert one_line(result) == f"cupel replay: --scheduler: no scheduler answered at {address} within 1 s"


def test_the_connect_timeout_is_documented_with_its_default() -> None:
    text = subprocess.run(
        [sys.executable, "-m", "cupel", "replay", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert re.search(r"--connect-timeout SECONDS\s+seconds a --scheduler ADDRESS has to answer", text)
    from cupel.distributed.scheduler import DEFAULT_CONNECT_TIMEOUT

    assert f"(default {DEFAULT_CONNECT_TIMEOUT:g})" in text and DEFAULT_CONNECT_TIMEOUT <= 5
    assert "--connect-timeout" in (ROOT / "docs" / "replay.md").read_text()


# ---- 3. one policy reader, one nesting limit -------------------------------------------------------


def nested_policy(composites: int, scorer: str = '{ type = "recency", weight = 1 }') -> str:
    for _ in range(composites):
        scorer = f'{{ type = "composite", weight = 1, scorers = [{scorer}] }}'
    return f'scorers = [{scorer}]\nslicer = "greedy"\nplacer = "chronological"\n'


def every_command(policy: str, directory: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    (directory / "s.jsonl").write_text(OK_LINE + "\n")
    (directory / "cases.jsonl").write_text(json.dumps(CHAT_CASE) + "\n")
    runs = {
        "select": ["select", ITEMS, "--budget", "600", "--policy", policy],
        "explain": ["explain", ITEMS, "--budget", "600", "--policy", policy],
        "sensitivity": ["sensitivity", ITEMS, "--budget", "600", "--policy", policy, "--policy", "chat"],
        "eval": ["eval", "cases.jsonl", "--budget", "100", "--policy", policy, "--resamples", "0"],
        "replay": ["replay", "s.jsonl", "--jobs", "1", "--policy", policy, "-o", "rows.jsonl"],
        "policies": ["policies", "show", policy],
    }
    return {name: cupel(*args, cwd=directory) for name, args in runs.items()}


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (nested_policy(100), "TOML nested deeper than 128 levels"),
        # 128 levels as written, 129 once the "recency" shorthand is written out as a table.
        (nested_policy(63, '"recency"'), "policy nested deeper than 128 levels"),
    ],
)
def test_a_policy_nested_past_the_limit_is_refused_alike_by_every_command(
    tmp_path: Path, document: str, problem: str
) -> None:
    (tmp_path / "deep.toml").write_text(document)
    for name, result in every_command("deep.toml", tmp_path).items():
        assert result.returncode == 2, (name, result.stderr)
        error = one_line(result).removeprefix(f"cupel {name}: ").removeprefix("--policy: ")
        assert error == f"deep.toml: {problem}", (name, error)


def test_a_policy_nested_up_to_the_limit_runs_under_every_command(tmp_path: Path) -> None:
    (tmp_path / "deep.toml").write_text(nested_policy(62))
    for name, result in every_command("deep.toml", tmp_path).items():
        assert result.returncode == 0, (name, result.stderr)
    (row,) = rows_of(tmp_path / "rows.jsonl").values()
    assert row["policy"] == "deep" and row["selected"] == ["0"]


# ---- 7. habits of new users ------------------------------------------------------------------------


def test_replay_and_eval_agree_on_gold_recall_when_two_items_are_identical(tmp_path: Path) -> None:
    case = {
        "id": "dup",
        "items": [
            {"id": "x", "content": "the same words", "tokens": 5},
            {"id": "y", "content": "the same words", "tokens": 5},
            {"id": "z", "content": "other words", "tokens": 5},
        ],
        "gold": ["x", "y"],
    }
    (tmp_path / "cases.jsonl").write_text(json.dumps(case) + "\n")
    options = ["--budget", "100", "--policy", "chat"]
    replayed = cupel(
        "replay", "cases.jsonl", "--jobs", "1", *options, "--summary-format", "json", cwd=tmp_path
    )
    evaluated = cupel("eval", "cases.jsonl", *options, "--format", "json", "--resamples", "0", cwd=tmp_path)
    assert replayed.returncode == 0 and evaluated.returncode == 0, replayed.stderr + evaluated.stderr
    replay_recall = json.loads(replayed.stdout)["runs"][0]["eval"]["recall_items"]
    eval_recall = json.loads(evaluated.stdout)["summary"]["chat"]["100"]["recall_items"]["mean"]
    assert replay_recall == eval_recall == 1.0


def test_the_replay_example_in_the_docs_runs_as_a_script(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "replay.md").read_text(encoding="utf-8")
    (code,) = [block for block in re.findall(r"```python\n(.*?)```", text, re.DOTALL) if "replay(" in block]
    assert 'if __name__ == "__main__":' in code
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "day1.jsonl").write_text(OK_LINE + "\n")
    (tmp_path / "example.py").write_text(code)
    result = subprocess.run(  # one worker process is enough to show the guard at work
        [sys.executable, "example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DASK_NUM_WORKERS": "1"},
    )
    assert result.returncode == 0, result.stderr
    assert "chat @ budget 4000: 1 session\n" in result.stdout
    assert (tmp_path / "rows.parquet").is_file()
