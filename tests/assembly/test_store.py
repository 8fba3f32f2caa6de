"""SqliteStore: versions, state roots, pinned retrieval, concurrency."""

from __future__ import annotations

import random
import sqlite3
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cupel.assembly import (
    Chunk,
    ContextCache,
    Document,
    SqliteStore,
    TokenBudget,
    UnknownStateRootError,
    assemble_context,
    format_context,
    hybrid_search,
    merkle_root,
    verify_determinism,
)
from cupel.assembly.hashing import HASH_ALGORITHM, raw_digest
from cupel.errors import CupelTypeError, InvalidConfigurationError

WORDS = [
    *("key", "rotate", "vault", "token", "deploy", "revoke", "primary", "secondary", "audit", "scope"),
    *("graph", "seal", "restart", "lease"),
]


def chunks_for(doc_id: str, texts: list[str]) -> list[Chunk]:
    return [Chunk(f"{doc_id}#{index}", text, index, index * 100) for index, text in enumerate(texts)]


def put(store: SqliteStore, doc_id: str, *texts: str, path: str | None = None) -> None:
    with store.write() as writer:
        writer.put(Document(doc_id, path or f"docs/{doc_id}.md"), chunks_for(doc_id, list(texts)))


def random_text(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words))


def test_every_write_is_a_new_version_with_a_new_root() -> None:
    with SqliteStore() as store:
        empty = store.latest()
        assert (empty.version, empty.chunk_count) == (0, 0)
        assert empty.state_root == merkle_root([])
        put(store, "a", "rotate the primary key", "revoke the old key")
        put(store, "b", "the vault seals itself on restart")
        with store.write() as writer:
            assert writer.remove("a")
            assert not writer.remove("missing")
        versions = store.versions()
        assert [v.version for v in versions] == [0, 1, 2, 3]
        assert [v.chunk_count for v in versions] == [0, 2, 3, 1]
        assert [v.document_count for v in versions] == [0, 1, 2, 1]
        assert len({v.state_root for v in versions}) == 4
        assert all(v.state_root.startswith(HASH_ALGORITHM + ":") for v in versions)
        assert all(store.verify(v.state_root) for v in versions)
        assert store.get_latest_state_root() == versions[-1].state_root


def test_a_write_that_changes_nothing_makes_no_version() -> None:
    with SqliteStore() as store:
        put(store, "a", "rotate the primary key")
        with store.write() as writer:
            assert not writer.put(Document("a", "docs/a.md"), chunks_for("a", ["rotate the primary key"]))
        with store.write():
            pass
        assert store.latest().version == 1


def test_a_failed_write_commits_nothing() -> None:
    with SqliteStore() as store:
        put(store, "a", "rotate the primary key")
        before = store.versions()
        with pytest.raises(RuntimeError), store.write() as writer:
            writer.put(Document("b", "b.md"), chunks_for("b", ["half written"]))
            raise RuntimeError("boom")
        assert store.versions() == before
        assert "b" not in store.documents()


def test_the_state_root_is_a_merkle_root_of_the_sorted_chunk_hashes() -> None:
    with SqliteStore() as one, SqliteStore() as other:
        # Same content written in a different order and in different batches: the same root.
        put(one, "a", "alpha text", "beta text")
        put(one, "b", "gamma text")
        with other.write() as writer:
            writer.put(Document("b", "docs/b.md"), chunks_for("b", ["gamma text"]))
            writer.put(Document("a", "docs/a.md"), chunks_for("a", ["alpha text", "beta text"]))
        assert one.get_latest_state_root() == other.get_latest_state_root()
        # Removing and restoring content returns to the earlier root; it resolves to the first version.
        root = one.get_latest_state_root()
        with one.write() as writer:
            writer.remove("b")
        put(one, "b", "gamma text")
        assert one.get_latest_state_root() == root
        assert one.resolve(root).version == 2


def test_merkle_root_by_hand() -> None:
    leaves = [raw_digest(bytes([n])) for n in range(3)]
    ordered = sorted(leaves)
    top = raw_digest(b"\x01" + raw_digest(b"\x01" + ordered[0] + ordered[1]) + ordered[2])
    assert merkle_root(reversed(leaves)) == f"{HASH_ALGORITHM}:{top.hex()}"
    assert merkle_root(leaves[:1]) == f"{HASH_ALGORITHM}:{leaves[0].hex()}"


