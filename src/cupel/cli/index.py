"""``cupel index PATHS... --db FILE``: chunk Markdown, code and text files into a versioned SQLite store.

Directories are walked recursively (hidden entries, ``__pycache__`` and ``node_modules`` skipped) for files
whose suffix :func:`cupel.assembly.chunking.kind_of` knows; files named explicitly are indexed whatever
their suffix (as text). Re-indexing is incremental: a file whose content hash (over its bytes and the
chunking options) matches the indexed copy is left alone, and an indexed file that is gone from the given
paths is removed. The whole run is one write, hence one new version and state root (none when nothing
changed). A progress bar is drawn on standard error when it is a terminal.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from cupel.assembly.chunking import ChunkingOptions, chunk_document, kind_of
from cupel.assembly.hashing import content_hash
from cupel.assembly.store import SqliteStore
from cupel.assembly.types import Document
from cupel.cli._common import CliError
from cupel.cli._progress import Progress
from cupel.errors import CupelError

_SKIPPED_DIRECTORIES = frozenset({"__pycache__", "node_modules"})


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "index",
        help="chunk Markdown, code and text files into a versioned SQLite store for `cupel assemble --db`",
        description=(
            "Chunk files into a SQLite store with full-text and vector search. Each run is one new version "
            "(state root); unchanged files are skipped and deleted ones removed."
        ),
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files or directories to index")
    parser.add_argument("--db", required=True, metavar="FILE", help="the store (created if missing)")
    parser.add_argument(
        "--max-chars", default="1500", metavar="N", help="largest chunk in characters (default: 1500)"
    )
    parser.add_argument(
        "--overlap",
        default="200",
        metavar="N",
        help="characters shared by neighbouring chunks (default: 200)",
    )
    parser.set_defaults(handler=run)


def _whole(option: str, text: str) -> int:
    try:
        return int(text, 10)
    except ValueError:
        raise CliError(f"{option} must be a whole number, got {text!r}") from None


def _display(path: Path) -> str:
    """The document id and path: relative to the working directory when inside it, POSIX separators."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _printable(name: str) -> bool:
    # Undecodable file names come back with lone surrogates, which no document path may contain.
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\n" not in name and "\r" not in name


def discover(paths: list[str]) -> tuple[list[tuple[Path, str]], list[str], int]:
    """``([(file, kind)], [scope prefixes], skipped)`` for the given paths, in sorted order."""
    found: dict[Path, str] = {}
    scopes: list[str] = []
    skipped = 0
    for given in paths:
        path = Path(given)
        if path.is_file():
            found[path] = kind_of(path) or "text"
            scopes.append(_display(path))
        elif path.is_dir():
            scopes.append(_display(path).rstrip("/") + "/")
            for root, directories, files in os.walk(path):
                directories[:] = sorted(
                    name
                    for name in directories
                    if not name.startswith(".") and name not in _SKIPPED_DIRECTORIES
                )
                for name in sorted(files):
                    kind = kind_of(name)
                    if name.startswith(".") or kind is None:
                        continue
                    if not _printable(os.path.join(root, name)):
                        skipped += 1
                        continue
                    found[Path(root) / name] = kind
        else:
            raise CliError(f"{given}: no such file or directory")
    return sorted(found.items(), key=lambda item: _display(item[0])), scopes, skipped


def _in_scope(doc_id: str, scopes: list[str]) -> bool:
    return any(doc_id == scope or (scope.endswith("/") and doc_id.startswith(scope)) for scope in scopes)


def run(args: argparse.Namespace) -> int:
    try:
        options = ChunkingOptions(_whole("--max-chars", args.max_chars), _whole("--overlap", args.overlap))
    except CupelError as error:
        raise CliError(
            str(error)
            .replace("ChunkingOptions.max_chars", "--max-chars")
            .replace("ChunkingOptions.overlap_chars", "--overlap")
        ) from None
    files, scopes, skipped = discover(args.paths)
    explicit = {Path(given) for given in args.paths if Path(given).is_file()}
    try:
        store = SqliteStore(args.db)
    except CupelError as error:
        raise CliError(f"--db {args.db}: {error}") from None
    counts = {"new": 0, "changed": 0, "unchanged": 0, "removed": 0}
    chunk_total = 0
    progress = Progress(len(files)) if sys.stderr.isatty() and files else None
    with store:
        before = store.documents()
        with store.write() as writer:
            seen: set[str] = set()
            for path, kind in files:
                doc_id = _display(path)
                seen.add(doc_id)
                try:
                    data = path.read_bytes()
                    text = data.decode("utf-8-sig")
                except UnicodeDecodeError as error:
                    if path in explicit:
                        raise CliError(f"{path}: not UTF-8 text (byte {error.start})") from None
                    skipped += 1
                    continue
                except OSError as error:
                    raise CliError(f"{path}: cannot read ({error.strerror or error})") from None
                digest = content_hash(f"{kind}/{options.max_chars}/{options.overlap_chars}\n".encode() + data)
                chunks = chunk_document(doc_id, text, kind, options)
                if writer.put(Document(doc_id, doc_id), chunks, content_hash=digest):
                    counts["changed" if doc_id in before else "new"] += 1
                    chunk_total += len(chunks)
                else:
                    counts["unchanged"] += 1
                if progress is not None:
                    progress.advance()
            for doc_id in before:
                if doc_id not in seen and _in_scope(doc_id, scopes) and writer.remove(doc_id):
                    counts["removed"] += 1
        if progress is not None:
            progress.close()
        latest = store.latest()
    indexed = counts["new"] + counts["changed"] + counts["unchanged"]
    print(
        f"indexed {indexed} files ({counts['new']} new, {counts['changed']} changed, {counts['unchanged']} "
        f"unchanged, {counts['removed']} removed{f', {skipped} skipped' if skipped else ''}); "
        f"{chunk_total} chunks written; version {latest.version}: {latest.document_count} documents, "
        f"{latest.chunk_count} chunks, state root {latest.state_root}"
    )
    return 0
