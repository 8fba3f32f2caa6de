"""``cupel select``: print the selected, placed context window (or a trimmed chat transcript)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator, Sequence
from typing import Any

from cupel import _input
from cupel._frozen import dataclass
from cupel._plural import counted
from cupel.cli._chat import add_chat_arguments, chat_keywords
from cupel.cli._common import (
    Candidates,
    CliError,
    add_budget_arguments,
    add_policy_argument,
    add_query_argument,
    add_tokenizer_argument,
    budget_from_json,
    candidates_from_json,
    load_candidates,
    parse_budget,
    pipeline_for,
    resolve_counter,
    resolve_policy,
    with_tokens,
)
from cupel.cli._progress import Progress as _Progress
from cupel.cli._terminal import terminal_safe
from cupel.errors import CupelError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "select",
        help="select and order context items (or trim a chat transcript) for a token budget",
        description=(
            "Read candidate items (a JSON array or JSON Lines of items, or a chat transcript of "
            "{role, content} messages) and print the selected context window in placed order. "
            "Tool calls always stay with their results."
        ),
    )
    parser.add_argument("items", nargs="?", metavar="ITEMS", help="JSON/JSONL file, or - for stdin")
    add_budget_arguments(
        parser, required=False, note="required, except with --batch when every line gives its own budget"
    )
    add_policy_argument(parser)
    add_tokenizer_argument(parser)
    parser.add_argument(
        "--format", choices=("json", "jsonl", "text"), default="json", help="output format (default json)"
    )
    parser.add_argument(
        "--batch",
        metavar="SETS.jsonl",
        help="run one selection per line (each an object with items or messages and optional budget)",
    )
    parser.add_argument("--jobs", type=int, default=1, metavar="N", help="worker processes for --batch")
    add_query_argument(parser)
    add_chat_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.batch is not None:
        if args.items is not None:
            raise CliError("give either ITEMS or --batch, not both")
        return run_batch(args)
    if args.items is None:
        raise CliError("missing ITEMS (a file, or - for standard input)")
    if args.jobs != 1:
        raise CliError("--jobs applies only to --batch")
    if args.budget is None:
        raise CliError("--budget is required")
    budget = parse_budget(args.budget, args.reserve)
    pipeline = pipeline_for(args.policy)
    candidates = load_candidates(args.items, args.tokenizer)
    if candidates.messages is not None:
        from cupel.chat import select_messages

        _, policy = resolve_policy(args.policy)
        chosen = select_messages(
            candidates.messages,
            budget,
            policy=policy,
            counter=resolve_counter(args.tokenizer),
            query="auto" if args.query is None else args.query,  # by default, the latest user message
            **chat_keywords(args),
        )
        sys.stdout.write(render(Selection(None, list(chosen.messages)), args.format))
        return 0
    selection = select(candidates, budget, pipeline, args.tokenizer, query=args.query)
    sys.stdout.write(render(selection, args.format))
    return 0


@dataclass(frozen=True, slots=True)
class Selection:
    items: list[ContextItem] | None
    messages: list[Any] | None


def select(
    candidates: Candidates,
    budget: ContextBudget,
    pipeline: Pipeline,
    tokenizer: str,
    *,
    query: str | None = None,
) -> Selection:
    if candidates.messages is not None:
        from cupel.chat import select_messages

        chosen = select_messages(
            candidates.messages,
            budget,
            policy=pipeline,
            counter=resolve_counter(tokenizer),
            query="auto" if query is None else query,
        )
        return Selection(None, list(chosen.messages))
    assert candidates.items is not None
    return Selection(pipeline.run(candidates.items, budget, query=query), None)


def render(selection: Selection, output: str) -> str:
    if selection.messages is not None:
        records: list[Any] = selection.messages
    else:
        assert selection.items is not None
        records = [item.to_dict() for item in selection.items]
    if output == "json":
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    if output == "jsonl":
        return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records)
    if selection.messages is not None:
        return "".join(_message_text(message) for message in selection.messages)
    assert selection.items is not None
    return "".join(_item_text(index, item) for index, item in enumerate(selection.items, start=1))


def _item_text(position: int, item: ContextItem) -> str:
    flags = " pinned" if item.pinned else ""
    kind = terminal_safe(str(item.kind))
    content = terminal_safe(item.content, keep_line_breaks=True)
    return f"--- [{position}] {kind} · {counted(item.tokens, 'token')}{flags}\n{content}\n"


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return f"--- message\n{terminal_safe(json.dumps(message, ensure_ascii=False))}\n"
    content = message.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    else:
        text = json.dumps(content, ensure_ascii=False)
    lines = [f"--- {message.get('role', '?')}"]
    if text:
        lines.append(text)
    for call in message.get("tool_calls") or ():
        function = call.get("function", {}) if isinstance(call, dict) else {}
        name = function.get("name", "?") if isinstance(function, dict) else "?"
        arguments = function.get("arguments", "") if isinstance(function, dict) else ""
        lines.append(
            f"[tool call {call.get('id', '?') if isinstance(call, dict) else '?'}] {name}({arguments})"
        )
    return terminal_safe("\n".join(lines), keep_line_breaks=True) + "\n"


# ---- batch mode -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Job:
    line: int
    raw: bytes
    default_budget: str | None
    reserve: int
    policy: str
    tokenizer: str


def _run_job(job: _Job) -> str:
    """One batch line -> one output line; every problem is reported in-line so other lines still run."""
    try:
        if not job.raw.strip():
            raise CliError("blank line, expected a JSON object with 'items' or 'messages'")
        text = _input.decode_text(job.raw, "input")
        record = _input.loads_json(text, "input")
        if not isinstance(record, dict):
            raise CliError("expected a JSON object with 'items' or 'messages'")
        if "budget" in record:
            budget = budget_from_json(record["budget"], "budget")
        elif job.default_budget is not None:
            budget = parse_budget(job.default_budget, job.reserve)
        else:
            raise CliError("no budget: give 'budget' on the line or --budget")
        key = "messages" if "messages" in record else "items"
        if key not in record:
            raise CliError("expected a JSON object with 'items' or 'messages'")
        candidates = candidates_from_json(with_tokens(record[key], job.tokenizer), key)
        selection = select(candidates, budget, pipeline_for(job.policy), job.tokenizer)
        if selection.messages is not None:
            return json.dumps({"messages": selection.messages}, ensure_ascii=False)
        assert selection.items is not None
        return json.dumps({"items": [item.to_dict() for item in selection.items]}, ensure_ascii=False)
    except (CliError, CupelError) as error:
        # A batch line is one line of JSON: its column is all the position there is.
        message = str(error).removeprefix("input: ").replace("JSON at line 1, column", "JSON at column", 1)
        return json.dumps({"error": f"line {job.line}: {message}", "line": job.line}, ensure_ascii=False)


def batch_lines(data: bytes) -> list[bytes]:
    """The physical lines of a batch file (a final newline does not start another line)."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    if not data:
        return []
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


