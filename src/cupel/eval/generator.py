# ruff: noqa: E501  (template sentences read best one a line)
"""A seeded generator of agent and chat sessions with planted dependencies (docs/eval.md, "Generator").

Each session plants what a good selection must keep and what it may drop: a constraint stated early and
needed at the end, a tool output the final question refers to, a fact stated and later corrected (only
the correction is gold), duplicated documents (any copy counts), and long tool dumps nobody needs.
Sizes vary with the seed, from about a dozen messages to over a hundred.
"""

from __future__ import annotations

import json
import random
from typing import Any

from cupel.eval.cases import EvalCase, case_from_dict

__all__ = ["generate_cases"]

_SERVICES = (
    "billing-api",
    "search-indexer",
    "auth-gateway",
    "media-transcoder",
    "orders-worker",
    "notify-service",
)
_CONSTRAINTS = (
    "Hard rule for this task: do not restart anything in {region} during business hours (08:00-18:00 local).",
    "Constraint: the fix must stay compatible with Python 3.9, because {service} still runs on the old base image.",
    "Important: we cannot add new dependencies to {service} without a security review, which takes two weeks.",
    "Budget limit: any extra cloud spend for {service} must stay under 200 USD a month.",
    "Please keep in mind that {service} must keep serving the EU customers from {region} only (data residency).",
)
_FACTS = (
    ("the on-call engineer for {service}", ("Priya", "Jonas", "Mei", "Tomasz", "Lucía")),
    (
        "the database host for {service}",
        ("db-7.internal", "db-12.internal", "pg-main-3.internal", "pg-eu-2.internal"),
    ),
    ("the deploy freeze start", ("Thursday 16:00", "Friday 12:00", "Wednesday 18:00", "Monday 09:00")),
    ("the SLA for {service}", ("99.9%", "99.5%", "99.95%")),
)
_KEY_RESULTS = (
    (
        "query_logs",
        "ERROR {service}: upstream timeout after 30000 ms calling {dep} (request id {rid}); 1,284 occurrences since 09:12",
    ),
    ("read_config", "{service}.yaml: pool_size: 5, max_overflow: 0, timeout_ms: 30000, retries: 0"),
    (
        "get_metrics",
        "{service} p99 latency: 2,140 ms (baseline 180 ms); error rate 7.2%; saturation: db connections 5/5",
    ),
    ("git_log", "a41c9e2 ({date}) switch {service} to the shared connection pool; reviewed by nobody"),
)
_FILLER_Q = (
    "Can you also check whether the dashboards for {service} are up to date?",
    "Quick side question: what's the difference between a readiness and a liveness probe?",
    "How do I tail logs for a single pod again?",
    "Is there a way to make the alert less noisy at night?",
    "Remind me which team owns {dep}?",
    "What does exit code 137 mean?",
    "Should we add a runbook entry for this?",
    "How long do we keep metrics in Prometheus?",
)
_FILLER_A = (
    "The dashboards were last edited three weeks ago; the latency panel still points at the old metric name, so I'd update it after we fix the incident.",
    "Readiness decides whether a pod receives traffic; liveness decides whether the kubelet restarts it. A failing readiness probe only takes the pod out of rotation.",
    "Use kubectl logs -f <pod> -n <namespace> --since=10m; add -c <container> when the pod has sidecars.",
    "Yes: raise the for: duration to 10 minutes overnight or route low-severity alerts to a ticket queue instead of paging.",
    "{dep} is owned by the platform team; their on-call rotation is in the #platform-oncall channel topic.",
    "137 is 128 + 9: the process got SIGKILL, usually from the OOM killer when it exceeded its memory limit.",
    "Yes, a short runbook entry with the symptoms, the query we used and the fix would help the next on-call.",
    "Raw samples are kept for 15 days locally; the long-term store downsamples to 5-minute resolution and keeps a year.",
)
_DUMP_LINES = (
    "{ts} INFO  {service} GET /healthz 200 1ms",
    "{ts} DEBUG {service} cache hit ratio=0.9{n} keys={k}",
    "{ts} INFO  {service} processed batch size={k} in {n}2ms",
    "{ts} WARN  {service} slow query {n}41ms: SELECT id FROM jobs WHERE state='queued' LIMIT 100",
    "{ts} INFO  {service} heartbeat ok peers={n}",
)


def _dump(rng: random.Random, service: str, lines: int) -> str:
    out = []
    for n in range(lines):
        ts = f"2025-03-14T09:{n % 60:02d}:{rng.randrange(60):02d}Z"
        out.append(
            rng.choice(_DUMP_LINES).format(ts=ts, service=service, n=n % 10, k=rng.randrange(100, 999))
        )
    return "\n".join(out)


def _call(messages: list[dict[str, Any]], call_id: str, name: str, args: dict[str, Any], result: str) -> int:
    messages.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            ],
        }
    )
    messages.append({"role": "tool", "tool_call_id": call_id, "content": result})
    return len(messages) - 1


