"""Build src/cupel/eval/data/cases.jsonl from the hand-written definitions in this folder.

Run ``python examples/eval/build_cases.py`` (``--stdout`` prints instead of writing). The tests check
that the shipped file equals what this script writes.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
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


def write(text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=TARGET.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8", newline="") as stream:
        stream.write(text)
    os.replace(temporary, TARGET)


if __name__ == "__main__":
    if "--stdout" in sys.argv:
        sys.stdout.write(render())
    else:
        write(render())
        print(f"wrote {TARGET}")
