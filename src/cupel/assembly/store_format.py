"""The on-disk format of a :class:`~cupel.assembly.store.SqliteStore`: its schema, what it records about
itself, the files it refuses, and how SQLite's errors are reported (one line naming the file and the way
out)."""

from __future__ import annotations

import sqlite3

from cupel.assembly.versioning import LIVE
from cupel.errors import InvalidConfigurationError

__all__ = [
    "NO_EMBEDDER",
    "SCHEMA_VERSION",
    "StoreError",
    "check_store_file",
    "read_meta",
    "schema",
    "store_problem",
]

SCHEMA_VERSION = "2"
NO_EMBEDDER = "none"
"""The embedder name a store without vectors records."""

_SQLITE_HEADER = b"SQLite format 3\x00"


class StoreError(InvalidConfigurationError):
    """The file is not a cupel store this version reads, or it is damaged or busy; the message says which."""


def schema(tokenize: str) -> list[str]:
    return [
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
        "CREATE TABLE versions (version INTEGER PRIMARY KEY, state_root TEXT NOT NULL, "
        "created_at TEXT NOT NULL, chunk_count INTEGER NOT NULL, term_count INTEGER NOT NULL, "
        "document_count INTEGER NOT NULL)",
        "CREATE INDEX versions_root ON versions (state_root)",
        # A document's chunks have the consecutive rowids first_chunk .. first_chunk + chunk_count - 1.
        "CREATE TABLE documents (row INTEGER PRIMARY KEY, doc_id TEXT NOT NULL, path TEXT NOT NULL, "
        "content_hash TEXT NOT NULL, modified_at TEXT, first_chunk INTEGER NOT NULL, "
        f"chunk_count INTEGER NOT NULL, added INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT {LIVE})",
        "CREATE INDEX documents_id ON documents (doc_id, removed)",
        "CREATE TABLE chunks (rowid INTEGER PRIMARY KEY, doc_row INTEGER NOT NULL, chunk_id TEXT NOT NULL, "
        "sequence INTEGER NOT NULL, byte_offset INTEGER NOT NULL, text TEXT NOT NULL, hash BLOB NOT NULL, "
        f"added INTEGER NOT NULL, removed INTEGER NOT NULL DEFAULT {LIVE})",
        # Non-zero vectors only, L2-normalised little-endian float32, written once.
        "CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, vector BLOB NOT NULL)",
        # The live chunks (those of the latest version), and the chunks a later version removed.
        f"CREATE VIRTUAL TABLE chunks_fts USING fts5 (terms, content='', tokenize='{tokenize}')",
        f"CREATE VIRTUAL TABLE retired_fts USING fts5 (terms, content='', tokenize='{tokenize}')",
        "CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab (chunks_fts, 'instance')",
        "CREATE VIRTUAL TABLE retired_vocab USING fts5vocab (retired_fts, 'instance')",
    ]


def check_store_file(path: str, read_only: bool) -> None:
    """Refuse, before SQLite sees it, a file that cannot be a store (read-only) or a database."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
    except FileNotFoundError:
        if read_only:
            raise StoreError(
                f"{path}: no such store (build one with `cupel index PATHS --db {path}`)"
            ) from None
        return
    except OSError as error:
        raise StoreError(f"{path}: cannot read ({error.strerror or error})") from None
    if not header and read_only:
        raise StoreError(f"{path}: not a cupel store (the file is empty)")
    if header and header != _SQLITE_HEADER:
        raise StoreError(f"{path}: not a cupel store (not a SQLite database)")


def read_meta(connection: sqlite3.Connection, path: str, read_only: bool) -> dict[str, str] | None:
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if not tables and not read_only:
        return None
    if "meta" not in tables:
        what = "the database is empty" if not tables else "a SQLite database without cupel's tables"
        raise StoreError(f"{path}: not a cupel store ({what})")
    meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    schema = meta.get("schema", "?")
    if schema != SCHEMA_VERSION:
        newer = schema.isdigit() and int(schema) > int(SCHEMA_VERSION)
        raise StoreError(
            f"{path}: store format {schema} was made by a newer cupel; upgrade cupel to read it"
            if newer
            else f"{path}: store format {schema} is older than this cupel's ({SCHEMA_VERSION}); "
            f"rebuild it with `cupel index PATHS --db {path} --rebuild`"
        )
    return meta


def store_problem(path: str, error: sqlite3.Error) -> StoreError:
    text = str(error)
    if "locked" in text or "busy" in text:
        return StoreError(f"{path}: the store is busy ({text}); another writer holds it, try again")
    if "readonly" in text or "read-only" in text:
        return StoreError(f"{path}: cannot write the store ({text})")
    return StoreError(
        f"{path}: the store is damaged ({text}); `cupel index --check --db {path}` lists the "
        f"versions still readable, `cupel index PATHS --db {path} --rebuild` rebuilds it"
    )
