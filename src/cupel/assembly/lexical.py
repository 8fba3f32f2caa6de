"""Full-text search over a store version: SQLite FTS5 with Okapi BM25 ranking (CFS-021 §2 ``lexical_score``).

**Tokenisation.** Text is NFKC-normalised and case-folded, and its terms are the runs of Unicode letters and
digits (``[^\\W_]+``): ``"Key-Rotation_v2"`` gives ``key``, ``rotation``, ``v2``. The store indexes the
space-joined terms in an FTS5 table whose tokenizer is ``porter ascii`` (the default: the ``ascii``
tokenizer splits exactly at the spaces, and the Porter stemmer reduces ``rotation`` and ``rotate`` to
``rotat``) or ``ascii`` (``SqliteStore(stemming=False)``), so the index and this module always agree on
what a term is and how many a chunk has. No stop words.

**Ranking.** BM25 as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75, ``idf = ln((N - n + 0.5) /
(n + 0.5))``, raised to 1e-6 when not positive), summed over the query's distinct terms; a chunk matches
when it contains any of them. The statistics (N chunks, n chunks containing a term, average length) are
those of the searched version, so a query pinned to a state root scores the same after any later write:

* the newest version is searched by FTS5 itself (``MATCH … ORDER BY rank LIMIT k``): the live index
  (``chunks_fts``) holds exactly its chunks, because a write moves every chunk it replaces or removes to
  ``retired_fts``;
* an older version is ranked here, from both indexes' postings (``fts5vocab``) restricted to its rows,
  with the same arithmetic in the same order, so the two paths give the same scores (tested bit for bit).
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections.abc import Sequence

from cupel.assembly.versioning import StoreVersion

__all__ = [
    "BM25_B",
    "BM25_K1",
    "MAX_QUERY_TERMS",
    "lexical_terms",
    "query_terms",
    "rank_exact",
    "rank_fts",
    "stem_terms",
]

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


def match_expression(terms: Sequence[str]) -> str:
    """An FTS5 query matching any of ``terms`` (each a phrase of one term; terms never contain quotes)."""
    return " OR ".join(f'"{term}"' for term in terms)


def rank_fts(connection: sqlite3.Connection, terms: Sequence[str], k: int) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk rowid, BM25 score)`` of the live index, ranked and limited by FTS5.

    Only exact for the newest version (see the module docstring). Ties keep every chunk with the k-th score.
    """
    expression = match_expression(terms)
    limit = k + 1
    while True:
        rows = connection.execute(
            "SELECT rowid, bm25(chunks_fts) FROM chunks_fts WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (expression, limit),
        ).fetchall()
        if len(rows) < limit or rows[-1][1] != rows[k - 1][1]:
            break
        limit *= 4  # the k-th score is shared beyond the limit: fetch further
    cut = rows[k - 1][1] if len(rows) >= k else None
    # FTS5's bm25() is the negated score (lower ranks first).
    return [(rowid, -score) for rowid, score in rows if cut is None or score <= cut]


def stem_terms(connection: sqlite3.Connection, terms: Sequence[str], tokenize: str) -> list[str]:
    """``terms`` as the store's FTS5 tokenizer indexes them (stemmed with ``porter``), one per term.

    Tokenised by FTS5 itself, in a temporary table of this connection, so the stems are the index's own.
    """
    if not tokenize.startswith("porter"):
        return list(terms)
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.cupel_stems USING fts5 (terms, tokenize='{tokenize}')"
    )
    connection.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.cupel_stems_vocab "
        "USING fts5vocab (temp, cupel_stems, 'instance')"
    )
    connection.execute("DELETE FROM temp.cupel_stems")
    connection.execute("INSERT INTO temp.cupel_stems (rowid, terms) VALUES (1, ?)", (" ".join(terms),))
    return [row[0] for row in connection.execute("SELECT term FROM temp.cupel_stems_vocab ORDER BY offset")]


def rank_exact(
    connection: sqlite3.Connection, version: StoreVersion, stems: Sequence[str], k: int
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk rowid, BM25 score)`` pairs of any ``version``, from its own statistics.

    ``stems`` are the query's terms as indexed (:func:`stem_terms`), in query order, repeats kept: FTS5
    scores each query term as its own phrase. Ties keep every chunk with the k-th score.
    """
    if not stems or version.chunk_count == 0 or k <= 0:
        return []
    chunk_count, term_count = version.chunk_count, version.term_count
    average = term_count / chunk_count
    scores: dict[int, float] = {}
    for stem in stems:
        rows = connection.execute(
            "SELECT c.rowid, c.term_count, t.tf FROM ("
            "SELECT doc, count(*) AS tf FROM chunks_vocab WHERE term = ?1 GROUP BY doc UNION ALL "
            "SELECT doc, count(*) AS tf FROM retired_vocab WHERE term = ?1 GROUP BY doc) AS t "
            "JOIN chunks AS c ON c.rowid = t.doc WHERE c.added <= ?2 AND c.removed > ?2",
            (stem, version.version),
        ).fetchall()
        if not rows:
            continue
        found = len(rows)
        idf = math.log((chunk_count - found + 0.5) / (found + 0.5))
        idf = idf if idf > 0 else _MIN_IDF
        for rowid, length, tf in rows:
            # Exactly fts5_aux.c's fts5Bm25Function: idf * (num / denom), summed in query order.
            frequency = float(tf)
            gain = idf * (
                (frequency * (BM25_K1 + 1.0))
                / (frequency + BM25_K1 * (1 - BM25_B + BM25_B * length / average))
            )
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
