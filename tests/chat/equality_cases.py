"""Chat selections over a broad, fixed set of arguments, recorded as plain data.

``python tests/chat/equality_cases.py`` writes ``tests/chat/equality_fixture.json`` from the code it runs
against; ``test_chat_equality.py`` runs the same cases and compares. The fixture was recorded before
the chat package was rebuilt, so the comparison shows the rebuild changed no output except where the
agent rules (a latest turn that does not fit, a window with no user message) now decide differently.

Policies are built here, as frozen copies of the presets they were recorded with, so re-tuning a
preset never changes what this compares.
"""

# ruff: noqa: B023  (the loop variables closed over are the same object on every pass)
from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).with_name("equality_fixture.json")

WORDS = ["alpha", "beta", "gamma", "delta", "ok", "the answer is", "x" * 30, "deploy", "log line"]


def _text(rng: random.Random, longest: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, longest)))


def openai_transcript(rng: random.Random, steps: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 2)):
        messages.append({"role": rng.choice(["system", "developer"]), "content": _text(rng)})
    serial = 0
    for _ in range(steps):
        step = rng.choice(["user", "user", "assistant", "tools", "tools", "system"])
        if step == "user":
            messages.append({"role": "user", "content": _text(rng)})
        elif step == "assistant":
            messages.append({"role": "assistant", "content": _text(rng, 30)})
        elif step == "system":
            if any(message["role"] not in ("system", "developer") for message in messages):
                messages.append({"role": "system", "content": _text(rng)})
        else:
            ids = [f"call_{serial + index}" for index in range(rng.randint(1, 3))]
            serial += len(ids)
            calls = [
                {"id": i, "type": "function", "function": {"name": "f", "arguments": _text(rng, 4)}}
                for i in ids
            ]
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            rng.shuffle(ids)
            for call_id in ids:
                messages.append({"role": "tool", "tool_call_id": call_id, "content": _text(rng, 40)})
    return messages


def anthropic_transcript(rng: random.Random, turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if rng.random() < 0.5:
        messages.append({"role": "system", "content": _text(rng)})
    serial = 0
    for _ in range(turns):
        messages.append({"role": "user", "content": _text(rng)})
        for _ in range(rng.randint(0, 3)):
            ids = [f"toolu_{serial + index}" for index in range(rng.randint(1, 2))]
            serial += len(ids)
            blocks: list[dict[str, Any]] = [{"type": "text", "text": _text(rng)}]
            blocks.extend(
                {"type": "tool_use", "id": i, "name": "g", "input": {"q": _text(rng, 3)}} for i in ids
            )
            messages.append({"role": "assistant", "content": blocks})
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": i, "content": _text(rng, 40)} for i in ids
                    ],
                }
            )
        if rng.random() < 0.75:
            messages.append({"role": "assistant", "content": _text(rng, 30)})
        else:
            break
    return messages


