"""Evidence recall of the embedded store's search channels on LoCoMo, beside raw SQLite FTS5.

Usage: ``python benchmarks/recall_rag.py [--json] [--data PATH]`` (default
``../shared/data/locomo/locomo-dev.json``, or ``$LOCOMO``). Each conversation becomes one store in which
every dialog turn (``"speaker: text"``) is a chunk; each question with evidence turns is asked of its own
conversation, and R@k is the share of its evidence turns among the first k results, averaged over the
questions. Rows:

* ``store lexical``: ``hybrid_search`` with only the lexical channel (``SearchParams(0, k, k)``);
* ``store vector``: only the semantic channel, with ``HashingEmbedder`` vectors;
* ``store hybrid (default)``: ``hybrid_search(query, store)`` on a default store (no embedder: lexical
  search only, fused by reciprocal rank with nothing);
* ``store hybrid + HashingEmbedder``: both channels, fused by reciprocal rank with equal weights;
* ``FTS5 …``: a bare FTS5 table of the same texts, ``MATCH`` any query term, ``ORDER BY rank``.

Each store row is measured with Porter stemming (the default) and without (``stemming=False``).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cupel.assembly import Chunk, Document, HashingEmbedder, SearchParams, SqliteStore, hybrid_search
from cupel.assembly.lexical import query_terms

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "locomo" / "locomo-dev.json"
CUTOFFS = (5, 10, 20)

Conversation = tuple[list[tuple[str, str]], list[tuple[str, set[str]]]]


def conversations(path: Path) -> list[Conversation]:
    """``[(turns as (dia_id, text), questions as (question, evidence dia_ids))]`` per conversation."""
    loaded = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        talk = sample["conversation"]
        turns = []
        number = 1
        while f"session_{number}" in talk:
            for turn in talk[f"session_{number}"]:
                turns.append((turn["dia_id"], f"{turn['speaker']}: {turn['text']}"))
            number += 1
        known = {dia_id for dia_id, _ in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = {item.strip() for item in qa.get("evidence", []) if item.strip() in known}
            if evidence:
                questions.append((qa["question"], evidence))
        loaded.append((turns, questions))
    return loaded


Ranker = Callable[[str, int], list[str]]


def store_rankers(turns: list[tuple[str, str]], *, stemming: bool, vectors: bool) -> dict[str, Ranker]:
    """The store's channels over ``turns``: lexical, default hybrid, and (``vectors``) vector and hybrid
    with HashingEmbedder vectors."""
    plain = SqliteStore(stemming=stemming)
    embedded = SqliteStore(stemming=stemming, embedder=HashingEmbedder()) if vectors else None
    for store in (plain, embedded):
        if store is None:
            continue
        with store.write() as writer:
            for dia_id, text in turns:
                writer.put(Document(dia_id, dia_id), [Chunk(dia_id, text, 0)])

    def ranked(store: SqliteStore, params: SearchParams | None) -> Ranker:
        def rank(query: str, k: int) -> list[str]:
            return [hit.document.id for hit in hybrid_search(query, store, params)][:k]

        return rank

    k = max(CUTOFFS)
    rankers = {
        "store lexical": ranked(plain, SearchParams(semantic_k=0, lexical_k=k, top_k=k)),
        "store hybrid (default)": ranked(plain, None),
    }
    if embedded is not None:
        rankers["store vector (HashingEmbedder)"] = ranked(embedded, SearchParams(k, 0, k))
        rankers["store hybrid + HashingEmbedder (RRF)"] = ranked(embedded, None)
    return rankers


def fts5_ranker(turns: list[tuple[str, str]], tokenize: str) -> Ranker:
    """A bare FTS5 table of the turns with ``tokenize``, ranked by FTS5's ``bm25()``."""
    connection = sqlite3.connect(":memory:")
    connection.execute(
        f"CREATE VIRTUAL TABLE turns USING fts5 (dia_id UNINDEXED, text, tokenize='{tokenize}')"
    )
    connection.executemany("INSERT INTO turns VALUES (?, ?)", turns)

    def rank(query: str, k: int) -> list[str]:
        terms = query_terms(connection, query)
        if not terms:
            return []
        expression = " OR ".join(f'"{term}"' for term in terms)
        rows = connection.execute(
            "SELECT dia_id FROM turns WHERE turns MATCH ? ORDER BY rank LIMIT ?", (expression, k)
        ).fetchall()
        return [row[0] for row in rows]

    return rank


def measure(path: Path, *, unstemmed: bool = True, vectors: bool = True) -> dict[str, Any]:
    """``{"questions": n, "turns": n, "recall": {row: {"R@5": …, "R@10": …, "R@20": …}}}``.

    ``unstemmed`` adds the rows without stemming, ``vectors`` those with HashingEmbedder vectors.
    """
    totals: dict[str, dict[int, float]] = {}
    questions = turns_total = 0
    for turns, asked in conversations(path):
        turns_total += len(turns)
        rankers: dict[str, Ranker] = {}
        for stemming in (True, False) if unstemmed else (True,):
            label = "stemmed" if stemming else "not stemmed"
            for name, ranker in store_rankers(turns, stemming=stemming, vectors=vectors).items():
                rankers[f"{name}, {label}"] = ranker
        rankers["FTS5 porter unicode61"] = fts5_ranker(turns, "porter unicode61")
        if unstemmed:
            rankers["FTS5 unicode61"] = fts5_ranker(turns, "unicode61")
        for question, evidence in asked:
            questions += 1
            for name, ranker in rankers.items():
                found = ranker(question, max(CUTOFFS))
                row = totals.setdefault(name, dict.fromkeys(CUTOFFS, 0.0))
                for cutoff in CUTOFFS:
                    row[cutoff] += len(evidence & set(found[:cutoff])) / len(evidence)
    recall = {
        name: {f"R@{cutoff}": round(total / questions, 3) for cutoff, total in row.items()}
        for name, row in totals.items()
    }
    return {
        "data": path.name,
        "conversations": len(conversations(path)),
        "turns": turns_total,
        "questions": questions,
        "recall": recall,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--data", default=os.environ.get("LOCOMO", str(DEFAULT_DATA)), help="LoCoMo JSON file"
    )
    args = parser.parse_args(argv)
    path = Path(args.data)
    if not path.is_file():
        print(f"recall_rag: {path}: no such file (LoCoMo is not shipped with cupel)", file=sys.stderr)
        return 2
    result = measure(path)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{result['questions']} questions over {result['turns']} turns "
        f"in {result['conversations']} conversations"
    )
    print(f"| {'search':52} | " + " | ".join(f"R@{cutoff:<3}" for cutoff in CUTOFFS) + " |")
    for name, row in result["recall"].items():
        print(f"| {name:52} | " + " | ".join(f"{value:.3f}" for value in row.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
