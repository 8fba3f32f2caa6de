"""Lexical (FTS5 BM25), semantic (cosine) and hybrid search over a SqliteStore; parallel_assemble."""

from __future__ import annotations

import math
import random
import subprocess
import sys
from datetime import UTC, datetime

import numpy as np
import pytest

from cupel.assembly import (
    AssemblyConfig,
    Chunk,
    Document,
    EncodeAdapter,
    HashingEmbedder,
    PackingStrategy,
    SearchParams,
    SqliteStore,
    TokenBudget,
    as_embedder,
    assemble_context,
    format_context,
    hybrid_search,
    lexical_terms,
    parallel_assemble,
    reciprocal_rank_fusion,
)
from cupel.assembly.lexical import BM25_B, BM25_K1
from cupel.assembly.retriever import StaticRetriever
from cupel.assembly.semantic import sqlite_vec_unavailable
from cupel.errors import CupelTypeError, InvalidConfigurationError

WORDS = [
    *("key", "rotate", "rotation", "vault", "token", "deploy", "revoke", "primary", "secondary", "audit"),
    *("scope", "graph", "seal", "restart", "lease", "cache", "index", "shard", "replica", "quorum"),
    *("leader", "follower", "snapshot"),
]
CLOCK = lambda: datetime(2026, 1, 1, tzinfo=UTC)  # noqa: E731


def build(store: SqliteStore, documents: dict[str, list[str]], paths: dict[str, str] | None = None) -> None:
    with store.write() as writer:
        for doc_id, texts in documents.items():
            path = (paths or {}).get(doc_id, f"docs/{doc_id}.md")
            writer.put(
                Document(doc_id, path),
                [Chunk(f"{doc_id}#{n}", text, n, n * 64) for n, text in enumerate(texts)],
            )


def random_store(seed: int, documents: int = 15) -> SqliteStore:
    rng = random.Random(seed)
    store = SqliteStore(embedder=HashingEmbedder())
    build(
        store,
        {
            f"d{index}": [
                " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 25)))
                for _ in range(rng.randint(1, 4))
            ]
            for index in range(documents)
        },
        # Few distinct paths for many ids would break grouping; keep one path per id, some sharing prefixes.
        {f"d{index}": f"{rng.choice(['a', 'b', 'c'])}/d{index}.md" for index in range(documents)},
    )
    return store


def test_lexical_terms_are_documented_word_runs() -> None:
    assert lexical_terms("Key-Rotation_v2, ÉTÉ ﬁle  42") == ["key", "rotation", "v2", "ete", "file", "42"]
    assert lexical_terms("rotating the rotation", stemming=True) == ["rotat", "the", "rotat"]


def test_bm25_equals_fts5_bm25_on_a_single_version() -> None:
    with SqliteStore() as store:
        rng = random.Random(3)
        build(store, {f"d{i}": [" ".join(rng.choices(WORDS, k=rng.randint(2, 30)))] for i in range(40)})
        snapshot = store.snapshot()
        connection = store._connection()
        for query in ["vault", "rotate key", "quorum leader snapshot", "lease seal audit cache"]:
            ours = {hit[0].id: hit[2] for hit in snapshot.lexical(query, 1000)}
            match = " OR ".join(f'"{term}"' for term in dict.fromkeys(lexical_terms(query)))
            fts = connection.execute(
                "SELECT c.chunk_id, -bm25(chunks_fts) FROM chunks_fts "
                "JOIN chunks c ON c.rowid = chunks_fts.rowid WHERE chunks_fts MATCH ?",
                (match,),
            ).fetchall()
            assert len(fts) == len(ours) > 0
            # FTS5 ranks the newest version itself; the exact path must give the same floats.
            assert dict(fts) == ours, query


def test_bm25_by_hand() -> None:
    with SqliteStore() as store:
        build(store, {"a": ["vault vault key"], "b": ["key seal"], "c": ["seal lease restart"]})
        (hit,) = store.snapshot().lexical("vault", 10)
        n, found, length, average, tf = 3, 1, 3, 8 / 3, 2
        idf = math.log((n - found + 0.5) / (found + 0.5))
        expected = idf * tf * (BM25_K1 + 1) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
        assert hit[0].id == "a#0" and math.isclose(hit[2], expected)


def test_lexical_scores_of_a_pinned_version_do_not_drift_after_later_writes() -> None:
    with SqliteStore() as store:
        build(store, {"a": ["vault key"], "b": ["seal lease"], "c": ["vault restart"]})
        root = store.get_latest_state_root()
        before = store.snapshot(root).lexical("vault key", 10)
        build(store, {f"x{i}": ["vault vault vault"] for i in range(20)})
        assert store.snapshot(root).lexical("vault key", 10) == before
        assert store.snapshot().lexical("vault key", 10) != before


def test_lexical_ties_break_by_path_then_sequence() -> None:
    with SqliteStore() as store:
        build(
            store,
            {"z": ["seal the vault"], "a": ["seal the vault"], "m": ["seal the vault", "seal the vault"]},
        )
        hits = hybrid_search("vault", store, SearchParams(semantic_k=0, lexical_k=3))
        assert [hit.chunk.id for hit in hits] == ["a#0", "m#0", "m#1"]
        assert len({hit.lexical_score for hit in hits}) == 1


