"""Chat trimming: every cupel strategy against LangChain's ``trim_messages``, interleaved in one run.

Usage: ``python benchmarks/bench_chat.py [--json] [--sizes 1000,10000,100000] [--repeat 5] [--long]
[--text synthetic|locomo [--locomo PATH]]``.
Transcript: one system message, then alternating user/assistant messages of varied length (``--long``:
500-700 characters on average, as real chat and agent messages are). Their words: ``synthetic``
(the default), ten words drawn at random, so that every message holds every term of a query (the
worst case of the relevance term's counting); ``locomo``, the dialogue of the LoCoMo dev split
(``../shared/data/locomo/locomo-dev.json``, read there, never copied), its lines joined in order into
messages of about 620 characters on average (``--long``, as the synthetic ones) or one line a message,
the lines taken again from the first once all are used. Each message starts with its number. Every
message costs
``4 + ceil(len(content) / 4)`` tokens on both sides; budget 32,000 tokens. ``trim_messages`` runs with
``strategy="last", include_system=True, start_on="human"`` on message objects (the reference) and on
dicts. Each repeat runs every case once, in turn, so machine load hits all cases alike; ratios are to
``trim_messages`` on objects within the same repeat (median [min-max]).

Every cupel case is cold (nothing is kept between calls: ``select_messages`` is a pure function of its
arguments) unless it says "warm": those pass one ``ChatSession`` to every call, as a running chat
does. "warm turn" is the per-turn cost of a growing transcript through a session (each call sees the
transcript one user/assistant exchange longer, the session kept from the call before), and its ratio
is to a cold ``"turns"`` call on the same transcript (with the default query, and both without one).
"+ report" builds the report and reads every entry's item (content, tokens, metadata), score and
reason. Every cupel case runs the default
``chat`` preset with the default ``query="auto"`` (its relevance term scores older turns against the
latest user message) except the "query=None" cases, the same selections without a query.
"bm25_scores of the older turns" is the floor of any query-aware selection here: BM25 alone (the
relevance term's lexical score) over the texts of the older turns (the messages paired), no
selection.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import sys
import time
from collections import deque
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, trim_messages

from cupel.chat import ChatOptions, ChatSession, select_messages
from cupel.chat.langchain import select_messages as select_langchain
from cupel.scorers.relevance import bm25_scores
from cupel.tokens import FunctionCounter

BUDGET = 32_000
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
READ = attrgetter("item.content", "item.tokens", "item.metadata", "score", "reason")
OPTIONS = ChatOptions(message_overhead=4)
COUNTER = FunctionCounter(lambda text: math.ceil(len(text) / 4))


def transcript(
    size: int, seed: int = 7, *, long: bool = False, lines: list[str] | None = None
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "webhook", "retry", "timeout", "deploy", "the", "a"]
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a careful assistant."}]
    low, high = (60, 150) if long else (3, 60)  # about 620 characters a message with --long
    taken = 0  # the lines used so far (``lines``)
    for index in range(size - 1):
        role = "user" if index % 2 == 0 else "assistant"
        if lines is None:
            text = " ".join(rng.choice(words) for _ in range(rng.randint(low, high)))
        else:
            parts: list[str] = []
            target = rng.randint(440, 680) if long else 1
            while sum(map(len, parts)) + len(parts) < target:
                parts.append(lines[taken % len(lines)])
                taken += 1
            text = " ".join(parts)
        messages.append({"role": role, "content": f"{index}: {text}"})
    return messages


def locomo_lines(path: Path) -> list[str]:
    """The dialogue lines of the LoCoMo conversations at ``path``, in order."""
    found = []
    for sample in json.loads(path.read_text(encoding="utf-8")):
        conversation = sample["conversation"]
        sessions = [key for key in conversation if key.startswith("session_") and key[8:].isdigit()]
        for key in sorted(sessions, key=lambda name: int(name[8:])):
            found.extend(turn["text"] for turn in conversation[key])
    return found


def to_objects(messages: list[dict[str, Any]]) -> list[Any]:
    kinds = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
    return [kinds[message["role"]](message["content"]) for message in messages]


def lc_counter(messages: list[Any]) -> int:
    total = 0
    for message in messages:
        content = message["content"] if isinstance(message, dict) else message.content
        total += 4 + math.ceil(len(content) / 4)
    return total


def trim(messages: list[Any]) -> list[Any]:
    result: list[Any] = trim_messages(
        messages,
        max_tokens=BUDGET,
        token_counter=lc_counter,
        strategy="last",
        include_system=True,
        start_on="human",
        allow_partial=False,
    )
    return result


def cases(dicts: list[dict[str, Any]], objects: list[Any]) -> dict[str, Callable[[], object]]:
    texts = [message["content"] for message in dicts[1:-1]]
    older = ["\n".join(texts[index : index + 2]) for index in range(0, len(texts), 2)]

    def cupel(
        strategy: str, *, report: bool = False, on: str = "dicts", warm: bool = False, query: bool = True
    ) -> Callable[[], object]:
        session = ChatSession() if warm else None

        def run() -> object:
            if on == "objects":
                chosen: Any = select_langchain(
                    objects,
                    BUDGET,
                    counter=COUNTER,
                    options=OPTIONS,
                    strategy=strategy,  # type: ignore[arg-type]
                    session=session,
                )
            else:
                chosen = select_messages(
                    dicts,
                    BUDGET,
                    counter=COUNTER,
                    options=OPTIONS,
                    strategy=strategy,  # type: ignore[arg-type]
                    session=session,
                    query="auto" if query else None,
                )
            if report:
                built = chosen.report
                # Every entry's item, score and reason, read and dropped (the reader keeps nothing,
                # so what it allocates never sets off a collection of its own).
                deque(map(READ, built.included), maxlen=0)
                deque(map(READ, built.excluded), maxlen=0)
                return len(built.included) + len(built.excluded)
            return chosen.messages

        return run

    return {
        "trim_messages (objects)": lambda: trim(objects),
        "trim_messages (dicts)": lambda: trim(dicts),
        "cupel last (dicts)": cupel("last"),
        "cupel last (objects)": cupel("last", on="objects"),
        "cupel turns (dicts)": cupel("turns"),
        "cupel turns (dicts, query=None)": cupel("turns", query=False),
        "cupel turns (objects)": cupel("turns", on="objects"),
        "cupel turns + report": cupel("turns", report=True),
        "cupel turns + report (query=None)": cupel("turns", report=True, query=False),
        "cupel turns + report (objects)": cupel("turns", report=True, on="objects"),
        "cupel turns (dicts, warm)": cupel("turns", warm=True),
        "cupel turns + report (warm)": cupel("turns", report=True, warm=True),
        "cupel messages (dicts)": cupel("messages"),
        # The floor of a query-aware selection: BM25 alone over the texts of the older turns.
        "bm25_scores of the older turns": lambda: bm25_scores(dicts[-1]["content"], older),
    }


def warm_turns(
    dicts: list[dict[str, Any]], repeat: int, query: str | None = "auto"
) -> tuple[list[float], list[float]]:
    """Per-turn times of a growing transcript through one session, and of cold calls on it."""
    base = len(dicts) - 2 * repeat - 2
    session = ChatSession()
    options: dict[str, Any] = {"counter": COUNTER, "options": OPTIONS, "query": query}
    select_messages(dicts[:base], BUDGET, session=session, **options)
    warm: list[float] = []
    cold: list[float] = []
    for turn in range(repeat):
        grown = dicts[: base + 2 * (turn + 1)]
        start = time.perf_counter()
        select_messages(grown, BUDGET, session=session, **options)
        warm.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        select_messages(grown, BUDGET, **options)
        cold.append((time.perf_counter() - start) * 1000)
    return warm, cold


def measure(
    size: int, repeat: int, *, long: bool = False, lines: list[str] | None = None
) -> list[dict[str, Any]]:
    dicts = transcript(size, long=long, lines=lines)
    objects = to_objects(dicts)
    runs = cases(dicts, objects)
    for run in runs.values():
        run()  # warm-up (and the warm cases' first call fills their session, as in a running chat)
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            samples[name].append((time.perf_counter() - start) * 1000)
    reference = samples["trim_messages (objects)"]
    rows = []
    for name, times in samples.items():
        ratios = [time_ / base for time_, base in zip(times, reference, strict=True)]
        rows.append(
            {
                "size": size,
                "case": name,
                "median_ms": statistics.median(times),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        )
    for query, case in [("auto", ""), (None, ", query=None")]:
        warm, cold = warm_turns(dicts, repeat, query)
        ratios = [time_ / base for time_, base in zip(warm, cold, strict=True)]
        rows.append(
            {
                "size": size,
                "case": f"cupel turns warm turn (x cold turns{case})",
                "median_ms": statistics.median(warm),
                "ratio_median": statistics.median(ratios),
                "ratio_min": min(ratios),
                "ratio_max": max(ratios),
            }
        )
    return rows


def arguments(description: str, repeat: int) -> tuple[argparse.Namespace, list[str] | None]:
    """The command line of this benchmark (and of those that time its transcripts: the same options),
    and the LoCoMo lines with ``--text locomo``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--repeat", type=int, default=repeat)
    parser.add_argument("--long", action="store_true", help="messages of 500-700 characters on average")
    parser.add_argument("--text", choices=["synthetic", "locomo"], default="synthetic", help="the words")
    parser.add_argument("--locomo", type=Path, default=LOCOMO, help="the LoCoMo file (--text locomo)")
    args = parser.parse_args()
    if args.text != "locomo":
        return args, None
    if not args.locomo.is_file():
        parser.error(f"{args.locomo}: no such file (the LoCoMo dev split)")
    return args, locomo_lines(args.locomo)


def main() -> int:
    args, lines = arguments(__doc__.splitlines()[0], 5)
    sizes = map(int, args.sizes.split(","))
    rows = [row for size in sizes for row in measure(size, args.repeat, long=args.long, lines=lines)]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'messages':>9}  {'case':<38} {'median ms':>10}  {'x trim_messages (objects)':>26}")
    for row in rows:
        spread = f"{row['ratio_median']:.2f} [{row['ratio_min']:.2f}-{row['ratio_max']:.2f}]"
        print(f"{row['size']:>9}  {row['case']:<38} {row['median_ms']:>10.2f}  {spread:>26}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
