"""A writer process killed mid-write loses nothing that was committed."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cupel.assembly import Chunk, Document, SqliteStore, hybrid_search

WRITER = textwrap.dedent(
    """
    import sys
    import time
    from cupel.assembly import Chunk, Document, SqliteStore

    store = SqliteStore(sys.argv[1])
    for batch in range(1000):
        with store.write() as writer:
            for number in range(40):
                doc = f"b{batch}-{number}"
                text = f"vault key rotation batch {batch} document {number} " * 8
                writer.put(Document(doc, f"docs/{doc}.md"), [Chunk(f"{doc}#0", text, 0)])
                if number == 10 and batch >= 3:
                    print("writing", flush=True)  # the transaction is open and half written
                    time.sleep(600)  # hold it open until the kill arrives
        print("committed", store.latest().version, store.get_latest_state_root(), flush=True)
    """
)


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_killing_a_writer_mid_write_keeps_every_committed_version(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    SqliteStore(path).close()
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    committed: dict[int, str] = {}
    assert child.stdout is not None
    try:
        for line in child.stdout:
            if line.startswith("committed"):
                _, version, root = line.split()
                committed[int(version)] = root
            elif line.startswith("writing"):
                os.kill(child.pid, signal.SIGKILL)
                break
    finally:
        child.kill()
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    assert len(committed) >= 3

    # The killed transaction left its traces in the write-ahead log, not in the versions.
    with SqliteStore(path) as store:
        versions = store.versions()
        assert {v.version: v.state_root for v in versions[1:]} == committed
        for version in versions:
            assert store.verify(version.state_root)
            assert version.chunk_count == 40 * version.version
        last = versions[-1]
        hits = hybrid_search("vault key rotation batch 2", store, state_root=committed[3])
        assert hits and all(hit.chunk.id.split("-")[0] in {"b0", "b1", "b2"} for hit in hits)
        # The store takes new writes after the crash.
        with store.write() as writer:
            writer.put(Document("after", "after.md"), [Chunk("after#0", "written after the crash", 0)])
        assert store.latest().version == last.version + 1
    with sqlite3.connect(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
