"""``cupel index PATHS... --db FILE``: chunk Markdown, code and text files into a versioned SQLite store.

See :mod:`cupel.assembly.indexing` (what is indexed and skipped, incremental re-indexing) and
:mod:`cupel.assembly.chunking` (chunk sizes and overlaps). A progress bar is drawn on standard error when
it is a terminal; the summary line, and one line per skipped file, go to standard output. A run that fails
leaves no new file behind. ``--rebuild`` builds a fresh store beside the old one and replaces it;
``--check`` verifies a store without changing it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Any

from cupel._plural import counted
from cupel.assembly.chunking import ChunkingOptions
from cupel.assembly.embedding import HashingEmbedder
from cupel.assembly.indexing import DEFAULT_MAX_FILE_BYTES, IndexReport, index_paths
from cupel.assembly.store import SqliteStore, StoreError
from cupel.cli._common import CliError, whole_number
from cupel.cli._progress import Progress
from cupel.errors import CupelError

_SIDECARS = ("", "-wal", "-shm", "-journal")


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "index",
        help="chunk Markdown, code and text files into a versioned SQLite store for `cupel assemble --db`",
        description=(
            "Chunk files into a SQLite store with full-text search (FTS5, Porter stemming). Each run is one "
            "new version (state root); unchanged files are skipped and deleted ones removed. Only regular "
            "files are read; FIFOs, devices, files over --max-file-bytes and symbolic links leaving a "
            "directory are skipped and listed. Needs no extra; --embedder hashing adds vectors, and "
            'searching those needs numpy (pip install "pycupel[rag]").'
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or directories to index")
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
    parser.add_argument(
        "--max-file-bytes",
        default=str(DEFAULT_MAX_FILE_BYTES),
        metavar="N",
        help=f"skip files larger than this (default: {DEFAULT_MAX_FILE_BYTES})",
    )
    parser.add_argument(
        "--follow-symlinks",
        action="store_true",
        help="follow symbolic links that leave an indexed directory, and links to directories",
    )
    parser.add_argument(
        "--embedder",
        default=None,
        metavar="NAME",
        help="none (default for a new store: lexical search only) or hashing (adds HashingEmbedder vectors; "
        'searching them needs pip install "pycupel[rag]"); an existing store keeps its own',
    )
    parser.add_argument(
        "--rebuild",
        action="store_true",
        help="build a new store from PATHS and replace FILE with it (for a damaged or outdated store)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="verify FILE (SQLite integrity check, every version's state root recomputed) and change nothing",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.check:
        if args.paths or args.rebuild:
            raise CliError("--check takes no PATH and no --rebuild")
        return _check(args.db)
    if not args.paths:
        raise CliError("give at least one PATH to index (or --check)")
    try:
        options = ChunkingOptions(
            whole_number("--max-chars", args.max_chars), whole_number("--overlap", args.overlap)
        )
    except CupelError as error:
        message = str(error).replace("ChunkingOptions.max_chars", "--max-chars")
        raise CliError(message.replace("ChunkingOptions.overlap_chars", "--overlap")) from None
    max_bytes = whole_number("--max-file-bytes", args.max_file_bytes, minimum=1)
    if args.embedder not in (None, "none", "hashing"):
        raise CliError(f"--embedder must be none or hashing, got {args.embedder!r}")
    target = args.db
    if args.rebuild:
        target = f"{args.db}.rebuild-{os.getpid()}"
        _remove(target)
    existed = os.path.lexists(target)
    progress: Progress | None = None

    def advance(done: int, total: int) -> None:
        nonlocal progress
        if progress is None and sys.stderr.isatty():
            progress = Progress(total)
        if progress is not None:
            progress.advance()

    try:
        with SqliteStore(target, embedder=HashingEmbedder() if args.embedder == "hashing" else None) as store:
            if args.embedder == "none" and store.embedder is not None:
                raise CliError(
                    f"{args.db}: the store has vectors; --embedder none cannot drop them (use --rebuild)"
                )
            report = index_paths(
                store,
                args.paths,
                options,
                progress=advance,
                follow_symlinks=args.follow_symlinks,
                max_file_bytes=max_bytes,
            )
    except BaseException as error:
        if not existed:
            _remove(target)  # a failed run leaves no new file behind
        if isinstance(error, CupelError):
            raise CliError(str(error)) from None
        if isinstance(error, OSError):
            raise CliError(f"{error.filename}: cannot read ({error.strerror or error})") from None
        raise
    finally:
        if progress is not None:
            progress.close()
    if args.rebuild:
        _remove(args.db, sidecars_only=True)
        os.replace(target, args.db)
    _print_summary(report)
    return 0


def _print_summary(report: IndexReport) -> None:
    latest = report.version
    skipped = f", {report.skipped} skipped" if report.skipped else ""
    print(
        f"indexed {counted(report.files, 'file')} ({report.new} new, {report.changed} changed, "
        f"{report.unchanged} unchanged, {report.removed} removed{skipped}); "
        f"{counted(report.chunks_written, 'chunk')} written; "
        f"version {latest.version}: {counted(latest.document_count, 'document')}, "
        f"{counted(latest.chunk_count, 'chunk')}, "
        f"state root {latest.state_root}"
    )
    for path, reason in report.skipped_files:
        print(f"skipped {path}: {reason}")


def _remove(path: str, *, sidecars_only: bool = False) -> None:
    for suffix in _SIDECARS[1:] if sidecars_only else _SIDECARS:
        # A path below a file (NotADirectoryError) has nothing to remove either.
        with contextlib.suppress(FileNotFoundError, NotADirectoryError):
            os.remove(path + suffix)


def _check(path: str) -> int:
    try:
        with SqliteStore(path, read_only=True) as store:
            problems, good = store.check()
            versions = len(store.versions()) if not problems else None
    except StoreError as error:
        print(f"{error}")
        return 1
    if not problems:
        assert good is not None and versions is not None
        print(
            f"{path}: ok; integrity check passed and the state roots of all {counted(versions, 'version')} "
            f"verify (latest: version {good.version}, state root {good.state_root})"
        )
        return 0
    print(f"{path}: damaged")
    for problem in problems:
        print(f"  {problem}")
    if good is not None:
        print(
            f"last verified version: {good.version}, state root {good.state_root} "
            f"(`cupel assemble --db {path} --state-root {good.state_root.split(':', 1)[1][:16]} ...`)"
        )
    print(f"rebuild with `cupel index PATHS --db {path} --rebuild`")
    return 1
