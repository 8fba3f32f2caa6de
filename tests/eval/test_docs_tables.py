"""The comparison tables in docs/eval.md and the README are what ``cupel eval`` prints now."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cupel.eval import evaluate
from cupel.eval.generator import generate_cases
from cupel.eval.loaders import shipped_cases
from cupel.eval.report import render_markdown
from cupel.policy import preset_names

ROOT = Path(__file__).resolve().parents[2]
TABLE = re.compile(r"<!-- eval-table:(\w+) -->\n(.*?)<!-- /eval-table -->", re.DOTALL)


def _tables(page: str) -> dict[str, str]:
    return dict(TABLE.findall((ROOT / page).read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def current() -> dict[str, str]:
    presets = list(preset_names())
    shipped = evaluate(shipped_cases(), presets, [200, 400, 800], resamples=0)
    generated = evaluate(generate_cases(40, 0), presets, [1000, 2000, 4000], resamples=0)
    return {"shipped": render_markdown(shipped), "generated": render_markdown(generated)}


@pytest.mark.parametrize("page", ["docs/eval.md", "README.md"])
def test_tables_match_a_fresh_evaluation(page: str, current: dict[str, str]) -> None:
    tables = _tables(page)
    assert tables, f"{page}: no eval tables"
    for name, shown in tables.items():
        assert shown == current[name], f"{page}: the {name} table is stale; regenerate it with cupel eval"


def test_eval_page_python_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    text = (ROOT / "docs" / "eval.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.MULTILINE | re.DOTALL)
    assert blocks
    namespace: dict[str, object] = {}
    for number, code in enumerate(blocks, start=1):
        exec(compile(code, f"eval.md[python block {number}]", "exec"), namespace)
