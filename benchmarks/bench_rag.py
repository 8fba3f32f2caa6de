"""RAG end to end on the embedded store: index build time, then hybrid_search and assemble_context latency.

Usage: ``python benchmarks/bench_rag.py [--json] [--chunks 20000] [--queries 40] [--rounds 3]``.

Builds a file-backed :class:`~cupel.assembly.SqliteStore` of ``--chunks`` synthetic chunks (documents of 50
chunks of about 120 words from a Zipf-distributed vocabulary, embedded with the default HashingEmbedder)
in one write, then times, per query: ``hybrid_search`` (sequential and with both searches in parallel
threads), ``assemble_context`` at total budgets of 2,000 and 8,000 tokens, and ``parallel_assemble`` at
8,000. The same database is opened twice, with the numpy vector backend and with sqlite-vec (when this
Python's sqlite3 can load extensions), and the two are timed interleaved, query by query, so machine
noise hits both alike. Reports p50/p95 in milliseconds and the sqlite-vec / numpy ratio of medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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
    SqliteStore,
    TokenBudget,
    assemble_context,
    hybrid_search,
    parallel_assemble,
)
from cupel.assembly.semantic import sqlite_vec_unavailable

CHUNKS_PER_DOCUMENT = 50


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--chunks", type=int, default=20000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    args = parser.parse_args(argv)

    documents, queries = corpus(args.chunks)
    queries = queries[: args.queries]
    unavailable = sqlite_vec_unavailable()
    backends = ["numpy"] if unavailable else ["numpy", "sqlite-vec"]
    result: dict[str, Any] = {
        "chunks": args.chunks,
        "documents": len(documents),
        "queries": len(queries),
        "rounds": args.rounds,
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "sqlite_vec": "available" if unavailable is None else f"unavailable: {unavailable}",
    }
    with tempfile.TemporaryDirectory() as workdir:
        path = os.path.join(workdir, "bench.db")
        with SqliteStore(path) as store:
            started = time.perf_counter()
            with store.write() as writer:
                for document, chunks in documents:
                    writer.put(document, chunks)
            result["build_seconds"] = round(time.perf_counter() - started, 2)
            result["build_chunks_per_second"] = round(args.chunks / result["build_seconds"])
            result["state_root"] = store.get_latest_state_root()
        result["db_megabytes"] = round(
            sum(os.path.getsize(os.path.join(workdir, name)) for name in os.listdir(workdir)) / 1e6, 1
        )
        stores = {backend: SqliteStore(path, vector_backend=backend) for backend in backends}
        try:
            operations: dict[str, Callable[[SqliteStore, str], object]] = {
                "hybrid_search": lambda store, query: hybrid_search(query, store),
                "hybrid_search (parallel)": lambda store, query: hybrid_search(query, store, parallel=True),
                "assemble_context 2k": lambda store, query: assemble_context(query, store, TokenBudget(2000)),
                "assemble_context 8k": lambda store, query: assemble_context(query, store, TokenBudget(8000)),
                "parallel_assemble 8k": lambda store, query: parallel_assemble(
                    query, store, TokenBudget(8000)
                ),
            }
            cold: dict[str, float] = {}
            for backend, store in stores.items():
                started = time.perf_counter()
                hybrid_search(queries[0], store)  # first search: loads the version's vectors (numpy)
                cold[backend] = round((time.perf_counter() - started) * 1000, 1)
            result["first_search_ms"] = cold
            samples: dict[tuple[str, str], list[float]] = {
                (name, backend): [] for name in operations for backend in backends
            }
            same: list[bool] = []
            for _ in range(args.rounds):
                for query in queries:
                    outputs = {}
                    for name, operation in operations.items():
                        for backend in backends:
                            started = time.perf_counter()
                            outputs[(name, backend)] = operation(stores[backend], query)
                            samples[(name, backend)].append((time.perf_counter() - started) * 1000)
                    if len(backends) == 2:
                        ids = [
                            [hit.chunk.id for hit in outputs[("hybrid_search", backend)]]  # type: ignore[attr-defined]
                            for backend in backends
                        ]
                        same.append(ids[0] == ids[1])
            table = []
            for name in operations:
                row: dict[str, Any] = {"operation": name}
                for backend in backends:
                    times = samples[(name, backend)]
                    row[f"{backend} p50_ms"] = round(statistics.median(times), 2)
                    row[f"{backend} p95_ms"] = round(percentile(times, 0.95), 2)
                if len(backends) == 2:
                    ratios = [
                        b / a
                        for a, b in zip(samples[(name, "numpy")], samples[(name, "sqlite-vec")], strict=True)
                    ]
                    row["sqlite-vec/numpy median ratio"] = round(statistics.median(ratios), 2)
                table.append(row)
            result["latency"] = table
            if same:
                result["identical_hybrid_results_share"] = round(sum(same) / len(same), 3)
        finally:
            for store in stores.values():
                store.close()

    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{args.chunks} chunks in {len(documents)} documents: built in {result['build_seconds']} s "
        f"({result['build_chunks_per_second']} chunks/s), {result['db_megabytes']} MB; "
        f"first search {result['first_search_ms']} ms"
    )
    print(f"sqlite-vec: {result['sqlite_vec']}")
    for row in result["latency"]:
        cells = ", ".join(f"{key} {value}" for key, value in row.items() if key != "operation")
        print(f"  {row['operation']:26} {cells}")
    if "identical_hybrid_results_share" in result:
        print(
            f"hybrid_search results identical across backends: {result['identical_hybrid_results_share']:.0%}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
