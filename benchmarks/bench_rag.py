"""The embedded store beside the engines a user would otherwise pick: build time and query latency.

Usage: ``python benchmarks/bench_rag.py [--json] [--chunks 20000] [--queries 40] [--rounds 3]``.

One synthetic corpus (documents of 50 chunks of about 120 words from a Zipf-distributed vocabulary) is
built, interleaved round by round, into:

* a default :class:`~cupel.assembly.SqliteStore` file (no embedder, Porter stemming), in one write;
* raw SQLite FTS5 (``tokenize='porter unicode61'``, the texts in one ``executemany`` and one transaction);
* tantivy (``en_stem``) and bm25s, when installed (``pip install tantivy bm25s``; absent peers are skipped).

Then every query is timed on each engine in turn (the order rotating per query), so machine noise hits
all alike. Lexical top 50: ``StoreSnapshot.lexical`` (chunk objects with their text) against FTS5
``MATCH … ORDER BY rank LIMIT 50`` fetching rowid, ``bm25()`` and text, tantivy's ``search`` with the
hits' documents, and bm25s's ``retrieve``. Hybrid: ``hybrid_search`` on a store built with
``HashingEmbedder`` vectors against the same pipeline by hand (FTS5 top 50, the query embedded by the same
embedder, numpy cosine over the same vectors top 50, reciprocal rank fusion, texts fetched). Reports
medians, p95 and the ratio of cupel's median to the peer's; the targets are build ≤ 2x raw FTS5, lexical
p50 ≤ 1.5x FTS5 ``bm25()``, hybrid p50 ≤ 1.5x FTS5 + numpy + RRF.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

from cupel.assembly import (
    Chunk,
    Document,
    HashingEmbedder,
    SqliteStore,
    TokenBudget,
    assemble_context,
    hybrid_search,
)

CHUNKS_PER_DOCUMENT = 50
TOP = 50
TARGETS = {"build": 2.0, "lexical": 1.5, "hybrid": 1.5}


def vocabulary(size: int, rng: random.Random) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(letters) for _ in range(rng.randint(3, 10))))
    return sorted(words)


def corpus(chunks: int, seed: int = 7) -> tuple[list[tuple[Document, list[Chunk]]], list[str]]:
    rng = random.Random(seed)
    words = vocabulary(5000, rng)
    weights = [1.0 / (rank + 1) for rank in range(len(words))]
    documents = []
    for number in range((chunks + CHUNKS_PER_DOCUMENT - 1) // CHUNKS_PER_DOCUMENT):
        doc_id = f"docs/topic-{number:05d}.md"
        # Each document leans on a few topic words, so queries have real answers.
        topic = rng.sample(words[200:], 5)
        parts = []
        offset = 0
        for sequence in range(min(CHUNKS_PER_DOCUMENT, chunks - number * CHUNKS_PER_DOCUMENT)):
            text = " ".join(rng.choices(words, weights, k=110) + rng.choices(topic, k=10))
            parts.append(Chunk(f"{doc_id}#{sequence}", text, sequence, offset))
            offset += len(text) + 2
        documents.append((Document(doc_id, doc_id), parts))
    queries = [" ".join(rng.sample(words[100:2000], rng.randint(2, 5))) for _ in range(200)]
    return documents, queries


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def optional(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


# -- builds -----------------------------------------------------------------------------------------


def build_cupel(path: str, documents: list[tuple[Document, list[Chunk]]], embedder: object = None) -> None:
    with SqliteStore(path, embedder=embedder) as store, store.write() as writer:
        for document, chunks in documents:
            writer.put(document, chunks)


def build_fts5(path: str, texts: list[str]) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("CREATE VIRTUAL TABLE docs USING fts5 (text, tokenize='porter unicode61')")
    connection.execute("BEGIN")
    connection.executemany("INSERT INTO docs (rowid, text) VALUES (?, ?)", enumerate(texts, start=1))
    connection.execute("COMMIT")
    connection.close()


def build_tantivy(tantivy: Any, path: str, texts: list[str]) -> Any:
    builder = tantivy.SchemaBuilder()
    builder.add_integer_field("id", stored=True, indexed=True)
    builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
    index = tantivy.Index(builder.build(), path=path)
    writer = index.writer()
    for number, text in enumerate(texts, start=1):
        writer.add_document(tantivy.Document(id=number, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def build_bm25s(bm25s: Any, texts: list[str]) -> Any:
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)
    return retriever


# -- queries ----------------------------------------------------------------------------------------


def fts5_top(connection: sqlite3.Connection, query: str, k: int) -> list[tuple[int, float, str]]:
    expression = " OR ".join(f'"{term}"' for term in query.split())
    rows: list[tuple[int, float, str]] = connection.execute(
        "SELECT rowid, bm25(docs), text FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (expression, k)
    ).fetchall()
    return rows


def hand_hybrid(
    connection: sqlite3.Connection, np: Any, embedder: HashingEmbedder, rowids: Any, matrix: Any, query: str
) -> list[tuple[int, str]]:
    """FTS5 top 50 + numpy cosine top 50 over the same vectors + reciprocal rank fusion, texts fetched."""
    lexical = [
        row[0]
        for row in connection.execute(
            "SELECT rowid FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?",
            (" OR ".join(f'"{term}"' for term in query.split()), TOP),
        )
    ]
    vector = np.asarray(embedder([query])[0], dtype=np.float32)
    scores = matrix @ vector
    best = np.argpartition(-scores, TOP)[:TOP]
    semantic = [int(rowids[index]) for index in best[np.argsort(-scores[best], kind="stable")]]
    fused: dict[int, float] = {}
    for ranked in (semantic, lexical):
        for rank, rowid in enumerate(ranked, start=1):
            fused[rowid] = fused.get(rowid, 0.0) + 1.0 / (60 + rank)
    chosen = sorted(fused, key=lambda rowid: -fused[rowid])[: 2 * TOP]
    texts = dict(
        connection.execute(
            f"SELECT rowid, text FROM docs WHERE rowid IN ({','.join('?' * len(chosen))})", chosen
        ).fetchall()
    )
    return [(rowid, texts[rowid]) for rowid in chosen]


def timed(
    operations: dict[str, Callable[[str], object]], queries: list[str], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per call of each operation, interleaved query by query in a rotating order."""
    samples: dict[str, list[float]] = {name: [] for name in operations}
    names = list(operations)
    turn = 0
    for _ in range(rounds):
        for query in queries:
            turn += 1
            for name in names[turn % len(names) :] + names[: turn % len(names)]:
                started = time.perf_counter()
                operations[name](query)
                samples[name].append((time.perf_counter() - started) * 1000)
    return samples