def test_resolve_accepts_full_bare_and_prefix_roots() -> None:
    with SqliteStore() as store:
        put(store, "a", "alpha")
        root = store.get_latest_state_root()
        digits = root.split(":", 1)[1]
        assert store.resolve(root).version == 1
        assert store.resolve(digits).version == 1
        assert store.resolve(digits[:8].upper()).version == 1
        with pytest.raises(UnknownStateRootError, match="no version"):
            store.resolve("0" * 64 if not digits.startswith("0" * 8) else "f" * 64)
        with pytest.raises(UnknownStateRootError, match="at least 8"):
            store.resolve(digits[:7])
        with pytest.raises(UnknownStateRootError, match="hex digits"):
            store.resolve("not-a-root")
        with pytest.raises(UnknownStateRootError, match="md5"):
            store.resolve("md5:" + digits)


def test_same_query_same_root_gives_byte_identical_context_after_later_writes(tmp_path: Path) -> None:
    rng = random.Random(5)
    with SqliteStore(tmp_path / "kb.db") as store:
        for index in range(12):
            put(store, f"d{index}", *(random_text(rng) for _ in range(4)))
        root = store.get_latest_state_root()
        budget = TokenBudget(1100)
        clock = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731
        pinned = store.snapshot(root)
        first = assemble_context("rotate the vault key", pinned.pin(), budget, clock=clock)
        text = format_context(first)
        assert first.metadata is not None and first.metadata.state_root == root
        # Later writes: new documents sharing the query words, a replaced and a removed document.
        for index in range(12, 30):
            put(store, f"d{index}", *(random_text(rng) for _ in range(4)))
        put(store, "d3", "rotate the vault key rotate the vault key")
        with store.write() as writer:
            writer.remove("d0")
        assert store.get_latest_state_root() != root
        again = assemble_context("rotate the vault key", store.snapshot(root).pin(), budget, clock=clock)
        assert format_context(again) == text
        assert again == first
        # Reopening the file does not change it either.
    with SqliteStore(tmp_path / "kb.db") as reopened:
        third = assemble_context("rotate the vault key", reopened.snapshot(root).pin(), budget, clock=clock)
        assert format_context(third) == text
        latest = assemble_context("rotate the vault key", reopened, budget)
        assert format_context(latest) != text


def test_assemble_context_on_a_store_records_the_latest_root_and_is_deterministic() -> None:
    with SqliteStore() as store:
        put(store, "a", "rotate the primary key", "revoke the old key")
        put(store, "b", "the vault seals itself on restart")
        context = assemble_context("rotate key", store, TokenBudget(1000))
        assert context.metadata is not None
        assert context.metadata.state_root == store.get_latest_state_root()
        assert context.chunk_ids[0] == "a#0"
        assert verify_determinism("rotate key", store, TokenBudget(1000))


def test_the_context_cache_keys_a_store_by_its_state_root() -> None:
    with SqliteStore() as store:
        put(store, "a", "rotate the primary key")
        cache = ContextCache()
        first = cache.assemble("rotate", store, TokenBudget(1000))
        assert cache.assemble("rotate", store, TokenBudget(1000)) is first
        put(store, "b", "rotate the secondary key")
        third = cache.assemble("rotate", store, TokenBudget(1000))
        assert third is not first and (cache.hits, cache.misses) == (1, 2)
        assert third.metadata is not None and third.metadata.state_root == store.get_latest_state_root()


def test_document_replacement_keeps_the_old_version_readable() -> None:
    with SqliteStore() as store:
        put(store, "a", "the old text about keys")
        old = store.get_latest_state_root()
        put(store, "a", "the new text about vaults")
        assert store.documents(old)["a"][0] == "docs/a.md"
        old_hits = hybrid_search("keys", store, state_root=old)
        new_hits = hybrid_search("keys vaults", store)
        assert [hit.chunk.text for hit in old_hits] == ["the old text about keys"]
        assert [hit.chunk.text for hit in new_hits] == ["the new text about vaults"]


def test_writer_input_errors() -> None:
    with SqliteStore() as store, store.write() as writer:
        with pytest.raises(CupelTypeError, match="document must be a Document"):
            writer.put("a", [])  # type: ignore[arg-type]
        with pytest.raises(CupelTypeError, match=r"chunks\[0\] must be a Chunk"):
            writer.put(Document("a", "a.md"), ["text"])  # type: ignore[list-item]
        with pytest.raises(InvalidConfigurationError, match="duplicate chunk ids"):
            writer.put(Document("a", "a.md"), [Chunk("x", "one", 0), Chunk("x", "two", 1)])


