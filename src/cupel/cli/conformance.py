"""``cupel conformance PATH...``: run conformance vectors and print one line per vector."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any

from cupel.cli._terminal import one_line
from cupel.conformance.runner import discover_vectors, run_vector


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "conformance",
        help="run Cupel conformance vectors (TOML)",
        description="Run every *.toml conformance vector under the given paths.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="vector files or directories")
    parser.add_argument("--quiet", "-q", action="store_true", help="print only failures")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("tomli") is None:
        # Vectors are TOML 1.1 (date-times may omit seconds), which the standard library cannot read.
        print(
            "cupel conformance: reading vectors needs a TOML 1.1 parser: pip install 'pycupel[toml]'",
            file=sys.stderr,
        )
        return 2
    try:
        paths = discover_vectors(args.paths)
    except FileNotFoundError as error:
        print(f"cupel conformance: {error}", file=sys.stderr)
        return 2
    if not paths:
        print(
            f"cupel conformance: no vectors (*.toml files) found in {' '.join(args.paths)}",
            file=sys.stderr,
        )
        return 2
    passed = failed = 0
    for path in paths:
        result = run_vector(path)
        if result.passed:
            passed += 1
        else:
            failed += 1
        if not (args.quiet and result.passed):
            print(one_line(result.line()))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0
