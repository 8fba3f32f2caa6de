"""``cupel replay``: replay policies × budgets over logged sessions on Dask and summarise the outcome."""

from __future__ import annotations

import argparse
import math
import os
import sys
from typing import Any

from cupel._atomic import write_atomic
from cupel.cli._common import CliError, add_comparison_arguments, resolve_policy
from cupel.cli._output import check_output, writing
from cupel.errors import CupelError


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "replay",
        help="replay policies and budgets over logged sessions (JSONL or Parquet) on Dask",
        description=(
            "Run every logged session (one `cupel select --batch` JSON line each, or a Parquet row) under "
            "every --policy and --budget, write one row per session, policy and budget, and print a summary. "
            "Without --scheduler it runs on local processes; needs the dask extra."
        ),
    )
    parser.add_argument(
        "sessions", nargs="+", metavar="SESSIONS", help="JSONL or Parquet files, directories or globs"
    )
    add_comparison_arguments(
        parser, policy_default="default chat", budget_default="default each session's own budget"
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS|local[:N]",
        help="a dask.distributed scheduler address, or local[:N] for a local cluster of N worker processes",
    )
    parser.add_argument(
        "--connect-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds a --scheduler ADDRESS has to answer before the replay gives up (default 5)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="local processes without --scheduler",
    )
    parser.add_argument(
        "--blocksize",
        default="32MiB",
        metavar="BYTES",
        help="JSONL bytes per partition, e.g. 32MiB (the unit of work and of memory per worker)",
    )
    parser.add_argument(
        "--output", "-o", metavar="FILE", help="per-session rows: .parquet, or JSONL otherwise"
    )
    parser.add_argument(
        "--summary-format",
        choices=("text", "json", "html"),
        default="text",
        help="summary format (default text)",
    )
    parser.add_argument(
        "--summary", metavar="FILE", help="write the summary to FILE instead of standard output"
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.jobs < 1:
        raise CliError(f"--jobs must be at least 1, got {args.jobs}")
    if args.connect_timeout is not None and not 0 < args.connect_timeout < math.inf:
        raise CliError(f"--connect-timeout must be a number of seconds > 0, got {args.connect_timeout:g}")
    for option, path in (("--output", args.output), ("--summary", args.summary)):
        if path is not None:
            check_output(option, path)
    policies = dict(resolve_policy(spec) for spec in (args.policy or ["chat"]))
    if len(policies) != len(args.policy or ["chat"]):
        raise CliError("--policy: two policies have the same name; give each file a different name")
    try:
        from cupel.distributed import connect, render_summary, replay, write_results
        from cupel.distributed.scheduler import DEFAULT_CONNECT_TIMEOUT, SchedulerUnreachable, parse_scheduler

        parse_scheduler(args.scheduler)
        blocksize = _blocksize(args.blocksize)
        budgets = args.budget or [None]
        timeout = DEFAULT_CONNECT_TIMEOUT if args.connect_timeout is None else args.connect_timeout
        with connect(args.scheduler, args.jobs, connect_timeout=timeout) as runner:
            result = replay(
                args.sessions,
                policies,
                budgets,
                client=runner.client,
                scheduler=runner.scheduler,
                blocksize=blocksize,
            )
            if args.output is not None:
                with writing("--output", args.output):
                    write_results(result, args.output)
    except ImportError as error:
        raise CliError(str(error)) from None
    except SchedulerUnreachable as error:
        raise CliError(f"--scheduler: {error}") from None
    except (ValueError, FileNotFoundError, TypeError) as error:
        if isinstance(error, CupelError):
            raise CliError(str(error)) from None
        raise CliError(str(error).removeprefix("sessions: ")) from None
    text = render_summary(result.summary, args.summary_format)
    if args.summary is None:
        sys.stdout.write(text)
    else:
        with writing("--summary", args.summary):
            write_atomic(args.summary, text)
    return 0


def _blocksize(text: str) -> int:
    from cupel.distributed._extra import require

    try:
        size = int(require("dask.utils").parse_bytes(text))
    except (ValueError, TypeError):
        raise CliError(f"--blocksize: expected a size such as 32MiB, got {text!r}") from None
    if size < 1:
        raise CliError(f"--blocksize: expected at least 1 byte, got {text!r}")
    return size
