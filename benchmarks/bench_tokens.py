"""Token-counting throughput: ``TiktokenCounter`` (native and pure-Python backends) against the
``tiktoken`` package itself, on mixed text and on the pathological inputs of a naive BPE merge.

Usage: ``python benchmarks/bench_tokens.py [--json] [--repeat 5] [--encoding o200k_base]``.

The peer is ``tiktoken.Encoding.encode_ordinary`` of the compiled package, on the same vocabulary (built
offline from the verified rank files, as the counter's native backend is). Each input is counted by
the three in turn, round by round (each sample repeats the call for at least 50 ms), and the median
time of each is reported as MB/s (UTF-8 megabytes) with its ratio to the peer's throughput; times on
a shared machine vary, the ratios much less. The pure backend's piece cache is emptied before each
call.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tokens._texts import base64_blob, mixed_scripts, runs  # noqa: E402

from cupel.tokens import TiktokenCounter  # noqa: E402


def mixed_text() -> str:
    """The project's own documentation: English prose, Markdown, code and tables (~100 KB)."""
    files = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return "\n\n".join(path.read_text(encoding="utf-8") for path in files)


def inputs() -> dict[str, str]:
    chosen = runs()
    return {
        "mixed text (docs)": mixed_text(),
        "mixed scripts 1 MB": mixed_scripts(1 << 20),
        "base64 1 MB": base64_blob(1 << 20),
        "a * 20000": chosen["a * 20000"],
        "- * 10000": chosen["- * 10000"],
        "DNA 20 KB": chosen["DNA 20 KB"],
        "space * 10000": chosen["space * 10000"],
    }


#: Each sample runs the peer for at least this long, so that small inputs are not timer noise.
_SAMPLE_SECONDS = 0.05


def _time(function: Callable[[str], object], text: str, calls: int) -> float:
    """Seconds per call, over ``calls`` calls."""
    start = time.perf_counter()
    for _ in range(calls):
        function(text)
    return (time.perf_counter() - start) / calls


def _calls_for(function: Callable[[str], object], text: str) -> int:
    once = _time(function, text, 1)
    return max(1, min(1000, round(_SAMPLE_SECONDS / max(once, 1e-9))))


def measure(encoding: str, repeat: int) -> dict[str, dict[str, float]]:
    native = TiktokenCounter(encoding, backend="native")
    pure = TiktokenCounter(encoding, backend="pure")
    peer = native._encode.__self__  # type: ignore[attr-defined]  # the tiktoken.Encoding itself
    pieces = pure._encode.__self__._cache  # type: ignore[attr-defined]

    def pure_cold(text: str) -> int:
        pieces.clear()  # no help from earlier calls on the same text: the peer has no such cache
        return pure.count(text)

    contenders: dict[str, Callable[[str], object]] = {
        "tiktoken": peer.encode_ordinary,
        "cupel native": native.count,
        "cupel pure": pure_cold,
    }
    results: dict[str, dict[str, float]] = {}
    for name, text in inputs().items():
        size = len(text.encode("utf-8")) / 1e6
        assert native.count(text) == pure.count(text) == len(peer.encode_ordinary(text)), name
        samples: dict[str, list[float]] = {contender: [] for contender in contenders}
        calls = {contender: _calls_for(function, text) for contender, function in contenders.items()}
        for _ in range(repeat):
            for contender, function in contenders.items():
                samples[contender].append(_time(function, text, calls[contender]))
        row: dict[str, float] = {"megabytes": size}
        peer_time = statistics.median(samples["tiktoken"])
        for contender, times in samples.items():
            median = statistics.median(times)
            row[f"{contender} ms"] = median * 1000
            row[f"{contender} MB/s"] = size / median
            row[f"{contender} throughput vs tiktoken"] = peer_time / median
        results[name] = row
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--encoding", default="o200k_base")
    args = parser.parse_args()
    results = measure(args.encoding, args.repeat)
    if args.json:
        print(json.dumps({"encoding": args.encoding, "results": results}, indent=2))
        return 0
    print(f"encoding {args.encoding}; median of {args.repeat} interleaved rounds")
    print(f"{'input':20}{'size':>9}{'tiktoken':>14}{'cupel native':>22}{'cupel pure':>22}{'pure time':>12}")
    for name, row in results.items():
        print(
            f"{name:20}{row['megabytes']:>6.2f} MB{row['tiktoken MB/s']:>9.2f} MB/s"
            f"{row['cupel native MB/s']:>10.2f} MB/s ({row['cupel native throughput vs tiktoken']:.2f}x)"
            f"{row['cupel pure MB/s']:>10.2f} MB/s ({row['cupel pure throughput vs tiktoken']:.2f}x)"
            f"{row['cupel pure ms']:>9.1f} ms"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
