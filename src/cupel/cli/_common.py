"""What the subcommands share: reading inputs, budgets and policies, with one-line errors."""

from __future__ import annotations

import argparse
import os
import re
from collections.abc import Mapping
from typing import Any

from cupel import _input
from cupel._frozen import dataclass
from cupel.errors import (
    BudgetOverflowError,
    CupelError,
    PinnedItemsExceedBudgetError,
    ScarcityError,
    TableTooLargeError,
)
from cupel.model import ContextBudget, ContextItem
from cupel.pipeline import Pipeline

EXIT_OK = 0
EXIT_PIPELINE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

#: Every exit status the command line uses and what it means; docs/cli.md's table is checked against it.
EXIT_STATUSES = {
    EXIT_OK: (
        "success; for `replay`, also when sessions were malformed or their selection failed (they are "
        "error rows, counted in the summary); for `eval`, also when a policy's selection failed on a case "
        "(scored as keeping nothing, the error in the report)"
    ),
    EXIT_PIPELINE: (
        "the selection itself failed: pinned items over `max - reserve`, an overflow under "
        '`overflow_strategy = "throw"`, a count requirement under `scarcity = "throw"`, a knapsack table '
        "over its size limit (the specification's messages); a batch line failed; a conformance vector failed"
    ),
    EXIT_USAGE: (
        "bad input or usage: an unreadable, oversized or non-UTF-8 file, invalid JSON or TOML (with line "
        "and column), a missing or mistyped field (with the item index and field name), an invalid budget, "
        "an unknown policy (with the list of presets), an invalid policy file, a malformed chat transcript, "
        "a misbehaving custom component, a bad option, an output file that cannot be written (`-o`, "
        "`--summary`, `--html`: the path and the cause; the old file is kept); `replay`: no session file "
        "matches, a `--scheduler` address that does not answer within `--connect-timeout`, no `dask` extra; "
        "`eval`: an invalid case (file, line and case id); `index`: a path or index database that cannot be "
        "read"
    ),
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}


def exit_status_for(error: BaseException) -> int:
    """The exit status for an error that reached the command line's top level."""
    if isinstance(error, CliError):
        return error.code
    if isinstance(error, SELECTION_ERRORS):
        return EXIT_PIPELINE
    return EXIT_USAGE


