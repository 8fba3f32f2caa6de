"""Full-text search over a store version: SQLite FTS5 with Okapi BM25 ranking (CFS-021 §2 ``lexical_score``).

**Tokenisation.** Text is NFKC-normalised and case-folded, and its terms are the runs of Unicode letters and
digits (``[^\\W_]+``): ``"Key-Rotation_v2"`` gives ``key``, ``rotation``, ``v2``. The store indexes the
space-joined terms in an FTS5 table with the ``ascii`` tokenizer, which splits them exactly there, so the
index and this module always agree on what a term is. No stemming and no stop words.

**Ranking.** BM25 as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75, ``idf = ln((N - n + 0.5) /
(n + 0.5))``, raised to 1e-6 when not positive), summed over the query's distinct terms; a chunk matches
when it contains any of them. FTS5's own ``bm25()`` takes N (chunks), n (chunks containing the term) and
the average length from the whole index, which keeps every version's chunks so that old versions stay
searchable. Here they are taken from the pinned version alone, read through the FTS5 index
(``fts5vocab``), so a query on a state root scores the same after later writes. On a store with a single
version the two agree (tested).
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata

__all__ = ["BM25_B", "BM25_K1", "MAX_QUERY_TERMS", "lexical_terms", "rank_lexical"]

BM25_K1 = 1.2
BM25_B = 0.75
MAX_QUERY_TERMS = 64
"""Distinct query terms beyond this many are ignored (in order of first appearance)."""

_TERM = re.compile(r"[^\W_]+")
_MIN_IDF = 1e-6


def lexical_terms(text: str) -> list[str]:
    """The terms of ``text``, in order, with repeats (see the module docstring)."""
    return _TERM.findall(unicodedata.normalize("NFKC", text).casefold())


def query_terms(query: str) -> list[str]:
    """The distinct terms of ``query`` in order of first appearance, at most :data:`MAX_QUERY_TERMS`."""
    return list(dict.fromkeys(lexical_terms(query)))[:MAX_QUERY_TERMS]


def rank_lexical(
    connection: sqlite3.Connection, version: int, chunk_count: int, term_count: int, query: str, k: int
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk rowid, BM25 score)`` pairs of ``version`` for ``query``, best first.

    Ties keep every chunk with the k-th score, so the caller can break them by its deterministic order.
    """
    terms = query_terms(query)
    if not terms or chunk_count == 0 or k <= 0:
        return []
    average = term_count / chunk_count if term_count else 1.0
    scores: dict[int, float] = {}
    for term in terms:
        rows = connection.execute(
            "SELECT c.rowid, c.term_count, t.tf FROM "
            "(SELECT doc, count(*) AS tf FROM chunks_vocab WHERE term = ? GROUP BY doc) AS t "
            "JOIN chunks AS c ON c.rowid = t.doc WHERE c.added <= ? AND c.removed > ?",
            (term, version, version),
        ).fetchall()
        if not rows:
            continue
        found = len(rows)
        idf = math.log((chunk_count - found + 0.5) / (found + 0.5))
        idf = idf if idf > 0 else _MIN_IDF
        for rowid, length, tf in rows:
            gain = idf * (tf * (BM25_K1 + 1)) / (tf + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            scores[rowid] = scores.get(rowid, 0.0) + gain
    return top_k(scores, k)


def top_k(scores: dict[int, float], k: int) -> list[tuple[int, float]]:
    """The ``k`` highest scores, plus any further rows tied with the k-th, highest first."""
    ranked = sorted(scores.items(), key=lambda item: -item[1])
    if len(ranked) <= k:
        return ranked
    cut = ranked[k - 1][1]
    end = k
    while end < len(ranked) and ranked[end][1] == cut:
        end += 1
    return ranked[:end]
