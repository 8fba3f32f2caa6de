"""Every ```python block of docs/otel.md runs, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "otel.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_docs_otel_examples_run() -> None:
    pytest.importorskip("opentelemetry.sdk", reason="opentelemetry-sdk is not installed")
    text = DOC.read_text(encoding="utf-8")
    blocks = list(BLOCK.finditer(text))
    assert len(blocks) >= 2
    namespace: dict[str, Any] = {"__name__": "docs_otel"}
    for block in blocks:
        # Pad with newlines so a traceback names the line in the Markdown file.
        line = text.count("\n", 0, block.start(1))
        exec(compile("\n" * line + block.group(1), str(DOC), "exec"), namespace)
