"""``cupel assemble RESULTS.jsonl --budget N`` or ``cupel assemble --db FILE --query TEXT --budget N``:
pack retrieval results into a formatted context (CFS-021).

The input is JSON Lines, one retrieval result per line (see :mod:`cupel.assembly.jsonl` and docs/rag.md),
or a store built by ``cupel index``, searched with ``hybrid_search`` at its latest version or at
``--state-root``.
The formatted context goes to standard output as UTF-8, whatever the locale, so that equal inputs give
byte-identical output. Input errors print one line on standard error and exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from cupel import _input
from cupel._plural import counted
from cupel.assembly import (
    AssembledContext,
    AssemblyConfig,
    PackingStrategy,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    format_context,
    parse_results,
    read_results,
)
from cupel.assembly._validate import lone_surrogate
from cupel.cli._common import CliError, add_tokenizer_argument, resolve_counter, whole_number
from cupel.errors import CupelError

_STRATEGIES = ", ".join(strategy.value for strategy in PackingStrategy)


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "assemble",
        help="pack retrieval results (JSONL, or from a `cupel index` store) into a token-budgeted context",
        description=(
            "Read retrieval results (one JSON object per line), or search a store built by `cupel index` "
            "(--db, opened read-only: it never waits for `cupel index` and never changes the file), drop "
            "duplicates, pack them into the token budget and print the context with [DOC: path] markers. "
            "Budget arithmetic uses --tokenizer, by default the spec's SimpleTokenizer (4 UTF-8 bytes per "
            "token). A store indexed with --embedder hashing needs numpy to search "
            '(pip install "pycupel[rag]"); the default store needs no extra.'
        ),
    )
    parser.add_argument(
        "results",
        nargs="?",
        metavar="RESULTS.jsonl",
        help="results file, or - for standard input (not with --db)",
    )
    parser.add_argument(
        "--db", metavar="FILE", help="retrieve from this store (`cupel index`) instead of a results file"
    )
    parser.add_argument(
        "--state-root",
        metavar="HEX",
        help="with --db: search this version (a state root or a unique prefix of 8+ hex digits)",
    )
    parser.add_argument(
        "--format", default="text", metavar="FORMAT", help="text (the context, default) or json"
    )
    parser.add_argument(
        "--marker-tokens",
        default="fixed",
        metavar="MODE",
        help="fixed: --per-doc-overhead per [DOC: ...] marker, as the spec (default); exact: count markers "
        "with the tokenizer so the printed context never exceeds the budget",
    )
    parser.add_argument(
        "--budget",
        required=True,
        metavar="N",
        help="total context tokens; the reserves below are taken from it",
    )
    parser.add_argument(
        "--strategy",
        default=PackingStrategy.GREEDY.value,
        metavar="NAME",
        help=f"packing strategy: {_STRATEGIES} (default: greedy; '-' may replace '_')",
    )
    parser.add_argument(
        "--query",
        default="",
        metavar="TEXT",
        help="the query: searched with --db (required there), recorded in the metadata hash",
    )
    parser.add_argument(
        "--dedup-threshold",
        default="0.8",
        metavar="X",
        help="near-duplicate containment threshold in [0, 1]; 1 keeps near duplicates (default: 0.8)",
    )
    parser.add_argument(
        "--max-chunks-per-doc", default=None, metavar="N", help="keep at most N chunks of each document"
    )
    parser.add_argument(
        "--prefer-recent", action="store_true", help="boost documents with a later modified_at"
    )
    parser.add_argument(
        "--metadata", action="store_true", help="print a [CHUNK: id seq=N score=S] line before each chunk"
    )
    for name, default in (("system", 200), ("query", 100), ("response", 500)):
        parser.add_argument(
            f"--reserved-{name}",
            default=str(default),
            metavar="N",
            help=f"tokens reserved for the {name} (default: {default})",
        )
    parser.add_argument(
        "--per-doc-overhead",
        default="10",
        metavar="N",
        help="tokens charged per [DOC: ...] marker (default: 10)",
    )
    add_tokenizer_argument(parser, default="bytes/4")
    parser.add_argument(
        "--summary", action="store_true", help="print chunk and token counts on standard error"
    )
    parser.set_defaults(handler=run)


def _settings(args: argparse.Namespace) -> tuple[TokenBudget, AssemblyConfig]:
    total = whole_number("--budget", args.budget, minimum=0)
    system = whole_number("--reserved-system", args.reserved_system, minimum=0)
    query = whole_number("--reserved-query", args.reserved_query, minimum=0)
    response = whole_number("--reserved-response", args.reserved_response, minimum=0)
    overhead = whole_number("--per-doc-overhead", args.per_doc_overhead, minimum=0)
    reserved = system + query + response
    if total <= reserved:
        raise CliError(
            f"--budget {total} leaves no tokens for the context: the reserves take "
            f"{'all of it' if total == reserved else 'more'} ({reserved} = --reserved-system {system} + "
            f"--reserved-query {query} + --reserved-response {response}); raise --budget or lower a reserve"
        )
    budget = TokenBudget(
        total,
        reserved_system=system,
        reserved_query=query,
        reserved_response=response,
        per_doc_overhead=overhead,
    )
    try:
        threshold = float(args.dedup_threshold)
    except ValueError:
        raise CliError(f"--dedup-threshold must be a number, got {args.dedup_threshold!r}") from None
    if not 0.0 <= threshold <= 1.0:
        raise CliError(f"--dedup-threshold must be between 0 and 1, got {args.dedup_threshold}")
    limit = (
        None
        if args.max_chunks_per_doc is None
        else whole_number("--max-chunks-per-doc", args.max_chunks_per_doc, minimum=1)
    )
    try:
        strategy = PackingStrategy(args.strategy.replace("-", "_"))
    except ValueError:
        raise CliError(f"--strategy must be one of {_STRATEGIES}, got {args.strategy!r}") from None
    if args.marker_tokens not in ("fixed", "exact"):
        raise CliError(f"--marker-tokens must be fixed or exact, got {args.marker_tokens!r}")
    if args.format not in ("text", "json"):
        raise CliError(f"--format must be text or json, got {args.format!r}")
    config = AssemblyConfig(
        packing_strategy=strategy,
        dedup_threshold=threshold,
        max_chunks_per_doc=limit,
        prefer_recent=args.prefer_recent,
        include_metadata=args.metadata,
        marker_tokens=args.marker_tokens,
    )
    return budget, config


def _check_arguments(args: argparse.Namespace) -> None:
    position = lone_surrogate(args.query)
    if position is not None:
        raise CliError(f"--query is not valid UTF-8 (an undecodable byte at character {position})")
    if args.db is None:
        if args.results is None:
            raise CliError("give a RESULTS.jsonl file (or -), or --db FILE with --query TEXT")
        if args.state_root is not None:
            raise CliError("--state-root needs --db")
        return
    if args.results is not None:
        raise CliError(f"give either RESULTS.jsonl or --db, not both (got {args.results!r} and --db)")
    if not args.query.strip():
        raise CliError("--db needs a non-empty --query")
    if not os.path.isfile(args.db):
        raise CliError(f"--db {args.db}: no such store (build one with `cupel index PATHS --db FILE`)")


def _assemble_from_store(
    args: argparse.Namespace, budget: TokenBudget, config: AssemblyConfig, counter: Any
) -> tuple[AssembledContext, int]:
    from cupel.assembly.hybrid import SearchParams, hybrid_search
    from cupel.assembly.store import SqliteStore

    with SqliteStore(args.db, read_only=True) as store:
        # What parallel_assemble does, keeping the retrieved results to count them for --summary.
        snapshot = store.snapshot(args.state_root)
        params = SearchParams.for_budget(budget.available)
        results = hybrid_search(args.query, snapshot, params, parallel=store.embedder is not None)
        retriever = StaticRetriever(results, state_root=snapshot.state_root())
        context = assemble_context(args.query, retriever, budget, counter, config)
    return context, len(results)


def _load(path: str) -> tuple[Any, ...]:
    if path == "-":
        return parse_results(_input.read_text("-"), source="<stdin>")
    try:
        return read_results(path)
    except OSError as error:
        reason = error.strerror or str(error)
        raise CliError(f"cannot read {path}: {reason}") from None


def run(args: argparse.Namespace) -> int:
    try:
        _check_arguments(args)
        budget, config = _settings(args)
        counter = resolve_counter(args.tokenizer)
        if args.db is not None:
            context, candidates = _assemble_from_store(args, budget, config, counter)
        else:
            results = _load(args.results)
            context = assemble_context(args.query, StaticRetriever(results), budget, counter, config)
            candidates = len(results)
    except UnicodeDecodeError as error:
        return _fail(args, error, f"{args.results}: not valid UTF-8 (byte {error.start})")
    except (CliError, CupelError) as error:  # ResultsFormatError is a CupelError
        return _fail(args, error, str(error))
    text = format_context(context, include_metadata=config.include_metadata)
    if args.format == "json":
        text = json.dumps(_as_json(context, text, budget), ensure_ascii=False, indent=2) + "\n"
    try:
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); stop quietly, and keep the interpreter's final flush quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    if args.summary:
        documents = len({chunk.document_path for chunk in context.chunks})
        print(
            f"cupel assemble: {len(context.chunks)} of {counted(candidates, 'chunk')} from "
            f"{counted(documents, 'document')}, "
            f"{context.total_tokens} of {counted(budget.available, 'token')}"
            f"{', last chunk truncated' if context.truncated else ''}",
            file=sys.stderr,
        )
    return 0


def _as_json(context: AssembledContext, text: str, budget: TokenBudget) -> dict[str, Any]:
    metadata = context.metadata
    return {
        "context": text,
        "total_tokens": context.total_tokens,
        "available_tokens": budget.available,
        "truncated": context.truncated,
        "metadata": None
        if metadata is None
        else {
            "query_hash": metadata.query_hash,
            "state_root": metadata.state_root,
            "timestamp": metadata.timestamp.isoformat(),
        },
        "chunks": [
            {
                "chunk_id": chunk.chunk_id,
                "document_id": chunk.document_id,
                "document_path": chunk.document_path,
                "sequence": chunk.sequence,
                "byte_offset": chunk.byte_offset,
                "score": chunk.score,
                "tokens": chunk.tokens,
                "truncated": chunk.truncated,
                "text": chunk.text,
            }
            for chunk in context.chunks
        ],
    }


def _fail(args: argparse.Namespace, error: BaseException, message: str) -> int:
    if getattr(args, "debug", False):
        raise error
    print(f"cupel assemble: {message}", file=sys.stderr)
    return 2
