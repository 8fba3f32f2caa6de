"""Hostile input a user can give, fed to every command: never a traceback, never "unexpected".

Each command gets each hostile file where it reads input (items, transcripts, policies, case files,
session lines, retrieval results, vectors, files to index) and each impossible output path where it
writes. Every run ends with status 0, 1 or 2 and, when it fails, one line on standard error.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cupel.cli import SUBCOMMANDS, main

HOSTILE: dict[str, bytes] = {
    "invalid-utf8": b'[{"content": "caf\xe9", "tokens": 5}]',
    "nan": b'[{"content": "a", "tokens": NaN}]',
    "infinity": b'{"items": [{"content": "a", "tokens": 5, "priority": Infinity}]}',
    "1e400": b'[{"content": "a", "tokens": 5, "priority": 1e400}]',
    "huge-integer": b'[{"content": "a", "tokens": ' + b"9" * 5000 + b"}]",
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "deep-object": b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
    "lone-surrogate": b'[{"content": "\\ud800", "tokens": 5}]',
    "nul": b'[{"content": "a\x00", "tokens": 5}]\x00',
    "empty": b"",
    "bom-only": b"\xef\xbb\xbf",
    "toml-deep": b"a = " + b"[" * 5000 + b"]" * 5000 + b"\n",
    "toml-garbage": b"[[scorers]\ntype = \n",
    "jsonl-mixed": b'{"items": []}\n{"id": "x", "messages": [{"role": "tool", "content": 1}]}\nNaN\n',
    "case-like": b'{"id": "c", "messages": [{"role": "user", "content": "a"}], '
    b'"gold": [{"index": 0, "weight": 1e400}]}\n',
}
CASE = (
    '{"id": "c", "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "q"}], '
    '"gold": [0]}'
)
SESSION = '{"items": [{"content": "a", "tokens": 5}], "budget": {"maxTokens": 9}}\n'


def commands(source: str, policy: str, output: str) -> dict[str, list[str]]:
    """Every command, reading ``source`` (or ``policy``) and writing ``output``."""
    return {
        "select": ["select", source, "--budget", "300"],
        "select-batch": ["select", "--batch", source, "--budget", "300"],
        "select-policy": ["select", "-", "--budget", "300", "--policy", policy],
        "explain": ["explain", source, "--budget", "300", "--html", output],
        "explain-policy": ["explain", "-", "--budget", "300", "--policy", policy],
        "sensitivity": ["sensitivity", source, "--budget", "300", "--policy", "chat", "--policy", "rag"],
        "sensitivity-policy": ["sensitivity", "-", "--budget", "300", "--policy", policy, "--policy", "chat"],
        "eval": ["eval", source, "--budget", "300", "--policy", "chat", "--resamples", "0", "-o", output],
        "eval-policy": ["eval", "cases.jsonl", "--budget", "300", "--policy", policy, "--resamples", "0"],
        "replay": ["replay", source, "--jobs", "1", "-o", output, "--summary", output],
        "replay-policy": ["replay", "sessions.jsonl", "--jobs", "1", "--policy", policy],
        "policies": ["policies", "show", policy],
        "assemble": ["assemble", source, "--budget", "300"],
        "conformance": ["conformance", source],
        "index": ["index", "--db", output, source],
    }


def test_every_command_is_covered() -> None:
    covered = {name.split("-")[0] for name in commands("a", "b", "c")}
    assert covered == set(SUBCOMMANDS)


@contextlib.contextmanager
def inside(directory: Path) -> Iterator[None]:
    previous = os.getcwd()
    os.chdir(directory)
    try:
        yield
    finally:
        os.chdir(previous)


def run(arguments: list[str], stdin: bytes = b"") -> tuple[int, str]:
    err = io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(arguments)
            except SystemExit as exit_:  # argparse's usage errors
                code = int(exit_.code or 0)
    finally:
        sys.stdin = saved
    return code, err.getvalue()


def check(arguments: list[str], code: int, stderr: str) -> None:
    assert code in (0, 1, 2), (arguments, code, stderr)
    assert "Traceback" not in stderr and "unexpected" not in stderr, (arguments, stderr)
    if code == 2 or (code == 1 and arguments[0] not in ("conformance",) and "--batch" not in arguments):
        assert stderr.count("\n") == 1, (arguments, stderr)


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_never_gives_a_traceback_or_unexpected(name: str, tmp_path: Path) -> None:
    pytest.importorskip("dask")
    (tmp_path / "hostile").write_bytes(HOSTILE[name])
    (tmp_path / "policy.toml").write_bytes(HOSTILE[name])
    (tmp_path / "sessions.jsonl").write_text(SESSION)
    (tmp_path / "cases.jsonl").write_text(CASE + "\n")
    items = b'[{"content": "a", "tokens": 5}]'
    with inside(tmp_path):
        for label, arguments in commands("hostile", "policy.toml", "out.html").items():
            code, stderr = run(arguments, items if "-policy" in label else HOSTILE[name])
            check(arguments, code, stderr)


@pytest.mark.parametrize("where", ["a-directory", "a-file/below", "missing/below"])
def test_an_impossible_path_never_gives_a_traceback_or_unexpected(where: str, tmp_path: Path) -> None:
    pytest.importorskip("dask")
    (tmp_path / "a-directory").mkdir()
    (tmp_path / "a-file").write_text("OLD")
    (tmp_path / "items.json").write_text('[{"content": "a", "tokens": 5}]')
    (tmp_path / "sessions.jsonl").write_text(SESSION)
    (tmp_path / "cases.jsonl").write_text(CASE + "\n")
    with inside(tmp_path):
        for label, arguments in commands(where, where, where).items():  # every input and output
            code, stderr = run(arguments)
            check(arguments, code, stderr)
            assert code != 0, label
        source = {"eval": "cases.jsonl", "replay": "sessions.jsonl"}
        for label, arguments in commands("items.json", "chat", where).items():  # outputs only
            command = label.split("-")[0]
            if label in ("explain", "eval", "replay", "index"):
                arguments = [source.get(command, arg) if arg == "items.json" else arg for arg in arguments]
                code, stderr = run(arguments)
                check(arguments, code, stderr)
                assert code == 2 and where in stderr, (arguments, stderr)
    assert (tmp_path / "a-file").read_text() == "OLD"