#: Errors of the selection itself (exit 1); every other cupel error is about the input (exit 2).
SELECTION_ERRORS: tuple[type[CupelError], ...] = (
    PinnedItemsExceedBudgetError,
    BudgetOverflowError,
    ScarcityError,
    TableTooLargeError,
)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, set up (measuring the terminal, which imports shutil) on first use.

    ``add_argument`` builds a formatter for every argument only to check its metavar, which needs no
    state; a run that prints no help never measures the terminal. Help text is argparse's own.
    """

    def __init__(
        self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None
    ) -> None:
        self._arguments = (prog, indent_increment, max_help_position, width)

    def __getattr__(self, name: str) -> Any:
        if name == "_arguments" or "_root_section" in vars(self):
            raise AttributeError(name)
        argparse.HelpFormatter.__init__(self, *self._arguments)
        return getattr(self, name)


class CliError(Exception):
    """A problem with the user's input: printed as one line on stderr, exit status 2."""

    def __init__(self, message: str, *, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def read_text(source: str) -> str:
    """The text of a file, or of standard input for ``-``: one reader for both (see :mod:`cupel._input`)."""
    try:
        return _input.read_text(source)
    except _input.InputError as error:
        raise CliError(str(error)) from None


def parse_json_documents(text: str, source: str) -> tuple[Any, bool]:
    """Parse a JSON document or JSON Lines. Returns ``(data, is_jsonl)``; JSONL gives a list."""
    stripped = text.strip()
    if not stripped:
        raise CliError(f"{source}: empty input, expected JSON or JSON Lines")
    try:
        return _input.loads_json(stripped, source), False
    except _input.InputError as whole_error:
        if len(json_lines(text)) <= 1 or not stripped.startswith("{"):
            raise CliError(_offset_lines(str(whole_error), text, stripped)) from None
    records = []
    for number, line in json_lines(text):
        try:
            records.append(_input.loads_json(line, source, line=number))
        except _input.InputError as error:
            raise CliError(str(error)) from None
    return records, True


def json_lines(text: str) -> list[tuple[int, str]]:
    """The non-blank lines of JSON Lines text with their physical (1-based) line numbers.

    Lines end at ``\\n`` only: U+2028 and other characters ``str.splitlines`` breaks at may stand
    unescaped inside JSON strings.
    """
    return [(number, line) for number, line in enumerate(text.split("\n"), start=1) if line.strip()]


def _offset_lines(message: str, text: str, stripped: str) -> str:
    # Line numbers in the message count from the stripped text; report physical lines instead.
    skipped = text[: text.index(stripped[0])].count("\n") if stripped else 0
    if not skipped:
        return message
    return re.sub(
        r"at line (\d+)", lambda match: f"at line {int(match.group(1)) + skipped}", message, count=1
    )


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
        message = str(error).removeprefix("ContextBudget.")
        option = "--reserve" if message.startswith("output_reserve") else "--budget"
        raise CliError(f"{option}: {message}") from None


def budget_from_json(data: object, where: str) -> ContextBudget:
    """A budget object from a batch line; errors start with ``where`` once (``budget: maxTokens ...``)."""
    from cupel import wire

    try:
        return wire.budget_from_dict(data, where)
    except CupelError as error:
        raise CliError(str(error)) from None


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


def load_candidates(source: str, tokenizer: str) -> Candidates:
    """The ITEMS argument of ``select``, ``explain`` and ``sensitivity``: a file or ``-``, each item without
    ``tokens`` counted by ``tokenizer`` (``--tokenizer``)."""
    label = "<stdin>" if source == "-" else source
    data, _ = parse_json_documents(read_text(source), label)
    return candidates_from_json(with_tokens(data, tokenizer), label)


def _uncounted(entry: object) -> bool:
    """An item object without ``tokens`` whose text can be counted (a chat message has a role)."""
    return (
        isinstance(entry, dict)
        and "tokens" not in entry
        and "role" not in entry
        and isinstance(entry.get("content"), str)
    )


def with_tokens(data: object, tokenizer: str) -> object:
    """``data`` with each item that has no ``tokens`` counted by ``--tokenizer``, as ``cupel eval``
    counts them; new objects, the input is left as it was. Anything else is returned unchanged."""
    if isinstance(data, dict) and "items" in data and "messages" not in data:
        items = with_tokens(data["items"], tokenizer)
        return data if items is data["items"] else {**data, "items": items}
    if not isinstance(data, list) or not any(map(_uncounted, data)):
        return data
    from cupel.tokens.resolve import resolve_counter as as_counter

    count = as_counter(resolve_counter(tokenizer)).count
    return [{**entry, "tokens": count(entry["content"])} if _uncounted(entry) else entry for entry in data]


def candidates_from_json(data: object, source: str) -> Candidates:
    if isinstance(data, dict) and "messages" in data:
        data = data["messages"]
    if _may_be_transcript(data):
        from cupel.chat import is_chat_transcript

        if is_chat_transcript(data):
            assert isinstance(data, list)
            return Candidates(None, data)
    return Candidates(items_from_json(data, source), None)


def _may_be_transcript(data: object) -> bool:
    """False when the first entry has no string ``role``: items then load none of the chat modules."""
    if not isinstance(data, list | tuple) or not data:
        return False
    first = data[0]
    return isinstance(first, Mapping) and isinstance(first.get("role"), str)


POLICY_HELP = (
    "a preset name (see `cupel policies`), or a policy file: a path with a directory separator or a "
    ".toml/.json suffix (./NAME reads a file named like a preset)"
)
"""What ``--policy`` takes, said the same way in every command's ``--help``."""


def add_policy_argument(parser: argparse.ArgumentParser, *, repeat: bool = False) -> None:
    help_text = POLICY_HELP
    if repeat:
        parser.add_argument("--policy", action="append", required=True, metavar="NAME|FILE", help=help_text)
    else:
        parser.add_argument(
            "--policy", default="chat", metavar="NAME|FILE", help=help_text + "; default chat"
        )


def add_query_argument(parser: argparse.ArgumentParser) -> None:
    """``--query``: the question the context should answer (``select``, ``explain``)."""
    parser.add_argument(
        "--query",
        metavar="TEXT",
        help=(
            "the question the context should answer, for the policy's relevance scorer "
            "(a transcript: its latest user message by default)"
        ),
    )


def add_budget_arguments(
    parser: argparse.ArgumentParser, *, required: bool = True, note: str = "required"
) -> None:
    parser.add_argument(
        "--budget",
        required=required,
        metavar="MAX[:TARGET]",
        help=f"token budget: maximum and optional target ({note})",
    )
    parser.add_argument("--reserve", type=int, default=0, metavar="N", help="tokens reserved for the output")


def add_comparison_arguments(
    parser: argparse.ArgumentParser, *, policy_default: str, budget_default: str
) -> None:
    """Repeatable ``--policy`` and ``--budget``, for the commands that compare runs (``eval``, ``replay``)."""
    parser.add_argument(
        "--policy",
        action="append",
        metavar="NAME|FILE",
        help=f"{POLICY_HELP}; repeat to compare; {policy_default}",
    )
    parser.add_argument(
        "--budget",
        action="append",
        metavar="MAX[:TARGET]",
        help=f"token budget; repeat to compare; {budget_default}",
    )


def whole_number(option: str, text: str, *, minimum: int | None = None) -> int:
    """An option's base-10 integer (``--max-chars 1500``); the one-line error names the option."""
    try:
        value = int(text, 10)
    except ValueError:
        raise CliError(f"{option} must be a whole number, got {text!r}") from None
    if minimum is not None and value < minimum:
        raise CliError(f"{option} must be >= {minimum}, got {value}")
    return value


def add_tokenizer_argument(parser: argparse.ArgumentParser, *, default: str = "heuristic") -> None:
    from cupel.tokens.named import COUNTER_NAMES

    parser.add_argument(
        "--tokenizer",
        default=default,
        metavar="NAME|FILE",
        help=f"token counter: {COUNTER_NAMES} (default: {default})",
    )


def _names_a_file(spec: str) -> bool:
    """Whether ``--policy`` names a file: a separator or a policy suffix; anything else is a preset name."""
    separators = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(separator in spec for separator in separators) or spec.lower().endswith((".toml", ".json"))


def resolve_policy(spec: str, option: str = "--policy") -> tuple[str, Any]:
    """A preset name or a policy file path -> (label, Policy); errors are prefixed with ``option``.

    A bare name is always a preset, whatever files the working directory holds: only a path with a
    separator or a ``.toml``/``.json`` suffix is read as a file (docs/cli.md, "Policies").
    """
    from cupel.policy.presets import get_preset, preset_names

    prefix = f"{option}: " if option else ""
    if _names_a_file(spec):
        from pathlib import Path

        from cupel.policy.files import load_policy

        path = Path(spec)
        if path.is_dir():
            raise CliError(f"{prefix}{spec}: is a directory, expected a policy file")
        if not path.is_file():
            raise CliError(f"{prefix}{spec}: no such file")
        try:
            return path.stem, load_policy(path)
        except OSError as error:
            raise CliError(f"{prefix}{spec}: cannot read ({error.strerror or error})") from None
        except CupelError as error:
            message = str(error)  # a PolicyFileError already names the file
            named = message if message.startswith(f"{path}: ") else f"{spec}: {message}"
            raise CliError(f"{prefix}{named}") from None
    try:
        return spec, get_preset(spec)
    except (CupelError, KeyError):
        # A file by that name is not read (a preset name would then depend on the directory): say how.
        hint = f"; to read the file {spec!r}, write ./{spec}" if os.path.exists(spec) else ""
        raise CliError(
            f"{prefix}unknown policy {spec!r}; known presets: {', '.join(preset_names())}{hint}"
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
