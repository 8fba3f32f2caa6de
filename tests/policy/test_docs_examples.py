"""Every ```python block of docs/policies.md and docs/analytics.md runs, top to bottom, per file."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def blocks(name: str) -> list[str]:
    return BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ["policies.md", "analytics.md"])
def test_python_blocks_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = blocks(name)
    assert len(found) >= 5, f"{name}: expected runnable examples"
    monkeypatch.chdir(tmp_path)  # examples that write files write them here
    namespace: dict[str, object] = {"__name__": f"docs_{name.removesuffix('.md')}"}
    for index, source in enumerate(found):
        code = compile(source, f"{name} block {index + 1}", "exec")
        exec(code, namespace)