def summary(samples: list[float]) -> dict[str, float]:
    return {"p50_ms": round(statistics.median(samples), 3), "p95_ms": round(percentile(samples, 0.95), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="builds, and passes over the queries")
    args = parser.parse_args(argv)

    documents, queries = corpus(args.chunks)
    queries = queries[: args.queries]
    texts = [chunk.text for _, chunks in documents for chunk in chunks]
    tantivy, bm25s, np = optional("tantivy"), optional("bm25s"), optional("numpy")
    result: dict[str, Any] = {
        "chunks": args.chunks,
        "queries": len(queries),
        "rounds": args.rounds,
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "peers": {
            "tantivy": "installed" if tantivy else "absent (skipped)",
            "bm25s": "installed" if bm25s else "absent (skipped)",
            "numpy": "installed" if np else "absent (hybrid comparison skipped)",
        },
    }
    workdir = tempfile.mkdtemp()
    try:
        # Builds, interleaved round by round.
        builds: dict[str, list[float]] = {"cupel": [], "fts5": []}
        if tantivy:
            builds["tantivy"] = []
        if bm25s:
            builds["bm25s"] = []
        for round_number in range(args.rounds):
            for name in builds:
                target = os.path.join(workdir, f"{name}-{round_number}")
                started = time.perf_counter()
                if name == "cupel":
                    build_cupel(target + ".db", documents)
                elif name == "fts5":
                    build_fts5(target + ".db", texts)
                elif name == "tantivy":
                    os.mkdir(target)
                    build_tantivy(tantivy, target, texts)
                else:
                    build_bm25s(bm25s, texts)
                builds[name].append(time.perf_counter() - started)
        medians = {name: statistics.median(times) for name, times in builds.items()}
        result["build_seconds"] = {name: round(value, 3) for name, value in medians.items()}
        result["build_ratio_vs_fts5"] = {
            name: round(value / medians["fts5"], 2) for name, value in medians.items() if name != "fts5"
        }

        store = SqliteStore(os.path.join(workdir, "cupel-0.db"), read_only=True)
        fts = sqlite3.connect(os.path.join(workdir, "fts5-0.db"))
        snapshot = store.snapshot()
        lexical: dict[str, Callable[[str], object]] = {
            "cupel lexical": lambda query: snapshot.lexical(query, TOP),
            "cupel hybrid_search (default store)": lambda query: hybrid_search(query, store),
            "fts5 bm25()": lambda query: fts5_top(fts, query, TOP),
        }
        if tantivy:
            index = tantivy.Index.open(os.path.join(workdir, "tantivy-0"))
            searcher = index.searcher()

            def tantivy_top(query: str) -> object:
                hits = searcher.search(index.parse_query(query, ["text"]), TOP).hits
                return [(score, searcher.doc(address)["text"][0]) for score, address in hits]

            lexical["tantivy"] = tantivy_top
        if bm25s:
            retriever = build_bm25s(bm25s, texts)
            lexical["bm25s"] = lambda query: retriever.retrieve(
                bm25s.tokenize([query], show_progress=False), k=TOP, show_progress=False
            )
        for query in queries[:3]:  # warm caches alike
            for operation in lexical.values():
                operation(query)
        samples = timed(lexical, queries, args.rounds)
        result["lexical_top50"] = {name: summary(times) for name, times in samples.items()}
        base = statistics.median(samples["fts5 bm25()"])
        result["lexical_ratio_vs_fts5"] = {
            name: round(statistics.median(times) / base, 2)
            for name, times in samples.items()
            if name != "fts5 bm25()"
        }
        # The same ranking as FTS5 (same tokenizer, same formula): the 50 best scores agree exactly. The
        # store may return more than 50, keeping every chunk tied with the 50th.
        same = [
            [hit[2] for hit in snapshot.lexical(q, TOP)][:TOP] == [-row[1] for row in fts5_top(fts, q, TOP)]
            for q in queries
        ]
        result["lexical_same_scores_as_fts5"] = round(sum(same) / len(same), 3)

        if np:
            started = time.perf_counter()
            embedder = HashingEmbedder()
            vector_path = os.path.join(workdir, "vectors.db")
            build_cupel(vector_path, documents, embedder)
            result["build_seconds_with_hashing_embedder"] = round(time.perf_counter() - started, 2)
            vectors = SqliteStore(vector_path, read_only=True)
            rows = (
                sqlite3.connect(vector_path)
                .execute("SELECT rowid, vector FROM vectors ORDER BY rowid")
                .fetchall()
            )
            rowids = np.array([row[0] for row in rows], dtype=np.int64)
            matrix = np.frombuffer(b"".join(row[1] for row in rows), dtype="<f4").reshape(len(rows), -1)
            hybrid: dict[str, Callable[[str], object]] = {
                "cupel hybrid_search": lambda query: hybrid_search(query, vectors),
                "fts5 + numpy cosine + rrf": lambda query: hand_hybrid(
                    fts, np, embedder, rowids, matrix, query
                ),
            }
            for query in queries[:3]:
                for operation in hybrid.values():
                    operation(query)
            samples = timed(hybrid, queries, args.rounds)
            result["hybrid"] = {name: summary(times) for name, times in samples.items()}
            result["hybrid_ratio"] = round(
                statistics.median(samples["cupel hybrid_search"])
                / statistics.median(samples["fts5 + numpy cosine + rrf"]),
                2,
            )
            assembly: dict[str, Callable[[str], object]] = {
                "assemble_context 2k (default store)": lambda query: assemble_context(
                    query, store, TokenBudget(2000)
                ),
                "assemble_context 8k (default store)": lambda query: assemble_context(
                    query, store, TokenBudget(8000)
                ),
            }
            samples = timed(assembly, queries, 1)
            result["assembly"] = {name: summary(times) for name, times in samples.items()}
            vectors.close()
        store.close()
        fts.close()
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    ratios = {
        "build": result["build_ratio_vs_fts5"]["cupel"],
        "lexical": result["lexical_ratio_vs_fts5"]["cupel lexical"],
    }
    if "hybrid_ratio" in result:
        ratios["hybrid"] = result["hybrid_ratio"]
    result["targets"] = {
        name: {"ratio": ratio, "target": TARGETS[name], "met": ratio <= TARGETS[name]}
        for name, ratio in ratios.items()
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.chunks} chunks; sqlite {result['sqlite']}; peers {result['peers']}")
    print("build seconds (median):", result["build_seconds"], "ratio vs FTS5:", result["build_ratio_vs_fts5"])
    for section in ("lexical_top50", "hybrid", "assembly"):
        for name, row in result.get(section, {}).items():
            print(f"  {section:14} {name:38} p50 {row['p50_ms']:8.3f} ms  p95 {row['p95_ms']:8.3f} ms")
    print("lexical ratio vs FTS5 bm25():", result["lexical_ratio_vs_fts5"])
    for name, row in result["targets"].items():
        print(f"target {name}: {row['ratio']}x (<= {row['target']}x) {'met' if row['met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
