"""The ``cupel`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cupel import __version__
from cupel.cli import assemble, conformance


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cupel",
        description="Decide what goes into a language model's context window.",
    )
    parser.add_argument("--version", action="version", version=f"cupel {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in (conformance, assemble):
        module.register(subcommands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    code: int = args.handler(args)
    return code