def test_semantic_ties_break_by_path_and_the_cut_keeps_the_best_ordered() -> None:
    with SqliteStore(embedder=HashingEmbedder()) as store:
        build(store, {f"d{i}": ["rotate the vault key"] for i in (5, 1, 9, 3)}, {"d5": "e.md", "d1": "b.md"})
        hits = hybrid_search("rotate vault keys", store, SearchParams(semantic_k=2, lexical_k=0))
        assert [hit.document.path for hit in hits] == ["b.md", "docs/d3.md"]
        assert hits[0].semantic_score == hits[1].semantic_score


def test_the_hashing_embedder_relates_word_forms_and_is_stable_across_processes() -> None:
    embedder = HashingEmbedder()
    rotate, rotation, lease = embedder(["rotate the keys", "key rotation", "lease restart"])
    cosine = lambda u, v: sum(a * b for a, b in zip(u, v, strict=True))  # noqa: E731
    assert cosine(rotate, rotation) > 0.2 > 0.05 > abs(cosine(rotate, lease))
    assert math.isclose(cosine(rotate, rotate), 1.0)
    assert embedder(["!!! ---"]) == [[0.0] * 512]
    script = "from cupel.assembly import HashingEmbedder; print(HashingEmbedder()(['key rotation'])[0][:64])"
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            env={"PYTHONHASHSEED": seed},
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert outputs == {f"{rotation[:64]}\n"}


def test_embedder_adapters_for_encode_and_embed_models() -> None:
    class EncodeModel:  # the shape of sentence-transformers' SentenceTransformer.encode
        model_name = "tiny"

        def encode(self, texts: list[str]) -> np.ndarray:
            return np.array([[len(text), 1.0] for text in texts], dtype=np.float32)

    class EmbedModel:  # the shape of fastembed's TextEmbedding.embed (a generator of arrays)
        def embed(self, texts: list[str]):  # type: ignore[no-untyped-def]
            for text in texts:
                yield np.array([1.0, text.count("a")])

    encode = as_embedder(EncodeModel())
    assert isinstance(encode, EncodeAdapter) and encode(["ab", "c"]) == [[2.0, 1.0], [1.0, 1.0]]
    assert "tiny" in encode.name  # type: ignore[attr-defined]
    assert as_embedder(EmbedModel())(["aa"]) == [[1.0, 2.0]]
    with SqliteStore(embedder=EncodeModel()) as store:
        build(store, {"a": ["x" * 5], "b": ["y"]})
        assert store.dimension == 2
        assert [hit[0].id for hit in store.snapshot().semantic("zzzzz", 1)] == ["a#0"]
    with pytest.raises(CupelTypeError, match="embedder must be a callable"):
        as_embedder(42)


def test_a_broken_embedder_is_reported() -> None:
    with pytest.raises(InvalidConfigurationError, match="returned 0 vectors for 1 texts"):
        SqliteStore(embedder=lambda texts: [])
    with SqliteStore(embedder=lambda texts: [[1.0, float(len(t))] for t in texts]) as store:
        store.embedder = lambda texts: [[1.0] for _ in texts]
        with (
            pytest.raises(InvalidConfigurationError, match="dimension 1 at index 0, expected 2"),
            store.write() as w,
        ):
            w.put(Document("a", "a.md"), [Chunk("a#0", "text", 0)])


def test_hybrid_search_fuses_both_channels_by_rrf() -> None:
    with SqliteStore(embedder=HashingEmbedder()) as store:
        build(store, {"a": ["rotate the vault key", "restart the leader"], "b": ["key rotation policy"]})
        snapshot = store.snapshot()
        params = SearchParams(semantic_k=3, lexical_k=3, top_k=2)
        hits = hybrid_search("rotate vault key", snapshot, params)
        assert len(hits) == 2
        from dataclasses import replace

        semantic = [
            replace(h, score=h.semantic_score)
            for h in hybrid_search("rotate vault key", snapshot, SearchParams(3, 0))
        ]
        lexical = [
            replace(h, score=h.lexical_score)
            for h in hybrid_search("rotate vault key", snapshot, SearchParams(0, 3))
        ]
        assert hits == reciprocal_rank_fusion(semantic, lexical)[:2]
        assert hits[0].chunk.id == "a#0" and hits[0].semantic_score and hits[0].lexical_score


def test_search_params_are_validated() -> None:
    assert SearchParams() == SearchParams(50, 50, 100, 60.0)
    with pytest.raises(InvalidConfigurationError, match="top_k must be >= 1"):
        SearchParams(top_k=0)
    with pytest.raises(InvalidConfigurationError, match="semantic_k must be >= 0"):
        SearchParams(semantic_k=-1)
    with pytest.raises(CupelTypeError, match="substrate must have a snapshot"):
        hybrid_search("q", StaticRetriever([]))  # type: ignore[arg-type]