def test_a_store_refuses_a_different_embedder(tmp_path: Path) -> None:
    from cupel.assembly import HashingEmbedder

    SqliteStore(tmp_path / "kb.db", embedder=HashingEmbedder()).close()
    with pytest.raises(InvalidConfigurationError, match="built with embedder 'cupel-hashing-ngrams-v1/512'"):
        SqliteStore(tmp_path / "kb.db", embedder=HashingEmbedder(64))
    with SqliteStore(tmp_path / "kb.db") as reopened:  # the built-in embedder comes back by itself
        assert isinstance(reopened.embedder, HashingEmbedder) and reopened.dimension == 512
    SqliteStore(tmp_path / "plain.db").close()
    with pytest.raises(InvalidConfigurationError, match="built without vectors, got 'cupel-hashing"):
        SqliteStore(tmp_path / "plain.db", embedder=HashingEmbedder())
    with pytest.raises(InvalidConfigurationError, match="vector_backend must be one of numpy, sqlite-vec"):
        SqliteStore(tmp_path / "kb.db", vector_backend="faiss")
    (tmp_path / "text.db").write_text("not a database")
    with pytest.raises(InvalidConfigurationError, match=r"text.db: not a cupel store \(not a SQLite"):
        SqliteStore(tmp_path / "text.db")


def test_a_closed_store_says_so() -> None:
    store = SqliteStore()
    store.close()
    with pytest.raises(InvalidConfigurationError, match="is closed"):
        store.latest()


def test_file_stores_use_the_write_ahead_log(tmp_path: Path) -> None:
    SqliteStore(tmp_path / "kb.db").close()
    with sqlite3.connect(tmp_path / "kb.db") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_readers_run_alongside_a_writer(tmp_path: Path) -> None:
    path = tmp_path / "kb.db"
    with SqliteStore(path) as store:
        put(store, "seed", "rotate the vault key")
        pinned = store.get_latest_state_root()
        expected = [hit.chunk.id for hit in hybrid_search("vault key", store, state_root=pinned)]
        errors: list[BaseException] = []
        stop = threading.Event()

        def read() -> None:
            # A second store object: its own connections, as another process would have.
            with SqliteStore(path, read_only=True) as reader:
                while not stop.is_set():
                    try:
                        got = [hit.chunk.id for hit in hybrid_search("vault key", reader, state_root=pinned)]
                        assert got == expected
                        latest = reader.latest()
                        assert reader.verify(latest.state_root)
                    except BaseException as error:  # pragma: no cover - reported below
                        errors.append(error)
                        return

        threads = [threading.Thread(target=read) for _ in range(2)]
        for thread in threads:
            thread.start()
        for index in range(15):
            put(store, f"d{index}", f"vault key number {index}", "rotate it often")
        stop.set()
        for thread in threads:
            thread.join()
        assert errors == []
        assert store.latest().version == 16


def test_connections_of_finished_threads_are_closed() -> None:
    with SqliteStore() as store:
        put(store, "a", "rotate the vault key")

        def search() -> None:
            hybrid_search("vault", store, parallel=True)

        for _ in range(3):
            threads = [threading.Thread(target=search) for _ in range(5)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        # Open connections: this thread's, the two search workers', and the last batch's until pruned.
        assert len(store._connections) <= 3 + 5
        last = threading.Thread(target=search)
        last.start()
        last.join()
        assert len(store._connections) <= 3 + 1
        assert [hit.chunk.id for hit in hybrid_search("vault", store)] == ["a#0"]


def test_a_new_modification_time_is_a_new_state_root() -> None:
    with SqliteStore() as store:
        chunks = chunks_for("a", ["rotate the primary key"])
        for day in (1, 2, 2):
            with store.write() as writer:
                writer.put(Document("a", "docs/a.md", datetime(2026, 1, day, tzinfo=UTC)), chunks)
        roots = [version.state_root for version in store.versions()]
        assert len(roots) == 3 and len(set(roots)) == 3
        (hit,) = hybrid_search("rotate", store)
        assert hit.document.modified_at == datetime(2026, 1, 2, tzinfo=UTC)
