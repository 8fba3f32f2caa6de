"""Build src/cupel/eval/data/cases.jsonl from the hand-written definitions in this folder.

Run from the repository root: ``python examples/eval/build_cases.py``. The tests check that the shipped
file equals what this script writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent.parent / "src" / "cupel" / "eval" / "data" / "cases.jsonl"


def render() -> str:
    sys.path.insert(0, str(HERE))
    import agent_cases
    import chat_cases
    import rag_cases
    import review_cases

    cases = [*chat_cases.CASES, *agent_cases.CASES, *rag_cases.CASES, *review_cases.CASES]
    return "".join(json.dumps(case, ensure_ascii=False, sort_keys=False) + "\n" for case in cases)


if __name__ == "__main__":
    TARGET.write_text(render(), encoding="utf-8")
    print(f"wrote {TARGET}")