def broken(rng: random.Random, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with a tool result or a tool call's answer removed (for ``on_invalid="repair"``)."""
    tools = [index for index, message in enumerate(messages) if message["role"] == "tool"]
    if not tools:
        return [*messages, {"role": "tool", "tool_call_id": "orphan", "content": "stray"}]
    drop = rng.choice(tools)
    return messages[:drop] + messages[drop + 1 :]


def to_langchain(messages: list[dict[str, Any]]) -> list[Any]:
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

    converted: list[Any] = []
    for message in messages:
        role, content = message["role"], message.get("content")
        if role in ("system", "developer"):
            converted.append(SystemMessage(content))
        elif role == "user":
            converted.append(HumanMessage(content))
        elif role == "tool":
            converted.append(ToolMessage(content, tool_call_id=message["tool_call_id"]))
        else:
            calls = [
                {
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "args": {"a": call["function"]["arguments"]},
                }
                for call in message.get("tool_calls") or []
            ]
            converted.append(AIMessage(content or "", tool_calls=calls))
    return converted


def policies() -> dict[str, Any]:
    """Frozen copies of the presets (as they were when the fixture was recorded), and two pipelines."""
    from cupel import Pipeline, scorers, slicers
    from cupel.model import OverflowStrategy
    from cupel.placers import ChronologicalPlacer, UShapedPlacer
    from cupel.policy import ChatSettings, Policy

    def policy(weighted: list[tuple[Any, float]], slicer: Any, placer: Any, **chat: Any) -> Any:
        return Policy(
            scorers.CompositeScorer(weighted),
            slicer,
            placer,
            deduplication=True,
            overflow_strategy=OverflowStrategy.THROW,
            chat=ChatSettings(**chat) if chat else None,
        )

    user = scorers.TagScorer({"user": 1.0})
    chat = policy(
        [(scorers.RecencyScorer(), 2.0), (user, 2.0), (scorers.KindScorer(), 1.0)],
        slicers.GreedySlice(),
        ChronologicalPlacer(),
    )
    tool_use = policy(
        [(scorers.KindScorer(), 2.0), (scorers.RecencyScorer(), 2.0), (scorers.PriorityScorer(), 1.0)],
        slicers.GreedySlice(),
        ChronologicalPlacer(),
        keep_first_turn=True,
    )
    long_running = policy(
        [
            (scorers.RecencyScorer(), 2.0),
            (user, 2.0),
            (scorers.FrequencyScorer(), 1.0),
            (scorers.KindScorer(), 1.0),
        ],
        slicers.GreedySlice(),
        ChronologicalPlacer(),
        keep_first_turn=True,
    )
    document_qa = policy(
        [(scorers.KindScorer(), 2.0), (scorers.ReflexiveScorer(), 2.0), (scorers.PriorityScorer(), 1.0)],
        slicers.KnapsackSlice(bucket_size=25),
        UShapedPlacer(),
    )
    return {
        "chat": chat,
        "chat_truncate": _with_overflow(chat, OverflowStrategy.TRUNCATE),
        "chat_proceed": _with_overflow(chat, OverflowStrategy.PROCEED),
        "tool_use": tool_use,
        "tool_use_truncate": _with_overflow(tool_use, OverflowStrategy.TRUNCATE),
        "long_running": long_running,
        "document_qa": document_qa,
        "pipeline_recency": Pipeline(scorers.RecencyScorer(), slicers.GreedySlice(), ChronologicalPlacer()),
        "pipeline_kind_tag": Pipeline(
            scorers.CompositeScorer(
                [(scorers.KindScorer(), 1.0), (scorers.TagScorer({"assistant": 2.0}), 1.0)]
            ),
            slicers.GreedySlice(),
            ChronologicalPlacer(),
        ),
    }


def _with_overflow(policy: Any, strategy: Any) -> Any:
    return policy.replace(overflow_strategy=strategy)


def _index_of(originals: list[Any]) -> Callable[[Any], Any]:
    positions = {id(message): index for index, message in enumerate(originals)}

    def index(message: Any) -> Any:
        found = positions.get(id(message))
        if found is not None:
            return found
        # A message the selection made (a summary): its role and text.
        if isinstance(message, dict):
            return {"role": message.get("role"), "content": message.get("content")}
        return {"type": type(message).__name__, "content": getattr(message, "content", None)}

    return index


def _role(message: Any) -> str:
    if isinstance(message, dict):
        return str(message["role"])
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)


def _entry(entry: Any, index: Callable[[Any], Any]) -> list[Any]:
    item = entry.item
    messages = item.metadata.get("cupel:chat.messages", ())
    return [
        [index(message) for message in messages],
        item.tokens,
        repr(entry.score),
        repr(entry.reason),
        item.pinned,
    ]


def record(originals: list[Any], run: Callable[[], Any], *, report: bool = True) -> dict[str, Any]:
    """What one selection gave: kept messages (as input positions), tokens and the report, or an error."""
    index = _index_of(originals)
    try:
        selection = run()
    except Exception as error:  # the error's type and message are the outcome
        return {"error": type(error).__name__, "message": str(error)}
    kept = [index(message) for message in selection.messages]
    out: dict[str, Any] = {
        "kept": kept,
        "tokens": selection.tokens,
        # What the agent rules look at: whether a user message and the transcript's last message stayed.
        "user_kept": any(_role(originals[i]) == "user" for i in kept if isinstance(i, int)),
        "last_kept": len(originals) - 1 in kept,
    }
    if report:
        built = selection.report
        out["included"] = [_entry(entry, index) for entry in built.included]
        out["excluded"] = [_entry(entry, index) for entry in built.excluded]
        out["candidates"] = built.total_candidates
        out["considered"] = built.total_tokens_considered
    return out


BUDGETS = (30, 90, 200, 600)


def transcripts() -> Iterator[tuple[str, list[dict[str, Any]], str]]:
    """(name, messages, provider) for each transcript of the set."""
    rng = random.Random(20261126)
    for number in range(8):
        yield f"openai-{number}", openai_transcript(rng, rng.randint(2, 16)), "openai"
    for number in range(5):
        yield f"anthropic-{number}", anthropic_transcript(rng, rng.randint(1, 6)), "anthropic"


