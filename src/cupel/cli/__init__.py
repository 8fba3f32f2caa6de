"""The ``cupel`` command line: select, explain, sensitivity, policies, assemble, index, conformance, eval."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence

from cupel import __version__
from cupel.cli import _otel
from cupel.cli._common import EXIT_PIPELINE, CliError
from cupel.errors import CupelError

#: The subcommands, each a module of this package with ``register(subcommands)``.
SUBCOMMANDS = ("select", "explain", "sensitivity", "policies", "assemble", "index", "conformance", "eval")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``command`` only that subcommand's module is imported and registered."""
    parser = argparse.ArgumentParser(
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
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
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
        return 2
    try:
        if args.otel:
            with _otel.otel_session(args.command, args.otel_verbosity):
                code: int = args.handler(args)
        else:
            code = args.handler(args)
    except CliError as error:
        return _fail(args, f"cupel {args.command}: {error}", error.code)
    except CupelError as error:
        # Pipeline errors (pinned items over budget, overflow under THROW, scarcity) keep the spec's text.
        return _fail(args, f"cupel {args.command}: {error}", EXIT_PIPELINE)
    except KeyboardInterrupt:
        return _fail(args, f"cupel {args.command}: interrupted", 130)
    except BrokenPipeError:
        return 0
    return code


def _fail(args: argparse.Namespace, message: str, code: int) -> int:
    if getattr(args, "debug", False):
        traceback.print_exc()
    print(message, file=sys.stderr)
    return code