def test_queries_without_terms_or_features_find_nothing() -> None:
    with SqliteStore() as store:
        build(store, {"a": ["rotate the vault key"]})
        assert hybrid_search("!!! ???", store) == ()
        assert hybrid_search("", store) == ()
    with SqliteStore() as empty:
        assert hybrid_search("vault", empty) == ()


@pytest.mark.parametrize("seed", range(6))
def test_parallel_assemble_equals_the_sequential_assembly_on_random_stores(seed: int) -> None:
    rng = random.Random(seed)
    with random_store(seed) as store:
        query = " ".join(rng.sample(WORDS, 3))
        params = SearchParams(rng.randint(1, 20), rng.randint(1, 20), rng.randint(1, 30))
        budget = TokenBudget(rng.randint(820, 1100), per_doc_overhead=rng.randint(0, 12))
        config = AssemblyConfig(packing_strategy=rng.choice(list(PackingStrategy)))
        retriever_sequential = store.snapshot()
        from cupel.assembly import HybridRetriever

        sequential = assemble_context(
            query, HybridRetriever(retriever_sequential, params), budget, None, config, clock=CLOCK
        )
        parallel = parallel_assemble(query, store, budget, None, config, params=params, clock=CLOCK)
        assert parallel == sequential
        assert format_context(parallel) == format_context(sequential)
        assert hybrid_search(query, store, params, parallel=True) == hybrid_search(query, store, params)


SQLITE_VEC_UNAVAILABLE = sqlite_vec_unavailable()


@pytest.mark.skipif(SQLITE_VEC_UNAVAILABLE is not None, reason=f"sqlite-vec: {SQLITE_VEC_UNAVAILABLE}")
def test_sqlite_vec_backend_matches_numpy() -> None:
    with (
        random_store(11, documents=30) as store,
        SqliteStore(vector_backend="sqlite-vec", embedder=HashingEmbedder()) as vec,
    ):
        rows = (
            store._connection()
            .execute(
                "SELECT d.doc_id, d.path, c.chunk_id, c.text, c.sequence, c.byte_offset FROM chunks c "
                "JOIN documents d ON d.row = c.doc_row ORDER BY c.rowid"
            )
            .fetchall()
        )
        documents: dict[str, tuple[str, list[Chunk]]] = {}
        for doc_id, path, chunk_id, text, sequence, offset in rows:
            documents.setdefault(doc_id, (path, []))[1].append(Chunk(chunk_id, text, sequence, offset))
        with vec.write() as writer:
            for doc_id, (path, chunks) in documents.items():
                writer.put(Document(doc_id, path), chunks)
        assert vec.get_latest_state_root() == store.get_latest_state_root()
        for query in ["rotate vault", "quorum leader", "cache shard replica"]:
            ours = hybrid_search(query, store, SearchParams(10, 0))
            theirs = hybrid_search(query, vec, SearchParams(10, 0))
            for mine, other in zip(ours, theirs, strict=True):
                assert mine.semantic_score is not None and other.semantic_score is not None
                assert math.isclose(mine.semantic_score, other.semantic_score, abs_tol=1e-5)
            # Same chunks wherever scores are not within float32 noise of each other.
            distinct = [
                h.chunk.id
                for h in ours
                if sum(math.isclose(h.semantic_score or 0, o.semantic_score or 0, abs_tol=1e-5) for o in ours)
                == 1
            ]
            assert set(distinct) <= {h.chunk.id for h in theirs}


@pytest.mark.parametrize("seed", range(4))
def test_older_versions_rank_exactly_as_fts5_ranked_them_when_they_were_newest(seed: int) -> None:
    # The newest version is ranked by FTS5's bm25(); older ones by the exact path over both indexes.
    rng = random.Random(seed)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 4))) for _ in range(8)] + ["rotating rotations"]
    with SqliteStore(stemming=bool(seed % 2)) as store:
        seen: dict[str, dict[str, list[tuple[str, float]]]] = {}
        for _ in range(5):
            with store.write() as writer:
                for _ in range(rng.randint(1, 6)):
                    doc = f"d{rng.randint(0, 9)}"
                    if rng.random() < 0.2:
                        writer.remove(doc)
                        continue
                    texts = [
                        " ".join(rng.choices(WORDS, k=rng.randint(1, 20))) for _ in range(rng.randint(1, 3))
                    ]
                    writer.put(
                        Document(doc, f"docs/{doc}.md"),
                        [Chunk(f"{doc}#{n}", t, n) for n, t in enumerate(texts)],
                    )
            snapshot = store.snapshot()
            seen[snapshot.state_root()] = {
                query: sorted((hit[0].id, hit[2]) for hit in snapshot.lexical(query, 5)) for query in queries
            }
        # Same chunks, same floats (ties at the cut included); the order of ties is the caller's to break.
        for root, expected in seen.items():
            pinned = store.snapshot(root)
            assert {
                query: sorted((hit[0].id, hit[2]) for hit in pinned.lexical(query, 5)) for query in queries
            } == expected
