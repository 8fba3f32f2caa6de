"""Every example in docs/integrations.md runs against the real frameworks, in order, in one namespace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

for module in (
    "langchain_core",
    "langchain_classic",
    "langgraph",
    "llama_index.core",
    "pydantic_ai",
    "agents",
):
    pytest.importorskip(module)

PAGE = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
FENCE = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def test_integration_examples_run() -> None:
    blocks = FENCE.findall(PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 8
    namespace: dict[str, object] = {"__name__": "docs_integrations"}
    for number, code in enumerate(blocks, start=1):
        try:
            exec(compile(code, f"integrations.md[python block {number}]", "exec"), namespace)
        except Exception as error:  # pragma: no cover - the message is the diagnosis
            pytest.fail(f"integrations.md python block {number} raised {type(error).__name__}: {error}")
