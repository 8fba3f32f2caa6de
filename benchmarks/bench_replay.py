"""Sessions per second for ``cupel.distributed.replay``: sequential, 2 processes, a 2-worker LocalCluster.

Usage: ``python benchmarks/bench_replay.py [--json] [--sessions 100000] [--repeat 3] [--blocksize 4MiB]``.
Writes ``--sessions`` synthetic sessions (``_sessions.py``) to a JSONL file, then replays them under the
``chat`` preset at each session's own budget, interleaving the three ways in every round:

- ``sequential``: one process, Dask's synchronous scheduler (no parallelism, same code path);
- ``processes``: ``cupel replay --jobs 2``, Dask's multiprocessing scheduler with 2 processes;
- ``cluster``: a ``dask.distributed.LocalCluster`` of 2 single-threaded worker processes (started once,
  before the rounds; its start-up is reported separately).

Also times ``cupel select --batch`` (one process) on the same file as the peer for the sequential path.
Scaling efficiency is (2-way sessions/s ÷ sequential sessions/s) ÷ 2. Medians and ranges over rounds.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _sessions import session_lines

from cupel.cli import main as cli_main
from cupel.distributed import replay


def _select_batch(path: Path) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        cli_main(["select", "--batch", str(path), "--policy", "chat"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--blocksize", default="4MiB", help="JSONL bytes per partition")
    parser.add_argument("--no-select", action="store_true", help="skip the cupel select --batch peer")
    args = parser.parse_args()

    import dask
    from dask.utils import parse_bytes

    from distributed import Client, LocalCluster

    blocksize = int(parse_bytes(args.blocksize))
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "sessions.jsonl"
        with path.open("w", encoding="utf-8") as stream:
            for line in session_lines(args.sessions):
                stream.write(line + "\n")
        size = path.stat().st_size

        started = time.perf_counter()
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
        cluster_start = time.perf_counter() - started

        def run_sequential() -> None:
            replay([path], ["chat"], [None], scheduler="synchronous", blocksize=blocksize).to_pandas()

        def run_processes() -> None:
            with dask.config.set(num_workers=2):
                replay([path], ["chat"], [None], scheduler="processes", blocksize=blocksize).to_pandas()

        def run_cluster() -> None:
            replay([path], ["chat"], [None], client=client, blocksize=blocksize).to_pandas()

        ways: dict[str, Callable[[], None]] = {
            "sequential": run_sequential,
            "processes": run_processes,
            "cluster": run_cluster,
        }
        if not args.no_select:
            ways["select_batch"] = lambda: _select_batch(path)
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.repeat):
            for name, run in ways.items():
                began = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - began)
        client.close()
        cluster.close()

    rates = {name: [args.sessions / seconds for seconds in values] for name, values in times.items()}
    medians = {name: statistics.median(values) for name, values in rates.items()}
    ratios = {
        name: statistics.median(r / s for r, s in zip(rates[name], rates["sequential"], strict=True))
        for name in ("processes", "cluster")
    }
    report = {
        "sessions": args.sessions,
        "input_bytes": size,
        "blocksize": blocksize,
        "repeat": args.repeat,
        "cpu_count": os.cpu_count(),
        "cluster_start_s": round(cluster_start, 2),
        "sessions_per_s": {
            name: {
                "median": round(medians[name], 1),
                "min": round(min(values), 1),
                "max": round(max(values), 1),
            }
            for name, values in rates.items()
        },
        "speedup_vs_sequential": {name: round(value, 2) for name, value in ratios.items()},
        "scaling_efficiency": {name: round(value / 2, 2) for name, value in ratios.items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.sessions} sessions ({size / 2**20:.1f} MiB), blocksize {blocksize}, {args.repeat} rounds")
    print(f"LocalCluster start-up: {cluster_start:.1f} s (not in the rates)")
    print(f"{'way':<14}{'sessions/s median':>20}{'range':>22}")
    for name, values in rates.items():
        print(f"{name:<14}{medians[name]:>20.1f}{f'{min(values):.1f}-{max(values):.1f}':>22}")
    for name, value in ratios.items():
        print(f"{name}: {value:.2f}x sequential, scaling efficiency {value / 2:.0%}")


if __name__ == "__main__":
    main()