def _session(rng: random.Random, number: int) -> dict[str, Any]:
    service, dep = rng.sample(_SERVICES, 2)
    region = rng.choice(("eu-west-1", "eu-central-1", "europe-north1"))
    values = {
        "service": service,
        "dep": dep,
        "region": region,
        "rid": f"req-{rng.randrange(10**6):06d}",
        "date": "2025-03-13",
    }
    fact_label, choices = rng.choice(_FACTS)
    fact_label = fact_label.format(**values)
    old_value, new_value = rng.sample(choices, 2)
    tool_name, key_template = rng.choice(_KEY_RESULTS)
    fillers = rng.randint(1, 40)
    dumps = rng.randint(0, 6)
    messages: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are an SRE assistant with tools. Cite tool output and respect every constraint the user gives.",
        }
    ]
    gold: list[int] = []
    messages.append(
        {
            "role": "user",
            "content": f"We're seeing errors in {service}. " + rng.choice(_CONSTRAINTS).format(**values),
        }
    )
    gold.append(len(messages) - 1)
    messages.append(
        {
            "role": "assistant",
            "content": f"Understood. I'll investigate {service} and keep that constraint in mind.",
        }
    )
    steps: list[str] = ["fact", "key", "correction"] + ["filler"] * fillers + ["dump"] * dumps
    head, tail = steps[:1], steps[1:]
    rng.shuffle(tail)
    # The correction must come after the fact it corrects.
    tail.remove("correction")
    tail.insert(rng.randint(tail.index("key") if "key" in tail else 0, len(tail)), "correction")
    calls = 0
    for step in head + tail:
        if step == "fact":
            messages.append({"role": "user", "content": f"FYI, {fact_label} is {old_value}."})
            messages.append({"role": "assistant", "content": "Noted."})
        elif step == "correction":
            messages.append(
                {"role": "user", "content": f"Correction: {fact_label} is {new_value}, not {old_value}."}
            )
            gold.append(len(messages) - 1)
            messages.append(
                {"role": "assistant", "content": f"Thanks, updated: {fact_label} is {new_value}."}
            )
        elif step == "key":
            calls += 1
            gold.append(
                _call(
                    messages, f"call_{calls}", tool_name, {"service": service}, key_template.format(**values)
                )
            )
        elif step == "dump":
            calls += 1
            lines = rng.choice((20, 40, 80, 160))
            _call(
                messages,
                f"call_{calls}",
                "query_logs",
                {"service": service, "level": "debug"},
                _dump(rng, service, lines),
            )
        else:
            pick = rng.randrange(len(_FILLER_Q))
            messages.append({"role": "user", "content": _FILLER_Q[pick].format(**values)})
            messages.append({"role": "assistant", "content": _FILLER_A[pick].format(**values)})
    question = (
        f"Given the {tool_name} result, propose the fix, tell me who to notify ({fact_label}) and confirm it "
        f"respects my constraint."
    )
    messages.append({"role": "user", "content": question})
    return {
        "id": f"gen-agent-{number:03d}",
        "tags": ["generated", "agent"],
        "question": question,
        "messages": messages,
        "gold": gold,
    }


def _document(
    item_id: str, content: str, *, hint: float, timestamp: str, kind: str = "Document"
) -> dict[str, Any]:
    return {
        "id": item_id,
        "content": content,
        "kind": kind,
        "futureRelevanceHint": hint,
        "timestamp": timestamp,
    }


def _rag(rng: random.Random, number: int) -> dict[str, Any]:
    service = rng.choice(_SERVICES)
    answer = rng.randrange(2, 90)
    stale = answer + rng.randrange(1, 30)
    gold_text = (
        f"{service} runbook (current, 2025): the retry budget is {answer} requests per minute per client."
    )
    items: list[dict[str, Any]] = [
        {
            "id": "system",
            "content": "Answer from the documents and cite them.",
            "kind": "SystemPrompt",
            "pinned": True,
        },
        _document(
            "stale",
            f"{service} runbook (2022): the retry budget is {stale} requests per minute per client.",
            hint=round(rng.uniform(0.8, 0.95), 2),
            timestamp="2022-05-01T00:00:00Z",
        ),
        _document(
            "current", gold_text, hint=round(rng.uniform(0.6, 0.9), 2), timestamp="2025-01-10T00:00:00Z"
        ),
    ]
    for copy in range(rng.randint(1, 3)):
        items.append(
            _document(
                f"current-copy-{copy}",
                gold_text,
                hint=round(rng.uniform(0.6, 0.9), 2),
                timestamp="2025-01-10T00:00:00Z",
            )
        )
    for n in range(rng.randint(3, 25)):
        # Arguments are evaluated in the order written: content, kind, hint (the seeded stream's order).
        items.append(
            _document(
                f"noise-{n}",
                _dump(rng, service, rng.choice((3, 6, 12))),
                kind=rng.choice(("Document", "ToolOutput")),
                hint=round(rng.uniform(0.1, 0.85), 2),
                timestamp=f"2025-0{1 + n % 3}-{1 + n % 27:02d}T00:00:00Z",
            )
        )
    question = f"What is the retry budget for {service}?"
    items.append(
        {
            "id": "question",
            "content": question,
            "kind": "Message",
            "pinned": True,
            "timestamp": "2025-03-14T00:00:00Z",
        }
    )
    return {
        "id": f"gen-rag-{number:03d}",
        "tags": ["generated", "rag"],
        "question": question,
        "items": items,
        "gold": ["current"],
    }


def generate_cases(count: int = 40, seed: int = 0) -> list[EvalCase]:
    """``count`` cases (about three agent sessions to every RAG set), identical for the same seed."""
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an int >= 1, got {count!r}")
    rng = random.Random(seed)
    cases = []
    for number in range(1, count + 1):
        record = _rag(rng, number) if number % 4 == 0 else _session(rng, number)
        cases.append(case_from_dict(record, f"generated case {number}"))
    return cases
