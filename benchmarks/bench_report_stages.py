"""Where a ``"turns"`` report's time goes: ``bench_chat.py``'s row "turns + report (query=None)" by stage.

Usage: ``python benchmarks/bench_report_stages.py [--json] [--sizes 1000,10000,100000] [--repeat 9]
[--long] [--text synthetic|locomo [--locomo PATH]]`` (the transcripts of ``bench_chat.py``, the same
options). Each repeat runs ``trim_messages`` on message objects, then the row's cupel case, cut into
stages: the selection (``select_messages``, ``query=None``), building the report, reading every entry's
item (content, tokens, metadata), score and reason, and dropping the report (freeing it). Within the build,
the report's functions are timed where the chat modules call them: the unit items (``unit_items``: each
unit's rendering, item and metadata map; "maps" is the metadata maps' part of it, ``made_on_read``), the
older turns' reasons (``left_out_reasons``: the slicer's detailed fill), the entries (``_by_candidate``
and ``report_of_columns``) and the rest. Times are CPU time (``time.process_time``), the minimum over the
repeats of each stage, so that another process on the machine moves them less; "x trim" is each stage
over ``trim_messages``' minimum.
"""

from __future__ import annotations

import json
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_chat import BUDGET, COUNTER, OPTIONS, READ, arguments, to_objects, transcript, trim

import cupel.chat.render as render
import cupel.chat.units as units
from cupel.chat import select_messages

# The functions timed inside the build where a chat module calls them, by the stage they count for.
TIMED = {
    (render, "unit_items"): "items",
    (units, "made_on_read"): "maps",  # within items
    (render, "left_out_reasons"): "reasons",
    (render, "_by_candidate"): "entries",
    (render, "report_of_columns"): "entries",
}
STAGES = [
    "trim_messages",
    "selection",
    "build",
    "items",
    "maps",
    "reasons",
    "entries",
    "rest",
    "read",
    "free",
]


def timed(function: Callable[..., Any], stage: str, spent: dict[str, float]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        start = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[stage] = spent.get(stage, 0.0) + time.process_time() - start

    return run


def once(dicts: list[dict[str, Any]], objects: list[Any], spent: dict[str, float]) -> dict[str, float]:
    """One repeat: every stage's CPU time in seconds."""
    spent.clear()
    times: dict[str, float] = {}
    start = time.process_time()
    trim(objects)
    times["trim_messages"] = time.process_time() - start
    start = time.process_time()
    chosen = select_messages(dicts, BUDGET, counter=COUNTER, options=OPTIONS, strategy="turns", query=None)
    times["selection"] = time.process_time() - start
    start = time.process_time()
    built = chosen.report
    times["build"] = time.process_time() - start
    start = time.process_time()
    deque(map(READ, built.included), maxlen=0)
    deque(map(READ, built.excluded), maxlen=0)
    times["read"] = time.process_time() - start
    start = time.process_time()
    del built, chosen
    times["free"] = time.process_time() - start
    for stage in ("items", "maps", "reasons", "entries"):
        times[stage] = spent.get(stage, 0.0)
    times["rest"] = times["build"] - times["items"] - times["reasons"] - times["entries"]
    return times


def measure(size: int, repeat: int, *, long: bool, lines: list[str] | None) -> list[dict[str, Any]]:
    dicts = transcript(size, long=long, lines=lines)
    objects = to_objects(dicts)
    spent: dict[str, float] = {}
    originals = {place: getattr(*place) for place in TIMED}
    for (module, name), stage in TIMED.items():
        setattr(module, name, timed(originals[module, name], stage, spent))
    try:
        once(dicts, objects, spent)  # warm-up
        runs = [once(dicts, objects, spent) for _ in range(repeat)]
    finally:
        for (module, name), function in originals.items():
            setattr(module, name, function)
    best = {stage: min(run[stage] for run in runs) * 1000 for stage in STAGES}
    base = best["trim_messages"]
    return [
        {"size": size, "stage": stage, "min_ms": best[stage], "x_trim": best[stage] / base}
        for stage in STAGES
    ]


def main() -> int:
    args, lines = arguments(__doc__.splitlines()[0], 9)
    sizes = map(int, args.sizes.split(","))
    rows = [row for size in sizes for row in measure(size, args.repeat, long=args.long, lines=lines)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'messages':>9}  {'stage':<14} {'min ms':>9}  {'x trim':>7}")
    for row in rows:
        print(f"{row['size']:>9}  {row['stage']:<14} {row['min_ms']:>9.2f}  {row['x_trim']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
