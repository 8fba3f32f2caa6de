"""``cupel policies``: list the presets, or show one preset's configuration."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from cupel.cli._common import POLICY_HELP, CliError, resolve_policy


def register(subcommands: Any) -> None:
    parser = subcommands.add_parser(
        "policies",
        help="list the policy presets, or show one (`cupel policies show NAME`)",
        description="List the built-in policy presets with one line each, or print one preset's policy file.",
    )
    parser.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    parser.add_argument("name", nargs="?", metavar="NAME|FILE", help=f"for show: {POLICY_HELP}")
    parser.add_argument("--format", choices=("toml", "json"), default="toml", help="format for show")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from cupel.policy import dump_policy, preset_description, preset_names

    if args.action == "list":
        if args.name is not None:
            raise CliError("`cupel policies` takes no name; use `cupel policies show NAME`")
        names = preset_names()
        width = max(len(name) for name in names)
        for name in names:
            print(f"{name.ljust(width)}  {preset_description(name)}")
        return 0
    if args.name is None:
        raise CliError("`cupel policies show` needs a preset name or a policy file")
    _, policy = resolve_policy(args.name, option="")
    sys.stdout.write(dump_policy(policy, args.format).rstrip("\n") + "\n")
    return 0
