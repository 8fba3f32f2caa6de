"""``cupel index PATHS... --db FILE``: chunk Markdown, code and text files into a versioned SQLite store.

See :mod:`cupel.assembly.indexing` (what is indexed, incremental re-indexing) and
:mod:`cupel.assembly.chunking` (chunk sizes and overlaps). A progress bar is drawn on standard error when
it is a terminal; the summary line goes to standard output.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cupel._plural import counted
from cupel.assembly.chunking import ChunkingOptions
from cupel.assembly.indexing import index_paths
from cupel.assembly.store import SqliteStore
from cupel.cli._common import CliError
from cupel.cli._progress import Progress
from cupel.errors import CupelError


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


def run(args: argparse.Namespace) -> int:
    try:
        options = ChunkingOptions(_whole("--max-chars", args.max_chars), _whole("--overlap", args.overlap))
    except CupelError as error:
        message = str(error).replace("ChunkingOptions.max_chars", "--max-chars")
        raise CliError(message.replace("ChunkingOptions.overlap_chars", "--overlap")) from None
    progress: Progress | None = None

    def advance(done: int, total: int) -> None:
        nonlocal progress
        if progress is None and sys.stderr.isatty():
            progress = Progress(total)
        if progress is not None:
            progress.advance()

    try:
        with SqliteStore(args.db) as store:
            report = index_paths(store, args.paths, options, progress=advance)
    except CupelError as error:
        raise CliError(str(error)) from None
    except OSError as error:
        raise CliError(f"{error.filename}: cannot read ({error.strerror or error})") from None
    finally:
        if progress is not None:
            progress.close()
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
    return 0
