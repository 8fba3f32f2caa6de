"""Every example in the README and the core docs pages runs, and shown CLI output is real output.

```python blocks of one file run in order in one namespace. In ```console blocks, each ``$ cupel ...``
line is run from the repository root and its standard output must equal the lines shown after it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *(ROOT / "docs" / name for name in ("concepts.md", "python-api.md", "cli.md"))]
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text(encoding="utf-8")) if lang == language]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_python_examples_run(page: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": f"docs_{page.stem}"}
    for number, code in enumerate(blocks(page, "python"), start=1):
        try:
            exec(compile(code, f"{page.name}[python block {number}]", "exec"), namespace)
        except Exception as error:  # pragma: no cover - the message is the diagnosis
            pytest.fail(f"{page.name} python block {number} raised {type(error).__name__}: {error}")


def console_examples(page: Path) -> list[tuple[str, str]]:
    examples = []
    for body in blocks(page, "console"):
        command: str | None = None
        output: list[str] = []
        for line in body.splitlines():
            if line.startswith("$ "):
                if command is not None:
                    examples.append((command, "\n".join(output)))
                command, output = line[2:], []
            else:
                output.append(line)
        if command is not None:
            examples.append((command, "\n".join(output)))
    return examples


EXAMPLES = [(page, command, output) for page in PAGES for command, output in console_examples(page)]


@pytest.mark.parametrize(
    ("page", "command", "expected"), EXAMPLES, ids=[f"{p.name}: {c}" for p, c, _ in EXAMPLES]
)
def test_console_examples_print_what_the_docs_show(page: Path, command: str, expected: str | None) -> None:
    # The virtual environment a quick-start command makes is, here, the one the test suite runs in.
    command = command.removeprefix("python3 -m venv .venv && . .venv/bin/activate && ")
    if command.startswith("pip install") and "&&" in command:
        # The installation is what CI itself does; run what follows it (unless it is the test suite).
        command = command.split("&&", 1)[1].strip()
        expected = None if command.startswith("cupel ") else "skip"
    argv = shlex.split(command)
    if expected == "skip":
        pytest.skip(f"{command!r} is the test suite itself")
    assert argv[0] == "cupel", f"{page.name}: console examples must run cupel, got {command!r}"
    result = subprocess.run(
        [sys.executable, "-m", "cupel", *argv[1:]], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, f"{page.name}: `{command}` failed:\n{result.stderr}"
    if expected is None:
        assert result.stdout.strip(), f"{page.name}: `{command}` printed nothing"
        return
    shown = [line.rstrip() for line in expected.strip("\n").splitlines()]
    actual = [line.rstrip() for line in result.stdout.strip("\n").splitlines()]
    assert actual == shown, f"{page.name}: `{command}` printed:\n{result.stdout}\n{result.stderr}"
