"""Every ```python block of docs/rag.md runs, and prints exactly the ```text block that follows it."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "rag.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    return [(match.group(1), match.group(2)) for match in FENCE.finditer(DOC.read_text(encoding="utf-8"))]


def test_the_page_has_python_examples() -> None:
    assert sum(1 for language, _ in blocks() if language == "python") >= 5


def test_python_examples_run_and_print_what_the_page_shows(monkeypatch: pytest.MonkeyPatch) -> None:
    # The examples read examples/rag-results.jsonl relative to the repository root, like a reader would.
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "docs_rag"}
    fenced = blocks()
    for index, (language, code) in enumerate(fenced):
        if language != "python":
            continue
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(code, f"{DOC.name} block {index}", "exec"), namespace)
        following = fenced[index + 1] if index + 1 < len(fenced) else None
        if following is not None and following[0] == "text":
            assert output.getvalue() == following[1], f"output of {DOC.name} block {index} differs"
