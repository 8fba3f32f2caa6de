"""The store as a user's machine meets it: readers beside a writer, foreign and damaged files, hostile
directories, concurrent writers, and a core-only install."""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cupel.assembly import Chunk, Document, SqliteStore, TokenBudget, assemble_context, hybrid_search
from cupel.assembly.store import StoreError
from cupel.errors import InvalidConfigurationError

from .test_index_cli import cupel

SRC = str(Path(__file__).resolve().parents[2] / "src")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def environment() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}


def corpus(root: Path, name: str, files: int, words: str = "rotate the vault key") -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    for number in range(files):
        (directory / f"{name}-{number:03d}.md").write_text(
            f"# {name} {number}\n\n{words} {number} {name}\n", encoding="utf-8"
        )
    return directory


def one_line_error(done: object, code: int = 2) -> str:
    returncode, stdout, stderr = done.returncode, done.stdout, done.stderr  # type: ignore[attr-defined]
    assert returncode == code, (stdout, stderr)
    assert stdout in ("", b"")
    text = stderr.decode() if isinstance(stderr, bytes) else stderr
    assert text.count("\n") == 1 and "unexpected" not in text and "Traceback" not in text, text
    return text


# -- readers never wait and never write -------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    from cupel.assembly import Chunk, Document, SqliteStore

    with SqliteStore(sys.argv[1]) as store, store.write() as writer:
        for number in range(400):
            doc = f"w/{number}.md"
            writer.put(Document(doc, doc), [Chunk(doc + "#0", f"vault key rotation {number} " * 20, 0)])
        print("writing", flush=True)  # the transaction is open, holding the write lock
        sys.stdin.readline()
    print("committed", writer.committed.version, flush=True)
    """
)


def test_a_reader_started_during_a_long_write_answers_from_the_old_version(tmp_path: Path) -> None:
    corpus(tmp_path, "kb", 20)
    assert cupel("index", "kb", "--db", "kb.db", cwd=tmp_path).returncode == 0
    query = ("assemble", "--db", "kb.db", "--query", "vault key", "--budget", "2000", "--format", "json")
    idle = []
    for _ in range(3):
        started = time.perf_counter()
        before = cupel(*query, cwd=tmp_path)
        idle.append(time.perf_counter() - started)
    old_root = json.loads(before.stdout)["metadata"]["state_root"]
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(tmp_path / "kb.db")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=environment(),
    )
    try:
        assert writer.stdout is not None and writer.stdin is not None
        assert writer.stdout.readline() == "writing\n"
        started = time.perf_counter()
        during = cupel(*query, cwd=tmp_path)
        elapsed = time.perf_counter() - started
        # The writer still holds its open transaction (it waits for our line), so the reader cannot
        # have waited for it; the clock bound is loose because the machine may be loaded.
        assert writer.poll() is None
        assert during.returncode == 0, during.stderr
        assert json.loads(during.stdout)["metadata"]["state_root"] == old_root
        assert elapsed <= 2 * statistics.median(idle) + 2.0
        writer.stdin.write("\n")
        writer.stdin.flush()
        assert writer.stdout.readline() == "committed 2\n"
    finally:
        writer.kill() if writer.poll() is None else None
        writer.wait(timeout=60)
    after = cupel(*query, cwd=tmp_path)
    assert json.loads(after.stdout)["metadata"]["state_root"] != old_root


def test_read_paths_never_change_a_file(tmp_path: Path) -> None:
    corpus(tmp_path, "kb", 3)
    assert cupel("index", "kb", "--db", "store.db", cwd=tmp_path).returncode == 0
    (tmp_path / "empty.db").write_bytes(b"")
    with sqlite3.connect(tmp_path / "foreign.db") as connection:
        connection.execute("CREATE TABLE notes (body TEXT)")
        connection.execute("INSERT INTO notes VALUES ('mine')")
    connection.close()
    (tmp_path / "text.db").write_text("hello")
    names = ["store.db", "empty.db", "foreign.db", "text.db"]
    before = {name: digest(tmp_path / name) for name in names}
    query = ("--query", "vault", "--budget", "2000")
    assert cupel("assemble", "--db", "store.db", *query, cwd=tmp_path).returncode == 0
    assert cupel("index", "--check", "--db", "store.db", cwd=tmp_path).returncode == 0
    with SqliteStore(tmp_path / "store.db", read_only=True) as store:
        assert hybrid_search("vault", store) and store.verify()
        with pytest.raises(StoreError, match="opened read_only"), store.write():
            pass
    expected = {
        "empty.db": "not a cupel store (the file is empty)",
        "foreign.db": "not a cupel store (a SQLite database without cupel's tables)",
        "text.db": "not a cupel store (not a SQLite database)",
    }
    for name, reason in expected.items():
        message = one_line_error(cupel("assemble", "--db", name, *query, cwd=tmp_path))
        assert message == f"cupel assemble: {name}: {reason}\n"
        with pytest.raises(StoreError, match=re.escape(reason)):
            SqliteStore(tmp_path / name, read_only=True)
        assert cupel("index", "--check", "--db", name, cwd=tmp_path).returncode == 1
    # A writer refuses another application's database too, before touching it.
    refused = one_line_error(cupel("index", "kb", "--db", "foreign.db", cwd=tmp_path))
    assert "not a cupel store" in refused
    assert {name: digest(tmp_path / name) for name in names} == before
    # Whatever SQLite's shared-memory files a reader needed, it wrote nothing into them.
    assert all(path.stat().st_size == 0 for path in tmp_path.glob("*.db-wal"))


def test_a_failed_index_leaves_no_new_file(tmp_path: Path) -> None:
    corpus(tmp_path, "kb", 2)
    (tmp_path / "latin1.txt").write_bytes("café".encode("latin-1"))
    one_line_error(cupel("index", "missing", "--db", "y.db", cwd=tmp_path))
    one_line_error(cupel("index", "kb", "latin1.txt", "--db", "z.db", cwd=tmp_path))
    assert sorted(path.name for path in tmp_path.iterdir()) == ["kb", "latin1.txt"]


def test_a_store_of_a_newer_or_older_format_is_refused(tmp_path: Path) -> None:
    for schema, words in (("99", "made by a newer cupel"), ("1", "older than this cupel's")):
        path = tmp_path / f"s{schema}.db"
        SqliteStore(path).close()
        with sqlite3.connect(path) as connection:
            connection.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (schema,))
        connection.close()
        with pytest.raises(StoreError, match=words):
            SqliteStore(path, read_only=True)
        with pytest.raises(StoreError, match=words):
            SqliteStore(path)


# -- concurrent writers -----------------------------------------------------------------------------


def test_concurrent_writers_each_report_their_own_version(tmp_path: Path) -> None:
    for name in ("alpha", "beta", "gamma"):
        corpus(tmp_path, name, 60, words=f"{name} vault key rotation " * 30)
    assert cupel("index", "alpha", "--db", "kb.db", cwd=tmp_path).returncode == 0
    commands = [
        subprocess.Popen(
            [sys.executable, "-m", "cupel", "index", name, "--db", "kb.db"],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment(),
        )
        for name in ("beta", "gamma")
    ]
    reports = []
    for command in commands:
        stdout, stderr = command.communicate(timeout=300)
        assert command.returncode == 0, stderr
        found = re.search(r"version (\d+): (\d+) documents, \d+ chunks, state root (\S+)$", stdout.strip())
        assert found, stdout
        reports.append((int(found[1]), int(found[2]), found[3]))
    with SqliteStore(tmp_path / "kb.db", read_only=True) as store:
        recorded = {version.version: version for version in store.versions()}
    assert sorted(version for version, _, _ in reports) == [2, 3]
    for version, documents, root in reports:
        assert (recorded[version].document_count, recorded[version].state_root) == (documents, root)


# -- damage -----------------------------------------------------------------------------------------


def damaged_store(tmp_path: Path) -> Path:
    corpus(tmp_path, "kb", 150, words="the vault seals itself on restart " * 20)
    assert cupel("index", "kb", "--db", "kb.db", cwd=tmp_path).returncode == 0
    path = tmp_path / "kb.db"
    with sqlite3.connect(path) as connection:
        page_size = connection.execute("PRAGMA page_size").fetchone()[0]
        (root,) = connection.execute("SELECT rootpage FROM sqlite_master WHERE name = 'chunks'").fetchone()
    connection.close()
    with open(path, "r+b") as handle:
        handle.seek((root - 1) * page_size)  # the b-tree page header and cell pointers
        handle.write(b"\xa5" * 1024)
    return path


def test_a_damaged_store_gives_one_line_and_check_names_the_problem(tmp_path: Path) -> None:
    damaged_store(tmp_path)
    message = one_line_error(
        cupel("assemble", "--db", "kb.db", "--query", "vault restart", "--budget", "4000", cwd=tmp_path)
    )
    assert message.startswith("cupel assemble: kb.db: the store is damaged (")
    assert "cupel index --check --db kb.db" in message and "--rebuild" in message
    checked = cupel("index", "--check", "--db", "kb.db", cwd=tmp_path)
    assert checked.returncode == 1
    lines = checked.stdout.splitlines()
    assert lines[0] == "kb.db: damaged"
    assert any(line.startswith("  integrity check:") for line in lines)
    assert any(line.startswith("  version 1: ") for line in lines)
    assert lines[-1] == "rebuild with `cupel index PATHS --db kb.db --rebuild`"
    rebuilt = cupel("index", "kb", "--db", "kb.db", "--rebuild", cwd=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert cupel("index", "--check", "--db", "kb.db", cwd=tmp_path).stdout.startswith("kb.db: ok;")
    assert not list(tmp_path.glob("kb.db.rebuild-*"))


def test_a_truncated_store_is_named(tmp_path: Path) -> None:
    path = damaged_store(tmp_path)
    with open(path, "r+b") as handle:
        handle.truncate(path.stat().st_size // 3)
    message = one_line_error(
        cupel("assemble", "--db", "kb.db", "--query", "vault restart", "--budget", "4000", cwd=tmp_path)
    )
    assert "kb.db: the store is damaged" in message


# -- files as a disk has them -----------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="POSIX only")
def test_fifos_devices_and_escaping_symlinks_are_skipped_and_listed(tmp_path: Path) -> None:
    kb = corpus(tmp_path, "kb", 1)
    (tmp_path / "outside.md").write_text("# secret\n\nnot part of the knowledge base\n", encoding="utf-8")
    os.mkfifo(kb / "pipe.md")
    os.symlink("/dev/zero", kb / "zero.md")
    os.symlink(tmp_path / "outside.md", kb / "escape.md")
    os.symlink(kb / "kb-000.md", kb / "inside.md")
    (kb / "big.md").write_text("# big\n\n" + "word " * 400, encoding="utf-8")
    command = [sys.executable, "-m", "cupel", "index", "kb", "--db", "kb.db", "--max-file-bytes", "1000"]
    done = subprocess.run(
        command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environment(), check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("indexed 2 files (2 new, 0 changed, 0 unchanged, 0 removed, 4 skipped)")
    assert lines[1:] == [
        "skipped kb/big.md: larger than 1000 bytes",
        f"skipped kb/escape.md: symbolic link leaving the directory (to {tmp_path / 'outside.md'})",
        "skipped kb/pipe.md: not a regular file (a FIFO)",
        "skipped kb/zero.md: symbolic link leaving the directory (to /dev/zero)",
    ]
    followed = cupel("index", "kb", "--db", "kb.db", "--follow-symlinks", cwd=tmp_path)
    assert followed.returncode == 0, followed.stderr
    assert followed.stdout.splitlines()[1:] == [
        "skipped kb/pipe.md: not a regular file (a FIFO)",
        "skipped kb/zero.md: not a regular file (a device)",
    ]
    with SqliteStore(tmp_path / "kb.db", read_only=True) as store:
        assert sorted(store.documents()) == ["kb/big.md", "kb/escape.md", "kb/inside.md", "kb/kb-000.md"]
    named = cupel("index", "kb/pipe.md", "--db", "kb.db", cwd=tmp_path)
    assert one_line_error(named) == "cupel index: kb/pipe.md: cannot index: not a regular file (a FIFO)\n"


# -- a core-only install ----------------------------------------------------------------------------

CORE_ONLY = textwrap.dedent(
    """
    import importlib.abc, sys

    class Blocker(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"numpy", "blake3", "sqlite_vec"}:
                raise ImportError(f"No module named {name!r} (blocked: core-only install)")
            return None

    sys.meta_path.insert(0, Blocker())
    from cupel.cli import main
    sys.exit(main(sys.argv[1:]))
    """
)


def test_index_and_assemble_on_a_core_only_install(tmp_path: Path) -> None:
    corpus(tmp_path, "kb", 3)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-c", CORE_ONLY, *args]
        return subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=environment(), check=False
        )

    assert run("index", "kb", "--db", "kb.db").returncode == 0
    done = run("assemble", "--db", "kb.db", "--query", "rotate the keys", "--budget", "2000")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("[DOC: kb/kb-00")
    assert run("index", "--check", "--db", "kb.db").returncode == 0
    # Vectors are opt-in; searching them is what needs numpy, and the error says which extra.
    assert run("index", "kb", "--db", "vectors.db", "--embedder", "hashing").returncode == 0
    needs = run("assemble", "--db", "vectors.db", "--query", "rotate", "--budget", "2000")
    assert needs.returncode == 2 and needs.stderr.count("\n") == 1
    assert "pip install 'pycupel[rag]'" in needs.stderr


# -- budgets ----------------------------------------------------------------------------------------


def test_assemble_context_refuses_a_budget_its_reserves_take_whole() -> None:
    with SqliteStore() as store:
        with store.write() as writer:
            writer.put(Document("a", "a.md"), [Chunk("a#0", "rotate the vault key", 0)])
        with pytest.raises(InvalidConfigurationError, match="leaves 0 tokens for the context"):
            assemble_context("vault", store, TokenBudget(800))
        assert assemble_context("vault", store, TokenBudget(801)).total_tokens == 0


def test_the_candidates_grow_with_the_budget() -> None:
    from cupel.assembly import AssemblyConfig, SearchParams

    assert SearchParams.for_budget(800) == SearchParams(50, 50, 100)
    assert SearchParams.for_budget(7200) == SearchParams(450, 450, 900)
    with SqliteStore() as store:
        with store.write() as writer:
            for number in range(400):
                writer.put(
                    Document(f"d{number}", f"d{number}.md"), [Chunk(f"c{number}", f"vault {number}", 0)]
                )
        config = AssemblyConfig(dedup_threshold=1.0)
        small = assemble_context("vault", store, TokenBudget(1000), config=config)
        large = assemble_context("vault", store, TokenBudget(12000), config=config)
    assert len(small.chunks) < 100 < len(large.chunks) == 400