def cases() -> Iterator[tuple[str, Callable[[], dict[str, Any]]]]:
    """Every case: a name and a function that runs it and records the outcome."""
    from cupel.chat import ChatOptions, StableWindow, select_messages
    from cupel.chat.langchain import select_messages as select_langchain

    chosen = policies()
    rng = random.Random(7)
    option_sets = {"default": None, "no-pin-user": ChatOptions(pin_last_user=False)}
    for name, messages, provider in transcripts():
        for policy_name, policy in chosen.items():
            for strategy in ("turns", "last", "messages"):
                if strategy != "turns" and policy_name not in ("chat", "chat_truncate", "tool_use"):
                    continue
                for budget in BUDGETS:
                    for options_name, options in option_sets.items():
                        if options_name != "default" and (budget != 90 or strategy == "last"):
                            continue
                        key = f"{name}/{policy_name}/{strategy}/{budget}/{options_name}"

                        def run(
                            messages: Any = messages,
                            budget: int = budget,
                            policy: Any = policy,
                            strategy: str = strategy,
                            options: Any = options,
                        ) -> dict[str, Any]:
                            return record(
                                messages,
                                lambda: select_messages(
                                    messages, budget, policy, strategy=strategy, options=options
                                ),
                            )

                        yield key, run
        # Settings overrides, summaries and repair on the chat policy.
        chat = chosen["chat"]
        for budget in (90, 200):
            for keep_first, share in ((True, 0.3), (False, 0.0), (True, 1.0)):
                key = f"{name}/chat/turns/{budget}/keep={keep_first}/share={share}"
                yield (
                    key,
                    _bind(
                        messages,
                        lambda m=messages, b=budget, k=keep_first, s=share: select_messages(
                            m, b, chat, keep_first_turn=k, recent_share=s
                        ),
                    ),
                )
            yield (
                f"{name}/chat/last/{budget}/start_on=any",
                _bind(
                    messages,
                    lambda m=messages, b=budget: select_messages(m, b, chat, strategy="last", start_on="any"),
                ),
            )
            for strategy in ("turns", "last", "messages"):
                yield (
                    f"{name}/chat/{strategy}/{budget}/summary",
                    _bind(
                        messages,
                        lambda m=messages, b=budget, s=strategy: select_messages(
                            m, b, chat, strategy=s, summarize=True, summary_tokens=40
                        ),
                    ),
                )
        if provider == "openai":
            damaged = broken(rng, messages)
            for strategy in ("turns", "last", "messages"):
                for budget in (90, 600):
                    yield (
                        f"{name}/repair/{strategy}/{budget}",
                        _bind(
                            damaged,
                            lambda m=damaged, b=budget, s=strategy: select_messages(
                                m, b, chat, strategy=s, on_invalid="repair"
                            ),
                        ),
                    )
            converted = to_langchain(messages)
            for strategy in ("turns", "last", "messages"):
                for budget in BUDGETS:
                    yield (
                        f"{name}/langchain/{strategy}/{budget}",
                        _bind(
                            converted,
                            lambda m=converted, b=budget, s=strategy: select_langchain(
                                m, b, chat, strategy=s
                            ),
                        ),
                    )
                yield (
                    f"{name}/langchain/{strategy}/200/summary",
                    _bind(
                        converted,
                        lambda m=converted, s=strategy: select_langchain(
                            m, 200, chat, strategy=s, summarize=True, summary_tokens=40
                        ),
                    ),
                )
        # StableWindow: the transcript grows one message at a time.
        for budget in (120, 400):
            for strategy in ("turns", "last"):
                yield (
                    f"{name}/stable/{strategy}/{budget}",
                    _window_turns(StableWindow, messages, budget, chat, strategy),
                )


def _bind(messages: list[Any], run: Callable[[], Any]) -> Callable[[], dict[str, Any]]:
    return lambda: record(messages, run)


def _window_turns(
    window_type: Any, messages: list[dict[str, Any]], budget: int, policy: Any, strategy: str
) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        window = window_type(budget, policy, strategy=strategy)
        steps: list[dict[str, Any]] = []
        for end in range(1, len(messages) + 1):
            prefix = messages[:end]
            if prefix[-1]["role"] not in ("user", "tool") and end != len(messages):
                continue  # turns end where the model is asked
            selected: list[Any] = []

            def turn(p: list[Any] = prefix) -> Any:
                selected.append(window.select(p))
                return selected[-1]

            outcome = record(prefix, turn, report=False)
            if selected:
                outcome["prefix"] = selected[0].prefix
                outcome["compacted"] = selected[0].compacted
            steps.append(outcome)
            if "error" in outcome:
                window = window_type(budget, policy, strategy=strategy)
        return {"steps": steps}

    return run


def run_all() -> dict[str, Any]:
    return {key: run() for key, run in cases()}


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
    recorded = run_all()
    lines = [
        f"{json.dumps(key)}: {json.dumps(value, sort_keys=True, separators=(',', ':'))}"
        for key, value in recorded.items()
    ]
    FIXTURE.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")
    print(f"{len(recorded)} cases written to {FIXTURE}")
