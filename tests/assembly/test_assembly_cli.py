"""``cupel assemble``, run as a real command."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .helpers import cupel_assemble

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "rag-results.jsonl"


def cupel(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return cupel_assemble(*args, stdin=stdin)


def test_the_example_prints_a_formatted_context() -> None:
    done = cupel("examples/rag-results.jsonl", "--budget", "2000")
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    text = done.stdout.decode("utf-8")
    assert text.startswith("[DOC: docs/runbooks/key-rotation.md]\n")
    assert text.count("[DOC: ") == 5
    # The FAQ repeats a paragraph of api-keys.md verbatim and the runbook's steps almost verbatim.
    assert text.count("Every account can hold two active API keys") == 1
    assert text.count("Rotate keys in four steps") == 1
    # Byte-identical on a second run.
    assert cupel("examples/rag-results.jsonl", "--budget", "2000").stdout == done.stdout


@pytest.mark.parametrize("strategy", ["greedy", "interleaved", "score_weighted"])
def test_strategies_and_a_tight_budget(strategy: str) -> None:
    done = cupel(
        str(EXAMPLE), "--budget", "1100", "--strategy", strategy, "--query", "rotate keys", "--summary"
    )
    assert done.returncode == 0, done.stderr
    summary = done.stderr.decode()
    assert summary.startswith("cupel assemble: ") and "of 14 chunks" in summary and "of 300 tokens" in summary
    assert done.stdout.startswith(b"[DOC: ")


def test_metadata_and_options() -> None:
    done = cupel(
        str(EXAMPLE),
        "--budget",
        "3000",
        "--metadata",
        "--max-chunks-per-doc",
        "1",
        "--prefer-recent",
        "--dedup-threshold",
        "1",
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode()
    assert "[CHUNK: key-rotation#1 seq=1 score=" in text
    assert text.count("[CHUNK: ") == 5


def test_standard_input() -> None:
    done = cupel("-", "--budget", "2000", stdin=EXAMPLE.read_bytes())
    assert done.returncode == 0
    assert done.stdout == cupel(str(EXAMPLE), "--budget", "2000").stdout


def test_an_empty_file_gives_an_empty_context(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    done = cupel(str(empty), "--budget", "2000")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "results.jsonl"
    path.write_text(text, encoding="utf-8")
    return str(path)


GOOD = EXAMPLE.read_text(encoding="utf-8").splitlines()[0]


@pytest.mark.parametrize(
    ("lines", "budget", "message"),
    [
        (None, "2000", "cannot read {path}: No such file or directory"),
        (
            [GOOD, '{"document": {"id": "x",}'],
            "2000",
            "{path}:2: invalid JSON at line 2, column 25: Expecting property name enclosed in double quotes",
        ),
        ([GOOD, GOOD.replace('"score"', '"scroe"')], "2000", "{path}:2: missing field 'score'"),
        (
            [GOOD.replace('"sequence": 0', '"sequence": "first"')],
            "2000",
            "{path}:1: field 'chunk.sequence' must be an integer, got a string (\"first\")",
        ),
        ([GOOD], "lots", "--budget must be a whole number, got 'lots'"),
        ([GOOD], "-5", "--budget must be >= 0, got -5"),
        (
            [GOOD],
            "500",
            "--budget 500 leaves no tokens for the context: the reserves take more (800 = "
            "--reserved-system 200 + --reserved-query 100 + --reserved-response 500); raise --budget or "
            "lower a reserve",
        ),
        (
            [GOOD],
            "800",
            "--budget 800 leaves no tokens for the context: the reserves take all of it (800 = "
            "--reserved-system 200 + --reserved-query 100 + --reserved-response 500); raise --budget or "
            "lower a reserve",
        ),
    ],
)
def test_input_errors_print_one_line_and_exit_2(
    tmp_path: Path, lines: list[str] | None, budget: str, message: str
) -> None:
    path = str(tmp_path / "missing.jsonl") if lines is None else write(tmp_path, "\n".join(lines) + "\n")
    done = cupel(path, "--budget", budget)
    assert done.returncode == 2
    assert done.stdout == b""
    stderr = done.stderr.decode()
    assert stderr == f"cupel assemble: {message.format(path=path)}\n"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--strategy", "best", "--strategy must be one of greedy, interleaved, score_weighted, got 'best'"),
        ("--dedup-threshold", "2", "--dedup-threshold must be between 0 and 1, got 2"),
        ("--max-chunks-per-doc", "0", "--max-chunks-per-doc must be >= 1, got 0"),
    ],
)
def test_bad_options_exit_2(option: str, value: str, message: str) -> None:
    done = cupel(str(EXAMPLE), "--budget", "2000", option, value)
    assert done.returncode == 2
    assert done.stderr.decode() == f"cupel assemble: {message}\n"


def test_a_directory_is_unreadable(tmp_path: Path) -> None:
    done = cupel(str(tmp_path), "--budget", "2000")
    assert done.returncode == 2
    assert done.stderr.decode().startswith(f"cupel assemble: cannot read {tmp_path}: ")
    assert b"Traceback" not in done.stderr
