"""The ``cupel`` command line: select, explain, sensitivity, policies, assemble, index, conformance, eval,
replay."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from cupel import __version__
from cupel.cli import _otel
from cupel.cli._common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_PIPELINE,
    EXIT_USAGE,
    CliError,
    HelpFormatter,
    exit_status_for,
)
from cupel.cli._terminal import one_line
from cupel.errors import CupelError

#: The subcommands, each a module of this package with ``register(subcommands)``.
SUBCOMMANDS = (
    "select",
    "explain",
    "sensitivity",
    "policies",
    "assemble",
    "index",
    "conformance",
    "eval",
    "replay",
)


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors: ``cupel select: --budget: expected one argument``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)  # subcommands' parsers are _Parsers too
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command`` only that subcommand's module is imported and registered."""
    parser = _Parser(
        prog="cupel",
        description="Decide what goes into a language model's context window.",
    )
    parser.add_argument("--version", action="version", version=f"cupel {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument(
        "--otel",
        action="store_true",
        help="export OpenTelemetry spans as the standard OTEL_* environment variables configure",
    )
    parser.add_argument(
        "--otel-verbosity",
        choices=_otel.VERBOSITIES,
        default="StageOnly",
        help="with --otel: how much each run emits (default: StageOnly)",
    )
    # prog given: argparse would otherwise format the (positional-free) usage "cupel" to find it.
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", prog=parser.prog)
    for name in SUBCOMMANDS:
        if command is None or name == command:
            importlib.import_module(f"cupel.cli.{name}").register(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    # The top-level options take no values but --otel-verbosity's, so the first other bare word is the
    # subcommand (if any): import just its module. Anything else (help, a typo) builds the full parser.
    command = next(
        (
            argument
            for position, argument in enumerate(arguments)
            if not argument.startswith("-")
            and (position == 0 or arguments[position - 1] != "--otel-verbosity")
        ),
        None,
    )
    parser = build_parser(command if command in SUBCOMMANDS else None)
    args = parser.parse_args(arguments)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        if args.otel:
            with _otel.otel_session(args.command, args.otel_verbosity):
                code: int = args.handler(args)
        else:
            code = args.handler(args)
    except (CliError, CupelError) as error:
        # Pipeline errors (pinned items over budget, overflow under THROW, scarcity) keep the spec's text.
        return _fail(args, f"cupel {args.command}: {one_line(str(error))}", exit_status_for(error))
    except KeyboardInterrupt:
        return _fail(args, f"cupel {args.command}: interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        return EXIT_OK
    except (RecursionError, MemoryError) as error:
        message = f"input too large or too deeply nested ({type(error).__name__})"
        return _fail(args, f"cupel {args.command}: {message}", EXIT_USAGE)
    except Exception as error:
        # A defect, not the user's fault: still one line, with the way to the details.
        message = f"unexpected {type(error).__name__}: {error}; --debug shows the traceback"
        return _fail(args, f"cupel {args.command}: {one_line(message)}", EXIT_PIPELINE)
    return code


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if getattr(args, "debug", False):
        import traceback  # only when asked for

        traceback.print_exc()
    print(message, file=sys.stderr)
    return code
