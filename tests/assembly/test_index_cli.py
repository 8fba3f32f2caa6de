"""`cupel index` and `cupel assemble --db`, run as real commands."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cupel.assembly import SqliteStore
from cupel.cli import main

from ..terminal import run_with_terminal_stderr


def cupel(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run the command line in this process (fast); one test below runs it as a real subprocess."""
    out, err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8"), io.StringIO()
    previous = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
            out.flush()
    finally:
        os.chdir(previous)
    stdout = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
    return subprocess.CompletedProcess(list(args), code, stdout, err.getvalue())


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "kb" / "docs"
    docs.mkdir(parents=True)
    (docs / "keys.md").write_text(
        "# API keys\n\nEvery account holds two active API keys, a primary and a secondary.\n\n"
        "## Rotation\n\nRotate keys every 90 days: create a secondary key, deploy it, promote it, "
        "then revoke the old primary key.\n",
        encoding="utf-8",
    )
    (docs / "vault.md").write_text(
        "# Vault\n\nThe vault seals itself on restart and must be unsealed by two operators.\n",
        encoding="utf-8",
    )
    (tmp_path / "kb" / "rotate.py").write_text(
        "def rotate(key):\n"
        "    '''Rotate a key: deploy the secondary, then revoke the primary.'''\n"
        "    return key\n",
        encoding="utf-8",
    )
    (tmp_path / "kb" / "image.png").write_bytes(b"\x89PNG\r\n")
    (tmp_path / "kb" / ".hidden.md").write_text("# hidden\n", encoding="utf-8")
    return tmp_path


def summary(done: subprocess.CompletedProcess[str]) -> dict[str, int]:
    assert done.returncode == 0, done.stderr
    counts = re.match(
        r"indexed (\d+) files? \((\d+) new, (\d+) changed, (\d+) unchanged, (\d+) removed"
        r"(?:, \d+ skipped)?\); "
        r"(\d+) chunks? written; version (\d+): (\d+) documents?, (\d+) chunks?, state root (\S+)$",
        done.stdout.splitlines()[0],
    )
    assert counts, done.stdout
    keys = ["files", "new", "changed", "unchanged", "removed", "written", "version", "documents", "chunks"]
    return dict(zip(keys, map(int, counts.groups()[:9]), strict=True))


def test_index_then_assemble_end_to_end(corpus: Path) -> None:
    first = summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    assert first == {
        "files": 3,
        "new": 3,
        "changed": 0,
        "unchanged": 0,
        "removed": 0,
        "written": first["chunks"],
        "version": 1,
        "documents": 3,
        "chunks": first["chunks"],
    }
    # As a real command once, to cover the entry point and the UTF-8 standard output.
    query = ("--query", "how do I rotate keys?", "--budget", "1000")
    command = [sys.executable, "-m", "cupel", "assemble", "--db", "kb.db", *query]
    done = subprocess.run(command, capture_output=True, text=True, cwd=corpus, timeout=120, check=False)
    assert done.stdout == cupel("assemble", "--db", "kb.db", *query, cwd=corpus).stdout
    assert done.returncode == 0, done.stderr
    # Stemmed: "rotate" and "keys" match rotate.py's rotate(key) as well as the keys page.
    assert done.stdout.startswith("[DOC: kb/rotate.py]\ndef rotate(key):")
    assert "[DOC: kb/docs/keys.md]\n# API keys" in done.stdout
    assert "Rotate keys every 90 days" in done.stdout
    with SqliteStore(corpus / "kb.db") as store:
        assert sorted(store.documents()) == ["kb/docs/keys.md", "kb/docs/vault.md", "kb/rotate.py"]


def test_reindexing_is_incremental_and_pinned_roots_stay_byte_identical(corpus: Path) -> None:
    summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    query = ("--query", "rotate the primary key", "--budget", "1000")
    pinned_args = ("assemble", "--db", "kb.db", *query, "--format", "json")
    before = json.loads(cupel(*pinned_args, cwd=corpus).stdout)
    root = before["metadata"]["state_root"]

    again = summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    assert (again["unchanged"], again["written"], again["version"]) == (3, 0, 1)

    (corpus / "kb" / "docs" / "keys.md").write_text("# API keys\n\nKeys are now managed elsewhere.\n")
    (corpus / "kb" / "rotate.py").unlink()
    (corpus / "kb" / "docs" / "new.txt").write_text("Rotate the primary key with the rotate command.\n")
    changed = summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    assert (changed["new"], changed["changed"], changed["unchanged"], changed["removed"]) == (1, 1, 1, 1)
    assert changed["version"] == 2

    after = json.loads(cupel(*pinned_args, "--state-root", root[-64:][:12], cwd=corpus).stdout)
    assert after["context"] == before["context"] and after["metadata"]["state_root"] == root
    latest = json.loads(cupel(*pinned_args, cwd=corpus).stdout)
    assert latest["metadata"]["state_root"] != root
    assert "managed elsewhere" in latest["context"] or "rotate command" in latest["context"]
    assert "Rotate keys every 90 days" in after["context"]
    chunk = after["chunks"][0]
    assert set(chunk) == {
        "chunk_id",
        "document_id",
        "document_path",
        "sequence",
        "byte_offset",
        "score",
        "tokens",
        "truncated",
        "text",
    }
    assert after["total_tokens"] <= after["available_tokens"] == 200


