"""What the subcommands share: reading inputs, budgets and policies, with one-line errors."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cupel.errors import CupelError
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline

EXIT_USAGE = 2
EXIT_PIPELINE = 1


class CliError(Exception):
    """A problem with the user's input: printed as one line on stderr, exit status 2."""

    def __init__(self, message: str, *, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def read_text(source: str) -> str:
    """The text of a file, or of standard input for ``-``."""
    if source == "-":
        return sys.stdin.read()
    path = Path(source)
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CliError(f"{source}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{source}: is a directory, expected a file") from None
    except PermissionError:
        raise CliError(f"{source}: permission denied") from None
    except UnicodeDecodeError as error:
        raise CliError(f"{source}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise CliError(f"{source}: cannot read ({error.strerror})") from None


def parse_json_documents(text: str, source: str) -> tuple[Any, bool]:
    """Parse a JSON document or JSON Lines. Returns ``(data, is_jsonl)``; JSONL gives a list."""
    stripped = text.strip()
    if not stripped:
        raise CliError(f"{source}: empty input, expected JSON or JSON Lines")
    try:
        return json.loads(stripped), False
    except json.JSONDecodeError as whole_error:
        lines = text.splitlines()
        if len([line for line in lines if line.strip()]) <= 1 or not stripped.startswith("{"):
            raise CliError(
                f"{source}: invalid JSON at line {whole_error.lineno}, column {whole_error.colno}: "
                f"{whole_error.msg}"
            ) from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise CliError(
                f"{source}: invalid JSON at line {number}, column {error.colno}: {error.msg}"
            ) from None
    return records, True


def parse_budget(spec: str, reserve: int = 0) -> ContextBudget:
    """``MAX`` or ``MAX:TARGET`` (target defaults to max), with an output reserve."""
    parts = spec.split(":")
    if len(parts) > 2 or not all(part.strip().lstrip("-").isdigit() for part in parts):
        raise CliError(f"--budget: expected MAX or MAX:TARGET as whole numbers, got {spec!r}")
    max_tokens = int(parts[0])
    target = int(parts[1]) if len(parts) == 2 else max_tokens
    try:
        return ContextBudget(max_tokens, target, output_reserve=reserve)
    except CupelError as error:
        raise CliError(f"--budget: {_without_owner(str(error))}") from None


def _without_owner(message: str) -> str:
    return message.removeprefix("ContextBudget.")


def budget_from_json(data: object, where: str) -> ContextBudget:
    try:
        return ContextBudget.from_dict(data)  # type: ignore[arg-type]
    except CupelError as error:
        raise CliError(f"{where}: {error}") from None


def items_from_json(data: object, source: str) -> list[ContextItem]:
    """Items from a JSON array (or JSONL list) of item objects; errors name the item index and field."""
    if isinstance(data, dict) and "items" in data:
        data = data["items"]
    if not isinstance(data, list):
        raise CliError(f"{source}: expected a JSON array of items, got a JSON {_json_type(data)}")
    from cupel import wire

    items = []
    for index, entry in enumerate(data):
        try:
            items.append(wire.item_from_dict(entry, f"item {index}"))
        except CupelError as error:
            raise CliError(f"{source}: {error}") from None
    return items


def _json_type(value: object) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number"
    )


@dataclass(frozen=True, slots=True)
class Candidates:
    """What an ITEMS argument held: context items, or a chat transcript."""

    items: list[ContextItem] | None
    messages: list[Any] | None


def load_candidates(source: str) -> Candidates:
    data, _ = parse_json_documents(read_text(source), source)
    return candidates_from_json(data, source)


def candidates_from_json(data: object, source: str) -> Candidates:
    from cupel.chat import is_chat_transcript

    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if is_chat_transcript(data):
        assert isinstance(data, list)
        return Candidates(None, data)
    return Candidates(items_from_json(data, source), None)


def add_policy_argument(parser: argparse.ArgumentParser, *, repeat: bool = False) -> None:
    help_text = "preset name (see `cupel policies`) or a policy file (.toml or .json)"
    if repeat:
        parser.add_argument("--policy", action="append", required=True, metavar="NAME|FILE", help=help_text)
    else:
        parser.add_argument(
            "--policy", default="chat", metavar="NAME|FILE", help=help_text + "; default chat"
        )


def add_budget_arguments(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    parser.add_argument(
        "--budget",
        required=required,
        metavar="MAX[:TARGET]",
        help="token budget: maximum and optional target",
    )
    parser.add_argument("--reserve", type=int, default=0, metavar="N", help="tokens reserved for the output")


def add_tokenizer_argument(parser: argparse.ArgumentParser, *, default: str = "heuristic") -> None:
    from cupel.tokens.named import COUNTER_NAMES

    parser.add_argument(
        "--tokenizer",
        default=default,
        metavar="NAME|FILE",
        help=f"token counter: {COUNTER_NAMES} (default: {default})",
    )


def resolve_policy(spec: str, option: str = "--policy") -> tuple[str, Any]:
    """A preset name or a policy file path -> (label, Policy); errors are prefixed with ``option``."""
    from cupel.policy import get_preset, load_policy, preset_names

    prefix = f"{option}: " if option else ""
    path = Path(spec)
    if path.suffix.lower() in (".toml", ".json") or path.exists():
        if not path.is_file():
            raise CliError(f"{prefix}{spec}: no such file")
        try:
            return path.stem, load_policy(path)
        except CupelError as error:
            raise CliError(f"{prefix}{spec}: {error}") from None
    try:
        return spec, get_preset(spec)
    except (CupelError, KeyError):
        raise CliError(
            f"{prefix}unknown policy {spec!r}; known presets: {', '.join(preset_names())}"
        ) from None


def pipeline_for(spec: str) -> Pipeline:
    _, policy = resolve_policy(spec)
    return Pipeline.from_policy(policy)


def resolve_counter(name: str) -> Any:
    """The token counter named by ``--tokenizer`` (see :func:`cupel.tokens.counter_from_name`)."""
    from cupel.tokens import counter_from_name

    try:
        return counter_from_name(name)
    except CupelError as error:
        raise CliError(f"--tokenizer: {error}") from None
