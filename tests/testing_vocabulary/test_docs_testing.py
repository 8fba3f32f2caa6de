"""Every ```python block of docs/testing.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "testing.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_docs_testing_examples_run() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = list(BLOCK.finditer(text))
    assert len(blocks) >= 3
    namespace: dict[str, Any] = {"__name__": "docs_testing"}
    for block in blocks:
        # Pad with newlines so a traceback names the line in the Markdown file.
        line = text.count("\n", 0, block.start(1))
        exec(compile("\n" * line + block.group(1), str(DOC), "exec"), namespace)
    # Blocks written as pytest tests are run too.
    tests = [value for name, value in namespace.items() if name.startswith("test_") and callable(value)]
    assert tests
    for test in tests:
        test()
