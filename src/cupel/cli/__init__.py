"""The ``cupel`` command line: select, explain, sensitivity, policies, assemble, conformance."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from cupel import __version__
from cupel.cli import assemble, conformance, explain, policies, replay, select, sensitivity
from cupel.cli._common import EXIT_PIPELINE, CliError
from cupel.errors import CupelError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cupel",
        description="Decide what goes into a language model's context window.",
    )
    parser.add_argument("--version", action="version", version=f"cupel {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (select, explain, sensitivity, policies, assemble, conformance, replay):
        module.register(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        code: int = args.handler(args)
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
