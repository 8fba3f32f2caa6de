"""``cupel assemble RESULTS.jsonl --budget N``: pack retrieval results into a formatted context (CFS-021).

The input is JSON Lines, one retrieval result per line (see :mod:`cupel.assembly.jsonl` and docs/rag.md).
The formatted context goes to standard output as UTF-8, whatever the locale, so that equal inputs give
byte-identical output. Input errors print one line on standard error and exit with status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from cupel.assembly import (
    AssemblyConfig,
    PackingStrategy,
    ResultsFormatError,
    StaticRetriever,
    TokenBudget,
    assemble_context,
    format_context,
    parse_results,
    read_results,
)
from cupel.cli._common import CliError, add_tokenizer_argument, resolve_counter
from cupel.errors import CupelError

_STRATEGIES = ", ".join(strategy.value for strategy in PackingStrategy)


class _InputError(Exception):
    """A bad command-line value; the message is printed as is."""


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "assemble",
        help="pack retrieval results (JSONL) into a token-budgeted context",
        description=(
            "Read retrieval results (one JSON object per line), drop duplicates, pack them into the token "
            "budget and print the context with [DOC: path] markers. Budget arithmetic uses --tokenizer, by "
            "default the spec's SimpleTokenizer (4 UTF-8 bytes per token)."
        ),
    )
    parser.add_argument("results", metavar="RESULTS.jsonl", help="results file, or - for standard input")
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
        help=f"packing strategy: {_STRATEGIES} (default: greedy)",
    )
    parser.add_argument(
        "--query", default="", metavar="TEXT", help="the query (recorded in the metadata hash)"
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


def _count(option: str, text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise _InputError(f"{option} must be a whole number, got {text!r}") from None
    if value < 0:
        raise _InputError(f"{option} must be >= 0, got {value}")
    return value


def _settings(args: argparse.Namespace) -> tuple[TokenBudget, AssemblyConfig]:
    total = _count("--budget", args.budget)
    system = _count("--reserved-system", args.reserved_system)
    query = _count("--reserved-query", args.reserved_query)
    response = _count("--reserved-response", args.reserved_response)
    overhead = _count("--per-doc-overhead", args.per_doc_overhead)
    if total < system + query + response:
        raise _InputError(
            f"--budget {total} is smaller than the reserved tokens ({system + query + response} = "
            f"system {system} + query {query} + response {response})"
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
        raise _InputError(f"--dedup-threshold must be a number, got {args.dedup_threshold!r}") from None
    if not 0.0 <= threshold <= 1.0:
        raise _InputError(f"--dedup-threshold must be between 0 and 1, got {args.dedup_threshold}")
    limit = (
        None if args.max_chunks_per_doc is None else _count("--max-chunks-per-doc", args.max_chunks_per_doc)
    )
    if limit == 0:
        raise _InputError("--max-chunks-per-doc must be >= 1, got 0")
    try:
        strategy = PackingStrategy(args.strategy)
    except ValueError:
        raise _InputError(f"--strategy must be one of {_STRATEGIES}, got {args.strategy!r}") from None
    config = AssemblyConfig(
        packing_strategy=strategy,
        dedup_threshold=threshold,
        max_chunks_per_doc=limit,
        prefer_recent=args.prefer_recent,
        include_metadata=args.metadata,
    )
    return budget, config


def _load(path: str) -> tuple[Any, ...]:
    if path == "-":
        return parse_results(sys.stdin.buffer.read().decode("utf-8-sig"), source="<stdin>")
    try:
        return read_results(path)
    except OSError as error:
        reason = error.strerror or str(error)
        raise _InputError(f"cannot read {path}: {reason}") from None


def run(args: argparse.Namespace) -> int:
    try:
        budget, config = _settings(args)
        results = _load(args.results)
        counter = resolve_counter(args.tokenizer)
        context = assemble_context(args.query, StaticRetriever(results), budget, counter, config)
    except UnicodeDecodeError as error:
        return _fail(args, error, f"{args.results}: not valid UTF-8 (byte {error.start})")
    except (_InputError, ResultsFormatError, CupelError, CliError) as error:
        return _fail(args, error, str(error))
    text = format_context(context, include_metadata=config.include_metadata)
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
            f"cupel assemble: {len(context.chunks)} of {len(results)} chunks from {documents} documents, "
            f"{context.total_tokens} of {budget.available} tokens"
            f"{', last chunk truncated' if context.truncated else ''}",
            file=sys.stderr,
        )
    return 0


def _fail(args: argparse.Namespace, error: BaseException, message: str) -> int:
    if getattr(args, "debug", False):
        raise error
    print(f"cupel assemble: {message}", file=sys.stderr)
    return 2
