"""Rewrite the ``eval-table`` blocks of docs/eval.md and README.md with what ``cupel eval`` prints now.

Usage: ``python benchmarks/update_eval_tables.py``. The tables are ``cupel eval --budget 200 --budget
400 --budget 800 --format markdown`` (every preset on the shipped cases) and ``cupel eval --generate 40
--budget 1000 --budget 2000 --budget 4000 --format markdown``; ``tests/eval/test_docs_tables.py``
fails while a page shows other numbers.
"""

from __future__ import annotations

import re
from pathlib import Path

from cupel._atomic import write_atomic
from cupel.eval import evaluate
from cupel.eval.generator import generate_cases
from cupel.eval.loaders import shipped_cases
from cupel.eval.report import render_markdown
from cupel.policy import preset_names

ROOT = Path(__file__).resolve().parents[1]
TABLE = re.compile(r"(<!-- eval-table:(\w+) -->\n)(.*?)(<!-- /eval-table -->)", re.DOTALL)


def main() -> int:
    presets = list(preset_names())
    tables = {
        "shipped": render_markdown(evaluate(shipped_cases(), presets, [200, 400, 800], resamples=0)),
        "generated": render_markdown(
            evaluate(generate_cases(40, 0), presets, [1000, 2000, 4000], resamples=0)
        ),
    }
    for page in ("docs/eval.md", "README.md"):
        path = ROOT / page
        text = path.read_text(encoding="utf-8")
        updated = TABLE.sub(lambda m: m.group(1) + tables[m.group(2)] + m.group(4), text)
        if updated != text:
            write_atomic(path, updated)
            print(f"updated {page}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
