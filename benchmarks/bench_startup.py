"""Cold-start cost: ``import cupel``, the first ``Pipeline.run`` on 25 items, ``cupel select`` on the
bundled example, each against ``python -c pass`` measured in the same run.

Usage: ``python benchmarks/bench_startup.py [--json] [--repeat 21]``. Every measurement is a fresh
interpreter; the cases are interleaved round by round so that machine load affects them alike. Reported:
the median wall time of each case, its range, and its ratio to ``python -c pass``. The first-run case
also reports the time of the first ``Pipeline.run`` alone, measured inside the process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

FIRST_RUN = """
import time
from cupel import ChronologicalPlacer, ContextBudget, ContextItem, GreedySlice, Pipeline, RecencyScorer
items = [ContextItem(f"message {i}: " + "word " * (i % 7), 10 + i, priority=i % 5) for i in range(25)]
pipeline = Pipeline(RecencyScorer(), GreedySlice(), ChronologicalPlacer())
start = time.perf_counter()
pipeline.run(items, ContextBudget(300, 250))
print((time.perf_counter() - start) * 1000)
"""

SELECT = [
    "select",
    str(ROOT / "examples" / "agent-session.json"),
    "--budget",
    "600:400",
    "--policy",
    "tool_use",
    "--format",
    "text",
]


def _cupel_command() -> list[str]:
    script = Path(sys.executable).with_name("cupel")
    if script.exists():
        return [str(script), *SELECT]
    return [
        sys.executable,
        "-c",
        "import sys; from cupel.cli import main; sys.exit(main(sys.argv[1:]))",
        *SELECT,
    ]


CASES: dict[str, list[str]] = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import cupel": [sys.executable, "-c", "import cupel"],
    "first Pipeline.run (25 items)": [sys.executable, "-c", FIRST_RUN],
    "cupel select (bundled example)": _cupel_command(),
}


# Byte-code caches are written (PYTHONDONTWRITEBYTECODE dropped): the warm-up run fills them, as an
# installed wheel has them, so the rounds measure start-up and not compiling every module from source.
_ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, "PYTHONHASHSEED": "0"}


def _run(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=_ENV,
    )
    return (time.perf_counter() - start) * 1000, done.stdout


def measure(repeat: int) -> dict[str, dict[str, float]]:
    walls: dict[str, list[float]] = {name: [] for name in CASES}
    first_runs: list[float] = []
    for command in CASES.values():
        _run(command)  # warm the file cache and byte-code caches
    for _ in range(repeat):
        for name, command in CASES.items():
            wall, out = _run(command)
            walls[name].append(wall)
            if name.startswith("first Pipeline.run"):
                first_runs.append(float(out.strip().splitlines()[-1]))
    baseline = statistics.median(walls["python -c pass"])
    results: dict[str, dict[str, float]] = {}
    for name, samples in walls.items():
        median = statistics.median(samples)
        results[name] = {
            "median_ms": median,
            "min_ms": min(samples),
            "max_ms": max(samples),
            "ratio_to_pass": median / baseline,
            "added_ms": median - baseline,
        }
    results["first Pipeline.run (25 items)"]["run_alone_ms"] = statistics.median(first_runs)
    results["first Pipeline.run (25 items)"]["run_alone_max_ms"] = max(first_runs)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    results = measure(args.repeat)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(f"{'case':34}{'median':>10}{'range':>18}{'x pass':>9}{'added':>10}")
    for name, row in results.items():
        spread = f"{row['min_ms']:.0f}-{row['max_ms']:.0f} ms"
        print(
            f"{name:34}{row['median_ms']:>7.1f} ms{spread:>18}{row['ratio_to_pass']:>8.2f}x"
            f"{row['added_ms']:>+7.1f} ms"
        )
    first = results["first Pipeline.run (25 items)"]
    print(
        f"first Pipeline.run alone (in process): {first['run_alone_ms']:.2f} ms "
        f"(max {first['run_alone_max_ms']:.2f} ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
