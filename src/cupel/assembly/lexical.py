"""Full-text search over a store version: SQLite FTS5 with Okapi BM25 ranking (CFS-021 §2 ``lexical_score``).

**Tokenisation** is FTS5's own, so the index and every query agree on what a term is: text is
NFKC-normalised, then FTS5's ``unicode61`` tokenizer splits it into runs of letters and digits, folds case
and removes diacritics (``"Key-Rotation_v2, ÉTÉ"`` gives ``key``, ``rotation``, ``v2``, ``ete``), and by
default the ``porter`` stemmer reduces each term (``rotation`` and ``rotate`` to ``rotat``;
``SqliteStore(stemming=False)`` leaves them whole). No stop words. A query matches the chunks containing
any of its distinct terms (the first :data:`MAX_QUERY_TERMS`).

**Ranking.** BM25 as FTS5's ``bm25()`` computes it (k1 = 1.2, b = 0.75, ``idf = ln((N - n + 0.5) /
(n + 0.5))``, raised to 1e-6 when not positive), summed over the query's terms. The statistics (N chunks,
n chunks containing a term, lengths and their average) are those of the searched version, so a query
pinned to a state root scores the same after any later write:

* the newest version is searched by FTS5 itself (``MATCH … ORDER BY rank LIMIT k``): the live index
  (``chunks_fts``) holds exactly its chunks, because a write moves every chunk it replaces or removes to
  ``retired_fts``;
* an older version is ranked here, from both indexes' postings (``fts5vocab``) and chunk lengths
  restricted to its rows, with FTS5's arithmetic in FTS5's order, so the two paths give the same scores
  (tested bit for bit).
"""

from __future__ import annotations

import math
import re
import sqlite3
import unicodedata
from collections.abc import Sequence
from typing import Any

from cupel.assembly.versioning import StoreVersion

__all__ = [
    "BM25_B",
    "BM25_K1",
    "MAX_QUERY_TERMS",
    "STEMMED",
    "UNSTEMMED",
    "chunk_lengths",
    "fts_text",
    "lexical_terms",
    "query_terms",
    "rank_exact",
    "rank_fts",
]

BM25_K1 = 1.2
BM25_B = 0.75
MAX_QUERY_TERMS = 64
"""Distinct query terms beyond this many are ignored (in order of first appearance)."""
STEMMED = "porter unicode61"
UNSTEMMED = "unicode61"
_MIN_IDF = 1e-6
_RUN = re.compile(r"[^\W_]+")


def fts_text(text: str) -> str:
    """What the store gives FTS5 to index for ``text`` (NFKC-normalised, so ``ﬁ`` reads as ``fi``)."""
    return unicodedata.normalize("NFKC", text)


def _tokens(connection: sqlite3.Connection, text: str, tokenize: str) -> list[str]:
    """FTS5's tokens of ``text`` with ``tokenize``, in order, from a temporary table of this connection."""
    table = "cupel_terms_stemmed" if tokenize == STEMMED else "cupel_terms"
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table} USING fts5 (t, tokenize='{tokenize}')"
    )
    connection.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_vocab USING fts5vocab (temp, {table}, 'instance')"
    )
    connection.execute(f"DELETE FROM temp.{table}")
    connection.execute(f"INSERT INTO temp.{table} (rowid, t) VALUES (1, ?)", (text,))
    return [row[0] for row in connection.execute(f"SELECT term FROM temp.{table}_vocab ORDER BY offset")]


def lexical_terms(text: str, *, stemming: bool = False) -> list[str]:
    """The terms the store indexes for ``text``, in order, with repeats (see the module docstring)."""
    connection = sqlite3.connect(":memory:")
    try:
        return _tokens(connection, fts_text(text), STEMMED if stemming else UNSTEMMED)
    finally:
        connection.close()


def query_terms(connection: sqlite3.Connection, query: str) -> list[str]:
    """The distinct unstemmed terms of ``query`` in order of first appearance, at most
    :data:`MAX_QUERY_TERMS`.

    Runs of ASCII letters and digits are lower-cased here (what ``unicode61`` does to them); any other run
    of word characters is tokenised by FTS5 itself, so every term is exactly one FTS5 token.
    """
    terms: list[str] = []
    for run in _RUN.findall(fts_text(query)):
        if run.isascii():
            terms.append(run.lower())
        else:
            terms.extend(_tokens(connection, run, UNSTEMMED))
    return list(dict.fromkeys(terms))[:MAX_QUERY_TERMS]