def run_batch(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")
    if args.format != "json":
        raise CliError("--format does not apply to --batch, which always writes one JSON object per line")
    if args.budget is not None:
        parse_budget(args.budget, args.reserve)  # fail fast on a bad default budget
    pipeline_for(args.policy)  # and on an unknown policy
    try:
        data = _input.read_bytes(args.batch)
    except _input.InputError as error:
        raise CliError(str(error)) from None
    jobs = [
        _Job(number, raw, args.budget, args.reserve, args.policy, args.tokenizer)
        for number, raw in enumerate(batch_lines(data), start=1)
    ]
    if not jobs:
        raise CliError(f"{args.batch}: empty input, expected JSON Lines with one selection per line")
    progress = _Progress(len(jobs)) if sys.stderr.isatty() else None
    failures = 0
    for output in _map(jobs, args.jobs):
        failures += output.startswith('{"error"')
        sys.stdout.write(output + "\n")
        if progress is not None:
            progress.advance()
    if progress is not None:
        progress.close()
    return 1 if failures else 0


def _map(jobs: Sequence[_Job], workers: int) -> Iterator[str]:
    if workers == 1 or len(jobs) < 2:
        yield from map(_run_job, jobs)
        return
    from concurrent.futures import ProcessPoolExecutor

    workers = min(workers, len(jobs), os.cpu_count() or 1)
    chunk = max(1, len(jobs) // (workers * 8))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        # map() yields in input order, so output order equals input order.
        yield from pool.map(_run_job, jobs, chunksize=chunk)