def test_indexing_a_file_outside_a_directory_scope_does_not_remove_others(corpus: Path) -> None:
    summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    only = summary(cupel("index", "kb/docs/vault.md", "--db", "kb.db", cwd=corpus))
    assert (only["unchanged"], only["removed"], only["documents"]) == (1, 0, 3)


Q = ("--query", "q", "--budget", "1000")
ERRORS = [
    (("index", "missing", "--db", "kb.db"), "cupel index: missing: no such file or directory"),
    (
        ("index", "kb", "--db", "kb.db", "--max-chars", "lots"),
        "cupel index: --max-chars must be a whole number, got 'lots'",
    ),
    (
        ("index", "kb", "--db", "kb.db", "--overlap", "900"),
        "cupel index: --overlap must be less than half of max_chars (1500), got 900",
    ),
    (
        ("assemble", "--db", "none.db", *Q),
        "cupel assemble: --db none.db: no such store (build one with `cupel index PATHS --db FILE`)",
    ),
    (("assemble", "--db", "kb.db", "--budget", "1000"), "cupel assemble: --db needs a non-empty --query"),
    (
        ("assemble", "--budget", "1000"),
        "cupel assemble: give a RESULTS.jsonl file (or -), or --db FILE with --query TEXT",
    ),
    (
        ("assemble", "r.jsonl", "--db", "kb.db", *Q),
        "cupel assemble: give either RESULTS.jsonl or --db, not both (got 'r.jsonl' and --db)",
    ),
    (
        ("assemble", "-", "--state-root", "abcdef12", "--budget", "1000"),
        "cupel assemble: --state-root needs --db",
    ),
    (
        ("assemble", "--db", "kb.db", *Q, "--state-root", "abc"),
        "cupel assemble: state root must be hex digits (at least 8, optionally prefixed with '{alg}:'), "
        "got 'abc'",
    ),
    (
        ("assemble", "--db", "kb.db", *Q, "--state-root", "00000000"),
        "cupel assemble: no version of 'kb.db' has state root '00000000'",
    ),
    (
        ("assemble", "--db", "kb.db", *Q, "--format", "xml"),
        "cupel assemble: --format must be text or json, got 'xml'",
    ),
]


@pytest.mark.parametrize(("args", "message"), ERRORS)
def test_errors_print_one_line_and_exit_2(corpus: Path, args: tuple[str, ...], message: str) -> None:
    from cupel.assembly.hashing import HASH_ALGORITHM

    if "kb.db" in args and args[0] == "assemble":
        summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    done = cupel(*args, cwd=corpus)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == message.format(alg=HASH_ALGORITHM) + "\n"


def test_assemble_strategy_accepts_the_hyphenated_name(corpus: Path) -> None:
    summary(cupel("index", "kb", "--db", "kb.db", cwd=corpus))
    base = ("assemble", "--db", "kb.db", "--query", "rotate keys", "--budget", "1000")
    hyphen = cupel(*base, "--strategy", "score-weighted", "--summary", cwd=corpus)
    underscore = cupel(*base, "--strategy", "score_weighted", cwd=corpus)
    assert hyphen.returncode == 0 and hyphen.stdout == underscore.stdout
    expected = r"cupel assemble: \d+ of \d+ chunks? from \d+ documents?, \d+ of 200 tokens"
    assert re.match(expected, hyphen.stderr)


def test_an_undecodable_file_in_a_directory_is_skipped_but_named_files_must_be_utf8(corpus: Path) -> None:
    (corpus / "kb" / "latin1.txt").write_bytes("café".encode("latin-1"))
    indexed = cupel("index", "kb", "--db", "kb.db", cwd=corpus)
    assert summary(indexed)["files"] == 3
    assert indexed.stdout.splitlines()[1:] == ["skipped kb/latin1.txt: not UTF-8 text (byte 3)"]
    named = cupel("index", "kb/latin1.txt", "--db", "kb.db", cwd=corpus)
    assert (named.returncode, named.stderr) == (2, "cupel index: kb/latin1.txt: not UTF-8 text (byte 3)\n")


@pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX-only")
def test_index_draws_a_progress_bar_on_a_terminal_only(corpus: Path) -> None:
    command = [sys.executable, "-m", "cupel", "index", "kb", "--db", "kb.db"]
    done, drawn = run_with_terminal_stderr(command, cwd=corpus)
    assert done.returncode == 0 and done.stdout.startswith("indexed 3 files")
    assert b"3/3" in drawn and b"[####" in drawn
    assert cupel("index", "kb", "--db", "kb.db", cwd=corpus).stderr == ""  # not a terminal: no bar