def rank_fts(
    connection: sqlite3.Connection, terms: Sequence[str], k: int, columns: str
) -> tuple[list[tuple[Any, ...]], int | None]:
    """The ``k`` best chunks of the live index, ranked and limited by FTS5, best first, as rows
    ``(rowid, BM25 score, *columns)`` (``columns`` of ``chunks AS c`` and ``documents AS d``), and the
    newest version number read in the same statement (``None`` when nothing matched).

    Only exact for the newest version (see the module docstring): the caller checks the version number.
    Ties keep every chunk with the k-th score.
    """
    # Each term is one phrase; terms are runs of letters and digits, so they never contain a quote.
    expression = " OR ".join(f'"{term}"' for term in terms)
    # One statement: the matches' scores, the k-th best of them (bm25() is negative, lower is better, so
    # with fewer than k matches every score is below 0), and the chunks up to it, ties included.
    rows = connection.execute(
        "WITH m AS MATERIALIZED (SELECT rowid, bm25(chunks_fts) AS score FROM chunks_fts "
        "WHERE chunks_fts MATCH ?1) "
        f"SELECT m.rowid, m.score, (SELECT max(version) FROM versions), {columns} FROM m "
        "JOIN chunks AS c ON c.rowid = m.rowid JOIN documents AS d ON d.row = c.doc_row "
        "WHERE m.score <= coalesce((SELECT score FROM m ORDER BY score LIMIT 1 OFFSET ?2), 0.0) "
        "ORDER BY m.score",
        (expression, k - 1),
    ).fetchall()
    latest = rows[0][2] if rows else None
    # FTS5's bm25() is the negated score.
    return [(row[0], -row[1], *row[3:]) for row in rows], latest


def _varint(blob: bytes) -> int:
    """The first SQLite varint of ``blob`` (FTS5's ``docsize`` record of a one-column table)."""
    value = 0
    for index, byte in enumerate(blob):
        if index == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            break
    return value


def chunk_lengths(connection: sqlite3.Connection, table: str, first: int, last: int) -> dict[int, int]:
    """``{rowid: terms}`` of the rows ``first..last`` of the FTS5 ``table``, as FTS5 counted them."""
    rows = connection.execute(
        f"SELECT id, sz FROM {table}_docsize WHERE id BETWEEN ? AND ?", (first, last)
    ).fetchall()
    return {rowid: _varint(size) for rowid, size in rows}


def rank_exact(
    connection: sqlite3.Connection, version: StoreVersion, terms: Sequence[str], tokenize: str, k: int
) -> list[tuple[int, float]]:
    """The ``k`` best ``(chunk rowid, BM25 score)`` pairs of any ``version``, from its own statistics.

    ``terms`` are :func:`query_terms`; each is one phrase, as in :func:`rank_fts`, and is looked up as the
    index stores it (stemmed with ``tokenize``). Ties keep every chunk with the k-th score.
    """
    if not terms or version.chunk_count == 0 or k <= 0:
        return []
    stems = _tokens(connection, " ".join(terms), tokenize) if tokenize == STEMMED else list(terms)
    chunk_count = version.chunk_count
    average = version.term_count / chunk_count
    scores: dict[int, float] = {}
    for stem in stems:
        rows = connection.execute(
            "SELECT t.doc, t.tf, t.sz FROM ("
            "SELECT v.doc, count(*) AS tf, s.sz FROM chunks_vocab AS v "
            "JOIN chunks_fts_docsize AS s ON s.id = v.doc WHERE v.term = ?1 GROUP BY v.doc UNION ALL "
            "SELECT v.doc, count(*) AS tf, s.sz FROM retired_vocab AS v "
            "JOIN retired_fts_docsize AS s ON s.id = v.doc WHERE v.term = ?1 GROUP BY v.doc) AS t "
            "JOIN chunks AS c ON c.rowid = t.doc WHERE c.added <= ?2 AND c.removed > ?2",
            (stem, version.version),
        ).fetchall()
        if not rows:
            continue
        found = len(rows)
        idf = math.log((chunk_count - found + 0.5) / (found + 0.5))
        idf = idf if idf > 0 else _MIN_IDF
        for rowid, tf, size in rows:
            # Exactly fts5_aux.c's fts5Bm25Function: idf * (num / denom), summed in query order.
            frequency = float(tf)
            length = _varint(size)
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
