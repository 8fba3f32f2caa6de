"""A compact notation for the hand-written evaluation cases; build_cases.py turns it into JSON Lines."""

from __future__ import annotations

import json
from typing import Any


class G(str):
    """Gold text: the element holding it is needed to answer the case's question."""

    weight = 1.0


def gold(text: str, weight: float = 1.0) -> G:
    marked = G(text)
    marked.weight = weight
    return marked


def _gold_ref(ref: Any, text: Any) -> Any:
    if isinstance(text, G):
        return (
            ref
            if text.weight == 1.0
            else {"index" if isinstance(ref, int) else "id": ref, "weight": text.weight}
        )
    return None


def chat(
    case_id: str, tags: list[str], question: str, turns: list[tuple[Any, ...]], provider: str = "openai"
) -> dict[str, Any]:
    """Turns: (role, text) for plain messages; ("call", text_or_None, [(name, args, result), ...]) for an
    assistant tool-call step with its results. Gold text (G) marks the message (or tool result) as gold."""
    messages: list[dict[str, Any]] = []
    refs: list[Any] = []
    calls = 0
    for turn in turns:
        if turn[0] != "call":
            role, text = turn
            index = len(messages)
            messages.append({"role": role, "content": str(text)})
            if (ref := _gold_ref(index, text)) is not None:
                refs.append(ref)
            continue
        _, text, steps = turn
        ids = []
        for _ in steps:
            calls += 1
            ids.append(f"call_{calls:02d}")
        if provider == "anthropic":
            blocks: list[dict[str, Any]] = [{"type": "text", "text": str(text)}] if text else []
            blocks += [
                {"type": "tool_use", "id": call_id, "name": name, "input": args}
                for call_id, (name, args, _) in zip(ids, steps, strict=True)
            ]
            index = len(messages)
            messages.append({"role": "assistant", "content": blocks})
            if text is not None and (ref := _gold_ref(index, text)) is not None:
                refs.append(ref)
            index = len(messages)
            messages.append(
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": call_id, "content": str(result)}
                        for call_id, (_, _, result) in zip(ids, steps, strict=True)
                    ],
                }
            )
            if any(isinstance(result, G) for _, _, result in steps):
                refs.append(index)
            continue
        index = len(messages)
        messages.append(
            {
                "role": "assistant",
                "content": None if text is None else str(text),
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                    for call_id, (name, args, _) in zip(ids, steps, strict=True)
                ],
            }
        )
        if text is not None and (ref := _gold_ref(index, text)) is not None:
            refs.append(ref)
        for call_id, (_, _, result) in zip(ids, steps, strict=True):
            index = len(messages)
            messages.append({"role": "tool", "tool_call_id": call_id, "content": str(result)})
            if (ref := _gold_ref(index, result)) is not None:
                refs.append(ref)
    case: dict[str, Any] = {"id": case_id, "tags": tags, "question": question}
    if provider != "openai":
        case["provider"] = provider
    case["messages"] = messages
    case["gold"] = refs
    return case


def items(case_id: str, tags: list[str], question: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """Entries: dicts with id, content (G for gold) and optional kind, hint, priority, ts, pinned, tags."""
    out: list[dict[str, Any]] = []
    refs: list[Any] = []
    for entry in entries:
        item: dict[str, Any] = {"id": entry["id"], "content": str(entry["content"])}
        for key, wire in (
            ("kind", "kind"),
            ("source", "source"),
            ("hint", "futureRelevanceHint"),
            ("priority", "priority"),
            ("ts", "timestamp"),
            ("pinned", "pinned"),
            ("tags", "tags"),
        ):
            if key in entry:
                item[wire] = entry[key]
        out.append(item)
        if (ref := _gold_ref(entry["id"], entry["content"])) is not None:
            refs.append(ref)
    return {"id": case_id, "tags": tags, "question": question, "items": out, "gold": refs}
